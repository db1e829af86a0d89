"""The panel as a user meets it: Ctrl+click types a slider's value; the plot is in view at
1280x800 and plots the first joints of a new scene; one colour per joint in every channel;
a stuck joint's rounding noise is a flat line; nothing moves when the simulation pauses,
resets or finishes compiling; the panel follows the window's height; the F1 overlay shows
every row; a frame-rate readout.

Value functions are tested in-process; the app runs headless in a subprocess
(PYGLET_HEADLESS=1), as in tests/test_app_window.py.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import run_headless_child

from sharnir.app.frame_rate import FrameRate
from sharnir.app.panel_state import (
    PLOT_DEFAULT_JOINTS,
    PLOT_MIN_SPAN,
    PanelState,
    default_plotted,
    display_scale,
    frame_rate_text,
    plot_height,
    plot_y_limits,
)

REPO = Path(__file__).resolve().parents[1]


# ---- in-process -----------------------------------------------------------------------------

def test_rounding_noise_of_a_stuck_joint_is_a_flat_line_at_zero():
    rng = np.random.default_rng(1)
    for channel in ("coord", "velocity", "friction"):
        noise = [rng.normal(0.0, 1e-15, 500), rng.normal(0.0, 3e-16, 500)]
        lo, hi = plot_y_limits(noise, channel, ["angle", "angle"])
        assert lo < 0.0 < hi
        assert hi - lo >= PLOT_MIN_SPAN[channel][0]
        assert abs(lo + hi) < 1e-12                    # centred on the data: 0 mid-height
    lo, hi = plot_y_limits([np.full(10, 1e-15)], "coord", ["position"])
    assert hi - lo >= PLOT_MIN_SPAN["coord"][1]
    # friction: at least a share of the friction limit (20 N m: a 1 N m span)
    lo, hi = plot_y_limits([np.full(10, 3.0)], "friction", ["angle"], [20.0])
    assert lo < 3.0 < hi and hi - lo >= 1.0


def test_the_value_axis_covers_real_data_with_room():
    ys = [np.linspace(0.0, 86.0, 50), np.linspace(-5.0, 10.0, 50), np.array([np.nan, 1.0])]
    lo, hi = plot_y_limits(ys, "velocity", ["angle"] * 3)
    assert lo < -5.0 and hi > 86.0 and hi - lo < 1.3 * 91.0
    assert plot_y_limits([], "velocity", []) == plot_y_limits([np.zeros(0)], "velocity", [])


def test_angles_are_degrees_in_the_panel_and_positions_metres():
    assert display_scale("coord", "angle") == pytest.approx(180.0 / np.pi)
    assert display_scale("velocity", "angle") == pytest.approx(180.0 / np.pi)
    assert display_scale("friction", "angle") == 1.0
    assert display_scale("coord", "position") == 1.0


def test_a_new_scene_plots_its_first_joints_and_a_reset_keeps_the_ticks():
    state = PanelState()
    names = tuple(f"j{i}" for i in range(10))
    default_plotted(SimpleNamespace(joint_names=names), state)
    assert state.plotted == set(names[:PLOT_DEFAULT_JOINTS])
    state.plotted = {"j7"}                              # the user's choice ...
    default_plotted(SimpleNamespace(joint_names=names), state)
    assert state.plotted == {"j7"}                      # ... survives a reset
    default_plotted(SimpleNamespace(joint_names=("hinge",)), state)
    assert state.plotted == {"hinge"}                   # another scene: its first joints
    state.plotted = set()
    default_plotted(SimpleNamespace(joint_names=("hinge",)), state)
    assert state.plotted == set()                       # unticking all is allowed


def test_the_plot_region_has_a_fixed_share_of_the_height():
    assert plot_height(780) == pytest.approx(0.4 * 780)
    assert plot_height(400) == pytest.approx(200.0)     # at least 220 px, at most half
    assert plot_height(1200) == pytest.approx(480.0)


def test_frame_rate_counts_frames_and_drawing_time():
    rate = FrameRate(window_s=0.5)
    assert rate.fps == 0.0 and "- frames/s" in frame_rate_text(rate)
    for i in range(100):                                # 50 frames/s, 4 ms of drawing each
        rate.add(i * 0.02 - 0.004, i * 0.02)
    assert rate.fps == pytest.approx(50.0)
    assert rate.frame_ms == pytest.approx(20.0) and rate.draw_ms == pytest.approx(4.0)
    assert frame_rate_text(rate) == "view: 50.0 frames/s, 20.0 ms a frame (4.0 ms drawing)"


# ---- in the app -----------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import dataclasses, json, sys, time
    from pathlib import Path
    from imgui_bundle import imgui, implot
    from pyglet.window import key, mouse
    from sharnir.app import panel
    from sharnir.app.window import App

    door, joints, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out = {}
    rects, ys, lines, help_fits = {}, {}, [], []

    def wrap(name, before=None, after=None):
        original = getattr(panel, name)
        def wrapped(*args, **kwargs):
            if before:
                args = before(*args) or args
            result = original(*args, **kwargs)
            if after:
                after(*args)
            return result
        setattr(panel, name, wrapped)

    def slider_rect(snapshot, send, state, j, latest):
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        rects[j] = (a.x, a.y, b.x, b.y)
    wrap("_col_friction", after=slider_rect)
    for section in ("draw_joints", "draw_solver", "draw_plot"):
        def at(*args, _name=section):
            ys[_name] = imgui.get_cursor_screen_pos().y
            if _name == "draw_plot":
                ys["plot_bottom"] = ys[_name] + imgui.get_content_region_avail().y
        wrap(section, before=at)
    compiling = {"on": False}
    def fake_compile(snapshot, *rest):
        if compiling["on"]:
            snapshot = dataclasses.replace(snapshot, ready=False, compile_progress=(3, 30, 4.0))
        return (snapshot, *rest)
    wrap("draw_simulation", before=fake_compile)
    original_help = panel.draw_help
    def draw_help(*args, **kwargs):
        help_fits.append(original_help(*args, **kwargs))
    panel.draw_help = draw_help

    class Recorder:  # ImPlot, recording each curve's label and colour
        def __getattr__(self, name):
            return getattr(implot, name)
        def plot_line(self, label, xs, ys_, spec=None):
            c = spec.line_color if spec is not None else None
            lines.append((label.split("###")[-1], None if c is None else [c.x, c.y, c.z]))
            implot.plot_line(label, xs, ys_, spec) if spec is not None else \\
                implot.plot_line(label, xs, ys_)
    panel.implot = Recorder()

    app = App(door, width=1280, height=800, paused=True)
    state = app.panel_state

    def until(condition, timeout=120):
        # at least one frame: the panel reads a snapshot that may be ready before any frame
        deadline = time.time() + timeout
        app.run_frames(1)
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    def layout():
        app.run_frames(3)
        return dict(ys)

    try:
        until(lambda: app.snapshot.ready, 900)   # a cold numba compile can take minutes
        out["plotted"] = sorted(state.plotted)
        out["layout"] = {"start": layout()}

        # Ctrl+click on the friction slider: press Ctrl as X11 reports it (the modifiers
        # before the key), then click with Ctrl held
        x0, y0, x1, y1 = rects[0]
        x, y = (x0 + x1) / 2, 800 - (y0 + y1) / 2
        app.on_mouse_motion(x, y, 0, 0)
        app.run_frames(2)
        app.on_key_press(key.LCTRL, 0)
        app.run_frames(1)
        app.on_mouse_press(x, y, mouse.LEFT, key.MOD_CTRL)
        app.run_frames(2)
        app.on_mouse_release(x, y, mouse.LEFT, key.MOD_CTRL)
        app.run_frames(2)
        io = imgui.get_io()
        out["ctrl_held"], out["typing"] = io.key_ctrl, io.want_text_input
        app.action_screenshot(folder / "ctrl-click.png")
        app.on_key_release(key.LCTRL, key.MOD_CTRL)
        app.on_key_press(key.ENTER, 0)
        app.on_key_release(key.ENTER, 0)
        app.run_frames(2)
        out["ctrl_released"], out["typing_after_enter"] = io.key_ctrl, io.want_text_input

        # the layout through run, pause, reset, step and a compile
        app.action_toggle_pause()
        until(lambda: app.snapshot.time > 0.5)
        out["layout"]["running"] = layout()
        app.action_toggle_pause()
        until(lambda: app.snapshot.paused)
        out["layout"]["paused"] = layout()
        gen = app.snapshot.generation
        app.action_reset()
        until(lambda: app.snapshot.generation > gen)
        out["layout"]["reset"] = layout()
        app.action_step()
        out["layout"]["step"] = layout()
        compiling["on"] = True
        out["layout"]["compiling"] = layout()
        app.action_screenshot(folder / "compiling.png")
        compiling["on"] = False
        out["layout"]["compiled"] = layout()
        out["fps"] = app.frame_rate.fps

        # F1: every row in view
        app.action_toggle_help()
        app.run_frames(3)
        out["help_fits"] = help_fits[-1]
        app.action_screenshot(folder / "help.png")
        app.action_toggle_help()

        # another scene: its first joints plotted, one colour per joint in every channel
        app.action_open(joints)
        until(lambda: app.snapshot.scene == "joints" and app.snapshot.ready, 900)
        app.action_toggle_pause()
        until(lambda: app.snapshot.time > 1.0)
        out["joints_plotted"] = sorted(state.plotted)
        colours = {}
        for channel in ("coord", "velocity", "friction"):
            state.plot_channel = channel
            app.run_frames(2)
            del lines[:]
            app.run_frames(1)
            colours[channel] = dict(lines)
        out["colours"] = colours
        app.action_screenshot(folder / "joints.png")
    finally:  # an exception must not leave the physics thread running
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def panel_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("panel_layout")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(folder / "cfg"))   # the child's recent list goes here
    try:
        out = run_headless_child(CHILD, REPO / "scenes" / "door.toml",
                                 REPO / "scenes" / "joints.toml", folder, cwd=folder)
    finally:
        mp.undo()
    return out, folder


def test_ctrl_click_on_a_slider_types_a_value(panel_run):
    out, folder = panel_run
    assert out["ctrl_held"] and out["typing"]
    assert not out["ctrl_released"] and not out["typing_after_enter"]
    assert (folder / "ctrl-click.png").is_file()


def test_the_plot_is_in_view_at_1280x800_and_plots_the_first_joints(panel_run):
    out, _ = panel_run
    assert out["plotted"] == ["hinge"]
    start = out["layout"]["start"]
    assert start["plot_bottom"] <= 800 and start["plot_bottom"] - start["draw_plot"] >= 220
    assert out["joints_plotted"] == sorted(["pendulum_pivot", "slider", "chain_top",
                                            "chain_01"])


def test_nothing_moves_when_the_simulation_pauses_resets_steps_or_compiles(panel_run):
    out, _ = panel_run
    layouts = out["layout"]
    first = layouts["start"]
    for when, layout in layouts.items():
        assert layout == first, when


X_RESIZE_CHILD = textwrap.dedent("""
    import json, sys, time
    from sharnir.app.window import App

    app = App(sys.argv[1], width=1280, height=800, paused=True)
    out = {}
    try:
        deadline = time.time() + 900
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
        app.run_frames(3)
        out["before"] = [app.panel_state.width, app.panel_state.height]
        for size in ((1000, 600), (1280, 960)):
            app.window.set_size(*size)
            deadline = time.time() + 10
            while tuple(app.window.get_size()) != size and time.time() < deadline:
                app.run_frames(1)
            app.run_frames(3)
            out[str(size[1])] = [list(app.window.get_size()), app.panel_state.height,
                                 app.camera.shift_x]
        app.action_screenshot(sys.argv[2])
    finally:
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs xvfb-run (CI installs xvfb)")
def test_the_panel_follows_the_window_height(tmp_path):
    """Under X (a headless EGL surface cannot be resized): the panel is as tall as the
    window after it shrinks and grows, and the view's centre follows the new width."""
    env = {k: v for k, v in os.environ.items() if k != "PYGLET_HEADLESS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    env["XDG_CONFIG_HOME"] = str(tmp_path / "cfg")
    result = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1400x1000x24", sys.executable,
                             "-c", X_RESIZE_CHILD, str(REPO / "scenes" / "door.toml"),
                             str(tmp_path / "resized.png")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["before"] == [480, 800]
    assert out["600"][:2] == [[1000, 600], 600]
    assert out["960"][:2] == [[1280, 960], 960]
    assert out["600"][2] == pytest.approx(480 / 1000)
    assert out["960"][2] == pytest.approx(480 / 1280)


def test_the_help_overlay_shows_every_row(panel_run):
    out, _ = panel_run
    assert out["help_fits"] is True


def test_each_joint_keeps_its_colour_in_every_channel(panel_run):
    out, _ = panel_run
    colours = out["colours"]
    assert set(colours["coord"]) == set(out["joints_plotted"])
    assert colours["coord"] == colours["velocity"] == colours["friction"]
    assert len({tuple(c) for c in colours["coord"].values()}) == len(colours["coord"])


def test_the_panel_shows_the_frame_rate(panel_run):
    out, _ = panel_run
    assert out["fps"] > 0.0
