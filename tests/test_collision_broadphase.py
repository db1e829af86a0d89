"""Broad phase against a brute-force all-pairs check written here in plain numpy."""
import numpy as np
import pytest

from sharnir.physics.broadphase import (
    SMALL_SCENE,
    cached_broadphase,
    find_pairs,
    make_broadphase_work,
    make_pair_cache,
)

PLANE, BOX = 5, 0


def brute_pairs(aabb, body, dynamic, group, mask, excluded, kind, plane):
    """Every pair (a < b) the rules allow, by testing all n^2 pairs; plane reach by the min of
    n . x - d over the box's eight corners."""
    nbody = len(dynamic)
    lo, hi = aabb[:, :3], aabb[:, 3:]
    ok = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    is_plane = kind == PLANE
    ok[is_plane, :] = False
    ok[:, is_plane] = False
    corners = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    for p in np.nonzero(is_plane)[0]:
        pts = np.where(corners[None, :, :] == 0, lo[:, None, :], hi[:, None, :])  # (n, 8, 3)
        reach = (pts @ plane[p, :3] - plane[p, 3]).min(axis=1) <= 0.0
        row = reach & ~is_plane & dynamic[body]
        ok[p, :] = row
        ok[:, p] = row
    ok &= body[:, None] != body[None, :]
    ok &= dynamic[body][:, None] | dynamic[body][None, :]
    ok &= (group[:, None] & mask[None, :]) != 0
    ok &= (group[None, :] & mask[:, None]) != 0
    bl = np.minimum(body[:, None], body[None, :])
    bh = np.maximum(body[:, None], body[None, :])
    ok &= ~np.isin(bl * nbody + bh, excluded)
    a, b = np.nonzero(np.triu(ok, 1))
    return np.stack([a, b], axis=1)


def make_scene(rng, n, spread, *, clustered=False, huge=5, offset=0.0):
    """n boxes, half extents mostly 0.02-0.3 with a few huge ones, one body each, all dynamic,
    no filters."""
    if clustered:
        centres = rng.uniform(-spread, spread, (8, 3))
        pos = centres[rng.integers(0, 8, n)] + rng.normal(0.0, 0.15 * spread, (n, 3))
    else:
        pos = rng.uniform(-spread, spread, (n, 3))
    half = rng.uniform(0.02, 0.3, (n, 3)) * rng.choice([1.0, 2.5], (n, 1), p=[0.9, 0.1])
    half[:huge] = rng.uniform(0.05, 4.0 * spread, (huge, 3))
    pos += offset
    aabb = np.hstack([pos - half, pos + half])
    return {"aabb": aabb, "body": np.arange(n, dtype=np.int64), "dynamic": np.ones(n, dtype=bool),
            "group": np.ones(n, dtype=np.int64), "mask": np.ones(n, dtype=np.int64),
            "excluded": np.zeros(0, dtype=np.int64), "kind": np.full(n, BOX, dtype=np.int64),
            "plane": np.zeros((n, 4))}


def add_bodies_and_filters(rng, scene, nbody, dynamic, nexcluded, reach):
    """The geoms spread over nbody bodies, a share `dynamic` of them dynamic, random groups
    and masks, and nexcluded joined body pairs (each body with one up to reach - 1 after it)."""
    n = len(scene["aabb"])
    scene["body"] = rng.integers(0, nbody, n).astype(np.int64)
    scene["dynamic"] = rng.random(nbody) < dynamic
    scene["group"] = rng.integers(1, 8, n).astype(np.int64)
    scene["mask"] = rng.integers(1, 8, n).astype(np.int64)
    lo = rng.integers(0, nbody - 1, nexcluded)
    hi = np.minimum(lo + rng.integers(1, reach, nexcluded), nbody - 1)
    scene["excluded"] = np.unique(lo * nbody + hi)


def run(scene, work=None, cap=None):
    n = len(scene["aabb"])
    work = make_broadphase_work(n) if work is None else work
    out = np.full((cap if cap is not None else 64, 2), -7, dtype=np.int64)
    while True:
        count = find_pairs(scene["aabb"], scene["body"], scene["dynamic"], scene["group"],
                           scene["mask"], scene["excluded"], scene["kind"], scene["plane"],
                           work, out)
        if count <= len(out) or cap is not None:
            return out[:min(count, len(out))].copy(), count
        out = np.full((count, 2), -7, dtype=np.int64)


def expected(scene):
    return brute_pairs(scene["aabb"], scene["body"], scene["dynamic"], scene["group"],
                       scene["mask"], scene["excluded"], scene["kind"], scene["plane"])


@pytest.mark.parametrize("clustered, spread, offset", [
    (False, 4.0, 0.0),          # spread: about 2 partners per box
    (True, 4.0, 0.0),           # eight dense clusters
    (False, 1.5, 0.0),          # crowded: tens of partners per box
    (True, 6.0, -5000.0),       # far from the origin, negative cell indices
])
def test_random_boxes_give_exactly_the_brute_force_pair_set(clustered, spread, offset):
    rng = np.random.default_rng(11)
    scene = make_scene(rng, 1000, spread, clustered=clustered, offset=offset)
    pairs, count = run(scene)
    ref = expected(scene)
    assert count == len(ref) > 1000
    np.testing.assert_array_equal(pairs, ref)


def test_pairs_are_sorted_by_first_then_second_index():
    rng = np.random.default_rng(12)
    pairs, _ = run(make_scene(rng, 600, 1.5))
    assert np.all(pairs[:, 0] < pairs[:, 1])
    key = pairs[:, 0] * 600 + pairs[:, 1]
    assert np.all(np.diff(key) > 0)


def test_forty_coincident_boxes_pair_all_780_ways():
    n = 40
    scene = make_scene(np.random.default_rng(0), n, 1.0, huge=0)
    scene["aabb"][:] = [0.0, 0.0, 0.0, 0.1, 0.1, 0.1]
    pairs, count = run(scene)
    assert count == n * (n - 1) // 2
    np.testing.assert_array_equal(pairs, np.array(np.triu_indices(n, 1)).T)


def test_boxes_that_only_touch_are_paired_and_a_gap_is_not():
    scene = make_scene(np.random.default_rng(0), 3, 1.0, huge=0)
    scene["aabb"][:] = [[0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
                        [1.0, 0.5, 0.5, 2.0, 1.5, 1.5],      # shares the face x = 1
                        [2.0 + 1e-9, 0.0, 0.0, 3.0, 1.0, 1.0]]
    pairs, _ = run(scene)
    np.testing.assert_array_equal(pairs, [[0, 1]])


def test_geoms_of_one_body_are_never_paired():
    rng = np.random.default_rng(13)
    scene = make_scene(rng, 800, 1.5)
    scene["body"] = rng.integers(0, 200, 800).astype(np.int64)      # ~4 geoms per body
    scene["dynamic"] = np.ones(200, dtype=bool)
    pairs, _ = run(scene)
    assert not np.any(scene["body"][pairs[:, 0]] == scene["body"][pairs[:, 1]])
    np.testing.assert_array_equal(pairs, expected(scene))


def test_static_geoms_pair_only_with_dynamic_ones():
    rng = np.random.default_rng(14)
    scene = make_scene(rng, 800, 1.5)
    scene["dynamic"] = rng.random(800) < 0.5
    pairs, _ = run(scene)
    dyn = scene["dynamic"][scene["body"]]
    assert np.all(dyn[pairs[:, 0]] | dyn[pairs[:, 1]])
    np.testing.assert_array_equal(pairs, expected(scene))
    # and the brute force does find static-static overlaps that were dropped
    everything_dynamic = dict(scene, dynamic=np.ones(800, dtype=bool))
    full = expected(everything_dynamic)
    assert np.any(~dyn[full[:, 0]] & ~dyn[full[:, 1]])


def test_excluded_body_pairs_are_skipped():
    rng = np.random.default_rng(15)
    scene = make_scene(rng, 600, 1.5)
    nbody = 600
    all_pairs, _ = run(scene)
    chosen = all_pairs[rng.choice(len(all_pairs), 150, replace=False)]
    scene["excluded"] = np.unique(chosen[:, 0] * nbody + chosen[:, 1])   # body == geom here
    pairs, _ = run(scene)
    keys = pairs[:, 0] * nbody + pairs[:, 1]
    assert not np.any(np.isin(keys, scene["excluded"]))
    assert len(pairs) == len(all_pairs) - 150
    np.testing.assert_array_equal(pairs, expected(scene))


def test_group_and_mask_must_accept_each_other_both_ways():
    scene = make_scene(np.random.default_rng(0), 4, 1.0, huge=0)
    scene["aabb"][:] = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]               # all overlap
    scene["group"] = np.array([0b01, 0b10, 0b01, 0b11], dtype=np.int64)
    scene["mask"] = np.array([0b10, 0b01, 0b11, 0b00], dtype=np.int64)
    # 0-1: 01&01, 10&10 yes. 0-2: 01&11 yes, 01&10 no. 0-3: mask 3 is empty -> no with anyone.
    # 1-2: 10&11 yes, 01&01 yes.
    pairs, _ = run(scene)
    np.testing.assert_array_equal(pairs, [[0, 1], [1, 2]])
    rng = np.random.default_rng(16)
    scene = make_scene(rng, 800, 1.5)
    scene["group"] = rng.integers(1, 16, 800).astype(np.int64)
    scene["mask"] = rng.integers(0, 16, 800).astype(np.int64)
    np.testing.assert_array_equal(run(scene)[0], expected(scene))


def plane_scene():
    """Geoms 0-5 boxes, 6 the floor z <= 0, 7 the tilted half-space x + z <= 3; both planes on
    the static body 0."""
    aabb = np.array([
        [0.0, 2.0, 0.5, 1.0, 3.0, 1.5],      # 0 above the floor
        [0.0, 0.0, -0.1, 1.0, 1.0, 0.9],     # 1 straddles the floor
        [2.0, 0.0, 0.0, 3.0, 1.0, 1.0],      # 2 touches the floor
        [0.0, 0.0, -3.0, 1.0, 1.0, -2.0],    # 3 entirely below the floor (inside it)
        [5.0, 5.0, -0.5, 6.0, 6.0, 0.5],     # 4 straddles, but static (body 0)
        [9.0, 0.0, -0.5, 9.5, 0.5, 0.5],     # 5 straddles, body 5 excluded against body 0
        [0.0] * 6, [0.0] * 6])
    plane = np.zeros((8, 4))
    plane[6] = [0.0, 0.0, 1.0, 0.0]
    plane[7] = [1.0 / np.sqrt(2.0), 0.0, 1.0 / np.sqrt(2.0), 3.0 / np.sqrt(2.0)]
    body = np.array([1, 2, 3, 4, 0, 5, 0, 0], dtype=np.int64)
    dynamic = np.array([False, True, True, True, True, True])
    return {"aabb": aabb, "body": body, "dynamic": dynamic, "group": np.ones(8, dtype=np.int64),
            "mask": np.ones(8, dtype=np.int64), "excluded": np.array([0 * 6 + 5]),
            "kind": np.array([BOX] * 6 + [PLANE] * 2, dtype=np.int64), "plane": plane}


def test_plane_pairs_with_every_dynamic_geom_its_half_space_reaches():
    scene = plane_scene()
    pairs, _ = run(scene)
    # floor: 1, 2 (touching), 3 (inside). Tilted, lowest x + z of each box: 0 -> 0.5, 1 -> -0.1,
    # 2 -> 2, 3 -> -3 all <= 3; 4 is static; 5 is excluded (and at 8.5 beyond the tilted one).
    np.testing.assert_array_equal(pairs, [[0, 7], [1, 6], [1, 7], [2, 6], [2, 7], [3, 6],
                                          [3, 7]])
    np.testing.assert_array_equal(pairs, expected(scene))


def test_plane_skips_a_box_just_beyond_it_and_honours_the_filters():
    scene = plane_scene()
    scene["aabb"][2] = [2.9, 0.0, 0.2, 3.5, 1.0, 1.0]   # lowest x + z = 3.1: beyond plane 7,
    #                                                     and above the floor
    scene["excluded"] = np.array([0 * 6 + 4, 0 * 6 + 5])   # body 4 (geom 3) with body 0 too
    scene["group"][1] = 0b10                               # planes' mask 0b01 rejects geom 1
    pairs, _ = run(scene)
    np.testing.assert_array_equal(pairs, [[0, 7]])
    np.testing.assert_array_equal(pairs, expected(scene))


@pytest.mark.parametrize("n", [900, SMALL_SCENE + 1, SMALL_SCENE, 30])
def test_random_scene_with_planes_bodies_and_filters_matches_brute_force(n):
    """Both ways: the grid, and every pair tested for scenes of up to SMALL_SCENE geoms."""
    rng = np.random.default_rng(17)
    scene = make_scene(rng, n, 2.0 * (n / 900) ** (1 / 3), clustered=n > 100)
    add_bodies_and_filters(rng, scene, n // 3, 0.8, n // 2, 20)
    for p in rng.choice(n, 6, replace=False):
        normal = rng.normal(size=3)
        normal /= np.linalg.norm(normal)
        scene["kind"][p] = PLANE
        scene["plane"][p] = [*normal, rng.uniform(-1.0, 1.0)]
    pairs, _ = run(scene)
    ref = expected(scene)
    assert np.any(scene["kind"][ref] == PLANE) and len(ref) > n // 4
    np.testing.assert_array_equal(pairs, ref)


def test_same_input_gives_same_output_whatever_ran_before():
    rng = np.random.default_rng(18)
    a = make_scene(rng, 700, 1.5, clustered=True)
    b = make_scene(rng, 900, 3.0)
    work = make_broadphase_work(900)
    first, _ = run(a, work)
    run(b, work)
    moved = dict(a, aabb=a["aabb"] + 0.3)
    run(moved, work)
    again, _ = run(a, work)
    fresh, _ = run(a)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, fresh)
    np.testing.assert_array_equal(first, expected(a))


def test_too_small_output_reports_the_true_count_and_the_grown_array_gets_every_pair():
    rng = np.random.default_rng(19)
    scene = make_scene(rng, 500, 1.5)
    ref = expected(scene)
    work = make_broadphase_work(500)
    _, count0 = run(scene, work, cap=0)
    _, count = run(scene, work, cap=len(ref) // 3)
    assert count0 == count == len(ref)
    pairs, count = run(scene, work, cap=count)
    np.testing.assert_array_equal(pairs, ref)


def cached_run(scene, work, cache, cap=16384, vel=None):
    out = np.full((cap, 2), -7, dtype=np.int64)
    geoms = (scene["aabb"], scene["body"], scene["dynamic"], scene["group"], scene["mask"],
             scene["excluded"], scene["kind"], scene["plane"])
    grid = (work.slot, work.order, work.box, work.start, work.big, work.planes, work.mark,
            work.cand)
    vel = np.zeros((len(scene["dynamic"]), 3)) if vel is None else vel
    count, need = cached_broadphase(geoms, vel, 0.01, grid, work.ext, tuple(cache), out)
    assert count <= cap
    return out[:count].copy(), need


@pytest.mark.parametrize("moving", [0.0, 0.02, 0.1, 0.3, 1.0])
def test_the_pair_cache_gives_exactly_the_full_querys_pairs_as_boxes_move(moving):
    """Boxes (with planes, several geoms per body, static bodies and filters) move by random
    steps, a share `moving` of them each step (0: none; 1: all): the cached broad phase gives
    the pairs of the full query, which are brute force's, in the same order. (Whatever the
    fat boxes are, the cache holds every pair whose tight boxes overlap: each tight box lies
    in its fat box, and a geom whose box left it is queried anew.)"""
    rng = np.random.default_rng(23)
    n = 600
    scene = make_scene(rng, n, 2.5, clustered=True, huge=3)
    add_bodies_and_filters(rng, scene, n // 2, 0.9, n // 4, 2)
    for p in (0, 311):
        scene["kind"][p] = PLANE
        scene["plane"][p] = [0.0, 0.3, 0.954, -0.5]
    work, cache = make_broadphase_work(n), make_pair_cache(n, 40000)
    vel = rng.normal(0.0, 1.0, (n // 2, 3))   # (the fat boxes reach ahead along it)
    for step in range(25):
        pairs, need = cached_run(scene, work, cache, vel=vel)
        assert need <= 40000
        full, _ = run(scene)
        np.testing.assert_array_equal(pairs, full)
        if step % 8 == 0:
            np.testing.assert_array_equal(full, expected(scene))
        move = rng.random(n) < moving
        shift = rng.normal(0.0, 0.05, (n, 3)) * move[:, None]
        scene["aabb"] = scene["aabb"] + np.hstack([shift, shift])
    assert cache.state[1] == 1


def test_a_pair_cache_too_small_still_gives_every_pair_and_says_how_many_it_needs():
    rng = np.random.default_rng(24)
    scene = make_scene(rng, 400, 1.2)
    work, cache = make_broadphase_work(400), make_pair_cache(400, 16)
    pairs, need = cached_run(scene, work, cache)
    np.testing.assert_array_equal(pairs, expected(scene))
    assert need > 16 and cache.state[1] == 0
    bigger = make_pair_cache(400, need)
    pairs, again = cached_run(scene, work, bigger)
    np.testing.assert_array_equal(pairs, expected(scene))
    assert again == need and bigger.state[1] == 1


def test_a_merge_that_outgrows_the_pair_cache_still_gives_every_pair_and_empties_it():
    """The cache holds its pairs exactly; a few boxes then move into a crowd, so that the kept
    pairs and their new ones together outgrow it: the pairs are the full query's all the
    same, the cache says how many it needs and holds nothing, and the next call is right."""
    rng = np.random.default_rng(25)
    n = 400
    scene = make_scene(rng, n, 3.0, huge=0)
    work = make_broadphase_work(n)
    _, nfat = cached_run(scene, work, make_pair_cache(n, 100000))
    cache = make_pair_cache(n, nfat)
    pairs, need = cached_run(scene, work, cache)
    assert need == nfat and cache.state[1] == 1
    crowd = scene["aabb"].copy()
    centre = 0.5 * (crowd[0, :3] + crowd[0, 3:])
    half = 0.5 * (crowd[10:30, 3:] - crowd[10:30, :3])
    crowd[10:30] = np.hstack([centre - half, centre + half])   # 20 boxes onto box 0
    scene["aabb"] = crowd
    pairs, need = cached_run(scene, work, cache)
    full, _ = run(scene)
    np.testing.assert_array_equal(pairs, full)
    assert need > nfat and cache.state[0] == 0 and cache.state[1] == 0
    again, _ = cached_run(scene, work, cache)
    np.testing.assert_array_equal(again, full)
