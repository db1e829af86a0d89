"""Convex support mappings, bounding boxes and the convex pair contact (physics/support.py,
physics/convex.py), checked against closed forms and brute-force numpy references.

The references never call the code under test: support points against dense samples of the
surface, ellipsoid pairs against min over unit n of h_A(n) + h_B(-n) with h from the
ellipsoid's quadric (dense sampling of n plus local refinement), polytope pairs against
separating-axis minima or edge-by-edge distance searches.
"""
import math

import numpy as np
import pytest
from conftest import random_rotation

from sharnir.physics.convex import convex_contact
from sharnir.physics.shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, PLANE, SPHERE
from sharnir.physics.support import aabb, support

NO_HULL = np.zeros((1, 3))
CUBE_SIGNS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def rotation_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def fibonacci_sphere(m):
    i = np.arange(m) + 0.5
    z = 1.0 - 2.0 * i / m
    phi = math.pi * (1.0 + 5 ** 0.5) * i
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def surface_samples(kind, size, hull=None, m=20000):
    """Points of the shape's surface in its local frame, by parametrisation."""
    u = fibonacci_sphere(m)
    if kind == SPHERE:
        return size[0] * u
    if kind == ELLIPSOID:
        return u * size
    if kind == BOX:
        # project the sphere samples onto the cube surface, plus the corners
        p = u / np.abs(u).max(axis=1, keepdims=True)
        return np.vstack([p * size, CUBE_SIGNS * size])
    r, h = size[0], size[1]
    t = np.linspace(0.0, 2.0 * math.pi, 721)
    z = np.linspace(-h, h, 201)
    tt, zz = np.meshgrid(t, z)
    side = np.stack([r * np.cos(tt).ravel(), r * np.sin(tt).ravel(), zz.ravel()], axis=1)
    if kind == CAPSULE:
        caps = r * u + np.where(u[:, 2:3] >= 0.0, h, -h) * np.array([0.0, 0.0, 1.0])
        return np.vstack([side, caps])
    if kind == CYLINDER:
        rr = np.linspace(0.0, r, 60)
        rg, tg = np.meshgrid(rr, t)
        disk = np.stack([(rg * np.cos(tg)).ravel(), (rg * np.sin(tg)).ravel()], axis=1)
        top = np.hstack([disk, np.full((len(disk), 1), h)])
        bottom = np.hstack([disk, np.full((len(disk), 1), -h)])
        return np.vstack([side, top, bottom])
    assert kind == HULL
    return hull


def inside_measure(kind, size, p, hull_faces=None):
    """> 0 outside, <= 0 inside (in metres, roughly the distance to the surface)."""
    if kind == SPHERE:
        return np.linalg.norm(p) - size[0]
    if kind == ELLIPSOID:
        return (np.sqrt(np.sum((p / size) ** 2)) - 1.0) * size.min()
    if kind == BOX:
        return np.max(np.abs(p) - size)
    r, h = size[0], size[1]
    if kind == CAPSULE:
        z = np.clip(p[2], -h, h)
        return np.linalg.norm(p - np.array([0.0, 0.0, z])) - r
    if kind == CYLINDER:
        return max(math.hypot(p[0], p[1]) - r, abs(p[2]) - h)
    normals, offsets = hull_faces
    return np.max(normals @ p - offsets)


# an irregular convex hull: a cube with two corners cut off (vertices and face planes)
def cut_cube(a):
    keep = [s for s in CUBE_SIGNS if not (s == 1).all() and not (s == -1).all()]
    verts = [a * np.array(s) for s in keep]
    for corner in (np.ones(3), -np.ones(3)):
        for axis in range(3):
            v = corner * a.copy()
            v[axis] *= 0.4
            verts.append(v)
    verts = np.array(verts)
    normals = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3)) / a, -np.ones((1, 3)) / a])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    offsets = np.max(verts @ normals.T, axis=0)
    return verts, (normals, offsets)


HULL_SIZE = np.array([0.09, 0.06, 0.05])
HULL_VERTS, HULL_FACES = cut_cube(HULL_SIZE)
# the hull sits in a shared vertex array after some other geom's rows
HULL_ARRAY = np.vstack([np.full((5, 3), 7.0), HULL_VERTS])
HULL_START, HULL_COUNT = 5, len(HULL_VERTS)

SHAPES = [
    (BOX, np.array([0.1, 0.06, 0.04])),
    (SPHERE, np.array([0.07, 0.0, 0.0])),
    (CAPSULE, np.array([0.04, 0.08, 0.0])),
    (CYLINDER, np.array([0.05, 0.07, 0.0])),
    (ELLIPSOID, np.array([0.1, 0.07, 0.05])),
    (HULL, np.zeros(3)),
]


def geom_args(kind, size, pos, rot):
    if kind == HULL:
        return kind, size, pos, rot, HULL_START, HULL_COUNT
    return kind, size, pos, rot, 0, 0


def contact(a, b, guess=None):
    out = np.zeros(9)
    g = np.zeros(3) if guess is None else np.asarray(guess, float)
    depth = convex_contact(*a, *b, HULL_ARRAY, g, out)
    return depth, out[0:3].copy(), out[3:6].copy(), out[6:9].copy()


# ----------------------------------------------------------------------- support / AABB

@pytest.mark.parametrize("kind,size", SHAPES, ids=lambda x: str(x) if np.isscalar(x) else "")
def test_support_point_is_the_farthest_surface_point_along_the_direction(kind, size):
    rng = np.random.default_rng(1)
    local = surface_samples(kind, size, HULL_VERTS)
    extent = np.abs(local).max()
    for _ in range(20):
        rot, pos = random_rotation(rng), rng.normal(size=3)
        d = rng.normal(size=3) * 10.0 ** rng.uniform(-3, 2)
        world = pos + local @ rot.T
        s = np.array(support(kind, size, pos, rot, HULL_ARRAY, HULL_START, HULL_COUNT, *d))
        best = (world @ d).max()
        dn = np.linalg.norm(d)
        # at least as far as every sample, and not farther than the sampling can miss
        assert s @ d >= best - 1e-12 * dn
        assert s @ d <= best + 2e-3 * extent * dn
        # and a point of the shape itself
        assert inside_measure(kind, size, rot.T @ (s - pos), HULL_FACES) <= 1e-12


@pytest.mark.parametrize("kind,size", SHAPES, ids=lambda x: str(x) if np.isscalar(x) else "")
def test_support_along_zero_or_tiny_direction_is_a_finite_point_of_the_shape(kind, size):
    rot, pos = random_rotation(np.random.default_rng(2)), np.array([0.3, -0.2, 1.0])
    for d in ((0.0, 0.0, 0.0), (1e-310, 0.0, -1e-310), (3e-200, 1e-200, 0.0)):
        s = np.array(support(kind, size, pos, rot, HULL_ARRAY, HULL_START, HULL_COUNT, *d))
        assert np.isfinite(s).all()
        assert inside_measure(kind, size, rot.T @ (s - pos), HULL_FACES) <= 1e-12


def test_ellipsoid_support_matches_the_closed_form_gradient_of_its_quadric():
    # x = c + R A^2 R^T d / sqrt(d^T R A^2 R^T d) is where the quadric's normal is d
    rng = np.random.default_rng(3)
    size = np.array([0.1, 0.05, 0.07])
    for _ in range(10):
        rot, pos, d = random_rotation(rng), rng.normal(size=3), rng.normal(size=3)
        s = np.array(support(ELLIPSOID, size, pos, rot, NO_HULL, 0, 0, *d))
        q = rot @ np.diag(size ** -2.0) @ rot.T
        assert (s - pos) @ q @ (s - pos) == pytest.approx(1.0, abs=1e-12)
        normal = q @ (s - pos)
        assert np.allclose(normal / np.linalg.norm(normal), d / np.linalg.norm(d), atol=1e-12)


@pytest.mark.parametrize("kind,size", SHAPES, ids=lambda x: str(x) if np.isscalar(x) else "")
def test_aabb_contains_every_surface_point_and_touches_the_extremes(kind, size):
    rng = np.random.default_rng(4)
    local = surface_samples(kind, size, HULL_VERTS)
    extent = np.abs(local).max()
    out = np.zeros(6)
    for _ in range(10):
        rot, pos = random_rotation(rng), rng.normal(size=3)
        world = pos + local @ rot.T
        aabb(kind, size, pos, rot, HULL_ARRAY, HULL_START, HULL_COUNT, out)
        assert (world.min(axis=0) >= out[:3] - 1e-12).all()
        assert (world.max(axis=0) <= out[3:] + 1e-12).all()
        assert np.allclose(world.min(axis=0), out[:3], atol=2e-3 * extent)
        assert np.allclose(world.max(axis=0), out[3:], atol=2e-3 * extent)


def test_plane_has_an_infinite_aabb_and_no_convex_contact():
    out = np.zeros(6)
    aabb(PLANE, np.zeros(3), np.zeros(3), np.eye(3), NO_HULL, 0, 0, out)
    assert (out[:3] == -np.inf).all() and (out[3:] == np.inf).all()
    depth, *_ = contact(geom_args(PLANE, np.zeros(3), np.zeros(3), np.eye(3)),
                        geom_args(SPHERE, np.array([0.1, 0, 0]), np.zeros(3), np.eye(3)))
    assert depth == -np.inf


# ----------------------------------------------------------------------- references

def ellipsoid_h(pos, rot, size):
    """Support function of {x: (x - c)^T Q (x - c) <= 1}, Q = R A^-2 R^T: h(n) = c.n +
    sqrt(n^T Q^-1 n), vectorised over rows of n."""
    qinv = np.linalg.inv(rot @ np.diag(size ** -2.0) @ rot.T)
    return lambda n: n @ pos + np.sqrt(np.einsum("ij,jk,ik->i", n, qinv, n))


def refine_min_on_sphere(f, n0, step=0.05, levels=80):
    """Pattern search of f over unit vectors around n0: a 5 x 5 grid in the tangent plane,
    re-centred on its best point, shrunk when the centre wins."""
    n = n0 / np.linalg.norm(n0)
    fn = f(n[None])[0]
    grid = np.array([(i, j) for i in range(-2, 3) for j in range(-2, 3)], float) / 2.0
    for _ in range(400):
        t1 = np.cross(n, [1.0, 0, 0] if abs(n[0]) < 0.9 else [0, 1.0, 0])
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        cand = n + step * (grid[:, :1] * t1 + grid[:, 1:] * t2)
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        vals = f(cand)
        k = np.argmin(vals)
        if vals[k] < fn:
            n, fn = cand[k], vals[k]
        else:
            step *= 0.5
            levels -= 1
            if levels == 0:
                break
    return fn, n


def brute_force_min(f, seeds=8):
    """min over unit n of f(n): dense sampling, then refinement from the best few samples."""
    u = fibonacci_sphere(40000)
    vals = f(u)
    best = None
    for k in np.argsort(vals)[:seeds]:
        fn, n = refine_min_on_sphere(f, u[k])
        if best is None or fn < best[0]:
            best = (fn, n)
    return best


def random_ellipsoid_pair(rng, target):
    """Two ellipsoids (semi-axes 0.05-0.1 m, random orientations) placed along a random
    direction u so that their extents along u overlap by `target` (< 0: a gap)."""
    sa, sb = rng.uniform(0.05, 0.1, 3), rng.uniform(0.05, 0.1, 3)
    ra, rb = random_rotation(rng), random_rotation(rng)
    pa = rng.normal(size=3) * 0.3
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    reach = math.sqrt(np.sum((u @ ra * sa) ** 2)) + math.sqrt(np.sum((u @ rb * sb) ** 2))
    return sa, ra, pa, sb, rb, pa + (reach - target) * u


def angle(a, b):
    return math.atan2(np.linalg.norm(np.cross(a, b)), a @ b)


# ----------------------------------------------------------------------- smooth pairs

def test_sphere_sphere_depth_is_radius_sum_minus_centre_distance():
    rng = np.random.default_rng(5)
    for _ in range(20):
        ra, rb = rng.uniform(0.02, 0.1, 2)
        pa = rng.normal(size=3)
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        dist = (ra + rb) * rng.uniform(0.5, 1.5)
        depth, n, p_a, p_b = contact(geom_args(SPHERE, np.array([ra, 0, 0]), pa, np.eye(3)),
                                     geom_args(SPHERE, np.array([rb, 0, 0]), pa + dist * u,
                                               random_rotation(rng)))
        assert depth == pytest.approx(ra + rb - dist, abs=1e-14)
        assert np.allclose(n, u, atol=1e-12)
        assert np.allclose(p_a, pa + ra * u) and np.allclose(p_b, pa + dist * u - rb * u)


@pytest.mark.parametrize("seed", range(6))
def test_ellipsoid_pair_depth_and_normal_match_brute_force_minimum_of_support_difference(seed):
    rng = np.random.default_rng(100 + seed)
    # overlaps up to 30 % of the smaller size, gaps up to 2 cm
    for target in (-0.02, -0.004, 0.0, 0.003, 0.012, 0.03):
        sa, ra, pa, sb, rb, pb = random_ellipsoid_pair(rng, target)
        ha, hb = ellipsoid_h(pa, ra, sa), ellipsoid_h(pb, rb, sb)
        ref_depth, ref_n = brute_force_min(lambda n, ha=ha, hb=hb: ha(n) + hb(-n))
        depth, n, p_a, p_b = contact(geom_args(ELLIPSOID, sa, pa, ra),
                                     geom_args(ELLIPSOID, sb, pb, rb))
        assert depth == pytest.approx(ref_depth, abs=1e-7)
        assert angle(n, ref_n) < 1e-5
        # surface points: on their ellipsoids, supporting along +-n, apart by depth n
        assert (p_a - pa) @ np.linalg.inv(ra @ np.diag(sa ** 2) @ ra.T) @ (p_a - pa) \
            == pytest.approx(1.0, abs=1e-9)
        assert (p_b - pb) @ np.linalg.inv(rb @ np.diag(sb ** 2) @ rb.T) @ (p_b - pb) \
            == pytest.approx(1.0, abs=1e-9)
        assert np.allclose(p_a - p_b, depth * n, atol=1e-9)


def test_sphere_ellipsoid_pair_matches_brute_force_in_both_orders():
    rng = np.random.default_rng(7)
    for _ in range(6):
        r = rng.uniform(0.05, 0.1)
        se, re = rng.uniform(0.05, 0.1, 3), random_rotation(rng)
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        pe, ps = np.zeros(3), u * rng.uniform(0.08, 0.2)
        hs = ellipsoid_h(ps, np.eye(3), np.full(3, r))
        he = ellipsoid_h(pe, re, se)
        ref_depth, ref_n = brute_force_min(lambda n, he=he, hs=hs: he(n) + hs(-n))
        sphere = geom_args(SPHERE, np.array([r, 0, 0]), ps, random_rotation(rng))
        ell = geom_args(ELLIPSOID, se, pe, re)
        depth, n, _, _ = contact(ell, sphere)
        assert depth == pytest.approx(ref_depth, abs=1e-7) and angle(n, ref_n) < 1e-5
        depth, n, _, _ = contact(sphere, ell)
        assert depth == pytest.approx(ref_depth, abs=1e-7) and angle(n, -ref_n) < 1e-5


def test_warm_started_ellipsoid_contact_equals_cold_contact():
    rng = np.random.default_rng(8)
    for target in (-0.01, 0.0, 0.01, 0.025):
        sa, ra, pa, sb, rb, pb = random_ellipsoid_pair(rng, target)
        a, b = geom_args(ELLIPSOID, sa, pa, ra), geom_args(ELLIPSOID, sb, pb, rb)
        cold = contact(a, b)
        for tilt in (1e-3, 0.05, 0.3):
            guess = cold[1] + tilt * rng.normal(size=3)
            warm = contact(a, b, guess / np.linalg.norm(guess))
            assert warm[0] == pytest.approx(cold[0], abs=1e-10)
            assert angle(warm[1], cold[1]) < 1e-7
        # even a guess pointing the wrong way
        warm = contact(a, b, -cold[1])
        assert warm[0] == pytest.approx(cold[0], abs=1e-10)


# ----------------------------------------------------------------------- polytopes

def box_point_distance(size, pos, rot, p):
    """Signed distance from p to a box (negative inside)."""
    q = np.abs(rot.T @ (p - pos)) - size
    outside = np.linalg.norm(np.maximum(q, 0.0))
    return outside if outside > 0.0 else q.max()


def test_sphere_box_depth_matches_the_closest_point_of_the_box():
    rng = np.random.default_rng(9)
    size = np.array([0.1, 0.06, 0.04])
    for i in range(30):
        rot = random_rotation(rng)
        r = rng.uniform(0.02, 0.06)
        local = rng.uniform(-1.4, 1.4, 3) * size
        if i < 5:
            local = rng.uniform(-0.5, 0.5, 3) * size       # centre inside the box
        c = rot @ local
        depth, n, p_box, p_sph = contact(geom_args(BOX, size, np.zeros(3), rot),
                                         geom_args(SPHERE, np.array([r, 0, 0]), c, np.eye(3)))
        assert depth == pytest.approx(r - box_point_distance(size, np.zeros(3), rot, c),
                                      abs=1e-6)
        assert np.allclose(p_sph, c - r * n, atol=1e-9)
        assert abs(box_point_distance(size, np.zeros(3), rot, p_box)) < 1e-6


@pytest.mark.parametrize("hull_b", [False, True])
def test_box_box_face_contact_depth_is_the_overlap_of_the_stacked_faces(hull_b):
    rng = np.random.default_rng(10)
    sa = np.array([0.2, 0.15, 0.05])
    sb = HULL_SIZE if hull_b else np.array([0.05, 0.04, 0.03])
    for gap in (-0.03, -0.01, -1e-4, 0.0, 1e-4, 0.02):
        frame = random_rotation(rng)
        spin = rotation_z(rng.uniform(0, 2 * math.pi))
        offset = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08), sa[2] + sb[2] + gap])
        pb = frame @ offset
        kb = HULL if hull_b else BOX
        depth, n, p_a, p_b = contact(geom_args(BOX, sa, np.zeros(3), frame),
                                     geom_args(kb, sb, pb, frame @ spin))
        assert depth == pytest.approx(-gap, abs=1e-9)
        assert angle(n, frame[:, 2]) < 1e-7
        assert np.allclose(p_a - p_b, depth * n, atol=1e-9)


def sat_depth(va, vb, axes):
    """Overlap depth of two polytopes by the separating axis theorem: min over the candidate
    axes (both signs) of max_a n.a - min_b n.b."""
    best = np.inf
    for n in axes:
        ln = np.linalg.norm(n)
        if ln < 1e-9:
            continue
        n = n / ln
        for m in (n, -n):
            best = min(best, (va @ m).max() - (vb @ m).min())
    return best


def box_edges(rot):
    return [rot[:, i] for i in range(3)]


@pytest.mark.parametrize("hull_a", [False, True])
def test_overlapping_polytopes_depth_matches_separating_axis_minimum(hull_a):
    rng = np.random.default_rng(11)
    sb = np.array([0.07, 0.05, 0.03])
    checked = 0
    while checked < 40:
        ra, rb = random_rotation(rng), random_rotation(rng)
        pb = rng.normal(size=3) * 0.07
        if hull_a:
            va_local, normals_a = HULL_VERTS, list(HULL_FACES[0])
            edges_a = [HULL_VERTS[i] - HULL_VERTS[j] for i in range(len(HULL_VERTS))
                       for j in range(i)]
            a = geom_args(HULL, np.zeros(3), np.zeros(3), ra)
        else:
            sa = np.array([0.1, 0.06, 0.04])
            va_local, normals_a, edges_a = CUBE_SIGNS * sa, list(np.eye(3)), list(np.eye(3))
            a = geom_args(BOX, sa, np.zeros(3), ra)
        va, vb = va_local @ ra.T, pb + (CUBE_SIGNS * sb) @ rb.T
        axes = ([ra @ m for m in normals_a] + box_edges(rb)
                + [np.cross(ra @ e, f) for e in edges_a for f in box_edges(rb)])
        ref = sat_depth(va, vb, axes)
        if not 0.0 < ref < 0.03:
            continue
        checked += 1
        depth, n, _, _ = contact(a, geom_args(BOX, sb, pb, rb))
        assert depth == pytest.approx(ref, abs=1e-6)
        # the normal achieves that depth
        assert (va @ n).max() - (vb @ n).min() == pytest.approx(ref, abs=1e-6)


def edge_box_distance(p, q, size, pos, rot):
    """min over the segment pq of the distance to a box (convex in the parameter: ternary
    search)."""
    lo, hi = 0.0, 1.0
    f = lambda t: box_point_distance(size, pos, rot, p + t * (q - p))
    for _ in range(100):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) < f(m2):
            hi = m2
        else:
            lo = m1
    return min(f(0.0), f(1.0), f(0.5 * (lo + hi)))


def box_box_distance(sa, pa, ra, sb, pb, rb):
    """Distance between disjoint boxes: the closest pair always has a point on an edge of
    one box, so the minimum over every edge of one box against the other box."""
    best = np.inf
    for s1, p1, r1, s2, p2, r2 in ((sa, pa, ra, sb, pb, rb), (sb, pb, rb, sa, pa, ra)):
        v = p1 + (CUBE_SIGNS * s1) @ r1.T
        for i in range(8):
            for j in range(i):
                if np.count_nonzero(CUBE_SIGNS[i] != CUBE_SIGNS[j]) == 1:
                    best = min(best, edge_box_distance(v[i], v[j], s2, p2, r2))
    return best


def test_separated_boxes_depth_is_minus_their_distance():
    rng = np.random.default_rng(12)
    sa, sb = np.array([0.1, 0.06, 0.04]), np.array([0.07, 0.05, 0.03])
    checked = 0
    while checked < 12:
        ra, rb = random_rotation(rng), random_rotation(rng)
        pb = rng.normal(size=3) * 0.12
        va, vb = (CUBE_SIGNS * sa) @ ra.T, pb + (CUBE_SIGNS * sb) @ rb.T
        axes = box_edges(ra) + box_edges(rb) + [np.cross(e, f) for e in box_edges(ra)
                                                for f in box_edges(rb)]
        if sat_depth(va, vb, axes) > -1e-3:
            continue            # overlapping or barely apart
        checked += 1
        ref = box_box_distance(sa, np.zeros(3), ra, sb, pb, rb)
        depth, _, p_a, p_b = contact(geom_args(BOX, sa, np.zeros(3), ra),
                                     geom_args(BOX, sb, pb, rb))
        assert depth == pytest.approx(-ref, abs=1e-6)
        assert np.linalg.norm(p_b - p_a) == pytest.approx(ref, abs=1e-6)
        assert abs(box_point_distance(sa, np.zeros(3), ra, p_a)) < 1e-6
        assert abs(box_point_distance(sb, pb, rb, p_b)) < 1e-6


def test_warm_started_box_contact_equals_cold_contact():
    rng = np.random.default_rng(13)
    sa, sb = np.array([0.1, 0.06, 0.04]), np.array([0.07, 0.05, 0.03])
    for _ in range(20):
        ra, rb = random_rotation(rng), random_rotation(rng)
        pb = rng.normal(size=3) * 0.1
        a, b = geom_args(BOX, sa, np.zeros(3), ra), geom_args(BOX, sb, pb, rb)
        cold = contact(a, b)
        guess = cold[1] + 0.05 * rng.normal(size=3)
        warm = contact(a, b, guess / np.linalg.norm(guess))
        assert warm[0] == pytest.approx(cold[0], abs=1e-9)


# ----------------------------------------------------------------------- rounded shapes

def segment_distance(p1, q1, p2, q2):
    """Distance between segments by dense sampling plus ternary refinement on one of them."""
    def to_seg2(x):
        e = q2 - p2
        t = np.clip((x - p2) @ e / (e @ e), 0.0, 1.0)
        return np.linalg.norm(x - p2 - t * e)
    lo, hi = 0.0, 1.0
    f = lambda t: to_seg2(p1 + t * (q1 - p1))
    for _ in range(100):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) < f(m2):
            hi = m2
        else:
            lo = m1
    return min(f(0.0), f(1.0), f(0.5 * (lo + hi)))


def test_capsule_pair_depth_is_radius_sum_minus_segment_distance():
    rng = np.random.default_rng(14)
    for _ in range(20):
        ra, rb = random_rotation(rng), random_rotation(rng)
        sa, sb = np.array([0.04, 0.08, 0]), np.array([0.03, 0.1, 0])
        pb = rng.normal(size=3) * 0.08
        ref = segment_distance(-sa[1] * ra[:, 2], sa[1] * ra[:, 2],
                               pb - sb[1] * rb[:, 2], pb + sb[1] * rb[:, 2])
        if ref < 0.005:
            continue            # segments (nearly) crossing: not this closed form's case
        depth, *_ = contact(geom_args(CAPSULE, sa, np.zeros(3), ra),
                                     geom_args(CAPSULE, sb, pb, rb))
        assert depth == pytest.approx(sa[0] + sb[0] - ref, abs=1e-8)


def test_ellipsoid_resting_on_box_face_has_depth_of_its_lowest_point():
    # ellipsoid over a box's top face: depth = box top - (centre z - half height on z)
    rng = np.random.default_rng(15)
    size_box = np.array([0.5, 0.5, 0.1])
    for gap in (-0.02, -0.005, 0.0, 0.004, 0.02):
        se, re = rng.uniform(0.05, 0.1, 3), random_rotation(rng)
        half_z = math.sqrt(np.sum((re[2] * se) ** 2))
        pe = np.array([rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), 0.1 + half_z + gap])
        for guess in (None, (0.0, 0.0, 1.0)):
            depth, n, _, _ = contact(geom_args(BOX, size_box, np.zeros(3), np.eye(3)),
                                         geom_args(ELLIPSOID, se, pe, re), guess)
            assert depth == pytest.approx(-gap, abs=1e-7)
            assert angle(n, np.array([0.0, 0.0, 1.0])) < 1e-6


def test_cylinder_standing_on_box_has_flat_face_depth():
    for gap in (-0.02, -0.002, 0.001, 0.03):
        size_cyl = np.array([0.05, 0.07, 0.0])
        pc = np.array([0.1, -0.05, 0.1 + 0.07 + gap])
        depth, n, _, _ = contact(geom_args(BOX, np.array([0.5, 0.5, 0.1]), np.zeros(3), np.eye(3)),
                                 geom_args(CYLINDER, size_cyl, pc, np.eye(3)))
        assert depth == pytest.approx(-gap, abs=1e-7)
        assert angle(n, np.array([0.0, 0.0, 1.0])) < 1e-6


# ----------------------------------------------------------------------- degenerate input

@pytest.mark.parametrize("ka,sa", SHAPES, ids=lambda x: str(x) if np.isscalar(x) else "")
def test_coincident_centres_give_a_unit_normal_and_positive_depth_for_every_pair(ka, sa):
    rng = np.random.default_rng(16)
    for kb, sb in SHAPES:
        for rot_b in (np.eye(3), random_rotation(rng)):
            for guess in (None, (0.0, 1.0, 0.0)):
                depth, n, p_a, p_b = contact(geom_args(ka, sa, np.ones(3), np.eye(3)),
                                             geom_args(kb, sb, np.ones(3), rot_b), guess)
                assert np.isfinite(depth) and depth > 0.0
                assert np.isfinite(p_a).all() and np.isfinite(p_b).all()
                assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)


def test_touching_and_identical_boxes_give_finite_results():
    s = np.array([0.1, 0.1, 0.1])
    # exactly touching faces, edges and corners
    for offset in ((0.2, 0.0, 0.0), (0.2, 0.2, 0.0), (0.2, 0.2, 0.2), (0.2, 0.05, 0.0)):
        depth, n, _, _ = contact(geom_args(BOX, s, np.zeros(3), np.eye(3)),
                                     geom_args(BOX, s, np.array(offset), np.eye(3)))
        assert abs(depth) < 1e-9
        assert np.isfinite(n).all() and np.linalg.norm(n) == pytest.approx(1.0)
        # n separates: the boxes' projections meet
        va, vb = CUBE_SIGNS * s, np.array(offset) + CUBE_SIGNS * s
        assert (va @ n).max() - (vb @ n).min() == pytest.approx(0.0, abs=1e-9)
    # the same box twice: depth = its thinnest width
    depth, n, _, _ = contact(geom_args(BOX, np.array([0.1, 0.2, 0.05]), np.zeros(3), np.eye(3)),
                             geom_args(BOX, np.array([0.1, 0.2, 0.05]), np.zeros(3), np.eye(3)))
    assert depth == pytest.approx(0.1, abs=1e-9)
    assert abs(n[2]) == pytest.approx(1.0, abs=1e-9)
