"""Signed distance between two convex geoms, read only through their support mappings.

For convex A and B with support functions h_A, h_B (physics/support.py) the Minkowski
difference D = A - B = {a - b} has the support function

    h_D(n) = h_A(n) + h_B(-n)

and the signed depth and normal (A to B) of the pair are

    depth = min_{|n| = 1} h_D(n),   n* = argmin                                     (1)

Overlapping, the origin is inside D and depth > 0 is the distance from the origin to D's
boundary (the least translation that separates); separated, depth = -dist(0, D) = minus the
distance between the shapes. At n* the support points p_A = s_A(n*), p_B = s_B(-n*) satisfy
p_A - p_B = depth n*. `convex_contact` writes out = (n*, p_A, p_B) and returns depth.

Three routes, by the pair's kinds:

* Sphere-sphere: closed form, depth = r_A + r_B - |c_B - c_A|.
* Smooth pairs (sphere / ellipsoid with sphere / ellipsoid): Newton on (1). With
  M = R A^2 R^T (r^2 E for a sphere), s(n) = sqrt(n^T M n), d = c_B - c_A:

      F(n)  = -n.d + s_A(n) + s_B(n)                  (h_D, homogeneous of degree 1)
      g     = -d + M_A n / s_A + M_B n / s_B = p_A - p_B
      H     = sum over A, B of (M - u u^T) / s,   u = M n / s

  On the unit sphere, with a tangent basis (t1, t2) of n, the Riemannian gradient and Hessian
  are  gr = T^T g,  Hr = T^T H T - F E2  (the -F E2 is the sphere's curvature: F = n.g).
  Step n <- normalize(n + T delta), delta = -(Hr + mu E2)^-1 gr, mu > 0 only where Hr is not
  positive definite, with the step capped and halved until F decreases. The minimiser has
  n.d >= 0 (F(-n) = F(n) + 2 n.d), so the start (guess, else the centre line d) is flipped
  onto that side. From last step's normal it stops after 1-2 steps (|delta| < NEWTON_TOL).
* Everything else: GJK on the cores. Each shape is core + ball(r) (support.core_radius: the
  sphere's centre, the capsule's segment, the ellipsoid's inner parallel body, r = 0 for box,
  cylinder, hull). If the cores are apart by dist, depth = r_A + r_B - dist exactly, normal =
  (q_B - q_A) / dist, p_A = q_A + r_A n, p_B = q_B - r_B n (q = closest core points). If the
  cores overlap or touch (dist < TOUCH), GJK is rerun on the whole shapes until its simplex
  holds the origin, the simplex is blown up to a tetrahedron, and EPA expands the polytope
  inside D towards D's boundary: take the face nearest the origin (normal n, distance f),
  add w = s_D(n); stop when n.w - f < EPA_TOL. p_A, p_B are the face's barycentric mix of the
  A and B support points at the origin's projection (a sphere's or ellipsoid's point is
  its own support point along the normal). EPA is exact for polytopes; on a curved
  shape it is a polytope approximation (stops at EPA_MAX_ITER). Only this route allocates
  (its polytope buffers): it is taken only when the cores overlap.

Planes are not handled here (the caller treats them): a PLANE in either slot returns -inf.
Tolerances are absolute lengths in metres, sized for geoms of centimetres to metres.
"""
import math

import numpy as np
from numba import njit

from .jit import ALLOCATING, ENTRY, KERNEL
from .math3 import cross, dot, normalized
from .shape import ELLIPSOID, PLANE, SPHERE
from .support import core_radius, core_support, support

_JIT = KERNEL

NEWTON_MAX_ITER = 30
NEWTON_TOL = 1e-4        # rad: the last step; the error left is ~ its square
GJK_MAX_ITER = 96
GJK_TOL = 1e-11          # m: bound on the distance error at GJK's exit
TOUCH = 1e-10            # m: cores closer than this count as overlapping (normal undefined)
EPA_MAX_ITER = 96
EPA_MAX_FACE = 384
EPA_TOL = 1e-10          # m


# ---------------------------------------------------------------- small helpers

@njit(**_JIT)
def _tangents(n):
    """A right-handed orthonormal pair (t1, t2) perpendicular to the unit n."""
    ax, ay, az = abs(n[0]), abs(n[1]), abs(n[2])
    if ax <= ay and ax <= az:
        t = (0.0, -n[2], n[1])
    elif ay <= az:
        t = (n[2], 0.0, -n[0])
    else:
        t = (-n[1], n[0], 0.0)
    inv = 1.0 / math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    t1 = (t[0] * inv, t[1] * inv, t[2] * inv)
    return t1, cross(n, t1)


@njit(**_JIT)
def _write(out, n, pa, pb):
    for i in range(3):
        out[i] = n[i]
        out[3 + i] = pa[i]
        out[6 + i] = pb[i]


@njit(**_JIT)
def _start_normal(guess, d):
    """Unit start normal: the guess if it has one, else the centre line d, else +z."""
    g2 = guess[0] * guess[0] + guess[1] * guess[1] + guess[2] * guess[2]
    if g2 > 0.25:
        s = 1.0 / math.sqrt(g2)
        return (guess[0] * s, guess[1] * s, guess[2] * s)
    return normalized(d, (0.0, 0.0, 1.0))


# ---------------------------------------------------------------- sphere-sphere

@njit(**_JIT)
def _sphere_sphere(ra, pos_a, rb, pos_b, guess, out):
    d = (pos_b[0] - pos_a[0], pos_b[1] - pos_a[1], pos_b[2] - pos_a[2])
    dist = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    if dist > 1e-300:
        n = (d[0] / dist, d[1] / dist, d[2] / dist)
    else:
        n = _start_normal(guess, d)
    _write(out, n, (pos_a[0] + ra * n[0], pos_a[1] + ra * n[1], pos_a[2] + ra * n[2]),
           (pos_b[0] - rb * n[0], pos_b[1] - rb * n[1], pos_b[2] - rb * n[2]))
    return ra + rb - dist


# ---------------------------------------------------------------- smooth pairs (Newton)

@njit(**_JIT)
def _quadric(kind, size, rot):
    """M = R A^2 R^T as (m00, m01, m02, m11, m12, m22); r^2 E for a sphere."""
    if kind == SPHERE:
        r2 = size[0] * size[0]
        return (r2, 0.0, 0.0, r2, 0.0, r2)
    a0, a1, a2 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
    # row i of R A^2: (R_i0 a0, R_i1 a1, R_i2 a2); M_ij = that . row j of R
    x0, x1, x2 = rot[0, 0] * a0, rot[0, 1] * a1, rot[0, 2] * a2
    y0, y1, y2 = rot[1, 0] * a0, rot[1, 1] * a1, rot[1, 2] * a2
    z0, z1, z2 = rot[2, 0] * a0, rot[2, 1] * a1, rot[2, 2] * a2
    return (x0 * rot[0, 0] + x1 * rot[0, 1] + x2 * rot[0, 2],
            x0 * rot[1, 0] + x1 * rot[1, 1] + x2 * rot[1, 2],
            x0 * rot[2, 0] + x1 * rot[2, 1] + x2 * rot[2, 2],
            y0 * rot[1, 0] + y1 * rot[1, 1] + y2 * rot[1, 2],
            y0 * rot[2, 0] + y1 * rot[2, 1] + y2 * rot[2, 2],
            z0 * rot[2, 0] + z1 * rot[2, 1] + z2 * rot[2, 2])


@njit(**_JIT)
def _qmul(m, v):
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[1] * v[0] + m[3] * v[1] + m[4] * v[2],
            m[2] * v[0] + m[4] * v[1] + m[5] * v[2])


@njit(**_JIT)
def _smooth_eval(ma, mb, d, n):
    """F(n), u_A = M_A n / s_A (= p_A - c_A), s_A, u_B (= c_B - p_B), s_B."""
    ua = _qmul(ma, n)
    sa = math.sqrt(max(dot(n, ua), 1e-300))
    ub = _qmul(mb, n)
    sb = math.sqrt(max(dot(n, ub), 1e-300))
    ua = (ua[0] / sa, ua[1] / sa, ua[2] / sa)
    ub = (ub[0] / sb, ub[1] / sb, ub[2] / sb)
    return sa + sb - dot(n, d), ua, sa, ub, sb


@njit(**_JIT)
def _smooth_contact(kind_a, size_a, pos_a, rot_a, kind_b, size_b, pos_b, rot_b, guess, out):
    ma = _quadric(kind_a, size_a, rot_a)
    mb = _quadric(kind_b, size_b, rot_b)
    d = (pos_b[0] - pos_a[0], pos_b[1] - pos_a[1], pos_b[2] - pos_a[2])
    n = _start_normal(guess, d)
    if dot(n, d) < 0.0:
        n = (-n[0], -n[1], -n[2])
    f, ua, sa, ub, sb = _smooth_eval(ma, mb, d, n)
    scale = sa + sb
    for _ in range(NEWTON_MAX_ITER):
        g = (ua[0] + ub[0] - d[0], ua[1] + ub[1] - d[1], ua[2] + ub[2] - d[2])
        t1, t2 = _tangents(n)
        g1, g2 = dot(t1, g), dot(t2, g)
        if abs(g1) + abs(g2) <= 1e-15 * scale:
            break
        # T^T H T
        ma1, ma2 = _qmul(ma, t1), _qmul(ma, t2)
        mb1, mb2 = _qmul(mb, t1), _qmul(mb, t2)
        a1, a2 = dot(t1, ua), dot(t2, ua)
        b1, b2 = dot(t1, ub), dot(t2, ub)
        h11 = (dot(t1, ma1) - a1 * a1) / sa + (dot(t1, mb1) - b1 * b1) / sb - f
        h12 = (dot(t1, ma2) - a1 * a2) / sa + (dot(t1, mb2) - b1 * b2) / sb
        h22 = (dot(t2, ma2) - a2 * a2) / sa + (dot(t2, mb2) - b2 * b2) / sb - f
        # shift onto positive definite where needed
        half = 0.5 * (h11 - h22)
        lmin = 0.5 * (h11 + h22) - math.sqrt(half * half + h12 * h12)
        floor = 1e-2 * scale
        if lmin < floor:
            h11 += floor - lmin
            h22 += floor - lmin
        det = h11 * h22 - h12 * h12
        x1 = -(h22 * g1 - h12 * g2) / det
        x2 = -(h11 * g2 - h12 * g1) / det
        step = math.sqrt(x1 * x1 + x2 * x2)
        if step > 0.5:
            x1 *= 0.5 / step
            x2 *= 0.5 / step
            step = 0.5
        # halve until F does not increase
        for _h in range(30):
            m = (n[0] + t1[0] * x1 + t2[0] * x2, n[1] + t1[1] * x1 + t2[1] * x2,
                 n[2] + t1[2] * x1 + t2[2] * x2)
            inv = 1.0 / math.sqrt(dot(m, m))
            m = (m[0] * inv, m[1] * inv, m[2] * inv)
            f2, ua2, sa2, ub2, sb2 = _smooth_eval(ma, mb, d, m)
            if f2 <= f + 1e-15 * scale:
                break
            x1 *= 0.5
            x2 *= 0.5
            step *= 0.5
        n, f, ua, sa, ub, sb = m, f2, ua2, sa2, ub2, sb2
        if step < NEWTON_TOL:
            break
    _write(out, n, (pos_a[0] + ua[0], pos_a[1] + ua[1], pos_a[2] + ua[2]),
           (pos_b[0] - ub[0], pos_b[1] - ub[1], pos_b[2] - ub[2]))
    return f


# ---------------------------------------------------------------- GJK

@njit(**_JIT)
def _pick(i, p0, p1, p2, p3):
    if i == 0:
        return p0
    if i == 1:
        return p1
    if i == 2:
        return p2
    return p3


@njit(**_JIT)
def _closest_segment(p0, p1):
    """Closest point of segment p0 p1 to the origin: (k, i0, i1, i2, l0, l1, l2)."""
    e = (p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2])
    ee = dot(e, e)
    t = -dot(p0, e)
    if t <= 0.0 or ee <= 1e-300:
        return 1, 0, 0, 0, 1.0, 0.0, 0.0
    if t >= ee:
        return 1, 1, 0, 0, 1.0, 0.0, 0.0
    t /= ee
    return 2, 0, 1, 0, 1.0 - t, t, 0.0


@njit(**_JIT)
def _closest_triangle(a, b, c):
    """Closest point of triangle abc to the origin (Ericson, Real-Time Collision Detection
    5.1.5): (k, i0, i1, i2, l0, l1, l2), the k vertices kept and their weights."""
    ab = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    ac = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
    d1, d2 = -dot(ab, a), -dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1, 0, 0, 0, 1.0, 0.0, 0.0
    d3, d4 = -dot(ab, b), -dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return 1, 1, 0, 0, 1.0, 0.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3) if d1 - d3 > 0.0 else 0.0
        return 2, 0, 1, 0, 1.0 - t, t, 0.0
    d5, d6 = -dot(ab, c), -dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return 1, 2, 0, 0, 1.0, 0.0, 0.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6) if d2 - d6 > 0.0 else 0.0
        return 2, 0, 2, 0, 1.0 - t, t, 0.0
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        den = (d4 - d3) + (d5 - d6)
        t = (d4 - d3) / den if den > 0.0 else 0.0
        return 2, 1, 2, 0, 1.0 - t, t, 0.0
    den = va + vb + vc
    if den <= 1e-300 or not math.isfinite(den):
        # degenerate (collinear): the best of the three edges
        best = 1e300
        rk, r0, r1, rl0, rl1 = 1, 0, 0, 1.0, 0.0
        for e in range(3):
            i, j = (0, 1) if e == 0 else ((0, 2) if e == 1 else (1, 2))
            p, q = _pick(i, a, b, c, c), _pick(j, a, b, c, c)
            k, s0, _s1, _s2, l0, l1, _l2 = _closest_segment(p, q)
            ii = i if s0 == 0 else j
            x = (l0 * p[0] + l1 * q[0], l0 * p[1] + l1 * q[1], l0 * p[2] + l1 * q[2]) \
                if k == 2 else _pick(s0, p, q, q, q)
            dd = dot(x, x)
            if dd < best:
                best = dd
                if k == 2:
                    rk, r0, r1, rl0, rl1 = 2, i, j, l0, l1
                else:
                    rk, r0, r1, rl0, rl1 = 1, ii, 0, 1.0, 0.0
        return rk, r0, r1, 0, rl0, rl1, 0.0
    v, w = vb / den, vc / den
    return 3, 0, 1, 2, 1.0 - v - w, v, w


@njit(**_JIT)
def _closest_tetrahedron(p0, p1, p2, p3):
    """As _closest_triangle for a tetrahedron; k = 4 when the origin is inside."""
    best = 1e300
    rk, r0, r1, r2, l0, l1, l2 = 4, 0, 1, 2, 0.0, 0.0, 0.0
    for f in range(4):
        if f == 0:
            i, j, k, o = 0, 1, 2, 3
        elif f == 1:
            i, j, k, o = 0, 2, 3, 1
        elif f == 2:
            i, j, k, o = 0, 3, 1, 2
        else:
            i, j, k, o = 1, 3, 2, 0
        a, b, c = _pick(i, p0, p1, p2, p3), _pick(j, p0, p1, p2, p3), _pick(k, p0, p1, p2, p3)
        q = _pick(o, p0, p1, p2, p3)
        nrm = cross((b[0] - a[0], b[1] - a[1], b[2] - a[2]),
                    (c[0] - a[0], c[1] - a[1], c[2] - a[2]))
        side_o = -dot(a, nrm)
        side_q = dot((q[0] - a[0], q[1] - a[1], q[2] - a[2]), nrm)
        if side_o * side_q > 0.0:
            continue            # origin on the inner side of this face
        tk, t0, t1, t2, m0, m1, m2 = _closest_triangle(a, b, c)
        idx = (i, j, k)
        x0, x1 = _pick(t0, a, b, c, c), _pick(t1, a, b, c, c)
        x2 = _pick(t2, a, b, c, c)
        x = (m0 * x0[0] + m1 * x1[0] + m2 * x2[0], m0 * x0[1] + m1 * x1[1] + m2 * x2[1],
             m0 * x0[2] + m1 * x1[2] + m2 * x2[2])
        dd = dot(x, x)
        if dd < best:
            best = dd
            rk, r0, r1, r2, l0, l1, l2 = tk, idx[t0], idx[t1], idx[t2], m0, m1, m2
    return rk, r0, r1, r2, l0, l1, l2


@njit(**_JIT)
def _sup(full, kind, size, pos, rot, hull_vert, start, count, d):
    if full:
        return support(kind, size, pos, rot, hull_vert, start, count, d[0], d[1], d[2])
    return core_support(kind, size, pos, rot, hull_vert, start, count, d[0], d[1], d[2])


@njit(**_JIT)
def _gjk(full, kind_a, size_a, pos_a, rot_a, start_a, count_a,
         kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, v):
    """GJK distance between A and B (their cores unless full), started from the direction
    -v. Returns (overlap, v, q_A, q_B, k, a0..a3, b0..b3): v = q_A - q_B the point of D
    nearest the origin, q the closest points, and the final simplex (k points a_i - b_i)."""
    z = (0.0, 0.0, 0.0)
    a0 = a1 = a2 = a3 = z
    b0 = b1 = b2 = b3 = z
    l0, l1, l2 = 1.0, 0.0, 0.0
    k = 0
    overlap = False
    vv_old = 1e300
    for _ in range(GJK_MAX_ITER):
        a = _sup(full, kind_a, size_a, pos_a, rot_a, hull_vert, start_a, count_a,
                 (-v[0], -v[1], -v[2]))
        b = _sup(full, kind_b, size_b, pos_b, rot_b, hull_vert, start_b, count_b, v)
        w = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
        if k > 0:
            vv = dot(v, v)
            vn = math.sqrt(vv)
            wn = math.sqrt(dot(w, w))
            if vv - dot(v, w) <= vn * (GJK_TOL + 1e-14 * (vn + wn)):
                break
        if k == 0:
            a0, b0 = a, b
        elif k == 1:
            a1, b1 = a, b
        elif k == 2:
            a2, b2 = a, b
        else:
            a3, b3 = a, b
        k += 1
        w0 = (a0[0] - b0[0], a0[1] - b0[1], a0[2] - b0[2])
        w1 = (a1[0] - b1[0], a1[1] - b1[1], a1[2] - b1[2])
        w2 = (a2[0] - b2[0], a2[1] - b2[1], a2[2] - b2[2])
        w3 = (a3[0] - b3[0], a3[1] - b3[1], a3[2] - b3[2])
        if k == 1:
            kk, i0, i1, i2, m0, m1, m2 = 1, 0, 0, 0, 1.0, 0.0, 0.0
        elif k == 2:
            kk, i0, i1, i2, m0, m1, m2 = _closest_segment(w0, w1)
        elif k == 3:
            kk, i0, i1, i2, m0, m1, m2 = _closest_triangle(w0, w1, w2)
        else:
            kk, i0, i1, i2, m0, m1, m2 = _closest_tetrahedron(w0, w1, w2, w3)
        if kk == 4:
            overlap = True
            v = z
            break
        a0, a1, a2 = _pick(i0, a0, a1, a2, a3), _pick(i1, a0, a1, a2, a3), _pick(i2, a0, a1, a2, a3)
        b0, b1, b2 = _pick(i0, b0, b1, b2, b3), _pick(i1, b0, b1, b2, b3), _pick(i2, b0, b1, b2, b3)
        k = kk
        l0, l1, l2 = m0, m1, m2
        if k < 3:
            l2 = 0.0
        if k < 2:
            l1 = 0.0
        v = (l0 * (a0[0] - b0[0]) + l1 * (a1[0] - b1[0]) + l2 * (a2[0] - b2[0]),
             l0 * (a0[1] - b0[1]) + l1 * (a1[1] - b1[1]) + l2 * (a2[1] - b2[1]),
             l0 * (a0[2] - b0[2]) + l1 * (a1[2] - b1[2]) + l2 * (a2[2] - b2[2]))
        vv = dot(v, v)
        if vv < TOUCH * TOUCH:
            overlap = True
            break
        if vv >= vv_old:
            break               # no progress: round-off floor
        vv_old = vv
    qa = (l0 * a0[0] + l1 * a1[0] + l2 * a2[0], l0 * a0[1] + l1 * a1[1] + l2 * a2[1],
          l0 * a0[2] + l1 * a1[2] + l2 * a2[2])
    qb = (l0 * b0[0] + l1 * b1[0] + l2 * b2[0], l0 * b0[1] + l1 * b1[1] + l2 * b2[1],
          l0 * b0[2] + l1 * b1[2] + l2 * b2[2])
    return overlap, v, qa, qb, k, a0, a1, a2, a3, b0, b1, b2, b3


# ---------------------------------------------------------------- EPA

@njit(**_JIT)
def _vert_w(vert, i):
    return (vert[i, 0] - vert[i, 3], vert[i, 1] - vert[i, 4], vert[i, 2] - vert[i, 5])


@njit(**_JIT)
def _set_vert(vert, i, a, b):
    for q in range(3):
        vert[i, q] = a[q]
        vert[i, 3 + q] = b[q]


@njit(**_JIT)
def _make_face(vert, face, fnd, f, i, j, k):
    """Face f = (i, j, k), counter-clockwise seen from outside; fnd[f] = (normal, distance)."""
    wi, wj, wk = _vert_w(vert, i), _vert_w(vert, j), _vert_w(vert, k)
    n = cross((wj[0] - wi[0], wj[1] - wi[1], wj[2] - wi[2]),
              (wk[0] - wi[0], wk[1] - wi[1], wk[2] - wi[2]))
    ln = math.sqrt(dot(n, n))
    face[f, 0], face[f, 1], face[f, 2] = i, j, k
    if ln > 1e-300:
        n = (n[0] / ln, n[1] / ln, n[2] / ln)
        fnd[f, 3] = dot(n, wi)
    else:
        fnd[f, 3] = math.inf     # sliver: never the nearest, never seen
    fnd[f, 0], fnd[f, 1], fnd[f, 2] = n[0], n[1], n[2]


@njit(**_JIT)
def _grow_simplex(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                  kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, vert, k):
    """Blow the GJK simplex (k points in vert) up to a tetrahedron with volume, by support
    points off its line / plane. Returns the new count (< 4 when D is flat: give up)."""
    for _ in range(3):
        if k >= 4:
            break
        w0 = _vert_w(vert, 0)
        if k == 1:
            dirs = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0),
                    (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))
        elif k == 2:
            e = normalized(_sub(_vert_w(vert, 1), w0), (1.0, 0.0, 0.0))
            t1, t2 = _tangents(e)
            dirs = (t1, (-t1[0], -t1[1], -t1[2]), t2, (-t2[0], -t2[1], -t2[2]),
                    normalized(_add(t1, t2), t1), normalized(_sub(t1, t2), t1))
        else:
            w1, w2 = _vert_w(vert, 1), _vert_w(vert, 2)
            e = normalized(cross(_sub(w1, w0), _sub(w2, w0)), (0.0, 0.0, 1.0))
            ne = (-e[0], -e[1], -e[2])
            dirs = (e, ne, e, ne, e, ne)
        added = False
        for q in range(6):
            d = dirs[q]
            a = support(kind_a, size_a, pos_a, rot_a, hull_vert, start_a, count_a, d[0], d[1], d[2])
            b = support(kind_b, size_b, pos_b, rot_b, hull_vert, start_b, count_b,
                        -d[0], -d[1], -d[2])
            w = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
            if k == 1:
                off = _norm(_sub(w, w0))
            elif k == 2:
                off = _norm(cross(e, _sub(w, w0)))
            else:
                off = abs(dot(e, _sub(w, w0)))
            if off > 1e-9:
                _set_vert(vert, k, a, b)
                k += 1
                added = True
                break
        if not added:
            break
    return k


@njit(**_JIT)
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(**_JIT)
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(**_JIT)
def _norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(**ALLOCATING)
def _epa(kind_a, size_a, pos_a, rot_a, start_a, count_a,
         kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, vert, out):
    """EPA from the tetrahedron in vert[0:4]; writes out and returns depth."""
    face = np.empty((EPA_MAX_FACE, 3), np.int64)
    fnd = np.empty((EPA_MAX_FACE, 4))
    edge = np.empty((3 * EPA_MAX_FACE, 2), np.int64)
    # the tetrahedron, each face turned away from the opposite vertex
    nf = 0
    for f in range(4):
        i, j, k = (0, 1, 2) if f == 0 else (
            (0, 3, 1) if f == 1 else ((0, 2, 3) if f == 2 else (1, 3, 2)))
        o = 6 - i - j - k
        _make_face(vert, face, fnd, nf, i, j, k)
        wo, wi = _vert_w(vert, o), _vert_w(vert, i)
        if (fnd[nf, 0] * (wo[0] - wi[0]) + fnd[nf, 1] * (wo[1] - wi[1])
                + fnd[nf, 2] * (wo[2] - wi[2]) > 0.0):
            _make_face(vert, face, fnd, nf, i, k, j)
        nf += 1
    nv = 4
    best = 0
    for _ in range(EPA_MAX_ITER):
        best = 0
        for f in range(1, nf):
            if fnd[f, 3] < fnd[best, 3]:
                best = f
        n = (fnd[best, 0], fnd[best, 1], fnd[best, 2])
        a = support(kind_a, size_a, pos_a, rot_a, hull_vert, start_a, count_a, n[0], n[1], n[2])
        b = support(kind_b, size_b, pos_b, rot_b, hull_vert, start_b, count_b, -n[0], -n[1], -n[2])
        w = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
        if dot(n, w) - fnd[best, 3] <= EPA_TOL or nv >= vert.shape[0]:
            break
        _set_vert(vert, nv, a, b)
        # remove the faces w sees; their unshared edges form the horizon
        ne = 0
        f = 0
        while f < nf:
            if fnd[f, 0] * w[0] + fnd[f, 1] * w[1] + fnd[f, 2] * w[2] - fnd[f, 3] > 1e-14:
                for e in range(3):
                    i, j = face[f, e], face[f, (e + 1) % 3]
                    shared = -1
                    for q in range(ne):
                        if edge[q, 0] == j and edge[q, 1] == i:
                            shared = q
                            break
                    if shared >= 0:
                        ne -= 1
                        edge[shared, 0], edge[shared, 1] = edge[ne, 0], edge[ne, 1]
                    else:
                        edge[ne, 0], edge[ne, 1] = i, j
                        ne += 1
                nf -= 1
                for q in range(3):
                    face[f, q] = face[nf, q]
                for q in range(4):
                    fnd[f, q] = fnd[nf, q]
            else:
                f += 1
        if nf + ne > EPA_MAX_FACE:
            break               # out of room: keep what we have (faces were removed: rare)
        for q in range(ne):
            _make_face(vert, face, fnd, nf, edge[q, 0], edge[q, 1], nv)
            nf += 1
        nv += 1
        if nf == 0:
            break
    if nf == 0:
        return -math.inf
    best = 0
    for f in range(1, nf):
        if fnd[f, 3] < fnd[best, 3]:
            best = f
    n = (fnd[best, 0], fnd[best, 1], fnd[best, 2])
    depth = fnd[best, 3]
    # barycentric weights of the origin's projection depth n on the face
    i, j, k = face[best, 0], face[best, 1], face[best, 2]
    wi, wj, wk = _vert_w(vert, i), _vert_w(vert, j), _vert_w(vert, k)
    e0, e1 = _sub(wj, wi), _sub(wk, wi)
    p = (depth * n[0] - wi[0], depth * n[1] - wi[1], depth * n[2] - wi[2])
    d00, d01, d11 = dot(e0, e0), dot(e0, e1), dot(e1, e1)
    d20, d21 = dot(p, e0), dot(p, e1)
    den = d00 * d11 - d01 * d01
    if den > 1e-300:
        lj = (d11 * d20 - d01 * d21) / den
        lk = (d00 * d21 - d01 * d20) / den
    else:
        lj, lk = 0.0, 0.0
    li = 1.0 - lj - lk
    pa = (li * vert[i, 0] + lj * vert[j, 0] + lk * vert[k, 0],
          li * vert[i, 1] + lj * vert[j, 1] + lk * vert[k, 1],
          li * vert[i, 2] + lj * vert[j, 2] + lk * vert[k, 2])
    pb = (li * vert[i, 3] + lj * vert[j, 3] + lk * vert[k, 3],
          li * vert[i, 4] + lj * vert[j, 4] + lk * vert[k, 4],
          li * vert[i, 5] + lj * vert[j, 5] + lk * vert[k, 5])
    # a strictly convex shape's own support point is exact where the face mix is not
    if kind_a == SPHERE or kind_a == ELLIPSOID:
        pa = support(kind_a, size_a, pos_a, rot_a, hull_vert, start_a, count_a, n[0], n[1], n[2])
    if kind_b == SPHERE or kind_b == ELLIPSOID:
        pb = support(kind_b, size_b, pos_b, rot_b, hull_vert, start_b, count_b,
                     -n[0], -n[1], -n[2])
    _write(out, n, pa, pb)
    return depth


# ---------------------------------------------------------------- general pairs

@njit(**ALLOCATING)
def _general_contact(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                     kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, guess, out):
    d = (pos_b[0] - pos_a[0], pos_b[1] - pos_a[1], pos_b[2] - pos_a[2])
    n0 = _start_normal(guess, d)
    v0 = (-n0[0], -n0[1], -n0[2])
    ra, rb = core_radius(kind_a, size_a), core_radius(kind_b, size_b)
    res = _gjk(False, kind_a, size_a, pos_a, rot_a, start_a, count_a,
               kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, v0)
    overlap, v, qa, qb, k, a0, a1, a2, a3, b0, b1, b2, b3 = res
    if not overlap:
        dist = _norm(v)
        n = (-v[0] / dist, -v[1] / dist, -v[2] / dist)
        _write(out, n, (qa[0] + ra * n[0], qa[1] + ra * n[1], qa[2] + ra * n[2]),
               (qb[0] - rb * n[0], qb[1] - rb * n[1], qb[2] - rb * n[2]))
        return ra + rb - dist
    # the cores overlap or touch: the whole shapes' simplex around the origin, then EPA
    if ra + rb > 0.0:
        res = _gjk(True, kind_a, size_a, pos_a, rot_a, start_a, count_a,
                   kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, v0)
        overlap, v, qa, qb, k, a0, a1, a2, a3, b0, b1, b2, b3 = res
        if not overlap:         # cannot happen beyond round-off: report the GJK distance
            dist = _norm(v)
            n = normalized((-v[0], -v[1], -v[2]), n0)
            _write(out, n, qa, qb)
            return -dist
    vert = np.empty((EPA_MAX_ITER + 4, 6))
    _set_vert(vert, 0, a0, b0)
    _set_vert(vert, 1, a1, b1)
    _set_vert(vert, 2, a2, b2)
    _set_vert(vert, 3, a3, b3)
    if k == 4:
        # a flat tetrahedron (origin on its plane) is re-grown from its first three points
        w0, w1, w2, w3 = _vert_w(vert, 0), _vert_w(vert, 1), _vert_w(vert, 2), _vert_w(vert, 3)
        vol = dot(cross(_sub(w1, w0), _sub(w2, w0)), _sub(w3, w0))
        scale = max(_norm(_sub(w1, w0)), _norm(_sub(w2, w0)), _norm(_sub(w3, w0)))
        if abs(vol) <= 1e-12 * scale * scale * scale:
            k = 3
    if k < 4:
        k = _grow_simplex(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                          kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, vert, k)
    if k < 4:                   # D is flat (cannot happen for solid shapes): touching
        _write(out, n0, qa, qb)
        return 0.0
    return _epa(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, vert, out)


# ---------------------------------------------------------------- entry point

@njit(**ENTRY)   # (called from Python: jit.py)
def convex_contact(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                   kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, guess, out):
    """Signed depth of geoms A and B (> 0 overlap, < 0 gap = -distance). out (9,) receives
    the unit normal A to B, the point on A's surface, the point on B's surface (world).
    guess (3,): last step's normal (A to B) for warm starting, or zeros."""
    if kind_a == PLANE or kind_b == PLANE:
        for i in range(9):
            out[i] = 0.0
        return -math.inf
    smooth_a = kind_a == SPHERE or kind_a == ELLIPSOID
    smooth_b = kind_b == SPHERE or kind_b == ELLIPSOID
    if smooth_a and smooth_b:
        if kind_a == SPHERE and kind_b == SPHERE:
            return _sphere_sphere(size_a[0], pos_a, size_b[0], pos_b, guess, out)
        return _smooth_contact(kind_a, size_a, pos_a, rot_a, kind_b, size_b, pos_b, rot_b,
                               guess, out)
    return _general_contact(kind_a, size_a, pos_a, rot_a, start_a, count_a,
                            kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, guess, out)
