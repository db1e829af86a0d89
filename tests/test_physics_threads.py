"""The step on several threads (issue 31; physics/partition.py, physics/threads.py): the same
bits for any number of threads, units of a phase that share no moving body, and a sweep's
forked workers that stay safe after their parent used threads."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_physics_determinism import SCENES, cpu, pins, run_hash

from sharnir.physics import threads
from sharnir.physics.contact import NARROW_PARALLEL_MIN
from sharnir.physics.model import STAT_ITERATIONS
from sharnir.physics.partition import (
    LEFTOVER,
    PARTITION_MIN,
    PHASE_UNITS,
    UNITS,
    make_partition,
    partition_manifolds,
)
from sharnir.scenes import load_scene

# the pinned scenes with enough manifolds to be split into units (the others run as before)
SPLIT = ("pyramid", "granular_pile")
TOLERANCE = 1e-3   # N s: the pyramid's first 120 steps stop at it after 1-20 of their 20
                   # sweeps, 12 on average


def _hash_with(name, n):
    return run_hash(name, threads=n)


@pytest.mark.parametrize("name", SPLIT)
def test_a_split_scene_runs_to_its_pinned_hash_on_one_and_on_two_threads(name):
    one = _hash_with(name, 1)
    two = _hash_with(name, 2)
    assert one == two
    pinned = pins().get(cpu(), {}).get(name)
    if pinned is not None:
        assert one == pinned


def test_the_narrow_phase_on_threads_finds_the_same_points_to_the_bit():
    """The 1000 ellipsoids piled up (over NARROW_PARALLEL_MIN candidate pairs: the narrow
    phase runs on the threads, physics/contact.py) step to the same bits on one and two."""
    runs = []
    for n in (1, 2):
        world = load_scene("ellipsoid_drop")
        world.configure(threads=n)
        world.run(700)
        assert world._contacts.scratch.stats[0] >= NARROW_PARALLEL_MIN
        runs.append(b"".join(np.ascontiguousarray(getattr(world, f)).tobytes()
                             for f in ("body_pos", "body_quat", "body_vel", "body_angvel")))
    assert runs[0] == runs[1]


def test_four_threads_give_the_pinned_bits_too():
    """A process started with four threads (NUMBA_NUM_THREADS=4, more than this machine may
    have: the units then share the cores) runs the split scenes to the same bits."""
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                      env.get("PYTHONPATH")]))
    code = textwrap.dedent(f"""
        from sharnir.physics import threads
        from test_physics_determinism import run_hash
        assert threads.count(0) == 4
        print(*[run_hash(name, threads=4) for name in {SPLIT!r}])
    """)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-len(SPLIT):] == [_hash_with(name, 1) for name in SPLIT]


def _run_bits(world, steps):
    rec = world.run(steps)
    bits = b"".join(np.ascontiguousarray(getattr(world, f)).tobytes()
                    for f in ("body_pos", "body_quat", "body_vel", "body_angvel"))
    return rec.stats[:, STAT_ITERATIONS].tolist(), bits


def test_sweeps_taken_unit_by_unit_stop_at_the_tolerance_where_one_thread_does():
    """Contacts alone on two threads: a step's sweeps run in one parallel region, the threads
    taking the units one at a time (contact_solver.solve_contacts_claimed), and the thread
    that finishes a sweep decides whether the solve goes on. The sweeps done in each step
    and every bit are one thread's, with a tolerance that stops most steps early."""
    runs = []
    for n in (1, 2):
        world = load_scene("pyramid", [f"solver.tolerance={TOLERANCE}"])
        world.configure(threads=n)
        runs.append(_run_bits(world, 120))
    assert runs[0] == runs[1]
    sweeps = runs[0][0]
    assert sum(k < 20 for k in sweeps) > len(sweeps) // 2 and len(set(sweeps)) > 5, sweeps


def test_sweeps_taken_unit_by_unit_end_when_only_one_thread_takes_them():
    """A step told to use two threads while numba runs one (or a second thread that never
    starts): the one thread takes every unit, and the step ends with the same bits."""
    code = textwrap.dedent("""
        import hashlib
        import numba
        import numpy as np
        from sharnir.physics import solver
        from sharnir.physics.contact import contact_args
        from sharnir.physics.world import _empty_records
        from sharnir.scenes import load_scene

        def bits(world):
            return hashlib.sha256(b"".join(np.ascontiguousarray(getattr(world, f)).tobytes()
                for f in ("body_pos", "body_quat", "body_vel", "body_angvel"))).hexdigest()

        one = load_scene("pyramid")
        one.configure(threads=1)
        one.run(40)
        world = load_scene("pyramid")
        world.configure(threads=2)
        world.run(1)   # (compiled or loaded; the rows split into units)
        model, state, work = world._ready()
        numba.set_num_threads(1)
        solver.step_many(model, state, work, *contact_args(world._contacts),
                         world._step_trees(), world._settings._replace(threads=2), 39,
                         *_empty_records(state))
        print(bits(one) == bits(world))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "True"


def test_the_pyramid_is_split_into_units_of_both_phases():
    """(So that the tests above compare a split run, not one unit run twice.)"""
    world = load_scene("pyramid")
    world.run(2)
    rows = world._contacts.rows
    start = rows.part_start
    assert rows.man_count[0] >= PARTITION_MIN
    for u in range(2 * PHASE_UNITS):
        assert start[u + 1] > start[u], f"unit {u} is empty: {list(start)}"
    # nearly all of it in the phases, little left to sweep alone
    assert start[UNITS] - start[LEFTOVER] < 0.1 * rows.man_count[0]


def _split(pos, pairs, inv_mass):
    nman = len(pairs)
    first = np.arange(nman + 1, dtype=np.int64)   # one point per manifold
    body = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    part = make_partition(max(nman, 1))
    partition_manifolds(nman, first, body, pos, inv_mass, part["part_order"],
                        part["part_unit"], part["part_start"], part["part_bin"])
    return part


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 400), st.floats(0.0, 0.5))
def test_the_units_of_a_phase_share_no_moving_body(seed, nman, still):
    """Random bodies (a share of them static or kinematic, inverse mass 0) and random pairs,
    near neighbours mostly: every manifold is in exactly one unit, in index order within it,
    and no moving body is in two units of one phase."""
    rng = np.random.default_rng(seed)
    nbody = 60
    pos = rng.uniform(-1.0, 1.0, (nbody, 3)) * rng.uniform(0.0, 3.0, 3)
    inv_mass = np.where(rng.random(nbody) < still, 0.0, 1.0)
    pairs = []
    for _ in range(nman):
        a = int(rng.integers(nbody))
        d = np.linalg.norm(pos - pos[a], axis=1)
        near = np.argsort(d)[1:6] if rng.random() < 0.9 else rng.integers(nbody, size=5)
        b = int(near[rng.integers(len(near))])
        pairs.append((a, b if b != a else (a + 1) % nbody))
    part = _split(pos, pairs, inv_mass)
    order, start, unit = part["part_order"], part["part_start"], part["part_unit"]
    assert start[0] == 0 and start[UNITS] == nman
    assert sorted(order[:nman]) == list(range(nman))
    for u in range(UNITS):
        got = order[start[u]:start[u + 1]]
        assert list(got) == sorted(got)
        assert all(unit[m] == u for m in got)
    for phase in range(2):
        owner = {}
        for u in range(phase * PHASE_UNITS, (phase + 1) * PHASE_UNITS):
            for m in order[start[u]:start[u + 1]]:
                for i in pairs[m]:
                    if inv_mass[i] > 0.0:
                        assert owner.setdefault(i, u) == u, f"body {i} in units {owner[i]}, {u}"


def test_a_few_manifolds_stay_in_one_unit_in_their_order():
    pos = np.zeros((10, 3))
    pos[:, 0] = np.arange(10)
    pairs = [(i, i + 1) for i in range(9)] * 8
    part = _split(pos, pairs[:PARTITION_MIN - 1], np.ones(10))
    assert list(part["part_start"][:LEFTOVER + 1]) == [0] * (LEFTOVER + 1)
    assert list(part["part_order"][:PARTITION_MIN - 1]) == list(range(PARTITION_MIN - 1))


def test_the_threads_setting_takes_a_count_and_refuses_a_negative_one():
    world = load_scene("pyramid")
    world.configure(threads=1)
    assert world.settings["threads"] == 1
    world.run(2)
    assert world.threads_used == 1
    with pytest.raises(ValueError, match="threads"):
        world.configure(threads=-1)
    assert threads.count(0) == threads.available()
    assert threads.count(10_000) == threads.available()


def test_the_default_count_keeps_whichever_of_one_and_all_steps_faster(monkeypatch):
    """threads = 0: both counts are tried, the faster kept, the other tried again after
    PROBE_S seconds of stepping (a machine whose other core got busy, or free again)."""
    monkeypatch.setattr(threads, "available", lambda: 4)
    choice = threads.Choice()
    per_step = {1: 1e-3, 4: 4e-3}   # four threads slower (their cores shared)

    def call():
        n = choice.pick(0)
        choice.record(n, per_step[n] * 10, 10)
        return n

    seen = [call() for _ in range(4)]
    assert set(seen) == {1, 4}
    assert [call() for _ in range(5)] == [1] * 5
    # 10 s of stepping: a try after 2 s, lost; the next after 4 more, lost; then 8 more
    assert [call() for _ in range(1000)].count(4) == 2
    per_step[4] = 0.25e-3            # the cores are free again
    counts = [call() for _ in range(int(threads.Choice.PROBE_MAX_S / 1e-2) + 3)]
    assert counts[-1] == 4 and counts.count(4) >= 1
    assert choice.pick(2) == 2 and choice.pick(1) == 1


def test_a_sweeps_forked_workers_run_after_their_parent_used_threads(tmp_path):
    """GNU OpenMP aborts a forked child that starts a parallel region once its parent has:
    the pool's workers run on one thread and never do (app/sweep.py)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(textwrap.dedent("""
        scene = "pyramid"
        duration = 0.05
        [[grid]]
        path = "solver.iterations"
        name = "iterations"
        values = [10, 20]
        [[metrics]]
        name = "top"
        channel = "body.r19b00.z"
        reduce = "final"
    """), encoding="utf-8")
    code = textwrap.dedent(f"""
        from sharnir.app import sweep as sw
        from sharnir.scenes import load_scene
        world = load_scene("pyramid")
        world.configure(threads=2)
        world.run(5)                      # the parent's threads have run (if it has two)
        job, runs = sw.prepare(sw.read_spec({str(spec)!r}))
        backend = sw.PoolBackend(2)
        backend.start(job)
        try:
            rows = list(backend.rows((r.index, r.sets) for r in runs))
        finally:
            backend.close()
        print(*sorted(row["status"] for row in rows))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["ok", "ok"]


assert set(SPLIT) <= set(SCENES)


def test_a_cached_kernel_over_a_cached_parallel_one_runs_in_a_fresh_process(tmp_path):
    """numba issue #8578, the CI crash of the threaded step: a kernel compiled in a process
    that loaded its parallel callee from the cache is cached without the note that starts
    numba's threading layer; loaded in a fresh process, its parallel calls went to address 0
    (a segmentation fault). Importing Sharnir starts the layer (physics/threads.py). Built
    here small: one process caches the parallel callee, the next the caller, a third runs it."""
    (tmp_path / "nested.py").write_text(textwrap.dedent("""
        import numpy as np
        from numba import njit, prange

        @njit(cache=True, parallel=True)
        def inner(x):
            for i in prange(x.size):
                x[i] += 1.0

        @njit(cache=True)
        def outer(x):
            inner(x)
            return x.sum()
    """), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    # (sharnir.physics first in each: it sets the CPU numba compiles for, part of the cache key)
    head = "import sharnir.physics, numpy as np, nested, numba.np.ufunc.parallel as p; "
    steps = ["nested.inner(np.ones(10)); print('cached')",
             "print(nested.outer(np.ones(10)))",
             "print(p._is_initialized, nested.outer(np.ones(10)))"]
    out = []
    for step in steps:
        done = subprocess.run([sys.executable, "-c", head + step], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (step, done.returncode, done.stderr[-2000:])
        out.append(done.stdout.split())
    assert out == [["cached"], ["20.0"], ["True", "20.0"]]
