"""Revolute joints between the same two bodies compose (physics/gimbal.py): a universal joint
(2 hinges) or a gimbal (3), each hinge's axis and anchor carried by the ones before it, as
MuJoCo's joints in one body are. Checked against what is derived on paper: the angles of a
known rotation, the compound pendulum's period about each hinge (anchors together and apart),
Hooke's joint's output speed, the friction that holds a hinge, a limit that holds one, a DC
motor's no-load speed, and a gimbal about the centre of mass turning freely like a ball
joint."""
import math

import numpy as np
import pytest

from sharnir.physics.shape import matrix_quat, quat_matrix
from sharnir.physics.world import DCMotor, World

G = 9.81


def turn(axis, angle):
    """Rotation matrix about a unit axis (Rodrigues)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


def hung(axes, *, limits=None, centre=(0.0, 0.0, -0.4), mass=2.0,
         inertia=(0.05, 0.03, 0.02), gravity=(0.0, 0.0, -G), dt=0.001, friction=0.0,
         anchors=None):
    """A body hung from the world by one revolute joint per axis (anchors: at the origin)."""
    w = World(dt=dt, gravity=gravity)
    w.add_body("base", kind="static")
    w.add_body("leg", mass=mass, inertia=inertia, pos=centre)
    for k, axis in enumerate(axes):
        w.add_joint(f"h{k}", "revolute", "base", "leg", axis=axis,
                    anchor=(0.0, 0.0, 0.0) if anchors is None else anchors[k],
                    limits=None if limits is None else limits[k], friction=friction)
    w.configure(iterations=200, tolerance=0.0)
    return w


HIP = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0))   # MuJoCo's humanoid's hip: x, z, y
HIP_LIMITS = ((-3.0, 3.0), (-1.2, 1.2), (-3.0, 3.0))


def place(world, R, omega=(0.0, 0.0, 0.0)):
    """Turn the leg about the anchor (the origin) by R, spinning at omega (world)."""
    _, state, _ = world._ready()
    leg = world.body_names.index("leg")
    centre = R @ np.array([0.0, 0.0, -0.4])
    state.body_pos[leg] = centre
    state.body_quat[leg] = matrix_quat(R)
    state.body_vel[leg] = np.cross(omega, centre)
    state.body_angvel[leg] = omega
    inertia = R @ np.diag(world.body_inertia[leg]) @ R.T
    state.body_angmom[leg] = inertia @ np.asarray(omega, float)


def test_gimbal_reads_the_three_angles_of_a_known_rotation():
    world = hung(HIP, limits=HIP_LIMITS, gravity=(0.0, 0.0, 0.0))
    q = (0.3, -0.5, 0.7)
    # each axis carried by the ones before it: R = R(a1, q1) R(a2, q2) R(a3, q3), the a_i
    # in the parent's frame (the third, y, is -(x cross z): its frame is turned)
    place(world, turn(HIP[0], q[0]) @ turn(HIP[1], q[1]) @ turn(HIP[2], q[2]))
    world.step()   # at rest, without gravity: the pose is kept and the angles reported
    assert world.joint_coord == pytest.approx(q, abs=1e-9)
    assert world.joint_types == ["revolute"] * 3


def test_gimbal_rates_are_the_angular_velocity_in_the_carried_axes():
    # a body turning about its centre of mass (the anchor) with equal moments spins at a
    # constant w; w = c1 q1' + c2 q2' + c3 q3' with c1 = a1, c2 = R(a1, q1) a2,
    # c3 = R(a1, q1) R(a2, q2) a3, so q' = [c1 c2 c3]^-1 w at the angles the step ends at
    world = hung(HIP, limits=HIP_LIMITS, gravity=(0.0, 0.0, 0.0), centre=(0.0, 0.0, 0.0),
                 inertia=(0.04, 0.04, 0.04))
    omega = np.array([0.4, -0.9, 0.5])
    _, state, _ = world._ready()
    leg = world.body_names.index("leg")
    R0 = turn(HIP[0], 0.2) @ turn(HIP[1], 0.4) @ turn(HIP[2], -0.6)
    state.body_quat[leg] = matrix_quat(R0)
    state.body_angvel[leg] = omega
    state.body_angmom[leg] = 0.04 * omega
    world.step(5)
    q1, q2, _ = world.joint_coord
    c1 = np.array(HIP[0])
    c2 = turn(HIP[0], q1) @ np.array(HIP[1])
    c3 = turn(HIP[0], q1) @ turn(HIP[1], q2) @ np.array(HIP[2])
    assert world.body_angvel[leg] == pytest.approx(omega, abs=1e-12)
    assert world.joint_vel == pytest.approx(np.linalg.solve(np.column_stack((c1, c2, c3)),
                                                            omega), abs=1e-9)


def test_gimbal_about_the_centre_of_mass_turns_freely_like_a_ball_joint():
    # no torque about the centre of mass: L is kept; the joint's rows do no work
    world = hung(HIP, limits=HIP_LIMITS, gravity=(0.0, 0.0, 0.0), centre=(0.0, 0.0, 0.0))
    _, state, _ = world._ready()
    leg = world.body_names.index("leg")
    state.body_angvel[leg] = (0.3, 0.2, -0.25)
    state.body_angmom[leg] = np.array((0.05, 0.03, 0.02)) * (0.3, 0.2, -0.25)
    L0 = state.body_angmom[leg].copy()
    world.step(500)
    assert np.abs(world.joint_coord).max() > 0.1
    assert world.body_angmom[leg] == pytest.approx(L0, abs=1e-12)


def swing_period(world, axis, point, hinge, amplitude=0.05, steps=3000):
    """Period of a small swing about hinge `hinge` (its axis `axis` through `point` at rest)
    from rest at `amplitude`, from the times its angle crosses zero going up."""
    _, state, _ = world._ready()
    leg = world.body_names.index("leg")
    R = turn(axis, amplitude)
    state.body_pos[leg] = point + R @ (state.body_pos[leg] - point)
    state.body_quat[leg] = matrix_quat(R)
    coords = []
    for _ in range(steps):
        world.step()
        coords.append(world.joint_coord[hinge])
    coords = np.array(coords)
    t = np.arange(1, steps + 1) * world.settings["dt"]
    up = np.flatnonzero((coords[:-1] < 0.0) & (coords[1:] >= 0.0))
    cross = t[up] - coords[up] / (coords[up + 1] - coords[up]) * (t[up + 1] - t[up])
    return float(np.mean(np.diff(cross)))


@pytest.mark.parametrize("hinge", [0, 1])
@pytest.mark.parametrize("apart", [0.0, 0.15])
def test_universal_joint_swings_about_each_hinge_like_a_compound_pendulum(hinge, apart):
    # a small swing about one hinge (the other at 0): T = 2 pi sqrt(I_O / (m g d)), I_O the
    # moment about that axis through its anchor: I_axis + m d^2. The second hinge's anchor
    # sits `apart` below the first's (carried by it), the centre 0.4 m below the first's:
    # d = 0.4 m about the first hinge, 0.4 - apart about the second
    axes = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    points = (np.zeros(3), np.array([0.0, 0.0, -apart]))
    world = hung(axes, anchors=points)
    d = (0.4, 0.4 - apart)[hinge]
    I_axis = (0.05, 0.03)[hinge]
    expected = 2.0 * math.pi * math.sqrt((I_axis + 2.0 * d**2) / (2.0 * G * d))
    period = swing_period(world, axes[hinge], points[hinge], hinge)
    assert period == pytest.approx(expected, rel=2e-3)
    assert np.abs(world.joint_coord[1 - hinge]) < 1e-9


def test_universal_joint_transmits_rotation_like_hookes_joint():
    # the input shaft (kinematic) turns at w1 about x; the output shaft, on a bearing tilted
    # by beta, follows through a universal joint: w2 = w1 cos(beta) / (1 - sin^2(beta)
    # cos^2(theta)), theta the input's angle from where its yoke axis lies in the bend's plane
    beta, w1, dt = 0.5, 2.0, 5e-4
    world = World(dt=dt, gravity=(0.0, 0.0, 0.0))
    world.add_body("in", kind="kinematic", mass=1.0, inertia=(0.1, 0.1, 0.1),
                   angvel=(w1, 0.0, 0.0))
    axis2 = np.array([math.cos(beta), math.sin(beta), 0.0])
    world.add_body("out", mass=1.0, inertia=(0.02, 0.05, 0.05), pos=0.3 * axis2,
                   quat=matrix_quat(turn((0.0, 0.0, 1.0), beta)))
    world.add_body("base", kind="static")
    world.add_joint("bearing", "revolute", "base", "out", anchor=0.3 * axis2, axis=axis2)
    # the input's yoke axis lies in the bend's plane (y), the output's is normal to both its
    # shaft and that axis (z): theta = 0 is there
    world.add_joint("yoke_in", "revolute", "in", "out", axis=(0.0, 1.0, 0.0))
    world.add_joint("yoke_out", "revolute", "in", "out", axis=(0.0, 0.0, 1.0))
    world.configure(iterations=200, tolerance=0.0)
    out = world.body_names.index("out")
    worst = 0.0
    for k in range(1, 3001):   # 3 s: about one turn
        world.step()
        theta = w1 * k * dt
        expected = w1 * math.cos(beta) / (1.0 - math.sin(beta)**2 * math.cos(theta)**2)
        worst = max(worst, abs(float(world.body_angvel[out] @ axis2) - expected))
    # the speed swings between w1 cos(beta) = 1.76 and w1 / cos(beta) = 2.28 rad/s
    assert worst < 2e-3


def test_joint_friction_holds_a_hinge_of_a_gimbal_below_its_limit():
    # tipped by 0.3 rad about the first hinge, gravity's torque about it is m g d sin(0.3)
    # = 2.32 N m: a friction limit of 2.5 N m holds it, 2.0 N m lets it fall
    tipped = turn(HIP[0], 0.3)
    held = hung(HIP, limits=HIP_LIMITS, friction=2.5)
    place(held, tipped)
    held.step(500)
    assert held.joint_coord == pytest.approx((0.3, 0.0, 0.0), abs=1e-6)
    falls = hung(HIP, limits=HIP_LIMITS, friction=2.0)
    place(falls, tipped)
    falls.step(500)
    assert falls.joint_coord[0] < 0.25


def test_middle_hinge_of_a_gimbal_comes_to_rest_on_its_limit():
    # gravity along +y turns the hanging leg about the middle axis x only (its centre goes to
    # (0, 0.4 sin q2, -0.4 cos q2)), towards q2 = 90 degrees: it falls onto the limit at 0.6
    # rad and stays there (a limit is inelastic), the outer hinges untouched
    world = hung(((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
                 limits=((-3.0, 3.0), (-0.6, 0.6), (-3.0, 3.0)), gravity=(0.0, G, 0.0))
    world.step(1000)
    assert world.joint_coord == pytest.approx((0.0, 0.6, 0.0), abs=1e-6)
    assert world.joint_vel == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)


def test_dc_motor_on_the_second_hinge_reaches_its_no_load_speed():
    # no gravity, the leg about its centre of mass: the motor's steady speed is V / (K g)
    world = hung(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), gravity=(0.0, 0.0, 0.0),
                 centre=(0.0, 0.0, 0.0), dt=0.002)
    world.add_motor("h1", DCMotor(resistance=1.0, torque_constant=0.05, gear_ratio=10.0),
                    voltage=2.0)
    world.step(2000)
    assert world.joint_vel[1] == pytest.approx(2.0 / (0.05 * 10.0), rel=1e-6)
    assert world.joint_vel[0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("axes, limits, message", [
    (((1, 0, 0), (1, 1, 0)), None,
     "its axis must be perpendicular to joint 'h0''s (they make 45 degrees)"),
    (((1, 0, 0), (0, 1, 0), (0, 0, 1)), None,
     "the middle joint 'h1' of a gimbal must be limited within +-85 degrees"),
    (((1, 0, 0), (0, 1, 0), (0, 0, 1)), ((-1, 1), (-1.6, 1.0), (-1, 1)),
     "away from gimbal lock at 90 (got limits [-91.6732, 57.2958] degrees)"),
])
def test_revolute_joints_that_cannot_compose_are_refused_naming_both(axes, limits, message):
    world = World()
    world.add_body("base", kind="static")
    world.add_body("leg", mass=1.0, inertia=(0.1, 0.1, 0.1), pos=(0.0, 0.0, -0.4))
    with pytest.raises(ValueError) as err:
        for k, axis in enumerate(axes):
            world.add_joint(f"h{k}", "revolute", "base", "leg", axis=axis,
                            limits=None if limits is None else limits[k])
    text = str(err.value)
    assert message in text and "between bodies 'base' and 'leg'" in text
    assert "\n" not in text


def test_a_fourth_revolute_joint_or_the_opposite_order_is_refused():
    world = hung(HIP, limits=HIP_LIMITS)
    with pytest.raises(ValueError, match="at most three can"):
        world.add_joint("h3", "revolute", "base", "leg", axis=(1, 0, 0))
    world = hung(HIP[:1])
    with pytest.raises(ValueError, match="in the same order as joint 'h0' does"):
        world.add_joint("h1", "revolute", "leg", "base", axis=(0, 1, 0))


def test_joint_axes_drawn_are_each_hinges_own():
    world = hung(HIP, limits=HIP_LIMITS, gravity=(0.0, 0.0, 0.0))
    q = (0.3, -0.5, 0.7)
    place(world, turn(HIP[0], q[0]) @ turn(HIP[1], q[1]) @ turn(HIP[2], q[2]))
    world.step()
    _, axes = world.joint_frames_world()
    assert axes[0] == pytest.approx(HIP[0], abs=1e-12)
    assert axes[1] == pytest.approx(turn(HIP[0], q[0]) @ HIP[1], abs=1e-12)
    assert axes[2] == pytest.approx(turn(HIP[0], q[0]) @ turn(HIP[1], q[1]) @ HIP[2],
                                    abs=1e-12)
    assert quat_matrix(world.body_quat[2]) == pytest.approx(
        turn(HIP[0], q[0]) @ turn(HIP[1], q[1]) @ turn(HIP[2], q[2]), abs=1e-12)
