"""Snapshots: the immutable view of the simulation that the physics thread publishes.

The physics thread builds a new `Snapshot` after each batch of steps (or change) and swaps
one reference to it; readers keep whichever snapshot they grabbed for as long as they like.
Nothing in a snapshot can change after it is built: its arrays are private copies marked
read-only, its sequences are tuples and its settings a read-only mapping.

Per-step telemetry comes in `Telemetry` chunks numbered by step.  A reader that polls more
slowly than the thread publishes still sees every step through `Snapshot.history`, the
chunks of the last second or so; step numbers tell it which rows it already has.
"""
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

# The last axis of the joint telemetry (World.run's Recording.joint, physics.model.REC_*):
# coordinate, rate, friction, sliding; the motor's voltage, current, torque and rotor speed
# (0 without a motor); the 6-axis reaction on body B at the anchor (World.joint_reaction).
JOINT_CHANNELS = ("coord", "velocity", "friction", "sliding", "voltage", "current", "torque",
                  "motor_speed", "fx", "fy", "fz", "tx", "ty", "tz")
MOTOR_CHANNELS = JOINT_CHANNELS[4:8]
REACTION_CHANNELS = JOINT_CHANNELS[8:]
# The last axis of a contact sensor's telemetry (Recording.contact, World.body_contact):
# the summed contact force on the body, world, and its torque about the centre of mass.
CONTACT_CHANNELS = ("fx", "fy", "fz", "tx", "ty", "tz")
# The last axis of the solver statistics (Recording.stats: model.STAT_ITERATIONS,
# STAT_RESIDUAL, STAT_SECONDS).
STAT_CHANNELS = ("iterations", "residual", "seconds")


def _frozen(value, dtype=float):
    """A read-only private copy, so that neither the giver nor a reader can change it."""
    a = np.array(value, dtype=dtype)
    a.flags.writeable = False
    return a


def _set(obj, name, value):
    object.__setattr__(obj, name, value)  # the one way to fill in a frozen dataclass


@dataclass(frozen=True, eq=False)
class Telemetry:
    """The series of consecutive steps first_step .. last_step of one world (steps count
    from 1 after a load or reset): row i is step first_step + i."""
    first_step: int
    t: np.ndarray       # (k,) simulated time after each step, s
    joint: np.ndarray   # (k, njoint, len(JOINT_CHANNELS)) channels JOINT_CHANNELS
    stats: np.ndarray   # (k, 3) channels STAT_CHANNELS
    contact: np.ndarray | None = None  # (k, nsensor, 6) CONTACT_CHANNELS of the snapshot's
                                       # sensor_bodies (None: (k, 0, 6))

    def __post_init__(self):
        _set(self, "first_step", int(self.first_step))
        if self.contact is None:
            _set(self, "contact", np.zeros((len(self.t), 0, len(CONTACT_CHANNELS))))
        for name in ("t", "joint", "stats", "contact"):
            _set(self, name, _frozen(getattr(self, name)))

    @classmethod
    def empty(cls, first_step, njoint, nsensor=0):
        return cls(first_step, np.zeros(0), np.zeros((0, njoint, len(JOINT_CHANNELS))),
                   np.zeros((0, 3)), np.zeros((0, nsensor, len(CONTACT_CHANNELS))))

    def __len__(self):
        return self.t.shape[0]

    @property
    def last_step(self):
        """The number of the last row's step (first_step - 1 when there are no rows)."""
        return self.first_step + len(self) - 1


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The state of the simulation after `step` steps of world number `generation`."""
    scene: str                      # a name to show: the file's stem or the factory's name
    source: str | None              # the scene file, None for a world built in code
    generation: int                 # goes up at every load, reset, grasp and release
    step: int                       # steps done in this world
    time: float                     # simulated time, s
    dt: float                       # s
    paused: bool
    ready: bool                     # False while the physics kernels compile or load
    speed: float                    # the requested slow-motion factor
    realtime_factor: float          # achieved: simulated s per wall s, recent average
    settings: Mapping[str, Any]     # World.settings: dt, gravity, iterations, ...
    body_names: tuple
    body_shapes: tuple              # physics shapes (None for shapeless bodies)
    body_pos: np.ndarray            # (nbody, 3)
    body_quat: np.ndarray           # (nbody, 4) (w, x, y, z)
    joint_names: tuple
    joint_types: tuple
    joint_coord_names: tuple        # "angle" or "position", for labels and CSV columns
    friction_limit: np.ndarray      # (njoint,) N m or N
    telemetry: Telemetry            # every step since the previous snapshot
    history: tuple                  # Telemetry of about the last second, oldest first
                                    # (the last one is `telemetry` if that has rows)
    error: str | None = None        # the latest problem, cleared by a load or reset
    error_count: int = 0            # goes up with every problem: tells a new one from an old
    threads: int = 1                # the threads the last steps ran on (World.threads_used)
    warning: str | None = None      # what loading the scene warned of (MJCF it cannot simulate)
    run: int = 0                    # goes up at every load and reset (steps count from 1
                                    # again); a grasp or release (a new generation) keeps it
    body_jointed: tuple = ()        # (nbody,) bool: a joint holds the body (not moved by hand)
    body_island: tuple = ()         # (nbody,) int: island of jointed dynamic bodies, -1: none
    body_mass: np.ndarray | None = None     # (nbody,) kg (0 for static and kinematic bodies)
    body_inertia: np.ndarray | None = None  # (nbody, 3) principal moments, kg m^2
    joint_bodies: tuple = ()        # (njoint,) (body A, body B) indices
    motors: tuple = ()              # (joint index, physics.DCMotor) per motor
    motor_state: Mapping[str, Any] | None = None  # World.motor_state after the last step:
                                    # joint, voltage, target, current, torque, speed, power
    motor_modes: tuple = ()         # World.motor_modes: (mode, held) per motor
    joint_limits: tuple | None = None  # (njoint,) (lower, upper) or None per joint
    joint_anchor: np.ndarray | None = None  # (njoint, 3) anchor on body B, world
    joint_axis: np.ndarray | None = None    # (njoint, 3) joint axis, world (unit)
    contact_point: np.ndarray | None = None   # (k, 3) contact points of the last step, world
    contact_normal: np.ndarray | None = None  # (k, 3) their normals (A to B)
    contact_force: np.ndarray | None = None   # (k, 3) contact force on B (normal + sliding), N
    contact_sliding: np.ndarray | None = None  # (k,) bool: friction at the cone
    compile_progress: tuple | None = None  # (kernels done, total, elapsed s) while compiling
    drag_body: int = -1                     # the body dragged with the mouse, -1 for none
    drag_point: np.ndarray | None = None    # (3,) its grabbed point, world
    drag_point_vel: np.ndarray | None = None  # (3,) that point's velocity, m/s
    drag_target: np.ndarray | None = None   # (3,) where the point is pulled (None: turning)
    drag_force: np.ndarray | None = None    # (3,) the drag force of the last step, at the point, N
    drag_torque: np.ndarray | None = None   # (3,) its torque about the centre of mass, N m
    sensor_bodies: tuple = ()               # bodies whose contact force the telemetry carries
                                            # (World.sensor_bodies)
    joint_reaction: np.ndarray | None = None  # (njoint, 6) World.joint_reaction, last step
    body_contact: np.ndarray | None = None    # (nbody, 6) World.body_contact, last step
    body_visuals: tuple = ()        # (nbody,) World.body_visuals: shapes drawn, not simulated
    description: str = ""           # the scene's one-line description (its file's)
    keyframes: tuple = ()           # the scene's keyframe names ([[keyframes]])
    keyframe_capture: tuple | None = None  # (serial, time, World.keyframe_state()) of the
                                    # last CaptureKeyframe (the panel's Copy as TOML)
    timeline: tuple | None = None   # (first, last) simulated time of the states kept to go
                                    # back to (Rewind), s; None: none kept yet
    robot: Mapping[str, Any] | None = None  # a URDF robot's options (Load.robot); None: the
                                            # scene is no URDF file

    def __post_init__(self):
        _set(self, "body_pos", _frozen(self.body_pos))
        _set(self, "body_quat", _frozen(self.body_quat))
        _set(self, "friction_limit", _frozen(self.friction_limit))
        for name in ("joint_anchor", "joint_axis", "contact_point", "contact_normal",
                     "contact_force", "drag_point", "drag_point_vel", "drag_target", "drag_force",
                     "drag_torque", "joint_reaction", "body_contact"):
            if getattr(self, name) is not None:
                _set(self, name, _frozen(getattr(self, name)))
        if self.contact_sliding is not None:
            _set(self, "contact_sliding", _frozen(self.contact_sliding, bool))
        _set(self, "drag_body", int(self.drag_body))
        _set(self, "settings", MappingProxyType(dict(self.settings)))
        for name in ("body_names", "body_shapes", "body_visuals", "body_jointed", "body_island",
                     "joint_bodies",
                     "joint_names", "joint_types", "sensor_bodies",
                     "joint_coord_names", "history"):
            _set(self, name, tuple(getattr(self, name)))

    # The telemetry of this snapshot's own steps, under the names World.run's Recording uses.
    @property
    def t(self):
        return self.telemetry.t

    @property
    def joint(self):
        return self.telemetry.joint

    @property
    def stats(self):
        return self.telemetry.stats


# ---- CSV: the columns `sharnir run --csv` and the panel's plot export share ------------------
def csv_header(joint_names, coord_names, motored, sensor_names):
    """t; for every joint J: J.angle (J.position for a slider), J.velocity, J.friction,
    J.sliding; for every joint with a motor (indices `motored`): J.voltage, J.current,
    J.torque, J.motor_speed; for every joint: its reaction J.fx .. J.tz; for every contact
    sensor body B: B.contact_fx .. B.contact_tz."""
    header = ["t"]
    for name, coord in zip(joint_names, coord_names):
        header += [f"{name}.{coord}", f"{name}.velocity", f"{name}.friction", f"{name}.sliding"]
    for j in motored:
        header += [f"{joint_names[j]}.{c}" for c in MOTOR_CHANNELS]
    for name in joint_names:
        header += [f"{name}.{c}" for c in REACTION_CHANNELS]
    for name in sensor_names:
        header += [f"{name}.contact_{c}" for c in CONTACT_CHANNELS]
    return header


def csv_columns(t, joint, motored, contact):
    """The columns of csv_header as arrays: t (n,), joint (n, njoint, len(JOINT_CHANNELS)),
    contact (n, nsensor, 6); sliding as 0 or 1."""
    columns = [np.asarray(t)]
    for j in range(joint.shape[1]):
        columns += [joint[:, j, 0], joint[:, j, 1], joint[:, j, 2],
                    (joint[:, j, 3] > 0.5).astype(int)]
    first = JOINT_CHANNELS.index(MOTOR_CHANNELS[0])
    for j in motored:
        columns += [joint[:, j, first + k] for k in range(len(MOTOR_CHANNELS))]
    first = JOINT_CHANNELS.index(REACTION_CHANNELS[0])
    for j in range(joint.shape[1]):
        columns += [joint[:, j, first + k] for k in range(len(REACTION_CHANNELS))]
    for s in range(contact.shape[1]):
        columns += [contact[:, s, k] for k in range(len(CONTACT_CHANNELS))]
    return columns
