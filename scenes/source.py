"""A scene's source files as the readers take them: SceneError, the one error a scene that
cannot be read raises, and read_bytes, which reads a regular file of bounded size. Its own
module so that the loader and the URDF and MJCF readers it calls share them without
importing one another."""
import os
import stat
from pathlib import Path

from ..physics.message import quoted, shortened

MAX_SCENE_BYTES = 64 << 20  # a scene file larger than this is refused before it is read


class SceneError(Exception):
    """A scene that cannot be loaded; ``str()`` is the message to show the user, one line per
    problem, each cut to a few hundred characters (physics.message.shortened)."""

    def __init__(self, message=""):
        super().__init__(shortened(message))


def read_bytes(path: Path, source: str, limit: int = MAX_SCENE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; SceneError otherwise (a folder,
    a FIFO or a device is refused before it is opened: reading one may never end)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise SceneError(f"{source}: no such file") from None
    except OSError as exc:   # (a name too long is shown cut short)
        shown = source if len(source) <= 300 else quoted(source, 200)
        raise SceneError(f"{shown}: cannot read the file ({exc.strerror})") from None
    except ValueError:   # (a NUL character in the name)
        raise SceneError(f"{source!r}: not a usable file name") from None
    if stat.S_ISDIR(info.st_mode):
        raise SceneError(f"{source}: is a directory, not a scene file")
    if not stat.S_ISREG(info.st_mode):
        raise SceneError(f"{source}: not a regular file (a pipe, socket or device); "
                         "scene files are read from regular files only")
    if info.st_size > limit:
        raise SceneError(f"{source}: {info.st_size:,} bytes, more than the {limit:,} a scene "
                         "file may have")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise SceneError(f"{source}: cannot read the file ({exc.strerror})") from None
    if len(data) > limit:   # grew while we looked
        raise SceneError(f"{source}: more than the {limit:,} bytes a scene file may have")
    return data
