"""Contact manifolds: up to 4 contact points per geom pair, with one normal and stable ids.

Every routine writes into caller-provided arrays and returns the point count n (0..4):

    out_point (4, 3)   world contact points, the midpoint between the two surfaces
    out_depth (4,)     d > 0 overlap, d < 0 gap, measured along out_normal
    out_normal (3,)    unit, from geom A to geom B, shared by all points
    out_feature (4,)   int64 ids, equal from step to step while the same features touch:
                       prefix * 4096 + local (prefix names the feature pair, local the point)

and reports only points with d > -margin. A geom is (size, pos, rot) with rot's columns its
local axes in world (see shape.py for the kind codes and sizes); a hull also has
(start, count) rows in the shared hull_vert array (local frame).

Contact frame. Points are handled in a frame (o, t1, t2, n): a point p has coordinates
x = (p - o).t1, y = (p - o).t2 and height h = (p - o).n. For two surface points with heights
hA (on A, the top of A along n) and hB (on B) above the same (x, y):

    d = hA - hB,   contact point = o + x t1 + y t2 + (hA + hB) / 2 n.

Closed forms (plane = half-space z <= 0 of its frame, n = its z column, through its pos):
    plane-sphere     h = (c - o).n,  d = r - h
    plane-capsule    the two segment ends e = c -+ h_c a:  d_i = r - (e_i - o).n
    plane-box        the 8 corners v:  d = -(v - o).n
    plane-cylinder   rim points of the lower cap c_cap + r u, u = unit(-(n - (n.a) a)) and
                     u rotated by 90, 180, 270 degrees about a, plus the lowest point of the
                     other cap; standing (|n - (n.a) a| < 1e-3) the rim points on the local
                     +-x, +-y axes, so that the points do not spin with rounding noise
    plane-ellipsoid  lowest point x = c - R A^2 R^T n / s,  s = sqrt(n^T R A^2 R^T n),
                     A = diag(a, b, c):  d = s - (c - o).n
    plane-hull       the vertices v with -(v - o).n > -margin
    sphere-sphere    n = unit(cB - cA),  d = rA + rB - |cB - cA|
    sphere-capsule   sphere-sphere against the closest point of the capsule's segment
    capsule-capsule  segment-segment closest points (Ericson's clamped solve); when the
                     axes are parallel (sin^2 < 1e-4) and overlap in extent, 2 points at
                     the ends of the overlap, depths along the common normal
    sphere-box       q = clamp(R^T (c - p), -h, h); outside: n = unit(R q + p - c),
                     d = r - |R q + p - c|; inside: the face of least penetration
    box-box          separating axis test over the 15 axes L (3 faces of A, 3 of B, 9 edge
                     crosses): sep(L) = |(pB - pA).L| - sum_i hA_i |aA_i.L| - sum_j hB_j |aB_j.L|.
                     The largest sep wins, with a bias for stable stacks: a face of B only
                     beats a face of A by more than 1e-5 m, an edge axis only beats the best
                     face by more than 0.05 |sep_face| + 1e-3 (smallest half extents).
                     Face axis: the reference face is that box's face towards the other; the
                     incident face is the other box's face most anti-parallel to it; the
                     incident quad is clipped in the reference frame (t1, t2 = the face's
                     edge directions, n = its normal) by the reference rectangle's 4 side
                     lines (Sutherland-Hodgman), hB from interpolation along the clipped
                     edges, hA = 0.  Edge axis: one point, the closest points of the two
                     supporting edges.

General manifold (manifold_from_normal): given the normal n of a convex routine, each shape's
supporting feature along +n (A) and -n (B) within an angular tolerance (sin 0.05):
box face / edge / vertex, cylinder cap octagon / side segment / rim point, capsule segment,
hull polygon (vertices with v.n >= max - 0.05 (max - min), ordered by angle), else a point.
Projected on the plane of n, a polygon is clipped by the other polygon (the reference is the
one whose plane normal m, by Newell's formula, is closer to n; its height is the plane
h(x, y) = h0 - (m1 (x - x0) + m2 (y - y0)) / m3), a segment is clipped by a polygon
(Cyrus-Beck), two parallel segments give the ends of their overlap. If either feature is a
point, the single given contact is returned.

Reduction to 4 points (in the contact plane): the deepest point, the point farthest from it,
the point giving the triangle of largest area, the point adding the most area to the
triangle. Ties (within 1e-6) go to the first candidate in construction order, which is fixed
by the features, so the chosen points do not flicker under rounding noise.

Feature ids: a clipped point is an incident vertex j (local id j), or the crossing of the
incident polygon's edge label L (edge j of the incident polygon: L = j; a reference side c
already clipped along: L = 32 + c) with reference side c (local id 128 + 32 L + c).
Scratch buffers live on the calling kernel's stack (_stack_array), so no call allocates.
"""
import math

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from .jit import ENTRY, INLINE, KERNEL
from .math3 import cross, dot, mat_vec
from .shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, PLANE, SPHERE

_JIT = KERNEL
_JIS = INLINE

MAX_POINTS = 4
MAXP = 32           # vertices of a supporting polygon (larger hull faces keep their first 32)
_BUF = 2 * MAXP     # vertices of a clipped polygon: at most incident + reference
_SIN_TOL = 0.05     # angular tolerance of supporting features (about 2.9 degrees)
_TIE = 1e-6         # depth ties (m) and relative ties of the area choices
_FACE_BIAS = 1e-5   # box-box: a face of B must beat a face of A by this much (m)
_EDGE_REL, _EDGE_ABS = 0.05, 1e-3
_LOCAL = 4096       # feature = prefix * _LOCAL + local
_CLIP_LAB = 32      # edge label of reference side c: _CLIP_LAB + c
_CLIP_EPS = 1e-9    # a vertex this close (m) outside a reference side counts as inside


@intrinsic
def _stack_array(typingctx, d0, d1, d2):
    """A C-ordered float64 array of shape (d0, d1, d2) on the stack of the calling kernel
    (literal sizes; d2 = 0 gives (d0, d1), d1 = d2 = 0 gives (d0,)). It has no meminfo, so
    no reference is counted and no kernel allocates (jit.KERNEL)."""
    dims = []
    for d in (d0, d1, d2):
        if not isinstance(d, types.IntegerLiteral):
            return None
        dims.append(d.literal_value)
    while dims and dims[-1] == 0:
        dims.pop()
    if not dims or min(dims) <= 0:
        return None
    aryty = types.Array(types.float64, len(dims), "C")

    def codegen(context, builder, sig, args):
        size = 1
        for d in dims:
            size *= d
        data = cgutils.alloca_once(builder, context.get_value_type(types.float64), size=size)
        itemsize = context.get_abi_sizeof(context.get_data_type(types.float64))
        strides, step = [], itemsize
        for d in reversed(dims):
            strides.insert(0, step)
            step *= d
        ary = context.make_array(aryty)(context, builder)
        populate_array(ary, data=data,
                       shape=[context.get_constant(types.intp, d) for d in dims],
                       strides=[context.get_constant(types.intp, t) for t in strides],
                       itemsize=context.get_constant(types.intp, itemsize), meminfo=None)
        return ary._getvalue()

    return aryty(d0, d1, d2), codegen


# ---------------------------------------------------------------- small vector helpers

@njit(**_JIS)
def _col(m, i):
    return (m[0, i], m[1, i], m[2, i])


@njit(**_JIS)
def _tmv(m, v):
    """m^T v: a world vector in the frame whose axes are m's columns."""
    return (m[0, 0] * v[0] + m[1, 0] * v[1] + m[2, 0] * v[2],
            m[0, 1] * v[0] + m[1, 1] * v[1] + m[2, 1] * v[2],
            m[0, 2] * v[0] + m[1, 2] * v[1] + m[2, 2] * v[2])


@njit(**_JIS)
def _vec(a):
    return (a[0], a[1], a[2])


@njit(**_JIS)
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(**_JIS)
def _madd(a, b, s):
    """a + s b"""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit(**_JIS)
def _scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(**_JIS)
def _unit(a):
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n < 1e-300:
        return (0.0, 0.0, 1.0), 0.0
    return (a[0] / n, a[1] / n, a[2] / n), n


@njit(**_JIS)
def _basis(n):
    """Unit t1, t2 with t1 x t2 = n (Duff et al. 2017), continuous except at n_z = 0 sign."""
    s = 1.0 if n[2] >= 0.0 else -1.0
    a = -1.0 / (s + n[2])
    b = n[0] * n[1] * a
    t1 = (1.0 + s * n[0] * n[0] * a, s * b, -s * n[0])
    return t1, cross(n, t1)


@njit(**_JIS)
def _put(i, p, d, n, fid, out_point, out_depth, out_normal, out_feature):
    out_point[i, 0] = p[0]
    out_point[i, 1] = p[1]
    out_point[i, 2] = p[2]
    out_depth[i] = d
    out_feature[i] = fid
    out_normal[0] = n[0]
    out_normal[1] = n[1]
    out_normal[2] = n[2]


@njit(**_JIS)
def _put_normal(n, out_normal):
    out_normal[0] = n[0]
    out_normal[1] = n[1]
    out_normal[2] = n[2]


# ---------------------------------------------------------------- reduction to 4 points

@njit(**_JIT)
def _emit(cand, k, o, t1, t2, nf, flip, margin, prefix,
          out_point, out_depth, out_normal, out_feature):
    """Candidates cand[:, :k] = (x, y, h_mid, depth, local id) in the frame (o, t1, t2, nf):
    drop depth <= -margin, keep at most 4 (deepest, farthest, largest triangle, largest
    added area), write them. The output normal is nf, or -nf if flip."""
    nout = (-nf[0], -nf[1], -nf[2]) if flip else nf
    _put_normal(nout, out_normal)
    m = 0
    for i in range(k):                       # compact the ones within the margin
        if cand[3, i] > -margin:
            if m != i:
                for f in range(5):
                    cand[f, m] = cand[f, i]
            m += 1
    if m == 0:
        return 0
    sel0, sel1, sel2, sel3 = 0, 1, 2, 3
    cnt = m
    if m > 4:
        dmax = cand[3, 0]
        for i in range(1, m):
            dmax = max(dmax, cand[3, i])
        sel0 = 0
        for i in range(m):
            if cand[3, i] >= dmax - _TIE:
                sel0 = i
                break
        x0, y0 = cand[0, sel0], cand[1, sel0]
        best = 0.0
        for i in range(m):
            dx, dy = cand[0, i] - x0, cand[1, i] - y0
            best = max(best, dx * dx + dy * dy)
        if best < 1e-18:
            cnt = 1
        else:
            for i in range(m):
                dx, dy = cand[0, i] - x0, cand[1, i] - y0
                if dx * dx + dy * dy >= best * (1.0 - _TIE):
                    sel1 = i
                    break
            ex, ey = cand[0, sel1] - x0, cand[1, sel1] - y0
            best = 0.0
            for i in range(m):
                a = abs(ex * (cand[1, i] - y0) - ey * (cand[0, i] - x0))
                best = max(best, a)
            if best < 1e-18:
                cnt = 2
            else:
                sgn = 1.0
                for i in range(m):
                    a = ex * (cand[1, i] - y0) - ey * (cand[0, i] - x0)
                    if abs(a) >= best * (1.0 - _TIE):
                        sel2 = i
                        sgn = 1.0 if a > 0.0 else -1.0
                        break
                # 4th: the point farthest outside an edge of the CCW triangle
                xs = (x0, cand[0, sel1], cand[0, sel2])
                ys = (y0, cand[1, sel1], cand[1, sel2])
                best = 0.0
                for i in range(m):
                    g = 0.0
                    for e in range(3):
                        e2 = (e + 1) % 3
                        a = sgn * ((xs[e2] - xs[e]) * (cand[1, i] - ys[e])
                                   - (ys[e2] - ys[e]) * (cand[0, i] - xs[e]))
                        g = max(g, -a)
                    best = max(best, g)
                if best < 1e-18:
                    cnt = 3
                else:
                    cnt = 4
                    for i in range(m):
                        g = 0.0
                        for e in range(3):
                            e2 = (e + 1) % 3
                            a = sgn * ((xs[e2] - xs[e]) * (cand[1, i] - ys[e])
                                       - (ys[e2] - ys[e]) * (cand[0, i] - xs[e]))
                            g = max(g, -a)
                        if g >= best * (1.0 - _TIE):
                            sel3 = i
                            break
    for j in range(cnt):
        i = sel0 if j == 0 else (sel1 if j == 1 else (sel2 if j == 2 else sel3))
        x, y, h = cand[0, i], cand[1, i], cand[2, i]
        p = (o[0] + x * t1[0] + y * t2[0] + h * nf[0],
             o[1] + x * t1[1] + y * t2[1] + h * nf[1],
             o[2] + x * t1[2] + y * t2[2] + h * nf[2])
        _put(j, p, cand[3, i], nout, prefix * _LOCAL + int(cand[4, i]),
             out_point, out_depth, out_normal, out_feature)
    return cnt


# ---------------------------------------------------------------- plane vs convex

@njit(**_JIS)
def plane_sphere(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                 out_point, out_depth, out_normal, out_feature):
    n = _col(rot_a, 2)
    _put_normal(n, out_normal)
    c = _vec(pos_b)
    h = dot(_sub(c, pos_a), n)
    d = size_b[0] - h
    if d <= -margin:
        return 0
    _put(0, _madd(c, n, -(size_b[0] + 0.5 * (h - size_b[0]))), d, n, 0,
         out_point, out_depth, out_normal, out_feature)
    return 1


@njit(**_JIS)
def plane_ellipsoid(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                    out_point, out_depth, out_normal, out_feature):
    n = _col(rot_a, 2)
    _put_normal(n, out_normal)
    m = _tmv(rot_b, n)
    w = (size_b[0] * size_b[0] * m[0], size_b[1] * size_b[1] * m[1],
         size_b[2] * size_b[2] * m[2])
    s = math.sqrt(m[0] * w[0] + m[1] * w[1] + m[2] * w[2])
    d = s - dot(_sub(pos_b, pos_a), n)
    if d <= -margin:
        return 0
    low = _madd(_vec(pos_b), mat_vec(rot_b, w), -1.0 / s)       # c - R A^2 R^T n / s
    _put(0, _madd(low, n, 0.5 * d), d, n, 0, out_point, out_depth, out_normal, out_feature)
    return 1


@njit(**_JIT)
def plane_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                  out_point, out_depth, out_normal, out_feature):
    n = _col(rot_a, 2)
    _put_normal(n, out_normal)
    ax = _col(rot_b, 2)
    r, hl = size_b[0], size_b[1]
    k = 0
    for e in range(2):
        end = _madd(_vec(pos_b), ax, hl if e == 1 else -hl)
        h = dot(_sub(end, pos_a), n)
        d = r - h
        if d > -margin:
            _put(k, _madd(end, n, -(r + 0.5 * (h - r))), d, n, e,
                 out_point, out_depth, out_normal, out_feature)
            k += 1
    return k


@njit(**_JIT)
def plane_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
              out_point, out_depth, out_normal, out_feature):
    o = _vec(pos_a)
    t1, t2, n = _col(rot_a, 0), _col(rot_a, 1), _col(rot_a, 2)
    cand = _stack_array(5, 8, 0)
    rc = _sub(pos_b, o)
    cx, cy, ch = dot(rc, t1), dot(rc, t2), dot(rc, n)
    k = 0
    for i in range(8):
        x, y, h = cx, cy, ch
        for ax in range(3):
            s = size_b[ax] if (i >> ax) & 1 else -size_b[ax]
            bx = _col(rot_b, ax)
            x += s * dot(bx, t1)
            y += s * dot(bx, t2)
            h += s * dot(bx, n)
        if h < margin:
            cand[0, k] = x
            cand[1, k] = y
            cand[2, k] = 0.5 * h
            cand[3, k] = -h
            cand[4, k] = i
            k += 1
    return _emit(cand, k, o, t1, t2, n, False, margin, 0,
                 out_point, out_depth, out_normal, out_feature)


@njit(**_JIT)
def plane_cylinder(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                   out_point, out_depth, out_normal, out_feature):
    o = _vec(pos_a)
    t1, t2, n = _col(rot_a, 0), _col(rot_a, 1), _col(rot_a, 2)
    r, hl = size_b[0], size_b[1]
    ax = _col(rot_b, 2)
    c = dot(n, ax)
    low_cap = _madd(_vec(pos_b), ax, -hl if c > 0.0 else hl)
    high_cap = _madd(_vec(pos_b), ax, hl if c > 0.0 else -hl)
    u, lu = _unit(_madd(_scale(n, -1.0), ax, c))           # -(n - (n.a) a)
    cand = _stack_array(5, 5, 0)
    if lu < 1e-3:                                           # standing on a cap
        u = _col(rot_b, 0)
        v = _col(rot_b, 1)
        base = 0 if c > 0.0 else 4
    else:
        v = cross(ax, u)
        base = 8 if c > 0.0 else 13
    k = 0
    for i in range(5):
        if i < 4:
            ca = (1.0, 0.0, -1.0, 0.0)[i]
            sa = (0.0, 1.0, 0.0, -1.0)[i]
            p = _madd(_madd(low_cap, u, r * ca), v, r * sa)
        else:
            if lu < 1e-3:
                break
            p = _madd(high_cap, u, r)
        rp = _sub(p, o)
        h = dot(rp, n)
        if h < margin:
            cand[0, k] = dot(rp, t1)
            cand[1, k] = dot(rp, t2)
            cand[2, k] = 0.5 * h
            cand[3, k] = -h
            cand[4, k] = base + i
            k += 1
    return _emit(cand, k, o, t1, t2, n, False, margin, 0,
                 out_point, out_depth, out_normal, out_feature)


@njit(**_JIS)
def _hull_xyh(hull_vert, i, pos, rot, o, t1, t2, n):
    v = hull_vert[i]
    p = _sub(_madd(_madd(_madd(_vec(pos), _col(rot, 0), v[0]), _col(rot, 1), v[1]),
                   _col(rot, 2), v[2]), o)
    return dot(p, t1), dot(p, t2), dot(p, n)


@njit(**_JIT)
def plane_hull(size_a, pos_a, rot_a, pos_b, rot_b, start_b, count_b, hull_vert, margin,
               out_point, out_depth, out_normal, out_feature):
    """Streams the hull's vertices (any count): deepest, farthest, largest triangle,
    largest added area among the vertices below the margin."""
    o = _vec(pos_a)
    t1, t2, n = _col(rot_a, 0), _col(rot_a, 1), _col(rot_a, 2)
    cand = _stack_array(5, 4, 0)
    hmin = 1e300
    for i in range(start_b, start_b + count_b):
        hmin = min(hmin, _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)[2])
    if -hmin <= -margin:
        _put_normal(n, out_normal)
        return 0
    k = 0
    i0 = -1
    for i in range(start_b, start_b + count_b):
        if _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)[2] <= hmin + _TIE:
            i0 = i
            break
    sel = (i0, -1, -1, -1)
    x0, y0, _h = _hull_xyh(hull_vert, i0, pos_b, rot_b, o, t1, t2, n)
    # farthest from i0
    best, i1 = 0.0, -1
    for i in range(start_b, start_b + count_b):
        x, y, h = _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)
        if h < margin:
            q = (x - x0) ** 2 + (y - y0) ** 2
            if q > best * (1.0 + _TIE) + 1e-18:
                best, i1 = q, i
    if i1 >= 0:
        x1, y1, _h = _hull_xyh(hull_vert, i1, pos_b, rot_b, o, t1, t2, n)
        best, i2, sgn = 0.0, -1, 1.0
        for i in range(start_b, start_b + count_b):
            x, y, h = _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)
            if h < margin:
                a = (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)
                if abs(a) > best * (1.0 + _TIE) + 1e-18:
                    best, i2, sgn = abs(a), i, (1.0 if a > 0.0 else -1.0)
        if i2 >= 0:
            x2, y2, _h = _hull_xyh(hull_vert, i2, pos_b, rot_b, o, t1, t2, n)
            xs, ys = (x0, x1, x2), (y0, y1, y2)
            best, i3 = 0.0, -1
            for i in range(start_b, start_b + count_b):
                x, y, h = _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)
                if h < margin:
                    g = 0.0
                    for e in range(3):
                        e2 = (e + 1) % 3
                        g = max(g, -sgn * ((xs[e2] - xs[e]) * (y - ys[e])
                                           - (ys[e2] - ys[e]) * (x - xs[e])))
                    if g > best * (1.0 + _TIE) + 1e-18:
                        best, i3 = g, i
            sel = (i0, i1, i2, i3)
        else:
            sel = (i0, i1, -1, -1)
    for j in range(4):
        i = sel[j]
        if i < 0:
            break
        x, y, h = _hull_xyh(hull_vert, i, pos_b, rot_b, o, t1, t2, n)
        cand[0, k] = x
        cand[1, k] = y
        cand[2, k] = 0.5 * h
        cand[3, k] = -h
        cand[4, k] = i - start_b
        k += 1
    return _emit(cand, k, o, t1, t2, n, False, margin, 0,
                 out_point, out_depth, out_normal, out_feature)


# ---------------------------------------------------------------- round shapes

@njit(**_JIS)
def _balls(ca, ra, cb, rb, margin, fid, out_point, out_depth, out_normal, out_feature):
    """Two balls (centre, radius): n = unit(cb - ca) (+z if they coincide)."""
    n, dist = _unit(_sub(cb, ca))
    d = ra + rb - dist
    _put_normal(n, out_normal)
    if d <= -margin:
        return 0
    pa = _madd(ca, n, ra)
    pb = _madd(cb, n, -rb)
    _put(0, _scale((pa[0] + pb[0], pa[1] + pb[1], pa[2] + pb[2]), 0.5), d, n, fid,
         out_point, out_depth, out_normal, out_feature)
    return 1


@njit(**_JIS)
def sphere_sphere(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                  out_point, out_depth, out_normal, out_feature):
    return _balls(_vec(pos_a), size_a[0], _vec(pos_b), size_b[0], margin, 0,
                  out_point, out_depth, out_normal, out_feature)


@njit(**_JIT)
def sphere_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                   out_point, out_depth, out_normal, out_feature):
    ax = _col(rot_b, 2)
    hl = size_b[1]
    t = dot(_sub(pos_a, pos_b), ax)
    fid = 0
    if t <= -hl:
        t, fid = -hl, 1
    elif t >= hl:
        t, fid = hl, 2
    return _balls(_vec(pos_a), size_a[0], _madd(_vec(pos_b), ax, t), size_b[0], margin, fid,
                  out_point, out_depth, out_normal, out_feature)


@njit(**_JIS)
def _clamp01(x):
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@njit(**_JIT)
def segment_closest(p1, q1, p2, q2):
    """Closest points of segments p1-q1 and p2-q2 (Ericson, Real-Time Collision Detection
    5.1.9): returns (s, t) in [0, 1]^2 with c1 = p1 + s (q1 - p1), c2 = p2 + t (q2 - p2)."""
    d1 = _sub(q1, p1)
    d2 = _sub(q2, p2)
    r = _sub(p1, p2)
    a = dot(d1, d1)
    e = dot(d2, d2)
    f = dot(d2, r)
    if a <= 1e-300 and e <= 1e-300:
        return 0.0, 0.0
    if a <= 1e-300:
        return 0.0, _clamp01(f / e)
    c = dot(d1, r)
    if e <= 1e-300:
        return _clamp01(-c / a), 0.0
    b = dot(d1, d2)
    den = a * e - b * b
    s = _clamp01((b * f - c * e) / den) if den > 1e-12 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = _clamp01(-c / a)
    elif t > 1.0:
        t = 1.0
        s = _clamp01((b - c) / a)
    return s, t


@njit(**_JIT)
def capsule_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                    out_point, out_depth, out_normal, out_feature):
    ua, ub = _col(rot_a, 2), _col(rot_b, 2)
    ra, rb = size_a[0], size_b[0]
    p1 = _madd(_vec(pos_a), ua, -size_a[1])
    q1 = _madd(_vec(pos_a), ua, size_a[1])
    p2 = _madd(_vec(pos_b), ub, -size_b[1])
    q2 = _madd(_vec(pos_b), ub, size_b[1])
    d1, d2 = _sub(q1, p1), _sub(q2, p2)
    a, e = dot(d1, d1), dot(d2, d2)
    cr = cross(ua, ub)
    if dot(cr, cr) < 1e-4:                    # parallel: overlap of B's extent on A's
        s0 = dot(_sub(p2, p1), d1) / a
        s1 = dot(_sub(q2, p1), d1) / a
        lo, hi = min(s0, s1), max(s0, s1)
        id_lo, id_hi = 3, 4                   # limited by B's ends
        if lo <= 0.0:
            lo, id_lo = 0.0, 1                # limited by A's ends
        if hi >= 1.0:
            hi, id_hi = 1.0, 2
        if hi - lo > 1e-9:
            sm = 0.5 * (lo + hi)
            pa = _madd(p1, d1, sm)
            pb = _madd(p2, d2, _clamp01(dot(_sub(pa, p2), d2) / e))
            n, dist = _unit(_sub(pb, pa))
            if dist < 1e-12:                  # axes touch: any direction across A
                w = _sub(_sub(pos_b, pos_a), _scale(ua, dot(_sub(pos_b, pos_a), ua)))
                n, lw = _unit(w)
                if lw < 1e-12:
                    n = _basis(ua)[0]
            _put_normal(n, out_normal)
            k = 0
            for j in range(2):
                s = lo if j == 0 else hi
                pa = _madd(p1, d1, s)
                pb = _madd(p2, d2, _clamp01(dot(_sub(pa, p2), d2) / e))
                d = ra + rb - dot(_sub(pb, pa), n)
                if d > -margin:
                    sa, sb = _madd(pa, n, ra), _madd(pb, n, -rb)
                    mid = _scale((sa[0] + sb[0], sa[1] + sb[1], sa[2] + sb[2]), 0.5)
                    _put(k, mid, d, n, id_lo if j == 0 else id_hi,
                         out_point, out_depth, out_normal, out_feature)
                    k += 1
            return k
    s, t = segment_closest(p1, q1, p2, q2)
    pa = _madd(p1, d1, s)
    pb = _madd(p2, d2, t)
    if dot(_sub(pb, pa), _sub(pb, pa)) < 1e-24:     # axes cross: normal across both
        n, lc = _unit(cr)
        if dot(n, _sub(pos_b, pos_a)) < 0.0:
            n = _scale(n, -1.0)
        _put_normal(n, out_normal)
        if ra + rb <= -margin:
            return 0
        sa, sb = _madd(pa, n, ra), _madd(pb, n, -rb)
        _put(0, _scale((sa[0] + sb[0], sa[1] + sb[1], sa[2] + sb[2]), 0.5), ra + rb, n, 0,
             out_point, out_depth, out_normal, out_feature)
        return 1
    return _balls(pa, ra, pb, rb, margin, 0, out_point, out_depth, out_normal, out_feature)


@njit(**_JIT)
def sphere_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
               out_point, out_depth, out_normal, out_feature):
    c = _vec(pos_a)
    r = size_a[0]
    lc = _tmv(rot_b, _sub(c, pos_b))
    code = 0
    qs = (0.0, 0.0, 0.0)
    for i in range(3):
        qi, h = lc[i], size_b[i]
        w = 1 if i == 0 else (3 if i == 1 else 9)
        if qi < -h:
            qi = -h
            code += w
        elif qi > h:
            qi = h
            code += 2 * w
        qs = (qi, qs[1], qs[2]) if i == 0 else ((qs[0], qi, qs[2]) if i == 1
                                                 else (qs[0], qs[1], qi))
    inside = code == 0
    if not inside:
        q = _madd(_madd(_madd(_vec(pos_b), _col(rot_b, 0), qs[0]), _col(rot_b, 1), qs[1]),
                  _col(rot_b, 2), qs[2])
        n, dist = _unit(_sub(q, c))
        d = r - dist
        _put_normal(n, out_normal)
        if d <= -margin:
            return 0
        sa = _madd(c, n, r)
        _put(0, _scale((sa[0] + q[0], sa[1] + q[1], sa[2] + q[2]), 0.5), d, n, code,
             out_point, out_depth, out_normal, out_feature)
        return 1
    # centre inside: push out through the face of least penetration
    best, ib = 1e300, 0
    for i in range(3):
        pen = size_b[i] - abs(lc[i])
        if pen < best - 1e-12:
            best, ib = pen, i
    sg = 1.0 if lc[ib] >= 0.0 else -1.0
    nb = _scale(_col(rot_b, ib), sg)               # box outward normal
    n = _scale(nb, -1.0)                           # sphere -> box
    d = r + best
    q = _madd(c, nb, best)                         # on the box face
    sa = _madd(c, n, r)
    _put(0, _scale((sa[0] + q[0], sa[1] + q[1], sa[2] + q[2]), 0.5), d, n,
         27 + 2 * ib + (1 if sg > 0.0 else 0), out_point, out_depth, out_normal, out_feature)
    return 1


# ---------------------------------------------------------------- polygon clipping

@njit(**_JIT)
def _clip(buf, nin, rx, ry, m):
    """Sutherland-Hodgman: the polygon buf[0] (fields x, y, h, edge label, id; nin vertices;
    the label of vertex j names the edge j -> j+1) clipped by the CCW polygon (rx, ry)[:m].
    Returns (which buffer holds the result, its vertex count)."""
    src = 0
    for c in range(m):
        if nin == 0:
            break
        ax, ay = rx[c], ry[c]
        ex, ey = rx[(c + 1) % m] - ax, ry[(c + 1) % m] - ay
        dst = 1 - src
        k = 0
        tol = _CLIP_EPS * math.sqrt(ex * ex + ey * ey)    # on the side line: inside
        px, py = buf[src, 0, nin - 1], buf[src, 1, nin - 1]
        dp = ex * (py - ay) - ey * (px - ax)
        p = nin - 1
        for j in range(nin):
            qx, qy = buf[src, 0, j], buf[src, 1, j]
            dq = ex * (qy - ay) - ey * (qx - ax)
            lab = buf[src, 3, p]
            if (dp > tol and dq < -tol) or (dp < -tol and dq > tol):   # p -> q crosses c
                t = dp / (dp - dq)
                for f in range(3):
                    buf[dst, f, k] = buf[src, f, p] + t * (buf[src, f, j] - buf[src, f, p])
                buf[dst, 3, k] = lab if dq > 0.0 else _CLIP_LAB + c
                buf[dst, 4, k] = 128 + 32 * lab + c
                k += 1
            if dq >= -tol:
                for f in range(5):
                    buf[dst, f, k] = buf[src, f, j]
                k += 1
            p, dp = j, dq
        src, nin = dst, k
    return src, nin


@njit(**_JIS)
def _poly_area2(x, y, m):
    a = 0.0
    for i in range(m):
        j = (i + 1) % m
        a += x[i] * y[j] - x[j] * y[i]
    return a


@njit(**_JIT)
def _newell(px, py, ph, m):
    """Plane normal (m1, m2, m3) of the polygon in (x, y, h) coordinates, m3 >= 0."""
    n1 = n2 = n3 = 0.0
    for i in range(m):
        j = (i + 1) % m
        n1 += (py[i] - py[j]) * (ph[i] + ph[j])
        n2 += (ph[i] - ph[j]) * (px[i] + px[j])
        n3 += (px[i] - px[j]) * (py[i] + py[j])
    if n3 < 0.0:
        n1, n2, n3 = -n1, -n2, -n3
    ln = math.sqrt(n1 * n1 + n2 * n2 + n3 * n3)
    if ln < 1e-300:
        return 0.0, 0.0, 0.0
    return n1 / ln, n2 / ln, n3 / ln


# ---------------------------------------------------------------- box-box

@njit(**_JIT)
def box_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
            out_point, out_depth, out_normal, out_feature):
    d = _sub(pos_b, pos_a)
    # Every axis is read off C = A^T B and t = A^T d (Gottschalk's OBB test): face axes of A
    # s_i = |t_i| - a_i - sum_j b_j |C_ij|, of B s_j = |(C^T t)_j| - b_j - sum_i a_i |C_ij|,
    # edge axes L = a_i x b_j, in A's frame (L_i1, L_i2) = (-C_i2j, C_i1j), |L| from those:
    # s = (|t_i2 C_i1j - t_i1 C_i2j| - a_i1 |C_i2j| - a_i2 |C_i1j|
    #      - b_j1 |C_ij2| - b_j2 |C_ij1|) / |L|          (i1, i2 and j1, j2 the cyclic others)
    cm = _stack_array(2, 3, 3)     # C, |C|
    for i in range(3):
        for j in range(3):
            cij = rot_a[0, i] * rot_b[0, j] + rot_a[1, i] * rot_b[1, j] + rot_a[2, i] * rot_b[2, j]
            cm[0, i, j] = cij
            cm[1, i, j] = abs(cij)
    t = _tmv(rot_a, d)
    best_a, ia = -1e300, 0
    for i in range(3):
        s = (abs(t[i]) - size_a[i] - size_b[0] * cm[1, i, 0] - size_b[1] * cm[1, i, 1]
             - size_b[2] * cm[1, i, 2])
        if s > best_a:
            best_a, ia = s, i
    best_b, ib = -1e300, 0
    for j in range(3):
        tb = cm[0, 0, j] * t[0] + cm[0, 1, j] * t[1] + cm[0, 2, j] * t[2]
        s = (abs(tb) - size_b[j] - size_a[0] * cm[1, 0, j] - size_a[1] * cm[1, 1, j]
             - size_a[2] * cm[1, 2, j])
        if s > best_b:
            best_b, ib = s, j
    if best_a > margin or best_b > margin:
        _put_normal(_col(rot_a, 0), out_normal)
        return 0
    ref_b = best_b > best_a + _FACE_BIAS
    face_sep = best_b if ref_b else best_a
    # edge axes
    best_e, ei, ej = -1e300, -1, -1
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            ll2 = cm[0, i1, j] * cm[0, i1, j] + cm[0, i2, j] * cm[0, i2, j]
            if ll2 < 1e-12:
                continue
            s = ((abs(t[i2] * cm[0, i1, j] - t[i1] * cm[0, i2, j])
                  - size_a[i1] * cm[1, i2, j] - size_a[i2] * cm[1, i1, j]
                  - size_b[j1] * cm[1, i, j2] - size_b[j2] * cm[1, i, j1]) / math.sqrt(ll2))
            if s > margin:
                L, _ = _unit(cross(_col(rot_a, i), _col(rot_b, j)))
                _put_normal(L, out_normal)
                return 0
            if s > best_e:
                best_e, ei, ej = s, i, j
    small = min(size_a[0], size_a[1], size_a[2]) + min(size_b[0], size_b[1], size_b[2])
    if ei >= 0 and best_e > face_sep + _EDGE_REL * abs(face_sep) + _EDGE_ABS * small:
        le, _ = _unit(cross(_col(rot_a, ei), _col(rot_b, ej)))
        n = le if dot(le, d) >= 0.0 else _scale(le, -1.0)
        # supporting edge of A along +n (direction a_ei), of B along -n (direction b_ej)
        ca = _vec(pos_a)
        code_a = 0
        for k in range(3):
            if k != ei:
                ak = _col(rot_a, k)
                sg = 1.0 if dot(ak, n) >= 0.0 else -1.0
                ca = _madd(ca, ak, sg * size_a[k])
                code_a = 2 * code_a + (1 if sg > 0.0 else 0)
        cb = _vec(pos_b)
        code_b = 0
        for k in range(3):
            if k != ej:
                bk = _col(rot_b, k)
                sg = -1.0 if dot(bk, n) >= 0.0 else 1.0
                cb = _madd(cb, bk, sg * size_b[k])
                code_b = 2 * code_b + (1 if sg > 0.0 else 0)
        ua, ub = _col(rot_a, ei), _col(rot_b, ej)
        p1, q1 = _madd(ca, ua, -size_a[ei]), _madd(ca, ua, size_a[ei])
        p2, q2 = _madd(cb, ub, -size_b[ej]), _madd(cb, ub, size_b[ej])
        s, t = segment_closest(p1, q1, p2, q2)
        pa = _madd(p1, _sub(q1, p1), s)
        pb = _madd(p2, _sub(q2, p2), t)
        dep = dot(_sub(pa, pb), n)
        _put_normal(n, out_normal)
        if dep <= -margin:
            return 0
        prefix = 100 + ((ei * 4 + code_a) * 3 + ej) * 4 + code_b
        _put(0, _scale((pa[0] + pb[0], pa[1] + pb[1], pa[2] + pb[2]), 0.5), dep, n,
             prefix * _LOCAL, out_point, out_depth, out_normal, out_feature)
        return 1
    # face axis: reference box R (face axis ir), incident box I
    if ref_b:
        pos_r, rot_r, size_r, ir = pos_b, rot_b, size_b, ib
        pos_i, rot_i, size_i = pos_a, rot_a, size_a
        dri = _scale(d, -1.0)
    else:
        pos_r, rot_r, size_r, ir = pos_a, rot_a, size_a, ia
        pos_i, rot_i, size_i = pos_b, rot_b, size_b
        dri = d
    ar = _col(rot_r, ir)
    sr = 1.0 if dot(ar, dri) >= 0.0 else -1.0
    nr = _scale(ar, sr)                                # reference face normal, towards I
    j1, j2 = (ir + 1) % 3, (ir + 2) % 3
    t1, t2 = _col(rot_r, j1), _col(rot_r, j2)
    o = _madd(_vec(pos_r), nr, size_r[ir])
    # incident face: most anti-parallel to nr
    bestd, ki = -1.0, 0
    for k in range(3):
        v = abs(dot(_col(rot_i, k), nr))
        if v > bestd + 1e-12:
            bestd, ki = v, k
    si = -1.0 if dot(_col(rot_i, ki), nr) > 0.0 else 1.0
    l1, l2 = (ki + 1) % 3, (ki + 2) % 3
    fc = _madd(_vec(pos_i), _col(rot_i, ki), si * size_i[ki])
    u1 = _scale(_col(rot_i, l1), size_i[l1])
    u2 = _scale(_col(rot_i, l2), size_i[l2])
    buf = _stack_array(2, 5, _BUF)
    rect = _stack_array(2, 4, 0)
    for j in range(4):
        g1 = (-1.0, 1.0, 1.0, -1.0)[j]
        g2 = (-1.0, -1.0, 1.0, 1.0)[j]
        rect[0, j] = g1 * size_r[j1]
        rect[1, j] = g2 * size_r[j2]
        p = _sub(_madd(_madd(fc, u1, g1), u2, g2), o)
        buf[0, 0, j] = dot(p, t1)
        buf[0, 1, j] = dot(p, t2)
        buf[0, 2, j] = dot(p, nr)
        buf[0, 3, j] = j
        buf[0, 4, j] = j
    which, k = _clip(buf, 4, rect[0], rect[1], 4)
    cand = _stack_array(5, 8, 0)
    for j in range(k):
        h = buf[which, 2, j]
        cand[0, j] = buf[which, 0, j]
        cand[1, j] = buf[which, 1, j]
        cand[2, j] = 0.5 * h
        cand[3, j] = -h
        cand[4, j] = buf[which, 4, j]
    prefix = 1 + (((3 if ref_b else 0) + ir) * 2 + (1 if sr > 0.0 else 0)) * 6 \
        + 2 * ki + (1 if si > 0.0 else 0)
    return _emit(cand, k, o, t1, t2, nr, ref_b, margin, prefix,
                 out_point, out_depth, out_normal, out_feature)


# ---------------------------------------------------------------- general manifold

@njit(**_JIT)
def _support_feature(kind, size, pos, rot, start, count, hull_vert, dv, fv):
    """The supporting feature of a shape along world direction dv: its world vertices into
    fv (3, MAXP). Returns (type, count, code): type 0 point, 1 segment, 2 polygon."""
    dl = _tmv(rot, dv)
    if kind == BOX:
        free = 0
        for i in range(3):
            if abs(dl[i]) < _SIN_TOL:
                free += 1
        if free == 0 or free == 3:
            return 0, 0, 0
        c = _vec(pos)
        if free == 2:
            ia = 0
            for i in range(3):
                if abs(dl[i]) >= _SIN_TOL:
                    ia = i
            sg = 1.0 if dl[ia] > 0.0 else -1.0
            fc = _madd(c, _col(rot, ia), sg * size[ia])
            j1, j2 = (ia + 1) % 3, (ia + 2) % 3
            for j in range(4):
                g1 = (-1.0, 1.0, 1.0, -1.0)[j]
                g2 = (-1.0, -1.0, 1.0, 1.0)[j]
                p = _madd(_madd(fc, _col(rot, j1), g1 * size[j1]), _col(rot, j2), g2 * size[j2])
                fv[0, j], fv[1, j], fv[2, j] = p[0], p[1], p[2]
            return 2, 4, 1 + 2 * ia + (1 if sg > 0.0 else 0)
        ie = 0
        code = 0
        for i in range(3):
            if abs(dl[i]) < _SIN_TOL:
                ie = i
            else:
                sg = 1.0 if dl[i] > 0.0 else -1.0
                c = _madd(c, _col(rot, i), sg * size[i])
                code = 2 * code + (1 if sg > 0.0 else 0)
        for j in range(2):
            p = _madd(c, _col(rot, ie), size[ie] if j == 1 else -size[ie])
            fv[0, j], fv[1, j], fv[2, j] = p[0], p[1], p[2]
        return 1, 2, 8 + 4 * ie + code
    if kind == CYLINDER or kind == CAPSULE:
        r, hl = size[0], size[1]
        ax = _col(rot, 2)
        cz = dl[2]
        if kind == CYLINDER and abs(cz) >= math.sqrt(1.0 - _SIN_TOL * _SIN_TOL):
            sg = 1.0 if cz > 0.0 else -1.0
            cc = _madd(_vec(pos), ax, sg * hl)
            ex, ey = _col(rot, 0), _col(rot, 1)
            for j in range(8):
                ang = 0.25 * math.pi * j
                p = _madd(_madd(cc, ex, r * math.cos(ang)), ey, r * math.sin(ang))
                fv[0, j], fv[1, j], fv[2, j] = p[0], p[1], p[2]
            return 2, 8, 1 + (1 if sg > 0.0 else 0)
        if abs(cz) < _SIN_TOL:
            u, lu = _unit(_madd(_vec(dv), ax, -dot(dv, ax)))
            c = _madd(_vec(pos), u, r)
            for j in range(2):
                p = _madd(c, ax, hl if j == 1 else -hl)
                fv[0, j], fv[1, j], fv[2, j] = p[0], p[1], p[2]
            return 1, 2, 3
        return 0, 0, 0
    if kind == HULL:
        smax, smin = -1e300, 1e300
        for i in range(start, start + count):
            s = dl[0] * hull_vert[i, 0] + dl[1] * hull_vert[i, 1] + dl[2] * hull_vert[i, 2]
            smax, smin = max(smax, s), min(smin, s)
        tol = _SIN_TOL * (smax - smin) + 1e-12
        m = 0
        imin, imax = -1, -1
        for i in range(start, start + count):
            s = dl[0] * hull_vert[i, 0] + dl[1] * hull_vert[i, 1] + dl[2] * hull_vert[i, 2]
            if s >= smax - tol and m < MAXP:
                v = hull_vert[i]
                p = _madd(_madd(_madd(_vec(pos), _col(rot, 0), v[0]), _col(rot, 1), v[1]),
                          _col(rot, 2), v[2])
                fv[0, m], fv[1, m], fv[2, m] = p[0], p[1], p[2]
                if imin < 0:
                    imin = i - start
                imax = i - start
                m += 1
        code = 1 + (imin * 1021 + imax * 31 + m) % 60000
        if m == 1:
            return 0, 0, 0
        if m == 2:
            return 1, 2, code
        # order by angle about dv around the centroid (insertion sort)
        cx = cy = cz = 0.0
        for j in range(m):
            cx += fv[0, j]
            cy += fv[1, j]
            cz += fv[2, j]
        cx, cy, cz = cx / m, cy / m, cz / m
        t1, t2 = _basis(_vec(dv))
        ang = _stack_array(MAXP, 0, 0)
        for j in range(m):
            w = (fv[0, j] - cx, fv[1, j] - cy, fv[2, j] - cz)
            ang[j] = math.atan2(dot(w, t2), dot(w, t1))
        for j in range(1, m):
            a, x, y, z = ang[j], fv[0, j], fv[1, j], fv[2, j]
            i = j - 1
            while i >= 0 and ang[i] > a:
                ang[i + 1] = ang[i]
                fv[0, i + 1], fv[1, i + 1], fv[2, i + 1] = fv[0, i], fv[1, i], fv[2, i]
                i -= 1
            ang[i + 1], fv[0, i + 1], fv[1, i + 1], fv[2, i + 1] = a, x, y, z
        return 2, m, code
    return 0, 0, 0


@njit(**_JIT)
def _single(n, depth, point_a, point_b, margin, out_point, out_depth, out_normal, out_feature):
    _put_normal(n, out_normal)
    if depth <= -margin:
        return 0
    p = (0.5 * (point_a[0] + point_b[0]), 0.5 * (point_a[1] + point_b[1]),
         0.5 * (point_a[2] + point_b[2]))
    _put(0, p, depth, n, 0, out_point, out_depth, out_normal, out_feature)
    return 1


@njit(**ENTRY)   # (called from Python: jit.py)
def manifold_from_normal(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                         kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert,
                         normal, depth, point_a, point_b, margin,
                         out_point, out_depth, out_normal, out_feature):
    """Up to 4 points from a convex routine's normal (unit, A to B), depth and deepest
    surface points point_a (on A) and point_b (on B): the shapes' supporting features along
    +normal (A) and -normal (B), clipped against each other in the plane of the normal."""
    n, ln = _unit(_vec(normal))
    if ln == 0.0:
        n = (0.0, 0.0, 1.0)
    fa = _stack_array(3, MAXP, 0)
    fb = _stack_array(3, MAXP, 0)
    ta, na, code_a = _support_feature(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                                      hull_vert, n, fa)
    if ta == 0:
        return _single(n, depth, point_a, point_b, margin,
                       out_point, out_depth, out_normal, out_feature)
    tb, nb, code_b = _support_feature(kind_b, size_b, pos_b, rot_b, start_b, count_b,
                                      hull_vert, (-n[0], -n[1], -n[2]), fb)
    if tb == 0:
        return _single(n, depth, point_a, point_b, margin,
                       out_point, out_depth, out_normal, out_feature)
    o = (0.5 * (point_a[0] + point_b[0]), 0.5 * (point_a[1] + point_b[1]),
         0.5 * (point_a[2] + point_b[2]))
    t1, t2 = _basis(n)
    # features in (x, y, h): rows 0..2 of xa / xb
    xa = _stack_array(3, MAXP, 0)
    xb = _stack_array(3, MAXP, 0)
    for j in range(na):
        w = (fa[0, j] - o[0], fa[1, j] - o[1], fa[2, j] - o[2])
        xa[0, j], xa[1, j], xa[2, j] = dot(w, t1), dot(w, t2), dot(w, n)
    for j in range(nb):
        w = (fb[0, j] - o[0], fb[1, j] - o[1], fb[2, j] - o[2])
        xb[0, j], xb[1, j], xb[2, j] = dot(w, t1), dot(w, t2), dot(w, n)
    # the reference: a polygon (the more face-on one if both are)
    ref_b = False
    if ta == 2 and tb == 2:
        ma = _newell(xa[0], xa[1], xa[2], na)
        mb = _newell(xb[0], xb[1], xb[2], nb)
        ref_b = mb[2] > ma[2] + 1e-9
    elif tb == 2:
        ref_b = True
    elif ta == 1 and tb == 1:
        ref_b = False
    if ref_b:
        xr, nr, tr, xi, ni, ti = xb, nb, tb, xa, na, ta
    else:
        xr, nr, tr, xi, ni, ti = xa, na, ta, xb, nb, tb
    cand = _stack_array(5, _BUF, 0)
    k = 0
    if tr == 1:
        # two segments: the ends of their overlap if parallel in the plane, else one point
        ex, ey = xr[0, 1] - xr[0, 0], xr[1, 1] - xr[1, 0]
        fx, fy = xi[0, 1] - xi[0, 0], xi[1, 1] - xi[1, 0]
        le, lf = ex * ex + ey * ey, fx * fx + fy * fy
        cr = ex * fy - ey * fx
        if le < 1e-24 or lf < 1e-24 or cr * cr > 1e-4 * le * lf:
            return _single(n, depth, point_a, point_b, margin,
                           out_point, out_depth, out_normal, out_feature)
        s0 = ((xi[0, 0] - xr[0, 0]) * ex + (xi[1, 0] - xr[1, 0]) * ey) / le
        s1 = ((xi[0, 1] - xr[0, 0]) * ex + (xi[1, 1] - xr[1, 0]) * ey) / le
        lo, hi = min(s0, s1), max(s0, s1)
        id_lo, id_hi = 3, 4
        if lo <= 0.0:
            lo, id_lo = 0.0, 1
        if hi >= 1.0:
            hi, id_hi = 1.0, 2
        if hi - lo <= 1e-9:
            return _single(n, depth, point_a, point_b, margin,
                           out_point, out_depth, out_normal, out_feature)
        for j in range(2):
            s = lo if j == 0 else hi
            x = xr[0, 0] + s * ex
            y = xr[1, 0] + s * ey
            hr = xr[2, 0] + s * (xr[2, 1] - xr[2, 0])
            u = _clamp01(((x - xi[0, 0]) * fx + (y - xi[1, 0]) * fy) / lf)
            hi_ = xi[2, 0] + u * (xi[2, 1] - xi[2, 0])
            cand[0, k], cand[1, k], cand[2, k] = x, y, 0.5 * (hr + hi_)
            cand[3, k] = (hr - hi_) if not ref_b else (hi_ - hr)
            cand[4, k] = id_lo if j == 0 else id_hi
            k += 1
    else:
        # reference polygon: CCW in (x, y), height plane from Newell's normal
        rx = _stack_array(MAXP, 0, 0)
        ry = _stack_array(MAXP, 0, 0)
        area = _poly_area2(xr[0], xr[1], nr)
        for j in range(nr):
            jj = j if area > 0.0 else nr - 1 - j
            rx[j], ry[j] = xr[0, jj], xr[1, jj]
        m1, m2, m3 = _newell(xr[0], xr[1], xr[2], nr)
        if abs(area) < 1e-16 or m3 < 0.5:
            return _single(n, depth, point_a, point_b, margin,
                           out_point, out_depth, out_normal, out_feature)
        x0, y0, h0 = xr[0, 0], xr[1, 0], xr[2, 0]
        gx, gy = -m1 / m3, -m2 / m3
        buf = _stack_array(2, 5, _BUF)
        if ti == 2:
            for j in range(ni):
                buf[0, 0, j], buf[0, 1, j], buf[0, 2, j] = xi[0, j], xi[1, j], xi[2, j]
                buf[0, 3, j] = j
                buf[0, 4, j] = j
            which, k = _clip(buf, ni, rx, ry, nr)
        else:
            # segment against polygon (Cyrus-Beck); ids: ends 0 / 1, clipped 2 + side
            ta0, ta1, id0, id1 = 0.0, 1.0, 0, 1
            sx, sy = xi[0, 0], xi[1, 0]
            dx, dy = xi[0, 1] - sx, xi[1, 1] - sy
            for c in range(nr):
                ax, ay = rx[c], ry[c]
                ex, ey = rx[(c + 1) % nr] - ax, ry[(c + 1) % nr] - ay
                d0 = ex * (sy - ay) - ey * (sx - ax)
                d1 = ex * (sy + dy - ay) - ey * (sx + dx - ax)
                if d0 < 0.0 and d1 < 0.0:
                    ta1 = -1.0
                    break
                if d0 < 0.0:
                    t = d0 / (d0 - d1)
                    if t > ta0:
                        ta0, id0 = t, 2 + c
                elif d1 < 0.0:
                    t = d0 / (d0 - d1)
                    if t < ta1:
                        ta1, id1 = t, 2 + c
            which = 0
            if ta1 >= ta0:
                for j in range(2):
                    t = ta0 if j == 0 else ta1
                    buf[0, 0, k] = sx + t * dx
                    buf[0, 1, k] = sy + t * dy
                    buf[0, 2, k] = xi[2, 0] + t * (xi[2, 1] - xi[2, 0])
                    buf[0, 4, k] = id0 if j == 0 else id1
                    k += 1
                    if ta1 - ta0 < 1e-12:
                        break
        for j in range(k):
            x, y, hi_ = buf[which, 0, j], buf[which, 1, j], buf[which, 2, j]
            hr = h0 + gx * (x - x0) + gy * (y - y0)
            cand[0, j], cand[1, j], cand[2, j] = x, y, 0.5 * (hr + hi_)
            cand[3, j] = (hr - hi_) if not ref_b else (hi_ - hr)
            cand[4, j] = buf[which, 4, j]
    if k == 0:
        return _single(n, depth, point_a, point_b, margin,
                       out_point, out_depth, out_normal, out_feature)
    prefix = ((code_a * 65536 + code_b) * 2 + (1 if ref_b else 0)) * 4 + ta * 2 + tb - 3
    return _emit(cand, k, o, t1, t2, n, False, margin, prefix,
                 out_point, out_depth, out_normal, out_feature)


# ---------------------------------------------------------------- dispatcher

@njit(**_JIS)
def _collide_ordered(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                     kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, margin,
                     out_point, out_depth, out_normal, out_feature):
    """Pairs with A's kind first in the closed forms' naming; -1 if there is none. Inlined
    into collide: a call boundary with 8 array arguments costs ~100 ns of reference counts."""
    if kind_a == PLANE:
        if kind_b == SPHERE:
            return plane_sphere(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                out_point, out_depth, out_normal, out_feature)
        if kind_b == ELLIPSOID:
            return plane_ellipsoid(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                   out_point, out_depth, out_normal, out_feature)
        if kind_b == BOX:
            return plane_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                             out_point, out_depth, out_normal, out_feature)
        if kind_b == CAPSULE:
            return plane_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                 out_point, out_depth, out_normal, out_feature)
        if kind_b == CYLINDER:
            return plane_cylinder(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                  out_point, out_depth, out_normal, out_feature)
        if kind_b == HULL:
            return plane_hull(size_a, pos_a, rot_a, pos_b, rot_b, start_b, count_b, hull_vert,
                              margin, out_point, out_depth, out_normal, out_feature)
        return -1
    if kind_a == SPHERE:
        if kind_b == SPHERE:
            return sphere_sphere(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                 out_point, out_depth, out_normal, out_feature)
        if kind_b == CAPSULE:
            return sphere_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                                  out_point, out_depth, out_normal, out_feature)
        if kind_b == BOX:
            return sphere_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                              out_point, out_depth, out_normal, out_feature)
        return -1
    if kind_a == CAPSULE and kind_b == CAPSULE:
        return capsule_capsule(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                               out_point, out_depth, out_normal, out_feature)
    if kind_a == BOX and kind_b == BOX:
        return box_box(size_a, pos_a, rot_a, size_b, pos_b, rot_b, margin,
                       out_point, out_depth, out_normal, out_feature)
    return -1


@njit(**_JIS)
def _first(kind_a, kind_b):
    """Whether A comes first in the closed forms' naming (plane, sphere, capsule, box)."""
    if kind_a == PLANE:
        return True
    if kind_b == PLANE:
        return False
    if kind_a == SPHERE:
        return True
    if kind_b == SPHERE:
        return False
    return True


@njit(**dict(ENTRY, inline="always"))   # (inlined, and called from Python: jit.py)
def collide(kind_a, size_a, pos_a, rot_a, start_a, count_a,
            kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, margin,
            out_point, out_depth, out_normal, out_feature):
    """Closed-form manifold of any ordered pair; the normal points from A to B. Returns the
    point count, or -1 for pairs without a closed form (use the convex routine and
    manifold_from_normal). Inlined into the caller (it is only branches): a call boundary
    with 8 array arguments costs ~70 ns, 7x a plane-ellipsoid contact."""
    if _first(kind_a, kind_b):
        return _collide_ordered(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                                kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert,
                                margin, out_point, out_depth, out_normal, out_feature)
    k = _collide_ordered(kind_b, size_b, pos_b, rot_b, start_b, count_b,
                         kind_a, size_a, pos_a, rot_a, start_a, count_a, hull_vert,
                         margin, out_point, out_depth, out_normal, out_feature)
    if k >= 0:
        out_normal[0] = -out_normal[0]
        out_normal[1] = -out_normal[1]
        out_normal[2] = -out_normal[2]
    return k
