"""The user's description of a world (MuJoCo's mjSpec): the records World keeps of its bodies,
joints and loads until it builds the arrays from them (physics/compile.py), the values users
hand in (Material, DCMotor) and get back (Recording), and the checks of the building API's
arguments.

A check raises one ValueError that names the entry and the value ("body 'foot': mass must be
positive (got -1)"), before anything is changed. After a build the arrays are the truth: a
record holds the state and live edits again only when World hands them back before a
rebuild (compile.carry_back).
"""
import math
from dataclasses import dataclass

import numpy as np

from .gimbal import MAX_MIDDLE_ANGLE
from .joint import HAS_COUPLING, HAS_LIMITS, JOINT_TABLE, JOINT_TYPES, REVOLUTE, scene_types_with
from .message import listing, quoted
from .model import BODY_KINDS, DYNAMIC, STATIC
from .motor import (
    CTRL_POSITION,
    CTRL_VELOCITY,
    CTRL_VOLTAGE,
    MOTOR_TRAJ,
    TRAJ_CONSTANT,
    TRAJ_KEYS,
    TRAJ_SINE,
)
from .settings import SETTINGS
from .shape import PLANE, Hull, body_frame, framed, mass_properties, matrix_quat
from .shape import quat_matrix as quat_to_matrix
from .transforms import quat_mul

ALL_GROUPS = (1 << 62) - 1  # a mask that collides with every group
# set_controller's modes
CONTROLLER_MODES = {"voltage": CTRL_VOLTAGE, "position": CTRL_POSITION,
                    "velocity": CTRL_VELOCITY}


@dataclass(frozen=True)
class FrictionRegion:
    """A part of a body's surface with a Coulomb coefficient of its own (paper 001: friction
    that depends on where bodies touch). Written in the frame the body's shape is written in
    (its reference frame: for a hull, mesh or compound the frame add_body placed), one of

    box         ((cx, cy, cz), (hx, hy, hz)): the points of the axis-aligned box of that
                centre and half extents
    half_space  ((nx, ny, nz), d): the points x with n . x >= d (n made unit, d scaled alike)
    face        k: the points within compile.FACE_TOLERANCE (1 % of the hull's size) of the
                plane of triangle k of the body's hull (Hull.faces, face_normals: the whole
                polygon that triangle lies in), on a hull or mesh body only

    A contact point on the body takes the friction of the first region that holds it (in the
    body's list), else the material's; a contact then takes the larger of the two bodies'
    coefficients at each of its points (contact_solver.py: the manifold's bound is their mean
    weighted by the points' normal impulses)."""
    friction: float
    box: tuple | None = None
    half_space: tuple | None = None
    face: int | None = None

    def __post_init__(self):
        v = self.friction
        if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v)
                                       and v >= 0.0):
            raise ValueError(f"friction region: friction must be a finite number >= 0 "
                             f"(got {v!r})")
        given = [k for k in ("box", "half_space", "face") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("friction region: give exactly one of box, half_space, face "
                             f"(got {', '.join(given) or 'none'})")
        if self.box is not None:
            try:
                c, h = (np.asarray(x, dtype=float).reshape(3) for x in self.box)
            except (TypeError, ValueError):
                raise ValueError("friction region: box must be (centre (3), half extents "
                                 f"(3)) (got {self.box!r})") from None
            if not (np.isfinite(c).all() and np.isfinite(h).all() and (h > 0.0).all()):
                raise ValueError("friction region: box centre must be finite and its half "
                                 f"extents positive (got {self.box!r})")
            object.__setattr__(self, "box", (tuple(map(float, c)), tuple(map(float, h))))
        if self.half_space is not None:
            try:
                n, d = np.asarray(self.half_space[0], dtype=float).reshape(3), \
                    float(self.half_space[1])
            except (TypeError, ValueError, IndexError):
                raise ValueError("friction region: half_space must be (normal (3), offset) "
                                 f"(got {self.half_space!r})") from None
            length = float(np.linalg.norm(n))
            if not (math.isfinite(length) and length > 1e-12 and math.isfinite(d)):
                raise ValueError("friction region: half_space needs a finite nonzero normal "
                                 f"and a finite offset (got {self.half_space!r})")
            object.__setattr__(self, "half_space",
                               (tuple(float(x) for x in n / length), d / length))
        if self.face is not None and (isinstance(self.face, bool)
                                      or not isinstance(self.face, (int, np.integer))
                                      or self.face < 0):
            raise ValueError(f"friction region: face must be a hull face's index >= 0 "
                             f"(got {self.face!r})")


@dataclass(frozen=True)
class Material:
    """Contact coefficients of a body's surface; a contact takes the larger of the two
    bodies' values of each (MuJoCo's rule).

    friction        Coulomb coefficient mu (sliding: |p_t| <= mu p_n)
    rolling         rolling resistance, a length (m): the rolling torque is at most rolling x N
    spinning        spinning (torsional) resistance, a length (m): |torque about n| <= spinning x N
    restitution     e in [0, 1]: the normal speed after an impact is e times the speed before
    friction_axis   optional body-fixed direction of anisotropic friction (paper 001); with it,
    friction_along  the coefficient for sliding along the axis (projected onto the contact
                    plane), `friction` being the one across it: the friction impulse lies in
                    the ellipse (p_1 / mu_along)^2 + (p_2 / mu)^2 <= p_n^2
                    (physics/contact_solver.py)
    """
    friction: float = 0.5
    rolling: float = 0.0
    spinning: float = 0.0
    restitution: float = 0.0
    friction_axis: tuple | None = None
    friction_along: float | None = None
    regions: tuple = ()   # FrictionRegion: parts of the surface with a friction of their own

    def __post_init__(self):
        for name in ("friction", "rolling", "spinning", "restitution"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise ValueError(f"material {name} must be a finite number >= 0 (got {v!r})")
        if self.restitution > 1.0:
            raise ValueError(f"material restitution must be at most 1 (got {self.restitution})")
        if (self.friction_axis is None) != (self.friction_along is None):
            raise ValueError("anisotropic friction needs both friction_axis and friction_along")
        if self.friction_axis is not None:
            v = self.friction_along
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise ValueError(f"material friction_along must be a finite number >= 0 "
                                 f"(got {v!r})")
            try:
                axis = np.asarray(self.friction_axis, dtype=float).reshape(3)
            except (TypeError, ValueError):
                raise ValueError(f"material friction_axis must be 3 numbers "
                                 f"(got {self.friction_axis!r})") from None
            length = float(np.linalg.norm(axis))
            if not (math.isfinite(length) and length > 1e-12):
                raise ValueError(f"material friction_axis must be a finite nonzero vector "
                                 f"(got {self.friction_axis!r})")
            object.__setattr__(self, "friction_axis", tuple(float(x) for x in axis / length))
        regions = tuple(self.regions or ())
        if not all(isinstance(r, FrictionRegion) for r in regions):
            raise ValueError("material regions must be FrictionRegion records")
        object.__setattr__(self, "regions", regions)

    def row(self):
        """(mu, rolling, spinning, restitution, mu_along or -1, axis x, y, z) for the model."""
        axis = self.friction_axis if self.friction_axis is not None else (0.0, 0.0, 0.0)
        along = float(self.friction_along) if self.friction_along is not None else -1.0
        return (float(self.friction), float(self.rolling), float(self.spinning),
                float(self.restitution), along, *axis)


@dataclass(frozen=True)
class DCMotor:
    """A DC motor with a gearbox driving a revolute or prismatic joint (paper 002, eqs. 13-18;
    the discrete law is in physics/motor.py). SI units: resistance ohm, inductance H,
    torque_constant N m/A (= back-EMF constant V s/rad), rotor_inertia kg m^2, gear_ratio
    rotor turns per joint turn (per joint metre for a slider: rad/m), efficiency of the gear
    in (0, 1]; limits on the supply voltage (V), the current (A) and the joint's torque (N m, N
    for a slider), each positive (inf: none)."""
    resistance: float
    inductance: float = 0.0
    torque_constant: float = 0.01
    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    efficiency: float = 1.0
    voltage_limit: float = math.inf
    current_limit: float = math.inf
    torque_limit: float = math.inf

    def __post_init__(self):
        checks = (("resistance", self.resistance, 0.0, False), ("inductance", self.inductance,
                  0.0, True), ("torque_constant", self.torque_constant, 0.0, False),
                  ("rotor_inertia", self.rotor_inertia, 0.0, True),
                  ("gear_ratio", self.gear_ratio, 0.0, False))
        for name, value, low, zero_ok in checks:
            v = float(value)
            if not (math.isfinite(v) and (v >= low if zero_ok else v > low)):
                raise ValueError(f"motor {name} must be a finite number "
                                 f"{'>=' if zero_ok else '>'} {low:g} (got {value})")
        if not 0.0 < float(self.efficiency) <= 1.0:
            raise ValueError(f"motor efficiency must be in (0, 1] (got {self.efficiency})")
        for name in ("voltage_limit", "current_limit", "torque_limit"):
            v = float(getattr(self, name))
            if not v > 0.0:  # (inf allowed; NaN refused)
                raise ValueError(f"motor {name} must be > 0 or inf (got {v})")

    def row(self):
        return np.array([self.resistance, self.inductance, self.torque_constant,
                         self.rotor_inertia, self.gear_ratio, self.efficiency,
                         self.voltage_limit, self.current_limit, self.torque_limit], float)

    def stall_torque(self, voltage):
        """Joint torque with the joint held: r eta K_t u / R."""
        return self.gear_ratio * self.efficiency * self.torque_constant * voltage / self.resistance

    def no_load_speed(self, voltage):
        """Joint rate with nothing to drive: u / (K_t r)."""
        return voltage / (self.torque_constant * self.gear_ratio)

    @property
    def electrical_time_constant(self):
        """T_e = L / R, s."""
        return self.inductance / self.resistance


@dataclass
class BodySpec:
    """A body as add_body made it; pos, quat, vel and angvel (the engine's frame) are those
    at the start, or at the last rebuild (compile.carry_back)."""
    name: str
    kind: int
    mass: float
    inertia: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    angvel: np.ndarray
    shape: object = None
    material: Material = Material()
    group: int = 1
    mask: int = ALL_GROUPS
    frame: tuple | None = None   # (c, Rp) of a Hull / Compound: the body frame in its reference
    visuals: tuple = ()          # drawn only: (shape, pos, rot, rgba or None), body frame


@dataclass
class JointSpec:
    """A joint as add_joint made it (local anchors and frames on bodies A and B), with its
    motor, controller and coupling."""
    name: str
    type: int
    bodies: tuple
    local_anchor: np.ndarray
    local_frame: np.ndarray
    friction: float
    limits: tuple | None
    damping: float = 0.0
    motor: "DCMotor | None" = None
    voltage: float = 0.0
    controller: tuple | None = None   # (mode, (kp, kd), set-point row, keyframes) or None
    held: tuple | None = None   # the controller a set_voltage took over (resume_controller)
    # (leader joint name, multiplier, offset, lower, upper): q - m q_leader - o in [lower, upper]
    mimic: tuple | None = None


@dataclass
class LoadSpec:
    """A timed load (add_load): force and torque, world frame, acting in window (start, end)."""
    body: int
    force: np.ndarray
    torque: np.ndarray
    window: tuple


@dataclass
class Recording:
    """Per-step series from World.run. joint's channels (model.REC_*, named by
    app.snapshot.JOINT_CHANNELS): coordinate, velocity, friction, sliding, the motor's voltage,
    current, torque and rotor speed (0 without a motor), the reaction force and torque
    (World.joint_reaction)."""
    t: np.ndarray            # (steps,)
    joint: np.ndarray        # (steps, njoint, REC_CHANNELS)
    stats: np.ndarray        # (steps, STAT_RECORDED) iterations, residual, solve seconds
                             #   (model.STAT_ITERATIONS, STAT_RESIDUAL, STAT_SECONDS)
    body_pos: np.ndarray     # (steps, nbody, 3) or (0, nbody, 3) when bodies are not recorded
    body_quat: np.ndarray    # (steps, nbody, 4)
    motor: np.ndarray | None = None  # (steps, nmotor, 4) voltage, current, torque, rotor speed
                                     # of the motors (World.motor_state's order)
    contact: np.ndarray | None = None  # (steps, len(contact_bodies), 6) the contact sensors:
                                       # summed contact force and torque (World.body_contact)
    contact_bodies: np.ndarray | None = None  # (k,) int64 the bodies of `contact`
    wall_s: float = 0.0      # wall-clock seconds spent stepping


def vector(name, value, n=3):
    """`value` as n finite numbers, or ValueError naming `name`."""
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):   # text, a table, ragged or huge integers
        raise ValueError(f"{name} must be {n} numbers (got {shown(value)})") from None
    if a.shape != (n,):
        raise ValueError(f"{name} must have {n} numbers (got {len(a)})")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has a NaN or infinite value: {a.tolist()}")
    return a


def number(name, value):
    """`value` as a float (inf and nan pass: the caller bounds it), or ValueError naming
    `name`."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a number (got {shown(value)})")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number (got {shown(value)})") from None


def shown(value):
    """A value as it appears in a message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def positive(name, value):
    """`value` as a finite float > 0, or ValueError naming `name`."""
    v = number(name, value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0 (got {value})")
    return v


def entry_index(items, ref, kind, where, names=None):
    """The index of an entry given by index or by name (found in `names`, name -> index,
    where given); ValueError naming the choices."""
    if names is not None and isinstance(ref, str):
        i = names.get(ref)
        if i is not None:
            return i
    prefix = f"{where}: " if where else ""
    if isinstance(ref, (int, np.integer)):
        if 0 <= ref < len(items):
            return int(ref)
        raise ValueError(f"{prefix}no {kind} with index {ref}")
    for i, item in enumerate(items):
        if item.name == ref:
            return i
    names = listing(item.name for item in items)
    text = quoted(ref) if isinstance(ref, str) and len(ref) > 60 else repr(ref)[:60]
    raise ValueError(f"{prefix}unknown {kind} {text} ({kind}s are: {names})")


def frame_from_axis(axis):
    """A unit quaternion whose rotation takes the x axis onto `axis` (the shortest turn)."""
    n = axis / np.linalg.norm(axis)
    c = n[0]
    if c < -1.0 + 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])
    q = np.array([1.0 + c, 0.0, -n[2], n[1]])
    return q / np.linalg.norm(q)


def _mass_properties(name, shape):
    """The shape's (volume, unit inertia), or ValueError naming the body."""
    try:
        return mass_properties(shape)
    except ValueError as exc:
        raise ValueError(f"body {name!r}: {exc}") from None


def check_name(name, taken, what):
    """A body's or joint's name: a text, not empty, that no other `what` has (`taken`)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {what} needs a non-empty name")
    if name in taken:
        raise ValueError(f"{what} {name!r}: the name is taken")


def body_spec(name, taken, shape, *, mass, density, inertia, pos, quat, vel, angvel, kind,
              material, group, mask, visuals):
    """World.add_body's record of a body (see there), every argument checked; `taken` the
    names of the bodies there are."""
    check_name(name, taken, "body")
    if kind not in BODY_KINDS:
        raise ValueError(f"body {name!r}: kind must be one of {sorted(BODY_KINDS)} "
                         f"(got {kind!r})")
    k = BODY_KINDS[kind]
    pos, vel, angvel = vector("pos", pos), vector("vel", vel), vector("angvel", angvel)
    q = vector("quat", quat, 4)
    qn = np.linalg.norm(q)
    if qn < 1e-9:
        raise ValueError(f"body {name!r}: quat must not be zero")
    q = q / qn
    if k == STATIC and (np.any(vel) or np.any(angvel)):
        raise ValueError(f"body {name!r}: a static body cannot move; make it kinematic")
    if shape is not None and shape.kind == PLANE and k != STATIC:
        raise ValueError(f"body {name!r}: a plane is infinite; only a static body can be one")
    frame = None
    if framed(shape):
        c, Rp = body_frame(shape)
        if np.any(c != 0.0) or np.any(Rp != np.eye(3)):
            frame = (np.array(c, dtype=float), np.array(Rp, dtype=float))
            pos = pos + quat_to_matrix(q) @ frame[0]
            q = quat_mul(q, matrix_quat(frame[1]))
            q = q / np.linalg.norm(q)
    material = Material() if material is None else material
    if not isinstance(material, Material):
        raise TypeError(f"body {name!r}: material must be a Material (got {material!r})")
    for r, region in enumerate(material.regions):
        if region.face is not None:
            faces = len(shape.face_normals) if isinstance(shape, Hull) else 0
            if region.face >= faces:
                raise ValueError(f"body {name!r}: friction region {r}: face {region.face} is "
                                 f"not a face of its shape (" + (f"its hull has {faces} "
                                 "faces)" if faces else "only a hull or mesh has faces)"))
    for what, bits in (("group", group), ("mask", mask)):
        if not (isinstance(bits, (int, np.integer)) and 0 <= int(bits) <= ALL_GROUPS):
            raise ValueError(f"body {name!r}: collision {what} must be an integer bit set "
                             f"in [0, 2^62) (got {bits!r})")
    m, I = 0.0, np.zeros(3)
    if k == DYNAMIC or mass is not None or density is not None:
        if mass is not None and density is not None:
            raise ValueError(f"body {name!r}: give mass or density, not both")
        if mass is not None:
            m = float(mass)
            if not (math.isfinite(m) and m > 0):
                raise ValueError(f"body {name!r}: mass must be positive (got {mass})")
        elif shape is not None:
            rho = 1000.0 if density is None else float(density)
            if not (math.isfinite(rho) and rho > 0):
                raise ValueError(f"body {name!r}: density must be positive (got {density})")
            m = rho * _mass_properties(name, shape)[0]
        elif k == DYNAMIC:
            raise ValueError(f"body {name!r}: a dynamic body without a shape needs a mass")
        if inertia is not None:
            I = vector("inertia", inertia)
            if not np.all(I > 0):
                raise ValueError(f"body {name!r}: inertia must be positive (got {I.tolist()})")
        elif shape is not None:
            I = m * _mass_properties(name, shape)[1]
        elif k == DYNAMIC:
            raise ValueError(f"body {name!r}: a dynamic body without a shape needs an inertia")
    c, Rp = frame if frame is not None else (np.zeros(3), np.eye(3))
    drawn = tuple((v[0], Rp.T @ (vector("visual pos", v[1]) - c),
                   Rp.T @ quat_to_matrix(vector("visual quat", v[2], 4)
                                         / max(np.linalg.norm(v[2]), 1e-300)),
                   None if v[3] is None else tuple(float(x) for x in v[3]))
                  for v in visuals)
    return BodySpec(name, k, m, I, pos, q, vel, angvel, shape, material, int(group), int(mask),
                 frame, drawn)


def joint_code(name, type, taken):
    """add_joint's name (`taken`: the joints' names) and type checked: the type's code
    (joint.JOINT_TYPES)."""
    check_name(name, taken, "joint")
    if type not in JOINT_TYPES:
        raise ValueError(f"joint {name!r}: type must be one of {sorted(JOINT_TYPES)} "
                         f"(got {type!r})")
    return JOINT_TYPES[type]


def joint_options(name, type, jt, friction, damping, limits):
    """add_joint's friction, damping (physics.settings' ranges) and limits (lower < upper)
    checked against what a joint of type `type` (code jt) takes: (friction, damping, limits
    or None)."""
    checked = {}
    for key, value, verb in (("friction", friction, "brake"), ("damping", damping, "damp")):
        try:
            checked[key] = SETTINGS[key].check(value)
        except ValueError as exc:
            raise ValueError(f"joint {name!r}: {exc}") from None
        if checked[key] > 0 and not getattr(JOINT_TABLE[jt], key):
            raise ValueError(f"joint {name!r}: a {type} joint has no free motion to {verb}")
    if limits is not None:
        if not HAS_LIMITS[jt]:
            raise ValueError(f"joint {name!r}: a {type} joint takes no limits")
        lo, hi = (float(x) for x in limits)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"joint {name!r}: limits need lower < upper (got {list(limits)})")
        limits = (lo, hi)
    return checked["friction"], checked["damping"], limits


def revolute_groups(joints):
    """The revolute joints between each pair of bodies (a frozenset), in the order they
    were added: two or more compose (gimbal.py)."""
    pairs: dict = {}
    for j, jn in enumerate(joints):
        if jn.type == REVOLUTE:
            pairs.setdefault(frozenset(jn.bodies), []).append(j)
    return pairs


def check_group(joints, bodies, name, a, b, n, R):
    """Revolute joints between the same two bodies compose (gimbal.py): a second one makes
    a universal joint, a third a gimbal. Refuse what cannot compose: the new joint `name`
    between bodies a and b, its unit axis n (world), R the rotation of body a now."""
    group = revolute_groups(joints).get(frozenset((a, b)), [])
    if not group:
        return
    names = listing([joints[k].name for k in group])
    pair = f"bodies {bodies[a].name!r} and {bodies[b].name!r}"
    where = (f"joint {name!r}: revolute joints between {pair} ({names} already) turn in "
             "order, each carried by the ones before it (a universal joint or gimbal)")
    if len(group) == 3:
        raise ValueError(f"{where}; at most three can")
    for k in group:
        jn = joints[k]
        if jn.bodies != (a, b):
            raise ValueError(f"{where}; list body_a and body_b in the same order as "
                             f"joint {jn.name!r} does")
        axis = R @ quat_to_matrix(jn.local_frame[0])[:, 0]
        if abs(float(axis @ n)) > 1e-6:
            angle = math.degrees(math.acos(max(-1.0, min(1.0, float(axis @ n)))))
            raise ValueError(f"{where}; its axis must be perpendicular to joint "
                             f"{jn.name!r}'s (they make {angle:.4g} degrees)")
    if len(group) == 2:
        middle = joints[group[1]]
        if middle.limits is None or max(abs(x) for x in middle.limits) > MAX_MIDDLE_ANGLE:
            got = ("no limits" if middle.limits is None
                   else f"limits {[round(math.degrees(x), 4) for x in middle.limits]} degrees")
            raise ValueError(f"{where}; the middle joint {middle.name!r} of a gimbal must be "
                             f"limited within +-{math.degrees(MAX_MIDDLE_ANGLE):.0f} degrees, "
                             f"away from gimbal lock at 90 (got {got})")


def coupling_spec(joints, j, lead, multiplier, offset, lower, upper):
    """add_coupling's record (leader's name, multiplier, offset, lower, upper) of joint j
    following joint `lead`, checked (see World.add_coupling): no joint follows itself or two
    leaders, and the chain of leaders ends at one that follows none."""
    where = f"joint {joints[j].name!r}"
    if j == lead:
        raise ValueError(f"{where}: a joint cannot follow itself")
    for k in (j, lead):
        if not HAS_COUPLING[joints[k].type]:
            raise ValueError(f"joint {joints[k].name!r}: only "
                             f"{scene_types_with('coupling')} joints can be coupled")
    m, o = float(multiplier), float(offset)
    if not (math.isfinite(m) and math.isfinite(o)):
        raise ValueError(f"{where}: multiplier and offset must be finite (got {m}, {o})")
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{where}: the coupling's lower and upper bounds must be finite "
                         f"(got {lo}, {hi})")
    if lo > hi:
        raise ValueError(f"{where}: the coupling's lower bound must not exceed its upper "
                         f"(got [{lo}, {hi}])")
    if joints[j].mimic is not None:
        raise ValueError(f"{where} follows {joints[j].mimic[0]!r} already")
    chain, k = [joints[j].name], lead    # the leader's own leaders, up to a root
    while True:
        chain.append(joints[k].name)
        if k == j:
            raise ValueError(f"{where}: the couplings would form a cycle "
                             f"({' -> '.join(map(repr, chain))}); a chain must end at "
                             "a joint that follows none")
        if joints[k].mimic is None:
            break
        k = entry_index(joints, joints[k].mimic[0], "joint", "")
    return (joints[lead].name, m, o, lo, hi)


def controller_spec(where, mode, *, kp, kd, target, sine, keyframes, implicit):
    """set_controller's record (mode, (kp, kd), set-point row, keyframes, implicit) of a
    controller (see World.set_controller), checked; None for mode "voltage" (none)."""
    if mode not in CONTROLLER_MODES:
        raise ValueError(f"{where}: controller mode must be one of {sorted(CONTROLLER_MODES)} "
                         f"(got {mode!r})")
    if CONTROLLER_MODES[mode] == CTRL_VOLTAGE:
        return None
    gains = []
    for name, value in (("kp", kp), ("kd", kd)):
        v = float(value)
        if not (math.isfinite(v) and v >= 0.0):
            raise ValueError(f"{where}: {name} must be a finite number >= 0 (got {value})")
        gains.append(v)
    row, keys = np.zeros(MOTOR_TRAJ), ()
    if sum(x is not None for x in (sine, keyframes)) > 1:
        raise ValueError(f"{where}: give sine or keyframes, not both")
    if sine is not None:
        values = [float(x) for x in sine]
        if len(values) not in (3, 4) or not all(map(math.isfinite, values)):
            raise ValueError(f"{where}: sine must be (offset, amplitude, frequency[, phase])"
                             f", finite numbers (got {sine})")
        row[:] = (TRAJ_SINE, *values, *([0.0] if len(values) == 3 else []))
    elif keyframes is not None:
        keys = tuple((float(t), float(v)) for t, v in keyframes)
        times = [t for t, _ in keys]
        if not keys or not all(math.isfinite(x) for k in keys for x in k) or any(
                b <= a for a, b in zip(times, times[1:])):
            raise ValueError(f"{where}: keyframes must be (t, value) pairs of finite numbers"
                             " with rising times")
        row[0] = TRAJ_KEYS
    else:
        t = float(target)
        if not math.isfinite(t):
            raise ValueError(f"{where}: target must be a finite number (got {target})")
        row[:2] = (TRAJ_CONSTANT, t)
    return (CONTROLLER_MODES[mode], tuple(gains), row, keys, bool(implicit))


def load_spec(body, force, torque, start, end):
    """add_load's record of a load on body index `body`, its numbers checked."""
    start, end = number("load: start", start), number("load: end", end)
    if not (math.isfinite(start) and start >= 0 and end > start):
        raise ValueError(f"load: need 0 <= start < end (got start={start}, end={end})")
    return LoadSpec(body, vector("force", force), vector("torque", torque), (start, end))
