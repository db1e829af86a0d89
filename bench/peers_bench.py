"""MuJoCo side by side: the contact benchmarks timed in MuJoCo and Sharnir in one sitting.

    .venv/bin/python bench/peers_bench.py                 # ~5 min on 2 cores (plus any compiling)
    .venv/bin/python bench/peers_bench.py --quick         # smoke test: 50 steps, 2 repeats
    .venv/bin/python bench/peers_bench.py --threads 1,2   # Sharnir's thread counts (default 1,N)
    .venv/bin/python bench/peers_bench.py --print-only    # do not write bench/results.md

Writes the `## Against MuJoCo, side by side` section of bench/results.md (replacing it if
present, else inserting it before `## History`; every other section is kept as it is).

What it measures (issue 31: on this machine, the 1000-ellipsoid drop >= 8x MuJoCo and the
box pyramid >= 6x MuJoCo, measured in one run):

* scenes/ellipsoid_drop.toml (1000 ellipsoids, dt 0.002 s, 1000 steps; MuJoCo's CG solver)
  and scenes/pyramid.toml (210 boxes in 20 rows, dt 1/240 s, 960 steps; MuJoCo's Newton
  solver), the solvers the issue's MuJoCo numbers used.
* The MJCF is written from Sharnir's own loaded scene (`mjcf()`): the World gives each body's
  name, shape and size, pose, mass and principal inertia, and dt, gravity; the scene file
  (`read_scene`) gives each body's friction, restitution, rolling and spinning.  Every dynamic
  body is a free body whose explicit `<inertial>` is Sharnir's mass and inertia, starting
  at Sharnir's initial pose; the ground plane is a world geom.  Friction = Sharnir's
  (condim 3: sliding friction only, as Sharnir has with rolling = spinning = 0); MuJoCo
  contacts do not bounce (soft, critically damped: default solref).  Everything else is
  MuJoCo's default (solver iterations and tolerance, cone, integrator, solref / solimp,
  margin, multi-point convex collision); the section lists the options used, read back from
  the compiled MjModel.
* Sharnir's threads: the World's `threads` setting (its contact stages run on that many
  threads, with the same bits for any count; World applies it before each kernel call,
  physics/threads.py, so numba.set_num_threads from here would not control it).
  `--threads LIST` (comma-separated; default "1,N", N = numba.config.NUMBA_NUM_THREADS;
  0 = N; deduplicated): every freshly loaded scene gets `world.configure(threads=t)`.
  MuJoCo's `mj_step` runs on one thread.
* Timing, in one process, after a warm-up of both (Sharnir's kernels load from numba's cache,
  or compile on a cold cache, for every thread count; MuJoCo compiles the model and steps it
  a little): per scene, REPEATS repeats, each MuJoCo then Sharnir once per thread count, the
  counts in an order rotated by the repeat (so that no count always runs right after
  MuJoCo).  MuJoCo: a fresh MjData (the initial state) and `mj_step(model, data,
  nstep=steps)`, timed with time.perf_counter (wall) and time.process_time (CPU).  Sharnir: a
  freshly loaded scene and `World.run(steps, chunk=100)`, timed by the Recording's wall_s (the
  time inside the stepping kernel calls, as bench/contacts_bench.py does) and by the
  process's CPU time around the whole call, which counts every thread: on t > 1 threads the
  CPU steps/s is steps per core-second, not a speed.  The steps/s of the whole run() call is
  given too.  Ratios are Sharnir / MuJoCo per thread count: the median of the per-repeat
  ratios (the verdict) and the ratio of the medians; the speed-up of t threads over the
  smallest count is the median of the per-repeat ratios.
* The machine is shared (2 cores; other work may compile numba kernels meanwhile): the
  section gives `uptime` before the warm-up, before the timing and at the end, and for each
  timed run how many cores this process kept busy (its CPU time over the run's wall time: up
  to t for Sharnir on t threads) and how many the rest of the machine did (/proc/stat busy
  time minus this process's CPU time, over the run's wall time); a run on t threads had the
  cores it asked for only while the others stayed at or below cores - t.
* Sanity: the final mean and top height of the dynamic bodies in both simulators, contacts at
  the end (MuJoCo's split by geom pair: ellipsoid-ellipsoid contacts come from its general
  convex collision), the deepest overlap at the end and MuJoCo's warnings, so that a much
  faster run that did not simulate the same thing shows; and whether every Sharnir run of a
  scene, on every thread count, ended in the same bits.
"""
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mujoco
import numba
import numpy as np
from contacts_bench import (  # --threads LIST, shared with bench/contacts_bench.py
    load,
    parse_options,
    rotated,
    threading_note,
)
from run import machine, write_section  # bench/run.py: shared with the other benchmark scripts

from sharnir.physics.shape import Box, Ellipsoid, Plane, Sphere
from sharnir.scenes import build, load_scene, read_scene

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
SECTION = "## Against MuJoCo, side by side"
REPEATS = 5                         # timed repeats per scene (MuJoCo, Sharnir per count)
QUICK_REPEATS, QUICK_STEPS = 2, 50
CHUNK = 100                         # World.run(steps, chunk=CHUNK), as bench/contacts_bench.py
JOBS = {  # key: (scene file, steps, MuJoCo solver, label, target Sharnir / MuJoCo)
    "drop": (SCENES / "ellipsoid_drop.toml", 1000, "CG", "ellipsoid drop, 1000", 8.0),
    "pyramid": (SCENES / "pyramid.toml", 960, "Newton", "pyramid, 210 boxes", 6.0),
}
MJ_TYPES = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{name.upper()}")): name
            for name in ("plane", "sphere", "ellipsoid", "box")}
SOLVERS = {"PGS": "PGS", "CG": "CG", "NEWTON": "Newton"}
ISSUE_MUJOCO = {  # the MuJoCo steps/s the issue quoted (others' runs), for comparison only
    "drop": ("MuJoCo 4.0, CG solver", 97), "pyramid": ("MuJoCo 4.0, Newton solver", 470)}


# ---- the scene in MJCF ---------------------------------------------------------------------
def _num(*xs):
    return " ".join(repr(float(x)) for x in xs)


def _geom(shape, friction):
    """The MJCF geom attributes of a Sharnir shape (sizes: MuJoCo's half sizes / semi-axes)."""
    if isinstance(shape, Plane):
        kind, size = "plane", (0.0, 0.0, 1.0)          # 0 0: infinite
    elif isinstance(shape, Ellipsoid):
        kind, size = "ellipsoid", shape.semi_axes
    elif isinstance(shape, Box):
        kind, size = "box", shape.half_extents
    elif isinstance(shape, Sphere):
        kind, size = "sphere", (shape.radius,)
    else:
        raise SystemExit(f"peers bench: no MJCF for a {type(shape).__name__} shape")
    # condim 3 (the default): sliding friction only; torsional and rolling set to 0 anyway
    return f'type="{kind}" size="{_num(*size)}" friction="{_num(friction, 0.0, 0.0)}"'


def mjcf(path, solver):
    """(MJCF text, facts) of the scene at `path` as Sharnir loads it; facts: dt, gravity,
    Sharnir's iterations, the dynamic bodies' names and the friction coefficients used."""
    world = load_scene(path)
    spec = {b.name: b for b in read_scene(path).bodies}
    settings = world.settings
    names, shapes = world.body_names, world.body_shapes
    mass, inertia = world.body_mass, world.body_inertia
    pos, quat = world.body_pos.copy(), world.body_quat.copy()
    statics, bodies, dynamic, frictions = [], [], [], set()
    for i, (name, shape) in enumerate(zip(names, shapes)):
        if shape is None:                               # body 0, "world": no shape
            continue
        b = spec[name]
        if b.restitution or b.rolling or b.spinning or b.friction_axis is not None:
            raise SystemExit(f"peers bench: {name}: restitution, rolling, spinning or "
                             "anisotropic friction is not matched in the MJCF")
        frictions.add(b.friction)
        geom = _geom(shape, b.friction)
        where = f'pos="{_num(*pos[i])}" quat="{_num(*quat[i])}"'
        if mass[i] == 0:                                # static: a world geom
            statics.append(f'    <geom name="{name}" {where} {geom}/>')
        else:
            dynamic.append(name)
            bodies.append(
                f'    <body name="{name}" {where}>\n'
                "      <freejoint/>\n"
                f'      <inertial pos="0 0 0" mass="{_num(mass[i])}" '
                f'diaginertia="{_num(*inertia[i])}"/>\n'
                f'      <geom name="{name}" {geom}/>\n'
                "    </body>")
    text = "\n".join([
        f'<mujoco model="{Path(path).stem}">',
        f'  <option timestep="{_num(settings["dt"])}" gravity="{_num(*settings["gravity"])}" '
        f'solver="{solver}"/>',
        "  <worldbody>", *statics, *bodies, "  </worldbody>", "</mujoco>", ""])
    facts = {"dt": settings["dt"], "gravity": settings["gravity"],
             "iterations": settings["iterations"], "dynamic": dynamic,
             "friction": sorted(frictions), "mass": float(mass.sum())}
    return text, facts


def _members(enum):
    """(name, value) of a MuJoCo enum's members, without its count (mjN...)."""
    return [(name, v) for name, v in enum.__members__.items() if not name.startswith("mjN")]


def mujoco_options(model):
    """The options the compiled model steps with (to be recorded beside the numbers)."""
    o = model.opt
    disabled = [name[len("mjDSBL_"):].lower() for name, f in _members(mujoco.mjtDisableBit)
                if o.disableflags & int(f)]
    enabled = [name[len("mjENBL_"):].lower() for name, f in _members(mujoco.mjtEnableBit)
               if o.enableflags & int(f)]
    return {
        "solver": SOLVERS[mujoco.mjtSolver(o.solver).name[len("mjSOL_"):]],
        "iterations": o.iterations, "tolerance": o.tolerance,
        "ls_iterations": o.ls_iterations, "ls_tolerance": o.ls_tolerance,
        "cone": mujoco.mjtCone(o.cone).name[len("mjCONE_"):].lower(),
        "integrator": mujoco.mjtIntegrator(o.integrator).name[len("mjINT_"):].lower(),
        "impratio": o.impratio, "noslip_iterations": o.noslip_iterations,
        "ccd_iterations": o.ccd_iterations, "ccd_tolerance": o.ccd_tolerance,
        "solref": tuple(model.geom_solref[0]), "solimp": tuple(model.geom_solimp[0]),
        "margin": float(model.geom_margin.max()), "condim": sorted(set(model.geom_condim)),
        "disabled": disabled or ["none"], "enabled": enabled or ["none"],
    }


# ---- the load on the machine ---------------------------------------------------------------
def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def busy_s():
    """Seconds of CPU time all cores have spent busy since boot (/proc/stat; None elsewhere).
    Steal (the hypervisor running other machines on our cores) counts as busy: those cores
    were not ours either."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(x) for x in fields[:8]]       # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Over a block: wall time, this process's CPU time (every thread: numba's workers
    included), the cores it kept busy (own = CPU / wall: up to t on t threads) and the cores
    the rest of the machine kept busy (others = machine-wide busy time minus ours, over the
    wall time).  A run that asked for t cores had them only while others <= cores - t: on 2
    cores a single-threaded run can share with up to 1 busy core elsewhere, a 2-thread run
    with none.  Others is what the rest of the machine got, not what it asked for: when our
    threads fill every core it reads ~0 however much else waits (the load average shows that)."""

    def __enter__(self):
        self.busy0 = busy_s()
        self.cpu0, self.t0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.cpu0
        busy = busy_s()
        self.own = self.cpu / self.wall
        # (the tick is 10 ms: rough on short runs)
        self.others = (None if busy is None or self.busy0 is None
                       else max(0.0, (busy - self.busy0) / self.wall - self.own))


# ---- one timed run of each -----------------------------------------------------------------
def run_mujoco(model, steps, names):
    data = mujoco.MjData(model)                     # the initial state (qpos0: the MJCF poses)
    with Meter() as m:
        mujoco.mj_step(model, data, nstep=steps)
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
    z = data.xpos[ids, 2]
    ncon = data.ncon
    kinds = {}
    for g1, g2 in data.contact.geom[:ncon]:
        pair = "-".join(sorted((MJ_TYPES.get(int(model.geom_type[g1]), "?"),
                                MJ_TYPES.get(int(model.geom_type[g2]), "?"))))
        kinds[pair] = kinds.get(pair, 0) + 1
    warnings = {name[len("mjWARN_"):].lower(): int(data.warning[int(w)].number)
                for name, w in _members(mujoco.mjtWarning) if data.warning[int(w)].number}
    niter = data.solver_niter[:max(1, data.nisland)]
    return {"wall": m.wall, "cpu": m.cpu, "own": m.own, "others": m.others, "threads": 1,
            "steps_per_s": steps / m.wall, "cpu_steps_per_s": steps / m.cpu,
            "mean_z": float(z.mean()), "top_z": float(z.max()),
            "contacts": int(ncon), "pairs": kinds,
            "depth_mm": 1000 * max(0.0, -float(data.contact.dist[:ncon].min(initial=0.0))),
            "warnings": warnings, "niter": int(niter.max()), "nisland": int(data.nisland),
            "finite": bool(np.isfinite(data.qpos).all())}


def run_sharnir(path, steps, threads):
    world = load(path, threads)
    with Meter() as m:
        rec = world.run(steps, chunk=CHUNK, progress=lambda done, total: None)
    used = numba.get_num_threads()        # the count World set in this thread for its kernels
    dyn = world.body_mass > 0
    z = world.body_pos[dyn, 2]
    cs = world.contact_stats
    state = hashlib.sha1(np.ascontiguousarray(world.body_pos).tobytes()
                         + np.ascontiguousarray(world.body_quat).tobytes()).hexdigest()
    return {"wall": rec.wall_s, "call_wall": m.wall, "cpu": m.cpu, "own": m.own,
            "others": m.others, "threads": threads, "threads_used": used,
            "steps_per_s": steps / rec.wall_s,
            "call_steps_per_s": steps / m.wall, "cpu_steps_per_s": steps / m.cpu,
            "mean_z": float(z.mean()), "top_z": float(z.max()), "contacts": int(cs["points"]),
            "depth_mm": 1000 * float(cs["max_depth"]), "iterations": world.settings["iterations"],
            "finite": bool(np.isfinite(world.body_pos).all()), "state": state}


def initial_heights(path):
    world = load_scene(path)
    z = world.body_pos[world.body_mass > 0, 2]
    return float(z.mean()), float(z.max())


# ---- the whole sitting ---------------------------------------------------------------------
def warm_up(models, counts):
    """Sharnir's kernels from numba's cache (or compiled) on every thread count (one thread
    enters no parallel region: other code paths), MuJoCo stepped a little."""
    tmp = Path(tempfile.mkdtemp(prefix="sharnir_peers_"))
    small = build.ellipsoid_drop(tmp / "warm_drop.toml", nx=2, ny=2, nz=2)
    quiet = dict(chunk=CHUNK, progress=lambda done, total: None)
    for t in counts:
        load(small, t).run(200, **quiet)
        for path, *_rest in JOBS.values():
            load(path, t).run(5, **quiet)
    for key in JOBS:
        mujoco.mj_step(models[key], mujoco.MjData(models[key]), nstep=5)


def run_all(quick, counts):
    uptimes = {"start": uptime()}
    models, facts, xml_s = {}, {}, {}
    for key, (path, _steps, solver, *_rest) in JOBS.items():
        text, facts[key] = mjcf(path, solver)
        t0 = time.perf_counter()
        models[key] = mujoco.MjModel.from_xml_string(text)
        xml_s[key] = time.perf_counter() - t0
        facts[key]["mj_options"] = mujoco_options(models[key])
        facts[key]["start_z"] = initial_heights(path)
        facts[key]["compile_s"] = xml_s[key]
        nbody = models[key].nbody - 1
        if nbody != len(facts[key]["dynamic"]):
            raise SystemExit(f"peers bench: {key}: MuJoCo has {nbody} bodies, Sharnir "
                             f"{len(facts[key]['dynamic'])}")
    print("peers bench: warm-up (Sharnir's kernels: numba's cache, or compiled; threads "
          f"{', '.join(map(str, counts))})", file=sys.stderr)
    t0 = time.perf_counter()
    warm_up(models, counts)
    warm_s = time.perf_counter() - t0
    uptimes["timing"] = uptime()
    repeats = QUICK_REPEATS if quick else REPEATS
    res = {}
    for key, (path, steps, _solver, *_rest) in JOBS.items():
        steps = QUICK_STEPS if quick else steps
        res[key] = {"steps": steps, "mujoco": [], "sharnir": {t: [] for t in counts},
                    "orders": []}
        for r in range(repeats):
            order = rotated(counts, r)
            res[key]["orders"].append(order)
            print(f"peers bench: {path.name}, {steps} steps, repeat {r + 1}/{repeats}: MuJoCo, "
                  + ", ".join(f"Sharnir on {t}" for t in order), file=sys.stderr)
            res[key]["mujoco"].append(run_mujoco(models[key], steps, facts[key]["dynamic"]))
            for t in order:
                res[key]["sharnir"][t].append(run_sharnir(path, steps, t))
    uptimes["end"] = uptime()
    return res, facts, uptimes, warm_s


# ---- the report ----------------------------------------------------------------------------
def _runs(xs):
    return ", ".join(f"{x:,.0f}" for x in xs)


def _thr(t):
    return f"{t} thread{'s' if t != 1 else ''}"


def ratios(r, t):
    """Sharnir on t threads / MuJoCo: (median of per-repeat ratios, ratio of medians), by wall
    and by CPU time."""
    out = {}
    for kind in ("steps_per_s", "cpu_steps_per_s"):
        ours = [s[kind] for s in r["sharnir"][t]]
        theirs = [m[kind] for m in r["mujoco"]]
        out[kind] = (statistics.median(a / b for a, b in zip(ours, theirs)),
                     statistics.median(ours) / statistics.median(theirs))
    return out


def speedups(r, t, base):
    """Per-repeat wall steps/s on t threads over that on `base` threads."""
    return [a["steps_per_s"] / b["steps_per_s"]
            for a, b in zip(r["sharnir"][t], r["sharnir"][base])]


def load_lines(res, cpus, counts):
    """One line per group of timed runs (MuJoCo, Sharnir on each count): cores used, cores
    the rest of the machine kept busy, and the runs short of cores."""
    groups = [("MuJoCo", 1, [x for r in res.values() for x in r["mujoco"]])]
    groups += [(f"Sharnir on {_thr(t)}", t, [x for r in res.values() for x in r["sharnir"][t]])
               for t in counts]
    lines = []
    for name, t, runs in groups:
        own = [x["own"] for x in runs]
        others = [x["others"] for x in runs if x["others"] is not None]
        line = f"  - {name}: this process kept {statistics.median(own):.2f} cores busy (median)"
        if others:
            short = sum(o > cpus - t + 0.05 for o in others)
            line += (f"; the rest of the machine {statistics.median(others):.2f} (min "
                     f"{min(others):.2f}, max {max(others):.2f}); short of cores (others > "
                     f"{cpus} - {t}) in {short} of {len(others)} runs")
        lines.append(line + ".")
    return lines


def render(res, facts, uptimes, warm_s, mach, quick, counts, flag):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    base = counts[0]
    first = next(iter(res.values()))
    repeats = len(first["mujoco"])
    orders = "; ".join(f"repeat {i + 1}: MuJoCo, " + ", ".join(map(str, o))
                       for i, o in enumerate(first["orders"]))
    lines = [
        SECTION,
        "",
        (f"Generated by `python bench/peers_bench.py{flag}`"
         f"{' (quick mode: a smoke test, not a measurement)' if quick else ''}; replaced on each "
         "of its runs. Both simulators measured in one process, one sitting, on this machine: "
         f"per scene {repeats} repeats, each MuJoCo then Sharnir on each thread count "
         f"({', '.join(map(str, counts))}) in an order rotated by the repeat ({orders}), each "
         "run from the scene's initial state, after a warm-up of both."),
        "",
        (f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs. Sharnir's threads: the World's "
         "`threads` setting, `world.configure(threads=t)` on each freshly loaded scene (World "
         "sets numba's count before each kernel call, physics/threads.py); its contact stages "
         "run on t threads, the rest of a step on one, with the same bits for any t. "
         f"numba.config.NUMBA_NUM_THREADS = {numba.config.NUMBA_NUM_THREADS}, "
         f"{threading_note()}. MuJoCo's `mj_step` runs on one thread. **CPU time is the "
         "process's (time.process_time): it counts every thread**, so Sharnir's CPU steps/s on "
         "more than one thread is steps per core-second, not a speed, and its CPU ratio says "
         "how much work, not how fast."),
        (f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}, mujoco "
         f"{mujoco.__version__}; {mach['date_utc']}; commit {mach['commit']}, tree {dirty}"),
        (f"- Load (a shared machine: other engineers compile numba kernels on it): `uptime` "
         f"before the warm-up: `{uptimes['start']}`; after the warm-up ({warm_s:.0f} s), "
         f"before the timing: `{uptimes['timing']}`; at the end: `{uptimes['end']}`."),
        ("- Cores during the timed runs (this process: its CPU time over the run's wall time; "
         "the rest of the machine: /proc/stat busy time, steal included, minus this process's "
         "CPU time, over the wall time; a run on t threads had its cores only while the rest "
         f"kept at most {mach['cpus']} - t busy; what the rest got, not what it asked for: "
         "when our threads fill every core it reads ~0 however much else waits):"),
        *load_lines(res, mach["cpus"], counts),
        ("- Timing: MuJoCo `mj_step(model, data, nstep=steps)` on a fresh MjData, wall by "
         "time.perf_counter; Sharnir `World.run(steps, chunk=100)` on a freshly loaded scene, "
         "wall = Recording.wall_s (kernel calls only, as bench/contacts_bench.py); "
         "CPU = time.process_time over the same calls (every thread; leaves out waiting for a "
         "core); cores = that CPU time over the call's wall time."),
        "",
        ("| scene | steps | simulator | threads | steps/s, wall: median (runs) | steps/s, CPU: "
         "median | cores used | Sharnir / MuJoCo, wall: median of repeat ratios | ratio of "
         f"medians | CPU: median of repeat ratios | ratio of medians | speed-up over {_thr(base)}"
         " |"),
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, r in res.items():
        label = JOBS[key][3]
        mj = [x["steps_per_s"] for x in r["mujoco"]]
        mj_cpu = [x["cpu_steps_per_s"] for x in r["mujoco"]]
        solver = facts[key]["mj_options"]["solver"]
        lines.append(f"| {label} | {r['steps']} | MuJoCo {mujoco.__version__}, {solver} | 1 | "
                     f"{statistics.median(mj):,.1f} ({_runs(mj)}) | "
                     f"{statistics.median(mj_cpu):,.1f} | "
                     f"{statistics.median(x['own'] for x in r['mujoco']):.2f} | | | | | |")
        for t in counts:
            runs = r["sharnir"][t]
            sh = [x["steps_per_s"] for x in runs]
            sh_cpu = [x["cpu_steps_per_s"] for x in runs]
            used = sorted({x["threads_used"] for x in runs})
            tcell = f"{t}" if used == [t] else f"{t} (ran on {', '.join(map(str, used))})"
            rt = ratios(r, t)
            w, c = rt["steps_per_s"], rt["cpu_steps_per_s"]
            up = "" if t == base else f"{statistics.median(speedups(r, t, base)):.2f}x"
            lines.append(
                f"| {label} | {r['steps']} | **Sharnir** | {tcell} | "
                f"**{statistics.median(sh):,.0f}** ({_runs(sh)}) | "
                f"{statistics.median(sh_cpu):,.0f} | "
                f"{statistics.median(x['own'] for x in runs):.2f} | **{w[0]:.2f}x** | "
                f"{w[1]:.2f}x | {c[0]:.2f}x | {c[1]:.2f}x | {up} |")
    lines.append("")
    for key, r in res.items():
        label, target = JOBS[key][3], JOBS[key][4]
        verdicts = []
        for t in counts:
            rt = ratios(r, t)
            w, c = rt["steps_per_s"], rt["cpu_steps_per_s"]
            verdicts.append(
                f"on {_thr(t)} {w[0]:.2f}x by wall time (median of repeat ratios; ratio of "
                f"medians {w[1]:.2f}x): {'**met**' if w[0] >= target else '**not met**'} "
                f"(by CPU time {c[0]:.2f}x: {'met' if c[0] >= target else 'not met'})")
        lines.append(f"- target on the {label} (issue 31): Sharnir >= {target:g}x MuJoCo. "
                     f"Measured {'; '.join(verdicts)}.")
    for t in counts[1:]:
        ups = "; ".join(
            f"{JOBS[key][3]} {statistics.median(speedups(r, t, base)):.2f}x (repeats: "
            f"{', '.join(f'{x:.2f}' for x in speedups(r, t, base))})" for key, r in res.items())
        lines.append(f"- speed-up of {_thr(t)} over {_thr(base)}, by wall time (median of the "
                     f"per-repeat ratios): {ups}.")
    call = "; ".join(
        f"{_thr(t)}: " + ", ".join(
            f"{key} {statistics.median(x['call_steps_per_s'] for x in r['sharnir'][t]):,.0f}"
            for key, r in res.items())
        for t in counts)
    quoted = "; ".join(f"{name}: {sps:,} steps/s on the {JOBS[k][3]} (measured here: "
                       f"{statistics.median(x['steps_per_s'] for x in res[k]['mujoco']):,.0f})"
                       for k, (name, sps) in ISSUE_MUJOCO.items() if k in res)
    lines += [
        (f"- The MuJoCo numbers the issue quoted (others' runs, no longer used by any script): "
         f"{quoted}."),
        (f"- Sharnir's steps/s over the whole `run()` call (with its per-chunk telemetry checks"
         f" and the Recording's allocation): {call}."),
        "",
        "### Sanity: did both simulate the same thing?",
        "",
        ("Heights of the dynamic bodies' centres, contacts and the deepest overlap after the "
         "last timed run of each (all runs start from the same state)."),
        "",
        ("| scene | simulator | mean height, start -> end | top height, start -> end "
         "| contacts at the end | deepest overlap at the end | notes |"),
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for key, r in res.items():
        label = JOBS[key][3]
        z0, top0 = facts[key]["start_z"]
        m = r["mujoco"][-1]
        pairs = ", ".join(f"{k}: {v:,}" for k, v in sorted(m["pairs"].items())) or "none"
        warn = ", ".join(f"{k} x{v}" for k, v in m["warnings"].items()) or "no warnings"
        lines.append(
            f"| {label} | MuJoCo | {z0:.3f} -> {m['mean_z']:.3f} m | {top0:.3f} -> "
            f"{m['top_z']:.3f} m | {m['contacts']:,} ({pairs}) | {m['depth_mm']:.2f} mm | "
            f"{warn}; solver iterations in the last step {m['niter']} (islands "
            f"{m['nisland']}){'' if m['finite'] else '; NON-FINITE state'} |")
        for t in counts:
            s = r["sharnir"][t][-1]
            lines.append(
                f"| {label} | Sharnir, {_thr(t)} | {z0:.3f} -> {s['mean_z']:.3f} m | {top0:.3f} "
                f"-> {s['top_z']:.3f} m | {s['contacts']:,} points (up to 4 per pair) | "
                f"{s['depth_mm']:.2f} mm | {s['iterations']} velocity iterations"
                f"{'' if s['finite'] else '; NON-FINITE state'} |")
    lines.append("")
    for key, r in res.items():
        states = {x["state"] for t in counts for x in r["sharnir"][t]}
        n = sum(len(r["sharnir"][t]) for t in counts)
        same = ("**yes**" if len(states) == 1
                else f"**no**: {len(states)} different end states")
        lines.append(f"- {JOBS[key][3]}: all {n} Sharnir runs (threads "
                     f"{', '.join(map(str, counts))}) ended in the same bits (positions and "
                     f"orientations, SHA-1): {same}.")
    lines += ["", "### The MJCF (written from Sharnir's loaded scene by `mjcf()`)", ""]
    for key in res:
        f, o = facts[key], facts[key]["mj_options"]
        lines.append(
            f"- {JOBS[key][0].name}: {len(f['dynamic'])} free bodies with Sharnir's poses, "
            f"masses (total {f['mass']:,.1f} kg) and principal inertias (`<inertial>`), "
            f"sizes; ground plane; friction {', '.join(f'{x:g}' for x in f['friction'])}; "
            f"timestep {f['dt']:.6g} s, gravity {tuple(f['gravity'])} (Sharnir: "
            f"{f['iterations']} iterations). MuJoCo options: solver {o['solver']}, "
            f"iterations {o['iterations']}, tolerance {o['tolerance']:g}, ls_iterations "
            f"{o['ls_iterations']}, ls_tolerance {o['ls_tolerance']:g}, cone {o['cone']}, "
            f"integrator {o['integrator']}, impratio {o['impratio']:g}, noslip_iterations "
            f"{o['noslip_iterations']}, ccd_iterations {o['ccd_iterations']}, ccd_tolerance "
            f"{o['ccd_tolerance']:g}, solref {_num(*o['solref'])}, solimp "
            f"{' '.join(f'{x:g}' for x in o['solimp'])}, margin {o['margin']:g}, condim "
            f"{', '.join(str(x) for x in o['condim'])}; disabled flags: "
            f"{', '.join(o['disabled'])}; enabled flags: {', '.join(o['enabled'])} "
            f"(compiled in {f['compile_s']:.2f} s).")
    lines += [
        ("- Not matched (each simulator's own way, at its defaults): MuJoCo's contacts are "
         "soft (a little penetration is the spring's working range, solref / solimp above), "
         "Sharnir's are hard with a position pass; MuJoCo's solvers run to their tolerance (up "
         "to the iteration cap), Sharnir runs a fixed number of velocity iterations; MuJoCo's "
         "friction cone is pyramidal (its default), Sharnir's the circle; MuJoCo's margin is 0, "
         "Sharnir's contacts are speculative within 5 mm (physics/contact.py CONTACT_MARGIN); "
         "MuJoCo gives one point per ellipsoid pair (more for flat faces: multi-point convex "
         "collision, on by default), Sharnir up to 4 per pair; no restitution in either "
         "(MuJoCo: critically damped contacts); MuJoCo steps on one thread, Sharnir's contact "
         "stages on the thread count of the row."),
        "",
    ]
    return "\n".join(lines)


def main():
    args, counts, flag = parse_options(
        __doc__.splitlines()[0], f"{QUICK_STEPS} steps, {QUICK_REPEATS} repeats per scene "
        "(smoke test)")
    res, facts, uptimes, warm_s = run_all(args.quick, counts)
    text = render(res, facts, uptimes, warm_s, machine(), args.quick, counts, flag)
    if not args.print_only:
        write_section(SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
