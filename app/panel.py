"""The control panel: simulation, solver, joints and the velocity plot (Dear ImGui / ImPlot).

Each section is a function of the latest snapshot, a `send` callable (PhysicsThread.send)
and the `PanelState` the panel keeps between frames.  What a widget does when it changes
is a plain function (`request_speed`, `request_settings`, `request_friction`): it checks
the value, clamps what is out of range, sends the command and returns a note for the user
(None when the value was taken as given).  Tests call those without drawing anything.
"""
import math
from dataclasses import dataclass, field

import numpy as np
from imgui_bundle import imgui, implot

from .commands import Configure, Pause, Reset, Resume, SetFriction, SetSpeed, Step
from .physics_thread import SPEED_MAX, SPEED_MIN

PLOT_SECONDS = 10.0
FRICTION_MAX = 1.0e6            # N m or N: a bigger limit is refused as a typing slip
ITERATIONS_MAX = 100_000        # as World.configure allows
BUDGET_MAX_MS = 1000.0
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


# ---- what the widgets do -------------------------------------------------------------------

def _clamp(value, lo, hi, what):
    """(value within [lo, hi], note or None); a non-number is None with a note."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None, f"{what}: not a number ({value!r}); the previous value is kept"
    if math.isnan(v):
        return None, f"{what}: not a number; the previous value is kept"
    if v < lo or v > hi:
        clamped = min(max(v, lo), hi)
        return clamped, f"{what}: {v:g} is out of range [{lo:g}, {hi:g}]; set to {clamped:g}"
    return v, None


def request_speed(send, value):
    """Set the slow-motion factor (clamped to 1/32 .. 4)."""
    v, note = _clamp(value, SPEED_MIN, SPEED_MAX, "speed")
    if v is not None:
        send(SetSpeed(v))
    return note


def request_settings(send, **changes):
    """Configure the solver: iterations, position_iterations, tolerance, budget_ms,
    warm_start; numbers are clamped to what the World accepts."""
    ranges = {"iterations": (1, ITERATIONS_MAX), "position_iterations": (0, ITERATIONS_MAX),
              "tolerance": (0.0, 1.0), "budget_ms": (0.0, BUDGET_MAX_MS)}
    settings, notes = {}, []
    for name, value in changes.items():
        if name == "warm_start":
            settings[name] = bool(value)
            continue
        lo, hi = ranges[name]
        v, note = _clamp(value, lo, hi, name.replace("_", " "))
        if note:
            notes.append(note)
        if v is not None:
            settings[name] = round(v) if isinstance(lo, int) else v
    if settings:
        send(Configure(**settings))
    return "; ".join(notes) or None


def request_friction(snapshot, send, joint, value):
    """Set a joint's Coulomb friction limit (N m, or N for a prismatic joint), clamped to
    0 .. FRICTION_MAX."""
    if joint not in snapshot.joint_names:
        return f"friction: no joint named {joint!r}"
    v, note = _clamp(value, 0.0, FRICTION_MAX, f"{joint} friction")
    if v is not None:
        send(SetFriction(joint, v))
    return note


def toggle_pause(snapshot, send):
    send(Resume() if snapshot.paused else Pause())


# ---- drawing -------------------------------------------------------------------------------

def _note(state, note):
    if note:
        state.note = note


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
    status = "compiling physics..." if not snapshot.ready else (
        "paused" if snapshot.paused else "running")
    imgui.text(f"{snapshot.scene}: {status}")
    imgui.text(f"sim time {snapshot.time:.3f} s  step {snapshot.step}  dt {snapshot.dt:g} s")
    imgui.text(f"real-time factor {snapshot.realtime_factor:.3f}")


def draw_solver(snapshot, send, state):
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
    changed, v = imgui.input_float("tolerance", float(s["tolerance"]), 0.0, 0.0, "%.2e",
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
    if changes:
        _note(state, request_settings(send, **changes))
    stats = snapshot.stats
    if len(stats):
        iterations, residual, seconds = stats[-1]
        imgui.text(f"last step: {iterations:.0f} iterations, residual {residual:.2e}, "
                   f"{seconds * 1e3:.3f} ms")
    else:
        imgui.text_disabled("last step: -")


def _format_coord(coord_name, value):
    return f"{value:.4f} m" if coord_name == "position" else f"{math.degrees(value):.2f} deg"


def draw_joints(snapshot, send, state):
    if not imgui.collapsing_header("Joints", imgui.TreeNodeFlags_.default_open):
        return
    if not snapshot.joint_names:
        imgui.text_disabled("no joints")
        return
    latest = snapshot.joint[-1] if len(snapshot.joint) else None
    flags = imgui.TableFlags_.borders | imgui.TableFlags_.row_bg | imgui.TableFlags_.sizing_fixed_fit
    if not imgui.begin_table("joints", 7, flags):
        return
    for title in ("joint", "type", "coordinate", "velocity", "friction limit", "state", "plot"):
        imgui.table_setup_column(title)
    imgui.table_headers_row()
    for j, name in enumerate(snapshot.joint_names):
        coord_name = snapshot.joint_coord_names[j]
        imgui.push_id(name)
        imgui.table_next_row()
        imgui.table_next_column()
        imgui.text(name)
        imgui.table_next_column()
        imgui.text(snapshot.joint_types[j])
        imgui.table_next_column()
        unit = "m/s" if coord_name == "position" else "rad/s"
        if latest is None:
            imgui.text("-")
            imgui.table_next_column()
            imgui.text("-")
        else:
            imgui.text(_format_coord(coord_name, latest[j, 0]))
            imgui.table_next_column()
            imgui.text(f"{latest[j, 1]:.3f} {unit}")
        imgui.table_next_column()
        limit = float(snapshot.friction_limit[j])
        top = state.friction_range.setdefault(name, max(2.0 * limit, 1.0))
        imgui.set_next_item_width(120)
        changed, value = imgui.slider_float("##friction", limit, 0.0, top,
                                            "%.2f N" if coord_name == "position" else "%.2f N m")
        if changed:
            _note(state, request_friction(snapshot, send, name, value))
        imgui.table_next_column()
        if latest is None:
            imgui.text("-")
        elif latest[j, 3] > 0.5:
            imgui.text_colored(SLIP_COLOUR, "sliding")
        else:
            imgui.text_colored(STICK_COLOUR, "stuck")
        imgui.table_next_column()
        changed, ticked = imgui.checkbox("##plot", name in state.plotted)
        if changed:
            (state.plotted.add if ticked else state.plotted.discard)(name)
        imgui.pop_id()
    imgui.end_table()


def draw_plot(snapshot, state, plot_buffer):
    """Angular (or linear) velocity of the ticked joints over the last PLOT_SECONDS."""
    if not imgui.collapsing_header("Plot", imgui.TreeNodeFlags_.default_open):
        return
    t = plot_buffer.t
    if implot.begin_plot("joint velocity", imgui.ImVec2(-1, 220)):
        implot.setup_axes("sim time (s)", "velocity (rad/s, m/s)",
                          0, implot.AxisFlags_.auto_fit)
        end = float(t[-1]) if len(t) else 0.0
        implot.setup_axis_limits(implot.ImAxis_.x1, end - PLOT_SECONDS, end,
                                 implot.Cond_.always)
        if len(t):
            for name in plot_buffer.joint_names:
                if name in state.plotted:
                    implot.plot_line(name, np.ascontiguousarray(t),
                                     np.ascontiguousarray(plot_buffer.series(name, "velocity")))
        implot.end_plot()
    if not state.plotted:
        imgui.text_disabled("tick 'plot' in the joints table to plot a joint")
    imgui.set_next_item_width(220)
    _, state.csv_path = imgui.input_text("##csv", state.csv_path)
    imgui.same_line()
    if imgui.button("Export CSV"):
        state.note = export_csv(plot_buffer, state.csv_path)


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
    if snapshot.error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(ERROR_COLOUR, f"physics: {snapshot.error}")
        imgui.pop_text_wrap_pos()
    if state.note:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(NOTE_COLOUR, state.note)
        imgui.pop_text_wrap_pos()
        if imgui.small_button("dismiss"):
            state.note = None


def draw_panel(snapshot, send, state, plot_buffer, width=480):
    """The whole panel as one window docked at the left edge."""
    imgui.set_next_window_pos(imgui.ImVec2(0, 0), imgui.Cond_.first_use_ever)
    imgui.set_next_window_size(imgui.ImVec2(width, 0), imgui.Cond_.first_use_ever)
    imgui.begin("Sharnir")
    draw_messages(snapshot, state)
    draw_simulation(snapshot, send, state)
    draw_solver(snapshot, send, state)
    draw_joints(snapshot, send, state)
    draw_plot(snapshot, state, plot_buffer)
    imgui.end()


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
    imgui.text_disabled("Dragging bodies with the mouse is not available yet.")
    imgui.end()
