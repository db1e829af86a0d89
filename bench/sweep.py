"""Sweeps: 64 door runs serial vs the local process pool vs local Ray (app/sweep.py).

    .venv/bin/python bench/sweep.py                 # ~2 min on 2 cores; writes results.md
    .venv/bin/python bench/sweep.py --print-only    # print, do not write

The runs: scenes/door.toml over an 8 x 8 grid of the hinge's friction (10 to 30 N m) and the
push (40 to 70 N m), reduced to the stop angle and the stop time, at the scene's own duration
(2 s, 200 steps) and at 20 s (2000 steps). Each backend is timed twice:

* after warm-up: its workers started and two runs done on each (kernels loaded, the scene
  read once), then the 64 runs through `Backend.rows`, in two phases: 9 rounds of serial and
  pool in turn before Ray is started, then 9 rounds of serial and Ray in turn (medians; a
  speed-up is the median of each round's ratio to the serial round of its phase; a 0.3 s
  pause before each round lets what the last one left running end first);
  overhead per run = wall x workers / 64 - the mean stepping time of a run (World.run's own
  clock): what a run costs beyond its steps (reading the scene, building the world, the
  reducers, the hand-off between processes);
* end to end: `sharnir sweep SPEC --backend B` in a fresh process (start-up, kernels from the
  cache, the workers' start, the runs, CSV, Parquet, sweep.json; no plots).

Writes the `## Sweeps` section of bench/results.md. Targets (issue 29): the pool >= 1.8x
serial, Ray >= 1.6x serial, overhead per run after warm-up <= 50 ms.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import machine, write_section  # shared with bench/run.py

from sharnir.app import sweep as sw

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Sweeps"
RUNS = 64
REPEATS = 9
SETTLE_S = 0.3   # s between two timed rounds: what a round left running ends first
SPEC = """
scene = "door"
duration = {duration}
[[grid]]
path = "joints.hinge.friction"
name = "friction"
linspace = [10.0, 30.0, 8]
[[grid]]
path = "loads.0.torque.2"
name = "push"
linspace = [40.0, 70.0, 8]
[[metrics]]
name = "stop_angle"
channel = "joint.hinge.angle"
reduce = "final"
[[metrics]]
name = "stop_time"
channel = "joint.hinge.rate"
reduce = "stop_time"
"""


def warm_up(backend, job, runs):
    """Start the backend and run a few runs on each worker; returns (seconds, workers)."""
    t0 = time.perf_counter()
    backend.start(job)
    workers = backend.describe().get("workers", 1)
    list(backend.rows((r.index, r.sets) for r in runs[:max(2, 2 * workers)]))
    return time.perf_counter() - t0, workers


def timed(backend, runs):
    """(wall s of the runs, mean stepping s of a run)."""
    t0 = time.perf_counter()
    rows = list(backend.rows((r.index, r.sets) for r in runs))
    wall = time.perf_counter() - t0
    assert len(rows) == RUNS and all(r["status"] == "ok" for r in rows), rows[:2]
    return wall, statistics.mean(r["step_s"] for r in rows)


def rounds(row, pairs, runs):
    """REPEATS rounds of each (label, backend) in turn, a settling pause before each."""
    for _ in range(REPEATS):   # in turn, so that a busy moment hits both
        for label, backend in pairs:
            time.sleep(SETTLE_S)
            wall, step = timed(backend, runs)
            row[label]["walls"].append(wall)
            row[label]["steps"].append(step)


def end_to_end(spec, backend, folder):
    out = Path(folder) / f"out-{backend}"
    t0 = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "sharnir", "sweep", str(spec), "--out",
                             str(out), "--backend", backend, "--no-plots", "--restart",
                             "--json"], capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["done"] == RUNS and summary["failed"] == 0, summary
    return wall


def measure(durations):
    res = {}
    with tempfile.TemporaryDirectory() as folder:
        for duration in durations:
            spec_file = Path(folder) / f"door-{duration:g}s.toml"
            spec_file.write_text(SPEC.format(duration=duration))
            spec = sw.read_spec(spec_file)
            job, runs = sw.prepare(spec)
            assert len(runs) == RUNS
            labels = ("serial", "local pool", "local Ray")
            row = {label: {"walls": [], "steps": []} for label in labels}
            row["serial with Ray"] = {"walls": [], "steps": []}
            load = [os.getloadavg()[0]]
            # Two phases. The pool's, with serial runs in turn, before Ray exists: Ray's
            # daemons (about 0.05 of a core idle) and the clean-up its workers do after a
            # round (in turn with Ray's, two of five pool rounds ran 6.0 and 6.9 ms of
            # stepping a run, against 4.3-4.8 with Ray idle) are not a pool user's.
            # Then Ray's, with serial runs in turn again; Ray's speed-up is against those.
            serial, pool = sw.Backend(), sw.PoolBackend()
            for label, backend in (("serial", serial), ("local pool", pool)):
                row[label]["start_s"], row[label]["workers"] = warm_up(backend, job, runs)
            rounds(row, (("serial", serial), ("local pool", pool)), runs)
            pool.close()
            import ray
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False,
                     log_to_driver=False, logging_level="ERROR")
            rb = sw.RayBackend()
            row["local Ray"]["start_s"], row["local Ray"]["workers"] = warm_up(rb, job, runs)
            rounds(row, (("serial with Ray", serial), ("local Ray", rb)), runs)
            load.append(os.getloadavg()[0])
            rb.close()
            base = {"serial": "serial", "local pool": "serial", "local Ray": "serial with Ray"}
            for label in labels:
                r = row[label]
                serial_walls = row[base[label]]["walls"]
                r["wall_s"] = statistics.median(r["walls"])
                r["step_s"] = statistics.median(r["steps"])
                r["overhead_ms"] = 1000 * (r["wall_s"] * r["workers"] / RUNS - r["step_s"])
                r["speedup"] = statistics.median(s / w for s, w in zip(serial_walls,
                                                                      r["walls"]))
                r["best_speedup"] = min(serial_walls) / min(r["walls"])
                print(f"{duration:g} s, {label}: {[round(w, 3) for w in r['walls']]}, start "
                      f"{r['start_s']:.2f} s", file=sys.stderr)
            ray.shutdown()
            del row["serial with Ray"]
            row["load"] = load
            for label, name in (("serial", "serial"), ("local pool", "local"),
                                ("local Ray", "ray")):
                row[label]["cli_s"] = end_to_end(spec_file, name, folder)
                print(f"{duration:g} s, {label}: CLI {row[label]['cli_s']:.2f} s",
                      file=sys.stderr)
            res[f"{duration:g}"] = row
    return res


def render(res, mach):
    lines = [
        SECTION, "",
        "Generated by `python bench/sweep.py` (see its docstring); replaced on each of its runs.",
        "",
        f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs",
        f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}, Ray "
        f"{_version('ray')}",
        f"- Date: {mach['date_utc']}; commit {mach['commit']}"
        + (f", tree dirty ({len(mach['dirty'])} files)" if mach["dirty"] else ", tree clean"),
        "",
        f"{RUNS} runs of scenes/door.toml (an 8 x 8 grid of the hinge's friction and the push;",
        "stop angle and stop time). After warm-up: the 64 runs on started, warmed workers, "
        f"{REPEATS} rounds of serial and pool in turn before Ray is started, then {REPEATS} "
        "rounds of serial and Ray in turn (Ray's daemons and the clean-up its workers do after "
        "a round slowed two of five pool rounds to 6.0 and 6.9 ms of stepping a run, against "
        "4.3-4.8 with Ray idle, when all three took turns), a "
        f"{SETTLE_S:g} s pause before each round; medians (the speed-up: the median of each "
        "round's ratio to the serial round of its phase; the best round's: the fastest serial "
        "round of the phase over the fastest of the backend, the least disturbed by other "
        "work); overhead per run = "
        "wall x workers / 64 - a run's mean stepping time. End to end: `sharnir sweep SPEC "
        "--backend B --no-plots` in a fresh process.",
        "",
        "| door run | backend | workers | start-up + warm-up (s) | 64 runs after warm-up (s) "
        "| speed-up | best round's speed-up | stepping per run (ms) | overhead per run (ms) "
        "| end to end (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for duration, row in res.items():
        for label, r in row.items():
            if label == "load":
                continue
            lines.append(
                f"| {duration} s ({round(float(duration) / 0.01)} steps) | {label} | "
                f"{r['workers']} | {r['start_s']:.2f} | {r['wall_s']:.3f} | "
                f"{r['speedup']:.2f}x | {r['best_speedup']:.2f}x | {1000 * r['step_s']:.2f} | "
                f"{r['overhead_ms']:.1f} | {r['cli_s']:.2f} |")
    loads = ", ".join(f"{d} s runs {r['load'][0]:.2f} to {r['load'][1]:.2f}"
                      for d, r in res.items())
    lines += ["", f"Load average (1 min) over the timed rounds: {loads} (other work on the "
                  "machine takes cores from the workers: rounds then differ by up to 2x, and a "
                  "speed-up above the worker count means that the serial round was slowed "
                  "too)."]
    lines += ["", "Targets (issue 29): the pool >= 1.8x serial, Ray >= 1.6x serial, overhead "
                  "per run after warm-up <= 50 ms. Here:", ""]
    for duration, row in res.items():
        verdicts = []
        for label, target in (("local pool", 1.8), ("local Ray", 1.6)):
            r = row[label]
            met = "met" if r["speedup"] >= target else "not met"
            verdicts.append(f"{label} {r['speedup']:.2f}x ({met}; best round "
                            f"{r['best_speedup']:.2f}x)")
        worst = max(r["overhead_ms"] for k, r in row.items() if k != "load")
        verdicts.append(f"overhead at most {worst:.1f} ms ({'met' if worst <= 50 else 'not met'})")
        lines.append(f"- {duration} s runs: " + ", ".join(verdicts))
    lines.append("")
    return "\n".join(lines)


def _version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:   # noqa: BLE001
        return "not installed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    parser.add_argument("--durations", type=float, nargs="+", default=[2.0, 20.0],
                        help="door run lengths, s (default: 2 20)")
    args = parser.parse_args()
    res = measure(args.durations)
    text = render(res, machine())
    if not args.print_only:
        write_section(SECTION, text)
        print(f"wrote the '{SECTION}' section of bench/results.md", file=sys.stderr)
    print(text)


if __name__ == "__main__":
    main()
