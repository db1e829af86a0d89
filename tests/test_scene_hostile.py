"""Hostile scene files (issue 13): each is one clear SceneError of one short line naming the
file, never another exception, a hang or a huge message."""
import bz2
import os
import threading

import pytest

from sharnir.scenes import SceneError, load_scene, read_scene

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
    from sharnir.physics import SimulationError

    path = tmp_path / "far.toml"
    path.write_text('bodies = [{ name = "bob", shape = { type = "sphere", radius = 0.1 }, '
                    'mass = 1.0 }]\njoints = [{ name = "j", type = "revolute", body_a = "world", '
                    'body_b = "bob", anchor = [1e300, 0.0, 0.0] }]\n')
    world = load_scene(path)
    with pytest.raises(SimulationError) as info:
        world.run(10)
    assert "'bob'" in str(info.value) and "'world'" not in str(info.value)
