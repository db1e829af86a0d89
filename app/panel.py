"""The control panel: scene files, simulation, solver, joints, the selected body and the
joint plots (Dear ImGui / ImPlot), plus the modal that shows a failed load.

Each section is a function of the latest snapshot, a `send` callable (PhysicsThread.send)
and the `PanelState` the panel keeps between frames.  What a widget does when it changes
is a plain function (`request_speed`, `request_settings`, `request_friction`,
`request_load`, `request_reload`): it checks the value, clamps what is out of range, sends
the command and returns a note for the user (None when the value was taken as given).
Tests call those without drawing anything.

Loading goes through the physics thread's `Load` command, which answers only through the
snapshots: `check_load` (every frame) sees the load succeed when the run (Snapshot.run) changes
to a world from that file, or fail when `error_count` goes up first; a failure opens the
"Load failed" modal (`PanelState.load_error`) with the loader's whole message, and the
current scene keeps running.
"""
import math
import os
import shutil
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

from sharnir.physics.settings import SETTINGS, WORLD_SETTINGS
from sharnir.render.renderer import COLLISION, OVERLAY, VISUALS
from sharnir.scenes import SCENE_DIR, SceneError, resolve_scene
from sharnir.scenes.loader import robot_options

from .commands import (
    ApplyKeyframe,
    CaptureKeyframe,
    Configure,
    Load,
    Pause,
    Reset,
    Resume,
    ResumeController,
    Rewind,
    SetFriction,
    SetSpeed,
    SetTarget,
    SetVoltage,
    Step,
)
from .physics_thread import SPEED_MAX, SPEED_MIN
from .printable import from_printable, printable
from .recent import RecentFiles
from .snapshot import JOINT_CHANNELS

PLOT_SECONDS = 10.0
# The ranges are physics.settings.SETTINGS (shared with the engine and scene files).
FRICTION_MAX = SETTINGS["friction"].max          # N m or N
MANIFOLD_REUSE_MAX = SETTINGS["manifold_reuse"].max  # m
SCENE_FILTERS = ["Scenes (.toml, MuJoCo .xml, URDF .urdf)", "*.toml *.xml *.urdf",
                 "All files", "*"]
# The helpers portable-file-dialogs runs on Linux and the BSDs, in its order of preference.
DIALOG_TOOLS = ("zenity", "matedialog", "qarma", "kdialog")
LOAD_ERROR_POPUP = "Load failed"
TABLE_ROWS_MAX = 12             # joints shown at once; the table scrolls beyond
WHEEL_LINES = 5                 # text lines a wheel notch scrolls the panel by (ImGui's own)
WHEEL_LOCK_S = 0.7              # s ImGui keeps the wheel on the window it last scrolled
# The plotted channels: JOINT_CHANNELS name -> (label, unit of a rotational joint, unit of a
# prismatic one).  The panel is read by people: angles in degrees, in the table and the
# plot alike (the CSV export, like every file and API, keeps radians).
PLOT_CHANNELS = {
    "coord": ("angle / position", "deg", "m"),
    "velocity": ("velocity", "deg/s", "m/s"),
    "friction": ("friction", "N m", "N"),
}
# More channels, in a menu beside them: the motors' telemetry (joints with a motor), the joint
# sensors' reaction (|F| and |T| at the anchor) and the contact sensors (|F| on the body B of
# each ticked joint, when that body has a contact sensor: a foot under its ankle).
MORE_CHANNELS = {
    "voltage": ("motor voltage", "V", "V"),
    "current": ("motor current", "A", "A"),
    "torque": ("motor torque / force", "N m", "N"),
    "motor_speed": ("rotor speed", "rad/s", "rad/s"),
    "reaction_force": ("joint reaction force", "N", "N"),
    "reaction_torque": ("joint reaction torque", "N m", "N m"),
    "contact_force": ("contact force", "N", "N"),
}
ALL_CHANNELS = {**PLOT_CHANNELS, **MORE_CHANNELS}
MOTOR_PLOT_CHANNELS = ("voltage", "current", "torque", "motor_speed")
PANEL_MIN_WIDTH = 320.0         # px; the panel's width can be dragged between these
PANEL_MAX_SHARE = 0.75          # of the window's width
MESSAGE_WRAP_EMS = 40           # notes and errors wrap at this many font sizes
# A note stays NOTE_SECONDS, longer ones a second more per NOTE_CHARS_PER_S characters (up to
# NOTE_MAX_SECONDS), then fades out over NOTE_FADE_S; the pointer on it keeps it.  Physics
# errors stay until the world is replaced (the simulation paused for them); a failed load
# stays in its modal until closed.
NOTE_SECONDS = 5.0
NOTE_CHARS_PER_S = 20.0
NOTE_MAX_SECONDS = 20.0
NOTE_FADE_S = 1.0
# The speeds + and - step through: doublings from the slowest to the fastest speed.
SPEED_LADDER = tuple(2.0 ** k for k in range(round(math.log2(SPEED_MIN)),
                                               round(math.log2(SPEED_MAX)) + 1))
DESCRIPTION_READ_MAX = 64 * 1024  # bytes of a scene file read for its description, at most
DESCRIPTION_LINES_MAX = 20        # lines its description may span (a multi-line string)
HELP_WRAP_EMS = 36              # the F1 overlay's descriptions wrap at this many font sizes
PLOT_DEFAULT_JOINTS = 4         # a new scene plots its first joints
PLOT_SHARE = 0.4                # of the panel's height, for the plot at its bottom
PLOT_MIN_HEIGHT = 220.0         # px
# The smallest span of the plot's value axis, per channel and kind of joint (deg, deg/s,
# N m; m, m/s, N): a stuck joint's rounding noise (1e-15) is a flat line at 0, not a
# full-height scribble.  Friction also spans at least PLOT_MIN_FRICTION_SHARE of the
# plotted joints' largest friction limit.
PLOT_MIN_SPAN = {"coord": (0.05, 1e-3), "velocity": (0.05, 1e-3), "friction": (1e-3, 1e-3),
                 **{name: (1e-3, 1e-3) for name in MORE_CHANNELS}}
PLOT_MIN_FRICTION_SHARE = 0.05
PLOT_PAD = 0.08                 # room above and below the curves, a share of the span
# One colour per joint (by its index), the same in the joints table and in every channel.
JOINT_COLOURS = ((0.30, 0.60, 1.00), (1.00, 0.55, 0.15), (0.35, 0.85, 0.40),
                 (0.95, 0.35, 0.40), (0.70, 0.50, 1.00), (0.85, 0.75, 0.30),
                 (0.30, 0.85, 0.85), (1.00, 0.50, 0.80), (0.65, 0.65, 0.65),
                 (0.60, 0.80, 0.20))
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
    plot_joints_of: tuple | None = None                 # the joint names `plotted` is for
    width: float | None = None                          # px, the panel's size last frame
    controls_scroll: tuple = (0.0, 0.0)                 # px, the controls' scroll and its
                                                        # end, last frame (tests read it)
    joints_rect: tuple = ()                             # px, the joints table's corners
                                                        # (x0, y0, x1, y1 from the top left)
    joints_scroll: tuple = (0.0, 0.0)                   # px, the table's scroll and its end
    wheel_passed: float = -1e9                          # time.monotonic() the table last
                                                        # passed the wheel to the panel
    height: float | None = None
    note_since: float = 0.0                             # time.monotonic() when `note` was set
    description: tuple = (None, "")                     # (scene file, its description)
    robot_for: tuple = (None, -1)                       # (file, run) the robot fields are of
    robot_base: bool | None = None                      # the Robot section's choices
    robot_height: float = 0.0
    sweeps: object = None                               # app.sweeps_window.SweepsState
    keyframe_asked: int | None = None   # Copy as TOML: the capture serial before the request

    def __setattr__(self, name, value):
        if name == "note":  # every note set (even the same text again) is shown afresh
            object.__setattr__(self, "note_since", time.monotonic())
        object.__setattr__(self, name, value)

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
    run: int
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


def next_speed(current, faster):
    """The speed of SPEED_LADDER next above (`faster`) or below `current`, which need not be
    on the ladder (the slider sets any value); at an end of the ladder, that end."""
    if faster:
        above = [s for s in SPEED_LADDER if s > current * (1.0 + 1e-9)]
        return above[0] if above else SPEED_LADDER[-1]
    below = [s for s in SPEED_LADDER if s < current * (1.0 - 1e-9)]
    return below[-1] if below else SPEED_LADDER[0]


def speed_text(speed):
    """A speed as the panel and the notes show it: x4, x1, x1/8, or x0.3 between."""
    if speed >= 1.0 or not float(1.0 / speed).is_integer():
        return f"x{speed:.3g}"
    return f"x1/{1.0 / speed:.0f}"


def request_speed_step(send, current, faster):
    """One step up or down SPEED_LADDER from `current` (the + and - keys); returns (the speed
    asked, the note that tells it)."""
    speed = next_speed(current, faster)
    request_speed(send, speed)
    if faster and speed <= current * (1.0 + 1e-9):
        return speed, f"speed {speed_text(speed)}: the fastest (- slows down)"
    if not faster and speed >= current * (1.0 - 1e-9):
        return speed, f"speed {speed_text(speed)}: the slowest (+ speeds up)"
    return speed, f"speed {speed_text(speed)}"


def request_settings(send, **changes):
    """Configure the world and solver: dt, gravity, iterations, position_iterations,
    tolerance, budget_ms, warm_start, manifold_reuse (m), articulation ("sweep" or "tree");
    numbers are clamped to their range
    (physics.settings, what the World accepts), a non-number is refused."""
    settings, notes = {}, []
    for name, value in changes.items():
        if name not in WORLD_SETTINGS:
            notes.append(f"unknown setting {name!r}; ignored")
        elif name == "warm_start":
            settings[name] = bool(value)
        elif SETTINGS[name].kind == "choice":
            if value in SETTINGS[name].choices:
                settings[name] = value
            else:
                notes.append(f"{name}: {value!r} is not {SETTINGS[name].range_text}; "
                             "the previous value is kept")
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


def _motor_number(snapshot, joint, value, what):
    """(the motor on `joint`, float(value)), or (None, the note that refuses them)."""
    motors = {snapshot.joint_names[j]: motor for j, motor in snapshot.motors}
    if joint not in motors:
        return None, f"{what}: joint {joint!r} has no motor"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None, f"{what}: not a number ({value!r}); the previous value is kept"
    if not math.isfinite(v):
        return None, f"{what}: not a finite number ({value!r}); the previous value is kept"
    return motors[joint], v


def request_voltage(snapshot, send, joint, value):
    """Set the supply voltage of the motor on `joint` (V), clamped to its voltage_limit."""
    motor, v = _motor_number(snapshot, joint, value, "voltage")
    if motor is None:
        return v
    limit = motor.voltage_limit
    note = None
    if abs(v) > limit:
        v = math.copysign(limit, v)
        note = f"{joint} voltage clamped to {v:g} V (the motor's supply limit)"
    send(SetVoltage(joint, v))
    return note


def request_target(snapshot, send, joint, value):
    """Move the set-point of the controller on `joint`'s motor (the joint's unit: rad, m, or a
    rate per second); a note if it is refused here."""
    motor, v = _motor_number(snapshot, joint, value, "set-point")
    if motor is None:
        return v
    send(SetTarget(joint, v))
    return None


def _target_range(snapshot, j, motor, mode, target):
    """The set-point slider's span, in the joint's unit: its limits (or a turn, a metre) for a
    position controller, the motor's no-load speed at full supply for a velocity one; wide
    enough to hold the present set-point."""
    slider = snapshot.joint_coord_names[j] == "position"
    if mode == "position":
        limits = snapshot.joint_limits[j] if snapshot.joint_limits is not None else None
        lo, hi = limits if limits is not None else ((-1.0, 1.0) if slider else (-math.pi,
                                                                                  math.pi))
    else:
        top = motor.no_load_speed(motor.voltage_limit) if math.isfinite(
            motor.voltage_limit) else 10.0
        lo, hi = -abs(top), abs(top)
    return min(lo, target), max(hi, target)


def keyframe_toml(snapshot, name="here"):
    """A [[keyframes]] table of the pose captured last (CaptureKeyframe), to paste into the
    scene file (physics/keyframe.py): World.keyframe_state as the snapshot carries it --
    every joint's coordinate and rate (a spherical joint's rotation [w, x, y, z] and angular
    velocity, each hinge of a universal joint or gimbal its angle), the free bodies' and
    floating robots' bases' states, the voltages of the motors no controller drives and the
    controllers' set-points. A snapshot without a capture: the pose on show, the revolute
    and prismatic joints' coordinates and rates of the last step and the motors' voltages."""
    from sharnir.scenes.writer import value

    capture = snapshot.keyframe_capture
    when = capture[1] if capture is not None else snapshot.time
    lines = ["[[keyframes]]", f'name = "{name}"', f"# at t = {when:.6g} s"]
    state = capture[2] if capture is not None else None
    if state is not None:
        for key in ("joints", "rates", "voltages", "targets"):
            if state.get(key):
                lines.append(f"{key} = {value(dict(state[key]))}")
        for body, entry in (state.get("bodies") or {}).items():
            lines.append(f"bodies.{_toml_key(body)} = {value(dict(entry))}")
        return "\n".join(lines) + "\n"
    row = _latest(snapshot, "joint")
    coord, rate = JOINT_CHANNELS.index("coord"), JOINT_CHANNELS.index("velocity")
    joints, rates = [], []
    for j, (jname, kind) in enumerate(zip(snapshot.joint_names, snapshot.joint_types)):
        if kind in ("revolute", "prismatic") and row is not None:
            joints.append(f"{_toml_key(jname)} = {float(row[j, coord])!r}")
            rates.append(f"{_toml_key(jname)} = {float(row[j, rate])!r}")
    voltages = []
    if snapshot.motor_state is not None:
        for m, (j, _) in enumerate(snapshot.motors):
            voltages.append(f"{_toml_key(snapshot.joint_names[j])} = "
                            f"{float(snapshot.motor_state['voltage'][m])!r}")
    for key, items in (("joints", joints), ("rates", rates), ("voltages", voltages)):
        if items:
            lines.append(f"{key} = {{ {', '.join(items)} }}")
    return "\n".join(lines) + "\n"


def _toml_key(name):
    return name if name and all(c.isalnum() or c in "_-" for c in name) and name.isascii() \
        else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


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


def toggle_pause(snapshot, send):
    send(Resume() if snapshot.paused else Pause())


def request_load(snapshot, send, state, path, what="open", robot=None):
    """Load the scene file `path` (through the physics thread's Load); returns a note when
    the path is refused here (empty, missing, a folder), else None.  `check_load` later
    tells how the load went.  As on the command line (scenes.resolve_scene), a relative path
    is taken from the current folder, and a bare name that is no file there is a shipped
    scene's (`biped`, `door.toml`). `robot`: how a URDF robot is read (Load.robot)."""
    if isinstance(path, bytes):  # (a file name as bytes, e.g. from a drop)
        path = os.fsdecode(path)
    text = str(path).strip() if path is not None else ""
    if not text:
        return (f"{what}: type the path of a scene file (.toml, .xml, .urdf) or a shipped "
                "scene's name first")
    full = os.path.normpath(os.path.abspath(os.path.expanduser(text)))
    if not os.path.exists(full) and os.path.exists(from_printable(full)):
        full = from_printable(full)  # a name that is not UTF-8, as the path box shows it
    if not os.path.exists(full) and Path(text).parent == Path(".") and "\ufffd" not in text:
        try:
            full = str(resolve_scene(text))  # a shipped scene's name (`biped`, `door.toml`)
        except (SceneError, OSError, ValueError):  # neither a file here nor a shipped scene
            names = ", ".join(sorted(p.stem for p in SCENE_DIR.glob("*.toml")))
            return (f"{what}: {full} does not exist, nor is {printable(text)!r} a shipped "
                    f"scene ({names})")
    if not os.path.exists(full):
        if "\ufffd" in full:  # what a file manager's drop makes of bytes that are not UTF-8
            return (f"{what}: {full} does not exist (its name may not be valid UTF-8: "
                    "use Browse..., or type it with \\xNN for those bytes)")
        return f"{what}: {full} does not exist"
    if os.path.isdir(full):
        return f"{what}: {full} is a folder, not a scene file"
    state.pending = PendingLoad(full, what, snapshot.run, snapshot.error_count)
    state.scene_path = full
    send(Load(full, robot))
    return None


def request_robot(snapshot, send, state, fixed_base, height):
    """Read the URDF robot on show again with a fixed (True) or floating (False) base, or as
    its file means (None), its lowest point `height` m above the ground (None: on it);
    returns a note when refused (no URDF robot on show, a height that is no finite number of
    metres within MAX_START_HEIGHT_M), else None."""
    if snapshot.robot is None or snapshot.source is None:
        return "robot: the scene on show is no URDF robot file"
    try:
        robot = robot_options({**snapshot.robot, "fixed_base": fixed_base, "height": height},
                              "robot")   # (the other options, --decompose, as they were)
    except SceneError as exc:
        return str(exc)
    return request_load(snapshot, send, state, snapshot.source, "reload", robot)


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
    if snapshot.run != pending.run and snapshot.source == pending.path:
        state.pending = None
        state.loaded += 1
        done = "reloaded" if pending.what == "reload" else "loaded"
        state.note = state.recent_files().add(pending.path) or f"{done} {pending.path}"
        if snapshot.warning:
            state.note = f"{state.note}; {snapshot.warning}"
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
        from sharnir.app import sweeps_window
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


def request_rewind(snapshot, send, t=None, back=0):
    """Go back to the state kept at or before simulated time `t` (clamped to the timeline's
    span), or `back` kept states before the current one; a note when nothing is kept."""
    if snapshot.timeline is None:
        return "rewind: no state kept yet"
    if back > 0:
        send(Rewind(back=int(back)))
        return None
    first, last = snapshot.timeline
    try:
        t = float(t)
    except (TypeError, ValueError):
        return f"rewind: the time must be a number of seconds (got {t!r})"
    if math.isnan(t):
        return "rewind: the time must be a number of seconds (got nan)"
    send(Rewind(time=min(max(t, first), last)))
    return None


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


def frame_rate_text(frame_rate):
    """The window's frame rate line: frames/s, ms between frames, ms spent drawing one."""
    if frame_rate is None or frame_rate.fps <= 0.0:
        return "view: - frames/s"
    return (f"view: {frame_rate.fps:.1f} frames/s, {frame_rate.frame_ms:.1f} ms a frame "
            f"({frame_rate.draw_ms:.1f} ms drawing)")


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
        imgui.text(f"last step: {iterations:.0f} iterations, residual {residual:.2e}, "
                   f"{seconds * 1e3:.3f} ms")
    else:
        imgui.text_disabled("last step: -")
    if plot_buffer is not None:   # drawn empty too: a reset does not move the layout
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
    when it has none (paused), in its history; None before the first step, and for "joint"
    when that step had other joints than those on show (a grasp or release since)."""
    for chunk in (snapshot.telemetry, *reversed(snapshot.history)):
        rows = getattr(chunk, what)
        if len(rows):
            row = rows[-1]
            if what == "joint" and len(row) != len(snapshot.joint_names):
                return None
            return row
    return None


def _shown(value, digits):
    """value rounded for the table, without a "-0.00" for rounding noise below zero."""
    return round(float(value), digits) + 0.0


def _format_coord(coord_name, value):
    if coord_name == "position":
        return f"{_shown(value, 4):.4f} m"
    return f"{_shown(math.degrees(value), 2):.2f} deg"


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


def plot_axis_label(channel, coord_names):
    """The y-axis label of a channel for joints with these coordinate names, with the unit:
    rad / rad/s / N m for rotational joints, m / m/s / N for prismatic ones, both if mixed."""
    label, rot_unit, lin_unit = ALL_CHANNELS[channel]
    prismatic = {c == "position" for c in coord_names} or {False}
    if channel == "coord":
        parts = [("angle", rot_unit)] * (False in prismatic) + [("position", lin_unit)] * (
            True in prismatic)
        return " / ".join(f"{name} ({unit})" for name, unit in parts)
    units = [rot_unit] * (False in prismatic) + [lin_unit] * (True in prismatic)
    if channel == "friction":
        label = {"N m": "friction torque", "N": "friction force"}[units[0]] if len(units) == 1 \
            else "friction torque / force"
    elif channel == "velocity" and units == [rot_unit]:
        label = "angular velocity"
    elif channel == "torque" and len(units) == 1:
        label = {"N m": "motor torque", "N": "motor force"}[units[0]]
    return f"{label} ({', '.join(dict.fromkeys(units))})"


def plot_channel_names(coord_names):
    """The selector's names of the channels, e.g. 'angle' or 'position' for 'coord'."""
    coords = set(coord_names)
    coord = "position" if coords == {"position"} else (
        "angle / position" if "position" in coords else "angle")
    return {"coord": coord, "velocity": "velocity", "friction": "friction"}


def joint_colour(j):
    """Joint j's colour: its curve in every channel and its name in the joints table."""
    r, g, b = JOINT_COLOURS[j % len(JOINT_COLOURS)]
    return imgui.ImVec4(r, g, b, 1.0)


def default_plotted(snapshot, state):
    """For another set of joints (a newly opened scene), keep the ticks of the joints still
    there, or tick the first PLOT_DEFAULT_JOINTS when none are: the plot is never empty for
    a scene with joints.  A reset keeps the user's ticks."""
    names = tuple(snapshot.joint_names)
    if state.plot_joints_of == names:
        return
    state.plot_joints_of = names
    kept = {name for name in state.plotted if name in names}
    state.plotted = kept or set(names[:PLOT_DEFAULT_JOINTS])


def display_scale(channel, coord_name):
    """Factor from a channel's physics unit to the panel's: rad and rad/s to deg and deg/s;
    1 for friction and for prismatic joints (m, m/s, N)."""
    if channel in ("coord", "velocity") and coord_name != "position":
        return math.degrees(1.0)
    return 1.0


def plot_y_limits(series, channel, coord_names, friction_limits=()):
    """(lo, hi) of the value axis for `series` (a list of (n,) arrays in the panel's units)
    of joints with these coordinate names: the data's range, at least the channel's
    smallest span (PLOT_MIN_SPAN; for friction also a share of the largest friction limit)
    around the data's middle, padded by PLOT_PAD.  Noise of 1e-15 is a flat line at 0."""
    kinds = {c == "position" for c in coord_names} or {False}
    min_span = min(PLOT_MIN_SPAN[channel][int(prismatic)] for prismatic in kinds)
    if channel == "friction" and len(friction_limits):
        limits = np.asarray(friction_limits, dtype=float)
        limits = limits[np.isfinite(limits)]
        if limits.size:
            min_span = max(min_span, PLOT_MIN_FRICTION_SHARE * float(limits.max()))
    lo, hi = math.inf, -math.inf
    for ys in series:
        ys = np.asarray(ys, dtype=float)
        ys = ys[np.isfinite(ys)]
        if ys.size:
            lo, hi = min(lo, float(ys.min())), max(hi, float(ys.max()))
    if lo > hi:  # no data yet
        lo = hi = 0.0
    middle, span = (lo + hi) / 2.0, max(hi - lo, min_span)
    half = span * (0.5 + PLOT_PAD)
    return middle - half, middle + half


def plot_curves(snapshot, plot_buffer, channel, shown):
    """[(name, colour index, (n,) series in the panel's units, unit)] of `channel` for the
    ticked joints `shown`: the joint channels as they are (angles in degrees); the motor
    channels for the joints with a motor; the reaction's magnitude; the contact force's
    magnitude on each shown joint's body B that has a contact sensor (named by the body)."""
    coords = plot_buffer.joint_coord_names
    names = plot_buffer.joint_names
    curves = []
    if channel in PLOT_CHANNELS:
        c = ("coord", "velocity", "friction").index(channel)
        for j in shown:
            unit = PLOT_CHANNELS[channel][2 if coords[j] == "position" else 1]
            curves.append((names[j], j, plot_buffer.series(j, c)
                           * display_scale(channel, coords[j]), unit))
    elif channel in MOTOR_PLOT_CHANNELS:
        for j in shown:
            if j in plot_buffer.motored:
                unit = MORE_CHANNELS[channel][2 if coords[j] == "position" else 1]
                curves.append((names[j], j, plot_buffer.series(j, channel), unit))
    elif channel in ("reaction_force", "reaction_torque"):
        first = "fx" if channel == "reaction_force" else "tx"
        k = JOINT_CHANNELS.index(first)
        for j in shown:
            v = plot_buffer.joint[j, k:k + 3]
            curves.append((names[j], j, np.sqrt((v * v).sum(axis=0)),
                           MORE_CHANNELS[channel][1]))
    else:   # contact_force
        seen = set()
        pairs = snapshot.joint_bodies if snapshot.joint_names == names else ()
        for j in shown:
            b = pairs[j][1] if j < len(pairs) else -1
            if b in plot_buffer.sensor_bodies and b not in seen:
                seen.add(b)
                curves.append((plot_buffer.sensor_names[plot_buffer.sensor_bodies.index(b)], j,
                               plot_buffer.contact_series(b, "force"), "N"))
    return [(name, j, np.ascontiguousarray(y, dtype=float), unit)
            for name, j, y, unit in curves]


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


def export_csv(plot_buffer, path):
    """Write the plotted window of every joint as CSV; returns what happened, for the panel."""
    if not path.strip():
        return "export: type a file name first"
    try:
        plot_buffer.to_csv(path)
    except OSError as exc:
        return f"export: cannot write {path}: {exc.strerror or exc}"
    return f"wrote {len(plot_buffer)} rows to {path}"


def note_seconds(note):
    """How long a note stays before it fades: NOTE_SECONDS, longer for a longer note."""
    return min(NOTE_SECONDS + len(note) / NOTE_CHARS_PER_S, NOTE_MAX_SECONDS)


def note_alpha(note, age):
    """The opacity of `note` shown `age` s ago: 1 for note_seconds(note), then falling to 0
    over NOTE_FADE_S (0: gone)."""
    late = age - note_seconds(note)
    return 1.0 if late <= 0.0 else max(0.0, 1.0 - late / NOTE_FADE_S)


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


def plot_height(available):
    """The plot region's height in a panel with `available` px of room: PLOT_SHARE of it,
    at least PLOT_MIN_HEIGHT while that leaves the controls half the room."""
    return max(min(PLOT_MIN_HEIGHT, available / 2.0), PLOT_SHARE * available)


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
        from sharnir.app import sweeps_window
        sweeps_window.draw(snapshot, send, state, state.width)
    draw_messages(snapshot, state, state.width)
    draw_load_error(state)


def scene_description(source):
    """The `description` of a TOML scene file (scenes.schema) on one line, or "" (none, or
    not a TOML file: MJCF and URDF files have none).  A top-level key comes before the
    file's first table, so only the start of the file is read (DESCRIPTION_READ_MAX bytes
    at most, from a regular file), and of it only the description's own lines are parsed: a
    generated scene's thousands of bodies are not."""
    if not source or Path(source).suffix.lower() != ".toml":
        return ""
    try:
        if not os.path.isfile(source):
            return ""
        with open(source, "rb") as f:
            lines = f.read(DESCRIPTION_READ_MAX).splitlines(keepends=True)
    except (OSError, ValueError):
        return ""
    for i, line in enumerate(lines):
        if line.lstrip().startswith(b"["):
            return ""  # the first table: no description before it
        if line.partition(b"=")[0].strip() != b"description":
            continue
        # its lines: one, or a few for a multi-line string
        for end in range(i + 1, min(i + DESCRIPTION_LINES_MAX, len(lines)) + 1):
            try:
                text = tomllib.loads(b"".join(lines[i:end]).decode("utf-8"))["description"]
            except (ValueError, KeyError):  # (tomllib's and UTF-8's errors are ValueErrors)
                continue
            return " ".join(text.split()) if isinstance(text, str) else ""
        return ""
    return ""


def elide(text, width, measure):
    """`text` cut short with "..." to fit `width` by `measure` (text -> its width): the
    whole of it when it fits."""
    if measure(text) <= width:
        return text
    lo, hi = 0, len(text)    # the longest prefix that fits with the dots: binary search
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(text[:mid].rstrip() + "...") <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "..."


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
