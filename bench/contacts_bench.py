"""Contact benchmark: speed of the contact scenes, time per phase, and scaling with size.

    .venv/bin/python bench/contacts_bench.py           # ~3-4 min on 2 cores
    .venv/bin/python bench/contacts_bench.py --quick   # smoke test: a few steps of each

Writes the `## Contacts` section of bench/results.md (replacing that section if present, else
inserting it before `## History`; every other section is kept as it is).  bench/run.py
keeps this section when it rewrites results.md.

Two ways of timing, both in one process after a warm-up that fills numba's kernel cache:

* overall steps/s: `World.run(steps, chunk=100)` on a freshly loaded scene; the Recording's
  wall_s is the time inside the stepping kernel calls (no loading, no compiling).  Several
  runs, the median is reported.
* per step and phase: a fresh scene stepped by `World.run(1)` one step at a time, so that
  `contact_stats` (which describes the last step only) and `solver_stats` are read after
  every step.  detect = contact_stats['detect_s'] (broad + narrow phase), solve =
  solver_stats['seconds'] (the velocity iterations and restitution), rest = the wall time of
  the `run(1)` call minus both (free motion, preparing rows, warm start, integration, position
  pass, and the Python call overhead of `run`, a few tens of microseconds per call).
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from run import write_section  # bench/run.py: shared with the other benchmark scripts

from sharnir.scenes import build, load_scene

ROOT = Path(__file__).resolve().parent.parent

SECTION = "## Contacts"
SCENES = ROOT / "scenes"
TUBE_STEPS = 1200        # 5 s at 1/240: the whole pour (the last body leaves the tube at ~5 s)
PYRAMID_STEPS = 960      # 4 s at 1/240
RUNS = 3                 # overall steps/s: median of this many runs
SCALING = {250: (5, 5, 10), 500: (10, 5, 10), 1000: (10, 10, 10), 2000: (20, 10, 10),
           4000: (20, 20, 10)}   # bodies: grid nx, ny, nz (10 layers always, footprint grows)
PEERS = {  # steps/s measured by others on this machine class (from the issue), not re-measured
    "drop": [("MuJoCo 4.0, CG solver", 97), ("Newton", 2), ("PyBullet", 44)],
    "pyramid": [("MuJoCo 4.0, Newton solver", 470), ("PyBullet", 275)],
}
TARGET = {"drop": ("MuJoCo 4.0, CG solver", 97, 3),
          "pyramid": ("MuJoCo 4.0, Newton solver", 470, 2)}


def machine():
    """bench/run.py's machine description (CPU, versions, date, commit, dirty files)."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.machine()


def dynamic_count(world):
    return int(np.count_nonzero(world.body_mass > 0))


def overall(path, steps, runs):
    """steps/s of `runs` fresh runs of `steps` steps in chunks of 100: by wall time inside the
    kernel calls, and by this thread's CPU time (which leaves out time spent waiting for a
    core that other processes hold)."""
    speeds, cpu_speeds = [], []
    for _ in range(runs):
        world = load_scene(path)
        c0 = time.thread_time()
        rec = world.run(steps, chunk=100, progress=lambda done, total: None)
        cpu_speeds.append(steps / (time.thread_time() - c0))
        speeds.append(steps / rec.wall_s)
    return speeds, cpu_speeds


def per_step(path, steps):
    """Step a fresh scene one step at a time; per-step wall, detect, solve, points, pairs, depth."""
    world = load_scene(path)
    out = {k: np.zeros(steps) for k in ("wall", "cpu", "detect", "solve", "points", "pairs",
                                        "depth", "reused")}
    for k in range(steps):
        c0, t0 = time.thread_time(), time.perf_counter()
        world.run(1)
        out["wall"][k] = time.perf_counter() - t0
        out["cpu"][k] = time.thread_time() - c0
        cs, ss = world.contact_stats, world.solver_stats
        out["detect"][k] = cs["detect_s"]
        out["solve"][k] = ss["seconds"]
        out["points"][k] = cs["points"]
        out["pairs"][k] = cs["pairs"]
        out["reused"][k] = cs["reused"]
        out["depth"][k] = cs["max_depth"]
    out["bodies"] = dynamic_count(world)
    out["dt"] = world.dt
    return out


def summary(name, s, speeds=((), ())):
    wall, detect, solve = s["wall"].mean(), s["detect"].mean(), s["solve"].mean()
    items = s["bodies"] * len(s["wall"]) + s["points"].sum()
    return {
        "scene": name, "steps": len(s["wall"]), "bodies": s["bodies"], "dt": s["dt"],
        "steps_per_s": statistics.median(speeds[0]) if speeds[0] else None,
        "steps_per_s_runs": list(speeds[0]),
        "cpu_steps_per_s": statistics.median(speeds[1]) if speeds[1] else None,
        "cpu_ms": 1000 * s["cpu"].mean(),
        "per_step_steps_per_s": 1.0 / wall,
        "points_mean": s["points"].mean(), "points_max": int(s["points"].max()),
        "pairs_mean": s["pairs"].mean(), "reused_mean": s["reused"].mean(),
        "depth_max_mm": 1000 * s["depth"].max(),
        "wall_ms": 1000 * wall, "detect_ms": 1000 * detect, "solve_ms": 1000 * solve,
        "rest_ms": 1000 * (wall - detect - solve),
        # time per (body + contact point) over the run: total wall / total (bodies + points)
        "us_per_item": 1e6 * s["wall"].sum() / items,
        "cpu_us_per_item": 1e6 * s["cpu"].sum() / items,
    }


def warm_up(tmp):
    """Compile (or load from numba's cache) every kernel the measured scenes use."""
    small = build.ellipsoid_drop(tmp / "warm_drop.toml", nx=2, ny=2, nz=2)
    load_scene(small).run(200)
    load_scene(SCENES / "pyramid.toml").run(5)
    load_scene(SCENES / "ellipsoid_tube.toml").run(5)


def run_all(quick):
    tmp = Path(tempfile.mkdtemp(prefix="sharnir_contacts_"))
    print("contacts bench: warm-up", file=sys.stderr)
    warm_up(tmp)
    load = [os.getloadavg()[0]]
    runs = 1 if quick else RUNS
    drop_steps = 50 if quick else 1000
    res = {}
    jobs = [("drop", SCENES / "ellipsoid_drop.toml", drop_steps),
            ("tube", SCENES / "ellipsoid_tube.toml", 50 if quick else TUBE_STEPS),
            ("pyramid", SCENES / "pyramid.toml", 50 if quick else PYRAMID_STEPS)]
    for key, path, steps in jobs:
        print(f"contacts bench: {path.name}, {steps} steps x {runs} + per step", file=sys.stderr)
        speeds = overall(path, steps, runs)
        res[key] = summary(path.name, per_step(path, steps), speeds)
    scaling = []
    for n, (nx, ny, nz) in SCALING.items():
        print(f"contacts bench: scaling, {n} ellipsoids, per step", file=sys.stderr)
        path = build.ellipsoid_drop(tmp / f"drop_{n}.toml", nx=nx, ny=ny, nz=nz)
        before = os.getloadavg()[0]
        scaling.append(summary(f"{n}", per_step(path, drop_steps)) | {"load": before})
    load.append(os.getloadavg()[0])
    return res, scaling, load


def render(res, scaling, load, mach, quick):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    d = res["drop"]
    lines = [
        SECTION,
        "",
        (f"Generated by `python bench/contacts_bench.py{' --quick' if quick else ''}`"
        f"{' (quick mode: a smoke test, not a measurement)' if quick else ''}; replaced on each "
        "of its runs (bench/run.py keeps it)."),
        "",
        (f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs; the solver uses one. 1-minute load "
        f"average {load[0]:.2f} after the warm-up, {load[1]:.2f} at the end; this benchmark's own "
        "process accounts for about 1 of that. **The machine is a shared VM whose speed drifts**: "
        "the same commit has measured 10-20% apart from one half hour to the next, so compare "
        "commits only by runs made side by side."),
        (f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}; "
        f"{mach['date_utc']}; commit {mach['commit']}, tree {dirty}"),
        ("- steps/s: median of "
        f"{len(d['steps_per_s_runs'])} fresh runs of `World.run(steps, chunk=100)` (kernel time "
        "only, Recording.wall_s). Per-phase columns: a separate fresh run stepped with "
        "`World.run(1)`, reading `contact_stats` and `solver_stats` after every step (means over "
        "the steps); detect = broad + narrow phase, solve = velocity iterations, rest = the "
        "`run(1)` wall time minus both (free motion, row preparation, warm start, integration, "
        "position pass, Python call overhead)."),
        "",
        "### Scenes",
        "",
        ("| scene | bodies | dt | steps | steps/s, wall (runs) | steps/s, CPU | contacts/step mean "
        "| max | pairs/step | kept/step | worst overlap | wall ms/step | detect ms | solve ms "
        "| rest ms "
        "| CPU ms/step |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key in ("drop", "tube", "pyramid"):
        r = res[key]
        runs = ", ".join(f"{x:,.0f}" for x in r["steps_per_s_runs"])
        lines.append(
            f"| {r['scene']} | {r['bodies']} | {r['dt']:.4g} s | {r['steps']} | "
            f"**{r['steps_per_s']:,.0f}** ({runs}) | {r['cpu_steps_per_s']:,.0f} "
            f"| {r['points_mean']:,.0f} | {r['points_max']:,} "
            f"| {r['pairs_mean']:,.0f} | {r['reused_mean']:,.0f} | {r['depth_max_mm']:.2f} mm "
            f"| {r['wall_ms']:.2f} | "
            f"{r['detect_ms']:.2f} | {r['solve_ms']:.2f} | {r['rest_ms']:.2f} | "
            f"{r['cpu_ms']:.2f} |")
    lines += [
        "",
        (f"ellipsoid_drop: {d['steps']} steps ({d['steps'] * d['dt']:g} s, 10 velocity iterations);"
        f" the tube: its first {res['tube']['steps']} steps "
        f"({res['tube']['steps'] * res['tube']['dt']:.1f} s; the pour is over by ~5 s; 15 "
        f"iterations); the pyramid: 20 rows, 210 boxes, {res['pyramid']['steps']} steps, 20 "
        "iterations. Contacts = contact points "
        "(up to 4 per touching pair); pairs = candidate pairs from the broad phase; kept = "
        "touching pairs that kept last step's manifold instead of a narrow phase (the "
        "manifold_reuse setting, 0.2 mm, physics/contact.py). "
        "steps/s, CPU: steps / this thread's CPU time over the same runs (median), which leaves "
        "out the time the process waited for a core the other work held: closer to what an idle "
        "machine would show. Worst overlap: the deepest contact of any step (impacts)."),
        "",
        "### Against the peers",
        "",
        "Peers measured by others on this machine class (from the issue), not re-measured here.",
        "",
        "| scene | simulator | steps/s | Sharnir / peer (wall) | (CPU) |",
        "|---|---|---:|---:|---:|",
    ]
    for key, label in (("drop", "ellipsoid drop, 1000"), ("pyramid", "pyramid, 210 boxes")):
        ours, cpu = res[key]["steps_per_s"], res[key]["cpu_steps_per_s"]
        for name, sps in PEERS[key]:
            lines.append(f"| {label} | {name} | {sps:,} | {ours / sps:.2f}x | {cpu / sps:.2f}x |")
        lines.append(f"| {label} | **Sharnir** | **{ours:,.0f}** (CPU {cpu:,.0f}) | | |")
    for key, label in (("drop", "drop"), ("pyramid", "pyramid")):
        name, sps, factor = TARGET[key]
        ours, cpu = res[key]["steps_per_s"], res[key]["cpu_steps_per_s"]
        met = "**met**" if ours >= factor * sps else "**not met**"
        cpu_met = "met" if cpu >= factor * sps else "not met"
        if key == "drop":
            lines.append("")
        lines.append(f"- target on the {label}: >= {factor}x {name} = {factor * sps:,} steps/s; "
                     f"Sharnir {ours:,.0f} = {ours / sps:.2f}x by wall time: {met} "
                     f"(by CPU time {cpu:,.0f} = {cpu / sps:.2f}x: {cpu_met}).")
    base = next(s for s in scaling if s["scene"] == "1000")["cpu_us_per_item"]
    per_item = [s["cpu_us_per_item"] for s in scaling]
    wall_items = [s["us_per_item"] for s in scaling]
    spread = max(per_item) / min(per_item)
    lines += [
        "",
        "### Scaling (ellipsoid drop, grid of 10 layers, footprint scaled)",
        "",
        (f"Each size dropped the same way (spacing 0.25 m, lowest layer at z = 0.15 m, 10 "
        f"iterations, dt 0.002 s, {scaling[0]['steps']} steps, one step per `run(1)`). Cost per "
        "item = total time / total (dynamic bodies + contact points) over all steps, by this "
        "thread's CPU time (the scaling verdict) and by wall time (which the other work on the "
        "machine inflates by however much it held the cores during that run: see the load "
        "column, the 1-minute load average before each size)."),
        "",
        ("| ellipsoids | grid | contacts/step mean | max | wall ms/step | detect ms | solve ms "
        "| rest ms | CPU ms/step | us per (body + contact), CPU | vs 1000 | us per item, wall "
        "| load |"),
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scaling:
        nx, ny, nz = SCALING[int(s["scene"])]
        lines.append(
            f"| {int(s['scene']):,} | {nx}x{ny}x{nz} | {s['points_mean']:,.0f} "
            f"| {s['points_max']:,} | {s['wall_ms']:.2f} | {s['detect_ms']:.2f} "
            f"| {s['solve_ms']:.2f} | {s['rest_ms']:.2f} "
            f"| {s['cpu_ms']:.2f} | {s['cpu_us_per_item']:.3f} | {s['cpu_us_per_item'] / base:.2f} "
            f"| {s['us_per_item']:.3f} | {s['load']:.2f} |")
    verdict = "within" if spread <= 1.5 else "**not** within"
    lines += [
        "",
        (f"Largest / smallest cost per item across 250-4000, CPU time: {spread:.2f}x, {verdict} "
        f"1.5x (wall time: {max(wall_items) / min(wall_items):.2f}x)."),
        "",
    ]
    return "\n".join(lines)




def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps of each (smoke test)")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    res, scaling, load = run_all(args.quick)
    text = render(res, scaling, load, machine(), args.quick)
    if not args.print_only:
        write_section(SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
