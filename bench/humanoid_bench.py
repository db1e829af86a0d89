"""MuJoCo's own humanoid (tests/fixtures/mjcf/humanoid.xml) in MuJoCo and in Sharnir, side by
side in one run: the same file, the same dt (its 5 ms), zero control from its initial pose (it
falls). MuJoCo with its default solver (Newton) and with its projected Gauss-Seidel (PGS, the
class of solver Sharnir's sequential impulses belong to), both at MuJoCo's default tolerance;
Sharnir at its default and at a few iteration counts.

    .venv/bin/python bench/humanoid_bench.py           # ~4 min
    .venv/bin/python bench/humanoid_bench.py --quick

For each: steps per second (best of `runs`, after a warm-up; MuJoCo's mj_step loop in Python,
in a fresh process; Sharnir's world.run, one kernel call), the solver's iterations a step
(mean over the second), how far one step's solve is from converged, and the height of the
torso's frame after 1 s (its origin: Sharnir merges the welded head into the torso, which
moves the merged body's centre).
The solve error: from 8 states along the fall (every 25 steps), one step at the row's setting
and one with a tight solve (MuJoCo: Newton, tolerance 1e-15; Sharnir: 3000 iterations,
tolerance 0), the largest difference of a body's velocity or angular velocity after it (m/s
or rad/s), median over the 8. For Sharnir also how far its bodies are after 1 s from where its
1000-iteration run puts them (a fall is chaotic: this mixes convergence with divergence).
Writes the `## MuJoCo's humanoid` section of bench/results.md (bench/run.py keeps it).
"""
import argparse
import copy
import subprocess
import sys
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np
from run import machine, write_section

from sharnir.scenes.loader import load_scene

SECTION = "## MuJoCo's humanoid"
HUMANOID = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mjcf" / "humanoid.xml"
STEPS = 200   # 1 s at 5 ms
STATE_EVERY = 25   # steps between the states the solve error is measured from


MUJOCO_TIMING = """
import sys, time, mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1])
m.opt.solver = int(sys.argv[2])
best = 0.0
for _ in range(int(sys.argv[3])):
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d)
    mujoco.mj_resetData(m, d)
    t0 = time.perf_counter()
    for _ in range({steps}):
        mujoco.mj_step(m, d)
    best = max(best, {steps} / (time.perf_counter() - t0))
print(best)
"""


def mujoco_run(runs, solver):
    """MuJoCo timed in a process of its own (in this one, with Sharnir's libraries loaded,
    its step loop was measured at 30,000-42,000 steps/s where a fresh process gives ~45,000:
    the fresh process is its best case), the rest measured here."""
    out = subprocess.run([sys.executable, "-c", MUJOCO_TIMING.format(steps=STEPS),
                          str(HUMANOID), str(int(solver)), str(runs)],
                         capture_output=True, text=True, check=True)
    best = float(out.stdout.strip())
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    m.opt.solver = solver
    d = mujoco.MjData(m)
    count = 0
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
        count += int(d.solver_niter[0])
    height = float(d.xpos[m.body("torso").id][2])   # the torso frame (its origin)
    return best, height, count / STEPS, _mujoco_error(m, solver)


def _mujoco_velocities(m, d):
    out, v = np.zeros((m.nbody - 1, 6)), np.zeros(6)
    for b in range(1, m.nbody):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, v, 0)
        out[b - 1] = v
    return out


def _mujoco_error(m, solver):
    """Median over 8 states along the fall of one step's largest body velocity error."""
    d = mujoco.MjData(m)
    states = []
    for _ in range(8):
        for _ in range(STATE_EVERY):
            mujoco.mj_step(m, d)
        states.append((d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy(), d.time))
    keep = (m.opt.solver, m.opt.tolerance, m.opt.iterations)

    def one(st, setting):
        m.opt.solver, m.opt.tolerance, m.opt.iterations = setting
        d2 = mujoco.MjData(m)
        d2.qpos[:], d2.qvel[:], d2.qacc_warmstart[:], d2.time = st
        mujoco.mj_step(m, d2)
        mujoco.mj_forward(m, d2)   # (the velocities of the step's end)
        return _mujoco_velocities(m, d2)

    errors = [np.abs(one(st, keep) - one(st, (mujoco.mjtSolver.mjSOL_NEWTON, 1e-15, 1000)))
              .max() for st in states]
    m.opt.solver, m.opt.tolerance, m.opt.iterations = keep
    return float(np.median(errors))


def sharnir_run(runs, iterations=None):
    best, height, pos, iters = 0.0, None, None, None
    _fresh(iterations).run(1)   # compiled (cached after the first run)
    for _ in range(runs):
        w = _fresh(iterations)
        t0 = time.perf_counter()
        rec = w.run(STEPS)
        best = max(best, STEPS / (time.perf_counter() - t0))
        height = float(w.body_reference_pose("torso")[0][2])   # the MuJoCo torso frame
        pos = np.array(w.body_pos)
        iters = float(rec.stats[:, 0].mean())
    return best, height, pos, iters, _sharnir_error(iterations)


def _sharnir_error(iterations):
    """As _mujoco_error: one step at the setting against one of 3000 iterations (both with
    no position sweeps: they do not change velocities)."""
    w = _fresh(iterations)
    errors = []
    for _ in range(8):
        w.run(STATE_EVERY)
        out = []
        for setting in ({}, {"iterations": 3000, "tolerance": 0.0}):
            t = copy.deepcopy(w)
            t.configure(position_iterations=0, **setting)
            t.step()
            out.append(np.hstack([np.array(t.body_vel), np.array(t.body_angvel)]))
        errors.append(np.abs(out[0] - out[1]).max())
    return float(np.median(errors))


def _fresh(iterations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sets = [] if iterations is None else [f"solver.iterations={iterations}"]
        return load_scene(HUMANOID, sets)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 1 if args.quick else 3
    world = _fresh(None)
    default_iters = world.settings["iterations"]
    extra = sum("." in name for name in world.body_names)   # intermediate bodies
    rows = []
    for solver, label in ((mujoco.mjtSolver.mjSOL_NEWTON, "Newton, its default"),
                          (mujoco.mjtSolver.mjSOL_PGS, "PGS")):
        rate, z, iters, err = mujoco_run(runs, solver)
        m = mujoco.MjModel.from_xml_path(str(HUMANOID))
        rows.append((f"MuJoCo {mujoco.__version__}, {label} (tolerance {m.opt.tolerance:g}, "
                     f"at most {m.opt.iterations} iterations, pyramidal cones)",
                     rate, iters, err, z, ""))
    runs_by = {}
    for iters in (None, 20, 1000):
        runs_by[iters] = sharnir_run(runs, iters)
    for iters, (rate, z, pos, used, err) in runs_by.items():
        label = f"Sharnir, {default_iters if iters is None else iters} iterations" + (
            " (its default)" if iters is None else "")
        gap = float(np.abs(pos - runs_by[1000][2]).max())
        rows.append((label, rate, used, err, z, "" if iters == 1000 else f"{gap:.3f}"))
    m = machine()
    text = [SECTION, "",
            f"Machine: {m['cpu']}, {m['cpus']} CPUs; commit {m['commit']}; {m['date_utc']}. "
            f"The same file, dt 5 ms, zero control, {STEPS} steps (1 s) from its initial pose; "
            f"best of {runs} runs, all measured in this run. Solve error: one step's largest "
            "body velocity error against a tight solve of the same step (m/s or rad/s, median "
            "over 8 states along the fall; bench/humanoid_bench.py).", "",
            "| engine | steps/s | iterations a step | solve error a step | torso frame height "
            "at 1 s (m) | largest body gap to 1000 iterations at 1 s (m) |",
            "|---|---:|---:|---:|---:|---:|"]
    text += [f"| {name} | {rate:,.0f} | {iters:.1f} | {err:.1e} | {z:.3f} | {gap} |"
             for name, rate, iters, err, z, gap in rows]
    ratio = rows[2][1] / rows[0][1]
    text += ["", f"Sharnir at its default is {ratio:.2f}x MuJoCo's speed on MuJoCo's humanoid "
             f"({rows[2][1] / rows[1][1]:.2f}x MuJoCo's with its PGS solver, which runs at "
             f"{rows[1][1] / rows[0][1]:.2f}x its Newton default). Sharnir's bodies include "
             f"{extra} intermediate bodies for the bodies whose joints "
             "do not compose (scenes/mjcf.py, physics/gimbal.py); its "
             "contacts and limits are hard, MuJoCo's soft; MuJoCo's two hamstring tendons are "
             "not simulated (they hold MuJoCo's torso 0.11 m higher at 1 s)."]
    out = "\n".join(text) + "\n"
    write_section(SECTION, out)
    print(out)


if __name__ == "__main__":
    main()
