"""Contact manifolds (physics/manifold.py) against closed forms and brute-force numpy references."""
import math

import numpy as np
import pytest

from sharnir.physics import manifold as M
from sharnir.physics.shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, PLANE, SPHERE

I3 = np.eye(3)
NO_HULL = np.zeros((1, 3))


def rot(axis, angle):
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return I3 + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def random_rot(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def outputs():
    return np.zeros((4, 3)), np.zeros(4), np.zeros(3), np.zeros(4, np.int64)


def collide(ka, sa, pa, ra, kb, sb, pb, rb, margin=0.01, hull=NO_HULL, sc_a=(0, 0), sc_b=(0, 0)):
    P, D, N, F = outputs()
    n = M.collide(ka, np.asarray(sa, float), np.asarray(pa, float), np.ascontiguousarray(ra),
                  sc_a[0], sc_a[1], kb, np.asarray(sb, float), np.asarray(pb, float),
                  np.ascontiguousarray(rb), sc_b[0], sc_b[1], hull, margin, P, D, N, F)
    assert n >= 0
    return P[:n].copy(), D[:n].copy(), N.copy(), F[:n].copy()


def box_corners(size, pos, R):
    s = np.array([[(i & 1) * 2 - 1, ((i >> 1) & 1) * 2 - 1, ((i >> 2) & 1) * 2 - 1]
                  for i in range(8)], float)
    return pos + (s * size) @ R.T


def box_sdf(p, size, pos, R):
    """Signed distance of world points p (k, 3) to a box (numpy, independent of the module)."""
    q = np.abs((p - pos) @ R) - size
    out = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
    return out + np.minimum(q.max(axis=-1), 0.0)


def same_set(a, b, tol):
    """Every row of a matches a row of b and vice versa."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    if len(a) != len(b):
        return False
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    return bool((d.min(axis=1) < tol).all() and (d.min(axis=0) < tol).all())


def sphere_dirs(k, rng):
    v = rng.normal(size=(k, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def penetration_brute(ca, cb, rng):
    """Penetration depth of two convex vertex sets: min over directions of the projection
    overlap, dense random sampling then local refinement."""
    def overlap(u):
        return (ca @ u).max() - (cb @ u).min()
    dirs = sphere_dirs(20000, rng)
    ov = (ca @ dirs.T).max(0) - (cb @ dirs.T).min(0)
    u = dirs[np.argmin(ov)]
    best = overlap(u)
    step = 0.05
    for _ in range(400):
        cand = u + step * sphere_dirs(30, rng)
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        vals = (ca @ cand.T).max(0) - (cb @ cand.T).min(0)
        j = np.argmin(vals)
        if vals[j] < best:
            best, u = vals[j], cand[j]
        else:
            step *= 0.8
    return best, u


# ------------------------------------------------------------------ plane

def test_box_resting_on_plane_gives_four_corner_contacts():
    size = np.array([0.4, 0.3, 0.2])
    pos = np.array([1.0, -2.0, 0.2 - 0.003])
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, BOX, size, pos, I3)
    assert len(P) == 4
    np.testing.assert_allclose(N, [0, 0, 1])
    np.testing.assert_allclose(D, 0.003, atol=1e-12)
    low = box_corners(size, pos, I3)
    low = low[low[:, 2] < 0.0]
    expect = low + np.array([0, 0, 0.0015])        # midpoint between corner and plane
    assert same_set(P, expect, 1e-12)
    assert len(set(F.tolist())) == 4


def test_tilted_box_on_plane_gives_its_lowest_corners():
    rng = np.random.default_rng(1)
    for _ in range(20):
        R = random_rot(rng)
        size = rng.uniform(0.1, 0.5, 3)
        pos = np.array([0.3, 0.1, 0.0])
        c = box_corners(size, pos, R)
        pos[2] -= c[:, 2].min() + 0.004            # lowest corner 4 mm deep
        Rp = rot([1, 2, 3], 0.3)                   # a tilted plane through the origin
        c = box_corners(size, pos, R)
        # put everything in the plane's frame: rotate the scene by Rp
        P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], Rp, BOX, size, Rp @ pos, Rp @ R,
                             margin=0.02)
        h = c[:, 2]
        below = h < 0.02
        assert 1 <= len(P) <= 4
        assert max(D) == pytest.approx(0.004, abs=1e-12)
        world = (Rp @ c.T).T
        for p, d in zip(P, D):                      # each point is a corner's midpoint
            cand = world[below]
            err = np.linalg.norm(cand + 0.5 * d * Rp[:, 2] - p, axis=1)
            j = np.argmin(err)
            assert err[j] < 1e-12
            assert d == pytest.approx(-h[below][j], abs=1e-12)
        assert len(P) == min(4, below.sum())


def test_capsule_lying_flat_gives_two_points():
    R = rot([0, 1, 0], math.pi / 2)                # axis along world x
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CAPSULE, [0.1, 0.5, 0],
                         [0.0, 0.0, 0.098], R)
    assert len(P) == 2
    np.testing.assert_allclose(D, 0.002, atol=1e-12)
    assert same_set(P, np.array([[-0.5, 0, -0.001], [0.5, 0, -0.001]]), 1e-12)


def test_cylinder_standing_gives_four_points_on_the_rim():
    r, h = 0.15, 0.3
    R = rot([0, 0, 1], 0.7)
    pos = np.array([0.2, 0.1, h - 0.002])
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [r, h, 0], pos, R)
    assert len(P) == 4
    np.testing.assert_allclose(D, 0.002, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(P[:, :2] - pos[:2], axis=1), r, atol=1e-12)
    np.testing.assert_allclose(P[:, 2], -0.001, atol=1e-12)
    # the four points span a square of side r sqrt 2
    d = np.linalg.norm(P[:, None] - P[None], axis=-1)
    assert d.max() == pytest.approx(2 * r, abs=1e-12)


def test_cylinder_lying_gives_two_points_and_tilted_gives_lowest_rim_point():
    r, h = 0.1, 0.4
    R = rot([1, 0, 0], math.pi / 2)
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [r, h, 0],
                         [0, 0, r - 0.001], R)
    assert len(P) == 2
    np.testing.assert_allclose(D, 0.001, atol=1e-12)
    R = rot([1, 0, 0], 0.5)
    # brute force: lowest point of the rims (dense sampling of both circles)
    ang = np.linspace(0, 2 * np.pi, 200001)
    rim = np.concatenate([np.stack([r * np.cos(ang), r * np.sin(ang), np.full_like(ang, s)], 1)
                          for s in (-h, h)]) @ R.T
    zc = -rim[:, 2].min() - 0.003
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [r, h, 0], [0, 0, zc], R)
    assert len(P) == 1
    assert D[0] == pytest.approx(0.003, abs=1e-9)


def test_ellipsoid_on_plane_matches_sampled_lowest_point():
    rng = np.random.default_rng(2)
    for _ in range(5):
        a = rng.uniform(0.05, 0.1, 3)
        R = random_rot(rng)
        Rp = random_rot(rng)
        u, v = np.meshgrid(np.linspace(0, np.pi, 801), np.linspace(0, 2 * np.pi, 1601))
        pts = np.stack([np.sin(u) * np.cos(v), np.sin(u) * np.sin(v), np.cos(u)], -1)
        pts = (pts.reshape(-1, 3) * a) @ R.T
        c = np.array([0.1, 0.2, 0.05])
        hp = (pts + c) @ Rp[:, 2]
        j = np.argmin(hp)
        P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], Rp, ELLIPSOID, a, c, R, margin=1.0)
        assert len(P) == 1
        np.testing.assert_allclose(N, Rp[:, 2], atol=1e-15)
        assert D[0] == pytest.approx(-hp[j], abs=2e-6)
        low = P[0] - 0.5 * D[0] * N
        assert np.linalg.norm(low - (pts[j] + c)) < 3e-4


def test_hull_on_plane_keeps_deepest_vertex_and_spans_largest_area():
    # an octagonal prism as a hull, lying on its bottom face, slightly tilted
    ang = np.arange(8) * np.pi / 4
    ring = np.stack([0.2 * np.cos(ang), 0.2 * np.sin(ang), np.zeros(8)], 1)
    verts = np.concatenate([ring + [0, 0, -0.1], ring + [0, 0, 0.1]])
    hull = np.concatenate([np.zeros((3, 3)), verts])        # rows 3.. belong to the geom
    R = rot([1, 0.3, 0], 0.004)
    world = verts @ R.T
    pos = np.array([0, 0, -world[:, 2].min() - 0.002])
    P, D, N, F = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, HULL, [0, 0, 0], pos, R,
                         margin=0.01, hull=hull, sc_b=(3, 16))
    world = world + pos
    assert len(P) == 4
    h = world[:, 2]
    assert max(D) == pytest.approx(-h.min(), abs=1e-12)
    ids = F.tolist()
    assert int(np.argmin(h)) in ids
    for p, d, i in zip(P, D, ids):
        assert d == pytest.approx(-h[i], abs=1e-12)
        np.testing.assert_allclose(p, world[i] - [0, 0, 0.5 * h[i]], atol=1e-12)
    # brute force: no other choice of 4 bottom vertices that keeps the deepest spans more area
    from itertools import combinations
    bottom = [i for i in range(16) if h[i] < 0.01]

    def area(idx):
        q = world[list(idx), :2]
        c = q.mean(0)
        q = q[np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))]
        x, y = q[:, 0], q[:, 1]
        return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    best = max(area(c) for c in combinations(bottom, 4) if int(np.argmin(h)) in c)
    assert area(ids) >= 0.75 * best                  # greedy choice, near the optimum
    assert area(ids) == pytest.approx(0.5 * 0.4 * 0.4, rel=1e-3)   # 4 alternate octagon corners


def test_swapped_order_flips_the_normal_and_unknown_pairs_return_minus_one():
    size, pos = [0.4, 0.3, 0.2], [0, 0, 0.19]
    P1, D1, N1, F1 = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, BOX, size, pos, I3)
    P2, D2, N2, F2 = collide(BOX, size, pos, I3, PLANE, [0, 0, 0], [0, 0, 0], I3)
    np.testing.assert_allclose(N2, -N1)
    np.testing.assert_allclose(P2, P1)
    np.testing.assert_allclose(D2, D1)
    P, D, N, F = outputs()
    s = np.array([0.1, 0.2, 0.0])
    for ka, kb in [(BOX, CYLINDER), (BOX, ELLIPSOID), (HULL, HULL), (CAPSULE, BOX)]:
        assert M.collide(ka, s, np.zeros(3), I3, 0, 0, kb, s, np.ones(3), I3, 0, 0, NO_HULL,
                         0.01, P, D, N, F) == -1


# ------------------------------------------------------------------ round shapes

def test_sphere_box_matches_sampled_closest_point():
    rng = np.random.default_rng(3)
    size = np.array([0.3, 0.2, 0.1])
    R = random_rot(rng)
    pos = np.array([0.1, -0.2, 0.3])
    g = np.linspace(-1, 1, 161)
    faces = []
    for ax in range(3):
        o1, o2 = [k for k in range(3) if k != ax]
        U, V = np.meshgrid(g, g)
        for s in (-1, 1):
            f = np.zeros((U.size, 3))
            f[:, ax] = s
            f[:, o1] = U.ravel()
            f[:, o2] = V.ravel()
            faces.append(f)
    surf = (np.concatenate(faces) * size) @ R.T + pos
    for _ in range(10):
        r = rng.uniform(0.05, 0.15)
        c = pos + R @ (rng.uniform(-1.4, 1.4, 3) * size)
        dist = np.linalg.norm(surf - c, axis=1)
        inside = box_sdf(c[None], size, pos, R)[0] < 0
        ref = r + dist.min() if inside else r - dist.min()
        P, D, N, F = collide(SPHERE, [r, 0, 0], c, I3, BOX, size, pos, R, margin=1.0)
        assert len(P) == 1
        assert D[0] == pytest.approx(ref, abs=2e-3 * size.max())
        assert D[0] == pytest.approx(r - box_sdf(c[None], size, pos, R)[0], abs=1e-12)
        # the box-side surface point lies on the box, the sphere-side one on the sphere
        assert abs(box_sdf((P[0] - 0.5 * D[0] * N)[None], size, pos, R)[0]) < 1e-12
        assert abs(np.linalg.norm(P[0] + 0.5 * D[0] * N - c) - r) < 1e-12


def test_capsule_pairs_match_sampled_segment_distance():
    rng = np.random.default_rng(4)
    s = np.linspace(-1, 1, 2001)
    for _ in range(10):
        Ra, Rb = random_rot(rng), random_rot(rng)
        ha, hb = rng.uniform(0.1, 0.4, 2)
        ra, rb = rng.uniform(0.02, 0.1, 2)
        ca, cb = rng.uniform(-0.2, 0.2, 3), rng.uniform(-0.2, 0.2, 3)
        A = ca + np.outer(s * ha, Ra[:, 2])
        B = cb + np.outer(s * hb, Rb[:, 2])
        d2 = ((A[:, None] - B[None]) ** 2).sum(-1)
        i, j = np.unravel_index(np.argmin(d2), d2.shape)
        # refine around the sampled minimum
        ss = np.linspace(s[max(i - 2, 0)], s[min(i + 2, 2000)], 801)
        tt = np.linspace(s[max(j - 2, 0)], s[min(j + 2, 2000)], 801)
        A2 = ca + np.outer(ss * ha, Ra[:, 2])
        B2 = cb + np.outer(tt * hb, Rb[:, 2])
        dist = np.sqrt(((A2[:, None] - B2[None]) ** 2).sum(-1).min())
        P, D, N, F = collide(CAPSULE, [ra, ha, 0], ca, Ra, CAPSULE, [rb, hb, 0], cb, Rb,
                             margin=10.0)
        assert D.max() == pytest.approx(ra + rb - dist, abs=1e-7)
        # and a sphere against B: point-segment distance
        dist_s = np.sqrt(((B - ca) ** 2).sum(-1).min())
        P, D, N, F = collide(SPHERE, [ra, 0, 0], ca, I3, CAPSULE, [rb, hb, 0], cb, Rb,
                             margin=10.0)
        assert D[0] == pytest.approx(ra + rb - dist_s, abs=1e-6)
        assert np.dot(N, cb - ca) > -1e-9 or D[0] > 0


def test_parallel_capsules_give_two_points_at_the_overlap_ends():
    R = rot([0, 1, 0], math.pi / 2)
    P, D, N, F = collide(CAPSULE, [0.05, 0.5, 0], [0, 0, 0], R, CAPSULE, [0.05, 0.3, 0],
                         [0.4, 0, 0.099], R)
    assert len(P) == 2
    np.testing.assert_allclose(N, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(D, 0.001, atol=1e-12)
    assert same_set(P, np.array([[0.1, 0, 0.0495], [0.5, 0, 0.0495]]), 1e-12)
    # crossing at right angles: one point
    P, D, N, F = collide(CAPSULE, [0.05, 0.5, 0], [0, 0, 0], R, CAPSULE, [0.05, 0.3, 0],
                         [0.1, 0.2, 0.099], rot([1, 0, 0], math.pi / 2))
    assert len(P) == 1
    np.testing.assert_allclose(P[0], [0.1, 0.0, 0.0495], atol=1e-12)


# ------------------------------------------------------------------ box-box

def test_box_resting_on_box_gives_four_points_at_the_overlap_rectangle():
    big, small = np.array([1.0, 0.8, 0.5]), np.array([0.3, 0.25, 0.2])
    pos_b = np.array([0.85, -0.1, 0.5 + 0.2 - 0.001])  # hangs over the +x edge
    P, D, N, F = collide(BOX, big, [0, 0, 0], I3, BOX, small, pos_b, I3)
    assert len(P) == 4
    np.testing.assert_allclose(N, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(D, 0.001, atol=1e-12)
    xs, ys = (0.55, 1.0), (-0.35, 0.15)
    expect = np.array([[x, y, 0.5 - 0.0005] for x in xs for y in ys])
    assert same_set(P, expect, 1e-12)
    # the same with the big box on top (reference face from B)
    P, D, N, F = collide(BOX, small, pos_b - [0, 0, 1.4 - 0.002], I3, BOX, big, [0, 0, 0], I3)
    assert len(P) == 4
    np.testing.assert_allclose(N, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(D, 0.001, atol=1e-12)
    assert same_set(P, expect - [0, 0, 0.999], 1e-12)


def test_box_box_edge_edge_crossing_gives_one_point_at_the_crossing():
    ha = np.array([1.0, 0.3, 0.3])                 # long along x, edge up after 45 deg about x
    hb = np.array([0.3, 1.0, 0.3])                 # long along y, edge down after 45 deg about y
    Ra, Rb = rot([1, 0, 0], math.pi / 4), rot([0, 1, 0], math.pi / 4)
    top = 0.3 * math.sqrt(2)
    zb = 2 * top - 0.004
    P, D, N, F = collide(BOX, ha, [0.1, 0, 0], Ra, BOX, hb, [0, 0.2, zb], Rb)
    assert len(P) == 1
    np.testing.assert_allclose(N, [0, 0, 1], atol=1e-12)
    assert D[0] == pytest.approx(0.004, abs=1e-12)
    np.testing.assert_allclose(P[0], [0.0, 0.0, top - 0.002], atol=1e-12)


def test_box_box_depths_and_points_match_brute_force():
    rng = np.random.default_rng(5)
    for trial in range(12):
        ha, hb = rng.uniform(0.2, 0.5, 3), rng.uniform(0.1, 0.4, 3)
        Ra = random_rot(rng) if trial % 2 else I3
        Rb = random_rot(rng)
        ca = np.zeros(3)
        d = sphere_dirs(1, rng)[0]
        # move B along d until the supports overlap by 5 mm along d (bisection)
        lo, hi = 0.0, 3.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            cb_ = box_corners(hb, mid * d, Rb)
            if (box_corners(ha, ca, Ra) @ d).max() - (cb_ @ d).min() > 0.005:
                lo = mid
            else:
                hi = mid
        cb = lo * d
        pen, u = penetration_brute(box_corners(ha, ca, Ra), box_corners(hb, cb, Rb), rng)
        P, D, N, F = collide(BOX, ha, ca, Ra, BOX, hb, cb, Rb, margin=0.0)
        if pen <= 0:
            continue
        assert len(P) >= 1
        # the deepest point's depth is the penetration depth, up to the face bias
        assert D.max() <= pen + 1e-6
        assert D.max() >= pen - 0.05 * pen - 1e-3 * 0.3 - 1e-6
        for p, dd in zip(P, D):
            pa, pb = p + 0.5 * dd * N, p - 0.5 * dd * N
            assert abs(box_sdf(pa[None], ha, ca, Ra)[0]) < 1e-9     # on A's surface
            assert abs(box_sdf(pb[None], hb, cb, Rb)[0]) < 1e-9     # on B's surface


def test_rotating_the_whole_scene_rotates_the_manifold():
    rng = np.random.default_rng(6)
    ha, hb = np.array([0.5, 0.4, 0.2]), np.array([0.2, 0.3, 0.15])
    Ra0, Rb0 = I3, rot([0, 0, 1], 0.6) @ rot([1, 0.3, 0], 0.004)
    ca0, cb0 = np.zeros(3), np.array([0.1, 0.05, 0.35 - 0.003])
    P0, D0, N0, F0 = collide(BOX, ha, ca0, Ra0, BOX, hb, cb0, Rb0)
    assert len(P0) == 4
    for _ in range(5):
        Q = random_rot(rng)
        t = rng.normal(size=3)
        P, D, N, F = collide(BOX, ha, Q @ ca0 + t, Q @ Ra0, BOX, hb, Q @ cb0 + t, Q @ Rb0)
        np.testing.assert_allclose(N, Q @ N0, atol=1e-12)
        assert same_set(P, P0 @ Q.T + t, 1e-10)
        order = [int(np.argmin(np.linalg.norm(P0 @ Q.T + t - p, axis=1))) for p in P]
        np.testing.assert_allclose(D, D0[order], atol=1e-12)
        assert F.tolist() == F0[order].tolist()
        # plane-cylinder too
        Rc = rot([1, 1, 0], 0.3)
        Pc0, Dc0, Nc0, _ = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [0.1, 0.2, 0],
                                   [0, 0, 0.2], Rc)
        Pc, Dc, Nc, _ = collide(PLANE, [0, 0, 0], t, Q, CYLINDER, [0.1, 0.2, 0],
                                Q @ [0, 0, 0.2] + t, Q @ Rc)
        assert same_set(Pc, Pc0 @ Q.T + t, 1e-10)
        np.testing.assert_allclose(np.sort(Dc), np.sort(Dc0), atol=1e-12)


def test_feature_ids_survive_a_tiny_motion():
    ha, hb = np.array([0.5, 0.5, 0.2]), np.array([0.2, 0.3, 0.15])
    cb = np.array([0.1, 0.05, 0.35 - 0.002])
    Rb = rot([0, 0, 1], 0.6)
    P0, D0, N0, F0 = collide(BOX, ha, [0, 0, 0], I3, BOX, hb, cb, Rb)
    assert len(P0) == 4 and len(set(F0.tolist())) == 4
    rng = np.random.default_rng(7)
    for _ in range(10):
        dR = rot(rng.normal(size=3), 1e-4)
        P, D, N, F = collide(BOX, ha, [0, 0, 0], I3, BOX, hb, cb + 1e-4 * rng.normal(size=3),
                             dR @ Rb)
        assert len(P) == 4
        for p, f in zip(P, F):                      # same id -> nearby point
            j = F0.tolist().index(int(f))
            assert np.linalg.norm(p - P0[j]) < 1e-3
    # a box hanging over the edge: clipped points keep their ids too
    cb = np.array([0.55, 0.1, 0.35 - 0.002])
    P0, D0, N0, F0 = collide(BOX, ha, [0, 0, 0], I3, BOX, hb, cb, Rb)
    for _ in range(10):
        P, D, N, F = collide(BOX, ha, [0, 0, 0], I3, BOX, hb, cb + 1e-5 * rng.normal(size=3),
                             rot(rng.normal(size=3), 1e-5) @ Rb)
        assert sorted(F.tolist()) == sorted(F0.tolist())
    # plane-box and standing cylinder
    Pp0, _, _, Fp0 = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [0.1, 0.2, 0],
                             [0, 0, 0.199], I3)
    Pp, _, _, Fp = collide(PLANE, [0, 0, 0], [0, 0, 0], I3, CYLINDER, [0.1, 0.2, 0],
                           [1e-5, 0, 0.199], rot([1, 2, 0], 1e-5))
    assert sorted(Fp.tolist()) == sorted(Fp0.tolist()) and len(Fp) == 4


def test_stacked_equal_boxes_give_four_corners_despite_rounding_noise():
    h = np.array([0.25, 0.25, 0.25])
    rng = np.random.default_rng(8)
    ids = None
    for _ in range(20):
        eps = 1e-14 * rng.normal(size=3)
        P, D, N, F = collide(BOX, h, [0, 0, 0.25], I3, BOX, h, [0, 0, 0.75 - 1e-4] + eps,
                             rot(rng.normal(size=3), 1e-14))
        assert len(P) == 4
        np.testing.assert_allclose(D, 1e-4, atol=1e-12)
        assert same_set(P, np.array([[x, y, 0.5 - 5e-5] for x in (-.25, .25)
                                     for y in (-.25, .25)]), 1e-10)
        ids = sorted(F.tolist()) if ids is None else ids
        assert sorted(F.tolist()) == ids


# ------------------------------------------------------------------ manifold_from_normal

def mfn(ka, sa, pa, ra, kb, sb, pb, rb, normal, depth, point_a, point_b, margin=0.01,
        hull=NO_HULL, sc_a=(0, 0), sc_b=(0, 0)):
    P, D, N, F = outputs()
    n = M.manifold_from_normal(ka, np.asarray(sa, float), np.asarray(pa, float),
                               np.ascontiguousarray(ra), sc_a[0], sc_a[1],
                               kb, np.asarray(sb, float), np.asarray(pb, float),
                               np.ascontiguousarray(rb), sc_b[0], sc_b[1], hull,
                               np.asarray(normal, float), depth, np.asarray(point_a, float),
                               np.asarray(point_b, float), margin, P, D, N, F)
    return P[:n].copy(), D[:n].copy(), N.copy(), F[:n].copy()


def cube_hull(h):
    return np.array([[(i & 1) * 2 - 1, ((i >> 1) & 1) * 2 - 1, ((i >> 2) & 1) * 2 - 1]
                     for i in range(8)], float) * h


def test_general_manifold_of_resting_boxes_and_hulls_matches_the_overlap_rectangle():
    big, small = np.array([1.0, 0.8, 0.5]), np.array([0.3, 0.25, 0.2])
    Rb = rot([0, 0, 1], 0.3)
    pos_b = np.array([0.85, -0.1, 0.7 - 0.001])
    expect = collide(BOX, big, [0, 0, 0], I3, BOX, small, pos_b, Rb)
    assert len(expect[0]) == 4
    pa, pb = np.array([0.9, 0, 0.5]), np.array([0.9, 0, 0.499])
    got = mfn(BOX, big, [0, 0, 0], I3, BOX, small, pos_b, Rb, [0, 0, 1], 0.001, pa, pb)
    assert same_set(got[0], expect[0], 1e-10)
    np.testing.assert_allclose(np.sort(got[1]), np.sort(expect[1]), atol=1e-12)
    # the same boxes as hulls (vertex order scrambled)
    hull = np.concatenate([cube_hull(big), cube_hull(small)[[3, 0, 6, 5, 1, 7, 2, 4]]])
    got = mfn(HULL, [0, 0, 0], [0, 0, 0], I3, HULL, [0, 0, 0], pos_b, Rb, [0, 0, 1], 0.001,
              pa, pb, hull=hull, sc_a=(0, 8), sc_b=(8, 8))
    assert same_set(got[0], expect[0], 1e-10)
    np.testing.assert_allclose(np.sort(got[1]), np.sort(expect[1]), atol=1e-12)


def test_general_manifold_tilted_box_on_box_depths_along_the_normal():
    # B tilted by 0.01 rad about x: its face is still the supporting feature; depths per point
    big, small = np.array([1.0, 0.8, 0.5]), np.array([0.3, 0.25, 0.2])
    Rb = rot([1, 0, 0], 0.01)
    c = box_corners(small, np.zeros(3), Rb)
    pos_b = np.array([0.0, 0.0, 0.5 - c[:, 2].min() - 0.002])
    cw = c + pos_b
    pa, pb = np.array([0, 0, 0.5]), cw[np.argmin(cw[:, 2])]
    P, D, N, F = mfn(BOX, big, [0, 0, 0], I3, BOX, small, pos_b, Rb, [0, 0, 1], 0.002, pa, pb,
                     margin=0.01)
    low = cw[cw[:, 2] < 0.5 + 0.01]
    assert len(P) == 4
    assert same_set(P, np.stack([low[:, 0], low[:, 1], 0.5 * (0.5 + low[:, 2])], 1), 1e-9)
    for p, d in zip(P, D):
        j = np.argmin(np.linalg.norm(low[:, :2] - p[:2], axis=1))
        assert d == pytest.approx(0.5 - low[j, 2], abs=1e-12)


def test_general_manifold_cylinder_standing_on_box_gives_rim_points():
    r, h = 0.2, 0.3
    pos_c = np.array([0.1, 0.0, 0.5 + h - 0.003])
    pa, pb = np.array([0.3, 0, 0.5]), np.array([0.3, 0, 0.497])
    P, D, N, F = mfn(BOX, [1, 1, 0.5], [0, 0, 0], I3, CYLINDER, [r, h, 0], pos_c, I3,
                     [0, 0, 1], 0.003, pa, pb)
    assert len(P) == 4
    np.testing.assert_allclose(D, 0.003, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(P[:, :2] - pos_c[:2], axis=1), r, atol=1e-12)
    # half over the box edge at x = 1: only rim points with x <= 1 survive the clip
    pos_c = np.array([1.0, 0.0, 0.5 + h - 0.003])
    P, D, N, F = mfn(BOX, [1, 1, 0.5], [0, 0, 0], I3, CYLINDER, [r, h, 0], pos_c, I3,
                     [0, 0, 1], 0.003, pa, pb)
    assert 2 <= len(P) <= 4
    assert (P[:, 0] <= 1.0 + 1e-12).all()
    assert np.isclose(P[:, 0], 1.0).sum() == 2        # where the rim crosses the box edge
    # lying on its side: two points, the ends of the side segment
    R = rot([1, 0, 0], math.pi / 2)
    pos_c = np.array([0.0, 0.0, 0.5 + r - 0.003])
    P, D, N, F = mfn(BOX, [1, 1, 0.5], [0, 0, 0], I3, CYLINDER, [r, h, 0], pos_c, R,
                     [0, 0, 1], 0.003, pa, pb)
    assert len(P) == 2
    assert same_set(P[:, :2], np.array([[0, -h], [0, h]]), 1e-12)
    np.testing.assert_allclose(D, 0.003, atol=1e-12)


def test_general_manifold_of_a_round_shape_is_the_single_given_contact():
    pa, pb = np.array([0.0, 0, 0.5]), np.array([0.0, 0, 0.496])
    P, D, N, F = mfn(BOX, [1, 1, 0.5], [0, 0, 0], I3, ELLIPSOID, [0.1, 0.1, 0.2],
                     [0, 0, 0.696], I3, [0, 0, 1], 0.004, pa, pb)
    assert len(P) == 1
    np.testing.assert_allclose(P[0], [0, 0, 0.498])
    assert D[0] == 0.004
    P, D, N, F = mfn(BOX, [1, 1, 0.5], [0, 0, 0], I3, SPHERE, [0.1, 0, 0],
                     [0, 0, 0.6], I3, [0, 0, 1], -0.02, pa, pb, margin=0.01)
    assert len(P) == 0
