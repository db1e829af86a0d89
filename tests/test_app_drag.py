"""Dragging bodies with the mouse: picking and the spring law in-process (plain numpy), and
the whole path in a headless window app (a subprocess, as in test_app_window.py)."""
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_headless_child

from sharnir.app.drag import (
    FORCE_CAP_G,
    STIFFNESS,
    Drag,
    cursor_ray,
    effective_mass,
    pick,
    project,
    shape_hit,
    spring_force,
)
from sharnir.physics.shape import Box, Capsule, Cylinder, Ellipsoid, Sphere
from sharnir.render.camera import OrbitCamera

REPO = Path(__file__).resolve().parents[1]
IDENTITY = (1.0, 0.0, 0.0, 0.0)


# ---- picking ---------------------------------------------------------------------------------
def test_ray_hits_a_box_at_the_expected_point():
    box = Box((0.5, 0.2, 1.0))
    hit = pick((5.0, 0.1, 0.3), (-1.0, 0.0, 0.0), [(1.0, 0.0, 0.0)], [IDENTITY], [box])
    assert hit is not None
    body, local, distance = hit
    assert body == 0
    assert distance == pytest.approx(3.5)
    np.testing.assert_allclose(local, (0.5, 0.1, 0.3), atol=1e-12)


def test_ray_hits_a_turned_box_in_its_body_frame():
    # Turned 90 degrees about z: the long x half extent now lies along world y.
    q = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    hit = pick((0.0, -5.0, 0.0), (0.0, 1.0, 0.0), [(0.0, 0.0, 0.0)], [q], [Box((2.0, 0.1, 0.1))])
    assert hit[2] == pytest.approx(3.0)
    np.testing.assert_allclose(hit[1], (-2.0, 0.0, 0.0), atol=1e-12)


def test_ray_aimed_away_misses():
    bodies = dict(body_pos=[(1.0, 0.0, 0.0)], body_quat=[IDENTITY],
                  body_shapes=[Box((0.5, 0.5, 0.5))])
    assert pick((5.0, 0.0, 0.0), (1.0, 0.0, 0.0), **bodies) is None     # pointing away
    assert pick((5.0, 3.0, 0.0), (-1.0, 0.0, 0.0), **bodies) is None    # passing beside
    assert pick((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), [(0, 0, 0)], [IDENTITY], [None]) is None


def test_nearest_of_two_bodies_wins():
    shapes = [None, Sphere(0.5), Box((0.5, 0.5, 0.5))]
    pos = [(0.0, 0.0, 0.0), (-2.0, 0.0, 0.0), (2.0, 0.0, 0.0)]
    quat = [IDENTITY] * 3
    from_right = pick((10.0, 0.0, 0.0), (-1.0, 0.0, 0.0), pos, quat, shapes)
    from_left = pick((-10.0, 0.0, 0.0), (1.0, 0.0, 0.0), pos, quat, shapes)
    assert from_right[0] == 2 and from_right[2] == pytest.approx(7.5)
    assert from_left[0] == 1 and from_left[2] == pytest.approx(7.5)


@pytest.mark.parametrize("shape, origin, direction, expected", [
    (Sphere(0.5), (0, 0, 3), (0, 0, -1), 2.5),
    (Ellipsoid((0.2, 0.3, 0.7)), (0, 3, 0), (0, -1, 0), 2.7),
    (Cylinder(0.3, 1.0), (0, 0, 5), (0, 0, -1), 4.0),      # the flat cap
    (Cylinder(0.3, 1.0), (4, 0, 0.9), (-1, 0, 0), 3.7),    # the side
    (Cylinder(0.3, 1.0), (4, 0, 1.1), (-1, 0, 0), None),   # just above the cap
    (Capsule(0.3, 1.0), (0, 0, 5), (0, 0, -1), 3.7),       # the end sphere's pole
    (Capsule(0.3, 1.0), (4, 0, 1.1), (-1, 0, 0), 4 - math.sqrt(0.09 - 0.01)),
])
def test_every_shape_kind_is_hit_exactly(shape, origin, direction, expected):
    t = shape_hit(shape, np.array(origin, float), np.array(direction, float))
    assert (t is None) if expected is None else t == pytest.approx(expected)


def test_cursor_ray_goes_through_the_projected_point():
    camera = OrbitCamera(target=(0.3, -0.2, 1.0), distance=4.0)
    point = np.array([0.7, 0.1, 0.6])
    x, y = project(camera, point, 640, 480)
    origin, direction = cursor_ray(camera, x, y, 640, 480)
    to_point = point - origin
    np.testing.assert_allclose(direction, to_point / np.linalg.norm(to_point), atol=1e-9)


# ---- the drag law ----------------------------------------------------------------------------
BOX = Box((0.5, 0.2, 0.1))
R0 = np.eye(3)


def _box_props(mass):
    return mass, mass * BOX.unit_inertia()


def test_force_points_toward_the_target():
    mass, inertia = _box_props(2.0)
    r = np.array([0.5, 0.0, 0.0])
    target = np.array([0.5, 0.3, 0.1])
    force = spring_force(mass, inertia, R0, r, r, np.zeros(3), target)
    direction = force / np.linalg.norm(force)
    np.testing.assert_allclose(direction, (target - r) / np.linalg.norm(target - r), atol=1e-12)
    n = direction
    expected = effective_mass(mass, inertia, R0, r, n) * STIFFNESS * np.linalg.norm(target - r)
    assert np.linalg.norm(force) == pytest.approx(expected)


def test_damping_opposes_the_point_velocity():
    mass, inertia = _box_props(2.0)
    at_rest = spring_force(mass, inertia, R0, np.zeros(3), np.zeros(3), np.zeros(3), (0.1, 0, 0))
    moving = spring_force(mass, inertia, R0, np.zeros(3), np.zeros(3), (1.0, 0, 0), (0.1, 0, 0))
    assert moving[0] < at_rest[0]


def test_force_is_capped():
    mass, inertia = _box_props(3.0)
    force = spring_force(mass, inertia, R0, np.zeros(3), np.zeros(3), np.zeros(3),
                         (1000.0, 0.0, 0.0), gravity=9.81)
    assert np.linalg.norm(force) == pytest.approx(FORCE_CAP_G * mass * 9.81)


def test_effective_mass_is_smaller_off_the_centre():
    mass, inertia = _box_props(2.0)
    assert effective_mass(mass, inertia, R0, np.zeros(3), (0, 1, 0)) == pytest.approx(mass)
    off = effective_mass(mass, inertia, R0, np.array([0.5, 0, 0]), (0, 1, 0))
    assert off == pytest.approx(1.0 / (1.0 / mass + 0.25 / inertia[2]))
    # Pulling along the lever arm turns nothing: the whole mass answers.
    assert effective_mass(mass, inertia, R0, np.array([0.5, 0, 0]), (1, 0, 0)) == \
        pytest.approx(mass)


def test_heavier_body_gets_proportionally_more_force():
    r = np.array([0.5, 0.1, 0.0])
    target = np.array([0.4, 0.4, 0.2])
    light = spring_force(*_box_props(1.0), R0, r, r, np.zeros(3), target)
    heavy = spring_force(*_box_props(7.0), R0, r, r, np.zeros(3), target)
    np.testing.assert_allclose(heavy, 7.0 * light, rtol=1e-12)  # the same acceleration


def test_drag_target_follows_the_cursor_in_the_view_plane():
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=5.0)
    hit_point = np.array([0.1, 0.0, 0.2])
    drag = Drag(0, hit_point, hit_point, 1.0, (0.1, 0.1, 0.1), Sphere(0.5),
                (0.0, 0.0, 0.0), IDENTITY, 0.0)
    x, y = project(camera, hit_point, 800, 600)
    drag.move(*cursor_ray(camera, x + 100, y - 50, 800, 600), camera.back, (x + 100, y - 50))
    # In the plane through the grab point facing the camera, and under the cursor.
    assert (drag.target - hit_point) @ camera.back == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(project(camera, drag.target, 800, 600), (x + 100, y - 50),
                               atol=1e-6)
    force, torque = drag.update((0.0, 0.0, 0.0), IDENTITY, 0.0)
    assert force @ (drag.target - hit_point) > 0.0
    np.testing.assert_allclose(torque, np.cross(hit_point, force), atol=1e-9)


def test_ctrl_drag_turns_about_the_view_axis():
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=5.0)
    drag = Drag(0, (0.5, 0, 0), (0.5, 0, 0), 1.0, (0.1, 0.2, 0.3), BOX, (0, 0, 0), IDENTITY,
                0.0, rotate=True, cursor=(100, 100))
    drag.move(*cursor_ray(camera, 150, 100, 800, 600), camera.back, (150, 100))
    force, torque = drag.update((0.0, 0.0, 0.0), IDENTITY, 0.0)
    assert not np.any(force)
    unit = torque / np.linalg.norm(torque)
    np.testing.assert_allclose(unit, -camera.back, atol=1e-9)  # right: clockwise as seen


# ---- the window app, headless ------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import json, math, sys, time
    import numpy as np
    from pyglet.window import mouse
    from sharnir.app.commands import SetBodyForce
    from sharnir.app.drag import project
    from sharnir.app.window import App

    out = {}
    app = App(sys.argv[1], width=640, height=480, paused=True)
    thread = app.thread
    sent = []
    send = thread.send
    thread.send = lambda command: (sent.append(command), send(command))[1]
    # a cold numba compile (a fresh clone, a loaded CI machine) can take minutes
    deadline = time.time() + 900
    while not app.snapshot.ready and time.time() < deadline:
        app.run_frames(1)
    deadline = time.time() + 120
    snap = app.snapshot
    door = snap.body_names.index("door")
    size = app.window.get_size()
    centre = np.array(snap.body_pos[door])
    # Press on the door's centre, then drag toward -y: the hinge (z up, door along +x)
    # opens the door to positive angles, so the pull asks for a negative one.
    x0, y0 = project(app.camera, centre, *size)
    x1, y1 = project(app.camera, centre + (0.0, -0.5, 0.0), *size)
    app.window.dispatch_event("on_mouse_press", round(x0), round(y0), mouse.LEFT, 0)
    app.window.dispatch_event("on_mouse_drag", round(x1), round(y1), round(x1 - x0),
                              round(y1 - y0), mouse.LEFT, 0)
    app.run_frames(2)
    out["grabbed"] = app.drag is not None and app.drag.body == door
    out["target"] = app.drag.target.tolist() if app.drag is not None else None
    app.action_toggle_pause()
    while app.snapshot.time < 1.0 and time.time() < deadline:
        app.run_frames(1)
    def angle():
        w, _, _, z = app.snapshot.body_quat[door]
        return 2.0 * math.atan2(z, w)
    out["angle_pulled"] = angle()
    out["forces"] = sum(isinstance(c, SetBodyForce) and c.body == door and any(c.force)
                        for c in sent)
    app.window.dispatch_event("on_mouse_release", round(x1), round(y1), mouse.LEFT, 0)
    app.run_frames(3)
    out["released"] = app.drag is None
    last = [c for c in sent if isinstance(c, SetBodyForce)][-1]
    out["last_force"] = [list(last.force), list(last.torque)]
    t = app.snapshot.time
    while app.snapshot.time < t + 0.3 and time.time() < deadline:
        app.run_frames(1)
    out["world_force"] = np.asarray(thread._world._read("body_force"))[door].tolist()
    out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def headless_drag(tmp_path_factory):
    return run_headless_child(CHILD, REPO / "scenes" / "door.toml",
                              cwd=tmp_path_factory.mktemp("drag"))


def test_dragging_the_door_pulls_it_toward_the_cursor(headless_drag):
    out = headless_drag
    assert out["grabbed"]
    assert out["forces"] > 0
    # Undragged, the scene's push opens the door to +0.657 rad; the pull wins instead.
    assert out["angle_pulled"] < -0.1


def test_releasing_the_door_removes_the_force(headless_drag):
    out = headless_drag
    assert out["released"]
    assert out["last_force"] == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert out["world_force"] == [0.0, 0.0, 0.0]
    assert out["closed"]


# ---- dragging while paused moves a free body directly -------------------------------------------
FREE_SCENE = """
description = "a free box and a hinged plate"
world = { dt = 0.004 }

[[bodies]]
name = "box"
shape = { type = "box", half_extents = [0.2, 0.2, 0.2] }
mass = 1.0
pos = [0.0, 0.0, 1.0]

[[bodies]]
name = "plate"
shape = { type = "box", half_extents = [0.3, 0.05, 0.3] }
mass = 1.0
pos = [1.5, 0.0, 1.0]

[[joints]]
name = "hinge"
type = "revolute"
body_a = "world"
body_b = "plate"
anchor = [1.2, 0.0, 1.0]
axis = [0.0, 0.0, 1.0]
"""

PAUSED_CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from pyglet.window import mouse
    from sharnir.app.drag import project
    from sharnir.app.window import App

    out = {}
    app = App(sys.argv[1], width=640, height=480, paused=True)
    deadline = time.time() + 900
    while not app.snapshot.ready and time.time() < deadline:
        app.run_frames(1)
    snap = app.snapshot
    size = app.window.get_size()
    def drag(body, offset, ctrl=False):
        i = snap.body_names.index(body)
        start = np.array(app.snapshot.body_pos[i])
        x0, y0 = project(app.camera, start, *size)
        x1, y1 = project(app.camera, start + np.asarray(offset), *size)
        mods = 2 if ctrl else 0  # pyglet's MOD_CTRL
        app.window.dispatch_event("on_mouse_press", round(x0), round(y0), mouse.LEFT, mods)
        app.window.dispatch_event("on_mouse_drag", round(x1), round(y1), round(x1 - x0),
                                  round(y1 - y0), mouse.LEFT, mods)
        for _ in range(4):
            app.run_frames(1)
            time.sleep(0.02)
        # where the grabbed point should now be: the cursor's point in the view plane
        grab = None if app.drag is None else (start + app.drag.grab_local,
                                              np.array(app.drag.target))
        app.window.dispatch_event("on_mouse_release", round(x1), round(y1), mouse.LEFT, 0)
        app.run_frames(2)
        time.sleep(0.05)
        app.run_frames(1)
        return (start, np.array(app.snapshot.body_pos[i]), np.array(app.snapshot.body_quat[i]),
                grab)
    start, end, quat, grab = drag("box", (0.0, 0.0, 0.5))
    out["box_start"], out["box_end"] = start.tolist(), end.tolist()
    out["grab_point"], out["cursor_target"] = grab[0].tolist(), grab[1].tolist()
    out["box_quat"] = quat.tolist()
    out["time"] = app.snapshot.time
    out["paused"] = app.snapshot.paused
    start, end, _, _ = drag("plate", (0.0, 0.0, 0.5))
    out["plate_start"], out["plate_end"] = start.tolist(), end.tolist()
    out["error"] = app.snapshot.error
    out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def paused_drag(tmp_path_factory):
    folder = tmp_path_factory.mktemp("paused")
    scene = folder / "free.toml"
    scene.write_text(FREE_SCENE)
    return run_headless_child(PAUSED_CHILD, scene, cwd=folder)


def test_dragging_while_paused_moves_a_free_body_directly(paused_drag):
    out = paused_drag
    start, end = np.array(out["box_start"]), np.array(out["box_end"])
    assert out["paused"] and out["time"] == 0.0       # no step was taken
    # The cursor went up: the grabbed point (on the box's near face) is now at the cursor's
    # point in the view plane through it (less than 0.5 m up, by perspective), so the box
    # moved by exactly that point's displacement.
    moved = np.array(out["cursor_target"]) - np.array(out["grab_point"])
    assert moved[2] > 0.3
    np.testing.assert_allclose(end - start, moved, atol=1e-9)
    np.testing.assert_allclose(out["box_quat"], [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    assert out["error"] is None


def test_dragging_while_paused_leaves_a_jointed_body_to_its_joint(paused_drag):
    out = paused_drag
    np.testing.assert_allclose(out["plate_end"], out["plate_start"], atol=1e-12)
    assert out["closed"]
