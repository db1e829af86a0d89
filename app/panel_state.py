"""The control panel's state and what its widgets do, apart from drawing them: this module
imports no ImGui (`app.panel` draws, and calls these).

`PanelState` is what the panel remembers between frames.  What a widget does when it changes
is a plain function (`request_speed`, `request_settings`, `request_friction`,
`request_load`, `request_reload`): it checks the value, clamps what is out of range, sends
the command and returns a note for the user (None when the value was taken as given).  What
the panel shows is computed here too: its texts (`frame_rate_text`, `speed_text`,
`scene_description`, `keyframe_toml`), how long a note stays (`note_alpha`), the ticked
joints (`default_plotted`) and the plot's curves, units and value range (`plot_curves`,
`display_scale`, `plot_y_limits`).  Tests call all of them without drawing anything.

Loading goes through the physics thread's `Load` command, which answers only through the
snapshots: `check_load` (every frame) sees the load succeed when the run (Snapshot.run) changes
to a world from that file, or fail when `error_count` goes up first; a failure opens the
"Load failed" modal (`PanelState.load_error`) with the loader's whole message, and the
current scene keeps running.  The file dialog (`start_browse`, `poll_browse`) is
portable-file-dialogs', imported only when one opens.
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

from ..physics.settings import SETTINGS, WORLD_SETTINGS
from ..scenes import SCENE_DIR, SceneError, resolve_scene
from ..scenes.loader import robot_options
from .commands import (
    Configure,
    Load,
    Pause,
    Resume,
    Rewind,
    SetFriction,
    SetSpeed,
    SetTarget,
    SetVoltage,
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
    tolerance, budget_ms, warm_start, manifold_reuse (m), articulation ("sweep" or "tree"),
    threads;
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
    from ..scenes.writer import value

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


def export_csv(plot_buffer, path):
    """Write the plotted window of every joint as CSV; returns what happened, for the panel."""
    if not path.strip():
        return "export: type a file name first"
    try:
        plot_buffer.to_csv(path)
    except OSError as exc:
        return f"export: cannot write {path}: {exc.strerror or exc}"
    return f"wrote {len(plot_buffer)} rows to {path}"


# ---- what the panel shows: texts, plot curves and scales ------------------------------------

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


def note_seconds(note):
    """How long a note stays before it fades: NOTE_SECONDS, longer for a longer note."""
    return min(NOTE_SECONDS + len(note) / NOTE_CHARS_PER_S, NOTE_MAX_SECONDS)


def note_alpha(note, age):
    """The opacity of `note` shown `age` s ago: 1 for note_seconds(note), then falling to 0
    over NOTE_FADE_S (0: gone)."""
    late = age - note_seconds(note)
    return 1.0 if late <= 0.0 else max(0.0, 1.0 - late / NOTE_FADE_S)


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


def plot_height(available):
    """The plot region's height in a panel with `available` px of room: PLOT_SHARE of it,
    at least PLOT_MIN_HEIGHT while that leaves the controls half the room."""
    return max(min(PLOT_MIN_HEIGHT, available / 2.0), PLOT_SHARE * available)


def _time_range(t):
    """The plots' time axis: the last PLOT_SECONDS, or from the first row while there is
    less than that (at least 0.1 s wide)."""
    if not len(t):
        return 0.0, PLOT_SECONDS
    end = float(t[-1])
    start = max(end - PLOT_SECONDS, float(t[0]))
    return start, max(end, start + 0.1)


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
