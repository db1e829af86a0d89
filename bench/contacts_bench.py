"""Contact benchmark: speed of the contact scenes, time per phase, and scaling with size.

    .venv/bin/python bench/contacts_bench.py                # ~6 min on 2 cores (threads 1,2)
    .venv/bin/python bench/contacts_bench.py --quick        # smoke test: a few steps of each
    .venv/bin/python bench/contacts_bench.py --threads 1,2  # the World's `threads` setting(s)
    .venv/bin/python bench/contacts_bench.py --print-only   # do not write bench/results.md

Writes the `## Contacts` section of bench/results.md (replacing that section if present, else
inserting it before `## History`; every other section is kept as it is).  bench/run.py
keeps this section when it rewrites results.md.

Threads: a step runs its contact stages on the World's `threads` setting (bit-identical
results for any count; physics/threads.py applies it before each kernel call, so
numba.set_num_threads from here would not control it).  `--threads LIST` (comma-separated,
default "1,N" with N = numba.config.NUMBA_NUM_THREADS, 0 = N; deduplicated) measures each
scene on each count: every freshly loaded scene is given `world.configure(threads=t)`.

Two ways of timing, both in one process after a warm-up that fills numba's kernel cache
(for every thread count: with one thread no parallel region is entered):

* overall steps/s: `World.run(steps, chunk=100)` on a freshly loaded scene; the Recording's
  wall_s is the time inside the stepping kernel calls (no loading, no compiling).  Several
  runs per thread count, interleaved (run r takes the counts in an order rotated by r), the
  median is reported.  CPU steps/s: steps / the process's CPU time over the call, which
  counts every thread: on t > 1 threads it is steps per core-second, not a speed.
* per step and phase: a fresh scene per thread count stepped by `World.run(1)` one step at a
  time, so that `contact_stats` (which describes the last step only) and `solver_stats` are
  read after every step.  detect = contact_stats['detect_s'] (broad + narrow phase), solve =
  solver_stats['seconds'] (the velocity iterations and restitution), rest = the wall time of
  the `run(1)` call minus both (free motion, preparing rows, warm start, integration, position
  pass, and the Python call overhead of `run`, a few tens of microseconds per call).

The scaling series (ellipsoid drops of 250-4000 bodies) runs on the smallest thread count of
the list only.  The peers: MuJoCo is measured side by side by bench/peers_bench.py (its
`## Against MuJoCo, side by side` section, which gives the drop and pyramid targets' verdicts
per thread count); PyBullet and Newton are quoted from the issue, not re-measured; the tube's
target is real time: >= 1.5x at dt 1/240 = 360 steps/s.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from run import write_section  # bench/run.py: shared with the other benchmark scripts

from sharnir.scenes import build, load_scene

ROOT = Path(__file__).resolve().parent.parent

SECTION = "## Contacts"
PEERS_SECTION = "## Against MuJoCo, side by side"   # written by bench/peers_bench.py
SCENES = ROOT / "scenes"
TUBE_STEPS = 1200        # 5 s at 1/240: the whole pour (the last body leaves the tube at ~5 s)
PYRAMID_STEPS = 960      # 4 s at 1/240
RUNS = 3                 # overall steps/s: median of this many runs per thread count
SCALING = {250: (5, 5, 10), 500: (10, 5, 10), 1000: (10, 10, 10), 2000: (20, 10, 10),
           4000: (20, 20, 10)}   # bodies: grid nx, ny, nz (10 layers always, footprint grows)
LABELS = {"drop": "ellipsoid drop, 1000", "tube": "ellipsoid tube, 1000",
          "pyramid": "pyramid, 210 boxes"}
PEERS = {  # steps/s measured by others on this machine class (from the issue), not re-measured
    "drop": [("Newton", 2), ("PyBullet", 44)],
    "pyramid": [("PyBullet", 275)],
}
MUJOCO_TARGET = {"drop": 8.0, "pyramid": 6.0}   # Sharnir / MuJoCo, bench/peers_bench.py
TUBE_REAL_TIME = 1.5     # the tube: >= 1.5x real time (at its dt 1/240: 360 steps/s)


def thread_counts(text):
    """The thread counts of a `--threads` list ("1,2"; 0 = every core numba has), deduplicated
    and sorted; ValueError for anything outside 0..numba.config.NUMBA_NUM_THREADS."""
    most = int(numba.config.NUMBA_NUM_THREADS)
    counts = set()
    for item in text.split(","):
        try:
            n = int(item)
        except ValueError:
            raise ValueError(f"--threads: {item.strip()!r} is not a whole number") from None
        if not 0 <= n <= most:
            raise ValueError(f"--threads: {n} is outside 0..{most} "
                             "(numba.config.NUMBA_NUM_THREADS; 0 = all of them)")
        counts.add(n or most)
    return sorted(counts)


def default_threads():
    """`--threads`'s default: one thread and every core numba has."""
    return f"1,{numba.config.NUMBA_NUM_THREADS}"


def parse_options(description, quick_help):
    """The options both contact benches take: --quick, --threads LIST, --print-only. Returns
    (args, the thread counts, the flags as the section quotes them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--threads", default=default_threads(), metavar="LIST",
                        help="comma-separated thread counts for Sharnir, the World's `threads` "
                             "setting (0 = every core numba has); default: %(default)s")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    try:
        counts = thread_counts(args.threads)
    except ValueError as e:
        parser.error(str(e))
    flag = (" --quick" if args.quick else "") + f" --threads {','.join(map(str, counts))}"
    return args, counts, flag


def rotated(counts, r):
    """The thread counts in the order of repeat r (rotated by r, so that no count always
    runs first, or right after another simulator)."""
    k = r % len(counts)
    return counts[k:] + counts[:k]


def threading_note():
    """numba's threading layer (once a parallel region has run) and the environment that
    tunes it: under load, how OpenMP's threads wait at a barrier decides a lot."""
    try:
        layer = numba.threading_layer()
    except ValueError:                    # no parallel region has run in this process
        layer = "none started"
    names = ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")
    env = [f"{n}={os.environ[n]}" for n in names if n in os.environ]
    return f"threading layer {layer} ({', '.join(env) if env else ', '.join(names) + ' unset'})"


def load(path, threads):
    """A freshly loaded scene stepping on `threads` threads (the World's setting), its model
    built (which the first run() would otherwise do inside the timed call)."""
    world = load_scene(path)
    world.configure(threads=threads)
    world.body_pos  # noqa: B018 (builds the model)
    return world


def machine():
    """bench/run.py's machine description (CPU, versions, date, commit, dirty files)."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.machine()


def dynamic_count(world):
    return int(np.count_nonzero(world.body_mass > 0))


def overall(path, steps, runs, counts):
    """{threads: (steps/s by wall, steps/s by CPU, threads the runs used)}: `runs` fresh runs
    of `steps` steps in chunks of 100 per thread count, interleaved (run r takes the counts in
    the order rotated(counts, r)).  Wall: the time inside the kernel calls; CPU: the process's
    CPU time over the call (every thread; it leaves out time spent waiting for a core that
    other processes hold)."""
    out = {t: ([], [], set()) for t in counts}
    for r in range(runs):
        for t in rotated(counts, r):
            world = load(path, t)
            c0 = time.process_time()
            rec = world.run(steps, chunk=100, progress=lambda done, total: None)
            out[t][1].append(steps / (time.process_time() - c0))
            out[t][0].append(steps / rec.wall_s)
            out[t][2].add(numba.get_num_threads())   # what the World set in this thread
    return out


def per_step(path, steps, threads):
    """Step a fresh scene one step at a time on `threads` threads; per-step wall, CPU (the
    process's, every thread), detect, solve, points, pairs, depth."""
    world = load(path, threads)
    out = {k: np.zeros(steps) for k in ("wall", "cpu", "detect", "solve", "points", "pairs",
                                        "depth", "reused")}
    for k in range(steps):
        c0, t0 = time.process_time(), time.perf_counter()
        world.run(1)
        out["wall"][k] = time.perf_counter() - t0
        out["cpu"][k] = time.process_time() - c0
        cs, ss = world.contact_stats, world.solver_stats
        out["detect"][k] = cs["detect_s"]
        out["solve"][k] = ss["seconds"]
        out["points"][k] = cs["points"]
        out["pairs"][k] = cs["pairs"]
        out["reused"][k] = cs["reused"]
        out["depth"][k] = cs["max_depth"]
    out["bodies"] = dynamic_count(world)
    out["dt"] = world.dt
    out["threads_used"] = numba.get_num_threads()
    return out


def summary(name, threads, s, speeds=((), (), ())):
    wall, detect, solve = s["wall"].mean(), s["detect"].mean(), s["solve"].mean()
    items = s["bodies"] * len(s["wall"]) + s["points"].sum()
    return {
        "scene": name, "threads": threads,
        "threads_used": sorted(set(speeds[2]) | {s["threads_used"]}),
        "steps": len(s["wall"]), "bodies": s["bodies"], "dt": s["dt"],
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


def warm_up(tmp, counts):
    """Compile (or load from numba's cache) every kernel the measured scenes use, on every
    thread count (one thread enters no parallel region: other code paths)."""
    small = build.ellipsoid_drop(tmp / "warm_drop.toml", nx=2, ny=2, nz=2)
    for t in counts:
        load(small, t).run(200)
        load(SCENES / "pyramid.toml", t).run(5)
        load(SCENES / "ellipsoid_tube.toml", t).run(5)


def run_all(quick, counts):
    tmp = Path(tempfile.mkdtemp(prefix="sharnir_contacts_"))
    print(f"contacts bench: warm-up (threads {', '.join(map(str, counts))})", file=sys.stderr)
    warm_up(tmp, counts)
    load_avg = [os.getloadavg()[0]]
    runs = 1 if quick else RUNS
    drop_steps = 50 if quick else 1000
    res = {}
    jobs = [("drop", SCENES / "ellipsoid_drop.toml", drop_steps),
            ("tube", SCENES / "ellipsoid_tube.toml", 50 if quick else TUBE_STEPS),
            ("pyramid", SCENES / "pyramid.toml", 50 if quick else PYRAMID_STEPS)]
    for key, path, steps in jobs:
        print(f"contacts bench: {path.name}, {steps} steps x {runs} x threads "
              f"{', '.join(map(str, counts))}, then per step", file=sys.stderr)
        speeds = overall(path, steps, runs, counts)
        res[key] = {t: summary(path.name, t, per_step(path, steps, t), speeds[t])
                    for t in counts}
    scaling = []
    t = counts[0]
    for n, (nx, ny, nz) in SCALING.items():
        print(f"contacts bench: scaling, {n} ellipsoids, per step, {t} thread(s)",
              file=sys.stderr)
        path = build.ellipsoid_drop(tmp / f"drop_{n}.toml", nx=nx, ny=ny, nz=nz)
        before = os.getloadavg()[0]
        scaling.append(summary(f"{n}", t, per_step(path, drop_steps, t)) | {"load": before})
    load_avg.append(os.getloadavg()[0])
    return res, scaling, load_avg


def _threads(r):
    """The threads cell: the setting, and what the runs used where that differs."""
    used = r["threads_used"]
    return f"{r['threads']}" if used == [r["threads"]] else (
        f"{r['threads']} (ran on {', '.join(map(str, used))})")


def _x(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def render(res, scaling, load_avg, mach, quick, counts, flag):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    base = counts[0]
    d = res["drop"][base]
    thr = ", ".join(map(str, counts))
    lines = [
        SECTION,
        "",
        (f"Generated by `python bench/contacts_bench.py{flag}`"
        f"{' (quick mode: a smoke test, not a measurement)' if quick else ''}; replaced on each "
        "of its runs (bench/run.py keeps it)."),
        "",
        (f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs. Each scene is measured on "
        f"{thr} thread(s) (the World's `threads` setting, `world.configure(threads=t)` on each "
        "freshly loaded scene; numba.config.NUMBA_NUM_THREADS = "
        f"{numba.config.NUMBA_NUM_THREADS}; {threading_note()}): the contact stages run on "
        "that many threads, the "
        "rest of a step on one; the results are the same bits for any count. 1-minute load "
        f"average {load_avg[0]:.2f} after the warm-up, {load_avg[1]:.2f} at the end; this "
        "benchmark's own process accounts for 1 to the thread count of that. **The machine is "
        "a shared VM whose speed drifts**: the same commit has measured 10-20% apart from one "
        "half hour to the next, so compare commits only by runs made side by side."),
        (f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}; "
        f"{mach['date_utc']}; commit {mach['commit']}, tree {dirty}"),
        ("- steps/s: median of "
        f"{len(d['steps_per_s_runs'])} fresh runs of `World.run(steps, chunk=100)` per thread "
        "count, the counts interleaved (kernel time only, Recording.wall_s); vs "
        f"{base}: its median over the median on {base} thread(s). Per-phase columns: a separate "
        "fresh run per thread count stepped with `World.run(1)`, reading `contact_stats` and "
        "`solver_stats` after every step (means over the steps); detect = broad + narrow phase, "
        "solve = velocity iterations, rest = the `run(1)` wall time minus both (free motion, "
        "row preparation, warm start, integration, position pass, Python call overhead). "
        "x real time = steps/s x dt."),
        "",
        "### Scenes",
        "",
        (f"| scene | threads | bodies | dt | steps | steps/s, wall (runs) | vs {base} thr "
        "| x real time | steps/s, CPU | contacts/step mean | max | pairs/step | kept/step "
        "| worst overlap | wall ms/step | detect ms | solve ms | rest ms | CPU ms/step |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
        "|---:|---:|",
    ]
    for key in ("drop", "tube", "pyramid"):
        for t in counts:
            r = res[key][t]
            runs = ", ".join(f"{x:,.0f}" for x in r["steps_per_s_runs"])
            lines.append(
                f"| {r['scene']} | {_threads(r)} | {r['bodies']} | {r['dt']:.4g} s "
                f"| {r['steps']} | **{r['steps_per_s']:,.0f}** ({runs}) "
                f"| {_x(r['steps_per_s'], res[key][base]['steps_per_s'])} "
                f"| {r['steps_per_s'] * r['dt']:.2f} | {r['cpu_steps_per_s']:,.0f} "
                f"| {r['points_mean']:,.0f} | {r['points_max']:,} "
                f"| {r['pairs_mean']:,.0f} | {r['reused_mean']:,.0f} | {r['depth_max_mm']:.2f} mm "
                f"| {r['wall_ms']:.2f} | "
                f"{r['detect_ms']:.2f} | {r['solve_ms']:.2f} | {r['rest_ms']:.2f} | "
                f"{r['cpu_ms']:.2f} |")
    tube = res["tube"][base]
    lines += [
        "",
        (f"ellipsoid_drop: {d['steps']} steps ({d['steps'] * d['dt']:g} s, 10 velocity iterations);"
        f" the tube: its first {tube['steps']} steps "
        f"({tube['steps'] * tube['dt']:.1f} s; the pour is over by ~5 s; 15 "
        f"iterations); the pyramid: 20 rows, 210 boxes, {res['pyramid'][base]['steps']} steps, 20 "
        "iterations. Contacts = contact points "
        "(up to 4 per touching pair); pairs = candidate pairs from the broad phase; kept = "
        "touching pairs that kept last step's manifold instead of a narrow phase (the "
        "manifold_reuse setting, 0.2 mm, physics/contact.py). "
        "steps/s, CPU: steps / the process's CPU time over the same runs (median; it counts "
        "every thread, so on more than one thread it is steps per core-second, not a speed), "
        "which leaves out the time the process waited for a core the other work held: closer "
        "to what an idle machine would show; CPU ms/step likewise. Worst overlap: the deepest "
        "contact of any step (impacts)."),
        "",
        "### Per phase, side by side",
        "",
        ("Milliseconds per step of the per-step runs above, by thread count (the speed-up: the "
         f"time on {base} thread(s) over the time on the others)."),
        "",
        ("| scene | phase | " + " | ".join(f"{t} thread{'s' if t > 1 else ''} ms" for t in counts)
         + "".join(f" | {t} vs {base}" for t in counts[1:]) + " |"),
        "|---|---|" + "---:|" * (2 * len(counts) - 1),
    ]
    for key in ("drop", "tube", "pyramid"):
        for phase in ("wall", "detect", "solve", "rest"):
            ms = [res[key][t][f"{phase}_ms"] for t in counts]
            cells = [f"{x:.2f}" for x in ms] + [_x(ms[0], x) for x in ms[1:]]
            name = "step (wall)" if phase == "wall" else phase
            lines.append(f"| {res[key][base]['scene']} | {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Against the peers",
        "",
        (f"MuJoCo is measured side by side with Sharnir, in one process and one sitting, by "
         f"bench/peers_bench.py: see its section `{PEERS_SECTION}` (drop and pyramid, each "
         "thread count, with the verdicts). The MuJoCo numbers once copied from the issue are "
         "no longer used: a ratio is only as good as two runs made under the same load. "
         "PyBullet and Newton: measured by others on this machine class (from the issue), not "
         "re-measured here. The tube's peer is real time (1 s simulated per second)."),
        "",
        ("| scene | peer | steps/s | " + " | ".join(f"Sharnir / peer, {t} thr (wall)"
                                                   for t in counts) + " |"),
        "|---|---|---:|" + "---:|" * len(counts),
    ]
    for key in ("drop", "pyramid", "tube"):
        label = LABELS[key]
        ours = [res[key][t]["steps_per_s"] for t in counts]
        if key in MUJOCO_TARGET:
            lines.append(f"| {label} | MuJoCo | see `{PEERS_SECTION}` | "
                         + " | ".join(f"target >= {MUJOCO_TARGET[key]:g}x" for _ in counts) + " |")
            peers = PEERS[key]
        else:
            rt = 1.0 / res[key][base]["dt"]
            peers = [(f"real time (dt {res[key][base]['dt']:.4g} s)", rt)]
        for name, sps in peers:
            lines.append(f"| {label} | {name} | {sps:,.0f} | "
                         + " | ".join(f"{x / sps:.2f}x" for x in ours) + " |")
        lines.append(f"| {label} | **Sharnir** | "
                     + ", ".join(f"**{x:,.0f}** ({t} thr)" for t, x in zip(counts, ours))
                     + " |" + " |" * len(counts))
    lines.append("")
    for key in ("drop", "pyramid"):
        lines.append(
            f"- target on the {LABELS[key]}: Sharnir >= {MUJOCO_TARGET[key]:g}x MuJoCo, measured "
            f"side by side: the verdict per thread count is in `{PEERS_SECTION}` "
            "(bench/peers_bench.py), not here.")
    dt = res["tube"][base]["dt"]
    need = TUBE_REAL_TIME / dt
    verdicts = "; ".join(
        f"{t} thread{'s' if t > 1 else ''}: {res['tube'][t]['steps_per_s']:,.0f} steps/s = "
        f"{res['tube'][t]['steps_per_s'] * dt:.2f}x real time, "
        f"{'**met**' if res['tube'][t]['steps_per_s'] >= need else '**not met**'}"
        for t in counts)
    lines.append(f"- target on the tube: >= {TUBE_REAL_TIME:g}x real time at dt {dt:.4g} s "
                 f"(1/{1 / dt:.0f}) = {need:,.0f} steps/s, by wall time: {verdicts}.")
    base_item = next(s for s in scaling if s["scene"] == "1000")["cpu_us_per_item"]
    per_item = [s["cpu_us_per_item"] for s in scaling]
    wall_items = [s["us_per_item"] for s in scaling]
    spread = max(per_item) / min(per_item)
    st = scaling[0]["threads"]
    lines += [
        "",
        "### Scaling (ellipsoid drop, grid of 10 layers, footprint scaled)",
        "",
        (f"Each size dropped the same way (spacing 0.25 m, lowest layer at z = 0.15 m, 10 "
        f"iterations, dt 0.002 s, {scaling[0]['steps']} steps, one step per `run(1)`), on "
        f"{st} thread{'s' if st > 1 else ''} (the smallest count of `--threads`). Cost per "
        "item = total time / total (dynamic bodies + contact points) over all steps, by the "
        "process's CPU time (the scaling verdict) and by wall time (which the other work on the "
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
            f"| {s['cpu_ms']:.2f} | {s['cpu_us_per_item']:.3f} "
            f"| {s['cpu_us_per_item'] / base_item:.2f} "
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
    args, counts, flag = parse_options(__doc__.splitlines()[0],
                                       "a few steps of each (smoke test)")
    res, scaling, load_avg = run_all(args.quick, counts)
    text = render(res, scaling, load_avg, machine(), args.quick, counts, flag)
    if not args.print_only:
        write_section(SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
