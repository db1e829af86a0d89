"""Solver behaviour: determinism, the wall-clock budget, warm starting."""
import math

import numpy as np
import pytest
from conftest import ROD_D, ROD_MASS, G, chain, rod_pendulum

from sharnir.physics.model import STAT_ITERATIONS
from sharnir.physics.shape import Box
from sharnir.physics.world import World

DT = 1.0 / 240.0


def double_pendulum():
    world = World(dt=DT, budget_ms=0.0)
    for i in range(2):
        world.add_body(f"rod{i}", Box((0.5, 0.02, 0.02)), mass=1.0, pos=(0.5 + i, 0.0, 2.0))
    world.add_joint("shoulder", "revolute", "world", "rod0", anchor=(0.0, 0.0, 2.0),
                    axis=(0.0, 1.0, 0.0), friction=0.5)
    world.add_joint("elbow", "revolute", "rod0", "rod1", anchor=(1.0, 0.0, 2.0),
                    axis=(0.0, 1.0, 0.0), friction=0.5)
    return world


@pytest.mark.parametrize("build", [lambda: chain(dt=DT, budget_ms=0.0), double_pendulum],
                         ids=["chain", "double_pendulum"])
def test_identical_worlds_run_bit_identical_for_1000_steps(build):
    a, b = build(), build()
    a.step(1000)
    b.step(1000)
    assert np.array_equal(a.body_pos, b.body_pos)
    assert np.array_equal(a.body_quat, b.body_quat)
    # and not trivially: the bodies did move
    assert not np.array_equal(a.body_pos, build().body_pos)


def test_time_budget_cuts_iterations_on_50_link_chain():
    world = chain(dt=DT, iterations=5000, tolerance=0.0, budget_ms=0.001)
    rec = world.run(20)
    its = rec.stats[:, STAT_ITERATIONS]
    assert np.all(its >= 1)
    assert np.all(its < 5000), its


def test_without_budget_50_link_chain_does_all_5000_iterations():
    world = chain(dt=DT, iterations=5000, tolerance=0.0, budget_ms=0.0)
    rec = world.run(3)
    its = rec.stats[:, STAT_ITERATIONS]
    assert np.all(its == 5000), its


def test_warm_start_makes_static_pendulum_converge_in_far_fewer_iterations():
    # the held pendulum of test_physics_friction: rod 30 deg from hanging, friction 1.02 x
    # m g d sin30, revolute about +y; same tolerance, generous iteration cap
    tau_g = ROD_MASS * G * ROD_D * math.sin(math.radians(30.0))
    runs = {}
    for warm in (True, False):
        world = rod_pendulum("revolute", tilt=-math.radians(30.0), friction=1.02 * tau_g,
                             dt=DT, iterations=1000, tolerance=1e-9, warm_start=warm)
        rec = world.run(240)
        assert np.max(np.abs(rec.joint[:, 0, 0])) < 1e-6          # held in both cases
        runs[warm] = rec.stats[:, STAT_ITERATIONS]
    warm, cold = runs[True][10:], runs[False][10:]
    assert np.all(cold < 1000)                                  # both converge to tolerance
    assert np.mean(warm) <= 0.1 * np.mean(cold), (np.mean(warm), np.mean(cold))
    assert np.max(warm) < np.min(cold)
