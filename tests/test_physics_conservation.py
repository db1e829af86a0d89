"""Conservation laws with friction off: energy of jointed pendulums, angular momentum and
energy of a torque-free body (and the intermediate-axis flip).

Energy is measured from the outside: KE = sum 1/2 m v^2 + 1/2 w . (R diag(I) R^T) w with v, w
the bodies' velocities, PE = sum m g z. Relative errors are taken against the energy the
motion can exchange, E0 - E_rest (E_rest = the hanging rest state), which does not depend on
where z = 0 is.
"""

import numpy as np
import pytest
from conftest import G, body_frame_angvel, kinetic_energy, mechanical_energy, rotation_matrices

from sharnir.physics.shape import Box
from sharnir.physics.world import World

DT = 1.0 / 240.0


# ---- double pendulum ------------------------------------------------------------------------

def double_pendulum(**world_kw):
    """Two 1 kg, 1 m rods (box 1.0 x 0.04 x 0.04, long axis x) hinged end to end about +y,
    the first to the world at (0, 0, 2); released at rest, both horizontal along +x."""
    world = World(**world_kw)
    for i in range(2):
        world.add_body(f"rod{i}", Box((0.5, 0.02, 0.02)), mass=1.0, pos=(0.5 + i, 0.0, 2.0))
    world.add_joint("shoulder", "revolute", "world", "rod0", anchor=(0.0, 0.0, 2.0),
                    axis=(0.0, 1.0, 0.0))
    world.add_joint("elbow", "revolute", "rod0", "rod1", anchor=(1.0, 0.0, 2.0),
                    axis=(0.0, 1.0, 0.0))
    return world


def test_frictionless_double_pendulum_energy_drift_below_1_percent_over_10_s():
    world = double_pendulum(dt=DT)
    bodies = [1, 2]
    e0 = mechanical_energy(world, bodies)
    # hanging at rest the centres are 0.5 m and 1.5 m below the pivot: E0 - E_rest = 2 m g
    scale = 1.0 * G * 0.5 + 1.0 * G * 1.5
    assert e0 == pytest.approx(2 * 1.0 * G * 2.0)
    dev = np.zeros(2400)
    for k in range(2400):
        world.step(1)
        dev[k] = (mechanical_energy(world, bodies) - e0) / scale
    worst = np.max(np.abs(dev))
    at = np.argmax(np.abs(dev)) * DT + DT
    assert worst < 0.01, (f"max |E - E0| / (E0 - E_rest) = {worst:.4f}, at t = {at:.2f} s, "
                          f"E(10 s) - E0 = {dev[-1]:.4f}")


# ---- torque-free asymmetric body ----------------------------------------------------------

BOX = (0.3, 0.2, 0.1)
# box, half extents a, b, c: I = m/3 (b^2 + c^2, a^2 + c^2, a^2 + b^2) = (1/60, 1/30, 13/300):
# three distinct moments, y is the intermediate axis.
# Spin w0 = (0.01, 3, 0.01) rad/s, mostly about y. Linearised Euler equations about a steady
# spin W about the intermediate axis grow as exp(lambda t) with
#   lambda = W sqrt((I2 - I1)(I3 - I2) / (I1 I3)) = 3 sqrt(1/60 * 1/100 / (1/60 * 13/300))
#          = 1.44 /s,
# so a 1e-2 perturbation reaches O(W) after ~ln(300)/1.44 ~ 4 s: the flip (body-frame y
# component changes sign) happens within 10 s. With no torque the world angular momentum is
# constant and the kinetic energy 1/2 w . L is constant.
SPIN = np.array([0.01, 3.0, 0.01])
TF_STEPS = 2400


@pytest.fixture(scope="module")
def torque_free():
    world = World(dt=DT, gravity=(0.0, 0.0, 0.0))
    world.add_body("brick", Box(BOX), mass=1.0, pos=(0.0, 0.0, 0.0), angvel=SPIN)
    inertia = 1.0 / 3.0 * np.array([BOX[1] ** 2 + BOX[2] ** 2, BOX[0] ** 2 + BOX[2] ** 2,
                                    BOX[0] ** 2 + BOX[1] ** 2])
    L0 = inertia * SPIN                              # body frame = world frame at t = 0
    ke0 = 0.5 * float(np.dot(SPIN, inertia * SPIN))
    L_state = np.zeros((TF_STEPS, 3))
    L_from_w = np.zeros((TF_STEPS, 3))      # I w at the pose the step started from
    L_from_w_end = np.zeros((TF_STEPS, 3))  # I w at the pose the step ended at
    w_body = np.zeros((TF_STEPS, 3))
    ke = np.zeros(TF_STEPS)
    q_prev = np.array(world.body_quat[1])
    for k in range(TF_STEPS):
        world.step(1)
        w = np.array(world.body_angvel[1])
        L_state[k] = world.body_angmom[1]
        # semi-implicit Euler: w(t + h) = I(t)^-1 L, I(t) = R(t) diag(I) R(t)^T at the pose
        # the step started from
        R0 = rotation_matrices(q_prev)
        L_from_w[k] = R0 @ (inertia * (R0.T @ w))
        R1 = rotation_matrices(np.array(world.body_quat[1]))
        L_from_w_end[k] = R1 @ (inertia * (R1.T @ w))
        w_body[k] = body_frame_angvel(world, 1)
        ke[k] = kinetic_energy(world, [1])
        q_prev = np.array(world.body_quat[1])
    return dict(inertia=inertia, L0=L0, ke0=ke0, L_state=L_state, L_from_w=L_from_w,
                L_from_w_end=L_from_w_end, w_body=w_body, ke=ke, world=world)


def test_torque_free_body_conserves_world_angular_momentum(torque_free):
    s = torque_free
    assert np.allclose(s["inertia"], [1 / 60, 1 / 30, 13 / 300])
    norm = np.linalg.norm(s["L0"])
    dev = np.max(np.abs(s["L_state"] - s["L0"])) / norm
    assert dev < 1e-6, dev


def test_torque_free_body_angular_velocity_carries_the_conserved_momentum(torque_free):
    # the angular velocity the world reports is I^-1 L for a pose of its step: the pose the
    # step started from (semi-implicit Euler of paper 002: w(t + h) = I(t)^-1 L) or the one
    # it ended at; either way I_world w reproduces the conserved L0
    s = torque_free
    norm = np.linalg.norm(s["L0"])
    dev_start = np.max(np.abs(s["L_from_w"] - s["L0"])) / norm
    dev_end = np.max(np.abs(s["L_from_w_end"] - s["L0"])) / norm
    assert min(dev_start, dev_end) < 1e-6, (dev_start, dev_end)


def test_torque_free_body_flips_about_its_intermediate_axis(torque_free):
    wy = torque_free["w_body"][:, 1]
    assert wy[0] > 2.9
    assert np.min(wy) < -2.0, np.min(wy)          # it turned over: w_y now points the other way
    assert np.any(np.diff(np.sign(wy)) != 0)


def test_torque_free_body_kinetic_energy_does_not_grow_over_1_percent(torque_free):
    s = torque_free
    growth = np.max(s["ke"]) / s["ke0"] - 1.0
    at = (np.argmax(s["ke"]) + 1) * DT
    assert growth <= 0.01, f"KE grew by {growth:.4%} (max at t = {at:.2f} s)"


@pytest.mark.parametrize("spin", [20.0, 60.0, 300.0])
def test_a_torque_free_body_turning_radians_a_step_keeps_its_energy_and_momentum(spin):
    """dt 0.1, the largest allowed: the brick turns 2-30 rad a step about a tilted axis.  L is
    conserved exactly and so is 1/2 w . L (a turn of more than pi a step has no rate to read
    off it; turned by h w, the energy ranged over 0.7-3.0 times its value at 60 rad/s)."""
    world = World(dt=0.1, gravity=(0.0, 0.0, 0.0))
    w0 = spin * np.array([0.2, 1.0, 0.3]) / np.linalg.norm([0.2, 1.0, 0.3])
    world.add_body("brick", Box(BOX), mass=1.0, pos=(0.0, 0.0, 0.0), angvel=w0)
    inertia = 1.0 / 3.0 * np.array([BOX[1] ** 2 + BOX[2] ** 2, BOX[0] ** 2 + BOX[2] ** 2,
                                    BOX[0] ** 2 + BOX[1] ** 2])
    L0, ke0 = inertia * w0, 0.5 * float(np.dot(w0, inertia * w0))
    ke, L = np.zeros(100), np.zeros((100, 3))
    for k in range(100):
        world.step(1)
        ke[k], L[k] = kinetic_energy(world, [1]), world.body_angmom[1]
    assert np.max(np.abs(L - L0)) < 1e-9 * np.linalg.norm(L0)
    assert np.max(np.abs(ke / ke0 - 1.0)) < 0.01, (ke.min() / ke0, ke.max() / ke0)


# ---- a symmetric link on a frictionless ball joint ----------------------------------------

@pytest.fixture(scope="module")
def ball_rod():
    """A 1 kg, 1 m rod (box 1.0 x 0.04 x 0.04, I_y = I_z: symmetric about its long axis x)
    on a frictionless ball joint at one end, swinging in 3D under gravity for 10 s."""
    world = World(dt=DT)
    world.add_body("rod", Box((0.5, 0.02, 0.02)), mass=1.0, pos=(0.5, 0.0, 2.0),
                   vel=(0.0, 1.0, 0.0), angvel=(0.0, 0.0, 2.0))
    world.add_joint("ball", "spherical", "world", "rod", anchor=(0.0, 0.0, 2.0))
    e0 = mechanical_energy(world, [1])
    scale = e0 - 1.0 * G * (2.0 - 0.5)            # E0 - E_rest (hanging straight down)
    spin = np.zeros(2400)
    dev = np.zeros(2400)
    for k in range(2400):
        world.step(1)
        spin[k] = body_frame_angvel(world, 1)[0]
        dev[k] = (mechanical_energy(world, [1]) - e0) / scale
    return spin, dev


def test_ball_jointed_symmetric_rod_never_spins_about_its_own_axis(ball_rod):
    """Euler's equation about the symmetry axis: I_x dw_x/dt = (I_y - I_z) w_y w_z + tau_x = 0,
    because I_y = I_z and both the joint reaction and gravity act at points on the axis (no
    moment about it). So the body-frame spin w_x stays at its initial value 0."""
    spin, _ = ball_rod
    worst = np.max(np.abs(spin))
    assert worst < 1e-6, (f"axial spin reached {worst:.3g} rad/s at t = "
                          f"{(np.argmax(np.abs(spin)) + 1) * DT:.2f} s")


def test_ball_jointed_symmetric_rod_conserves_energy_within_1_percent(ball_rod):
    """Frictionless joint, gravity only: mechanical energy is conserved."""
    _, dev = ball_rod
    assert np.max(np.abs(dev)) < 0.01, np.max(np.abs(dev))
