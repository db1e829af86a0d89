"""Contacts, the store and the narrow phase: which points of which geom pairs touch this step,
kept from step to step for the warm start and manifold reuse (Box2D v3's contact.c; the rows
that act on them, prepared and solved in the joints' sequential-impulse loop, are
contact_solver.py).

Geoms. Every shaped body owns a geom g at an offset r_g (body frame) turned by R_gl:

    x_g = x_b + R_b r_g,   R_g = R_b R_gl

Detection, at the poses of time t (before any velocity of this step changes):

    broad phase    world AABBs grown by the margin (CONTACT_MARGIN + h |v_b|) -> pairs (a < b)
                   that may collide (broadphase.py: grid, joint/group/mask filters, planes)
    narrow phase   an FDO against anything: its own kernel (fdo.fdo_collide: subdivision,
                   then Newton on the implicit functions); closed forms (manifold.collide)
                   or, for the other pairs, the convex
                   routine (convex.convex_contact, warm started from last step's normal) and
                   the clipped supporting features (manifold.manifold_from_normal):
                   up to 4 points, each a midpoint m, depth d (> 0 overlap, < 0 gap), one
                   normal n from A to B and a feature id
    warm start     a point takes the accumulated impulses of last step's point with the same
                   (geom a, geom b, feature) key (both lists are in (a, b) order: one merge)

On several threads (Settings.threads, from NARROW_PARALLEL_MIN candidate pairs on) each pair's
narrow phase writes its own row of the pair_* arrays at once; a pass in pair order gives each
pair the index of its first point, and the pairs then write their points there at once, so
the store is the same, bit for bit, for any thread count.

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

The store (ContactSet): three named tuples of flat arrays, each handed to a stage only where
it reads them (a stage call copies every field of the tuples it takes, jit.py) --

    points    ContactPoints, persistent: this step's points in pair order, what the next
              step's warm start and manifold reuse read (the only arrays `grown`, checkpoints
              and the replay keep: count and POINT_FIELDS)
    rows      ContactRows, this step's manifolds and packed rows, written by
              contact_solver.prepare_contacts and read by the sweeps (layouts below: N_*, M_*)
    scratch   ContactScratch, detection's working memory (new_*, the broad phase's, the
              narrow phase's), the geoms' poses it saw (ccd.guard_static reads them) and its
              stats

When a detection finds more pairs or points than the arrays hold it returns False with `need`
set and nothing changed; World grows the set (`grown`) and steps again.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from .broadphase import cached_broadphase, make_broadphase_work, make_pair_cache
from .clock import monotonic_seconds
from .convex import convex_contact
from .fdo import fdo_collide
from .jit import ENTRY, INLINE, KERNEL, PARALLEL
from .lanes import LANES
from .manifold import MAX_POINTS, collide, manifold_from_normal
from .math3 import quat_conj_mul, quat_rotate
from .partition import UNITS, make_partition
from .shape import BOX, ELLIPSOID, FDO, HULL, PLANE, SPHERE
from .support import aabb, bounding_radius, extent

_JIT = KERNEL

CONTACT_MARGIN = 0.005     # m: points this far apart are already contacts (speculative)
MANIFOLD_REUSE = 2e-4      # m: default of Settings.manifold_reuse (the pair keeps its manifold)
MANIFOLD_REUSE_MAX = 0.5 * CONTACT_MARGIN   # m: its largest value: a point left out for a gap
                           # beyond the margin must not have come into touch unseen
CARRIED = -1               # a pair's narrow phase kept last step's manifold (detect_contacts)
NARROW_PARALLEL_MIN = 1024  # candidate pairs from which the narrow phase runs on the threads
                           # (the pyramid's 563, most kept, took 0.18 ms there, 0.11 on one)
NARROW_CHUNK = 64          # pairs a thread takes at a time there

# Packed records, built once per step by contact_solver.prepare_contacts so that an iteration
# reads one contiguous record and does no 3x3 products.  A linear row along u at arms rA, rB is
# a block of 12 at offset j: JA = rA x u (j), JB = rB x u (j+3), WA = IA^-1 JA (j+6),
# WB = IB^-1 JB (j+9).
# A point's normal row (rows.point_rows[c]):
N_DIR, N_LIN, N_MASS, N_TARGET, N_IMA, N_IMB = 0, 3, 15, 16, 17, 18
PACK_N = 19
# A manifold's anchor (rows.man_rows[m]):
#   M_DIR + 3 r      n, t1, t2
#   M_LIN + 12 k     the linear blocks of t1, t2
#   M_ANG + 6 k      IA^-1 e_k, IB^-1 e_k for e = t1, t2, n (rolling, twisting)
#   M_MASS + k       effective masses of t1, t2, r1, r2, s
M_DIR, M_LIN, M_ANG, M_MASS = 0, 9, 33, 51
M_IMA, M_IMB, M_MU, M_ROLL, M_TWIST, M_MU2 = 56, 57, 58, 59, 60, 61
PACK_M = 62
# The lanes (contact_solver._sweep_lanes; partition.group_unit): LANES manifolds that share
# no moving body, their records side by side with the lane last (rows.lane_rows[g, k, lane]):
# the anchor's record as in man_rows (M_DIR ...), then point j's normal row at
# LANE_POINT + LANE_PACK j: its linear block (12, as at N_LIN), mass and target
LANE_POINT, LANE_PACK, LP_MASS, LP_TARGET = PACK_M, 14, 12, 13
LANE_FIELDS = LANE_POINT + MAX_POINTS * LANE_PACK
# the lanes' impulses (rows.lane_impulse[g, k, lane]): the points' p_n (MAX_POINTS), then
LI_T1, LI_T2, LI_R1, LI_R2, LI_S = range(MAX_POINTS, MAX_POINTS + 5)
LANE_IMPULSES = MAX_POINTS + 5
# material columns (model.geom_material has these and MU_ALONG, AXIS .. AXIS + 2)
MU, MU_ROLL, MU_SPIN, RESTITUTION, MU_ALONG, AXIS = 0, 1, 2, 3, 4, 5
# impulse columns
P_N, P_T1, P_T2, P_R1, P_R2, P_S = 0, 1, 2, 3, 4, 5
# columns of a body's contact wrench (State.body_contact): force, then torque
WRENCH_FORCE, WRENCH_TORQUE = 0, 3

# The store: three named tuples, each handed only to the stages that read it (a stage call
# copies every field of the tuples it takes: jit.py).  cap: point capacity (the manifolds too:
# a manifold has at least one point), pcap: pair capacity, ngeom: the model's geoms (at least
# 1), T: broadphase.table_size(ngeom).
ContactPoints = namedtuple("ContactPoints", [
    # persistent: this step's points in pair order, what the next step's warm start and
    # manifold reuse read (POINT_FIELDS and count: what `grown`, checkpoints and the replay keep)
    "count",          # (1,) int64 points
    "geom",           # (cap, 2) int64 geoms A, B (A < B)
    "body",           # (cap, 2) int64 their bodies
    "feature",        # (cap,) int64 feature id (warm-start key with the geoms)
    "point",          # (cap, 3) m, midpoint of the two surface points, world
    "normal",         # (cap, 3) unit, from A to B, world
    "depth",          # (cap,) m, > 0 overlap, < 0 gap
    "impulse",        # (cap, 6) accumulated p_n, p_t1, p_t2 (N s), p_r1, p_r2, p_s (N m s);
                      #   the five friction columns are the manifold's, on its first point
                      #   (0 on the others)
    "sliding",        # (cap,) bool: its manifold's friction at the cone (this step's solve)
    "local",          # (cap, 2, 3) m, surface points on A and B in their body frames (as
                      #   found by the narrow phase; kept while the manifold is reused)
    "local_normal",   # (cap, 3) unit, the normal in A's body frame (as found)
    "found_pose",     # (cap, 7) B's pose in A's frame when the manifold was found:
                      #   RA^T (xB - xA) (m), qA* qB (w, x, y, z)
])

ContactRows = namedtuple("ContactRows", [
    # this step's rows (contact_solver.prepare_contacts), read by the sweeps; per point c
    "material",       # (cap, 4) mu, mu_roll (m), mu_spin (m), restitution of the pair
    "arm",            # (cap, 2, 3) m, rA, rB: the point from A's and B's centres, world
    "tangent",        # (cap, 2, 3) unit, t1, t2 (its manifold's), world
    "point_rows",     # (cap, PACK_N) the packed normal rows (see N_DIR ...)
    "approach",       # (cap, 2) m/s, Cdot_n at detection, and after this step's forces
    "state",          # (cap,) int64 0 normal, contact_solver.BOUNCED: bounced from apart
    "bounce",         # (cap,) m, separation the bounce leaves at the end of the step
    # per manifold m: one pair's points, man_first[m] .. man_first[m + 1] - 1
    "man_count",      # (1,) int64 manifolds
    "man_first",      # (cap + 1,) int64 first point of each manifold (and the end)
    "man_rows",       # (cap, PACK_M) the packed anchors (see M_DIR ...)
    "man_tree",       # (cap,) int64 the manifold's first row in a tree block
                      #   (articulation.py), -1: swept by solve_contacts
    # the manifolds in units that threads sweep at once (partition.py)
    "part_order",     # (cap,) int64 manifolds, unit by unit
    "part_unit",      # (cap,) int64 each manifold's unit
    "part_start",     # (UNITS + 1,) int64 unit u: part_order[part_start[u]:part_start[u + 1]]
    "part_bin",       # (HISTOGRAM,) int64 scratch: the slab of each bin, then cursors
    "part_worst",     # (UNITS + 1,) each unit's largest dp^2 in the last sweep; [UNITS]:
                      #   the sweep's (solve_contacts_claimed)
    "part_sync",      # (SYNC_SIZE,) int64 the counters of a claimed solve (partition.py)
    # the manifolds no tree block took, LANES at a time (partition.group_unit), as the
    # sweeps read and write them (contact_solver.gather_unit, scatter_lanes)
    "lane_man",       # (cap, LANES) int64 group g's manifolds, -1: an empty lane
    "lane_span",      # (UNITS, 2) int64 unit u's groups: lane_span[u, 0] .. lane_span[u, 1] - 1
                      #   (from part_start[u] on: a unit has no more groups than manifolds)
    "lane_points",    # (cap,) int64 the most points of a group's manifolds
    "lane_body",      # (cap, 2, LANES) int64 bodies A, B of each lane (0, 0: an empty lane)
    "lane_rows",      # (cap, LANE_FIELDS, LANES) the records (see LANE_POINT ...)
    "lane_impulse",   # (cap, LANE_IMPULSES, LANES) the impulses (see LI_T1 ...)
    "lane_sliding",   # (cap, LANES) int64 1: the lane's friction at the cone
])

ContactScratch = namedtuple("ContactScratch", [
    # detection's working memory (contact.detect_contacts), and what it reports
    "pairs",          # (pcap, 2) int64 the broad phase's candidate pairs, geoms a < b
    "new_geom",       # (cap, 2) int64 \
    "new_feature",    # (cap,) int64    |
    "new_point",      # (cap, 3) m      |
    "new_normal",     # (cap, 3)        |  this step's points as found or carried, before
    "new_depth",      # (cap,) m        |  they replace last step's (the persistent fields
    "new_impulse",    # (cap, 6)        |  of the same names)
    "new_local",      # (cap, 2, 3) m   |
    "new_local_normal",  # (cap, 3)     |
    "new_found_pose",    # (cap, 7)    /
    "geom_pos",       # (ngeom, 3) m, x_g world, at the detection's poses
    "geom_rot",       # (ngeom, 3, 3) R_g world
    "geom_aabb",      # (ngeom, 6) m, world box min, max grown by the margin and the travel
    "geom_plane",     # (ngeom, 4) a plane geom's n (unit), n . x_g (m)
    "geom_radius",    # (ngeom,) m, bounding sphere about the geom's origin (inf for planes)
    "guard_path",     # (ngeom, 2, 3) m, the inner point of each dynamic geom at the start
                      #   and the end of the step (ccd.guard_static)
    "guard_box",      # (ngeom, 6) m, that path's box (lo, hi); empty (lo > hi) for a geom
                      #   the guard does not move (ccd.guard_static)
    "bp_slot",        # (ngeom,) int64 \
    "bp_order",       # (ngeom,) int64  |
    "bp_box",         # (ngeom, 6) m    |
    "bp_start",       # (T + 1,) int64  |  the broad phase's grid
    "bp_big",         # (ngeom,) int64  |  (broadphase.make_broadphase_work:
    "bp_planes",      # (ngeom,) int64  |  slot order box start big planes mark cand ext)
    "bp_mark",        # (ngeom,) int64  |
    "bp_cand",        # (ngeom,) int64  |
    "bp_ext",         # (ngeom,) m     /
    "bp_fat",         # (ngeom, 6) m         \
    "bp_fat_pairs",   # (2, fcap, 2) int64    |
    "bp_fat_keys",    # (2, fcap) int64       |  the broad phase's pair cache
    "bp_fat_bucket",  # (ngeom + 1,) int64    |  (broadphase.make_pair_cache: fat pairs
    "bp_escaped",     # (ngeom,) int64        |  keys bucket escaped state)
    "bp_fat_state",   # (3,) int64           /
    # the narrow phase's result per candidate pair k (on one thread, every pair uses row 0)
    "pair_n",         # (pcap,) int64 points found, or CARRIED (the manifold kept)
    "pair_old",       # (pcap,) int64 the pair's first point of last step, -1: none
    "pair_first",     # (pcap + 1,) int64 the pair's first point of this step (on threads)
    "pair_pose",      # (pcap, 7) the bodies' relative pose (x, q) when found
    "pair_point",     # (pcap, 4, 3) m, the pair's points (midpoints)
    "pair_depth",     # (pcap, 4) m, their depths
    "pair_normal",    # (pcap, 3) unit, their normal, A to B
    "pair_feature",   # (pcap, 4) int64 their feature ids
    "pair_convex",    # (pcap, 12) the convex routine's first direction (last step's normal
                      #   or 0), then its normal, point on A, point on B (m)
    "need",           # (3,) int64 pair, point and cached-pair capacity needed when detection
                      #   overflowed
    "stats",          # (6,) pairs tested, points, detection seconds, worst overlap (m),
                      #      broad-phase seconds (part of the detection), manifolds reused
])

# What World holds (never a kernel argument: the stages take the three tuples, each the
# ones it reads; contact_args spreads them into step_many's arguments)
ContactSet = namedtuple("ContactSet", ["points", "rows", "scratch"])
NO_CONTACTS = (None, None, None)   # step_many's contact arguments where nothing can touch

# the persistent group, kept when the arrays grow ("count" is set apart)
POINT_FIELDS = ("geom", "body", "feature", "point", "normal", "depth", "impulse", "sliding",
                "local", "local_normal", "found_pose")
assert POINT_FIELDS == ContactPoints._fields[1:]


def contact_args(contacts):
    """step_many's (points, rows, scratch) arguments for a ContactSet or None."""
    return NO_CONTACTS if contacts is None else tuple(contacts)


def make_contacts(ngeom, cap=64, pcap=64, fcap=256):
    bp = make_broadphase_work(ngeom)
    fat = make_pair_cache(ngeom, fcap)
    n = max(int(ngeom), 1)
    points = ContactPoints(
        count=np.zeros(1, np.int64), geom=np.zeros((cap, 2), np.int64),
        body=np.zeros((cap, 2), np.int64), feature=np.zeros(cap, np.int64),
        point=np.zeros((cap, 3)), normal=np.zeros((cap, 3)), depth=np.zeros(cap),
        impulse=np.zeros((cap, 6)), sliding=np.zeros(cap, np.bool_),
        local=np.zeros((cap, 2, 3)), local_normal=np.zeros((cap, 3)),
        found_pose=np.zeros((cap, 7)))
    rows = ContactRows(
        material=np.zeros((cap, 4)), arm=np.zeros((cap, 2, 3)),
        tangent=np.zeros((cap, 2, 3)), point_rows=np.zeros((cap, PACK_N)),
        approach=np.zeros((cap, 2)), state=np.zeros(cap, np.int64), bounce=np.zeros(cap),
        man_count=np.zeros(1, np.int64), man_first=np.zeros(cap + 1, np.int64),
        man_rows=np.zeros((cap, PACK_M)), man_tree=np.full(cap, -1, np.int64),
        **make_partition(cap), lane_man=np.full((cap, LANES), -1, np.int64),
        lane_span=np.zeros((UNITS, 2), np.int64), lane_points=np.zeros(cap, np.int64),
        lane_body=np.zeros((cap, 2, LANES), np.int64),
        lane_rows=np.zeros((cap, LANE_FIELDS, LANES)),
        lane_impulse=np.zeros((cap, LANE_IMPULSES, LANES)),
        lane_sliding=np.zeros((cap, LANES), np.int64))
    scratch = ContactScratch(
        pairs=np.zeros((pcap, 2), np.int64),
        new_geom=np.zeros((cap, 2), np.int64), new_feature=np.zeros(cap, np.int64),
        new_point=np.zeros((cap, 3)), new_normal=np.zeros((cap, 3)), new_depth=np.zeros(cap),
        new_impulse=np.zeros((cap, 6)), new_local=np.zeros((cap, 2, 3)),
        new_local_normal=np.zeros((cap, 3)), new_found_pose=np.zeros((cap, 7)),
        geom_pos=np.zeros((n, 3)), geom_rot=np.zeros((n, 3, 3)), geom_aabb=np.zeros((n, 6)),
        geom_plane=np.zeros((n, 4)), geom_radius=np.zeros(n), guard_path=np.zeros((n, 2, 3)),
        guard_box=np.zeros((n, 6)),
        bp_slot=bp.slot, bp_order=bp.order, bp_box=bp.box, bp_start=bp.start, bp_big=bp.big,
        bp_planes=bp.planes, bp_mark=bp.mark, bp_cand=bp.cand, bp_ext=bp.ext,
        bp_fat=fat.fat, bp_fat_pairs=fat.pairs, bp_fat_keys=fat.keys,
        bp_fat_bucket=fat.bucket, bp_escaped=fat.escaped, bp_fat_state=fat.state,
        pair_n=np.zeros(pcap, np.int64), pair_old=np.zeros(pcap, np.int64),
        pair_first=np.zeros(pcap + 1, np.int64),
        pair_pose=np.zeros((pcap, 7)), pair_point=np.zeros((pcap, MAX_POINTS, 3)),
        pair_depth=np.zeros((pcap, MAX_POINTS)), pair_normal=np.zeros((pcap, 3)),
        pair_feature=np.zeros((pcap, MAX_POINTS), np.int64),
        pair_convex=np.zeros((pcap, 12)),
        need=np.zeros(3, np.int64), stats=np.zeros(6))
    return ContactSet(points, rows, scratch)


def grown(contacts, ngeom):
    """A copy with room for what the last detection needed (`need`), the points kept."""
    points, scratch = contacts.points, contacts.scratch
    cap = max(points.geom.shape[0], int(scratch.need[1]))
    pcap = max(scratch.pairs.shape[0], int(scratch.need[0]))
    fcap = max(scratch.bp_fat_pairs.shape[1], int(scratch.need[2]))
    out = make_contacts(ngeom, cap=2 * cap, pcap=2 * pcap, fcap=2 * fcap)
    k = int(points.count[0])
    for name in POINT_FIELDS:
        getattr(out.points, name)[:k] = getattr(points, name)[:k]
    out.points.count[0] = k
    return out


# ---- detection --------------------------------------------------------------------------------
@njit(**_JIT)
def geom_poses(model, state, work, scratch, h):
    """World poses, AABBs (grown by the margin and this step's travel) and plane equations."""
    R = work.body_rot
    for g in range(model.geom_kind.shape[0]):
        b = model.geom_body[g]
        lr, lp = model.geom_local_rot, model.geom_local_pos
        centred = (lp[g, 0] == 0.0 and lp[g, 1] == 0.0 and lp[g, 2] == 0.0
                   and lr[g, 0, 0] == 1.0 and lr[g, 1, 1] == 1.0 and lr[g, 2, 2] == 1.0)
        for i in range(3):
            if centred:  # one shape at the centre of mass on the body axes: the body's pose
                scratch.geom_pos[g, i] = state.body_pos[b, i]
                for j in range(3):
                    scratch.geom_rot[g, i, j] = R[b, i, j]
                continue
            scratch.geom_pos[g, i] = (state.body_pos[b, i] + R[b, i, 0] * lp[g, 0]
                                       + R[b, i, 1] * lp[g, 1] + R[b, i, 2] * lp[g, 2])
            for j in range(3):
                scratch.geom_rot[g, i, j] = (R[b, i, 0] * lr[g, 0, j] + R[b, i, 1] * lr[g, 1, j]
                                              + R[b, i, 2] * lr[g, 2, j])
        kind = model.geom_kind[g]
        box = scratch.geom_aabb   # (indexed in place: a view per geom costs a reference count)
        if kind == PLANE:
            n0, n1, n2 = (scratch.geom_rot[g, 0, 2], scratch.geom_rot[g, 1, 2],
                          scratch.geom_rot[g, 2, 2])
            scratch.geom_plane[g, 0] = n0
            scratch.geom_plane[g, 1] = n1
            scratch.geom_plane[g, 2] = n2
            scratch.geom_plane[g, 3] = (n0 * scratch.geom_pos[g, 0]
                                         + n1 * scratch.geom_pos[g, 1]
                                         + n2 * scratch.geom_pos[g, 2])
            for i in range(3):
                box[g, i] = -1e30
                box[g, 3 + i] = 1e30
            scratch.geom_radius[g] = math.inf
            continue
        sz = model.geom_size
        rot, pos = scratch.geom_rot, scratch.geom_pos
        if kind == HULL or kind == FDO:
            aabb(kind, sz[g], pos[g], rot[g], model.hull_vert, model.geom_hull[g, 0],
                 model.geom_hull[g, 1], box[g])
        else:  # support.extent inlined (every geom, every step: no views, no call)
            for i in range(3):
                e = extent(kind, sz[g, 0], sz[g, 1], sz[g, 2], rot[g, i, 0], rot[g, i, 1],
                           rot[g, i, 2])
                box[g, i] = pos[g, i] - e
                box[g, 3 + i] = pos[g, i] + e
        if kind != HULL and kind != FDO:
            radius = bounding_radius(kind, sz[g, 0], sz[g, 1], sz[g, 2])
        else:  # hull: half the diagonal of its world box, plus how far the box's centre is
            # from the geom's origin (the points' own origin: it may lie anywhere)
            e0, e1, e2 = box[g, 3] - box[g, 0], box[g, 4] - box[g, 1], box[g, 5] - box[g, 2]
            o0 = 0.5 * (box[g, 0] + box[g, 3]) - pos[g, 0]
            o1 = 0.5 * (box[g, 1] + box[g, 4]) - pos[g, 1]
            o2 = 0.5 * (box[g, 2] + box[g, 5]) - pos[g, 2]
            radius = (0.5 * math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
                      + math.sqrt(o0 * o0 + o1 * o1 + o2 * o2))
        scratch.geom_radius[g] = radius
        v0, v1, v2 = state.body_vel[b, 0], state.body_vel[b, 1], state.body_vel[b, 2]
        grow = CONTACT_MARGIN + h * math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        for i in range(3):
            box[g, i] -= grow
            box[g, 3 + i] += grow


@njit(**ENTRY)   # (called from Python: jit.py)
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


@njit(**ENTRY)   # (called from Python: jit.py)
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
    model.geom_local_pos, geom_radius: scratch.geom_radius; arrays, not the tuples: a call
    that takes those costs a reference count per array in them)."""
    return math.sqrt(lp[g, 0] ** 2 + lp[g, 1] ** 2 + lp[g, 2] ** 2) + geom_radius[g]


@njit(**ENTRY)   # (called from Python: jit.py)
def detect_contacts(model, state, work, points, scratch, h, reuse, threads):
    """Find this step's contact points; False (and `need` set) if the arrays are too small,
    in which case nothing of the last step's contacts has changed.  A pair whose relative
    pose has moved no point of either geom by more than `reuse` (m) since its manifold was
    found keeps that manifold, its points carried by the bodies (0: every pair afresh).

    With `threads` > 1 and at least NARROW_PARALLEL_MIN candidate pairs, the pairs are tested
    on the threads, each into its own row of the pair_* arrays; a pass in pair order on one
    thread gives each pair the index of its first point, and the pairs then write their
    points there on the threads: the same points, in the same order, to the bit."""
    start = monotonic_seconds()
    geom_poses(model, state, work, scratch, h)
    broad_start = monotonic_seconds()
    npairs, nfat = cached_broadphase(
        (scratch.geom_aabb, model.geom_body, model.body_dynamic, model.geom_group,
         model.geom_mask, model.pair_excluded, model.geom_kind, scratch.geom_plane),
        state.body_vel, h,
        (scratch.bp_slot, scratch.bp_order, scratch.bp_box, scratch.bp_start, scratch.bp_big,
         scratch.bp_planes, scratch.bp_mark, scratch.bp_cand), scratch.bp_ext,
        (scratch.bp_fat, scratch.bp_fat_pairs, scratch.bp_fat_keys, scratch.bp_fat_bucket,
         scratch.bp_escaped, scratch.bp_fat_state), scratch.pairs)
    broad_s = monotonic_seconds() - broad_start
    if nfat > scratch.bp_fat_pairs.shape[1]:
        scratch.need[2] = nfat
        return False
    if npairs > scratch.pairs.shape[0]:
        scratch.need[0] = npairs
        return False
    cap = scratch.new_geom.shape[0]
    geoms = (model.geom_kind, model.geom_size, model.geom_hull, model.hull_vert,
             model.geom_body, model.geom_local_pos, scratch.geom_pos, scratch.geom_rot,
             scratch.geom_radius)
    bodies = (state.body_pos, state.body_quat, state.body_vel, work.body_rot)
    last = (points.normal, points.found_pose)
    found = (scratch.pair_point, scratch.pair_depth, scratch.pair_normal,
             scratch.pair_feature, scratch.pair_convex)
    kept = (points.local, points.local_normal, points.geom, points.feature,
            points.impulse, points.found_pose, scratch.new_geom, scratch.new_feature,
            scratch.new_normal, scratch.new_depth, scratch.new_point, scratch.new_local,
            scratch.new_local_normal, scratch.new_impulse, scratch.new_found_pose)
    nold = points.count[0]
    total = 0
    reused = 0
    worst = 0.0
    if threads > 1 and npairs >= NARROW_PARALLEL_MIN:
        # each pair into its row on the threads; where its points go (in pair order); then
        # each pair's points written there on the threads
        cursor = 0   # each pair's first point of last step, by the merge of the serial loop
        for k in range(npairs):
            cursor, old = _last_points(points.geom, nold, cursor, scratch.pairs[k, 0],
                                       scratch.pairs[k, 1])
            scratch.pair_old[k] = old
        _narrow_all(threads, npairs, scratch.pairs, scratch.pair_n, scratch.pair_old,
                    scratch.pair_pose, geoms, bodies, last, found, h, reuse)
        for k in range(npairs):
            scratch.pair_first[k] = total
            n = scratch.pair_n[k]
            if n == CARRIED:
                reused += 1
                o = scratch.pair_old[k]
                while o < nold and points.geom[o, 0] == scratch.pairs[k, 0] and (
                        points.geom[o, 1] == scratch.pairs[k, 1]):
                    total += 1
                    o += 1
            else:
                total += n
        scratch.pair_first[npairs] = total
        if total <= cap:
            _emit_all(threads, npairs, scratch.pairs, scratch.pair_n, scratch.pair_old,
                      scratch.pair_first, scratch.pair_pose, found, kept, points.geom, nold,
                      bodies[0], bodies[3], geoms[4], cap)
            for c in range(total):   # (in point order, as the serial loop takes them)
                if scratch.new_depth[c] > worst:
                    worst = scratch.new_depth[c]
    else:
        cursor = 0
        for k in range(npairs):
            a, b = scratch.pairs[k, 0], scratch.pairs[k, 1]
            cursor, old = _last_points(points.geom, nold, cursor, a, b)
            n = _narrow(0, a, b, old, geoms, bodies, last, found, scratch.pair_pose, h, reuse)
            if n == CARRIED:
                reused += 1
            total, worst = _emit(a, b, n, old, 0, scratch.pair_pose, found, kept, points.geom,
                                 nold, bodies[0], bodies[3], geoms[4], cap, total, worst)
    if total > cap:
        scratch.need[1] = total
        return False
    new = (scratch.new_geom, scratch.new_feature, scratch.new_depth, scratch.new_point,
           scratch.new_normal, scratch.new_impulse, scratch.new_local, scratch.new_local_normal,
           scratch.new_found_pose)
    kept = (points.geom, points.body, points.feature, points.depth, points.point,
            points.normal, points.impulse, points.local, points.local_normal,
            points.found_pose)
    # (on one thread: a copy, memory-bound; on two it took 85-89 us a step against 60-78 on
    # one on the drop, and the pyramid's 22 us became 96: the other core reads what this one
    # wrote, and writes what this one reads next)
    _keep_range(0, total, new, kept, model.geom_body)
    points.count[0] = total
    scratch.stats[0] = npairs
    scratch.stats[1] = total
    scratch.stats[2] = monotonic_seconds() - start
    scratch.stats[3] = worst
    scratch.stats[4] = broad_s
    scratch.stats[5] = reused
    return True


@njit(**INLINE)
def _last_points(geom, nold, cursor, a, b):
    """(cursor, first point of pair (a, b) among last step's nold points, -1: none): last
    step's points and this step's pairs are both in (a, b) order, so one cursor walks the
    points once over all the pairs (a merge), from `cursor` on."""
    while cursor < nold and (geom[cursor, 0] < a or (geom[cursor, 0] == a
                                                     and geom[cursor, 1] < b)):
        cursor += 1
    if cursor < nold and geom[cursor, 0] == a and geom[cursor, 1] == b:
        return cursor, cursor
    return cursor, -1


@njit(**PARALLEL)
def _narrow_all(lanes, npairs, pairs, pair_n, pair_old, pair_pose, geoms, bodies, last, found,
                h, reuse):
    """_narrow for every candidate pair k on the step's threads, into row k, NARROW_CHUNK
    pairs a call (a call per pair cost as much as the pair: ~15 arrays passed by value); the
    chunks dealt to `lanes` lanes in turn (lane l: chunks l, l + lanes, ...), one lane a
    thread: where the costly pairs crowd one end of the pair order (the moving part of a
    pile), a thread given one contiguous half waits for the other (the drop at step 700, one
    thread: 349 and 431 us for the two halves)."""
    nchunk = (npairs + NARROW_CHUNK - 1) // NARROW_CHUNK
    for lane in prange(lanes):
        for c in range(lane, nchunk, lanes):
            _narrow_range(c * NARROW_CHUNK, min(npairs, (c + 1) * NARROW_CHUNK), pairs, pair_n,
                          pair_old, pair_pose, geoms, bodies, last, found, h, reuse)


@njit(**_JIT)
def _narrow_range(lo, hi, pairs, pair_n, pair_old, pair_pose, geoms, bodies, last, found, h,
                  reuse):
    """Pairs lo .. hi - 1 of _narrow_all, each with its first point of last step (pair_old,
    from detect_contacts' merge: with a bisection a pair instead, the threaded detection of
    the drop at step 600, every pair afresh, took 1,035 us on one thread against the serial
    loop's 879; with the merge, 765 against 823)."""
    for k in range(lo, hi):
        pair_n[k] = _narrow(k, pairs[k, 0], pairs[k, 1], pair_old[k], geoms, bodies, last,
                            found, pair_pose, h, reuse)


@njit(**PARALLEL)
def _emit_all(lanes, npairs, pairs, pair_n, pair_old, pair_first, pose, found, kept, old_geom,
              nold, x, R, geom_body, cap):
    """_emit for every pair k on the step's threads, from point pair_first[k] on (the points
    of different pairs are apart), NARROW_CHUNK pairs a call, dealt to lanes in turn as in
    _narrow_all."""
    nchunk = (npairs + NARROW_CHUNK - 1) // NARROW_CHUNK
    for lane in prange(lanes):
        for c in range(lane, nchunk, lanes):
            _emit_range(c * NARROW_CHUNK, min(npairs, (c + 1) * NARROW_CHUNK), pairs, pair_n,
                        pair_old, pair_first, pose, found, kept, old_geom, nold, x, R,
                        geom_body, cap)


@njit(**_JIT)
def _emit_range(lo, hi, pairs, pair_n, pair_old, pair_first, pose, found, kept, old_geom, nold,
                x, R, geom_body, cap):
    for k in range(lo, hi):
        _emit(pairs[k, 0], pairs[k, 1], pair_n[k], pair_old[k], k, pose, found, kept, old_geom,
              nold, x, R, geom_body, cap, pair_first[k], 0.0)


@njit(**_JIT)
def _keep_range(lo, hi, new, kept, geom_body):
    """Points lo .. hi - 1 of this step's (the scratch's new_*) become the store's."""
    (new_geom, new_feature, new_depth, new_point, new_normal, new_impulse, new_local,
     new_local_normal, new_found_pose) = new
    geom, body, feature, depth, point, normal, impulse, local, local_normal, found_pose = kept
    for c in range(lo, hi):
        for q in range(2):
            geom[c, q] = new_geom[c, q]
            body[c, q] = geom_body[new_geom[c, q]]
        feature[c] = new_feature[c]
        depth[c] = new_depth[c]
        for q in range(3):
            point[c, q] = new_point[c, q]
            normal[c, q] = new_normal[c, q]
        for q in range(6):
            impulse[c, q] = new_impulse[c, q]
        for q in range(3):
            local[c, 0, q] = new_local[c, 0, q]
            local[c, 1, q] = new_local[c, 1, q]
            local_normal[c, q] = new_local_normal[c, q]
        for q in range(7):
            found_pose[c, q] = new_found_pose[c, q]


@njit(**INLINE)   # (called, it took ~15 arrays by value a pair: detection 1.5x as long)
def _narrow(row, a, b, old, geoms, bodies, last, found, pose, h, reuse):
    """Pair (a, b), last step's first point old (-1: none): CARRIED if its manifold is kept,
    else the number of points found, written to row `row` of `found` (point, depth, normal,
    feature, convex routine's work) with the bodies' relative pose in pose[row].
    geoms: (kind, size, hull, hull_vert, geom_body, local_pos, pos, rot, radius);
    bodies: (pos, quat, vel, rot); last: last step's (normal, found_pose)."""
    kinds, sizes, hulls, hull_vert, geom_body, lp, gpos, grot, radius = geoms
    x, quat, vel, R = bodies
    mp, md, mn, mf = found[0][row], found[1][row], found[2][row], found[3][row]
    work = found[4][row]
    ba, bb = geom_body[a], geom_body[b]
    ka, kb = kinds[a], kinds[b]
    posed = old >= 0 and reuse > 0.0 and ka != SPHERE and kb != SPHERE
    xr, qr = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
    if posed:   # (the relative pose: only for pairs that may keep or find points)
        xr, qr = _relative_pose(x, quat, R, ba, bb)
        if _relative_motion(xr, qr, last[1], old, _reach(lp, radius, a),
                            _reach(lp, radius, b)) <= reuse:
            return CARRIED
    va, vb = vel[ba], vel[bb]
    dv0, dv1, dv2 = vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]
    margin = CONTACT_MARGIN + h * math.sqrt(dv0 * dv0 + dv1 * dv1 + dv2 * dv2)
    # bounding spheres apart: no contact (most box-overlapping pairs in a pile)
    reach = radius[a] + radius[b] + margin
    c0 = gpos[b, 0] - gpos[a, 0]
    c1 = gpos[b, 1] - gpos[a, 1]
    c2 = gpos[b, 2] - gpos[a, 2]
    if c0 * c0 + c1 * c1 + c2 * c2 > reach * reach:
        return 0
    if (ka == BOX or kb == BOX) and _beyond_box(a if ka == BOX else b, b if ka == BOX else a,
                                                 gpos, grot, sizes, radius, margin):
        return 0
    if ka == FDO or kb == FDO:   # its own kernel against every kind (physics/fdo.py)
        f, o = (a, b) if ka == FDO else (b, a)
        n = fdo_collide(sizes[f], gpos[f], grot[f], hulls[f, 0], hulls[f, 1],
                        kinds[o], sizes[o], gpos[o], grot[o], hulls[o, 0], hulls[o, 1],
                        hull_vert, margin, mp, md, mn, mf)
        if f == b:
            for q in range(3):
                mn[q] = -mn[q]
    elif (ka == ELLIPSOID and (kb == ELLIPSOID or kb == SPHERE)) or (
            kb == ELLIPSOID and ka == SPHERE):
        # the line of centres as a separating axis first: a third of the pairs of a
        # flowing pile whose bounding spheres meet are apart along it (measured, tube)
        dist = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
        if dist > 0.0 and dist - margin > (
                _ellipsoid_reach(ka, sizes, grot, a, c0, c1, c2, dist)
                + _ellipsoid_reach(kb, sizes, grot, b, c0, c1, c2, dist)):
            return 0
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
                    hull_vert, margin, mp, md, mn, mf)
    if n < 0:
        g, out = work[0:3], work[3:12]
        if old >= 0:
            g[0], g[1], g[2] = last[0][old, 0], last[0][old, 1], last[0][old, 2]
        else:
            g[0] = g[1] = g[2] = 0.0
        d = convex_contact(kinds[a], sizes[a], gpos[a], grot[a], hulls[a, 0], hulls[a, 1],
                           kinds[b], sizes[b], gpos[b], grot[b], hulls[b, 0], hulls[b, 1],
                           hull_vert, g, out)
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
                hull_vert, out[0:3], d, out[3:6], out[6:9], margin, mp, md, mn, mf)
    if n > 0:
        if not posed:
            xr, qr = _relative_pose(x, quat, R, ba, bb)
        for j in range(3):
            pose[row, j] = xr[j]
        for j in range(4):
            pose[row, 3 + j] = qr[j]
    return n


@njit(**INLINE)   # (as _narrow)
def _emit(a, b, n, old, row, pose, found, kept, old_geom, nold, x, R, geom_body, cap, total,
          worst):
    """Pair (a, b)'s points appended to this step's (new_* in kept) from point `total` on:
    last step's manifold carried by the bodies (n == CARRIED), or the n points _narrow put
    in row `row` of `found`, each warm started from last step's point with its feature.
    Returns (total, worst overlap) after them; points beyond `cap` are only counted."""
    ba, bb = geom_body[a], geom_body[b]
    if n == CARRIED:
        # the manifold as found, carried by the bodies: p_A = xA + RA l_A, p_B likewise,
        # n = RA n_A, depth n . (p_A - p_B), midpoint (p_A + p_B) / 2; impulses, ids kept
        new_depth = kept[9]
        o = old
        while o < nold and old_geom[o, 0] == a and old_geom[o, 1] == b:
            if total < cap:
                _carried(x, R, ba, bb, kept, o, total)
                worst = max(worst, new_depth[total])
            total += 1
            o += 1
        return total, worst
    mp, md, mn, mf = found[0][row], found[1][row], found[2][row], found[3][row]
    (L, ln, geom, feature, impulse, found_pose, new_geom, new_feature, new_normal, new_depth,
     new_point, new_local, new_local_normal, new_impulse, new_found_pose) = kept
    xr = (pose[row, 0], pose[row, 1], pose[row, 2])
    qr = (pose[row, 3], pose[row, 4], pose[row, 5], pose[row, 6])
    for i in range(n):
        if total < cap:
            c = total
            new_geom[c, 0] = a
            new_geom[c, 1] = b
            new_feature[c] = mf[i]
            for q in range(3):
                new_point[c, q] = mp[i, q]
                new_normal[c, q] = mn[q]
            new_depth[c] = md[i]
            if md[i] > worst:
                worst = md[i]
            _found(x, R, ba, bb, xr, qr, mp, i, mn, md[i], new_local, new_local_normal,
                   new_found_pose, c)
            for q in range(6):
                new_impulse[c, q] = 0.0
            if old >= 0:  # warm start: p_n from last step's point with the same
                o = old   # feature, the friction from last step's manifold (first point)
                if i == 0:
                    for q in range(1, 6):
                        new_impulse[c, q] = impulse[old, q]
                while o < nold and geom[o, 0] == a and geom[o, 1] == b:
                    if feature[o] == mf[i]:
                        new_impulse[c, P_N] = impulse[o, P_N]
                        break
                    o += 1
        total += 1
    return total, worst


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
