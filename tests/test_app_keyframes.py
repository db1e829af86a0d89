"""The panel's Keyframes section (app/panel.py keyframe_toml, the snapshot's keyframe_capture):
"Copy as TOML" of a pose with a spherical joint, a gimbal's hinges and a floating base is a
[[keyframes]] table that, pasted into the scene and applied, gives that pose back."""
import tomllib

import numpy as np
from test_app_simulation import start, step_paused, wait_for  # noqa: F401

from sharnir.app.commands import ApplyKeyframe, CaptureKeyframe
from sharnir.app.panel_state import keyframe_toml
from sharnir.scenes import load_scene

SCENE = """
[world]
gravity = [0.0, 0.0, 0.0]
dt = 0.001
[[bodies]]
name = "pelvis"
shape = { type = "box", half_extents = [0.1, 0.15, 0.05] }
mass = 5.0
pos = [0.0, 0.0, 1.0]
[[bodies]]
name = "thigh"
shape = { type = "box", half_extents = [0.04, 0.04, 0.2] }
mass = 2.0
pos = [0.0, -0.1, 0.75]
[[bodies]]
name = "arm"
shape = { type = "box", half_extents = [0.2, 0.03, 0.03] }
mass = 1.0
pos = [0.3, 0.2, 1.0]
[[joints]]
name = "hip_x"
type = "revolute"
body_a = "pelvis"
body_b = "thigh"
anchor = [0.0, -0.1, 0.95]
axis = [1.0, 0.0, 0.0]
[[joints]]
name = "hip_z"
type = "revolute"
body_a = "pelvis"
body_b = "thigh"
anchor = [0.0, -0.1, 0.95]
axis = [0.0, 0.0, 1.0]
limits = [-1.2, 1.2]
[[joints]]
name = "hip_y"
type = "revolute"
body_a = "pelvis"
body_b = "thigh"
anchor = [0.0, -0.1, 0.95]
axis = [0.0, 1.0, 0.0]
[[joints]]
name = "shoulder"
type = "spherical"
body_a = "pelvis"
body_b = "arm"
anchor = [0.1, 0.2, 1.0]
[[keyframes]]
name = "reach"
joints = { hip_x = 0.3, hip_z = -0.5, hip_y = 0.8, shoulder = [0.8, 0.36, 0.0, 0.48] }
rates = { hip_x = 1.0, shoulder = [0.5, -1.0, 2.0] }
bodies.pelvis = { pos = [0.2, 0.0, 1.5], vel = [0.0, 0.0, 0.5], angvel = [0.0, 0.3, 0.0] }
"""


def test_the_pose_copied_as_toml_applied_gives_the_pose_back(start, tmp_path):  # noqa: F811
    scene = tmp_path / "reach.toml"
    scene.write_text(SCENE)
    sim = start(scene, paused=True)
    sim.send(ApplyKeyframe("reach"))
    snap = step_paused(sim, 5)
    assert snap.keyframe_capture is None          # captured on request only (a Python walk)
    sim.send(CaptureKeyframe())
    snap = wait_for(sim, lambda s: s.keyframe_capture is not None)
    assert snap.keyframe_capture[0] == 1 and snap.keyframe_capture[1] == snap.time
    table = tomllib.loads(keyframe_toml(snap, "copied"))["keyframes"][0]
    assert len(table["joints"]["shoulder"]) == 4 and len(table["rates"]["shoulder"]) == 3
    assert {"hip_x", "hip_z", "hip_y"} <= set(table["joints"])   # the gimbal's hinges
    assert set(table["bodies"]) == {"pelvis"}
    again = tmp_path / "again.toml"
    again.write_text(SCENE + "\n" + keyframe_toml(snap, "copied"))
    w = load_scene(again)
    w.apply_keyframe(**w.keyframes["copied"])
    np.testing.assert_allclose(w.body_pos, snap.body_pos, atol=1e-9)
    np.testing.assert_allclose(np.abs(np.sum(w.body_quat * snap.body_quat, axis=1)), 1.0,
                               atol=1e-12)
    for name, value in snap.keyframe_capture[2]["joints"].items():
        np.testing.assert_allclose(w.keyframe_state()["joints"][name], value, atol=1e-9)
