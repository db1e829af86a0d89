"""The two locks joint types share: the point lock and the orientation lock.

Symbols: xA, xB body centres; qA, qB body orientations; rA = R(qA) la, rB = R(qB) lb the world
offsets from the centres to the joint anchor; qfA = qA fa, qfB = qB fb the joint frame on each
body (its x axis is the joint axis); e_i the world axes.

Point lock (3 rows, spherical / revolute / fixed):
    C     = (xB + rB) - (xA + rA)
    Cdot  = vB + wB x rB - vA - wA x rA
    row i: J = [-e_i, -(rA x e_i), e_i, rB x e_i]

Orientation lock (3 rows, fixed / prismatic):
    q_rel = conj(qfA) qfB ;  C = R(qfA) theta(q_rel)  (theta: rotation vector, zero when aligned)
    Cdot  = wB - wA
    row i: J = [0, -e_i, 0, e_i]
"""
from numba import njit

from .constraint import set_row
from .jit import KERNEL
from .math3 import add, cross, neg, quat_conj_mul, quat_rotate, rotation_vector, sub

_JIT = KERNEL
_ZERO = (0.0, 0.0, 0.0)
_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@njit(**_JIT)
def point_lock(J, C, j, s, xa, xb, ra, rb):
    err = sub(add(xb, rb), add(xa, ra))
    for i in range(3):
        e = _AXES[i]
        set_row(J, j, s, i, neg(e), neg(cross(ra, e)), e, cross(rb, e))
        C[j, s, i] = err[i]


@njit(**_JIT)
def orientation_lock(J, C, j, s, qfa, qfb):
    err = quat_rotate(qfa, rotation_vector(quat_conj_mul(qfa, qfb)))
    for i in range(3):
        e = _AXES[i]
        set_row(J, j, s, i, _ZERO, neg(e), _ZERO, e)
        C[j, s, i] = err[i]
