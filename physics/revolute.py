"""Revolute (hinge) joint: one rotational degree of freedom about the joint axis.

Symbols as in lock.py; a = R(qfA) e_x the axis on A, b = R(qfB) e_x the axis on B,
u1 = R(qfA) e_y and u2 = R(qfA) e_z span the plane normal to a.

    slot 0  point lock (3 rows)                                     C = anchor separation
    slot 1  axis lock (2 rows):  C_k = (a x b) . u_k,  Cdot_k = (wB - wA) . u_k
            row k: J = [0, -u_k, 0, u_k]                            (paper 002, eq. 1-2: G2, G3)
    angle   theta = 2 atan2(q_rel.x, q_rel.w), q_rel = conj(qfA) qfB, unwrapped across +-pi
    slot 2  lower limit: C = theta - lower,  J = [0, -a, 0, a]
    slot 3  upper limit: C = upper - theta,  J = [0, a, 0, -a]
    slot 4  friction (1 row): J = [0, -a, 0, a]; |p| <= tau_max dt  (paper 000: B = [0 n], [0 -n])
"""
import math

from numba import njit

from .constraint import SLOT_EQ0, SLOT_EQ1, SLOT_FRICTION, SLOT_LOWER, SLOT_UPPER, set_row
from .jit import KERNEL
from .lock import point_lock
from .math3 import cross, dot, neg, quat_conj_mul, quat_rotate, wrap_angle

_JIT = KERNEL
_ZERO = (0.0, 0.0, 0.0)


@njit(**_JIT)
def revolute_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_angle):
    """Fill the revolute blocks; returns the unwrapped joint angle."""
    point_lock(J, C, j, SLOT_EQ0, xa, xb, ra, rb)
    a = quat_rotate(qfa, (1.0, 0.0, 0.0))
    b = quat_rotate(qfb, (1.0, 0.0, 0.0))
    u1 = quat_rotate(qfa, (0.0, 1.0, 0.0))
    u2 = quat_rotate(qfa, (0.0, 0.0, 1.0))
    misalign = cross(a, b)
    set_row(J, j, SLOT_EQ1, 0, _ZERO, neg(u1), _ZERO, u1)
    set_row(J, j, SLOT_EQ1, 1, _ZERO, neg(u2), _ZERO, u2)
    C[j, SLOT_EQ1, 0] = dot(misalign, u1)
    C[j, SLOT_EQ1, 1] = dot(misalign, u2)

    rel = quat_conj_mul(qfa, qfb)
    angle = prev_angle + wrap_angle(2.0 * math.atan2(rel[1], rel[0]) - prev_angle)
    set_row(J, j, SLOT_LOWER, 0, _ZERO, neg(a), _ZERO, a)
    set_row(J, j, SLOT_UPPER, 0, _ZERO, a, _ZERO, neg(a))
    set_row(J, j, SLOT_FRICTION, 0, _ZERO, neg(a), _ZERO, a)
    return angle


@njit(**_JIT)
def revolute_state(qfa, qfb, wa, wb, prev_angle):
    """(unwrapped angle, angular velocity (wB - wA) . a)."""
    rel = quat_conj_mul(qfa, qfb)
    angle = prev_angle + wrap_angle(2.0 * math.atan2(rel[1], rel[0]) - prev_angle)
    a = quat_rotate(qfa, (1.0, 0.0, 0.0))
    return angle, dot((wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]), a)
