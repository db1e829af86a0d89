"""Scene files that include other scene and MJCF files with a pose and a name prefix
(scenes/include.py)."""
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from sharnir.scenes import SceneError, build_world, load_scene, read_scene

ARM = """
description = "an arm on a shoulder"
[[bodies]]
name = "link"
shape = { type = "box", half_extents = [0.2, 0.02, 0.02] }
mass = 1.0
pos = [0.2, 0.0, 0.0]
[[joints]]
name = "shoulder"
type = "revolute"
body_a = "world"
body_b = "link"
axis = [0.0, 1.0, 0.0]
friction = 0.5
"""
QZ90 = [math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)]   # a quarter turn about z


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def test_two_included_arms_are_placed_renamed_and_swing_like_the_original(tmp_path):
    write(tmp_path, "arm.toml", ARM)
    scene = write(tmp_path, "two.toml", f"""
include = [
  {{ file = "arm.toml", prefix = "l_", pos = [0.0, 0.5, 1.0] }},
  {{ file = "arm.toml", prefix = "r_", pos = [0.0, -0.5, 1.0], quat = {QZ90} }},
]
""")
    spec = read_scene(scene)
    bodies = {b.name: b for b in spec.bodies}
    joints = {j.name: j for j in spec.joints}
    assert set(bodies) == {"l_link", "r_link"} and set(joints) == {"l_shoulder", "r_shoulder"}
    np.testing.assert_allclose(bodies["l_link"].pos, (0.2, 0.5, 1.0))
    np.testing.assert_allclose(bodies["r_link"].pos, (0.0, -0.3, 1.0), atol=1e-15)  # turned
    np.testing.assert_allclose(bodies["r_link"].quat, QZ90)
    assert joints["r_shoulder"].body_a == "world" and joints["r_shoulder"].body_b == "r_link"
    np.testing.assert_allclose(joints["r_shoulder"].anchor, (0.0, -0.5, 1.0))
    np.testing.assert_allclose(joints["r_shoulder"].axis, (-1.0, 0.0, 0.0), atol=1e-15)
    assert joints["l_shoulder"].friction == 0.5
    # gravity is along z, so the arm turned about z swings as the arm alone does
    alone, both = load_scene(write(tmp_path, "alone.toml", ARM)), build_world(spec)
    alone.run(240)
    both.run(240)
    assert abs(alone.joint_coord[0]) > 0.5                      # it did swing
    np.testing.assert_allclose(both.joint_coord, [alone.joint_coord[0]] * 2, atol=1e-9)


def test_includes_nest_and_take_hull_files_from_their_own_folder(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    write(parts, "tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\n"
                            "f 2 3 4\n")
    write(parts, "rock.toml", 'bodies = [{ name = "rock", mass = 1.0, '
                              'shape = { type = "hull", file = "tet.obj" } }]\n')
    write(parts, "pile.toml", 'include = [{ file = "rock.toml", prefix = "a_" }, '
                              '{ file = "rock.toml", prefix = "b_", pos = [2.0, 0.0, 0.0] }]\n')
    scene = write(tmp_path, "yard.toml", 'include = [{ file = "parts/pile.toml", prefix = "p_", '
                                         'pos = [0.0, 0.0, 1.0] }]\n')
    world = load_scene(scene)
    assert world.body_names[1:] == ["p_a_rock", "p_b_rock"]
    ref = [world.body_reference_pose(n)[0] for n in ("p_a_rock", "p_b_rock")]
    np.testing.assert_allclose(ref, [(0.0, 0.0, 1.0), (2.0, 0.0, 1.0)], atol=1e-12)


def test_an_mjcf_file_is_included_with_a_prefix(tmp_path):
    pytest.importorskip("mujoco")
    write(tmp_path, "pend.xml", "<mujoco><worldbody><body name='bob' pos='0 0 1'>"
                                "<joint name='pivot' type='hinge' axis='0 1 0' pos='0 0 0.5'/>"
                                "<geom type='sphere' size='0.05' mass='1'/></body></worldbody>"
                                "</mujoco>")
    scene = write(tmp_path, "s.toml", 'include = [{ file = "pend.xml", prefix = "m_", '
                                      'pos = [1.0, 0.0, 0.0] }]\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = read_scene(scene)
    joint = next(j for j in spec.joints if j.name == "m_pivot")
    np.testing.assert_allclose(joint.anchor, (1.0, 0.0, 1.5))
    assert any(b.name == "m_bob" for b in spec.bodies)


@pytest.mark.parametrize("files,fragments", [
    ({"a.toml": 'include = [{ file = "b.toml" }]', "b.toml": 'include = [{ file = "a.toml" }]'},
     ["a.toml", 'include[0] "b.toml"', "includes itself", "a.toml -> b.toml -> a.toml"]),
    ({"a.toml": 'include = [{ file = "gone.toml" }]'}, ["gone.toml", "no such file"]),
    ({"a.toml": 'include = [{ file = "b.toml", pos = "up" }]', "b.toml": ""},
     ["a.toml", "include[0]", "pos"]),
    ({"a.toml": 'include = { file = "b.toml" }', "b.toml": ""},
     ["a.toml", '"include" must be an array of tables']),
    ({"a.toml": 'include = [{ file = "b.toml" }, { file = "b.toml" }]', "b.toml": ARM},
     ['duplicate name "link"']),
])
def test_bad_includes_are_one_clear_error(tmp_path, files, fragments):
    for name, text in files.items():
        write(tmp_path, name, text)
    with pytest.raises(SceneError) as info:
        read_scene(tmp_path / "a.toml")
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message


def test_a_urdf_robot_is_included_twice_with_its_own_base_choice(tmp_path):
    kuka = (Path(__file__).parent / "fixtures" / "urdf" / "kuka_iiwa" / "model.urdf").as_posix()
    scene = write(tmp_path, "cell.toml", f"""
include = [
  {{ file = "{kuka}", prefix = "a_", pos = [0.0, -0.5, 0.0] }},
  {{ file = "{kuka}", prefix = "b_", pos = [0.0, 0.5, 0.0],
     urdf = {{ fixed_base = false, motors = false }} }},
]
""".replace("\n     urdf", " urdf"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = read_scene(scene, asset_roots=[Path(kuka).parent])   # (a folder elsewhere)
    joints = {j.name: j for j in spec.joints}
    kinds = {b.name: b.kind for b in spec.bodies}
    assert kinds["a_lbr_iiwa_link_0"] == "static"            # a fixed base
    assert kinds["b_lbr_iiwa_link_0"] == "dynamic"           # and a floating one
    assert any(j.motor is not None for j in joints.values() if j.name.startswith("a_"))
    assert all(j.motor is None for j in joints.values() if j.name.startswith("b_"))
    a = {b.name: b.pos for b in spec.bodies if b.name.startswith("a_")}
    b = {b.name: b.pos for b in spec.bodies if b.name.startswith("b_")}
    for name, pos in a.items():                                # the same robot, 1 m apart in y
        np.testing.assert_allclose(np.subtract(b["b_" + name[2:]], pos), (0.0, 1.0, 0.0),
                                   atol=1e-12)


def test_urdf_options_on_another_file_are_an_error(tmp_path):
    write(tmp_path, "arm.toml", ARM)
    scene = write(tmp_path, "a.toml", 'include = [{ file = "arm.toml", urdf = { ground = true } }]')
    with pytest.raises(SceneError, match="apply to a .urdf file only"):
        read_scene(scene)


def test_included_keyframes_are_renamed_placed_and_joined_by_name(tmp_path):
    """Two arms, each file with a "home" keyframe: the scene's "home" sets both shoulders
    (renamed), a free ball's keyframe pose is placed as its body is, and the including
    file's own entries win over an included one."""
    write(tmp_path, "arm.toml", ARM + """
[[bodies]]
name = "ball"
shape = { type = "sphere", radius = 0.05 }
mass = 0.1
pos = [1.0, 0.0, 0.0]
[[keyframes]]
name = "home"
joints = { shoulder = 0.3 }
bodies.ball = { pos = [1.0, 0.0, 0.5], vel = [1.0, 0.0, 0.0] }
""")
    scene = write(tmp_path, "two.toml", f"""
include = [
  {{ file = "arm.toml", prefix = "l_", pos = [0.0, 0.5, 1.0] }},
  {{ file = "arm.toml", prefix = "r_", pos = [0.0, -0.5, 1.0], quat = {QZ90} }},
]
[[keyframes]]
name = "home"
joints = {{ r_shoulder = -0.2 }}
""")
    spec = read_scene(scene)
    [home] = spec.keyframes
    assert home.joints == {"l_shoulder": 0.3, "r_shoulder": -0.2}
    np.testing.assert_allclose(home.bodies["l_ball"].pos, (1.0, 0.5, 1.5))
    np.testing.assert_allclose(home.bodies["r_ball"].pos, (0.0, 0.5, 1.5), atol=1e-15)
    np.testing.assert_allclose(home.bodies["r_ball"].vel, (0.0, 1.0, 0.0), atol=1e-15)
    world = build_world(spec)
    world.apply_keyframe(**world.keyframes["home"])
    names = world.joint_names
    np.testing.assert_allclose([world.joint_coord[names.index("l_shoulder")],
                                world.joint_coord[names.index("r_shoulder")]], [0.3, -0.2],
                               atol=1e-12)
