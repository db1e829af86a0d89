"""Spherical (ball) joint: three rotational degrees of freedom about the anchor.

Symbols as in lock.py.
    slot 0  point lock (3 rows)
    slot 4  friction (3 rows): row i: J = [0, -e_i, 0, e_i], Cdot = wB - wA;
            K = IA^-1 + IB^-1 (paper 000), the accumulated 3-vector p is clamped jointly onto the
            ball ||p|| <= tau_max dt (paper 000, eq. 16), never row by row.
    angle   the rotation angle of q_rel = conj(qfA) qfB, in [0, pi] (reported only, no limits)
"""
import math

from numba import njit

from .constraint import SLOT_EQ0, SLOT_FRICTION, set_row
from .jit import KERNEL
from .lock import point_lock
from .math3 import neg, quat_conj_mul

_JIT = KERNEL
_ZERO = (0.0, 0.0, 0.0)
_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@njit(**_JIT)
def spherical_rows(J, C, j, xa, xb, ra, rb, qfa, qfb):
    """Fill the spherical blocks. Returns 0: a ball joint has no limit rows that would need its
    angle (reports take it from spherical_state)."""
    point_lock(J, C, j, SLOT_EQ0, xa, xb, ra, rb)
    for i in range(3):
        e = _AXES[i]
        set_row(J, j, SLOT_FRICTION, i, _ZERO, neg(e), _ZERO, e)
    return 0.0


@njit(**_JIT)
def spherical_state(qfa, qfb, wa, wb):
    """(relative rotation angle, |wB - wA|)."""
    rel = quat_conj_mul(qfa, qfb)
    s = math.sqrt(rel[1] * rel[1] + rel[2] * rel[2] + rel[3] * rel[3])
    dw = (wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])
    return (2.0 * math.atan2(s, abs(rel[0])),
            math.sqrt(dw[0] * dw[0] + dw[1] * dw[1] + dw[2] * dw[2]))
