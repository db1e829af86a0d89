"""Prismatic (slider) joint: one translational degree of freedom along the joint axis.

Symbols as in lock.py; d = (xB + rB) - (xA + rA) the anchor separation, a = R(qfA) e_x the
sliding direction fixed in A, u1 = R(qfA) e_y, u2 = R(qfA) e_z.

    slot 0  orientation lock (3 rows)
    slot 1  off-axis lock (2 rows): C_k = d . u_k
            Cdot_k = (vB + wB x rB - vA - wA x rA) . u_k + d . (wA x u_k)
            row k: J = [-u_k, -((rA + d) x u_k), u_k, rB x u_k]
    s       = d . a  (the joint position), row along a: J_a = [-a, -((rA + d) x a), a, rB x a]
    slot 2  lower limit: C = s - lower, J = J_a;   slot 3  upper limit: C = upper - s, J = -J_a
    slot 4  friction (1 row): J = J_a, |p| <= F_max dt   (paper 000: B = [d, r x d])
"""
from numba import njit

from .constraint import SLOT_EQ0, SLOT_EQ1, SLOT_FRICTION, SLOT_LOWER, SLOT_UPPER, set_row
from .jit import KERNEL
from .lock import orientation_lock
from .math3 import add, cross, dot, neg, quat_rotate, sub

_JIT = KERNEL


@njit(**_JIT)
def prismatic_rows(J, C, j, xa, xb, ra, rb, qfa, qfb):
    """Fill the prismatic blocks; returns the joint position s."""
    orientation_lock(J, C, j, SLOT_EQ0, qfa, qfb)
    d = sub(add(xb, rb), add(xa, ra))
    arm_a = add(ra, d)
    a = quat_rotate(qfa, (1.0, 0.0, 0.0))
    u1 = quat_rotate(qfa, (0.0, 1.0, 0.0))
    u2 = quat_rotate(qfa, (0.0, 0.0, 1.0))
    set_row(J, j, SLOT_EQ1, 0, neg(u1), neg(cross(arm_a, u1)), u1, cross(rb, u1))
    set_row(J, j, SLOT_EQ1, 1, neg(u2), neg(cross(arm_a, u2)), u2, cross(rb, u2))
    C[j, SLOT_EQ1, 0] = dot(d, u1)
    C[j, SLOT_EQ1, 1] = dot(d, u2)

    ang_a = neg(cross(arm_a, a))
    ang_b = cross(rb, a)
    set_row(J, j, SLOT_LOWER, 0, neg(a), ang_a, a, ang_b)
    set_row(J, j, SLOT_UPPER, 0, a, neg(ang_a), neg(a), neg(ang_b))
    set_row(J, j, SLOT_FRICTION, 0, neg(a), ang_a, a, ang_b)
    return dot(d, a)


@njit(**_JIT)
def prismatic_state(xa, xb, ra, rb, qfa, va, wa, vb, wb):
    """(position s = d . a, its rate J_a . (vA, wA, vB, wB))."""
    d = sub(add(xb, rb), add(xa, ra))
    a = quat_rotate(qfa, (1.0, 0.0, 0.0))
    speed = dot(sub(vb, va), a) - dot(wa, cross(add(ra, d), a)) + dot(wb, cross(rb, a))
    return dot(d, a), speed
