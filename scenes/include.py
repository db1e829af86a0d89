"""Scene files that include other scene, MJCF or URDF files.

    include = [
      { file = "arm.urdf", prefix = "left_", pos = [0.0, 0.3, 0.8], urdf = { fixed_base = true } },
      { file = "table.toml", prefix = "t_", pos = [1.0, 0.0, 0.0], quat = [0.707, 0, 0, 0.707] },
    ]

Each entry's file (relative to the including file) is read as a scene of its own (its own
includes too), then placed: with R = R(quat) and p = pos, every body's pos -> p + R pos,
quat -> quat * q_body, vel -> R vel, angvel -> R angvel; every joint's anchor -> p + R anchor,
axis -> R axis; a load's force and torque -> R force, R torque. Every body and joint name gets
`prefix` in front ("world" stays the world), so one file can be included twice. Its bodies,
joints and loads are appended to the including scene's; its keyframes are renamed and placed
the same way (a free body's pos, quat and velocities) and joined by keyframe name with the
including file's (its entries winning); its world, solver, duration and behaviour are the
including file's business and are not taken. A file that includes itself
(directly or not) and includes deeper than MAX_DEPTH are errors naming the chain.

Every included file, and every folder of an entry's ``urdf.package_roots``, must lie in the
folders the scene may read from (`scenes.asset_roots`); a scene file cannot widen them.
"""
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..physics.message import quoted
from ..physics.transforms import quat_matrix, quat_mul
from .asset_roots import AssetRoots
from .schema import WORLD_BODY, IncludeSpec

MAX_DEPTH = 8


class IncludeError(ValueError):
    """An include entry that cannot be honoured; the loader adds file and entry."""


def expand(raw: dict, path: Path, read: Callable[..., dict],
           chain: tuple[Path, ...] = (), roots: AssetRoots | None = None) -> dict:
    """`raw` (the including file's dict) with its `include` entries read by `read` (path,
    urdf options dict or None -> raw dict, includes not yet expanded) and merged in; files
    outside `roots` (default: `AssetRoots.of(path)`) are refused; raises IncludeError."""
    roots = AssetRoots.of(path) if roots is None else roots
    entries = raw.pop("include", None)
    if entries is None:
        return raw
    here = path.resolve()
    chain = (*chain, here)
    if len(chain) > MAX_DEPTH:
        raise IncludeError(f"includes nest deeper than {MAX_DEPTH} files")
    if not isinstance(entries, list):
        raise IncludeError('"include" must be an array of tables')
    for k, entry in enumerate(entries):
        where = f"include[{k}]"
        try:
            spec = IncludeSpec.model_validate(entry)
        except Exception as exc:  # noqa: BLE001  (pydantic's ValidationError, made one line)
            raise IncludeError(f"{where}: {_first_error(exc)}") from None
        try:
            target = (path.parent / Path(spec.file).expanduser()).resolve()
        except (OSError, ValueError, RuntimeError) as exc:   # a NUL, a name too long, a loop
            reason = getattr(exc, "strerror", None) or "not a usable file name"
            raise IncludeError(f"{where}: {quoted(spec.file)}: {reason}") from None
        refusal = roots.refusal(spec.file, target)
        if refusal is not None:
            raise IncludeError(f'{where}: field "file": {refusal}')
        if target in chain:
            names = " -> ".join(p.name for p in (*chain, target))
            raise IncludeError(f"{where}: {quoted(spec.file)} includes itself ({names})")
        options = None
        if spec.urdf is not None:
            if target.suffix.lower() != ".urdf":
                raise IncludeError(f'{where}: "urdf" options apply to a .urdf file only')
            options = spec.urdf.model_dump()
            options["package_roots"] = [path.parent / Path(p).expanduser()
                                        for p in options["package_roots"]]
            for i, (written, folder) in enumerate(zip(spec.urdf.package_roots,
                                                      options["package_roots"])):
                refusal = roots.refusal(written, folder)
                if refusal is not None:
                    raise IncludeError(f'{where}: field "urdf.package_roots.{i}": {refusal}')
        try:
            sub = expand(read(target, options), target, read, chain, roots)
        except IncludeError as exc:
            raise IncludeError(f"{where} {quoted(spec.file)}: {exc}") from None
        placed = place(sub, spec.prefix, spec.pos, spec.quat)
        for section in ("bodies", "joints", "loads"):
            if placed.get(section):
                raw.setdefault(section, [])
                if not isinstance(raw[section], list):
                    raise IncludeError(f'"{section}" must be an array of tables')
                raw[section].extend(placed[section])
        _merge_keyframes(raw, placed["keyframes"])
    return raw


_KEY_TABLES = ("joints", "rates", "bodies", "voltages", "targets")


def _merge_keyframes(raw: dict, keys: list) -> None:
    """An included file's keyframes (placed) joined with the including file's by name: one
    name's tables are merged, the including file's entries winning (an arm's "home" and the
    other arm's make the scene's "home")."""
    if not keys:
        return
    raw.setdefault("keyframes", [])
    if not isinstance(raw["keyframes"], list):
        raise IncludeError('"keyframes" must be an array of tables')
    by_name = {k.get("name"): k for k in raw["keyframes"] if isinstance(k, dict)}
    for key in keys:
        if not isinstance(key, dict) or key.get("name") not in by_name:
            raw["keyframes"].append(key)
            if isinstance(key, dict):
                by_name[key.get("name")] = key
            continue
        mine = by_name[key["name"]]
        for table in _KEY_TABLES:
            if isinstance(key.get(table), dict):
                ours = mine.get(table)
                mine[table] = {**key[table], **(ours if isinstance(ours, dict) else {})}


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        return f'field "{loc}": {first.get("msg", "")}' if loc else first.get("msg", "")
    return str(exc)


def place(raw: dict, prefix: str, pos: tuple, quat: tuple) -> dict:
    """The bodies, joints and loads of `raw` renamed by `prefix` and moved by (pos, quat)."""
    R = quat_matrix(quat).tolist()

    def name(n: Any) -> Any:
        return n if n == WORLD_BODY or not isinstance(n, str) else prefix + n

    def turn(v: Any) -> Any:
        if not _vec(v, 3):
            return v   # malformed: left for validation to report
        return [sum(R[i][c] * v[c] for c in range(3)) for i in range(3)]

    def move(v: Any) -> Any:
        t = turn(v)
        return [pos[i] + t[i] for i in range(3)] if t is not v else v

    out: dict[str, list] = {"bodies": [], "joints": [], "loads": [], "keyframes": []}
    for body in raw.get("bodies") or ():
        if not isinstance(body, dict):
            out["bodies"].append(body)
            continue
        b = dict(body)
        b["name"] = name(b.get("name"))
        b["pos"] = move(b.get("pos", (0.0, 0.0, 0.0)))
        q = b.get("quat", (1.0, 0.0, 0.0, 0.0))
        if _vec(q, 4):
            b["quat"] = quat_mul(quat, q).tolist()
        for key in ("vel", "angvel"):
            if key in b:
                b[key] = turn(b[key])
        out["bodies"].append(b)
    for joint in raw.get("joints") or ():
        if not isinstance(joint, dict):
            out["joints"].append(joint)
            continue
        j = dict(joint)
        for key in ("name", "body_a", "body_b"):
            if key in j:
                j[key] = name(j[key])
        j["anchor"] = move(j.get("anchor", (0.0, 0.0, 0.0)))
        j["axis"] = turn(j.get("axis", (0.0, 0.0, 1.0)))
        out["joints"].append(j)
    for load in raw.get("loads") or ():
        if not isinstance(load, dict):
            out["loads"].append(load)
            continue
        ld = dict(load)
        ld["body"] = name(ld.get("body"))
        for key in ("force", "torque"):
            if key in ld:
                ld[key] = turn(ld[key])
        out["loads"].append(ld)
    for key in raw.get("keyframes") or ():
        if not isinstance(key, dict):
            out["keyframes"].append(key)
            continue
        k = dict(key)
        for table in ("joints", "rates", "voltages", "targets"):
            if isinstance(k.get(table), dict):
                k[table] = {name(n): v for n, v in k[table].items()}
        if isinstance(k.get("bodies"), dict):   # a free body's state, placed as the bodies
            bodies = {}
            for n, entry in k["bodies"].items():
                e = dict(entry) if isinstance(entry, dict) else entry
                if isinstance(e, dict):
                    if "pos" in e:
                        e["pos"] = move(e["pos"])
                    if _vec(e.get("quat"), 4):
                        e["quat"] = quat_mul(quat, e["quat"]).tolist()
                    for v in ("vel", "angvel"):
                        if v in e:
                            e[v] = turn(e[v])
                bodies[name(n)] = e
            k["bodies"] = bodies
        out["keyframes"].append(k)
    return out


def _vec(v: Any, n: int) -> bool:
    return (isinstance(v, (list, tuple)) and len(v) == n
            and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                    and math.isfinite(x) for x in v))
