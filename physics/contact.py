"""Contacts: collision detection every step, and the contact rows solved in the same
sequential-impulse loop as the joints (paper 002 eqs. 19-21, paper 001, paper 004).

Geoms. Every shaped body owns a geom g at an offset r_g (body frame) turned by R_gl:

    x_g = x_b + R_b r_g,   R_g = R_b R_gl

Detection, at the poses of time t (before any velocity of this step changes):

    broad phase    world AABBs grown by the margin (CONTACT_MARGIN + h |v_b|) -> pairs (a < b)
                   that may collide (broadphase.py: grid, joint/group/mask filters, planes)
    narrow phase   closed forms (manifold.collide) or, for the other pairs, the convex
                   routine (convex.convex_contact, warm started from last step's normal) and
                   the clipped supporting features (manifold.manifold_from_normal):
                   up to 4 points, each a midpoint m, depth d (> 0 overlap, < 0 gap), one
                   normal n from A to B and a feature id
    warm start     a point takes the accumulated impulses of last step's point with the same
                   (geom a, geom b, feature) key (both lists are in (a, b) order: one merge)

Manifold reuse (Settings.manifold_reuse = tol; Jolt's body-pair cache does the same): every
point is also kept as the narrow phase found it, in the bodies' frames (surface points l_A,
l_B, normal n_A in A's frame), with the bodies' relative pose then (x = RA^T (xB - xA),
q = qA* qB).  Next step, a pair that still touches and whose relative pose has moved no
point of either geom by more than tol,

    |x - x_found| + theta * reach <= tol     (theta: the angle of q_found* q; reach: how
                                             far the moving geom's points lie from its
                                             body's centre; in the frame of the geom with
                                             the larger reach, so planes work),

skips the narrow phase: its points are carried by the bodies, p_A = xA + RA l_A,
p_B = xB + RB l_B, n = RA n_A, d = n . (p_A - p_B), midpoint (p_A + p_B) / 2, impulses and
feature ids kept.  Each carried point is then off the freshly found one by O(tol) along the
surface, and its depth is that of two material points that were touching.  (Where fresh
points are ill-conditioned -- the clip of two coincident box edges, as in the pyramid -- the
fresh ones themselves jump along those edges from step to step, 0.37 mm measured; the
carried ones stay put.)  tol stays below
half the margin, so no point left out for a gap beyond the margin can have come into touch
unseen.  Pairs with a sphere are always found afresh: their closed forms cost less than
carrying, and a rolling sphere's contact point moves across its surface.

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

A sweep takes the manifolds in pair order: the normals of a manifold's points, then its
anchor's rows with the P they just gave.

Normal target: a point still apart (gap g = -d > 0) may close its gap this step but not
cross it, target = -g / h (speculative contact); a touching point has target 0 -- the
overlap is removed by the position pass, which moves poses only, so no energy is injected.

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
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from .broadphase import broadphase, make_broadphase_work
from .clock import monotonic_seconds
from .convex import convex_contact
from .manifold import collide, manifold_from_normal
from .math3 import cross, mat_vec, quat_conj_mul, quat_rotate, quat_rotated
from .shape import BOX, ELLIPSOID, HULL, PLANE, SPHERE
from .support import aabb, bounding_radius, extent

_JIT = dict(nogil=True, cache=True)

CONTACT_MARGIN = 0.005     # m: points this far apart are already contacts (speculative)
LINEAR_SLOP = 0.0005       # m: overlap left in place (resting contacts keep touching)
POSITION_FACTOR = 0.3      # share of the overlap removed per position sweep
MAX_CORRECTION = 0.02      # m: largest correction of one point in one sweep
RESTITUTION_SPEED = 0.1    # m/s: slower approaches do not bounce
MANIFOLD_REUSE = 2e-4      # m: default of Settings.manifold_reuse (the pair keeps its manifold)
MANIFOLD_REUSE_MAX = 0.5 * CONTACT_MARGIN   # m: its largest value: a point left out for a gap
                           # beyond the margin must not have come into touch unseen
BOUNCED = 2                # point state: bounced from apart, its end separation still to set

# Packed records, built once per step by prepare_contacts so that an iteration reads one
# contiguous record and does no 3x3 products.  A linear row along u at arms rA, rB is a block
# of 12 at offset j: JA = rA x u (j), JB = rB x u (j+3), WA = IA^-1 JA (j+6), WB = IB^-1 JB (j+9).
# A point's normal row (contacts.rows[c]):
N_DIR, N_LIN, N_MASS, N_TARGET, N_IMA, N_IMB = 0, 3, 15, 16, 17, 18
PACK_N = 19
# A manifold's anchor (contacts.man_rows[m]):
#   M_DIR + 3 r      n, t1, t2
#   M_LIN + 12 k     the linear blocks of t1, t2
#   M_ANG + 6 k      IA^-1 e_k, IB^-1 e_k for e = t1, t2, n (rolling, twisting)
#   M_MASS + k       effective masses of t1, t2, r1, r2, s
M_DIR, M_LIN, M_ANG, M_MASS = 0, 9, 33, 51
M_IMA, M_IMB, M_MU, M_ROLL, M_TWIST, M_MU2 = 56, 57, 58, 59, 60, 61
PACK_M = 62
# solve_contacts spells these offsets out as literals (its locals stay in registers)
assert (N_LIN, M_LIN, M_ANG, M_MASS) == (3, 9, 33, 51)
# material columns (model.geom_material has these and MU_ALONG, AXIS .. AXIS + 2)
MU, MU_ROLL, MU_SPIN, RESTITUTION, MU_ALONG, AXIS = 0, 1, 2, 3, 4, 5
# impulse columns
P_N, P_T1, P_T2, P_R1, P_R2, P_S = 0, 1, 2, 3, 4, 5
# columns of a body's contact wrench (State.body_contact): force, then torque
WRENCH_FORCE, WRENCH_TORQUE = 0, 3

ContactSet = namedtuple("ContactSet", [
    # persistent: this step's points (kept for the next step's warm start), in pair order
    "count",          # (1,) int64 points
    "geom",           # (cap, 2) int64 geoms A, B
    "body",           # (cap, 2) int64 their bodies
    "feature",        # (cap,) int64
    "point",          # (cap, 3) midpoint, world
    "normal",         # (cap, 3) A to B
    "depth",          # (cap,) > 0 overlap
    "impulse",        # (cap, 6) accumulated p_n, p_t1, p_t2, p_r1, p_r2, p_s (N s, N m s);
                      #   the five friction columns are the manifold's, on its first point
                      #   (0 on the others)
    "sliding",        # (cap,) bool: its manifold's friction at the cone
    "local",          # (cap, 2, 3) surface points on A and B in their body frames (as found
                      #   by the narrow phase; kept while the manifold is reused)
    "local_normal",   # (cap, 3) the normal in A's body frame (as found)
    "found_pose",     # (cap, 7) B's pose in A's frame when the manifold was found: RA^T (xB - xA),
                      #   qA* qB
    # rows of this step
    "material",       # (cap, 4) mu, mu_roll (m), mu_spin (m), restitution
    "arm",            # (cap, 2, 3) rA, rB
    "tangent",        # (cap, 2, 3) t1, t2 (its manifold's)
    "rows",           # (cap, PACK_N) the packed normal rows (see N_DIR ...)
    "man_count",      # (1,) int64 manifolds
    "man_first",      # (cap + 1,) int64 first point of each manifold (and the end)
    "man_rows",       # (cap, PACK_M) the packed anchors (see M_DIR ...)
    "approach",       # (cap, 2) Cdot_n at detection, and after this step's forces
    "state",          # (cap,) int64 0 normal, BOUNCED: bounced from apart this step
    "bounce",         # (cap,) separation the bounce leaves at the end of the step (m)
    # detection scratch
    "pairs",          # (pcap, 2) int64
    "new_geom", "new_feature", "new_point", "new_normal", "new_depth", "new_impulse",
    "new_local", "new_local_normal", "new_found_pose",
    "geom_pos",       # (ngeom, 3)
    "geom_rot",       # (ngeom, 3, 3)
    "geom_aabb",      # (ngeom, 6)
    "geom_plane",     # (ngeom, 4)
    "geom_radius",    # (ngeom,) bounding sphere about the geom's origin (inf for planes)
    "bp_slot", "bp_order", "bp_box", "bp_start", "bp_big", "bp_planes", "bp_mark", "bp_cand",
    "bp_ext",
    "m_point", "m_depth", "m_normal", "m_feature", "cv_out", "guess",
    "need",           # (2,) int64 pair and point capacity needed when detection overflowed
    "stats",          # (6,) pairs tested, points, detection seconds, worst overlap (m),
                      #      broad-phase seconds (part of the detection), manifolds reused
])


def make_contacts(ngeom, cap=64, pcap=64):
    bp = make_broadphase_work(ngeom)
    n = max(int(ngeom), 1)
    return ContactSet(
        count=np.zeros(1, np.int64), geom=np.zeros((cap, 2), np.int64),
        body=np.zeros((cap, 2), np.int64), feature=np.zeros(cap, np.int64),
        point=np.zeros((cap, 3)), normal=np.zeros((cap, 3)), depth=np.zeros(cap),
        impulse=np.zeros((cap, 6)), sliding=np.zeros(cap, np.bool_),
        local=np.zeros((cap, 2, 3)), local_normal=np.zeros((cap, 3)),
        found_pose=np.zeros((cap, 7)), material=np.zeros((cap, 4)), arm=np.zeros((cap, 2, 3)),
        tangent=np.zeros((cap, 2, 3)), rows=np.zeros((cap, PACK_N)),
        man_count=np.zeros(1, np.int64), man_first=np.zeros(cap + 1, np.int64),
        man_rows=np.zeros((cap, PACK_M)),
        approach=np.zeros((cap, 2)),
        state=np.zeros(cap, np.int64), bounce=np.zeros(cap),
        pairs=np.zeros((pcap, 2), np.int64),
        new_geom=np.zeros((cap, 2), np.int64), new_feature=np.zeros(cap, np.int64),
        new_point=np.zeros((cap, 3)), new_normal=np.zeros((cap, 3)), new_depth=np.zeros(cap),
        new_impulse=np.zeros((cap, 6)), new_local=np.zeros((cap, 2, 3)),
        new_local_normal=np.zeros((cap, 3)), new_found_pose=np.zeros((cap, 7)),
        geom_pos=np.zeros((n, 3)), geom_rot=np.zeros((n, 3, 3)), geom_aabb=np.zeros((n, 6)),
        geom_plane=np.zeros((n, 4)), geom_radius=np.zeros(n),
        bp_slot=bp.slot, bp_order=bp.order, bp_box=bp.box, bp_start=bp.start, bp_big=bp.big,
        bp_planes=bp.planes, bp_mark=bp.mark, bp_cand=bp.cand, bp_ext=bp.ext,
        m_point=np.zeros((4, 3)), m_depth=np.zeros(4), m_normal=np.zeros(3),
        m_feature=np.zeros(4, np.int64), cv_out=np.zeros(9), guess=np.zeros(3),
        need=np.zeros(2, np.int64), stats=np.zeros(6))


def grown(contacts, ngeom):
    """A copy with room for what the last detection needed (`need`), the points kept."""
    cap = max(contacts.geom.shape[0], int(contacts.need[1]))
    pcap = max(contacts.pairs.shape[0], int(contacts.need[0]))
    out = make_contacts(ngeom, cap=2 * cap, pcap=2 * pcap)
    k = int(contacts.count[0])
    for name in ("geom", "body", "feature", "point", "normal", "depth", "impulse", "sliding",
                 "local", "local_normal", "found_pose"):
        getattr(out, name)[:k] = getattr(contacts, name)[:k]
    out.count[0] = k
    return out


# ---- small vector helpers (tuples; numba unrolls them) -------------------------------------------
@njit(**_JIT)
def _quad(m, x0, x1, x2):
    """x . m x"""
    y = mat_vec(m, (x0, x1, x2))
    return x0 * y[0] + x1 * y[1] + x2 * y[2]


# ---- detection --------------------------------------------------------------------------------
@njit(**_JIT)
def geom_poses(model, state, work, contacts, h):
    """World poses, AABBs (grown by the margin and this step's travel) and plane equations."""
    R = work.body_rot
    for g in range(model.geom_kind.shape[0]):
        b = model.geom_body[g]
        lr, lp = model.geom_local_rot, model.geom_local_pos
        centred = (lp[g, 0] == 0.0 and lp[g, 1] == 0.0 and lp[g, 2] == 0.0
                   and lr[g, 0, 0] == 1.0 and lr[g, 1, 1] == 1.0 and lr[g, 2, 2] == 1.0)
        for i in range(3):
            if centred:  # one shape at the centre of mass on the body axes: the body's pose
                contacts.geom_pos[g, i] = state.body_pos[b, i]
                for j in range(3):
                    contacts.geom_rot[g, i, j] = R[b, i, j]
                continue
            contacts.geom_pos[g, i] = (state.body_pos[b, i] + R[b, i, 0] * lp[g, 0]
                                       + R[b, i, 1] * lp[g, 1] + R[b, i, 2] * lp[g, 2])
            for j in range(3):
                contacts.geom_rot[g, i, j] = (R[b, i, 0] * lr[g, 0, j] + R[b, i, 1] * lr[g, 1, j]
                                              + R[b, i, 2] * lr[g, 2, j])
        kind = model.geom_kind[g]
        box = contacts.geom_aabb   # (indexed in place: a view per geom costs a reference count)
        if kind == PLANE:
            n0, n1, n2 = (contacts.geom_rot[g, 0, 2], contacts.geom_rot[g, 1, 2],
                          contacts.geom_rot[g, 2, 2])
            contacts.geom_plane[g, 0] = n0
            contacts.geom_plane[g, 1] = n1
            contacts.geom_plane[g, 2] = n2
            contacts.geom_plane[g, 3] = (n0 * contacts.geom_pos[g, 0]
                                         + n1 * contacts.geom_pos[g, 1]
                                         + n2 * contacts.geom_pos[g, 2])
            for i in range(3):
                box[g, i] = -1e30
                box[g, 3 + i] = 1e30
            contacts.geom_radius[g] = math.inf
            continue
        sz = model.geom_size
        rot, pos = contacts.geom_rot, contacts.geom_pos
        if kind == HULL:
            aabb(kind, sz[g], pos[g], rot[g], model.hull_vert, model.geom_hull[g, 0],
                 model.geom_hull[g, 1], box[g])
        else:  # support.extent inlined (every geom, every step: no views, no call)
            for i in range(3):
                e = extent(kind, sz[g, 0], sz[g, 1], sz[g, 2], rot[g, i, 0], rot[g, i, 1],
                           rot[g, i, 2])
                box[g, i] = pos[g, i] - e
                box[g, 3 + i] = pos[g, i] + e
        if kind != HULL:
            radius = bounding_radius(kind, sz[g, 0], sz[g, 1], sz[g, 2])
        else:  # hull: half the diagonal of its world box, plus how far the box's centre is
            # from the geom's origin (the points' own origin: it may lie anywhere)
            e0, e1, e2 = box[g, 3] - box[g, 0], box[g, 4] - box[g, 1], box[g, 5] - box[g, 2]
            o0 = 0.5 * (box[g, 0] + box[g, 3]) - pos[g, 0]
            o1 = 0.5 * (box[g, 1] + box[g, 4]) - pos[g, 1]
            o2 = 0.5 * (box[g, 2] + box[g, 5]) - pos[g, 2]
            radius = (0.5 * math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
                      + math.sqrt(o0 * o0 + o1 * o1 + o2 * o2))
        contacts.geom_radius[g] = radius
        v0, v1, v2 = state.body_vel[b, 0], state.body_vel[b, 1], state.body_vel[b, 2]
        grow = CONTACT_MARGIN + h * math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        for i in range(3):
            box[g, i] -= grow
            box[g, 3 + i] += grow


@njit(**_JIT)
def ellipsoid_on_face(e_size, c, R, h, p, Q, margin, sign, mp, md, mn, mf):
    """An ellipsoid (semi-axes e_size, centre c, rotation R) against a box (half extents h,
    centre p, rotation Q) when they meet on a box face, in closed form; -1 otherwise (edges
    and corners go to the convex routine).

    For each face normal n = +-Q e_k the ellipsoid's deepest point towards the face is
    x = c - M n / sqrt(n^T M n), M = R A^2 R^T, and the separation along n is
    s = n . (c - p) - h_k - sqrt(n^T M n).  Take the face of largest s (the least overlap).
    If x lies within that face's rectangle, n is the minimiser of the support-function
    depth (the box's support along n is the whole face, which contains x's projection), so
    depth = -s and the contact point is exact.  `sign` = +1 when the box is geom A (the
    normal n points from the box to the ellipsoid), -1 when the ellipsoid is A."""
    best, bk, bs = -math.inf, 0, 1.0
    for k in range(3):
        q0, q1, q2 = Q[0, k], Q[1, k], Q[2, k]
        # n^T M n = sum_j (A_j (R^T n)_j)^2, the same for +n and -n
        u0 = (R[0, 0] * q0 + R[1, 0] * q1 + R[2, 0] * q2) * e_size[0]
        u1 = (R[0, 1] * q0 + R[1, 1] * q1 + R[2, 1] * q2) * e_size[1]
        u2 = (R[0, 2] * q0 + R[1, 2] * q1 + R[2, 2] * q2) * e_size[2]
        reach = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        along = q0 * (c[0] - p[0]) + q1 * (c[1] - p[1]) + q2 * (c[2] - p[2])
        for sgn in (1.0, -1.0):
            sep = sgn * along - h[k] - reach
            if sep > best:
                best, bk, bs = sep, k, sgn
    if -best > min(h[bk], 0.25 * min(e_size[0], min(e_size[1], e_size[2]))):
        return -1   # deep: another way out (the box's far side, an edge) may be shorter
    n0, n1, n2 = bs * Q[0, bk], bs * Q[1, bk], bs * Q[2, bk]
    # deepest point of the ellipsoid towards the face: x = c - M n / sqrt(n^T M n)
    r0 = R[0, 0] * n0 + R[1, 0] * n1 + R[2, 0] * n2
    r1 = R[0, 1] * n0 + R[1, 1] * n1 + R[2, 1] * n2
    r2 = R[0, 2] * n0 + R[1, 2] * n1 + R[2, 2] * n2
    m0, m1, m2 = r0 * e_size[0] ** 2, r1 * e_size[1] ** 2, r2 * e_size[2] ** 2
    norm = math.sqrt(r0 * m0 + r1 * m1 + r2 * m2)
    if norm <= 0.0:
        return -1
    x0 = c[0] - (R[0, 0] * m0 + R[0, 1] * m1 + R[0, 2] * m2) / norm
    x1 = c[1] - (R[1, 0] * m0 + R[1, 1] * m1 + R[1, 2] * m2) / norm
    x2 = c[2] - (R[2, 0] * m0 + R[2, 1] * m1 + R[2, 2] * m2) / norm
    for j in range(3):
        if j == bk:
            continue
        t = Q[0, j] * (x0 - p[0]) + Q[1, j] * (x1 - p[1]) + Q[2, j] * (x2 - p[2])
        if abs(t) > h[j]:
            return -1   # beyond the face: an edge or a corner
    if best >= margin:
        return 0
    # midpoint between x and its projection onto the face plane (x + s n)
    md[0] = -best
    mf[0] = 0
    mn[0], mn[1], mn[2] = sign * n0, sign * n1, sign * n2
    mp[0, 0] = x0 - 0.5 * best * n0
    mp[0, 1] = x1 - 0.5 * best * n1
    mp[0, 2] = x2 - 0.5 * best * n2
    return 1


@njit(**_JIT)
def _beyond_box(x, g, gpos, grot, sizes, radius, margin):
    """Whether geom g's bounding sphere stays farther than the margin from box x: the
    distance from g's centre to the box (centre in the box frame, clamped to the half
    extents) exceeds radius_g + margin.  A long wall's own bounding sphere passes nearly
    every pair near it; this keeps those pairs out of the narrow phase (in the tube, 70 of
    the ~90 pairs per step that went to GJK/EPA, measured)."""
    d0 = gpos[g, 0] - gpos[x, 0]
    d1 = gpos[g, 1] - gpos[x, 1]
    d2 = gpos[g, 2] - gpos[x, 2]
    out = 0.0
    for k in range(3):
        t = grot[x, 0, k] * d0 + grot[x, 1, k] * d1 + grot[x, 2, k] * d2
        e = abs(t) - sizes[x, k]
        if e > 0.0:
            out += e * e
    reach = radius[g] + margin
    return out > reach * reach


@njit(**_JIT)
def _ellipsoid_reach(kind, sizes, grot, g, u0, u1, u2, length):
    """How far a sphere or ellipsoid reaches from its centre along u / length: the support
    |A R^T u| / length (semi-axes A), or the radius."""
    if kind == SPHERE:
        return sizes[g, 0]
    e0 = (grot[g, 0, 0] * u0 + grot[g, 1, 0] * u1 + grot[g, 2, 0] * u2) * sizes[g, 0]
    e1 = (grot[g, 0, 1] * u0 + grot[g, 1, 1] * u1 + grot[g, 2, 1] * u2) * sizes[g, 1]
    e2 = (grot[g, 0, 2] * u0 + grot[g, 1, 2] * u1 + grot[g, 2, 2] * u2) * sizes[g, 2]
    return math.sqrt(e0 * e0 + e1 * e1 + e2 * e2) / length


@njit(**_JIT)
def _smooth(kind):
    """Strictly convex shapes: their contact with a convex shape is a single point."""
    return kind == SPHERE or kind == ELLIPSOID


@njit(**_JIT)
def _relative_pose(pos, quat, R, ba, bb):
    """B's pose in A's body frame: RA^T (xB - xA) and qA* qB."""
    d0 = pos[bb, 0] - pos[ba, 0]
    d1 = pos[bb, 1] - pos[ba, 1]
    d2 = pos[bb, 2] - pos[ba, 2]
    x = (R[ba, 0, 0] * d0 + R[ba, 1, 0] * d1 + R[ba, 2, 0] * d2,
         R[ba, 0, 1] * d0 + R[ba, 1, 1] * d1 + R[ba, 2, 1] * d2,
         R[ba, 0, 2] * d0 + R[ba, 1, 2] * d1 + R[ba, 2, 2] * d2)
    qa, qb = quat[ba], quat[bb]
    q = quat_conj_mul((qa[0], qa[1], qa[2], qa[3]), (qb[0], qb[1], qb[2], qb[3]))
    return x, q


@njit(**_JIT)
def _relative_motion(x, q, found_pose, o, reach_a, reach_b):
    """A bound on how far any point of one geom has moved relative to the other since the
    relative pose found_pose[o] (x, q then) to the pose (x, q) now: |dx| + theta * reach,
    taken in the frame of the geom with the larger reach (a plane's is infinite), so that
    the other's points, all within `reach` of their body's centre, move by at most that."""
    f = (found_pose[o, 3], found_pose[o, 4], found_pose[o, 5], found_pose[o, 6])
    fx = (found_pose[o, 0], found_pose[o, 1], found_pose[o, 2])
    c = abs(q[0] * f[0] + q[1] * f[1] + q[2] * f[2] + q[3] * f[3])   # cos(theta / 2)
    if c < 0.5:
        return math.inf
    # theta / 2 <= tan(theta / 2) = sin / cos (tight for small turns, and no asin)
    theta = 2.0 * math.sqrt(max(1.0 - c * c, 0.0)) / c
    if reach_b <= reach_a:   # B's points in A's frame: x + Rr p
        e0, e1, e2 = x[0] - fx[0], x[1] - fx[1], x[2] - fx[2]
        reach = reach_b
    else:                    # A's points in B's frame: Rr^T (p - x)
        y = quat_rotate((q[0], -q[1], -q[2], -q[3]), x)
        y0 = quat_rotate((f[0], -f[1], -f[2], -f[3]), fx)
        e0, e1, e2 = y[0] - y0[0], y[1] - y0[1], y[2] - y0[2]
        reach = reach_a
    return math.sqrt(e0 * e0 + e1 * e1 + e2 * e2) + theta * reach


@njit(**_JIT)
def _reach(lp, geom_radius, g):
    """How far the geom's points can be from its body's centre of mass (lp:
    model.geom_local_pos, geom_radius: contacts.geom_radius; arrays, not the tuples: a call
    that takes those costs a reference count per array in them)."""
    return math.sqrt(lp[g, 0] ** 2 + lp[g, 1] ** 2 + lp[g, 2] ** 2) + geom_radius[g]


@njit(**_JIT)
def detect_contacts(model, state, work, contacts, h, reuse):
    """Find this step's contact points; False (and `need` set) if the arrays are too small,
    in which case nothing of the last step's contacts has changed.  A pair whose relative
    pose has moved no point of either geom by more than `reuse` (m) since its manifold was
    found keeps that manifold, its points carried by the bodies (0: every pair afresh)."""
    start = monotonic_seconds()
    geom_poses(model, state, work, contacts, h)
    broad_start = monotonic_seconds()
    npairs = broadphase(contacts.geom_aabb, model.geom_body, model.body_dynamic,
                        model.geom_group, model.geom_mask, model.pair_excluded,
                        model.geom_kind, contacts.geom_plane, contacts.bp_slot,
                        contacts.bp_order, contacts.bp_box, contacts.bp_start, contacts.bp_big,
                        contacts.bp_planes, contacts.bp_mark, contacts.bp_cand, contacts.bp_ext,
                        contacts.pairs)
    broad_s = monotonic_seconds() - broad_start
    if npairs > contacts.pairs.shape[0]:
        contacts.need[0] = npairs
        return False
    cap = contacts.new_geom.shape[0]
    kinds, sizes, hulls = model.geom_kind, model.geom_size, model.geom_hull
    gpos, grot = contacts.geom_pos, contacts.geom_rot
    mp, md, mn, mf = contacts.m_point, contacts.m_depth, contacts.m_normal, contacts.m_feature
    R = work.body_rot
    x, lp = state.body_pos, model.geom_local_pos
    kept = (contacts.local, contacts.local_normal, contacts.geom, contacts.feature,
            contacts.impulse, contacts.found_pose, contacts.new_geom, contacts.new_feature,
            contacts.new_normal, contacts.new_depth, contacts.new_point, contacts.new_local,
            contacts.new_local_normal, contacts.new_impulse, contacts.new_found_pose)
    total = 0
    reused = 0
    worst = 0.0
    cursor = 0   # last step's points and this step's pairs are both in (a, b) order: merge
    nold = contacts.count[0]
    for k in range(npairs):
        a, b = contacts.pairs[k, 0], contacts.pairs[k, 1]
        while cursor < nold and (contacts.geom[cursor, 0] < a or (
                contacts.geom[cursor, 0] == a and contacts.geom[cursor, 1] < b)):
            cursor += 1
        old = -1
        if cursor < nold and contacts.geom[cursor, 0] == a and contacts.geom[cursor, 1] == b:
            old = cursor
        ba, bb = model.geom_body[a], model.geom_body[b]
        ka, kb = kinds[a], kinds[b]
        posed = old >= 0 and reuse > 0.0 and ka != SPHERE and kb != SPHERE
        if posed:   # (the relative pose: only for pairs that may keep or find points)
            xr, qr = _relative_pose(x, state.body_quat, R, ba, bb)
        else:
            xr, qr = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
        if posed and _relative_motion(xr, qr, contacts.found_pose, old,
                                      _reach(lp, contacts.geom_radius, a),
                                      _reach(lp, contacts.geom_radius, b)) <= reuse:
            # the manifold as found, carried by the bodies: p_A = xA + RA l_A, p_B likewise,
            # n = RA n_A, depth n . (p_A - p_B), midpoint (p_A + p_B) / 2; impulses, ids kept
            o = old
            while o < nold and contacts.geom[o, 0] == a and contacts.geom[o, 1] == b:
                if total < cap:
                    _carried(x, R, ba, bb, kept, o, total)
                    worst = max(worst, contacts.new_depth[total])
                total += 1
                o += 1
            reused += 1
            continue
        va, vb = state.body_vel[model.geom_body[a]], state.body_vel[model.geom_body[b]]
        dv0, dv1, dv2 = vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]
        margin = CONTACT_MARGIN + h * math.sqrt(dv0 * dv0 + dv1 * dv1 + dv2 * dv2)
        # bounding spheres apart: no contact (most box-overlapping pairs in a pile)
        reach = contacts.geom_radius[a] + contacts.geom_radius[b] + margin
        c0 = gpos[b, 0] - gpos[a, 0]
        c1 = gpos[b, 1] - gpos[a, 1]
        c2 = gpos[b, 2] - gpos[a, 2]
        if c0 * c0 + c1 * c1 + c2 * c2 > reach * reach:
            continue
        if (ka == BOX or kb == BOX) and _beyond_box(a if ka == BOX else b, b if ka == BOX else a,
                                                     gpos, grot, sizes, contacts.geom_radius,
                                                     margin):
            continue
        if (ka == ELLIPSOID and (kb == ELLIPSOID or kb == SPHERE)) or (
                kb == ELLIPSOID and ka == SPHERE):
            # the line of centres as a separating axis first: a third of the pairs of a
            # flowing pile whose bounding spheres meet are apart along it (measured, tube)
            dist = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
            if dist > 0.0 and dist - margin > (
                    _ellipsoid_reach(ka, sizes, grot, a, c0, c1, c2, dist)
                    + _ellipsoid_reach(kb, sizes, grot, b, c0, c1, c2, dist)):
                continue
            n = -1  # no closed form: straight to the convex routine (the piles' common case)
        elif ka == BOX and kb == ELLIPSOID:
            n = ellipsoid_on_face(sizes[b], gpos[b], grot[b], sizes[a], gpos[a], grot[a],
                                  margin, 1.0, mp, md, mn, mf)
        elif ka == ELLIPSOID and kb == BOX:
            n = ellipsoid_on_face(sizes[a], gpos[a], grot[a], sizes[b], gpos[b], grot[b],
                                  margin, -1.0, mp, md, mn, mf)
        else:
            n = collide(ka, sizes[a], gpos[a], grot[a], hulls[a, 0], hulls[a, 1],
                        kb, sizes[b], gpos[b], grot[b], hulls[b, 0], hulls[b, 1],
                        model.hull_vert, margin, mp, md, mn, mf)
        if n < 0:
            g = contacts.guess
            if old >= 0:
                g[0], g[1], g[2] = (contacts.normal[old, 0], contacts.normal[old, 1],
                                    contacts.normal[old, 2])
            else:
                g[0] = g[1] = g[2] = 0.0
            out = contacts.cv_out
            d = convex_contact(kinds[a], sizes[a], gpos[a], grot[a], hulls[a, 0], hulls[a, 1],
                               kinds[b], sizes[b], gpos[b], grot[b], hulls[b, 0], hulls[b, 1],
                               model.hull_vert, g, out)
            n = 0
            if _smooth(kinds[a]) or _smooth(kinds[b]):
                # a sphere or ellipsoid touches anything convex at one point
                if d > -margin:
                    n = 1
                    md[0] = d
                    mf[0] = 0
                    for q in range(3):
                        mn[q] = out[q]
                        mp[0, q] = 0.5 * (out[3 + q] + out[6 + q])
            elif d > -margin:
                n = manifold_from_normal(
                    kinds[a], sizes[a], gpos[a], grot[a], hulls[a, 0], hulls[a, 1],
                    kinds[b], sizes[b], gpos[b], grot[b], hulls[b, 0], hulls[b, 1],
                    model.hull_vert, out[0:3], d, out[3:6], out[6:9], margin, mp, md, mn, mf)
        if n > 0 and not posed:
            xr, qr = _relative_pose(x, state.body_quat, R, ba, bb)
        for i in range(n):
            if total < cap:
                c = total
                contacts.new_geom[c, 0] = a
                contacts.new_geom[c, 1] = b
                contacts.new_feature[c] = mf[i]
                for q in range(3):
                    contacts.new_point[c, q] = mp[i, q]
                    contacts.new_normal[c, q] = mn[q]
                contacts.new_depth[c] = md[i]
                if md[i] > worst:
                    worst = md[i]
                _found(x, R, ba, bb, xr, qr, mp, i, mn, md[i], contacts.new_local,
                       contacts.new_local_normal, contacts.new_found_pose, c)
                for q in range(6):
                    contacts.new_impulse[c, q] = 0.0
                if old >= 0:  # warm start: p_n from last step's point with the same
                    o = old   # feature, the friction from last step's manifold (first point)
                    if i == 0:
                        for q in range(1, 6):
                            contacts.new_impulse[c, q] = contacts.impulse[old, q]
                    while (o < contacts.count[0] and contacts.geom[o, 0] == a
                           and contacts.geom[o, 1] == b):
                        if contacts.feature[o] == mf[i]:
                            contacts.new_impulse[c, P_N] = contacts.impulse[o, P_N]
                            break
                        o += 1
            total += 1
    if total > cap:
        contacts.need[1] = total
        return False
    for c in range(total):
        for q in range(2):
            contacts.geom[c, q] = contacts.new_geom[c, q]
            contacts.body[c, q] = model.geom_body[contacts.new_geom[c, q]]
        contacts.feature[c] = contacts.new_feature[c]
        contacts.depth[c] = contacts.new_depth[c]
        for q in range(3):
            contacts.point[c, q] = contacts.new_point[c, q]
            contacts.normal[c, q] = contacts.new_normal[c, q]
        for q in range(6):
            contacts.impulse[c, q] = contacts.new_impulse[c, q]
        for q in range(3):
            contacts.local[c, 0, q] = contacts.new_local[c, 0, q]
            contacts.local[c, 1, q] = contacts.new_local[c, 1, q]
            contacts.local_normal[c, q] = contacts.new_local_normal[c, q]
        for q in range(7):
            contacts.found_pose[c, q] = contacts.new_found_pose[c, q]
    contacts.count[0] = total
    contacts.stats[0] = npairs
    contacts.stats[1] = total
    contacts.stats[2] = monotonic_seconds() - start
    contacts.stats[3] = worst
    contacts.stats[4] = broad_s
    contacts.stats[5] = reused
    return True


@njit(**_JIT)
def _carried(x, R, ba, bb, kept, o, c):
    """Point o of last step's manifold, carried by the bodies, as new point c: p_A = xA +
    RA l_A, p_B = xB + RB l_B, n = RA n_A, depth n . (p_A - p_B), midpoint (p_A + p_B) / 2;
    its feature, impulses and what it was found as are kept. kept: the contacts' arrays
    (_kept_arrays), not the tuple, as a call that takes it costs a reference count per
    array in it."""
    (L, ln, geom, feature, impulse, found_pose, new_geom, new_feature, new_normal, new_depth,
     new_point, new_local, new_local_normal, new_impulse, new_found_pose) = kept
    pa = _to_world(x, R, ba, L[o, 0, 0], L[o, 0, 1], L[o, 0, 2])
    pb = _to_world(x, R, bb, L[o, 1, 0], L[o, 1, 1], L[o, 1, 2])
    n0 = R[ba, 0, 0] * ln[o, 0] + R[ba, 0, 1] * ln[o, 1] + R[ba, 0, 2] * ln[o, 2]
    n1 = R[ba, 1, 0] * ln[o, 0] + R[ba, 1, 1] * ln[o, 1] + R[ba, 1, 2] * ln[o, 2]
    n2 = R[ba, 2, 0] * ln[o, 0] + R[ba, 2, 1] * ln[o, 1] + R[ba, 2, 2] * ln[o, 2]
    new_geom[c, 0] = geom[o, 0]
    new_geom[c, 1] = geom[o, 1]
    new_feature[c] = feature[o]
    new_normal[c, 0] = n0
    new_normal[c, 1] = n1
    new_normal[c, 2] = n2
    new_depth[c] = n0 * (pa[0] - pb[0]) + n1 * (pa[1] - pb[1]) + n2 * (pa[2] - pb[2])
    for i in range(3):
        new_point[c, i] = 0.5 * (pa[i] + pb[i])
        new_local[c, 0, i] = L[o, 0, i]
        new_local[c, 1, i] = L[o, 1, i]
        new_local_normal[c, i] = ln[o, i]
    for i in range(6):
        new_impulse[c, i] = impulse[o, i]
    for i in range(7):
        new_found_pose[c, i] = found_pose[o, i]


@njit(**_JIT)
def _to_world(x, R, b, p0, p1, p2):
    """x_b + R_b p (x: the bodies' positions)"""
    return (x[b, 0] + R[b, 0, 0] * p0 + R[b, 0, 1] * p1 + R[b, 0, 2] * p2,
            x[b, 1] + R[b, 1, 0] * p0 + R[b, 1, 1] * p1 + R[b, 1, 2] * p2,
            x[b, 2] + R[b, 2, 0] * p0 + R[b, 2, 1] * p1 + R[b, 2, 2] * p2)


@njit(**_JIT)
def _found(pos, R, ba, bb, x, q, mp, i, n, d, new_local, new_local_normal, new_found_pose, c):
    """Point i (midpoint mp[i], normal n, depth d) as the narrow phase found it, kept as new
    point c in the body frames: surface points p_A = m + n d / 2, p_B = m - n d / 2, n in A's
    frame, and the bodies' relative pose (x, q)."""
    for j in range(3):
        pa_j = 0.0
        pb_j = 0.0
        na_j = 0.0
        for k in range(3):
            pa_j += R[ba, k, j] * (mp[i, k] + 0.5 * d * n[k] - pos[ba, k])
            pb_j += R[bb, k, j] * (mp[i, k] - 0.5 * d * n[k] - pos[bb, k])
            na_j += R[ba, k, j] * n[k]
        new_local[c, 0, j] = pa_j
        new_local[c, 1, j] = pb_j
        new_local_normal[c, j] = na_j
        new_found_pose[c, j] = x[j]
    for j in range(4):
        new_found_pose[c, 3 + j] = q[j]


# ---- rows -------------------------------------------------------------------------------------
@njit(**_JIT)
def prepare_contacts(model, state, work, contacts, h):
    """Group the points into manifolds and pack their rows: arms, tangents, effective masses,
    materials, approach speeds and normal targets, at the poses of time t and the velocities
    before this step's forces."""
    iiw = work.body_inv_inertia_world
    ima = model.body_inv_mass
    cs = (contacts.geom, contacts.point, contacts.depth, contacts.material, contacts.arm,
          contacts.tangent, contacts.rows, contacts.approach, contacts.state)
    count = contacts.count[0]
    nman = 0
    first = 0
    while first < count:
        ga, gb = contacts.geom[first, 0], contacts.geom[first, 1]
        end = first + 1
        while end < count and contacts.geom[end, 0] == ga and contacts.geom[end, 1] == gb:
            end += 1
        a, b = contacts.body[first, 0], contacts.body[first, 1]
        n0, n1, n2 = contacts.normal[first, 0], contacts.normal[first, 1], contacts.normal[first, 2]
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
        gm = model.geom_material
        mu1 = mu2 = max(gm[ga, MU], gm[gb, MU])
        g = ga if gm[ga, MU_ALONG] >= 0.0 else (gb if gm[gb, MU_ALONG] >= 0.0 else -1)
        if g >= 0:   # anisotropic: t1 along the axis projected onto the contact plane
            other = gb if g == ga else ga
            ax = mat_vec(work.body_rot[model.geom_body[g]],
                         (gm[g, AXIS], gm[g, AXIS + 1], gm[g, AXIS + 2]))
            an = ax[0] * n0 + ax[1] * n1 + ax[2] * n2
            u = (ax[0] - an * n0, ax[1] - an * n1, ax[2] - an * n2)
            ul = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
            if ul > 1e-6:   # (an axis along n leaves the plane isotropic)
                t1 = (u[0] / ul, u[1] / ul, u[2] / ul)
                t2 = cross(n, t1)
                mu1 = max(gm[g, MU_ALONG], gm[other, MU])
                mu2 = max(gm[g, MU], gm[other, MU])
        c0 = c1 = c2 = 0.0
        for c in range(first, end):
            _prepare_point(cs, gm, state.body_pos, state.body_vel, state.body_angvel, iiw, ima,
                           c, a, b, n, t1, t2, h)
            c0 += contacts.point[c, 0]
            c1 += contacts.point[c, 1]
            c2 += contacts.point[c, 2]
        rbar = 0.0
        if end - first > 1:
            k = 1.0 / (end - first)
            c0, c1, c2 = c0 * k, c1 * k, c2 * k
            for c in range(first, end):
                rbar += math.sqrt((contacts.point[c, 0] - c0) ** 2
                                  + (contacts.point[c, 1] - c1) ** 2
                                  + (contacts.point[c, 2] - c2) ** 2)
            rbar *= k
        ra = (c0 - state.body_pos[a, 0], c1 - state.body_pos[a, 1], c2 - state.body_pos[a, 2])
        rb = (c0 - state.body_pos[b, 0], c1 - state.body_pos[b, 1], c2 - state.body_pos[b, 2])
        mat = contacts.material[first]
        _pack_anchor(contacts.man_rows[nman], ima[a], ima[b], iiw[a], iiw[b], ra, rb, n, t1, t2,
                     mu1, mu2, mat[MU_ROLL], mat[MU_SPIN] + 0.5 * (mu1 + mu2) * rbar)
        contacts.man_first[nman] = first
        nman += 1
        first = end
    contacts.man_first[nman] = count
    contacts.man_count[0] = nman


@njit(**_JIT)
def _prepare_point(cs, gm, body_pos, vel, angvel, iiw, ima, c, a, b, n, t1, t2, h):
    """One point: material, arms, its normal row. cs: the contacts' (geom, point, depth,
    material, arm, tangent, rows, approach, state) arrays, gm model.geom_material: arrays,
    not the tuples, as a call that takes those costs a reference count per array in them."""
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


@njit(**_JIT)
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


@njit(**_JIT)
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
    """Impulse lam along that row: -lam u on A, +lam u on B at the point."""
    la, lb = lam * ima, lam * imb
    for q in range(3):
        v[a, q] -= la * rec[d + q]
        v[b, q] += lb * rec[d + q]
        w[a, q] -= lam * rec[j + 6 + q]
        w[b, q] += lam * rec[j + 9 + q]


@njit(inline="always", **_JIT)
def _angular_apply(rec, k, lam, w, a, b):
    """Angular impulse lam about the anchor's axis k (0 t1, 1 t2, 2 n)."""
    base = M_ANG + 6 * k
    for q in range(3):
        w[a, q] -= lam * rec[base + q]
        w[b, q] += lam * rec[base + 3 + q]


@njit(**_JIT)
def _point_velocity(vel, angvel, a, b, ra, rb, u0, u1, u2):
    """u . (vB + wB x rB - vA - wA x rA)"""
    wa, wb = angvel[a], angvel[b]
    xa = cross((wa[0], wa[1], wa[2]), ra)
    xb = cross((wb[0], wb[1], wb[2]), rb)
    va, vb = vel[a], vel[b]
    return (u0 * (vb[0] + xb[0] - va[0] - xa[0]) + u1 * (vb[1] + xb[1] - va[1] - xa[1])
            + u2 * (vb[2] + xb[2] - va[2] - xa[2]))


@njit(**_JIT)
def forced_approach(model, state, work, contacts):
    """Cdot_n after this step's forces (gravity), before any impulse: with the speed at
    detection it gives the speed at the moment of impact inside the step."""
    for c in range(contacts.count[0]):
        a, b = contacts.body[c, 0], contacts.body[c, 1]
        ra = (contacts.arm[c, 0, 0], contacts.arm[c, 0, 1], contacts.arm[c, 0, 2])
        rb = (contacts.arm[c, 1, 0], contacts.arm[c, 1, 1], contacts.arm[c, 1, 2])
        n = contacts.normal[c]
        contacts.approach[c, 1] = _point_velocity(state.body_vel, state.body_angvel, a, b, ra, rb,
                                                  n[0], n[1], n[2])


@njit(**_JIT)
def warm_start_contacts(model, state, work, contacts, warm):
    """Apply last step's impulses (clamped to this step's cones), or drop them."""
    v, w = state.body_vel, state.body_angvel
    first = contacts.man_first
    for m in range(contacts.man_count[0]):
        f0, f1 = first[m], first[m + 1]
        a, b = contacts.body[f0, 0], contacts.body[f0, 1]
        total = 0.0
        for c in range(f0, f1):
            p = contacts.impulse[c]
            if not warm:
                p[:] = 0.0
                continue
            pn = max(p[P_N], 0.0)
            p[P_N] = pn
            total += pn
            rec = contacts.rows[c]
            if pn != 0.0:
                _row_apply(rec, N_DIR, N_LIN, pn, rec[N_IMA], rec[N_IMB], v, w, a, b)
        if not warm:
            continue
        rec = contacts.man_rows[m]
        p = contacts.impulse[f0]
        _clamp_ellipse(p, P_T1, rec[M_MU], rec[M_MU2], total)
        _clamp_disk(p, P_R1, rec[M_ROLL] * total)
        p[P_S] = min(max(p[P_S], -rec[M_TWIST] * total), rec[M_TWIST] * total)
        for r in range(2):
            if p[P_T1 + r] != 0.0:
                _row_apply(rec, M_DIR + 3 + 3 * r, M_LIN + 12 * r, p[P_T1 + r], rec[M_IMA],
                           rec[M_IMB], v, w, a, b)
        for k in range(3):
            if p[P_R1 + k] != 0.0:
                _angular_apply(rec, k, p[P_R1 + k], w, a, b)


@njit(**_JIT)
def _clamp_ellipse(p, i, mu1, mu2, total):
    """Scale (p[i], p[i+1]) onto the ellipse (p_i / mu1)^2 + (p_i+1 / mu2)^2 <= total^2."""
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


@njit(inline="always", **_JIT)
def _linear_kick(va0, va1, va2, vb0, vb1, vb2, ima, imb, u0, u1, u2):
    """The linear velocities after the impulse u on B (-u on A), as a tuple of locals."""
    return (va0 - ima * u0, va1 - ima * u1, va2 - ima * u2,
            vb0 + imb * u0, vb1 + imb * u1, vb2 + imb * u2)


@njit(**_JIT)
def solve_contacts(nman, first, body, rows, man_rows, impulse, sliding, v, w, backward):
    """One Gauss-Seidel sweep over the first nman manifolds (contacts.man_first, .body, .rows,
    .man_rows, .impulse, .sliding; body velocities v, w); returns the largest dp^2.  It takes
    arrays, not the named tuples: it runs every iteration, and passing ~80 arrays per call
    cost more than the sweep of a small scene.  `backward` sweeps the manifolds, and the
    points of each, in reverse order (alternate sweeps do: a one-way sweep favours the first
    point of a face, and a stack leans by what that leaves).

    A manifold's rows all act on the same two bodies, so their velocities are read once into
    locals, updated there by every row of the manifold and written back at its end; records
    are indexed in place (rows[c, k], not a view rows[c]: a view costs a reference count,
    and dropping them took the pyramid's sweep from 45 to 37 us, measured)."""
    worst = 0.0
    for i in range(nman):
        m = nman - 1 - i if backward else i
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
            vn = (lin + rows[c, 6] * wb0 + rows[c, 7] * wb1 + rows[c, 8] * wb2
                  - rows[c, 3] * wa0 - rows[c, 4] * wa1 - rows[c, 5] * wa2)
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
        v1 = (man_rows[m, 3] * dv0 + man_rows[m, 4] * dv1 + man_rows[m, 5] * dv2
              + man_rows[m, 12] * wb0 + man_rows[m, 13] * wb1 + man_rows[m, 14] * wb2
              - man_rows[m, 9] * wa0 - man_rows[m, 10] * wa1 - man_rows[m, 11] * wa2)
        v2 = (man_rows[m, 6] * dv0 + man_rows[m, 7] * dv1 + man_rows[m, 8] * dv2
              + man_rows[m, 24] * wb0 + man_rows[m, 25] * wb1 + man_rows[m, 26] * wb2
              - man_rows[m, 21] * wa0 - man_rows[m, 22] * wa1 - man_rows[m, 23] * wa2)
        o1, o2 = impulse[f0, P_T1], impulse[f0, P_T2]
        t1 = o1 - man_rows[m, M_MASS] * v1
        t2 = o2 - man_rows[m, M_MASS + 1] * v2
        mu1, mu2 = man_rows[m, M_MU], man_rows[m, M_MU2]
        lim = mu1 * mu2 * total       # the ellipse (t1 / mu1)^2 + (t2 / mu2)^2 <= total^2
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
        v[a, 0], v[a, 1], v[a, 2] = va0, va1, va2
        v[b, 0], v[b, 1], v[b, 2] = vb0, vb1, vb2
        w[a, 0], w[a, 1], w[a, 2] = wa0, wa1, wa2
        w[b, 0], w[b, 1], w[b, 2] = wb0, wb1, wb2
    return worst


@njit(**_JIT)
def spread_sliding(contacts):
    """After the sweeps: every point of a manifold gets its first point's sliding flag."""
    first = contacts.man_first
    for m in range(contacts.man_count[0]):
        for c in range(first[m] + 1, first[m + 1]):
            contacts.sliding[c] = contacts.sliding[first[m]]


@njit(**_JIT)
def restitution(model, state, work, contacts, h):
    """Eq. 19 after the iterations: points that came in faster than RESTITUTION_SPEED and
    carry a normal impulse leave at e times their approach speed.  A point that was still
    apart (gap g) met its partner at tau = g / u within the step (u = -v_n0) and has since
    moved away for h - tau: its end-of-step separation is e (u h - g), which the position
    pass sets (BOUNCED)."""
    for c in range(contacts.count[0]):
        e = contacts.material[c, RESTITUTION]
        v0 = contacts.approach[c, 0]
        if contacts.state[c] != 0 or e <= 0.0 or v0 >= -RESTITUTION_SPEED:
            continue
        p = contacts.impulse[c]
        if p[P_N] <= 0.0:
            continue
        # the speed at impact: the forces of the step act until tau = gap / u
        gap = max(-contacts.depth[c], 0.0)
        tau = min(gap / -v0, h)
        v0 = v0 + (contacts.approach[c, 1] - v0) * (tau / h)
        a, b = contacts.body[c, 0], contacts.body[c, 1]
        v, w = state.body_vel, state.body_angvel
        rec = contacts.rows[c]
        vn = _row_velocity(rec, N_DIR, N_LIN, v, w, a, b)
        old = p[P_N]
        pn = max(old + rec[N_MASS] * (-e * v0 - vn), 0.0)
        p[P_N] = pn
        _row_apply(rec, N_DIR, N_LIN, pn - old, rec[N_IMA], rec[N_IMB], v, w, a, b)
        if gap > 0.0:
            contacts.state[c] = BOUNCED
            contacts.bounce[c] = -e * v0 * (h - tau)


@njit(**_JIT)
def solve_contact_positions(model, state, work, contacts):
    """One nonlinear Gauss-Seidel sweep removing overlap (poses only); returns the largest
    overlap left beyond the slop before this sweep's corrections (> 0 whenever the sweep
    moved anything)."""
    worst = 0.0
    ima, iiw = model.body_inv_mass, work.body_inv_inertia_world
    for c in range(contacts.count[0]):
        a, b = contacts.body[c, 0], contacts.body[c, 1]
        n0, n1, n2 = contacts.normal[c, 0], contacts.normal[c, 1], contacts.normal[c, 2]
        qa, qb = state.body_quat[a], state.body_quat[b]
        la, lb = contacts.local[c, 0], contacts.local[c, 1]
        ra = quat_rotate(qa, la)
        rb = quat_rotate(qb, lb)
        xa, xb = state.body_pos[a], state.body_pos[b]
        d = (n0 * (xa[0] + ra[0] - xb[0] - rb[0]) + n1 * (xa[1] + ra[1] - xb[1] - rb[1])
             + n2 * (xa[2] + ra[2] - xb[2] - rb[2]))
        if contacts.state[c] == BOUNCED:
            # place the bounce once, exactly (either way along n), then a normal point
            err = d + contacts.bounce[c]
            contacts.state[c] = 0
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
        k = (ima[a] + ima[b] + _quad(iiw[a], ca[0], ca[1], ca[2])
             + _quad(iiw[b], cb[0], cb[1], cb[2]))
        if k <= 1e-300:
            continue
        lam = min(max(factor * err, -MAX_CORRECTION), MAX_CORRECTION) / k
        # A moves along -n, B along +n; each turns about its own arm
        for q in range(3):
            nq = (n0, n1, n2)[q]
            xa[q] -= ima[a] * lam * nq
            xb[q] += ima[b] * lam * nq
        if ima[a] > 0.0:
            ta = mat_vec(iiw[a], ca)
            _turn(qa, -lam * ta[0], -lam * ta[1], -lam * ta[2])
        if ima[b] > 0.0:
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
def contact_wrenches(model, state, contacts, h):
    """Each body's contact sensor: the summed contact force on it (N) and its torque about the
    centre of mass (N m), world, from the step's impulses (state.body_contact, force then
    torque). Point i of a manifold pushes B by p_n,i n at its arm rB,i (and A by the opposite
    at rA,i); the manifold's sliding impulse p_t1 t1 + p_t2 t2 acts at the centroid of its
    points, its rolling and twisting impulses p_r1 t1 + p_r2 t2 + p_s n are torques:
        F_B += f,  T_B += rB x f (+ the rolling and twisting torque),  and - for A."""
    out = state.body_contact
    out[:] = 0.0
    if contacts.count[0] == 0:
        return
    inv_h = 1.0 / h
    for m in range(contacts.man_count[0]):
        first, end = contacts.man_first[m], contacts.man_first[m + 1]
        a, b = contacts.body[first, 0], contacts.body[first, 1]
        n = (contacts.normal[first, 0], contacts.normal[first, 1], contacts.normal[first, 2])
        t1 = (contacts.tangent[first, 0, 0], contacts.tangent[first, 0, 1],
              contacts.tangent[first, 0, 2])
        t2 = (contacts.tangent[first, 1, 0], contacts.tangent[first, 1, 1],
              contacts.tangent[first, 1, 2])
        p = contacts.impulse[first]
        k = 1.0 / (end - first)
        ca = [0.0, 0.0, 0.0]   # the centroid's arms from A's and B's centres
        cb = [0.0, 0.0, 0.0]
        for c in range(first, end):
            pn = contacts.impulse[c, P_N] * inv_h
            f = (pn * n[0], pn * n[1], pn * n[2])
            ra = (contacts.arm[c, 0, 0], contacts.arm[c, 0, 1], contacts.arm[c, 0, 2])
            rb = (contacts.arm[c, 1, 0], contacts.arm[c, 1, 1], contacts.arm[c, 1, 2])
            _add_wrench(out, b, f, rb, 1.0)
            _add_wrench(out, a, f, ra, -1.0)
            for q in range(3):
                ca[q] += k * ra[q]
                cb[q] += k * rb[q]
        f = ((p[P_T1] * t1[0] + p[P_T2] * t2[0]) * inv_h,
             (p[P_T1] * t1[1] + p[P_T2] * t2[1]) * inv_h,
             (p[P_T1] * t1[2] + p[P_T2] * t2[2]) * inv_h)
        _add_wrench(out, b, f, (cb[0], cb[1], cb[2]), 1.0)
        _add_wrench(out, a, f, (ca[0], ca[1], ca[2]), -1.0)
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
