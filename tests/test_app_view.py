"""The app's 3D view with the panel beside it: the picture's centre is the middle of the part
of the window the panel leaves; F frames every body and the room hanging parts swing
through (a falling chain stays in the picture); a newly opened scene is framed from the
default direction; G centres the grabbed body in the view; the wheel over the panel scrolls
the panel, never the view.

Camera and framing functions are tested in-process; the app runs headless in a subprocess
(PYGLET_HEADLESS=1), as in tests/test_app_window.py.
"""
import colorsys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import run_headless_child
from test_render import read_png

from sharnir.app.drag import cursor_ray, project
from sharnir.app.framing import frame_bounds, hanging_bounds, view_part
from sharnir.app.panel import VIEW_TOGGLES
from sharnir.render.camera import OrbitCamera
from sharnir.render.instances import body_colour
from sharnir.render.renderer import OVERLAY_COLOUR
from sharnir.scenes import load_scene

REPO = Path(__file__).resolve().parents[1]
W, H, PANEL = 1280, 800, 480


def _corners(lo, hi):
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                     for z in (lo[2], hi[2])])


def _world_snap(world, gravity=(0.0, 0.0, -9.81)):
    """The snapshot fields app.framing reads, from a World."""
    anchors, axes = world.joint_frames_world()
    return SimpleNamespace(settings={"gravity": gravity}, joint_types=tuple(world.joint_types),
                           joint_anchor=anchors, joint_axis=axes, body_pos=world.body_pos,
                           body_quat=world.body_quat, body_shapes=tuple(world.body_shapes))


def _topology(world):
    return [tuple(b) for b in world.joint_bodies], list(world.body_island)


# ---- in-process: the camera beside the panel --------------------------------------------------

def test_the_target_is_drawn_in_the_middle_of_the_part_right_of_the_panel():
    camera = OrbitCamera(target=(0.3, -0.2, 1.0), distance=4.0)
    camera.shift_x, aspect = view_part(W, H, PANEL)
    assert aspect == pytest.approx((W - PANEL) / H)
    x, y = project(camera, camera.target, W, H)
    assert x == pytest.approx(PANEL + (W - PANEL) / 2) and y == pytest.approx(H / 2)
    # picking goes through the same projection: the ray at that pixel meets the target
    origin, direction = cursor_ray(camera, x, y, W, H)
    offset = camera.target - origin
    assert np.linalg.norm(offset - (offset @ direction) * direction) < 1e-9


@pytest.mark.parametrize("lo, hi", [((0.0, -0.02, 0.0), (1.0, 0.02, 2.0)),
                                    ((-5.0, -0.5, -4.0), (5.0, 0.5, 1.0)),
                                    ((-0.1, -3.0, 0.0), (0.1, 3.0, 0.2))])
def test_framing_puts_every_corner_in_the_part_right_of_the_panel(lo, hi):
    camera = OrbitCamera()
    camera.shift_x, aspect = view_part(W, H, PANEL)
    camera.frame((lo, hi), aspect=aspect)
    xy = np.array([project(camera, c, W, H) for c in _corners(lo, hi)])
    assert xy[:, 0].min() >= PANEL and xy[:, 0].max() <= W
    assert xy[:, 1].min() >= 0.0 and xy[:, 1].max() <= H
    # tight: some corner is within the margin of an edge of that part
    gap = min(xy[:, 0].min() - PANEL, W - xy[:, 0].max(), xy[:, 1].min(), H - xy[:, 1].max())
    assert gap < 0.1 * H


def test_view_part_without_a_panel_or_in_a_narrow_window():
    assert view_part(W, H, 0) == (0.0, W / H)
    shift, aspect = view_part(600, 400, PANEL)        # the panel never takes over half
    assert shift == pytest.approx(0.5) and aspect == pytest.approx(300 / 400)


# ---- in-process: what F frames --------------------------------------------------------------

def test_a_horizontal_chain_is_framed_with_the_room_it_falls_through():
    """scenes/chain.toml: 5 m of links on ball joints, level at z = 1 from the anchor at
    the origin; it swings down to z = -4 and through to x = -5, in the plane y = 0, and
    never above where it starts."""
    world = load_scene("chain")
    joint_bodies, island = _topology(world)
    lo, hi = hanging_bounds(_world_snap(world), joint_bodies, island)
    reach = 5.0 + 0.01                                   # the links and the last cap's radius
    assert lo[0] == pytest.approx(-reach, abs=0.02) and hi[0] == pytest.approx(reach, abs=0.02)
    assert lo[2] == pytest.approx(1.0 - reach, abs=0.02)
    assert hi[2] == pytest.approx(1.01, abs=1e-6)        # the links' top now, not above
    assert hi[1] - lo[1] < 0.05                          # it swings in its vertical plane
    flo, fhi = frame_bounds(_world_snap(world), joint_bodies, island)
    assert np.allclose(flo, np.minimum(lo, flo)) and fhi[2] == pytest.approx(1.01)


def test_a_horizontal_hinge_pendulum_adds_its_swing_circle_and_a_door_adds_nothing():
    joints = load_scene("joints")
    snap = _world_snap(joints)
    bodies, island = _topology(joints)
    lo, hi = hanging_bounds(snap, bodies, island)
    # the pendulum: hinge at (0, 0, 2) about y; it swings in the plane y = const
    p = joints.body_names.index("pendulum")
    assert lo[2] < snap.body_pos[p][2] - 0.3              # it can swing below where it is
    door = load_scene("door")                            # a hinge about the vertical
    assert hanging_bounds(_world_snap(door), *_topology(door)) is None


def test_nothing_hangs_without_gravity_or_when_already_hanging():
    chain = load_scene("chain")
    assert hanging_bounds(_world_snap(chain, (0.0, 0.0, 0.0)), *_topology(chain)) is None
    snap = _world_snap(chain)
    # the chain hanging straight down from its anchor: nothing to add
    n = len(chain.body_names) - 1
    pos = np.zeros((n + 1, 3))
    pos[1:, 2] = 1.0 - 0.1 * (np.arange(n) + 0.5)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (n + 1, 1))
    anchors = np.zeros((n, 3))
    anchors[:, 2] = 1.0 - 0.1 * np.arange(n)
    snap.body_pos, snap.body_quat, snap.joint_anchor = pos, quat, anchors
    assert hanging_bounds(snap, *_topology(chain)) is None


# ---- in the app -----------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from sharnir.app.drag import project
    from sharnir.app.window import App
    from sharnir.render.camera import DEFAULT_PITCH, DEFAULT_YAW

    door, chain = sys.argv[1], sys.argv[2]
    out = {}
    app = App(door, width=1280, height=800, paused=True)   # the door still while G is tried

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    def on_screen(points):
        w, h = app.window.get_size()
        xy = np.array([project(app.camera, p, w, h) for p in points])
        return xy[:, 0].min(), xy[:, 0].max(), xy[:, 1].min(), xy[:, 1].max()

    try:
        until(lambda: app.snapshot.ready, 900)   # a cold numba compile can take minutes
        app.run_frames(3)
        out["panel"] = app.panel_width()

        # G: grab the door at its centre, let go, focus: it is drawn in the view's middle
        snap = app.snapshot
        x, y = project(app.camera, snap.body_pos[1], 1280, 800)
        out["grabbed"] = app.start_drag(x, y)
        # the cursor over the panel or off the window pulls no further than the view's edge
        sent, send = [], app.thread.send
        app.thread.send = lambda command: (sent.append(command), send(command))
        for px, py in ((out["panel"], y), (20.0, y), (-500.0, y), (x, 800.0), (x, 5000.0)):
            app.move_drag(px, py)
        app.thread.send = send
        targets = [list(c.target) for c in sent if type(c).__name__ == "SetDrag"]
        out["edge_targets"] = targets
        app.end_drag()

        # double-click: select the door (no drag left behind); T: the camera follows it;
        # double-click on the sky: nothing selected, nothing followed
        from pyglet.window import mouse
        def double_click(px, py):   # (a frame after each event, as ImGui takes them)
            for _ in range(2):
                app.on_mouse_press(px, py, mouse.LEFT, 0)
                app.run_frames(1)
                app.on_mouse_release(px, py, mouse.LEFT, 0)
                app.run_frames(1)

        double_click(x, y)
        out["selected"] = app.selected_body(app.snapshot)
        out["drag_after_double_click"] = app.drag is not None
        app.action_track()
        app.pan(300, 0)
        app.run_frames(2)
        out["tracking"] = app.tracking
        out["target_to_door"] = float(np.linalg.norm(
            np.asarray(app.camera.target) - app.snapshot.body_pos[1]))
        sky = (1100.0, 790.0)
        double_click(*sky)
        out["selected_after_sky"] = app.selected_body(app.snapshot)
        out["tracking_after_sky"] = app.tracking
        app.pan(300, 0)
        app.run_frames(1)
        out["untracked_moved"] = float(np.linalg.norm(
            np.asarray(app.camera.target) - app.snapshot.body_pos[1]))
        app.for_focus = app.start_drag(x, y)   # (G below focuses on the body last grabbed)
        app.end_drag()
        app.orbit(120, 40)
        app.pan(-200, 90)
        app.action_focus()
        app.run_frames(1)
        out["focus_xy"] = list(project(app.camera, app.snapshot.body_pos[1], 1280, 800))

        # the wheel: over the view it zooms, over the panel it does not (even before a
        # frame has told ImGui where the pointer is)
        app.on_mouse_motion(900, 400, 0, 0)
        app.run_frames(2)
        d0 = app.camera.distance
        app.on_mouse_scroll(200, 400, 0, -3)
        out["panel_scroll_zoom"] = app.camera.distance / d0
        app.run_frames(2)
        app.on_mouse_scroll(200, 400, 0, -3)
        out["panel_scroll_zoom_later"] = app.camera.distance / d0
        app.on_mouse_motion(900, 400, 0, 0)
        app.run_frames(2)
        app.on_mouse_scroll(900, 400, 0, -3)
        out["view_scroll_zoom"] = app.camera.distance / d0

        # a newly opened scene: framed from the default direction, though the view was turned
        app.orbit(300, -60)
        app.action_open(chain)
        until(lambda: app.snapshot.scene == "chain" and app.snapshot.ready, 900)
        app.run_frames(2)
        out["yaw_pitch"] = [app.camera.yaw - DEFAULT_YAW, app.camera.pitch - DEFAULT_PITCH]
        if app.snapshot.paused:
            app.action_toggle_pause()
        # the chain falls from level: every link stays in the view's part of the window
        extremes, deadline, lowest = [], time.time() + 300, 1.0
        while app.snapshot.time < 4.0 and time.time() < deadline:
            app.run_frames(1)
            snap = app.snapshot
            extremes.append(on_screen(snap.body_pos[1:]))
            lowest = min(lowest, float(np.min(snap.body_pos[1:, 2])))
        e = np.array(extremes)
        out["chain_on_screen"] = [e[:, 0].min(), e[:, 1].max(), e[:, 2].min(), e[:, 3].max()]
        out["chain_samples"] = len(extremes)
        out["chain_lowest_z"] = lowest
        # F while it swings: the whole chain is in the picture
        app.action_frame()
        out["F_on_screen"] = list(on_screen(app.snapshot.body_pos[1:]))
        app.run_frames(1)
        app.action_screenshot(sys.argv[3])
    finally:  # an exception must not leave the physics thread running
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def view_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("view")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(folder / "cfg"))   # the child's recent list goes here
    try:
        out = run_headless_child(CHILD, REPO / "scenes" / "door.toml",
                                 REPO / "scenes" / "chain.toml", folder / "chain.png",
                                 cwd=folder)
    finally:
        mp.undo()
    return out, folder


def test_focus_centres_the_grabbed_body_in_the_part_right_of_the_panel(view_run):
    out, _ = view_run
    assert out["grabbed"]
    assert out["selected"] == 1 and not out["drag_after_double_click"]
    assert out["tracking"] and out["target_to_door"] < 1e-9
    assert out["selected_after_sky"] is None and not out["tracking_after_sky"]
    assert out["untracked_moved"] > 0.1
    at_panel, over_panel, off_left, at_top, off_top = out["edge_targets"]
    assert over_panel == pytest.approx(at_panel) and off_left == pytest.approx(at_panel)
    assert off_top == pytest.approx(at_top)
    x, y = out["focus_xy"]
    assert x == pytest.approx(out["panel"] + (W - out["panel"]) / 2, abs=0.5)
    assert y == pytest.approx(H / 2, abs=0.5)


def test_the_wheel_over_the_panel_does_not_zoom_the_view(view_run):
    out, _ = view_run
    assert out["panel_scroll_zoom"] == 1.0 and out["panel_scroll_zoom_later"] == 1.0
    assert out["view_scroll_zoom"] != pytest.approx(1.0)


def test_a_new_scene_is_framed_from_the_default_direction(view_run):
    out, _ = view_run
    assert out["yaw_pitch"] == [0.0, 0.0]


def test_the_falling_chain_stays_in_the_view_and_F_frames_all_of_it(view_run):
    out, folder = view_run
    assert out["chain_samples"] >= 10 and out["chain_lowest_z"] < -2.0  # it did fall
    panel = out["panel"]
    for key in ("chain_on_screen", "F_on_screen"):
        xmin, xmax, ymin, ymax = out[key]
        assert panel <= xmin and xmax <= W, key
        assert 0.0 <= ymin and ymax <= H, key
    assert (folder / "chain.png").is_file()


# ---- shape views (S, View > Shapes: visuals, collision shapes, overlay) ----------------------

COLLISION_CHILD = textwrap.dedent("""
    import json, sys, time
    from imgui_bundle import imgui
    from pyglet.window import key, mouse
    from sharnir.app import panel
    from sharnir.app.window import App

    rects = {}

    class Recorder:  # the panel's ImGui, recording where each radio button is drawn
        def __getattr__(self, name):
            return getattr(imgui, name)
        def radio_button(self, label, active):
            clicked = imgui.radio_button(label, active)
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            top = imgui.get_window_pos().y             # the scrolled controls' visible part
            rects[label] = (a.x, a.y, b.x, b.y, top, top + imgui.get_window_height())
            return clicked
    panel.imgui = Recorder()

    out = {}
    app = App(sys.argv[1], width=800, height=480, paused=True)
    try:
        deadline = time.time() + 900          # a cold numba compile can take minutes
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
        app.run_frames(2)
        out["panel"] = app.panel_width()
        shots = []
        for k in range(4):          # visuals, collision (S), overlay (S), visuals again (S)
            if k:
                app.on_key_press(key.S, 0)
            out[f"shown_{k}"] = app.shape_view
            app.panel_state.note = None       # (the last shot's "saved" note off the view)
            app.run_frames(1)
            shots.append(str(app.action_screenshot(f"{sys.argv[2]}_{k}.png")))
        out["shots"] = shots
        # the panel's Shapes buttons set the view: a click on each, in an order S would not
        out["clicked"] = []
        for label in ("Overlay", "Collision", "Visuals"):
            for _ in range(50):                   # the wheel over the panel scrolls it there
                x0, y0, x1, y1, top, bottom = rects[label]
                if top <= y0 and y1 <= bottom:
                    break
                app.on_mouse_scroll(100, 240, 0, -1 if y1 > bottom else 1)
                app.run_frames(2)
            x, y = (x0 + x1) / 2, 480 - (y0 + y1) / 2
            app.on_mouse_motion(x, y, 0, 0)
            app.run_frames(2)
            app.on_mouse_press(x, y, mouse.LEFT, 0)
            app.run_frames(2)
            app.on_mouse_release(x, y, mouse.LEFT, 0)
            app.run_frames(2)
            out["clicked"].append([label, app.shape_view])
        # each View tick box's key flips its flag alone, and the help (F1) lists the key
        from sharnir.app.keys import HELP
        from sharnir.app.panel import VIEW_TOGGLES
        flags = [attr for _, attr, _ in VIEW_TOGGLES] + ["shape_view"]
        out["keys"] = {}
        for label, attr, shortcut in VIEW_TOGGLES + (("Shapes", "shape_view", "S"),):
            before = [getattr(app, a) for a in flags]
            app.on_key_press(getattr(key, shortcut), 0)
            after = [getattr(app, a) for a in flags]
            out["keys"][label] = [a for a, x, y in zip(flags, before, after) if x != y]
        out["help"] = [row[0] for row in HELP]
    finally:
        out["closed"] = app.close()
    print(json.dumps(out))
""")

SPHERE_ON_A_BOX = ('bodies = [{ name = "b", kind = "static", pos = [0.0, 0.0, 0.5], '
                   'shape = { type = "box", half_extents = [0.3, 0.3, 0.3] }, '
                   'visuals = [{ shape = { type = "sphere", radius = 0.3 }, '
                   'rgba = [1.0, 0.0, 0.0, 1.0] }] }]\n')


def _hue_counts(rgb, *hues, width=0.02):
    """How many lit (saturation > 0.3) pixels of rgb (h, w, 3) have each hue, +-width."""
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in rgb.reshape(-1, 3) / 255.0])
    lit = hsv[:, 1] > 0.3
    return [int(np.sum(lit & (np.abs((hsv[:, 0] - hue + 0.5) % 1.0 - 0.5) < width)))
            for hue in hues]


@pytest.fixture(scope="module")
def shape_views(tmp_path_factory):
    """The app on a static box whose visual is a red sphere (both 0.3 m, filling the view
    right of the panel): S pressed three times, then the panel's Shapes buttons clicked."""
    folder = tmp_path_factory.mktemp("shape_views")
    scene = folder / "s.toml"
    scene.write_text(SPHERE_ON_A_BOX)
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(folder / "cfg"))   # the child's recent list goes here
    try:
        out = run_headless_child(COLLISION_CHILD, scene, folder / "shot", cwd=folder)
    finally:
        mp.undo()
    out["views"] = [read_png(Path(p))[:, int(out["panel"]) + 4:] for p in out["shots"]]
    return out


def test_S_cycles_visuals_collision_shapes_overlay_and_back(shape_views):
    """Seen: 42167 red px and no box colour, then 147 red px (the grid's x axis) and 75521
    box colour, then the overlay, then the first picture again."""
    out = shape_views
    assert out["closed"]
    assert [out[f"shown_{k}"] for k in range(4)] == ["visuals", "collision", "overlay",
                                                     "visuals"]
    red, box = 0.0, colorsys.rgb_to_hsv(*body_colour(1))[0]
    (red0, box0), (red1, box1), _, (red3, box3) = (_hue_counts(v, red, box)
                                                   for v in out["views"])
    assert red0 > 10000 and box0 == 0         # the visual: a red sphere
    assert red1 < 500 and box1 > 10000        # the box in the body's colour; red: the grid's
    #                                           x axis line (~150 px) alone
    assert (red3, box3) == (red0, box0)
    views = out["views"]
    assert np.array_equal(views[0], views[3]) and not np.array_equal(views[0], views[1])
    assert not np.array_equal(views[0], views[2])


def test_the_overlay_tints_the_visual_and_shows_the_collision_box_beyond_it(shape_views):
    """The sphere lies inside its collision cube, so the cube's outline on screen holds the
    sphere's: in the overlay no pixel of the sphere stays plain red, and the cube's corners
    beyond the sphere are magenta over the background; the visuals alone show no magenta.
    (Seen: plain red 42167 px -> 148 (the grid's x axis), magenta 0 -> 33286, the centre
    pixel (242, 0, 0) -> (214, 14, 62).)"""
    visuals, overlay = shape_views["views"][0], shape_views["views"][2]
    magenta = colorsys.rgb_to_hsv(*OVERLAY_COLOUR)[0]
    (red0,), (red2,) = (_hue_counts(v, 0.0) for v in (visuals, overlay))
    (magenta0,), (magenta2,) = (_hue_counts(v, magenta, width=0.04) for v in (visuals, overlay))
    assert red0 > 10000 and magenta0 == 0
    assert red2 < 500                       # only the grid's x axis line is left plain red
    assert magenta2 > 1000
    # the sphere is still drawn under the tint: its pixels are redder than the corners'
    centre = overlay[overlay.shape[0] // 2, overlay.shape[1] // 2].astype(int)
    assert centre[0] > centre[2] > 40        # red under a magenta tint: blue rises from ~0
    assert visuals[visuals.shape[0] // 2, visuals.shape[1] // 2, 2] < 10


def test_the_panel_shape_buttons_set_the_view(shape_views):
    assert shape_views["clicked"] == [["Overlay", "overlay"], ["Collision", "collision"],
                                      ["Visuals", "visuals"]]


def test_each_view_key_changes_its_own_setting_and_the_help_lists_it(shape_views):
    out = shape_views
    assert out["keys"] == {**{label: [attr] for label, attr, _ in VIEW_TOGGLES},
                           "Shapes": ["shape_view"]}
    assert {shortcut for _, _, shortcut in VIEW_TOGGLES} | {"S"} <= set(out["help"])

