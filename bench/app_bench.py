"""Headless benchmark of the window app: frame time with 1,000 bodies, and physics throughput
with and without the renderer running.

    .venv/bin/python bench/app_bench.py           # ~1-2 min; writes the "## App (headless)"
                                                  # section of bench/results.md
    .venv/bin/python bench/app_bench.py --no-write   # print the numbers only

Every measurement runs in its own subprocess with PYGLET_HEADLESS=1 (an EGL pbuffer window;
on a machine without a GPU that is Mesa's llvmpipe, i.e. software OpenGL on the CPU).

1. Frames: a 1,000-body scene (100 chains of 10 mixed-shape links on ball joints, swinging;
   written to a temporary scene TOML) in `App(scene, 1280, 720)`; after the kernels are
   ready and 5 warm-up frames, 120 frames are drawn one `run_frames(1)` at a time, each
   timed on the wall clock up to `ctx.finish()`.  Once with the ImGui panel (the real app),
   once with the 3D view alone.  The physics thread runs at speed 1 meanwhile.
2. Physics: `scenes/chain.toml` (50 links, dt 1/240, 20 iterations)
   a. in a `PhysicsThread` alone (no window), speed 4 (the API's maximum);
   b. in the `App`, speed 4 (sent as `SetSpeed(4)`), drawing frames back to back;
   each for 5 s of wall time after 0.5 s of settling.  Steps/s = step-count difference /
   wall time; the real-time factor = simulated seconds / wall seconds.  The thread paces to
   real time, so at speed 4 it asks for at most 4 x 240 = 960 steps/s: (a) and (b) show
   whether rendering keeps the thread from its pace, not the solver's headroom.  So also
   c. unpaced: a plain thread calling `World.run(24)` back to back for 5 s, alone and
   d. while the App (its own physics thread paused) draws frames back to back.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from run import machine  # the machine note shared with bench/run.py

ROOT = Path(__file__).resolve().parent.parent
RESULTS_MD = ROOT / "bench" / "results.md"
SECTION = "## App (headless)"
HISTORY = "## History"
CHAIN = ROOT / "scenes" / "chain.toml"
WIDTH, HEIGHT = 1280, 720
FRAMES, WARMUP_FRAMES = 120, 5
SECONDS, SETTLE_S = 5.0, 0.5
SPEED = 4.0
RAW_BATCH = 24  # steps per World.run call when unpaced (= the thread's largest catch-up batch)
READY_TIMEOUT_S = 180.0  # the first run ever compiles the numba kernels

# ---- the 1,000-body scene -------------------------------------------------------------------
CHAINS_X, CHAINS_Y, LINKS = 10, 10, 10
LINK_LEN, SPACING, TOP_Z, TILT = 0.15, 1.0, 3.0, math.radians(35.0)
SHAPES = [
    'type = "box", half_extents = [0.04, 0.03, 0.06]',
    'type = "sphere", radius = 0.05',
    'type = "capsule", radius = 0.03, half_length = 0.045',
    'type = "cylinder", radius = 0.035, half_length = 0.06',
    'type = "ellipsoid", semi_axes = [0.03, 0.045, 0.07]',
]


def thousand_bodies_toml():
    """100 chains of 10 links (box, sphere, capsule, cylinder, ellipsoid in turn) on ball
    joints, hanging from a 10 x 10 grid and starting 35 degrees from vertical so they swing."""
    d = (math.sin(TILT), 0.0, -math.cos(TILT))
    phi = math.pi - TILT  # turns body z onto d about y
    quat = [math.cos(phi / 2), 0.0, math.sin(phi / 2), 0.0]
    lines = ['description = "app_bench: 100 chains x 10 mixed links = 1,000 bodies"',
             "duration = 10.0", "world = { dt = 0.004166666666666667 }",
             "solver = { iterations = 20 }", ""]
    bodies, joints = [], []
    for cx in range(CHAINS_X):
        for cy in range(CHAINS_Y):
            top = ((cx - (CHAINS_X - 1) / 2) * SPACING, (cy - (CHAINS_Y - 1) / 2) * SPACING, TOP_Z)
            prev = "world"
            for k in range(LINKS):
                name = f"c{cx}_{cy}_{k}"
                pos = [top[i] + (k + 0.5) * LINK_LEN * d[i] for i in range(3)]
                anchor = [top[i] + k * LINK_LEN * d[i] for i in range(3)]
                shape = SHAPES[(cx * CHAINS_Y + cy + k) % len(SHAPES)]
                bodies.append(f'  {{ name = "{name}", shape = {{ {shape} }}, mass = 0.1, '
                              f"pos = {pos}, quat = {quat} }},")
                joints.append(f'  {{ name = "j{name}", type = "spherical", body_a = "{prev}", '
                              f'body_b = "{name}", anchor = {anchor}, friction = 0.01 }},')
                prev = name
    return "\n".join(lines + ["bodies = ["] + bodies + ["]", "", "joints = ["] + joints
                     + ["]", ""])


# ---- children (each in its own process) -----------------------------------------------------
def _wait_ready(snapshot, tick):
    deadline = time.perf_counter() + READY_TIMEOUT_S
    while not snapshot().ready:
        if time.perf_counter() > deadline:
            raise RuntimeError("the physics thread was not ready in time")
        tick()


def _gl_info(app):
    info = app.ctx.info
    return {"renderer": info.get("GL_RENDERER", "?"), "version": info.get("GL_VERSION", "?"),
            "framebuffer": list(app.window.get_framebuffer_size())}


def _counts(snap):
    return time.perf_counter(), snap.step, snap.generation


def _rate(start, end, dt):
    (t0, s0, g0), (t1, s1, g1) = start, end
    if g0 != g1:
        raise RuntimeError("the world was replaced during the measurement")
    steps = s1 - s0
    wall = t1 - t0
    return {"steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
            "realtime_factor": steps * dt / wall}


def child_frames(scene, panel):
    from sharnir.app.window import App

    app = App(scene, width=WIDTH, height=HEIGHT, panel=panel)
    try:
        _wait_ready(lambda: app.snapshot, lambda: app.run_frames(1))
        t = time.perf_counter()
        app.run_frames(1)
        app.ctx.finish()
        after_ready = time.perf_counter() - t
        for _ in range(WARMUP_FRAMES):
            app.run_frames(1)
        app.ctx.finish()
        start = _counts(app.snapshot)
        times = []
        for _ in range(FRAMES):
            t = time.perf_counter()
            app.run_frames(1)
            app.ctx.finish()
            times.append(time.perf_counter() - t)
        end = _counts(app.snapshot)
        snap = app.snapshot
        ms = sorted(1000.0 * x for x in times)
        return {"bodies": sum(shape is not None for shape in snap.body_shapes),
                "joints": len(snap.joint_names),
                "panel": panel, "frames": FRAMES, "gl": _gl_info(app),
                "frame_ms": ms, "median_ms": statistics.median(ms),
                "p95_ms": ms[math.ceil(0.95 * len(ms)) - 1], "mean_ms": statistics.fmean(ms),
                "min_ms": ms[0], "max_ms": ms[-1],
                "fps_from_median": 1000.0 / statistics.median(ms),
                "first_frame_after_ready_ms": 1000.0 * after_ready,
                "physics_during": _rate(start, end, snap.dt),
                "physics_rtf_snapshot": snap.realtime_factor, "error": snap.error}
    finally:
        app.close()


def child_thread(scene):
    from sharnir.app.physics_thread import PhysicsThread

    thread = PhysicsThread(scene, speed=SPEED)
    thread.start()
    try:
        _wait_ready(lambda: thread.snapshot, lambda: time.sleep(0.01))
        time.sleep(SETTLE_S)
        start = _counts(thread.snapshot)
        time.sleep(SECONDS)
        snap = thread.snapshot
        end = _counts(snap)
        return {**_rate(start, end, snap.dt), "speed": snap.speed,
                "rtf_snapshot": snap.realtime_factor, "error": snap.error}
    finally:
        thread.stop()


def child_app(scene):
    from sharnir.app.commands import SetSpeed
    from sharnir.app.window import App

    app = App(scene, width=WIDTH, height=HEIGHT)
    try:
        app.thread.send(SetSpeed(SPEED))
        _wait_ready(lambda: app.snapshot, lambda: app.run_frames(1))
        t_end = time.perf_counter() + SETTLE_S
        while time.perf_counter() < t_end:
            app.run_frames(1)
        start = _counts(app.snapshot)
        frames = 0
        t_end = start[0] + SECONDS
        while time.perf_counter() < t_end:
            app.run_frames(1)
            frames += 1
        app.ctx.finish()
        snap = app.snapshot
        end = _counts(snap)
        rate = _rate(start, end, snap.dt)
        return {**rate, "speed": snap.speed, "rtf_snapshot": snap.realtime_factor,
                "frames": frames, "fps": frames / rate["wall_s"], "gl": _gl_info(app),
                "error": snap.error}
    finally:
        app.close()


def child_raw(scene, render):
    """Unpaced stepping in a plain thread (World.run releases the GIL), optionally while the
    App draws frames back to back (its own physics thread paused)."""
    from sharnir.scenes import load_scene

    world = load_scene(scene)
    world.step(0)  # compile / load the kernels
    world.run(RAW_BATCH)
    stop = threading.Event()
    count = [0]

    def loop():
        while not stop.is_set():
            world.run(RAW_BATCH)
            count[0] += RAW_BATCH

    app = None
    if render:
        from sharnir.app.window import App

        app = App(scene, width=WIDTH, height=HEIGHT, paused=True)
        app.run_frames(WARMUP_FRAMES)
    # The App's thread sets a 0.5 ms switch interval while it runs; use the same either way.
    sys.setswitchinterval(0.0005)
    worker = threading.Thread(target=loop)
    worker.start()
    frames = 0
    try:
        time.sleep(SETTLE_S) if app is None else _frames_for(app, SETTLE_S)
        t0, c0 = time.perf_counter(), count[0]
        if app is None:
            time.sleep(SECONDS)
        else:
            frames = _frames_for(app, SECONDS)
        t1, c1 = time.perf_counter(), count[0]
    finally:
        stop.set()
        worker.join()
        if app is not None:
            app.close()
    steps, wall = c1 - c0, t1 - t0
    out = {"steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
           "realtime_factor": steps * world.dt / wall, "batch": RAW_BATCH}
    if render:
        out.update(frames=frames, fps=frames / wall)
    return out


def _frames_for(app, seconds):
    frames, t_end = 0, time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        app.run_frames(1)
        frames += 1
    return frames


# ---- parent ---------------------------------------------------------------------------------
def run_child(*args, env_extra=None):
    env = dict(os.environ, PYGLET_HEADLESS="1", **(env_extra or {}))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def render_section(r, mach):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    gl = r["frames_panel"]["gl"]
    fp, fv = r["frames_panel"], r["frames_view"]
    th, ap, rw, rr = r["thread"], r["app"], r["raw"], r["raw_render"]
    r0 = r["raw_render_lp0"]

    def frow(label, f):
        p = f["physics_during"]
        return (f"| {label} | {f['median_ms']:.1f} | {f['p95_ms']:.1f} | {f['mean_ms']:.1f} "
                f"| {f['min_ms']:.1f}–{f['max_ms']:.1f} | {f['fps_from_median']:.1f} "
                f"| {p['realtime_factor']:.2f} |")

    def prow(label, p, fps=None):
        return (f"| {label} | {p['steps_per_s']:,.0f} | {p['realtime_factor']:.2f} "
                f"| {'—' if fps is None else f'{fps:.1f}'} |")

    lines = [
        SECTION,
        "",
        "Generated by `python bench/app_bench.py` (see bench/README.md); replaced on each of its "
        "runs. **These are llvmpipe (Mesa software OpenGL, rendering on the CPU) numbers on a "
        f"{mach['cpus']}-core VM**, headless (`PYGLET_HEADLESS=1`, EGL pbuffer): the renderer "
        "and the physics thread share the same 2 cores. A GPU desktop will draw far faster. "
        "Each measurement ran in its own process, once.",
        "",
        f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs",
        f"- GL: {gl['renderer']}, {gl['version']}; framebuffer {gl['framebuffer'][0]}x"
        f"{gl['framebuffer'][1]}, 4x MSAA where the driver allows",
        f"- Python {mach['python']}; date {mach['date_utc']}; commit {mach['commit']}, "
        f"tree {dirty}",
        "",
        f"### Frame time, {fp['bodies']:,} bodies on screen ({WIDTH}x{HEIGHT})",
        "",
        f"100 chains of 10 links (box, sphere, capsule, cylinder, ellipsoid in turn; "
        f"{fp['joints']:,} ball joints, dt 1/240, 20 iterations) swinging from a 10 x 10 grid. "
        f"{FRAMES} frames after {WARMUP_FRAMES} warm-up frames, each `run_frames(1)` timed on "
        "the wall clock up to `ctx.finish()`; the physics thread runs at speed 1 meanwhile "
        "(its achieved real-time factor over the frames is in the last column).",
        "",
        "| view | median ms | p95 ms | mean ms | min–max ms | fps (median) | physics RTF |",
        "|---|---:|---:|---:|---:|---:|---:|",
        frow("3D view + ImGui panel (the app)", fp),
        frow("3D view alone (`panel=False`)", fv),
        "",
        f"### Physics with and without rendering (scenes/chain.toml, {SECONDS:g} s wall each)",
        "",
        f"Paced rows: the physics thread at speed {SPEED:g} (the API's maximum), so its ceiling is "
        f"{SPEED:g} x 240 = {SPEED * 240:,.0f} steps/s (RTF {SPEED:g}). Unpaced rows: a plain "
        f"thread calling `World.run({RAW_BATCH})` back to back on the same chain (the solver's "
        "headroom); with rendering, the App draws the chain (its own physics thread paused) "
        "back to back beside it.",
        "",
        "| case | steps/s | real-time factor | frames/s drawn |",
        "|---|---:|---:|---:|",
        prow("paced, PhysicsThread alone (no window)", th),
        prow("paced, inside the App, rendering continuously", ap, ap["fps"]),
        prow("unpaced, thread alone", rw),
        prow("unpaced, while the App renders continuously", rr, rr["fps"]),
        prow("unpaced, while the App renders, `LP_NUM_THREADS=0`", r0, r0["fps"]),
        "",
        f"Rendering costs the paced thread "
        f"{100 * (1 - ap['steps_per_s'] / th['steps_per_s']):.1f} % of its steps/s, and the "
        f"unpaced solver {100 * (1 - rr['steps_per_s'] / rw['steps_per_s']):.1f} %. "
        "Before the window finished each frame in pyglet's glFinish (ctypes, which releases the "
        "GIL; app/window.py), moderngl's calls held the GIL while llvmpipe rasterised and these "
        "rows were 549 (paced) and 1,086 (unpaced) steps/s on this machine. What is left of the "
        "unpaced loss is the two cores shared with llvmpipe's rasteriser threads; with "
        f"`LP_NUM_THREADS=0` ({r0['steps_per_s']:,.0f} steps/s) the render takes longer on one "
        "core and the solver does not gain.",
        "",
    ]
    return "\n".join(lines)


def write_section(section):
    text = RESULTS_MD.read_text(encoding="utf-8") if RESULTS_MD.exists() else ""
    if SECTION in text:  # replace the old section, up to the next "## " heading
        head, _, rest = text.partition(SECTION)
        nxt = rest.find("\n## ")
        tail = rest[nxt + 1:] if nxt >= 0 else ""
        text = head + section + "\n" + tail
    elif HISTORY in text:
        head, _, tail = text.partition(HISTORY)
        text = head + section + "\n" + HISTORY + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS_MD.write_text(text, encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print, do not write results.md")
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        out = {"frames": lambda: child_frames(rest[0], rest[1] == "1"),
               "thread": lambda: child_thread(rest[0]),
               "app": lambda: child_app(rest[0]),
               "raw": lambda: child_raw(rest[0], rest[1] == "1")}[kind]()
        print(json.dumps(out))
        return
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        scene = Path(tmp) / "thousand.toml"
        scene.write_text(thousand_bodies_toml(), encoding="utf-8")
        # LP_NUM_THREADS=0: llvmpipe rasterises in the calling thread (no helper threads),
        # leaving one core free: if the solver is still slow, the cause is the GIL, not CPU.
        for key, child, env in [("frames_panel", ("frames", str(scene), "1"), None),
                                ("frames_view", ("frames", str(scene), "0"), None),
                                ("thread", ("thread", str(CHAIN)), None),
                                ("app", ("app", str(CHAIN)), None),
                                ("raw", ("raw", str(CHAIN), "0"), None),
                                ("raw_render", ("raw", str(CHAIN), "1"), None),
                                ("raw_render_lp0", ("raw", str(CHAIN), "1"),
                                 {"LP_NUM_THREADS": "0"})]:
            print(f"{key} ...", file=sys.stderr, flush=True)
            results[key] = run_child(*child, env_extra=env)
            summary = {k: v for k, v in results[key].items() if k not in ("frame_ms", "gl")}
            print(f"  {json.dumps(summary)}", file=sys.stderr, flush=True)
    section = render_section(results, machine())
    print(section)
    if not args.no_write:
        write_section(section)
        print(f"wrote the '{SECTION}' section of {RESULTS_MD.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
