"""The kernels compile once per variant (with or without contacts), in a child process, with
progress; they land in Sharnir's own cache folder and nowhere else."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from sharnir.physics.warmup import needed_kernels, stand_in_world, step_signature, variant
from sharnir.scenes import load_scene, shipped_scenes


@pytest.mark.parametrize("scene", sorted(shipped_scenes()))
def test_every_shipped_scene_steps_the_kernel_its_stand_in_compiles(scene):
    """The child compiles a tiny stand-in world; that only helps if every scene's step has
    exactly the stand-in's argument types."""
    world = load_scene(scene)
    sig = step_signature(world)
    assert sig == step_signature(stand_in_world(*variant(world)))


@pytest.mark.parametrize("scene", ["biped", "door"])
def test_the_tree_setting_steps_the_stand_in_of_the_tree_variant(scene):
    """solver.articulation = "tree" is its own variant (the trees' block compiled in); a
    world without a tree stays in the variant without it whatever the setting."""
    world = load_scene(scene, ["solver.articulation=tree"])
    contacts, trees = variant(world)
    assert trees == (world._trees.comp_root.shape[0] > 0)
    assert step_signature(world) == step_signature(stand_in_world(contacts, trees))
    world.configure(articulation="sweep")
    assert variant(world) == (contacts, False)


def test_the_sweep_variants_compile_without_the_trees_block():
    """The trees' block (physics/articulation.py) is compiled only for worlds that use it:
    the sweep, every scene's default, leaves it out."""
    for contacts in (False, True):
        without = {d.py_func.__module__ for d in needed_kernels(contacts, False)}
        with_ = {d.py_func.__module__ for d in needed_kernels(contacts, True)}
        assert "sharnir.physics.articulation" in with_
        assert "sharnir.physics.articulation" not in without


def test_a_world_where_nothing_can_touch_compiles_without_the_contact_stages():
    door = load_scene("door")
    step_signature(door)
    assert door._contacts is None
    without = {d.py_func.__qualname__ for d in needed_kernels(False)}
    with_ = {d.py_func.__qualname__ for d in needed_kernels(True)}
    assert without < with_
    assert "detect_contacts" in with_ and "detect_contacts" not in without
    # none of the contact stages' kernels: they are over half of the variant with contacts
    contact_only = with_ - without
    assert not any(name.startswith(("detect", "solve_contact", "prepare_contacts"))
                   for name in without)
    assert len(contact_only) > 0.5 * len(with_)


def _no_shipped_kernels(cache_base):
    """An empty cache folder marked as already holding the shipped kernels: every kernel then
    compiles, as after an edit to the physics."""
    from sharnir.physics import cache
    folder = cache_base / cache.cache_dir().name
    folder.mkdir(parents=True)
    (folder / ".shipped").touch()


# the start of a child's code: `compiled` lists every Sharnir kernel numba compiles there
_RECORD_COMPILES = """
        import json
        from numba.core import event

        compiled = []

        class Listener(event.Listener):
            def on_start(self, ev):
                pass

            def on_end(self, ev):
                f = ev.data["dispatcher"].py_func
                if f.__module__.startswith("sharnir."):
                    compiled.append(f.__module__ + "." + f.__qualname__)

        event.register("numba:compile", Listener())
"""


def _child(code, tmp_path, env_extra=None):
    env = dict(os.environ, SHARNIR_CACHE_DIR=str(tmp_path / "cache"), **(env_extra or {}))
    env.pop("NUMBA_CACHE_DIR", None)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.slow
def test_needed_kernels_are_exactly_the_kernels_numba_compiles(tmp_path):
    """On an empty cache, the kernels numba compiles for the door (no contacts) are the ones
    needed_kernels counts: the progress total is right and reaches 100 %."""
    _no_shipped_kernels(tmp_path / "cache")
    result = _child(_RECORD_COMPILES + """
        from sharnir.physics.warmup import compile_here, needed_kernels, stand_in_world

        seen = []
        compile_here(stand_in_world(False), lambda d, t, e: seen.append((d, t)))
        needed = {d.py_func.__module__ + "." + d.py_func.__qualname__
                  for d in needed_kernels(False)}
        print(json.dumps({"compiled": sorted(set(compiled)), "needed": sorted(needed),
                          "last": seen[-1]}))
    """, tmp_path)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["compiled"] == out["needed"]
    assert out["last"] == [len(out["needed"])] * 2


@pytest.mark.slow
def test_first_run_shows_compile_progress_and_the_second_loads_from_the_cache(tmp_path):
    cli = [sys.executable, "-m", "sharnir", "run", "door", "--json"]
    env = dict(os.environ, SHARNIR_CACHE_DIR=str(tmp_path / "cache"))
    _no_shipped_kernels(tmp_path / "cache")
    first = subprocess.run(cli, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=1200)
    assert first.returncode == 0, first.stderr
    assert "compiling physics kernels" in first.stderr
    total = len(needed_kernels(False))
    assert f"compiling: {total}/{total} kernels" in first.stderr
    second = subprocess.run(cli, cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    assert json.loads(first.stdout.splitlines()[-1])["joints"] == \
        json.loads(second.stdout.splitlines()[-1])["joints"]


def test_importing_sharnir_leaves_other_kernels_where_numba_puts_them(tmp_path):
    """A user's own cached kernel goes to its module's __pycache__, not to Sharnir's folder,
    and numba's cache settings are untouched."""
    (tmp_path / "userkernel.py").write_text(textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return 2 * x
    """))
    result = _child("""
        import json, os
        from numba.core import config
        before = (os.environ.get("NUMBA_CACHE_DIR"), config.CACHE_DIR)
        import sharnir
        from sharnir.physics import cache
        import userkernel
        assert userkernel.twice(3) == 6
        print(json.dumps({"before": before,
                          "after": (os.environ.get("NUMBA_CACHE_DIR"), config.CACHE_DIR),
                          "ours": str(cache.cache_dir())}))
    """, tmp_path, {"PYTHONPATH": str(tmp_path)})
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["before"] == out["after"]
    assert list((tmp_path / "__pycache__").glob("userkernel.twice*.nbi"))
    ours = tmp_path / "cache"
    assert not [p for p in ours.rglob("*") if "userkernel" in p.name]


# ---- the shipped kernels (physics/cache.py) --------------------------------------------------

def test_the_shipped_kernels_are_built_from_these_physics_sources():
    """The repository ships the step's kernels for the physics sources as they are: after an
    edit they would be ignored and a fresh install would compile for minutes again."""
    from sharnir.physics import cache
    assert sorted(cache.SHIPPED.glob("kernels-*.tar.xz")) == [cache.shipped_archive()], (
        "the physics changed: rebuild the shipped kernels with "
        "`python -m sharnir.physics.warmup --ship`")


def test_the_kernels_are_compiled_for_a_cpu_level_not_this_machines_model():
    """What makes a cache folder portable between machines: x86-64-v3 where the machine has
    AVX2 and the rest of that level, else the architecture's generic CPU."""
    from numba.core.registry import cpu_target

    from sharnir.physics import cache
    if os.environ.get("NUMBA_CPU_NAME"):
        pytest.skip("NUMBA_CPU_NAME is set: the user's CPU choice is kept")
    assert cpu_target.target_context.codegen().magic_tuple()[1:] == (cache.portable_cpu(), "")
    assert cache.portable_cpu() in ("x86-64-v3", "generic")


@pytest.mark.slow
def test_a_fresh_install_runs_every_shipped_scene_and_robot_without_compiling(tmp_path):
    """With an empty cache folder, the shipped kernels are unpacked and every shipped scene,
    an MJCF and a URDF robot load and step without numba compiling any kernel of Sharnir's."""
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures")
    result = _child(_RECORD_COMPILES + f"""
        from sharnir.physics.warmup import compile_step
        from sharnir.scenes import load_scene, shipped_scenes

        how = {{}}
        for scene in sorted(shipped_scenes()) + [
                {os.path.join(fixtures, "mjcf", "humanoid.xml")!r},
                {os.path.join(fixtures, "urdf", "r2d2", "r2d2.urdf")!r}]:
            world = load_scene(scene)
            how[scene] = compile_step(world)
            world.step(3)
        print(json.dumps({{"compiled": compiled, "how": how}}))
    """, tmp_path)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["compiled"] == []
    assert set(out["how"].values()) == {"cache"}


def test_shipped_kernels_are_unpacked_once_beside_what_the_cache_has(tmp_path, monkeypatch):
    """A file the cache folder has already is kept (it may hold kernels compiled here); the
    others are written whole; a marker stops a second unpacking."""
    import io
    import tarfile

    from sharnir.physics import cache
    monkeypatch.setattr(cache, "SHIPPED", tmp_path / "shipped")
    cache.SHIPPED.mkdir()
    with tarfile.open(cache.shipped_archive(), "w:xz") as tar:
        for name, data in (("solver/a.nbi", b"shipped a"), ("solver/b.nbc", b"shipped b"),
                           ("../evil", b"outside")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    folder = tmp_path / "cache" / "numba-x"
    (folder / "solver").mkdir(parents=True)
    (folder / "solver" / "a.nbi").write_bytes(b"compiled here")
    cache._unpack_shipped(folder)
    assert (folder / "solver" / "a.nbi").read_bytes() == b"compiled here"
    assert (folder / "solver" / "b.nbc").read_bytes() == b"shipped b"
    assert not (tmp_path / "cache" / "evil").exists()
    assert sorted(p.name for p in folder.rglob("*")) == [".shipped", "a.nbi", "b.nbc", "solver"]
    (folder / "solver" / "b.nbc").unlink()
    cache._unpack_shipped(folder)
    assert not (folder / "solver" / "b.nbc").exists()


def test_a_damaged_shipped_archive_is_named_in_one_line_and_nothing_is_unpacked(
        tmp_path, monkeypatch, capsys):
    """The kernels then compile as they would without it."""
    from sharnir.physics import cache
    monkeypatch.setattr(cache, "SHIPPED", tmp_path / "shipped")
    cache.SHIPPED.mkdir()
    cache.shipped_archive().write_bytes(b"\xfd7zXZ\x00 not really")
    folder = tmp_path / "cache"
    folder.mkdir()
    cache.unpack_shipped(folder)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "shipped kernels" in err[0] and "compile" in err[0]
    assert list(folder.iterdir()) == []
