"""Recent scene files: the last few scenes opened in the app, most recent first.

The list lives in ``$XDG_CONFIG_HOME/sharnir/recent.json`` (``~/.config/sharnir/recent.json``
when XDG_CONFIG_HOME is unset or not absolute) as ``{"version": 1, "files": [...]}`` with
absolute paths.  It is written whole or not at all (a temporary file in the same folder,
renamed over the old one).  A file that cannot be read or parsed is ignored -- the list
starts empty and `note` says why -- and never stops the app; a path that no longer exists
stays in the list (shown greyed by the panel) until it is opened again or pushed out.
"""
import contextlib
import json
import os
import tempfile
from pathlib import Path

RECENT_MAX = 8
FILE_VERSION = 1


def config_dir():
    """The folder of Sharnir's settings, per the XDG base directory spec."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "sharnir"


def default_path():
    return config_dir() / "recent.json"


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
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return self.files
        except (OSError, UnicodeDecodeError) as exc:
            self.note = f"recent files: cannot read {self.path} ({_reason(exc)}); ignored"
            return self.files
        try:
            data = json.loads(text)
            files = data["files"] if isinstance(data, dict) else None
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise ValueError("no list of file names under 'files'")
        except (ValueError, KeyError, TypeError) as exc:
            self.note = f"recent files: {self.path} is not a valid list ({exc}); ignored"
            return self.files
        seen = set()
        for f in files:
            p = _normal(f)
            if f.strip() and p not in seen:
                seen.add(p)
                self.files.append(p)
        del self.files[self.limit:]
        return self.files

    def add(self, path):
        """Put `path` first (moving it up if listed), keep `limit` entries and save; returns
        a note if saving failed, else None."""
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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                        suffix=".part")
        except OSError as exc:
            self.note = f"recent files: cannot save {self.path} ({_reason(exc)})"
            return self.note
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": FILE_VERSION, "files": self.files}, handle, indent=1)
                handle.write("\n")
            os.replace(temp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            self.note = f"recent files: cannot save {self.path} ({_reason(exc)})"
            return self.note
        return None

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)


def _reason(exc):
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
