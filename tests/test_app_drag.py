"""Dragging bodies with the mouse: picking and the target in-process (plain numpy), the
commands through the physics thread, and the whole path in a headless window app (a
subprocess, as in test_app_window.py).  The spring law itself is the physics'
(tests/test_physics_drag.py)."""
import math
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_headless_child

from sharnir.app.commands import ClearDrag, SetDrag, Step
from sharnir.app.drag import Drag, cursor_ray, pick, project, shape_hit
from sharnir.app.physics_thread import PhysicsThread
from sharnir.physics.shape import Box, Capsule, Cylinder, Ellipsoid, Sphere
from sharnir.render.camera import OrbitCamera
from sharnir.scenes import SCENE_DIR

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


# ---- the target -----------------------------------------------------------------------------
def _rotation_vector(q):
    q = np.asarray(q, dtype=float)
    q = -q if q[0] < 0.0 else q
    s = np.linalg.norm(q[1:])
    return np.zeros(3) if s < 1e-15 else q[1:] * 2.0 * math.atan2(s, q[0]) / s


def test_drag_target_follows_the_cursor_in_the_view_plane():
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=5.0)
    hit_point = np.array([0.1, 0.0, 0.2])
    drag = Drag(2, hit_point, hit_point, IDENTITY, mass=1.0)
    x, y = project(camera, hit_point, 800, 600)
    command = drag.move(*cursor_ray(camera, x + 100, y - 50, 800, 600), camera.back,
                        (x + 100, y - 50))
    # In the plane through the grab point facing the camera, and under the cursor.
    assert (drag.target - hit_point) @ camera.back == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(project(camera, drag.target, 800, 600), (x + 100, y - 50),
                               atol=1e-6)
    # and that is what the physics is asked for: pull the grabbed point there
    assert isinstance(command, SetDrag) and command.body == 2 and command.quat is None
    np.testing.assert_allclose(command.point, hit_point)
    np.testing.assert_allclose(command.target, drag.target)
    np.testing.assert_allclose(drag.spring_ends((0.0, 0.0, 0.0), IDENTITY),
                               [hit_point, drag.target])


def test_ctrl_drag_turns_about_the_view_axis():
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=5.0)
    q0 = (math.cos(0.3), 0.0, math.sin(0.3), 0.0)
    drag = Drag(1, (0.5, 0, 0), (0.5, 0, 0), q0, rotate=True, cursor=(100, 100))
    command = drag.move(*cursor_ray(camera, 150, 100, 800, 600), camera.back, (150, 100))
    assert command.target is None
    # the target orientation is the grab-time one turned by 0.01 rad per px about -back:
    # right is clockwise as seen from the camera
    q0c = np.array(q0) * (1.0, -1.0, -1.0, -1.0)
    w1, v1 = command.quat[0], np.array(command.quat[1:])
    w2, v2 = q0c[0], q0c[1:]
    turn = np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])
    np.testing.assert_allclose(_rotation_vector(turn), -0.5 * camera.back, atol=1e-12)


# ---- the commands through the physics thread ----------------------------------------------------
def _wait(sim, condition, timeout=600.0):
    end = time.monotonic() + timeout
    while not condition(sim.snapshot):
        assert time.monotonic() < end, f"timed out; last error {sim.snapshot.error!r}"
        time.sleep(0.002)
    return sim.snapshot


def test_set_drag_pulls_in_every_step_and_clear_drag_lets_go():
    sim = PhysicsThread(SCENE_DIR / "door.toml", paused=True)
    sim.start()
    try:
        _wait(sim, lambda s: s.ready)
        door = sim.snapshot.body_names.index("door")
        centre = np.array(sim.snapshot.body_pos[door])
        sim.send(SetDrag("door", (0.0, 0.0, 0.0), tuple(centre + (0.0, -0.3, 0.0))))
        sim.send(Step())
        snap = _wait(sim, lambda s: s.step == 1)
        assert snap.drag_body == door
        assert snap.drag_force[1] < 0.0 and snap.drag_target is not None
        sim.send(SetDrag("door", (0.0, 0.0, 0.0), (math.nan, 0.0, 0.0)))
        refused = _wait(sim, lambda s: s.error is not None)
        assert "drag target" in refused.error and "the previous value is kept" in refused.error
        assert refused.drag_target.tolist() == snap.drag_target.tolist()
        sim.send(ClearDrag())
        sim.send(Step())
        snap = _wait(sim, lambda s: s.step == 2)
        assert snap.drag_body == -1 and snap.drag_force is None
    finally:
        assert sim.stop()


# ---- the window app, headless ------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import json, math, sys, time
    import numpy as np
    from pyglet.window import mouse
    from sharnir.app.commands import SetDrag
    from sharnir.app.drag import project
    from sharnir.app.window import App

    FRAME_S = 0.1   # draw at 10 frames/s at most (llvmpipe may be slower still)
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
    velocity = {}   # step -> the hinge's angular velocity, from every step's telemetry
    frames, started = [0], time.time()
    def frame():
        app.run_frames(1)
        frames[0] += 1
        for chunk in app.snapshot.history:
            for k in range(len(chunk)):
                velocity[chunk.first_step + k] = float(chunk.joint[k, 0, 1])
        time.sleep(FRAME_S)
    # Press on the door's centre, then drag toward -y in five moves, a frame each: the
    # hinge (z up, door along +x) opens the door to positive angles, so the pull asks for a
    # negative one.
    x0, y0 = project(app.camera, centre, *size)
    app.window.dispatch_event("on_mouse_press", round(x0), round(y0), mouse.LEFT, 0)
    app.run_frames(1)  # (the window queues events until it dispatches them)
    out["grabbed"] = app.drag is not None and app.drag.body == door
    app.action_toggle_pause()
    x, y = x0, y0
    for k in range(1, 6):
        x1, y1 = project(app.camera, centre + (0.0, -0.1 * k, 0.0), *size)
        app.window.dispatch_event("on_mouse_drag", round(x1), round(y1), round(x1 - x),
                                  round(y1 - y), mouse.LEFT, 0)
        x, y = x1, y1
        frame()
    while app.snapshot.time < 3.0 and time.time() < deadline:
        frame()
    snap = app.snapshot
    w, _, _, z = snap.body_quat[door]
    out["angle_pulled"] = 2.0 * math.atan2(z, w)
    out["max_speed"] = max(abs(v) for v in velocity.values())
    out["steps_seen"] = [min(velocity), max(velocity), len(velocity)]
    out["drag_body"] = snap.drag_body
    out["drag_force"] = None if snap.drag_force is None else snap.drag_force.tolist()
    out["drags"] = sum(isinstance(c, SetDrag) and c.body == door for c in sent)
    out["frame_rate"] = frames[0] / (time.time() - started)
    app.window.dispatch_event("on_mouse_release", round(x), round(y), mouse.LEFT, 0)
    app.run_frames(3)
    out["released"] = app.drag is None
    out["last_command"] = type(sent[-1]).__name__
    t = app.snapshot.time
    while app.snapshot.time < t + 0.3 and time.time() < deadline:
        app.run_frames(1)
    out["world_drag"] = thread._world.drag
    out["snapshot_drag_body"] = app.snapshot.drag_body
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
    assert out["drags"] >= 6          # the press and each of the five moves
    # Undragged, the scene's push opens the door to +0.657 rad; the pull wins instead.
    assert out["angle_pulled"] < -0.1
    # the physics publishes the drag it applies (the panel shows it)
    assert out["drag_body"] == 1 and np.linalg.norm(out["drag_force"]) > 1.0


def test_dragging_the_door_at_10_frames_per_second_keeps_it_steady(headless_drag):
    # Regression: the force was computed once per drawn frame and held for the frame; at
    # 10 frames/s the door swung at up to 50 rad/s and spun.  In the physics step, the
    # door turns no faster than the critically damped bound of each 0.1 m move at 0.5 m
    # from the hinge (0.1 w / e / 0.5 = 0.9 rad/s), plus the scene's own push (1.5 rad/s).
    out = headless_drag
    first, last, count = out["steps_seen"]
    assert first == 1 and count == last   # every step's telemetry was seen
    assert out["frame_rate"] <= 10.5
    assert out["max_speed"] < 4.0


def test_releasing_the_door_removes_the_drag(headless_drag):
    out = headless_drag
    assert out["released"]
    assert out["last_command"] == "ClearDrag"
    assert out["world_drag"] is None and out["snapshot_drag_body"] == -1
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
