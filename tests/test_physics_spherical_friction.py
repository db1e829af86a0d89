"""Spherical (ball) joint friction: one friction-torque ball ||tau|| <= tau_max (paper 000,
eq. 8, 16), never exceeded, and the exact spin-down of an isotropic body.

Spin-down on paper: a solid sphere (m = 2 kg, r = 0.1 m, I = 2/5 m r^2 = 0.008 kg m^2 about
every axis) held at its centre by a ball joint to the world, no gravity, spinning at
w0 = 3.1 rad/s about the fixed direction n = (1, 2, 3)/sqrt(14), friction limit tau = 0.005
N m. The joint's point reaction acts at the centre (no moment), the inertia is isotropic (no
gyroscopic torque), so I dw/dt = friction torque, which opposes w with magnitude tau while it
slides: w(t) = (w0 - tau t / I) n, stopping at t* = w0 I / tau = 4.96 s. Semi-implicit Euler
with the clamped impulse |p| <= tau dt does this exactly step by step:
    w_k = w0 - k tau dt / I   (direction n)  until it would cross zero, then 0;
the stop step is ceil(w0 I / (tau dt)) = ceil(1190.4) = 1191, i.e. within one step of t*.
"""
import math

import numpy as np
import pytest

from sharnir.physics.shape import Box, Sphere
from sharnir.physics.world import World

DT = 1.0 / 240.0


def test_spherical_friction_torque_never_exceeds_its_limit_on_a_swinging_link():
    limit = 0.3
    world = World(dt=DT)
    # a 1 m, 1 kg link, horizontal along +x from the ball joint at (0, 0, 2), turning about
    # the vertical at 2 rad/s (centre velocity (0, 0, 2) x (0.5, 0, 0) = (0, 1, 0)): it
    # swings and twists in 3D while gravity pulls it down
    world.add_body("link", Box((0.5, 0.02, 0.02)), mass=1.0, pos=(0.5, 0.0, 2.0),
                   vel=(0.0, 1.0, 0.0), angvel=(0.0, 0.0, 2.0))
    world.add_joint("ball", "spherical", "world", "link", anchor=(0.0, 0.0, 2.0),
                    friction=limit)
    norms, vec_norms, sliding = [], [], []
    for _ in range(10):
        rec = world.run(120)
        norms.append(rec.joint[:, 0, 2])
        sliding.append(rec.joint[:, 0, 3])
        for _ in range(12):
            world.step(1)
            vec_norms.append(np.linalg.norm(world.joint_friction_vec[0]))
            sliding.append(np.array([float(world.joint_sliding[0])]))
    norms = np.concatenate(norms)
    vec_norms = np.array(vec_norms)
    assert np.max(norms) <= limit * (1 + 1e-9), np.max(norms) / limit - 1
    assert np.max(vec_norms) <= limit * (1 + 1e-9), np.max(vec_norms) / limit - 1
    # the run does exercise the ball: it slides, i.e. the torque sits on the limit
    assert np.any(np.concatenate(sliding) == 1.0)
    assert np.max(norms) == pytest.approx(limit, rel=1e-9)


@pytest.fixture(scope="module")
def spin_down():
    m, r, tau, w0 = 2.0, 0.1, 0.005, 3.1
    inertia = 0.4 * m * r * r
    n = np.array([1.0, 2.0, 3.0]) / math.sqrt(14.0)
    world = World(dt=DT, gravity=(0.0, 0.0, 0.0))
    world.add_body("ball", Sphere(r), mass=m, pos=(0.0, 0.0, 1.0), angvel=w0 * n)
    world.add_joint("socket", "spherical", "world", "ball", anchor=(0.0, 0.0, 1.0),
                    friction=tau)
    steps = 1300
    w = np.zeros((steps, 3))
    fvec = np.zeros((steps, 3))
    rec_vel = np.zeros(steps)
    rec_fr = np.zeros(steps)
    slide = np.zeros(steps)
    for k in range(steps):
        world.step(1)
        w[k] = world.body_angvel[1]
        fvec[k] = world.joint_friction_vec[0]
        rec_vel[k] = world.joint_vel[0]
        rec_fr[k] = world.joint_friction_force[0]
        slide[k] = world.joint_sliding[0]
    return dict(m=m, I=inertia, tau=tau, w0=w0, n=n, w=w, fvec=fvec, vel=rec_vel, fr=rec_fr,
                slide=slide, steps=steps)


def test_spinning_ball_keeps_its_spin_axis_while_braked(spin_down):
    s = spin_down
    speed = np.linalg.norm(s["w"], axis=1)
    moving = speed > 1e-6
    assert moving.sum() > 1000
    direction = s["w"][moving] / speed[moving, None]
    assert np.max(np.abs(direction - s["n"])) < 1e-9


def test_spinning_ball_decelerates_at_exactly_tau_over_I(spin_down):
    s = spin_down
    decrement = s["tau"] * DT / s["I"]
    stop = math.ceil(s["w0"] / decrement)                  # 1191
    k = np.arange(1, s["steps"] + 1)
    expected = np.maximum(s["w0"] - k * decrement, 0.0)
    expected[stop - 1:] = 0.0
    speed = np.linalg.norm(s["w"], axis=1)
    np.testing.assert_allclose(speed, expected, rtol=0, atol=1e-9)
    # linear in time with slope -tau / I
    slope = np.polyfit(k[: stop - 1] * DT, speed[: stop - 1], 1)[0]
    assert slope == pytest.approx(-s["tau"] / s["I"], rel=1e-9)
    # the joint reports |wB - wA| = |w|
    np.testing.assert_allclose(s["vel"], speed, rtol=0, atol=1e-12)


def test_spinning_ball_stops_within_one_step_of_w0_I_over_tau_and_stays_stopped(spin_down):
    s = spin_down
    speed = np.linalg.norm(s["w"], axis=1)
    first_rest = int(np.argmax(speed < 1e-12))
    assert speed[first_rest] < 1e-12
    t_stop = (first_rest + 1) * DT
    t_star = s["w0"] * s["I"] / s["tau"]
    assert t_star == pytest.approx(4.96)
    assert abs(t_stop - t_star) <= DT, (t_stop, t_star)
    assert np.all(speed[first_rest:] < 1e-12)


def test_spinning_ball_friction_torque_is_minus_tau_along_the_spin_while_sliding(spin_down):
    s = spin_down
    speed = np.linalg.norm(s["w"], axis=1)
    sliding = speed > 1e-6
    np.testing.assert_allclose(s["fvec"][sliding], -s["tau"] * np.tile(s["n"], (sliding.sum(), 1)),
                               rtol=0, atol=1e-9 * s["tau"])
    np.testing.assert_allclose(s["fr"][sliding], s["tau"], rtol=1e-9)
    assert np.all(s["slide"][sliding] == 1.0)
    assert np.all(s["fr"] <= s["tau"] * (1 + 1e-9))
