"""The contact rows: a manifold's normal, sliding, rolling and twisting rows, prepared at the
start of a step and solved in the same sequential-impulse loop as the joints, then restitution,
the position pass on overlap and each body's contact wrench (paper 002 eqs. 19-21, paper 001,
paper 004; Box2D v3's contact_solver.c).  The points they act on, found by the narrow phase,
and the arrays' layout are contact.py's.

Symbols (as in the code): bodies a = A, b = B; ima, imb = 1/mA, 1/mB; iiw = I^-1 (world);
n the normal from A to B; ra, rb the arms from the centres of mass; v, w the bodies'
velocities; total = P, the manifold's normal impulse; d the depth (> 0 overlap, < 0 gap);
h the step.

The points of one pair form a manifold (up to 4 points, one normal n).  Each point has a
normal row; the manifold has ONE friction anchor, at the centroid c of its points (arms
rA = c - xA, rB = c - xB; t1, t2 unit tangents, n x t1 = t2), which carries the sliding,
rolling and twisting rows, all bounded by the manifold's total normal impulse P = sum_i p_n,i:

    normal     Cdot_n,i = n . (vB + wB x rB,i - vA - wA x rA,i)   p_n,i >= 0           (20)
    sliding    Cdot_tk  = t_k . (vB + wB x rB - vA - wA x rA)     |(p_t1, p_t2)| <= mu P  (21)
    rolling    Cdot_rk  = t_k . (wB - wA)                         |(p_r1, p_r2)| <= mu_r P
    twisting   Cdot_s   = n . (wB - wA)                           |p_s| <= (mu_s + mu rbar) P

Anisotropic friction (paper 001): a geom with a body-fixed friction axis a and coefficients
mu_1 along it, mu_2 across it puts t1 along a's projection onto the contact plane, and the
sliding pair then lies in the ellipse (p_t1 / mu_1)^2 + (p_t2 / mu_2)^2 <= P^2 (each mu_k the
larger of that geom's and the other geom's mu; the circle when mu_1 = mu_2).  Sliding takes
the impulse of maximal dissipation on that ellipse, p ~ -(mu_1^2 v_t1, mu_2^2 v_t2) (the
solver's step is scaled by mu_k^2 / max mu^2 per tangent before the clamp once the unclamped
impulse leaves the ellipse; at the sliding fixed point p is parallel to that step).

Friction regions (paper 001: friction that depends on where bodies touch; specs.FrictionRegion):
a body may give parts of its surface (a box, a half-space, a hull's face, in its body frame)
coefficients of their own. Point i of a manifold then has mu_i = max(mu_A(x_i), mu_B(x_i)),
each body's region coefficient at x_i or else its material's, and Coulomb friction at every
point would bound the anchor's sliding pair by sum_i mu_i p_n,i = mu P with
mu = sum_i mu_i p_n,i / P. The step takes that mean with the points' normal impulses of the
step before (their warm start; the plain mean of the mu_i while they carry none), isotropic:
at rest or sliding steadily it is the bound at every point, one step late while the load
moves between points.

rbar is the mean distance of the points from c: Coulomb friction spread over the points
resists a turn about n with at most sum_i mu p_n,i |m_i - c| ~ mu rbar P (equal shares), and
a smooth shape's single point (rbar = 0) has the spinning friction mu_s alone.  For one point
these are exactly the per-point rows of paper 002; for a face on a face they differ from
friction at every point in one way only: sliding and twisting are bounded separately, not
jointly.  Why not a friction row pair at every point: a box resting on four points has a
statically indeterminate set of tangential impulses, which Gauss-Seidel and warm starting
keep pushing around (the points "fight"); one anchor has a unique answer, and half the rows.

Each row: m_eff = 1 / (J M^-1 J^T), dp = m_eff (target - Cdot), the ACCUMULATED impulse is
clamped (the normal at >= 0; the sliding and rolling pairs scaled onto their disks, the
circular cone of paper 002 eq. 21, never a pyramid), dp = p_new - p_old is applied:

    vA -= dp_lin / mA,  wA -= IA^-1 (rA x dp_lin + dp_ang),  vB, wB the opposite signs.

A sweep takes the manifolds unit by unit (partition.py), four at a time: the manifolds of a
group share no moving body, each takes a SIMD lane (lanes.py, partition.group_unit), and
each lane does what a sweep of its manifold alone does: the normals of its points, then its
anchor's rows with the P they just gave. So a sweep is the Gauss-Seidel sweep of the groups'
manifolds one after another, to the bit. The records are copied into the lanes' layout
(gather_unit, the lane last) in the first sweep, each unit right before it is swept, on the
thread that sweeps it, and the impulses back (scatter_lanes) when the solve ends. Measured
on the pyramid's rows: 20 sweeps in 330 us against 556-620 for the same order a manifold at
a time (1.7-1.9x); skipping the anisotropic step, the clamp, rolling and twisting where no
lane of a group needs them, 305-317 against 335-341. The copy is a pass over every record:
where few sweeps of one-point manifolds follow it (lanes_pay, LANE_WORK: the ellipsoid drop),
the sweep takes the manifolds one at a time instead (_sweep_unit), in the unit's own order.

Normal target: a point still apart (gap g = -d > 0) may close its gap this step but not
cross it, target = -g / h (speculative contact); a touching point has target 0 -- the
overlap is removed by the position pass, which moves poses only, so no energy is injected.
A point detection never saw (motion beyond the margin) or a solve that stops short lets a
body sink; ccd.py keeps it from crossing a static plane or box.

Restitution (eq. 19): a point whose approach speed v_n0 = Cdot_n at detection exceeds
RESTITUTION_SPEED and that carries a normal impulse gets, after the iterations,
Cdot_n = -e v_n0 (p_n stays >= 0).  If it was still apart (gap g, u = -v_n0), the impact
happened at tau = g / u inside the step and the bodies have separated for h - tau since, so
the position pass puts them at separation e (u h - g): the bounce starts from contact, not
from wherever the step found the bodies.

Position pass, per point: the current depth d = n . (pA - pB) of the two surface points
(pA = m + n d/2 on A, pB = m - n d/2 on B, kept in body frames) is reduced by
POSITION_FACTOR (d - LINEAR_SLOP), at most MAX_CORRECTION per sweep, with the same mass
weighting as the normal row; velocities are not touched.

Combining the two geoms' materials (MuJoCo's rule): each coefficient is the larger of the two.

Contact wrench (the sensor): point i pushes B by p_n,i n / h at rb_i, the anchor's sliding
impulse acts at the centroid, its rolling and twisting impulses are torques; A gets the
opposite.
"""
import math

from numba import njit, prange

from .atomic import fetch_add, load_acquire, relax
from .clock import monotonic_seconds
from .contact import (
    AXIS,
    LANE_PACK,
    LANE_POINT,
    LI_R1,
    LI_R2,
    LI_S,
    LI_T1,
    LI_T2,
    LP_MASS,
    LP_TARGET,
    M_ANG,
    M_DIR,
    M_IMA,
    M_IMB,
    M_LIN,
    M_MASS,
    M_MU,
    M_MU2,
    M_ROLL,
    M_TWIST,
    MU,
    MU_ALONG,
    MU_ROLL,
    MU_SPIN,
    N_DIR,
    N_IMA,
    N_IMB,
    N_LIN,
    N_MASS,
    N_TARGET,
    P_N,
    P_R1,
    P_R2,
    P_S,
    P_T1,
    P_T2,
    RESTITUTION,
    WRENCH_FORCE,
    WRENCH_TORQUE,
)
from .jit import ENTRY, INLINE, KERNEL, PARALLEL
from .lanes import (
    LANES,
    msel,
    splat,
    vadd,
    vand,
    vany,
    vdiv,
    vgt,
    vload,
    vmax,
    vmin,
    vmul,
    vne,
    vor,
    vsel,
    vsqrt,
    vstore,
    vsub,
)
from .math3 import cross, mat_vec, quat_rotate, quat_rotated
from .model import (
    REGION_AXES,
    REGION_BOX,
    REGION_HALF,
    REGION_KIND,
    REGION_MU,
    REGION_POINT,
)
from .partition import (
    PARTITION_MIN,
    PHASE_UNITS,
    PHASES,
    SYNC_CLAIM,
    SYNC_DECIDED,
    SYNC_FINISHED,
    SYNC_STOP,
    SYNC_TABLE,
    SYNC_UNITS,
    UNITS,
    group_unit,
    partition_manifolds,
    phase_threaded,
    phase_units,
)

_JIT = KERNEL

LINEAR_SLOP = 0.0005       # m: overlap left in place (resting contacts keep touching)
POSITION_FACTOR = 0.3      # share of the overlap removed per position sweep
MAX_CORRECTION = 0.02      # m: largest correction of one point in one sweep
RESTITUTION_SPEED = 0.1    # m/s: slower approaches do not bounce
BOUNCED = 2                # point state: bounced from apart, its end separation still to set
# _sweep_unit spells these offsets out as literals (its locals stay in registers)
assert (N_LIN, M_LIN, M_ANG, M_MASS) == (3, 9, 33, 51)
assert LANES == 4   # (_sweep_lanes writes its lanes out one by one)
# The lanes pay where the sweeps' work per manifold outweighs copying its records into them
# (gather_lanes): where iterations x points >= LANE_WORK x manifolds. Measured here, one
# thread, whole runs: the pyramid (20 sweeps, 4 points a manifold) 0.80 -> 0.63 s; the tube
# (15 sweeps, ~1 point) 3.3-4.0 -> 3.0-4.1 s; the drop (10 sweeps, ~1 point) 2.50 -> 2.86-3.07
# s, its copy (~240 us a step, 2,300 manifolds, 2 MB of lanes) more than the 10 sweeps gained.
# With the copy in the first sweep, on the threads, LANE_WORK 8 (the drop in lanes) measured
# 1.87 -> 1.81 s on two threads and 2.26 -> 2.29 on one (medians of 6, noisy; 2.2 s runs
# varied 2.2-3.2 s): not taken, as the choice may not depend on the thread count (the bits).
LANE_WORK = 12


# ---- small vector helpers (tuples; numba unrolls them) -------------------------------------------
@njit(**_JIT)
def _quad(m, x0, x1, x2):
    """x . m x"""
    y = mat_vec(m, (x0, x1, x2))
    return x0 * y[0] + x1 * y[1] + x2 * y[2]


@njit(**_JIT)
def _region_mu(body_region, region_param, body_pos, body_rot, body, x0, x1, x2):
    """The friction of the first of the body's regions that holds the world point x, or -1
    (none, or the body has none): x in the body frame, R^T (x - x_b), against each region
    (model.REGION_*: a box's local = A (x - c) within its half extents, or n . x >= d)."""
    count = body_region[body, 1]
    if count == 0:
        return -1.0
    R = body_rot[body]
    d0, d1, d2 = x0 - body_pos[body, 0], x1 - body_pos[body, 1], x2 - body_pos[body, 2]
    y0 = R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2
    y1 = R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2
    y2 = R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2
    for r in range(body_region[body, 0], body_region[body, 0] + count):
        q = region_param[r]
        if q[REGION_KIND] == REGION_BOX:
            e0, e1, e2 = y0 - q[REGION_POINT], y1 - q[REGION_POINT + 1], y2 - q[REGION_POINT + 2]
            inside = True
            for k in range(3):
                a = REGION_AXES + 3 * k
                if abs(q[a] * e0 + q[a + 1] * e1 + q[a + 2] * e2) > q[REGION_HALF + k]:
                    inside = False
            if inside:
                return q[REGION_MU]
        elif (q[REGION_POINT] * y0 + q[REGION_POINT + 1] * y1 + q[REGION_POINT + 2] * y2
              >= q[REGION_HALF]):
            return q[REGION_MU]
    return -1.0


@njit(**_JIT)
def _regions_mu(body_region, region_param, body_pos, body_rot, point, impulse, first, end,
                a, b, mu_a, mu_b):
    """The sliding friction of the manifold first..end between bodies a and b when either has
    friction regions: at each point the larger of the two bodies' coefficients there (a
    region's, else the geoms' mu_a, mu_b), averaged with the weights of the points' normal
    impulses from the step before (the bound sum_i mu_i p_n,i of Coulomb friction at every
    point, one step late; the plain mean while they carry none)."""
    wsum = 0.0
    msum = 0.0
    usum = 0.0
    for c in range(first, end):
        x0, x1, x2 = point[c, 0], point[c, 1], point[c, 2]
        fa = _region_mu(body_region, region_param, body_pos, body_rot, a, x0, x1, x2)
        fb = _region_mu(body_region, region_param, body_pos, body_rot, b, x0, x1, x2)
        mu_c = max(mu_a if fa < 0.0 else fa, mu_b if fb < 0.0 else fb)
        w = impulse[c, P_N]
        if w > 0.0:
            wsum += w
            msum += w * mu_c
        usum += mu_c
    return msum / wsum if wsum > 0.0 else usum / (end - first)


# ---- rows -------------------------------------------------------------------------------------
@njit(**_JIT)
def prepare_contacts(model, state, work, points, rows, h):
    """Group the points into manifolds and pack their rows: arms, tangents, effective masses,
    materials, approach speeds and normal targets, at the poses of time t and the velocities
    before this step's forces; then split the manifolds into units (partition.py)."""
    count = points.count[0]
    nman = 0
    first = 0
    while first < count:
        ga, gb = points.geom[first, 0], points.geom[first, 1]
        end = first + 1
        while end < count and points.geom[end, 0] == ga and points.geom[end, 1] == gb:
            end += 1
        rows.man_first[nman] = first
        rows.man_tree[nman] = -1   # (articulation.prepare_trees may take it)
        nman += 1
        first = end
    rows.man_first[nman] = count
    rows.man_count[0] = nman
    cs = (points.geom, points.point, points.depth, rows.material, rows.arm,
          rows.tangent, rows.point_rows, rows.approach, rows.state)
    bodies = (state.body_pos, state.body_vel, state.body_angvel, work.body_rot,
              work.body_inv_inertia_world, model.body_inv_mass, model.body_region)
    geoms = (model.geom_material, model.geom_body, model.region_param)
    # (on one thread: on two, the pyramid's 69 us took 106 and the drop's 268 took 313; the
    # other core reads what detection wrote here, and writes what the sweeps read next)
    _pack_range(0, nman, rows.man_first, points.body, points.normal, points.impulse,
                rows.man_rows, cs, bodies, geoms, h)
    partition_manifolds(nman, rows.man_first, points.body, state.body_pos,
                        model.body_inv_mass, rows.part_order, rows.part_unit,
                        rows.part_start, rows.part_bin)


@njit(**_JIT)
def _pack_range(lo, hi, man_first, body, normal, impulse, man_rows, cs, bodies, geoms, h):
    """Manifolds lo .. hi - 1 packed (_pack_manifold). The helpers below are inlined into
    this one loop: called, each passed its ~25 arrays field by field, and the drop's packing
    took 500 us a step against 204 inlined (pyramid: 150 against 63; the same bits)."""
    for m in range(lo, hi):
        _pack_manifold(m, man_first, body, normal, impulse, man_rows, cs, bodies, geoms, h)


@njit(**INLINE)
def _pack_manifold(m, man_first, body, normal, impulse, man_rows, cs, bodies, geoms, h):
    """Manifold m's rows: its points' (_prepare_point) and its anchor's. cs: as
    _prepare_point's; bodies: (body_pos, vel, angvel, body_rot, inv_inertia_world, inv_mass,
    body_region); geoms: (geom_material, geom_body, region_param)."""
    body_pos, vel, angvel, body_rot, iiw, ima, body_region = bodies
    gm, geom_body, region_param = geoms
    geom, point, material = cs[0], cs[1], cs[3]
    first, end = man_first[m], man_first[m + 1]
    ga, gb = geom[first, 0], geom[first, 1]
    a, b = body[first, 0], body[first, 1]
    n0, n1, n2 = normal[first, 0], normal[first, 1], normal[first, 2]
    n = (n0, n1, n2)
    # tangents: t1 across the axis least aligned with n
    if abs(n0) < 0.57735:
        t1 = cross(n, (1.0, 0.0, 0.0))
    elif abs(n1) < 0.57735:
        t1 = cross(n, (0.0, 1.0, 0.0))
    else:
        t1 = cross(n, (0.0, 0.0, 1.0))
    s = 1.0 / math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
    t1 = (t1[0] * s, t1[1] * s, t1[2] * s)
    t2 = cross(n, t1)
    mu1 = mu2 = max(gm[ga, MU], gm[gb, MU])
    g = ga if gm[ga, MU_ALONG] >= 0.0 else (gb if gm[gb, MU_ALONG] >= 0.0 else -1)
    if g >= 0:   # anisotropic: t1 along the axis projected onto the contact plane
        other = gb if g == ga else ga
        ax = mat_vec(body_rot[geom_body[g]], (gm[g, AXIS], gm[g, AXIS + 1], gm[g, AXIS + 2]))
        an = ax[0] * n0 + ax[1] * n1 + ax[2] * n2
        u = (ax[0] - an * n0, ax[1] - an * n1, ax[2] - an * n2)
        ul = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
        if ul > 1e-6:   # (an axis along n leaves the plane isotropic)
            t1 = (u[0] / ul, u[1] / ul, u[2] / ul)
            t2 = cross(n, t1)
            mu1 = max(gm[g, MU_ALONG], gm[other, MU])
            mu2 = max(gm[g, MU], gm[other, MU])
    if body_region[a, 1] > 0 or body_region[b, 1] > 0:
        # friction regions (isotropic where they hold): the points' coefficients
        mu1 = mu2 = _regions_mu(body_region, region_param, body_pos, body_rot, point, impulse,
                                first, end, a, b, gm[ga, MU], gm[gb, MU])
    c0 = c1 = c2 = 0.0
    for c in range(first, end):
        _prepare_point(cs, gm, body_pos, vel, angvel, iiw, ima, c, a, b, n, t1, t2, h)
        c0 += point[c, 0]
        c1 += point[c, 1]
        c2 += point[c, 2]
    rbar = 0.0
    if end - first > 1:
        k = 1.0 / (end - first)
        c0, c1, c2 = c0 * k, c1 * k, c2 * k
        for c in range(first, end):
            rbar += math.sqrt((point[c, 0] - c0) ** 2 + (point[c, 1] - c1) ** 2
                              + (point[c, 2] - c2) ** 2)
        rbar *= k
    ra = (c0 - body_pos[a, 0], c1 - body_pos[a, 1], c2 - body_pos[a, 2])
    rb = (c0 - body_pos[b, 0], c1 - body_pos[b, 1], c2 - body_pos[b, 2])
    mat = material[first]
    _pack_anchor(man_rows[m], ima[a], ima[b], iiw[a], iiw[b], ra, rb, n, t1, t2,
                 mu1, mu2, mat[MU_ROLL], mat[MU_SPIN] + 0.5 * (mu1 + mu2) * rbar)


@njit(**INLINE)
def _prepare_point(cs, gm, body_pos, vel, angvel, iiw, ima, c, a, b, n, t1, t2, h):
    """One point: material, arms, its normal row. cs: the contacts' (points.geom, .point,
    .depth, rows.material, .arm, .tangent, .point_rows, .approach, .state) arrays, gm
    model.geom_material."""
    geom, point, depth, material, arm, tangent, rows, approach, cstate = cs
    ga, gb = geom[c, 0], geom[c, 1]
    m0, m1, m2 = point[c, 0], point[c, 1], point[c, 2]
    d = depth[c]
    for q in range(4):
        material[c, q] = max(gm[ga, q], gm[gb, q])
    ra = (m0 - body_pos[a, 0], m1 - body_pos[a, 1], m2 - body_pos[a, 2])
    rb = (m0 - body_pos[b, 0], m1 - body_pos[b, 1], m2 - body_pos[b, 2])
    for q in range(3):
        arm[c, 0, q] = ra[q]
        arm[c, 1, q] = rb[q]
        tangent[c, 0, q] = t1[q]
        tangent[c, 1, q] = t2[q]
    rec = rows[c]
    k = _pack_linear(rec, N_LIN, iiw[a], iiw[b], ra, rb, n) + ima[a] + ima[b]
    rec[N_MASS] = 1.0 / k if k > 1e-300 else 0.0
    for q in range(3):
        rec[N_DIR + q] = n[q]
    rec[N_IMA] = ima[a]
    rec[N_IMB] = ima[b]
    approach[c, 0] = _point_velocity(vel, angvel, a, b, ra, rb, n[0], n[1], n[2])
    cstate[c] = 0
    rec[N_TARGET] = d / h if d < 0.0 else 0.0   # -gap / h: close it, don't cross


@njit(**INLINE)
def _pack_linear(rec, j, iia, iib, ra, rb, u):
    """The linear block of direction u at offset j; returns its angular part of J M^-1 J^T."""
    ja = cross(ra, u)
    jb = cross(rb, u)
    wa = mat_vec(iia, ja)
    wb = mat_vec(iib, jb)
    for q in range(3):
        rec[j + q] = ja[q]
        rec[j + 3 + q] = jb[q]
        rec[j + 6 + q] = wa[q]
        rec[j + 9 + q] = wb[q]
    return (ja[0] * wa[0] + ja[1] * wa[1] + ja[2] * wa[2]
            + jb[0] * wb[0] + jb[1] * wb[1] + jb[2] * wb[2])


@njit(**INLINE)
def _pack_anchor(rec, ima, imb, iia, iib, ra, rb, n, t1, t2, mu1, mu2, roll, twist):
    dirs = (n, t1, t2)
    for r in range(3):
        u = dirs[r]
        ka = mat_vec(iia, u)
        kb = mat_vec(iib, u)
        base = M_ANG + 6 * ((r + 2) % 3)   # angular rows in t1, t2, n order
        for q in range(3):
            rec[M_DIR + 3 * r + q] = u[q]
            rec[base + q] = ka[q]
            rec[base + 3 + q] = kb[q]
        ang = (u[0] * (ka[0] + kb[0]) + u[1] * (ka[1] + kb[1]) + u[2] * (ka[2] + kb[2]))
        rec[M_MASS + 2 + (r + 2) % 3] = 1.0 / ang if ang > 1e-300 else 0.0
    for r in range(2):
        k = _pack_linear(rec, M_LIN + 12 * r, iia, iib, ra, rb, dirs[1 + r]) + ima + imb
        rec[M_MASS + r] = 1.0 / k if k > 1e-300 else 0.0
    rec[M_IMA] = ima
    rec[M_IMB] = imb
    rec[M_MU] = mu1
    rec[M_MU2] = mu2
    rec[M_ROLL] = roll
    rec[M_TWIST] = twist


# Row helpers for the warm start and restitution (once per row per step); the sweep itself,
# solve_contacts, works on local copies of the velocities instead.
@njit(inline="always", **_JIT)
def _row_velocity(rec, d, j, v, w, a, b):
    """Cdot of the linear row with direction at rec[d:d+3] and block at rec[j:j+12]."""
    return (rec[d] * (v[b, 0] - v[a, 0]) + rec[d + 1] * (v[b, 1] - v[a, 1])
            + rec[d + 2] * (v[b, 2] - v[a, 2])
            + rec[j + 3] * w[b, 0] + rec[j + 4] * w[b, 1] + rec[j + 5] * w[b, 2]
            - rec[j] * w[a, 0] - rec[j + 1] * w[a, 1] - rec[j + 2] * w[a, 2])


@njit(inline="always", **_JIT)
def _row_apply(rec, d, j, lam, ima, imb, v, w, a, b):
    """Impulse lam along that row: -lam u on A, +lam u on B at the point (a body that does
    not move, inverse mass 0, is not written: other threads read it)."""
    la, lb = lam * ima, lam * imb
    if ima > 0.0:
        for q in range(3):
            v[a, q] -= la * rec[d + q]
            w[a, q] -= lam * rec[j + 6 + q]
    if imb > 0.0:
        for q in range(3):
            v[b, q] += lb * rec[d + q]
            w[b, q] += lam * rec[j + 9 + q]


@njit(inline="always", **_JIT)
def _angular_apply(rec, k, lam, w, a, b):
    """Angular impulse lam about the anchor's axis k (0 t1, 1 t2, 2 n); as _row_apply, a
    body that does not move is not written."""
    base = M_ANG + 6 * k
    if rec[M_IMA] > 0.0:
        for q in range(3):
            w[a, q] -= lam * rec[base + q]
    if rec[M_IMB] > 0.0:
        for q in range(3):
            w[b, q] += lam * rec[base + 3 + q]


@njit(**INLINE)
def _point_velocity(vel, angvel, a, b, ra, rb, u0, u1, u2):
    """u . (vB + wB x rB - vA - wA x rA)"""
    wa, wb = angvel[a], angvel[b]
    xa = cross((wa[0], wa[1], wa[2]), ra)
    xb = cross((wb[0], wb[1], wb[2]), rb)
    va, vb = vel[a], vel[b]
    return (u0 * (vb[0] + xb[0] - va[0] - xa[0]) + u1 * (vb[1] + xb[1] - va[1] - xa[1])
            + u2 * (vb[2] + xb[2] - va[2] - xa[2]))


@njit(**_JIT)
def forced_approach(model, state, work, points, rows):
    """Cdot_n after this step's forces (gravity), before any impulse: with the speed at
    detection it gives the speed at the moment of impact inside the step."""
    args = (points.body, points.normal, rows.arm, rows.approach, state.body_vel,
            state.body_angvel)
    # (on one thread: ~10 ns a point, memory-bound; threaded, the drop's forces and approach
    # speeds took 79 us a step on two threads against 27 on one)
    for c in range(points.count[0]):
        _approach(c, args)


@njit(**INLINE)
def _approach(c, args):
    body, normal, arm, approach, vel, angvel = args
    a, b = body[c, 0], body[c, 1]
    ra = (arm[c, 0, 0], arm[c, 0, 1], arm[c, 0, 2])
    rb = (arm[c, 1, 0], arm[c, 1, 1], arm[c, 1, 2])
    approach[c, 1] = _point_velocity(vel, angvel, a, b, ra, rb, normal[c, 0], normal[c, 1],
                                     normal[c, 2])


@njit(**_JIT)
def warm_start_contacts(model, state, work, points, rows, warm):
    """Apply last step's impulses (clamped to this step's cones), or drop them; unit by unit
    (partition.py), in the order of a forward sweep."""
    if not warm:
        for c in range(points.count[0]):
            for q in range(6):
                points.impulse[c, q] = 0.0
        return
    args = (rows.man_first, points.body, points.impulse, rows.point_rows, rows.man_rows,
            state.body_vel, state.body_angvel, rows.part_order)
    # (the units in their order, on one thread: a phase's units on two threads took the
    # pyramid's 20 us to 77 and the drop's 93 to 149, this pass reading what the other core
    # wrote last; the sweeps that follow take the units on the threads)
    _warm_unit(0, rows.part_start[UNITS], args)


@njit(**_JIT)
def _warm_unit(k0, k1, args):
    """Warm start of manifolds part_order[k0:k1]."""
    first, body, impulse, point_rows, man_rows, v, w, part_order = args
    for k in range(k0, k1):
        m = part_order[k]
        f0, f1 = first[m], first[m + 1]
        a, b = body[f0, 0], body[f0, 1]
        total = 0.0
        for c in range(f0, f1):
            p = impulse[c]
            pn = max(p[P_N], 0.0)
            p[P_N] = pn
            total += pn
            rec = point_rows[c]
            if pn != 0.0:
                _row_apply(rec, N_DIR, N_LIN, pn, rec[N_IMA], rec[N_IMB], v, w, a, b)
        rec = man_rows[m]
        p = impulse[f0]
        _clamp_ellipse(p, P_T1, rec[M_MU], rec[M_MU2], total)
        _clamp_disk(p, P_R1, rec[M_ROLL] * total)
        p[P_S] = min(max(p[P_S], -rec[M_TWIST] * total), rec[M_TWIST] * total)
        for r in range(2):
            if p[P_T1 + r] != 0.0:
                _row_apply(rec, M_DIR + 3 + 3 * r, M_LIN + 12 * r, p[P_T1 + r], rec[M_IMA],
                           rec[M_IMB], v, w, a, b)
        for q in range(3):
            if p[P_R1 + q] != 0.0:
                _angular_apply(rec, q, p[P_R1 + q], w, a, b)


@njit(**_JIT)
def _clamp_ellipse(p, i, mu1, mu2, total):
    """Scale (p[i], p[i+1]) onto the ellipse (p_i / mu1)^2 + (p_i+1 / mu2)^2 <= total^2 (a
    segment, or the point 0, where a mu is 0)."""
    if not (mu1 > 0.0 and mu2 > 0.0):
        p[i] = min(max(p[i], -mu1 * total), mu1 * total)
        p[i + 1] = min(max(p[i + 1], -mu2 * total), mu2 * total)
        return
    q = (p[i] * mu2) ** 2 + (p[i + 1] * mu1) ** 2
    lim = mu1 * mu2 * total
    if q > lim * lim:
        s = lim / math.sqrt(q)
        p[i] *= s
        p[i + 1] *= s


@njit(**_JIT)
def _clamp_disk(p, i, radius):
    """Scale (p[i], p[i+1]) onto the disk of `radius`; True if it was outside."""
    m2 = p[i] * p[i] + p[i + 1] * p[i + 1]
    if m2 > radius * radius:
        s = radius / math.sqrt(m2) if m2 > 0.0 else 0.0
        p[i] *= s
        p[i + 1] *= s
        return True
    return False


@njit(**ENTRY)   # (the tests call it)
def lanes_pay(rows, iterations):
    """Whether `iterations` sweeps take the manifolds no tree block took in lanes (gather_lanes)
    rather than a manifold at a time: where iterations x points >= LANE_WORK x manifolds, and
    there are at least PARTITION_MIN manifolds. Fewer stay in one unit in their index order
    (partition.py), which the lanes would reorder: a stack of ten boxes, grouped, swept its
    even contacts before its odd ones, carried a load down the stack more slowly, and swayed
    6.1 mm from the stack left alone while its top box was dragged off (tests/
    test_physics_drag.py allows 5; in index order it stays within that), for no time gained
    on ten manifolds."""
    first = rows.man_first
    manifolds = count = 0
    for m in range(rows.man_count[0]):
        if rows.man_tree[m] < 0:
            manifolds += 1
            count += first[m + 1] - first[m]
    return manifolds >= PARTITION_MIN and iterations * count >= LANE_WORK * manifolds


@njit(**INLINE)
def gather_arrays(rows, points, inv_mass):
    """What gather_unit reads and writes."""
    return (rows.man_first, points.body, inv_mass, rows.man_tree, rows.part_order,
            rows.part_start, rows.lane_man, rows.lane_span, rows.lane_points, rows.lane_body,
            rows.lane_rows, rows.lane_impulse, rows.man_rows, rows.point_rows, points.impulse)


@njit(**_JIT)
def gather_lanes(rows, points, inv_mass):
    """The manifolds no tree block took, in groups of LANES (partition.group_unit), their
    records and impulses into the lanes (rows.lane_*), as the sweeps read them: every unit
    (gather_unit)."""
    arrays = gather_arrays(rows, points, inv_mass)
    for u in range(UNITS):
        gather_unit(u, arrays)


@njit(**_JIT)
def gather_unit(u, arrays):
    """Unit u's manifolds (those no tree block took) grouped and copied into their lanes
    (arrays: gather_arrays); an empty lane (and a point slot beyond a lane's manifold) is
    zeros, which leave every velocity and impulse as they are. It writes unit u's groups
    alone, so the units may be gathered on different threads."""
    (first, body, inv_mass, man_tree, part_order, part_start, lane_man, lane_span,
     lane_points, lane_body, R, P, man_rows, point_rows, impulse) = arrays
    group_unit(u, first, body, inv_mass, man_tree, part_order, part_start, lane_man,
               lane_span, lane_points, lane_body)
    for g in range(lane_span[u, 0], lane_span[u, 1]):
        # the anchors' records, field by field across the four lanes (an empty lane reads
        # manifold 0's, then is zeroed below)
        m0, m1 = max(lane_man[g, 0], 0), max(lane_man[g, 1], 0)
        m2, m3 = max(lane_man[g, 2], 0), max(lane_man[g, 3], 0)
        for k in range(LANE_POINT):
            R[g, k, 0] = man_rows[m0, k]
            R[g, k, 1] = man_rows[m1, k]
            R[g, k, 2] = man_rows[m2, k]
            R[g, k, 3] = man_rows[m3, k]
        slots = lane_points[g]
        for q in range(LANES):
            m = lane_man[g, q]
            n = first[m + 1] - first[m] if m >= 0 else 0
            f0 = first[m] if m >= 0 else 0
            if m < 0:   # an empty lane
                for k in range(LANE_POINT):
                    R[g, k, q] = 0.0
            for j in range(n):
                c = LANE_POINT + LANE_PACK * j
                for k in range(12):
                    R[g, c + k, q] = point_rows[f0 + j, N_LIN + k]
                R[g, c + LP_MASS, q] = point_rows[f0 + j, N_MASS]
                R[g, c + LP_TARGET, q] = point_rows[f0 + j, N_TARGET]
                P[g, j, q] = impulse[f0 + j, P_N]
            for k in range(LANE_POINT + LANE_PACK * n, LANE_POINT + LANE_PACK * slots):
                R[g, k, q] = 0.0
            for j in range(n, slots):
                P[g, j, q] = 0.0
            for r in range(5):   # the anchor's: t1, t2, r1, r2, s
                P[g, LI_T1 + r, q] = impulse[f0, P_T1 + r] if m >= 0 else 0.0


@njit(**_JIT)
def scatter_lanes(rows, points):
    """The lanes' impulses and sliding flags back to their points (gather_lanes' inverse)."""
    first, P = rows.man_first, rows.lane_impulse
    for u in range(UNITS):
        for g in range(rows.lane_span[u, 0], rows.lane_span[u, 1]):
            for q in range(LANES):
                m = rows.lane_man[g, q]
                if m < 0:
                    continue
                f0 = first[m]
                for j in range(first[m + 1] - f0):
                    points.impulse[f0 + j, P_N] = P[g, j, q]
                for r in range(5):
                    points.impulse[f0, P_T1 + r] = P[g, LI_T1 + r, q]
                points.sliding[f0] = rows.lane_sliding[g, q] != 0


@njit(**_JIT)
def solve_contacts(scalar, lanes, use_lanes, v, w, backward, part_start, lane_span,
                   part_worst, threads, gather, gathering):
    """One Gauss-Seidel sweep over the manifolds, unit by unit (partition.py: part_start,
    part_worst), the units of a phase on the step's threads; returns the largest dp^2.
    use_lanes: in their lanes (lanes: rows.lane_rows, lane_impulse, lane_body, lane_points,
    lane_sliding, from gather_lanes; lane_span), else a manifold at a time (scalar:
    rows.man_first, points.body, rows.point_rows, rows.man_rows, rows.man_tree,
    points.impulse, points.sliding, rows.part_order); body velocities v, w. It takes arrays,
    not the named tuples: it runs every iteration, and passing ~80 arrays per call cost more
    than the sweep of a small scene.
    `backward` sweeps the phases, the manifolds (groups) of each unit and the points of each
    manifold in reverse order (alternate sweeps do: a one-way sweep favours the first point
    of a face, and a stack leans by what that leaves).
    gathering (the first sweep): each unit's lanes are filled (gather_unit; gather:
    gather_arrays) right before it is swept, on the thread that sweeps it, while its records
    are still in that core's cache."""
    worst = 0.0
    for phase in range(PHASES):
        u0, n = phase_units(phase, backward)
        if phase_threaded(part_start, u0, n, threads):
            _sweep_phase(u0, n, scalar, lanes, use_lanes, v, w, backward, part_start,
                         lane_span, part_worst, gather, gathering)
        else:
            for u in range(u0, u0 + n):
                if gathering:
                    gather_unit(u, gather)
                part_worst[u] = _sweep_one(u, scalar, lanes, use_lanes, v, w, backward,
                                           part_start, lane_span)
        for u in range(u0, u0 + n):
            worst = max(worst, part_worst[u])
    return worst


@njit(**PARALLEL)
def _sweep_phase(u0, n, scalar, lanes, use_lanes, v, w, backward, part_start, lane_span,
                 part_worst, gather, gathering):
    for i in prange(n):
        u = u0 + i
        if gathering:
            gather_unit(u, gather)
        part_worst[u] = _sweep_one(u, scalar, lanes, use_lanes, v, w, backward, part_start,
                                   lane_span)


@njit(**INLINE)
def _sweep_one(u, scalar, lanes, use_lanes, v, w, backward, part_start, lane_span):
    """Unit u's sweep, in lanes or a manifold at a time; its largest dp^2."""
    if use_lanes:
        return _sweep_lanes(lane_span[u, 0], lane_span[u, 1], lanes, v, w, backward)
    first, body, rows, man_rows, man_tree, impulse, sliding, part_order = scalar
    return _sweep_unit(part_start[u], part_start[u + 1], first, body, rows, man_rows, man_tree,
                       impulse, sliding, v, w, backward, part_order)


@njit(**_JIT)
def sweeps_claimed(part_start, threads):
    """Whether a solve of contacts alone runs its sweeps claimed unit by unit in one parallel
    region (solve_contacts_claimed): where a phase of them is threaded."""
    return (phase_threaded(part_start, 0, PHASE_UNITS, threads)
            or phase_threaded(part_start, PHASE_UNITS, PHASE_UNITS, threads))


@njit(**_JIT)
def solve_contacts_claimed(scalar, lanes, use_lanes, v, w, part_start, lane_span, part_worst,
                           sync, threads, iterations, tol2, budget_s, start, gather, gathering):
    """Up to `iterations` sweeps of solve_contacts (odd ones backward) in ONE parallel region
    on `threads` threads; (sweeps done, the last one's largest dp^2). The solve stops after the
    sweep whose largest dp^2 is <= tol2, or once budget_s (> 0) seconds have passed since
    `start` (monotonic_seconds), as the loop of solver.solve_velocities does.

    solve_contacts launches a parallel loop per phase, 2-3 a sweep, and each costs ~2 us to
    start and end (measured here: 2.5-2.7 us a phase against 0.3 for this hand-off); the
    pyramid's 20 sweeps are 60 phases of ~8 us a thread. Here the threads take the units
    themselves, one at a time, from a shared counter (part_sync, partition.py): ticket k is
    unit k mod U of sweep k // U (U: the units that hold manifolds, in sweep order), and a
    thread runs it once every unit of the phases before it in that sweep is finished and the
    sweep before was decided to go on. The thread that finishes a sweep's last unit takes
    that decision. Which thread runs a unit never changes what it computes (the units of a
    phase share no moving body), so the bits are those of solve_contacts on any number of
    threads; a thread that is never started leaves its units to the others, so nothing waits
    on a given thread.

    gathering: the lanes are filled here too (use_lanes; gather: gather_arrays), each unit by
    the thread that takes it in the first sweep, before it waits for the units ahead of it.
    So the copy runs on the threads, and the first thread starts on it at once while the
    others wake up (an idle thread of the pool sleeps, and takes 50-80 us to wake here;
    before, the copy ran alone and the sweeps waited for it and for them)."""
    if gathering:   # (units with no manifold are never taken: their groups, none)
        for u in range(UNITS):
            lane_span[u, 0] = lane_span[u, 1] = part_start[u]
    nu = 0
    for d in range(2):   # the tables: the units in sweep order, each one's phase start
        t = SYNC_TABLE + 2 * UNITS * d
        nu = 0
        for phase in range(PHASES):
            u0, n = phase_units(phase, d == 1)
            before = nu
            for u in range(u0, u0 + n):
                if part_start[u + 1] > part_start[u]:
                    sync[t + nu] = u
                    sync[t + UNITS + nu] = before
                    nu += 1
    if nu == 0 or iterations <= 0:
        return 0, 0.0
    sync[SYNC_UNITS] = nu
    sync[SYNC_CLAIM] = 0
    sync[SYNC_FINISHED] = 0
    sync[SYNC_DECIDED] = 0
    sync[SYNC_STOP] = 0
    _claim_all(threads, scalar, lanes, use_lanes, v, w, part_start, lane_span, part_worst,
               sync, iterations, tol2, budget_s, start, gather, gathering)
    return sync[SYNC_STOP], part_worst[UNITS]


@njit(**PARALLEL)
def _claim_all(threads, scalar, lanes, use_lanes, v, w, part_start, lane_span, part_worst,
               sync, iterations, tol2, budget_s, start, gather, gathering):
    for _ in prange(threads):
        _claim_units(scalar, lanes, use_lanes, v, w, part_start, lane_span, part_worst, sync,
                     iterations, tol2, budget_s, start, gather, gathering)


@njit(**_JIT)
def _claim_units(scalar, lanes, use_lanes, v, w, part_start, lane_span, part_worst, sync,
                 iterations, tol2, budget_s, start, gather, gathering):
    """One thread of solve_contacts_claimed: take tickets until the solve stops."""
    nu = sync[SYNC_UNITS]
    while True:
        k = fetch_add(sync, SYNC_CLAIM, 1)
        it = k // nu
        if it >= iterations:
            return
        r = k - it * nu
        backward = it % 2 == 1
        t = SYNC_TABLE + 2 * UNITS * (1 if backward else 0)
        u = sync[t + r]
        need = it * nu + sync[t + UNITS + r]
        if gathering and it == 0:   # (unit u's groups alone: no other unit reads them)
            gather_unit(u, gather)
        spins = 0   # (a solve that stopped leaves later tickets waiting: they end)
        while ((load_acquire(sync, SYNC_FINISHED) < need
                or load_acquire(sync, SYNC_DECIDED) < it)
               and load_acquire(sync, SYNC_STOP) == 0):
            spins = relax(spins)
        if load_acquire(sync, SYNC_STOP) != 0:
            return   # (the stop came after every ticket of its sweep was finished)
        part_worst[u] = _sweep_one(u, scalar, lanes, use_lanes, v, w, backward, part_start,
                                   lane_span)
        if fetch_add(sync, SYNC_FINISHED, 1) == (it + 1) * nu - 1:
            # the sweep's last unit: its largest dp^2, and whether the solve goes on
            worst = 0.0
            for i in range(nu):
                worst = max(worst, part_worst[sync[t + i]])
            part_worst[UNITS] = worst
            if (worst <= tol2 or it + 1 == iterations
                    or (budget_s > 0.0 and monotonic_seconds() - start >= budget_s)):
                fetch_add(sync, SYNC_STOP, it + 1)
            fetch_add(sync, SYNC_DECIDED, 1)


@njit(**INLINE)
def _gather(x, i, q):
    """(x[i[0], q], ..., x[i[3], q]): a body column of four lanes."""
    return (x[i[0], q], x[i[1], q], x[i[2], q], x[i[3], q])


@njit(**INLINE)
def _dot3(a0, a1, a2, b0, b1, b2):
    """(a0 b0 + a1 b1) + a2 b2, lane by lane."""
    return vadd(vadd(vmul(a0, b0), vmul(a1, b1)), vmul(a2, b2))


@njit(**INLINE)
def _turns(R, g, c, wa0, wa1, wa2, wb0, wb1, wb2):
    """The three terms jB_k wB_k - jA_k wA_k of a row's angular part, its jA at R[g, c:c+3]
    and jB at R[g, c+3:c+6], lane by lane (summed by the callers in the scalar sweep's
    order)."""
    return (vsub(vmul(vload(R, g, c + 3), wb0), vmul(vload(R, g, c), wa0)),
            vsub(vmul(vload(R, g, c + 4), wb1), vmul(vload(R, g, c + 1), wa1)),
            vsub(vmul(vload(R, g, c + 5), wb2), vmul(vload(R, g, c + 2), wa2)))


@njit(**INLINE)
def _anchor_rate(R, g, d, c, dv0, dv1, dv2, wa0, wa1, wa2, wb0, wb1, wb2):
    """Cdot of the anchor's sliding row with direction R[g, d:d+3] and block at R[g, c:...]:
    ((u . dv) + (turn0 + turn1)) + turn2."""
    t0, t1, t2 = _turns(R, g, c, wa0, wa1, wa2, wb0, wb1, wb2)
    return vadd(vadd(_dot3(vload(R, g, d), vload(R, g, d + 1), vload(R, g, d + 2),
                           dv0, dv1, dv2), vadd(t0, t1)), t2)


@njit(**_JIT)
def _sweep_lanes(g0, g1, lanes, v, w, backward):
    """The sweep over groups g0 .. g1 - 1 (reversed if backward), the LANES manifolds of a
    group at once (lanes.py; the records: contact.LANE_POINT ...); the largest dp^2.

    Each lane does what a sweep of its manifold alone would: the normals (eq. 20) point by
    point, then the anchor's sliding pair on its ellipse (eq. 21), rolling and twisting, the
    bodies' velocities in locals from the first row to the last. The manifolds of a group
    share no moving body, so this is the sweep of its lanes one after another, to the bit.
    A branch of the scalar sweep is a select here: each lane computes both sides."""
    R, P, body, points, sliding = lanes
    worst = 0.0
    zero = splat(0.0)
    for i in range(g1 - g0):
        g = g1 - 1 - i if backward else g0 + i
        a = (body[g, 0, 0], body[g, 0, 1], body[g, 0, 2], body[g, 0, 3])
        b = (body[g, 1, 0], body[g, 1, 1], body[g, 1, 2], body[g, 1, 3])
        ima, imb = vload(R, g, M_IMA), vload(R, g, M_IMB)
        va0, va1, va2 = _gather(v, a, 0), _gather(v, a, 1), _gather(v, a, 2)
        vb0, vb1, vb2 = _gather(v, b, 0), _gather(v, b, 1), _gather(v, b, 2)
        wa0, wa1, wa2 = _gather(w, a, 0), _gather(w, a, 1), _gather(w, a, 2)
        wb0, wb1, wb2 = _gather(w, b, 0), _gather(w, b, 1), _gather(w, b, 2)
        # normals (eq. 20): p_n >= 0, point by point; the linear part of Cdot_n, n . (vB - vA),
        # kept as one number that each dp moves by dp (1/mA + 1/mB), the linear velocities
        # taking the sum of the dp once, at the end
        n0, n1, n2 = vload(R, g, M_DIR), vload(R, g, M_DIR + 1), vload(R, g, M_DIR + 2)
        lin = _dot3(n0, n1, n2, vsub(vb0, va0), vsub(vb1, va1), vsub(vb2, va2))
        kl = vadd(ima, imb)
        total = moved = wl = zero
        slots = points[g]   # (slot by slot: a loop over the slots took 1.2-1.3x as long)
        if slots > 0:
            lin, total, moved, wl, wa0, wa1, wa2, wb0, wb1, wb2 = _normal_slot(
                R, P, g, slots - 1 if backward else 0, lin, kl, total, moved, wl,
                wa0, wa1, wa2, wb0, wb1, wb2)
        if slots > 1:
            lin, total, moved, wl, wa0, wa1, wa2, wb0, wb1, wb2 = _normal_slot(
                R, P, g, slots - 2 if backward else 1, lin, kl, total, moved, wl,
                wa0, wa1, wa2, wb0, wb1, wb2)
        if slots > 2:
            lin, total, moved, wl, wa0, wa1, wa2, wb0, wb1, wb2 = _normal_slot(
                R, P, g, slots - 3 if backward else 2, lin, kl, total, moved, wl,
                wa0, wa1, wa2, wb0, wb1, wb2)
        if slots > 3:
            lin, total, moved, wl, wa0, wa1, wa2, wb0, wb1, wb2 = _normal_slot(
                R, P, g, slots - 4 if backward else 3, lin, kl, total, moved, wl,
                wa0, wa1, wa2, wb0, wb1, wb2)
        u0, u1, u2 = vmul(moved, n0), vmul(moved, n1), vmul(moved, n2)
        va0, va1, va2, vb0, vb1, vb2 = _lane_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb,
                                                  u0, u1, u2)
        # sliding friction (eq. 21): the accumulated (p_t1, p_t2) scaled onto the disk mu P
        # (the ellipse, for anisotropic friction; a segment or the point 0 where a mu is 0)
        dv0, dv1, dv2 = vsub(vb0, va0), vsub(vb1, va1), vsub(vb2, va2)
        v1 = _anchor_rate(R, g, M_DIR + 3, M_LIN, dv0, dv1, dv2, wa0, wa1, wa2, wb0, wb1, wb2)
        v2 = _anchor_rate(R, g, M_DIR + 6, M_LIN + 12, dv0, dv1, dv2, wa0, wa1, wa2, wb0, wb1,
                          wb2)
        o1, o2 = vload(P, g, LI_T1), vload(P, g, LI_T2)
        k1, k2 = vload(R, g, M_MASS), vload(R, g, M_MASS + 1)
        t1, t2 = vsub(o1, vmul(k1, v1)), vsub(o2, vmul(k2, v2))
        mu1, mu2 = vload(R, g, M_MU), vload(R, g, M_MU2)
        both = vand(vgt(mu1, zero), vgt(mu2, zero))
        lim = vmul(vmul(mu1, mu2), total)   # the ellipse (t1 / mu1)^2 + (t2 / mu2)^2 <= total^2
        q = _square_sum(vmul(t1, mu2), vmul(t2, mu1))
        slide = vgt(q, vmul(lim, lim))
        # anisotropic and sliding: the step of maximal dissipation, then the clamp (each
        # skipped where no lane needs it: a resting pile slides nowhere)
        e1, e2 = t1, t2
        aniso = vand(slide, vne(mu1, mu2))
        if vany(aniso):
            top = vmax(vmul(mu1, mu1), vmul(mu2, mu2))
            e1 = vsel(aniso, vsub(o1, vmul(vmul(k1, v1), vdiv(vmul(mu1, mu1), top))), t1)
            e2 = vsel(aniso, vsub(o2, vmul(vmul(k2, v2), vdiv(vmul(mu2, mu2), top))), t2)
            q = _square_sum(vmul(e1, mu2), vmul(e2, mu1))
        clamp = vand(slide, vgt(q, vmul(lim, lim)))
        if vany(clamp):
            scale = vdiv(lim, vsqrt(q))
            e1 = vsel(clamp, vmul(e1, scale), e1)
            e2 = vsel(clamp, vmul(e2, scale), e2)
        c1, c2 = vmul(mu1, total), vmul(mu2, total)
        s1 = vmin(vmax(t1, vmul(c1, splat(-1.0))), c1)
        s2 = vmin(vmax(t2, vmul(c2, splat(-1.0))), c2)
        slide = msel(both, slide, vor(vne(s1, t1), vne(s2, t2)))
        t1, t2 = vsel(both, e1, s1), vsel(both, e2, s2)
        vstore(P, g, LI_T1, t1)
        vstore(P, g, LI_T2, t2)
        d1, d2 = vsub(t1, o1), vsub(t2, o2)
        x0 = vadd(vmul(d1, vload(R, g, M_DIR + 3)), vmul(d2, vload(R, g, M_DIR + 6)))
        x1 = vadd(vmul(d1, vload(R, g, M_DIR + 4)), vmul(d2, vload(R, g, M_DIR + 7)))
        x2 = vadd(vmul(d1, vload(R, g, M_DIR + 5)), vmul(d2, vload(R, g, M_DIR + 8)))
        va0, va1, va2, vb0, vb1, vb2 = _lane_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb,
                                                  x0, x1, x2)
        wa0, wa1, wa2, wb0, wb1, wb2 = _angular_kick(R, g, M_LIN + 6, M_LIN + 18, d1, d2,
                                                     wa0, wa1, wa2, wb0, wb1, wb2)
        wl = vmax(wl, vadd(vmul(d1, d1), vmul(d2, d2)))
        # rolling friction: the disk mu_roll P, about the tangents (nothing where mu_roll is 0,
        # as in the scalar sweep: skipped where no lane has it)
        roll = vgt(vload(R, g, M_ROLL), zero)
        if vany(roll):
            w0, w1, w2 = vsub(wb0, wa0), vsub(wb1, wa1), vsub(wb2, wa2)
            o1, o2 = vload(P, g, LI_R1), vload(P, g, LI_R2)
            r1 = vsub(o1, vmul(vload(R, g, M_MASS + 2),
                               _dot3(vload(R, g, M_DIR + 3), vload(R, g, M_DIR + 4),
                                     vload(R, g, M_DIR + 5), w0, w1, w2)))
            r2 = vsub(o2, vmul(vload(R, g, M_MASS + 3),
                               _dot3(vload(R, g, M_DIR + 6), vload(R, g, M_DIR + 7),
                                     vload(R, g, M_DIR + 8), w0, w1, w2)))
            lim = vmul(vload(R, g, M_ROLL), total)
            q = vadd(vmul(r1, r1), vmul(r2, r2))
            over = vgt(q, vmul(lim, lim))
            scale = vsel(vgt(q, zero), vdiv(lim, vsqrt(q)), zero)
            r1 = vsel(roll, vsel(over, vmul(r1, scale), r1), o1)
            r2 = vsel(roll, vsel(over, vmul(r2, scale), r2), o2)
            vstore(P, g, LI_R1, r1)
            vstore(P, g, LI_R2, r2)
            d1, d2 = vsub(r1, o1), vsub(r2, o2)
            wa0, wa1, wa2, wb0, wb1, wb2 = _angular_kick(R, g, M_ANG, M_ANG + 6, d1, d2,
                                                         wa0, wa1, wa2, wb0, wb1, wb2)
            wl = vmax(wl, vadd(vmul(d1, d1), vmul(d2, d2)))
        # twisting (spinning) friction: |p_s| <= (mu_spin + mu rbar) P, about the normal
        twist = vload(R, g, M_TWIST)
        spin = vgt(twist, zero)
        if vany(spin):
            ws = _dot3(n0, n1, n2, vsub(wb0, wa0), vsub(wb1, wa1), vsub(wb2, wa2))
            old = vload(P, g, LI_S)
            lim = vmul(twist, total)
            ps = vmin(vmax(vsub(old, vmul(vload(R, g, M_MASS + 4), ws)),
                           vmul(lim, splat(-1.0))), lim)
            ps = vsel(spin, ps, old)
            vstore(P, g, LI_S, ps)
            d = vsub(ps, old)
            wa0, wa1, wa2, wb0, wb1, wb2 = _angular_kick(R, g, M_ANG + 12, -1, d, zero,
                                                         wa0, wa1, wa2, wb0, wb1, wb2)
            wl = vmax(wl, vmul(d, d))
        # each lane's flag, dp^2 and bodies, written out lane by lane (by a helper, or a loop
        # over the lanes, the sweep took 1.25-1.45x as long); a body that does not move is not
        # written: other threads read it
        sliding[g, 0] = 1 if slide[0] else 0
        worst = max(worst, wl[0])
        if ima[0] > 0.0:
            v[a[0], 0], v[a[0], 1], v[a[0], 2] = va0[0], va1[0], va2[0]
            w[a[0], 0], w[a[0], 1], w[a[0], 2] = wa0[0], wa1[0], wa2[0]
        if imb[0] > 0.0:
            v[b[0], 0], v[b[0], 1], v[b[0], 2] = vb0[0], vb1[0], vb2[0]
            w[b[0], 0], w[b[0], 1], w[b[0], 2] = wb0[0], wb1[0], wb2[0]
        sliding[g, 1] = 1 if slide[1] else 0
        worst = max(worst, wl[1])
        if ima[1] > 0.0:
            v[a[1], 0], v[a[1], 1], v[a[1], 2] = va0[1], va1[1], va2[1]
            w[a[1], 0], w[a[1], 1], w[a[1], 2] = wa0[1], wa1[1], wa2[1]
        if imb[1] > 0.0:
            v[b[1], 0], v[b[1], 1], v[b[1], 2] = vb0[1], vb1[1], vb2[1]
            w[b[1], 0], w[b[1], 1], w[b[1], 2] = wb0[1], wb1[1], wb2[1]
        sliding[g, 2] = 1 if slide[2] else 0
        worst = max(worst, wl[2])
        if ima[2] > 0.0:
            v[a[2], 0], v[a[2], 1], v[a[2], 2] = va0[2], va1[2], va2[2]
            w[a[2], 0], w[a[2], 1], w[a[2], 2] = wa0[2], wa1[2], wa2[2]
        if imb[2] > 0.0:
            v[b[2], 0], v[b[2], 1], v[b[2], 2] = vb0[2], vb1[2], vb2[2]
            w[b[2], 0], w[b[2], 1], w[b[2], 2] = wb0[2], wb1[2], wb2[2]
        sliding[g, 3] = 1 if slide[3] else 0
        worst = max(worst, wl[3])
        if ima[3] > 0.0:
            v[a[3], 0], v[a[3], 1], v[a[3], 2] = va0[3], va1[3], va2[3]
            w[a[3], 0], w[a[3], 1], w[a[3], 2] = wa0[3], wa1[3], wa2[3]
        if imb[3] > 0.0:
            v[b[3], 0], v[b[3], 1], v[b[3], 2] = vb0[3], vb1[3], vb2[3]
            w[b[3], 0], w[b[3], 1], w[b[3], 2] = wb0[3], wb1[3], wb2[3]
    return worst


@njit(**INLINE)
def _normal_slot(R, P, g, j, lin, kl, total, moved, wl, wa0, wa1, wa2, wb0, wb1, wb2):
    """Point slot j's normal row (eq. 20), lane by lane: p_n >= 0 stored, and (lin, total,
    moved, largest dp^2, wA, wB) after it."""
    c = LANE_POINT + LANE_PACK * j
    t0, t1, t2 = _turns(R, g, c, wa0, wa1, wa2, wb0, wb1, wb2)
    vn = vadd(vadd(lin, t0), vadd(t1, t2))
    old = vload(P, g, j)
    pn = vmax(vadd(old, vmul(vload(R, g, c + LP_MASS), vsub(vload(R, g, c + LP_TARGET), vn))),
              splat(0.0))
    vstore(P, g, j, pn)
    dp = vsub(pn, old)
    return (vadd(lin, vmul(dp, kl)), vadd(total, pn), vadd(moved, dp), vmax(wl, vmul(dp, dp)),
            vsub(wa0, vmul(dp, vload(R, g, c + 6))), vsub(wa1, vmul(dp, vload(R, g, c + 7))),
            vsub(wa2, vmul(dp, vload(R, g, c + 8))), vadd(wb0, vmul(dp, vload(R, g, c + 9))),
            vadd(wb1, vmul(dp, vload(R, g, c + 10))), vadd(wb2, vmul(dp, vload(R, g, c + 11))))


@njit(**INLINE)
def _lane_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb, u0, u1, u2):
    """The linear velocities after the impulse u on B (-u on A), lane by lane."""
    return (vsub(va0, vmul(ima, u0)), vsub(va1, vmul(ima, u1)), vsub(va2, vmul(ima, u2)),
            vadd(vb0, vmul(imb, u0)), vadd(vb1, vmul(imb, u1)), vadd(vb2, vmul(imb, u2)))


@njit(**INLINE)
def _square_sum(x, y):
    """x^2 + y^2, lane by lane."""
    return vadd(vmul(x, x), vmul(y, y))


@njit(**INLINE)
def _angular_kick(R, g, k1, k2, d1, d2, wa0, wa1, wa2, wb0, wb1, wb2):
    """The angular velocities after impulses d1, d2 along the rows whose IA^-1 j, IB^-1 j lie
    at R[g, k:k+3], R[g, k+3:k+6] (k2 < 0: d1 alone): wA -= d1 IA^-1 j1 + d2 IA^-1 j2, wB +=
    ... (the scalar sweep's order of operations)."""
    if k2 < 0:
        return (vsub(wa0, vmul(d1, vload(R, g, k1))),
                vsub(wa1, vmul(d1, vload(R, g, k1 + 1))),
                vsub(wa2, vmul(d1, vload(R, g, k1 + 2))),
                vadd(wb0, vmul(d1, vload(R, g, k1 + 3))),
                vadd(wb1, vmul(d1, vload(R, g, k1 + 4))),
                vadd(wb2, vmul(d1, vload(R, g, k1 + 5))))
    return (vsub(wa0, vadd(vmul(d1, vload(R, g, k1)), vmul(d2, vload(R, g, k2)))),
            vsub(wa1, vadd(vmul(d1, vload(R, g, k1 + 1)), vmul(d2, vload(R, g, k2 + 1)))),
            vsub(wa2, vadd(vmul(d1, vload(R, g, k1 + 2)), vmul(d2, vload(R, g, k2 + 2)))),
            vadd(wb0, vadd(vmul(d1, vload(R, g, k1 + 3)), vmul(d2, vload(R, g, k2 + 3)))),
            vadd(wb1, vadd(vmul(d1, vload(R, g, k1 + 4)), vmul(d2, vload(R, g, k2 + 4)))),
            vadd(wb2, vadd(vmul(d1, vload(R, g, k1 + 5)), vmul(d2, vload(R, g, k2 + 5)))))


@njit(inline="always", **_JIT)
def _linear_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb, u0, u1, u2):
    """The linear velocities after the impulse u on B (-u on A), as a tuple of locals."""
    return (va0 - ima * u0, va1 - ima * u1, va2 - ima * u2,
            vb0 + imb * u0, vb1 + imb * u1, vb2 + imb * u2)


@njit(**_JIT)
def _sweep_unit(lo, hi, first, body, rows, man_rows, man_tree, impulse, sliding, v, w,
                backward, part_order):
    """The sweep over manifolds part_order[lo:hi] (reversed if backward); the largest dp^2.

    A manifold's rows all act on the same two bodies, so their velocities are read once into
    locals, updated there by every row of the manifold and written back at its end; records
    are indexed in place (rows[c, k], not a view rows[c]: a view costs a reference count,
    and dropping them took the pyramid's sweep from 45 to 37 us, measured)."""
    worst = 0.0
    for i in range(hi - lo):
        m = part_order[hi - 1 - i if backward else lo + i]
        if man_tree[m] >= 0:
            continue   # a tree block's (articulation.py)
        f0, f1 = first[m], first[m + 1]
        a, b = body[f0, 0], body[f0, 1]
        ima, imb = man_rows[m, M_IMA], man_rows[m, M_IMB]
        va0, va1, va2 = v[a, 0], v[a, 1], v[a, 2]
        vb0, vb1, vb2 = v[b, 0], v[b, 1], v[b, 2]
        wa0, wa1, wa2 = w[a, 0], w[a, 1], w[a, 2]
        wb0, wb1, wb2 = w[b, 0], w[b, 1], w[b, 2]
        # normals (eq. 20): p_n >= 0, point by point.  They share n, so the linear part of
        # Cdot_n, n . (vB - vA), is kept as one number that each dp moves by dp (1/mA + 1/mB),
        # and the bodies' linear velocities take the sum of the dp once, at the end
        n0, n1, n2 = man_rows[m, 0], man_rows[m, 1], man_rows[m, 2]
        lin = n0 * (vb0 - va0) + n1 * (vb1 - va1) + n2 * (vb2 - va2)
        kl = ima + imb
        total = 0.0
        moved = 0.0
        for j in range(f1 - f0):
            c = f1 - 1 - j if backward else f0 + j
            vn = ((lin + (rows[c, 6] * wb0 - rows[c, 3] * wa0))
                  + ((rows[c, 7] * wb1 - rows[c, 4] * wa1) + (rows[c, 8] * wb2
                                                              - rows[c, 5] * wa2)))
            old = impulse[c, P_N]
            pn = max(old + rows[c, N_MASS] * (rows[c, N_TARGET] - vn), 0.0)
            impulse[c, P_N] = pn
            total += pn
            dp = pn - old
            if dp != 0.0:
                lin += dp * kl
                moved += dp
                wa0 -= dp * rows[c, 9]
                wa1 -= dp * rows[c, 10]
                wa2 -= dp * rows[c, 11]
                wb0 += dp * rows[c, 12]
                wb1 += dp * rows[c, 13]
                wb2 += dp * rows[c, 14]
                worst = max(worst, dp * dp)
        if moved != 0.0:
            va0, va1, va2, vb0, vb1, vb2 = _linear_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb,
                                                        moved * n0, moved * n1, moved * n2)
        # sliding friction (eq. 21): the accumulated (p_t1, p_t2) scaled onto the disk mu P
        # (the ellipse, for anisotropic friction)
        dv0, dv1, dv2 = vb0 - va0, vb1 - va1, vb2 - va2
        v1 = (((man_rows[m, 3] * dv0 + man_rows[m, 4] * dv1) + man_rows[m, 5] * dv2)
              + ((man_rows[m, 12] * wb0 - man_rows[m, 9] * wa0)
                 + (man_rows[m, 13] * wb1 - man_rows[m, 10] * wa1))
              + (man_rows[m, 14] * wb2 - man_rows[m, 11] * wa2))
        v2 = (((man_rows[m, 6] * dv0 + man_rows[m, 7] * dv1) + man_rows[m, 8] * dv2)
              + ((man_rows[m, 24] * wb0 - man_rows[m, 21] * wa0)
                 + (man_rows[m, 25] * wb1 - man_rows[m, 22] * wa1))
              + (man_rows[m, 26] * wb2 - man_rows[m, 23] * wa2))
        o1, o2 = impulse[f0, P_T1], impulse[f0, P_T2]
        t1 = o1 - man_rows[m, M_MASS] * v1
        t2 = o2 - man_rows[m, M_MASS + 1] * v2
        mu1, mu2 = man_rows[m, M_MU], man_rows[m, M_MU2]
        if mu1 > 0.0 and mu2 > 0.0:
            lim = mu1 * mu2 * total   # the ellipse (t1 / mu1)^2 + (t2 / mu2)^2 <= total^2
            q = (t1 * mu2) ** 2 + (t2 * mu1) ** 2
            slide = q > lim * lim
            if slide:
                if mu1 != mu2:   # anisotropic: the step of maximal dissipation, then the clamp
                    top = max(mu1 * mu1, mu2 * mu2)
                    t1 = o1 - man_rows[m, M_MASS] * v1 * (mu1 * mu1 / top)
                    t2 = o2 - man_rows[m, M_MASS + 1] * v2 * (mu2 * mu2 / top)
                    q = (t1 * mu2) ** 2 + (t2 * mu1) ** 2
                if q > lim * lim:
                    scale = lim / math.sqrt(q)
                    t1 *= scale
                    t2 *= scale
        else:   # a mu of 0: the ellipse is a segment or the point 0 (no friction along it)
            c1, c2 = mu1 * total, mu2 * total
            n1, n2 = min(max(t1, -c1), c1), min(max(t2, -c2), c2)
            slide = n1 != t1 or n2 != t2
            t1, t2 = n1, n2
        impulse[f0, P_T1] = t1
        impulse[f0, P_T2] = t2
        sliding[f0] = slide   # (the manifold's other points: spread_sliding, after the sweeps)
        d1, d2 = t1 - o1, t2 - o2
        if d1 != 0.0 or d2 != 0.0:   # both tangents in one update
            va0, va1, va2, vb0, vb1, vb2 = _linear_kick(
                va0, va1, va2, vb0, vb1, vb2, ima, imb,
                d1 * man_rows[m, 3] + d2 * man_rows[m, 6],
                d1 * man_rows[m, 4] + d2 * man_rows[m, 7],
                d1 * man_rows[m, 5] + d2 * man_rows[m, 8])
            wa0 -= d1 * man_rows[m, 15] + d2 * man_rows[m, 27]
            wa1 -= d1 * man_rows[m, 16] + d2 * man_rows[m, 28]
            wa2 -= d1 * man_rows[m, 17] + d2 * man_rows[m, 29]
            wb0 += d1 * man_rows[m, 18] + d2 * man_rows[m, 30]
            wb1 += d1 * man_rows[m, 19] + d2 * man_rows[m, 31]
            wb2 += d1 * man_rows[m, 20] + d2 * man_rows[m, 32]
            worst = max(worst, d1 * d1 + d2 * d2)
        # rolling friction: the disk mu_roll P, about the tangents
        if man_rows[m, M_ROLL] > 0.0:
            w0, w1, w2 = wb0 - wa0, wb1 - wa1, wb2 - wa2
            o1, o2 = impulse[f0, P_R1], impulse[f0, P_R2]
            impulse[f0, P_R1] = o1 - man_rows[m, M_MASS + 2] * (
                man_rows[m, 3] * w0 + man_rows[m, 4] * w1 + man_rows[m, 5] * w2)
            impulse[f0, P_R2] = o2 - man_rows[m, M_MASS + 3] * (
                man_rows[m, 6] * w0 + man_rows[m, 7] * w1 + man_rows[m, 8] * w2)
            r1, r2 = impulse[f0, P_R1], impulse[f0, P_R2]
            lim = man_rows[m, M_ROLL] * total
            m2 = r1 * r1 + r2 * r2
            if m2 > lim * lim:
                scale = lim / math.sqrt(m2) if m2 > 0.0 else 0.0
                impulse[f0, P_R1] = r1 * scale
                impulse[f0, P_R2] = r2 * scale
            d1, d2 = impulse[f0, P_R1] - o1, impulse[f0, P_R2] - o2
            k1, k2 = M_ANG, M_ANG + 6
            wa0 -= d1 * man_rows[m, k1] + d2 * man_rows[m, k2]
            wa1 -= d1 * man_rows[m, k1 + 1] + d2 * man_rows[m, k2 + 1]
            wa2 -= d1 * man_rows[m, k1 + 2] + d2 * man_rows[m, k2 + 2]
            wb0 += d1 * man_rows[m, k1 + 3] + d2 * man_rows[m, k2 + 3]
            wb1 += d1 * man_rows[m, k1 + 4] + d2 * man_rows[m, k2 + 4]
            wb2 += d1 * man_rows[m, k1 + 5] + d2 * man_rows[m, k2 + 5]
            worst = max(worst, d1 * d1 + d2 * d2)
        # twisting (spinning) friction: |p_s| <= (mu_spin + mu rbar) P, about the normal
        if man_rows[m, M_TWIST] > 0.0:
            ws = (man_rows[m, 0] * (wb0 - wa0) + man_rows[m, 1] * (wb1 - wa1)
                  + man_rows[m, 2] * (wb2 - wa2))
            old = impulse[f0, P_S]
            lim = man_rows[m, M_TWIST] * total
            impulse[f0, P_S] = min(max(old - man_rows[m, M_MASS + 4] * ws, -lim), lim)
            d = impulse[f0, P_S] - old
            k = M_ANG + 12
            wa0 -= d * man_rows[m, k]
            wa1 -= d * man_rows[m, k + 1]
            wa2 -= d * man_rows[m, k + 2]
            wb0 += d * man_rows[m, k + 3]
            wb1 += d * man_rows[m, k + 4]
            wb2 += d * man_rows[m, k + 5]
            worst = max(worst, d * d)
        if ima > 0.0:   # (a body that does not move is not written: other threads read it)
            v[a, 0], v[a, 1], v[a, 2] = va0, va1, va2
            w[a, 0], w[a, 1], w[a, 2] = wa0, wa1, wa2
        if imb > 0.0:
            v[b, 0], v[b, 1], v[b, 2] = vb0, vb1, vb2
            w[b, 0], w[b, 1], w[b, 2] = wb0, wb1, wb2
    return worst


@njit(**_JIT)
def spread_sliding(points, rows):
    """After the sweeps: every point of a manifold gets its first point's sliding flag."""
    first = rows.man_first
    for m in range(rows.man_count[0]):
        for c in range(first[m] + 1, first[m + 1]):
            points.sliding[c] = points.sliding[first[m]]


@njit(**_JIT)
def restitution(model, state, work, points, rows, h):
    """Eq. 19 after the iterations: points that came in faster than RESTITUTION_SPEED and
    carry a normal impulse leave at e times their approach speed.  A point that was still
    apart (gap g) met its partner at tau = g / u within the step (u = -v_n0) and has since
    moved away for h - tau: its end-of-step separation is e (u h - g), which the position
    pass sets (BOUNCED)."""
    for c in range(points.count[0]):
        e = rows.material[c, RESTITUTION]
        v0 = rows.approach[c, 0]
        if rows.state[c] != 0 or e <= 0.0 or v0 >= -RESTITUTION_SPEED:
            continue
        p = points.impulse[c]
        if p[P_N] <= 0.0:
            continue
        # the speed at impact: the forces of the step act until tau = gap / u
        gap = max(-points.depth[c], 0.0)
        tau = min(gap / -v0, h)
        v0 = v0 + (rows.approach[c, 1] - v0) * (tau / h)
        a, b = points.body[c, 0], points.body[c, 1]
        v, w = state.body_vel, state.body_angvel
        rec = rows.point_rows[c]
        vn = _row_velocity(rec, N_DIR, N_LIN, v, w, a, b)
        old = p[P_N]
        pn = max(old + rec[N_MASS] * (-e * v0 - vn), 0.0)
        p[P_N] = pn
        _row_apply(rec, N_DIR, N_LIN, pn - old, rec[N_IMA], rec[N_IMB], v, w, a, b)
        if gap > 0.0:
            rows.state[c] = BOUNCED
            rows.bounce[c] = -e * v0 * (h - tau)


@njit(**_JIT)
def solve_contact_positions(model, state, work, points, rows, threads):
    """One nonlinear Gauss-Seidel sweep removing overlap (poses only), unit by unit
    (partition.py), the units of a phase on the step's threads; returns the largest overlap
    left beyond the slop before this sweep's corrections (> 0 whenever the sweep moved
    anything)."""
    args = (rows.man_first, points.body, points.normal, points.local, rows.state, rows.bounce,
            state.body_pos, state.body_quat, model.body_inv_mass,
            work.body_inv_inertia_world, rows.part_order)
    worst = 0.0
    for phase in range(PHASES):
        u0, n = phase_units(phase, False)
        if phase_threaded(rows.part_start, u0, n, threads):
            _positions_phase(u0, n, rows.part_start, rows.part_worst, args)
        else:
            for u in range(u0, u0 + n):
                rows.part_worst[u] = _positions_unit(rows.part_start[u],
                                                     rows.part_start[u + 1], args)
        for u in range(u0, u0 + n):
            worst = max(worst, rows.part_worst[u])
    return worst


@njit(**PARALLEL)
def _positions_phase(u0, n, part_start, part_worst, args):
    for i in prange(n):
        part_worst[u0 + i] = _positions_unit(part_start[u0 + i], part_start[u0 + i + 1], args)


@njit(**_JIT)
def _positions_unit(k0, k1, args):
    """The position sweep over the points of manifolds part_order[k0:k1]."""
    first, body, normal, local, cstate, bounce, body_pos, body_quat, ima, iiw, part_order = args
    worst = 0.0
    for k in range(k0, k1):
        m = part_order[k]
        for c in range(first[m], first[m + 1]):
            a, b = body[c, 0], body[c, 1]
            n0, n1, n2 = normal[c, 0], normal[c, 1], normal[c, 2]
            qa, qb = body_quat[a], body_quat[b]
            la, lb = local[c, 0], local[c, 1]
            ra = quat_rotate(qa, la)
            rb = quat_rotate(qb, lb)
            xa, xb = body_pos[a], body_pos[b]
            d = (n0 * (xa[0] + ra[0] - xb[0] - rb[0]) + n1 * (xa[1] + ra[1] - xb[1] - rb[1])
                 + n2 * (xa[2] + ra[2] - xb[2] - rb[2]))
            if cstate[c] == BOUNCED:
                # place the bounce once, exactly (either way along n), then a normal point
                err = d + bounce[c]
                cstate[c] = 0
                if err == 0.0:
                    continue
                worst = max(worst, abs(err))
                factor = 1.0
            else:
                err = d - LINEAR_SLOP
                if err <= 0.0:
                    continue
                worst = max(worst, err)
                factor = POSITION_FACTOR
            ca = cross(ra, (n0, n1, n2))
            cb = cross(rb, (n0, n1, n2))
            kk = (ima[a] + ima[b] + _quad(iiw[a], ca[0], ca[1], ca[2])
                  + _quad(iiw[b], cb[0], cb[1], cb[2]))
            if kk <= 1e-300:
                continue
            lam = min(max(factor * err, -MAX_CORRECTION), MAX_CORRECTION) / kk
            # A moves along -n, B along +n; each turns about its own arm (a body that does
            # not move is not written: other threads read it)
            if ima[a] > 0.0:
                for q in range(3):
                    xa[q] -= ima[a] * lam * (n0, n1, n2)[q]
                ta = mat_vec(iiw[a], ca)
                _turn(qa, -lam * ta[0], -lam * ta[1], -lam * ta[2])
            if ima[b] > 0.0:
                for q in range(3):
                    xb[q] += ima[b] * lam * (n0, n1, n2)[q]
                tb = mat_vec(iiw[b], cb)
                _turn(qb, lam * tb[0], lam * tb[1], lam * tb[2])
    return worst


@njit(**_JIT)
def _turn(q, r0, r1, r2):
    """q <- exp(r / 2) q (world rotation vector r), in place."""
    turned = quat_rotated((q[0], q[1], q[2], q[3]), (r0, r1, r2))
    for i in range(4):
        q[i] = turned[i]


@njit(**_JIT)
def contact_wrenches(model, state, points, rows, h):
    """Each body's contact sensor: the summed contact force on it (N) and its torque about the
    centre of mass (N m), world, from the step's impulses (state.body_contact, force then
    torque). Point i of a manifold pushes B by p_n,i n at its arm rB,i (and A by the opposite
    at rA,i); the manifold's sliding impulse p_t1 t1 + p_t2 t2 acts at the centroid of its
    points, its rolling and twisting impulses p_r1 t1 + p_r2 t2 + p_s n are torques:
        F_B += f,  T_B += rB x f (+ the rolling and twisting torque),  and - for A."""
    out = state.body_contact
    out[:] = 0.0
    if points.count[0] == 0:
        return
    inv_h = 1.0 / h
    for m in range(rows.man_count[0]):
        first, end = rows.man_first[m], rows.man_first[m + 1]
        a, b = points.body[first, 0], points.body[first, 1]
        n = (points.normal[first, 0], points.normal[first, 1], points.normal[first, 2])
        t1 = (rows.tangent[first, 0, 0], rows.tangent[first, 0, 1],
              rows.tangent[first, 0, 2])
        t2 = (rows.tangent[first, 1, 0], rows.tangent[first, 1, 1],
              rows.tangent[first, 1, 2])
        p = points.impulse[first]
        k = 1.0 / (end - first)
        ca = (0.0, 0.0, 0.0)   # the centroid's arms from A's and B's centres
        cb = (0.0, 0.0, 0.0)
        for c in range(first, end):
            pn = points.impulse[c, P_N] * inv_h
            f = (pn * n[0], pn * n[1], pn * n[2])
            ra = (rows.arm[c, 0, 0], rows.arm[c, 0, 1], rows.arm[c, 0, 2])
            rb = (rows.arm[c, 1, 0], rows.arm[c, 1, 1], rows.arm[c, 1, 2])
            _add_wrench(out, b, f, rb, 1.0)
            _add_wrench(out, a, f, ra, -1.0)
            ca = (ca[0] + k * ra[0], ca[1] + k * ra[1], ca[2] + k * ra[2])
            cb = (cb[0] + k * rb[0], cb[1] + k * rb[1], cb[2] + k * rb[2])
        f = ((p[P_T1] * t1[0] + p[P_T2] * t2[0]) * inv_h,
             (p[P_T1] * t1[1] + p[P_T2] * t2[1]) * inv_h,
             (p[P_T1] * t1[2] + p[P_T2] * t2[2]) * inv_h)
        _add_wrench(out, b, f, cb, 1.0)
        _add_wrench(out, a, f, ca, -1.0)
        for q in range(3):
            tau = (p[P_R1] * t1[q] + p[P_R2] * t2[q] + p[P_S] * n[q]) * inv_h
            out[b, WRENCH_TORQUE + q] += tau
            out[a, WRENCH_TORQUE + q] -= tau


@njit(**_JIT)
def _add_wrench(out, i, f, r, sign):
    """out[i] += sign (f, r x f)."""
    tq = cross(r, f)
    for q in range(3):
        out[i, WRENCH_FORCE + q] += sign * f[q]
        out[i, WRENCH_TORQUE + q] += sign * tq[q]
