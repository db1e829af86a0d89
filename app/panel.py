"""The control panel: scene files, simulation, solver, joints, the selected body and the
joint plots (Dear ImGui / ImPlot), plus the modal that shows a failed load.

Each section is a function of the latest snapshot, a `send` callable (PhysicsThread.send)
and the `PanelState` the panel keeps between frames.  What a widget does when it changes
is a plain function (`request_speed`, `request_settings`, `request_friction`,
`request_load`, `request_reload`): it checks the value, clamps what is out of range, sends
the command and returns a note for the user (None when the value was taken as given).
Tests call those without drawing anything.

Loading goes through the physics thread's `Load` command, which answers only through the
snapshots: `check_load` (every frame) sees the load succeed when the generation changes to a
world from that file, or fail when `error_count` goes up first; a failure opens the
"Load failed" modal (`PanelState.load_error`) with the loader's whole message, and the
current scene keeps running.
"""
import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

from sharnir.physics.settings import SETTINGS, WORLD_SETTINGS

from .commands import Configure, Load, Pause, Reset, Resume, SetFriction, SetSpeed, Step
from .physics_thread import SPEED_MAX, SPEED_MIN
from .printable import from_printable, printable
from .recent import RecentFiles

PLOT_SECONDS = 10.0
# The ranges are physics.settings.SETTINGS (shared with the engine and scene files).
FRICTION_MAX = SETTINGS["friction"].max          # N m or N
MANIFOLD_REUSE_MAX = SETTINGS["manifold_reuse"].max  # m
SCENE_FILTERS = ["Scene files (.toml)", "*.toml", "All files", "*"]
# The helpers portable-file-dialogs runs on Linux and the BSDs, in its order of preference.
DIALOG_TOOLS = ("zenity", "matedialog", "qarma", "kdialog")
LOAD_ERROR_POPUP = "Load failed"
TABLE_ROWS_MAX = 12             # joints shown at once; the table scrolls beyond
# The plotted channels: JOINT_CHANNELS name -> (label, unit of a rotational joint, unit of a
# prismatic one).
PLOT_CHANNELS = {
    "coord": ("angle / position", "rad", "m"),
    "velocity": ("velocity", "rad/s", "m/s"),
    "friction": ("friction", "N m", "N"),
}
NOTE_COLOUR = imgui.ImVec4(1.0, 0.75, 0.3, 1.0)
ERROR_COLOUR = imgui.ImVec4(1.0, 0.4, 0.35, 1.0)
STICK_COLOUR = imgui.ImVec4(0.4, 0.6, 1.0, 1.0)
SLIP_COLOUR = imgui.ImVec4(1.0, 0.55, 0.1, 1.0)


@dataclass
class PanelState:
    """What the panel remembers between frames."""
    plotted: set = field(default_factory=set)           # joint names ticked for the plot
    note: str | None = None                             # the latest clamp / refusal / result
    friction_range: dict = field(default_factory=dict)  # joint name -> slider maximum
    csv_path: str = "sharnir-plot.csv"
    plot_channel: str = "velocity"                      # a key of PLOT_CHANNELS
    scene_path: str | None = None                       # the path box (None: not filled yet)
    recent: RecentFiles | None = None                   # made at the first use
    dialog: object = None                               # a running pfd.open_file, polled
    pending: "PendingLoad | None" = None                # a load sent, not answered yet
    load_error: str | None = None                       # set: the "Load failed" modal shows it
    load_error_count: int = -1                          # its snapshot.error_count
    loaded: int = 0                                     # loads that succeeded (for the view)

    def recent_files(self):
        if self.recent is None:
            self.recent = RecentFiles()
            if self.recent.note:
                self.note = self.recent.note
        return self.recent


@dataclass(frozen=True)
class PendingLoad:
    """A Load sent to the physics thread, with what the snapshots said when it was sent."""
    path: str
    what: str            # "open" or "reload"
    generation: int
    error_count: int


# ---- what the widgets do -------------------------------------------------------------------

def _clamp(value, setting, what=None):
    """(value within the range of `setting` (a physics.settings name), note or None); a
    non-number is None with a note."""
    s = SETTINGS[setting]
    what = what or setting.replace("_", " ") + (f" ({s.unit})" if s.unit else "")
    try:
        v, changed = s.clamp(value)
    except ValueError:
        many = "three numbers" if s.kind == "vector" else "a number"
        return None, f"{what}: not {many} ({value!r}); the previous value is kept"
    if not changed:
        return v, None
    shown = (f"({', '.join(f'{x:g}' for x in v)})" if s.kind == "vector" else f"{v:g}")
    if s.kind == "vector":
        return v, (f"{what}: components beyond {s.range_text} are out of range; "
                   f"set to {shown}")
    return v, f"{what}: {float(value):g} is out of range {s.range_text}; set to {shown}"


def request_speed(send, value):
    """Set the slow-motion factor (clamped to its range, physics.settings)."""
    v, note = _clamp(value, "speed")
    if v is not None:
        send(SetSpeed(v))
    return note


def request_settings(send, **changes):
    """Configure the world and solver: dt, gravity, iterations, position_iterations,
    tolerance, budget_ms, warm_start, manifold_reuse (m); numbers are clamped to their range
    (physics.settings, what the World accepts), a non-number is refused."""
    settings, notes = {}, []
    for name, value in changes.items():
        if name not in WORLD_SETTINGS:
            notes.append(f"unknown setting {name!r}; ignored")
        elif name == "warm_start":
            settings[name] = bool(value)
        else:
            v, note = _clamp(value, name)
            if note:
                notes.append(note)
            if v is not None:
                settings[name] = v
    if settings:
        send(Configure(**settings))
    return "; ".join(notes) or None


def request_friction(snapshot, send, joint, value):
    """Set a joint's Coulomb friction limit (N m, or N for a prismatic joint), clamped to
    its range (physics.settings)."""
    if joint not in snapshot.joint_names:
        return f"friction: no joint named {joint!r}"
    v, note = _clamp(value, "friction", f"{joint} friction")
    if v is not None:
        send(SetFriction(joint, v))
    return note


def toggle_pause(snapshot, send):
    send(Resume() if snapshot.paused else Pause())


def request_load(snapshot, send, state, path, what="open"):
    """Load the scene file `path` (through the physics thread's Load); returns a note when
    the path is refused here (empty, missing, a folder), else None.  `check_load` later
    tells how the load went."""
    if isinstance(path, bytes):  # (a file name as bytes, e.g. from a drop)
        path = os.fsdecode(path)
    text = str(path).strip() if path is not None else ""
    if not text:
        return f"{what}: type the path of a scene file (.toml) first"
    full = os.path.normpath(os.path.abspath(os.path.expanduser(text)))
    if not os.path.exists(full) and os.path.exists(from_printable(full)):
        full = from_printable(full)  # a name that is not UTF-8, as the path box shows it
    if not os.path.exists(full):
        if "\ufffd" in full:  # what a file manager's drop makes of bytes that are not UTF-8
            return (f"{what}: {full} does not exist (its name may not be valid UTF-8: "
                    "use Browse..., or type it with \\xNN for those bytes)")
        return f"{what}: {full} does not exist"
    if os.path.isdir(full):
        return f"{what}: {full} is a folder, not a scene file"
    state.pending = PendingLoad(full, what, snapshot.generation, snapshot.error_count)
    state.scene_path = full
    send(Load(full))
    return None


def request_reload(snapshot, send, state):
    """Read the current scene file again (after editing it); a world built in code has no
    file to read, which the note says."""
    if snapshot.source is None:
        return (f"reload: '{snapshot.scene}' was built in code, not read from a file, so "
                "there is nothing to re-read (Reset rebuilds it)")
    return request_load(snapshot, send, state, snapshot.source, "reload")


def check_load(snapshot, state):
    """Follow the load in flight: 'loaded', 'failed' or None (nothing new).  A failure
    puts the loader's whole message (file, entry, field) in `state.load_error`, which opens
    the modal; a success puts the file first in the recent list."""
    pending = state.pending
    if pending is None:
        return None
    if snapshot.generation != pending.generation and snapshot.source == pending.path:
        state.pending = None
        state.loaded += 1
        done = "reloaded" if pending.what == "reload" else "loaded"
        state.note = state.recent_files().add(pending.path) or f"{done} {pending.path}"
        return "loaded"
    if snapshot.error_count > pending.error_count:
        state.pending = None
        verb = "reload" if pending.what == "reload" else "open"
        state.load_error = (f"Could not {verb} {pending.path}\n\n{snapshot.error}\n\n"
                            f"The current scene ({snapshot.scene}) keeps running.")
        state.load_error_count = snapshot.error_count
        return "failed"
    return None


def open_recent(snapshot, send, state, path):
    """Load a file from the recent list; a file that is gone is refused with a note."""
    if not os.path.isfile(path):
        return f"recent: {path} no longer exists (or is not a file); not loaded"
    return request_load(snapshot, send, state, path)


def dialog_tool():
    """The helper program the file dialog needs here, or None if it cannot show one.  On
    Windows and macOS the dialog is native; elsewhere it needs zenity or kdialog."""
    if sys.platform.startswith(("win", "darwin")):
        return "native"
    for tool in DIALOG_TOOLS:
        if shutil.which(tool):
            return tool
    return None


def start_browse(state, start_dir=None):
    """Open the file dialog (polled by `poll_browse`); returns a note if it cannot be."""
    if state.dialog is not None:
        return None  # already open
    if dialog_tool() is None:
        return ("browse: no file dialog on this machine (it needs zenity or kdialog); "
                "type the scene's path in the box and press Open")
    try:
        from imgui_bundle import portable_file_dialogs as pfd

        state.dialog = pfd.open_file("Open a Sharnir scene", str(start_dir or os.getcwd()),
                                     SCENE_FILTERS)
    except Exception as exc:  # noqa: BLE001  (whatever the dialog library raises)
        state.dialog = None
        return (f"browse: the file dialog failed ({type(exc).__name__}: {exc}); "
                "type the scene's path in the box and press Open")
    return None


def poll_browse(snapshot, send, state):
    """Once the dialog has an answer, load the chosen file; returns a note or None."""
    dialog = state.dialog
    if dialog is None:
        return None
    try:
        if not dialog.ready(0):
            return None
        chosen = list(dialog.result())
    except Exception as exc:  # noqa: BLE001
        state.dialog = None
        return (f"browse: the file dialog failed ({type(exc).__name__}: {exc}); "
                "type the scene's path in the box and press Open")
    state.dialog = None
    if not chosen:
        return "browse: no file chosen (if no dialog appeared, type the path in the box)"
    return request_load(snapshot, send, state, chosen[0])


# ---- drawing -------------------------------------------------------------------------------

def _note(state, note):
    if note:
        state.note = note


def _wrapped(colour, text):
    text = printable(text)  # a note may name a file whose name is not UTF-8
    imgui.push_text_wrap_pos(0.0)
    if colour is None:
        imgui.text(text)
    else:
        imgui.text_colored(colour, text)
    imgui.pop_text_wrap_pos()


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
        imgui.set_tooltip("path of a scene file (.toml); Enter or Open loads it")
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


def draw_simulation(snapshot, send, state):
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
    status = compile_status(snapshot) if not snapshot.ready else (
        "paused" if snapshot.paused else "running")
    imgui.text(f"{snapshot.scene}: {status}")
    if not snapshot.ready and snapshot.compile_progress is not None:
        done, total, _ = snapshot.compile_progress
        imgui.progress_bar(done / max(total, 1), imgui.ImVec2(-1.0, 0.0),
                           f"{done}/{total} kernels")
    imgui.text(f"sim time {snapshot.time:.3f} s  step {snapshot.step}")
    imgui.text(f"real-time factor {snapshot.realtime_factor:.3f}"
               + ("" if snapshot.paused else f" (asked {snapshot.speed:.3g})"))


def compile_status(snapshot):
    """What the panel says while the physics kernels compile (first run only)."""
    if snapshot.compile_progress is None:
        return "loading physics kernels..."
    done, total, elapsed = snapshot.compile_progress
    return (f"compiling physics (first run only): {done}/{total} kernels, {elapsed:.0f} s")


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
    changed, v = imgui.input_float("manifold reuse (mm)", float(s["manifold_reuse"]) * 1e3,
                                   0.05, 0.5, "%.3f", imgui.InputTextFlags_.enter_returns_true)
    if imgui.is_item_hovered():
        imgui.set_tooltip("a touching pair that moved less than this since its contact points "
                          "were found keeps them\n(skips the narrow phase); 0 = find every "
                          f"pair afresh each step, at most {MANIFOLD_REUSE_MAX * 1e3:g} mm")
    if changed:
        changes["manifold_reuse"] = v * 1e-3
    if changes:
        _note(state, request_settings(send, **changes))
    stats = _latest(snapshot, "stats")
    if stats is not None:
        iterations, residual, seconds = stats
        imgui.text(f"last step: {iterations:.0f} iterations, residual {residual:.2e}, "
                   f"{seconds * 1e3:.3f} ms")
    else:
        imgui.text_disabled("last step: -")
    if plot_buffer is not None and len(plot_buffer):
        draw_solver_plot(plot_buffer)


def _time_range(t):
    """The plots' time axis: the last PLOT_SECONDS, or from the first row while there is
    less than that (at least 0.1 s wide)."""
    if not len(t):
        return 0.0, PLOT_SECONDS
    end = float(t[-1])
    start = max(end - PLOT_SECONDS, float(t[0]))
    return start, max(end, start + 0.1)


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
    implot.plot_line("iterations", t, stats[0])
    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    implot.plot_line("step ms", t, np.ascontiguousarray(stats[2] * 1e3))
    implot.end_plot()


def _latest(snapshot, what):
    """The last step's row of `what` ("joint" or "stats") in the snapshot's telemetry or,
    when it has none (paused), in its history; None before the first step."""
    for chunk in (snapshot.telemetry, *reversed(snapshot.history)):
        rows = getattr(chunk, what)
        if len(rows):
            return rows[-1]
    return None


def _format_coord(coord_name, value):
    return f"{value:.4f} m" if coord_name == "position" else f"{math.degrees(value):.2f} deg"


def _format_limits(coord_name, limits):
    if limits is None:
        return "-"
    lo, hi = limits
    if coord_name == "position":
        return f"{lo:.3g} .. {hi:.3g} m"
    return f"{math.degrees(lo):.1f} .. {math.degrees(hi):.1f} deg"


# The joints table's columns: (title, draw(snapshot, send, state, j, latest)), drawn in
# order.  A column that only some worlds have (the joint limits now; motor voltages once
# joints have motors) is added by `_joint_columns` when the snapshot carries its data.
def _col_name(snapshot, send, state, j, latest):
    imgui.text(snapshot.joint_names[j])


def _col_type(snapshot, send, state, j, latest):
    imgui.text(snapshot.joint_types[j])


def _col_coord(snapshot, send, state, j, latest):
    imgui.text("-" if latest is None else _format_coord(snapshot.joint_coord_names[j],
                                                        latest[j, 0]))


def _col_velocity(snapshot, send, state, j, latest):
    unit = "m/s" if snapshot.joint_coord_names[j] == "position" else "rad/s"
    imgui.text("-" if latest is None else f"{latest[j, 1]:.3f} {unit}")


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


def _col_plot(snapshot, send, state, j, latest):
    name = snapshot.joint_names[j]
    changed, ticked = imgui.checkbox("##plot", name in state.plotted)
    if changed:
        (state.plotted.add if ticked else state.plotted.discard)(name)


def _joint_columns(snapshot):
    columns = [("joint", _col_name), ("type", _col_type), ("coordinate", _col_coord),
               ("velocity", _col_velocity), ("friction limit", _col_friction),
               ("state", _col_state)]
    if getattr(snapshot, "joint_limits", None) is not None:  # (njoint,) of (lo, hi) or None
        columns.append(("limits", _col_limits))
    columns.append(("plot", _col_plot))
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
    imgui.end_table()


def draw_selected(snapshot, drag):
    """The body held with the mouse (`app.drag`): name, mass, and from the physics (the
    snapshot's drag_* fields) the grab point's velocity and the drag force and torque of the
    last step.  Nothing when no body is held."""
    if drag is None:
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


def plot_axis_label(channel, coord_names):
    """The y-axis label of a channel for joints with these coordinate names, with the unit:
    rad / rad/s / N m for rotational joints, m / m/s / N for prismatic ones, both if mixed."""
    label, rot_unit, lin_unit = PLOT_CHANNELS[channel]
    prismatic = {c == "position" for c in coord_names} or {False}
    if channel == "coord":
        parts = [("angle", rot_unit)] * (False in prismatic) + [("position", lin_unit)] * (
            True in prismatic)
        return " / ".join(f"{name} ({unit})" for name, unit in parts)
    units = [rot_unit] * (False in prismatic) + [lin_unit] * (True in prismatic)
    if channel == "friction":
        label = {"N m": "friction torque", "N": "friction force"}[units[0]] if len(units) == 1 \
            else "friction torque / force"
    elif channel == "velocity" and units == ["rad/s"]:
        label = "angular velocity"
    return f"{label} ({', '.join(units)})"


def plot_channel_names(coord_names):
    """The selector's names of the channels, e.g. 'angle' or 'position' for 'coord'."""
    coords = set(coord_names)
    coord = "position" if coords == {"position"} else (
        "angle / position" if "position" in coords else "angle")
    return {"coord": coord, "velocity": "velocity", "friction": "friction"}


def draw_plot(snapshot, state, plot_buffer):
    """One channel (angle or position, velocity, friction) of the ticked joints over the
    last PLOT_SECONDS of simulated time: every physics step, frozen while paused."""
    if not imgui.collapsing_header("Plot", imgui.TreeNodeFlags_.default_open):
        return
    if state.plot_channel not in PLOT_CHANNELS:
        state.plot_channel = "velocity"
    names = plot_buffer.joint_names
    shown = [j for j, name in enumerate(names) if name in state.plotted]
    shown_coords = [plot_buffer.joint_coord_names[j] for j in shown]
    titles = plot_channel_names(shown_coords or plot_buffer.joint_coord_names)
    for i, channel in enumerate(PLOT_CHANNELS):
        if i:
            imgui.same_line()
        if imgui.radio_button(titles[channel], state.plot_channel == channel):
            state.plot_channel = channel
    channel = state.plot_channel
    c = ("coord", "velocity", "friction").index(channel)
    ylabel = plot_axis_label(channel, shown_coords or plot_buffer.joint_coord_names)
    t = plot_buffer.t
    # A little room above and below the curves: a friction held at its limit is a line on
    # the auto-fitted axis' edge otherwise.
    implot.push_style_var(implot.StyleVar_.fit_padding, imgui.ImVec2(0.0, 0.08))
    if implot.begin_plot(f"joint {titles[channel]}###joint plot", imgui.ImVec2(-1, 220)):
        implot.setup_axes("sim time (s)", ylabel, 0, implot.AxisFlags_.auto_fit)
        implot.setup_axis_limits(implot.ImAxis_.x1, *_time_range(t), implot.Cond_.always)
        if len(t):
            mixed = len(set(shown_coords)) > 1
            for j in shown:
                unit = PLOT_CHANNELS[channel][2 if shown_coords[shown.index(j)] == "position"
                                              else 1]
                label = f"{names[j]} ({unit})" if mixed else names[j]
                implot.plot_line(label, t, plot_buffer.series(j, c))
        implot.end_plot()
    implot.pop_style_var()
    if not state.plotted:
        imgui.text_disabled("tick 'plot' in the joints table to plot a joint")
    imgui.set_next_item_width(220)
    _, state.csv_path = imgui.input_text("##csv", state.csv_path)
    imgui.same_line()
    if imgui.button("Export CSV"):
        state.note = export_csv(plot_buffer, state.csv_path)
    if imgui.is_item_hovered():
        imgui.set_tooltip("every joint's angle/position, velocity, friction and sliding, "
                          "one row per step of the plotted window")


def export_csv(plot_buffer, path):
    """Write the plotted window of every joint as CSV; returns what happened, for the panel."""
    if not path.strip():
        return "export: type a file name first"
    try:
        plot_buffer.to_csv(path)
    except OSError as exc:
        return f"export: cannot write {path}: {exc.strerror or exc}"
    return f"wrote {len(plot_buffer)} rows to {path}"


def draw_messages(snapshot, state):
    # A failed load's message is in the modal; the other problems are shown here.
    if snapshot.error and snapshot.error_count != state.load_error_count:
        _wrapped(ERROR_COLOUR, f"physics: {snapshot.error}")
    if state.note:
        _wrapped(NOTE_COLOUR, state.note)
        if imgui.small_button("dismiss"):
            state.note = None


def draw_panel(snapshot, send, state, plot_buffer, width=480, drag=None):
    """The whole panel as one window docked at the left edge, and the load-error modal.
    `drag` is the body held with the mouse (app.drag), shown under "Selected body"."""
    check_load(snapshot, state)
    imgui.set_next_window_pos(imgui.ImVec2(0, 0), imgui.Cond_.first_use_ever)
    # As tall as the window (it scrolls when the sections need more room).
    imgui.set_next_window_size(imgui.ImVec2(width, imgui.get_io().display_size.y),
                               imgui.Cond_.first_use_ever)
    imgui.begin("Sharnir")
    draw_messages(snapshot, state)
    draw_scene(snapshot, send, state)
    draw_simulation(snapshot, send, state)
    draw_solver(snapshot, send, state, plot_buffer)
    draw_joints(snapshot, send, state)
    draw_selected(snapshot, drag)
    draw_plot(snapshot, state, plot_buffer)
    imgui.end()
    draw_load_error(state)


def draw_help(help_rows):
    """The F1 overlay: every control, centred over the view."""
    io = imgui.get_io()
    imgui.set_next_window_pos(imgui.ImVec2(io.display_size.x / 2, io.display_size.y / 2),
                              imgui.Cond_.always, imgui.ImVec2(0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.9)
    flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
             | imgui.WindowFlags_.no_saved_settings)
    imgui.begin("Controls (F1 to close)", None, flags)
    if imgui.begin_table("help", 2, imgui.TableFlags_.sizing_fixed_fit):
        for control, action in help_rows:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(NOTE_COLOUR, control)
            imgui.table_next_column()
            imgui.text(action)
        imgui.end_table()
    imgui.end()
