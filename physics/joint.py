"""Joint types and the dispatch from a joint to its row builder.

Every joint type answers one protocol: `<type>_rows(J, C, xA, xB, rA, rB, qfA, qfB, ...)` fills
its blocks' Jacobians J (MAX_BLOCKS, 3, 12) and position errors C (MAX_BLOCKS, 3) at the given
poses and returns the joint coordinate. The solver never looks at the type again.
"""
import numpy as np
from numba import njit

from .constraint import MAX_BLOCKS
from .fixed import fixed_rows
from .math3 import quat_mul, quat_rotate
from .prismatic import prismatic_rows
from .revolute import revolute_rows
from .spherical import spherical_rows

REVOLUTE, PRISMATIC, SPHERICAL, FIXED = 0, 1, 2, 3
JOINT_TYPES = {"revolute": REVOLUTE, "prismatic": PRISMATIC, "spherical": SPHERICAL, "fixed": FIXED}
JOINT_TYPE_NAMES = {v: k for k, v in JOINT_TYPES.items()}

# rows per block slot (EQ0, EQ1, LOWER, UPPER, FRICTION) for each type
BLOCK_ROWS = np.array([
    [3, 2, 1, 1, 1],   # revolute
    [3, 2, 1, 1, 1],   # prismatic
    [3, 0, 0, 0, 3],   # spherical
    [3, 3, 0, 0, 0],   # fixed
], dtype=np.int64)
# blocks whose drift is drift of the bodies' centres (point locks, prismatic off-axis and
# limit rows): orientations are integrated exactly from w, so all position sweeps but the last
# remove their error by translation alone, which keeps joint angles exact
BLOCK_TRANSLATES = np.array([
    [1, 0, 0, 0, 0],
    [0, 1, 1, 1, 0],
    [1, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
], dtype=np.bool_)
assert BLOCK_ROWS.shape[1] == MAX_BLOCKS == BLOCK_TRANSLATES.shape[1]
HAS_FRICTION = BLOCK_ROWS[:, 4] > 0
HAS_LIMITS = BLOCK_ROWS[:, 2] > 0


@njit(nogil=True, cache=True)
def joint_rows(J, C, j, jtype, pos, quat, a, b, local_anchor, local_frame, prev_coord):
    """Build the rows of joint j at the poses (pos, quat) into J[j], C[j];
    local_anchor (njoint, 2, 3), local_frame (njoint, 2, 4)."""
    xa = (pos[a, 0], pos[a, 1], pos[a, 2])
    xb = (pos[b, 0], pos[b, 1], pos[b, 2])
    qa = (quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3])
    qb = (quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3])
    ra = quat_rotate(qa, (local_anchor[j, 0, 0], local_anchor[j, 0, 1], local_anchor[j, 0, 2]))
    rb = quat_rotate(qb, (local_anchor[j, 1, 0], local_anchor[j, 1, 1], local_anchor[j, 1, 2]))
    qfa = quat_mul(qa, (local_frame[j, 0, 0], local_frame[j, 0, 1], local_frame[j, 0, 2], local_frame[j, 0, 3]))
    qfb = quat_mul(qb, (local_frame[j, 1, 0], local_frame[j, 1, 1], local_frame[j, 1, 2], local_frame[j, 1, 3]))
    if jtype == REVOLUTE:
        return revolute_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_coord)
    if jtype == PRISMATIC:
        return prismatic_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
    if jtype == SPHERICAL:
        return spherical_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
    return fixed_rows(J, C, j, xa, xb, ra, rb, qfa, qfb)
