"""DC motors in joints (paper 002, eqs. 13-18) against their steady states and time constants
worked out on paper: L di/dt + R i = u - K_t r w, joint torque r eta K_t i, rotor inertia
r^2 J_m felt at the joint."""
import math

import numpy as np
import pytest

from sharnir.physics import Box, DCMotor, World

I_LOAD = 0.01   # kg m^2 about the axle (a cube with these principal moments)


def axle(motor, voltage, dt=0.001, friction=0.0, limits=None, gravity=(0.0, 0.0, 0.0)):
    world = World(dt=dt, gravity=gravity, iterations=50, tolerance=1e-12)
    world.add_body("wheel", Box((0.1, 0.1, 0.1)), mass=1.0, inertia=(I_LOAD,) * 3)
    world.add_joint("axle", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0),
                    friction=friction, limits=limits)
    world.add_motor("axle", motor, voltage=voltage)
    return world


def test_a_free_motor_runs_at_its_no_load_speed():
    motor = DCMotor(resistance=2.0, inductance=0.002, torque_constant=0.05,
                    rotor_inertia=1e-5, gear_ratio=10.0)
    world = axle(motor, 12.0)
    world.step(4000)
    assert world.joint_vel[0] == pytest.approx(12.0 / (0.05 * 10.0), rel=0.02)
    assert world.motor_state["speed"][0] == pytest.approx(12.0 / 0.05, rel=0.02)


def test_a_held_joint_feels_the_stall_torque():
    motor = DCMotor(resistance=2.0, inductance=0.002, torque_constant=0.05, gear_ratio=10.0,
                    efficiency=0.8)
    world = axle(motor, 12.0, limits=(-1e-6, 1e-6))
    world.step(500)
    stall = 10.0 * 0.8 * 0.05 * 12.0 / 2.0
    assert motor.stall_torque(12.0) == pytest.approx(stall)
    assert abs(world.joint_vel[0]) < 1e-6
    assert world.motor_state["torque"][0] == pytest.approx(stall, rel=0.02)
    assert world.motor_state["current"][0] == pytest.approx(12.0 / 2.0, rel=0.02)


def test_the_current_rises_with_the_electrical_time_constant():
    motor = DCMotor(resistance=2.0, inductance=0.02, torque_constant=0.05, gear_ratio=10.0)
    world = axle(motor, 12.0, dt=0.0005, limits=(-1e-6, 1e-6))
    te = motor.electrical_time_constant
    assert te == pytest.approx(0.01)
    world.step(round(te / 0.0005))
    assert world.motor_state["current"][0] == pytest.approx(6.0 * (1 - math.exp(-1)), rel=0.05)


def test_the_speed_rises_with_the_mechanical_time_constant():
    """With L = 0: (I + r^2 J_m) dw/dt = r K_t (u - K_t r w) / R, so w reaches 63 % of its
    final value at tau_m = (I + r^2 J_m) R / (r K_t)^2."""
    r, kt, R, jm = 10.0, 0.05, 2.0, 2e-5
    motor = DCMotor(resistance=R, torque_constant=kt, gear_ratio=r, rotor_inertia=jm)
    world = axle(motor, 12.0, dt=0.0005)
    tau = (I_LOAD + r * r * jm) * R / (r * kt) ** 2
    final = 12.0 / (kt * r)
    rec = world.run(round(4 * tau / 0.0005))
    w = rec.joint[:, 0, 1]
    t63 = rec.t[np.argmax(w >= (1 - math.exp(-1)) * final)]
    assert t63 == pytest.approx(tau, rel=0.05)


def test_power_balance_at_steady_state():
    """Against joint friction tau_f: u i = tau w + i^2 R, the electrical equation times i."""
    motor = DCMotor(resistance=2.0, inductance=0.001, torque_constant=0.05, gear_ratio=10.0)
    world = axle(motor, 12.0, friction=0.3)
    world.step(6000)
    s = world.motor_state
    i, tau, w = s["current"][0], s["torque"][0], world.joint_vel[0]
    assert tau == pytest.approx(0.3, rel=0.02)             # the motor holds the friction
    assert s["power"][0] == pytest.approx(tau * w + i * i * 2.0, rel=0.02)


def test_a_stalled_motor_at_its_current_limit_reports_the_limit_and_its_torque():
    """Stall current u / R = 6 A above the 2 A limit: i = 2 A, joint torque r eta K_t 2 A."""
    motor = DCMotor(resistance=2.0, inductance=0.002, torque_constant=0.05, gear_ratio=10.0,
                    efficiency=0.8, current_limit=2.0)
    world = axle(motor, 12.0, limits=(-1e-6, 1e-6))
    world.step(500)
    s = world.motor_state
    assert s["current"][0] == pytest.approx(2.0, rel=1e-6)
    assert s["torque"][0] == pytest.approx(10.0 * 0.8 * 0.05 * 2.0, rel=1e-6)


def test_a_current_limited_start_accelerates_rotor_and_load_by_the_limited_torque():
    """Spinning up from rest at the 1 A limit (L = 0, high voltage): the motor's torque
    r K_t i_max drives load and reflected rotor, dw/dt = r K_t i_max / (I + r^2 J_m); the
    joint gets I dw/dt of it and the reported current never passes the limit."""
    r, kt, jm = 10.0, 0.05, 2e-5
    motor = DCMotor(resistance=2.0, torque_constant=kt, gear_ratio=r, rotor_inertia=jm,
                    current_limit=1.0)
    world = axle(motor, 24.0, dt=0.0005)
    rec = world.run(200)
    accel = r * kt * 1.0 / (I_LOAD + r * r * jm)
    assert rec.joint[-1, 0, 1] == pytest.approx(accel * rec.t[-1], rel=1e-3)
    assert np.max(np.abs(rec.motor[:, 0, 1])) <= 1.0 + 1e-9
    assert world.motor_state["torque"][0] == pytest.approx(I_LOAD * accel, rel=1e-3)


def test_friction_above_the_stall_torque_keeps_the_joint_still():
    motor = DCMotor(resistance=2.0, torque_constant=0.05, gear_ratio=10.0)
    world = axle(motor, 1.0, friction=motor.stall_torque(1.0) * 1.5)
    world.step(2000)
    assert abs(world.joint_vel[0]) < 1e-9 and abs(world.joint_coord[0]) < 1e-9


def test_a_gear_ratio_of_300_is_stable_at_dt_001_for_60_s():
    """A heavy arm swinging under gravity on a 300:1 gearmotor, at the paper's dt: the back-EMF
    damping and reflected inertia are implicit, so nothing oscillates or grows."""
    motor = DCMotor(resistance=1.0, inductance=0.001, torque_constant=0.03, gear_ratio=300.0,
                    rotor_inertia=3e-6)
    world = World(dt=0.01, iterations=30, tolerance=1e-12)
    world.add_body("arm", Box((0.3, 0.03, 0.03)), mass=2.0, pos=(0.3, 0.0, 1.0))
    world.add_joint("shoulder", "revolute", "world", "arm", anchor=(0.0, 0.0, 1.0),
                    axis=(0.0, 1.0, 0.0))
    world.add_motor("shoulder", motor, voltage=6.0)
    rec = world.run(6000)
    w = rec.joint[:, 0, 1]
    assert np.all(np.isfinite(w))
    early, late = np.ptp(w[500:1500]), np.ptp(w[-1000:])
    assert late <= early + 1e-6
    assert np.std(np.diff(w[-1000:])) < 1e-3


def test_bad_motor_values_are_refused_with_their_name():
    with pytest.raises(ValueError, match="resistance"):
        DCMotor(resistance=0.0)
    with pytest.raises(ValueError, match="efficiency"):
        DCMotor(resistance=1.0, efficiency=1.5)
    motor = DCMotor(resistance=1.0, voltage_limit=24.0)
    world = axle(motor, 0.0)
    with pytest.raises(ValueError, match="voltage"):
        world.set_voltage("axle", 30.0)
    with pytest.raises(ValueError, match="voltage"):
        world.set_voltage("axle", float("nan"))
    world.add_body("ball", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(1.0, 0.0, 0.0))
    world.add_joint("ball_joint", "spherical", "world", "ball", anchor=(1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="only revolute and prismatic"):
        world.add_motor("ball_joint", motor)


def test_a_slider_motor_drives_at_its_no_load_speed():
    """On a prismatic joint the gear ratio is rotor radians per metre and the torque a force."""
    motor = DCMotor(resistance=1.0, inductance=0.001, torque_constant=0.02, gear_ratio=200.0)
    world = World(dt=0.002, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-12)
    world.add_body("carriage", Box((0.1, 0.1, 0.1)), mass=3.0)
    world.add_joint("rail", "prismatic", "world", "carriage", axis=(1.0, 0.0, 0.0))
    world.add_motor("rail", motor, voltage=8.0)
    world.step(2000)
    assert world.joint_vel[0] == pytest.approx(8.0 / (0.02 * 200.0), rel=0.02)
    assert world.body_vel[1, 0] == pytest.approx(8.0 / (0.02 * 200.0), rel=0.02)


MOTOR_SCENE = """
description = "A wheel on a 10:1 gearmotor."
duration = 0.5
[world]
dt = 0.001
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "wheel"
shape = { type = "box", half_extents = [0.1, 0.1, 0.1] }
mass = 1.0
[[joints]]
name = "axle"
type = "revolute"
body_a = "world"
body_b = "wheel"
motor = { resistance = 2.0, inductance = 0.002, torque_constant = 0.05, gear_ratio = 10.0, VOLTAGE }
"""


def test_a_scene_file_motor_runs_and_its_telemetry_reaches_the_csv(tmp_path):
    import csv

    from sharnir.app.cli import main

    path = tmp_path / "motor.toml"
    path.write_text(MOTOR_SCENE.replace("VOLTAGE", "voltage = 12.0, voltage_limit = 24.0"))
    out = tmp_path / "motor.csv"
    assert main(["run", str(path), "--duration", "0.5", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert {"axle.voltage", "axle.current", "axle.torque", "axle.motor_speed"} <= set(rows[0])
    last = rows[-1]
    speed = float(last["axle.velocity"])
    assert speed == pytest.approx(12.0 / (0.05 * 10.0), rel=0.02)       # no-load speed
    assert float(last["axle.motor_speed"]) == pytest.approx(10.0 * speed)
    assert float(last["axle.voltage"]) == 12.0


def test_a_motor_beyond_its_supply_in_a_scene_file_names_the_field(tmp_path):
    from sharnir.scenes import SceneError, read_scene

    path = tmp_path / "motor.toml"
    path.write_text(MOTOR_SCENE.replace("VOLTAGE", "voltage = 30.0, voltage_limit = 24.0"))
    with pytest.raises(SceneError, match=r'joints\[0\] "axle".*motor.voltage.*24'):
        read_scene(path)


# ---- controllers ---------------------------------------------------------------------------

def arm_axle(kp, kd, voltage_limit=24.0):
    motor = DCMotor(resistance=1.0, inductance=0.0005, torque_constant=0.05, gear_ratio=20.0,
                    voltage_limit=voltage_limit)
    return axle(motor, 0.0, dt=0.002)


def test_a_position_pd_settles_on_a_step_without_steady_error():
    world = arm_axle(kp=0, kd=0)
    world.set_controller("axle", "position", kp=40.0, kd=4.0, target=1.0)
    rec = world.run(1500)
    q = rec.joint[:, 0, 0]
    assert q[-1] == pytest.approx(1.0, abs=1e-3)          # no load: no steady-state error
    assert np.max(q) < 1.2                                 # a bounded overshoot
    assert np.all(np.abs(world.motor_state["voltage"]) <= 24.0)


def test_the_controller_saturates_at_the_supply_voltage():
    world = arm_axle(kp=0, kd=0, voltage_limit=6.0)
    world.set_controller("axle", "position", kp=1000.0, kd=0.0, target=5.0)
    rec = world.run(50, record_bodies=False)
    assert np.max(np.abs(rec.motor[:, 0, 0])) == 6.0      # the first steps ask for 5000 V
    assert rec.motor[0, 0, 0] == 6.0


def test_a_position_pd_follows_a_sine():
    """At 0.5 Hz, well inside the loop's bandwidth, the tracking error stays small."""
    world = arm_axle(kp=0, kd=0)
    world.set_controller("axle", "position", kp=60.0, kd=3.0, sine=(0.0, 0.5, 0.5))
    rec = world.run(4000)
    t, q = rec.t[1000:], rec.joint[1000:, 0, 0]
    assert np.max(np.abs(q - 0.5 * np.sin(2 * np.pi * 0.5 * t))) < 0.05


def test_keyframes_are_followed_piecewise_linearly_and_held():
    world = arm_axle(kp=0, kd=0)
    world.set_controller("axle", "position", kp=60.0, kd=3.0,
                         keyframes=[(0.0, 0.0), (1.0, 0.8), (2.0, 0.8), (2.5, -0.4)])
    rec = world.run(2000)        # 4 s
    q = rec.joint[:, 0, 0]
    at = lambda s: q[round(s / 0.002) - 1]  # noqa: E731
    assert at(2.0) == pytest.approx(0.8, abs=0.03)
    assert at(4.0) == pytest.approx(-0.4, abs=0.01)
    assert world.motor_state["target"][0] == pytest.approx(-0.4)


def test_a_velocity_controller_holds_its_speed_against_friction():
    """Sampled every step, P on the rate with the back-EMF feed-forward: against friction
    tau_f the rate settles where kp (w* - w) + K_t r w* = K_t r w + R tau_f / (r K_t),
    w = (kp + K_t r) w* / (kp + K_t r) - R tau_f / (r K_t (kp + K_t r)) = 4.933 rad/s."""
    world = arm_axle(kp=0, kd=0)
    world.set_friction("axle", 0.2)
    world.set_controller("axle", "velocity", kp=2.0, target=5.0)
    world.step(3000)
    assert world.joint_vel[0] == pytest.approx(5.0 - 1.0 * 0.2 / (1.0 * 3.0), rel=0.005)


def test_bad_controller_values_are_refused_with_their_name():
    world = arm_axle(kp=0, kd=0)
    with pytest.raises(ValueError, match="mode"):
        world.set_controller("axle", "torque")
    with pytest.raises(ValueError, match="kp"):
        world.set_controller("axle", "position", kp=-1.0)
    with pytest.raises(ValueError, match="keyframes"):
        world.set_controller("axle", "position", kp=1.0, keyframes=[(1.0, 0.0), (0.5, 1.0)])
    with pytest.raises(ValueError, match="sine"):
        world.set_controller("axle", "position", kp=1.0, sine=(0.0, float("nan"), 1.0))


def test_a_scene_file_controller_drives_the_joint_to_its_target(tmp_path):
    from sharnir.scenes import load_scene

    path = tmp_path / "servo.toml"
    path.write_text(MOTOR_SCENE.replace(
        "VOLTAGE", 'voltage_limit = 24.0, controller = { mode = "position", kp = 40.0, '
                   'kd = 4.0, target = 1.0 }').replace("dt = 0.001", "dt = 0.002"))
    world = load_scene(path)
    world.step(1500)
    assert world.joint_coord[0] == pytest.approx(1.0, abs=1e-3)


def test_a_scene_file_controller_with_falling_keyframe_times_names_the_field(tmp_path):
    from sharnir.scenes import SceneError, read_scene

    path = tmp_path / "servo.toml"
    path.write_text(MOTOR_SCENE.replace(
        "VOLTAGE", 'controller = { mode = "position", kp = 1.0, '
                   'keyframes = [[1.0, 0.0], [0.5, 1.0]] }'))
    with pytest.raises(SceneError, match=r"motor.controller.keyframes.*rising"):
        read_scene(path)


def test_a_voltage_holds_the_controller_and_resume_hands_the_motor_back():
    """set_voltage takes a controlled motor over without losing its controller; the held
    controller's set-point can still be moved, and resume_controller hands the motor back to
    it: the PD then settles on the new set-point (no load: no steady-state error)."""
    world = arm_axle(kp=0, kd=0)
    world.set_controller("axle", "position", kp=40.0, kd=4.0, target=1.0)
    assert world.motor_modes == (("position", False),)
    world.step(1500)
    assert world.joint_coord[0] == pytest.approx(1.0, abs=1e-3)
    seen = world.controllers_changed
    world.set_voltage("axle", 0.0)
    assert world.motor_modes == (("voltage", True),) and world.controllers_changed > seen
    world.set_target("axle", -0.5)           # (an IK hook's tick while held: no error)
    world.step(200)
    assert world.motor_state["voltage"][0] == 0.0         # the controller is not acting
    assert world.joint_coord[0] == pytest.approx(1.0, abs=0.05)
    world.resume_controller("axle")
    assert world.motor_modes == (("position", False),)
    world.step(1500)
    assert world.joint_coord[0] == pytest.approx(-0.5, abs=1e-3)
    with pytest.raises(ValueError, match="'axle': no controller to hand back"):
        world.resume_controller("axle")


def test_a_motor_without_a_controller_has_none_to_hand_back():
    world = arm_axle(kp=0, kd=0)
    world.set_voltage("axle", 3.0)
    assert world.motor_modes == (("voltage", False),)
    with pytest.raises(ValueError, match="no controller was set"):
        world.resume_controller("axle")
    world.set_controller("axle", "position", kp=1.0)
    world.set_voltage("axle", 1.0)
    world.set_controller("axle", "voltage")      # dropping the controller drops the held one
    assert world.motor_modes == (("voltage", False),)


def _implicit_axle(kd, implicit, articulation="sweep", voltage_limit=math.inf, w0=10.0):
    """A free wheel (I_LOAD, no gravity, no friction) spinning at w0 under a motor (K, R, no
    inductance or rotor, gear 1) whose position controller has kp = 0: only its rate term
    u = -kd w acts, with the back-EMF: torque (K / R) (u - K w)."""
    world = World(dt=0.001, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-14,
                  articulation=articulation)
    world.add_body("wheel", Box((0.1, 0.1, 0.1)), mass=1.0, inertia=(I_LOAD,) * 3,
                   angvel=(0.0, 0.0, w0))
    world.add_joint("axle", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0))
    world.add_motor("axle", DCMotor(resistance=1.0, torque_constant=0.1,
                                    voltage_limit=voltage_limit))
    world.set_controller("axle", "position", kp=0.0, kd=kd, implicit=implicit)
    return world


@pytest.mark.parametrize("articulation", ["sweep", "tree"])
def test_an_implicit_rate_gain_damps_as_implicit_euler_at_any_gain(articulation):
    """Implicit, I (w' - w) = -h (K / R) (kd + K) w': w_n = w0 / (1 + h c / I)^n with
    c = K (kd + K) / R. At kd = 5000 V s/rad, h c / I = 50: the sampled controller's
    w' (1 + h K^2 / (R I)) = w (1 - h K kd / (R I)) multiplies the rate by -49/2 a step."""
    h, K, R, kd = 0.001, 0.1, 1.0, 5000.0
    a = h * K * (kd + K) / R / I_LOAD
    world = _implicit_axle(kd, True, articulation)
    rates = []
    for _ in range(20):
        world.step(1)
        rates.append(world.joint_vel[0])
    expected = 10.0 / (1.0 + a) ** np.arange(1, 21)
    np.testing.assert_allclose(rates, expected, rtol=1e-9, atol=1e-12)
    # the voltage the step took: u = -kd w'
    assert world.motor_state["voltage"][0] == pytest.approx(-kd * rates[-1], rel=1e-9)
    sampled = _implicit_axle(kd, False, articulation)
    sampled.step(2)   # (the rate is measured at the build: the first step samples w0 too)
    factor = (1.0 - h * K * kd / (R * I_LOAD)) / (1.0 + h * K * K / (R * I_LOAD))
    assert sampled.joint_vel[0] == pytest.approx(10.0 * factor ** 2, rel=1e-9)


@pytest.mark.parametrize("articulation", ["sweep", "tree"])
def test_an_implicit_rate_gain_saturates_at_the_supply(articulation):
    """At the supply U the torque is (K / R)(-U - K w'): w' = (w - h K U / (R I)) / (1 + h K^2
    / (R I)) while kd w' > U, then the implicit decay above. Each step is worked out as the
    solve must: the linear piece, and where its voltage is beyond U, the saturated one."""
    h, K, R, kd, U = 0.001, 0.1, 1.0, 50.0, 12.0
    world = _implicit_axle(kd, True, articulation, voltage_limit=U, w0=20.0)
    w, expected, voltages = 20.0, [], []
    for _ in range(400):
        linear = w / (1.0 + h * K * (kd + K) / (R * I_LOAD))
        if kd * linear > U:
            w = (w - h * K * U / (R * I_LOAD)) / (1.0 + h * K * K / (R * I_LOAD))
            voltages.append(-U)
        else:
            w = linear
            voltages.append(-kd * w)
        expected.append(w)
    rates, volts = [], []
    for _ in range(400):
        world.step(1)
        rates.append(world.joint_vel[0])
        volts.append(world.motor_state["voltage"][0])
    assert voltages[0] == -U and voltages[-1] > -U     # both pieces are crossed
    np.testing.assert_allclose(rates, expected, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(volts, voltages, rtol=1e-8, atol=1e-9)


def test_an_implicit_controller_comes_from_the_scene_file(tmp_path):
    path = tmp_path / "servo.toml"
    path.write_text(
        '[world]\ndt = 0.001\ngravity = [0, 0, 0]\n'
        '[[bodies]]\nname = "wheel"\nmass = 1.0\ninertia = [0.01, 0.01, 0.01]\n'
        'angvel = [0, 0, 10]\nshape = { type = "box", half_extents = [0.05, 0.05, 0.05] }\n'
        '[[joints]]\nname = "axle"\ntype = "revolute"\nbody_a = "world"\nbody_b = "wheel"\n'
        'axis = [0, 0, 1]\n'
        '[joints.motor]\nresistance = 1.0\ntorque_constant = 0.1\n'
        '[joints.motor.controller]\nmode = "position"\nkd = 5000.0\nimplicit = true\n')
    from sharnir.scenes import load_scene

    world = load_scene(path)
    world.step(5)
    a = 0.001 * 0.1 * 5000.1 / 0.01
    assert world.joint_vel[0] == pytest.approx(10.0 / (1.0 + a) ** 5, rel=1e-9)


def test_a_joints_rate_is_known_before_the_first_step_and_kept_through_a_grasp():
    """A sampled controller's first step reads the joint's rate: a scene's initial angular
    velocity is measured at the build, and a grasp's rebuild keeps the rates (it had them
    read as 0 for one step: a kd kick at every grasp)."""
    world = _implicit_axle(5.0, False, w0=3.0)
    assert world.joint_vel[0] == pytest.approx(3.0, rel=1e-12)
    world.add_body("cup", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.2, 0.0, 1.0))
    world.step(3)
    rate = world.joint_vel[0]
    grip = world.grasp("wheel", "cup")
    assert world.joint_vel[0] == rate and len(world.joint_vel) == 2
    world.release(grip)
    assert world.joint_vel[0] == rate
