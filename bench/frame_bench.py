"""A frame's CPU cost: the window's whole frame path (snapshot -> draw list -> renderer, with
and without the panel) for scenes of 1 to 1,000 bodies, at a tiny viewport so that software
rasterisation (Mesa llvmpipe here) does not count.

    .venv/bin/python bench/frame_bench.py            # ~1 min; writes the "## Frame cost"
    .venv/bin/python bench/frame_bench.py --quick    # section of bench/results.md

Each scene runs in a fresh headless (EGL) process: the App opens paused at 64x64 pixels (the
physics thread idle), draws 20 frames to warm up, then 200 frames, each timed around
App.draw_frame: wall time and the drawing thread's CPU time (time.thread_time). Target
(issue 10): <= 3 ms of CPU per frame for 1,000 bodies.
"""
import argparse
import json
import subprocess
import sys
import tempfile

from run import machine, write_section  # shared with bench/run.py

SECTION = "## Frame cost"
SCENES = (("door", 1), ("pyramid", 210), ("ellipsoid_drop", 1000))

CHILD = """
import json, statistics, sys, time
from sharnir.app.window import App
from sharnir.scenes import resolve_scene
scene, panel, frames = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
if sys.argv[4] == "cpu":
    # the CPU side only: every moderngl draw call is skipped (a GPU does that work; llvmpipe
    # here does its vertex stage on this thread, ~0.1 ms per sphere drawn)
    import moderngl
    moderngl.VertexArray.render = lambda self, *args, **kwargs: None
app = App(resolve_scene(scene), width=64, height=64, paused=True, panel=panel)
while not app.snapshot.ready:
    app.run_frames(1)
    time.sleep(0.05)
app.run_frames(20)
wall, cpu = [], []
for _ in range(frames):
    w0, c0 = time.perf_counter(), time.thread_time()
    app.draw_frame()
    cpu.append(time.thread_time() - c0)
    wall.append(time.perf_counter() - w0)
    app.window.flip()
app.close()
print(json.dumps({"wall_ms": 1e3 * statistics.median(wall),
                  "cpu_ms": 1e3 * statistics.median(cpu),
                  "cpu_p95_ms": 1e3 * sorted(cpu)[int(0.95 * len(cpu))]}))
"""


def measure(frames):
    out = {}
    for scene, bodies in SCENES:
        for panel, mode in ((False, "cpu"), (True, "cpu"), (True, "gl")):
            env_cmd = [sys.executable, "-c", CHILD, scene, "1" if panel else "0", str(frames),
                       mode]
            result = subprocess.run(env_cmd, capture_output=True, text=True, timeout=1800,
                                    cwd=tempfile.gettempdir(),
                                    env={**__import__("os").environ, "PYGLET_HEADLESS": "1"})
            if result.returncode != 0:
                raise RuntimeError(result.stderr)
            row = json.loads(result.stdout.strip().splitlines()[-1])
            out[f"{scene}/{'panel' if panel else 'view'}/{mode}"] = dict(row, bodies=bodies)
            print(scene, panel, row, file=sys.stderr)
    return out


def render(res, mach, quick):
    lines = [SECTION, "",
             f"Machine: {mach['cpu']}, {mach['cpus']} cores; commit {mach['commit']}"
             f"{' (dirty)' if mach['dirty'] else ''}; {mach['date_utc']}."
             + (" Quick run." if quick else ""), "",
             "Median per frame of App.draw_frame at 64x64 pixels, paused (`bench/frame_bench.py`):",
             "the drawing thread's CPU time, its 95th percentile and the wall time. 'CPU side'",
             "skips moderngl's draw calls (the work a GPU does: Mesa llvmpipe runs the vertex",
             "stage on the calling thread, about 0.1 ms per sphere); 'with GL' is the whole frame",
             "in software. Target: CPU side <= 3 ms for 1,000 bodies.", "",
             "| scene | bodies | panel | measured | CPU ms | CPU p95 ms | wall ms |",
             "|---|---|---|---|---|---|---|"]
    for key, r in res.items():
        scene, part, mode = key.split("/")
        lines.append(f"| {scene} | {r['bodies']:,} | {'yes' if part == 'panel' else 'no'} "
                     f"| {'CPU side' if mode == 'cpu' else 'with GL'} "
                     f"| {r['cpu_ms']:.2f} | {r['cpu_p95_ms']:.2f} | {r['wall_ms']:.2f} |")
    lines.append("")
    return "\n".join(lines)




def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 frames a scene")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    res = measure(50 if args.quick else 200)
    text = render(res, machine(), args.quick)
    if not args.print_only:
        write_section(SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
