"""Support mappings and bounding boxes of the convex shape kinds, in the world frame.

The support mapping of a convex set K is  s_K(d) = argmax_{x in K} d.x  and its support
function  h_K(d) = d.s_K(d).  Everything convex collision needs (GJK, EPA, the smooth
ellipsoid path in convex.py) reads a shape only through these. A geom is (kind, size, pos,
rot) with rot's columns its local axes in world (physics/shape.py), so

    l = rot^T d                      (d in the geom's frame)
    s(d) = pos + rot s_local(l)

with s_local per kind (size = (a, b, c) or (r, h, 0), see shape.py):

    BOX        (sgn(lx) a, sgn(ly) b, sgn(lz) c)
    SPHERE     r l / |l|
    CAPSULE    (0, 0, sgn(lz) h) + r l / |l|
    CYLINDER   r (lx, ly, 0) / |(lx, ly)| + (0, 0, sgn(lz) h)
    ELLIPSOID  A^2 l / sqrt(l^T A^2 l),  A = diag(a, b, c)
               (in world: c + R A^2 R^T d / sqrt(d^T R A^2 R^T d))
    HULL       the vertex v of rows [start, start + count) of hull_vert maximising l.v

d need not be unit. d = 0 (or any direction whose components are all zero) is read as local
+z: the result is a point of the surface, never NaN (sgn(0) = +1; the hull gives its first
vertex). l is divided by its largest component first, so tiny d cannot underflow.

Cores. A shape that is a Minkowski sum K = K' + ball(r) is handed to GJK as its core K' and
radius r (Box2D / Jolt "convex radius"): sphere = point + r, capsule = segment + r. An
ellipsoid is K' + ball(r) too whenever r <= its smallest radius of curvature min(a)^2 / max(a):
a ball of that radius rolls freely inside it, so its inner parallel body K' has the support
s_K'(d) = s_K(d) - r d / |d|. We take r = CORE_FRACTION min^2 / max. Box, cylinder and hull
have radius 0 (their core is the shape). GJK on cores measures overlaps up to r_A + r_B
exactly, which keeps shallow contacts out of EPA.

AABB (out[0:3] = min, out[3:6] = max), half extent e_i on world axis i, R = rot:

    BOX        e_i = sum_j |R_ij| a_j
    SPHERE     e_i = r
    CAPSULE    e_i = |R_i2| h + r
    CYLINDER   e_i = |R_i2| h + r sqrt(R_i0^2 + R_i1^2)
    ELLIPSOID  e_i = sqrt(sum_j (R_ij a_j)^2)
    HULL       min / max of the world vertices
    FDO        min / max of its box's 8 world corners (physics/fdo.py; no support mapping:
               its contacts never reach GJK)

PLANE (a half-space) has no support mapping and no finite box: callers treat planes apart.
For a plane `support` returns pos and `aabb` writes an infinite box.
"""
import math

from numba import njit

from .jit import ENTRY, KERNEL
from .shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, FDO, HULL, PLANE, SPHERE

_JIT = KERNEL

# ellipsoid core radius as a fraction of its smallest radius of curvature (margin below 1 so
# the core stays a proper convex body)
CORE_FRACTION = 0.5


@njit(**_JIT)
def _sgn(x, s):
    return s if x >= 0.0 else -s


@njit(**_JIT)
def support_local(kind, size, hull_vert, hull_start, hull_count, lx, ly, lz):
    """The support point in the geom's own frame for the local direction l (any length)."""
    m = max(abs(lx), abs(ly), abs(lz))
    if m > 0.0:
        lx, ly, lz = lx / m, ly / m, lz / m
    else:
        lx, ly, lz = 0.0, 0.0, 1.0
    if kind == BOX:
        return (_sgn(lx, size[0]), _sgn(ly, size[1]), _sgn(lz, size[2]))
    if kind == ELLIPSOID:
        ax, ay, az = size[0] * size[0] * lx, size[1] * size[1] * ly, size[2] * size[2] * lz
        s = 1.0 / math.sqrt(ax * lx + ay * ly + az * lz)
        return (ax * s, ay * s, az * s)
    if kind == SPHERE:
        s = size[0] / math.sqrt(lx * lx + ly * ly + lz * lz)
        return (lx * s, ly * s, lz * s)
    if kind == CAPSULE:
        s = size[0] / math.sqrt(lx * lx + ly * ly + lz * lz)
        return (lx * s, ly * s, lz * s + _sgn(lz, size[1]))
    if kind == CYLINDER:
        q = math.sqrt(lx * lx + ly * ly)
        z = _sgn(lz, size[1])
        if q > 1e-300:
            s = size[0] / q
            return (lx * s, ly * s, z)
        return (0.0, 0.0, z)
    if kind == HULL:
        best = -1e300
        ib = hull_start
        for i in range(hull_start, hull_start + hull_count):
            p = hull_vert[i, 0] * lx + hull_vert[i, 1] * ly + hull_vert[i, 2] * lz
            if p > best:
                best = p
                ib = i
        return (hull_vert[ib, 0], hull_vert[ib, 1], hull_vert[ib, 2])
    return (0.0, 0.0, 0.0)     # PLANE: no support


@njit(**ENTRY)   # (called from Python: jit.py)
def support(kind, size, pos, rot, hull_vert, hull_start, hull_count, dx, dy, dz):
    """World support point (x, y, z) of the geom along the world direction d = (dx, dy, dz)."""
    lx = rot[0, 0] * dx + rot[1, 0] * dy + rot[2, 0] * dz
    ly = rot[0, 1] * dx + rot[1, 1] * dy + rot[2, 1] * dz
    lz = rot[0, 2] * dx + rot[1, 2] * dy + rot[2, 2] * dz
    p = support_local(kind, size, hull_vert, hull_start, hull_count, lx, ly, lz)
    return (pos[0] + rot[0, 0] * p[0] + rot[0, 1] * p[1] + rot[0, 2] * p[2],
            pos[1] + rot[1, 0] * p[0] + rot[1, 1] * p[1] + rot[1, 2] * p[2],
            pos[2] + rot[2, 0] * p[0] + rot[2, 1] * p[1] + rot[2, 2] * p[2])


@njit(**_JIT)
def core_radius(kind, size):
    """Radius r of the ball the shape is its core plus (see the module docstring)."""
    if kind == SPHERE or kind == CAPSULE:
        return size[0]
    if kind == ELLIPSOID:
        lo = min(size[0], size[1], size[2])
        hi = max(size[0], size[1], size[2])
        return CORE_FRACTION * lo * lo / hi
    return 0.0


@njit(**_JIT)
def core_support(kind, size, pos, rot, hull_vert, hull_start, hull_count, dx, dy, dz):
    """World support point of the shape's core (the shape shrunk by core_radius) along d."""
    if kind == SPHERE:
        return (pos[0], pos[1], pos[2])
    if kind == CAPSULE:
        lz = rot[0, 2] * dx + rot[1, 2] * dy + rot[2, 2] * dz
        h = _sgn(lz, size[1])
        return (pos[0] + rot[0, 2] * h, pos[1] + rot[1, 2] * h, pos[2] + rot[2, 2] * h)
    p = support(kind, size, pos, rot, hull_vert, hull_start, hull_count, dx, dy, dz)
    if kind == ELLIPSOID:
        r = core_radius(kind, size)
        m = max(abs(dx), abs(dy), abs(dz))
        if m > 0.0:
            dx, dy, dz = dx / m, dy / m, dz / m
        else:
            dx, dy, dz = rot[0, 2], rot[1, 2], rot[2, 2]   # d = 0 is local +z, as in support
        s = r / math.sqrt(dx * dx + dy * dy + dz * dz)
        return (p[0] - dx * s, p[1] - dy * s, p[2] - dz * s)
    return p


@njit(inline="always", **_JIT)
def extent(kind, s0, s1, s2, r0, r1, r2):
    """Half the width along one world axis of a primitive (sizes s, its rotation's row
    (r0, r1, r2) for that axis): box sum |r_k| s_k; ellipsoid |(r_k s_k)|; capsule
    |r2| h + r; cylinder |r2| h + r sqrt(r0^2 + r1^2); sphere r."""
    if kind == BOX:
        return abs(r0) * s0 + abs(r1) * s1 + abs(r2) * s2
    if kind == ELLIPSOID:
        x, y, z = r0 * s0, r1 * s1, r2 * s2
        return math.sqrt(x * x + y * y + z * z)
    if kind == CAPSULE:
        return abs(r2) * s1 + s0
    if kind == CYLINDER:
        return abs(r2) * s1 + s0 * math.sqrt(r0 * r0 + r1 * r1)
    return s0   # SPHERE


@njit(inline="always", **_JIT)
def bounding_radius(kind, s0, s1, s2):
    """The radius of the smallest sphere about a primitive's centre holding it."""
    if kind == SPHERE:
        return s0
    if kind == ELLIPSOID:
        return max(s0, max(s1, s2))
    if kind == CAPSULE:
        return s0 + s1
    if kind == CYLINDER:
        return math.sqrt(s0 * s0 + s1 * s1)
    return math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)   # BOX


@njit(**ENTRY)   # (called from Python: jit.py)
def aabb(kind, size, pos, rot, hull_vert, hull_start, hull_count, out):
    """World axis-aligned box of the geom: out[0:3] = min corner, out[3:6] = max corner."""
    if kind == PLANE:
        for i in range(3):
            out[i] = -math.inf
            out[3 + i] = math.inf
        return
    if kind == HULL:
        for i in range(3):
            out[i] = math.inf
            out[3 + i] = -math.inf
        for k in range(hull_start, hull_start + hull_count):
            vx, vy, vz = hull_vert[k, 0], hull_vert[k, 1], hull_vert[k, 2]
            for i in range(3):
                w = pos[i] + rot[i, 0] * vx + rot[i, 1] * vy + rot[i, 2] * vz
                out[i] = min(out[i], w)
                out[3 + i] = max(out[3 + i], w)
        return
    if kind == FDO:   # the 8 corners of its box (rows 0, 1: lo, hi; physics/fdo.py)
        for i in range(3):
            out[i] = math.inf
            out[3 + i] = -math.inf
        for k in range(8):
            vx = hull_vert[hull_start + (k & 1), 0]
            vy = hull_vert[hull_start + ((k >> 1) & 1), 1]
            vz = hull_vert[hull_start + ((k >> 2) & 1), 2]
            for i in range(3):
                w = pos[i] + rot[i, 0] * vx + rot[i, 1] * vy + rot[i, 2] * vz
                out[i] = min(out[i], w)
                out[3 + i] = max(out[3 + i], w)
        return
    for i in range(3):
        e = extent(kind, size[0], size[1], size[2], rot[i, 0], rot[i, 1], rot[i, 2])
        out[i] = pos[i] - e
        out[3 + i] = pos[i] + e
