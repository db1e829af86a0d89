"""MuJoCo's own humanoid (tests/fixtures/mjcf/humanoid.xml) in MuJoCo and in Sharnir, side by
side in one run: the same file, the same dt (its 5 ms), zero control from its initial pose (it
falls), each engine with its default solver, and Sharnir also at a few iteration counts.

    .venv/bin/python bench/humanoid_bench.py           # ~1 min
    .venv/bin/python bench/humanoid_bench.py --quick

For each: steps per second (best of `runs`, after a warm-up; MuJoCo's mj_step loop in Python,
Sharnir's world.run, one kernel call) and the torso's height after 1 s, to show what the speed
buys; for Sharnir also how far its bodies are after 1 s from where its 1000-iteration run puts
them (how converged the solve is). Writes the `## MuJoCo's humanoid` section of
bench/results.md (bench/run.py keeps it).
"""
import argparse
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


def mujoco_run(runs):
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    best, height = 0.0, None
    for _ in range(runs):
        d = mujoco.MjData(m)
        mujoco.mj_step(m, d)
        mujoco.mj_resetData(m, d)
        t0 = time.perf_counter()
        for _ in range(STEPS):
            mujoco.mj_step(m, d)
        best = max(best, STEPS / (time.perf_counter() - t0))
        height = float(d.xipos[m.body("torso").id][2])
    return best, height, f"MuJoCo {mujoco.__version__}, default (Newton, {m.opt.iterations} "\
                         "iterations, pyramidal cones)"


def sharnir_run(runs, iterations=None):
    best, height, pos = 0.0, None, None
    _fresh(iterations).run(1)   # compiled (cached after the first run)
    for _ in range(runs):
        w = _fresh(iterations)
        t0 = time.perf_counter()
        w.run(STEPS)
        best = max(best, STEPS / (time.perf_counter() - t0))
        height = float(w.body_pos[w.body_names.index("torso")][2])
        pos = np.array(w.body_pos)
    return best, height, pos


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
    rate, z, name = mujoco_run(runs)
    rows.append((name, rate, z, ""))
    runs_by = {}
    for iters in (None, 20, 1000):
        runs_by[iters] = sharnir_run(runs, iters)
    for iters, (rate, z, pos) in runs_by.items():
        label = f"Sharnir, {default_iters if iters is None else iters} iterations" + (
            " (its default)" if iters is None else "")
        gap = float(np.abs(pos - runs_by[1000][2]).max())
        rows.append((label, rate, z, "" if iters == 1000 else f"{gap:.3f}"))
    m = machine()
    text = [SECTION, "",
            f"Machine: {m['cpu']}, {m['cpus']} CPUs; commit {m['commit']}; {m['date_utc']}. "
            f"The same file, dt 5 ms, zero control, {STEPS} steps (1 s) from its initial pose; "
            f"best of {runs} runs, both measured in this run.", "",
            "| engine | steps/s | torso height at 1 s (m) | largest body gap to 1000 "
            "iterations at 1 s (m) |", "|---|---:|---:|---:|"]
    text += [f"| {name} | {rate:,.0f} | {z:.3f} | {gap} |" for name, rate, z, gap in rows]
    ratio = rows[1][1] / rows[0][1]
    text += ["", f"Sharnir at its default is {ratio:.2f}x MuJoCo's speed on MuJoCo's humanoid. "
             f"Sharnir's bodies include {extra} intermediate bodies for the bodies whose joints "
             "do not compose (scenes/mjcf.py, physics/gimbal.py); its "
             "contacts and limits are hard, MuJoCo's soft; MuJoCo's two hamstring tendons are "
             "not simulated (they hold MuJoCo's torso 0.11 m higher at 1 s)."]
    out = "\n".join(text) + "\n"
    write_section(SECTION, out)
    print(out)


if __name__ == "__main__":
    main()
