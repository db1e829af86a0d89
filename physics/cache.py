"""Where numba keeps Sharnir's compiled kernels: a folder keyed by version and source hash.

numba's own staleness check hashes only the file that holds a kernel, so a kernel that inlines
a helper from another module could keep the old helper after an edit. Keying the folder by a
hash of every physics source file makes any edit or upgrade start from a clean cache.

Only Sharnir's kernels go there: a cache locator placed first in numba's list claims the
functions defined in this folder and leaves every other library's kernels where numba would
put them (NUMBA_CACHE_DIR is never touched; the CPU numba compiles for is, below).
`sharnir.physics` registers it before any kernel module is imported.

The kernels are portable: compiled for a CPU level instead of the machine's own model
(x86-64-v3, AVX2, on x86-64 machines that have it, every one since about 2015; else the
architecture's generic CPU; a user's NUMBA_CPU_NAME overrides it; it holds for every kernel
of the process), and numba's index is stamped with the source hash instead of the files'
times. Measured side by side, x86-64-v3 code steps as fast as the host model's (generic
x86-64 code was about 10 % slower on the contact scenes) and runs bit for bit the same
(bench/results.md, "Start-up"). So kernels compiled on one machine load on any other of
the same level, Python and numba version: the repository ships the
step's kernels (assets/kernels/, built by `python -m sharnir.physics.warmup --ship`), and a
fresh install unpacks them into its cache folder instead of compiling for minutes. They are
used only where their source hash is the sources' own: after an edit to the physics they
are ignored, and the kernels compile as before. numba's own check of its version and the
Python version in every cache file name cover an upgrade.
"""
import hashlib
import os
from pathlib import Path

_VERSION = "0.1.0"
_PHYSICS = Path(__file__).resolve().parent
_STALE_DAYS = 14
SHIPPED = _PHYSICS.parent / "assets" / "kernels"   # kernels-<source hash>.tar.xz
_UNPACKED = ".shipped"   # marker in a cache folder: the shipped kernels were unpacked there


_hash: str | None = None


def source_hash() -> str:
    """Hash of the modules that define or inline kernels (those that mention njit); editing
    world.py, scene code or docs leaves the compiled kernels valid."""
    global _hash
    if _hash is None:
        h = hashlib.sha1()
        for path in sorted(_PHYSICS.glob("*.py")):
            text = path.read_bytes()
            if b"njit" not in text and b"intrinsic" not in text:
                continue
            h.update(path.name.encode())
            h.update(text)
        _hash = h.hexdigest()[:12]
    return _hash


def cache_dir() -> Path:
    """The folder of this version's kernels: $SHARNIR_CACHE_DIR or ~/.cache/sharnir, then
    numba-<version>-<source hash>."""
    base = os.environ.get("SHARNIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sharnir")
    return Path(base) / f"numba-{_VERSION}-{source_hash()}"


def _prune(folder: Path) -> None:
    """Drop the caches of other versions that nothing has used for a while."""
    import shutil
    import time
    cutoff = time.time() - _STALE_DAYS * 86400
    for other in folder.parent.glob("numba-*"):
        try:
            if other != folder and other.stat().st_mtime < cutoff:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass


def shipped_archive() -> Path:
    """The shipped kernels for these sources (the file may not exist)."""
    return SHIPPED / f"kernels-{source_hash()}.tar.xz"


# x86-64-v3 (Haswell, Excavator and later: AVX2): LLVM's features of the level and below
_X86_64_V3 = ("avx", "avx2", "bmi", "bmi2", "cmov", "cx16", "cx8", "f16c", "fma", "fxsr",
              "lzcnt", "mmx", "movbe", "popcnt", "sahf", "sse", "sse2", "sse3", "sse4.1",
              "sse4.2", "ssse3", "xsave")


def portable_cpu() -> str:
    """The CPU the kernels are compiled for: "x86-64-v3" on an x86-64 machine that has all
    of its features (the shipped kernels' CPU), else the architecture's "generic"."""
    import llvmlite.binding as ll
    if ll.get_process_triple().startswith("x86_64"):
        features = ll.get_host_cpu_features()
        if all(features.get(f) for f in _X86_64_V3):
            return "x86-64-v3"
    return "generic"


def _use_portable_cpu() -> bool:
    """Compile for portable_cpu(), unless numba already made its code generator (it reads
    the CPU once) or the user named a CPU (NUMBA_CPU_NAME). True when the kernels are
    portable."""
    from numba.core import config
    from numba.core.registry import cpu_target
    if "_toplevel_target_context" not in vars(cpu_target) and not os.environ.get(
            "NUMBA_CPU_NAME"):
        config.CPU_NAME, config.CPU_FEATURES = portable_cpu(), ""
    return config.CPU_NAME in ("x86-64-v3", "generic") and config.CPU_FEATURES == ""


def _unpack_shipped(folder: Path) -> None:
    """Unpack the shipped kernels into the cache folder, once, each file only where the folder
    has none of that name (each written to a temporary name, then renamed: a process that
    reads the folder at the same time sees a whole file or none)."""
    archive = shipped_archive()
    if (folder / _UNPACKED).exists() or not archive.is_file():
        return
    import tarfile  # (here, not at the top: 40 ms, and only a first run unpacks)
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or member.name.startswith("/") or (
                    ".." in Path(member.name).parts):
                continue
            target = folder / member.name
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f"{target.name}.{os.getpid()}.part")
            try:
                with tar.extractfile(member) as src, open(part, "wb") as dst:
                    dst.write(src.read())
                os.replace(part, target)
            finally:
                part.unlink(missing_ok=True)
    (folder / _UNPACKED).touch()


def unpack_shipped(folder: Path) -> None:
    """_unpack_shipped, or one line on stderr if the archive cannot be read (the kernels then
    compile as they would without it)."""
    try:
        _unpack_shipped(folder)
    except Exception as e:   # (OSError, tarfile's and lzma's errors)
        import sys
        print(f"sharnir: the shipped kernels {shipped_archive().name} could not be unpacked "
              f"({e}); the kernels will compile", file=sys.stderr)


_folder: Path | None = None


def register() -> Path | None:
    """Put Sharnir's cache locator first in numba's list (once). Returns the folder, or None
    when it cannot be created: numba's own locators then keep the kernels (__pycache__ or
    ~/.cache/numba), which still works."""
    global _folder
    if _folder is not None:
        return _folder
    from numba.core import caching

    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        _prune(folder)
    except OSError:
        return None
    if _use_portable_cpu():
        unpack_shipped(folder)

    ours, writable = {}, set()   # per source file: in sharnir/physics; folders checked

    class SharnirCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's locator protocol for the kernels in sharnir/physics."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder / Path(py_file).stem)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            # the folder is keyed by the hash of every physics source: the files' times
            # (numba's stamp) would tie the kernels to one checkout
            return source_hash()

        def ensure_cache_path(self):
            # (numba's writes a temporary file there for each kernel: once a folder is enough)
            if self._cache_path not in writable:
                super().ensure_cache_path()
                writable.add(self._cache_path)

        @classmethod
        def from_function(cls, py_func, py_file):
            if py_file not in ours:
                try:
                    ours[py_file] = Path(py_file).resolve().parent == _PHYSICS
                except OSError:
                    ours[py_file] = False
            return super().from_function(py_func, py_file) if ours[py_file] else None

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.6x
    classes = impl._locator_classes
    classes[:] = [c for c in classes if c.__name__ != "SharnirCacheLocator"]
    classes.insert(0, SharnirCacheLocator)
    _folder = folder
    return folder
