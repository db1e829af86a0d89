"""Revolute joints that compose: a universal joint (2 hinges) or a gimbal (3).

Two or three revolute joints between the same two bodies with mutually perpendicular axes
a_1, a_2 (, a_3) turn in the order listed, each axis and anchor carried by the ones before
it, as MuJoCo's joints in one body do:

    R(qfB) = R(qfA) Rx(q_1) Ry(q_2) [Rz(q_3)]

where the joint frame fA = fB (x = a_1, y = a_2, z = a_1 x a_2 at q = 0) is the group's, the
same for each of its joints (the third joint's frame is turned half a turn about y when
a_3 = -(a_1 x a_2), so that its z is a_3). Each hinge stays a joint of its own, with its angle,
limits, friction, damping, motor and coupling; the group needs no intermediate body.

Symbols as in lock.py; c_1 = R(qfA) e_x (on A), c_3 = R(qfB) e_z (on B),
c_2 = R(qfA) (0, cos q_1, sin q_1) (the middle axis, turned by q_1). R = R(conj(qfA) qfB).

    angles  q_1 = atan2(-R_12, R_22),  q_2 = atan2(R_02, sqrt(R_12^2 + R_22^2)),
            q_3 = atan2(-R_01, R_00)                         (unwrapped across +-pi like revolute)
    rates   wB - wA = c_1 q_1' + c_2 q_2' + c_3 q_3', so q_i' = d_i . (wB - wA) with the dual
            basis (d_i . c_k = delta_ik):
                d_1 = (c_2 x c_3) / cos q_2,  d_2 = c_2,  d_3 = (c_1 x c_2) / cos q_2
            (gimbal lock at q_2 = +-pi/2: the middle joint must be limited inside it; cos q_2 is
            kept >= MIN_COS in the rows). A universal joint (no third hinge) has c_2 = R(qfB) e_y
            and d_i = c_i: c_1 and c_2 stay perpendicular while its lock holds.
    anchors the hinges' anchors p_1, p_2 (, p_3) may differ: u_12 = p_2 - p_1, u_23 = p_3 - p_2
            in the group frame at q = 0 (model.joint_local_anchor[j, 2:4] of the first hinge).
            u_12 turns with hinge 1, u_23 with hinges 1 and 2, so with rA, rB the first hinge's
            own anchor offsets, the last anchor seen from A and from B is
                oA = R(qfA) (Rx(q_1) u_12 + Rx(q_1) Ry(q_2) u_23),  oB = R(qfB) (u_12 + u_23)
            and  d oA/dt = wA x oA + (c_1 x oA) q_1' + (c_2 x o_23) q_2',  o_23 the second term.

    slot 0  point lock (3 rows), on the group's first joint: the last anchor on A and on B meet
            C = (xB + rB + oB) - (xA + rA + oA)
            row i: J = [-e_i, -((rA + oA) x e_i) + g_i, e_i, (rB + oB) x e_i - g_i],
            g_i = (c_1 x oA)_i d_1 + (c_2 x o_23)_i d_2          (lock.point_lock when u = 0)
    slot 1  universal lock (1 row), on a universal joint's first joint: c_1 . c_2 = 0
            C = c_1 . c_2 = R_01,  Cdot = (wB - wA) . (c_2 x c_1),  J = [0, -n, 0, n], n = c_2 x c_1
    slot 2  lower limit of hinge i: C = q_i - lower,  J = [0, -d_i, 0, d_i]
    slot 3  upper limit of hinge i: C = upper - q_i,  J = [0, d_i, 0, -d_i]
    slot 4  friction of hinge i (1 row): J = [0, -d_i, 0, d_i]; |p| <= tau_max dt; the motor,
            damper and coupling rows of hinge i take this row, as a revolute joint's take its axis.
"""
import math

from numba import njit

from .constraint import SLOT_EQ0, SLOT_EQ1, SLOT_FRICTION, SLOT_LOWER, SLOT_UPPER, set_row
from .jit import KERNEL
from .lock import point_lock
from .math3 import add, cross, dot, neg, quat_conj_mul, quat_rotate, scale, wrap_angle

_JIT = KERNEL
_ZERO = (0.0, 0.0, 0.0)
# the rows of the outer hinges of a gimbal divide by cos q_2: kept finite near gimbal lock
MIN_COS = 1e-2
# how far from gimbal lock a gimbal's middle joint must be limited (rad): 85 degrees
MAX_MIDDLE_ANGLE = math.radians(85.0)


@njit(**_JIT)
def gimbal_axis(qfa, qfb, hinges, index, prev_angle):
    """(unwrapped angle, d_index) of hinge `index` (0-based) of a group of `hinges`."""
    w, x, y, z = quat_conj_mul(qfa, qfb)
    r12 = 2.0 * (y * z - w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    if index == 0:
        raw = math.atan2(-r12, r22)
    elif index == 1:
        raw = math.atan2(2.0 * (x * z + w * y), math.sqrt(r12 * r12 + r22 * r22))
    else:
        raw = math.atan2(-2.0 * (x * y - w * z), 1.0 - 2.0 * (y * y + z * z))
    angle = prev_angle + wrap_angle(raw - prev_angle)
    c1 = quat_rotate(qfa, (1.0, 0.0, 0.0))
    if hinges == 2:
        return angle, (c1 if index == 0 else quat_rotate(qfb, (0.0, 1.0, 0.0)))
    # c_2 = R(qfA) (0, cos q_1, sin q_1), cos q_2 = sqrt(R_12^2 + R_22^2) >= 0
    cos_q2 = math.sqrt(r12 * r12 + r22 * r22)
    c2 = quat_rotate(qfa, (0.0, r22 / max(cos_q2, 1e-300), -r12 / max(cos_q2, 1e-300)))
    if index == 1:
        return angle, c2
    inv = 1.0 / max(cos_q2, MIN_COS)
    if index == 0:
        return angle, scale(cross(c2, quat_rotate(qfb, (0.0, 0.0, 1.0))), inv)
    return angle, scale(cross(c1, c2), inv)


@njit(**_JIT)
def gimbal_offsets(qfa, qfb, u12, u23):
    """(oA, oB, o_23, c_2): where the group's last anchor lies from its first hinge's anchor,
    seen from A (turned by the hinges) and from B, the part u_23 contributes to oA, and the
    middle axis c_2 = R(qfA) (0, cos q_1, sin q_1)."""
    w, x, y, z = quat_conj_mul(qfa, qfb)
    r12 = 2.0 * (y * z - w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    r02 = 2.0 * (x * z + w * y)
    cos_q2 = math.sqrt(r12 * r12 + r22 * r22)
    inv = 1.0 / max(cos_q2, 1e-300)
    c, s = r22 * inv, -r12 * inv            # cos q_1, sin q_1
    # Ry(q_2) u_23, then Rx(q_1) of it and of u_12
    v0 = cos_q2 * u23[0] + r02 * u23[2]
    v2 = -r02 * u23[0] + cos_q2 * u23[2]
    o23 = quat_rotate(qfa, (v0, c * u23[1] - s * v2, s * u23[1] + c * v2))
    o12 = quat_rotate(qfa, (u12[0], c * u12[1] - s * u12[2], s * u12[1] + c * u12[2]))
    ob = quat_rotate(qfb, (u12[0] + u23[0], u12[1] + u23[1], u12[2] + u23[2]))
    return ((o12[0] + o23[0], o12[1] + o23[1], o12[2] + o23[2]), ob, o23,
            quat_rotate(qfa, (0.0, c, s)))


@njit(**_JIT)
def gimbal_rows(J, C, j, xa, xb, ra, rb, qfa, qfb, prev_angle, hinges, index, u12, u23):
    """Fill the blocks of hinge `index` of a group of `hinges`; returns its unwrapped angle."""
    angle, d = gimbal_axis(qfa, qfb, hinges, index, prev_angle)
    if index == 0:
        oa, ob, o23, c2 = gimbal_offsets(qfa, qfb, u12, u23)
        point_lock(J, C, j, SLOT_EQ0, xa, xb, add(ra, oa), add(rb, ob))
        if oa[0] != 0.0 or oa[1] != 0.0 or oa[2] != 0.0:
            # the anchor turns with the hinges: g_i = (c_1 x oA)_i d_1 + (c_2 x o_23)_i d_2
            # (d_2 = c_2; a universal joint has u_23 = 0, so o_23 = 0)
            g1 = cross(quat_rotate(qfa, (1.0, 0.0, 0.0)), oa)
            g2 = cross(c2, o23)
            for i in range(3):
                for k in range(3):
                    t = g1[i] * d[k] + g2[i] * c2[k]
                    J[j, SLOT_EQ0, i, 3 + k] += t
                    J[j, SLOT_EQ0, i, 9 + k] -= t
        if hinges == 2:
            c1 = quat_rotate(qfa, (1.0, 0.0, 0.0))
            c2 = quat_rotate(qfb, (0.0, 1.0, 0.0))
            n = cross(c2, c1)
            set_row(J, j, SLOT_EQ1, 0, _ZERO, neg(n), _ZERO, n)
            C[j, SLOT_EQ1, 0] = dot(c1, c2)
    set_row(J, j, SLOT_LOWER, 0, _ZERO, neg(d), _ZERO, d)
    set_row(J, j, SLOT_UPPER, 0, _ZERO, d, _ZERO, neg(d))
    set_row(J, j, SLOT_FRICTION, 0, _ZERO, neg(d), _ZERO, d)
    return angle
