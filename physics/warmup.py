"""Compiling the step kernel: which kernels a world needs, in a process of its own, with
progress.

A world's step is one kernel call, `solver.step_many`. numba compiles it, and every kernel it
calls, the first time it runs with a given signature; the result is cached (physics/cache.py).
The signature depends only on the arrays' types, never on their sizes, so there are exactly four
variants: worlds where something can touch (the contacts' points, rows and scratch are
contact.py's three tuples) or nothing can (all three None: numba prunes the contact stages,
about half of the compile), each with
or without the trees' exact block (`trees` is a Trees only where solver.articulation is
"tree" and the world has a tree: numba prunes physics/articulation.py otherwise). A tiny
stand-in world of the same variant compiles the same kernels as any scene.

`compile_step(world, progress)` makes a world's step ready:

    1. from the cache: step_many's compiled code is loaded (under a second) and that is all;
    2. else a child process (`python -m sharnir.physics.warmup --contacts|--no-contacts
       [--trees]`)
       compiles the stand-in's kernels into the cache and reports `done total` lines, so the
       caller's thread (a window's, say) keeps the interpreter and stays responsive; then 1;
    3. if that fails (no writable cache, the child died), the kernels compile here, with the
       same progress from a watcher thread.

progress(done, total, elapsed_s) is called from the calling thread (case 2) or the watcher
thread (case 3): `done` counts the kernels that have code (compiled or loaded), `total` the
kernels the variant reaches from step_many (`needed_kernels`).
"""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numba
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher
from numba.core.runtime import rtsys

# the modules whose kernels only the contact stages reach
_CONTACT_MODULES = ("contact", "contact_solver", "ccd", "manifold", "convex", "broadphase",
                    "support")
_TREE_MODULES = ("articulation",)   # the modules only the trees' block reaches
PROGRESS_PERIOD_S = 0.25
# Loading the kernels from numba's cache takes under a second; only a real compile (first run,
# or after the physics changed) is shown.
COMPILE_NOTE_AFTER_S = 1.0
COMPILE_NOTE = "compiling physics kernels (first run only, cached afterwards)..."
COMPILE_LINE_S = 5.0  # a progress line this often when the stream is a log, not a terminal
CHILD_TIMEOUT_S = 1800.0


def _entry():
    from .solver import step_many
    return step_many


def needed_kernels(contacts, trees=False):
    """The kernels step_many reaches and numba compiles on their own (inlined helpers are
    compiled into their callers), for worlds with (True) or without contacts, and with or
    without the trees' block."""
    seen, order, stack = set(), [], [_entry()]
    while stack:
        d = stack.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        module = d.py_func.__module__.rsplit(".", 1)[-1]
        if (not contacts and module in _CONTACT_MODULES) or (
                not trees and module in _TREE_MODULES):
            continue
        if d.targetoptions.get("inline", "never") != "always":
            order.append(d)
        names, codes = set(), [d.py_func.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        scope = d.py_func.__globals__
        stack.extend(scope[n] for n in sorted(names)
                     if isinstance(scope.get(n), CPUDispatcher))
    return order


def stand_in_world(contacts, trees=False):
    """A tiny world whose step compiles the same kernels as every world of the variant: two
    boxes on a revolute joint, plus (contacts) a ball above the ground; (trees) with
    solver.articulation "tree"."""
    from .shape import Box, Plane, Sphere
    from .world import World

    world = World(dt=0.01, articulation="tree" if trees else "sweep")
    world.add_body("a", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.2, 0.0, 1.0))
    world.add_joint("hinge", "revolute", "world", "a", anchor=(0.0, 0.0, 1.0), friction=0.1)
    if contacts:
        world.add_body("ground", Plane(), kind="static")
        world.add_body("ball", Sphere(0.1), mass=1.0, pos=(1.0, 0.0, 0.5))
    return world


def step_signature(world):
    """numba's types of step_many's arguments for this world (what its compile is keyed by)."""
    from .contact import contact_args
    from .world import _empty_records

    model, state, work = world._ready()
    args = (model, state, work, *contact_args(world._contacts), world._step_trees(),
            world._settings, 0, *_empty_records(state))
    return tuple(numba.typeof(a) for a in args)


def load_cached(sig):
    """Load step_many for `sig` from numba's cache; False if it is not there. (What
    Dispatcher.compile does on a cache hit, without compiling on a miss: the cached code is
    read and linked once.)

    numba's own cache hit first refreshes its CPU target: it imports and installs every
    typing and lowering registry (numba.np.arraymath, linalg and so scipy.linalg, the typed
    containers...), 0.3 s of a 1.3 s warm start on this machine class, all of it for
    compiling. Linking code already compiled needs only numba's runtime (NRT), whose symbols
    the code calls, so only that is set up here. A kernel compiled later in this process
    refreshes the target itself, as ever."""
    step_many = _entry()
    if tuple(sig) in step_many.overloads:
        return True
    with global_compiler_lock:
        rtsys.initialize(step_many.targetctx)
        cache = step_many._cache
        cres = None
        with cache._guard_against_spurious_io_errors():
            cres = cache._load_overload(sig, step_many.targetctx)
        if cres is None:
            return False
        step_many.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        step_many.add_overload(cres)
    return True


class _Watcher(threading.Thread):
    """Calls progress(done, total, elapsed) every PROGRESS_PERIOD_S while kernels compile."""

    def __init__(self, kernels, progress):
        super().__init__(name="sharnir-compile-progress", daemon=True)
        self.kernels, self.progress = kernels, progress
        self.start_time = time.perf_counter()
        self.finished = threading.Event()

    def count(self):
        return sum(1 for d in self.kernels if d.overloads)

    def run(self):
        while not self.finished.wait(PROGRESS_PERIOD_S):
            self.progress(self.count(), len(self.kernels),
                          time.perf_counter() - self.start_time)


def compile_here(world, progress=None):
    """Compile (or load) the world's step kernels in this process, reporting progress."""
    sig = step_signature(world)  # builds the world's arrays: world._contacts is set after
    kernels = needed_kernels(*variant(world))
    watcher = _Watcher(kernels, progress) if progress is not None else None
    if watcher is not None:
        watcher.start()
    try:
        _entry().compile(sig)
    finally:
        if watcher is not None:
            watcher.finished.set()
            watcher.join()
            progress(len(kernels), len(kernels), time.perf_counter() - watcher.start_time)


def variant(world):
    """(contacts, trees): which of the four variants the world's step is."""
    world._ready()   # (builds the arrays the answer depends on)
    return world._contacts is not None, world._step_trees() is not None


def _child_command(contacts, trees):
    """The command that compiles a variant in a process of its own (main below)."""
    return [sys.executable, "-m", "sharnir.physics.warmup",
            "--contacts" if contacts else "--no-contacts"] + (["--trees"] if trees else [])


def _compile_in_child(contacts, trees, progress, start):
    """Run the child compile; relay its progress lines. True if it finished."""
    try:
        child = subprocess.Popen(_child_command(contacts, trees), stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                 text=True, env=dict(os.environ))
    except OSError:
        return False
    try:
        for line in child.stdout:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "progress" and progress is not None:
                try:
                    progress(int(parts[1]), int(parts[2]), time.perf_counter() - start)
                except ValueError:
                    pass
        return child.wait(CHILD_TIMEOUT_S) == 0
    except (OSError, subprocess.TimeoutExpired):
        child.kill()
        return False
    finally:
        child.stdout.close()


def compile_step(world, progress=None):
    """Make the world's step kernel ready (see the module docstring). Returns how: 'cache',
    'child' or 'here'."""
    sig = step_signature(world)
    if load_cached(sig):
        return "cache"
    start = time.perf_counter()
    contacts, trees = variant(world)
    if _compile_in_child(contacts, trees, progress, start) and load_cached(sig):
        total = len(needed_kernels(contacts, trees))
        if progress is not None:
            progress(total, total, time.perf_counter() - start)
        return "child"
    compile_here(world, progress)
    return "here"


class ProgressPrinter:
    """Compile progress on a stream (kernels done of total, elapsed): redrawn in place on a
    terminal, a line every COMPILE_LINE_S in a log. Silent for a load from the cache."""

    def __init__(self, stream):
        self.stream = stream
        self.live = stream.isatty()
        self.shown = False
        self.finished = False
        self.last_line = -COMPILE_LINE_S

    def __call__(self, done, total, elapsed):
        if (elapsed < COMPILE_NOTE_AFTER_S and not self.shown) or self.finished:
            return
        self.finished = done >= total
        if not self.shown:
            self.stream.write(COMPILE_NOTE + "\n")
            self.shown = True
        text = f"compiling: {done}/{total} kernels, {elapsed:.0f} s"
        if self.live:
            self.stream.write(f"\r{text}   ")
        elif elapsed - self.last_line >= COMPILE_LINE_S or done == total:
            self.last_line = elapsed
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        if self.shown and self.live:
            self.stream.write("\n")
            self.stream.flush()


SHIPPED_VARIANTS = ((False, False), (True, False))   # (contacts, trees): the sweep's two


def _entry_files(folder):
    """The cache files (relative to `folder`) of the kernels Python calls (ENTRY: the ones
    with a CPython wrapper). Each holds its callees' code, so these alone run a world."""
    import importlib
    import pkgutil

    package = importlib.import_module(__package__)
    modules = [importlib.import_module(f"{__package__}.{m.name}")
               for m in pkgutil.iter_modules(package.__path__) if m.name != "__main__"]
    entries = {id(d): d for m in modules for d in vars(m).values()
               if isinstance(d, CPUDispatcher) and d.py_func.__module__ == m.__name__
               and not d.targetoptions.get("no_cpython_wrapper")}
    names = []
    for d in entries.values():
        f = d.py_func
        stem = f.__module__.rsplit(".", 1)[-1]
        prefix = f"{stem}.{f.__qualname__}-{f.__code__.co_firstlineno}."
        names += [p.relative_to(folder) for p in (folder / stem).glob(prefix + "*")]
    return sorted(names)


def ship(out=None):
    """Build the shipped kernels (physics/cache.py): compile SHIPPED_VARIANTS for x86-64-v3
    in an empty cache folder, in child processes one after another, and pack the entry
    kernels' files into assets/kernels/kernels-<source hash>.tar.xz, removing older archives.
    The trees' variants compile where they are first used. (Not at once: numba reads a
    source file's cache index, adds its kernel and writes the index back, so two processes
    compiling beside each other can lose one's entry, or index one's code under the other's
    name.)"""
    import tarfile
    import tempfile

    from . import cache
    out = cache.SHIPPED if out is None else out
    with tempfile.TemporaryDirectory() as base:
        env = dict(os.environ, SHARNIR_CACHE_DIR=base, NUMBA_CPU_NAME="x86-64-v3",
                   NUMBA_CPU_FEATURES="")
        for contacts, trees in SHIPPED_VARIANTS:
            if subprocess.run(_child_command(contacts, trees), env=env,
                              stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL).returncode:
                raise RuntimeError("a variant failed to compile; nothing was shipped")
        folder = Path(base) / cache.cache_dir().name
        files = _entry_files(folder)
        out.mkdir(parents=True, exist_ok=True)
        archive = out / f"kernels-{cache.source_hash()}.tar.xz"
        part = archive.with_name(archive.name + ".part")
        with tarfile.open(part, "w:xz") as tar:
            for name in files:
                info = tar.gettarinfo(folder / name, arcname=str(name))
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                with open(folder / name, "rb") as f:
                    tar.addfile(info, f)
        os.replace(part, archive)
    for old in out.glob("kernels-*.tar.xz"):
        if old != archive:
            old.unlink()
    return archive, files


def main(argv=None):
    """`python -m sharnir.physics.warmup --contacts|--no-contacts [--trees]`: compile that
    variant's kernels into the cache, printing `progress DONE TOTAL` lines, then `ok`.
    `python -m sharnir.physics.warmup --ship`: build the shipped kernels (see ship)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--ship"]:
        archive, files = ship()
        print(f"{archive}: {len(files)} files, {archive.stat().st_size / 1e6:.1f} MB")
        return 0
    if argv[:1] not in (["--contacts"], ["--no-contacts"]) or argv[1:] not in ([], ["--trees"]):
        print("usage: python -m sharnir.physics.warmup --contacts|--no-contacts [--trees]",
              file=sys.stderr)
        return 2
    contacts, trees = argv[0] == "--contacts", len(argv) == 2

    def report(done, total, _elapsed):
        print(f"progress {done} {total}", flush=True)

    compile_here(stand_in_world(contacts, trees), report)
    print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
