"""Open every robot description in a folder (URDF, MuJoCo MJCF) as a user would and report
how many load, simulate without error and stay finite.

    .venv/bin/python bench/robot_files.py FOLDER [--seconds 1] [--timeout 60] [--limit N]
                                                [--write]

Each file is loaded (`load_scene`, the defaults: a fixed base for URDFs, motors holding their
pose), then stepped for `--seconds` of simulated time. Outcomes:

    ok          loaded, simulated, every body's pose finite at the end
    load_error  a clean SceneError (the message is kept: it should name file and element)
    sim_error   the simulation stopped with a SimulationError
    nonfinite   finished, but a pose is not finite
    crash       any other exception, or the worker process died
    timeout     a file took longer than --timeout seconds (load and run)
    skipped     an .xml file that is not MJCF (no <mujoco> root)

Files are run in worker processes (one per CPU) that take files one after another; a worker
that dies or hangs is replaced and the file it had is counted against it. --write puts the
counts into the `## Robot files` section of bench/results.md.
"""
import argparse
import json
import multiprocessing as mp
import os
import queue
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

SECTION = "## Robot files"


def find_files(folder):
    files = []
    for path in sorted(Path(folder).rglob("*")):
        suffix = path.suffix.lower()
        if suffix == ".urdf" and path.is_file():
            files.append(path)
        elif suffix == ".xml" and path.is_file():
            try:
                head = path.read_bytes()[:4096].decode("utf-8", "replace")
            except OSError:
                continue
            if "<mujoco" in head:
                files.append(path)
    return files


def check(path, seconds):
    """One file's outcome as a dict (runs in a worker)."""
    from sharnir.physics import SimulationError
    from sharnir.scenes import SceneError, load_scene

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            world = load_scene(path)
    except SceneError as exc:
        return dict(outcome="load_error", message=str(exc).splitlines()[0][:300])
    except Exception as exc:  # noqa: BLE001
        return dict(outcome="crash", message=f"load: {type(exc).__name__}: {exc}"[:300],
                    trace=traceback.format_exc(limit=3)[-600:])
    nbody = len(world.body_names) - 1
    try:
        steps = max(1, round(seconds / world.dt))
        world.run(steps)
    except SimulationError as exc:
        return dict(outcome="sim_error", message=str(exc)[:300], bodies=nbody)
    except Exception as exc:  # noqa: BLE001
        return dict(outcome="crash", message=f"run: {type(exc).__name__}: {exc}"[:300],
                    trace=traceback.format_exc(limit=3)[-600:], bodies=nbody)
    import numpy as np

    finite = bool(np.isfinite(world.body_pos).all() and np.isfinite(world.body_quat).all())
    return dict(outcome="ok" if finite else "nonfinite", bodies=nbody,
                joints=len(world.joint_names), wall_s=round(time.perf_counter() - t0, 2))


def _worker(tasks, results, seconds):
    while True:
        item = tasks.get()
        if item is None:
            return
        index, path = item
        results.put((index, "start", None))
        results.put((index, "done", check(path, seconds)))


def run_all(files, seconds, timeout, workers):
    ctx = mp.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    for item in enumerate(files):
        tasks.put(item)
    procs = {}
    current = {}            # worker pid -> (index, started)
    outcomes = {}

    def spawn():
        p = ctx.Process(target=_worker, args=(tasks, results, seconds), daemon=True)
        p.start()
        procs[p.pid] = p

    for _ in range(workers):
        spawn()
    while len(outcomes) < len(files):
        try:
            index, what, out = results.get(timeout=1.0)
            if what == "start":
                current[index] = time.time()
            else:
                current.pop(index, None)
                outcomes[index] = out
                print(f"[{len(outcomes)}/{len(files)}] {out['outcome']:10s} {files[index]}",
                      file=sys.stderr)
        except queue.Empty:
            pass
        now = time.time()
        for index, started in list(current.items()):
            if now - started > timeout:
                outcomes[index] = dict(outcome="timeout", message=f"over {timeout} s")
                current.pop(index)
                for p in list(procs.values()):   # the hung worker is the one without news
                    p.kill()
                procs.clear()
                for other in list(current):      # their files go back in the queue
                    tasks.put((other, files[other]))
                current.clear()
                for _ in range(workers):
                    spawn()
        for pid, p in list(procs.items()):
            if not p.is_alive():
                procs.pop(pid)
                lost = [i for i in current if i not in outcomes]
                for i in lost:
                    outcomes[i] = dict(outcome="crash", message=f"the worker died "
                                       f"(exit code {p.exitcode})")
                    current.pop(i)
                if len(outcomes) < len(files):
                    spawn()
    for _ in procs:
        tasks.put(None)
    return [outcomes[i] for i in range(len(files))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--limit", type=int, default=0, help="check only the first N files")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write", action="store_true",
                        help="write the counts into bench/results.md")
    parser.add_argument("--json", metavar="OUT", help="write every file's outcome as JSON")
    args = parser.parse_args()
    files = find_files(args.folder)
    if args.limit:
        files = files[:args.limit]
    t0 = time.time()
    outs = run_all(files, args.seconds, args.timeout, args.workers)
    wall = time.time() - t0
    kinds = {".urdf": "URDF", ".xml": "MJCF"}
    table = Counter((kinds[f.suffix.lower()], o["outcome"]) for f, o in zip(files, outs))
    names = ["ok", "load_error", "sim_error", "nonfinite", "crash", "timeout"]
    lines = [f"{len(files)} files in {args.folder}, {args.seconds:g} s simulated each, "
             f"{wall:.0f} s wall", "", "| kind | files | " + " | ".join(names) + " |",
             "|---|---:|" + "---:|" * len(names)]
    for kind in ("URDF", "MJCF"):
        n = sum(v for (k, _), v in table.items() if k == kind)
        if n:
            lines.append(f"| {kind} | {n} | " + " | ".join(str(table[(kind, o)])
                                                          for o in names) + " |")
    problems = Counter(o["message"].split(": ", 1)[-1][:120] for o in outs
                       if o["outcome"] not in ("ok",) and "message" in o)
    if problems:
        lines += ["", "Most common messages:", ""]
        lines += [f"* {n} x {msg}" for msg, n in problems.most_common(8)]
    text = "\n".join(lines)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(
            [dict(file=str(f), **o) for f, o in zip(files, outs)], indent=1))
    if args.write:
        sys.path.insert(0, str(Path(__file__).parent))
        from run import machine, write_section

        m = machine()
        write_section(SECTION, f"{SECTION}\n\nMachine: {m['cpu']}, {m['cpus']} CPUs; commit "
                      f"{m['commit']}; {m['date_utc']}. `bench/robot_files.py`.\n\n{text}\n")


if __name__ == "__main__":
    main()
