"""Where one step's time goes: the stages of physics.solver.step timed one by one, outside the
hot path (issue 26: "measure where it goes, stage timers in the bench").

A copy of `step`'s sequence of stage calls, each pair of stages bracketed by the kernel clock,
compiled here (numba inlines the stages, as in the step), run for `--steps` steps from the
state a scene reaches after `--settle` steps, in each articulation mode. The copy leaves out
the traced checks, the budget and the status codes; its total is printed beside the real
step's time (solver.step_many over the same steps, from a copy of the same state, recording
nothing) so a drift of this copy from `step` shows. Prints a markdown table:

    .venv/bin/python bench/step_stages.py                       # humanoid and biped
    .venv/bin/python bench/step_stages.py tests/fixtures/mjcf/humanoid.xml --steps 4000

The first run compiles the copy once per mode and scene kind (about a minute each on 2 cores;
cached afterwards).
"""
import argparse
import copy
import platform
import time
import warnings

import numba
import numpy as np
from numba import njit

from sharnir.physics import solver as S
from sharnir.physics.clock import monotonic_seconds as now
from sharnir.physics.contact import contact_args
from sharnir.physics.world import _empty_records
from sharnir.scenes import load_scene

STAGES = ("free motion", "energy", "contact detection", "joint rows, motors, dampers",
          "contact rows (pack, partition)", "forces, approach", "warm start", "velocity solve",
          "integration", "position solve", "tunnelling guard", "reports", "checks")
SCENES = ("tests/fixtures/mjcf/humanoid.xml", "biped")


@njit(cache=True, nogil=True)
def _timed_steps(n, model, state, work, points, rows, scratch, trees, settings, acc):
    """n steps of physics.solver.step's stages (no tracing), seconds per stage into acc."""
    for _ in range(n):
        t = now()
        S.free_motion(model, state, work, settings)
        t = _lap(acc, 0, t)
        S.energy_before(model, state, work, settings)
        t = _lap(acc, 1, t)
        touching = False
        if points is not None:
            S.detect_contacts(model, state, work, points, scratch, settings.dt,
                              settings.manifold_reuse, settings.threads)
            touching = points.count[0] > 0
        t = _lap(acc, 2, t)
        S.prepare_joints(model, state, work, settings)
        S.motor_rows(model, state, work)
        S.follow_geometry(model, state, work, settings)
        S.control_motors(model, state, settings, work.motor_coef)
        S.prepare_motors(model, state, work, settings)
        if S.any_positive(model.joint_damping):
            S.prepare_dampers(model, state, work, settings)
        else:
            work.damper_count[0] = 0
            state.joint_damper_impulse[:] = 0.0
        if model.coupling_joint.shape[0] > 0:
            S.prepare_couplings(model, state, work, settings)
        t = _lap(acc, 3, t)
        if points is not None:
            if touching:
                S.prepare_contacts(model, state, work, points, rows, settings.dt)
        t = _lap(acc, 4, t)
        S.apply_forces(model, state, work, settings)
        if points is not None:
            if touching:
                S.forced_approach(model, state, work, points, rows)
        S.aim_at_step_end(model, state, work, settings)
        t = _lap(acc, 5, t)
        S.warm_start(model, state, work, settings)
        if points is not None:
            if touching:
                S.warm_start_contacts(model, state, work, points, rows, settings.warm_start)
        t = _lap(acc, 6, t)
        S.solve_velocities(model, state, work, points, rows, trees, settings)
        t = _lap(acc, 7, t)
        S.integrate_positions(model, state, work, settings)
        t = _lap(acc, 8, t)
        S.island_momentum_before(model, state, work)
        S.solve_positions(model, state, work, points, rows, settings)
        S.keep_island_momentum(model, state, work)
        t = _lap(acc, 9, t)
        if scratch is not None:
            S.guard_static(model, state, scratch)
        t = _lap(acc, 10, t)
        S.report_joints(model, state, work, settings)
        S.report_reactions(model, state, work, settings)
        if points is not None:
            S.contact_wrenches(model, state, points, rows, settings.dt)
        state.time[0] += settings.dt
        state.step_count[0] += 1
        t = _lap(acc, 11, t)
        S.scan_bodies(model.body_kind, state.body_pos, state.body_quat, state.body_vel,
                      state.body_angvel, state.body_angmom, settings.max_speed,
                      settings.max_angular_speed)
        S.energy_jump(model, state, work, settings)
        _lap(acc, 12, t)


@njit(inline="always")
def _lap(acc, k, t):
    """acc[k] += the time since t; returns now."""
    t1 = now()
    acc[k] += t1 - t
    return t1


def measure(scene, articulation, settle, steps, threads=1):
    """(seconds per stage (len(STAGES),), the real step's seconds) over `steps` steps from
    `settle` steps in, on `threads` threads."""
    world = load_scene(scene, [f"solver.articulation={articulation}",
                               f"solver.threads={threads}"])
    world.run(settle)
    world.run(1)                           # (the step's own kernels compile or load)
    twin = copy.deepcopy(world)
    model, state, work = world._ready()
    numba.set_num_threads(threads)
    args = (model, state, work, *contact_args(world._contacts), world._step_trees(),
            world._settings._replace(threads=threads))
    acc = np.zeros(len(STAGES))
    _timed_steps(0, *args, acc)            # (compiles, or loads from the cache)
    _timed_steps(steps, *args, acc)
    model, state, work = twin._ready()
    start = time.perf_counter()
    S.step_many(model, state, work, *contact_args(twin._contacts), twin._step_trees(),
                twin._settings._replace(threads=threads), steps,
                *_empty_records(state))
    real = (time.perf_counter() - start) / steps
    return acc / steps, real


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes", nargs="*", default=list(SCENES))
    ap.add_argument("--settle", type=int, default=400, help="steps before timing (default 400)")
    ap.add_argument("--steps", type=int, default=2000, help="steps timed (default 2000)")
    ap.add_argument("--threads", default="1", help="thread counts, comma-separated (default 1)")
    ap.add_argument("--modes", default="sweep,tree", help="articulation modes (default both)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    columns, rows = [], []
    counts = [int(n) for n in args.threads.split(",")]
    for scene in args.scenes:
        for mode in args.modes.split(","):
            for n in counts:
                per, real = measure(scene, mode, args.settle, args.steps, n)
                columns.append(f"{scene.rsplit('/', 1)[-1]}, {mode}"
                               + (f", {n} thr" if len(counts) > 1 else ""))
                rows.append((per, real))
    print(f"Machine: {platform.processor() or platform.machine()}; "
          f"{args.steps} steps after {args.settle}; us a step")
    print()
    print("| stage | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for k, name in enumerate(STAGES):
        print(f"| {name} | " + " | ".join(f"{1e6 * per[k]:.1f}" for per, _ in rows) + " |")
    print("| **sum** | " + " | ".join(f"**{1e6 * per.sum():.1f}**" for per, _ in rows) + " |")
    print("| the step itself (step_many) | " + " | ".join(f"{1e6 * real:.1f}"
                                                        for _, real in rows) + " |")


if __name__ == "__main__":
    main()
