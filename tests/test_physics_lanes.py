"""The contact sweep four manifolds at a time (physics/lanes.py, partition.group_unit,
contact_solver._sweep_lanes): each lane operation is the scalar IEEE operation, the groups
share no moving body, and a sweep of the groups is, to the bit, the sweep of their manifolds
one after another as Sharnir swept them before the lanes."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from sharnir.physics import contact_solver as cs
from sharnir.physics.contact import (
    contact_args,
)
from sharnir.physics.lanes import (
    LANES,
    vadd,
    vany,
    vdiv,
    vgt,
    vload,
    vmax,
    vmin,
    vmul,
    vne,
    vsel,
    vsqrt,
    vstore,
    vsub,
)
from sharnir.physics.partition import UNITS, group_unit
from sharnir.scenes import load_scene

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-300, -1e300, math.inf, -math.inf, math.nan, 0.1, 3.0]


@njit
def _lane_ops(a, b, out):
    x = (a[0], a[1], a[2], a[3])
    y = (b[0], b[1], b[2], b[3])
    ops = (vadd(x, y), vsub(x, y), vmul(x, y), vdiv(x, y), vsqrt(x), vmax(x, y), vmin(x, y),
           vsel(vgt(x, y), x, y), vsel(vne(x, y), x, y))
    for k in range(len(ops)):
        for q in range(LANES):
            out[k, q] = ops[k][q]


@njit(error_model="numpy")   # (x / 0: IEEE's infinity or NaN, as the lanes give)
def _scalar_ops(a, b, out):
    for q in range(LANES):
        x, y = a[q], b[q]
        out[0, q] = x + y
        out[1, q] = x - y
        out[2, q] = x * y
        out[3, q] = x / y
        out[4, q] = math.sqrt(x)
        out[5, q] = max(x, y)
        out[6, q] = min(x, y)
        out[7, q] = x if x > y else y
        out[8, q] = x if x != y else y


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SPECIAL), st.floats()), min_size=8, max_size=8))
def test_each_lane_operation_is_the_scalar_one_to_the_bit(values):
    """Every number, signed zeros, infinities and NaN among them: the same result, bit for
    bit (a NaN as a NaN: its payload is the CPU's)."""
    a, b = np.array(values[:4]), np.array(values[4:])
    lane, scalar = np.zeros((9, LANES)), np.zeros((9, LANES))
    _lane_ops(a, b, lane)
    _scalar_ops(a, b, scalar)
    nan = np.isnan(scalar)
    assert np.array_equal(np.isnan(lane), nan)
    assert lane[~nan].tobytes() == scalar[~nan].tobytes()


@njit
def _any_greater(a, b):
    return vany(vgt((a[0], a[1], a[2], a[3]), (b[0], b[1], b[2], b[3])))


def test_a_mask_has_any_lane_set_exactly_when_one_of_its_four_is():
    for bits in range(16):
        a = np.array([1.0 if bits >> q & 1 else 0.0 for q in range(LANES)])
        assert _any_greater(a, np.zeros(LANES)) == (bits != 0)


@njit
def _load_store(x, i, k, y):
    vstore(y, i, k, vadd(vload(x, i, k), vload(x, i, k)))


def test_a_lane_load_and_store_read_and_write_the_four_lanes_of_one_record():
    x = np.arange(3 * 5 * LANES, dtype=np.float64).reshape(3, 5, LANES)
    y = np.zeros_like(x)
    _load_store(x, 2, 3, y)
    assert list(y[2, 3]) == list(2 * x[2, 3])
    y[2, 3] = 0.0
    assert not y.any()


@njit(nogil=True)
def _group_units(first, body, inv_mass, tree, order, start, lane_man, lane_span, lane_points,
                 lane_body):
    """Every unit grouped (partition.group_unit, as contact_solver.gather_unit does it);
    the number of groups."""
    ng = 0
    for u in range(UNITS):
        ng += group_unit(u, first, body, inv_mass, tree, order, start, lane_man, lane_span,
                         lane_points, lane_body)
    return ng


def _groups(first, body, inv_mass, tree, order, start):
    cap = max(len(order), 1)
    lane_man = np.full((cap, LANES), -1, np.int64)
    lane_span = np.zeros((UNITS, 2), np.int64)
    lane_points = np.zeros(cap, np.int64)
    lane_body = np.zeros((cap, 2, LANES), np.int64)
    ng = _group_units(first, body, inv_mass, tree, order, start, lane_man, lane_span,
                      lane_points, lane_body)
    return ng, lane_man, lane_span, lane_points, lane_body


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.floats(0.0, 0.6))
def test_the_manifolds_of_a_group_share_no_moving_body(seed, nman, still):
    """Random manifolds (1-4 points; bodies a share of them still, inverse mass 0; a few
    taken by a tree block) in random units: each manifold no tree took is in exactly one
    lane of one group of its own unit, a group's manifolds share no moving body, and a
    group's slot count is its manifolds' most points."""
    rng = np.random.default_rng(seed)
    nbody = 40
    inv_mass = np.where(rng.random(nbody) < still, 0.0, 1.0)
    npts = rng.integers(1, 5, nman)
    first = np.concatenate([[0], np.cumsum(npts)]).astype(np.int64)
    body = np.zeros((max(first[-1], 1), 2), np.int64)
    for m in range(nman):
        a = int(rng.integers(nbody))
        b = (a + 1 + int(rng.integers(nbody - 1))) % nbody
        body[first[m]:first[m + 1]] = (a, b)
    tree = np.where(rng.random(max(nman, 1)) < 0.1, 0, -1).astype(np.int64)
    unit = rng.integers(0, UNITS, nman)
    order = np.argsort(unit, kind="stable").astype(np.int64)
    start = np.searchsorted(unit[order], np.arange(UNITS + 1)).astype(np.int64)
    ng, lane_man, lane_span, lane_points, lane_body = _groups(first, body, inv_mass, tree,
                                                              order, start)
    assert sum(lane_span[:, 1] - lane_span[:, 0]) == ng
    seen = []
    for u in range(UNITS):   # each unit's groups within its own manifolds' range
        assert start[u] == lane_span[u, 0] <= lane_span[u, 1] <= start[u + 1]
        for g in range(lane_span[u, 0], lane_span[u, 1]):
            members = [m for m in lane_man[g] if m >= 0]
            assert members, f"group {g} is empty"
            assert all(unit[m] == u for m in members)
            assert lane_points[g] == max(npts[m] for m in members)
            assert all(list(lane_body[g, :, q]) == (list(body[first[m]]) if m >= 0 else [0, 0])
                       for q, m in enumerate(lane_man[g]))
            moving = [i for m in members for i in set(body[first[m]]) if inv_mass[i] > 0.0]
            assert len(moving) == len(set(moving)), f"group {g}: {lane_man[g]}"
            seen += members
    assert sorted(seen) == [m for m in range(nman) if tree[m] < 0]


def _scalar_arrays(rows, points, order):
    return (rows.man_first, points.body, rows.point_rows, rows.man_rows, rows.man_tree,
            points.impulse, points.sliding, order)


def _lane_arrays(rows):
    return (rows.lane_rows, rows.lane_impulse, rows.lane_body, rows.lane_points,
            rows.lane_sliding)


@njit(nogil=True)
def _lane_sweeps(n, rows, points, inv_mass, v, w, scalar, lanes):
    """n sweeps in lanes, as the step runs them: each unit's lanes filled in the first sweep,
    right before the unit is swept."""
    gather = cs.gather_arrays(rows, points, inv_mass)
    for it in range(n):
        cs.solve_contacts(scalar, lanes, True, v, w, it % 2 == 1, rows.part_start,
                          rows.lane_span, rows.part_worst, 1, gather, it == 0)
    cs.scatter_lanes(rows, points)


@njit(nogil=True)
def _scalar_sweeps(n, rows, points, inv_mass, v, w, scalar, order):
    """The same sweeps a manifold at a time (contact_solver._sweep_unit): order[u] ..
    order[u + 1] - 1 index the manifolds of unit u, those of its groups lane by lane."""
    for it in range(n):
        cs.solve_contacts(scalar, (rows.lane_rows, rows.lane_impulse, rows.lane_body,
                                   rows.lane_points, rows.lane_sliding), False, v, w,
                          it % 2 == 1, order, rows.lane_span, rows.part_worst, 1,
                          cs.gather_arrays(rows, points, inv_mass), False)


@pytest.mark.parametrize("scene, steps, sweeps", [("pyramid", 60, 20),
                                                   ("granular_pile", 200, 12),
                                                   ("shapes", 120, 12)])
def test_the_lanes_sweep_as_their_manifolds_one_after_another_to_the_bit(scene, steps, sweeps):
    world = load_scene(scene)
    world.configure(threads=1)
    world.run(steps)
    model, state, _ = world._ready()
    points, rows, _ = contact_args(world._contacts)
    assert points.count[0] > 0
    saved = [x.copy() for x in (state.body_vel, state.body_angvel, points.impulse,
                                points.sliding)]
    _lane_sweeps(sweeps, rows, points, model.body_inv_mass, state.body_vel, state.body_angvel,
                 _scalar_arrays(rows, points, rows.part_order), _lane_arrays(rows))
    lanes = [x.copy() for x in (state.body_vel, state.body_angvel, points.impulse,
                                points.sliding)]
    start, manifolds = [0], []
    for u in range(UNITS):
        for g in range(rows.lane_span[u, 0], rows.lane_span[u, 1]):
            manifolds += [m for m in rows.lane_man[g] if m >= 0]
        start.append(len(manifolds))
    assert len(manifolds) == rows.man_count[0]
    for x, s in zip((state.body_vel, state.body_angvel, points.impulse, points.sliding), saved):
        x[:] = s
    order = np.array(manifolds, np.int64)
    _scalar_sweeps(sweeps, rows, points, model.body_inv_mass, state.body_vel, state.body_angvel,
                   _scalar_arrays(rows, points, order), np.array(start, np.int64))
    for x, y in zip(lanes, (state.body_vel, state.body_angvel, points.impulse,
                            points.sliding)):
        assert x.tobytes() == y.tobytes()
    assert np.abs(lanes[2]).max() > 0.0


def test_the_pyramid_sweeps_in_lanes_and_the_ellipsoid_drop_a_manifold_at_a_time():
    """LANE_WORK: four points a manifold over 20 sweeps pay for the copy into the lanes; one
    point over 10 sweeps does not (contact_solver.py, measured)."""
    chosen = {}
    for scene, steps in (("pyramid", 30), ("ellipsoid_drop", 300)):
        world = load_scene(scene)
        world.run(steps)
        rows = world._contacts.rows
        chosen[scene] = cs.lanes_pay(rows, world.settings["iterations"])
    assert chosen == {"pyramid": True, "ellipsoid_drop": False}
