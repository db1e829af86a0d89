"""Checkpoints (physics/checkpoint.py, World.save_state / restore_state, `sharnir run
--state-in/--state-out`): the steps after a restore repeat the steps after the save bit for
bit, in every shipped scene; a checkpoint of another model or a file that holds none is one
error, and nothing is changed then."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from sharnir.app.snapshot import STAT_CHANNELS
from sharnir.physics import Checkpoint, CheckpointError
from sharnir.scenes import SCENE_DIR, load_scene

SCENES = sorted(p.stem for p in SCENE_DIR.glob("*.toml"))
STAT_SECONDS = STAT_CHANNELS.index("seconds")   # (state.solver_stats: the solve's wall time)
HEAVY = {"ellipsoid_drop", "ellipsoid_tube", "fdo_tube", "granular_pile",
         "pyramid"}   # (fewer steps)


def quiet_load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_scene(name)


def assert_same(a, b):
    """Every array of two checkpoints equal to the bit, but the solve's wall seconds."""
    assert a.arrays.keys() == b.arrays.keys()
    for name in a.arrays:
        x, y = a.arrays[name], b.arrays[name]
        if name == "state.solver_stats":
            x, y = np.delete(x, STAT_SECONDS), np.delete(y, STAT_SECONDS)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("scene", SCENES)
def test_the_steps_after_a_restore_repeat_those_after_the_save(scene):
    world = quiet_load(scene)
    n = 10 if scene in HEAVY else 60
    world.step(n)
    saved = world.save_state()
    world.step(n)
    first = world.save_state()
    world.restore_state(saved)
    assert_same(world.save_state(), saved)
    world.step(n)
    assert_same(world.save_state(), first)


def test_a_saved_file_continues_in_a_world_loaded_anew(tmp_path):
    world = quiet_load("biped")
    world.step(50)
    world.save_state().save(tmp_path / "biped.npz")
    world.step(50)
    expected = world.save_state()
    other = quiet_load("biped")
    other.restore_state(tmp_path / "biped.npz")
    other.step(50)
    assert_same(other.save_state(), expected)
    assert Checkpoint.load(tmp_path / "biped.npz").time == pytest.approx(50 * world.dt)


def test_a_checkpoint_of_another_model_is_refused_and_changes_nothing(tmp_path):
    door, biped = quiet_load("door"), quiet_load("biped")
    door.step(5)
    before = biped.save_state()
    with pytest.raises(CheckpointError, match="its bodies are not this world's") as info:
        biped.restore_state(door.save_state())
    assert "\n" not in str(info.value) and "'door'" in str(info.value)
    assert_same(biped.save_state(), before)


@pytest.mark.parametrize("content", [b"", b"not a zip", None])
def test_a_file_that_holds_no_state_is_one_error_naming_it(tmp_path, content):
    path = tmp_path / "state.npz"
    if content is None:
        np.savez(path, x=np.zeros(3))   # an .npz, not a state
    else:
        path.write_bytes(content)
    with pytest.raises(CheckpointError) as info:
        quiet_load("door").restore_state(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_run_continues_from_a_saved_state_as_one_run(tmp_path):
    def run(*args):
        done = subprocess.run([sys.executable, "-m", "sharnir", "run", "door", "--json", *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])
    run("--duration", "0.4", "--state-out", "half.npz")
    second = run("--duration", "0.4", "--state-in", "half.npz")
    whole = run("--duration", "0.8")
    assert second["sim_time"] == whole["sim_time"]
    assert second["joints"] == whole["joints"]   # (every number to the bit)
    refused = subprocess.run([sys.executable, "-m", "sharnir", "run", "biped", "--duration",
                              "0.1", "--state-in", "half.npz"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300)
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0
    assert "cannot restore the state saved at t = 0.4 s" in refused.stderr
