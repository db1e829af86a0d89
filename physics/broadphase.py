"""Broad phase: the geom pairs whose bounding boxes overlap and that may collide at all.

Inputs are flat per-geom arrays: `geom_aabb[g] = (lo0, lo1, lo2, hi0, hi1, hi2)` (world, already
grown by the contact margin), `geom_body`, `geom_kind`, `geom_group`, `geom_mask`,
`geom_plane[g] = (nx, ny, nz, d)` (plane geoms only: the plane is n.x = d, solid on n.x <= d),
and per body `body_dynamic`. A pair (a, b), a < b, is reported iff

    boxes:   lo_k(a) <= hi_k(b)  and  lo_k(b) <= hi_k(a)      for k = 0, 1, 2 (touching counts)
    bodies:  body(a) != body(b),  dynamic(body(a)) or dynamic(body(b))
    masks:   (group(a) & mask(b)) != 0  and  (group(b) & mask(a)) != 0
    joints:  lo * nbody + hi  not in `excluded`       (lo < hi the two bodies; sorted keys,
                                                       binary search)

Planes are infinite and take no part in the grid; plane p is paired with every non-plane geom g
of a DYNAMIC body that passes the three filters above and whose box reaches the plane:

    min over the box of (n . x - d) = n . c - d - (|n0| e0 + |n1| e1 + |n2| e2) <= 0

with c the box centre and e its half extents. Two planes are never paired.

Method: a uniform grid, hashed. Let w(g) = max_k (hi_k - lo_k) and m the median of w over the
non-plane geoms. The cell size is

    h = (1 + 1e-6) max { w(g) : w(g) <= BIG_FACTOR m }

and geoms with w > h are BIG (walls, floor boxes): they skip the grid and are tested against
every geom. A small geom lives in the one cell of its low corner, i_k = floor(lo_k / h). If a
and b overlap and b is small then lo_k(a) - h <= lo_k(b) <= hi_k(a), so b's cell lies in

    i_k in [floor((lo_k(a) - h) / h), floor(hi_k(a) / h)]      (2 or 3 cells per axis)

Cells hash to T slots (T a power of two >= 2 * small geoms) by

    slot(i0, i1, i2) = (P1 i1 + P2 i2 + i0) mod T

so the cells of one row (i1, i2 fixed, i0 running) take consecutive slots. Small geoms are
counting-sorted by slot (O(n + T)) with their boxes copied in that order, and a geom's query is
one contiguous range of sorted boxes per (i1, i2) row, at most 9 ranges. Hash collisions only
add candidates (each is box-tested); a geom reached through two colliding rows is counted once
(`mark`).

Scenes of up to SMALL_SCENE geoms skip the grid: every pair is tested, in the same order and
with the same filters (cheaper than building the grid for a few dozen geoms).

Why a grid and not sweep and prune: in a settled pile an interval on any one axis overlaps
~100 neighbours; a 1,000-ellipsoid pile (10 x 10 x 10) needed ~127,000 interval tests per sweep
(~0.26 ms for the sweep loop alone, measured) and that grows like n^1.5 for wider piles. The
grid scans ~22 cells of ~2-3 geoms each (~56,000 entries for the same pile, half of them
dropped at once by b > a), linear in n, and keeps no state between calls.

Order of the output: each geom a, in index order, collects its partners b > a (grid ranges,
then big geoms, then planes) into `cand`, sorts them (insertion sort, heapsort above 16) and
only then applies the body / mask / joint filters and writes them; big geoms and planes scan
b = a+1, a+2, ... in order. So pairs come out sorted by (a, b), independent of any history;
the kernel keeps nothing between calls.

The pair cache (`cached_broadphase`, what a step calls; Box2D's fat AABBs, with the pairs kept
in one sorted list instead of a tree). Each non-plane geom g keeps a fat box F(g) that holds its
tight box T(g): T grown on every side by FAT_SHARE of its largest side, and on the side it
moves toward by FAT_STEPS h |v_k| (h the step, v its body's velocity). The cache holds, in
(a, b) order, every pair of non-plane geoms whose fat boxes overlap and that pass the body,
mask and joint filters. A step's pairs are then

    the cached pairs (a, b) with T(a), T(b) overlapping, and the planes' pairs as above,

which are exactly `broadphase`'s, in its order: T(a) in F(a) and T(b) in F(b), so two tight
boxes that overlap have fat boxes that overlap, and the pair is in the cache. Before that, each
geom whose tight box has left its fat box (its "escape") gets a new fat box, and its pairs are
found anew: the grid above, built over the fat boxes, queried for every partner of each such
geom (b < a too), the new pairs bucketed by their first geom and merged with the cached pairs
of geoms that stayed. Where more than REQUERY_SHARE of the geoms escaped (or the cache is
empty) every geom is queried. The pairs never depend on what the cache went through: a
restored state or a teleported body only makes more geoms escape. The filters' inputs change
only with a rebuild of the model, which empties the cache (compile.build). Measured on the
1,000 ellipsoids (steps 800-850 of the drop, one thread): 13-17 geoms escape a step, and the
broad phase takes ~170 us against ~440 us for the grid alone.

Scratch memory comes from the caller; `make_broadphase_work(ngeom)` builds it (reuse it every
step; rebuild it when ngeom grows):

    slot   (ngeom,)     int64    hash slot of each small geom (-1 big, -2 plane)
    order  (ngeom,)     int64    small geoms sorted by slot
    box    (ngeom, 6)   float64  their boxes in that order
    start  (T + 1,)     int64    slot starts, T = table_size(ngeom) = pow2 >= max(16, 2 ngeom)
    big    (ngeom,)     int64    big geoms, ascending
    planes (ngeom,)     int64    plane geoms, ascending
    mark   (ngeom,)     int64    last geom that collected each geom (dedupe)
    cand   (ngeom,)     int64    one geom's partners b > a, sorted before the filters
    ext    (ngeom,)     float64  box sizes w, for the median (quickselect)

and `make_pair_cache(ngeom, fcap)` the cache's (kept from step to step):

    fat     (ngeom, 6)      float64  fat boxes
    pairs   (2, fcap, 2)    int64    two pair lists: the current one, and the next
    keys    (2, fcap)       int64    the escaped geoms' new pairs: as found, then bucketed
    bucket  (ngeom + 1,)    int64    each first geom's bucket
    escaped (ngeom,)        int64    1: left its fat box this step
    state   (3,)            int64    cached pairs, 1 while the cache holds, the current list
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from .jit import ENTRY, INLINE, KERNEL

PLANE = 5  # shape.PLANE; repeated so this module imports numba and numpy only

_JIT = KERNEL
_JIT_SMALL = INLINE

# geoms larger than BIG_FACTOR times the median box size are kept out of the grid
BIG_FACTOR = 3.0
_P1 = 73856093
_P2 = 19349663

# the pair cache: a fat box is the tight one grown by FAT_SHARE of its largest side on every
# side and by FAT_STEPS steps of its body's travel ahead; more than REQUERY_SHARE of the solid
# geoms out of their fat boxes: every geom's partners anew
FAT_SHARE = 0.1
FAT_STEPS = 4.0
REQUERY_SHARE = 0.5

# up to this many geoms every pair is tested (ngeom^2 / 2 box tests cost less than building
# the grid: 50 capsules, 1.8 against 4.2 us, measured)
SMALL_SCENE = 64

BroadphaseWork = namedtuple("BroadphaseWork", "slot order box start big planes mark cand ext")
PairCache = namedtuple("PairCache", "fat pairs keys bucket escaped state")


def table_size(ngeom):
    """Hash table size for up to ngeom geoms: the smallest power of two >= max(16, 2 ngeom)."""
    t = 16
    while t < 2 * ngeom:
        t *= 2
    return t


def make_broadphase_work(ngeom):
    """The scratch arrays `broadphase` needs for up to `ngeom` geoms (see the module docstring)."""
    n = max(int(ngeom), 1)
    return BroadphaseWork(
        slot=np.zeros(n, dtype=np.int64),
        order=np.zeros(n, dtype=np.int64),
        box=np.zeros((n, 6)),
        start=np.zeros(table_size(n) + 1, dtype=np.int64),
        big=np.zeros(n, dtype=np.int64),
        planes=np.zeros(n, dtype=np.int64),
        mark=np.zeros(n, dtype=np.int64),
        cand=np.zeros(n, dtype=np.int64),
        ext=np.zeros(n))


def make_pair_cache(ngeom, fcap):
    """An empty pair cache for up to `ngeom` geoms and `fcap` cached pairs."""
    n = max(int(ngeom), 1)
    return PairCache(fat=np.zeros((n, 6)), pairs=np.zeros((2, fcap, 2), np.int64),
                     keys=np.zeros((2, fcap), np.int64), bucket=np.zeros(n + 1, np.int64),
                     escaped=np.zeros(n, np.int64), state=np.zeros(3, np.int64))


def find_pairs(geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
               geom_kind, geom_plane, work, out_pairs):
    """Python convenience over `broadphase`: unpacks a `BroadphaseWork`. Returns the number of
    pairs; if it exceeds len(out_pairs), grow out_pairs to at least that and call again."""
    return broadphase(geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
                      geom_kind, geom_plane, work.slot, work.order, work.box,
                      work.start, work.big, work.planes, work.mark, work.cand, work.ext,
                      out_pairs)


# ---------------------------------------------------------------------------------- helpers

@njit(**_JIT_SMALL)
def _is_excluded(excluded, key):
    lo = 0
    hi = excluded.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if excluded[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < excluded.shape[0] and excluded[lo] == key


@njit(**_JIT_SMALL)
def may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask, excluded):
    ba = geom_body[a]
    bb = geom_body[b]
    if ba == bb:
        return False
    if not (body_dynamic[ba] or body_dynamic[bb]):
        return False
    if (geom_group[a] & geom_mask[b]) == 0 or (geom_group[b] & geom_mask[a]) == 0:
        return False
    if excluded.shape[0] > 0:
        lo, hi = (ba, bb) if ba < bb else (bb, ba)
        if _is_excluded(excluded, lo * body_dynamic.shape[0] + hi):
            return False
    return True


# ---------------------------------------------------------------------------------- sorting

@njit(**_JIT)
def _heap_sort(x, n):
    """Sort x[:n] ascending in place (heapsort, no memory)."""
    start = n // 2 - 1
    end = n
    while end > 1:
        if start >= 0:
            root = start
            start -= 1
        else:
            end -= 1
            t = x[0]
            x[0] = x[end]
            x[end] = t
            root = 0
        while True:
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and x[child + 1] > x[child]:
                child += 1
            if x[root] < x[child]:
                t = x[root]
                x[root] = x[child]
                x[child] = t
                root = child
            else:
                break


@njit(**_JIT)
def _select(x, n, k):
    """The k-th smallest of x[:n] (0-based); reorders x[:n] (quickselect, median of three)."""
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        a = x[lo]
        b = x[mid]
        c = x[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i = lo
        j = hi
        while i <= j:
            while x[i] < pivot:
                i += 1
            while x[j] > pivot:
                j -= 1
            if i <= j:
                t = x[i]
                x[i] = x[j]
                x[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return x[k]
    return x[k]


@njit(**_JIT_SMALL)
def _plane_reaches(geom_plane, p, geom_aabb, g):
    nx = geom_plane[p, 0]
    ny = geom_plane[p, 1]
    nz = geom_plane[p, 2]
    cx = 0.5 * (geom_aabb[g, 0] + geom_aabb[g, 3])
    cy = 0.5 * (geom_aabb[g, 1] + geom_aabb[g, 4])
    cz = 0.5 * (geom_aabb[g, 2] + geom_aabb[g, 5])
    ex = 0.5 * (geom_aabb[g, 3] - geom_aabb[g, 0])
    ey = 0.5 * (geom_aabb[g, 4] - geom_aabb[g, 1])
    ez = 0.5 * (geom_aabb[g, 5] - geom_aabb[g, 2])
    dist = (nx * cx + ny * cy + nz * cz - geom_plane[p, 3]
            - (abs(nx) * ex + abs(ny) * ey + abs(nz) * ez))
    return dist <= 0.0


@njit(**_JIT_SMALL)
def _boxes_overlap(geom_aabb, a, b):
    return ((geom_aabb[a, 0] <= geom_aabb[b, 3]) & (geom_aabb[b, 0] <= geom_aabb[a, 3])
            & (geom_aabb[a, 1] <= geom_aabb[b, 4]) & (geom_aabb[b, 1] <= geom_aabb[a, 4])
            & (geom_aabb[a, 2] <= geom_aabb[b, 5]) & (geom_aabb[b, 2] <= geom_aabb[a, 5]))


@njit(**_JIT_SMALL)
def _emit(out_pairs, count, a, b):
    if count < out_pairs.shape[0]:
        out_pairs[count, 0] = a
        out_pairs[count, 1] = b
    return count + 1


@njit(**_JIT_SMALL)
def _sort_head(x, n):
    """Sort x[:n] ascending: insertion sort for the usual handful, heapsort above 16."""
    if n > 16:
        _heap_sort(x, n)
        return
    for i in range(1, n):
        v = x[i]
        j = i - 1
        while j >= 0 and x[j] > v:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = v


@njit(**_JIT)
def _all_pairs(geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind,
               geom_plane, out_pairs):
    """The same pairs as the grid, in the same (a, b) order, by testing every pair."""
    ngeom = geom_aabb.shape[0]
    count = 0
    for a in range(ngeom):
        plane_a = geom_kind[a] == PLANE
        for b in range(a + 1, ngeom):
            if plane_a:
                if geom_kind[b] == PLANE or not (body_dynamic[geom_body[b]]
                                                 and _plane_reaches(geom_plane, a, geom_aabb, b)):
                    continue
            elif geom_kind[b] == PLANE:
                if not (body_dynamic[geom_body[a]] and _plane_reaches(geom_plane, b, geom_aabb, a)):
                    continue
            elif not _boxes_overlap(geom_aabb, a, b):
                continue
            if may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask, excluded):
                count = _emit(out_pairs, count, a, b)
    return count


@njit(**ENTRY)   # (called from Python: jit.py)
def broadphase(geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
               geom_kind, geom_plane, slot, order, box, start, big, planes, mark, cand,
               ext, out_pairs):
    """Write the candidate pairs (a < b geom indices) into out_pairs sorted by (a, b) and return
    how many there are. If that exceeds out_pairs.shape[0], the rows are unspecified: grow
    out_pairs to at least the returned count and call again. The scratch arrays (slot ... ext)
    are described in the module docstring; nothing is kept between calls. The AABBs must be
    finite."""
    ngeom = geom_aabb.shape[0]
    if ngeom <= SMALL_SCENE:
        return _all_pairs(geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
                          geom_kind, geom_plane, out_pairs)
    grid = (slot, order, box, start, big, planes, mark, cand)
    cell = _build_grid(geom_aabb, geom_kind, grid, ext)
    count = 0
    for a in range(ngeom):
        if geom_kind[a] == PLANE:
            count = _plane_row(a, geom_aabb, geom_body, body_dynamic, geom_group, geom_mask,
                               excluded, geom_kind, geom_plane, out_pairs, count)
            continue
        nc = _partners(a, a, geom_aabb, geom_kind, grid, cell)
        if body_dynamic[geom_body[a]]:
            for q in range(cell[5]):
                b = planes[q]
                if b > a and _plane_reaches(geom_plane, b, geom_aabb, a):
                    cand[nc] = b
                    nc += 1
        _sort_head(cand, nc)
        for q in range(nc):                    # filters kept out of the scan loop
            b = cand[q]
            if may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask, excluded):
                count = _emit(out_pairs, count, a, b)
    return count


@njit(**_JIT_SMALL)
def _plane_row(a, geom_aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
               geom_kind, geom_plane, out_pairs, count):
    """Plane a's pairs: every later geom of a dynamic body that its half-space reaches."""
    for b in range(a + 1, geom_aabb.shape[0]):
        if (geom_kind[b] != PLANE and body_dynamic[geom_body[b]]
                and _plane_reaches(geom_plane, a, geom_aabb, b)
                and may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask,
                                excluded)):
            count = _emit(out_pairs, count, a, b)
    return count


@njit(**_JIT)
def _build_grid(boxes, geom_kind, grid, ext):
    """The grid over `boxes` (module docstring): the cell size from the median box, big geoms
    and planes set apart, the small geoms counting-sorted by slot, `mark` cleared. Returns
    (h, 1 / h, table mask, table size, big geoms, planes)."""
    slot, order, box, start, big, planes, mark, cand = grid
    ngeom = boxes.shape[0]
    nsolid = 0
    for g in range(ngeom):
        if geom_kind[g] != PLANE:
            ext[nsolid] = _width(boxes, g)
            nsolid += 1
    limit = 0.0
    if nsolid > 0:
        limit = BIG_FACTOR * _select(ext, nsolid, nsolid // 2)
    hmax = 0.0
    for g in range(ngeom):
        if geom_kind[g] != PLANE:
            w = _width(boxes, g)
            if w <= limit and w > hmax:
                hmax = w
    h = hmax * (1.0 + 1e-6)
    if not (h > 0.0):
        h = 1.0            # every small box is a point: any cell size works
    inv_h = 1.0 / h

    nbig = 0
    nplane = 0
    nsmall = 0
    for g in range(ngeom):
        mark[g] = -1
        if geom_kind[g] == PLANE:
            slot[g] = -2
            planes[nplane] = g
            nplane += 1
            continue
        if _width(boxes, g) > hmax:
            slot[g] = -1
            big[nbig] = g
            nbig += 1
            continue
        nsmall += 1
    tsize = 16
    while tsize < 2 * nsmall:
        tsize *= 2
    tmask = tsize - 1

    # counting sort of the small geoms by slot
    for s in range(tsize + 1):
        start[s] = 0
    for g in range(ngeom):
        if slot[g] == -2 or slot[g] == -1:
            continue
        i0 = np.int64(math.floor(boxes[g, 0] * inv_h))
        i1 = np.int64(math.floor(boxes[g, 1] * inv_h))
        i2 = np.int64(math.floor(boxes[g, 2] * inv_h))
        s = (_P1 * i1 + _P2 * i2 + i0) & tmask
        slot[g] = s
        start[s] += 1
    for s in range(1, tsize):
        start[s] += start[s - 1]
    start[tsize] = nsmall
    for g in range(ngeom - 1, -1, -1):
        s = slot[g]
        if s >= 0:
            k = start[s] - 1
            start[s] = k
            order[k] = g
            for q in range(6):
                box[k, q] = boxes[g, q]
    return h, inv_h, tmask, tsize, nbig, nplane


@njit(**_JIT_SMALL)
def _width(boxes, g):
    return max(boxes[g, 3] - boxes[g, 0], boxes[g, 4] - boxes[g, 1], boxes[g, 5] - boxes[g, 2])


@njit(**_JIT_SMALL)
def _partners(a, lower, boxes, geom_kind, grid, cell):
    """Into grid's `cand` (unsorted): every geom b > lower, b != a, not a plane, whose box
    overlaps a's (the boxes the grid was built on); returns how many. A big geom scans every
    geom; a small one its grid rows, then the big geoms."""
    slot, order, box, start, big, planes, mark, cand = grid
    h, inv_h, tmask, tsize, nbig, nplane = cell
    nc = 0
    if slot[a] == -1:                          # big: every geom, in order
        for b in range(lower + 1, boxes.shape[0]):
            if b != a and geom_kind[b] != PLANE and _boxes_overlap(boxes, a, b):
                cand[nc] = b
                nc += 1
        return nc
    x0 = boxes[a, 0]
    y0 = boxes[a, 1]
    z0 = boxes[a, 2]
    x1 = boxes[a, 3]
    y1 = boxes[a, 4]
    z1 = boxes[a, 5]
    c0 = np.int64(math.floor((x0 - h) * inv_h))
    c1 = np.int64(math.floor(x1 * inv_h))
    nx = c1 - c0 + 1
    for i2 in range(np.int64(math.floor((z0 - h) * inv_h)),
                    np.int64(math.floor(z1 * inv_h)) + 1):
        for i1 in range(np.int64(math.floor((y0 - h) * inv_h)),
                        np.int64(math.floor(y1 * inv_h)) + 1):
            s0 = (_P1 * i1 + _P2 * i2 + c0) & tmask
            if s0 + nx <= tsize:
                nparts = 1
                k0 = start[s0]
                k1 = start[s0 + nx]
            else:                              # the row wraps around the table's end
                nparts = 2
                k0 = start[s0]
                k1 = start[tsize]
            for part in range(nparts):
                if part == 1:
                    k0 = 0
                    k1 = start[s0 + nx - tsize]
                for k in range(k0, k1):
                    b = order[k]
                    if b <= lower or b == a:
                        continue
                    if ((box[k, 0] <= x1) & (box[k, 3] >= x0) & (box[k, 1] <= y1)
                            & (box[k, 4] >= y0) & (box[k, 2] <= z1) & (box[k, 5] >= z0)
                            & (mark[b] != a)):
                        mark[b] = a
                        cand[nc] = b
                        nc += 1
    for q in range(nbig):
        b = big[q]
        if b > lower and b != a and _boxes_overlap(boxes, a, b):
            cand[nc] = b
            nc += 1
    return nc


# ------------------------------------------------------------------------ the pair cache

@njit(**ENTRY)   # (the tests call it)
def cached_broadphase(geoms, body_vel, h, grid, ext, cache, out_pairs):
    """The pairs `broadphase` gives for the same boxes, the same rows in the same order, from
    the pair cache (module docstring, "The pair cache"). geoms: (geom_aabb, geom_body,
    body_dynamic, geom_group, geom_mask, excluded, geom_kind, geom_plane); body_vel (nbody, 3)
    and the step h stretch the fat boxes along the motion; grid: (slot, order, box, start,
    big, planes, mark, cand) and ext, as for `broadphase`; cache: (fat (ngeom, 6), pairs (2,
    fcap, 2), keys (2, fcap), bucket (ngeom + 1,), escaped (ngeom,), state (3,): cached
    pairs, 1 while the cache holds, which of the two pair lists is current). Returns (pairs, cached
    pairs): the first as `broadphase` returns it; the second > fcap if the cache overflowed,
    in which case it is left empty, the pairs are found all the same (the grid over the tight
    boxes) and the caller may grow `pairs` and `keys` to hold that many."""
    aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind, geom_plane = geoms
    fat, fat_pairs, fat_keys, bucket, escaped, fat_state = cache
    ngeom = aabb.shape[0]
    if ngeom <= SMALL_SCENE:
        return _all_pairs(aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded,
                          geom_kind, geom_plane, out_pairs), 0
    fcap = fat_pairs.shape[1]
    held = fat_state[1] == 1
    nsolid = 0
    nout = 0
    for g in range(ngeom):
        escaped[g] = 0
        if geom_kind[g] == PLANE:
            continue
        nsolid += 1
        if held and _inside(aabb, fat, g):
            continue
        escaped[g] = 1
        nout += 1
        grow = FAT_SHARE * _width(aabb, g)
        b = geom_body[g]
        for k in range(3):
            ahead = FAT_STEPS * h * body_vel[b, k]
            fat[g, k] = aabb[g, k] - grow + min(ahead, 0.0)
            fat[g, 3 + k] = aabb[g, 3 + k] + grow + max(ahead, 0.0)
    nnew = 0
    if nout > 0:
        cell = _build_grid(fat, geom_kind, grid, ext)
        if not held or nout > REQUERY_SHARE * nsolid:
            n = _requery(geoms, fat, grid, cell, fat_pairs[1 - fat_state[2]])
            held = n <= fcap
            fat_state[0] = n if held else 0
            fat_state[1] = 1 if held else 0
            fat_state[2] = 1 - fat_state[2]
            for g in range(ngeom):
                escaped[g] = 0
            nout = 0
            if not held:
                return _fallback(geoms, grid, ext, out_pairs), n
        else:
            nnew = _escaped_pairs(geoms, fat, grid, cell, escaped, fat_keys, bucket)
            if nnew > fcap:
                fat_state[0] = 0
                fat_state[1] = 0
                return _fallback(geoms, grid, ext, out_pairs), nnew
    # one walk in (a, b) order: the cached pairs of geoms that stayed in their fat boxes, the
    # new ones of the geoms that left (fat_keys[1, bucket[a]:bucket[a + 1]]: a's partners
    # b > a) and the planes; the pairs whose tight boxes overlap go out, and where
    # geoms left their fat boxes, the walk writes the cache's other list
    old = fat_pairs[fat_state[2]]
    new = fat_pairs[1 - fat_state[2]]
    rewrite = nout > 0
    planes = grid[5]
    nplane = 0
    for g in range(ngeom):
        if geom_kind[g] == PLANE:
            planes[nplane] = g
            nplane += 1
    count = 0
    n = 0
    i = 0
    nold = fat_state[0]
    for a in range(ngeom):
        if geom_kind[a] == PLANE:
            count = _plane_row(a, aabb, geom_body, body_dynamic, geom_group, geom_mask,
                               excluded, geom_kind, geom_plane, out_pairs, count)
            continue
        q = 0 if body_dynamic[geom_body[a]] else nplane
        j, j1 = 0, 0
        if rewrite:
            j, j1 = bucket[a], bucket[a + 1]
        while True:   # three ascending lists merged
            b = ngeom
            while i < nold and old[i, 0] == a:
                if escaped[a] == 0 and escaped[old[i, 1]] == 0:
                    b = old[i, 1]
                    break
                i += 1
            c = fat_keys[1, j] if j < j1 else ngeom
            while q < nplane and planes[q] <= a:
                q += 1
            p = planes[q] if q < nplane else ngeom
            if b < c and b < p:
                i += 1
            elif c < p:
                j += 1
                b = c
            elif p < ngeom:
                q += 1
                if _plane_reaches(geom_plane, p, aabb, a) and may_collide(
                        a, p, geom_body, body_dynamic, geom_group, geom_mask, excluded):
                    count = _emit(out_pairs, count, a, p)
                continue
            else:
                break
            if rewrite:
                n = _emit(new, n, a, b)
            if _boxes_overlap(aabb, a, b):   # (may_collide: when it was cached)
                count = _emit(out_pairs, count, a, b)
    if rewrite:
        if n > fcap:   # (the kept and the new pairs together: more than the list holds)
            fat_state[0] = 0
            fat_state[1] = 0
            return count, n
        fat_state[0] = n
        fat_state[2] = 1 - fat_state[2]
    return count, fat_state[0]


@njit(**_JIT)
def _fallback(geoms, grid, ext, out_pairs):
    """broadphase over the tight boxes, for a cache too small."""
    aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind, geom_plane = geoms
    return broadphase(aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind,
                      geom_plane, grid[0], grid[1], grid[2], grid[3], grid[4], grid[5],
                      grid[6], grid[7], ext, out_pairs)


@njit(**_JIT)
def _requery(geoms, fat, grid, cell, new):
    """Every pair of geoms (no planes) whose fat boxes overlap and that may collide, into
    `new` in (a, b) order; how many (more than it holds: the rows are unspecified)."""
    aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind, geom_plane = geoms
    cand = grid[7]
    n = 0
    for a in range(aabb.shape[0]):
        if geom_kind[a] == PLANE:
            continue
        nc = _partners(a, a, fat, geom_kind, grid, cell)
        _sort_head(cand, nc)
        for q in range(nc):
            if may_collide(a, cand[q], geom_body, body_dynamic, geom_group, geom_mask,
                           excluded):
                n = _emit(new, n, a, cand[q])
    return n


@njit(**_JIT)
def _escaped_pairs(geoms, fat, grid, cell, escaped, keys, bucket):
    """The pairs (a < b) of the geoms that left their fat boxes (a pair of two of them once)
    whose fat boxes overlap and that may collide, by their first geom: keys[1, bucket[a]:
    bucket[a + 1]] the b's of a, ascending (keys[0]: the pairs as found, a n + b). Returns how
    many (more than keys holds: the rows are unspecified)."""
    aabb, geom_body, body_dynamic, geom_group, geom_mask, excluded, geom_kind, geom_plane = geoms
    ngeom = aabb.shape[0]
    cand = grid[7]
    cap = keys.shape[1]
    for a in range(ngeom + 1):
        bucket[a] = 0
    n = 0
    for e in range(ngeom):
        if escaped[e] == 0:
            continue
        nc = _partners(e, -1, fat, geom_kind, grid, cell)
        for q in range(nc):
            b = cand[q]
            if (escaped[b] == 1 and b < e) or not may_collide(
                    e, b, geom_body, body_dynamic, geom_group, geom_mask, excluded):
                continue
            lo = min(e, b)
            if n < cap:
                keys[0, n] = lo * ngeom + max(e, b)
            n += 1
            bucket[lo + 1] += 1
    if n > cap:
        return n
    # a counting sort by first geom, then each bucket sorted
    for a in range(ngeom):
        bucket[a + 1] += bucket[a]
    for k in range(n):
        lo = keys[0, k] // ngeom
        keys[1, bucket[lo]] = keys[0, k] - lo * ngeom
        bucket[lo] += 1
    for a in range(ngeom, 0, -1):   # (placing moved each start to the bucket's end)
        bucket[a] = bucket[a - 1]
    bucket[0] = 0
    row = keys[1]
    for a in range(ngeom):
        k0 = bucket[a]
        if bucket[a + 1] - k0 > 1:
            _sort_head(row[k0:], bucket[a + 1] - k0)
    return n


@njit(**_JIT_SMALL)
def _inside(aabb, fat, g):
    return ((aabb[g, 0] >= fat[g, 0]) & (aabb[g, 1] >= fat[g, 1]) & (aabb[g, 2] >= fat[g, 2])
            & (aabb[g, 3] <= fat[g, 3]) & (aabb[g, 4] <= fat[g, 4]) & (aabb[g, 5] <= fat[g, 5]))
