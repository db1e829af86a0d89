"""Writing scenes as TOML: `sharnir convert` and the scene builder (scenes/build.py).

`scene_toml(spec)` writes a validated scene (`schema.SceneSpec`, from a TOML, MJCF or URDF
file) as a Sharnir TOML scene that reads back to the same spec: the values that differ from
the defaults, floats in their shortest exact form (``repr``), one inline table per body, joint
and load, as the shipped scenes are written. Hull and mesh files (of shapes, parts
and visuals) are written relative to the output's folder when they lie under it, else as
absolute paths.
"""
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from .schema import SceneSpec

# the top-level keys, in the order a reader expects them; tables after plain keys
_ORDER = ("version", "description", "duration", "behaviour", "world", "solver")
_LISTS = ("bodies", "joints", "loads", "keyframes")


def value(v: Any) -> str:
    """A TOML literal for a number, bool, string, sequence or dict (inline table)."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if not math.isfinite(x):
            raise ValueError(f"not a finite number: {x}")
        return repr(x + 0.0)           # shortest exact form; no "-0.0"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items()
                                if x is not None) + " }"
    return "[" + ", ".join(value(x) for x in v) + "]"


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: str) -> str:
    if k and all(c.isalnum() or c in "_-" for c in k) and k.isascii():
        return k
    return _string(k)


def scene_toml(spec: SceneSpec, *, header: str = "", base: Path | None = None) -> str:
    """The TOML text of a validated scene; `header` becomes the leading comment, `base` is the
    folder the file will be written to (hull files under it are written relative to it)."""
    raw = spec.model_dump(exclude_defaults=True)
    for body in raw.get("bodies", []):
        _relative_files(body.get("shape"), base)
        for visual in body.get("visuals") or ():
            _relative_files(visual.get("shape"), base)
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()] if header else []
    if lines:
        lines.append("")
    for k in _ORDER:
        if k in raw and raw[k] is not None:
            lines.append(f"{k} = {value(raw[k])}")
    for k in _LISTS:
        if raw.get(k):
            lines += ["", f"{k} = ["] + [f"  {value(item)}," for item in raw[k]] + ["]"]
    return "\n".join(lines) + "\n"


def _relative_files(shape: Any, base: Path | None) -> None:
    if not isinstance(shape, dict):
        return
    if shape.get("type") in ("hull", "mesh") and shape.get("file") and base is not None:
        path = Path(shape["file"]).resolve()
        try:
            shape["file"] = path.relative_to(Path(base).resolve()).as_posix()
        except ValueError:
            shape["file"] = os.fspath(path)
    for part in shape.get("parts") or ():
        _relative_files(part.get("shape"), base)
