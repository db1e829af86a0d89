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


def test_the_hinges_of_a_gimbal_group_are_refused_for_now():
    w = World(dt=1e-3)
    w.add_body("cross", Box((0.05, 0.05, 0.05)), mass=1.0, pos=(0.0, 0.0, 1.0))
    w.add_joint("yaw", "revolute", "world", "cross", anchor=(0, 0, 1), axis=(0, 0, 1))
    w.add_joint("pitch", "revolute", "world", "cross", anchor=(0, 0, 1), axis=(0, 1, 0))
    w.step(1)
    with pytest.raises(ValueError, match="one hinge of a universal or gimbal group"):
        w.apply_keyframe(joints={"yaw": 0.3})
