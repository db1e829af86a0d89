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

# up to this many geoms every pair is tested (ngeom^2 / 2 box tests cost less than building
# the grid: 50 capsules, 1.8 against 4.2 us, measured)
SMALL_SCENE = 64

BroadphaseWork = namedtuple("BroadphaseWork", "slot order box start big planes mark cand ext")


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

    # --- cell size from the median box size; big geoms and planes set apart
    nsolid = 0
    for g in range(ngeom):
        if geom_kind[g] != PLANE:
            w = max(geom_aabb[g, 3] - geom_aabb[g, 0], geom_aabb[g, 4] - geom_aabb[g, 1],
                    geom_aabb[g, 5] - geom_aabb[g, 2])
            ext[nsolid] = w
            nsolid += 1
    limit = 0.0
    if nsolid > 0:
        limit = BIG_FACTOR * _select(ext, nsolid, nsolid // 2)
    hmax = 0.0
    for g in range(ngeom):
        if geom_kind[g] != PLANE:
            w = max(geom_aabb[g, 3] - geom_aabb[g, 0], geom_aabb[g, 4] - geom_aabb[g, 1],
                    geom_aabb[g, 5] - geom_aabb[g, 2])
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
        w = max(geom_aabb[g, 3] - geom_aabb[g, 0], geom_aabb[g, 4] - geom_aabb[g, 1],
                geom_aabb[g, 5] - geom_aabb[g, 2])
        if w > hmax:
            slot[g] = -1
            big[nbig] = g
            nbig += 1
            continue
        nsmall += 1
    tsize = 16
    while tsize < 2 * nsmall:
        tsize *= 2
    tmask = tsize - 1

    # --- counting sort of the small geoms by slot
    for s in range(tsize + 1):
        start[s] = 0
    for g in range(ngeom):
        if slot[g] == -2 or slot[g] == -1:
            continue
        i0 = np.int64(math.floor(geom_aabb[g, 0] * inv_h))
        i1 = np.int64(math.floor(geom_aabb[g, 1] * inv_h))
        i2 = np.int64(math.floor(geom_aabb[g, 2] * inv_h))
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
                box[k, q] = geom_aabb[g, q]

    # --- every geom a collects its partners b > a, then sorts them
    count = 0
    for a in range(ngeom):
        if slot[a] == -2:                      # plane: every later dynamic geom it reaches
            for b in range(a + 1, ngeom):
                if (geom_kind[b] != PLANE and body_dynamic[geom_body[b]]
                        and _plane_reaches(geom_plane, a, geom_aabb, b)
                        and may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask,
                                         excluded)):
                    count = _emit(out_pairs, count, a, b)
            continue
        if slot[a] == -1:                      # big: every later geom, in order
            dyn_a = body_dynamic[geom_body[a]]
            for b in range(a + 1, ngeom):
                if geom_kind[b] == PLANE:
                    if not (dyn_a and _plane_reaches(geom_plane, b, geom_aabb, a)):
                        continue
                elif not _boxes_overlap(geom_aabb, a, b):
                    continue
                if may_collide(a, b, geom_body, body_dynamic, geom_group, geom_mask,
                                excluded):
                    count = _emit(out_pairs, count, a, b)
            continue

        x0 = geom_aabb[a, 0]
        y0 = geom_aabb[a, 1]
        z0 = geom_aabb[a, 2]
        x1 = geom_aabb[a, 3]
        y1 = geom_aabb[a, 4]
        z1 = geom_aabb[a, 5]
        c0 = np.int64(math.floor((x0 - h) * inv_h))
        c1 = np.int64(math.floor(x1 * inv_h))
        nx = c1 - c0 + 1
        nc = 0
        for i2 in range(np.int64(math.floor((z0 - h) * inv_h)),
                        np.int64(math.floor(z1 * inv_h)) + 1):
            for i1 in range(np.int64(math.floor((y0 - h) * inv_h)),
                            np.int64(math.floor(y1 * inv_h)) + 1):
                s0 = (_P1 * i1 + _P2 * i2 + c0) & tmask
                if s0 + nx <= tsize:
                    nparts = 1
                    k0 = start[s0]
                    k1 = start[s0 + nx]
                else:                          # the row wraps around the table's end
                    nparts = 2
                    k0 = start[s0]
                    k1 = start[tsize]
                for part in range(nparts):
                    if part == 1:
                        k0 = 0
                        k1 = start[s0 + nx - tsize]
                    for k in range(k0, k1):
                        b = order[k]
                        if b <= a:
                            continue
                        if ((box[k, 0] <= x1) & (box[k, 3] >= x0) & (box[k, 1] <= y1)
                                & (box[k, 4] >= y0) & (box[k, 2] <= z1) & (box[k, 5] >= z0)
                                & (mark[b] != a)):
                            mark[b] = a
                            cand[nc] = b
                            nc += 1
        for q in range(nbig):
            b = big[q]
            if b > a and _boxes_overlap(geom_aabb, a, b):
                cand[nc] = b
                nc += 1
        if body_dynamic[geom_body[a]]:
            for q in range(nplane):
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
