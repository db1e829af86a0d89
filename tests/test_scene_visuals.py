"""Visual shapes: URDF <visual> and MJCF visual geoms are kept (shape, pose, colour), survive
`sharnir convert`, take no part in collision or mass, and are what the renderer draws.

Expected poses are the file's link frames composed with the visual's <origin> by hand (URDF)
or the MJCF's own geom positions; colours are the file's rgba.
"""
import colorsys
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from test_render import read_png, sharnir

from sharnir.physics.world import quat_to_matrix
from sharnir.render.instances import DrawTable, body_colour
from sharnir.scenes import SceneError, build_world, load_scene, read_scene
from sharnir.scenes.schema import SceneSpec
from sharnir.scenes.urdf import UrdfWarning, read_urdf
from sharnir.scenes.writer import scene_toml

FIXTURES = Path(__file__).parent / "fixtures"


def rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def visual_world_poses(world, name):
    """[(shape, world pos, world rot, rgba)] of a body's visuals at its current pose."""
    i = world.body_names.index(name)
    R = quat_to_matrix(world.body_quat[i])
    return [(s, world.body_pos[i] + R @ p, R @ r, rgba) for s, p, r, rgba in world.body_visuals[i]]


ROBOT = """<?xml version="1.0"?>
<robot name="vis">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0.02 0.01 -0.2" rpy="0.3 0 0.2"/><mass value="1"/>
      <inertia ixx="0.03" iyy="0.02" izz="0.01" ixy="0.002"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.5"/></geometry></collision>
    <visual><origin xyz="0.05 0 -0.3" rpy="0.3 0 0"/>
      <geometry><cylinder radius="0.04" length="0.4"/></geometry>
      <material name="green"><color rgba="0 1 0 1"/></material></visual>
  </link>
  <link name="bare">
    <inertial><origin xyz="0 0 -0.1" rpy="0 0.4 0"/><mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.015"/></inertial>
    <visual><origin xyz="0 0.1 0"/><geometry><sphere radius="0.05"/></geometry>
      <material name="red"/></visual>
    <visual><geometry><mesh filename="gone.obj"/></geometry></visual>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0.1 0 1.2" rpy="0 0 0.7"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="0" velocity="0"/></joint>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="bare"/>
    <origin xyz="0 0 -0.5" rpy="0.4 0 0"/><axis xyz="1 0 0"/></joint>
</robot>
"""


@pytest.fixture()
def robot(tmp_path):
    path = tmp_path / "vis.urdf"
    path.write_text(ROBOT, encoding="utf-8")
    return path


def as_in_the_file(path):
    """The robot where its file puts it (opened as a scene it stands on a ground plane)."""
    return build_world(SceneSpec.model_validate(quiet(read_urdf, path)), source=str(path))


def test_urdf_visuals_sit_at_their_link_frame_and_origin_with_their_colour(robot):
    world = as_in_the_file(robot)
    arm_p, arm_R = np.array([0.1, 0.0, 1.2]), rz(0.7)
    bare_p, bare_R = arm_p + arm_R @ [0.0, 0.0, -0.5], arm_R @ rx(0.4)
    [(shape, p, R, rgba)] = visual_world_poses(world, "arm")
    assert shape.kind == 3 and shape.radius == 0.04 and shape.half_length == 0.2  # cylinder
    np.testing.assert_allclose(p, arm_p + arm_R @ [0.05, 0.0, -0.3], atol=1e-12)
    np.testing.assert_allclose(R, arm_R @ rx(0.3), atol=1e-12)
    assert rgba == (0.0, 1.0, 0.0, 1.0)
    # a link without collision geometry: its body frame is its inertial frame, yet its visual
    # stays where the link frame puts it; the material is the robot-level "red"
    [(shape, p, R, rgba)] = visual_world_poses(world, "bare")
    np.testing.assert_allclose(p, bare_p + bare_R @ [0.0, 0.1, 0.0], atol=1e-12)
    np.testing.assert_allclose(R, bare_R, atol=1e-12)
    assert rgba == (1.0, 0.0, 0.0, 1.0)


def test_urdf_visuals_have_no_mass_and_no_collision(robot, tmp_path):
    with_visuals = quiet(load_scene, robot)
    plain = tmp_path / "plain.urdf"
    text = ROBOT
    while "<visual>" in text:
        start = text.index("<visual>")
        text = text[:start] + text[text.index("</visual>", start) + len("</visual>"):]
    plain.write_text(text, encoding="utf-8")
    without = quiet(load_scene, plain)
    for name in ("body_mass", "body_inertia", "body_pos", "body_quat"):
        np.testing.assert_array_equal(getattr(with_visuals, name), getattr(without, name))
    assert [type(s).__name__ for s in with_visuals.body_shapes] == \
        [type(s).__name__ for s in without.body_shapes]


def test_a_missing_visual_mesh_is_named_in_the_warning_not_an_error(robot):
    with pytest.warns(UrdfWarning, match='visual meshes not found.*"gone.obj"'):
        world = load_scene(robot)
    assert len(world.body_visuals[world.body_names.index("bare")]) == 1


def test_r2d2_keeps_every_visual_of_the_file():
    path = FIXTURES / "urdf" / "r2d2" / "r2d2.urdf"
    count = len(etree.parse(str(path)).getroot().findall("link/visual"))
    spec = quiet(read_scene, path)
    assert count == 16 and sum(len(b.visuals) for b in spec.bodies) == count
    colours = {tuple(v.rgba) for b in spec.bodies for v in b.visuals if v.rgba is not None}
    assert {(0.0, 0.0, 0.8, 1.0), (1.0, 1.0, 1.0, 1.0), (0.5, 0.5, 0.5, 1.0)} <= colours


def test_urdf_visuals_survive_convert(robot, tmp_path):
    spec = quiet(read_scene, robot)
    out = tmp_path / "out" / "vis.toml"
    out.parent.mkdir()
    out.write_text(scene_toml(spec, base=out.parent), encoding="utf-8")
    back = read_scene(out)
    assert [b.visuals for b in back.bodies] == [b.visuals for b in spec.bodies]
    assert sum(len(b.visuals) for b in back.bodies) == 2


def test_mesh_visual_file_is_written_relative_and_reads_back(tmp_path):
    import trimesh

    trimesh.creation.icosphere(1, radius=0.1).export(tmp_path / "ball.obj")
    scene = tmp_path / "s.toml"
    scene.write_text('bodies = [{ name = "b", density = 1.0, shape = { type = "box", '
                     'half_extents = [0.1, 0.1, 0.1] }, visuals = [{ shape = { type = "mesh", '
                     'file = "ball.obj", scale = [1.0, 2.0, 1.0] }, pos = [0.0, 0.0, 0.3] }] }]\n')
    spec = read_scene(scene)
    text = scene_toml(spec, base=tmp_path)
    assert 'file = "ball.obj"' in text
    (tmp_path / "back.toml").write_text(text)
    back = read_scene(tmp_path / "back.toml")
    assert back.bodies[0].visuals == spec.bodies[0].visuals
    world = build_world(back)
    [(shape, p, R, rgba)] = world.body_visuals[1]
    assert type(shape).__name__ == "Mesh" and rgba is None
    np.testing.assert_allclose(p, [0.0, 0.0, 0.3])


def test_a_flat_visual_mesh_is_drawn_and_a_flat_collision_mesh_is_refused(tmp_path):
    """PyBullet's cloth_z_up: a flat sheet drawn over a box. Its own triangles are drawn;
    as a collision shape a sheet has no volume and is refused, naming the field."""
    (tmp_path / "sheet.obj").write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                        "f 1 2 3\nf 1 3 4\n")
    scene = tmp_path / "s.toml"
    scene.write_text('bodies = [{ name = "b", density = 1.0, shape = { type = "box", '
                     'half_extents = [0.5, 0.5, 0.1] }, visuals = [{ shape = { type = "mesh", '
                     'file = "sheet.obj" } }] }]\n')
    world = build_world(read_scene(scene))
    [(sheet, _, _, _)] = world.body_visuals[1]
    vertices, faces = sheet.surface()
    assert len(faces) == 2 and np.ptp(vertices[:, 2]) == 0.0     # drawn as it is: flat
    table = DrawTable(world.body_shapes, world.body_visuals)
    assert len(table.instances(world.body_pos, world.body_quat)) > 0
    flat = tmp_path / "flat.toml"
    flat.write_text('bodies = [{ name = "b", density = 1.0, shape = { type = "mesh", '
                    'file = "sheet.obj" } }]\n')
    with pytest.raises(SceneError, match=r'field "shape.file": .*coplanar'):
        build_world(read_scene(flat))


def test_a_visual_mesh_that_is_missing_in_a_scene_file_is_an_error(tmp_path):
    scene = tmp_path / "s.toml"
    scene.write_text('bodies = [{ name = "b", density = 1.0, shape = { type = "sphere", '
                     'radius = 0.1 }, visuals = [{ shape = { type = "mesh", '
                     'file = "no.obj" } }] }]\n')
    with pytest.raises(SceneError, match=r'bodies\[0\] "b": field "visuals.0.shape.file": '
                                         r'no such file ".*no.obj"'):
        read_scene(scene)


MJCF = """<mujoco>
  <asset><material name="skin" rgba="0.8 0.6 0.4 1"/></asset>
  <worldbody>
    <body name="box" pos="0 0 1">
      <freejoint/>
      <geom type="capsule" size="0.05 0.2" group="3" rgba="0 0 1 1"/>
      <geom type="box" size="0.1 0.1 0.1" pos="0.3 0 0" contype="0" conaffinity="0"
            group="2" rgba="1 0 0 1" mass="0"/>
      <geom type="sphere" size="0.05" pos="0 0 0.3" material="skin" contype="0"
            conaffinity="0" mass="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_visual_geoms_are_drawn_where_and_as_mujoco_draws_them(tmp_path):
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text(MJCF, encoding="utf-8")
    world = quiet(load_scene, path)
    visuals = visual_world_poses(world, "box")
    # the collision capsule is in group 3 (hidden in MuJoCo's viewer): the two others
    assert [type(s).__name__ for s, *_ in visuals] == ["Box", "Sphere"]
    np.testing.assert_allclose(visuals[0][1], [0.3, 0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(visuals[1][1], [0.0, 0.0, 1.3], atol=1e-9)
    np.testing.assert_allclose(visuals[0][3], [1.0, 0.0, 0.0, 1.0], atol=1e-7)
    np.testing.assert_allclose(visuals[1][3], [0.8, 0.6, 0.4, 1.0], atol=1e-7)   # float32
    # they collide with nothing: the body's shape is the capsule alone
    assert type(world.body_shapes[world.body_names.index("box")]).__name__ == "Capsule"


def test_mjcf_humanoid_is_drawn_in_its_material_colour():
    pytest.importorskip("mujoco")
    path = FIXTURES / "mjcf" / "humanoid.xml"
    geoms = etree.parse(str(path)).getroot().xpath("//worldbody//body//geom")  # not the floor
    spec = quiet(read_scene, path)
    visuals = [v for b in spec.bodies for v in b.visuals]
    assert len(visuals) == len(geoms)
    assert {tuple(round(c, 6) for c in v.rgba) for v in visuals} == {(0.8, 0.6, 0.4, 1.0)}


def test_draw_table_draws_visuals_instead_of_the_collision_shape(robot):
    world = as_in_the_file(robot)
    table = DrawTable(world.body_shapes, world.body_visuals)
    drawn = {int(b) for b in table.body}
    arm, bare = world.body_names.index("arm"), world.body_names.index("bare")
    assert drawn == {arm, bare}
    rows = table.instances(world.body_pos, world.body_quat)
    # the arm: one cylinder (its visual), no box (its collision shape)
    assert len(rows["cylinder"]) == 1 and len(rows["box"]) == 0
    np.testing.assert_allclose(rows["cylinder"][0, 16:19], [0.0, 1.0, 0.0])


def test_screenshot_shows_the_visual_not_the_collision_shape(tmp_path):
    scene = tmp_path / "s.toml"
    scene.write_text('bodies = [{ name = "b", kind = "static", pos = [0.0, 0.0, 0.5], '
                     'shape = { type = "box", half_extents = [0.3, 0.3, 0.3] }, '
                     'visuals = [{ shape = { type = "sphere", radius = 0.3 }, '
                     'rgba = [1.0, 0.0, 0.0, 1.0] }] }]\n')
    out = tmp_path / "s.png"
    result = sharnir(str(scene), "--screenshot", str(out), "--frames", "1", "--size", "320x240")
    assert result.returncode == 0, result.stderr
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in read_png(out).reshape(-1, 3) / 255.0])
    lit = hsv[:, 1] > 0.3

    def near(hue):
        return lit & (np.abs((hsv[:, 0] - hue + 0.5) % 1.0 - 0.5) < 0.02)

    assert np.sum(near(0.0)) > 1000                                   # the red sphere
    assert np.sum(near(colorsys.rgb_to_hsv(*body_colour(1))[0])) == 0  # no box in its colour


WORLD_VISUALS = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <geom name="sign" type="box" size="0.3 0.1 0.05" pos="0.5 -0.2 0.1" euler="0 0 90"
          contype="0" conaffinity="0" group="1" rgba="1 0.5 0 1"/>
    <geom name="hidden" type="sphere" size="0.1" pos="0 1 0" contype="0" conaffinity="0"
          group="3"/>
    <geom name="clear" type="sphere" size="0.1" pos="0 -1 0" contype="0" conaffinity="0"
          rgba="1 1 1 0"/>
    <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
"""


def test_mjcf_world_visual_only_geoms_are_drawn_with_their_pose_and_colour(tmp_path):
    """The world's visual-only box (contype = conaffinity = 0, group 1) is a visual of the
    static "world.visuals" body, at the file's pos and turned 90 deg about z (euler in
    degrees), in its rgba; the group-3 and the transparent geom are not drawn (MuJoCo's
    viewer hides them), the floor stays a colliding plane."""
    pytest.importorskip("mujoco")
    path = tmp_path / "w.xml"
    path.write_text(WORLD_VISUALS, encoding="utf-8")
    world = quiet(load_scene, path)
    i = world.body_names.index("world.visuals")
    assert world.body_mass[i] == 0.0 and world.body_shapes[i] is None      # static, shapeless
    (shape, pos, rot, rgba), = visual_world_poses(world, "world.visuals")
    assert type(shape).__name__ == "Box"
    np.testing.assert_allclose(shape.half_extents, [0.3, 0.1, 0.05])
    np.testing.assert_allclose(pos, [0.5, -0.2, 0.1], atol=1e-9)
    np.testing.assert_allclose(rot, rz(math.pi / 2), atol=1e-9)
    np.testing.assert_allclose(rgba, [1.0, 0.5, 0.0, 1.0], atol=1e-7)
    assert not {"sign", "hidden", "clear"} & set(world.body_names)   # no collision bodies
    floor = world.body_names.index("floor")
    assert type(world.body_shapes[floor]).__name__ == "Plane"
    table = DrawTable(world.body_shapes, world.body_visuals)
    rows = table.instances(world.body_pos, world.body_quat)
    assert i in {int(b) for b in table.body}
    np.testing.assert_allclose(rows["box"][table.body[table.groups["box"]] == i][0, 16:19],
                               [1.0, 0.5, 0.0])


def test_mjcf_world_visuals_survive_convert(tmp_path):
    """The shapeless static body that carries them writes and reads back as it was."""
    pytest.importorskip("mujoco")
    path = tmp_path / "w.xml"
    path.write_text(WORLD_VISUALS, encoding="utf-8")
    spec = quiet(read_scene, path)
    out = tmp_path / "w.toml"
    out.write_text(scene_toml(spec, base=tmp_path), encoding="utf-8")
    back = read_scene(out)
    carrier = by_body(back, "world.visuals")
    assert carrier.shape is None and carrier.kind == "static"
    assert carrier.visuals == by_body(spec, "world.visuals").visuals and len(carrier.visuals) == 1


def by_body(spec, name):
    return next(b for b in spec.bodies if b.name == name)
