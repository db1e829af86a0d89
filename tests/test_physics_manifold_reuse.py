"""Manifold reuse (physics/contact.py): a touching pair whose bodies have moved no point of
either geom by more than `manifold_reuse` since its points were found keeps those points,
carried by the bodies, instead of running the narrow phase again.

What is checked, against what follows from the definitions:
* the motion bound |dx| + theta * reach is an upper bound on how far any point of the
  moving geom went in the other's frame (a rotation by theta moves a point at distance r
  from the axis by 2 r sin(theta / 2) <= r theta), and a tight one for a pure rotation;
* carried points agree with a fresh narrow phase at the same poses to within the tolerance
  (points) and to second order (depths), when the geometry is not degenerate;
* a pair that moves further than the tolerance gets fresh points (a sliding block's points
  stay under it), and a resting one keeps them (the narrow phase is skipped);
* 0 switches it off; out-of-range values are refused with the setting named.
"""
import math

import numpy as np
import pytest
from conftest import rotation_matrices

from sharnir.physics import Box, Material, Plane, World
from sharnir.physics.contact import ContactSet, _relative_motion, detect_contacts

TOL = 2e-4   # m, the default


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def relative(xa, qa, xb, qb):
    """B's pose in A's frame, as the kernel keeps it: RA^T (xB - xA), qA* qB."""
    Ra = rotation_matrices(qa)
    conj = np.array([qa[0], -qa[1], -qa[2], -qa[3]])
    return Ra.T @ (xb - xa), quat_mul(conj, qb)


def corners(half):
    return np.array([[sx * half[0], sy * half[1], sz * half[2]]
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def test_motion_bound_covers_every_corner_and_is_tight_for_a_pure_turn():
    rng = np.random.default_rng(3)
    half_a, half_b = np.array([0.3, 0.2, 0.1]), np.array([0.1, 0.05, 0.08])
    reach_a, reach_b = np.linalg.norm(half_a), np.linalg.norm(half_b)
    for trial in range(200):
        xa, xb = rng.normal(size=3), rng.normal(size=3)
        qa, qb = rng.normal(size=4), rng.normal(size=4)
        qa, qb = qa / np.linalg.norm(qa), qb / np.linalg.norm(qb)
        x0, q0 = relative(xa, qa, xb, qb)
        # move both bodies a little (up to ~1 mm and ~5 mrad)
        turn = rng.normal(size=3) * 2e-3
        angle = np.linalg.norm(turn)
        dq = np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * turn / angle])
        xb2 = xb + rng.normal(size=3) * 5e-4
        qb2 = quat_mul(dq, qb)
        xa2 = xa + rng.normal(size=3) * 5e-4
        x1, q1 = relative(xa2, qa, xb2, qb2)
        found = np.concatenate([x0, q0])[None, :]
        Rr0, Rr1 = rotation_matrices(q0), rotation_matrices(q1)
        # B's corners in A's frame (B has the smaller reach): x + Rr p
        bound = _relative_motion(tuple(x1), tuple(q1), found, 0, reach_a, reach_b)
        p0 = corners(half_b) @ Rr0.T + x0
        p1 = corners(half_b) @ Rr1.T + x1
        moved = np.linalg.norm(p1 - p0, axis=1).max()
        assert moved <= bound * (1 + 1e-9), (trial, moved, bound)
        # A's corners in B's frame when B's reach is infinite (B a plane): Rr^T (p - x)
        bound = _relative_motion(tuple(x1), tuple(q1), found, 0, reach_a, math.inf)
        p0 = (corners(half_a) - x0) @ Rr0
        p1 = (corners(half_a) - x1) @ Rr1
        moved = np.linalg.norm(p1 - p0, axis=1).max()
        assert moved <= bound * (1 + 1e-9), (trial, moved, bound)
    # a pure turn by theta about an axis through B's centre, perpendicular to a corner's arm:
    # that corner moves by 2 r sin(theta / 2), the bound says r theta
    r = np.linalg.norm(half_b)
    theta = 1e-3
    c = corners(half_b)[7] / r
    axis = np.cross(c, [1.0, 0.0, 0.0])
    axis /= np.linalg.norm(axis)
    q1 = np.concatenate([[math.cos(theta / 2)], math.sin(theta / 2) * axis])
    found = np.array([[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    bound = _relative_motion((0.0, 0.0, 1.0), tuple(q1), found, 0, 10.0, r)
    assert bound == pytest.approx(r * theta, rel=1e-6)
    assert 2 * r * math.sin(theta / 2) == pytest.approx(bound, rel=1e-6)


def box_on_box(turn_deg, reuse=TOL):
    w = World(dt=1.0 / 240.0, iterations=30, manifold_reuse=reuse)
    w.add_body("ground", Plane(), kind="static")
    w.add_body("base", Box((0.3, 0.3, 0.1)), mass=9.0, pos=(0.0, 0.0, 0.1))
    t = math.radians(turn_deg)
    top = w.add_body("top", Box((0.1, 0.15, 0.1)), mass=1.0, pos=(0.02, -0.03, 0.3),
                     quat=(math.cos(t / 2), 0.0, 0.0, math.sin(t / 2)))
    return w, top


def test_carried_points_agree_with_a_fresh_narrow_phase_at_the_same_poses():
    """A box turned 30 deg on a bigger box (no edges that coincide): after it has settled,
    the carried manifold and a fresh detection at the same poses give the same points to
    well within the tolerance."""
    w, _ = box_on_box(30.0)
    w.run(240)
    assert w.contact_stats["reused"] == 2     # base on ground, top on base: both kept
    model, state, work, contacts, settings = (w._model, w._state, w._work, w._contacts,
                                              w._settings)
    fresh = ContactSet(*[type(t)(*[a.copy() for a in t]) for t in contacts])
    carried = ContactSet(*[type(t)(*[a.copy() for a in t]) for t in contacts])
    assert detect_contacts(model, state, work, fresh.points, fresh.scratch, settings.dt, 0.0,
                           1)
    assert detect_contacts(model, state, work, carried.points, carried.scratch, settings.dt, TOL,
                           1)
    assert carried.scratch.stats[5] == 2 and fresh.scratch.stats[5] == 0
    fresh, carried = fresh.points, carried.points
    n = int(fresh.count[0])
    assert n == 8 and int(carried.count[0]) == n
    assert (fresh.feature[:n] == carried.feature[:n]).all()
    assert np.abs(fresh.point[:n] - carried.point[:n]).max() < TOL
    assert np.abs(fresh.normal[:n] - carried.normal[:n]).max() < 1e-3
    assert np.abs(fresh.depth[:n] - carried.depth[:n]).max() < 1e-6


def test_a_sliding_block_gets_fresh_points_under_it_and_keeps_them_once_at_rest():
    """A block sent sliding at 1 m/s moves 4 mm a step, 20x the tolerance: every step finds
    its points afresh, so they stay under it; once it stops (mu = 0.5: after v^2 / (2 mu g)
    = 0.10 m) the pair keeps its manifold."""
    w = World(dt=1.0 / 240.0, iterations=30)
    w.add_body("ground", Plane(), kind="static")
    half = 0.1
    b = w.add_body("block", Box((half, half, half)), mass=1.0, pos=(0.0, 0.0, half),
                   vel=(1.0, 0.0, 0.0), material=Material(friction=0.5))
    reused = []
    for k in range(120):
        x = np.array(w.body_pos[b])   # the step finds its points at the poses it starts from
        w.run(1)
        c = w.contacts()
        assert len(c["point"]) == 4
        # the points are the block's bottom corners: within the footprint (plus the slop)
        assert np.abs(c["point"][:, :2] - x[:2]).max() <= half + 1e-3, k
        reused.append(w.contact_stats["reused"])
        if abs(w.body_vel[b][0]) > 0.1:
            assert reused[-1] == 0, k
    assert w.body_vel[b][0] == pytest.approx(0.0, abs=1e-6)
    assert w.body_pos[b][0] == pytest.approx(1.0 / (2 * 0.5 * 9.81), rel=0.05)
    assert reused[-1] == 1


def test_reuse_zero_finds_every_pair_afresh_and_gives_the_same_resting_stack():
    for reuse in (0.0, TOL):
        w, b = box_on_box(30.0, reuse)
        w.run(480)
        assert w.contact_stats["reused"] == (0 if reuse == 0.0 else 2)
        top = np.asarray(w.body_pos[b])
        # at rest on the base: 0.2 (base) + 0.1 (half of top), less the slop at two contacts
        assert top[2] == pytest.approx(0.3, abs=1.2e-3)
        assert np.linalg.norm(top[:2] - (0.02, -0.03)) < 1e-3


@pytest.mark.parametrize("value", [-1e-4, 0.003, float("nan")])
def test_out_of_range_reuse_is_refused_naming_the_setting(value):
    w = World()
    with pytest.raises(ValueError, match="manifold_reuse"):
        w.configure(manifold_reuse=value)
    assert w.settings["manifold_reuse"] == TOL
