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

A point's rows (rA = m - xA, rB = m - xB; t1, t2 unit tangents, n x t1 = t2 ... ):

    normal     Cdot_n  = n . (vB + wB x rB - vA - wA x rA)      p_n >= 0                (20)
    sliding    Cdot_tk = t_k . (vB + wB x rB - vA - wA x rA)    |(p_t1, p_t2)| <= mu p_n   (21)
    rolling    Cdot_rk = t_k . (wB - wA)                        |(p_r1, p_r2)| <= mu_r p_n
    spinning   Cdot_s  = n . (wB - wA)                          |p_s| <= mu_s p_n

Each row: m_eff = 1 / (J M^-1 J^T), dp = m_eff (target - Cdot), the ACCUMULATED impulse is
clamped (the normal at >= 0; the sliding and rolling pairs scaled onto their disks, the
paper's circular cone, never a pyramid), dp = p_new - p_old is applied:

    vA -= dp_lin / mA,  wA -= IA^-1 (rA x dp_lin + dp_ang),  vB, wB the opposite signs.

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
from .math3 import cross, mat_vec, quat_rotate, quat_rotated
from .shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, PLANE, SPHERE
from .support import aabb

_JIT = dict(nogil=True, cache=True, fastmath={"contract"})

CONTACT_MARGIN = 0.005     # m: points this far apart are already contacts (speculative)
LINEAR_SLOP = 0.0005       # m: overlap left in place (resting contacts keep touching)
POSITION_FACTOR = 0.3      # share of the overlap removed per position sweep
MAX_CORRECTION = 0.02      # m: largest correction of one point in one sweep
RESTITUTION_SPEED = 0.1    # m/s: slower approaches do not bounce
BOUNCED = 2                # point state: bounced from apart, its end separation still to set

# Packed rows of one point (contacts.rows[c]), built once per step by prepare_contacts so that
# an iteration reads one contiguous record and does no 3x3 products:
#   R_DIR + 3 r      u_r (n, t1, t2)
#   R_LIN + 12 r     JA = rA x u_r, JB = rB x u_r, WA = IA^-1 JA, WB = IB^-1 JB
#   R_ANG + 6 k      IA^-1 e_k, IB^-1 e_k for e = t1, t2, n (rolling, spinning)
#   R_MASS + i       effective masses of the six rows (P_N .. P_S order)
R_DIR, R_LIN, R_ANG, R_MASS = 0, 9, 45, 63
R_IMA, R_IMB, R_MU, R_ROLL, R_SPIN, R_TARGET = 69, 70, 71, 72, 73, 74
PACK_C = 75
# material columns
MU, MU_ROLL, MU_SPIN, RESTITUTION = 0, 1, 2, 3
# impulse columns
P_N, P_T1, P_T2, P_R1, P_R2, P_S = 0, 1, 2, 3, 4, 5

ContactSet = namedtuple("ContactSet", [
    # persistent: this step's points (kept for the next step's warm start), in pair order
    "count",          # (1,) int64 points
    "geom",           # (cap, 2) int64 geoms A, B
    "body",           # (cap, 2) int64 their bodies
    "feature",        # (cap,) int64
    "point",          # (cap, 3) midpoint, world
    "normal",         # (cap, 3) A to B
    "depth",          # (cap,) > 0 overlap
    "impulse",        # (cap, 6) accumulated p_n, p_t1, p_t2, p_r1, p_r2, p_s (N s, N m s)
    "sliding",        # (cap,) bool: friction at the cone
    "local",          # (cap, 2, 3) surface points on A and B in their body frames
    # rows of this step
    "material",       # (cap, 4) mu, mu_roll (m), mu_spin (m), restitution
    "arm",            # (cap, 2, 3) rA, rB
    "tangent",        # (cap, 2, 3) t1, t2
    "mass",           # (cap, 6) effective masses of the six rows
    "rows",           # (cap, PACK_C) the packed rows (see R_DIR ...)
    "approach",       # (cap, 2) Cdot_n at detection, and after this step's forces
    "target",         # (cap,) normal target velocity
    "state",          # (cap,) int64 0 normal, BOUNCED: bounced from apart this step
    "bounce",         # (cap,) separation the bounce leaves at the end of the step (m)
    # detection scratch
    "pairs",          # (pcap, 2) int64
    "new_geom", "new_feature", "new_point", "new_normal", "new_depth", "new_impulse",
    "geom_pos",       # (ngeom, 3)
    "geom_rot",       # (ngeom, 3, 3)
    "geom_aabb",      # (ngeom, 6)
    "geom_plane",     # (ngeom, 4)
    "geom_radius",    # (ngeom,) bounding sphere about the geom's centre (inf for planes)
    "bp_slot", "bp_order", "bp_box", "bp_start", "bp_big", "bp_planes", "bp_mark", "bp_cand",
    "bp_ext",
    "m_point", "m_depth", "m_normal", "m_feature", "cv_out", "guess",
    "need",           # (2,) int64 pair and point capacity needed when detection overflowed
    "stats",          # (5,) pairs tested, points, detection seconds, worst overlap (m),
                      #      broad-phase seconds (part of the detection)
])


def make_contacts(ngeom, cap=64, pcap=64):
    bp = make_broadphase_work(ngeom)
    n = max(int(ngeom), 1)
    return ContactSet(
        count=np.zeros(1, np.int64), geom=np.zeros((cap, 2), np.int64),
        body=np.zeros((cap, 2), np.int64), feature=np.zeros(cap, np.int64),
        point=np.zeros((cap, 3)), normal=np.zeros((cap, 3)), depth=np.zeros(cap),
        impulse=np.zeros((cap, 6)), sliding=np.zeros(cap, np.bool_),
        local=np.zeros((cap, 2, 3)), material=np.zeros((cap, 4)), arm=np.zeros((cap, 2, 3)),
        tangent=np.zeros((cap, 2, 3)), mass=np.zeros((cap, 6)), rows=np.zeros((cap, PACK_C)),
        approach=np.zeros((cap, 2)),
        target=np.zeros(cap), state=np.zeros(cap, np.int64), bounce=np.zeros(cap),
        pairs=np.zeros((pcap, 2), np.int64),
        new_geom=np.zeros((cap, 2), np.int64), new_feature=np.zeros(cap, np.int64),
        new_point=np.zeros((cap, 3)), new_normal=np.zeros((cap, 3)), new_depth=np.zeros(cap),
        new_impulse=np.zeros((cap, 6)),
        geom_pos=np.zeros((n, 3)), geom_rot=np.zeros((n, 3, 3)), geom_aabb=np.zeros((n, 6)),
        geom_plane=np.zeros((n, 4)), geom_radius=np.zeros(n),
        bp_slot=bp.slot, bp_order=bp.order, bp_box=bp.box, bp_start=bp.start, bp_big=bp.big,
        bp_planes=bp.planes, bp_mark=bp.mark, bp_cand=bp.cand, bp_ext=bp.ext,
        m_point=np.zeros((4, 3)), m_depth=np.zeros(4), m_normal=np.zeros(3),
        m_feature=np.zeros(4, np.int64), cv_out=np.zeros(9), guess=np.zeros(3),
        need=np.zeros(2, np.int64), stats=np.zeros(5))


def grown(contacts, ngeom):
    """A copy with room for what the last detection needed (`need`), the points kept."""
    cap = max(contacts.geom.shape[0], int(contacts.need[1]))
    pcap = max(contacts.pairs.shape[0], int(contacts.need[0]))
    out = make_contacts(ngeom, cap=2 * cap, pcap=2 * pcap)
    k = int(contacts.count[0])
    for name in ("geom", "body", "feature", "point", "normal", "depth", "impulse", "sliding",
                 "local"):
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
        box = contacts.geom_aabb[g]
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
                box[i] = -1e30
                box[3 + i] = 1e30
            contacts.geom_radius[g] = math.inf
            continue
        sz = model.geom_size[g]
        rot, pos = contacts.geom_rot, contacts.geom_pos
        if kind == HULL:
            aabb(kind, sz, pos[g], rot[g], model.hull_vert, model.geom_hull[g, 0],
                 model.geom_hull[g, 1], box)
        else:  # support.aabb's closed forms, here without the call (every geom, every step)
            for i in range(3):
                r0, r1, r2 = rot[g, i, 0], rot[g, i, 1], rot[g, i, 2]
                if kind == BOX:
                    e = abs(r0) * sz[0] + abs(r1) * sz[1] + abs(r2) * sz[2]
                elif kind == ELLIPSOID:
                    e = math.sqrt((r0 * sz[0]) ** 2 + (r1 * sz[1]) ** 2 + (r2 * sz[2]) ** 2)
                elif kind == CAPSULE:
                    e = abs(r2) * sz[1] + sz[0]
                elif kind == CYLINDER:
                    e = abs(r2) * sz[1] + sz[0] * math.sqrt(r0 * r0 + r1 * r1)
                else:  # SPHERE
                    e = sz[0]
                box[i] = pos[g, i] - e
                box[3 + i] = pos[g, i] + e
        if kind == SPHERE:
            radius = sz[0]
        elif kind == ELLIPSOID:
            radius = max(sz[0], max(sz[1], sz[2]))
        elif kind == CAPSULE:
            radius = sz[0] + sz[1]
        elif kind == CYLINDER:
            radius = math.sqrt(sz[0] * sz[0] + sz[1] * sz[1])
        elif kind == BOX:
            radius = math.sqrt(sz[0] * sz[0] + sz[1] * sz[1] + sz[2] * sz[2])
        else:  # hull: half the diagonal of its world box
            e0, e1, e2 = box[3] - box[0], box[4] - box[1], box[5] - box[2]
            radius = 0.5 * math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        contacts.geom_radius[g] = radius
        v = state.body_vel[b]
        grow = CONTACT_MARGIN + h * math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        for i in range(3):
            box[i] -= grow
            box[3 + i] += grow


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
def _smooth(kind):
    """Strictly convex shapes: their contact with a convex shape is a single point."""
    return kind == SPHERE or kind == ELLIPSOID


@njit(**_JIT)
def detect_contacts(model, state, work, contacts, h):
    """Find this step's contact points; False (and `need` set) if the arrays are too small,
    in which case nothing of the last step's contacts has changed."""
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
    total = 0
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
        ka, kb = kinds[a], kinds[b]
        if (ka == ELLIPSOID and (kb == ELLIPSOID or kb == SPHERE)) or (
                kb == ELLIPSOID and ka == SPHERE):
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
                for q in range(6):
                    contacts.new_impulse[c, q] = 0.0
                if old >= 0:  # warm start from last step's point with the same feature
                    o = old
                    while (o < contacts.count[0] and contacts.geom[o, 0] == a
                           and contacts.geom[o, 1] == b):
                        if contacts.feature[o] == mf[i]:
                            for q in range(6):
                                contacts.new_impulse[c, q] = contacts.impulse[o, q]
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
    contacts.count[0] = total
    contacts.stats[0] = npairs
    contacts.stats[1] = total
    contacts.stats[2] = monotonic_seconds() - start
    contacts.stats[3] = worst
    contacts.stats[4] = broad_s
    return True


# ---- rows -------------------------------------------------------------------------------------
@njit(**_JIT)
def prepare_contacts(model, state, work, contacts, h):
    """Arms, tangents, effective masses, materials, approach speeds and normal targets, at
    the poses of time t and the velocities before this step's forces."""
    iiw = work.body_inv_inertia_world
    ima = model.body_inv_mass
    for c in range(contacts.count[0]):
        ga, gb = contacts.geom[c, 0], contacts.geom[c, 1]
        a, b = contacts.body[c, 0], contacts.body[c, 1]
        n0, n1, n2 = contacts.normal[c, 0], contacts.normal[c, 1], contacts.normal[c, 2]
        m0, m1, m2 = contacts.point[c, 0], contacts.point[c, 1], contacts.point[c, 2]
        d = contacts.depth[c]
        for q in range(4):
            contacts.material[c, q] = max(model.geom_material[ga, q], model.geom_material[gb, q])
        ra = (m0 - state.body_pos[a, 0], m1 - state.body_pos[a, 1], m2 - state.body_pos[a, 2])
        rb = (m0 - state.body_pos[b, 0], m1 - state.body_pos[b, 1], m2 - state.body_pos[b, 2])
        for q in range(3):
            contacts.arm[c, 0, q] = ra[q]
            contacts.arm[c, 1, q] = rb[q]
        # surface points in body frames, for the position pass
        pa = (m0 + 0.5 * d * n0, m1 + 0.5 * d * n1, m2 + 0.5 * d * n2)
        pb = (m0 - 0.5 * d * n0, m1 - 0.5 * d * n1, m2 - 0.5 * d * n2)
        Ra, Rb = work.body_rot[a], work.body_rot[b]
        for q in range(3):
            contacts.local[c, 0, q] = (Ra[0, q] * (pa[0] - state.body_pos[a, 0])
                                       + Ra[1, q] * (pa[1] - state.body_pos[a, 1])
                                       + Ra[2, q] * (pa[2] - state.body_pos[a, 2]))
            contacts.local[c, 1, q] = (Rb[0, q] * (pb[0] - state.body_pos[b, 0])
                                       + Rb[1, q] * (pb[1] - state.body_pos[b, 1])
                                       + Rb[2, q] * (pb[2] - state.body_pos[b, 2]))
        # tangents: t1 across the axis least aligned with n
        if abs(n0) < 0.57735:
            t1 = cross((n0, n1, n2), (1.0, 0.0, 0.0))
        elif abs(n1) < 0.57735:
            t1 = cross((n0, n1, n2), (0.0, 1.0, 0.0))
        else:
            t1 = cross((n0, n1, n2), (0.0, 0.0, 1.0))
        s = 1.0 / math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
        t1 = (t1[0] * s, t1[1] * s, t1[2] * s)
        t2 = cross((n0, n1, n2), t1)
        for q in range(3):
            contacts.tangent[c, 0, q] = t1[q]
            contacts.tangent[c, 1, q] = t2[q]
        im = ima[a] + ima[b]
        dirs = ((n0, n1, n2), t1, t2)
        for r in range(3):
            u = dirs[r]
            ca = cross(ra, u)
            cb = cross(rb, u)
            k = im + _quad(iiw[a], ca[0], ca[1], ca[2]) + _quad(iiw[b], cb[0], cb[1], cb[2])
            contacts.mass[c, r] = 1.0 / k if k > 1e-300 else 0.0
            ang = _quad(iiw[a], u[0], u[1], u[2]) + _quad(iiw[b], u[0], u[1], u[2])
            # angular rows: rolling about t1, t2, spinning about n
            contacts.mass[c, 3 + (r + 2) % 3] = 1.0 / ang if ang > 1e-300 else 0.0
        contacts.approach[c, 0] = _point_velocity(state, a, b, ra, rb, n0, n1, n2)
        contacts.state[c] = 0
        contacts.target[c] = d / h if d < 0.0 else 0.0   # -gap / h: close it, don't cross
        _pack(contacts, c, ima[a], ima[b], iiw[a], iiw[b], ra, rb, dirs)


@njit(**_JIT)
def _pack(contacts, c, ima, imb, iia, iib, ra, rb, dirs):
    rec = contacts.rows[c]
    for r in range(3):
        u = dirs[r]
        ja = cross(ra, u)
        jb = cross(rb, u)
        wa = mat_vec(iia, ja)
        wb = mat_vec(iib, jb)
        ka = mat_vec(iia, u)
        kb = mat_vec(iib, u)
        k = R_ANG + 6 * ((r + 2) % 3)   # angular rows in t1, t2, n order
        base = R_LIN + 12 * r
        for q in range(3):
            rec[R_DIR + 3 * r + q] = u[q]
            rec[base + q] = ja[q]
            rec[base + 3 + q] = jb[q]
            rec[base + 6 + q] = wa[q]
            rec[base + 9 + q] = wb[q]
            rec[k + q] = ka[q]
            rec[k + 3 + q] = kb[q]
    for i in range(6):
        rec[R_MASS + i] = contacts.mass[c, i]
    rec[R_IMA] = ima
    rec[R_IMB] = imb
    rec[R_MU] = contacts.material[c, MU]
    rec[R_ROLL] = contacts.material[c, MU_ROLL]
    rec[R_SPIN] = contacts.material[c, MU_SPIN]
    rec[R_TARGET] = contacts.target[c]


# The three helpers below run for every row of every iteration: inlined, and indexing the
# velocity arrays directly (no views), they halve the sweep's time (measured: 89 -> 45 ns a
# point on the 1,000-ellipsoid pile).
@njit(inline="always", **_JIT)
def _row_velocity(rec, r, v, w, a, b):
    """Cdot of linear row r (0 n, 1 t1, 2 t2) from the packed record."""
    d = R_DIR + 3 * r
    j = R_LIN + 12 * r
    return (rec[d] * (v[b, 0] - v[a, 0]) + rec[d + 1] * (v[b, 1] - v[a, 1])
            + rec[d + 2] * (v[b, 2] - v[a, 2])
            + rec[j + 3] * w[b, 0] + rec[j + 4] * w[b, 1] + rec[j + 5] * w[b, 2]
            - rec[j] * w[a, 0] - rec[j + 1] * w[a, 1] - rec[j + 2] * w[a, 2])


@njit(inline="always", **_JIT)
def _row_apply(rec, r, lam, v, w, a, b):
    """Impulse lam along linear row r: -lam u on A, +lam u on B at the point."""
    d = R_DIR + 3 * r
    j = R_LIN + 12 * r
    la, lb = lam * rec[R_IMA], lam * rec[R_IMB]
    for q in range(3):
        v[a, q] -= la * rec[d + q]
        v[b, q] += lb * rec[d + q]
        w[a, q] -= lam * rec[j + 6 + q]
        w[b, q] += lam * rec[j + 9 + q]


@njit(inline="always", **_JIT)
def _angular_apply(rec, k, lam, w, a, b):
    """Angular impulse lam about axis k (0 t1, 1 t2, 2 n)."""
    base = R_ANG + 6 * k
    for q in range(3):
        w[a, q] -= lam * rec[base + q]
        w[b, q] += lam * rec[base + 3 + q]


@njit(**_JIT)
def _point_velocity(state, a, b, ra, rb, u0, u1, u2):
    """u . (vB + wB x rB - vA - wA x rA)"""
    wa, wb = state.body_angvel[a], state.body_angvel[b]
    xa = cross((wa[0], wa[1], wa[2]), ra)
    xb = cross((wb[0], wb[1], wb[2]), rb)
    va, vb = state.body_vel[a], state.body_vel[b]
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
        contacts.approach[c, 1] = _point_velocity(state, a, b, ra, rb, n[0], n[1], n[2])


@njit(**_JIT)
def warm_start_contacts(model, state, work, contacts, warm):
    """Apply last step's impulses (clamped to this step's cone), or drop them."""
    for c in range(contacts.count[0]):
        p = contacts.impulse[c]
        if not warm:
            p[:] = 0.0
            continue
        rec = contacts.rows[c]
        pn = max(p[P_N], 0.0)
        p[P_N] = pn
        _clamp_disk(p, P_T1, rec[R_MU] * pn)
        _clamp_disk(p, P_R1, rec[R_ROLL] * pn)
        p[P_S] = min(max(p[P_S], -rec[R_SPIN] * pn), rec[R_SPIN] * pn)
        a, b = contacts.body[c, 0], contacts.body[c, 1]
        v, w = state.body_vel, state.body_angvel
        for r in range(3):
            if p[r] != 0.0:
                _row_apply(rec, r, p[r], v, w, a, b)
        for k in range(3):
            if p[P_R1 + k] != 0.0:
                _angular_apply(rec, k, p[P_R1 + k], w, a, b)


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


@njit(**_JIT)
def solve_contacts(npoint, body, rows, impulse, sliding, v, w):
    """One Gauss-Seidel sweep over the rows of the first npoint points (contacts.body, .rows,
    .impulse, .sliding; body velocities v, w); returns the largest dp^2.  It takes arrays, not
    the named tuples: it runs every iteration, and passing ~80 arrays per call cost more than
    the sweep of a small scene."""
    worst = 0.0
    for c in range(npoint):
        a, b = body[c, 0], body[c, 1]
        rec = rows[c]
        p = impulse[c]
        # normal (eq. 20): p_n >= 0
        vn = _row_velocity(rec, 0, v, w, a, b)
        old = p[P_N]
        pn = max(old + rec[R_MASS] * (rec[R_TARGET] - vn), 0.0)
        dp = pn - old
        p[P_N] = pn
        if dp != 0.0:
            _row_apply(rec, 0, dp, v, w, a, b)
            worst = max(worst, dp * dp)
        # sliding friction (eq. 21): the accumulated (p_t1, p_t2) scaled onto the disk mu p_n
        v1 = _row_velocity(rec, 1, v, w, a, b)
        v2 = _row_velocity(rec, 2, v, w, a, b)
        o1, o2 = p[P_T1], p[P_T2]
        t1 = o1 - rec[R_MASS + 1] * v1
        t2 = o2 - rec[R_MASS + 2] * v2
        lim = rec[R_MU] * pn
        m2 = t1 * t1 + t2 * t2
        slide = m2 > lim * lim
        if slide:
            scale = lim / math.sqrt(m2)
            t1 *= scale
            t2 *= scale
        p[P_T1] = t1
        p[P_T2] = t2
        sliding[c] = slide
        d1, d2 = t1 - o1, t2 - o2
        if d1 != 0.0:
            _row_apply(rec, 1, d1, v, w, a, b)
        if d2 != 0.0:
            _row_apply(rec, 2, d2, v, w, a, b)
        worst = max(worst, d1 * d1 + d2 * d2)
        # rolling friction: the disk mu_roll p_n, about the tangents
        if rec[R_ROLL] > 0.0:
            w0, w1, w2 = w[b, 0] - w[a, 0], w[b, 1] - w[a, 1], w[b, 2] - w[a, 2]
            o1, o2 = p[P_R1], p[P_R2]
            p[P_R1] = o1 - rec[R_MASS + 3] * (rec[R_DIR + 3] * w0 + rec[R_DIR + 4] * w1
                                              + rec[R_DIR + 5] * w2)
            p[P_R2] = o2 - rec[R_MASS + 4] * (rec[R_DIR + 6] * w0 + rec[R_DIR + 7] * w1
                                              + rec[R_DIR + 8] * w2)
            _clamp_disk(p, P_R1, rec[R_ROLL] * pn)
            d1, d2 = p[P_R1] - o1, p[P_R2] - o2
            _angular_apply(rec, 0, d1, w, a, b)
            _angular_apply(rec, 1, d2, w, a, b)
            worst = max(worst, d1 * d1 + d2 * d2)
        # spinning friction: |p_s| <= mu_spin p_n, about the normal
        if rec[R_SPIN] > 0.0:
            ws = (rec[R_DIR] * (w[b, 0] - w[a, 0]) + rec[R_DIR + 1] * (w[b, 1] - w[a, 1])
                  + rec[R_DIR + 2] * (w[b, 2] - w[a, 2]))
            old = p[P_S]
            lim = rec[R_SPIN] * pn
            p[P_S] = min(max(old - rec[R_MASS + 5] * ws, -lim), lim)
            d = p[P_S] - old
            _angular_apply(rec, 2, d, w, a, b)
            worst = max(worst, d * d)
    return worst


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
        vn = _row_velocity(rec, 0, v, w, a, b)
        old = p[P_N]
        pn = max(old + rec[R_MASS] * (-e * v0 - vn), 0.0)
        p[P_N] = pn
        _row_apply(rec, 0, pn - old, v, w, a, b)
        if gap > 0.0:
            contacts.state[c] = BOUNCED
            contacts.bounce[c] = -e * v0 * (h - tau)


@njit(**_JIT)
def solve_contact_positions(model, state, work, contacts):
    """One nonlinear Gauss-Seidel sweep removing overlap (poses only); returns the largest
    overlap left beyond the slop before this sweep's corrections."""
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
