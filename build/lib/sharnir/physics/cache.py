"""Where numba keeps Sharnir's compiled kernels: a folder keyed by version and source hash.

numba's own staleness check hashes only the file that holds a kernel, so a kernel that inlines
a helper from another module could keep the old helper after an edit. Keying the folder by a
hash of every physics source file makes any edit or upgrade start from a clean cache.

Only Sharnir's kernels go there: a cache locator placed first in numba's list claims the
functions defined in this folder and leaves every other library's kernels where numba would
put them (NUMBA_CACHE_DIR and numba's config are never touched). `sharnir.physics` registers
it before any kernel module is imported.
"""
import hashlib
import os
from pathlib import Path

_VERSION = "0.1.0"
_PHYSICS = Path(__file__).resolve().parent
_STALE_DAYS = 14


def _source_hash() -> str:
    """Hash of the modules that define or inline kernels (those that mention njit); editing
    world.py, scene code or docs leaves the compiled kernels valid."""
    h = hashlib.sha1()
    for path in sorted(_PHYSICS.glob("*.py")):
        text = path.read_bytes()
        if b"njit" not in text and b"intrinsic" not in text:
            continue
        h.update(path.name.encode())
        h.update(text)
    return h.hexdigest()[:12]


def cache_dir() -> Path:
    """The folder of this version's kernels: $SHARNIR_CACHE_DIR or ~/.cache/sharnir, then
    numba-<version>-<source hash>."""
    base = os.environ.get("SHARNIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sharnir")
    return Path(base) / f"numba-{_VERSION}-{_source_hash()}"


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

    class SharnirCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's locator protocol for the kernels in sharnir/physics."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder / Path(py_file).stem)

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                if Path(py_file).resolve().parent != _PHYSICS:
                    return None
            except OSError:
                return None
            return super().from_function(py_func, py_file)

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.6x
    classes = impl._locator_classes
    classes[:] = [c for c in classes if c.__name__ != "SharnirCacheLocator"]
    classes.insert(0, SharnirCacheLocator)
    _folder = folder
    return folder
