"""Commands: what other threads ask the physics thread to do, applied between two steps.

Each command is a small immutable value; `PhysicsThread.send` queues it.  Values are
checked when the physics thread applies the command, against the ranges of
`physics.settings.SETTINGS` (the same as scene files and the panel): a refused value leaves
the setting as it was and the reason (the setting, the value and its range) appears in the
next snapshot's `error`.
"""
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Pause:
    """Stop advancing time."""


@dataclass(frozen=True)
class Resume:
    """Advance time again, paced to the wall clock from now on."""


@dataclass(frozen=True)
class Step:
    """Pause (if running) and advance exactly one step."""


@dataclass(frozen=True)
class ApplyKeyframe:
    """Put the scene's keyframe `name` ([[keyframes]]) into the world (World.apply_keyframe)."""
    name: str


@dataclass(frozen=True)
class CaptureKeyframe:
    """Publish the state as a keyframe (World.keyframe_state) with the next snapshot: its
    `keyframe_capture` is then (a serial one higher, the state)."""


@dataclass(frozen=True)
class Rewind:
    """Pause and go back (or forward, over states kept) to the state the timeline kept at or
    before simulated time `time` (s); `back` > 0 instead: that many kept states before the
    current one (the Left arrow)."""
    time: float = math.inf
    back: int = 0


@dataclass(frozen=True)
class Reset:
    """Rebuild the world from its scene file (read again) or its factory; the live edits
    (settings, friction, forces) are dropped. Paused stays paused."""


@dataclass(frozen=True)
class SetSpeed:
    """Slow motion: simulated seconds per wall second (SETTINGS["speed"]: 1/32 to 4)."""
    factor: float


@dataclass(frozen=True, init=False)
class Configure:
    """World settings by keyword: dt, gravity, iterations, position_iterations, tolerance,
    budget_ms, warm_start, manifold_reuse (ranges: physics.settings). All or none of them
    change."""
    settings: Mapping[str, Any]

    def __init__(self, **settings):
        object.__setattr__(self, "settings", MappingProxyType(dict(settings)))


@dataclass(frozen=True)
class SetFriction:
    """A joint's (by name or index) Coulomb friction limit, N m or N."""
    joint: str | int
    value: float


@dataclass(frozen=True)
class SetVoltage:
    """The supply voltage (V) of the DC motor on a joint (by name or index)."""
    joint: str | int
    value: float


@dataclass(frozen=True)
class SetTarget:
    """The set-point of the position or velocity controller on a joint's motor (rad, m or a
    rate; World.set_target)."""
    joint: str | int
    value: float


@dataclass(frozen=True)
class ResumeController:
    """Hand a joint's motor back to the controller a voltage took over
    (World.resume_controller)."""
    joint: str | int


@dataclass(frozen=True)
class SetBodyForce:
    """A force at a body's centre of mass and a torque, world frame, acting until changed
    (send zeros to remove it). The mouse drag uses SetDrag, which the physics recomputes in
    every step."""
    body: str | int
    force: Sequence[float] = (0.0, 0.0, 0.0)
    torque: Sequence[float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class SetDrag:
    """Drag a body with the mouse's spring-damper (World.set_drag), computed by the physics in
    every step until ClearDrag: pull its `point` (body frame) toward the world point `target`
    and/or turn it toward the orientation `quat` (w, x, y, z). Sent again whenever the cursor
    moves; it replaces the previous drag."""
    body: str | int
    point: Sequence[float]
    target: Sequence[float] | None = None
    quat: Sequence[float] | None = None


@dataclass(frozen=True)
class ClearDrag:
    """Let go of the dragged body."""


@dataclass(frozen=True)
class MoveBody:
    """Place a free (unjointed) dynamic body by hand, at rest: centre of mass `pos` and
    orientation `quat` (w, x, y, z), world frame (dragging while paused)."""
    body: str | int
    pos: Sequence[float]
    quat: Sequence[float]


@dataclass(frozen=True)
class Load:
    """Replace the world by the scene in this file; a bad file keeps the current world.
    `robot`: how a URDF robot is read (scenes.loader.robot_options: fixed_base, height,
    decompose; None: from the file, on the ground)."""
    path: str | Path
    robot: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Quit:
    """End the physics thread (see PhysicsThread.stop)."""


Command = (Pause | Resume | Step | Rewind | ApplyKeyframe | CaptureKeyframe | Reset | SetSpeed
           | Configure | SetFriction | SetVoltage | SetTarget | ResumeController | SetBodyForce
           | SetDrag | ClearDrag | MoveBody | Load | Quit)
