"""The door of paper 000 (Fig. 5-7): a hinged door braked by Coulomb friction in its hinge.

Door: 30 kg box 1.0 (x) x 0.04 (y) x 2.0 (z) m, centre (0.5, 0, 1), hinge = revolute joint to
the world at its edge, anchor (0, 0, 1), axis z. Starts turning at w0 = 2 rad/s about z (centre
velocity w0 z x (0.5, 0, 0) = (0, 1, 0)); friction limit 20 N m; dt = 0.01 s; gravity on
(gravity is parallel to the hinge axis, so it has no moment about it).

Expected values on paper. About the hinge line
    I = m (a^2 + c^2) / 12 + m (a / 2)^2,  a = 1.0 (x), c = 0.04 (y)
      = 30 * 1.0016 / 12 + 30 * 0.25 = 2.504 + 7.5 = 10.004 kg m^2.
The joint reaction acts on the hinge line, so only friction changes the angular momentum
about it. Semi-implicit Euler with the clamped friction impulse |p| <= tau dt gives, per step,
    w_k = w_{k-1} - tau dt / I      while that stays > 0 (sliding, p = -tau dt),
    w_k = 0                         at the first step where it would not (sticking),
    theta_k = theta_{k-1} + dt w_k  (the position uses the new velocity),
so the angle turned is sum_k dt w_k = 0.990404 rad (the recurrence is evaluated below).
"""

import numpy as np
import pytest

from sharnir.physics.shape import Box
from sharnir.physics.world import World

MASS, A, C = 30.0, 1.0, 0.04
TAU, DT, W0 = 20.0, 0.01, 2.0
I_HINGE = MASS * (A * A + C * C) / 12 + MASS * (A / 2) ** 2
REST_STEPS = 1000      # 10 s after the stop


def discrete_solution():
    """Velocities w_1, w_2, ... of the clamped semi-implicit Euler recurrence, until 0."""
    ws = []
    w = W0
    while w > 0.0:
        w = max(w - TAU * DT / I_HINGE, 0.0)
        ws.append(w)
    return np.array(ws)


@pytest.fixture(scope="module")
def door():
    world = World(dt=DT, gravity=(0.0, 0.0, -9.81))
    world.add_body("door", Box((A / 2, C / 2, 1.0)), mass=MASS, pos=(0.5, 0.0, 1.0),
                   vel=(0.0, W0 * 0.5, 0.0), angvel=(0.0, 0.0, W0))
    world.add_joint("hinge", "revolute", "world", "door", anchor=(0.0, 0.0, 1.0),
                    axis=(0.0, 0.0, 1.0), friction=TAU)
    ws = discrete_solution()
    stop = len(ws)                       # steps 1..stop; w_stop == 0 is the first rest step
    rec = world.run(stop + REST_STEPS)
    return world, rec, ws, stop


def test_door_hinge_inertia_is_the_paper_value():
    assert I_HINGE == pytest.approx(10.004, abs=1e-12)


def test_door_turns_exact_discrete_angle_then_stays_at_rest(door):
    world, rec, ws, stop = door
    expected = DT * ws.sum()
    assert expected == pytest.approx(0.990404, abs=5e-7)
    angle = rec.joint[:, 0, 0]
    # every step while it moves follows the recurrence: theta_k = dt (w_1 + ... + w_k)
    np.testing.assert_allclose(angle[:stop], DT * np.cumsum(ws), rtol=0, atol=1e-6)
    assert abs(angle[stop - 1] - expected) < 1e-6, (angle[stop - 1], expected)


def test_door_velocity_falls_linearly_by_tau_over_I_per_step(door):
    world, rec, ws, stop = door
    np.testing.assert_allclose(rec.joint[:stop, 0, 1], ws, rtol=0, atol=1e-9)


def test_door_is_at_rest_from_the_first_step_it_stops(door):
    world, rec, ws, stop = door
    vel = rec.joint[stop - 1:, 0, 1]
    assert np.max(np.abs(vel)) < 1e-12, np.max(np.abs(vel))
    assert abs(world.body_angvel[1][2]) < 1e-12


def test_door_stays_put_for_ten_seconds_after_stopping(door):
    world, rec, ws, stop = door
    angle = rec.joint[stop - 1:, 0, 0]
    assert len(angle) == REST_STEPS + 1
    drift = np.max(np.abs(angle - angle[0]))
    assert drift < 1e-9, drift


def test_door_friction_opposes_motion_and_reports_sliding_then_sticking(door):
    world, rec, ws, stop = door
    moving = slice(0, stop - 1)              # steps whose w_k > 0
    np.testing.assert_allclose(rec.joint[moving, 0, 2], -TAU, rtol=1e-9)
    assert np.all(rec.joint[moving, 0, 3] == 1.0)
    assert np.all(rec.joint[stop - 1:, 0, 3] == 0.0)
    # sticking needs less than the limit: |p| = I w_{stop-1} < tau dt, reported as p / dt
    assert abs(rec.joint[stop - 1, 0, 2]) <= TAU * (1 + 1e-12)
    assert np.all(np.abs(rec.joint[:, 0, 2]) <= TAU * (1 + 1e-12))


def test_door_stop_step_friction_removes_exactly_the_remaining_momentum(door):
    # Only friction has a moment about the hinge line, so the step that stops the door takes
    # its whole angular momentum about the hinge: p = -I w_{stop-1}, reported as p / dt.
    world, rec, ws, stop = door
    expected = -I_HINGE * ws[-2] / DT
    assert rec.joint[stop - 1, 0, 2] == pytest.approx(expected, rel=1e-6)


def test_door_friction_is_zero_once_at_rest(door):
    # At rest with gravity along the hinge axis nothing acts about the hinge line, so the
    # static friction needed from the step after the stop on is zero.
    world, rec, ws, stop = door
    after = rec.joint[stop:, 0, 2]
    assert np.max(np.abs(after)) < 1e-6, after[:5]
