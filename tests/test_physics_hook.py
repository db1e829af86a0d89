"""A user's controller in Python (World.set_hook) and grasping (World.grasp / release): the
hook sees what the built-in controllers see, a grasp is a joint made at run time."""
import numpy as np
import pytest

from sharnir.physics import Box, DCMotor, Plane, World

G = 9.81
MOTOR = dict(resistance=1.0, torque_constant=0.05, gear_ratio=100.0, voltage_limit=24.0)


def arm(controller):
    w = World(dt=1 / 240, iterations=50)
    w.add_body("arm", Box((0.2, 0.02, 0.02)), mass=1.0, pos=(0.2, 0.0, 0.0))
    w.add_joint("shoulder", "revolute", "world", "arm", axis=(0.0, 1.0, 0.0), friction=0.1)
    w.add_motor("shoulder", DCMotor(**MOTOR))
    if controller:
        w.set_controller("shoulder", "position", kp=60.0, kd=1.5, target=0.7)
    return w


def test_a_python_pd_hook_steps_like_the_built_in_pd():
    """The built-in controller reads q and w after the last step and saturates at the
    supply; a hook doing the same in Python gives the same motion (to rounding: the kernel
    fuses multiply-adds)."""
    built_in = arm(True)
    built_in.step(480)

    hooked = arm(False)

    def pd(world):
        q, w = world.joint_coord[0], world.joint_vel[0]
        u = 60.0 * (0.7 - q) + 1.5 * (0.0 - w)
        world.set_voltage("shoulder", max(-24.0, min(24.0, u)))

    hooked.set_hook(pd)
    hooked.step(480)
    assert hooked.joint_coord[0] == pytest.approx(built_in.joint_coord[0], rel=1e-12)
    np.testing.assert_allclose(hooked.body_pos, built_in.body_pos, rtol=1e-12, atol=1e-15)
    assert abs(hooked.joint_coord[0] - 0.7) < 0.05


def test_the_hook_runs_before_every_nth_step_and_records_still_work():
    w = arm(True)
    calls = []
    w.set_hook(lambda world: calls.append(world.time), every=3)
    rec = w.run(12)
    assert len(calls) == 4
    np.testing.assert_allclose(calls, np.arange(4) * 3 / 240, atol=1e-12)
    np.testing.assert_allclose(rec.t, np.arange(1, 13) / 240, atol=1e-12)
    assert np.all(rec.joint[:, 0, 4] != 0.0)    # the motor's voltage was recorded every step
    w.set_hook(None)
    w.step(5)
    assert len(calls) == 4


def test_an_exception_in_the_hook_stops_the_steps_and_says_when():
    w = arm(True)

    def failing(world):
        if world.time > 0.05:
            raise RuntimeError("sensor lost")

    w.set_hook(failing)
    with pytest.raises(RuntimeError, match="sensor lost") as info:
        w.step(100)
    assert any("controller hook at t = 0.05" in note for note in info.value.__notes__)
    assert w.time == pytest.approx(13 / 240)
    with pytest.raises(ValueError, match="callable"):
        w.set_hook(42)


def hand_and_box():
    """A hand fixed to the world at 1 m and a 2 kg box just below it, falling."""
    w = World(dt=1 / 240, iterations=100, tolerance=1e-12)
    w.add_body("hand", Box((0.05, 0.05, 0.05)), mass=0.5, pos=(0.0, 0.0, 1.0))
    w.add_joint("wrist", "fixed", "world", "hand", anchor=(0.0, 0.0, 1.0))
    w.add_body("box", Box((0.05, 0.05, 0.05)), mass=2.0, pos=(0.0, 0.0, 0.9))
    return w


def test_a_grasped_box_hangs_from_the_hand_and_the_grip_feels_its_weight():
    w = hand_and_box()
    name = w.grasp("hand", "box")
    assert name == "grasp:hand:0" and w.joint_names[-1] == name
    w.step(240)
    assert abs(w.body_pos[2, 2] - 0.9) < 1e-6
    force, torque = w.joint_reaction[1, :3], w.joint_reaction[1, 3:]
    np.testing.assert_allclose(force, [0.0, 0.0, 2.0 * G], atol=1e-6)
    np.testing.assert_allclose(torque, 0.0, atol=1e-6)
    # the wrist carries hand and box
    assert w.joint_reaction[0, 2] == pytest.approx(2.5 * G, rel=1e-6)
    assert 2 in set(w.sensor_bodies)   # held now: its contact force is recorded


def test_a_released_box_falls_freely():
    """After release only gravity acts: semi-implicit Euler drops it by
    g h^2 n (n + 1) / 2 in n steps from rest."""
    w = hand_and_box()
    name = w.grasp("hand", "box")
    w.step(60)
    z0 = w.body_pos[2, 2]
    w.release(name)
    assert w.joint_names == ["wrist"]
    n, h = 48, 1 / 240
    w.step(n)
    assert w.body_pos[2, 2] == pytest.approx(z0 - G * h * h * n * (n + 1) / 2, abs=1e-9)
    assert abs(w.body_pos[1, 2] - 1.0) < 1e-9       # the hand stays


def test_grasping_in_flight_keeps_the_momentum():
    """Two free boxes moving apart in zero gravity, gripped together: a perfectly inelastic
    capture. The joint's impulses are internal, so momentum and angular momentum about the
    centre of mass are kept, and both then move as one rigid body."""
    w = World(dt=1 / 240, gravity=(0.0, 0.0, 0.0), iterations=200, tolerance=1e-13)
    w.add_body("a", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.0, 0.0, 0.0), vel=(0.3, 0.0, 0.1))
    w.add_body("b", Box((0.1, 0.1, 0.1)), mass=3.0, pos=(0.25, 0.0, 0.0), vel=(-0.1, 0.2, 0.0))
    m = np.array([1.0, 3.0])

    def momenta():
        x, v = w.body_pos[1:], w.body_vel[1:]
        P = (m[:, None] * v).sum(axis=0)
        c = (m[:, None] * x).sum(axis=0) / m.sum()
        L = (np.cross(x - c, m[:, None] * v) + w.body_angmom[1:]).sum(axis=0)
        return P, L

    w.step(1)
    p0, l0 = momenta()
    w.grasp("a", "b")
    w.step(120)
    p1, l1 = momenta()
    np.testing.assert_allclose(p1, p0, atol=1e-9)
    np.testing.assert_allclose(l1, l0, atol=1e-9)
    # they move as one rigid body: the same spin, and b's velocity is a's carried along
    wa, wb = w.body_angvel[1], w.body_angvel[2]
    np.testing.assert_allclose(wa, wb, atol=1e-9)
    rel = w.body_vel[2] - w.body_vel[1] - np.cross(wa, w.body_pos[2] - w.body_pos[1])
    # (velocities meet the joint at the step's starting poses: O(h |w| |v|) off at its end)
    assert np.linalg.norm(rel) < 0.01 * np.linalg.norm(w.body_vel[2] - w.body_vel[1])


def test_grasp_and_release_keep_the_ground_contact_and_the_other_joints():
    w = World(dt=1 / 240)
    w.add_body("ground", Plane(), kind="static")
    w.add_body("hand", Box((0.05, 0.05, 0.05)), mass=0.5, pos=(0.0, 0.0, 1.0))
    w.add_joint("wrist", "fixed", "world", "hand", anchor=(0.0, 0.0, 1.0))
    w.add_body("crate", Box((0.1, 0.1, 0.1)), mass=2.0, pos=(0.5, 0.0, 0.1))
    w.step(120)
    w.grasp("hand", "crate", name="grip")
    w.step(2)
    w.release("grip")
    w.step(60)
    assert w.body_contact[3, 2] == pytest.approx(2.0 * G, rel=1e-3)
    assert abs(w.body_pos[3, 2] - 0.1) < 2e-3
    with pytest.raises(ValueError, match="unknown joint 'grip'"):
        w.release("grip")
