"""Constraint blocks: the rows every joint is made of, and the routines that solve them.

A joint is up to MAX_BLOCKS blocks of 1 to 3 scalar rows each, in fixed slots:

    slot 0, 1  EQUALITY  reaction rows, impulse free              (point lock, axis lock, ...)
    slot 2     LOWER     limit row, accumulated impulse p >= 0
    slot 3     UPPER     limit row, accumulated impulse p >= 0
    slot 4     FRICTION  Coulomb rows, accumulated ||p|| <= F_max dt   (paper 000, eq. 12)

Each row r has a Jacobian J_r = [linA angA linB angB] (12 numbers, world frame) so that the
row's velocity is  Cdot_r = J_r . (vA, wA, vB, wB).  For one block of n rows

    W = M^-1 J^T  (stored per row as 12 numbers),  M^-1 = diag(1/mA E, IA^-1, 1/mB E, IB^-1)
    K = J W  (n x n)                                                      (paper 002, eq. 12)
    dp = -K^-1 (Cdot + bias)                                              (paper 000, eq. 15)
    p_new = clamp(p + dp);  dp = p_new - p;  p = p_new                    (clamp the ACCUMULATED p)
    (vA, wA, vB, wB) += W dp

The friction clamp is paper 000's ball (16): if ||p + dp|| > p_max the accumulated impulse is
scaled onto the sphere of radius p_max; a spherical joint clamps its 3 rows jointly.

Velocity pass bias: 0 for friction rows; for a limit row with gap C > 0, bias = C / h, so the
limit lets the joint close the gap this step but not cross it (speculative limit). Equality
rows aim at the end of the step (solver.aim_at_step_end, a RATTLE/SHAKE step): with C_e the
row's error at the poses the bodies would reach by drifting freely from their present
velocities and momenta (x + h v, the torque-free rotation of L over h),
    bias = C_e / h - J v,   so that   Cdot + bias = C_e(v') / h  to first order in v' - v,
and the solved velocities carry the joint to C = 0 at t + h.

Position pass ("separate impulses"): the same blocks are rebuilt at the current poses with
their position error C and solved by dlambda = -K^-1 C, moved straight into the poses:
xA += J_linA^T dlambda / mA, qA turned by IA^-1 J_angA^T dlambda (nonlinear Gauss-Seidel).
Velocities and momenta are untouched."""
import math

from numba import njit

from .jit import INLINE, KERNEL
from .math3 import inverse3, mat_vec, quat_normalized, quat_rotate

MAX_BLOCKS = 5
SLOT_EQ0, SLOT_EQ1, SLOT_LOWER, SLOT_UPPER, SLOT_FRICTION = 0, 1, 2, 3, 4
# block structures (see "packed blocks" below); rows past n in J, W and K^-1 are kept at zero
KIND_POINT, KIND_ANGULAR, KIND_GENERAL = 0, 1, 2
# a block's correction per position iteration is capped so that a bad start cannot explode
MAX_CORRECTION = 0.2
# rad/s or m/s: a limit's row farther from its bound than h (2 |rate| + this), the rate the last
# step's, is out of the solve (solver.prepare_joints; coupling.prepare_couplings)
LIMIT_REACH_SPEED = 25.0

_JIT = INLINE

# Arrays below are the whole per-joint arrays, indexed [j, s, row, k] (no views in hot loops):
#   J, W (njoint, MAX_BLOCKS, 3, 12), kinv (njoint, MAX_BLOCKS, 3, 3),
#   bias, impulse, C (njoint, MAX_BLOCKS, 3)


@njit(**_JIT)
def set_row(J, j, s, r, lin_a, ang_a, lin_b, ang_b):
    for k in range(3):
        J[j, s, r, k] = lin_a[k]
        J[j, s, r, 3 + k] = ang_a[k]
        J[j, s, r, 6 + k] = lin_b[k]
        J[j, s, r, 9 + k] = ang_b[k]


@njit(**_JIT)
def impulse_map(J, W, j, s, n, ima, iiw, a, b):
    """W = M^-1 J^T for block s of joint j (rows past n zeroed); iiw (nbody, 3, 3) world
    inverse inertias."""
    for r in range(n):
        wa = mat_vec(iiw[a], (J[j, s, r, 3], J[j, s, r, 4], J[j, s, r, 5]))
        wb = mat_vec(iiw[b], (J[j, s, r, 9], J[j, s, r, 10], J[j, s, r, 11]))
        for q in range(3):
            W[j, s, r, q] = ima[a] * J[j, s, r, q]
            W[j, s, r, 3 + q] = wa[q]
            W[j, s, r, 6 + q] = ima[b] * J[j, s, r, 6 + q]
            W[j, s, r, 9 + q] = wb[q]
    for r in range(n, 3):
        for q in range(12):
            W[j, s, r, q] = 0.0


@njit(**_JIT)
def row_map(row, w, ima, iiw, a, b):
    """w = M^-1 row^T of one 12-column row between bodies a and b (a motor's, a damper's);
    returns row . w = 1 / k, the inverse of the row's effective mass."""
    wa = mat_vec(iiw[a], (row[3], row[4], row[5]))
    wb = mat_vec(iiw[b], (row[9], row[10], row[11]))
    for q in range(3):
        w[q] = ima[a] * row[q]
        w[3 + q] = wa[q]
        w[6 + q] = ima[b] * row[6 + q]
        w[9 + q] = wb[q]
    jw = 0.0
    for q in range(12):
        jw += row[q] * w[q]
    return jw


@njit(**_JIT)
def row_rate(row, vel, angvel, a, b):
    """J v of one 12-column row between bodies a and b (a motor's, a damper's, a rotor's)."""
    return (((row[0] * vel[a, 0] + row[1] * vel[a, 1]) + (row[2] * vel[a, 2]
                                                          + row[3] * angvel[a, 0]))
            + ((row[4] * angvel[a, 1] + row[5] * angvel[a, 2]) + (row[6] * vel[b, 0]
                                                                  + row[7] * vel[b, 1]))
            + ((row[8] * vel[b, 2] + row[9] * angvel[b, 0]) + (row[10] * angvel[b, 1]
                                                               + row[11] * angvel[b, 2])))


@njit(**_JIT)
def apply_row(w, dp, vel, angvel, a, b):
    """(vA, wA, vB, wB) += dp w: an impulse dp along one row, w = M^-1 row^T (row_map)."""
    for q in range(3):
        vel[a, q] += dp * w[q]
        angvel[a, q] += dp * w[3 + q]
        vel[b, q] += dp * w[6 + q]
        angvel[b, q] += dp * w[9 + q]


@njit(**_JIT)
def effective_mass_inverse(J, W, kinv, k3, j, s, n, kind):
    """kinv = (J W)^-1 for block s of joint j, skipping the columns the block's structure makes
    zero. Returns False if the block cannot move."""
    lo = 3 if kind == KIND_ANGULAR else 0    # angular rows have no linear columns
    for r in range(n):
        for c in range(n):
            v = 0.0
            if kind == KIND_POINT:
                # J_lin = -E, +E: the linear part is (1/mA + 1/mB) on the diagonal, read off W
                if r == c:
                    v = W[j, s, c, 6 + c] - W[j, s, c, c]
                for q in range(3, 6):
                    v += J[j, s, r, q] * W[j, s, c, q] + J[j, s, r, 6 + q] * W[j, s, c, 6 + q]
            else:
                for q in range(lo, 12):
                    if kind == KIND_ANGULAR and 6 <= q < 9:
                        continue
                    v += J[j, s, r, q] * W[j, s, c, q]
            k3[r, c] = v
    return inverse3(k3, kinv[j, s], n)


@njit(**_JIT)
def row_velocity(J, j, s, r, vel, angvel, a, b):
    return (J[j, s, r, 0] * vel[a, 0] + J[j, s, r, 1] * vel[a, 1] + J[j, s, r, 2] * vel[a, 2]
            + J[j, s, r, 3] * angvel[a, 0] + J[j, s, r, 4] * angvel[a, 1]
            + J[j, s, r, 5] * angvel[a, 2]
            + J[j, s, r, 6] * vel[b, 0] + J[j, s, r, 7] * vel[b, 1] + J[j, s, r, 8] * vel[b, 2]
            + J[j, s, r, 9] * angvel[b, 0] + J[j, s, r, 10] * angvel[b, 1]
            + J[j, s, r, 11] * angvel[b, 2])


@njit(**_JIT)
def apply_impulse(W, j, s, n, dp, vel, angvel, a, b):
    """(vA, wA, vB, wB) += W dp for block s of joint j (dp a 3-tuple)."""
    for r in range(n):
        x = dp[r]
        if x == 0.0:
            continue
        for q in range(3):
            vel[a, q] += W[j, s, r, q] * x
            angvel[a, q] += W[j, s, r, 3 + q] * x
            vel[b, q] += W[j, s, r, 6 + q] * x
            angvel[b, q] += W[j, s, r, 9 + q] * x


@njit(**_JIT)
def clamp_accumulated(s, p, radius):
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
def solve_general_block(J, W, kinv, bias, impulse, j, s, n, radius, vel, angvel, a, b):
    """Any block, all 12 columns. Returns (|dp|^2, whether the clamp acted)."""
    e0 = -(row_velocity(J, j, s, 0, vel, angvel, a, b) + bias[j, s, 0])
    e1 = 0.0
    e2 = 0.0
    if n > 1:
        e1 = -(row_velocity(J, j, s, 1, vel, angvel, a, b) + bias[j, s, 1])
    if n > 2:
        e2 = -(row_velocity(J, j, s, 2, vel, angvel, a, b) + bias[j, s, 2])
    old = (impulse[j, s, 0], impulse[j, s, 1], impulse[j, s, 2])
    trial = (old[0] + kinv[j, s, 0, 0] * e0 + kinv[j, s, 0, 1] * e1 + kinv[j, s, 0, 2] * e2,
             old[1] + kinv[j, s, 1, 0] * e0 + kinv[j, s, 1, 1] * e1 + kinv[j, s, 1, 2] * e2,
             old[2] + kinv[j, s, 2, 0] * e0 + kinv[j, s, 2, 1] * e1 + kinv[j, s, 2, 2] * e2)
    new, clamped = clamp_accumulated(s, trial, radius)
    dp = (new[0] - old[0], new[1] - old[1], new[2] - old[2])
    impulse[j, s, 0] = new[0]
    impulse[j, s, 1] = new[1]
    impulse[j, s, 2] = new[2]
    apply_impulse(W, j, s, n, dp, vel, angvel, a, b)
    return dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2], clamped


@njit(**KERNEL)
def solve_position_block(J, W, kinv, C, k3, j, s, n, ima, iiw, a, b, pos, quat, angvel,
                         angmom):
    """One nonlinear Gauss-Seidel correction of block s of joint j at the current poses,
    mass-weighted over translation and rotation. A body turned by the correction takes its
    angular momentum and velocity along (angmom, angvel (nbody, 3), world): its motion
    relative to itself, and so its kinetic energy, stay what they were; turning the body under
    a fixed L would change L . I^-1 L / 2, energy from nowhere."""
    c0 = C[j, s, 0]
    c1 = C[j, s, 1] if n > 1 else 0.0
    c2 = C[j, s, 2] if n > 2 else 0.0
    size = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    if size == 0.0:
        return
    if size > MAX_CORRECTION:
        f = MAX_CORRECTION / size
        c0, c1, c2 = c0 * f, c1 * f, c2 * f
    impulse_map(J, W, j, s, n, ima, iiw, a, b)
    if not effective_mass_inverse(J, W, kinv, k3, j, s, n, KIND_GENERAL):
        return
    lam = (-(kinv[j, s, 0, 0] * c0 + kinv[j, s, 0, 1] * c1 + kinv[j, s, 0, 2] * c2),
           -(kinv[j, s, 1, 0] * c0 + kinv[j, s, 1, 1] * c1 + kinv[j, s, 1, 2] * c2),
           -(kinv[j, s, 2, 0] * c0 + kinv[j, s, 2, 1] * c1 + kinv[j, s, 2, 2] * c2))
    if ima[a] > 0.0:
        _move_body(W, j, s, n, lam, 0, a, pos, quat, angvel, angmom)
    if ima[b] > 0.0:
        _move_body(W, j, s, n, lam, 6, b, pos, quat, angvel, angmom)


@njit(**_JIT)
def _move_body(W, j, s, n, lam, col, i, pos, quat, angvel, angmom):
    dx0 = dx1 = dx2 = t0 = t1 = t2 = 0.0
    for r in range(n):
        dx0 += W[j, s, r, col] * lam[r]
        dx1 += W[j, s, r, col + 1] * lam[r]
        dx2 += W[j, s, r, col + 2] * lam[r]
        t0 += W[j, s, r, col + 3] * lam[r]
        t1 += W[j, s, r, col + 4] * lam[r]
        t2 += W[j, s, r, col + 5] * lam[r]
    pos[i, 0] += dx0
    pos[i, 1] += dx1
    pos[i, 2] += dx2
    if t0 != 0.0 or t1 != 0.0 or t2 != 0.0:
        # corrections are small: first order q += (0, t) q / 2, then renormalise
        w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        turned = quat_normalized((w - 0.5 * (t0 * x + t1 * y + t2 * z),
                                  x + 0.5 * (t0 * w + t1 * z - t2 * y),
                                  y + 0.5 * (t1 * w + t2 * x - t0 * z),
                                  z + 0.5 * (t2 * w + t0 * y - t1 * x)))
        turn_body(i, quat_normalized((1.0, 0.5 * t0, 0.5 * t1, 0.5 * t2)), turned, quat,
                  angvel, angmom)


@njit(**_JIT)
def turn_body(i, d, turned, quat, angvel, angmom):
    """A position correction turns body i to the orientation `turned` by the world rotation d
    (unit quaternion): its L and w turn with it by d, so its motion relative to itself, and
    its kinetic energy, stay what they were (solve_position_block, tree.tree_pass)."""
    for q in range(4):
        quat[i, q] = turned[q]
    lt = quat_rotate(d, (angmom[i, 0], angmom[i, 1], angmom[i, 2]))
    wt = quat_rotate(d, (angvel[i, 0], angvel[i, 1], angvel[i, 2]))
    for q in range(3):
        angmom[i, q] = lt[q]
        angvel[i, q] = wt[q]


# ---- packed blocks -----------------------------------------------------------------------
# The Gauss-Seidel loop reads one contiguous record per active block instead of J, W and K^-1
# spread over three arrays: block_data (nblock, PACK). The block's structure picks the
# arithmetic: a POINT block has J_lin = -E (A), +E (B), so Cdot = vB - vA + J_angA wA +
# J_angB wB; an ANGULAR block has J_lin = 0 and J_angA = -J_angB, so Cdot = J_angB (wB - wA);
# a GENERAL block (prismatic rows) is solved from J, W, K^-1 with all 12 columns. Point blocks
# keep J_angA, J_angB, the diagonals of W_linA, W_linB, W_angA, W_angB, K^-1 and the bias;
# angular blocks keep U = J_angB, W_angA, W_angB, K^-1 and the bias. Offsets:
#
# The sweep is one chain of dependent blocks (each reads the velocities the block before it
# wrote), so its time is that chain's latency, not its arithmetic. numba keeps Python's
# left-to-right order of a sum (no fastmath), so the sums on the chain are written as
# balanced trees (a point row's 9 terms: 4 dependent additions instead of 8), and a step that
# is not clamped is applied as computed instead of as p - old (one subtraction less).
# Measured on the biped, 20 iterations: 24,200 -> 26,100 steps/s.
P_JA, P_JB, P_LA, P_LB, P_WA, P_WB, P_K, P_BIAS = 0, 9, 18, 21, 24, 33, 42, 51
A_U, A_WA, A_WB, A_K, A_BIAS = 0, 9, 18, 27, 36
PACK = 54


@njit(**_JIT)
def pack_block(J, W, kinv, bias, j, s, kind, out):
    """Copy block s of joint j into its record out (PACK,) for the packed solves."""
    if kind == KIND_POINT:
        for r in range(3):
            out[P_BIAS + r] = bias[j, s, r]
            out[P_LA + r] = W[j, s, r, r]
            out[P_LB + r] = W[j, s, r, 6 + r]
            for c in range(3):
                out[P_JA + 3 * r + c] = J[j, s, r, 3 + c]
                out[P_JB + 3 * r + c] = J[j, s, r, 9 + c]
                out[P_WA + 3 * r + c] = W[j, s, r, 3 + c]
                out[P_WB + 3 * r + c] = W[j, s, r, 9 + c]
                out[P_K + 3 * r + c] = kinv[j, s, r, c]
    else:
        for r in range(3):
            out[A_BIAS + r] = bias[j, s, r]
            for c in range(3):
                out[A_U + 3 * r + c] = J[j, s, r, 9 + c]
                out[A_WA + 3 * r + c] = W[j, s, r, 3 + c]
                out[A_WB + 3 * r + c] = W[j, s, r, 9 + c]
                out[A_K + 3 * r + c] = kinv[j, s, r, c]


@njit(**_JIT)
def _turn(d, k, oa, ob, d0, d1, d2, angvel, a, b, wa0, wa1, wa2, wb0, wb1, wb2):
    """wA = wA_old + W_angA dp, wB = wB_old + W_angB dp, with W_ang rows at offsets oa, ob."""
    for c in range(3):
        angvel[a, c] = ((wa0 if c == 0 else (wa1 if c == 1 else wa2)) + d[k, oa + c] * d0) + (
            d[k, oa + 3 + c] * d1 + d[k, oa + 6 + c] * d2)
        angvel[b, c] = ((wb0 if c == 0 else (wb1 if c == 1 else wb2)) + d[k, ob + c] * d0) + (
            d[k, ob + 3 + c] * d1 + d[k, ob + 6 + c] * d2)


@njit(**_JIT)
def solve_packed_point(d, p, k, vel, angvel, a, b):
    """A point lock (3 equality rows): dp = -K^-1 (Cdot + bias), no clamp, applied with W. The
    record is row k of d, the impulses row k of p (nblock, 3). Returns |dp|^2."""
    wa0, wa1, wa2 = angvel[a, 0], angvel[a, 1], angvel[a, 2]
    wb0, wb1, wb2 = angvel[b, 0], angvel[b, 1], angvel[b, 2]
    c0 = (((vel[b, 0] - vel[a, 0]) + (d[k, 0] * wa0 + d[k, 51]))
          + ((d[k, 1] * wa1 + d[k, 2] * wa2) + (d[k, 9] * wb0 + (d[k, 10] * wb1
                                                                 + d[k, 11] * wb2))))
    c1 = (((vel[b, 1] - vel[a, 1]) + (d[k, 3] * wa0 + d[k, 52]))
          + ((d[k, 4] * wa1 + d[k, 5] * wa2) + (d[k, 12] * wb0 + (d[k, 13] * wb1
                                                                  + d[k, 14] * wb2))))
    c2 = (((vel[b, 2] - vel[a, 2]) + (d[k, 6] * wa0 + d[k, 53]))
          + ((d[k, 7] * wa1 + d[k, 8] * wa2) + (d[k, 15] * wb0 + (d[k, 16] * wb1
                                                                  + d[k, 17] * wb2))))
    d0 = -(d[k, 42] * c0 + d[k, 43] * c1 + d[k, 44] * c2)
    d1 = -(d[k, 45] * c0 + d[k, 46] * c1 + d[k, 47] * c2)
    d2 = -(d[k, 48] * c0 + d[k, 49] * c1 + d[k, 50] * c2)
    p[k, 0] += d0
    p[k, 1] += d1
    p[k, 2] += d2
    vel[a, 0] += d[k, 18] * d0
    vel[a, 1] += d[k, 19] * d1
    vel[a, 2] += d[k, 20] * d2
    vel[b, 0] += d[k, 21] * d0
    vel[b, 1] += d[k, 22] * d1
    vel[b, 2] += d[k, 23] * d2
    _turn(d, k, P_WA, P_WB, d0, d1, d2, angvel, a, b, wa0, wa1, wa2, wb0, wb1, wb2)
    return d0 * d0 + d1 * d1 + d2 * d2


@njit(**_JIT)
def solve_packed_angular_rows(d, p, k, s, n, radius, angvel, a, b):
    """An angular block of n rows, by the routine that skips its zero rows."""
    if n == 1:
        return solve_packed_row(d, p, k, s, radius, angvel, a, b)
    if n == 2:
        return solve_packed_pair(d, p, k, s, radius, angvel, a, b)
    return solve_packed_angular(d, p, k, s, radius, angvel, a, b)


@njit(**_JIT)
def solve_packed_row(d, p, k, s, radius, angvel, a, b):
    """An angular block of one row (a hinge's friction or limit row): solve_packed_angular's
    arithmetic without the two zero rows (the same operations on the row it has, so the same
    result to the bit)."""
    wa0, wa1, wa2 = angvel[a, 0], angvel[a, 1], angvel[a, 2]
    wb0, wb1, wb2 = angvel[b, 0], angvel[b, 1], angvel[b, 2]
    e0 = -((d[k, 0] * (wb0 - wa0) + d[k, A_BIAS])
           + (d[k, 1] * (wb1 - wa1) + d[k, 2] * (wb2 - wa2)))
    o0 = p[k, 0]
    d0 = d[k, A_K] * e0   # (unclamped, the step itself, off the chain of p0 - o0)
    p0 = o0 + d0
    clamped = False
    if s == SLOT_FRICTION:
        m2 = p0 * p0
        if m2 > radius * radius:
            p0 = p0 * (radius / math.sqrt(m2))
            clamped = True
    elif s == SLOT_LOWER or s == SLOT_UPPER:
        if p0 < 0.0:
            p0 = 0.0
            clamped = True
    p[k, 0] = p0
    if clamped:
        d0 = p0 - o0
    angvel[a, 0] = wa0 + d[k, A_WA] * d0
    angvel[a, 1] = wa1 + d[k, A_WA + 1] * d0
    angvel[a, 2] = wa2 + d[k, A_WA + 2] * d0
    angvel[b, 0] = wb0 + d[k, A_WB] * d0
    angvel[b, 1] = wb1 + d[k, A_WB + 1] * d0
    angvel[b, 2] = wb2 + d[k, A_WB + 2] * d0
    return d0 * d0, clamped


@njit(**_JIT)
def solve_packed_pair(d, p, k, s, radius, angvel, a, b):
    """An angular block of two rows (a hinge's rotation lock): solve_packed_angular's
    arithmetic without the zero third row."""
    wa0, wa1, wa2 = angvel[a, 0], angvel[a, 1], angvel[a, 2]
    wb0, wb1, wb2 = angvel[b, 0], angvel[b, 1], angvel[b, 2]
    dw0, dw1, dw2 = wb0 - wa0, wb1 - wa1, wb2 - wa2
    e0 = -((d[k, 0] * dw0 + d[k, A_BIAS]) + (d[k, 1] * dw1 + d[k, 2] * dw2))
    e1 = -((d[k, 3] * dw0 + d[k, A_BIAS + 1]) + (d[k, 4] * dw1 + d[k, 5] * dw2))
    o0, o1 = p[k, 0], p[k, 1]
    d0 = d[k, A_K] * e0 + d[k, A_K + 1] * e1
    d1 = d[k, A_K + 3] * e0 + d[k, A_K + 4] * e1
    p0, p1 = o0 + d0, o1 + d1
    clamped = False
    if s == SLOT_FRICTION:
        m2 = p0 * p0 + p1 * p1
        if m2 > radius * radius:
            f = radius / math.sqrt(m2)
            p0, p1 = p0 * f, p1 * f
            d0, d1 = p0 - o0, p1 - o1
            clamped = True
    p[k, 0] = p0
    p[k, 1] = p1
    for c in range(3):
        angvel[a, c] = (wa0 if c == 0 else (wa1 if c == 1 else wa2)) + (
            d[k, A_WA + c] * d0 + d[k, A_WA + 3 + c] * d1)
        angvel[b, c] = (wb0 if c == 0 else (wb1 if c == 1 else wb2)) + (
            d[k, A_WB + c] * d0 + d[k, A_WB + 3 + c] * d1)
    return d0 * d0 + d1 * d1, clamped


@njit(**_JIT)
def solve_packed_angular(d, p, k, s, radius, angvel, a, b):
    """An angular block (rows past n are zero): dp = -K^-1 (Cdot + bias), the accumulated
    impulse clamped by slot (friction ball, limit >= 0). Returns (|dp|^2, clamped)."""
    wa0, wa1, wa2 = angvel[a, 0], angvel[a, 1], angvel[a, 2]
    wb0, wb1, wb2 = angvel[b, 0], angvel[b, 1], angvel[b, 2]
    dw0, dw1, dw2 = wb0 - wa0, wb1 - wa1, wb2 - wa2
    e0 = -((d[k, 0] * dw0 + d[k, 36]) + (d[k, 1] * dw1 + d[k, 2] * dw2))
    e1 = -((d[k, 3] * dw0 + d[k, 37]) + (d[k, 4] * dw1 + d[k, 5] * dw2))
    e2 = -((d[k, 6] * dw0 + d[k, 38]) + (d[k, 7] * dw1 + d[k, 8] * dw2))
    o0, o1, o2 = p[k, 0], p[k, 1], p[k, 2]
    d0 = (d[k, 27] * e0 + d[k, 28] * e1) + d[k, 29] * e2
    d1 = (d[k, 30] * e0 + d[k, 31] * e1) + d[k, 32] * e2
    d2 = (d[k, 33] * e0 + d[k, 34] * e1) + d[k, 35] * e2
    p0, p1, p2 = o0 + d0, o1 + d1, o2 + d2
    clamped = False
    if s == SLOT_FRICTION:
        m2 = p0 * p0 + p1 * p1 + p2 * p2
        if m2 > radius * radius:
            f = radius / math.sqrt(m2)
            p0, p1, p2 = p0 * f, p1 * f, p2 * f
            clamped = True
    elif s == SLOT_LOWER or s == SLOT_UPPER:
        if p0 < 0.0:
            p0 = 0.0
            clamped = True
    p[k, 0] = p0
    p[k, 1] = p1
    p[k, 2] = p2
    if clamped:   # (else the step itself: the same, off the chain of p - o)
        d0, d1, d2 = p0 - o0, p1 - o1, p2 - o2
    _turn(d, k, A_WA, A_WB, d0, d1, d2, angvel, a, b, wa0, wa1, wa2, wb0, wb1, wb2)
    return d0 * d0 + d1 * d1 + d2 * d2, clamped
