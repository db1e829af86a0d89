"""Constraint blocks: the rows every joint is made of, and the one routine that solves them.

A joint is up to MAX_BLOCKS blocks of 1 to 3 scalar rows each, in fixed slots:

    slot 0, 1  EQUALITY  reaction rows, impulse free              (point lock, axis lock, ...)
    slot 2     LOWER     limit row, accumulated impulse p >= 0
    slot 3     UPPER     limit row, accumulated impulse p >= 0
    slot 4     FRICTION  Coulomb rows, accumulated ||p|| <= F_max dt   (paper 000, eq. 12)

Each row r has a Jacobian J_r = [linA angA linB angB] (12 numbers, world frame) so that the
row's velocity is  Cdot_r = J_r . (vA, wA, vB, wB).  For one block of n rows

    K = J M^-1 J^T  (n x n),   M^-1 = diag(1/mA E, IA^-1, 1/mB E, IB^-1)   (paper 002, eq. 12)
    dp = -K^-1 (Cdot + bias)                                              (paper 000, eq. 15)
    p_new = clamp(p + dp);  dp = p_new - p;  p = p_new                    (clamp the ACCUMULATED p)
    vA += J_linA^T dp / mA,  wA += IA^-1 J_angA^T dp,  likewise B.

The friction clamp is the paper's ball (16): if ||p + dp|| > p_max the accumulated impulse is
scaled onto the sphere of radius p_max; a spherical joint clamps its 3 rows jointly.

Velocity pass bias: 0 for equality and friction rows (drift is removed by the position pass,
which never touches velocities); for a limit row with gap C > 0, bias = C / h, so the limit
lets the joint close the gap this step but not cross it (speculative limit).

Position pass ("separate impulses"): the same blocks are rebuilt at the current poses with
their position error C and solved by dlambda = -K^-1 C, moved straight into the poses:
xA += J_linA^T dlambda / mA, qA turned by IA^-1 J_angA^T dlambda (nonlinear Gauss-Seidel).
Velocities are untouched, and so is each body's angular momentum about fixed points.
"""
import math

from numba import njit

from .math3 import cross, mat_vec, norm, quat_rotated, sym_inverse

MAX_BLOCKS = 5
SLOT_EQ0, SLOT_EQ1, SLOT_LOWER, SLOT_UPPER, SLOT_FRICTION = 0, 1, 2, 3, 4
# a block's correction per position iteration is capped so that a bad start cannot explode
MAX_CORRECTION = 0.2

_JIT = dict(nogil=True, cache=True)


@njit(inline="always", **_JIT)
def set_row(J, s, r, lin_a, ang_a, lin_b, ang_b):
    """Write row r of block s: J (MAX_BLOCKS, 3, 12)."""
    for k in range(3):
        J[s, r, k] = lin_a[k]
        J[s, r, 3 + k] = ang_a[k]
        J[s, r, 6 + k] = lin_b[k]
        J[s, r, 9 + k] = ang_b[k]


@njit(**_JIT)
def effective_mass_inverse(J, s, n, ima, iia, imb, iib, k, kinv):
    """kinv = (J M^-1 J^T)^-1 for block s of n rows; iia, iib are world inverse inertias (3, 3).

    k is a (3, 3) scratch array. Returns False if the block cannot move (K singular).
    """
    for r in range(n):
        ang_a_r = (J[s, r, 3], J[s, r, 4], J[s, r, 5])
        ang_b_r = (J[s, r, 9], J[s, r, 10], J[s, r, 11])
        ia_r = mat_vec(iia, ang_a_r)
        ib_r = mat_vec(iib, ang_b_r)
        for c in range(r, n):
            v = (ima * (J[s, r, 0] * J[s, c, 0] + J[s, r, 1] * J[s, c, 1] + J[s, r, 2] * J[s, c, 2])
                 + imb * (J[s, r, 6] * J[s, c, 6] + J[s, r, 7] * J[s, c, 7] + J[s, r, 8] * J[s, c, 8])
                 + ia_r[0] * J[s, c, 3] + ia_r[1] * J[s, c, 4] + ia_r[2] * J[s, c, 5]
                 + ib_r[0] * J[s, c, 9] + ib_r[1] * J[s, c, 10] + ib_r[2] * J[s, c, 11])
            k[r, c] = v
            k[c, r] = v
    return sym_inverse(k, kinv, n)


@njit(inline="always", **_JIT)
def row_velocity(J, s, r, va, wa, vb, wb):
    return (J[s, r, 0] * va[0] + J[s, r, 1] * va[1] + J[s, r, 2] * va[2]
            + J[s, r, 3] * wa[0] + J[s, r, 4] * wa[1] + J[s, r, 5] * wa[2]
            + J[s, r, 6] * vb[0] + J[s, r, 7] * vb[1] + J[s, r, 8] * vb[2]
            + J[s, r, 9] * wb[0] + J[s, r, 10] * wb[1] + J[s, r, 11] * wb[2])


@njit(inline="always", **_JIT)
def transpose_times(J, s, n, p):
    """J^T p for block s (n rows, p a 3-tuple), as the four 3-tuples (linA, angA, linB, angB)."""
    la0 = la1 = la2 = aa0 = aa1 = aa2 = 0.0
    lb0 = lb1 = lb2 = ab0 = ab1 = ab2 = 0.0
    for r in range(n):
        x = p[r]
        la0 += J[s, r, 0] * x
        la1 += J[s, r, 1] * x
        la2 += J[s, r, 2] * x
        aa0 += J[s, r, 3] * x
        aa1 += J[s, r, 4] * x
        aa2 += J[s, r, 5] * x
        lb0 += J[s, r, 6] * x
        lb1 += J[s, r, 7] * x
        lb2 += J[s, r, 8] * x
        ab0 += J[s, r, 9] * x
        ab1 += J[s, r, 10] * x
        ab2 += J[s, r, 11] * x
    return (la0, la1, la2), (aa0, aa1, aa2), (lb0, lb1, lb2), (ab0, ab1, ab2)


@njit(inline="always", **_JIT)
def apply_impulse(J, s, n, dp, a, b, ima, iia, imb, iib, vel, angvel):
    """Add M^-1 J^T dp of block s to the velocities of bodies a and b."""
    la, aa, lb, ab = transpose_times(J, s, n, dp)
    if ima > 0.0:
        d = mat_vec(iia, aa)
        for q in range(3):
            vel[a, q] += ima * la[q]
            angvel[a, q] += d[q]
    if imb > 0.0:
        d = mat_vec(iib, ab)
        for q in range(3):
            vel[b, q] += imb * lb[q]
            angvel[b, q] += d[q]


@njit(inline="always", **_JIT)
def clamp_accumulated(s, n, p, radius):
    """Clamp an accumulated impulse tuple p of block s. Returns (clamped p, whether it clamped)."""
    if s == SLOT_LOWER or s == SLOT_UPPER:
        if p[0] < 0.0:
            return (0.0, 0.0, 0.0), True
        return p, False
    if s == SLOT_FRICTION:
        m = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
        if m > radius:
            f = radius / m
            return (p[0] * f, p[1] * f, p[2] * f), True
        return p, False
    return p, False


@njit(**_JIT)
def solve_velocity_block(J, kinv, bias, impulse, s, n, radius, a, b, ima, iia, imb, iib,
                         vel, angvel):
    """One sequential-impulse update of block s. Returns (||dp||, whether the clamp acted)."""
    va = (vel[a, 0], vel[a, 1], vel[a, 2])
    wa = (angvel[a, 0], angvel[a, 1], angvel[a, 2])
    vb = (vel[b, 0], vel[b, 1], vel[b, 2])
    wb = (angvel[b, 0], angvel[b, 1], angvel[b, 2])
    rhs0 = -(row_velocity(J, s, 0, va, wa, vb, wb) + bias[s, 0])
    rhs1 = 0.0
    rhs2 = 0.0
    if n > 1:
        rhs1 = -(row_velocity(J, s, 1, va, wa, vb, wb) + bias[s, 1])
    if n > 2:
        rhs2 = -(row_velocity(J, s, 2, va, wa, vb, wb) + bias[s, 2])
    k = kinv[s]
    old = (impulse[s, 0], impulse[s, 1], impulse[s, 2])
    trial = (old[0] + k[0, 0] * rhs0 + k[0, 1] * rhs1 + k[0, 2] * rhs2,
             old[1] + k[1, 0] * rhs0 + k[1, 1] * rhs1 + k[1, 2] * rhs2,
             old[2] + k[2, 0] * rhs0 + k[2, 1] * rhs1 + k[2, 2] * rhs2)
    new, clamped = clamp_accumulated(s, n, trial, radius)
    dp = (new[0] - old[0], new[1] - old[1], new[2] - old[2])
    impulse[s, 0] = new[0]
    impulse[s, 1] = new[1]
    impulse[s, 2] = new[2]
    apply_impulse(J, s, n, dp, a, b, ima, iia, imb, iib, vel, angvel)
    return norm(dp), clamped


@njit(**_JIT)
def solve_position_block(J, C, s, n, a, b, ima, iia, imb, iib, pos, quat, vel, angmom, k, kinv):
    """One nonlinear Gauss-Seidel correction of block s at the current poses.

    Pass zero inverse inertias to correct by translation only. A correction is not a force: a
    body moved by dx keeps its angular momentum about every fixed point, so its momentum about
    its centre changes by -dx x m v.
    """
    c0 = C[s, 0]
    c1 = C[s, 1] if n > 1 else 0.0
    c2 = C[s, 2] if n > 2 else 0.0
    size = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    if size > MAX_CORRECTION:
        f = MAX_CORRECTION / size
        c0, c1, c2 = c0 * f, c1 * f, c2 * f
    if not effective_mass_inverse(J, s, n, ima, iia, imb, iib, k, kinv):
        return
    lam = (-(kinv[0, 0] * c0 + kinv[0, 1] * c1 + kinv[0, 2] * c2),
           -(kinv[1, 0] * c0 + kinv[1, 1] * c1 + kinv[1, 2] * c2),
           -(kinv[2, 0] * c0 + kinv[2, 1] * c1 + kinv[2, 2] * c2))
    la, aa, lb, ab = transpose_times(J, s, n, lam)
    if ima > 0.0:
        for q in range(3):
            pos[a, q] += ima * la[q]
        shift = cross(la, (vel[a, 0], vel[a, 1], vel[a, 2]))   # dx x m v with dx = la / m
        for q in range(3):
            angmom[a, q] -= shift[q]
        turned = quat_rotated((quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]), mat_vec(iia, aa))
        for q in range(4):
            quat[a, q] = turned[q]
    if imb > 0.0:
        for q in range(3):
            pos[b, q] += imb * lb[q]
        shift = cross(lb, (vel[b, 0], vel[b, 1], vel[b, 2]))
        for q in range(3):
            angmom[b, q] -= shift[q]
        turned = quat_rotated((quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]), mat_vec(iib, ab))
        for q in range(4):
            quat[b, q] = turned[q]
