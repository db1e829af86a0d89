"""Where numba keeps its compiled kernels: a folder keyed by version and source hash.

numba's own staleness check looks only at the timestamp of the file that holds a kernel, so a
kernel that inlines a helper from another module can keep the old helper after an edit. Keying
the folder by a hash of every physics source file makes any edit start from a clean cache.
This module must run before any module that defines a kernel.
"""
import hashlib
import os
from pathlib import Path

_VERSION = "0.1.0"


def _source_hash() -> str:
    """Hash of the modules that define or inline kernels (those that mention njit); editing
    world.py, scene code or docs leaves the compiled kernels valid."""
    h = hashlib.sha1()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        text = path.read_bytes()
        if b"njit" not in text and b"intrinsic" not in text:
            continue
        h.update(path.name.encode())
        h.update(text)
    return h.hexdigest()[:12]


def cache_dir() -> Path:
    base = os.environ.get("SHARNIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sharnir")
    return Path(base) / f"numba-{_VERSION}-{_source_hash()}"


_STALE_DAYS = 14


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


def configure() -> Path:
    """Point numba's cache at our folder (works whether or not numba is already imported)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)
    _prune(folder)
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    from numba.core import config
    config.CACHE_DIR = str(folder)
    return folder
