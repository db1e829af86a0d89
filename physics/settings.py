"""Every live setting's range, unit and meaning, in one table.

The scene schema (`scenes.schema`), the engine (`World(...)`, `World.configure`,
`World.set_friction`), the physics thread's commands (`Configure`, `SetSpeed`, `SetFriction`)
and the app's panel all take their bounds from `SETTINGS`, so a value a scene file may hold is
exactly a value that can be set live.  Plain Python: importing it compiles nothing.

Why these bounds:
* dt: below 0.1 ms a step buys no accuracy these solvers need, and the physics thread could
  no longer keep up with real time on the shipped scenes (the 50-link chain steps about
  10,000 times a second); above 0.1 s joints and contacts are too coarse to hold.
* iterations, position_iterations: a step costs about one sweep over every row per
  iteration; past these caps one step of a big scene takes seconds.
* gravity: 1000 m/s^2 per component (about 100 g) is already far beyond any planet.
* manifold_reuse: at most half the contact margin (physics.contact.MANIFOLD_REUSE_MAX): a point
  left out for a gap beyond the margin must not come into touch unseen.
* friction (a joint's Coulomb limit): bigger values are typing slips; an unbreakable joint
  is a `fixed` one.
* max_speed, max_angular_speed: no rigid body a robot or a game meets moves faster than
  10 km/s (above rifle bullets, 1 km/s, and orbital speed, 7.8 km/s) or turns faster than
  1e5 rad/s (about 1e6 rpm; ultracentrifuges and dental drills stay below 5e4 rad/s). A dynamic
  body beyond either has been thrown by a force or a solve that went wrong, and the step stops
  the run there (physics.world.RunawayError) instead of passing the explosion off as physics.
  0 turns the check off; the largest bound, 1e10, is MuJoCo's mjMAXVAL, beyond which MuJoCo
  resets the simulation (mjWARN_BADQVEL).
* max_joint_gap, max_joint_angle_gap: a joint's equality rows' error (its point lock or a
  slider's off-axis error in m; its axis lock, the sine of the angle for a hinge, or
  orientation lock in rad), found where each step builds the joints' rows (the pose the last
  step left). The shipped scenes at their own dt never exceed 1e-15 m (the tree pass closes
  point locks exactly) and 0.02 rad (the biped, MuJoCo's humanoid), so 0.1 m and 0.5 rad
  (29 degrees) are a joint that no longer holds: JointGapError.
* max_energy_gain: a step whose energy (kinetic, and gravity's potential) grows by more than
  this many times what its forces, motors and drag could supply (physics.energy) made energy
  from nothing: EnergyJumpError. No shipped scene's step gains more than 0.48 times its
  supply; a body created 3 cm or more inside the floor gains more than 10 times it.
  0 turns each of these checks off.
"""
import math
import numbers
from dataclasses import dataclass

# solver.articulation: how a tree of joints is solved (the kernels take the index)
ARTICULATIONS = ("sweep", "tree")


@dataclass(frozen=True)
class Setting:
    """One setting: its kind ("float", "int", "bool", or "vector": 3 floats, each within the
    range), its bounds (inclusive), unit, default and a one-line description."""
    name: str
    kind: str
    min: float
    max: float
    unit: str
    default: object
    description: str
    choices: tuple = ()   # kind "choice": the names it may take (the engine holds the index)

    @property
    def range_text(self):
        """The range as people read it, e.g. '[0.0001, 0.1] s'."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return " or ".join(repr(c) for c in self.choices)
        each = " each" if self.kind == "vector" else ""
        unit = f" {self.unit}" if self.unit else ""
        return f"[{_number(self.min)}, {_number(self.max)}]{unit}{each}"

    def check(self, value):
        """`value` as the engine holds it (float, int, bool or a tuple of 3 floats); a
        ValueError naming the setting, the value and the range if it is not allowed."""
        if self.kind == "bool":
            if isinstance(value, (bool, numbers.Integral)) and value in (0, 1):
                return bool(value)
            if type(value).__name__ == "bool_":  # numpy's bool
                return bool(value)
            raise self._refused(value)
        if self.kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return value
            raise self._refused(value, "not one of the choices")
        if self.kind == "vector":
            try:
                parts = tuple(float(x) for x in value)
            except (TypeError, ValueError):
                raise self._refused(value, "not three numbers") from None
            if len(parts) != 3:
                raise self._refused(value, "not three numbers")
            if not all(self.min <= x <= self.max for x in parts):  # also refuses NaN
                raise self._refused(value)
            return parts
        if isinstance(value, (str, bytes, bool)) or not isinstance(value, numbers.Real):
            raise self._refused(value, "not a number")
        if self.kind == "int":
            if not float(value).is_integer():
                raise self._refused(value, "not a whole number")
            number = int(value)
        else:
            number = float(value)
        if not self.min <= number <= self.max:  # also refuses NaN
            raise self._refused(value)
        return number

    def clamp(self, value):
        """(value within the range, whether it was changed); ValueError for a non-number."""
        if self.kind == "choice":
            return self.check(value), False
        if self.kind == "vector":
            try:
                parts = [float(x) for x in value]
            except (TypeError, ValueError):
                parts = []
            if len(parts) != 3 or any(math.isnan(x) for x in parts):
                raise self._refused(value, "not three numbers")
            clamped = tuple(min(max(x, self.min), self.max) for x in parts)
            return clamped, list(clamped) != parts
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise self._refused(value, "not a number") from None
        if math.isnan(number):
            raise self._refused(value, "not a number")
        clamped = min(max(number, self.min), self.max)
        if self.kind == "int":
            clamped = int(round(clamped))
        return clamped, clamped != number

    def _refused(self, value, why=None):
        what = f"{why}: " if why else ""
        return ValueError(f"{self.name} must be in {self.range_text} ({what}got {value!r})")


def _number(x):
    """1000000 rather than 1e+06; 0.0001 and 0.03125 as they are."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _setting(name, kind, lo, hi, unit, default, description, choices=()):
    return name, Setting(name, kind, lo, hi, unit, default, description, tuple(choices))


SETTINGS = dict([
    # the world and its solver (World(...), World.configure, a scene's [world] and [solver])
    _setting("dt", "float", 1e-4, 0.1, "s", 1.0 / 240.0, "time step"),
    _setting("gravity", "vector", -1000.0, 1000.0, "m/s^2", (0.0, 0.0, -9.81),
             "gravity, world frame"),
    _setting("iterations", "int", 1, 10_000, "", 100,
             "most velocity iterations per step"),
    _setting("position_iterations", "int", 0, 1_000, "", 4,
             "position sweeps per step (rotations, limits, loops, overlap)"),
    _setting("tolerance", "float", 0.0, 1.0, "N s", 1e-9,
             "stop once every impulse change is at most this"),
    _setting("budget_ms", "float", 0.0, 1000.0, "ms", 0.0,
             "wall-clock budget of one step's iterations, 0 = off"),
    _setting("warm_start", "bool", 0, 1, "", True,
             "start each step from the last step's impulses"),
    _setting("manifold_reuse", "float", 0.0, 0.0025, "m", 2e-4,
             "a touching pair that moved less keeps its contact points, 0 = off"),
    _setting("threads", "int", 0, 1024, "", 0,
             "threads a step may use (the same results for any number), "
             "0 = every core while faster than one"),
    _setting("articulation", "choice", 0, 1, "", "sweep",
             "a jointed tree's rows: swept row by row, or one exact block (tree)",
             choices=ARTICULATIONS),
    _setting("max_speed", "float", 0.0, 1e10, "m/s", 1e4,
             "a dynamic body faster than this stops the run as a blow-up, 0 = off"),
    _setting("max_angular_speed", "float", 0.0, 1e10, "rad/s", 1e5,
             "a dynamic body turning faster than this stops the run, 0 = off"),
    _setting("max_joint_gap", "float", 0.0, 1e10, "m", 0.1,
             "a joint's anchors or slider axis this far apart stops the run, 0 = off"),
    _setting("max_joint_angle_gap", "float", 0.0, 10.0, "rad", 0.5,
             "a joint's locked axes this far out of line stop the run, 0 = off"),
    _setting("max_energy_gain", "float", 0.0, 1e10, "x", 10.0,
             "energy gained in a step beyond this many times what could supply it "
             "stops the run, 0 = off"),
    # a joint's Coulomb friction limit (a scene's [[joints]] friction, World.set_friction)
    _setting("friction", "float", 0.0, 1e6, "N m or N", 0.0,
             "a joint's Coulomb friction limit (N m turning, N sliding)"),
    # a joint's viscous damping (a scene's [[joints]] damping, World.set_damping)
    _setting("damping", "float", 0.0, 1e6, "N m s/rad or N s/m", 0.0,
             "a joint's viscous damping, implicit (N m s/rad turning, N s/m sliding)"),
    # the app's physics thread (SetSpeed)
    _setting("speed", "float", 1.0 / 32.0, 4.0, "x", 1.0,
             "slow motion: simulated seconds per wall-clock second"),
])
# The settings World.configure takes, in the order World(...) lists them.
WORLD_SETTINGS = ("dt", "gravity", "iterations", "position_iterations", "tolerance",
                  "budget_ms", "warm_start", "manifold_reuse", "articulation", "max_speed",
                  "max_angular_speed", "max_joint_gap", "max_joint_angle_gap",
                  "max_energy_gain", "threads")
HOST_SETTINGS = ("threads",)   # of those, the ones Python applies, not the kernels


def check(name, value):
    """`SETTINGS[name].check(value)`; an unknown name is a ValueError listing the known ones."""
    setting = SETTINGS.get(name)
    if setting is None:
        raise ValueError(f"unknown setting {name!r} (settings are: {', '.join(SETTINGS)})")
    return setting.check(value)


def reference():
    """The table as text, one line per setting: name, range and what it is."""
    width = max(map(len, SETTINGS))
    column = max(len(s.range_text) for s in SETTINGS.values())
    return "\n".join(f"{s.name:<{width}}  {s.range_text:<{column}}  {s.description}"
                     for s in SETTINGS.values())
