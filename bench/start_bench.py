"""Start-up time: from a fresh process to a moving scene, on a fresh install (an empty kernel
cache: the shipped kernels are unpacked, physics/cache.py), with the kernels compiled (an
empty cache with nothing shipped: every kernel compiles, as after an edit to the physics) and
warm (the kernels cached).

    .venv/bin/python bench/start_bench.py            # ~1 min: 2 fresh and 3 warm runs of each
    .venv/bin/python bench/start_bench.py --compile  # also 1 compile run each (~15 min)
    .venv/bin/python bench/start_bench.py --quick    # 1 fresh and 2 warm runs

Each way in is a fresh process whose whole wall time is measured from just before it starts:
* CLI: `sharnir run SCENE --duration D` until it exits (compile or load, the steps, summary);
* app: the window app headless (PYGLET_HEADLESS=1, EGL) until the first frame whose snapshot
  has stepped (the scene moving on screen).
Writes the `## Start-up` section of bench/results.md (the notes under its "### Earlier
measurements" are kept) and prints it. Targets (issue 27): any scene moving within 20 s of a
fresh install, warm <= 1.5 s.
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
import json, sys, time
from sharnir.app.window import App
from sharnir.scenes import resolve_scene
app = App(resolve_scene(sys.argv[1]), width=640, height=400)
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
HUMANOID = str(ROOT / "tests" / "fixtures" / "mjcf" / "humanoid.xml")
# (label, way in, scene, simulated seconds for the CLI)
CASES = (("door", "cli", "door", 0.5), ("door", "app", "door", None),
         ("biped (contacts, motors)", "cli", "biped", 0.5),
         ("biped (contacts, motors)", "app", "biped", None),
         ("MuJoCo's humanoid (MJCF)", "cli", HUMANOID, 0.5),
         ("ellipsoid_tube (1000 bodies)", "cli", "ellipsoid_tube", 0.05))
COMPILED = {("door", "cli"), ("biped (contacts, motors)", "cli")}   # the --compile runs


def _env(cache):
    env = dict(os.environ, SHARNIR_CACHE_DIR=str(cache), PYGLET_HEADLESS="1")
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # (set in our sandbox; a user's Python caches)
    return env


def _nothing_shipped(cache):
    """Mark the empty cache as if the shipped kernels were unpacked there: all compile."""
    folder = cache / cache_folder_name()
    folder.mkdir(parents=True)
    (folder / ".shipped").touch()


def cache_folder_name():
    out = subprocess.run([sys.executable, "-c", "from sharnir.physics import cache; "
                          "print(cache.cache_dir().name)"], capture_output=True, text=True,
                         check=True, env=_env(tempfile.gettempdir()))
    return out.stdout.split()[-1]


def time_cli(cache, scene, duration):
    start = time.time()
    result = subprocess.run([sys.executable, "-m", "sharnir", "run", scene, "--duration",
                             str(duration)], env=_env(cache), capture_output=True, text=True,
                            timeout=1800, cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return time.time() - start


def time_app(cache, scene, _duration):
    start = time.time()
    result = subprocess.run([sys.executable, "-c", APP_CHILD, scene], env=_env(cache),
                            capture_output=True, text=True, timeout=1800,
                            cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])["end"] - start


def measure(fresh_runs, warm_runs, compile_runs):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n, (label, way, scene, duration) in enumerate(CASES):
            fn = time_cli if way == "cli" else time_app
            fresh = [fn(tmp / f"fresh-{n}-{k}", scene, duration) for k in range(fresh_runs)]
            warm_cache = tmp / f"fresh-{n}-0"   # filled by the first fresh run
            warm = [fn(warm_cache, scene, duration) for _ in range(warm_runs)]
            compiled = []
            if (label, way) in COMPILED:
                for k in range(compile_runs):
                    _nothing_shipped(tmp / f"compile-{n}-{k}")
                    compiled.append(fn(tmp / f"compile-{n}-{k}", scene, duration))
            out[f"{label} / {way}"] = {"fresh_s": fresh, "warm_s": warm,
                                       "compile_s": compiled, "duration": duration}
            print(f"{label} {way}: fresh {fresh}, warm {warm}, compile {compiled}",
                  file=sys.stderr)
    return out


def render(res, mach, quick):
    def cell(xs):
        if not xs:
            return "-"
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
        "Wall seconds from starting a fresh process to a moving scene (`bench/start_bench.py`):",
        "fresh install = an empty kernel cache, the shipped kernels unpacked into it; compile =",
        "an empty cache and nothing shipped (every kernel compiles, in the child process of",
        "physics/warmup.py: a fresh install before the kernels were shipped, or any run after",
        "an edit to the physics); warm = kernels cached. CLI: `sharnir run SCENE --duration D`",
        "to its exit; app: headless, to the first frame with the scene moving. Median (min-max).",
        "",
        "| scene | way in | fresh install (s) | compile (s) | warm (s) |",
        "|---|---|---|---|---|",
    ]
    for key, r in res.items():
        label, way = key.rsplit(" / ", 1)
        how = f"`run --duration {r['duration']}`" if way == "cli" else "app"
        lines.append(f"| {label} | {how} | {cell(r['fresh_s'])} | {cell(r['compile_s'])} | "
                     f"{cell(r['warm_s'])} |")
    lines += ["", "Targets (issue 27): moving within 20 s of a fresh install; warm <= 1.5 s.", ""]
    return "\n".join(lines)


def earlier_notes():
    """The notes kept under "### Earlier measurements" of the section results.md has now."""
    path = ROOT / "bench" / "results.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start = text.find(SECTION + "\n")
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(SECTION))
    body = text[start:end if end >= 0 else len(text)]
    at = body.find(EARLIER)
    return body[at:].rstrip() + "\n" if at >= 0 else ""


EARLIER = "### Earlier measurements"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 fresh and 2 warm runs")
    parser.add_argument("--compile", action="store_true",
                        help="also one run with every kernel compiling (door, biped: CLI)")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    res = measure(1 if args.quick else 2, 2 if args.quick else 3, 1 if args.compile else 0)
    text = render(res, machine(), args.quick) + "\n" + earlier_notes()
    if not args.print_only:
        write_section(SECTION, text)
        (ROOT / "bench" / "start_results.json").write_text(json.dumps(res, indent=1) + "\n")
    print(text)


if __name__ == "__main__":
    main()
