"""The contact manifolds split into units that threads sweep at the same time (paper 001's
parallel step; Box2D v3 colours its constraint graph for the same end).

A Gauss-Seidel sweep changes each body's velocity (the position pass: its pose) as it goes,
so two manifolds may be swept at once only if they share no body that moves. A body moves
under a row only if its inverse mass is > 0: a static or kinematic body (the floor, the tube)
is read by every manifold that touches it but never written with a new value.

The manifolds of a big scene are split by space:

* the moving bodies in contact are cut into SLABS slabs along the world axis on which they
  spread widest, at the quantiles of the manifolds' positions (a histogram of HISTOGRAM bins
  over that extent), so that each slab holds about as many manifolds;
* slab s's unit holds the manifolds whose moving bodies lie in slab s alone, or in slabs s and
  s + 1 (across the cut above s);
* a unit of an even slab s touches slabs s and s + 1 only, so the even slabs' units share no
  moving body and are swept at once (phase 0), then the odd slabs' units (phase 1); a
  manifold whose two bodies lie further apart (a body longer than a slab is wide) goes to the
  last unit (LEFTOVER), swept alone after them.

Units are numbered in sweep order: part_start[u] .. part_start[u + 1] - 1 index part_order,
the manifolds of unit u in their own (ascending) order; units 0 .. PHASE_UNITS - 1 are phase
0 (slabs 0, 2, 4, ...), the next PHASE_UNITS phase 1 (slabs 1, 3, ...), unit LEFTOVER last.
A backward sweep takes the phases, and each unit's manifolds, in reverse.

The split depends on the scene's state alone, never on the number of threads: the units of a
phase give the same bits in any order (they share nothing that moves), so one thread running
them one after another and N threads running them at once give bit-identical results
(tests/test_physics_threads.py). A scene with fewer than PARTITION_MIN manifolds puts all of
them in LEFTOVER in their index order: the sweep order of a single thread, and no launch.

On threads, solve_contacts starts a parallel loop per phase. A solve of contacts alone (no
joint, motor, damper or coupling rows between its sweeps) runs all its sweeps in one parallel
region instead, the threads taking the units one at a time from shared counters (part_sync,
laid out below; contact_solver.solve_contacts_claimed): the same bits, without the ~2 us that
starting and ending each phase's loop cost.

SLABS is fixed (results depend on it, as on the iterations): 8 slabs are 4 units a phase, work
for up to 4 threads; a machine of 12 cores would want 24 (see docs/papers.md).

Lanes. Within a unit the sweep takes the manifolds LANES at a time, one to a SIMD lane
(contact_solver._sweep_lanes): a group of manifolds that share no moving body, so that
solving them at once is solving them one after another. `group_unit` fills the groups in
the unit's order, greedily: each manifold goes to the first of the unit's last OPEN_GROUPS
groups that has a free lane, no moving body of its own and members of as many points, else
the first of them with a free lane and no moving body of its own, else a new group. The sweep
order is then the groups', lane by lane; it depends on the state alone, like the units.
"""
import numpy as np
from numba import njit

from .jit import ENTRY, KERNEL

SLABS = 8                      # slabs along the widest axis
PHASE_UNITS = SLABS // 2       # units per phase (the even slabs, then the odd ones)
LEFTOVER = SLABS               # the unit swept alone, after both phases
UNITS = SLABS + 1
HISTOGRAM = 64                 # bins over the extent, for the quantiles
PARTITION_MIN = 64             # fewer manifolds: all in LEFTOVER, in index order
OPEN_GROUPS = 8                # groups of a unit that may still take a manifold (lanes)
assert SLABS % 2 == 0


# part_sync: the counters of a solve whose sweeps the threads take unit by unit in one
# parallel region (contact_solver.solve_contacts_claimed), each on a cache line of its own
SYNC_CLAIM = 0                 # units taken so far (all sweeps)
SYNC_FINISHED = 8              # units finished so far
SYNC_DECIDED = 16              # sweeps whose going on or not has been decided
SYNC_STOP = 24                 # 0, or the sweeps done once the solve stops
SYNC_UNITS = 32                # units a sweep (those with manifolds)
SYNC_TABLE = 40                # forward, then backward: the units in sweep order (UNITS),
                               # then the units before each one's phase (UNITS)
SYNC_SIZE = SYNC_TABLE + 4 * UNITS


def make_partition(cap):
    """The arrays of a partition of up to `cap` manifolds (contact.ContactRows' part_*)."""
    return dict(part_order=np.zeros(cap, np.int64), part_unit=np.zeros(cap, np.int64),
                part_start=np.zeros(UNITS + 1, np.int64),
                part_bin=np.zeros(HISTOGRAM, np.int64), part_worst=np.zeros(UNITS + 1),
                part_sync=np.zeros(SYNC_SIZE, np.int64))


@njit(**KERNEL)
def slab_unit(s):
    """The unit of slab s."""
    return s // 2 if s % 2 == 0 else PHASE_UNITS + s // 2


@njit(**KERNEL)
def _moving_body(a, b, inv_mass):
    """The manifold's first moving body, -1 if neither moves."""
    if inv_mass[a] > 0.0:
        return a
    if inv_mass[b] > 0.0:
        return b
    return -1


@njit(**KERNEL)
def _slab(x, lo, scale, part_bin):
    k = int((x - lo) * scale)
    return part_bin[min(max(k, 0), HISTOGRAM - 1)]


@njit(**ENTRY)   # (the tests call it)
def partition_manifolds(nman, first, body, pos, inv_mass, part_order, part_unit, part_start,
                        part_bin):
    """Split manifolds 0 .. nman - 1 (first: contact.ContactRows.man_first, body:
    ContactPoints.body, pos: the bodies' positions (nbody, 3), inv_mass (nbody,)) into the
    units above: part_unit (nman,) each manifold's unit, part_order and part_start as above,
    part_bin (HISTOGRAM,) the slab of each bin (scratch)."""
    moving = 0
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    if nman >= PARTITION_MIN:
        for m in range(nman):
            a, b = body[first[m], 0], body[first[m], 1]
            for i in (a, b):
                if inv_mass[i] > 0.0:
                    lo0, hi0 = min(lo0, pos[i, 0]), max(hi0, pos[i, 0])
                    lo1, hi1 = min(lo1, pos[i, 1]), max(hi1, pos[i, 1])
                    lo2, hi2 = min(lo2, pos[i, 2]), max(hi2, pos[i, 2])
                    moving += 1
    axis, lo, extent = 0, lo0, hi0 - lo0
    if hi1 - lo1 > extent:
        axis, lo, extent = 1, lo1, hi1 - lo1
    if hi2 - lo2 > extent:
        axis, lo, extent = 2, lo2, hi2 - lo2
    if moving == 0 or not extent > 0.0 or not np.isfinite(extent):
        for m in range(nman):   # one unit, in index order
            part_unit[m] = LEFTOVER
            part_order[m] = m
        for u in range(LEFTOVER + 1):
            part_start[u] = 0
        part_start[UNITS] = nman
        return
    scale = HISTOGRAM / extent
    # the histogram of the manifolds' first moving bodies, then each bin's slab by the
    # share of manifolds before it (monotone in the bin)
    for k in range(HISTOGRAM):
        part_bin[k] = 0
    counted = 0
    for m in range(nman):
        i = _moving_body(body[first[m], 0], body[first[m], 1], inv_mass)
        if i >= 0:
            k = int((pos[i, axis] - lo) * scale)
            part_bin[min(max(k, 0), HISTOGRAM - 1)] += 1
            counted += 1
    before = 0
    for k in range(HISTOGRAM):
        n = part_bin[k]
        part_bin[k] = min(before * SLABS // counted, SLABS - 1)
        before += n
    # each manifold's unit, then a counting sort by unit that keeps the index order
    for u in range(UNITS + 1):
        part_start[u] = 0
    for m in range(nman):
        a, b = body[first[m], 0], body[first[m], 1]
        sa = _slab(pos[a, axis], lo, scale, part_bin) if inv_mass[a] > 0.0 else -1
        sb = _slab(pos[b, axis], lo, scale, part_bin) if inv_mass[b] > 0.0 else -1
        if sa < 0:
            sa = sb
        if sb < 0:
            sb = sa
        s0, s1 = min(sa, sb), max(sa, sb)
        u = LEFTOVER if s0 < 0 or s1 - s0 > 1 else slab_unit(s0)
        part_unit[m] = u
        part_start[u + 1] += 1
    for u in range(UNITS):
        part_start[u + 1] += part_start[u]
    for u in range(UNITS):   # (a cursor per unit: part_bin is free again, and HISTOGRAM >
        part_bin[u] = part_start[u]   # UNITS)
    for m in range(nman):
        u = part_unit[m]
        part_order[part_bin[u]] = m
        part_bin[u] += 1


@njit(**KERNEL)
def group_unit(u, first, body, inv_mass, man_tree, part_order, part_start, lane_man,
               lane_span, lane_points, lane_body):
    """Unit u's manifolds (part_order, part_start; those of no tree block: man_tree < 0) in
    groups of up to LANES (the docstring above), numbered from part_start[u] on (a unit has
    no more groups than manifolds, so the units' groups never overlap and each unit can be
    grouped on its own thread): lane_span (UNITS, 2) unit u's groups lane_span[u, 0] ..
    lane_span[u, 1] - 1, lane_man (groups, LANES) each group's manifolds (-1: an empty lane),
    lane_points (groups,) the most points of a group's manifolds, lane_body (groups, 2,
    LANES) each lane's bodies A, B (0, 0: an empty lane) (first: ContactRows.man_first, body:
    ContactPoints.body, inv_mass: the bodies' (nbody,)). Returns the unit's groups."""
    lanes = lane_man.shape[1]
    g0 = part_start[u]   # the unit's first group
    ng = g0
    for i in range(part_start[u], part_start[u + 1]):
        m = part_order[i]
        if man_tree[m] >= 0:
            continue
        f0 = first[m]
        a, b = body[f0, 0], body[f0, 1]
        ma, mb = inv_mass[a] > 0.0, inv_mass[b] > 0.0
        n = first[m + 1] - f0
        pick = -1
        same = False
        for g in range(max(g0, ng - OPEN_GROUPS), ng):
            if lane_man[g, lanes - 1] >= 0:
                continue   # full (its lanes fill in order)
            ok = True
            for q in range(lanes):   # the members: lanes 0 .. the first empty one
                oa, ob = lane_body[g, 0, q], lane_body[g, 1, q]
                if oa < 0:
                    break
                if (ma and (a == oa or a == ob)) or (mb and (b == oa or b == ob)):
                    ok = False
                    break
            if ok:
                if lane_points[g] == n:
                    pick, same = g, True
                    break
                if pick < 0:
                    pick = g
        if pick < 0:
            pick = ng
            ng += 1
            for q in range(lanes):
                lane_man[pick, q] = -1
                lane_body[pick, 0, q] = -1
                lane_body[pick, 1, q] = -1
            lane_points[pick] = n
        for q in range(lanes):
            if lane_man[pick, q] < 0:
                lane_man[pick, q] = m
                lane_body[pick, 0, q] = a
                lane_body[pick, 1, q] = b
                break
        if not same and n > lane_points[pick]:
            lane_points[pick] = n
    lane_span[u, 0] = g0
    lane_span[u, 1] = ng
    for g in range(g0, ng):
        for q in range(lanes):
            if lane_man[g, q] < 0:
                lane_body[g, 0, q] = 0
                lane_body[g, 1, q] = 0
    return ng - g0


PHASES = 3                     # phase 0, phase 1, LEFTOVER
PARALLEL_MIN = 48              # fewer manifolds (or points) in a loop: one thread runs it
BODY_SHARE = 8                 # a body's own work is about this many times less than a
                               # manifold's: a loop over bodies needs 8 x PARALLEL_MIN


@njit(**KERNEL)
def phase_units(phase, backward):
    """(first unit, units) of a sweep's phase-th phase; a backward sweep runs them in
    reverse."""
    p = PHASES - 1 - phase if backward else phase
    if p == 0:
        return 0, PHASE_UNITS
    if p == 1:
        return PHASE_UNITS, PHASE_UNITS
    return LEFTOVER, 1


@njit(**KERNEL)
def threaded(items, threads):
    """Whether a loop over `items` independent items runs on the step's threads (Settings.
    threads; physics/threads.py): more than one, and enough work to pay for the launch (a
    few us). Either way the results are the same bits. (Not numba.get_num_threads(): called
    in a kernel it makes every kernel above it uncacheable.)"""
    return threads > 1 and items >= PARALLEL_MIN


@njit(**KERNEL)
def phase_threaded(part_start, u0, n, threads):
    """Whether the phase of units u0 .. u0 + n - 1 runs on the step's threads."""
    return n > 1 and threaded(part_start[u0 + n] - part_start[u0], threads)
