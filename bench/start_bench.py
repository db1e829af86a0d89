"""Start-up time: from a fresh process to a moving door, with an empty kernel cache (cold) and
with the kernels cached (warm).

    .venv/bin/python bench/start_bench.py            # ~3 min: 2 cold and 5 warm runs of each
    .venv/bin/python bench/start_bench.py --quick    # 1 cold and 2 warm runs

Two ways in, each in a fresh process whose whole wall time is measured from just before it
is started:
* CLI: `sharnir run door --duration 0.5` until it exits (compile or load, 50 steps, summary);
* app: the window app headless (PYGLET_HEADLESS=1, EGL) on the door, until the first frame
  whose snapshot has stepped (the door moving on screen).
Cold runs get an empty SHARNIR_CACHE_DIR each (every kernel compiles); warm runs share one
filled before they start. Writes the `## Start-up` section of bench/results.md (bench/run.py
keeps it) and prints it. Targets (issue 10): cold <= 60 s, warm <= 2 s to a moving door.
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

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Start-up"

APP_CHILD = """
import json, time
from sharnir.app.window import App
from sharnir.scenes import resolve_scene
app = App(resolve_scene("door"), width=640, height=400)
frames = 0
while True:
    app.run_frames(1)
    frames += 1
    time.sleep(1 / 60)  # the window's frame interval (pyglet.app.run), not a busy loop
    snap = app.snapshot
    if snap.ready and snap.step > 0:
        break
print(json.dumps({"end": time.time(), "frames": frames, "step": snap.step}))
app.close()
"""


def _env(cache):
    env = dict(os.environ, SHARNIR_CACHE_DIR=str(cache), PYGLET_HEADLESS="1")
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def time_cli(cache):
    start = time.time()
    result = subprocess.run([sys.executable, "-m", "sharnir", "run", "door", "--duration",
                             "0.5"], env=_env(cache), capture_output=True, text=True,
                            timeout=1800, cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return time.time() - start


def time_app(cache):
    start = time.time()
    result = subprocess.run([sys.executable, "-c", APP_CHILD], env=_env(cache),
                            capture_output=True, text=True, timeout=1800,
                            cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])["end"] - start


def measure(cold_runs, warm_runs):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (("cli", time_cli), ("app", time_app)):
            cold = [fn(Path(tmp) / f"cold-{name}-{k}") for k in range(cold_runs)]
            warm_cache = Path(tmp) / f"warm-{name}"
            fn(warm_cache)  # fills it
            warm = [fn(warm_cache) for _ in range(warm_runs)]
            out[name] = {"cold_s": cold, "warm_s": warm}
            print(f"{name}: cold {cold}, warm {warm}", file=sys.stderr)
    return out


def render(res, mach, quick):
    def cell(xs):
        if len(xs) == 1:
            return f"{xs[0]:.1f}"
        return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"

    lines = [
        SECTION,
        "",
        f"Machine: {mach['cpu']}, {mach['cpus']} cores; commit {mach['commit']}"
        f"{' (dirty)' if mach['dirty'] else ''}; {mach['date_utc']}."
        + (" Quick run." if quick else ""),
        "",
        "Wall seconds from starting a fresh process to a moving door (`bench/start_bench.py`):",
        "cold = empty kernel cache (every kernel compiles, in the child process of",
        "physics/warmup.py), warm = kernels cached. Median (min-max) over the runs.",
        "",
        "| way in | cold (s) | warm (s) | target |",
        "|---|---|---|---|",
        f"| `sharnir run door --duration 0.5` | {cell(res['cli']['cold_s'])} | "
        f"{cell(res['cli']['warm_s'])} | cold <= 60, warm <= 2 |",
        f"| app, headless, first frame with the door moving | {cell(res['app']['cold_s'])} | "
        f"{cell(res['app']['warm_s'])} | cold <= 60, warm <= 2 |",
        "",
        "The door needs no contact stages: its kernel is compiled without them (41 kernels;",
        "a scene with contacts compiles 118, about three times as long).",
        "",
    ]
    return "\n".join(lines)




def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 cold and 2 warm runs")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    res = measure(1 if args.quick else 2, 2 if args.quick else 5)
    text = render(res, machine(), args.quick)
    if not args.print_only:
        write_section(SECTION, text)
        (ROOT / "bench" / "start_results.json").write_text(json.dumps(res, indent=1) + "\n")
    print(text)


if __name__ == "__main__":
    main()
