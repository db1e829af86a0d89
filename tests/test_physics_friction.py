"""Static and dynamic Coulomb friction in revolute, spherical and prismatic joints.

Pendulum: the rod of conftest (1 kg, centre d = 0.5 m below the pivot along the rod) turned
30 deg from hanging. Gravity's moment about the pivot is r x F with r = d (sin30, 0, -cos30),
F = (0, 0, -m g): |tau_g| = m g d sin30 = 2.4525 N m, about +y. The joint reaction acts at
the pivot and has no moment about it, so static friction must supply exactly tau_g:
    limit 1.02 tau_g -> holds (sticks, the rod does not move);
    limit 0.98 tau_g -> cannot hold: it slides towards hanging.
Once sliding with the constant friction F = 0.98 tau_g, energy balance fixes where it stops
again (it stops at the first turning point; there gravity's moment < F, so it sticks):
    m g d (cos th1 - cos th0) = F (th0 - th1),   th0 = 30 deg,
whose root gives the travel th0 - th1 = 0.022993 rad (~0.04 tan th0); it stops after about
half a period of the small oscillation about the balance point, ~0.9 s.

Slider: a block on a prismatic joint along a 30 deg incline (down-slope a = (cos30, 0,
-sin30)). Gravity along the axis: m g sin30; friction limit 1.02 / 0.98 of it. Sliding:
m s'' = m g sin30 - F exactly (the normal part is taken by the joint), so
s'' = 0.02 g sin30 = 0.0981 m/s^2; with semi-implicit Euler s_n = a dt^2 n (n + 1) / 2.
"""
import math

import numpy as np
import pytest
from conftest import ROD_D, ROD_MASS, G, rod_pendulum

from sharnir.physics.shape import Box
from sharnir.physics.world import World

DT = 1.0 / 240.0
TILT = -math.radians(30.0)           # centre swung towards +x
TAU_G = ROD_MASS * G * ROD_D * math.sin(math.radians(30.0))
HOLD_STEPS = 2400                    # 10 s
SLIDE_STEPS = 240                    # 1 s


TH0 = math.radians(30.0)


def stop_travel(ratio, th0=TH0):
    """Root d in (0, th0) of cos(th0 - d) - cos th0 = ratio sin(th0) d (energy balance)."""
    f = lambda d: math.cos(th0 - d) - math.cos(th0) - ratio * math.sin(th0) * d
    lo, hi = 1e-9, th0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_static_friction_holds_pendulum_at_30_degrees_with_2_percent_margin(joint):
    world = rod_pendulum(joint, tilt=TILT, friction=1.02 * TAU_G, dt=DT)
    start = np.array(world.body_pos[1])
    rec = world.run(HOLD_STEPS)
    moved = np.max(np.abs(rec.joint[:, 0, 0]))
    assert moved < 1e-6, moved
    assert np.linalg.norm(world.body_pos[1] - start) < 1e-6
    # the friction it reports is the moment it must hold, tau_g, not the limit
    assert abs(rec.joint[-1, 0, 2]) == pytest.approx(TAU_G, rel=1e-6)
    assert np.all(rec.joint[10:, 0, 3] == 0.0)


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_pendulum_slides_with_friction_2_percent_below_gravity_moment(joint):
    world = rod_pendulum(joint, tilt=TILT, friction=0.98 * TAU_G, dt=DT)
    rec = world.run(SLIDE_STEPS)
    angle = np.abs(rec.joint[:, 0, 0])
    assert angle.max() > 0.01, angle.max()
    assert rec.joint[0, 0, 3] == 1.0                      # sliding from the first step
    assert abs(rec.joint[0, 0, 2]) == pytest.approx(0.98 * TAU_G, rel=1e-9)


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_sliding_pendulum_stops_where_energy_balance_says(joint):
    world = rod_pendulum(joint, tilt=TILT, friction=0.98 * TAU_G, dt=DT)
    rec = world.run(2 * SLIDE_STEPS)
    travel = stop_travel(0.98)
    assert travel == pytest.approx(0.022993, abs=2e-6)
    final = abs(rec.joint[-1, 0, 0])
    assert final == pytest.approx(travel, rel=0.01), (final, travel)
    # and it sticks there
    assert np.max(np.abs(rec.joint[-SLIDE_STEPS // 2:, 0, 0] - rec.joint[-1, 0, 0])) < 1e-6


def slider(ratio, mass=2.0):
    world = World(dt=DT)
    c, s = math.cos(math.radians(30.0)), math.sin(math.radians(30.0))
    # body x along the slope: a turn of +30 deg about +y takes x to (cos30, 0, -sin30)
    q = (math.cos(math.radians(15.0)), 0.0, math.sin(math.radians(15.0)), 0.0)
    world.add_body("block", Box((0.1, 0.05, 0.05)), mass=mass, pos=(0.0, 0.0, 1.0), quat=q)
    world.add_joint("slide", "prismatic", "world", "block", anchor=(0.0, 0.0, 1.0),
                    axis=(c, 0.0, -s), friction=ratio * mass * G * s)
    return world, mass * G * s


def test_static_friction_holds_block_on_30_degree_incline():
    world, pull = slider(1.02)
    start = np.array(world.body_pos[1])
    rec = world.run(HOLD_STEPS)
    assert np.max(np.abs(rec.joint[:, 0, 0])) < 1e-6
    assert np.linalg.norm(world.body_pos[1] - start) < 1e-6
    assert abs(rec.joint[-1, 0, 2]) == pytest.approx(pull, rel=1e-6)
    assert np.all(rec.joint[:, 0, 3] == 0.0)


def test_block_slides_down_incline_at_g_sin30_minus_friction_over_m():
    mass = 2.0
    world, pull = slider(0.98, mass)
    rec = world.run(SLIDE_STEPS)
    s = rec.joint[:, 0, 0]
    assert s[-1] > 0.01                                  # moves clearly, down the slope
    expected = (pull - 0.98 * pull) / mass               # (m g sin30 - F) / m
    assert expected == pytest.approx(0.02 * G * 0.5)
    n = np.arange(1, SLIDE_STEPS + 1)
    measured = 2.0 * s / (DT * DT * n * (n + 1))         # s_n = a dt^2 n (n + 1) / 2
    assert measured[-1] == pytest.approx(expected, rel=0.02), measured[-1]
    assert np.all(np.abs(measured[9:] / expected - 1.0) < 0.02)
    assert np.all(rec.joint[:, 0, 3] == 1.0)
