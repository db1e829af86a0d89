"""Parameter sweeps: ``sharnir sweep SPEC.toml`` runs one scene over a grid and/or seeded random
samples of any ``--set`` value and reduces named channels of each run to a row of numbers.

The spec (TOML, no code in it)::

    scene = "door"                       # a shipped scene's name, or a path (from its folder)
    duration = 2.0                       # s simulated per run
    set = ["solver.iterations=200"]      # optional: --set overrides of every run
    seed = 1                             # the random samples' seed (default 0)
    samples = 16                         # random draws (with [[random]]); runs = grid x draws
    timeout = 60.0                       # optional: wall-clock seconds a run may take (0: none)

    [[grid]]
    path = "joints.hinge.friction"       # any --set path ...
    values = [10.0, 20.0, 30.0]          # ... or linspace = [10, 30, 5], geomspace = [1, 100, 3]
    [[grid]]
    path = "loads.0.torque.2"            # ... or one component of a vector ([x, y, z][2])
    name = "push"                        # the column's name (default: the path)
    values = [40.0, 55.0, 70.0]

    [[random]]
    path = "world.dt"
    uniform = [0.005, 0.01]              # or loguniform = [a, b], integers = [a, b], choice = [...]

    [[metrics]]
    name = "stop_angle"                  # the column (default: "<reduce>(<channel>)")
    channel = "joint.hinge.angle"        # CHANNELS below
    reduce = "final"                     # REDUCERS below

Channels: ``joint.J.angle`` (or ``.position``, ``.coord``), ``joint.J.rate`` (``.velocity``),
``joint.J.friction``, ``joint.J.sliding``, ``joint.J.fx`` .. ``joint.J.tz`` (its sensor);
``motor.J.voltage``, ``.current``, ``.torque``, ``.speed`` (the motor on joint J);
``body.B.x``, ``.y``, ``.z`` (its centre of mass); ``contact.B.fx`` .. ``contact.B.tz`` (its
contact sensor); ``energy``, ``energy.kinetic``, ``energy.potential`` (the dynamic bodies'
mechanical energy, J, each step); ``solver.iterations``, ``solver.residual``.

Every run is a fresh world: ``read_scene(scene, set + the run's values)``, ``build_world``,
``World.run(round(duration / dt))``, the reducers. A run that fails (a bad value, a blow-up, any
error, longer than ``timeout`` seconds of wall-clock time: checked every `TIMEOUT_CHUNK` steps)
is a row with its error; the sweep goes on. Runs are deterministic (with the scene's
time budget off, budget_ms = 0), so a second ``sharnir sweep`` into the same folder skips the
rows it finds there and runs the rest (resume); a spec, scene or physics that changed since is
refused unless ``--restart``.

Backends (`Backend`): ``serial`` (this process), ``local`` (default: a pool of processes; the
kernels are loaded, or compiled, once here before the fan-out, and each worker loads them from
the cache, physics/cache.py) and ``ray`` (Ray tasks on a local or remote cluster:
``--address`` or ``$RAY_ADDRESS``; the extra ``sharnir[ray]``). The spec is the same for all.

Outputs in the folder ``--out``: ``runs.csv`` (a row per run, written as each run finishes),
``runs.parquet`` (sorted by run, when pyarrow is importable), ``sweep.json`` (the spec, the
machine, the backend, counts and times) and ``<metric>.png`` plots (a line over one swept
parameter, a heat map over two; matplotlib, the extra ``sharnir[plots]``).

Nothing here imports GL: this module runs in worker processes and on cluster nodes.
"""
import contextlib
import csv
import hashlib
import io
import itertools
import json
import math
import os
import platform
import re
import signal
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..physics.message import listing, quoted
from .cli import CliError, _version

CSV_NAME, PARQUET_NAME, JSON_NAME = "runs.csv", "runs.parquet", "sweep.json"
FIXED_COLUMNS = ("status", "error", "steps", "step_s", "wall_s")
INTERRUPTED_STATUS = 130
MAX_RUNS = 1_000_000
ERROR_CHARS = 400   # an error message is cut to this in the CSV
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")   # numba's coloured messages

REDUCERS = {
    "final": "the value at the last step",
    "initial": "the value at the first step",
    "min": "the smallest value",
    "max": "the largest value",
    "max_abs": "the largest magnitude",
    "mean": "the mean over the steps",
    "rms": "the root mean square",
    "range": "max - min",
    "integral": "the sum of value x dt over the steps",
    "time_of_min": "the time of the (first) smallest value, s",
    "time_of_max": "the time of the (first) largest value, s",
    "stop_time": "the time of the first step with |value| <= tol after one with |value| > "
                 "tol (tol default 1e-9), s; empty if it never moves or never stops",
    "first_above": "the time of the first step with value > level, s; empty if none",
    "first_below": "the time of the first step with value < level, s; empty if none",
}
_NEEDS = {"stop_time": "tol", "first_above": "level", "first_below": "level"}
_JOINT_CHANNELS = {"angle": 0, "position": 0, "coord": 0, "rate": 1, "velocity": 1,
                   "friction": 2, "sliding": 3, "fx": 8, "fy": 9, "fz": 10, "tx": 11,
                   "ty": 12, "tz": 13}
_MOTOR_CHANNELS = {"voltage": 4, "current": 5, "torque": 6, "speed": 7}
_AXES = {"x": 0, "y": 1, "z": 2}
_CONTACT_CHANNELS = {"fx": 0, "fy": 1, "fz": 2, "tx": 3, "ty": 4, "tz": 5}
_ENERGY = {"energy": 0, "energy.total": 0, "energy.kinetic": 1, "energy.potential": 2}
_SOLVER = {"solver.iterations": 0, "solver.residual": 1}
CHANNELS = ("joint.J.{" + ",".join(_JOINT_CHANNELS) + "}", "motor.J.{"
            + ",".join(_MOTOR_CHANNELS) + "}", "body.B.{x,y,z}",
            "contact.B.{" + ",".join(_CONTACT_CHANNELS) + "}",
            "energy[.kinetic|.potential]", "solver.{iterations,residual}")
_GRID_KINDS = ("values", "linspace", "geomspace")
_RANDOM_KINDS = ("uniform", "loguniform", "integers", "choice")
_TOP_KEYS = ("scene", "description", "duration", "set", "seed", "samples", "timeout", "grid",
             "random", "metrics")
TIMEOUT_CHUNK = 64   # steps between a run's checks of its timeout


class SweepError(CliError):
    """A bad spec, option or output folder: one ``sharnir: error:`` line, status 2."""


# --- the spec -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parameter:
    """One swept value: `path` (a --set path, maybe ending in a vector's component index),
    its column `name`, and either grid `values` or a random distribution (`kind`, `args`)."""
    path: str
    name: str
    where: str
    values: tuple = ()
    kind: str = "values"
    args: tuple = ()


@dataclass(frozen=True)
class Metric:
    name: str
    channel: str
    reduce: str
    tol: float = 1e-9
    level: float = 0.0


@dataclass
class Spec:
    file: Path
    scene: str            # a shipped scene's name or an absolute path
    duration: float
    sets: tuple
    grid: tuple
    random: tuple
    samples: int
    seed: int
    metrics: tuple
    raw: dict = field(repr=False, default_factory=dict)
    timeout: float = 0.0  # s of wall-clock time a run may take, 0: no limit

    @property
    def parameters(self):
        return self.grid + self.random

    @property
    def columns(self):
        return ("run", *(p.name for p in self.parameters), *(m.name for m in self.metrics),
                *FIXED_COLUMNS)


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)


def read_spec(path):
    """Read and check a sweep spec; a SweepError names the file, the entry and the problem."""
    path = Path(path)
    src = str(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise SweepError(f"cannot read {src}: {exc.strerror or exc}") from None
    try:
        raw = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise SweepError(f"{src}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{src}: not valid TOML: {exc}") from None
    return spec_from_raw(raw, path)


def spec_from_raw(raw, path):
    """Check a spec's parsed TOML (`raw`) as read from the file `path` (its folder is where a
    scene file's path starts); a SweepError names the file, the entry and the problem."""
    path = Path(path)
    src = str(path)

    def fail(where, message):
        raise SweepError(f"{src}: {where}: {message}")

    unknown = [k for k in raw if k not in _TOP_KEYS]
    if unknown:
        fail(quoted(unknown[0]), f"unknown key (the keys: {', '.join(_TOP_KEYS)})")
    scene = raw.get("scene")
    if not isinstance(scene, str) or not scene:
        fail("scene", "required: a shipped scene's name or a scene file's path")
    scene = _scene_ref(scene, path.parent, lambda m: fail("scene", m))
    duration = raw.get("duration")
    if not _number(duration) or not 0 < duration <= 1e6:
        fail("duration", f"required: simulated seconds per run, > 0 and at most 1e6 "
                         f"(got {duration!r})")
    sets = raw.get("set", [])
    if not isinstance(sets, list) or not all(isinstance(s, str) and "=" in s for s in sets):
        fail("set", 'expected a list of "KEY=VALUE" strings, as sharnir run --set takes')
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        fail("seed", f"expected a whole number >= 0 (got {seed!r})")
    grid = tuple(_parameter(e, f"grid[{i}]", fail, random=False)
                 for i, e in enumerate(_tables(raw, "grid", fail)))
    random = tuple(_parameter(e, f"random[{i}]", fail, random=True)
                   for i, e in enumerate(_tables(raw, "random", fail)))
    samples = raw.get("samples", 0 if not random else None)
    if random and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
        fail("samples", f"expected the number of random draws, >= 1 (got {samples!r})")
    if not random and samples not in (0, None):
        fail("samples", "given without any [[random]] parameter")
    timeout = raw.get("timeout", 0.0)
    if not _number(timeout) or not 0 <= timeout <= 1e7:
        fail("timeout", f"expected wall-clock seconds a run may take, >= 0 (0: no limit; got "
                        f"{timeout!r})")
    if not grid and not random:
        fail("grid", "nothing to sweep: add a [[grid]] or a [[random]] parameter")
    metrics = tuple(_metric(e, f"metrics[{i}]", fail)
                    for i, e in enumerate(_tables(raw, "metrics", fail)))
    if not metrics:
        fail("metrics", "required: at least one [[metrics]] entry (channel, reduce)")
    seen = {"run": "a fixed column", **dict.fromkeys(FIXED_COLUMNS, "a fixed column")}
    for p in (*grid, *random):
        if p.path in {q.path for q in (*grid, *random) if q is not p}:
            fail(p.where, f"path {quoted(p.path)} is swept twice")
    for item in (*grid, *random, *metrics):
        where = getattr(item, "where", None) or "metrics"
        if item.name in seen:
            fail(where, f"column name {quoted(item.name)} is taken ({seen[item.name]})")
        seen[item.name] = "another column"
    runs = math.prod(len(p.values) for p in grid) * (samples or 1)
    if runs > MAX_RUNS:
        fail("grid", f"{runs} runs; at most {MAX_RUNS} in one sweep")
    return Spec(path, scene, float(duration), tuple(sets), grid, random, samples or 0, seed,
                metrics, raw, float(timeout))


def _scene_ref(scene, base, fail):
    """A shipped scene's name as it is (each machine finds its own copy), else the absolute
    path of the file, relative to the spec's folder."""
    from ..scenes import shipped_scenes

    if "/" not in scene and "\\" not in scene and scene in shipped_scenes():
        return scene
    file = (base / Path(scene).expanduser()).resolve()
    if not file.is_file():
        fail(f"no scene file {file} and no shipped scene {quoted(scene)} (sharnir --list)")
    return str(file)


def _tables(raw, key, fail):
    entries = raw.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        fail(key, f"expected an array of tables ([[{key}]])")
    return entries


def _parameter(entry, where, fail, random):
    kinds = _RANDOM_KINDS if random else _GRID_KINDS
    allowed = ("path", "name", *kinds)
    for key in entry:
        if key not in allowed:
            fail(where, f"unknown key {quoted(key)} (the keys: {', '.join(allowed)})")
    path = entry.get("path")
    if not isinstance(path, str) or not path or not all(path.split(".")):
        fail(where, "path: required: a dotted --set path such as joints.hinge.friction")
    where = f"{where} {quoted(path)}"
    name = entry.get("name", path)
    if not isinstance(name, str) or not name or any(c in name for c in ",\n\r\"/"):
        fail(where, "name: expected a column name without commas, quotes or slashes")
    given = [k for k in kinds if k in entry]
    if len(given) != 1:
        fail(where, f"expected exactly one of {', '.join(kinds)}")
    kind = given[0]
    value = entry[kind]
    if not isinstance(value, list) or not value:
        fail(where, f"{kind}: expected a non-empty list")
    if kind in ("values", "choice"):
        if len({_toml(v) for v in value}) != len(value):
            fail(where, f"{kind}: a value is listed twice")
        if kind == "values":
            return Parameter(path, name, where, tuple(value))
        return Parameter(path, name, where, tuple(value), kind, tuple(value))
    if kind in ("linspace", "geomspace"):
        if (len(value) != 3 or not all(map(_number, value)) or isinstance(value[2], float)
                or value[2] < 1):
            fail(where, f"{kind}: expected [start, stop, count] (count a whole number >= 1)")
        if kind == "geomspace" and (value[0] <= 0 or value[1] <= 0):
            fail(where, "geomspace: start and stop must be > 0")
        if value[2] > MAX_RUNS:
            fail(where, f"{kind}: at most {MAX_RUNS} values")
        make = np.linspace if kind == "linspace" else np.geomspace
        values = tuple(float(v) for v in make(value[0], value[1], int(value[2])))
        if len(set(values)) != len(values):
            fail(where, f"{kind}: the values are not distinct")
        return Parameter(path, name, where, values)
    if len(value) != 2 or not all(map(_number, value)) or not value[0] <= value[1]:
        fail(where, f"{kind}: expected [low, high] with low <= high")
    if kind == "loguniform" and value[0] <= 0:
        fail(where, "loguniform: low must be > 0")
    if kind == "integers" and not all(isinstance(v, int) for v in value):
        fail(where, "integers: expected whole numbers [low, high] (both included)")
    return Parameter(path, name, where, (), kind, tuple(value))


def _metric(entry, where, fail):
    allowed = ("name", "channel", "reduce", "tol", "level")
    for key in entry:
        if key not in allowed:
            fail(where, f"unknown key {quoted(key)} (the keys: {', '.join(allowed)})")
    channel, reduce = entry.get("channel"), entry.get("reduce")
    if not isinstance(channel, str) or not channel:
        fail(where, f"channel: required, one of {', '.join(CHANNELS)}")
    if reduce not in REDUCERS:
        fail(where, f"reduce: {quoted(str(reduce))} is not one of {', '.join(REDUCERS)}")
    for key in ("tol", "level"):
        if key in entry:
            if _NEEDS.get(reduce) != key:
                fail(where, f"{key}: only for the reducers "
                            f"{', '.join(r for r, k in _NEEDS.items() if k == key)}")
            if not _number(entry[key]) or (key == "tol" and entry[key] < 0):
                fail(where, f"{key}: expected a finite number" + (" >= 0" if key == "tol"
                                                                   else ""))
    if _NEEDS.get(reduce) == "level" and "level" not in entry:
        fail(where, f"level: required by {reduce}")
    name = entry.get("name", f"{reduce}({channel})")
    if not isinstance(name, str) or not name or any(c in name for c in ",\n\r\"/"):
        fail(where, "name: expected a column name without commas, quotes or slashes")
    return Metric(name, channel, reduce, float(entry.get("tol", 1e-9)),
                  float(entry.get("level", 0.0)))


def _toml(value):
    """A value as TOML text for --set (floats by repr: they read back to the same bits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} as TOML")


# --- the runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    index: int
    values: tuple   # one per spec.parameters
    sets: tuple     # the --set strings of the run (the spec's, then its own)


def draws(spec):
    """The random parameters' values, `spec.samples` rows (seeded; the same on every
    machine: numpy's PCG64)."""
    rng = np.random.default_rng(spec.seed)
    rows = []
    for _ in range(spec.samples):
        row = []
        for p in spec.random:
            lo, hi = p.args[0], p.args[-1]
            if p.kind == "uniform":
                row.append(float(rng.uniform(lo, hi)))
            elif p.kind == "loguniform":
                row.append(float(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
            elif p.kind == "integers":
                row.append(int(rng.integers(lo, hi, endpoint=True)))
            else:
                row.append(p.args[int(rng.integers(0, len(p.args)))])
        rows.append(tuple(row))
    return rows or [()]


class Planner:
    """Turns parameter values into --set strings; a path that ends in an index of a vector
    (`loads.0.torque.2`) becomes the whole vector, the scene's (after the spec's `set`) with
    that component replaced."""

    def __init__(self, spec, base):
        self.spec = spec
        self.vectors = {}   # parameter index -> (parent path, component, base vector)
        for k, p in enumerate(spec.parameters):
            parent, _, last = p.path.rpartition(".")
            if not last.isdigit() or not parent:
                continue
            vector = _lookup(base, parent)
            if isinstance(vector, (list, tuple)) and all(map(_number, vector)):
                if int(last) >= len(vector):
                    raise SweepError(f"{spec.file}: {p.where}: {parent} has "
                                     f"{len(vector)} components (0 to {len(vector) - 1})")
                self.vectors[k] = (parent, int(last), list(vector))

    def sets(self, values):
        out, merged = list(self.spec.sets), {}
        for k, value in enumerate(values):
            if k in self.vectors:
                parent, i, base = self.vectors[k]
                merged.setdefault(parent, list(base))[i] = value
            else:
                out.append(f"{self.spec.parameters[k].path}={_toml(value)}")
        out += [f"{parent}={_toml(v)}" for parent, v in merged.items()]
        return tuple(out)

    def runs(self):
        grid = itertools.product(*(p.values for p in self.spec.grid))
        combos = itertools.product(grid, draws(self.spec))
        return [Run(i, g + r, self.sets(g + r)) for i, (g, r) in enumerate(combos)]


def _lookup(scene, path):
    """The value at a dotted --set path in a validated SceneSpec (entries of bodies, joints and
    keyframes by name, others by index), or None."""
    node = scene.model_dump(by_alias=True)
    for depth, part in enumerate(path.split(".")):
        if isinstance(node, list):
            named = [e for e in node if isinstance(e, dict) and e.get("name") == part]
            if depth == 1 and len(named) == 1:
                node = named[0]
            elif part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


# --- one run (in a worker) ------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What every run shares, sent to each worker once."""
    scene: str
    duration: float
    metrics: tuple
    base_sets: tuple
    timeout: float = 0.0


class RunTimeout(Exception):
    """A run past its job's timeout (its row's error)."""


_warmed = set()


def warm(job):
    """Make the step kernels of the job's scene ready in this process: loaded from the cache
    (physics/cache.py) where the parent put them; compiled if they are not there."""
    key = (job.scene, job.base_sets)
    if key in _warmed:
        return
    from ..physics.warmup import compile_step
    from ..scenes import build_world, read_scene

    with contextlib.suppress(Exception):   # a scene that fails is each run's row to report
        compile_step(build_world(read_scene(job.scene, job.base_sets)))
    _warmed.add(key)


def run_one(job, index, sets):
    """One run: a fresh world of the scene with `sets`, run for the job's duration, reduced
    to the job's metrics. Never raises: a failure is the row's status and error."""
    start = time.perf_counter()
    row = {"run": index, "status": "ok", "error": "", "steps": 0, "step_s": 0.0}
    try:
        warm(job)
        row.update(_simulate(job, sets))
    except Exception as exc:   # noqa: BLE001 -- every failure of a run is its row
        message = " ".join(_ANSI.sub("", str(exc)).split()) or type(exc).__name__
        if not _expected(exc):
            message = f"{type(exc).__name__}: {message}"
        row.update(status="error", error=message[:ERROR_CHARS])
        for m in job.metrics:
            row.setdefault(m.name, None)
    row["wall_s"] = time.perf_counter() - start
    return row


def _expected(exc):
    from ..physics import CheckpointError, SimulationError
    from ..scenes import SceneError

    return isinstance(exc, (SceneError, SimulationError, CheckpointError, ValueError,
                            RunTimeout))


def _simulate(job, sets):
    from ..scenes import build_world, read_scene

    world = build_world(read_scene(job.scene, sets), source=str(job.scene))
    steps = round(job.duration / world.dt)
    if steps < 1:
        raise ValueError(f"duration {job.duration:g} s is shorter than half a time step "
                         f"(dt = {world.dt:g} s)")
    sources = [channel_source(world, m.channel) for m in job.metrics]
    bodies = any(s[0] == "body" for s in sources)
    energy = np.zeros((steps, 3)) if any(s[0] == "energy" for s in sources) else None
    start = time.perf_counter()

    def progress(done, _total):
        if energy is not None:
            energy[done - 1] = mechanical_energy(world)
        if job.timeout and time.perf_counter() - start > job.timeout and done < steps:
            raise RunTimeout(f"stopped at t = {done * world.dt:.6g} s of {job.duration:g} s: "
                             f"over the timeout of {job.timeout:g} s of wall-clock time")
    chunk = 1 if energy is not None else TIMEOUT_CHUNK if job.timeout else 0
    rec = world.run(steps, record_bodies=bodies, chunk=chunk,
                    progress=progress if chunk else None)
    row = {"steps": steps, "step_s": rec.wall_s}
    for m, s in zip(job.metrics, sources):
        row[m.name] = reduce_series(m, rec.t, _series(rec, s, energy))
    return row


def channel_source(world, channel):
    """(kind, index, component) of a channel name in this world; ValueError naming the
    choices when it is not there."""
    parts = channel.split(".")
    head = parts[0]
    if channel in _ENERGY:
        return ("energy", 0, _ENERGY[channel])
    if channel in _SOLVER:
        return ("stats", 0, _SOLVER[channel])
    if head in ("joint", "motor", "body", "contact") and len(parts) >= 3:
        name, what = ".".join(parts[1:-1]), parts[-1]
        if head in ("joint", "motor"):
            names = list(world.joint_names)
            if name not in names:
                raise ValueError(f"channel {quoted(channel)}: no joint {quoted(name)} (the "
                                 f"joints: {listing(names)})")
            j = names.index(name)
            table = _JOINT_CHANNELS if head == "joint" else _MOTOR_CHANNELS
            if what not in table:
                raise ValueError(f"channel {quoted(channel)}: {head} channels are "
                                 f"{', '.join(table)}")
            if head == "motor" and j not in {int(i) for i in world.motor_state["joint"]}:
                raise ValueError(f"channel {quoted(channel)}: joint {quoted(name)} has no "
                                 "motor")
            return ("joint", j, table[what])
        names = list(world.body_names)
        if name not in names or names.index(name) == 0:
            raise ValueError(f"channel {quoted(channel)}: no body {quoted(name)} (the "
                             f"bodies: {listing(names[1:])})")
        i = names.index(name)
        if head == "body":
            if what not in _AXES:
                raise ValueError(f"channel {quoted(channel)}: body channels are x, y, z")
            return ("body", i, _AXES[what])
        sensors = [int(b) for b in world.sensor_bodies]
        if i not in sensors:
            raise ValueError(f"channel {quoted(channel)}: body {quoted(name)} has no contact "
                             "sensor (a dynamic body with a shape held by a joint)")
        if what not in _CONTACT_CHANNELS:
            raise ValueError(f"channel {quoted(channel)}: contact channels are "
                             f"{', '.join(_CONTACT_CHANNELS)}")
        return ("contact", sensors.index(i), _CONTACT_CHANNELS[what])
    raise ValueError(f"channel {quoted(channel)}: not one of {', '.join(CHANNELS)}")


def _series(rec, source, energy):
    kind, i, k = source
    if kind == "joint":
        return rec.joint[:, i, k]
    if kind == "body":
        return rec.body_pos[:, i, k]
    if kind == "contact":
        return rec.contact[:, i, k]
    if kind == "stats":
        return rec.stats[:, k]
    return energy[:, k]


def mechanical_energy(world):
    """(total, kinetic, potential) J of the dynamic bodies: m v^2 / 2 + L . w / 2 - m g . x
    (physics/energy.py's sum, from the state the step keeps)."""
    from ..physics.model import DYNAMIC

    model, state, _ = world._ready()
    dynamic = model.body_kind == DYNAMIC
    m = np.zeros(len(dynamic))
    m[dynamic] = 1.0 / model.body_inv_mass[dynamic]
    q = state.body_quat
    # L in the body's principal frame (rotate by the conjugate), w = I^-1 L there
    lb = _rotate_back(q, state.body_angmom)
    rot = 0.5 * np.sum(lb * lb * model.body_inv_inertia, axis=1)
    kinetic = 0.5 * m * np.sum(state.body_vel ** 2, axis=1) + rot
    g = np.asarray(world.settings["gravity"], dtype=float)
    potential = -m * (state.body_pos @ g)
    ke, pe = float(kinetic[dynamic].sum()), float(potential[dynamic].sum())
    return ke + pe, ke, pe


def _rotate_back(q, v):
    """Each v rotated by the conjugate of its quaternion q (w, x, y, z)."""
    w, u = q[:, :1], -q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def reduce_series(metric, t, x):
    """The metric's reducer over the series x at times t; None where it is not defined."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return None
    r = metric.reduce
    if r == "final":
        value = x[-1]
    elif r == "initial":
        value = x[0]
    elif r == "min":
        value = x.min()
    elif r == "max":
        value = x.max()
    elif r == "max_abs":
        value = np.abs(x).max()
    elif r == "mean":
        value = x.mean()
    elif r == "rms":
        value = math.sqrt(float(np.mean(x * x)))
    elif r == "range":
        value = x.max() - x.min()
    elif r == "integral":
        dt = t[0] if len(t) == 1 else t[1] - t[0]
        value = float(x.sum()) * dt
    elif r == "time_of_min":
        value = t[int(np.argmin(x))]
    elif r == "time_of_max":
        value = t[int(np.argmax(x))]
    elif r == "stop_time":
        moving = np.abs(x) > metric.tol
        if not moving.any():
            return None
        after = np.flatnonzero(~moving[np.argmax(moving):])
        if after.size == 0:
            return None
        value = t[int(np.argmax(moving)) + int(after[0])]
    else:
        hit = np.flatnonzero(x > metric.level if r == "first_above" else x < metric.level)
        if hit.size == 0:
            return None
        value = t[int(hit[0])]
    value = float(value)
    return value if math.isfinite(value) else None


# --- backends -------------------------------------------------------------------------------


class Backend:
    """Runs tasks (index, sets) of a Job and yields their rows as they finish."""

    name = "serial"

    def start(self, job):
        self.job = job

    def rows(self, tasks):
        for index, sets in tasks:
            yield run_one(self.job, index, sets)

    def stop(self):
        """Abandon the runs in flight (Ctrl+C)."""

    def close(self):
        pass

    def describe(self):
        return {"backend": self.name, "workers": 1}


def run_batch(job, batch):
    """The rows of a batch of tasks (index, sets), run one after the other, in a worker (of
    the pool, or Ray's) that takes one core: its steps run on one thread."""
    _one_thread()
    return [run_one(job, index, sets) for index, sets in batch]


def _one_thread():
    """A worker's steps on one thread (the workers share the cores; and a forked pool worker
    must not start threads of its own: physics/threads.py). The same rows either way."""
    from ..physics import threads

    threads.cap(1)


def _lost(job, index, message):
    """The row of a run whose worker was lost."""
    return {"run": index, "status": "error", "steps": 0, "step_s": 0.0, "wall_s": 0.0,
            "error": message[:ERROR_CHARS], **{m.name: None for m in job.metrics}}


class _Batcher:
    """Hands out the tasks in batches sized so that a batch takes about `target_s` (from the
    runs' mean time so far; one run a batch until the first come back), and never more than
    a share of what is left that keeps every worker busy to the end: the hand-off between
    processes (about a millisecond) then stays small beside runs of a few milliseconds.
    `timing` (a backend's [runs, seconds], updated here) carries the mean over its calls.
    `share`: a batch is at most 1 / (share x workers) of what is left -- 2 where a hand-off
    is cheap (the pool: small batches even out the end), 1 where it is not (Ray: the batches
    halve, so a few tasks carry the runs and the last ones are still small)."""

    def __init__(self, tasks, workers, target_s, timing=None, share=2):
        self.tasks = list(tasks)
        self.next = 0
        self.workers, self.target_s, self.share = workers, target_s, share
        self.timing = [0, 0.0] if timing is None else timing

    @property
    def runs(self):
        return self.timing[0]

    def take(self):
        left = len(self.tasks) - self.next
        if left <= 0:
            return []
        size = 1
        if self.runs:
            size = int(self.target_s / max(self.timing[1] / self.runs, 1e-6))
        size = max(1, min(size, left // (self.share * self.workers) or 1))
        batch = self.tasks[self.next:self.next + size]
        self.next += len(batch)
        return batch

    def done(self, rows):
        self.timing[0] += len(rows)
        self.timing[1] += sum(r.get("wall_s") or 0.0 for r in rows)

    def give_back(self, batch):
        """Tasks of a batch that never ran go out again."""
        self.tasks[self.next:self.next] = list(batch)


def _worker_init(job):
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl+C is the parent's to handle
    _one_thread()
    warm(job)


def _pool_run(batch):
    return run_batch(_POOL_JOB, batch)


_POOL_JOB = None


def _pool_init(job):
    global _POOL_JOB
    _POOL_JOB = job
    _worker_init(job)


class PoolBackend(Backend):
    """A pool of local processes (concurrent.futures). On Linux they fork from this process
    after its kernels are loaded; elsewhere (spawn) each loads them from the cache once. Runs
    go out in batches of about BATCH_S of work (_Batcher)."""

    name = "local"
    BATCH_S = 0.05

    def __init__(self, jobs=None):
        self.jobs = jobs or os.cpu_count() or 1
        self.pool = None
        self.timing = [0, 0.0]   # runs done and their seconds, for the batches' size

    def _start_pool(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self.pool = ProcessPoolExecutor(self.jobs, multiprocessing.get_context(method),
                                        initializer=_pool_init, initargs=(self.job,))

    def start(self, job):
        self.job = job
        self._start_pool()

    def rows(self, tasks):
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        batcher = _Batcher(tasks, self.jobs, self.BATCH_S, self.timing)
        pending = {}
        suspects = []   # runs in flight when a worker died: each runs again alone
        solo = []       # the suspect running alone now

        def fill():
            if suspects or solo:
                if not pending:
                    solo[:] = [suspects.pop()]
                    pending[self.pool.submit(_pool_run, list(solo))] = list(solo)
                return
            while len(pending) < 2 * self.jobs:
                batch = batcher.take()
                if not batch:
                    return
                pending[self.pool.submit(_pool_run, batch)] = batch

        fill()
        while pending:
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            lost = []
            for future in done:
                batch = pending.pop(future)
                try:
                    rows = future.result()
                except BrokenProcessPool:
                    lost += batch
                    continue
                solo.clear()
                batcher.done(rows)
                yield from rows
            if lost:
                # A worker died (killed, out of memory, crashed) and the pool with it. Which
                # run killed it is known only when it ran alone: that one is a failed row;
                # otherwise every run in flight goes again, each alone, on a new pool.
                self.pool.shutdown(wait=False, cancel_futures=True)
                lost += [task for batch in pending.values() for task in batch]
                pending.clear()
                if solo and lost == solo:
                    yield _lost(self.job, solo[0][0], "the worker process running it died "
                                                      "(killed, out of memory or crashed)")
                else:
                    suspects.extend(reversed(lost))
                solo.clear()
                self._start_pool()
            fill()

    def stop(self):
        if self.pool is None:
            return
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:   # the runs in flight are dropped: a resume runs them again
            with contextlib.suppress(Exception):
                p.terminate()
        for p in processes:
            with contextlib.suppress(Exception):
                p.join(5)
        self.pool = None

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def describe(self):
        return {"backend": self.name, "workers": self.jobs}


def import_ray():
    try:
        import ray
    except ImportError:
        raise SweepError("the ray backend needs Ray: pip install 'sharnir[ray]'") from None
    return ray


class RayBackend(Backend):
    """Ray tasks (one CPU each) on the cluster at `address` (or $RAY_ADDRESS), or on a local
    instance started here (and stopped at the end) when neither is given. Every node needs
    sharnir installed (same version); its kernels come from its own cache (README, Sweeps).
    Runs go out in batches of about BATCH_S of work (_Batcher): a Ray task costs more to
    hand out than a pool's."""

    name = "ray"
    BATCH_S = 0.2

    def __init__(self, address=None, jobs=None):
        self.ray = import_ray()
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.jobs = jobs
        self.started = False
        self.refs = {}
        self.timing = [0, 0.0]   # runs done and their seconds, for the batches' size

    def start(self, job):
        ray = self.ray
        self.job = job
        if not ray.is_initialized():
            kwargs = dict(include_dashboard=False, log_to_driver=False,
                          logging_level="ERROR", configure_logging=True)
            try:
                if self.address:
                    ray.init(address=self.address, **kwargs)
                else:
                    ray.init(num_cpus=self.jobs or os.cpu_count(), **kwargs)
            except Exception as exc:   # noqa: BLE001 -- ConnectionError, RuntimeError, ...
                where = self.address or "a local instance"
                raise SweepError(f"cannot start Ray ({where}): "
                                 f"{' '.join(str(exc).split())[:300]}") from None
            self.started = True
        self.remote = ray.remote(num_cpus=1, max_retries=0)(run_batch)
        self.job_ref = ray.put(job)
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def rows(self, tasks):
        ray = self.ray
        batcher = _Batcher(tasks, self.cpus, self.BATCH_S, self.timing, share=1)

        def fill():
            while len(self.refs) < 2 * self.cpus:
                batch = batcher.take()
                if not batch:
                    return
                self.refs[self.remote.remote(self.job_ref, batch)] = batch

        fill()
        while self.refs:
            done, _ = ray.wait(list(self.refs), num_returns=1, timeout=0.5)
            for ref in done:
                batch = self.refs.pop(ref)
                try:
                    rows = ray.get(ref)
                except Exception as exc:   # noqa: BLE001 -- a worker lost, a node gone
                    message = f"Ray: {type(exc).__name__}: {' '.join(str(exc).split())}"
                    rows = [_lost(self.job, index, message) for index, _ in batch]
                batcher.done(rows)
                yield from rows
            fill()

    def stop(self):
        for ref in list(self.refs):
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
        self.refs.clear()
        self.close()

    def close(self):
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = False

    def describe(self):
        ray = self.ray
        out = {"backend": self.name, "address": self.address or "local"}
        with contextlib.suppress(Exception):
            out["workers"] = self.cpus
            out["nodes"] = len([n for n in ray.nodes() if n.get("Alive")])
        return out


def make_backend(name, jobs=None, address=None):
    if name == "serial":
        return Backend()
    if name == "local":
        return PoolBackend(jobs)
    if name == "ray":
        return RayBackend(address, jobs)
    raise SweepError(f"unknown backend {quoted(name)} (serial, local, ray)")


# --- the sweep ------------------------------------------------------------------------------


def machine():
    """The machine the sweep ran on (for sweep.json)."""
    import numba

    cpu = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "sharnir": _version(),
            "platform": platform.platform(), "host": platform.node()}


def fingerprint(spec):
    """What the rows depend on: the spec's contents, the scene file's, and the physics
    sources' hash (the kernels' cache key)."""
    from ..physics import cache

    def digest(data):
        return hashlib.sha256(data).hexdigest()[:16]

    scene = Path(spec.scene)
    scene_bytes = scene.read_bytes() if scene.is_file() else spec.scene.encode()
    return {"spec": digest(json.dumps(spec.raw, sort_keys=True, default=str).encode()),
            "scene": digest(scene_bytes), "physics": cache.source_hash()}


class Output:
    """The sweep's folder: the CSV (streamed, resumable), sweep.json, Parquet and plots."""

    def __init__(self, folder, spec, restart=False):
        self.folder = Path(folder)
        self.spec = spec
        self.columns = list(spec.columns)
        self.csv_path = self.folder / CSV_NAME
        self.json_path = self.folder / JSON_NAME
        if self.folder.exists() and not self.folder.is_dir():
            raise SweepError(f"cannot write {self.folder}: it is a file, not a folder")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"cannot write {self.folder}: {exc.strerror or exc}") from None
        self.rows = {}
        if restart:
            for name in (CSV_NAME, PARQUET_NAME, JSON_NAME):
                with contextlib.suppress(FileNotFoundError):
                    (self.folder / name).unlink()
        self._resume()

    def _resume(self):
        """Read the finished rows of an earlier run of the same sweep (a torn last line is
        dropped) and rewrite the CSV with them; refuse another sweep's folder."""
        if not self.csv_path.exists():
            return
        here = fingerprint(self.spec)
        try:
            before = json.loads(self.json_path.read_text(encoding="utf-8"))["fingerprint"]
        except (OSError, ValueError, KeyError, TypeError):
            before = None
        if before != here:
            what = ("no sweep.json" if not isinstance(before, dict) else ", ".join(
                f"the {k}" for k in here if before.get(k) != here[k]) + " changed")
            raise SweepError(f"{self.folder} holds the rows of another sweep ({what}); give "
                             "another --out, or --restart to replace them")
        text = self.csv_path.read_text(encoding="utf-8", errors="replace")
        if not text.endswith("\n"):
            text = text[:text.rfind("\n") + 1]   # a line torn by a kill: run again
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header != self.columns:
            raise SweepError(f"{self.csv_path}: its columns are not this sweep's; give "
                             "another --out, or --restart to replace it")
        for cells in reader:
            if len(cells) != len(self.columns) or not cells[0].isdigit():
                continue
            row = dict(zip(self.columns, cells))
            if row["status"] in ("ok", "error"):
                self.rows[int(cells[0])] = _typed(row, self.spec)

    def open(self):
        fresh = not self.rows
        temp = self.folder / f".{CSV_NAME}.part"
        with open(temp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(self.columns)
            for index in sorted(self.rows):
                writer.writerow(self._cells(self.rows[index]))
        os.replace(temp, self.csv_path)
        self.handle = open(self.csv_path, "a", newline="", encoding="utf-8")
        self.writer = csv.writer(self.handle, lineterminator="\n")
        return fresh

    def add(self, row):
        self.rows[row["run"]] = row
        self.writer.writerow(self._cells(row))
        self.handle.flush()

    def close(self):
        with contextlib.suppress(Exception):
            self.handle.close()

    def _cells(self, row):
        return [_cell(row.get(c)) for c in self.columns]

    def write_json(self, info):
        _write_atomic(self.json_path, json.dumps(_json_ready(info), indent=1) + "\n")

    def write_parquet(self):
        """runs.parquet, sorted by run, when pyarrow is importable; False if it is not."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return False
        ordered = [self.rows[i] for i in sorted(self.rows)]
        data = {}
        for c in self.columns:
            values = [r.get(c) for r in ordered]
            if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in values):
                kind = (pa.int64() if all(v is None or isinstance(v, int) for v in values)
                        else pa.float64())
                data[c] = pa.array(values, type=kind)
            else:
                data[c] = pa.array([None if v is None else _cell(v) for v in values],
                                   type=pa.string())
        part = self.folder / f".{PARQUET_NAME}.part"
        pq.write_table(pa.table(data), part)
        os.replace(part, self.folder / PARQUET_NAME)
        return True


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, (list, tuple, dict)):
        return _toml(value)
    return str(value)


def _typed(row, spec):
    """A CSV row read back: numbers as numbers, empty cells as None."""
    out = {"run": int(row["run"]), "status": row["status"], "error": row["error"]}
    for p in spec.parameters:
        out[p.name] = _parse_cell(row[p.name])
    for c in [m.name for m in spec.metrics] + ["step_s", "wall_s"]:
        out[c] = float(row[c]) if row[c] else None
    out["steps"] = int(row["steps"]) if row["steps"].isdigit() else 0
    return out


def _parse_cell(text):
    if text == "":
        return None
    try:
        return tomllib.loads("v = " + text)["v"]
    except (tomllib.TOMLDecodeError, ValueError):
        return text


def _write_atomic(path, text):
    part = path.with_name(f".{path.name}.part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, path)


def _json_ready(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


class Progress:
    """Runs done of total, failures, elapsed and ETA on a stream: redrawn in place on a
    terminal, a line per tenth in a log."""

    WIDTH = 30

    def __init__(self, stream, total, skipped):
        self.stream, self.total, self.skipped = stream, total, skipped
        self.todo = total - skipped
        self.live = stream.isatty()
        self.start = time.perf_counter()
        self.done = self.failed = 0
        self.lines = 0

    def __call__(self, row):
        self.done += 1
        self.failed += row["status"] != "ok"
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.todo - self.done)
        count = self.skipped + self.done
        failed = f", {self.failed} failed" if self.failed else ""
        text = (f"{count}/{self.total} runs{failed}  {_clock(elapsed)} elapsed, "
                f"ETA {_clock(eta)}")
        if self.live:
            filled = self.WIDTH * count // max(self.total, 1)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            self.stream.write(f"\r[{bar}] {text}   " + ("\n" if count == self.total else ""))
        elif 10 * self.done // max(self.todo, 1) > self.lines or self.done == self.todo:
            self.lines = 10 * self.done // max(self.todo, 1)
            self.stream.write(text + "\n")
        self.stream.flush()

    def end(self):
        if self.live and self.skipped + self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    m, s = divmod(seconds, 60)
    return f"{m}:{s:02d}" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d}"


class SweepInterrupted(Exception):
    """Ctrl+C: the finished rows are kept; `summary` says how many."""

    def __init__(self, summary):
        super().__init__("interrupted")
        self.summary = summary


def prepare(spec, progress_stream=None):
    """Check the spec against its scene (each swept path, each channel), make the kernels
    ready in this process (compiled, or loaded from the cache) and list the runs. Returns
    (job, runs)."""
    from ..physics.warmup import ProgressPrinter, compile_step
    from ..scenes import SceneError, build_world, read_scene

    src = str(spec.file)
    try:
        base = read_scene(spec.scene, spec.sets)
    except SceneError as exc:
        raise SweepError(f"{src}: scene with its set: {exc}") from None
    planner = Planner(spec, base)
    for k, p in enumerate(spec.parameters):
        trial = p.values if p.kind == "values" else (p.args if p.kind == "choice" else
                                                     (p.args[0], p.args[-1]))
        errors = []
        for value in trial:
            try:
                read_scene(spec.scene, [*spec.sets, *_only(planner, k, value)])
                break
            except SceneError as exc:
                errors.append(str(exc))
        else:
            raise SweepError(f"{src}: {p.where}: no value of it makes a valid scene: "
                             f"{errors[0]}")
    try:
        world = build_world(base, source=spec.scene)
    except Exception as exc:   # noqa: BLE001 -- SceneError, ValueError
        raise SweepError(f"{src}: the scene with its set fails: {exc}") from None
    for i, m in enumerate(spec.metrics):
        try:
            channel_source(world, m.channel)
        except ValueError as exc:
            raise SweepError(f"{src}: metrics[{i}] {quoted(m.name)}: {exc}") from None
    if progress_stream is not None:
        report = ProgressPrinter(progress_stream)
        try:
            compile_step(world, report)
        finally:
            report.close()
    else:
        compile_step(world)
    _compile_variants(planner, spec, world, progress_stream)
    job = Job(spec.scene, spec.duration, spec.metrics, spec.sets, spec.timeout)
    warm(job)
    return job, planner.runs()


VARIANT_PROBES = 5   # values of each parameter built to find the step variants the runs need


def _compile_variants(planner, spec, base_world, progress_stream):
    """Compile, here and once, the step of each variant (warmup.variant: contacts, trees)
    that a swept value may switch to (a friction of 0 can remove the joint-friction rows, a
    setting the trees): up to VARIANT_PROBES values of each parameter, alone, are built,
    so that no worker compiles (minutes) for its first run of another variant."""
    from ..physics.warmup import ProgressPrinter, compile_step, step_signature
    from ..scenes import build_world, read_scene

    seen = {step_signature(base_world)}
    for k, p in enumerate(spec.parameters):
        if p.kind == "values":
            picks = p.values
        elif p.kind == "choice":
            picks = p.args
        else:
            picks = (p.args[0], p.args[-1])
        if len(picks) > VARIANT_PROBES:
            picks = [picks[round(i * (len(picks) - 1) / (VARIANT_PROBES - 1))]
                     for i in range(VARIANT_PROBES)]
        for value in picks:
            try:
                world = build_world(read_scene(spec.scene, [*spec.sets,
                                                            *_only(planner, k, value)]),
                                    source=spec.scene)
                sig = step_signature(world)
            except Exception:   # noqa: BLE001 -- that run's row will say why
                continue
            if sig in seen:
                continue
            seen.add(sig)
            report = ProgressPrinter(progress_stream) if progress_stream is not None else None
            try:
                compile_step(world, report)
            finally:
                if report is not None:
                    report.close()


def _only(planner, k, value):
    """The --set string of parameter k at `value` alone (its vector's other components as
    the scene has them)."""
    p = planner.spec.parameters[k]
    if k in planner.vectors:
        parent, i, base = planner.vectors[k]
        vector = list(base)
        vector[i] = value
        return [f"{parent}={_toml(vector)}"]
    return [f"{p.path}={_toml(value)}"]


def sweep(spec, out, backend, restart=False, plots="auto", stream=None):
    """Run the sweep `spec` (a Spec) into the folder `out` on `backend` (a Backend, not yet
    started; closed here). Returns the summary dict; SweepInterrupted on Ctrl+C (the rows
    done are kept); SweepError for a bad spec, folder or missing extra."""
    stream = sys.stderr if stream is None else stream
    if plots == "on":
        plotting_module()   # the missing extra is an error before any run
    output = Output(out, spec, restart)
    job, runs = prepare(spec, stream)
    todo = [r for r in runs if r.index not in output.rows]
    skipped = len(runs) - len(todo)
    info = {"spec_file": str(spec.file), "spec": spec.raw, "scene": spec.scene,
            "fingerprint": fingerprint(spec), "runs": len(runs), "columns": output.columns,
            "parameters": [{"name": p.name, "path": p.path} for p in spec.parameters],
            "machine": machine(), "status": "running",
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
    output.open()
    output.write_json(info)
    if skipped:
        print(f"sharnir: resuming {out}: {skipped} of {len(runs)} runs done before",
              file=stream)
    progress = Progress(stream, len(runs), skipped)
    start = time.perf_counter()
    interrupted = False
    try:
        if todo:
            backend.start(job)
            info["backend"] = backend.describe()
            output.write_json(info)
            for row in backend.rows((r.index, r.sets) for r in todo):
                row.update(zip((p.name for p in spec.parameters), runs[row["run"]].values))
                output.add(row)
                progress(row)
    except KeyboardInterrupt:
        interrupted = True
        with contextlib.suppress(BaseException):
            backend.stop()
    finally:
        if not interrupted:
            backend.close()
        output.close()
        progress.end()
    wall = time.perf_counter() - start
    ran = progress.done
    failed = sum(1 for r in output.rows.values() if r["status"] != "ok")
    summary = {"out": str(out), "runs": len(runs), "done": len(output.rows), "ran": ran,
               "skipped": skipped, "failed": failed, "wall_s": wall,
               "backend": info.get("backend", {"backend": backend.name})}
    info.update(status="interrupted" if interrupted else "done", ran=ran, skipped=skipped,
                done=len(output.rows), failed=failed, wall_s=wall,
                finished=time.strftime("%Y-%m-%d %H:%M:%S %z"),
                run_wall_s=sum(r.get("wall_s") or 0.0 for r in output.rows.values()),
                run_step_s=sum(r.get("step_s") or 0.0 for r in output.rows.values()))
    summary["parquet"] = output.write_parquet() and str(output.folder / PARQUET_NAME)
    output.write_json(info)
    if interrupted:
        raise SweepInterrupted(summary)
    summary["plots"] = [] if plots == "off" else draw_plots(output, required=plots == "on",
                                                           stream=stream)
    return summary


# --- plots ----------------------------------------------------------------------------------


def plotting_module():
    """matplotlib's Agg canvas and Figure, or a SweepError naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise SweepError("plots need matplotlib: pip install 'sharnir[plots]' "
                         "(or --no-plots)") from None
    return FigureCanvasAgg, Figure


def draw_plots(output, required=False, stream=None):
    """A PNG per metric: a line over one swept parameter (points for random draws), a heat
    map over two grid parameters, points coloured by the metric over two random ones. Returns
    the files written ([] with a note when matplotlib is missing and not `required`)."""
    try:
        Canvas, Figure = plotting_module()
    except SweepError as exc:
        if required:
            raise
        if stream is not None:
            print(f"sharnir: note: no plots drawn: {exc}", file=stream)
        return []
    spec = output.spec
    params = [p for p in spec.parameters if not (p.kind == "values" and len(p.values) == 1)]
    if not params or len(params) > 2:
        if stream is not None and params:
            print(f"sharnir: note: no plots drawn: {len(params)} swept parameters (plots "
                  "show one or two)", file=stream)
        return []
    rows = [output.rows[i] for i in sorted(output.rows)]
    files = []
    for m in spec.metrics:
        fig = Figure(figsize=(6.4, 4.8), dpi=100)
        Canvas(fig)
        ax = fig.add_subplot()
        z = np.array([np.nan if r.get(m.name) is None else r[m.name] for r in rows], float)
        if len(params) == 1:
            p = params[0]
            x, labels = _axis([r.get(p.name) for r in rows], p)
            order = np.argsort(x, kind="stable")
            style = "o-" if p.kind == "values" else "o"
            ax.plot(x[order], z[order], style, markersize=4)
            ax.set_xlabel(p.name)
            ax.set_ylabel(m.name)
            if labels is not None:
                ax.set_xticks(range(len(labels)), labels)
        elif all(p.kind == "values" for p in params):
            a, b = params
            xs, ys = _grid_axis(a), _grid_axis(b)
            grid = np.full((len(ys[0]), len(xs[0])), np.nan)
            for r, value in zip(rows, z):
                with contextlib.suppress(ValueError):
                    grid[ys[1].index(_cell(r.get(b.name))), xs[1].index(_cell(r.get(a.name)))] \
                        = value
            image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(xs[0])), [_short(v) for v in xs[0]])
            ax.set_yticks(range(len(ys[0])), [_short(v) for v in ys[0]])
            low, high = image.get_clim()
            for (i, j), value in np.ndenumerate(grid):
                if math.isfinite(value) and grid.size <= 100:   # dark text on the light cells
                    light = high > low and (value - low) / (high - low) > 0.6
                    ax.text(j, i, f"{value:.4g}", ha="center", va="center", fontsize=8,
                            color="k" if light else "w")
            ax.set_xlabel(a.name)
            ax.set_ylabel(b.name)
            fig.colorbar(image, ax=ax, label=m.name)
        else:
            a, b = params
            x, _ = _axis([r.get(a.name) for r in rows], a)
            y, _ = _axis([r.get(b.name) for r in rows], b)
            points = ax.scatter(x, y, c=z, cmap="viridis", s=24)
            ax.set_xlabel(a.name)
            ax.set_ylabel(b.name)
            fig.colorbar(points, ax=ax, label=m.name)
        failed = int(np.isnan(z).sum())
        ax.set_title(f"{m.name}: {m.reduce} of {m.channel}"
                     + (f" ({failed} runs without a value)" if failed else ""), fontsize=9)
        fig.tight_layout()
        path = output.folder / f"{_file_name(m.name)}.png"
        fig.savefig(path)
        files.append(str(path))
    return files


def _axis(values, p):
    """Numbers to plot a parameter's values at, and tick labels when they are not numbers."""
    if all(_number(v) for v in values):
        return np.array(values, dtype=float), None
    labels = sorted({_cell(v) for v in values})
    return np.array([labels.index(_cell(v)) for v in values], float), labels


def _grid_axis(p):
    return list(p.values), [_cell(v) for v in p.values]


def _short(value):
    return f"{value:.4g}" if _number(value) else _cell(value)


def _file_name(name):
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip("._")
    return keep or "metric"


# --- the command ----------------------------------------------------------------------------


SWEEP_EPILOG = """\
spec (TOML):
  scene = "door"                   # a shipped scene's name or a file (from the spec's folder)
  duration = 2.0                   # s per run
  set = ["solver.iterations=200"]  # --set overrides of every run (optional)
  seed = 1                         # seed of the random draws (default 0)
  samples = 16                     # random draws, with [[random]] (runs = grid x draws)
  [[grid]]                         # one per swept value: path = any --set path, or a
  path = "joints.hinge.friction"   #   vector's component ("loads.0.torque.2"); name = column
  values = [10, 20, 30]            #   or linspace = [a, b, n], geomspace = [a, b, n]
  [[random]]
  path = "world.dt"
  uniform = [0.005, 0.01]          # or loguniform = [a, b], integers = [a, b], choice = [...]
  [[metrics]]
  name = "stop_angle"              # the column (default "REDUCE(CHANNEL)")
  channel = "joint.hinge.angle"
  reduce = "final"

channels:
  """ + "\n  ".join(CHANNELS) + """
reducers:
  """ + "\n  ".join(f"{k:12} {v}" for k, v in REDUCERS.items()) + """

outputs (in --out, default: SPEC's name + "-sweep" beside it):
  runs.csv (a row per run as it finishes: run, the parameters, the metrics, status, error,
  steps, step_s, wall_s), runs.parquet (with pyarrow), sweep.json (spec, machine, counts),
  METRIC.png (a line for one swept parameter, a heat map for two; sharnir[plots]).
  A failed run is a row with its error. Running the same command again resumes: finished
  rows are kept and skipped. Ctrl+C stops and keeps the finished rows.

examples:
  sharnir sweep door-friction.toml
  sharnir sweep door-friction.toml --backend ray --address 10.0.0.1:6379
"""


def add_sweep_command(commands):
    """The ``sweep`` subcommand on the CLI's subparsers."""
    import argparse

    parser = commands.add_parser(
        "sweep", help="run a scene over a grid or random samples of its values",
        description="Run a scene over a grid and/or seeded random samples of --set values\n"
                    "and reduce each run to a row of metrics (CSV, Parquet, plots).",
        epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=sweep_command, list=False, scene=None)
    parser.add_argument("spec", metavar="SPEC.toml", help="the sweep's spec (TOML, see below)")
    parser.add_argument("--out", metavar="DIR",
                        help="the output folder (default: SPEC's name + '-sweep' beside it)")
    parser.add_argument("--backend", choices=("local", "serial", "ray"), default="local",
                        help="local: a pool of processes on this machine (default); serial: "
                             "this process alone; ray: Ray tasks (sharnir[ray])")
    parser.add_argument("--jobs", "-j", type=int, metavar="N",
                        help="worker processes of the local pool (default: the CPUs); for a "
                             "local Ray instance, its CPUs")
    parser.add_argument("--address", metavar="HOST:PORT",
                        help="the Ray cluster to use (default: $RAY_ADDRESS, else a local "
                             "instance for this sweep)")
    parser.add_argument("--restart", action="store_true",
                        help="discard the rows of an earlier run in --out instead of resuming")
    plots = parser.add_mutually_exclusive_group()
    plots.add_argument("--plots", dest="plots", action="store_const", const="on",
                       default="auto", help="require the plots (an error without matplotlib); "
                                            "default: drawn when matplotlib is installed")
    plots.add_argument("--no-plots", dest="plots", action="store_const", const="off",
                       help="draw no plots")
    parser.add_argument("--json", action="store_true",
                        help="also print the summary as one JSON object on the last line")


def sweep_command(args):
    spec = read_spec(args.spec)
    if args.jobs is not None and args.jobs < 1:
        raise SweepError(f"--jobs must be 1 or more (got {args.jobs})")
    if args.address and args.backend != "ray":
        raise SweepError("--address is for --backend ray")
    backend = make_backend(args.backend, args.jobs, args.address)
    out = Path(args.out) if args.out else spec.file.with_name(spec.file.stem + "-sweep")
    try:
        summary = sweep(spec, out, backend, restart=args.restart, plots=args.plots)
    except SweepInterrupted as stop:
        s = stop.summary
        print(f"\nsharnir: interrupted: {s['done']} of {s['runs']} runs kept in "
              f"{Path(s['out']) / CSV_NAME}; run the same command again to resume",
              file=sys.stderr)
        if args.json:
            print(json.dumps(_json_ready({**s, "status": "interrupted"})))
        return INTERRUPTED_STATUS
    s = summary
    failed = f", {s['failed']} failed (their error is in the CSV)" if s["failed"] else ""
    print(f"{s['done']} of {s['runs']} runs in {Path(s['out']) / CSV_NAME} ({s['ran']} ran "
          f"in {s['wall_s']:.1f} s, {s['skipped']} done before){failed}")
    if args.json:
        print(json.dumps(_json_ready({**s, "status": "done"})))
    return 0
