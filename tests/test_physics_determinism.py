"""A determinism hash of shipped scenes, pinned (as Box2D pins one): a refactor of the engine
(shape kinds, the contact modules, the solver's layout) must leave every bit of these runs as
it was. A change of the physics that is meant changes the hashes: rewrite them with

    OPENBLAS_CORETYPE=Haswell python tests/test_physics_determinism.py --update

and say so in the commit (the variable: the BLAS kernels conftest.py gives the tests, which
run as a script this module would choose only after numpy has loaded). numba compiles for a
CPU level (x86-64-v3, else generic: physics/cache.py) unless NUMBA_CPU_NAME names another
(LLVM may vectorise differently per CPU model), so the pins are kept per CPU name
(tests/determinism_pins.json); on a CPU without pins the test runs each scene twice and
checks that the two runs agree bit for bit, and says that nothing is pinned for it.

The kernels are compiled without fastmath's "contract" (a * b + c fused into one FMA): with
it, a kernel compiled in the running process (whose callees LLVM may inline, and fuse across)
and the same kernel loaded from numba's cache gave different last bits, so a cold start and
a warm one ran the same scene differently. `test_a_fresh_compile_runs_as_the_cached_kernels`
keeps that fixed.
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import BLAS_KERNELS, blas_kernels

from sharnir.scenes import load_scene

PINS = Path(__file__).with_name("determinism_pins.json")
# scene: steps (dt 1/240 unless the scene says otherwise), each run without its behaviour hook
SCENES = {"door": 240, "chain": 240, "joints": 240, "biped": 240, "pyramid": 120,
          "granular_pile": 120, "spinning_top": 240, "shapes": 120}
STATE = ("body_pos", "body_quat", "body_vel", "body_angvel", "body_angmom", "joint_coord",
         "joint_vel", "joint_impulse")


def cpu():
    """The CPU numba compiles for (physics/cache.py), unless NUMBA_CPU_NAME says."""
    from numba.core.registry import cpu_target
    return cpu_target.target_context.codegen()._get_host_cpu_name()


def run_hash(name, threads=0):
    """The hash of a scene's run on `threads` threads (0: the World's own choice, one or all:
    physics/threads.py)."""
    world = load_scene(name)
    world.set_hook(None)
    world.configure(threads=threads)
    world.run(SCENES[name])
    digest = hashlib.sha256()
    for field in STATE:
        digest.update(np.ascontiguousarray(getattr(world, field), dtype=np.float64).tobytes())
    return digest.hexdigest()[:32]


def pins():
    return json.loads(PINS.read_text()) if PINS.exists() else {}


def test_the_pins_are_checked_with_the_blas_kernels_they_were_taken_with():
    """numpy's OpenBLAS rounds by CPU model; conftest chooses its kernels before numpy loads
    (a plugin that imported numpy first would undo that: the pins would then fail on some
    machines only)."""
    if os.environ.get("OPENBLAS_CORETYPE") != BLAS_KERNELS:
        pytest.skip("no AVX2 and FMA, or the user chose the BLAS kernels")
    assert blas_kernels() in (None, BLAS_KERNELS)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_shipped_scene_runs_to_its_pinned_hash(name):
    pinned = pins().get(cpu(), {}).get(name)
    got = run_hash(name)
    if pinned is None:
        assert run_hash(name) == got          # at least: the same run twice, bit for bit
        pytest.skip(f"no pinned hash for CPU {cpu()!r} (tests/determinism_pins.json)")
    assert got == pinned, (f"{name}: the run changed (hash {got}, pinned {pinned}); if the "
                           "physics was meant to change, rewrite the pins (module docstring)")


def test_a_fresh_compile_runs_as_the_cached_kernels(tmp_path):
    """The pyramid in a new process that compiles every kernel afresh (an empty cache, the
    shipped kernels left out) ends bit for bit where this process's (cached or not) does."""
    from sharnir.physics import cache
    here = run_hash("pyramid")
    folder = tmp_path / "cache" / cache.cache_dir().name
    folder.mkdir(parents=True)
    (folder / ".shipped").touch()   # (as if unpacked: nothing is)
    env = dict(os.environ, SHARNIR_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                      env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", "from test_physics_determinism import "
                           "run_hash; print(run_hash('pyramid'))"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == here


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_physics_determinism.py --update")
    table = pins()
    table[cpu()] = {name: run_hash(name) for name in sorted(SCENES)}
    PINS.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n")
    print(f"pinned {len(SCENES)} scenes for CPU {cpu()!r} in {PINS}")
