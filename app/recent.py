"""Recent scene files: the last few scenes opened in the app, most recent first; and the
window's size when it last closed.

The list lives in ``$XDG_CONFIG_HOME/sharnir/recent.json`` (``~/.config/sharnir/recent.json``
when XDG_CONFIG_HOME is unset or not absolute) as ``{"version": 1, "files": [...]}`` with
absolute paths.  It is written whole or not at all (a temporary file in the same folder,
renamed over the old one).  A file that cannot be read or parsed is ignored -- the list
starts empty and `note` says why -- and never stops the app; a path that no longer exists
stays in the list (shown greyed by the panel) until it is opened again or pushed out.

Reading never hangs or dies on what a broken or hostile file can be: only a regular file is
opened (never a FIFO, a device such as /dev/zero or a folder, also behind a symlink), at
most READ_MAX bytes are read, and JSON nested too deep, text that is not UTF-8 or entries that
cannot name a file (a NUL, a lone surrogate that no file name decodes to) are a note.  File
names that are not UTF-8 are kept (as Python's surrogate escapes, written to JSON as \\udcNN).

The window's size lives beside it, in ``window.json`` as ``{"version": 1, "size": [w, h]}``
(`save_window_size`, `load_window_size`), written and read the same careful way; a file
that is missing or not such a size is no size, and the window opens at its default.
"""
import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path

from .printable import encodable, printable

RECENT_MAX = 8
FILE_VERSION = 1
READ_MAX = 256 * 1024  # bytes: 8 paths need far less; a bigger file is not ours


def config_dir():
    """The folder of Sharnir's settings, per the XDG base directory spec."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "sharnir"


def default_path():
    return config_dir() / "recent.json"


def window_size_path():
    return config_dir() / "window.json"


def load_window_size(path=None):
    """The window size last stored (`save_window_size`): (width, height) in px, or None when
    none is stored or the file is not such a size."""
    try:
        data = json.loads(_read_regular(path or window_size_path()).decode("utf-8"))
        width, height = data["size"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
               for v in (width, height)):
        return None
    return width, height


def save_window_size(width, height, path=None):
    """Store the window's size for the next start; returns a note if that failed, else
    None."""
    path = Path(path) if path is not None else window_size_path()
    text = json.dumps({"version": FILE_VERSION, "size": [int(width), int(height)]}) + "\n"
    try:
        _write_atomic(path, text)
    except (OSError, ValueError) as exc:  # ValueError: a folder name with a NUL
        return f"window size: cannot save {printable(path)} ({_reason(exc)})"
    return None


def _normal(path):
    """An absolute, normalised path string (symlinks kept as the user named them)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(path))))


class RecentFiles:
    """The recent-files list kept in `path` (default: `default_path()`), `limit` entries."""

    def __init__(self, path=None, limit=RECENT_MAX):
        self.path = Path(path) if path is not None else default_path()
        self.limit = int(limit)
        self.files = []      # absolute path strings, most recent first
        self.note = None     # why the stored list was ignored or could not be saved
        self.load()

    def load(self):
        """Read the stored list; a missing file is an empty list, a bad one a note."""
        self.files, self.note = [], None
        where = printable(self.path)
        try:
            data = _read_regular(self.path)
        except FileNotFoundError:
            return self.files
        except (OSError, ValueError) as exc:
            self.note = f"recent files: cannot read {where} ({_reason(exc)}); ignored"
            return self.files
        try:
            data = json.loads(data.decode("utf-8"))
            files = data["files"] if isinstance(data, dict) else None
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise ValueError("no list of file names under 'files'")
        except RecursionError:
            self.note = f"recent files: {where} is nested too deep to be a list; ignored"
            return self.files
        except UnicodeDecodeError as exc:
            self.note = (f"recent files: {where} is not UTF-8 text (byte {exc.start}); "
                         "ignored")
            return self.files
        except (ValueError, KeyError, TypeError) as exc:
            self.note = f"recent files: {where} is not a valid list ({exc}); ignored"
            return self.files
        seen, unusable = set(), 0
        for f in files:
            if not encodable(f):
                unusable += 1
                continue
            p = _normal(f)
            if f.strip() and p not in seen:
                seen.add(p)
                self.files.append(p)
        del self.files[self.limit:]
        if unusable:
            self.note = (f"recent files: {unusable} of the names in {where} cannot name a "
                         "file (a NUL or a lone surrogate); ignored")
        return self.files

    def add(self, path):
        """Put `path` first (moving it up if listed), keep `limit` entries and save; returns
        a note if saving failed, else None."""
        if not encodable(str(path)):
            self.note = f"recent files: {printable(path)} cannot name a file; not added"
            return self.note
        p = _normal(path)
        self.files = [p] + [f for f in self.files if f != p]
        del self.files[self.limit:]
        return self.save()

    def remove(self, path):
        p = _normal(path)
        self.files = [f for f in self.files if f != p]
        return self.save()

    def save(self):
        """Write the list atomically; returns a note if that failed (the list in memory is
        kept), else None."""
        # json writes every non-ASCII character as an escape (ensure_ascii): a name that is
        # not UTF-8 is stored as its surrogate escapes and cannot fail to encode.
        text = json.dumps({"version": FILE_VERSION, "files": self.files}, indent=1) + "\n"
        try:
            _write_atomic(self.path, text)
        except (OSError, ValueError) as exc:  # ValueError: a folder name with a NUL
            self.note = f"recent files: cannot save {printable(self.path)} ({_reason(exc)})"
            return self.note
        return None

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)


def _write_atomic(path, text):
    """Write ASCII `text` to `path` whole or not at all: a temporary file in the same folder,
    renamed over the old one (removed if anything failed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(text)
        os.replace(temp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _read_regular(path):
    """The first READ_MAX bytes of `path` if it is a regular file (after symlinks); a
    FIFO, device, socket or folder is a ValueError, never opened (opening a FIFO waits for
    a writer; /dev/zero never ends).  The file is opened without blocking and checked again
    once open, in case it was swapped between the two looks."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise ValueError(f"not a regular file: {_kind(mode)}")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"not a regular file: {_kind(info.st_mode)}")
        if info.st_size > READ_MAX:
            raise ValueError(f"{info.st_size} bytes, more than a list of recent files "
                             f"({READ_MAX} at most)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(READ_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > READ_MAX:
        raise ValueError(f"more than {READ_MAX} bytes")
    return data


def _kind(mode):
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def _reason(exc):
    return printable(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
