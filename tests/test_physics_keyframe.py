"""Keyframes (physics/keyframe.py, World.apply_keyframe, a scene's [[keyframes]] and `sharnir
run --keyframe`): joint coordinates and rates put into a world in maximal coordinates land
where forward kinematics on paper puts them, and the step's own measurement of the joints
reads the same coordinates and rates back; bad entries are one error and change nothing."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from sharnir.physics import Box, World

P0 = np.array([0.0, 0.0, 2.0])


def ry(angle):
    """The rotation about +y (x turns towards -z)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def double_pendulum(gravity=(0.0, 0.0, -9.81)):
    """Two 1 kg rods 0.5 m long along +x, hinged about y at (0, 0, 2) and (0.5, 0, 2)."""
    w = World(dt=1e-3, gravity=gravity)
    along_x = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)
    w.add_body("upper", Box((0.02, 0.02, 0.25)), mass=1.0, pos=(0.25, 0.0, 2.0), quat=along_x)
    w.add_body("lower", Box((0.02, 0.02, 0.25)), mass=1.0, pos=(0.75, 0.0, 2.0), quat=along_x)
    w.add_joint("shoulder", "revolute", "world", "upper", anchor=tuple(P0), axis=(0, 1, 0))
    w.add_joint("elbow", "revolute", "upper", "lower", anchor=(0.5, 0.0, 2.0), axis=(0, 1, 0))
    return w


def centres(q1, q2):
    """Forward kinematics on paper: the rods' centres at shoulder q1 and elbow q2."""
    x = np.array([1.0, 0.0, 0.0])
    elbow = P0 + ry(q1) @ (0.5 * x)
    return P0 + ry(q1) @ (0.25 * x), elbow + ry(q1 + q2) @ (0.25 * x), elbow


def test_joint_coordinates_land_where_forward_kinematics_puts_them():
    w = double_pendulum(gravity=(0.0, 0.0, 0.0))
    q1, q2 = 0.7, -1.1
    w.apply_keyframe(joints={"shoulder": q1, "elbow": q2})
    upper, lower, _ = centres(q1, q2)
    np.testing.assert_allclose(w.body_pos[1], upper, atol=1e-12)
    np.testing.assert_allclose(w.body_pos[2], lower, atol=1e-12)
    w.step(1)   # the step measures the joints from the poses: the same coordinates
    np.testing.assert_allclose(w.joint_coord, [q1, q2], atol=1e-9)
    np.testing.assert_allclose(w.body_pos[2], lower, atol=1e-9)   # (at rest, no gravity)
    # from there, other coordinates: each joint moves only what lies beyond it
    w.apply_keyframe(joints={"elbow": 0.3})
    np.testing.assert_allclose(w.body_pos[1], upper, atol=1e-12)
    np.testing.assert_allclose(w.body_pos[2], centres(q1, 0.3)[1], atol=1e-12)


def test_joint_rates_give_the_velocities_of_the_rigid_motion_on_paper():
    w = double_pendulum(gravity=(0.0, 0.0, 0.0))
    q1, q2, w1, w2 = 0.4, 0.9, 1.5, -2.0
    w.apply_keyframe(joints={"shoulder": q1, "elbow": q2}, rates={"shoulder": w1,
                                                                  "elbow": w2})
    upper, lower, elbow = centres(q1, q2)
    y = np.array([0.0, 1.0, 0.0])
    np.testing.assert_allclose(w.body_vel[1], np.cross(w1 * y, upper - P0), atol=1e-12)
    np.testing.assert_allclose(w.body_vel[2], np.cross(w1 * y, lower - P0)
                               + np.cross(w2 * y, lower - elbow), atol=1e-12)
    np.testing.assert_allclose(w.body_angvel[2], (w1 + w2) * y, atol=1e-12)
    w.step(1)
    np.testing.assert_allclose(w.joint_vel, [w1, w2], rtol=1e-6, atol=1e-6)


def test_a_floating_robot_moves_with_its_base_then_takes_its_coordinates():
    w = World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    w.add_body("base", Box((0.1, 0.1, 0.1)), mass=2.0, pos=(0.0, 0.0, 1.0))
    w.add_body("arm", Box((0.25, 0.02, 0.02)), mass=1.0, pos=(0.35, 0.0, 1.0))
    w.add_joint("hinge", "revolute", "base", "arm", anchor=(0.1, 0.0, 1.0), axis=(0, 1, 0))
    turn = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))   # 90 degrees about z
    w.apply_keyframe(joints={"hinge": 0.5}, bodies={"base": {"pos": (1.0, 2.0, 3.0),
                                                            "quat": turn,
                                                            "vel": (0.0, 0.0, 1.0)}})
    np.testing.assert_allclose(w.body_pos[1], (1.0, 2.0, 3.0), atol=1e-12)
    np.testing.assert_allclose(w.body_quat[1], turn, atol=1e-12)
    # the arm: turned with the base (x -> y), then by 0.5 about the hinge's axis, now -x
    # (a turn of -0.5 about +x: y -> (0, cos 0.5, -sin 0.5))
    anchor = np.array([1.0, 2.1, 3.0])
    c, s = math.cos(0.5), math.sin(0.5)
    arm = anchor + 0.25 * np.array([0.0, c, -s])
    np.testing.assert_allclose(w.body_pos[2], arm, atol=1e-12)
    np.testing.assert_allclose(w.body_vel[2], (0.0, 0.0, 1.0), atol=1e-12)
    w.step(1)   # the step reads the hinge back at 0.5, the robot still rising together
    assert w.joint_coord[0] == pytest.approx(0.5, abs=1e-9)
    np.testing.assert_allclose(w.body_vel[1], (0.0, 0.0, 1.0), atol=1e-9)


@pytest.mark.parametrize("entry, words", [
    (dict(joints={"shoulder": float("nan")}), "must be finite"),
    (dict(joints={"nope": 1.0}), "unknown joint 'nope'"),
    (dict(rates={"elbow": "fast"}), "rate of joint 'elbow'"),
    (dict(bodies={"upper": {"pos": (0, 0, 0)}}), "held to the fixed world"),
    (dict(bodies={"world": {"pos": (0, 0, 0)}}), "static or held"),
    (dict(joints={"shoulder": 0.1}, voltages={"elbow": 1.0}), "has no motor"),
])
def test_a_bad_keyframe_is_one_error_and_changes_nothing(entry, words):
    w = double_pendulum()
    w.step(3)
    before = w.save_state()
    with pytest.raises(ValueError, match=words) as info:
        w.apply_keyframe(**entry, name="keyframe 'crouch'")
    assert "\n" not in str(info.value)
    after = w.save_state()
    for name, a in before.arrays.items():
        assert np.array_equal(a, after.arrays[name]), name


def test_a_scene_keyframe_runs_from_the_command_line(tmp_path):
    scene = tmp_path / "pendulum.toml"
    scene.write_text('''
[world]
gravity = [0.0, 0.0, 0.0]
dt = 0.001
[[bodies]]
name = "rod"
shape = { type = "box", half_extents = [0.25, 0.02, 0.02] }
mass = 1.0
pos = [0.25, 0.0, 2.0]
[[joints]]
name = "hinge"
type = "revolute"
body_a = "world"
body_b = "rod"
anchor = [0.0, 0.0, 2.0]
axis = [0.0, 1.0, 0.0]
[[keyframes]]
name = "spinning"
joints = { hinge = 0.5 }
rates = { hinge = 2.0 }
''')
    done = subprocess.run([sys.executable, "-m", "sharnir", "run", str(scene), "--duration",
                           "0.25", "--keyframe", "spinning", "--json"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    hinge = json.loads(done.stdout.strip().splitlines()[-1])["joints"]["hinge"]
    # no gravity, no friction: it turns on at 2 rad/s from 0.5 rad
    assert hinge["coordinate"] == pytest.approx(0.5 + 2.0 * 0.25, abs=1e-6)
    assert hinge["velocity"] == pytest.approx(2.0, abs=1e-9)
    bad = subprocess.run([sys.executable, "-m", "sharnir", "run", str(scene), "--keyframe",
                          "nope"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no keyframe 'nope'" in bad.stderr
    assert "spinning" in bad.stderr and bad.stderr.strip().count("\n") == 0


def test_scene_keyframes_are_checked_as_the_scene_loads_and_convert_keeps_them(tmp_path):
    from sharnir.scenes import SceneError, load_scene, read_scene
    from sharnir.scenes.writer import scene_toml

    scene = tmp_path / "k.toml"
    base = ('bodies = [{ name = "rod", shape = { type = "box", half_extents = [0.25, 0.02, '
            '0.02] }, mass = 1.0, pos = [0.25, 0.0, 2.0] }]\n'
            'joints = [{ name = "hinge", type = "revolute", body_a = "world", body_b = "rod", '
            'anchor = [0.0, 0.0, 2.0], axis = [0.0, 1.0, 0.0] }]\n')
    scene.write_text(base + 'keyframes = [{ name = "a", joints = { hinge = 0.5 } }, '
                            '{ name = "b", joints = { knee = 0.5 } }]\n')
    with pytest.raises(SceneError) as info:
        load_scene(scene)
    message = str(info.value)
    assert str(scene) in message and 'keyframes[1] "b"' in message and "knee" in message
    scene.write_text(base + 'keyframes = [{ name = "a" }, { name = "a" }]\n')
    with pytest.raises(SceneError, match='duplicate name "a"'):
        read_scene(scene)
    scene.write_text(base + 'keyframes = [{ name = "a", joints = { hinge = 0.5 }, rates = { '
                            'hinge = -1.0 } }]\n')
    again = tmp_path / "again.toml"
    again.write_text(scene_toml(read_scene(scene)))
    assert read_scene(again).keyframes == read_scene(scene).keyframes
    assert load_scene(again).keyframes["a"]["rates"] == {"hinge": -1.0}


def rot(axis, angle):
    """The rotation of `angle` about `axis` (Rodrigues)."""
    n = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


def quat_rot(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


HIP, KNEE, SHOULDER = np.array([0.0, -0.1, 0.95]), np.array([0.0, -0.1, 0.55]), \
    np.array([0.1, 0.2, 1.0])
THIGH, SHIN, ARM = np.array([0.0, -0.1, 0.75]), np.array([0.0, -0.1, 0.35]), \
    np.array([0.3, 0.2, 1.0])
# the hip turns about x, then about z carried by x, then about y carried by both (MuJoCo's
# humanoid's order: a gimbal whose third axis is -z of its group frame x, z; gimbal.py)
HIP_AXES = (("hip_x", (1, 0, 0)), ("hip_z", (0, 0, 1)), ("hip_y", (0, 1, 0)))


def leg_and_arm(floating=False, gravity=(0.0, 0.0, 0.0), dt=1e-4, offsets=False):
    """A pelvis (fixed to the world, or floating) with a thigh on a 3-hinge hip, a shin on a
    knee, and an arm on a ball joint whose frame is the world's (axis x)."""
    w = World(dt=dt, gravity=gravity)
    w.add_body("pelvis", Box((0.1, 0.15, 0.05)), mass=5.0, pos=(0.0, 0.0, 1.0))
    w.add_body("thigh", Box((0.04, 0.04, 0.2)), mass=2.0, pos=tuple(THIGH))
    w.add_body("shin", Box((0.03, 0.03, 0.2)), mass=1.5, pos=tuple(SHIN))
    w.add_body("arm", Box((0.2, 0.03, 0.03)), mass=1.0, pos=tuple(ARM))
    if not floating:
        w.add_joint("root", "fixed", "world", "pelvis", anchor=(0.0, 0.0, 1.0))
    for k, (name, axis) in enumerate(HIP_AXES):
        anchor = HIP + (np.array([0.0, 0.01 * k, -0.02 * k]) if offsets else 0.0)
        w.add_joint(name, "revolute", "pelvis", "thigh", anchor=tuple(anchor), axis=axis,
                    limits=(-1.2, 1.2) if name == "hip_z" else None)
    w.add_joint("knee", "revolute", "thigh", "shin", anchor=tuple(KNEE), axis=(0, 1, 0))
    w.add_joint("shoulder", "spherical", "pelvis", "arm", anchor=tuple(SHOULDER),
                axis=(1, 0, 0))
    return w


BALL = np.array([math.cos(0.4), 0.6 * math.sin(0.4), 0.0, 0.8 * math.sin(0.4)])
POSE = dict(joints={"hip_x": 0.3, "hip_z": -0.5, "hip_y": 0.8, "knee": -1.1,
                    "shoulder": tuple(BALL)},
            rates={"hip_x": 1.0, "hip_z": -2.0, "hip_y": 0.5, "knee": 3.0,
                   "shoulder": (0.5, -1.0, 2.0)})


def worst_gaps(w):
    """The largest joint gap (m) and angle gap (rad) the last step found at its start."""
    from sharnir.physics.model import STAT_WORST_ANGLE, STAT_WORST_GAP

    stats = w.save_state().arrays["state.solver_stats"]
    return float(stats[STAT_WORST_GAP]), float(stats[STAT_WORST_ANGLE])


def assert_reads_back(w, pose, tol=1e-9):
    """keyframe_state (the step's own measurement, in numpy) reads the keyframe back."""
    got = w.keyframe_state()
    for table in ("joints", "rates"):
        for name, value in pose[table].items():
            np.testing.assert_allclose(got[table][name], value, atol=tol, err_msg=name)


def test_a_gimbal_hip_and_a_ball_shoulder_land_where_forward_kinematics_puts_them():
    w = leg_and_arm()
    w.step(1)
    pelvis = (w.body_pos[1].copy(), w.body_quat[1].copy())
    w.apply_keyframe(**POSE)
    q1, q2, q3, q4 = (POSE["joints"][k] for k in ("hip_x", "hip_z", "hip_y", "knee"))
    # on paper: the thigh turned by Rx(q1) Rz(q2) Ry(q3) about the hip, the shin by the knee
    # about y carried by all three, the arm by the ball's rotation about the shoulder
    R_thigh = rot((1, 0, 0), q1) @ rot((0, 0, 1), q2) @ rot((0, 1, 0), q3)
    R_shin = R_thigh @ rot((0, 1, 0), q4)
    knee = HIP + R_thigh @ (KNEE - HIP)
    R_arm = quat_rot(BALL)
    np.testing.assert_allclose(w.body_pos[2], HIP + R_thigh @ (THIGH - HIP), atol=1e-12)
    np.testing.assert_allclose(quat_rot(w.body_quat[2]), R_thigh, atol=1e-12)
    np.testing.assert_allclose(w.body_pos[3], knee + R_shin @ (SHIN - KNEE), atol=1e-12)
    np.testing.assert_allclose(quat_rot(w.body_quat[3]), R_shin, atol=1e-12)
    np.testing.assert_allclose(w.body_pos[4], SHOULDER + R_arm @ (ARM - SHOULDER), atol=1e-12)
    np.testing.assert_allclose(quat_rot(w.body_quat[4]), R_arm, atol=1e-12)
    np.testing.assert_array_equal(w.body_pos[1], pelvis[0])   # not in any subtree
    np.testing.assert_array_equal(w.body_quat[1], pelvis[1])
    # velocities on paper: each hinge's rate about its carried axis through the hip
    d1, d2, d3, d4 = (POSE["rates"][k] for k in ("hip_x", "hip_z", "hip_y", "knee"))
    w_thigh = (d1 * np.array([1.0, 0, 0]) + d2 * rot((1, 0, 0), q1) @ [0, 0, 1.0]
               + d3 * R_thigh @ [0, 1.0, 0])
    w_shin = w_thigh + d4 * R_thigh @ [0, 1.0, 0]
    w_arm = R_arm @ np.array(POSE["rates"]["shoulder"])   # in the joint frame on the arm
    np.testing.assert_allclose(w.body_angvel[2], w_thigh, atol=1e-12)
    np.testing.assert_allclose(w.body_vel[2], np.cross(w_thigh, w.body_pos[2] - HIP),
                               atol=1e-12)
    np.testing.assert_allclose(w.body_angvel[3], w_shin, atol=1e-12)
    np.testing.assert_allclose(w.body_vel[3], np.cross(w_thigh, w.body_pos[3] - HIP)
                               + np.cross(d4 * R_thigh @ [0, 1.0, 0], w.body_pos[3] - knee),
                               atol=1e-12)
    np.testing.assert_allclose(w.body_angvel[4], w_arm, atol=1e-12)
    np.testing.assert_allclose(w.body_vel[4], np.cross(w_arm, w.body_pos[4] - SHOULDER),
                               atol=1e-12)
    assert_reads_back(w, POSE)
    for name in w.joint_names:   # every anchor met
        assert np.linalg.norm(np.subtract(*w.joint_anchor_world(name))) < 1e-12, name
    # the step measures the joints at the keyframe's pose: no gap, coordinates moved on by
    # their rates for one step of 0.1 ms, nothing jumps
    w.step(1)
    gap, angle = worst_gaps(w)
    assert gap < 1e-12 and angle < 1e-12
    dt = w.dt
    for k, name in enumerate(w.joint_names[1:5], start=1):
        assert w.joint_coord[k] == pytest.approx(POSE["joints"][name]
                                                 + dt * POSE["rates"][name], abs=1e-6)
        assert w.joint_vel[k] == pytest.approx(POSE["rates"][name], abs=1e-3)
    # the ball's angle grows at W's part along its axis of rotation (0.6, 0, 0.8); it
    # reports |W|
    assert w.joint_coord[5] == pytest.approx(0.8 + dt * 1.9, abs=1e-6)
    assert w.joint_vel[5] == pytest.approx(math.sqrt(5.25), abs=1e-3)


def test_a_ball_joints_rotation_is_in_its_joint_frame_whose_x_is_its_axis():
    w = World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    w.add_body("top", Box((0.2, 0.05, 0.05)), mass=1.0, pos=(0.2, 0.0, 1.0))
    w.add_joint("pivot", "spherical", "world", "top", anchor=(0.0, 0.0, 1.0), axis=(0, 0, 1))
    turn = 0.7   # about the joint frame's x, the axis z: the top turns about the world's z
    w.apply_keyframe(joints={"pivot": (math.cos(turn / 2), math.sin(turn / 2), 0.0, 0.0)},
                     rates={"pivot": (1.5, 0.0, 0.0)})
    np.testing.assert_allclose(w.body_pos[1], (0.2 * math.cos(turn), 0.2 * math.sin(turn), 1.0),
                               atol=1e-12)
    np.testing.assert_allclose(w.body_angvel[1], (0.0, 0.0, 1.5), atol=1e-12)
    w.step(1)
    assert w.joint_coord[0] == pytest.approx(turn + 1.5e-3, abs=1e-9)   # what it reports
    assert w.joint_vel[0] == pytest.approx(1.5, abs=1e-6)


@pytest.mark.parametrize("offsets", [False, True])
def test_a_floating_robot_with_a_gimbal_and_a_ball_takes_them_from_its_placed_base(offsets):
    """The base placed and moving; the hip's hinges with anchors apart (gimbal.py's u_12,
    u_23) close too."""
    w = leg_and_arm(floating=True, offsets=offsets)
    base = dict(pos=(0.5, -0.2, 1.4), quat=(math.cos(0.3), 0.0, math.sin(0.3), 0.0),
                vel=(0.1, 0.2, -0.3), angvel=(0.4, -0.5, 0.6))
    pose = dict(POSE, bodies={"pelvis": base})
    w.apply_keyframe(**pose)
    np.testing.assert_allclose(w.body_pos[1], base["pos"], atol=1e-12)
    np.testing.assert_allclose(w.body_quat[1], base["quat"], atol=1e-12)
    np.testing.assert_allclose(w.body_vel[1], base["vel"], atol=1e-12)
    np.testing.assert_allclose(w.body_angvel[1], base["angvel"], atol=1e-12)
    assert_reads_back(w, pose)
    got = w.keyframe_state()["bodies"]["pelvis"]
    for key, value in base.items():
        np.testing.assert_allclose(got[key], value, atol=1e-12)
    w.step(1)
    gap, angle = worst_gaps(w)
    assert gap < 1e-12 and angle < 1e-12
    for k, name in enumerate(w.joint_names[:4]):
        assert w.joint_coord[k] == pytest.approx(pose["joints"][name]
                                                 + w.dt * pose["rates"][name], abs=1e-6)


def test_one_joint_moves_only_what_lies_beyond_it_and_the_group_keeps_its_other_angles():
    w = leg_and_arm()
    w.apply_keyframe(**POSE)
    before = w.body_pos.copy(), w.body_quat.copy()
    w.apply_keyframe(joints={"hip_z": 0.2})
    np.testing.assert_array_equal(w.body_pos[[1, 4]], before[0][[1, 4]])
    np.testing.assert_array_equal(w.body_quat[[1, 4]], before[1][[1, 4]])
    assert_reads_back(w, dict(joints={"hip_x": 0.3, "hip_z": 0.2, "hip_y": 0.8, "knee": -1.1,
                                      "shoulder": tuple(BALL)},
                              rates={"hip_x": 0.0, "hip_z": 0.0, "knee": 0.0,
                                     "shoulder": (0.0, 0.0, 0.0)}))
    R = rot((1, 0, 0), 0.3) @ rot((0, 0, 1), 0.2) @ rot((0, 1, 0), 0.8)
    np.testing.assert_allclose(w.body_pos[2], HIP + R @ (THIGH - HIP), atol=1e-12)


def test_the_keyframe_of_the_state_applied_gives_the_same_state():
    """World.keyframe_state (the panel's Copy as TOML) -> apply_keyframe: the same poses and
    velocities, in another world built the same way."""
    w = leg_and_arm(floating=True)
    w.apply_keyframe(**dict(POSE, bodies={"pelvis": dict(pos=(0.0, 0.0, 1.2),
                                                         angvel=(0.1, 0.2, 0.3))}))
    w.step(20)   # no gravity: turning on, its joints held by the step
    saved = w.keyframe_state()
    other = leg_and_arm(floating=True)
    other.apply_keyframe(**saved, name="saved")
    np.testing.assert_allclose(other.body_pos, w.body_pos, atol=1e-9)
    np.testing.assert_allclose(np.abs(np.sum(other.body_quat * w.body_quat, axis=1)), 1.0,
                               atol=1e-12)
    # (a step's velocities hold the joints at the pose its velocity solve saw, O(dt) from
    # the pose it ends at: the keyframe's are the rigid motions at this pose)
    np.testing.assert_allclose(other.body_vel, w.body_vel, atol=2e-3)
    np.testing.assert_allclose(other.body_angvel, w.body_angvel, atol=2e-3)
    # and from a keyframe's own state, exactly
    again = other.keyframe_state()
    third = leg_and_arm(floating=True)
    third.apply_keyframe(**again)
    np.testing.assert_allclose(third.body_pos, other.body_pos, atol=1e-12)
    np.testing.assert_allclose(third.body_vel, other.body_vel, atol=1e-12)
    np.testing.assert_allclose(third.body_angvel, other.body_angvel, atol=1e-12)


def test_the_keyframe_of_a_loops_state_leaves_the_joint_that_closes_it_out():
    w = double_pendulum(gravity=(0.0, 0.0, 0.0))
    w.add_joint("tip", "spherical", "world", "lower", anchor=(1.0, 0.0, 2.0))   # held: a loop
    w.step(1)
    saved = w.keyframe_state()
    assert len(saved["joints"]) == 2   # (the breadth-first tree from the world: the elbow)
    pos = w.body_pos.copy()
    w.apply_keyframe(**saved)
    np.testing.assert_allclose(w.body_pos, pos, atol=1e-12)


@pytest.mark.parametrize("entry, words", [
    (dict(joints={"shoulder": 0.5}), "rotation of spherical joint 'shoulder' must have 4"),
    (dict(joints={"shoulder": (1.0, 0.0, 0.0)}), "must have 4 numbers"),
    (dict(joints={"shoulder": (0.9, 0.1, 0.0, 0.0)}), "must be a unit quaternion"),
    (dict(joints={"shoulder": (1.0, float("nan"), 0.0, 0.0)}), "NaN"),
    (dict(rates={"shoulder": (1.0, 2.0)}), "rate of spherical joint 'shoulder' must have 3"),
    (dict(rates={"shoulder": (1.0, float("inf"), 0.0)}), "NaN or infinite"),
    (dict(joints={"hip_x": (1.0, 0.0, 0.0, 0.0)}), "joint of joint 'hip_x' must be a number"),
    (dict(joints={"hip_z": 1.6}), "middle hinge of a universal joint or gimbal"),
    (dict(joints={"root": 0.1}), "is fixed: a keyframe sets revolute, prismatic and spherical"),
    (dict(targets={"knee": 0.3}), "has no position or velocity controller"),
])
def test_a_bad_spherical_or_group_entry_is_one_error_and_changes_nothing(entry, words):
    w = leg_and_arm(gravity=(0.0, 0.0, -9.81))
    w.step(3)
    before = w.save_state()
    with pytest.raises(ValueError, match=words) as info:
        w.apply_keyframe(**entry, name="keyframe 'crouch'")
    assert "\n" not in str(info.value) and str(info.value).startswith("keyframe 'crouch':")
    after = w.save_state()
    for name, a in before.arrays.items():
        assert np.array_equal(a, after.arrays[name]), name


def test_a_keyframe_moves_a_controllers_set_point():
    from sharnir.physics import DCMotor

    w = double_pendulum(gravity=(0.0, 0.0, 0.0))
    w.add_motor("elbow", DCMotor(resistance=1.0, torque_constant=0.1))
    w.set_controller("elbow", "position", kp=50.0, kd=1.0, target=0.0)
    w.apply_keyframe(joints={"elbow": 0.2}, targets={"elbow": 0.4})
    assert w.keyframe_state()["targets"] == {"elbow": 0.4}
    w.apply_keyframe(targets={"elbow": (0.5, 1.5)})
    assert w.keyframe_state()["targets"] == {"elbow": [0.5, 1.5]}
    w.set_voltage("elbow", 2.0)   # a voltage takes over: the keyframe keeps the voltage
    assert w.keyframe_state()["voltages"] == {"elbow": 2.0}


BALL_SCENE = """
[world]
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "top"
shape = { type = "box", half_extents = [0.2, 0.05, 0.05] }
mass = 1.0
pos = [0.2, 0.0, 1.0]
[[joints]]
name = "pivot"
type = "spherical"
body_a = "world"
body_b = "top"
anchor = [0.0, 0.0, 1.0]
axis = [0.0, 0.0, 1.0]
[[keyframes]]
name = "turned"
joints = { pivot = [0.955336489125606, 0.29552020666133955, 0.0, 0.0] }
rates = { pivot = [1.5, 0.0, 0.0] }
"""


def test_spherical_rotations_and_rates_in_a_scene_file_round_trip(tmp_path):
    from sharnir.scenes import SceneError, load_scene, read_scene
    from sharnir.scenes.writer import scene_toml

    scene = tmp_path / "ball.toml"
    scene.write_text(BALL_SCENE)
    again = tmp_path / "again.toml"
    again.write_text(scene_toml(read_scene(scene)))
    assert read_scene(again).keyframes == read_scene(scene).keyframes
    w = load_scene(again)
    w.apply_keyframe(**w.keyframes["turned"])   # 0.6 rad about the axis, z
    np.testing.assert_allclose(w.body_pos[1], (0.2 * math.cos(0.6), 0.2 * math.sin(0.6), 1.0),
                               atol=1e-12)
    scene.write_text(BALL_SCENE.replace("[0.955336489125606", "[0.5"))
    with pytest.raises(SceneError, match=r'keyframes\[0\] "turned".*unit quaternion'):
        load_scene(scene)
