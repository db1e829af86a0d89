"""Robots placed as their files mean (scenes/urdf.py, read_urdf's fixed_base and height; the
loader's OPENED_URDF): a URDF opened as a scene stands on a ground plane at z = 0, fixed at
its base when it stands on it (an arm), floating when it stands on wheels or legs; the base
and start height can be chosen in the loader, an include, the command line and the panel.
Heights are worked out on paper from the files' numbers."""
import math
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import REPO

from sharnir.app.commands import Load
from sharnir.app.panel_state import PanelState, request_robot
from sharnir.app.recent import RecentFiles
from sharnir.scenes import SceneError, load_scene, read_scene
from sharnir.scenes.urdf import BASE_CONTACT_M, UrdfWarning, read_urdf

FIXTURES = Path(__file__).parent / "fixtures" / "urdf"
R2D2 = FIXTURES / "r2d2" / "r2d2.urdf"
IIWA = FIXTURES / "kuka_iiwa" / "model.urdf"

# r2d2's lowest point at the file's zero pose: a wheel (cylinder r 0.035, length 0.1) centred
# at z = 0.25 (leg) - 0.6 (its base) - 0.085 = -0.435, its axis turned by pitch 1.57075 from
# z (so its z component is cos 1.57075)
_UZ = math.cos(1.57075)
R2D2_LOWEST = -0.435 - abs(_UZ) * 0.05 - 0.035 * math.sqrt(1.0 - _UZ * _UZ)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        return fn(*args, **kwargs)


def body(raw, name):
    return next(b for b in raw["bodies"] if b["name"] == name)


def write(folder, text, name="robot.urdf"):
    path = Path(folder) / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="test">\n{text}\n</robot>\n')
    return path


def box_link(name, size, z=0.0, mass=1.0):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><inertia ixx="0.01" '
            f'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            f'<origin xyz="0 0 {z}"/><geometry><box size="{size}"/></geometry></collision>'
            f'</link>')


def joint(name, parent, child, xyz, kind="revolute", axis="0 1 0"):
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>' if kind == "revolute" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')


# a two-link arm on a base plate whose bottom is at z = 0; its upper links well above
ARM = "\n".join([box_link("plate", "0.2 0.2 0.05", z=0.025, mass=3.0),
                 box_link("upper", "0.05 0.05 0.4", z=0.2),
                 box_link("fore", "0.05 0.05 0.3", z=0.15),
                 joint("shoulder", "plate", "upper", "0 0 0.05"),
                 joint("elbow", "upper", "fore", "0 0 0.4")])


def test_r2d2_floats_and_is_lifted_onto_the_ground_when_opened():
    raw0 = quiet(read_urdf, R2D2)
    assert "floating base (it stands on legs or wheels)" in raw0["description"]
    assert all(j["type"] != "fixed" or j["body_a"] != "world" for j in raw0["joints"])
    spec = quiet(read_scene, R2D2)
    ground = spec.bodies[0]
    assert ground.name == "ground" and ground.kind == "static" and ground.pos == (0, 0, 0)
    opened = {b.name: b for b in spec.bodies}
    for b in raw0["bodies"]:   # every body moved straight up by -lowest
        x, y, z = opened[b["name"]].pos
        assert (x, y) == pytest.approx(b["pos"][:2], abs=1e-12)
        assert z - b["pos"][2] == pytest.approx(-R2D2_LOWEST, abs=1e-9)
    assert -R2D2_LOWEST == pytest.approx(0.47, abs=1e-5)


def test_r2d2_stands_still_on_its_wheels_for_a_second():
    world = quiet(load_scene, R2D2)
    i = world.body_names.index("base_link")
    z0 = float(world.body_pos[i, 2])
    world.run(round(1.0 / world.dt))
    assert np.isfinite(world.body_pos).all()
    # resting on four wheels: no fall, no climb beyond a contact's slop; upright
    assert float(world.body_pos[i, 2]) == pytest.approx(z0, abs=2e-3)
    w, x, y, z = world.body_quat[i]
    tilt = 2.0 * math.degrees(math.asin(min(1.0, math.hypot(x, y))))
    assert tilt < 1.0


def test_an_arm_is_fixed_at_its_base_and_a_wheeled_base_floats(tmp_path):
    arm = quiet(read_urdf, write(tmp_path, ARM))
    assert "fixed base (it stands on its base)" in arm["description"]
    assert arm["joints"][0] == {"name": "plate_to_world", "type": "fixed", "body_a": "world",
                                "body_b": "plate", "anchor": [0.0, 0.0, 0.0]}
    # the same plate on two wheels (continuous joints) reaching 1 cm below it: it rolls
    wheels = "\n".join([ARM,
                        '<link name="wheel_l"><inertial><mass value="0.5"/><inertia ixx="1e-3" '
                        'iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
                        '<geometry><sphere radius="0.03"/></geometry></collision></link>',
                        joint("axle", "plate", "wheel_l", "0 0.12 0.02", "continuous")])
    rover = quiet(read_urdf, write(tmp_path, wheels, "rover.urdf"))
    assert "floating base" in rover["description"]
    # a part of a moving link just within BASE_CONTACT_M of the lowest point counts, one
    # just beyond it does not (the wheel's bottom 0.02 - 0.03 = -0.01 m, the plate's 0)
    for lift, floats in ((0.01 + 0.9 * BASE_CONTACT_M, True),
                         (0.01 + 1.1 * BASE_CONTACT_M, False)):
        moved = wheels.replace('"0 0.12 0.02"', f'"0 0.12 {0.02 + lift:.6f}"')
        raw = quiet(read_urdf, write(tmp_path, moved, "near.urdf"))
        assert ("floating base" in raw["description"]) is floats, lift


def test_a_robot_whose_bare_base_holds_one_branch_hangs_from_it(tmp_path):
    """A mounting frame without collision geometry (a pendulum's pivot) is fixed, as MuJoCo
    fixes every URDF; PyBullet would let it fall. On two legs it stands."""
    text = ('<link name="pivot"/>' + box_link("rod", "0.02 0.02 0.5", z=-0.25)
            + joint("swing", "pivot", "rod", "0 0 1"))
    raw = quiet(read_urdf, write(tmp_path, text))
    assert "fixed base" in raw["description"]
    # the same bare root on two legs (TALOS's base_link has no collision geometry): it stands
    legs = ('<link name="pelvis"/>' + box_link("left", "0.05 0.05 0.8", z=-0.4)
            + box_link("right", "0.05 0.05 0.8", z=-0.4)
            + joint("hip_l", "pelvis", "left", "0 0.1 0") + joint("hip_r", "pelvis", "right",
                                                                   "0 -0.1 0"))
    raw = quiet(read_urdf, write(tmp_path, legs, "legs.urdf"))
    assert "floating base (it stands on legs or wheels)" in raw["description"]
    # one leg 1 cm shorter: only one branch reaches the ground, it hangs from the pelvis
    raw = quiet(read_urdf, write(tmp_path, legs.replace('"0 -0.1 0"', '"0 -0.1 0.01"'),
                                 "limp.urdf"))
    assert "fixed base" in raw["description"]


@pytest.mark.parametrize("scale, factor", [(None, 1.0), ("2 2 2", 2.0), ("1 1 3", 3.0)])
def test_a_mesh_foot_rests_on_the_ground_whatever_its_scale(tmp_path, scale, factor):
    """A link whose only geometry is a mesh (a 0.1 m cube, its bottom at -0.05 in its frame),
    with no scale, one number for every axis or one per axis: its bottom rests on the
    ground, which is at z = 0 of the file lifted by 0.05 * the z scale + 0.3 (the joint)."""
    import trimesh

    trimesh.creation.box((0.1, 0.1, 0.1)).export(tmp_path / "cube.stl")
    scaled = f' scale="{scale}"' if scale else ""
    text = ('<link name="base"/><link name="foot"><inertial><mass value="1"/><inertia '
            'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            f'<geometry><mesh filename="cube.stl"{scaled}/></geometry></collision></link>'
            + joint("ankle", "base", "foot", "0 0 -0.3"))
    raw = quiet(read_urdf, write(tmp_path, text), height=0.0)
    foot = body(raw, "foot")
    assert foot["pos"][2] == pytest.approx(0.05 * factor, abs=1e-6)


def test_base_and_height_options_are_honoured(tmp_path):
    fixed = quiet(read_urdf, R2D2, fixed_base=True, height=0.5, ground=True)
    assert "fixed base" in fixed["description"] and "(it stands" not in fixed["description"]
    to_world = [j for j in fixed["joints"] if j["body_a"] == "world"]
    assert [j["body_b"] for j in to_world] == ["base_link"]
    assert to_world[0]["anchor"][2] == pytest.approx(0.5 - R2D2_LOWEST, abs=1e-9)
    assert body(fixed, "ground")["pos"] == [0.0, 0.0, 0.0]
    assert body(fixed, "base_link")["pos"][2] == pytest.approx(0.5 - R2D2_LOWEST, abs=1e-9)
    # no height: where the file puts it, the ground under its lowest point
    raw = quiet(read_urdf, R2D2, ground=True)
    assert body(raw, "base_link")["pos"][2] == pytest.approx(0.0, abs=1e-12)
    assert body(raw, "ground")["pos"][2] == pytest.approx(R2D2_LOWEST, abs=1e-9)
    spec = quiet(read_scene, R2D2, robot={"fixed_base": False, "height": 0.25})
    assert {b.name: b for b in spec.bodies}["base_link"].pos[2] == pytest.approx(
        0.25 - R2D2_LOWEST, abs=1e-9)
    assert not any(j.body_a == "world" for j in spec.joints)


@pytest.mark.parametrize("robot, words", [
    ({"height": float("nan")}, "height must be a number of metres"),
    ({"height": 1e9}, "height must be a number of metres"),
    ({"height": "1"}, "height must be a number of metres"),
    ({"fixed_base": "yes"}, "fixed_base must be true, false or absent"),
    ({"base": True}, "unknown robot option 'base'"),
])
def test_bad_robot_options_are_one_line_errors(robot, words):
    with pytest.raises(SceneError, match=words) as info:
        quiet(read_scene, R2D2, robot=robot)
    assert "\n" not in str(info.value) and str(R2D2) in str(info.value)


def test_robot_options_on_a_scene_that_is_no_urdf_are_refused():
    with pytest.raises(SceneError, match=r"apply to a URDF robot \(.urdf\) only"):
        read_scene("door", robot={"fixed_base": True})
    read_scene("door", robot={"fixed_base": None, "height": None})   # (none given: fine)


def test_an_include_places_a_robot_by_its_options(tmp_path):
    shutil.copytree(R2D2.parent, tmp_path / "r2d2")
    scene = tmp_path / "scene.toml"
    scene.write_text('include = [{ file = "r2d2/r2d2.urdf", prefix = "a_", pos = [1.0, 0.0, '
                     '0.2], urdf = { height = 0.1 } },\n'
                     '  { file = "r2d2/r2d2.urdf", prefix = "b_", pos = [-1.0, 0.0, 0.0], '
                     'urdf = { fixed_base = true } }]\n')
    spec = quiet(read_scene, scene)
    bodies = {b.name: b for b in spec.bodies}
    assert "ground" not in bodies and "a_ground" not in bodies   # (no ground unless asked)
    assert bodies["a_base_link"].pos == pytest.approx((1.0, 0.0, 0.2 + 0.1 - R2D2_LOWEST))
    assert bodies["b_base_link"].pos == pytest.approx((-1.0, 0.0, 0.0))   # (the file's place)
    assert [j.body_b for j in spec.joints if j.body_a == "world"] == ["b_base_link"]


def test_the_command_line_takes_base_and_height(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "sharnir", "convert", *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
    done = run(str(R2D2), "fixed.toml", "--base", "fixed", "--height", "0.3")
    assert done.returncode == 0, done.stderr
    spec = read_scene(tmp_path / "fixed.toml", asset_roots=[R2D2.parent])
    assert spec.bodies[0].name == "ground"
    assert [j.body_b for j in spec.joints if j.body_a == "world"] == ["base_link"]
    assert {b.name: b for b in spec.bodies}["base_link"].pos[2] == pytest.approx(
        0.3 - R2D2_LOWEST, abs=1e-9)
    bad = run("door", "x.toml", "--base", "floating")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "apply to a URDF robot (.urdf) only" in bad.stderr
    assert not (tmp_path / "x.toml").exists()


def test_the_panel_reads_the_robot_again_with_the_chosen_base_and_height(tmp_path):
    state, sent = PanelState(recent=RecentFiles(tmp_path / "recent.json")), []
    snap = SimpleNamespace(source=str(R2D2), robot={}, run=1, error_count=0)
    assert request_robot(snap, sent.append, state, True, 0.4) is None
    assert sent == [Load(str(R2D2), {"fixed_base": True, "height": 0.4})]
    assert state.pending.what == "reload"
    sent.clear()
    note = request_robot(snap, sent.append, state, None, float("inf"))
    assert "height must be a number of metres" in note and sent == []
    door = SimpleNamespace(source=str(REPO / "scenes" / "door.toml"), robot=None, run=1,
                           error_count=0)
    assert "no URDF robot" in request_robot(door, sent.append, state, True, 0.0)
    assert sent == []


def test_an_arm_opened_as_a_scene_stays_fixed_on_the_ground():
    spec = quiet(read_scene, IIWA)
    assert "fixed base (it stands on its base)" in spec.description
    assert spec.bodies[0].name == "ground"
    base = {b.name: b for b in spec.bodies}["lbr_iiwa_link_0"]
    assert base.kind == "static"   # (massless in the file: the fixed world itself)
    world = quiet(load_scene, IIWA)
    tip = world.body_names.index("lbr_iiwa_link_7")
    start = world.body_pos[tip].copy()
    world.run(round(0.5 / world.dt))
    assert np.abs(world.body_pos[tip] - start).max() < 0.02   # its motors hold the pose
