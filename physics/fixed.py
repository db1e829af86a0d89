"""Fixed (weld) joint: no relative motion.

Symbols as in lock.py.
    slot 0  point lock (3 rows)
    slot 1  orientation lock (3 rows)
No limits, no friction; its coordinate is reported as 0.
"""
from numba import njit

from .constraint import SLOT_EQ0, SLOT_EQ1
from .jit import KERNEL
from .lock import orientation_lock, point_lock

_JIT = KERNEL


@njit(**_JIT)
def fixed_rows(J, C, j, xa, xb, ra, rb, qfa, qfb):
    point_lock(J, C, j, SLOT_EQ0, xa, xb, ra, rb)
    orientation_lock(J, C, j, SLOT_EQ1, qfa, qfb)
    return 0.0
