"""MuJoCo side by side: the contact benchmarks timed in MuJoCo and Sharnir in one sitting.

    .venv/bin/python bench/peers_bench.py               # ~4 min on 2 cores (plus any compiling)
    .venv/bin/python bench/peers_bench.py --quick       # smoke test: 50 steps, 2 pairs per scene
    .venv/bin/python bench/peers_bench.py --threads 2   # Sharnir on 2 numba threads
    .venv/bin/python bench/peers_bench.py --print-only  # do not write bench/results.md

Writes the `## Against MuJoCo, side by side` section of bench/results.md (replacing it if
present, else inserting it before `## History`; every other section is kept as it is).

What it measures (issue 31: on this machine, the 1000-ellipsoid drop >= 8x MuJoCo and the
box pyramid >= 6x MuJoCo, measured in one run):

* scenes/ellipsoid_drop.toml (1000 ellipsoids, dt 0.002 s, 1000 steps; MuJoCo's CG solver)
  and scenes/pyramid.toml (210 boxes in 20 rows, dt 1/240 s, 960 steps; MuJoCo's Newton
  solver), the solvers the issue's copied MuJoCo numbers used.
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
* Timing, in one process, after a warm-up of both (Sharnir's kernels load from numba's cache,
  or compile on a cold cache; MuJoCo compiles the model and steps it a little): per scene,
  REPEATS pairs run in turn, MuJoCo then Sharnir, MuJoCo then Sharnir, ...  MuJoCo: a fresh
  MjData (the initial state) and `mj_step(model, data, nstep=steps)`, timed with
  time.perf_counter (wall) and time.thread_time (this thread's CPU).  Sharnir: a freshly
  loaded scene and `World.run(steps, chunk=100)`, timed by the Recording's wall_s (the time
  inside the stepping kernel calls, as bench/contacts_bench.py does) and by thread CPU time
  around the whole call; the steps/s of the whole run() call is given too.  The ratio is
  Sharnir / MuJoCo: the median of the per-pair ratios (the verdict) and the ratio of the
  medians.
* The machine is shared (2 cores; other work may compile numba kernels meanwhile): the
  section gives `uptime` before the warm-up, before the timing and at the end, and for each
  timed run how many cores the rest of the machine kept busy (/proc/stat busy time minus
  this process's CPU time, over the run's wall time).
* Sanity: the final mean and top height of the dynamic bodies in both simulators, contacts at
  the end (MuJoCo's split by geom pair: ellipsoid-ellipsoid contacts come from its general
  convex collision), the deepest overlap at the end and MuJoCo's warnings, so that a much
  faster run that did not simulate the same thing shows.
"""
import argparse
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
from contacts_bench import PEERS as COPIED  # the peer numbers copied from the issue
from run import machine, write_section  # bench/run.py: shared with the other benchmark scripts

from sharnir.physics.shape import Box, Ellipsoid, Plane, Sphere
from sharnir.scenes import build, load_scene, read_scene

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
SECTION = "## Against MuJoCo, side by side"
REPEATS = 5                         # timed pairs per scene (MuJoCo, Sharnir)
QUICK_REPEATS, QUICK_STEPS = 2, 50
CHUNK = 100                         # World.run(steps, chunk=CHUNK), as bench/contacts_bench.py
JOBS = {  # key: (scene file, steps, MuJoCo solver, label, target Sharnir / MuJoCo)
    "drop": (SCENES / "ellipsoid_drop.toml", 1000, "CG", "ellipsoid drop, 1000", 8.0),
    "pyramid": (SCENES / "pyramid.toml", 960, "Newton", "pyramid, 210 boxes", 6.0),
}
MJ_TYPES = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{name.upper()}")): name
            for name in ("plane", "sphere", "ellipsoid", "box")}
SOLVERS = {"PGS": "PGS", "CG": "CG", "NEWTON": "Newton"}


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
    """Seconds of CPU time all cores have spent busy since boot (/proc/stat; None elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(x) for x in fields[:8]]       # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Wall, thread CPU, process CPU and machine-wide busy time over a block."""

    def __enter__(self):
        self.busy0, self.proc0 = busy_s(), time.process_time()
        self.cpu0, self.t0 = time.thread_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.thread_time() - self.cpu0
        own = time.process_time() - self.proc0
        busy = busy_s()
        # cores the rest of the machine kept busy meanwhile (the tick is 10 ms: rough)
        self.others = (None if busy is None or self.busy0 is None
                       else max(0.0, (busy - self.busy0 - own) / self.wall))


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
    return {"wall": m.wall, "cpu": m.cpu, "others": m.others, "steps_per_s": steps / m.wall,
            "cpu_steps_per_s": steps / m.cpu, "mean_z": float(z.mean()), "top_z": float(z.max()),
            "contacts": int(ncon), "pairs": kinds,
            "depth_mm": 1000 * max(0.0, -float(data.contact.dist[:ncon].min(initial=0.0))),
            "warnings": warnings, "niter": int(niter.max()), "nisland": int(data.nisland),
            "finite": bool(np.isfinite(data.qpos).all())}


def run_sharnir(path, steps):
    world = load_scene(path)
    world.body_pos  # noqa: B018 (builds the model before the clock starts)
    with Meter() as m:
        rec = world.run(steps, chunk=CHUNK, progress=lambda done, total: None)
    dyn = world.body_mass > 0
    z = world.body_pos[dyn, 2]
    cs = world.contact_stats
    return {"wall": rec.wall_s, "call_wall": m.wall, "cpu": m.cpu,
            "others": m.others, "steps_per_s": steps / rec.wall_s,
            "call_steps_per_s": steps / m.wall, "cpu_steps_per_s": steps / m.cpu,
            "mean_z": float(z.mean()), "top_z": float(z.max()), "contacts": int(cs["points"]),
            "depth_mm": 1000 * float(cs["max_depth"]), "iterations": world.settings["iterations"],
            "finite": bool(np.isfinite(world.body_pos).all())}


def initial_heights(path):
    world = load_scene(path)
    z = world.body_pos[world.body_mass > 0, 2]
    return float(z.mean()), float(z.max())


# ---- the whole sitting ---------------------------------------------------------------------
def warm_up(models):
    """Sharnir's kernels from numba's cache (or compiled), MuJoCo stepped a little."""
    tmp = Path(tempfile.mkdtemp(prefix="sharnir_peers_"))
    small = build.ellipsoid_drop(tmp / "warm_drop.toml", nx=2, ny=2, nz=2)
    load_scene(small).run(200, chunk=CHUNK, progress=lambda done, total: None)
    for key, (path, *_rest) in JOBS.items():
        load_scene(path).run(5, chunk=CHUNK, progress=lambda done, total: None)
        mujoco.mj_step(models[key], mujoco.MjData(models[key]), nstep=5)


def run_all(quick):
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
    print("peers bench: warm-up (Sharnir's kernels: numba's cache, or compiled)", file=sys.stderr)
    t0 = time.perf_counter()
    warm_up(models)
    warm_s = time.perf_counter() - t0
    uptimes["timing"] = uptime()
    repeats = QUICK_REPEATS if quick else REPEATS
    res = {}
    for key, (path, steps, _solver, *_rest) in JOBS.items():
        steps = QUICK_STEPS if quick else steps
        res[key] = {"steps": steps, "mujoco": [], "sharnir": []}
        for r in range(repeats):
            print(f"peers bench: {path.name}, {steps} steps, pair {r + 1}/{repeats}: MuJoCo, "
                  "Sharnir", file=sys.stderr)
            res[key]["mujoco"].append(run_mujoco(models[key], steps, facts[key]["dynamic"]))
            res[key]["sharnir"].append(run_sharnir(path, steps))
    uptimes["end"] = uptime()
    return res, facts, uptimes, warm_s


# ---- the report ----------------------------------------------------------------------------
def _runs(xs):
    return ", ".join(f"{x:,.0f}" for x in xs)


def ratios(r):
    """Sharnir / MuJoCo: (median of per-pair ratios, ratio of medians), by wall and CPU time."""
    out = {}
    for kind in ("steps_per_s", "cpu_steps_per_s"):
        ours = [s[kind] for s in r["sharnir"]]
        theirs = [m[kind] for m in r["mujoco"]]
        out[kind] = (statistics.median(a / b for a, b in zip(ours, theirs)),
                     statistics.median(ours) / statistics.median(theirs))
    return out


def render(res, facts, uptimes, warm_s, mach, quick, threads):
    dirty = f"dirty ({', '.join(mach['dirty'])})" if mach["dirty"] else "clean"
    flag = (" --quick" if quick else "") + (f" --threads {threads}" if threads else "")
    repeats = len(res["drop"]["mujoco"])
    others = [x["others"] for r in res.values() for sim in ("mujoco", "sharnir")
              for x in r[sim] if x["others"] is not None]
    lines = [
        SECTION,
        "",
        (f"Generated by `python bench/peers_bench.py{flag}`"
         f"{' (quick mode: a smoke test, not a measurement)' if quick else ''}; replaced on each "
         "of its runs. Both simulators measured in one process, one sitting, on this machine: "
         f"per scene {repeats} pairs in turn (MuJoCo, Sharnir, MuJoCo, Sharnir, ...), each from "
         "the scene's initial state, after a warm-up of both."),
        "",
        (f"- CPU: {mach['cpu']}, {mach['cpus']} logical CPUs. numba threads for Sharnir: "
         f"{numba.get_num_threads()} ("
         f"{f'`--threads {threads}`' if threads else 'numba default, no `--threads`'}; "
         "it matters only to kernels that run in parallel: the solver's were serial when this "
         "script was written); MuJoCo's `mj_step` runs on one thread. The CPU columns count "
         "the calling thread only."),
        (f"- Python {mach['python']}, numpy {mach['numpy']}, numba {mach['numba']}, mujoco "
         f"{mujoco.__version__}; {mach['date_utc']}; commit {mach['commit']}, tree {dirty}"),
        (f"- Load (a shared machine: other engineers compile numba kernels on it): `uptime` "
         f"before the warm-up: `{uptimes['start']}`; after the warm-up ({warm_s:.0f} s), "
         f"before the timing: `{uptimes['timing']}`; at the end: `{uptimes['end']}`."),
    ]
    if others:
        lines.append(
            f"- During the timed runs the rest of the machine kept {statistics.median(others):.2f}"
            f" cores busy (median over the runs; min {min(others):.2f}, max {max(others):.2f}; "
            "/proc/stat busy time minus this process's CPU time, over each run's wall time); "
            "with 2 cores, anything near or above 1 means the timed thread shared a core.")
    lines += [
        ("- Timing: MuJoCo `mj_step(model, data, nstep=steps)` on a fresh MjData, wall by "
         "time.perf_counter; Sharnir `World.run(steps, chunk=100)` on a freshly loaded scene, "
         "wall = Recording.wall_s (kernel calls only, as bench/contacts_bench.py); "
         "CPU = time.thread_time over the same calls (leaves out waiting for a core)."),
        "",
        ("| scene | steps | simulator | steps/s, wall: median (runs) | steps/s, CPU: median "
         "| Sharnir / MuJoCo, wall: median of pair ratios | ratio of medians | CPU: median of "
         "pair ratios | ratio of medians |"),
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, r in res.items():
        label = JOBS[key][3]
        rt = ratios(r)
        mj = [x["steps_per_s"] for x in r["mujoco"]]
        mj_cpu = [x["cpu_steps_per_s"] for x in r["mujoco"]]
        sh = [x["steps_per_s"] for x in r["sharnir"]]
        sh_cpu = [x["cpu_steps_per_s"] for x in r["sharnir"]]
        solver = facts[key]["mj_options"]["solver"]
        lines.append(f"| {label} | {r['steps']} | MuJoCo {mujoco.__version__}, {solver} | "
                     f"{statistics.median(mj):,.1f} ({_runs(mj)}) | "
                     f"{statistics.median(mj_cpu):,.1f} | | | | |")
        w, c = rt["steps_per_s"], rt["cpu_steps_per_s"]
        lines.append(f"| {label} | {r['steps']} | **Sharnir** | **{statistics.median(sh):,.0f}** "
                     f"({_runs(sh)}) | {statistics.median(sh_cpu):,.0f} | **{w[0]:.2f}x** | "
                     f"{w[1]:.2f}x | {c[0]:.2f}x | {c[1]:.2f}x |")
    lines.append("")
    for key, r in res.items():
        label, target = JOBS[key][3], JOBS[key][4]
        w, c = ratios(r)["steps_per_s"], ratios(r)["cpu_steps_per_s"]
        met = "**met**" if w[0] >= target else "**not met**"
        lines.append(
            f"- target on the {label} (issue 31): Sharnir >= {target:g}x MuJoCo. Measured "
            f"{w[0]:.2f}x by wall time (median of pair ratios; ratio of medians {w[1]:.2f}x): "
            f"{met}; by CPU time {c[0]:.2f}x: {'met' if c[0] >= target else 'not met'}.")
    call = {k: statistics.median(x["call_steps_per_s"] for x in r["sharnir"])
            for k, r in res.items()}
    copied = "; ".join(f"{name}: {sps:,} steps/s on the {JOBS[k][3]} (measured here: "
                       f"{statistics.median(x['steps_per_s'] for x in res[k]['mujoco']):,.0f})"
                       for k in res for name, sps in COPIED.get(k, ()) if name.startswith("MuJoCo"))
    lines += [
        (f"- The MuJoCo numbers bench/contacts_bench.py copies from the issue: {copied}."),
        (f"- Sharnir's steps/s over the whole `run()` call (with its per-chunk telemetry checks"
         f" and the Recording's allocation): drop {call['drop']:,.0f}, pyramid "
         f"{call['pyramid']:,.0f}."),
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
        m, s = r["mujoco"][-1], r["sharnir"][-1]
        pairs = ", ".join(f"{k}: {v:,}" for k, v in sorted(m["pairs"].items())) or "none"
        warn = ", ".join(f"{k} x{v}" for k, v in m["warnings"].items()) or "no warnings"
        lines.append(
            f"| {label} | MuJoCo | {z0:.3f} -> {m['mean_z']:.3f} m | {top0:.3f} -> "
            f"{m['top_z']:.3f} m | {m['contacts']:,} ({pairs}) | {m['depth_mm']:.2f} mm | "
            f"{warn}; solver iterations in the last step {m['niter']} (islands "
            f"{m['nisland']}){'' if m['finite'] else '; NON-FINITE state'} |")
        lines.append(
            f"| {label} | Sharnir | {z0:.3f} -> {s['mean_z']:.3f} m | {top0:.3f} -> "
            f"{s['top_z']:.3f} m | {s['contacts']:,} points (up to 4 per pair) | "
            f"{s['depth_mm']:.2f} mm | {s['iterations']} velocity iterations"
            f"{'' if s['finite'] else '; NON-FINITE state'} |")
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
         "(MuJoCo: critically damped contacts)."),
        "",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_STEPS} steps, {QUICK_REPEATS} pairs per scene (smoke test)")
    parser.add_argument("--threads", type=int, default=0, metavar="N",
                        help="numba threads for Sharnir (numba.set_num_threads); default: "
                             "numba's own default")
    parser.add_argument("--print-only", action="store_true", help="do not write results.md")
    args = parser.parse_args()
    if args.threads:
        if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
            parser.error(f"--threads must be 1..{numba.config.NUMBA_NUM_THREADS} "
                         "(numba.config.NUMBA_NUM_THREADS)")
        numba.set_num_threads(args.threads)
    res, facts, uptimes, warm_s = run_all(args.quick)
    text = render(res, facts, uptimes, warm_s, machine(), args.quick, args.threads)
    if not args.print_only:
        write_section(SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
