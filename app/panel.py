"""The control panel's drawing: scene files, simulation, solver, joints, the selected body
and the joint plots (Dear ImGui / ImPlot), plus the modal that shows a failed load.

Each section is a function of the latest snapshot, a `send` callable (PhysicsThread.send)
and the `PanelState` the panel keeps between frames.  What a widget does when it changes
(`request_speed`, `request_load`, ...), how the panel follows a load (`check_load`), its
texts and its plot's curves and scales are in `app.panel_state`, which imports no ImGui:
this module draws them and calls those functions.
"""
import math
import os
import time
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

from ..physics.model import STAT_ITERATIONS, STAT_SECONDS
from ..physics.settings import SETTINGS
from ..physics.threads import available as threads_available
from ..render.renderer import COLLISION, OVERLAY, VISUALS
from .commands import ApplyKeyframe, CaptureKeyframe, Reset, ResumeController, Step
from .panel_state import (
    ALL_CHANNELS,
    MANIFOLD_REUSE_MAX,
    MORE_CHANNELS,
    MOTOR_PLOT_CHANNELS,
    PLOT_CHANNELS,
    _format_coord,
    _format_limits,
    _latest,
    _shown,
    _target_range,
    _time_range,
    check_load,
    compile_status,
    default_plotted,
    elide,
    export_csv,
    frame_rate_text,
    keyframe_toml,
    note_alpha,
    open_recent,
    plot_axis_label,
    plot_channel_names,
    plot_curves,
    plot_height,
    plot_y_limits,
    poll_browse,
    request_friction,
    request_load,
    request_reload,
    request_rewind,
    request_robot,
    request_settings,
    request_speed,
    request_target,
    request_voltage,
    scene_description,
    start_browse,
    toggle_pause,
)
from .physics_thread import SPEED_MAX, SPEED_MIN
from .printable import printable

LOAD_ERROR_POPUP = "Load failed"
TABLE_ROWS_MAX = 12             # joints shown at once; the table scrolls beyond
WHEEL_LINES = 5                 # text lines a wheel notch scrolls the panel by (ImGui's own)
WHEEL_LOCK_S = 0.7              # s ImGui keeps the wheel on the window it last scrolled
PANEL_MIN_WIDTH = 320.0         # px; the panel's width can be dragged between these
PANEL_MAX_SHARE = 0.75          # of the window's width
MESSAGE_WRAP_EMS = 40           # notes and errors wrap at this many font sizes
HELP_WRAP_EMS = 36              # the F1 overlay's descriptions wrap at this many font sizes
# One colour per joint (by its index), the same in the joints table and in every channel.
JOINT_COLOURS = ((0.30, 0.60, 1.00), (1.00, 0.55, 0.15), (0.35, 0.85, 0.40),
                 (0.95, 0.35, 0.40), (0.70, 0.50, 1.00), (0.85, 0.75, 0.30),
                 (0.30, 0.85, 0.85), (1.00, 0.50, 0.80), (0.65, 0.65, 0.65),
                 (0.60, 0.80, 0.20))
NOTE_COLOUR = imgui.ImVec4(1.0, 0.75, 0.3, 1.0)
ERROR_COLOUR = imgui.ImVec4(1.0, 0.4, 0.35, 1.0)
STICK_COLOUR = imgui.ImVec4(0.4, 0.6, 1.0, 1.0)
SLIP_COLOUR = imgui.ImVec4(1.0, 0.55, 0.1, 1.0)


def _note(state, note):
    if note:
        state.note = note


def draw_keyframes(snapshot, send, state):
    """The scene's keyframes ([[keyframes]]): Load puts one into the world; "Copy as TOML"
    copies the pose on show as a keyframe table for the scene file."""
    if not imgui.collapsing_header("Keyframes"):
        return
    for name in snapshot.keyframes:
        imgui.push_id(f"keyframe-{name}")
        if imgui.button("Load"):
            send(ApplyKeyframe(name))
        imgui.same_line()
        imgui.text(printable(name))
        imgui.pop_id()
    if not snapshot.keyframes:
        imgui.text_disabled("the scene has no [[keyframes]]")
    if imgui.button("Copy as TOML"):   # the physics thread captures the pose, then it is copied
        state.keyframe_asked = snapshot.keyframe_capture[0] if snapshot.keyframe_capture else 0
        send(CaptureKeyframe())
    capture = snapshot.keyframe_capture
    if state.keyframe_asked is not None and capture is not None and (
            capture[0] > state.keyframe_asked):
        state.keyframe_asked = None
        imgui.set_clipboard_text(keyframe_toml(snapshot))
        _note(state, f"copied the pose at t = {capture[1]:.3f} s as a [[keyframes]] table")
    if imgui.is_item_hovered():
        imgui.set_tooltip("the joints' coordinates and rates (spherical joints' rotations), "
                          "free bodies' states, motors' voltages and set-points, as a "
                          "[[keyframes]] table to paste into the scene file")


def draw_motors(snapshot, send, state):
    """A slider per DC motor, live, with its current, torque, rotor speed and power. What
    sets the motor's voltage is shown: its controller (the slider moves the set-point; angles
    in degrees; "use voltage" takes the motor over by hand) or the voltage (the slider; where
    it took over a controller, "hand back" gives the motor back to it). The hover shows what the
    motor is (stall torque, no-load speed, T_e at this voltage)."""
    if not snapshot.motors or snapshot.motor_state is None:
        return
    if not imgui.collapsing_header("Motors", imgui.TreeNodeFlags_.default_open):
        return
    ms = snapshot.motor_state
    modes = snapshot.motor_modes
    for m, (j, motor) in enumerate(snapshot.motors):
        name = snapshot.joint_names[j]
        mode, held = modes[m] if m < len(modes) else ("voltage", False)
        imgui.push_id(f"motor-{name}")
        u = float(ms["voltage"][m])
        slider = snapshot.joint_coord_names[j] == "position"
        imgui.set_next_item_width(200)
        if mode == "voltage":
            top = motor.voltage_limit if math.isfinite(motor.voltage_limit) else max(24.0,
                                                                                     abs(u))
            changed, value = imgui.slider_float(f"{name} (V)", u, -top, top, "%.2f V")
            if changed:
                _note(state, request_voltage(snapshot, send, name, value))
            hover = "Ctrl+click to type a value"
        else:
            target = float(ms["target"][m])
            lo, hi = _target_range(snapshot, j, motor, mode, target)
            scale = 1.0 if slider else math.degrees(1.0)
            unit = ("m" if slider else "deg") + ("/s" if mode == "velocity" else "")
            changed, value = imgui.slider_float(name, target * scale, lo * scale, hi * scale,
                                                f"%.3g {unit}")
            if changed:
                _note(state, request_target(snapshot, send, name, value / scale))
            hover = (f"the {mode} controller's set-point ({u:.2f} V now); a behaviour may move "
                     "it too; Ctrl+click to type a value")
        if imgui.is_item_hovered():
            unit = "N" if slider else "N m"
            imgui.set_tooltip(
                f"stall torque {motor.stall_torque(u):.3g} {unit}, no-load speed "
                f"{motor.no_load_speed(u):.3g} /s, T_e = L/R {motor.electrical_time_constant:.3g}"
                f" s; {hover}")
        if mode != "voltage":
            imgui.text_disabled(f"  {mode} control")
            imgui.same_line()
            if imgui.small_button("use voltage"):
                _note(state, request_voltage(snapshot, send, name, u))
            if imgui.is_item_hovered():
                imgui.set_tooltip("drive this motor by its voltage instead (the controller is "
                                  "held until you hand the motor back)")
        elif held:
            imgui.text_disabled("  voltage (controller held)")
            imgui.same_line()
            if imgui.small_button("hand back"):
                send(ResumeController(name))
            if imgui.is_item_hovered():
                imgui.set_tooltip("hand this motor back to its controller")
        imgui.text(f"  {ms['current'][m]:.3g} A  {ms['torque'][m]:.3g} "
                   f"{'N' if slider else 'N m'}  "
                   f"rotor {ms['speed'][m]:.4g} rad/s  {ms['power'][m]:.3g} W")
        imgui.pop_id()


def draw_scene(snapshot, send, state):
    """The scene file: a path box with Open, Browse... (a file dialog), Reload, the recent
    files (missing ones greyed); the answers to a load come through `check_load`."""
    _note(state, poll_browse(snapshot, send, state))
    if not imgui.collapsing_header("Scene", imgui.TreeNodeFlags_.default_open):
        return
    if state.scene_path is None:
        state.scene_path = snapshot.source or ""
    imgui.set_next_item_width(-130)
    entered, state.scene_path = imgui.input_text(
        "##scene_path", printable(state.scene_path), imgui.InputTextFlags_.enter_returns_true)
    if imgui.is_item_hovered():
        imgui.set_tooltip("path of a scene file (.toml, MuJoCo .xml, URDF .urdf), from the "
                          "current folder, or a shipped scene's name (biped, door...); Enter "
                          "or Open loads it")
    imgui.same_line()
    if imgui.button("Open") or entered:
        _note(state, request_load(snapshot, send, state, state.scene_path))
    imgui.same_line()
    imgui.begin_disabled(state.dialog is not None)
    if imgui.button("Browse..."):
        start = Path(snapshot.source).parent if snapshot.source else None
        _note(state, start_browse(state, start))
    imgui.end_disabled()
    if imgui.button("Reload"):
        _note(state, request_reload(snapshot, send, state))
    if imgui.is_item_hovered():
        imgui.set_tooltip("read the scene file again (after editing it)")
    imgui.same_line()
    if imgui.button("Sweeps..."):   # a sweep's table and plot (app/sweeps_window.py)
        from . import sweeps_window
        sweeps_window.toggle(state)
    imgui.same_line()
    if state.pending is not None:
        imgui.text_colored(NOTE_COLOUR, f"loading {printable(Path(state.pending.path).name)}...")
    elif state.dialog is not None:
        imgui.text_colored(NOTE_COLOUR, "waiting for the file dialog...")
    else:
        imgui.text_disabled(printable(snapshot.source or f"{snapshot.scene} (built in code)"))
    recent = state.recent_files()
    if not len(recent):
        return
    if imgui.tree_node_ex("Recent files", imgui.TreeNodeFlags_.default_open):
        for i, path in enumerate(list(recent)):
            imgui.push_id(i)
            exists = os.path.isfile(path)
            if not exists:
                imgui.push_style_color(imgui.Col_.text,
                                       imgui.get_style().color_(imgui.Col_.text_disabled))
            label = printable(f"{Path(path).name}{'' if exists else ' (missing)'}  "
                              f"({Path(path).parent})")
            if imgui.selectable(label, path == snapshot.source)[0]:
                _note(state, open_recent(snapshot, send, state, path))
            if not exists:
                imgui.pop_style_color()
            if imgui.is_item_hovered():
                imgui.set_tooltip(printable(path if exists else f"{path}\nno longer exists"))
            imgui.pop_id()
        imgui.tree_pop()


def draw_robot(snapshot, send, state):
    """A URDF robot's base (as the file means, fixed or floating, as PyBullet's
    useFixedBase) and start height (its lowest point above the ground); Apply reads the file
    again with them (request_robot). Shown only for a URDF robot file."""
    if snapshot.robot is None or not imgui.collapsing_header(
            "Robot", imgui.TreeNodeFlags_.default_open):
        return
    if state.robot_for != (snapshot.source, snapshot.run):   # a load: the options in effect
        state.robot_for = (snapshot.source, snapshot.run)
        state.robot_base = snapshot.robot.get("fixed_base")
        state.robot_height = float(snapshot.robot.get("height") or 0.0)
    imgui.text("base")
    for label, value, tip in (
            ("from the file", None, "fixed if the robot stands on its base (an arm), "
                                    "floating if on legs or wheels"),
            ("fixed", True, "the root link held where it is (PyBullet's useFixedBase)"),
            ("floating", False, "the whole robot free, standing on the ground")):
        imgui.same_line()
        if imgui.radio_button(label, state.robot_base is value):
            state.robot_base = value
        if imgui.is_item_hovered():
            imgui.set_tooltip(tip)
    imgui.set_next_item_width(120)
    _, state.robot_height = imgui.input_float("start height (m)", state.robot_height, 0.05,
                                              0.5, "%.3f")
    if imgui.is_item_hovered():
        imgui.set_tooltip("the robot's lowest point above the ground at the start")
    imgui.same_line()
    if imgui.button("Apply"):
        _note(state, request_robot(snapshot, send, state, state.robot_base,
                                   state.robot_height))
    if imgui.is_item_hovered():
        imgui.set_tooltip("read the robot file again with this base and height")


def draw_load_error(state):
    """The modal of a failed load or reload: the whole message, and Close."""
    if state.load_error is None:
        return
    if not imgui.is_popup_open(LOAD_ERROR_POPUP):
        imgui.open_popup(LOAD_ERROR_POPUP)
    io = imgui.get_io()
    imgui.set_next_window_pos(imgui.ImVec2(io.display_size.x / 2, io.display_size.y / 2),
                              imgui.Cond_.appearing, imgui.ImVec2(0.5, 0.5))
    imgui.set_next_window_size_constraints(imgui.ImVec2(360, 0),
                                           imgui.ImVec2(max(360.0, io.display_size.x * 0.8),
                                                        max(200.0, io.display_size.y * 0.8)))
    flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
    opened, _ = imgui.begin_popup_modal(LOAD_ERROR_POPUP, None, flags)
    if not opened:
        return
    imgui.push_text_wrap_pos(imgui.get_font_size() * 40)
    imgui.text_colored(ERROR_COLOUR, printable(state.load_error))
    imgui.pop_text_wrap_pos()
    imgui.separator()
    if imgui.button("Close", imgui.ImVec2(100, 0)) or imgui.is_key_pressed(imgui.Key.escape):
        state.load_error = None
        imgui.close_current_popup()
    imgui.same_line()
    if imgui.button("Copy message"):
        imgui.set_clipboard_text(printable(state.load_error or ""))
    imgui.end_popup()


def draw_simulation(snapshot, send, state, frame_rate=None):
    """Play/pause, step, reset, speed, dt, gravity; status, time, real-time factor and the
    window's frame rate.  Every line is there in every state, so nothing below moves when
    the simulation pauses, resets or finishes compiling."""
    if not imgui.collapsing_header("Simulation", imgui.TreeNodeFlags_.default_open):
        return
    if imgui.button("Play" if snapshot.paused else "Pause", imgui.ImVec2(60, 0)):
        toggle_pause(snapshot, send)
    imgui.same_line()
    if imgui.button("Step"):
        send(Step())
    imgui.same_line()
    if imgui.button("Reset"):
        send(Reset())
    changed, speed = imgui.slider_float("speed", snapshot.speed, SPEED_MIN, SPEED_MAX,
                                        "%.3gx", imgui.SliderFlags_.logarithmic)
    if changed:
        _note(state, request_speed(send, speed))
    s = snapshot.settings
    imgui.set_next_item_width(160)
    changed, dt = imgui.input_double("dt (s)", float(snapshot.dt), 0.0, 0.0, "%.6g",
                                     imgui.InputTextFlags_.enter_returns_true)
    if changed:
        _note(state, request_settings(send, dt=dt))
    gravity = [float(g) for g in s.get("gravity", (0.0, 0.0, -9.81))]
    imgui.set_next_item_width(240)
    changed, g = imgui.input_float3("gravity (m/s^2)", gravity, "%.3f",
                                    imgui.InputTextFlags_.enter_returns_true)
    if changed:
        _note(state, request_settings(send, gravity=g))
    if not snapshot.ready and snapshot.compile_progress is not None:
        # in the status line's place and as tall: the layout stays put when it goes
        done, total, _ = snapshot.compile_progress
        imgui.progress_bar(done / max(total, 1),
                           imgui.ImVec2(-1.0, imgui.get_text_line_height()),
                           compile_status(snapshot))
    else:
        status = compile_status(snapshot) if not snapshot.ready else (
            "paused" if snapshot.paused else "running")
        imgui.text(f"{snapshot.scene}: {status}")
    imgui.text(f"sim time {snapshot.time:.3f} s  step {snapshot.step}")
    draw_timeline(snapshot, send)
    imgui.text(f"real-time factor {snapshot.realtime_factor:.3f}"
               + ("" if snapshot.paused else f" (asked {snapshot.speed:.3g})"))
    imgui.text(frame_rate_text(frame_rate))


def draw_timeline(snapshot, send):
    """The timeline: a slider over the simulated time kept (physics_thread: a state every
    1/60 s, the oldest dropped beyond its memory); dragging it pauses there, and Play or Step
    go on from there (what was kept after it is then dropped)."""
    first, last = snapshot.timeline if snapshot.timeline is not None else (0.0, 0.0)
    imgui.begin_disabled(snapshot.timeline is None or last <= first)
    imgui.set_next_item_width(-80)
    changed, t = imgui.slider_float("timeline", float(min(max(snapshot.time, first), last)),
                                    float(first), float(max(last, first + 1e-9)), "%.3f s")
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(f"drag to go back to any time kept ({first:.3f} to {last:.3f} s); "
                          "Left arrow: one frame back, Right: one step on")
    if changed:
        request_rewind(snapshot, send, t)


def draw_solver(snapshot, send, state, plot_buffer=None):
    if not imgui.collapsing_header("Solver", imgui.TreeNodeFlags_.default_open):
        return
    s = snapshot.settings
    changes = {}
    changed, v = imgui.input_int("iterations", int(s["iterations"]))
    if changed:
        changes["iterations"] = v
    changed, v = imgui.input_int("position iterations", int(s["position_iterations"]))
    if changed:
        changes["position_iterations"] = v
    changed, v = imgui.input_float("tolerance (N s)", float(s["tolerance"]), 0.0, 0.0, "%.2e",
                                   imgui.InputTextFlags_.enter_returns_true)
    if changed:
        changes["tolerance"] = v
    changed, v = imgui.input_float("budget ms (0 = off)", float(s["budget_ms"]), 0.1, 1.0,
                                   "%.2f", imgui.InputTextFlags_.enter_returns_true)
    if changed:
        changes["budget_ms"] = v
    changed, v = imgui.checkbox("warm start", bool(s["warm_start"]))
    if changed:
        changes["warm_start"] = v
    most = threads_available()
    changed, v = imgui.slider_int("threads (0 = all)", min(int(s.get("threads", 0)), most), 0,
                                  most)
    if imgui.is_item_hovered():
        imgui.set_tooltip("threads a step may use for its contacts (physics/partition.py); the "
                          "results are the same bits for any number,\nonly the speed changes "
                          f"(this process: at most {most})")
    if changed:
        changes["threads"] = v
    changed, v = imgui.input_float("manifold reuse (mm)", float(s["manifold_reuse"]) * 1e3,
                                   0.05, 0.5, "%.3f", imgui.InputTextFlags_.enter_returns_true)
    if imgui.is_item_hovered():
        imgui.set_tooltip("a touching pair that moved less than this since its contact points "
                          "were found keeps them\n(skips the narrow phase); 0 = find every "
                          f"pair afresh each step, at most {MANIFOLD_REUSE_MAX * 1e3:g} mm")
    if changed:
        changes["manifold_reuse"] = v * 1e-3
    choices = SETTINGS["articulation"].choices
    changed, v = imgui.combo("articulation", choices.index(s.get("articulation", choices[0])),
                             list(choices))
    if imgui.is_item_hovered():
        imgui.set_tooltip("sweep: every joint row swept one by one\ntree: each tree of joints "
                          "one block, solved exactly (physics/articulation.py)")
    if changed:
        changes["articulation"] = choices[v]
    if changes:
        _note(state, request_settings(send, **changes))
    stats = _latest(snapshot, "stats")
    if stats is not None:
        iterations, residual, seconds = stats
        n = getattr(snapshot, "threads", 1)
        imgui.text(f"last step: {iterations:.0f} iterations, residual {residual:.2e}, "
                   f"{seconds * 1e3:.3f} ms, {n} thread{'s' if n > 1 else ''}")
    else:
        imgui.text_disabled("last step: -")
    if plot_buffer is not None:   # drawn empty too: a reset does not move the layout
        draw_solver_plot(plot_buffer)


def draw_solver_plot(plot_buffer):
    """Iterations (left axis) and solve time (right axis, ms) of every step in the buffer."""
    t = plot_buffer.t
    flags = implot.Flags_.no_title | implot.Flags_.no_menus | implot.Flags_.no_box_select
    if not implot.begin_plot("##solver history", imgui.ImVec2(-1, 120), flags):
        return
    implot.setup_axes("", "iterations", implot.AxisFlags_.no_tick_labels,
                      implot.AxisFlags_.auto_fit)
    implot.setup_axis(implot.ImAxis_.y2, "ms", implot.AxisFlags_.auto_fit
                      | implot.AxisFlags_.opposite)
    implot.setup_axis_limits(implot.ImAxis_.x1, *_time_range(t), implot.Cond_.always)
    implot.setup_legend(implot.Location_.north_west)
    stats = plot_buffer.stats
    implot.plot_line("iterations", t, stats[STAT_ITERATIONS])
    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    implot.plot_line("step ms", t, np.ascontiguousarray(stats[STAT_SECONDS] * 1e3))
    implot.end_plot()


# The joints table's columns: (title, draw(snapshot, send, state, j, latest)), drawn in
# order.  A column that only some worlds have (the joint limits now; motor voltages once
# joints have motors) is added by `_joint_columns` when the snapshot carries its data.
def _col_name(snapshot, send, state, j, latest):
    """The plot's tick box and the name, in the joint's plot colour (this column stays in
    view when the table scrolls sideways)."""
    name = snapshot.joint_names[j]
    colour = joint_colour(j)
    imgui.push_style_color(imgui.Col_.check_mark, colour)
    changed, ticked = imgui.checkbox("##plot", name in state.plotted)
    imgui.pop_style_color()
    if changed:
        (state.plotted.add if ticked else state.plotted.discard)(name)
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"plot {name}")
    imgui.same_line()
    imgui.text_colored(colour, name)


def _col_type(snapshot, send, state, j, latest):
    imgui.text(snapshot.joint_types[j])


def _col_coord(snapshot, send, state, j, latest):
    imgui.text("-" if latest is None else _format_coord(snapshot.joint_coord_names[j],
                                                        latest[j, 0]))


def _col_velocity(snapshot, send, state, j, latest):
    if latest is None:
        imgui.text("-")
    elif snapshot.joint_coord_names[j] == "position":
        imgui.text(f"{_shown(latest[j, 1], 4):.4f} m/s")
    else:
        imgui.text(f"{_shown(math.degrees(latest[j, 1]), 2):.2f} deg/s")


def _col_friction(snapshot, send, state, j, latest):
    name = snapshot.joint_names[j]
    limit = float(snapshot.friction_limit[j])
    top = state.friction_range.setdefault(name, max(2.0 * limit, 1.0))
    imgui.set_next_item_width(100)
    prismatic = snapshot.joint_coord_names[j] == "position"
    changed, value = imgui.slider_float("##friction", limit, 0.0, top,
                                        "%.2f N" if prismatic else "%.2f N m")
    if changed:
        _note(state, request_friction(snapshot, send, name, value))
    if imgui.is_item_hovered():
        imgui.set_tooltip("Coulomb friction limit; Ctrl+click to type a value")


def _col_state(snapshot, send, state, j, latest):
    if latest is None:
        imgui.text("-")
    elif latest[j, 3] > 0.5:
        imgui.text_colored(SLIP_COLOUR, "sliding")
    else:
        imgui.text_colored(STICK_COLOUR, "stuck")


def _col_limits(snapshot, send, state, j, latest):
    imgui.text(_format_limits(snapshot.joint_coord_names[j], snapshot.joint_limits[j]))


def _joint_columns(snapshot):
    columns = [("plot / joint", _col_name), ("type", _col_type), ("coordinate", _col_coord),
               ("velocity", _col_velocity), ("friction limit", _col_friction),
               ("state", _col_state)]
    if getattr(snapshot, "joint_limits", None) is not None:  # (njoint,) of (lo, hi) or None
        columns.append(("limits", _col_limits))
    return columns


def draw_joints(snapshot, send, state):
    if not imgui.collapsing_header("Joints", imgui.TreeNodeFlags_.default_open):
        return
    if not snapshot.joint_names:
        imgui.text_disabled("no joints")
        return
    latest = _latest(snapshot, "joint")
    columns = _joint_columns(snapshot)
    flags = (imgui.TableFlags_.borders | imgui.TableFlags_.row_bg
             | imgui.TableFlags_.sizing_fixed_fit | imgui.TableFlags_.scroll_x
             | imgui.TableFlags_.scroll_y)
    # Scrolling tables need a height: every row up to TABLE_ROWS_MAX, then scroll.
    rows = min(len(snapshot.joint_names), TABLE_ROWS_MAX) + 1
    height = rows * (imgui.get_frame_height() + 2 * imgui.get_style().cell_padding.y) \
        + imgui.get_style().scrollbar_size + 4
    if not imgui.begin_table("joints", len(columns), flags, imgui.ImVec2(0, height)):
        _pass_wheel(state, False, False, False)   # (scrolled out of view)
        return
    imgui.table_setup_scroll_freeze(1, 1)  # the names and the titles stay in view
    for title, _ in columns:
        imgui.table_setup_column(title)
    imgui.table_headers_row()
    for j, name in enumerate(snapshot.joint_names):
        imgui.push_id(name)
        imgui.table_next_row()
        for _, draw in columns:
            imgui.table_next_column()
            draw(snapshot, send, state, j, latest)
        imgui.pop_id()
    # (the table's own scrolling window is the current one until end_table)
    state.joints_scroll = (imgui.get_scroll_y(), imgui.get_scroll_max_y())
    hovered = imgui.is_window_hovered() and imgui.get_scroll_max_y() > 0.0   # (without
    at_top = imgui.get_scroll_y() <= 0.5     # anything to scroll, ImGui passes the wheel on)
    at_end = imgui.get_scroll_y() >= imgui.get_scroll_max_y() - 0.5
    imgui.end_table()
    lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    state.joints_rect = (lo.x, lo.y, hi.x, hi.y)
    _pass_wheel(state, hovered, at_top, at_end)


def _pass_wheel(state, hovered, at_top, at_end):
    """The wheel over the joints table at its end (or top) scrolls the panel on, as a page
    would: ImGui gives the wheel to the table while the pointer is on it, even with nothing
    left to scroll there, and keeps giving it to the table for WHEEL_LOCK_S after its last
    notch, even once the panel has moved the table from under the pointer (or out of view):
    so does this. Called in the panel's controls region, after the table."""
    wheel = imgui.get_io().mouse_wheel
    now = time.monotonic()
    locked = now - state.wheel_passed < WHEEL_LOCK_S
    if wheel != 0.0 and (locked or (hovered and ((wheel < 0.0 and at_end)
                                                 or (wheel > 0.0 and at_top)))):
        state.wheel_passed = now
        step = WHEEL_LINES * imgui.get_font_size()
        imgui.set_scroll_y(min(max(imgui.get_scroll_y() - wheel * step, 0.0),
                               imgui.get_scroll_max_y()))


def draw_selected(snapshot, drag, view=None):
    """The body held with the mouse (`app.drag`): name, mass, and from the physics (the
    snapshot's drag_* fields) the grab point's velocity and the drag force and torque of the
    last step.  Without a drag, the body selected (a double click, `view.selected_body`):
    name, mass, centre of mass, and whether the camera follows it (T)."""
    if drag is None:
        _draw_selection(snapshot, view)
        return
    body = getattr(drag, "body", None)
    if body is None or not 0 <= body < len(snapshot.body_names):
        return
    if not imgui.collapsing_header("Selected body", imgui.TreeNodeFlags_.default_open):
        return
    imgui.text(f"{snapshot.body_names[body]}   mass {float(drag.mass):.4g} kg")
    if snapshot.drag_body != body:
        return  # the physics has not taken the drag yet
    for label, value, unit in (("grab point velocity", snapshot.drag_point_vel, "m/s"),
                               ("drag force", snapshot.drag_force, "N"),
                               ("drag torque", snapshot.drag_torque, "N m")):
        if value is not None:
            v = np.asarray(value, dtype=float)
            imgui.text(f"{label} {np.linalg.norm(v):.3f} {unit}  "
                       f"({v[0]:.2f}, {v[1]:.2f}, {v[2]:.2f})")


def _draw_selection(snapshot, view):
    body = view.selected_body(snapshot) if hasattr(view, "selected_body") else None
    if body is None:
        return
    if not imgui.collapsing_header("Selected body", imgui.TreeNodeFlags_.default_open):
        return
    mass = snapshot.body_mass[body] if snapshot.body_mass is not None else 0.0
    kind = f"mass {float(mass):.4g} kg" if mass > 0.0 else "static or kinematic"
    imgui.text(f"{snapshot.body_names[body]}   {kind}")
    p = np.asarray(snapshot.body_pos[body], dtype=float)
    imgui.text(f"centre of mass ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m")
    changed, follow = imgui.checkbox("camera follows it (T)", bool(view.tracking))
    if changed and follow != view.tracking:
        view.action_track()


def joint_colour(j):
    """Joint j's colour: its curve in every channel and its name in the joints table."""
    r, g, b = JOINT_COLOURS[j % len(JOINT_COLOURS)]
    return imgui.ImVec4(r, g, b, 1.0)


def draw_plot(snapshot, state, plot_buffer):
    """One channel (angle or position, velocity, friction; a motor's voltage, current,
    torque, rotor speed; a joint's reaction; a contact sensor's force) of the ticked joints
    over the last PLOT_SECONDS of simulated time: every physics step, frozen while paused.
    It fills the room it is given (its own region at the panel's bottom), the CSV line
    under it."""
    if state.plot_channel not in ALL_CHANNELS:
        state.plot_channel = "velocity"
    names = plot_buffer.joint_names
    shown = [j for j, name in enumerate(names) if name in state.plotted]
    shown_coords = [plot_buffer.joint_coord_names[j] for j in shown]
    titles = plot_channel_names(shown_coords or plot_buffer.joint_coord_names)
    imgui.align_text_to_frame_padding()
    imgui.text("Plot")
    for channel in PLOT_CHANNELS:
        imgui.same_line()
        if imgui.radio_button(titles[channel], state.plot_channel == channel):
            state.plot_channel = channel
    imgui.same_line()
    more = [name for name in MORE_CHANNELS
            if plot_buffer.motored or name not in MOTOR_PLOT_CHANNELS]
    current = state.plot_channel if state.plot_channel in MORE_CHANNELS else None
    imgui.set_next_item_width(-1)
    if imgui.begin_combo("##more channels",
                         MORE_CHANNELS[current][0] if current else "more..."):
        for name in more:
            if imgui.selectable(MORE_CHANNELS[name][0], name == current)[0]:
                state.plot_channel = name
        imgui.end_combo()
    channel = state.plot_channel
    ylabel = plot_axis_label(channel, shown_coords or plot_buffer.joint_coord_names)
    t = plot_buffer.t
    curves = plot_curves(snapshot, plot_buffer, channel, shown)
    ys = [y for _, _, y, _ in curves]
    limits = [snapshot.friction_limit[j] for j in shown
              if j < len(snapshot.friction_limit) and snapshot.joint_names == names]
    lo, hi = plot_y_limits(ys, channel, shown_coords, limits if channel == "friction" else ())
    style = imgui.get_style()
    below = imgui.get_frame_height() + style.item_spacing.y   # the CSV line
    flags = implot.Flags_.no_title | implot.Flags_.no_menus | implot.Flags_.no_box_select
    if implot.begin_plot("##joint plot", imgui.ImVec2(-1, -below), flags):
        implot.setup_axes("sim time (s)", ylabel)
        implot.setup_axis_limits(implot.ImAxis_.x1, *_time_range(t), implot.Cond_.always)
        implot.setup_axis_limits(implot.ImAxis_.y1, lo, hi, implot.Cond_.always)
        mixed = len({unit for _, _, _, unit in curves}) > 1
        for name, j, y, unit in curves:
            label = f"{name} ({unit})" if mixed else name
            implot.plot_line(f"{label}###{name}", t, y, implot.Spec(line_color=joint_colour(j)))
        if shown and not curves:
            hint = ("no motor on the ticked joints" if channel in MOTOR_PLOT_CHANNELS
                    else "no contact sensor on the ticked joints' bodies")
            implot.plot_text(hint, sum(_time_range(t)) / 2.0, (lo + hi) / 2.0)
        if not shown:
            hint = ("tick a joint in the joints table to plot it" if names
                    else "this scene has no joints to plot")
            implot.plot_text(hint, sum(_time_range(t)) / 2.0, (lo + hi) / 2.0)
        implot.end_plot()
    imgui.set_next_item_width(220)
    _, state.csv_path = imgui.input_text("##csv", state.csv_path)
    imgui.same_line()
    if imgui.button("Export CSV"):
        state.note = export_csv(plot_buffer, state.csv_path)
    if imgui.is_item_hovered():
        imgui.set_tooltip("every joint's angle/position (rad/m), velocity, friction, "
                          "sliding, motor and reaction, every contact sensor's force, one row "
                          "per step of the plotted window")


def draw_messages(snapshot, state, left=0.0, now=None):
    """The latest note and physics problem, in a box over the view's top-left corner (`left`
    px from the window's edge: right of the panel), so that they never move the panel's
    layout.  A note fades out after a few seconds (note_alpha; `now`: time.monotonic()),
    unless the pointer is on it; a physics error stays as long as the snapshots carry it.
    A failed load's message is in the modal instead."""
    error = snapshot.error and snapshot.error_count != state.load_error_count
    now = time.monotonic() if now is None else now
    alpha = note_alpha(state.note, now - state.note_since) if state.note else 0.0
    if state.note and alpha <= 0.0:
        state.note = None   # faded out
    if not (error or state.note):
        return
    imgui.set_next_window_pos(imgui.ImVec2(left + 8, 8), imgui.Cond_.always)
    imgui.set_next_window_bg_alpha(0.85)
    flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
             | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing
             | imgui.WindowFlags_.no_nav | imgui.WindowFlags_.no_move)
    imgui.push_style_var(imgui.StyleVar_.alpha, 1.0 if error else alpha)
    imgui.begin("##messages", None, flags)
    imgui.push_text_wrap_pos(imgui.get_font_size() * MESSAGE_WRAP_EMS)
    if error:
        imgui.text_colored(ERROR_COLOUR, printable(f"physics: {snapshot.error}"))
    if state.note:
        # a note may name a file whose name is not UTF-8
        colour = imgui.ImVec4(NOTE_COLOUR.x, NOTE_COLOUR.y, NOTE_COLOUR.z, alpha)
        imgui.text_colored(colour, printable(state.note))
        if imgui.small_button("dismiss"):
            state.note = None
        elif imgui.is_window_hovered():   # being read: it stays, and starts its time anew
            state.note_since = now
    imgui.pop_text_wrap_pos()
    imgui.end()
    imgui.pop_style_var()


# The View section's tick boxes: (label, the window's attribute, its key in app.keys)
VIEW_TOGGLES = (
    ("Joints", "show_joints", "J"),
    ("Centres of mass", "show_centres", "C"),
    ("Shadows", "show_shadows", "H"),
    ("Contacts", "show_contacts", "K"),
)
FORCE_GAIN_RANGE = (0.01, 100.0)   # the contact force lines' length, times the scene's own
SHAPE_VIEW_KEY = "S"   # the key that cycles the shape views, as the radio buttons set them
# The View section's radio buttons for the window's shape_view (render.renderer.SHAPE_VIEWS):
# view -> (label, tooltip)
SHAPE_VIEW_BUTTONS = {
    VISUALS: ("Visuals", "draw each body by its visuals (a URDF's <visual>, an MJCF's drawn "
                         "geoms); a body without visuals by its collision shape"),
    COLLISION: ("Collision", "draw each body by its collision shape instead, in its body "
                             "colour: what the contacts see"),
    OVERLAY: ("Overlay", "the visuals, with every collision shape over them in see-through "
                         "magenta, also where the visuals hide it: where the two differ"),
}


def draw_view(view):
    """Tick boxes for what the 3D view shows (the window's show_* flags, also toggled by
    their keys) and radio buttons for how bodies with visuals are drawn (the window's
    shape_view, also cycled by S): by their visuals, by their collision shapes instead, or
    with the collision shapes overlaid."""
    if view is None or not imgui.collapsing_header("View", imgui.TreeNodeFlags_.default_open):
        return
    for k, (label, attr, shortcut) in enumerate(VIEW_TOGGLES):
        if k % 3:
            imgui.same_line()
        changed, ticked = imgui.checkbox(f"{label} ({shortcut})", bool(getattr(view, attr)))
        if changed:
            setattr(view, attr, ticked)
    imgui.align_text_to_frame_padding()
    imgui.text(f"Shapes ({SHAPE_VIEW_KEY}):")
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"how bodies with visuals are drawn; {SHAPE_VIEW_KEY} cycles "
                          "through these")
    for name, (label, tip) in SHAPE_VIEW_BUTTONS.items():
        imgui.same_line()
        if imgui.radio_button(label, view.shape_view == name):
            view.shape_view = name
        if imgui.is_item_hovered():
            imgui.set_tooltip(tip)
    if hasattr(view, "force_gain"):
        imgui.set_next_item_width(200)
        changed, gain = imgui.slider_float("contact force lines", float(view.force_gain),
                                           FORCE_GAIN_RANGE[0], FORCE_GAIN_RANGE[1], "x%.3g",
                                           imgui.SliderFlags_.logarithmic)
        if changed:
            view.force_gain = min(max(float(gain), FORCE_GAIN_RANGE[0]), FORCE_GAIN_RANGE[1])
        scale = view.contact_force_scale() if hasattr(view, "contact_force_scale") else 0.0
        if imgui.is_item_hovered() and scale > 0.0:
            imgui.set_tooltip(f"the length of the contact force lines (K shows them): a line "
                              f"1 m long is {1.0 / scale:.3g} N; Ctrl+click to type a factor")


def draw_panel(snapshot, send, state, plot_buffer, width=480, drag=None, frame_rate=None,
               view=None, shown=True):
    """The whole panel as one window at the left edge, as tall as the window (its width can
    be dragged, `state.width` keeps it), and the load-error modal.  The scene's description
    is the first line; the controls scroll in the upper part; the plot has its own region at
    the bottom, always in view.  `drag` is the body held with the mouse (app.drag), shown
    under "Selected body"; `frame_rate` (app.frame_rate.FrameRate) the window's frame rate;
    `view` the window, whose show_* flags the View section ticks.  Not `shown` (Tab hid
    it): only the notes, errors and the load-error modal, at the window's edge; loads are
    still followed."""
    check_load(snapshot, state)
    default_plotted(snapshot, state)
    if not shown:
        draw_messages(snapshot, state, 0.0)
        draw_load_error(state)
        return
    size = imgui.get_io().display_size
    imgui.set_next_window_pos(imgui.ImVec2(0, 0), imgui.Cond_.always)
    imgui.set_next_window_size(imgui.ImVec2(width, size.y), imgui.Cond_.first_use_ever)
    # the height follows the window's (a resize); the width is the user's
    imgui.set_next_window_size_constraints(
        imgui.ImVec2(min(PANEL_MIN_WIDTH, size.x), size.y),
        imgui.ImVec2(max(PANEL_MIN_WIDTH, size.x * PANEL_MAX_SHARE), size.y))
    flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_collapse
             | imgui.WindowFlags_.no_scrollbar | imgui.WindowFlags_.no_scroll_with_mouse)
    imgui.begin("Sharnir", None, flags)
    state.width, state.height = imgui.get_window_width(), imgui.get_window_height()
    draw_description(snapshot, state)
    plot = plot_height(imgui.get_content_region_avail().y)
    imgui.begin_child("controls", imgui.ImVec2(0, -plot))
    draw_scene(snapshot, send, state)
    draw_robot(snapshot, send, state)
    draw_simulation(snapshot, send, state, frame_rate)
    draw_view(view)
    draw_joints(snapshot, send, state)
    draw_motors(snapshot, send, state)
    draw_selected(snapshot, drag, view)
    draw_keyframes(snapshot, send, state)
    draw_solver(snapshot, send, state, plot_buffer)
    state.controls_scroll = (imgui.get_scroll_y(), imgui.get_scroll_max_y())
    imgui.end_child()
    imgui.begin_child("plot", imgui.ImVec2(0, 0))
    draw_plot(snapshot, state, plot_buffer)
    imgui.end_child()
    imgui.end()
    if state.sweeps is not None:   # the Sweeps window, while open (app/sweeps_window.py)
        from . import sweeps_window
        sweeps_window.draw(snapshot, send, state, state.width)
    draw_messages(snapshot, state, state.width)
    draw_load_error(state)


def draw_description(snapshot, state):
    """The scene file's description (scene_description, read once per file) as one line,
    elided to the panel's width; the whole of it in the hover."""
    if state.description[0] != snapshot.source:
        state.description = (snapshot.source, scene_description(snapshot.source))
    text = state.description[1] or snapshot.description   # (a robot file's: its reader's)
    if not text:
        return
    width = imgui.get_content_region_avail().x
    imgui.text_disabled(elide(printable(text), width, lambda t: imgui.calc_text_size(t).x))
    if imgui.is_item_hovered() and imgui.begin_tooltip():
        imgui.push_text_wrap_pos(imgui.get_font_size() * MESSAGE_WRAP_EMS)
        imgui.text_unformatted(printable(text))
        imgui.pop_text_wrap_pos()
        imgui.end_tooltip()


def draw_help(help_rows, left=0.0):
    """The F1 overlay: every control, centred over the view (the part of the window right
    of the panel, `left` px wide), sized to its rows; long descriptions wrap.  Returns
    whether every row is in view (nothing to scroll)."""
    io = imgui.get_io()
    free = max(io.display_size.x - left, 200.0)
    imgui.set_next_window_pos(imgui.ImVec2(left + free / 2, io.display_size.y / 2),
                              imgui.Cond_.always, imgui.ImVec2(0.5, 0.5))
    imgui.set_next_window_size_constraints(imgui.ImVec2(0, 0),
                                           imgui.ImVec2(free - 16, io.display_size.y - 16))
    imgui.set_next_window_bg_alpha(0.9)
    flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
             | imgui.WindowFlags_.no_saved_settings)
    imgui.begin("Controls (F1 to close)", None, flags)
    controls = max(imgui.calc_text_size(control).x for control, _ in help_rows)
    wrap = min(imgui.get_font_size() * HELP_WRAP_EMS,
               free - 16 - controls - 4 * imgui.get_style().window_padding.x)
    if imgui.begin_table("help", 2, imgui.TableFlags_.sizing_fixed_fit):
        imgui.table_setup_column("control", imgui.TableColumnFlags_.width_fixed, controls)
        imgui.table_setup_column("action", imgui.TableColumnFlags_.width_fixed, max(wrap, 100))
        right = bottom = 0.0
        for control, action in help_rows:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(NOTE_COLOUR, control)
            imgui.table_next_column()
            imgui.text_wrapped(action)
            corner = imgui.get_item_rect_max()   # the text's own extent, clipped or not
            right, bottom = max(right, corner.x), max(bottom, corner.y)
        imgui.end_table()
    fits = _fits_in_window(imgui.ImVec2(right, bottom))
    imgui.end()
    return fits


def _fits_in_window(corner):
    """Whether a point (the bottom-right corner of what was drawn) is inside the current
    window's padded area, with nothing left to scroll to."""
    pos, size = imgui.get_window_pos(), imgui.get_window_size()
    pad = imgui.get_style().window_padding
    return (corner.x <= pos.x + size.x - pad.x + 0.5 and corner.y <= pos.y + size.y - pad.y + 0.5
            and imgui.get_scroll_max_x() == 0.0 and imgui.get_scroll_max_y() == 0.0)
