"""The sensors (paper 002's force sensors in hands and feet): each joint's 6-axis reaction and
each body's summed contact force, against statics and dynamics worked out on paper."""
import math

import numpy as np
import pytest

from sharnir.physics import Box, DCMotor, Material, Plane, Sphere, World

G = 9.81


def hanging(joint_type="revolute", mass=2.0, length=0.5, dt=1 / 240):
    """A box hanging `length` below an anchor at the origin (body 1)."""
    w = World(dt=dt, iterations=100, tolerance=1e-12)
    w.add_body("bob", Box((0.05, 0.05, 0.05)), mass=mass, pos=(0.0, 0.0, -length))
    w.add_joint("pivot", joint_type, "world", "bob", anchor=(0.0, 0.0, 0.0),
                axis=(1.0, 0.0, 0.0))
    return w


@pytest.mark.parametrize("joint_type", ["revolute", "spherical", "fixed", "prismatic"])
def test_a_joint_at_rest_carries_the_weight_and_no_torque_about_the_load_line(joint_type):
    w = hanging(joint_type)
    w.step(240)
    force, torque = w.joint_reaction[0, :3], w.joint_reaction[0, 3:]
    np.testing.assert_allclose(force, [0.0, 0.0, 2.0 * G], atol=1e-9 * G)
    np.testing.assert_allclose(torque, 0.0, atol=1e-9)


def test_a_motor_holding_a_horizontal_arm_feels_m_g_l_about_its_axis():
    """An arm sticking out along +y from a motorised hinge about x, held by a PD controller:
    at rest the hinge's reaction on the arm is m g up and m g l about x (the weight's moment
    about the anchor, (0, l, 0) x (0, 0, -m g) = (-m g l, 0, 0), cancelled)."""
    m, l = 1.5, 0.4
    w = World(dt=1 / 240, iterations=100, tolerance=1e-12)
    w.add_body("arm", Box((0.02, 0.02, 0.02)), mass=m, pos=(0.0, l, 0.0))
    w.add_joint("shoulder", "revolute", "world", "arm", anchor=(0.0, 0.0, 0.0),
                axis=(1.0, 0.0, 0.0))
    w.add_motor("shoulder", DCMotor(resistance=1.0, torque_constant=0.05, gear_ratio=100.0,
                                    voltage_limit=48.0, current_limit=1e3))
    w.set_controller("shoulder", "position", kp=100.0, kd=2.0, target=0.0)
    w.step(2400)
    force, torque = w.joint_reaction[0, :3], w.joint_reaction[0, 3:]
    assert abs(w.joint_vel[0]) < 1e-9
    arm = l * math.cos(w.joint_coord[0])     # it droops by the PD's error, a few mrad
    np.testing.assert_allclose(force, [0.0, 0.0, m * G], atol=1e-4 * m * G)
    np.testing.assert_allclose(torque, [m * G * arm, 0.0, 0.0], atol=1e-4 * m * G * l)
    # the motor carries the moment about the axis: its torque is the sensor's x
    assert w.motor_state["torque"][0] == pytest.approx(m * G * arm, rel=1e-4)
    f_local, t_local = w.joint_reaction_local("shoulder")
    assert t_local[0] == pytest.approx(m * G * arm, rel=1e-4)   # x of the joint frame = axis
    assert np.linalg.norm(f_local) == pytest.approx(m * G, rel=1e-4)


def test_a_swinging_pendulum_pulls_on_its_pivot_with_the_centripetal_force():
    """A rigid pendulum (centre at distance l, inertia I_c) let go horizontal: at the bottom
    w^2 = 2 m g l / (I_c + m l^2), and the pivot pulls it up by m g + m w^2 l."""
    m, l, a = 1.0, 0.5, 0.05
    dt = 1 / 2000
    w = World(dt=dt, iterations=100, tolerance=1e-12)
    w.add_body("bob", Box((a, a, a)), mass=m, pos=(0.0, l, 0.0))
    w.add_joint("pivot", "revolute", "world", "bob", anchor=(0.0, 0.0, 0.0),
                axis=(1.0, 0.0, 0.0))
    ic = m * (2 * a) ** 2 / 6
    rec = w.run(int(0.6 / dt))
    lowest = int(np.argmin(np.abs(rec.joint[:, 0, 0] + math.pi / 2)))
    assert abs(rec.joint[lowest, 0, 0] + math.pi / 2) < 0.01
    omega2 = 2 * m * G * l / (ic + m * l * l)
    pull = rec.joint[lowest, 0, 8:11]
    assert pull[2] == pytest.approx(m * G + m * omega2 * l, rel=0.01)
    assert abs(pull[1]) < 0.02 * m * G


def box_on_ground(vel=(0.0, 0.0, 0.0), mu=0.5, mass=3.0):
    w = World(dt=1 / 240, iterations=50)
    w.add_body("ground", Plane(), kind="static", material=Material(friction=mu))
    w.add_body("box", Box((0.1, 0.2, 0.05)), mass=mass, pos=(0.0, 0.0, 0.05), vel=vel,
               material=Material(friction=mu))
    return w


def test_a_resting_box_feels_its_weight_through_its_contacts():
    w = box_on_ground()
    w.step(240)
    f, t = w.body_contact[2, :3], w.body_contact[2, 3:]
    np.testing.assert_allclose(f, [0.0, 0.0, 3.0 * G], atol=1e-6)
    np.testing.assert_allclose(t, 0.0, atol=1e-6)
    # the ground feels the opposite (actio = reactio)
    np.testing.assert_allclose(w.body_contact[1, :3], -f, atol=1e-12)


def test_a_sliding_box_feels_coulomb_friction_against_its_motion():
    """Sliding along +x: the contact force is m g up and mu m g back, and the box slows at
    mu g, so it stops after v0^2 / (2 mu g)."""
    mu, m = 0.5, 3.0
    w = box_on_ground(vel=(2.0, 0.0, 0.0), mu=mu, mass=m)
    w.step(24)
    f = w.body_contact[2, :3]
    assert f[2] == pytest.approx(m * G, rel=1e-3)
    assert f[0] == pytest.approx(-mu * m * G, rel=1e-3)
    assert abs(f[1]) < 1e-6


def test_contact_forces_between_bodies_cancel():
    """Newton's third law: a stack's contact forces sum to zero over all bodies, ground
    included, and the ground carries the whole stack."""
    w = World(dt=1 / 240, iterations=50)
    w.add_body("ground", Plane(), kind="static")
    masses = (1.0, 2.0, 0.5)
    for k, m in enumerate(masses):
        w.add_body(f"box{k}", Box((0.1, 0.1, 0.1)), mass=m, pos=(0.0, 0.0, 0.1 + 0.2 * k))
    w.add_body("ball", Sphere(0.05), mass=0.3, pos=(0.0, 0.0, 0.65))
    w.step(480)
    np.testing.assert_allclose(w.body_contact[:, :3].sum(axis=0), 0.0, atol=1e-9)
    assert w.body_contact[1, 2] == pytest.approx(-(sum(masses) + 0.3) * G, rel=1e-4)


def test_the_recording_carries_motor_reaction_and_contact_channels():
    m, l = 1.5, 0.4
    w = World(dt=1 / 240, iterations=50)
    w.add_body("ground", Plane(), kind="static")
    w.add_body("arm", Box((0.02, 0.02, 0.02)), mass=m, pos=(0.0, l, 1.0))
    w.add_joint("shoulder", "revolute", "world", "arm", anchor=(0.0, 0.0, 1.0),
                axis=(1.0, 0.0, 0.0))
    w.add_motor("shoulder", DCMotor(resistance=1.0, torque_constant=0.05, gear_ratio=100.0),
                voltage=3.0)
    w.add_body("crate", Box((0.1, 0.1, 0.1)), mass=2.0, pos=(1.0, 0.0, 0.1))
    rec = w.run(50)
    assert rec.joint.shape == (50, 1, 14)
    np.testing.assert_array_equal(rec.joint[-1, 0, 8:], w.joint_reaction[0])
    np.testing.assert_array_equal(rec.joint[-1, 0, 4], w.motor_state["voltage"][0])
    np.testing.assert_array_equal(rec.joint[-1, 0, 5], w.motor_state["current"][0])
    np.testing.assert_array_equal(rec.motor[:, 0, :], rec.joint[:, 0, 4:8])
    # the held arm is a sensor body; the free crate is not (its force is in body_contact)
    assert list(rec.contact_bodies) == [2] == list(w.sensor_bodies)
    assert rec.contact.shape == (50, 1, 6)
    assert w.body_contact[3, 2] == pytest.approx(2.0 * G, rel=1e-3)
