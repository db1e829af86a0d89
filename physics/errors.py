"""The errors a simulation raises: a state gone non-finite (SimulationError), and a finite one
beyond a bound no real system passes (BoundError: RunawayError, JointGapError,
EnergyJumpError). physics/guard.py finds them and writes their messages; a bad argument is a
ValueError where it is given (physics/specs.py, World), a bad checkpoint a CheckpointError
(physics/checkpoint.py).
"""


class SimulationError(RuntimeError):
    """The state went non-finite (NaN or inf); the message names the body and the time."""


class BoundError(SimulationError):
    """A step's result is finite but beyond a bound no real system passes (issue 13, like
    MuJoCo's warnings): a body too fast (RunawayError), a joint pulled apart (JointGapError),
    energy from nothing (EnergyJumpError). The message is one line naming what, the value,
    the bound and its setting, the step and the time; the same facts are attributes.
    `switch_off` names the settings whose 0 turns the check off (the app's Resume does). The
    state is that after the step that found it."""

    def __init__(self, message, *, quantity, value, bound, setting, step, time,
                 switch_off=None):
        super().__init__(message)
        self.quantity, self.value, self.bound = quantity, value, bound
        self.setting, self.step, self.time = setting, step, time
        self.switch_off = (setting,) if switch_off is None else tuple(switch_off)


class RunawayError(BoundError):
    """A dynamic body moves or turns faster than the `max_speed` / `max_angular_speed`
    settings allow: finite, but no real system's (a force of 1e13 N, a solve gone wrong).
    `body` names it; going on turns both speed checks off."""

    def __init__(self, message, *, body, **facts):
        super().__init__(message, switch_off=("max_speed", "max_angular_speed"), **facts)
        self.body = body


class JointGapError(BoundError):
    """A joint's anchors (or a slider's axis) are further apart than `max_joint_gap`, or its
    locked axes further out of line than `max_joint_angle_gap`: the joint no longer holds
    (a load no joint could take, a chain driven past what the solve can follow). `joint`
    names it; `step` and `time` are those of the pose found open (the next step finds it)."""

    def __init__(self, message, *, joint, **facts):
        super().__init__(message, **facts)
        self.joint = joint


class EnergyJumpError(BoundError):
    """A step gained more energy than `max_energy_gain` times what its forces, motors and
    drag could supply (physics.energy): energy from nothing. `value` is the gain (J),
    `supply` what could supply it (J), `bound` the factor, `body` the body that gained most."""

    def __init__(self, message, *, body, supply, **facts):
        super().__init__(message, **facts)
        self.body, self.supply = body, supply
