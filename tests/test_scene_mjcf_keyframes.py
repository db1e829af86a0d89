"""MJCF <keyframe>s as [[keyframes]] (scenes/mjcf.py, `keyframes`): applied, a key puts every
body where MuJoCo's forward kinematics at the key's qpos puts it, moving as MuJoCo's qvel
moves it; its ctrl becomes the servos' set-points and the motors' voltages; what a key holds
that does not map is named in the file's one warning, and never keeps the file from
loading."""
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from sharnir.physics.shape import quat_matrix  # noqa: E402
from sharnir.scenes import load_scene, read_scene  # noqa: E402
from sharnir.scenes.mjcf import MjcfWarning  # noqa: E402

HUMANOID = Path(__file__).parent / "fixtures" / "mjcf" / "humanoid.xml"

# a floating base with a hinge (a position servo, ref 0.3) carrying a slide (a motor)
# carrying a ball; a hinge and a ball in one body (an intermediate body between them); a
# wheel on a velocity servo; a 3-hinge hip (a gimbal). No contacts: kinematics alone.
MODEL = """<mujoco model="keys">
  <compiler angle="radian"/>
  <option timestep="0.001"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0 0 1" quat="0.9 0.1 0.2 0.3">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" mass="4"/>
      <geom type="sphere" size="0.05" pos="0.2 0 0.05" mass="0.5"/>
      <body name="upper" pos="0.2 0 0">
        <joint name="shoulder" axis="0 1 0" range="-2 2" ref="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
        <body name="slider" pos="0.3 0 0">
          <joint name="slide" type="slide" axis="1 0 0" range="-0.1 0.2"/>
          <geom type="box" size="0.05 0.03 0.03" mass="0.4"/>
          <body name="hand" pos="0.1 0 0" quat="0.8 0 0.6 0">
            <joint name="wrist" type="ball"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/>
          </body>
        </body>
      </body>
      <body name="tail" pos="-0.2 0 0">
        <joint name="twist" axis="1 0 0"/>
        <joint name="tip" type="ball" pos="0 0 -0.02"/>
        <geom type="box" size="0.03 0.05 0.08" pos="0 0 -0.1" mass="0.6"/>
      </body>
      <body name="wheel" pos="0 -0.15 0">
        <joint name="spin" axis="0 1 0"/>
        <geom type="cylinder" size="0.1 0.02" quat="0.7071068 0.7071068 0 0" mass="0.8"/>
      </body>
      <body name="leg" pos="0 0.1 -0.05">
        <joint name="hip_x" axis="1 0 0"/>
        <joint name="hip_z" axis="0 0 1" range="-1 1"/>
        <joint name="hip_y" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="1"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="servo" joint="shoulder" kp="50" kv="2" gear="2" ctrlrange="-3 3"/>
    <velocity name="drive" joint="spin" kv="0.2" gear="1.5"/>
    <motor name="push" joint="slide" gear="10" ctrlrange="-1 1"/>
  </actuator>
  <keyframe>
    <key name="pose"
      qpos="0.1 0.2 1.3 0.7 0.1 -0.3 0.2  0.5 0.05  0.9 0.1 -0.3 0.2  0.4 0.95 0 0.3 0.1  0.7
            0.2 -0.4 0.6"
      qvel="0.3 -0.2 0.1 0.5 -0.4 0.3  1.0 0.2  0.3 -0.5 0.7  -0.6 0.2 0.1 0.4  2.0
            0.5 -1.0 0.8"
      ctrl="0.7 1.2 0.5"/>
    <key qpos="0 0 1 1 0 0 0  0.3 0  1 0 0 0  0 1 0 0 0  0  0 0 0" ctrl="5 0 -5"/>
  </keyframe>
</mujoco>
"""


def write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def quiet_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", MjcfWarning)
        return load_scene(path)


def mujoco_at_key(m, k):
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, k)
    mujoco.mj_forward(m, d)
    return d


def assert_bodies_where_mujoco_puts_them(w, m, d0, dk, pos0, quat0, tol=1e-9):
    """Every Sharnir body that is a MuJoCo body with joints: its centre of mass at d.xipos
    (or, a body merged with others, moved by that body's rigid motion), turned as MuJoCo's
    turned from qpos0, moving at MuJoCo's velocity of that point."""
    checked = 0
    for b in range(1, m.nbody):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        if name not in w.body_names or m.body_jntnum[b] == 0:
            continue
        i = w.body_names.index(name)
        D = dk.xmat[b].reshape(3, 3) @ d0.xmat[b].reshape(3, 3).T
        np.testing.assert_allclose(w.body_pos[i], dk.xpos[b] + D @ (pos0[i] - d0.xpos[b]),
                                   atol=tol, err_msg=name)
        np.testing.assert_allclose(quat_matrix(w.body_quat[i]), D @ quat_matrix(quat0[i]),
                                   atol=tol, err_msg=name)
        res = np.zeros(6)   # (angular, linear) at the body frame's origin, world axes
        mujoco.mj_objectVelocity(m, dk, mujoco.mjtObj.mjOBJ_XBODY, b, res, 0)
        np.testing.assert_allclose(w.body_angvel[i], res[:3], atol=tol, err_msg=name)
        np.testing.assert_allclose(w.body_vel[i],
                                   res[3:] + np.cross(res[:3], w.body_pos[i] - dk.xpos[b]),
                                   atol=tol, err_msg=name)
        checked += 1
    return checked


def test_a_key_puts_the_bodies_where_mujoco_puts_them_moving_as_they_move(tmp_path):
    path = write(tmp_path, MODEL)
    w = quiet_load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d0 = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d0)
    pos0, quat0 = w.body_pos.copy(), w.body_quat.copy()
    assert list(w.keyframes) == ["pose", "key1"]   # MuJoCo's names; unnamed: key<index>
    for k, name in enumerate(w.keyframes):
        w.apply_keyframe(**w.keyframes[name], name=name)
        dk = mujoco_at_key(m, k)
        assert assert_bodies_where_mujoco_puts_them(w, m, d0, dk, pos0, quat0) == 7
        for b in range(1, m.nbody):   # single-body links: at MuJoCo's centres of mass
            nm = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
            np.testing.assert_allclose(w.body_pos[w.body_names.index(nm)], dk.xipos[b],
                                       atol=1e-9)
        # the joints report MuJoCo's coordinates: qpos - qpos0, and the balls' rotations
        got = w.keyframe_state()["joints"]
        for j in range(m.njnt):
            jn = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
            a = m.jnt_qposadr[j]
            if m.jnt_type[j] in (2, 3):
                assert got[jn] == pytest.approx(m.key_qpos[k, a] - m.qpos0[a], abs=1e-9)
            elif m.jnt_type[j] == 1:
                q = m.key_qpos[k, a:a + 4] / np.linalg.norm(m.key_qpos[k, a:a + 4])
                angle = 2 * np.arctan2(np.linalg.norm(q[1:]), abs(q[0]))
                assert 2 * np.arctan2(np.linalg.norm(got[jn][1:]), abs(got[jn][0])) == \
                    pytest.approx(angle, abs=1e-9)


def test_a_keys_ctrl_becomes_the_servos_set_points_and_the_motors_voltages(tmp_path):
    spec = read_scene(write(tmp_path, MODEL))
    pose, rest = spec.keyframes
    # a position servo's ctrl is its actuator length g q: set-point ctrl / g - qpos0; a
    # velocity servo's, the rate ctrl / g; a motor's, its voltage
    assert pose.targets == {"shoulder": pytest.approx(0.7 / 2 - 0.3),
                            "spin": pytest.approx(1.2 / 1.5)}
    assert pose.voltages == {"slide": 0.5}
    # MuJoCo clamps ctrl to ctrlrange
    assert rest.targets == {"shoulder": pytest.approx(3.0 / 2 - 0.3), "spin": 0.0}
    assert rest.voltages == {"slide": -1.0}
    assert rest.rates == {} and "base" in rest.bodies
    # `sharnir convert` keeps them (scenes/writer.py)
    from sharnir.scenes.writer import scene_toml

    again = write(tmp_path, scene_toml(spec), "again.toml")
    assert read_scene(again).keyframes == spec.keyframes


def test_a_run_from_a_key_goes_on_as_mujocos(tmp_path):
    """`sharnir run --keyframe`: nothing jumps; 0.1 s on, the bodies within 3 mm of MuJoCo's
    run from mj_resetDataKeyframe (within 1 mm from qpos0: the step differs)."""
    path = write(tmp_path, MODEL)
    done = subprocess.run([sys.executable, "-m", "sharnir", "run", str(path), "--keyframe",
                           "pose", "--duration", "0.1", "--json"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    joints = json.loads(done.stdout.strip().splitlines()[-1])["joints"]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco_at_key(m, 0)
    for _ in range(100):
        mujoco.mj_step(m, d)
    for name in ("shoulder", "slide", "spin", "hip_x", "hip_z", "hip_y"):
        a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]
        assert joints[name]["coordinate"] == pytest.approx(d.qpos[a] - m.qpos0[a], abs=0.02)
    w = quiet_load(path)
    w.apply_keyframe(**w.keyframes["pose"])
    w.step(100)
    for b in range(1, m.nbody):
        nm = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        assert np.abs(w.body_pos[w.body_names.index(nm)] - d.xipos[b]).max() < 3e-3, nm


def test_humanoid_keyframes_put_it_where_mujoco_puts_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = load_scene(HUMANOID)
    text = " ".join(str(c.message) for c in caught if issubclass(c.category, MjcfWarning))
    assert "keyframe" not in text
    assert list(w.keyframes) == ["squat", "stand_on_left_leg", "prone", "supine"]
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    d0 = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d0)
    pos0, quat0 = w.body_pos.copy(), w.body_quat.copy()
    for k, name in enumerate(w.keyframes):
        w.apply_keyframe(**w.keyframes[name], name=name)
        dk = mujoco_at_key(m, k)
        # the torso floats; the waist, thighs, feet and upper arms are universal joints and
        # gimbals (physics/gimbal.py)
        assert assert_bodies_where_mujoco_puts_them(w, m, d0, dk, pos0, quat0) == 13
    w.step(10)   # and from there the step holds every joint
    assert np.isfinite(w.body_pos).all()


def test_what_a_key_holds_that_does_not_map_is_named_and_the_rest_loads(tmp_path):
    xml = """<mujoco><compiler angle="radian"/><worldbody>
      <body name="target" mocap="true" pos="1 0 1"><geom type="sphere" size="0.05"/></body>
      <body name="arm" pos="0 0 1">
        <joint name="ax" axis="1 0 0"/><joint name="ay" axis="0 1 0" range="-1 1"/>
        <joint name="az" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body></worldbody>
      <actuator><general name="slow" joint="ax" dyntype="filter" dynprm="0.1"/></actuator>
      <keyframe>
        <key name="reach" time="1.5" qpos="0.1 0.2 0.3" act="0.5" ctrl="0.2" mpos="1 1 1"
             mquat="1 0 0 0"/>
        <key name="over" qpos="0.1 2.0 0.3"/>
      </keyframe></mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = load_scene(write(tmp_path, xml))
    mine = [c for c in caught if issubclass(c.category, MjcfWarning)]
    assert len(mine) == 1
    text = str(mine[0].message)
    for what in ('in keyframe "reach": the ctrl of actuator "slow" (not mapped)',
                 "its actuator activations (act)", "its mocap bodies' poses (mpos, mquat)",
                 "its time (1.5 s)",
                 'in keyframe "over": the angles of joints "ax", "ay", "az" (the middle one '
                 "beyond +-90 degrees)"):
        assert what in text, what
    assert w.keyframes["reach"]["joints"] == {"ax": 0.1, "ay": 0.2, "az": 0.3}
    assert w.keyframes["over"]["joints"] == {}
    w.apply_keyframe(**w.keyframes["reach"])
    assert w.keyframe_state()["joints"]["ay"] == pytest.approx(0.2, abs=1e-12)
