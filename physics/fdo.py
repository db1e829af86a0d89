"""Functionally defined objects (paper 001, eqs. (1), (2)): a base quadric plus perturbations.

The object is the set where a function is not negative (positive inside):

    F'(x) = F(x) + sum_i f_i R_i(x),   R_i(x) = Q_i(x)^3 where Q_i(x) >= 0, else 0      (1), (2)

F and every Q_i are quadrics q(x) = x^T A x + b.x + c (10 coefficients; A symmetric):

    grad q = 2 A x + b,                 hess q = 2 A
    grad R = 3 Q^2 grad Q,              hess R = 6 Q grad Q grad Q^T + 3 Q^2 hess Q   (Q >= 0)

so F' is C^2 (R and its first two derivatives vanish on Q = 0). The base quadric must be
bounded and not empty (an ellipsoid: A negative definite, F > 0 at its centre
x* = -A^-1 b / 2); a perturbation with f_i > 0 (a bump) must have a bounded support
{Q_i >= 0} (an ellipsoid too), a dent (f_i < 0) may have any. The object then lies in the
base ellipsoid united with the bumps' supports, whose boxes give its bounding box. In scene
files the base is an ellipsoid by its semi-axes (F = 1 - x^2/a^2 - y^2/b^2 - z^2/c^2) and a
perturbation an ellipsoidal support (centre c, semi-axes r, rotation S):
Q = 1 - |diag(1/r) S^T (x - c)|^2, or either one as the 10 coefficients
k0 + k1 x + k2 y + k3 z + k4 x^2 + k5 y^2 + k6 z^2 + k7 xy + k8 yz + k9 xz.

Layout (the kernels' flat arrays). An FDO geom's rows in the shared model.hull_vert (geom frame
= the object's own reference frame), (start, count) in model.geom_hull, geom_size zeros:

    row 0, 1                 the box lo, hi
    row o + (0, 1, 2)        quadric k's A (k = 0 the base F, k = i + 1 perturbation i),
                             o = HEAD + QROWS k = 2 + 5 k
    row o + Q_B (3)          its b
    row o + Q_CF (4)         (c, f_k, 0): columns Q_C, Q_F   (f_0 unused)

count = 2 + 5 (1 + m). Mass properties (uniform density) are integrated numerically on a grid
over the box (each cell counted by the share 0.5 + F' / (|grad F'| h |n|_1), clamped to
[0, 1], of a plane through it: unbiased, O(h^2) on smooth surfaces, extrapolated from two
grids by Richardson's rule to O(h^3) and better); the drawn mesh is the
zero set by marching cubes (scikit-image); a ray is marched with the Lipschitz bound L of F'
on the box (steps -F'/L while outside) and refined by bisection. All three are cached per
function (the rows' bytes).

Contact (fdo_collide), the FDO as A against any other geom B, in two phases:

1. Recursive subdivision of object space (Vyatkin 2003): the overlap of the two boxes, grown
   by the margin, is split into octants down to SUBDIV_DEPTH; a cell (centre p, radius rho)
   is dropped when F'_A is provably negative on it (upper bound from the Taylor form of each
   quadric, q <= q(p) + |grad q(p)| rho + ||A||_F rho^2, pushed through the cubes), or B is:
   for plane, box, capsule, cylinder and hull their signed distance phi_B (1-Lipschitz),
   phi_B(p) - rho > margin; for sphere, ellipsoid and FDO the same bound on their quadrics
   over radius rho + margin. The surviving leaves, deepest first (phi_B, or the smaller of the
   two first-order depths G / |grad G|; against a signed distance phi_B plus the leaf's
   first-order distance outside A), are clustered (a leaf within CLUSTER cells of a seed
   joins it): at most MAX_SEEDS seeds, one per cluster, until three find known points.
2. From each seed a Newton refinement on the implicit functions:
   * local support point of A along a unit u (outward normal u), Newton on the KKT system
         grad G(x) + lam u = 0,   G(x) = 0     [[H, u], [grad G^T, 0]] (dx, dlam) = -(r1, r2)
     by the Schur complement (H^-1 by cofactors); accepted when lam > 0, the tangent
     Hessian is not positive (a local maximum of u.x, not the floor of a dent) and u.x is
     not below the start's (a capped step can land on a lower maximum: a bump's neck splits
     the surface into basins); else u.x is climbed along the surface from the start and the
     top polished by Newton (without that, 1-4% of a knobbed object's orientations had no
     point against the plane);
   * B with a signed distance: the deepest point of A in B, x = s_A(-m), m = grad phi_B(x)
     (B's outward normal at the feature nearest x), iterated to a fixed point: depth
     -phi_B(x), normal n = -m (A to B); against a plane one step gives the ellipsoid's
     closed form (manifold.plane_ellipsoid), against a box face ellipsoid_on_face's. Box and
     hull corners inside A add points: projected onto F'_A = 0 along grad F'_A, depth their
     distance, normal A's outward normal there;
   * a capsule, and a cylinder where A meets its side: a ball of its radius centred at the
     point c(t) of its axis segment where the ball is deepest in A (the ball pair below;
     its depth's derivative along the axis is -n . a: climbed from the seed's t by
     doubling steps, then the root of n . a by false position, or an end);
   * B smooth (sphere, ellipsoid, FDO): the least translation of convex.py (1) with local
     support points, depth = min_n h_A(n) + h_B(-n), Newton on the unit sphere (gradient
     p_A - p_B, Hessian by finite differences of it, - depth E2), as convex.py's smooth path;
     a sphere's and an ellipsoid's supports in closed form.
   Points within 1e-6 of each other are merged; the deepest point's normal is the manifold's
   and points whose normal is within 15 degrees of it join it (depth along their own
   normal); manifold._emit keeps at most 4.
"""
import math
import threading

import numpy as np
from numba import njit

from . import jit
from .manifold import _emit, _stack_array
from .shape import _ZERO, BOX, CAPSULE, CYLINDER, ELLIPSOID, FDO, HULL, PLANE, SPHERE, quat_matrix

_JIT = jit.KERNEL

HEAD = 2            # rows before the quadrics (box lo, hi)
QROWS = 5           # rows per quadric: A (its first 3), then ...
Q_B = 3             # ... b
Q_CF = 4            # ... (c, f, 0): its columns
Q_C, Q_F = 0, 1
SUBDIV_DEPTH = 4    # octree levels below the overlap box
STACK = 8 * SUBDIV_DEPTH + 2   # cells pending in the depth-first walk
MAX_LEAVES = 256    # leaves kept (the first in depth-first order)
MAX_SEEDS = 6       # Newton refinements per pair
CLUSTER = 0.9       # leaves within this many leaf cells of a seed join its cluster
MAX_CAND = 16       # candidate points before the reduction to 4
SUPPORT_ITER = 40
PAIR_ITER = 30
JOIN_COS = math.cos(math.radians(15.0))
GRID = 120          # mass-property cells along the box's longest side
MESH_GRID = 40      # marching-cube cells along it


# ================================================================== the function (Python side)

def quadric_coefficients(k):
    """(A (3, 3), b (3,), c) of q = k0 + k1 x + k2 y + k3 z + k4 x^2 + k5 y^2 + k6 z^2 + k7 xy
    + k8 yz + k9 xz."""
    k = [float(v) for v in k]
    A = np.array([[k[4], 0.5 * k[7], 0.5 * k[9]], [0.5 * k[7], k[5], 0.5 * k[8]],
                  [0.5 * k[9], 0.5 * k[8], k[6]]])
    return A, np.array(k[1:4]), k[0]


def ellipsoid_quadric(centre, semi_axes, quat=(1.0, 0.0, 0.0, 0.0)):
    """(A, b, c) of q = 1 - |diag(1/r) S^T (x - centre)|^2 (S the rotation of quat)."""
    c = np.asarray(centre, dtype=float)
    r = np.asarray(semi_axes, dtype=float)
    S = quat_matrix(np.asarray(quat, dtype=float) / np.linalg.norm(quat))
    M = S @ np.diag(1.0 / (r * r)) @ S.T
    return -M, 2.0 * M @ c, 1.0 - c @ M @ c


def _bounded_box(A, b, c):
    """(lo, hi) of the ellipsoid {x^T A x + b.x + c >= 0} (A negative definite), or None if it
    is empty."""
    N = -A
    centre = 0.5 * np.linalg.solve(N, b)
    top = c + 0.5 * b @ centre        # q at its centre
    if not top > 0.0:
        return None
    half = np.sqrt(top * np.diag(np.linalg.inv(N)))
    return centre - half, centre + half


class Fdo:
    """A functionally defined object (module docstring): `semi_axes` (the base ellipsoid) or
    `quadric` (its 10 coefficients), and `perturbations`, each a mapping with `weight` (f_i:
    > 0 a bump, < 0 a dent) and either `centre`, `semi_axes` (and optionally `quat`) of an
    ellipsoidal support or `quadric` (10 coefficients). Written in its own reference frame;
    the body frame is its centre of mass and principal axes (frame_pos, frame_rot), as a
    Hull's. Equality is identity; the numerical parts are cached per function."""
    kind = FDO

    def __init__(self, semi_axes=None, perturbations=(), quadric=None):
        if (semi_axes is None) == (quadric is None):
            raise ValueError("fdo: give the base as semi_axes or as quadric, not "
                             + ("both" if quadric is not None else "neither"))
        if semi_axes is not None:
            r = np.asarray(semi_axes, dtype=float).reshape(-1)
            if r.shape != (3,) or not np.all(np.isfinite(r)) or not np.all(r > 0.0):
                raise ValueError(f"fdo semi_axes must be 3 positive finite numbers "
                                 f"(got {list(semi_axes)})")
            base = ellipsoid_quadric(_ZERO, r)
        else:
            base = self._coefficients(quadric, "fdo quadric")
        A, b, c = base
        if not np.all(np.linalg.eigvalsh(A) < 0.0):
            raise ValueError("fdo quadric: not bounded (its quadratic part must be negative "
                             "definite: an ellipsoid, positive inside)")
        box = _bounded_box(A, b, c)
        if box is None:
            raise ValueError("fdo quadric: empty (it is negative everywhere)")
        lo, hi = box
        quads = [(A, b, c, 0.0)]
        self.perturbations = tuple(dict(p) for p in perturbations)
        for i, p in enumerate(self.perturbations):
            where = f"fdo perturbation {i}"
            extra = set(p) - {"weight", "centre", "semi_axes", "quat", "quadric"}
            if extra:
                raise ValueError(f"{where}: unknown field {sorted(extra)[0]!r}")
            f = float(p.get("weight", math.nan))
            if not math.isfinite(f):
                raise ValueError(f"{where}: weight must be a finite number "
                                 f"(got {p.get('weight')})")
            if "quadric" in p:
                if "centre" in p or "semi_axes" in p or "quat" in p:
                    raise ValueError(f"{where}: give quadric or centre and semi_axes, not both")
                Aq, bq, cq = self._coefficients(p["quadric"], f"{where} quadric")
            else:
                cen = np.asarray(p.get("centre", (0.0, 0.0, 0.0)), dtype=float).reshape(-1)
                r = np.asarray(p.get("semi_axes", (math.nan,) * 3), dtype=float).reshape(-1)
                q = np.asarray(p.get("quat", (1.0, 0.0, 0.0, 0.0)), dtype=float).reshape(-1)
                if cen.shape != (3,) or not np.all(np.isfinite(cen)):
                    raise ValueError(f"{where}: centre must be 3 finite numbers")
                if r.shape != (3,) or not np.all(np.isfinite(r)) or not np.all(r > 0.0):
                    raise ValueError(f"{where}: semi_axes must be 3 positive finite numbers")
                if q.shape != (4,) or not np.all(np.isfinite(q)) or np.linalg.norm(q) < 1e-9:
                    raise ValueError(f"{where}: quat must be 4 finite numbers, not zero")
                Aq, bq, cq = ellipsoid_quadric(cen, r, q)
            if f > 0.0:
                if not np.all(np.linalg.eigvalsh(Aq) < 0.0):
                    raise ValueError(f"{where}: a bump (weight > 0) needs a bounded support "
                                     "{Q >= 0} (an ellipsoid); this one makes the object "
                                     "unbounded")
                box = _bounded_box(Aq, bq, cq)
                if box is not None:
                    lo, hi = np.minimum(lo, box[0]), np.maximum(hi, box[1])
            quads.append((Aq, bq, cq, f))
        rows = np.zeros((HEAD + QROWS * len(quads), 3))
        rows[0], rows[1] = lo, hi
        for k, (Aq, bq, cq, f) in enumerate(quads):
            o = HEAD + QROWS * k
            rows[o:o + 3] = Aq
            rows[o + Q_B] = bq
            rows[o + Q_CF] = (cq, f, 0.0)
        rows.flags.writeable = False
        self.rows = rows
        props = _mass_properties(rows)
        if props is None:
            raise ValueError("fdo: empty (F' is negative everywhere: the dents remove the "
                             "whole object)")
        self._volume, com, tensor = props
        self.unit_inertia_tensor = tensor
        from .shape import principal_axes
        self.frame_rot, self._moments = principal_axes(tensor)
        self.frame_pos = com

    @staticmethod
    def _coefficients(k, where):
        k = np.asarray(k, dtype=float).reshape(-1)
        if k.shape != (10,):
            raise ValueError(f"{where}: 10 coefficients k0..k9 (got {k.size})")
        if not np.all(np.isfinite(k)):
            raise ValueError(f"{where}: a coefficient is NaN or infinite")
        return quadric_coefficients(k)

    # --- the shape-kind interface (physics/shape.py) ---------------------------------------
    @property
    def size(self):
        """Half extents of its box about the centre of mass, body frame (display); the
        geom_size row of an FDO is zeros (its rows carry it)."""
        lo, hi = self.rows[0], self.rows[1]
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])
        local = (corners - self.frame_pos) @ self.frame_rot
        return tuple(float(x) for x in np.max(np.abs(local), axis=0))

    def volume(self):
        return self._volume

    def unit_inertia(self):
        return self._moments.copy()

    def value(self, points):
        """F' at points (n, 3) of its frame."""
        return evaluate(self.rows, np.asarray(points, dtype=float).reshape(-1, 3))[0]

    def ray_hits(self, o, d):
        return ray_hits(self.rows, np.asarray(o, dtype=float), np.asarray(d, dtype=float))

    def draw_parts(self):
        return [(self, _ZERO, (1.0, 1.0, 1.0))]   # its own mesh, as a Hull (render/instances)

    def surface(self):
        """(vertices (n, 3), faces (m, 3)): its zero set by marching cubes, in its frame."""
        return surface_mesh(self.rows)

    def world_box(self, pos, rot):
        lo, hi = self.rows[0], self.rows[1]
        c, e = 0.5 * (lo + hi), 0.5 * (hi - lo)
        half = np.abs(rot) @ e
        return pos + rot @ c - half, pos + rot @ c + half

    def __repr__(self):
        return f"Fdo({len(self.perturbations)} perturbations)"


def evaluate(rows, x):
    """(F' (n,), grad F' (n, 3)) at points x (n, 3), numpy."""
    F = np.zeros(len(x))
    G = np.zeros((len(x), 3))
    for k in range((len(rows) - HEAD) // QROWS):
        o = HEAD + QROWS * k
        A, b, c, f = rows[o:o + 3], rows[o + Q_B], rows[o + Q_CF, Q_C], rows[o + Q_CF, Q_F]
        Ax = x @ A
        q = np.einsum("ij,ij->i", Ax, x) + x @ b + c
        gq = 2.0 * Ax + b
        if k == 0:
            F += q
            G += gq
        else:
            qp = np.maximum(q, 0.0)
            F += f * qp ** 3
            G += (3.0 * f * qp * qp)[:, None] * gq
    return F, G


_CACHE = {}
_CACHE_LOCK = threading.Lock()


def _cached(tag, rows, compute):
    key = (tag, rows.tobytes())
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    value = compute()
    with _CACHE_LOCK:
        _CACHE[key] = value
    return value


def _grid(rows, cells, pad=0):
    """(axes [xs, ys, zs] of cell centres, h) of a grid over the box, `cells` along its
    longest side, `pad` cells beyond each face."""
    lo, hi = rows[0], rows[1]
    h = float(np.max(hi - lo)) / cells
    axes = []
    for i in range(3):
        n = max(int(math.ceil((hi[i] - lo[i]) / h)), 1)
        mid = 0.5 * (lo[i] + hi[i])
        axes.append(mid + (np.arange(-pad, n + pad) - 0.5 * (n - 1)) * h)
    return axes, h


def _moments(rows, cells):
    """Integrals of 1, x and x x^T over the object on a grid of `cells` along the box's
    longest side (each cell weighted by its share, the module docstring)."""
    (xs, ys, zs), h = _grid(rows, cells)
    yy, zz = np.meshgrid(ys, zs, indexing="ij")
    yz = np.stack([np.zeros(yy.size), yy.ravel(), zz.ravel()], axis=1)
    m0, m1, m2 = 0.0, np.zeros(3), np.zeros((3, 3))
    for x in xs:
        p = yz.copy()
        p[:, 0] = x
        F, G = evaluate(rows, p)
        width = h * np.maximum(np.abs(G).sum(axis=1), 1e-300)
        w = np.clip(0.5 + F / width, 0.0, 1.0)
        if not np.any(w):
            continue
        m0 += w.sum()
        m1 += w @ p
        m2 += (p * w[:, None]).T @ p
    v = h ** 3
    return m0 * v, m1 * v, m2 * v


def _mass_properties(rows):
    """(volume, centre of mass (3,), inertia tensor per kilogram about it (3, 3)), or None
    when the object is empty. The grid's error is O(h^2) (a smooth surface): Richardson's
    extrapolation from GRID and GRID / 2 cells, (4 I_h - I_2h) / 3, removes that term."""
    def compute():
        fine, coarse = _moments(rows, GRID), _moments(rows, GRID // 2)
        if fine[0] <= 0.0:
            return None
        m0, m1, m2 = (((4.0 * f - c) / 3.0) for f, c in zip(fine, coarse))
        if not m0 > 0.0:
            m0, m1, m2 = fine
        com = m1 / m0
        second = m2 / m0 - np.outer(com, com)
        tensor = np.trace(second) * np.eye(3) - second
        scale = float(np.max(rows[1] - rows[0]))
        com[np.abs(com) <= 1e-9 * scale] = 0.0
        return float(m0), com, tensor
    return _cached("mass", rows, compute)


def surface_mesh(rows):
    """(vertices, faces) of the zero set F' = 0 by marching cubes, wound counter-clockwise
    seen from outside."""
    def compute():
        from skimage import measure  # lazily: only drawing needs it

        (xs, ys, zs), h = _grid(rows, MESH_GRID, pad=1)
        X, Y, Z = np.meshgrid(xs, ys, zs, indexing="ij")
        F = evaluate(rows, np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1))[0]
        verts, faces, _n, _v = measure.marching_cubes(F.reshape(X.shape), level=0.0,
                                                      spacing=(h, h, h))
        verts = verts + np.array([xs[0], ys[0], zs[0]])
        faces = np.asarray(faces, dtype=np.int64)
        tri = verts[faces]
        signed = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum()
        if signed < 0.0:
            faces = faces[:, ::-1].copy()
        return verts, faces
    return _cached("mesh", rows, compute)


def lipschitz(rows):
    """A bound on |grad F'| over the box: per quadric 2 ||A||_F R + |b| (R the box's farthest
    corner), through the cubes with Q's largest value on the box."""
    lo, hi = rows[0], rows[1]
    R = float(np.linalg.norm(np.maximum(np.abs(lo), np.abs(hi))))
    L = 0.0
    for k in range((len(rows) - HEAD) // QROWS):
        o = HEAD + QROWS * k
        A, b, c, f = rows[o:o + 3], rows[o + Q_B], rows[o + Q_CF, Q_C], rows[o + Q_CF, Q_F]
        gmax = 2.0 * np.linalg.norm(A) * R + np.linalg.norm(b)
        if k == 0:
            L += gmax
        else:
            qmax = max(c + np.linalg.norm(b) * R + np.linalg.norm(A) * R * R, 0.0)
            L += abs(f) * 3.0 * qmax * qmax * gmax
    return L


def ray_hits(rows, o, d):
    """The ray parameters t where o + t d crosses F' = 0 within the box (entering and
    leaving), marched by the Lipschitz bound and refined by bisection; None if it misses."""
    lo, hi = rows[0], rows[1]
    t0, t1 = -math.inf, math.inf
    for i in range(3):
        if abs(d[i]) < 1e-300:
            if o[i] < lo[i] or o[i] > hi[i]:
                return None
            continue
        a, b = (lo[i] - o[i]) / d[i], (hi[i] - o[i]) / d[i]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
    if t0 > t1:
        return None
    speed = float(np.linalg.norm(d))
    L = lipschitz(rows) * speed
    hmin = 1e-3 * float(np.max(hi - lo)) / max(speed, 1e-300)

    def f(t):
        return float(evaluate(rows, (o + t * d)[None, :])[0][0])

    hits = []
    t, ft = t0, f(t0)
    while t < t1:
        step = max(abs(ft) / L, hmin) if L > 0.0 else hmin
        tn = min(t + step, t1)
        fn = f(tn)
        if (ft < 0.0) != (fn < 0.0):
            a, b, fa = t, tn, ft
            for _ in range(60):
                m = 0.5 * (a + b)
                fm = f(m)
                if (fm < 0.0) == (fa < 0.0):
                    a, fa = m, fm
                else:
                    b = m
            hits.append(0.5 * (a + b))
        t, ft = tn, fn
    return hits or None


# ================================================================== kernels

@njit(**_JIT)
def _quadric(hv, o, x0, x1, x2):
    """q, grad q (3) of the quadric at rows o.. of hv, at the local point x."""
    a00, a01, a02 = hv[o, 0], hv[o, 1], hv[o, 2]
    a11, a12, a22 = hv[o + 1, 1], hv[o + 1, 2], hv[o + 2, 2]
    y0 = a00 * x0 + a01 * x1 + a02 * x2
    y1 = a01 * x0 + a11 * x1 + a12 * x2
    y2 = a02 * x0 + a12 * x1 + a22 * x2
    b0, b1, b2 = hv[o + Q_B, 0], hv[o + Q_B, 1], hv[o + Q_B, 2]
    q = y0 * x0 + y1 * x1 + y2 * x2 + b0 * x0 + b1 * x1 + b2 * x2 + hv[o + Q_CF, Q_C]
    return q, 2.0 * y0 + b0, 2.0 * y1 + b1, 2.0 * y2 + b2


@njit(**_JIT)
def fdo_value(hv, start, count, x0, x1, x2):
    """F' and grad F' (local frame) at the local point x."""
    F, g0, g1, g2 = _quadric(hv, start + HEAD, x0, x1, x2)
    for o in range(start + HEAD + QROWS, start + count, QROWS):
        q, q0, q1, q2 = _quadric(hv, o, x0, x1, x2)
        if q > 0.0:
            f = hv[o + Q_CF, Q_F]
            F += f * q * q * q
            s = 3.0 * f * q * q
            g0 += s * q0
            g1 += s * q1
            g2 += s * q2
    return F, g0, g1, g2


@njit(**_JIT)
def fdo_hessian(hv, start, count, x0, x1, x2):
    """(F', g0, g1, g2, H00, H01, H02, H11, H12, H22) at the local point x."""
    o = start + HEAD
    F, g0, g1, g2 = _quadric(hv, o, x0, x1, x2)
    h00, h01, h02 = 2.0 * hv[o, 0], 2.0 * hv[o, 1], 2.0 * hv[o, 2]
    h11, h12, h22 = 2.0 * hv[o + 1, 1], 2.0 * hv[o + 1, 2], 2.0 * hv[o + 2, 2]
    for o in range(start + HEAD + QROWS, start + count, QROWS):
        q, q0, q1, q2 = _quadric(hv, o, x0, x1, x2)
        if q > 0.0:
            f = hv[o + Q_CF, Q_F]
            F += f * q * q * q
            s = 3.0 * f * q * q
            g0 += s * q0
            g1 += s * q1
            g2 += s * q2
            t = 6.0 * f * q
            s2 = 2.0 * s
            h00 += t * q0 * q0 + s2 * hv[o, 0]
            h01 += t * q0 * q1 + s2 * hv[o, 1]
            h02 += t * q0 * q2 + s2 * hv[o, 2]
            h11 += t * q1 * q1 + s2 * hv[o + 1, 1]
            h12 += t * q1 * q2 + s2 * hv[o + 1, 2]
            h22 += t * q2 * q2 + s2 * hv[o + 2, 2]
    return F, g0, g1, g2, h00, h01, h02, h11, h12, h22


@njit(**_JIT)
def _quadric_bounds(hv, o, x0, x1, x2, rho):
    """(lower, upper) of the quadric on the ball |y - x| <= rho (Taylor form, exact for the
    linear part: |grad q(x)| rho, and ||A||_F rho^2 for the quadratic one)."""
    q, q0, q1, q2 = _quadric(hv, o, x0, x1, x2)
    a = 0.0
    for i in range(3):
        for j in range(3):
            a += hv[o + i, j] * hv[o + i, j]
    spread = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2) * rho + math.sqrt(a) * rho * rho
    return q - spread, q + spread


@njit(**_JIT)
def fdo_upper(hv, start, count, x0, x1, x2, rho):
    """An upper bound of F' on the ball |y - x| <= rho (local frame): the base quadric's,
    plus f_i max(Q_i, 0)^3 at Q_i's upper bound for bumps, its lower bound for dents."""
    u = _quadric_bounds(hv, start + HEAD, x0, x1, x2, rho)[1]
    for o in range(start + HEAD + QROWS, start + count, QROWS):
        lo, hi = _quadric_bounds(hv, o, x0, x1, x2, rho)
        f = hv[o + Q_CF, Q_F]
        if f > 0.0 and hi > 0.0:
            u += f * hi * hi * hi
        elif f < 0.0 and lo > 0.0:
            u += f * lo * lo * lo
    return u


@njit(**_JIT)
def _to_local(pos, rot, x0, x1, x2):
    d0, d1, d2 = x0 - pos[0], x1 - pos[1], x2 - pos[2]
    return (rot[0, 0] * d0 + rot[1, 0] * d1 + rot[2, 0] * d2,
            rot[0, 1] * d0 + rot[1, 1] * d1 + rot[2, 1] * d2,
            rot[0, 2] * d0 + rot[1, 2] * d1 + rot[2, 2] * d2)


@njit(**_JIT)
def _to_world(pos, rot, l0, l1, l2):
    return (pos[0] + rot[0, 0] * l0 + rot[0, 1] * l1 + rot[0, 2] * l2,
            pos[1] + rot[1, 0] * l0 + rot[1, 1] * l1 + rot[1, 2] * l2,
            pos[2] + rot[2, 0] * l0 + rot[2, 1] * l1 + rot[2, 2] * l2)


@njit(**_JIT)
def _rotate(rot, l0, l1, l2):
    return (rot[0, 0] * l0 + rot[0, 1] * l1 + rot[0, 2] * l2,
            rot[1, 0] * l0 + rot[1, 1] * l1 + rot[1, 2] * l2,
            rot[2, 0] * l0 + rot[2, 1] * l1 + rot[2, 2] * l2)


@njit(**_JIT)
def _implicit(kind, size, pos, rot, hv, start, count, x0, x1, x2):
    """G and grad G (world) of a smooth geom (positive inside): an FDO's F'; a sphere's or
    ellipsoid's 1 - |A^-1 R^T (x - c)|^2."""
    l0, l1, l2 = _to_local(pos, rot, x0, x1, x2)
    if kind == FDO:
        G, g0, g1, g2 = fdo_value(hv, start, count, l0, l1, l2)
    else:
        a0 = size[0]
        a1 = size[0] if kind == SPHERE else size[1]
        a2 = size[0] if kind == SPHERE else size[2]
        u0, u1, u2 = l0 / (a0 * a0), l1 / (a1 * a1), l2 / (a2 * a2)
        G = 1.0 - (l0 * u0 + l1 * u1 + l2 * u2)
        g0, g1, g2 = -2.0 * u0, -2.0 * u1, -2.0 * u2
    w = _rotate(rot, g0, g1, g2)
    return G, w[0], w[1], w[2]


@njit(**_JIT)
def _implicit_upper(kind, size, pos, rot, hv, start, count, x0, x1, x2, rho):
    l0, l1, l2 = _to_local(pos, rot, x0, x1, x2)
    if kind == FDO:
        return fdo_upper(hv, start, count, l0, l1, l2, rho)
    a0 = size[0]
    a1 = size[0] if kind == SPHERE else size[1]
    a2 = size[0] if kind == SPHERE else size[2]
    # 1 - |y|^2 with y = diag(1/a) l: |y| >= |l| / max(a) - ...: use the distance to the
    # ellipsoid's box of radius max(a) about the centre, scaled by 1/min(a)
    lo = min(a0, min(a1, a2))
    r = math.sqrt((l0 / a0) ** 2 + (l1 / a1) ** 2 + (l2 / a2) ** 2) - rho / lo
    return 1.0 - max(r, 0.0) ** 2


@njit(**_JIT)
def _sdf(kind, size, pos, rot, hv, start, count, x0, x1, x2):
    """(phi, m0, m1, m2): the signed distance of a plane, box, capsule, cylinder or hull
    (negative inside; a hull's is the largest face distance, exact inside and near a face)
    and its gradient m, B's outward unit normal at its feature nearest x (world)."""
    l0, l1, l2 = _to_local(pos, rot, x0, x1, x2)
    if kind == PLANE:
        return l2, rot[0, 2], rot[1, 2], rot[2, 2]
    if kind == BOX or kind == CYLINDER:
        if kind == BOX:
            e0, e1 = abs(l0) - size[0], abs(l1) - size[1]
            e2 = abs(l2) - size[2]
        else:
            rr = math.sqrt(l0 * l0 + l1 * l1)
            e0, e1, e2 = rr - size[0], -1e300, abs(l2) - size[1]
        inside = max(e0, max(e1, e2))
        if inside <= 0.0:
            if kind == BOX:
                m = ((1.0 if l0 >= 0.0 else -1.0, 0.0, 0.0) if inside == e0 else
                     ((0.0, 1.0 if l1 >= 0.0 else -1.0, 0.0) if inside == e1 else
                      (0.0, 0.0, 1.0 if l2 >= 0.0 else -1.0)))
            elif inside == e0:
                m = (l0 / rr, l1 / rr, 0.0) if rr > 0.0 else (1.0, 0.0, 0.0)
            else:
                m = (0.0, 0.0, 1.0 if l2 >= 0.0 else -1.0)
            w = _rotate(rot, m[0], m[1], m[2])
            return inside, w[0], w[1], w[2]
        if kind == BOX:
            v0, v1, v2 = (max(e0, 0.0) * (1.0 if l0 >= 0.0 else -1.0),
                          max(e1, 0.0) * (1.0 if l1 >= 0.0 else -1.0),
                          max(e2, 0.0) * (1.0 if l2 >= 0.0 else -1.0))
        else:
            s = max(e0, 0.0) / rr if rr > 0.0 else 0.0
            v0, v1, v2 = l0 * s, l1 * s, max(e2, 0.0) * (1.0 if l2 >= 0.0 else -1.0)
        d = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        w = _rotate(rot, v0 / d, v1 / d, v2 / d)
        return d, w[0], w[1], w[2]
    if kind == CAPSULE:
        z = min(max(l2, -size[1]), size[1])
        v0, v1, v2 = l0, l1, l2 - z
        d = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        if d <= 0.0:   # on the axis: any direction across it
            w = _rotate(rot, 1.0, 0.0, 0.0)
            return -size[0], w[0], w[1], w[2]
        w = _rotate(rot, v0 / d, v1 / d, v2 / d)
        return d - size[0], w[0], w[1], w[2]
    # HULL: its faces are not in the model: the 26 directions of the local axes, their
    # face and corner diagonals n, phi = max_n n.l - h(n) (h the vertices' support): the
    # distance to the hull's 26-sided bounding polytope, exact on faces along those
    # directions (a box's), an outer bound otherwise
    best, b0, b1, b2 = -1e300, 0.0, 0.0, 1.0
    for k in range(27):
        c0, c1, c2 = float(k // 9 - 1), float((k // 3) % 3 - 1), float(k % 3 - 1)
        nn = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
        if nn == 0.0:
            continue
        c0, c1, c2 = c0 / nn, c1 / nn, c2 / nn
        h = -1e300
        for v in range(start, start + count):
            h = max(h, hv[v, 0] * c0 + hv[v, 1] * c1 + hv[v, 2] * c2)
        s = c0 * l0 + c1 * l1 + c2 * l2 - h
        if s > best:
            best, b0, b1, b2 = s, c0, c1, c2
    w = _rotate(rot, b0, b1, b2)
    return best, w[0], w[1], w[2]


@njit(**_JIT)
def _inv3(h00, h01, h02, h11, h12, h22):
    """The inverse of a symmetric 3x3 (its 6 entries), by cofactors; ok False if singular."""
    c00 = h11 * h22 - h12 * h12
    c01 = h02 * h12 - h01 * h22
    c02 = h01 * h12 - h02 * h11
    det = h00 * c00 + h01 * c01 + h02 * c02
    scale = (abs(h00) + abs(h11) + abs(h22) + abs(h01) + abs(h02) + abs(h12)) ** 3
    if not abs(det) > 1e-14 * scale:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False
    c11 = h00 * h22 - h02 * h02
    c12 = h01 * h02 - h00 * h12
    c22 = h00 * h11 - h01 * h01
    s = 1.0 / det
    return c00 * s, c01 * s, c02 * s, c11 * s, c12 * s, c22 * s, True


@njit(**_JIT)
def _tangents(n0, n1, n2):
    if abs(n0) <= abs(n1) and abs(n0) <= abs(n2):
        t0, t1, t2 = 0.0, -n2, n1
    elif abs(n1) <= abs(n2):
        t0, t1, t2 = n2, 0.0, -n0
    else:
        t0, t1, t2 = -n1, n0, 0.0
    s = 1.0 / math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    t0, t1, t2 = t0 * s, t1 * s, t2 * s
    return (t0, t1, t2), (n1 * t2 - n2 * t1, n2 * t0 - n0 * t2, n0 * t1 - n1 * t0)


@njit(**_JIT)
def fdo_support(hv, start, count, u0, u1, u2, x0, x1, x2, scale):
    """The local support point of the FDO along the unit local direction u (its outward
    normal u), by Newton (_support_from) from the local point x, else from the base
    ellipsoid's support point x* + N^-1 u sqrt(F(x*) / u^T N^-1 u) (N = -A, x* its centre:
    exact when the perturbations vanish there); (x, ok). A Newton result below x's own
    projection onto the surface (in u.x) is a lower local maximum that a capped step jumped
    to, and is not taken; where neither start gives one, u.x is climbed along the surface from
    x (_surface_ascent) and the top polished by Newton."""
    s0, s1, s2 = _onto_surface(hv, start, count, x0, x1, x2, scale)
    floor = u0 * s0 + u1 * s1 + u2 * s2 - 1e-9 * scale
    y0, y1, y2, ok = _support_from(hv, start, count, u0, u1, u2, x0, x1, x2, scale)
    if ok and u0 * y0 + u1 * y1 + u2 * y2 >= floor:
        return y0, y1, y2, ok
    o = start + HEAD
    i00, i01, i02, i11, i12, i22, inv = _inv3(-hv[o, 0], -hv[o, 1], -hv[o, 2], -hv[o + 1, 1],
                                              -hv[o + 1, 2], -hv[o + 2, 2])
    b0, b1, b2 = hv[o + Q_B, 0], hv[o + Q_B, 1], hv[o + Q_B, 2]
    c0 = 0.5 * (i00 * b0 + i01 * b1 + i02 * b2)
    c1 = 0.5 * (i01 * b0 + i11 * b1 + i12 * b2)
    c2 = 0.5 * (i02 * b0 + i12 * b1 + i22 * b2)
    m = _quadric(hv, o, c0, c1, c2)[0]
    w0 = i00 * u0 + i01 * u1 + i02 * u2
    w1 = i01 * u0 + i11 * u1 + i12 * u2
    w2 = i02 * u0 + i12 * u1 + i22 * u2
    s = math.sqrt(max(m, 0.0) / max(u0 * w0 + u1 * w1 + u2 * w2, 1e-300))
    y0, y1, y2, ok = _support_from(hv, start, count, u0, u1, u2, c0 + s * w0, c1 + s * w1,
                                   c2 + s * w2, scale)
    if ok and u0 * y0 + u1 * y1 + u2 * y2 >= floor:
        return y0, y1, y2, ok
    # both Newton starts met a saddle, a minimum of u.x (a bump's neck, a dent's floor) or a
    # lower maximum: climb u.x along the surface from x, then Newton from there
    a0, a1, a2 = _surface_ascent(hv, start, count, u0, u1, u2, s0, s1, s2, scale)
    top = u0 * a0 + u1 * a1 + u2 * a2
    y0, y1, y2, ok = _support_from(hv, start, count, u0, u1, u2, a0, a1, a2, scale)
    if ok and u0 * y0 + u1 * y1 + u2 * y2 >= top - 1e-9 * scale:
        return y0, y1, y2, ok
    return a0, a1, a2, True


@njit(**_JIT)
def _onto_surface(hv, start, count, x0, x1, x2, scale):
    """The local point x moved onto F' = 0 along the gradient (Newton, steps capped)."""
    for _ in range(20):
        F, g0, g1, g2 = fdo_value(hv, start, count, x0, x1, x2)
        gg = g0 * g0 + g1 * g1 + g2 * g2
        if gg <= 0.0:
            break
        s = F / gg
        step = abs(s) * math.sqrt(gg)
        if step > 0.1 * scale:
            s *= 0.1 * scale / step
        x0, x1, x2 = x0 - s * g0, x1 - s * g1, x2 - s * g2
        if step < 1e-12 * scale:
            break
    return x0, x1, x2


@njit(**_JIT)
def _surface_ascent(hv, start, count, u0, u1, u2, x0, x1, x2, scale):
    """A point near a local maximum of u.x on F' = 0 (local frame): steps along the part of u
    tangent to the surface, each projected back onto it; a step that does not raise u.x is
    undone and halved."""
    x0, x1, x2 = _onto_surface(hv, start, count, x0, x1, x2, scale)
    h = 0.05 * scale
    best = u0 * x0 + u1 * x1 + u2 * x2
    for _ in range(200):
        F, g0, g1, g2 = fdo_value(hv, start, count, x0, x1, x2)
        n0, n1, n2 = _unit(-g0, -g1, -g2)
        un = u0 * n0 + u1 * n1 + u2 * n2
        t0, t1, t2 = u0 - un * n0, u1 - un * n1, u2 - un * n2
        if math.sqrt(t0 * t0 + t1 * t1 + t2 * t2) <= 1e-9 or h <= 1e-9 * scale:
            break
        y0, y1, y2 = _onto_surface(hv, start, count, x0 + h * t0, x1 + h * t1, x2 + h * t2,
                                   scale)
        v = u0 * y0 + u1 * y1 + u2 * y2
        if v > best:
            best, x0, x1, x2 = v, y0, y1, y2
            h *= 1.5
        else:
            h *= 0.5
    return x0, x1, x2


@njit(**_JIT)
def _support_from(hv, start, count, u0, u1, u2, x0, x1, x2, scale):
    """fdo_support's Newton on grad F' + lam u = 0, F' = 0 from the local point x."""
    for _ in range(8):   # onto the surface along the gradient first
        F, g0, g1, g2 = fdo_value(hv, start, count, x0, x1, x2)
        gg = g0 * g0 + g1 * g1 + g2 * g2
        if gg <= 0.0:
            return x0, x1, x2, False
        s = F / gg
        step = abs(s) * math.sqrt(gg)
        if step > 0.25 * scale:
            s *= 0.25 * scale / step
        x0, x1, x2 = x0 - s * g0, x1 - s * g1, x2 - s * g2
        if step < 1e-6 * scale:
            break
    F, g0, g1, g2 = fdo_value(hv, start, count, x0, x1, x2)
    lam = math.sqrt(g0 * g0 + g1 * g1 + g2 * g2)
    ok = False
    for _ in range(SUPPORT_ITER):
        F, g0, g1, g2, h00, h01, h02, h11, h12, h22 = fdo_hessian(hv, start, count,
                                                                  x0, x1, x2)
        r0, r1, r2 = g0 + lam * u0, g1 + lam * u1, g2 + lam * u2
        gn = math.sqrt(g0 * g0 + g1 * g1 + g2 * g2)
        if (math.sqrt(r0 * r0 + r1 * r1 + r2 * r2) <= 1e-13 * gn
                and abs(F) <= 1e-15 * gn * scale + 1e-300):
            ok = True
            break
        i00, i01, i02, i11, i12, i22, inv = _inv3(h00, h01, h02, h11, h12, h22)
        if not inv:
            return x0, x1, x2, False
        a0 = i00 * r0 + i01 * r1 + i02 * r2
        a1 = i01 * r0 + i11 * r1 + i12 * r2
        a2 = i02 * r0 + i12 * r1 + i22 * r2
        b0 = i00 * u0 + i01 * u1 + i02 * u2
        b1 = i01 * u0 + i11 * u1 + i12 * u2
        b2 = i02 * u0 + i12 * u1 + i22 * u2
        gb = g0 * b0 + g1 * b1 + g2 * b2
        if gb == 0.0:
            return x0, x1, x2, False
        dlam = (F - (g0 * a0 + g1 * a1 + g2 * a2)) / gb
        d0, d1, d2 = -a0 - b0 * dlam, -a1 - b1 * dlam, -a2 - b2 * dlam
        step = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if step > 0.25 * scale:
            c = 0.25 * scale / step
            d0, d1, d2, dlam = d0 * c, d1 * c, d2 * c, dlam * c
        x0, x1, x2, lam = x0 + d0, x1 + d1, x2 + d2, lam + dlam
        if step <= 1e-15 * scale:
            ok = True
            break
    if not ok or lam <= 0.0:
        return x0, x1, x2, False
    # a local maximum of u.x on the surface: the tangent Hessian of F' is not positive
    F, g0, g1, g2, h00, h01, h02, h11, h12, h22 = fdo_hessian(hv, start, count, x0, x1, x2)
    t, s = _tangents(u0, u1, u2)
    htt = _quad(h00, h01, h02, h11, h12, h22, t, t)
    hss = _quad(h00, h01, h02, h11, h12, h22, s, s)
    hts = _quad(h00, h01, h02, h11, h12, h22, t, s)
    tol = 1e-9 * lam / scale
    if htt + hss > tol or htt * hss - hts * hts < -tol * tol - 1e-9 * (htt * htt + hss * hss):
        return x0, x1, x2, False
    return x0, x1, x2, True


@njit(**_JIT)
def _quad(h00, h01, h02, h11, h12, h22, a, b):
    return (a[0] * (h00 * b[0] + h01 * b[1] + h02 * b[2])
            + a[1] * (h01 * b[0] + h11 * b[1] + h12 * b[2])
            + a[2] * (h02 * b[0] + h12 * b[1] + h22 * b[2]))


@njit(**_JIT)
def _smooth_support(kind, size, pos, rot, hv, start, count, n0, n1, n2, x0, x1, x2, scale):
    """World support point of a sphere, ellipsoid or FDO along the unit world n (an FDO's
    local one, from the world point x); (p, ok)."""
    u0, u1, u2 = (rot[0, 0] * n0 + rot[1, 0] * n1 + rot[2, 0] * n2,
                  rot[0, 1] * n0 + rot[1, 1] * n1 + rot[2, 1] * n2,
                  rot[0, 2] * n0 + rot[1, 2] * n1 + rot[2, 2] * n2)
    if kind == FDO:
        l0, l1, l2 = _to_local(pos, rot, x0, x1, x2)
        l0, l1, l2, ok = fdo_support(hv, start, count, u0, u1, u2, l0, l1, l2, scale)
    else:
        a0 = size[0]
        a1 = size[0] if kind == SPHERE else size[1]
        a2 = size[0] if kind == SPHERE else size[2]
        w0, w1, w2 = a0 * a0 * u0, a1 * a1 * u1, a2 * a2 * u2
        s = 1.0 / math.sqrt(w0 * u0 + w1 * u1 + w2 * u2)
        l0, l1, l2, ok = w0 * s, w1 * s, w2 * s, True
    p = _to_world(pos, rot, l0, l1, l2)
    return p[0], p[1], p[2], ok


@njit(**_JIT)
def _unit(a0, a1, a2):
    s = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if s <= 0.0:
        return 0.0, 0.0, 1.0
    return a0 / s, a1 / s, a2 / s


@njit(**_JIT)
def _pair_smooth(sa, pa, ra, hv, st_a, ct_a, kb, sb, pb, rb, st_b, ct_b,
                 x0, x1, x2, n0, n1, n2, scale):
    """Least translation between the FDO A and the smooth B from the seed x and start normal
    n (A to B): (depth, n, p_A, p_B, ok), Newton on the unit sphere as convex.py's smooth
    path, with local supports and the Hessian by finite differences of p_A - p_B."""
    qa = (x0, x1, x2)
    qb = (x0, x1, x2)
    eps = 1e-6
    ok = False
    depth = 0.0
    A0 = A1 = A2 = B0 = B1 = B2 = 0.0
    for _it in range(PAIR_ITER):
        A0, A1, A2, oka = _smooth_support(FDO, sa, pa, ra, hv, st_a, ct_a, n0, n1, n2,
                                          qa[0], qa[1], qa[2], scale)
        B0, B1, B2, okb = _smooth_support(kb, sb, pb, rb, hv, st_b, ct_b, -n0, -n1, -n2,
                                          qb[0], qb[1], qb[2], scale)
        if not (oka and okb):
            return depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, False
        qa, qb = (A0, A1, A2), (B0, B1, B2)
        g0, g1, g2 = A0 - B0, A1 - B1, A2 - B2
        depth = n0 * g0 + n1 * g1 + n2 * g2
        t, s = _tangents(n0, n1, n2)
        gr0 = t[0] * g0 + t[1] * g1 + t[2] * g2
        gr1 = s[0] * g0 + s[1] * g1 + s[2] * g2
        if math.sqrt(gr0 * gr0 + gr1 * gr1) <= 1e-13 * scale:
            ok = True
            break
        hr = _stack_array(2, 2, 0)
        for j in range(2):
            e = t if j == 0 else s
            m0, m1, m2 = _unit(n0 + eps * e[0], n1 + eps * e[1], n2 + eps * e[2])
            C0, C1, C2, o1 = _smooth_support(FDO, sa, pa, ra, hv, st_a, ct_a, m0, m1, m2,
                                             A0, A1, A2, scale)
            D0, D1, D2, o2 = _smooth_support(kb, sb, pb, rb, hv, st_b, ct_b, -m0, -m1, -m2,
                                             B0, B1, B2, scale)
            if not (o1 and o2):
                return depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, False
            d0, d1, d2 = (C0 - D0 - g0) / eps, (C1 - D1 - g1) / eps, (C2 - D2 - g2) / eps
            hr[0, j] = t[0] * d0 + t[1] * d1 + t[2] * d2
            hr[1, j] = s[0] * d0 + s[1] * d1 + s[2] * d2
        h00 = hr[0, 0] - depth
        h11 = hr[1, 1] - depth
        h01 = 0.5 * (hr[0, 1] + hr[1, 0])
        mu = 0.0
        lo = 0.5 * (h00 + h11) - math.sqrt(0.25 * (h00 - h11) ** 2 + h01 * h01)
        if lo <= 1e-9 * scale:
            mu = 1e-9 * scale - lo + 1e-3 * abs(h00 + h11) + 1e-12
        h00 += mu
        h11 += mu
        det = h00 * h11 - h01 * h01
        d0 = -(h11 * gr0 - h01 * gr1) / det
        d1 = -(-h01 * gr0 + h00 * gr1) / det
        step = math.sqrt(d0 * d0 + d1 * d1)
        if step > 0.5:
            d0, d1 = d0 * 0.5 / step, d1 * 0.5 / step
        n0, n1, n2 = _unit(n0 + d0 * t[0] + d1 * s[0], n1 + d0 * t[1] + d1 * s[1],
                           n2 + d0 * t[2] + d1 * s[2])
        if step <= 1e-15:
            ok = True
            break
    return depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok


@njit(**_JIT)
def _pair_sdf(sa, pa, ra, hv, st_a, ct_a, kb, sb, pb, rb, st_b, ct_b, x0, x1, x2, scale):
    """The deepest point of the FDO A in B (signed distance phi_B) from the seed x:
    x = s_A(-m), m = grad phi_B(x) to a fixed point; (depth, n (A to B), x, ok)."""
    phi, m0, m1, m2 = _sdf(kb, sb, pb, rb, hv, st_b, ct_b, x0, x1, x2)
    ok = False
    for _ in range(PAIR_ITER):
        y0, y1, y2, oka = _smooth_support(FDO, sa, pa, ra, hv, st_a, ct_a, -m0, -m1, -m2,
                                          x0, x1, x2, scale)
        if not oka:
            return 0.0, -m0, -m1, -m2, x0, x1, x2, False
        x0, x1, x2 = y0, y1, y2
        phi, k0, k1, k2 = _sdf(kb, sb, pb, rb, hv, st_b, ct_b, x0, x1, x2)
        turn = abs(k0 - m0) + abs(k1 - m1) + abs(k2 - m2)
        m0, m1, m2 = k0, k1, k2
        if turn <= 1e-13:
            ok = True
            break
    return -phi, -m0, -m1, -m2, x0, x1, x2, ok


@njit(**_JIT)
def _ball_at(sa, pa, ra, hv, st_a, ct_a, ball, centre, eye, pb, rb, t, y0, y1, y2,
             n0, n1, n2, scale):
    """The least translation of A and the ball of B's radius centred at t on B's axis
    (_pair_smooth from A's point y), and h = n . a (a B's axis): the depth's derivative
    along the axis is -h. The start normal is A's level-set normal at the centre c,
    -grad F'_A(c), unless it is nil (then n): a warm start from a ball on the other side of
    A's centre would sit on the stationary maximum of h_A(n) + h_ball(-n)."""
    c = _to_world(pb, rb, 0.0, 0.0, t)
    centre[0], centre[1], centre[2] = c[0], c[1], c[2]
    G, g0, g1, g2 = _implicit(FDO, sa, pa, ra, hv, st_a, ct_a, c[0], c[1], c[2])
    if g0 * g0 + g1 * g1 + g2 * g2 > 0.0:
        n0, n1, n2 = _unit(-g0, -g1, -g2)
    depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok = _pair_smooth(
        sa, pa, ra, hv, st_a, ct_a, SPHERE, ball, centre, eye, 0, 0, y0, y1, y2,
        n0, n1, n2, scale)
    h = n0 * rb[0, 2] + n1 * rb[1, 2] + n2 * rb[2, 2]
    return depth, h, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok


@njit(**_JIT)
def _pair_round(sa, pa, ra, hv, st_a, ct_a, kb, sb, pb, rb, x0, x1, x2, n0, n1, n2, scale,
                step):
    """The FDO A against a capsule, or a cylinder's side: a ball of B's radius centred at
    the point c(t) of B's axis segment (|t| <= half length) where it is deepest in A. The
    depth d(t) of the ball (_pair_smooth) has d'(t) = -n . a (the envelope theorem: moving
    the ball along n lessens the depth at unit rate), so from the seed's t it climbs: steps
    doubling from `step` until n . a changes sign or an end is reached, then the root by
    Illinois' false position. (Moving c to the axis point nearest A's contact point instead
    has a spurious fixed point wherever the axis crosses A's surface: the ball centred on
    the surface, depth = B's radius.) Returns (depth, n, p_A, p_B, ok)."""
    ball = _stack_array(3, 0, 0)
    centre = _stack_array(3, 0, 0)
    eye = _stack_array(3, 3, 0)
    for i in range(3):
        ball[i] = 0.0
        for j in range(3):
            eye[i, j] = 1.0 if i == j else 0.0
    ball[0] = sb[0]
    half = sb[1]
    l0, l1, l2 = _to_local(pb, rb, x0, x1, x2)
    t0 = min(max(l2, -half), half)
    G, g0, g1, g2 = _implicit(FDO, sa, pa, ra, hv, st_a, ct_a, x0, x1, x2)
    n0, n1, n2 = _unit(-g0, -g1, -g2)
    d0, h0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok = _ball_at(
        sa, pa, ra, hv, st_a, ct_a, ball, centre, eye, pb, rb, t0, x0, x1, x2, n0, n1, n2,
        scale)
    if not ok or half <= 0.0 or h0 == 0.0:
        return d0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok
    sgn = -1.0 if h0 > 0.0 else 1.0   # uphill
    if (sgn > 0.0 and t0 >= half) or (sgn < 0.0 and t0 <= -half):
        return d0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok
    # --- bracket: t0 (h0) and t1 (h1) of opposite signs, or an end reached uphill
    step = max(step, 1e-9 * scale)
    t1 = t0
    for _ in range(60):
        t1 = min(max(t0 + sgn * step, -half), half)
        d1, h1, m0, m1, m2, C0, C1, C2, D0, D1, D2, ok1 = _ball_at(
            sa, pa, ra, hv, st_a, ct_a, ball, centre, eye, pb, rb, t1, A0, A1, A2,
            n0, n1, n2, scale)
        if not ok1:
            return d0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok
        if (h1 > 0.0) == (h0 > 0.0) and h1 != 0.0:
            t0, d0, h0 = t1, d1, h1
            n0, n1, n2, A0, A1, A2, B0, B1, B2 = m0, m1, m2, C0, C1, C2, D0, D1, D2
            if abs(t1) >= half:   # the end, still uphill: the deepest point is there
                return d0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok
            step *= 2.0
            continue
        break
    else:
        return d0, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok
    # --- the root of h in [t0, t1] (Illinois); keep the deeper end's solution
    best = d0 if d0 >= d1 else d1
    if d1 > d0:
        n0, n1, n2, A0, A1, A2, B0, B1, B2 = m0, m1, m2, C0, C1, C2, D0, D1, D2
    side = 0
    for _ in range(60):
        if abs(t1 - t0) <= 1e-13 * scale:
            break
        t = (t0 * h1 - t1 * h0) / (h1 - h0)
        if not (min(t0, t1) < t < max(t0, t1)):
            t = 0.5 * (t0 + t1)
        d, h, m0, m1, m2, C0, C1, C2, D0, D1, D2, okm = _ball_at(
            sa, pa, ra, hv, st_a, ct_a, ball, centre, eye, pb, rb, t, A0, A1, A2,
            n0, n1, n2, scale)
        if not okm:
            break
        if d >= best:
            best = d
            n0, n1, n2, A0, A1, A2, B0, B1, B2 = m0, m1, m2, C0, C1, C2, D0, D1, D2
        if h == 0.0:
            break
        if (h > 0.0) == (h1 > 0.0):
            t1, h1 = t, h
            if side == -1:
                h0 *= 0.5
            side = -1
        else:
            t0, h0 = t, h
            if side == 1:
                h1 *= 0.5
            side = 1
    return best, n0, n1, n2, A0, A1, A2, B0, B1, B2, True


@njit(**_JIT)
def _surface_from(sa, pa, ra, hv, st_a, ct_a, v0, v1, v2, scale):
    """A world point v projected onto F'_A = 0 along the gradient (Newton): (y, G(v), A's
    outward unit normal at y, ok)."""
    l0, l1, l2 = _to_local(pa, ra, v0, v1, v2)
    F0, g0, g1, g2 = fdo_value(hv, st_a, ct_a, l0, l1, l2)
    for _ in range(30):
        F, g0, g1, g2 = fdo_value(hv, st_a, ct_a, l0, l1, l2)
        gg = g0 * g0 + g1 * g1 + g2 * g2
        if gg <= 0.0:
            return v0, v1, v2, F0, 0.0, 0.0, 1.0, False
        s = F / gg
        step = abs(s) * math.sqrt(gg)
        if step > 0.25 * scale:
            s *= 0.25 * scale / step
        l0, l1, l2 = l0 - s * g0, l1 - s * g1, l2 - s * g2
        if step <= 1e-14 * scale:
            break
    F, g0, g1, g2 = fdo_value(hv, st_a, ct_a, l0, l1, l2)
    y = _to_world(pa, ra, l0, l1, l2)
    w = _rotate(ra, g0, g1, g2)
    u = _unit(-w[0], -w[1], -w[2])
    return y[0], y[1], y[2], F0, u[0], u[1], u[2], True


@njit(**_JIT)
def _smooth_kind(kind):
    return kind == SPHERE or kind == ELLIPSOID or kind == FDO


@njit(**_JIT)
def _cell_out(sa, pa, ra, hv, st_a, ct_a, kb, sb, pb, rb, st_b, ct_b, c0, c1, c2, rho,
              margin):
    """Whether a cell (centre c, radius rho, world) provably holds no point of A within the
    margin of B."""
    l0, l1, l2 = _to_local(pa, ra, c0, c1, c2)
    if fdo_upper(hv, st_a, ct_a, l0, l1, l2, rho) < 0.0:
        return True
    if _smooth_kind(kb):
        return _implicit_upper(kb, sb, pb, rb, hv, st_b, ct_b, c0, c1, c2,
                               rho + margin) < 0.0
    return _sdf(kb, sb, pb, rb, hv, st_b, ct_b, c0, c1, c2)[0] - rho > margin


@njit(**_JIT)
def _score(sa, pa, ra, hv, st_a, ct_a, kb, sb, pb, rb, st_b, ct_b, c0, c1, c2):
    """How deep a leaf's centre is in both (smaller is deeper)."""
    G, g0, g1, g2 = _implicit(FDO, sa, pa, ra, hv, st_a, ct_a, c0, c1, c2)
    da = G / max(math.sqrt(g0 * g0 + g1 * g1 + g2 * g2), 1e-300)
    if _smooth_kind(kb):
        H, h0, h1, h2 = _implicit(kb, sb, pb, rb, hv, st_b, ct_b, c0, c1, c2)
        return -min(da, H / max(math.sqrt(h0 * h0 + h1 * h1 + h2 * h2), 1e-300))
    return _sdf(kb, sb, pb, rb, hv, st_b, ct_b, c0, c1, c2)[0] - min(da, 0.0)


@njit(**_JIT)
def _box_of(kind, size, pos, rot, hv, start, count):
    """World (lo, hi) of a non-plane geom, as 6 numbers."""
    if kind == FDO or kind == HULL:
        lo0 = lo1 = lo2 = 1e300
        hi0 = hi1 = hi2 = -1e300
        if kind == FDO:
            n, first = 8, 0
        else:
            n, first = count, start
        for k in range(n):
            if kind == FDO:
                v0 = hv[start + (k & 1), 0]
                v1 = hv[start + ((k >> 1) & 1), 1]
                v2 = hv[start + ((k >> 2) & 1), 2]
            else:
                v0, v1, v2 = hv[first + k, 0], hv[first + k, 1], hv[first + k, 2]
            w = _to_world(pos, rot, v0, v1, v2)
            lo0, lo1, lo2 = min(lo0, w[0]), min(lo1, w[1]), min(lo2, w[2])
            hi0, hi1, hi2 = max(hi0, w[0]), max(hi1, w[1]), max(hi2, w[2])
        return lo0, lo1, lo2, hi0, hi1, hi2
    e = _stack_array(3, 0, 0)
    for i in range(3):
        r0, r1, r2 = rot[i, 0], rot[i, 1], rot[i, 2]
        if kind == BOX:
            e[i] = abs(r0) * size[0] + abs(r1) * size[1] + abs(r2) * size[2]
        elif kind == ELLIPSOID:
            e[i] = math.sqrt((r0 * size[0]) ** 2 + (r1 * size[1]) ** 2 + (r2 * size[2]) ** 2)
        elif kind == CAPSULE:
            e[i] = abs(r2) * size[1] + size[0]
        elif kind == CYLINDER:
            e[i] = abs(r2) * size[1] + size[0] * math.sqrt(r0 * r0 + r1 * r1)
        else:
            e[i] = size[0]
    return (pos[0] - e[0], pos[1] - e[1], pos[2] - e[2], pos[0] + e[0], pos[1] + e[1],
            pos[2] + e[2])


@njit(**jit.ENTRY)   # (called from Python in the tests: jit.py)
def fdo_collide(size_a, pos_a, rot_a, start_a, count_a,
                kind_b, size_b, pos_b, rot_b, start_b, count_b, hull_vert, margin,
                out_point, out_depth, out_normal, out_feature):
    """Manifold of the FDO A against geom B of any kind (module docstring); the normal
    points from A to B. Returns the point count (0..4)."""
    hv = hull_vert
    a = _box_of(FDO, size_a, pos_a, rot_a, hv, start_a, count_a)
    scale = max(a[3] - a[0], max(a[4] - a[1], a[5] - a[2]))
    lo = _stack_array(3, 0, 0)
    hi = _stack_array(3, 0, 0)
    for i in range(3):
        lo[i], hi[i] = a[i] - margin, a[3 + i] + margin
    if kind_b != PLANE:
        b = _box_of(kind_b, size_b, pos_b, rot_b, hv, start_b, count_b)
        for i in range(3):
            lo[i], hi[i] = max(lo[i], b[i] - margin), min(hi[i], b[3 + i] + margin)
            if lo[i] > hi[i]:
                return 0
    # --- 1. recursive subdivision: depth-first, a stack of (centre, half extents, level)
    stack = _stack_array(STACK, 7, 0)
    leaf = _stack_array(MAX_LEAVES, 5, 0)   # centre, score, cluster taken
    top, nleaf = 1, 0
    for i in range(3):
        stack[0, i] = 0.5 * (lo[i] + hi[i])
        stack[0, 3 + i] = 0.5 * (hi[i] - lo[i])
    stack[0, 6] = 0.0
    while top > 0:
        top -= 1
        c0, c1, c2 = stack[top, 0], stack[top, 1], stack[top, 2]
        e0, e1, e2 = stack[top, 3], stack[top, 4], stack[top, 5]
        level = stack[top, 6]
        rho = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        if _cell_out(size_a, pos_a, rot_a, hv, start_a, count_a, kind_b, size_b, pos_b,
                     rot_b, start_b, count_b, c0, c1, c2, rho, margin):
            continue
        if level >= SUBDIV_DEPTH:
            if nleaf < MAX_LEAVES:
                leaf[nleaf, 0], leaf[nleaf, 1], leaf[nleaf, 2] = c0, c1, c2
                leaf[nleaf, 3] = _score(size_a, pos_a, rot_a, hv, start_a, count_a, kind_b,
                                        size_b, pos_b, rot_b, start_b, count_b, c0, c1, c2)
                leaf[nleaf, 4] = 0.0
                nleaf += 1
            continue
        for k in range(8):
            j = top + k
            stack[j, 0] = c0 + (0.5 if k & 1 else -0.5) * e0
            stack[j, 1] = c1 + (0.5 if k & 2 else -0.5) * e1
            stack[j, 2] = c2 + (0.5 if k & 4 else -0.5) * e2
            stack[j, 3], stack[j, 4], stack[j, 5] = 0.5 * e0, 0.5 * e1, 0.5 * e2
            stack[j, 6] = level + 1.0
        top += 8
    if nleaf == 0:
        return 0
    w0, w1, w2 = hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]
    cell = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2) / (2.0 ** SUBDIV_DEPTH)
    # --- 2. seeds (one per cluster, deepest first) refined by Newton
    cand = _stack_array(MAX_CAND, 9, 0)   # point, depth, normal, id, (unused)
    ncand = 0
    dups = 0
    smooth = _smooth_kind(kind_b)
    for _seed in range(MAX_SEEDS):
        if dups >= 3:   # the seeds keep finding the same points: the rest would too
            break
        best, ib = 1e300, -1
        for i in range(nleaf):
            if leaf[i, 4] == 0.0 and leaf[i, 3] < best:
                best, ib = leaf[i, 3], i
        if ib < 0:
            break
        x0, x1, x2 = leaf[ib, 0], leaf[ib, 1], leaf[ib, 2]
        for i in range(nleaf):
            d = math.sqrt((leaf[i, 0] - x0) ** 2 + (leaf[i, 1] - x1) ** 2
                          + (leaf[i, 2] - x2) ** 2)
            if d <= CLUSTER * cell:
                leaf[i, 4] = 1.0
        if smooth:
            G, g0, g1, g2 = _implicit(FDO, size_a, pos_a, rot_a, hv, start_a, count_a,
                                      x0, x1, x2)
            H, h0, h1, h2 = _implicit(kind_b, size_b, pos_b, rot_b, hv, start_b, count_b,
                                      x0, x1, x2)
            ua = _unit(-g0, -g1, -g2)
            ub = _unit(h0, h1, h2)
            n0, n1, n2 = _unit(ua[0] + ub[0], ua[1] + ub[1], ua[2] + ub[2])
            depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok = _pair_smooth(
                size_a, pos_a, rot_a, hv, start_a, count_a, kind_b, size_b, pos_b, rot_b,
                start_b, count_b, x0, x1, x2, n0, n1, n2, scale)
            p0, p1, p2 = 0.5 * (A0 + B0), 0.5 * (A1 + B1), 0.5 * (A2 + B2)
        else:
            depth, n0, n1, n2, A0, A1, A2, ok = _pair_sdf(
                size_a, pos_a, rot_a, hv, start_a, count_a, kind_b, size_b, pos_b, rot_b,
                start_b, count_b, x0, x1, x2, scale)
            p0, p1, p2 = A0 - 0.5 * depth * n0, A1 - 0.5 * depth * n1, A2 - 0.5 * depth * n2
            side = False
            if kind_b == CYLINDER:   # on the side (the normal across the axis)?
                l0, l1, l2 = _to_local(pos_b, rot_b, A0, A1, A2)
                side = abs(l2) < size_b[1] and (abs(rot_b[0, 2] * n0 + rot_b[1, 2] * n1
                                                    + rot_b[2, 2] * n2) < 0.5 or not ok)
            if kind_b == CAPSULE or side:
                depth, n0, n1, n2, A0, A1, A2, B0, B1, B2, ok = _pair_round(
                    size_a, pos_a, rot_a, hv, start_a, count_a, kind_b, size_b, pos_b,
                    rot_b, x0, x1, x2, n0, n1, n2, scale, cell)
                p0, p1, p2 = 0.5 * (A0 + B0), 0.5 * (A1 + B1), 0.5 * (A2 + B2)
        if not ok or depth <= -margin:
            continue
        before = ncand
        ncand = _add(cand, ncand, p0, p1, p2, depth, n0, n1, n2, pos_a, rot_a, 0, scale)
        if ncand == before:
            dups += 1
    if kind_b == BOX or kind_b == HULL:   # B's corners inside A
        nv = 8 if kind_b == BOX else count_b
        for k in range(nv):
            if kind_b == BOX:
                v = _to_world(pos_b, rot_b, size_b[0] if k & 1 else -size_b[0],
                              size_b[1] if k & 2 else -size_b[1],
                              size_b[2] if k & 4 else -size_b[2])
            else:
                v = _to_world(pos_b, rot_b, hv[start_b + k, 0], hv[start_b + k, 1],
                              hv[start_b + k, 2])
            l0, l1, l2 = _to_local(pos_a, rot_a, v[0], v[1], v[2])
            if fdo_upper(hv, start_a, count_a, l0, l1, l2, margin) < 0.0:
                continue
            y0, y1, y2, Fv, n0, n1, n2, ok = _surface_from(size_a, pos_a, rot_a, hv,
                                                           start_a, count_a, v[0], v[1],
                                                           v[2], scale)
            if not ok:
                continue
            depth = math.sqrt((y0 - v[0]) ** 2 + (y1 - v[1]) ** 2 + (y2 - v[2]) ** 2)
            if Fv < 0.0:
                depth = -depth
            if depth <= -margin:
                continue
            ncand = _add(cand, ncand, 0.5 * (y0 + v[0]), 0.5 * (y1 + v[1]),
                         0.5 * (y2 + v[2]), depth, n0, n1, n2, pos_a, rot_a, 8 + k, scale)
    if ncand == 0:
        return 0
    # --- 3. one normal (the deepest point's), at most 4 points
    ib = 0
    for i in range(1, ncand):
        if cand[i, 3] > cand[ib, 3]:
            ib = i
    nf = (cand[ib, 4], cand[ib, 5], cand[ib, 6])
    o = (cand[ib, 0], cand[ib, 1], cand[ib, 2])
    t1, t2 = _tangents(nf[0], nf[1], nf[2])
    em = _stack_array(5, MAX_CAND, 0)
    k = 0
    for i in range(ncand):
        if cand[i, 4] * nf[0] + cand[i, 5] * nf[1] + cand[i, 6] * nf[2] < JOIN_COS:
            continue
        d0, d1, d2 = cand[i, 0] - o[0], cand[i, 1] - o[1], cand[i, 2] - o[2]
        em[0, k] = d0 * t1[0] + d1 * t1[1] + d2 * t1[2]
        em[1, k] = d0 * t2[0] + d1 * t2[1] + d2 * t2[2]
        em[2, k] = d0 * nf[0] + d1 * nf[1] + d2 * nf[2]
        em[3, k] = cand[i, 3]
        em[4, k] = cand[i, 7]
        k += 1
    return _emit(em, k, o, t1, t2, nf, False, margin, 0, out_point, out_depth, out_normal,
                 out_feature)


@njit(**_JIT)
def _add(cand, ncand, p0, p1, p2, depth, n0, n1, n2, pos_a, rot_a, tag, scale):
    """Append a candidate unless one lies within 1e-6 scale of it; its id: `tag` * 8 + the
    octant of A's frame the point lies in (stable while the same part of A touches)."""
    for i in range(ncand):
        if (abs(cand[i, 0] - p0) + abs(cand[i, 1] - p1) + abs(cand[i, 2] - p2)
                <= 1e-6 * scale):
            return ncand
    if ncand >= MAX_CAND:
        return ncand
    l0, l1, l2 = _to_local(pos_a, rot_a, p0, p1, p2)
    octant = (1 if l0 >= 0.0 else 0) + (2 if l1 >= 0.0 else 0) + (4 if l2 >= 0.0 else 0)
    cand[ncand, 0], cand[ncand, 1], cand[ncand, 2] = p0, p1, p2
    cand[ncand, 3] = depth
    cand[ncand, 4], cand[ncand, 5], cand[ncand, 6] = n0, n1, n2
    cand[ncand, 7] = float(tag * 8 + octant)
    return ncand + 1
