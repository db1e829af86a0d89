"""A heavy symmetric top on a frictionless ball joint, started in steady precession.

Mass m = 1 kg, centre of mass l = 0.2 m from the pivot on the symmetry axis e3, moments about
the centre I1 = 0.01 (across) and I3 = 0.005 kg m^2 (axial), so about the pivot
I1' = I1 + m l^2 = 0.05. Spin w3 = 150 rad/s (the axial component of w), tilt theta = 30 deg.

Steady precession at rate W about the vertical (Goldstein, the heavy symmetric top): the
torque m g l sin(theta) turns the angular momentum about the vertical,
    m g l = W (I3 w3 - I1' W cos(theta)),
whose slow root is W = (I3 w3 - sqrt((I3 w3)^2 - 4 I1' cos(theta) m g l)) / (2 I1' cos(theta))
= 3.211 rad/s. With w = W z + (w3 - W cos(theta)) e3 and v = w x (l e3) the top keeps its tilt
and precesses at W; its energy (kinetic + m g z) is constant.

At dt = 1/240 the spin turns the body by h w3 = 0.625 rad a step: the joint must be aimed at
the end of the step (solver.aim_at_step_end) for the top to keep its tilt.
"""
import math

import numpy as np
import pytest
from conftest import G

from sharnir.physics import Capsule, World

M, L, I1, I3, W3 = 1.0, 0.2, 0.01, 0.005, 150.0
TILT = math.radians(30.0)
DT = 1.0 / 240.0


def precession_rate():
    ip, c = I1 + M * L * L, math.cos(TILT)
    return (I3 * W3 - math.sqrt((I3 * W3) ** 2 - 4.0 * ip * c * M * G * L)) / (2.0 * ip * c)


def heavy_top(dt=DT):
    world = World(dt=dt, gravity=(0.0, 0.0, -G))
    big_w = precession_rate()
    e3 = np.array([math.sin(TILT), 0.0, math.cos(TILT)])
    w = big_w * np.array([0.0, 0.0, 1.0]) + (W3 - big_w * math.cos(TILT)) * e3
    q = (math.cos(TILT / 2), 0.0, math.sin(TILT / 2), 0.0)   # body z onto e3
    world.add_body("top", Capsule(0.02, 0.05), mass=M, inertia=(I1, I1, I3),
                   pos=tuple(L * e3), quat=q, mask=0)
    world.add_joint("pivot", "spherical", "world", "top", anchor=(0.0, 0.0, 0.0))
    world.set_body_velocity("top", vel=tuple(np.cross(w, L * e3)), angvel=tuple(w))
    return world


def energy(world):
    x, v, w, q = (world.body_pos[1], world.body_vel[1], world.body_angvel[1],
                  world.body_quat[1])
    a, b, c, d = q
    R = np.array([[1 - 2 * (c * c + d * d), 2 * (b * c - a * d), 2 * (b * d + a * c)],
                  [2 * (b * c + a * d), 1 - 2 * (b * b + d * d), 2 * (c * d - a * b)],
                  [2 * (b * d - a * c), 2 * (c * d + a * b), 1 - 2 * (b * b + c * c)]])
    wb = R.T @ w
    return 0.5 * M * v @ v + 0.5 * (I1 * wb[0] ** 2 + I1 * wb[1] ** 2 + I3 * wb[2] ** 2) \
        + M * G * x[2]


@pytest.fixture(scope="module")
def spinning():
    world = heavy_top()
    world.step(0)
    e0 = energy(world)
    n = round(4.0 / DT)
    tilt, azimuth, dev = np.zeros(n), np.zeros(n), np.zeros(n)
    for k in range(n):
        world.step(1)
        x = world.body_pos[1]
        tilt[k] = math.acos(x[2] / np.linalg.norm(x))
        azimuth[k] = math.atan2(x[1], x[0])
        dev[k] = (energy(world) - e0) / e0
    return tilt, np.unwrap(azimuth), dev


def test_heavy_top_in_steady_precession_keeps_its_tilt_within_2_degrees_over_4_s(spinning):
    tilt, _, _ = spinning
    worst = np.max(np.abs(np.degrees(tilt) - 30.0))
    assert worst < 2.0, f"tilt left 30 deg by {worst:.2f} deg"


def test_heavy_top_keeps_its_energy_within_2_percent_over_4_s(spinning):
    _, _, dev = spinning
    assert np.max(np.abs(dev)) < 0.02, np.max(np.abs(dev))


def test_heavy_top_precesses_at_the_steady_rate(spinning):
    _, azimuth, _ = spinning
    rate = (azimuth[-1] - azimuth[0]) / (DT * (len(azimuth) - 1))
    assert rate == pytest.approx(precession_rate(), rel=0.02)
