"""The folders a scene's files may come from.

A scene file names other files: hull meshes, included scene, URDF and MJCF files, a URDF's
meshes (``package://`` too), an MJCF file's includes and assets. Each is read only if its real
path (symbolic links resolved, ``..`` folded) lies in one of these folders:

* the folder of the file the user opened (as named, and its real folder when the name is a
  symbolic link): the scene passed to ``sharnir``, ``read_scene`` or ``read_urdf``;
* the folders the person running Sharnir declares: ``--asset-root DIR`` (repeatable),
  ``read_scene(..., asset_roots=[...])``, the ``package_roots`` of ``read_urdf`` and the
  folders of ``$SHARNIR_ASSET_PATH`` and ``$ROS_PACKAGE_PATH`` (``os.pathsep``-separated);
* for a robot file the user opened (URDF or MJCF) that lies in a folder named as robot
  description packages name the folder of their robot files (ROBOT_FOLDERS: urdf, mjcf,
  xml...), the folder above it, the robot's package by that convention even without a
  ``package.xml`` (Unitree's ``a2_description/urdf/a2.urdf`` reads ``../meshes``, as MuJoCo
  and PyBullet do), unless that is the file system's root or the user's home folder;
* Sharnir's own ``assets/`` folder (shipped meshes, public);
* for a URDF file, a ROS package found by the ROS rules: a folder NAME holding a
  ``package.xml``, the URDF's folder or one above it or beside one above it, for
  ``package://NAME/...``, and the package the URDF itself lies in (an MJCF file's too: a
  robot package keeps ``mjcf/robot.xml`` beside ``meshes/``). A package is a folder its
  author declared, so it is an allowed folder by construction.

A scene file cannot widen this: a file that could name its own allowed folders could name
``/``. Folders a scene file gives (an include's ``urdf.package_roots``) must themselves lie in
the allowed folders. Anything else is one error naming the file, the entry and the field.
"""
import os
from pathlib import Path

ENV_VAR = "SHARNIR_ASSET_PATH"
ROS_VAR = "ROS_PACKAGE_PATH"
SHIPPED_ASSETS = Path(__file__).resolve().parent.parent / "assets"
SHOWN_FOLDERS = 4     # folders listed in an error, then "and N more"
# the folders robot packages keep their robot files in: the package is the folder above
ROBOT_FOLDERS = ("urdf", "urdfs", "xacro", "mjcf", "xml", "robots", "model", "models")
ROBOT_SUFFIXES = (".urdf", ".xml")
SHOWN_CHARS = 40      # each shortened to its last characters


def real(path) -> str:
    """The absolute real path of `path` (user folder expanded, symbolic links resolved)."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(path))))


def env_folders() -> list[str]:
    """The folders of $SHARNIR_ASSET_PATH and $ROS_PACKAGE_PATH."""
    return [p for var in (ENV_VAR, ROS_VAR)
            for p in os.environ.get(var, "").split(os.pathsep) if p]


class AssetRoots:
    """An immutable set of allowed folders (real paths)."""

    def __init__(self, folders=()):
        self.folders = tuple(dict.fromkeys(real(f) for f in folders))

    @classmethod
    def of(cls, path, declared=()) -> "AssetRoots":
        """The allowed folders of a file the user opened: its folder (and a robot file's
        package by ROBOT_FOLDERS' convention), `declared` (the user's), the environment's
        and Sharnir's assets."""
        named = os.path.dirname(os.path.abspath(os.fspath(path)))
        own = [named, os.path.dirname(real(path))]
        if os.fspath(path).lower().endswith(ROBOT_SUFFIXES):
            too_wide = {os.path.abspath(os.sep), real(os.path.expanduser("~"))}
            own += [up for up in (os.path.dirname(f) for f in own
                                  if os.path.basename(f).lower() in ROBOT_FOLDERS)
                    if real(up) not in too_wide]
        return cls((*own, *declared, *env_folders(), SHIPPED_ASSETS))

    def widened(self, *folders) -> "AssetRoots":
        """These folders and `folders`."""
        return AssetRoots((*self.folders, *folders))

    def holds(self, path) -> bool:
        """Whether the real path of `path` lies in one of the folders."""
        target = real(path)
        for root in self.folders:
            try:
                if os.path.commonpath((target, root)) == root:
                    return True
            except ValueError:   # (different drives)
                continue
        return False

    def refusal(self, written, path) -> str | None:
        """None if `path` (written as `written` in a file) may be read; else the reason, one
        line: the path, where it really is, and the allowed folders, shortened."""
        try:
            if self.holds(path):
                return None
            target, written = real(path), os.fspath(written)
        except (OSError, ValueError):   # (a NUL in the name, a name too long)
            return f'"{_short(os.fspath(written))}" is not a usable file name'
        where = f'"{_short(written)}"' + ("" if written == target else f" ({_short(target)})")
        return (f"{where} is outside the allowed folders ({self.listing()}); add one with "
                f"--asset-root DIR or ${ENV_VAR}")

    def listing(self) -> str:
        """The folders, each shortened, at most SHOWN_FOLDERS of them."""
        shown = [_short(f) for f in self.folders[:SHOWN_FOLDERS]]
        more = len(self.folders) - SHOWN_FOLDERS
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _short(folder: str) -> str:
    return folder if len(folder) <= SHOWN_CHARS else "..." + folder[-(SHOWN_CHARS - 3):]


def own_package(path):
    """The ROS package the URDF or MJCF file at `path` lies in: the nearest folder above it
    (its own included) holding a package.xml; None if there is none."""
    for folder in Path(os.path.abspath(path)).resolve().parents:
        if (folder / "package.xml").is_file():
            return folder
    return None
