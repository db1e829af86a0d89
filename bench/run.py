"""Sharnir benchmark: stepping speed of the shipped scenes and energy behaviour of the chain.

    python bench/run.py [--quick]

For each scene, one warm-up run of ``sharnir run SCENE --duration D --json`` (fills numba's
kernel cache), then N measured runs, each a fresh process; the speed is the CLI's own
``steps_per_s`` (stepping only, no loading or compiling).  Then the 50-link chain runs
once through the Python API with its mechanical energy sampled every 10 steps.  Writes
``bench/results.md`` (replaced each run, keeping its ``## History`` lines and appending
one) and ``bench/results.json`` (this run's raw numbers).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numba
import numpy as np

from sharnir.physics.transforms import quat_matrices
from sharnir.scenes import load_scene

ROOT = Path(__file__).resolve().parent.parent
RESULTS_MD = ROOT / "bench" / "results.md"
RESULTS_JSON = ROOT / "bench" / "results.json"
SCENES = {"scenes/door.toml": 2.0, "scenes/chain.toml": 10.0}  # scene: simulated seconds
QUICK_SCENES = {"scenes/door.toml": 0.5, "scenes/chain.toml": 1.0}
RUNS, QUICK_RUNS = 5, 1
ENERGY_EVERY = 10  # steps between energy samples
G = 9.81
HISTORY = "## History"
# the sections this script writes itself; every other one (bench/app_bench.py's, bench/
# contacts_bench.py's, bench/sweep.py's, notes by hand) is kept as it was, in its order
OWN_SECTIONS = ("## Machine", "## Speed", "## Chain energy", "## Peers", HISTORY)
PEERS = """\
Measured by others on this machine class (from the issue), the same 50-link chain, not
re-measured here:

| simulator | steps/s |
|---|---:|
| MuJoCo 4.0, implicit integrator, soft friction | 817 |
| MuJoCo 4.0, implicit integrator, hard friction | 385 |
| MuJoCo 4.0, Euler integrator (gains energy) | 3,313 |
| PyBullet | 283 |
| **target for Sharnir** | **>= 10,000 on one core** |
"""


def run_cli(scene, duration):
    """One ``sharnir run`` in a fresh process; returns its JSON summary."""
    cmd = [sys.executable, "-m", "sharnir.app.cli", "run", scene, "--duration", str(duration),
           "--json"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[2:])} failed (status {proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def bench_scene(scene, duration, runs):
    run_cli(scene, duration)  # warm-up, not counted
    summaries = [run_cli(scene, duration) for _ in range(runs)]
    speeds = [s["steps_per_s"] for s in summaries]
    return {
        "scene": scene,
        "duration_s": duration,
        "steps": summaries[0]["steps"],
        "steps_per_s": speeds,
        "median": statistics.median(speeds),
        "min": min(speeds),
        "max": max(speeds),
        "mean_iterations": statistics.fmean(s["mean_iterations"] for s in summaries),
    }


def mechanical_energy(world):
    """sum 1/2 m v^2 + 1/2 w . (R diag(I) R^T w) + m g z over the bodies, without body 0."""
    m, inertia = world.body_mass[1:], world.body_inertia[1:]
    v, w = world.body_vel[1:], world.body_angvel[1:]
    w_body = np.einsum("nji,nj->ni", rotation_matrices(world.body_quat[1:]), w)  # R^T w
    kinetic = 0.5 * (np.sum(m * np.sum(v * v, axis=1)) + np.sum(inertia * w_body * w_body))
    return float(kinetic + G * np.sum(m * world.body_pos[1:, 2]))


def rotation_matrices(q):
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) in (w, x, y, z) order."""
    return quat_matrices(q, normalise=False)


def chain_energy(duration):
    world = load_scene(ROOT / "scenes/chain.toml")
    steps = round(duration / world.dt)
    energy = [mechanical_energy(world)]
    world.run(steps, chunk=ENERGY_EVERY, progress=lambda done, total: energy.append(
        mechanical_energy(world)))
    after = np.array(energy[1:])
    peak = int(np.argmax(after))
    return {
        "steps": steps,
        "sample_every_steps": ENERGY_EVERY,
        "start_J": energy[0],
        "max_J": float(after[peak]),
        "max_at_s": min(ENERGY_EVERY * (peak + 1), steps) * world.dt,
        "end_J": energy[-1],
        "exceeds_start": bool(after[peak] > energy[0]),
    }


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout


def machine():
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo
                if line.startswith("model name")), platform.processor() or "unknown")
    # The generated results do not count as local changes.
    changed = git("status", "--porcelain", "--untracked-files=all", "--", ".",
                  ":!bench/results.md", ":!bench/results.json").splitlines()
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD").strip(),
        "dirty": [line[3:] for line in changed],
    }


def write_section(title, text):
    """Replace the section `title` ("## ...") of results.md by `text`, or insert it before
    the History section (the other benchmark scripts write their sections this way)."""
    old = RESULTS_MD.read_text(encoding="utf-8") if RESULTS_MD.exists() else ""
    start = old.find(title + "\n")
    if start >= 0:
        end = old.find("\n## ", start + len(title))
        end = len(old) if end < 0 else end + 1
        new = old[:start] + text + "\n" + old[end:]
    else:
        at = old.find(HISTORY)
        new = (old[:at] + text + "\n" + old[at:]) if at >= 0 else (old.rstrip() + "\n\n" + text)
    RESULTS_MD.write_text(new, encoding="utf-8")


def old_history():
    """The History lines of the previous results.md, if any."""
    if not RESULTS_MD.exists():
        return []
    _, _, tail = RESULTS_MD.read_text(encoding="utf-8").partition(HISTORY)
    return [line for line in tail.splitlines() if line.startswith("- ")]


def old_app_section():
    """The sections of the previous results.md that this script does not write (the other
    benchmark scripts' and the notes), kept as they were."""
    if not RESULTS_MD.exists():
        return []
    text = RESULTS_MD.read_text(encoding="utf-8")
    kept = []
    for part in ("\n" + text).split("\n## ")[1:]:
        section = "## " + part
        if not section.startswith(OWN_SECTIONS):
            kept += section.rstrip().splitlines() + [""]
    return kept


def render(results, energy, mach, quick, history, app_section=()):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    lines = [
        "# Sharnir benchmark results",
        "",
        f"Generated by `python bench/run.py{' --quick' if quick else ''}`"
        f"{' (quick mode: a smoke test, not a measurement)' if quick else ''}; "
        "see bench/README.md. "
        "Replaced on every run except the History section.",
        "",
        "## Machine",
        "",
        f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs (the solver uses one)",
        f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}",
        f"- Date: {mach['date_utc']}",
        f"- Commit: {mach['commit']}, tree {dirty}",
        "",
        f"## Speed (measured runs per scene after one warm-up: {len(results[0]['steps_per_s'])})",
        "",
        "| scene | simulated | steps | median steps/s | min–max steps/s | mean iterations |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['scene']} | {r['duration_s']:g} s | {r['steps']} | {r['median']:,.0f} "
                     f"| {r['min']:,.0f}–{r['max']:,.0f} | {r['mean_iterations']:.2f} |")
    e = energy
    verdict = (f"**yes**, by {e['max_J'] - e['start_J']:.3g} J" if e["exceeds_start"] else "no")
    lines += [
        "",
        f"## Chain energy ({e['steps']} steps, sampled every {e['sample_every_steps']} steps)",
        "",
        "Mechanical energy of the 50 links (kinetic + gravity, g = 9.81 m/s²); with joint "
        "friction it should only fall.",
        "",
        f"- at start: {e['start_J']:.6f} J",
        f"- max after start: {e['max_J']:.6f} J (t = {e['max_at_s']:.3f} s)",
        f"- at end: {e['end_J']:.6f} J",
        f"- max exceeds start: {verdict}",
        "",
        "## Peers",
        "",
        PEERS,
        *app_section,
        HISTORY,
        "",
        "date, commit, median steps/s of chain and door",
        "",
        *history,
    ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_RUNS} measured run, shorter durations (smoke test)")
    quick = parser.parse_args().quick
    scenes, runs = (QUICK_SCENES, QUICK_RUNS) if quick else (SCENES, RUNS)
    results = []
    for scene, duration in scenes.items():
        print(f"bench: {scene} ({duration:g} s), warm-up + {runs} runs", file=sys.stderr)
        results.append(bench_scene(scene, duration, runs))
    print("bench: chain energy", file=sys.stderr)
    energy = chain_energy(scenes["scenes/chain.toml"])
    mach = machine()
    speed = {Path(r["scene"]).stem: r["median"] for r in results}
    entry = (f"- {mach['date_utc']}, {mach['commit']}{' (dirty)' if mach['dirty'] else ''}"
             f"{', quick' if quick else ''}: chain {speed['chain']:,.0f}, "
             f"door {speed['door']:,.0f}")
    RESULTS_MD.write_text(render(results, energy, mach, quick, old_history() + [entry],
                                 old_app_section()), encoding="utf-8")
    RESULTS_JSON.write_text(json.dumps({"quick": quick, "machine": mach, "scenes": results,
                                        "chain_energy": energy}, indent=2) + "\n",
                            encoding="utf-8")
    print(RESULTS_MD.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
