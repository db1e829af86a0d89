"""Files a scene names are read only from the scene's folder and the declared asset roots
(scenes/asset_roots.py, issue 13): a `..` path, an absolute path, a symbolic link pointing out
and a `package://` URI outside them are each one SceneError naming the file, the entry and the
field; inside them everything loads, the shipped scenes and the fixtures included."""
import os
import warnings
from pathlib import Path

import pytest
from test_cli import sharnir
from test_scene_hostile import one_line_error

from sharnir.scenes import SceneError, read_scene, shipped_scenes
from sharnir.scenes.urdf import read_urdf

FIXTURES = Path(__file__).parent / "fixtures"
# a tetrahedron, as OBJ (trimesh reads it; its hull has volume 1/6 m^3)
TET = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
ROCK = 'bodies = [{{ name = "rock", mass = 1.0, shape = {{ type = "hull", file = "{file}" }} }}]\n'


@pytest.fixture(autouse=True)
def no_declared_roots(monkeypatch):
    """Only what a test declares: no roots from the environment."""
    monkeypatch.delenv("SHARNIR_ASSET_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)


@pytest.fixture
def layout(tmp_path):
    """tmp/scene/ (the scene's folder) and tmp/outside/rock.obj (a mesh outside it)."""
    (tmp_path / "scene").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "rock.obj").write_text(TET)
    return tmp_path / "scene", tmp_path / "outside"


def scene_with(folder, file, name="s.toml"):
    path = folder / name
    path.write_text(ROCK.format(file=file))
    return path


# ---- hull files of a TOML scene -------------------------------------------------------------

@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_a_hull_file_outside_the_scene_folder_is_refused(layout, how):
    scene, outside = layout
    if how == "dotdot":
        written = "../outside/rock.obj"
    elif how == "absolute":
        written = str(outside / "rock.obj")
    else:                                   # a name inside the folder, the file outside
        os.symlink(outside / "rock.obj", scene / "rock.obj")
        written = "rock.obj"
    path = scene_with(scene, written)
    message = one_line_error(path, build=False)
    assert 'bodies[0] "rock"' in message and 'field "shape.file"' in message
    assert "outside the allowed folders" in message and "/scene" in message
    assert "--asset-root" in message


def test_a_compound_part_outside_names_the_part(layout):
    scene, _ = layout
    path = scene / "s.toml"
    path.write_text('bodies = [{ name = "c", mass = 1.0, shape = { type = "compound", parts = ['
                    '{ shape = { type = "sphere", radius = 0.1 } }, '
                    '{ shape = { type = "hull", file = "../outside/rock.obj" } }] } }]\n')
    assert 'field "shape.parts.1.shape.file"' in one_line_error(path, build=False)


def test_a_declared_asset_root_lets_the_file_in(layout, monkeypatch):
    scene, outside = layout
    path = scene_with(scene, "../outside/rock.obj")
    spec = read_scene(path, asset_roots=[outside])
    assert Path(spec.bodies[0].shape.file).resolve() == outside / "rock.obj"
    monkeypatch.setenv("SHARNIR_ASSET_PATH", f"/nonexistent{os.pathsep}{outside}")
    read_scene(path)


def test_files_inside_the_folder_and_links_within_it_load(layout):
    scene, _ = layout
    (scene / "meshes").mkdir()
    (scene / "meshes" / "rock.obj").write_text(TET)
    os.symlink(scene / "meshes" / "rock.obj", scene / "link.obj")
    read_scene(scene_with(scene, "meshes/./rock.obj"))
    read_scene(scene_with(scene, "link.obj", "t.toml"))
    read_scene(scene_with(scene, str(scene / "meshes" / "rock.obj"), "u.toml"))


def test_a_scene_opened_through_a_link_may_read_beside_its_real_file(layout):
    scene, outside = layout
    # paths are relative to the folder the scene is named in (scene/), as the OS resolves
    # them; the real file's folder (outside/) is the user's too
    real = scene_with(outside, "../outside/rock.obj")
    os.symlink(real, scene / "linked.toml")
    read_scene(scene / "linked.toml")


def test_a_root_that_is_a_link_pointing_out_holds_only_its_target(layout, tmp_path):
    scene, outside = layout
    os.symlink(outside, scene / "assets")             # a folder link inside, pointing out
    path = scene_with(scene, "assets/rock.obj")
    assert "outside the allowed folders" in one_line_error(path, build=False)
    read_scene(path, asset_roots=[scene / "assets"])  # declared: its target is allowed


# ---- includes --------------------------------------------------------------------------------

def test_an_include_outside_the_folder_is_refused(layout):
    scene, outside = layout
    scene_with(outside, "rock.obj", "rock.toml")
    path = scene / "s.toml"
    path.write_text('include = [{ file = "../outside/rock.toml" }]\n')
    message = one_line_error(path, build=False)
    assert 'include[0]: field "file"' in message and "outside the allowed folders" in message
    read_scene(path, asset_roots=[outside])


def test_an_included_file_cannot_reach_out_from_inside(layout):
    scene, _ = layout
    (scene / "parts").mkdir()
    scene_with(scene / "parts", "../../outside/rock.obj", "rock.toml")
    path = scene / "s.toml"
    path.write_text('include = [{ file = "parts/rock.toml" }]\n')
    with pytest.raises(SceneError) as info:       # the error names the file with the entry
        read_scene(path)
    message = str(info.value)
    assert message.startswith(str(scene / "parts" / "rock.toml")) and "\n" not in message
    assert 'field "shape.file"' in message and "outside the allowed folders" in message


def test_an_include_cannot_declare_package_roots_outside(layout):
    scene, outside = layout
    (scene / "arm.urdf").write_text('<robot name="a"><link name="l"/></robot>')
    path = scene / "s.toml"
    path.write_text('include = [{ file = "arm.urdf", urdf = { package_roots = ["../outside"] } '
                    '}]\n')
    message = one_line_error(path, build=False)
    assert 'field "urdf.package_roots.0"' in message and "outside the allowed folders" in message
    read_scene(path, asset_roots=[outside])


# ---- URDF meshes -----------------------------------------------------------------------------

def arm_urdf(folder, filename, name="arm.urdf"):
    path = folder / name
    path.write_text(f'<robot name="r"><link name="arm"><inertial><mass value="1"/><inertia '
                    f'ixx="0.01" iyy="0.01" izz="0.01"/></inertial><collision><geometry><mesh '
                    f'filename="{filename}"/></geometry></collision></link></robot>')
    return path


def mesh_of(path, **options):
    raw = read_urdf(path, **options)
    return Path(raw["bodies"][0]["shape"]["parts"][0]["shape"]["file"])


@pytest.mark.parametrize("how", ["dotdot", "file_uri", "symlink"])
def test_a_urdf_mesh_outside_is_refused(layout, how):
    scene, outside = layout
    if how == "symlink":
        os.symlink(outside / "rock.obj", scene / "rock.obj")
    filename = {"dotdot": "../outside/rock.obj", "file_uri": f"file://{outside}/rock.obj",
                "symlink": "rock.obj"}[how]
    path = arm_urdf(scene, filename)
    with pytest.raises(SceneError) as info:
        read_urdf(path)
    message = str(info.value)
    assert str(path) in message and "<mesh filename=" in message and "\n" not in message
    assert "outside the allowed folders" in message
    assert mesh_of(path, package_roots=[outside]).resolve() == outside / "rock.obj"


def test_a_package_without_package_xml_outside_is_refused(tmp_path):
    # PyBullet's fallback finds tmp/robots/meshes for package://meshes/...; it is beside the
    # URDF's folder, not in it, and no package.xml declares it
    (tmp_path / "robots" / "meshes").mkdir(parents=True)
    (tmp_path / "robots" / "meshes" / "rock.obj").write_text(TET)
    (tmp_path / "robots" / "arm").mkdir()
    path = arm_urdf(tmp_path / "robots" / "arm", "package://meshes/rock.obj")
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_urdf(path)
    # a ROS package (package.xml) is declared by its author: allowed as found
    (tmp_path / "robots" / "meshes" / "package.xml").write_text("<package/>")
    assert mesh_of(path) == tmp_path / "robots" / "meshes" / "rock.obj"


def test_a_package_uri_cannot_climb_out_of_its_package(tmp_path):
    pkg = tmp_path / "ws" / "my_robot"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package/>")
    (tmp_path / "secret.obj").write_text(TET)
    path = arm_urdf(pkg / "urdf", "package://my_robot/../../secret.obj")
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_urdf(path)


def test_a_package_through_ros_package_path_is_a_declared_root(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "my_robot" / "meshes").mkdir(parents=True)
    (src / "my_robot" / "package.xml").write_text("<package/>")
    (src / "my_robot" / "meshes" / "rock.obj").write_text(TET)
    (tmp_path / "elsewhere").mkdir()
    path = arm_urdf(tmp_path / "elsewhere", "package://my_robot/meshes/rock.obj")
    with pytest.raises(SceneError, match="no such mesh file"):
        read_urdf(path, strict=True)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(src))
    assert mesh_of(path) == src / "my_robot" / "meshes" / "rock.obj"


def test_a_urdf_in_a_package_reads_its_sibling_folders(tmp_path):
    pkg = tmp_path / "my_robot"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "package.xml").write_text("<package/>")
    (pkg / "meshes" / "rock.obj").write_text(TET)
    assert mesh_of(arm_urdf(pkg / "urdf", "../meshes/rock.obj")) == pkg / "meshes" / "rock.obj"


# ---- MJCF ------------------------------------------------------------------------------------

MJCF = """<mujoco>{compiler}<asset>{asset}</asset><worldbody><body pos="0 0 1"><freejoint/>
<geom type="{geom}" {geom_attr} size="0.1"/></body></worldbody>{tail}</mujoco>"""


def mjcf(folder, asset="", geom="sphere", geom_attr="", compiler="", tail="", name="m.xml"):
    path = folder / name
    path.write_text(MJCF.format(asset=asset, geom=geom, geom_attr=geom_attr, compiler=compiler,
                                tail=tail))
    return path


@pytest.mark.parametrize("kind", ["mesh", "meshdir", "include", "nested", "texture", "hfield"])
def test_an_mjcf_file_outside_is_refused_before_mujoco_reads_it(layout, kind):
    pytest.importorskip("mujoco")
    scene, outside = layout
    (outside / "part.xml").write_text("<mujoco/>")
    if kind == "mesh":
        path = mjcf(scene, '<mesh name="r" file="../outside/rock.obj"/>', "mesh", 'mesh="r"')
    elif kind == "meshdir":
        path = mjcf(scene, '<mesh name="r" file="rock.obj"/>', "mesh", 'mesh="r"',
                    f'<compiler meshdir="{outside}"/>')
    elif kind == "include":
        path = mjcf(scene, tail='<include file="../outside/part.xml"/>')
    elif kind == "nested":                  # an included file inside, naming a mesh outside
        (scene / "inner.xml").write_text('<mujoco><asset><mesh name="r" '
                                         'file="../outside/rock.obj"/></asset></mujoco>')
        path = mjcf(scene, tail='<include file="inner.xml"/>')
    elif kind == "texture":
        path = mjcf(scene, '<texture name="t" type="cube" fileright="/etc/hostname"/>')
    else:
        path = mjcf(scene, '<hfield name="h" file="../outside/h.png"/>')
    message = one_line_error(path, build=False)
    assert "outside the allowed folders" in message and "line " in message


def test_an_mjcf_mesh_inside_its_folder_compiles(layout):
    pytest.importorskip("mujoco")
    scene, outside = layout
    (scene / "meshes").mkdir()
    (scene / "meshes" / "rock.obj").write_text(TET)
    path = mjcf(scene, '<mesh name="r" file="rock.obj"/>', "mesh", 'mesh="r"',
                '<compiler meshdir="meshes"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = read_scene(path)
    assert spec.bodies[0].shape.type in ("hull", "compound")
    # the same mesh outside, allowed by a declared root
    out = mjcf(scene, '<mesh name="r" file="../outside/rock.obj"/>', "mesh", 'mesh="r"',
               name="n.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_scene(out, asset_roots=[outside])


# ---- what ships still loads ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(shipped_scenes()))
def test_every_shipped_scene_reads(name):
    read_scene(name)


@pytest.mark.parametrize("path", ["urdf/kuka_iiwa/model.urdf", "urdf/r2d2/r2d2.urdf",
                                  "mjcf/humanoid.xml"])
def test_the_robot_fixtures_read(path):
    if path.endswith(".xml"):
        pytest.importorskip("mujoco")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_scene(FIXTURES / path)


# ---- the command line ------------------------------------------------------------------------

def test_cli_asset_root_lets_a_file_in_and_its_absence_is_one_error(layout, tmp_path):
    scene, outside = layout
    path = scene_with(scene, "../outside/rock.obj")
    refused = sharnir("convert", path, tmp_path / "out.toml", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "outside the allowed folders" in refused.stderr
    assert 'field "shape.file"' in refused.stderr
    done = sharnir("convert", path, tmp_path / "out.toml", "--asset-root", outside,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_an_mjcf_file_in_a_package_reads_its_sibling_meshes(tmp_path):
    """A robot package keeps mjcf/robot.xml beside meshes/ (meshdir="../meshes"), as
    Unitree's h1_description does: the package (its package.xml, or by convention the folder
    above an mjcf/ folder) is an allowed folder."""
    pkg = tmp_path / "my_robot"
    (pkg / "scenes").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "rock.obj").write_text(TET)
    path = mjcf(pkg / "scenes", asset='<mesh name="r" file="rock.obj"/>', geom="mesh",
                geom_attr='mesh="r"', compiler='<compiler meshdir="../meshes"/>')
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_scene(path)                          # no package.xml: not a package
    (pkg / "mjcf").mkdir()
    conventional = pkg / "mjcf" / "m.xml"
    conventional.write_text(path.read_text())
    (pkg / "package.xml").write_text("<package/>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [b.name for b in read_scene(path).bodies]
        (pkg / "package.xml").unlink()
        assert [b.name for b in read_scene(conventional).bodies]


def test_a_robot_file_in_a_robot_folder_reads_its_package_without_package_xml(tmp_path):
    """Unitree's a2_description/urdf/a2.urdf names ../meshes and has no package.xml: the
    folder above a urdf/ (mjcf/, xml/...) folder is the robot's package by convention, for
    the robot file the user opened; an include cannot use it, nor a folder of another name."""
    pkg = tmp_path / "a2_description"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "rock.obj").write_text(TET)
    path = arm_urdf(pkg / "urdf", "../meshes/rock.obj")
    spec = read_scene(path)
    assert Path(spec.bodies[1].shape.parts[0].shape.file) == pkg / "meshes" / "rock.obj"
    (pkg / "robot").mkdir()
    other = arm_urdf(pkg / "robot", "../meshes/rock.obj")   # (not a robot folder's name)
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_scene(other)
    scene = pkg / "urdf" / "scene.toml"   # a TOML scene there gets no such widening
    scene.write_text('bodies = [{ name = "rock", shape = { type = "hull", file = '
                     '"../meshes/rock.obj" }, mass = 1.0 }]\n')
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_scene(scene)


def test_a_package_folder_that_holds_the_urdf_is_its_package_without_package_xml(tmp_path):
    """iCub's models: icub-models/iCub/robots/iCubGenova09/model.urdf names
    package://iCub/meshes/..., and iCub/ has no package.xml: the folder of the package's
    name that the URDF lies in is that package, as MuJoCo (packages resolved) and PyBullet
    open it; a folder of that name beside it is still not."""
    pkg = tmp_path / "icub-models" / "iCub"
    (pkg / "robots" / "iCubGenova09").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "rock.obj").write_text(TET)
    path = arm_urdf(pkg / "robots" / "iCubGenova09", "package://iCub/meshes/rock.obj")
    assert mesh_of(path) == pkg / "meshes" / "rock.obj"
    beside = tmp_path / "other" / "arm"   # (not a robot folder's name: asset_roots.py)
    beside.mkdir(parents=True)
    (tmp_path / "other" / "iCub" / "meshes").mkdir(parents=True)
    (tmp_path / "other" / "iCub" / "meshes" / "rock.obj").write_text(TET)
    with pytest.raises(SceneError, match="outside the allowed folders"):
        read_urdf(arm_urdf(beside, "package://iCub/meshes/rock.obj"))
