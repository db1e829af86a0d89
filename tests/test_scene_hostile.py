"""Hostile scene files (issue 13): each is one clear SceneError of one short line naming the
file, never another exception, a hang or a huge message."""
import bz2
import os
import threading
import warnings

import pytest

from sharnir.scenes import SceneError, load_scene, read_scene
from sharnir.scenes.urdf import UrdfWarning

SPHERE = 'bodies = [{{ name = "b", shape = {{ type = "sphere", radius = {r} }}, density = 1.0 }}]'


def one_line_error(path, sets=(), build=True):
    """The SceneError of loading `path` (reading, and building when `build`), checked to be
    one line of at most 300 characters that names the file."""
    with pytest.raises(SceneError) as info:
        (load_scene if build else read_scene)(path, sets)
    message = str(info.value)
    # at most 300 characters besides the paths it names (a temporary folder's may be long)
    bare = message.replace(str(path), "FILE").replace(str(os.path.dirname(str(path))), "DIR")
    assert "\n" not in message and len(bare) <= 300, message
    assert str(path) in message or os.path.basename(str(path)) in message, message
    return message


@pytest.mark.parametrize("text,fragment", [
    ("x = " + "[" * 1000 + "]" * 1000, "nest too deeply"),
    ("duration = " + "9" * 5000, "more digits than can be read"),
    (SPHERE.format(r="1e300"), "sphere of size 1e+300"),
    ('bodies = [{ name = "b", shape = { type = "capsule", radius = 5e-324, half_length = 0.1 }, '
     "density = 1.0 }]", "capsule of size"),
    ("duration = 1e308", "must be at most"),
    ('bodies = [{ name = "b", shape = { type = "sphere", radius = 0.1 }, mass = 1.0, pos = ['
     + ", ".join(["1.0"] * 300_000) + "] }]", "(300000 items)"),
    ('description = "' + "x" * 100_000 + '"\nduration = -1.0', "duration"),
])
def test_hostile_values_are_one_short_line(tmp_path, text, fragment):
    path = tmp_path / "hostile.toml"
    path.write_text(text + "\n")
    assert fragment in one_line_error(path)


def test_an_override_out_of_range_is_one_short_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPHERE.format(r="0.1") + "\n")
    assert "must be at most" in one_line_error(path, ["duration=1e308"])


def test_a_fifo_scene_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "scene.toml"
    os.mkfifo(fifo)
    result = {}

    def load():
        try:
            read_scene(fifo)
        except SceneError as exc:
            result["message"] = str(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(10.0)
    if reader.is_alive():   # unblock the reader before failing
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO scene blocked")
    assert "not a regular file" in result["message"]


def test_a_device_is_not_read_until_memory_runs_out():
    assert "not a regular file" in one_line_error("/dev/zero", build=False)


def test_a_compressed_mesh_is_refused_before_it_is_decompressed(tmp_path):
    (tmp_path / "bomb.stl.bz2").write_bytes(bz2.compress(b"solid x\n" + b" " * 10_000_000))
    path = tmp_path / "s.toml"
    path.write_text('bodies = [{ name = "rock", mass = 1.0, shape = { type = "hull", '
                    'file = "bomb.stl.bz2" } }]\n')
    assert "compressed mesh files are not read" in one_line_error(path)


def test_a_fifo_mesh_is_refused(tmp_path):
    os.mkfifo(tmp_path / "rock.stl")
    path = tmp_path / "s.toml"
    path.write_text('bodies = [{ name = "rock", mass = 1.0, shape = { type = "hull", '
                    'file = "rock.stl" } }]\n')
    one_line_error(path)


def test_a_blow_up_names_the_moving_body_not_the_world(tmp_path):
    """An anchor 1e300 m away: the point lock's arm r gives an effective mass ~ r^2 that
    overflows. Preparing the rows moves no body; the first stage that applies them to the
    bodies, following the geometry, is where the ball's velocity goes non-finite."""
    from sharnir.physics import SimulationError

    path = tmp_path / "far.toml"
    path.write_text('bodies = [{ name = "bob", shape = { type = "sphere", radius = 0.1 }, '
                    'mass = 1.0 }]\njoints = [{ name = "j", type = "revolute", body_a = "world", '
                    'body_b = "bob", anchor = [1e300, 0.0, 0.0] }]\n')
    world = load_scene(path)
    with pytest.raises(SimulationError) as info:
        world.run(10)
    assert "'bob'" in str(info.value) and "'world'" not in str(info.value)
    assert "in following the geometry (body 'bob')" in str(info.value)


# --- found by bench/fuzz.py ------------------------------------------------------------------

LONG_NAME = "x" * 300_000
BALL = '{{ name = "{name}", shape = {{ type = "sphere", radius = 0.1 }}, mass = 1.0 }}'


@pytest.mark.parametrize("where", ["body_a", "name"])
def test_a_long_name_in_a_message_is_quoted_short(tmp_path, where):
    """An unknown body of 300,000 characters, or a duplicate one, is quoted cut short with its
    length."""
    joint = ('{ name = "j", type = "revolute", body_a = "NAME", body_b = "b" }' if
             where == "body_a" else '{ name = "j", type = "revolute", body_a = "world", '
                                    'body_b = "b" }')
    bodies = [BALL.format(name="b")] + ([BALL.format(name=LONG_NAME)] * 2 if where == "name"
                                        else [])
    path = tmp_path / "long.toml"
    path.write_text(f"bodies = [{', '.join(bodies)}]\n"
                    f"joints = [{joint.replace('NAME', LONG_NAME)}]\n")
    assert "(300,000 characters)" in one_line_error(path)


def test_the_names_a_message_lists_are_a_few_and_a_count(tmp_path):
    bodies = ", ".join(BALL.format(name=f"ball{i}") for i in range(1000))
    path = tmp_path / "many.toml"
    path.write_text(f"bodies = [{bodies}]\n"
                    'joints = [{ name = "j", type = "revolute", body_a = "world", '
                    'body_b = "ball" }]\n')
    message = one_line_error(path)
    assert 'unknown body "ball"' in message and "ball0, ball1" in message
    assert "(1,000 in all)" in message


def test_two_long_names_and_a_listing_stay_one_short_line(tmp_path):
    """Fuzz seed 3's two long lines: a joint of a 300,000-character name naming an unknown
    body of 300,000 characters, among bodies of 30-character names. The names are cut further
    and the reason stays whole."""
    bodies = ", ".join(BALL.format(name=f"{'b' * 27}{i:03d}") for i in range(30))
    path = tmp_path / "long.toml"
    path.write_text(f"bodies = [{bodies}]\n"
                    f'joints = [{{ name = "{LONG_NAME}", type = "revolute", '
                    f'body_a = "{"q" * 300_000}", body_b = "{"b" * 27}000" }}]\n')
    message = one_line_error(path)
    assert message.count("(300,000 characters)") == 2 and "(30 in all)" in message
    assert 'unknown body "qqqqqqqqqqqqqqqq..."' in message


@pytest.mark.parametrize("field,value", [
    ("key", "k" * 300_000),                      # an unknown key
    ("type", "\\" * 300),                        # a shape type whose escapes double it
    ("file", "f" * 5000 + ".stl"),               # a hull file that does not exist
])
def test_a_long_key_type_or_file_is_one_short_line(tmp_path, field, value):
    shape = {"key": f'{{ type = "sphere", radius = 0.1, "{value}" = 1 }}',
             "type": f'{{ type = "{value}" }}'.replace("\\", "\\\\"),
             "file": f'{{ type = "hull", file = "{value}" }}'}[field]
    path = tmp_path / "s.toml"
    path.write_text(f'bodies = [{{ name = "b", mass = 1.0, shape = {shape} }}]\n')
    one_line_error(path)


@pytest.mark.parametrize("value,fragment", [
    ("9" * 5000, "more digits than can be read"),
    ("[" * 900 + "]" * 900, "nests too deeply"),
    ("x" * 300_000, "unknown key"),
])
def test_a_hostile_override_is_one_short_line(tmp_path, value, fragment):
    """--set values are read as TOML: a 5000-digit integer raised a ValueError traceback."""
    path = tmp_path / "s.toml"
    path.write_text(SPHERE.format(r="0.1") + "\n")
    key = "world.k" + value if fragment == "unknown key" else "world.dt"
    assert fragment in one_line_error(path, [f"{key}={value}"])


def test_a_load_that_breaks_the_step_is_a_simulation_error(tmp_path):
    """A 1e308 N load on an ellipsoid resting on another made the contact stages divide by
    zero: a ZeroDivisionError from the kernel instead of the blow-up's error."""
    from sharnir.physics import SimulationError

    egg = ('{{ name = "{n}", shape = {{ type = "ellipsoid", semi_axes = [0.1, 0.05, 0.03] }}, '
           'density = 1000.0, pos = [0.0, 0.0, {z}] }}')
    path = tmp_path / "eggs.toml"
    path.write_text("world = { dt = 0.01 }\n"
                    'bodies = [{ name = "ground", kind = "static", shape = { type = "plane" } }, '
                    f'{egg.format(n="egg", z=0.2)}, {egg.format(n="egg2", z=0.05)}]\n'
                    'loads = [{ body = "egg", force = [1e308, 3.3e307, -1e308] }]\n')
    world = load_scene(path)
    with pytest.raises(SimulationError) as info:
        world.run(10)
    assert "'egg'" in str(info.value) and "\n" not in str(info.value)


def test_a_urdf_joint_to_a_missing_link_lists_a_few_links(tmp_path):
    from pathlib import Path

    source = Path(__file__).parent / "fixtures" / "urdf" / "r2d2" / "r2d2.urdf"
    for mesh in source.parent.glob("*.stl"):
        (tmp_path / mesh.name).write_bytes(mesh.read_bytes())
    path = tmp_path / "r2d2.urdf"
    path.write_text(source.read_text().replace('<child link="right_base"/>',
                                               '<child link="no_such_link"/>', 1))
    message = one_line_error(path, build=False)
    assert 'no link named "no_such_link"' in message and "in all)" in message


def test_mujoco_s_message_is_one_short_line(tmp_path):
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><worldbody><body><joint name="h"/><geom size="0.1"/></body>'
                    f'</worldbody><actuator><motor joint="{"x" * 5000}"/></actuator></mujoco>')
    assert "MuJoCo cannot compile it" in one_line_error(path, build=False)


def test_the_world_names_a_long_unknown_body_short():
    from sharnir.physics import World
    from sharnir.physics.shape import Sphere

    world = World()
    for i in range(500):
        world.add_body(f"ball{i}", Sphere(0.1), mass=1.0, pos=(3.0 * i, 0.0, 0.0))
    with pytest.raises(ValueError) as info:
        world.set_body_force("y" * 100_000, (1.0, 0.0, 0.0))
    # the 500 balls and the fixed world body
    assert len(str(info.value)) < 300 and "(501 in all)" in str(info.value)


@pytest.mark.parametrize("name", ["a\\u0000b.stl", "x" * 5000 + ".stl"])
@pytest.mark.parametrize("how", ["hull", "include", "urdf mesh"])
def test_a_file_name_the_system_refuses_is_one_short_line(tmp_path, name, how):
    """A NUL in a file name raised ValueError, a name too long OSError, from os.stat and
    pathlib."""
    path = tmp_path / "s.toml"
    if how == "hull":
        path.write_text(f'bodies = [{{ name = "rock", mass = 1.0, shape = {{ type = "hull", '
                        f'file = "{name}" }} }}]\n')
    elif how == "include":
        path.write_text(f'include = [{{ file = "{name}" }}]\n')
    else:
        path = tmp_path / "r.urdf"
        path.write_text('<robot name="r"><link name="a"><collision><geometry><mesh filename="'
                        + name.replace("\\u0000", "&#0;") + '"/></geometry></collision></link>'
                        "</robot>\n")
    if "&#0;" in path.read_text():
        pytest.skip("XML cannot carry a NUL")
    if how == "include":   # (an included file's error names that file first, not the scene)
        with pytest.raises(SceneError) as info:
            load_scene(path)
        assert "\n" not in str(info.value) and len(str(info.value)) <= 300 + len(str(path))
        return
    if how == "urdf mesh":   # (a collision mesh not found is left out, as PyBullet does)
        with pytest.warns(UrdfWarning) as caught:
            load_scene(path)
        bare = str(caught[0].message).replace(str(path), "FILE")
        assert "\n" not in bare and len(bare) <= 300 and "not found" in bare
        return
    one_line_error(path)


def test_an_mjcf_naming_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    """MuJoCo's compiler opened a FIFO named as a mesh and waited forever."""
    pytest.importorskip("mujoco")
    os.mkfifo(tmp_path / "pipe.stl")
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><asset><mesh name="m" file="pipe.stl"/></asset><worldbody>'
                    '<body><joint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    result = {}

    def load():
        try:
            read_scene(path)
        except SceneError as exc:
            result["message"] = str(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(30.0)
    if reader.is_alive():   # unblock MuJoCo before failing
        with open(tmp_path / "pipe.stl", "w"):
            pass
        pytest.fail("reading an MJCF that names a FIFO blocked")
    assert "not a regular file" in result["message"] and "pipe.stl" in result["message"]


def test_a_urdf_attribute_of_600000_characters_is_quoted_short(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="a"><inertial><mass value="1"/><origin rpy="'
                    + " ".join(["x"] * 300_000) + '"/></inertial></link></robot>\n')
    assert "must be numbers" in one_line_error(path, build=False)


def test_an_mjcf_gear_whose_square_underflows_is_not_divided_by(tmp_path):
    """A motor's resistance is damping / gear^2: a gear of 5e-324 raised ZeroDivisionError."""
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><worldbody><body><joint name="h" damping="1"/><geom size="0.1"/>'
                    '</body></worldbody><actuator><motor joint="h" gear="5e-324"/></actuator>'
                    "</mujoco>")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_scene(path)
    assert any("positive gear" in str(w.message) for w in caught)


def test_a_urdf_link_merged_from_1e300_m_away_is_one_short_line(tmp_path):
    """A fixed joint 1e300 m long merges its child's mass into the parent: the inertia
    about the joint centre of mass overflowed and numpy's eigh raised LinAlgError (and
    numpy's overflow warnings went to stderr)."""
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" '
                'ixz="0" iyz="0"/></inertial>')
    path = tmp_path / "r.urdf"
    path.write_text(f'<robot name="r"><link name="a">{inertial}</link><link name="b">'
                    f'{inertial}</link><joint name="j" type="fixed"><parent link="a"/>'
                    '<child link="b"/><origin xyz="0 0 1e300"/></joint></robot>\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert "overflow" in one_line_error(path, build=False)


@pytest.mark.parametrize("name", ["/dev/null", "."])
def test_a_hull_file_that_is_a_device_or_folder_is_not_called_missing(tmp_path, name):
    path = tmp_path / "s.toml"
    path.write_text(f'bodies = [{{ name = "rock", mass = 1.0, shape = {{ type = "hull", '
                    f'file = "{name}" }} }}]\n')
    message = one_line_error(path)
    assert "not a regular file" in message or "outside the allowed folders" in message


def test_a_recording_is_never_silently_non_finite():
    """A chain link spun at 1e154 rad/s about each axis stays finite itself, but its joints'
    recorded velocity overflowed: `sharnir run` wrote NaN to the outputs and exited 0."""
    import numpy as np

    from sharnir.physics import SimulationError

    world = load_scene("chain", ["bodies.link8.angvel=[1e154, 1e154, 1e154]"])
    try:
        rec = world.run(60)
    except SimulationError as exc:   # (main's speed bound may stop it first, naming a body)
        assert "\n" not in str(exc)
    else:
        assert np.isfinite(rec.joint).all() and np.isfinite(rec.contact).all()


@pytest.mark.parametrize("name", [b"g\xed\xa0\x80", b"g&#xD800;"])
def test_an_mjcf_name_that_is_not_utf8_is_no_traceback(tmp_path, name):
    """MuJoCo compiles a name of bytes that are not UTF-8 (raw, or from a character
    reference to a surrogate); reading it back raised UnicodeDecodeError."""
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_bytes(b'<mujoco><worldbody><body><joint name="h"/><geom name="' + name +
                     b'" size="0.1"/><geom size="0.05" pos="0.2 0 0"/></body></worldbody>'
                     b"</mujoco>")
    try:
        read_scene(path)
    except SceneError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)


def test_an_mjcf_geom_of_infinite_size_is_named(tmp_path):
    """MuJoCo compiles the humanoid's torso capsule of radius inf; the body's NaN inertia
    then made numpy's eigh fail."""
    pytest.importorskip("mujoco")
    from pathlib import Path

    source = Path(__file__).parent / "fixtures" / "mjcf" / "humanoid.xml"
    torso = '<geom name="torso" fromto="0 -.07 0 0 .07 0"'
    text = source.read_text()
    at = text.index(torso) + len(torso)
    path = tmp_path / "humanoid.xml"
    path.write_text(text[:at] + ' size="inf"/>' + text[text.index("/>", at) + 2:])
    assert 'geom "torso"' in one_line_error(path, build=False)


def test_a_urdf_inertia_of_1e308_is_no_traceback(tmp_path):
    """An inertia of 1e308 turned by its origin's rpy: symmetrising the tensor as
    0.5 (T + T^T) overflowed to inf (a ValueError traceback from principal_axes)."""
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="a"><inertial><origin rpy="0.3 0.2 0.1"/>'
                    '<mass value="1"/><inertia ixx="1" iyy="1e308" izz="1" ixy="0" ixz="0" '
                    'iyz="0"/></inertial></link></robot>\n')
    try:
        read_scene(path)
    except SceneError:
        one_line_error(path, build=False)


def test_an_mjcf_gear_of_1e300_is_one_short_line(tmp_path):
    """damping / gear^2 underflowed to a resistance of 0: ZeroDivisionError in mjcf.motor."""
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><worldbody><body><joint name="h" damping="1"/><geom size="0.1"/>'
                    '</body></worldbody><actuator><motor joint="h" gear="1e300" '
                    'ctrllimited="true" ctrlrange="-1 1"/></actuator></mujoco>')
    assert 'joint "h"' in one_line_error(path, build=False)


def test_a_urdf_joint_type_of_300000_characters_is_quoted_short(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="'
                    + "x" * 300_000 + '"><parent link="a"/><child link="b"/></joint></robot>\n')
    assert "type must be one of" in one_line_error(path, build=False)


def test_a_urdf_child_link_of_600000_characters_is_quoted_short(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="a"/><link name="b"/><joint name="j" '
                    'type="fixed"><parent link="a"/><child link="' + "1 " * 300_000
                    + '"/></joint></robot>\n')
    assert "no link named so in the file" in one_line_error(path, build=False)


# ---- found by the full fuzz run of seed 2 at ef0fc14 (bench/results.md, Fuzz) ----------------

def test_a_compound_part_of_radius_1e308_is_one_short_line(tmp_path):
    """A compound's part volume r^3 overflowed (OverflowError from Sphere.volume)."""
    path = tmp_path / "s.toml"
    path.write_text('bodies = [{ name = "dumbbell", density = 1.0, shape = { type = "compound", '
                    'parts = [{ shape = { type = "box", half_extents = [0.1, 0.1, 0.1] } }, '
                    '{ shape = { type = "sphere", radius = 1e308 }, pos = [0.5, 0, 0] }] } }]\n')
    message = one_line_error(path)
    assert "compound part 1" in message and "sphere of size 1e+308" in message


def test_an_mjcf_body_at_1e308_welded_to_another_is_one_short_line(tmp_path):
    """Merging welded bodies 1e308 m apart made an infinite inertia: eigh did not converge
    (numpy's LinAlgError)."""
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><worldbody><body name="torso"><freejoint/><geom size="0.1"/>'
                    '<body name="far" pos="0 1e308 0"><geom size="0.1"/></body></body>'
                    '</worldbody></mujoco>')
    assert 'body "torso"' in one_line_error(path, build=False)


def test_an_mjcf_mesh_file_name_too_long_for_the_system_is_one_short_line(tmp_path):
    """Path.is_file raised OSError (ENAMETOOLONG) while confining the mesh paths."""
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text(f'<mujoco><asset><mesh name="m" file="{"x" * 5000}.stl"/></asset>'
                    '<worldbody><body><freejoint/><geom type="mesh" mesh="m"/></body>'
                    '</worldbody></mujoco>')
    one_line_error(path, build=False)
