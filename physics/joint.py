"""Joint types: the table of what each type is, and the dispatch to its row builder.

Every fact about a joint type is a column of JOINT_TABLE, one row per type code; the flat
arrays the kernels read (BLOCK_ROWS, BLOCK_KIND, ..., numba takes arrays and constants, not
Python objects) are derived from it below, and the code outside the kernels (World's checks,
IK, reports, scene validation, the app's text) looks types up in it rather than naming them.
What stays type-specific is math: each type's rows (its own module), its coordinate
(joint_state), and how the tree pass closes each kind of lock (tree.py). Adding a type:
ARCHITECTURE.md, "Adding a joint type".

Every joint type answers one protocol: `<type>_rows(J, C, j, xA, xB, rA, rB, qfA, qfB, ...)`
fills its blocks' Jacobians J[j] (MAX_BLOCKS, 3, 12) and position errors C[j] (MAX_BLOCKS, 3)
at the given poses and returns the joint coordinate; `<type>_state(...)` returns the coordinate
and its rate alone, for reports. The solver never looks at the type again.

The scene's four types (JOINT_TYPES) are what a joint is to its user. The model adds the types of
revolute joints that compose (gimbal.py): the World gives 2 or 3 revolute joints
between the same two bodies these types when it builds the model (`World._group_model`), and
they stay "revolute" everywhere else (their `scene` column).
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from .constraint import (
    KIND_ANGULAR,
    KIND_GENERAL,
    KIND_POINT,
    MAX_BLOCKS,
    SLOT_EQ0,
    SLOT_EQ1,
    SLOT_FRICTION,
    SLOT_LOWER,
    SLOT_UPPER,
)
from .fixed import fixed_rows
from .gimbal import gimbal_axis, gimbal_rows
from .jit import KERNEL
from .math3 import dot, quat_mul, quat_rotate
from .prismatic import prismatic_rows, prismatic_state
from .revolute import revolute_rows, revolute_state
from .spherical import spherical_rows, spherical_state

REVOLUTE, PRISMATIC, SPHERICAL, FIXED = 0, 1, 2, 3
# revolute joints in a group (gimbal.py): the first or second hinge of a
# universal joint, the first, second or third of a gimbal
UNIVERSAL_1, UNIVERSAL_2, GIMBAL_1, GIMBAL_2, GIMBAL_3 = 4, 5, 6, 7, 8


class Lock(NamedTuple):
    """What an equality slot (EQ0, EQ1) of a joint holds."""
    code: int          # LOCK_* below, for the kernels (tree.py closes each by its code)
    rows: int          # scalar rows in the block
    kind: int          # the block's structure (constraint.KIND_*)
    translates: bool   # its drift is drift of the bodies' centres: the tree pass closes it
                       # by translation (tree.py); otherwise by turning the child, or not at all
    turns: bool        # it locks rotation: the tree pass turns the child to close it


LOCK_NONE, LOCK_POINT, LOCK_GROUP_POINT, LOCK_ORIENTATION, LOCK_AXIS, LOCK_OFF_AXIS, \
    LOCK_UNIVERSAL = range(7)
P, A, G = KIND_POINT, KIND_ANGULAR, KIND_GENERAL
LOCKS = {
    "none": Lock(LOCK_NONE, 0, A, False, False),
    "point": Lock(LOCK_POINT, 3, P, True, False),              # the anchors meet (lock.py)
    "group_point": Lock(LOCK_GROUP_POINT, 3, P, True, False),  # a group's last anchors meet,
                                                               # turned by its hinges (gimbal.py)
    "orientation": Lock(LOCK_ORIENTATION, 3, A, False, True),  # the frames agree (lock.py)
    "axis": Lock(LOCK_AXIS, 2, A, False, True),                # the x axes agree (revolute.py)
    "off_axis": Lock(LOCK_OFF_AXIS, 2, G, True, False),        # anchor B on A's x axis
                                                               # (prismatic.py)
    "universal": Lock(LOCK_UNIVERSAL, 1, A, False, True),      # c_1 . c_2 = 0 (gimbal.py)
}
ANGULAR, LINEAR = "angular", "linear"
ANGLE, POSITION = ("angle", "rad"), ("position", "m")


class JointType(NamedTuple):
    """One row of JOINT_TABLE: every fact about one joint type code."""
    code: int          # the model's joint_type
    name: str          # its own name (the model's: a hinge in a group is "gimbal_2" here)
    scene: str         # what it is to the user: World.joint_types, scene files, reports
    locks: tuple       # the locks in the equality slots (EQ0, EQ1): LOCKS' keys
    motion: tuple      # its free motion (the motion subspace), in the joint frame at q = 0:
                       # (ANGULAR or LINEAR, axis 0-2: about or along the frame's x, y, z) each
    group: tuple       # (hinges in its group, its index there); (0, 0) for a joint alone
    coordinate: tuple  # (name, unit) of the coordinate its reports give (World.joint_coord_name)
    friction: bool     # Coulomb friction on its free motion: slot FRICTION, a row per dof
    limits: bool       # lower and upper limits on its coordinate: slots LOWER, UPPER, a row each
    motor: bool        # takes a DC motor, on its friction row (motor.py)
    coupling: bool     # can follow or lead a coupling (coupling.py; URDF's <mimic>)
    damping: bool      # viscous damping, on its friction rows (damper.py)

    @property
    def dofs(self):
        return len(self.motion)

    @property
    def linear(self):
        """Its coordinate is a length (its free motion slides), not an angle."""
        return any(kind == LINEAR for kind, _ in self.motion)


X_TURN, Y_TURN, Z_TURN = ((ANGULAR, 0),), ((ANGULAR, 1),), ((ANGULAR, 2),)
JOINT_TABLE = (
    # code, name, scene, locks (EQ0, EQ1),
    #   motion, group, coordinate, friction, limits, motor, coupling, damping
    JointType(REVOLUTE, "revolute", "revolute", ("point", "axis"),
              X_TURN, (0, 0), ANGLE, True, True, True, True, True),
    JointType(PRISMATIC, "prismatic", "prismatic", ("orientation", "off_axis"),
              ((LINEAR, 0),), (0, 0), POSITION, True, True, True, True, True),
    JointType(SPHERICAL, "spherical", "spherical", ("point", "none"),
              X_TURN + Y_TURN + Z_TURN, (0, 0), ANGLE, True, False, False, False, True),
    JointType(FIXED, "fixed", "fixed", ("point", "orientation"),   # (reports its angle as 0)
              (), (0, 0), ANGLE, False, False, False, False, False),
    # the hinges of a universal joint and of a gimbal (gimbal.py): the first holds the group's
    # point lock (and a universal joint's lock); each turns about its axis of the group frame
    JointType(UNIVERSAL_1, "universal_1", "revolute", ("group_point", "universal"),
              X_TURN, (2, 0), ANGLE, True, True, True, True, True),
    JointType(UNIVERSAL_2, "universal_2", "revolute", ("none", "none"),
              Y_TURN, (2, 1), ANGLE, True, True, True, True, True),
    JointType(GIMBAL_1, "gimbal_1", "revolute", ("group_point", "none"),
              X_TURN, (3, 0), ANGLE, True, True, True, True, True),
    JointType(GIMBAL_2, "gimbal_2", "revolute", ("none", "none"),
              Y_TURN, (3, 1), ANGLE, True, True, True, True, True),
    JointType(GIMBAL_3, "gimbal_3", "revolute", ("none", "none"),
              Z_TURN, (3, 2), ANGLE, True, True, True, True, True),
)
assert [t.code for t in JOINT_TABLE] == list(range(len(JOINT_TABLE)))

# ---- by name: the scene's types, and every row --------------------------------------------------
JOINT_TYPES = {t.name: t.code for t in JOINT_TABLE if t.scene == t.name}
JOINT_TYPE_NAMES = {v: k for k, v in JOINT_TYPES.items()}
JOINT_TYPE_INFO = {t.name: t for t in JOINT_TABLE}   # a scene type's name: its row
# the type of hinge `index` of a group of `hinges` (World._group_model)
GROUP_TYPE = {t.group: t.code for t in JOINT_TABLE if t.group[0] > 0}


def scene_types_with(column):
    """The scene's types whose `column` (a JointType field, or a test of a JointType) is
    true, as words for messages ("revolute and prismatic")."""
    test = column if callable(column) else (lambda t: getattr(t, column))
    names = [name for name in JOINT_TYPES if test(JOINT_TYPE_INFO[name])]
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


# ---- derived: the flat arrays the kernels read ---------------------------------------------------
def _slot_column(of_lock, of_limit, of_friction, dtype):
    """(ntype, MAX_BLOCKS) array: of_lock(Lock) for EQ0, EQ1, of_limit(type) for LOWER and
    UPPER, of_friction(type) for FRICTION."""
    out = np.zeros((len(JOINT_TABLE), MAX_BLOCKS), dtype=dtype)
    for t in JOINT_TABLE:
        out[t.code, SLOT_EQ0] = of_lock(LOCKS[t.locks[0]])
        out[t.code, SLOT_EQ1] = of_lock(LOCKS[t.locks[1]])
        out[t.code, SLOT_LOWER] = out[t.code, SLOT_UPPER] = of_limit(t)
        out[t.code, SLOT_FRICTION] = of_friction(t)
    return out


# of each type: the hinges in its group and its index there (0 for the scene's four types)
GROUP_HINGES = np.array([t.group[0] for t in JOINT_TABLE], dtype=np.int64)
GROUP_INDEX = np.array([t.group[1] for t in JOINT_TABLE], dtype=np.int64)
# rows per block slot (EQ0, EQ1, LOWER, UPPER, FRICTION): a limit row each, a friction row a dof
BLOCK_ROWS = _slot_column(lambda lock: lock.rows, lambda t: int(t.limits),
                          lambda t: t.dofs if t.friction else 0, np.int64)
# blocks whose drift is drift of the bodies' centres (point locks, prismatic off-axis and
# limit rows): the tree pass closes them exactly by translation (tree.py)
BLOCK_TRANSLATES = _slot_column(lambda lock: lock.translates, lambda t: t.limits and t.linear,
                                lambda t: False, np.bool_)
# the blocks' structure: limits and friction are angular about an angle, general along a length
BLOCK_KIND = _slot_column(lambda lock: lock.kind, lambda t: G if t.linear else A,
                          lambda t: G if t.linear else A, np.int64)
# the locks in the equality slots (LOCK_*), and the one of them that locks rotation (or NONE)
BLOCK_LOCK = np.array([[LOCKS[name].code for name in t.locks] for t in JOINT_TABLE],
                      dtype=np.int64)
ROTATION_LOCK = np.array([next((LOCKS[n].code for n in t.locks if LOCKS[n].turns), LOCK_NONE)
                          for t in JOINT_TABLE], dtype=np.int64)
DOFS = np.array([t.dofs for t in JOINT_TABLE], dtype=np.int64)
COORD_LINEAR = np.array([t.linear for t in JOINT_TABLE], dtype=np.bool_)   # m, not rad
HAS_FRICTION = np.array([t.friction for t in JOINT_TABLE], dtype=np.bool_)
HAS_LIMITS = np.array([t.limits for t in JOINT_TABLE], dtype=np.bool_)
HAS_MOTOR = np.array([t.motor for t in JOINT_TABLE], dtype=np.bool_)
HAS_COUPLING = np.array([t.coupling for t in JOINT_TABLE], dtype=np.bool_)
HAS_DAMPING = np.array([t.damping for t in JOINT_TABLE], dtype=np.bool_)
assert BLOCK_ROWS.shape[1] == MAX_BLOCKS == BLOCK_TRANSLATES.shape[1]


@njit(**KERNEL)
def joint_rows(J, C, j, jtype, pos, quat, a, b, local_anchor, local_frame, prev_coord):
    """Build the rows of joint j at the poses (pos, quat) into J[j], C[j];
    local_anchor (njoint, 4, 3) (model.py), local_frame (njoint, 2, 4)."""
    xa = (pos[a, 0], pos[a, 1], pos[a, 2])
    xb = (pos[b, 0], pos[b, 1], pos[b, 2])
    qa = (quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3])
    qb = (quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3])
    ra = quat_rotate(qa, (local_anchor[j, 0, 0], local_anchor[j, 0, 1], local_anchor[j, 0, 2]))
    rb = quat_rotate(qb, (local_anchor[j, 1, 0], local_anchor[j, 1, 1], local_anchor[j, 1, 2]))
    qfa = quat_mul(qa, (local_frame[j, 0, 0], local_frame[j, 0, 1], local_frame[j, 0, 2],
                        local_frame[j, 0, 3]))
    qfb = quat_mul(qb, (local_frame[j, 1, 0], local_frame[j, 1, 1], local_frame[j, 1, 2],
                        local_frame[j, 1, 3]))
    if jtype == REVOLUTE:
        return revolute_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_coord)
    if jtype == PRISMATIC:
        return prismatic_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
    if jtype == SPHERICAL:
        return spherical_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
    if GROUP_HINGES[jtype] > 0:
        return gimbal_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_coord, GROUP_HINGES[jtype],
                           GROUP_INDEX[jtype],
                           (local_anchor[j, 2, 0], local_anchor[j, 2, 1], local_anchor[j, 2, 2]),
                           (local_anchor[j, 3, 0], local_anchor[j, 3, 1], local_anchor[j, 3, 2]))
    if jtype == FIXED:
        return fixed_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
    return 0.0   # not a type of JOINT_TABLE


@njit(**KERNEL)
def joint_state(j, jtype, pos, quat, vel, angvel, a, b, local_anchor, local_frame, prev_coord):
    """(coordinate, velocity) of joint j: angle (rad, unwrapped) and rad/s, or position (m) and
    m/s; spherical: relative rotation angle and |wB - wA|; a type without free motion (fixed):
    (0, 0)."""
    if DOFS[jtype] == 0:
        return 0.0, 0.0
    qa = (quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3])
    qb = (quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3])
    qfa = quat_mul(qa, (local_frame[j, 0, 0], local_frame[j, 0, 1], local_frame[j, 0, 2],
                        local_frame[j, 0, 3]))
    qfb = quat_mul(qb, (local_frame[j, 1, 0], local_frame[j, 1, 1], local_frame[j, 1, 2],
                        local_frame[j, 1, 3]))
    wa = (angvel[a, 0], angvel[a, 1], angvel[a, 2])
    wb = (angvel[b, 0], angvel[b, 1], angvel[b, 2])
    if jtype == REVOLUTE:
        return revolute_state(qfa, qfb, wa, wb, prev_coord)
    if jtype == SPHERICAL:
        return spherical_state(qfa, qfb, wa, wb)
    if GROUP_HINGES[jtype] > 0:
        angle, d = gimbal_axis(qfa, qfb, GROUP_HINGES[jtype], GROUP_INDEX[jtype], prev_coord)
        return angle, dot((wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]), d)
    if jtype == PRISMATIC:
        ra = quat_rotate(qa, (local_anchor[j, 0, 0], local_anchor[j, 0, 1],
                              local_anchor[j, 0, 2]))
        rb = quat_rotate(qb, (local_anchor[j, 1, 0], local_anchor[j, 1, 1],
                              local_anchor[j, 1, 2]))
        return prismatic_state((pos[a, 0], pos[a, 1], pos[a, 2]),
                               (pos[b, 0], pos[b, 1], pos[b, 2]), ra, rb, qfa,
                               (vel[a, 0], vel[a, 1], vel[a, 2]), wa,
                               (vel[b, 0], vel[b, 1], vel[b, 2]), wb)
    return 0.0, 0.0   # not a type of JOINT_TABLE
