"""Joint types and the dispatch from a joint to its row builder.

Every joint type answers one protocol: `<type>_rows(J, C, j, xA, xB, rA, rB, qfA, qfB, ...)`
fills its blocks' Jacobians J[j] (MAX_BLOCKS, 3, 12) and position errors C[j] (MAX_BLOCKS, 3)
at the given poses and returns the joint coordinate; `<type>_state(...)` returns the coordinate
and its rate alone, for reports. The solver never looks at the type again.

The scene's four types (JOINT_TYPES) are what a joint is to its user. The model adds the types of
revolute joints that compose (gimbal.py): the World gives 2 or 3 revolute joints
between the same two bodies these types when it builds the model (`World._group_model`), and
they stay "revolute" everywhere else.
"""
import numpy as np
from numba import njit

from .constraint import KIND_ANGULAR, KIND_GENERAL, KIND_POINT, MAX_BLOCKS
from .fixed import fixed_rows
from .gimbal import gimbal_axis, gimbal_rows
from .jit import KERNEL
from .math3 import dot, quat_mul, quat_rotate
from .prismatic import prismatic_rows, prismatic_state
from .revolute import revolute_rows, revolute_state
from .spherical import spherical_rows, spherical_state

REVOLUTE, PRISMATIC, SPHERICAL, FIXED = 0, 1, 2, 3
JOINT_TYPES = {"revolute": REVOLUTE, "prismatic": PRISMATIC, "spherical": SPHERICAL, "fixed": FIXED}
JOINT_TYPE_NAMES = {v: k for k, v in JOINT_TYPES.items()}
# revolute joints in a group (gimbal.py): the first or second hinge of a
# universal joint, the first, second or third of a gimbal
UNIVERSAL_1, UNIVERSAL_2, GIMBAL_1, GIMBAL_2, GIMBAL_3 = 4, 5, 6, 7, 8
# of each type: the hinges in its group and its index there (0 for the scene's four types)
GROUP_HINGES = np.array([0, 0, 0, 0, 2, 2, 3, 3, 3], dtype=np.int64)
GROUP_INDEX = np.array([0, 0, 0, 0, 0, 1, 0, 1, 2], dtype=np.int64)

# rows per block slot (EQ0, EQ1, LOWER, UPPER, FRICTION) for each type
BLOCK_ROWS = np.array([
    [3, 2, 1, 1, 1],   # revolute
    [3, 2, 1, 1, 1],   # prismatic
    [3, 0, 0, 0, 3],   # spherical
    [3, 3, 0, 0, 0],   # fixed
    [3, 1, 1, 1, 1],   # universal, first hinge: point lock, universal lock, its own rows
    [0, 0, 1, 1, 1],   # universal, second hinge
    [3, 0, 1, 1, 1],   # gimbal, first hinge: point lock, its own rows
    [0, 0, 1, 1, 1],   # gimbal, second hinge
    [0, 0, 1, 1, 1],   # gimbal, third hinge
], dtype=np.int64)
# blocks whose drift is drift of the bodies' centres (point locks, prismatic off-axis and
# limit rows): the tree pass closes them exactly by translation (tree.py)
BLOCK_TRANSLATES = np.array([
    [1, 0, 0, 0, 0],
    [0, 1, 1, 1, 0],
    [1, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
], dtype=np.bool_)
assert BLOCK_ROWS.shape[1] == MAX_BLOCKS == BLOCK_TRANSLATES.shape[1]
assert len(GROUP_HINGES) == len(GROUP_INDEX) == len(BLOCK_ROWS) == len(BLOCK_TRANSLATES)
P, A, G = KIND_POINT, KIND_ANGULAR, KIND_GENERAL
BLOCK_KIND = np.array([
    [P, A, A, A, A],   # revolute: point lock, axis lock, limits and friction about the axis
    [A, G, G, G, G],   # prismatic: orientation lock, off-axis lock, limits and friction
    [P, A, A, A, A],   # spherical: point lock, friction ball
    [P, A, A, A, A],   # fixed: point lock, orientation lock
    [P, A, A, A, A],   # universal, first hinge: point lock, universal lock, rows about d_1
    [A, A, A, A, A],   # the other hinges of a group: rows about d_i
    [P, A, A, A, A],   # gimbal, first hinge
    [A, A, A, A, A],
    [A, A, A, A, A],
], dtype=np.int64)
HAS_FRICTION = BLOCK_ROWS[:, 4] > 0
HAS_LIMITS = BLOCK_ROWS[:, 2] > 0


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
    if jtype >= UNIVERSAL_1:
        return gimbal_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_coord, GROUP_HINGES[jtype],
                           GROUP_INDEX[jtype],
                           (local_anchor[j, 2, 0], local_anchor[j, 2, 1], local_anchor[j, 2, 2]),
                           (local_anchor[j, 3, 0], local_anchor[j, 3, 1], local_anchor[j, 3, 2]))
    return fixed_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)


@njit(**KERNEL)
def joint_state(j, jtype, pos, quat, vel, angvel, a, b, local_anchor, local_frame, prev_coord):
    """(coordinate, velocity) of joint j: angle (rad, unwrapped) and rad/s, or position (m) and
    m/s; spherical: relative rotation angle and |wB - wA|; fixed: (0, 0)."""
    if jtype == FIXED:
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
    if jtype >= UNIVERSAL_1:
        angle, d = gimbal_axis(qfa, qfb, GROUP_HINGES[jtype], GROUP_INDEX[jtype], prev_coord)
        return angle, dot((wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]), d)
    ra = quat_rotate(qa, (local_anchor[j, 0, 0], local_anchor[j, 0, 1], local_anchor[j, 0, 2]))
    rb = quat_rotate(qb, (local_anchor[j, 1, 0], local_anchor[j, 1, 1], local_anchor[j, 1, 2]))
    return prismatic_state((pos[a, 0], pos[a, 1], pos[a, 2]), (pos[b, 0], pos[b, 1], pos[b, 2]),
                           ra, rb, qfa, (vel[a, 0], vel[a, 1], vel[a, 2]), wa,
                           (vel[b, 0], vel[b, 1], vel[b, 2]), wb)
