"""Read scene files: TOML -> ``--set`` overrides -> validated `SceneSpec` -> physics ``World``.

Every failure is raised as `SceneError`, whose message is written for the
person who wrote the file: one line per problem, each naming the file, the
entry (``bodies[1] "arm"``) and the field, and never a Python traceback.
The file format itself is documented in `scenes.schema`.
"""

import contextlib
import copy
import difflib
import importlib
import math
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from ..physics.message import listing, quoted
from .asset_roots import AssetRoots, own_package
from .include import IncludeError
from .include import expand as expand_includes
from .schema import (
    MAX_START_HEIGHT_M,
    PART_SHAPES,
    SHAPES,
    BodySpec,
    JointSpec,
    LoadSpec,
    Loc,
    PartSpec,
    SceneSpec,
    ShapeSpec,
    SolverSpec,
    VisualSpec,
    WorldSpec,
)
from .source import MAX_SCENE_BYTES, SceneError, read_bytes  # noqa: F401 (re-exported)

SCENE_DIR = Path(__file__).parent
MAX_REPORTED = 10
SHOW_CHARS = 80             # a value quoted in a message is cut to about this many characters
# a URDF opened as a scene stands on a ground plane (an included one is placed by its include)
OPENED_URDF = {"ground": True, "height": 0.0}

# The scene's tables and arrays of tables, with the model each follows.
_TABLES: dict[str, type[BaseModel]] = {"world": WorldSpec, "solver": SolverSpec}
_ARRAYS: dict[str, type[BaseModel]] = {"bodies": BodySpec, "joints": JointSpec, "loads": LoadSpec}
# --set addresses bodies and joints by name, loads (which have none) by index.
_NAMED = {"bodies": "body", "joints": "joint", "keyframes": "keyframe"}
# pydantic messages that read badly in a scene-file context.
_MESSAGES = {
    "finite_number": "NaN or infinite value",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dict_type": "must be a table",
    "list_type": "must be an array of tables",
    "tuple_type": "must be an array",
    "float_type": "must be a number",
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "string_too_short": "must not be empty",
}
_NO_VALUE = object()  # "no offending value to show"; None is a value


def shipped_scenes() -> dict[str, str]:
    """The scenes shipped with Sharnir: name (the file's stem) -> its one-line description."""
    scenes = {}
    for path in sorted(SCENE_DIR.glob("*.toml")):
        try:
            with path.open("rb") as f:
                scenes[path.stem] = str(tomllib.load(f).get("description", ""))
        except (OSError, tomllib.TOMLDecodeError):
            scenes[path.stem] = ""
    return scenes


def resolve_scene(ref: str | Path) -> Path:
    """A scene named by path, or by the name of a shipped scene (`door`, `chain.toml`). A path
    that exists wins over a shipped name; neither is a SceneError that lists the names."""
    path = Path(ref)
    if path.exists() or path.parent != Path("."):
        return path
    stem = path.name[:-5] if path.name.endswith(".toml") else path.name
    shipped = SCENE_DIR / f"{stem}.toml"
    if shipped.is_file():
        return shipped
    names = ", ".join(shipped_scenes())
    raise SceneError(f"{ref}: no such file, nor a shipped scene (shipped: {names})")


class MeshWarning(UserWarning):
    """A mesh whose mass properties are its convex hull's (its triangles enclose no volume), a
    hull thinned, a convex decomposition merged down to its max_parts or not made."""


def _leaves(shape: Any) -> list:
    """A compound's parts' shapes (a decomposed mesh's pieces), or [shape]."""
    return [leaf for p in getattr(shape, "parts", ()) for leaf in _leaves(p[0])] or [shape]


def _listed(entries: list, room: int = 240) -> str:
    """Entries joined by ", " up to about `room` characters, then how many there are."""
    shown, used = [], 0
    for entry in entries:
        used += len(entry) + 2
        if used > room and shown:
            return ", ".join(shown) + f", ... ({len(entries):,} in all)"
        shown.append(entry)
    return ", ".join(shown)


def _drawn(shape: Any) -> list:
    """Visuals (shape, pos, quat, None) that draw a shape holding decomposed meshes as it is
    written: each decomposed mesh by its triangles, any other part as itself; [] for a shape
    holding none (it draws itself)."""
    from ..physics.shape import Decomposed

    if isinstance(shape, Decomposed):
        return [(shape.mesh, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), None)]
    parts = getattr(shape, "parts", ())
    if not any(isinstance(part[0], Decomposed) for part in parts):
        return []
    return [(s.mesh if isinstance(s, Decomposed) else s, p, q, None) for s, p, q in parts]


def _mesh_name(leaf: Any) -> str:
    """A hull's or mesh's file name, or "inline mesh"."""
    return Path(str(leaf.source)).name if leaf.source else "inline mesh"


def _open_mesh(shape: Any) -> str:
    """The source of the first mesh in `shape` that encloses no volume, or ""."""
    for leaf in _leaves(shape):
        if getattr(leaf, "closed", True) is False:
            return _mesh_name(leaf)
    return ""


def read_scene(path: str | Path, sets: Iterable[str] = (),
               asset_roots: Iterable[str | Path] = (), strict: bool = False,
               robot: dict | None = None) -> SceneSpec:
    """Read, override (``--set KEY=VALUE`` strings) and validate a scene file (a path, or the
    name of a shipped scene: `resolve_scene`); a ``.xml`` file is MuJoCo MJCF (`scenes.mjcf`),
    a ``.urdf`` file a URDF robot (`scenes.urdf`), read with OPENED_URDF and `robot`'s
    options (fixed_base, height, decompose: `robot_options`; a SceneError for another kind of
    file).
    The files it names are read only from its folder and the folders `asset_roots` (and the
    others of `scenes.asset_roots`). `strict`: what a URDF reader would repair with a warning
    (an unphysical or missing inertia) is an error instead."""
    path = resolve_scene(path)
    source = str(path)
    roots = AssetRoots.of(path, asset_roots)
    top = robot_options(robot, source)
    if path.suffix.lower() == ".urdf":
        top = {**OPENED_URDF, **top}
    elif top:
        raise SceneError(f"{source}: the robot options ({', '.join(top)}) apply to a URDF "
                         "robot (.urdf) only")

    def read(file: Path, urdf: dict | None = None) -> dict:
        return _read_raw(file, urdf, roots, strict)

    raw = read(Path(path), top or None)
    try:
        raw = expand_includes(raw, Path(path), read, roots=roots)
    except IncludeError as exc:
        raise SceneError(f"{source}: {exc}") from None
    try:
        if sets:   # (a copy: 0.1 s of deep-copying the tube's 1000 bodies otherwise)
            raw = apply_overrides(raw, list(sets), source)
        try:
            return SceneSpec.model_validate(raw)
        except ValidationError as exc:
            raise SceneError(_format_errors(exc, raw, source)) from None
    except RecursionError:
        raise SceneError(f"{source}: arrays or tables nest too deeply to read") from None


def robot_options(robot: dict | None, source: str) -> dict:
    """The options a URDF opened as a scene is read with besides OPENED_URDF, checked:
    ``fixed_base`` (True, False, or None: what the file means, scenes.urdf), ``height`` (m,
    finite: the lowest point's start height above the ground; None: on the ground) and
    ``decompose`` (True: every collision mesh collides as convex pieces, scenes/decompose.py;
    False or None: as its hull). Only the keys given, with a value other than None, are
    returned; anything else is a SceneError."""
    out = {}
    for key, value in (robot or {}).items():
        if key not in ("fixed_base", "height", "decompose"):
            raise SceneError(f"{source}: unknown robot option {key!r} (fixed_base, height, "
                             "decompose)")
        if value is None:
            continue
        if key == "fixed_base" and not isinstance(value, bool):
            raise SceneError(f"{source}: robot option fixed_base must be true, false or "
                             f"absent (from the file), not {value!r}")
        if key == "decompose" and not isinstance(value, bool):
            raise SceneError(f"{source}: robot option decompose must be true or false, not "
                             f"{value!r}")
        if key == "height":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and abs(value) <= MAX_START_HEIGHT_M):
                raise SceneError(f"{source}: robot option height must be a number of metres "
                                 f"within +-{MAX_START_HEIGHT_M:g} (got {value!r})")
            value = float(value)
        out[key] = value
    return out


def load_scene(path: str | Path, sets: Iterable[str] = (),
               asset_roots: Iterable[str | Path] = (), strict: bool = False,
               robot: dict | None = None, **kw: Any):
    """`read_scene` then `build_world`; the world remembers its file as ``world.source``."""
    spec = read_scene(path, sets, asset_roots, strict, robot)
    world = build_world(spec, source=str(path), **kw)
    world.description = spec.description
    world.source = str(path)
    return world


def _friction_regions(physics, body):
    """The physics.FrictionRegion records of a body's friction_regions."""
    out = []
    for r in body.friction_regions:
        if r.box is not None:
            out.append(physics.FrictionRegion(r.friction, box=(r.box.center,
                                                                 r.box.half_extents)))
        elif r.half_space is not None:
            out.append(physics.FrictionRegion(r.friction, half_space=(r.half_space.normal,
                                                                        r.half_space.offset)))
        else:
            out.append(physics.FrictionRegion(r.friction, face=r.face))
    return tuple(out)


def build_world(
    spec: SceneSpec,
    *,
    dt: float | None = None,
    iterations: int | None = None,
    budget_ms: float | None = None,
    source: str = "scene",
):
    """Create a physics ``World`` from a validated scene.

    ``dt``, ``iterations`` and ``budget_ms`` (from the command line) replace the
    scene's values when not None and are validated by the same rules.  ``source``
    names the scene in error messages.
    """
    # lazily, so reading and validating scenes works without the engine
    physics = importlib.import_module("sharnir.physics")

    world_spec = _replace(spec.world, source, dt=dt)
    solver = _replace(spec.solver, source, iterations=iterations, budget_ms=budget_ms)
    with _blame(source, "[world]"):
        world = physics.World(
            dt=world_spec.dt,
            gravity=world_spec.gravity,
            iterations=solver.iterations,
            position_iterations=solver.position_iterations,
            tolerance=solver.tolerance,
            budget_ms=solver.budget_ms,
            warm_start=solver.warm_start,
            manifold_reuse=solver.manifold_reuse,
            articulation=solver.articulation,
            threads=solver.threads,
            max_speed=world_spec.max_speed,
            max_angular_speed=world_spec.max_angular_speed,
            max_joint_gap=world_spec.max_joint_gap,
            max_joint_angle_gap=world_spec.max_joint_angle_gap,
            max_energy_gain=world_spec.max_energy_gain,
        )
    meshes: dict = {}  # one Hull / Mesh per (file, scale): bodies share it, and its GL mesh
    open_meshes = []   # bodies whose mass comes from a mesh that encloses no volume
    thinned = set()    # collision meshes whose hull was thinned (physics.shape.Hull.thinned)
    merged, undecomposed = [], {}   # decomposed meshes capped; not decomposed, by the reason
    for i, body in enumerate(spec.bodies):
        with _blame(source, f"bodies[{i}] {quoted(body.name)}"):
            notes: list = []
            shape = _make_shape(physics, body.shape, meshes, notes=notes)
            visuals = [(_make_shape(physics, v.shape, meshes, f"visuals.{k}.shape",
                                    drawn_only=True), v.pos, v.quat, v.rgba)
                       for k, v in enumerate(body.visuals)]
            visuals = visuals or _drawn(shape)   # a decomposed mesh is drawn as written
            for name, done, note in notes:
                if done:
                    merged.append(f"{quoted(body.name)} ({name}: {note})")
                else:
                    undecomposed.setdefault(note, []).append(f"{quoted(body.name)} ({name})")
            thinned.update(f"{_mesh_name(leaf)} ({leaf.thinned[0]} -> {leaf.thinned[1]} "
                           "corners)" for leaf in _leaves(shape) if getattr(leaf, "thinned", None))
            if body.inertia is None and body.kind == "dynamic" and _open_mesh(shape):
                open_meshes.append(f"{quoted(body.name)} ({_open_mesh(shape)})")
            world.add_body(
                body.name,
                shape,
                mass=body.mass,
                density=body.density,
                inertia=body.inertia,
                pos=body.pos,
                quat=body.quat,
                vel=body.vel,
                angvel=body.angvel,
                kind=body.kind,
                material=physics.Material(friction=body.friction, rolling=body.rolling,
                                          spinning=body.spinning,
                                          restitution=body.restitution,
                                          friction_axis=body.friction_axis,
                                          friction_along=body.friction_along,
                                          regions=_friction_regions(physics, body)),
                group=body.group,
                mask=body.mask,
                visuals=visuals,
            )
    if open_meshes:
        import warnings

        warnings.warn(f"{source}: these bodies' meshes enclose no volume (not watertight or "
                      "not consistently wound): their mass properties are their convex "
                      f"hulls': {listing(open_meshes)}", MeshWarning, stacklevel=2)
    if thinned:
        import warnings

        warnings.warn(f"{source}: convex hulls thinned to at most "
                      f"{physics.shape.MAX_HULL_VERTICES} corners for contacts (drawn as "
                      f"written): {listing(sorted(thinned))}", MeshWarning, stacklevel=2)
    if merged:
        import warnings

        warnings.warn(f"{source}: convex decompositions capped (pieces beyond max_parts "
                      "merged, meshes of many triangles remeshed coarser first): "
                      f"{_listed(merged)}", MeshWarning, stacklevel=2)
    for reason, names in undecomposed.items():
        import warnings

        warnings.warn(f"{source}: meshes not decomposed ({reason}): they collide as their "
                      f"convex hulls: {_listed(names)}", MeshWarning, stacklevel=2)
    for i, joint in enumerate(spec.joints):
        with _blame(source, f"joints[{i}] {quoted(joint.name)}"):
            world.add_joint(
                joint.name,
                joint.type,
                joint.body_a,
                joint.body_b,
                anchor=joint.anchor,
                axis=joint.axis,
                friction=joint.friction,
                limits=joint.limits,
                damping=joint.damping,
            )
            if joint.motor is not None:
                m = joint.motor
                world.add_motor(joint.name, physics.DCMotor(
                    resistance=m.resistance, inductance=m.inductance,
                    torque_constant=m.torque_constant, rotor_inertia=m.rotor_inertia,
                    gear_ratio=m.gear_ratio, efficiency=m.efficiency,
                    voltage_limit=_unlimited(m.voltage_limit),
                    current_limit=_unlimited(m.current_limit),
                    torque_limit=_unlimited(m.torque_limit)), voltage=m.voltage)
                c = m.controller
                if c is not None:
                    world.set_controller(joint.name, c.mode, kp=c.kp, kd=c.kd, target=c.target,
                                         sine=c.sine, keyframes=c.keyframes,
                                         implicit=c.implicit)
    for i, joint in enumerate(spec.joints):
        if joint.mimic is not None:
            with _blame(source, f'joints[{i}] "{joint.name}"'):
                world.add_coupling(joint.name, joint.mimic.joint,
                                   multiplier=joint.mimic.multiplier, offset=joint.mimic.offset,
                                   lower=joint.mimic.lower, upper=joint.mimic.upper)
    for i, load in enumerate(spec.loads):
        with _blame(source, f"loads[{i}]"):
            world.add_load(
                load.body,
                force=load.force,
                torque=load.torque,
                start=load.start,
                end=math.inf if load.end is None else load.end,
            )
    world.keyframes = {}
    for i, key in enumerate(spec.keyframes):
        entry = keyframe_entry(key)
        with _blame(source, f"keyframes[{i}] {quoted(key.name)}"):
            world.check_keyframe(**entry)
        world.keyframes[key.name] = entry
    if spec.behaviour is not None:
        behaviours = importlib.import_module("sharnir.scenes.behaviours")
        with _blame(source, "behaviour"):
            world.set_hook(behaviours.make(spec.behaviour.name, world))
    return world


def keyframe_entry(key) -> dict:
    """World.apply_keyframe's arguments of a KeyframeSpec."""
    return dict(joints=dict(key.joints), rates=dict(key.rates), voltages=dict(key.voltages),
                bodies={name: {k: v for k, v in b.model_dump().items() if v is not None}
                        for name, b in key.bodies.items()}, targets=dict(key.targets))


def _read_raw(path: Path, urdf: dict | None = None, roots: AssetRoots | None = None,
              strict: bool = False) -> dict:
    """The raw dict of one scene file by its suffix (TOML, MuJoCo ``.xml``, URDF ``.urdf``
    read with the `urdf` options of read_urdf), hull files made relative to its folder and
    confined to `roots` (default: the file's own, `AssetRoots.of`); its includes are not
    expanded yet."""
    roots = AssetRoots.of(path) if roots is None else roots
    if path.suffix.lower() == ".xml":  # MuJoCo MJCF, through MuJoCo's compiler
        from .mjcf import read_mjcf

        own = own_package(path)   # a ROS package holds its MJCF's meshes too (../meshes)
        raw = read_mjcf(path, asset_roots=roots if own is None else roots.widened(own))
    elif path.suffix.lower() == ".urdf":
        from .urdf import read_urdf

        raw = read_urdf(path, **(urdf or {}), asset_roots=roots, strict=strict)
        _resolve_files(raw, path.parent, None, str(path))   # (checked as the URDF was read)
        return raw
    else:
        raw = _read_toml(path, str(path))
    _resolve_files(raw, path.parent, roots, str(path))
    return raw


def _resolve_files(raw: dict, base: Path, roots: AssetRoots | None, source: str) -> None:
    """Make every hull or mesh ``file`` (of a body's shape, a compound's part or a visual) that
    is a relative path relative to the scene file's folder ``base``, in place, and refuse one
    outside `roots` (None: not checked); anything malformed is left for validation to report."""
    def visit(shape: Any, where: str, field: str) -> None:
        if not isinstance(shape, dict):
            return
        file = shape.get("file")
        if shape.get("type") in ("hull", "mesh") and isinstance(file, str) and file:
            shape["file"] = str(base / Path(file).expanduser())
            refusal = None if roots is None else roots.refusal(file, shape["file"])
            if refusal is not None:
                raise SceneError(f'{source}: {where}: field "{field}.file": {refusal}')
        parts = shape.get("parts")
        if shape.get("type") == "compound" and isinstance(parts, list):
            for k, part in enumerate(parts):
                if isinstance(part, dict):
                    visit(part.get("shape"), where, f"{field}.parts.{k}.shape")

    bodies = raw.get("bodies")
    if isinstance(bodies, list):
        for i, body in enumerate(bodies):
            if isinstance(body, dict):
                name = body.get("name")
                where = f"bodies[{i}]" + (f" {_show(name)}" if isinstance(name, str) else "")
                visit(body.get("shape"), where, "shape")
                visuals = body.get("visuals")
                for k, visual in enumerate(visuals if isinstance(visuals, list) else ()):
                    if isinstance(visual, dict):
                        visit(visual.get("shape"), where, f"visuals.{k}.shape")


def apply_overrides(raw: dict, sets: list[str], source: str) -> dict:
    """Return a copy of the raw TOML dict with each ``KEY=VALUE`` of ``sets`` applied.

    KEY is a dotted path (``joints.hinge.friction``, ``loads.0.end``,
    ``world.gravity``); VALUE is read as a TOML value, or taken as a plain
    string if it is not one.  Missing tables are created; whether the
    resulting keys are allowed is left to validation.
    """
    result = copy.deepcopy(raw)
    for item in sets:
        where = f"{source}: --set {quoted(item)}"
        key, equals, text = item.partition("=")
        parts = key.strip().split(".")
        if not equals or not all(parts):
            raise SceneError(f'{where}: expected KEY=VALUE with a dotted KEY such as '
                             'solver.iterations')
        table = result
        for depth, part in enumerate(parts[:-1]):
            table = _child(table, part, parts[:depth], where)
        if not isinstance(table, dict):  # the path stopped at bodies, joints or loads
            raise SceneError(f'{where}: "{parts[-2]}" is an array of tables; '
                             'set a key of one entry')
        table[parts[-1]] = _parse_value(text.strip(), where)
    return result


def _child(node: Any, part: str, path: list[str], where: str) -> Any:
    """Step from ``node`` (reached by ``path``) into its child ``part``, creating missing tables."""
    if isinstance(node, list):  # only the top-level arrays of tables are walked into
        return _entry(node, part, path[0], where)
    is_array = not path and part in _ARRAYS
    child = node.setdefault(part, [] if is_array else {})
    if not isinstance(child, list if is_array else dict):
        kind = "an array of tables" if is_array else "a table"
        raise SceneError(f'{where}: "{".".join([*path, part])}" is not {kind}')
    return child


def _entry(entries: list, part: str, section: str, where: str) -> dict:
    if section in _NAMED:
        matches = [e for e in entries if isinstance(e, dict) and e.get("name") == part]
        if len(matches) == 1:
            return matches[0]
        names = listing(str(e.get("name")) for e in entries if isinstance(e, dict))
        count = "more than one" if matches else "no"
        raise SceneError(f"{where}: {count} {_NAMED[section]} named {quoted(part)} "
                         f"({section} are: {names})")
    if part.isdigit() and int(part) < len(entries) and isinstance(entries[int(part)], dict):
        return entries[int(part)]
    raise SceneError(
        f'{where}: no {section}[{part}]; {section} are addressed by index and the file has '
        f'{len(entries)}'
    )


def _parse_value(text: str, where: str) -> Any:
    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise SceneError(f"{where}: the value nests too deeply to read") from None
    except ValueError:   # (an integer of more than sys.get_int_max_str_digits() digits)
        raise SceneError(f"{where}: an integer has more digits than can be read "
                         f"({sys.get_int_max_str_digits()} at most)") from None


def _read_toml(path: Path, source: str) -> dict:
    data = read_bytes(path, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SceneError(f"{source}: not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SceneError(f"{source}: {_describe_toml_error(str(exc))}") from None
    except RecursionError:
        raise SceneError(f"{source}: arrays or tables nest too deeply to read") from None
    except ValueError:   # (tomllib: an integer of more than sys.get_int_max_str_digits())
        raise SceneError(f"{source}: an integer has more digits than can be read "
                         f"({sys.get_int_max_str_digits()} at most)") from None


def _describe_toml_error(message: str) -> str:
    # tomllib (3.11) reports the position only inside the message text.
    match = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message)
    if match:
        what, line, column = match.groups()
        return f"TOML syntax error at line {line}, column {column}: {what}"
    match = re.fullmatch(r"(.*) \(at end of document\)", message)
    if match:
        return f"TOML syntax error at the end of the file: {match.group(1)}"
    return f"TOML syntax error: {message}"


def _unlimited(limit: float | None) -> float:
    return math.inf if limit is None else limit


def _replace(spec: BaseModel, source: str, **values: Any) -> BaseModel:
    """``spec`` with the non-None ``values`` replaced and validated again."""
    values = {key: value for key, value in values.items() if value is not None}
    if not values:
        return spec
    try:
        return type(spec).model_validate({**spec.model_dump(), **values})
    except ValidationError as exc:
        raise SceneError(_format_errors(exc, {}, f"{source}: command-line option")) from None


@contextlib.contextmanager
def _blame(source: str, entry: str) -> Iterator[None]:
    """Turn the engine's ValueError (physically impossible input) into a SceneError for
    ``entry``."""
    try:
        yield
    except ValueError as exc:
        raise SceneError(f"{source}: {entry}: {exc}") from exc


def _make_shape(physics: Any, shape: ShapeSpec | None, meshes: dict | None = None,
                field: str = "shape", notes: list | None = None,
                drawn_only: bool = False) -> Any:
    """The physics shape of a spec; a hull or compound that the engine refuses (an unreadable
    or flat mesh) raises ValueError naming the ``field``. A mesh with ``decompose`` is its
    convex decomposition (scenes/decompose.py), or the mesh where it is not decomposed;
    `notes` gets (mesh name, decomposed, note) where the decomposition says something. A
    `drawn_only` mesh (a visual) may be flat (physics.shape.Mesh)."""
    if shape is None:
        return None
    meshes = {} if meshes is None else meshes
    notes = [] if notes is None else notes
    if shape.type == "hull":
        from ..physics.shape import Hull

        try:
            if shape.file is not None:
                key = (shape.file, shape.scale)
                if key not in meshes:
                    meshes[key] = Hull.from_file(shape.file, scale=shape.scale)
                return meshes[key]
            return Hull([[c * shape.scale for c in v] for v in shape.vertices])
        except ValueError as exc:
            which = "file" if shape.file is not None else "vertices"
            raise ValueError(f'field "{field}.{which}": {exc}') from None
    if shape.type == "mesh":
        from ..physics.shape import Mesh

        try:
            if shape.file is not None:
                scale = shape.scale
                key = ("mesh", shape.file, scale, drawn_only)
                if key not in meshes:
                    meshes[key] = Mesh.from_file(shape.file, scale=scale, drawn_only=drawn_only)
                mesh = meshes[key]
            else:
                s = np.asarray(shape.scale, dtype=float)
                mesh = Mesh(np.asarray(shape.vertices, dtype=float) * s, shape.faces,
                            drawn_only=drawn_only)
        except ValueError as exc:
            which = "file" if shape.file is not None else "vertices"
            raise ValueError(f'field "{field}.{which}": {exc}') from None
        if not shape.decompose:
            return mesh
        from .decompose import decompose

        key = ("decomposed", shape.file, shape.scale, shape.max_parts, shape.concavity)
        if shape.file is None or key not in meshes:   # (an inline mesh: the disk cache)
            meshes[key] = decompose(mesh, max_parts=shape.max_parts,
                                    concavity=shape.concavity)
        decomposed, note = meshes[key]
        if note is not None:
            notes.append((_mesh_name(mesh), decomposed is not None, note))
        return mesh if decomposed is None else decomposed
    if shape.type == "compound":
        from ..physics.shape import Compound

        parts = [(_make_shape(physics, part.shape, meshes, f"{field}.parts.{k}.shape", notes),
                  part.pos, part.quat) for k, part in enumerate(shape.parts)]
        frame = None if shape.frame is None else (shape.frame.pos, shape.frame.quat)
        try:
            return Compound(parts, frame=frame)
        except ValueError as exc:
            raise ValueError(f'field "{field}.parts": {exc}') from None
    if shape.type == "fdo":   # one object per function (its mass and mesh computed once)
        fields = shape.model_dump(exclude={"type"}, exclude_none=True)
        key = ("fdo", repr(fields))
        if key not in meshes:
            try:
                meshes[key] = physics.SHAPES["fdo"](**fields)
            except ValueError as exc:
                raise ValueError(f'field "{field}": {exc}') from None
        return meshes[key]
    # a primitive: the class of its type (physics.shape.SHAPES), built from the table's fields
    return physics.SHAPES[shape.type](**shape.model_dump(exclude={"type"}))


# --- error messages -------------------------------------------------------


def _format_errors(exc: ValidationError, raw: dict, source: str) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        if error["type"] == "scene":
            for loc, message in error["ctx"]["problems"]:
                lines.append(_line(source, raw, error["loc"] + tuple(loc), message))
        elif error["type"] == "extra_forbidden":
            lines.append(_line(source, raw, error["loc"][:-1], _unknown_key(error["loc"])))
        elif error["type"] == "missing" and isinstance(error["loc"][-1], int):
            # A short vector: pydantic reports each missing item, one line is enough.
            lines.append(_line(source, raw, error["loc"][:-1], "has too few items", error["input"]))
        else:
            lines.append(_line(source, raw, error["loc"], *_explain(error)))
    lines = list(dict.fromkeys(lines))
    if len(lines) > MAX_REPORTED:
        lines[MAX_REPORTED:] = [f"{source}: ... and {len(lines) - MAX_REPORTED} more problems"]
    return "\n".join(lines)


def _line(source: str, raw: dict, loc: Loc, message: str, value: Any = _NO_VALUE) -> str:
    """``source: entry: field "x.y": message (got value at index i)``, leaving out empty parts."""
    entry, path = _split_loc(loc, raw)
    details = []
    if value is not _NO_VALUE:
        details.append(f"got {_show(value)}")
    if path and isinstance(path[-1], int) and path[-2:-1] != ("parts",):  # a vector component
        details.append(f"at index {path[-1]}")
        path = path[:-1]
    parts = [source]
    if entry:
        parts.append(entry)
    if path:
        parts.append(f'field "{".".join(map(str, path))}"')
    parts.append(message + (f" ({' '.join(details)})" if details else ""))
    return ": ".join(parts)


def _split_loc(loc: Loc, raw: dict) -> tuple[str | None, Loc]:
    """Split a pydantic loc into an entry label and the field path inside that entry."""
    if len(loc) >= 2 and loc[0] in _ARRAYS and isinstance(loc[1], int):
        section, index = loc[0], loc[1]
        entry = f"{section}[{index}]"
        name = _raw_name(raw, section, index)
        if name is not None:
            entry += f" {quoted(name)}"
        path = loc[2:]
        # A discriminated union puts the shape's type tag in the loc (after "shape", also a
        # compound part's); the file has no such key.
        if section == "bodies":
            path = tuple(p for k, p in enumerate(path)
                         if not (k > 0 and path[k - 1] == "shape" and p in SHAPES))
        return entry, path
    if loc and loc[0] in _TABLES:
        return f"[{loc[0]}]", loc[1:]
    return None, loc


def _raw_name(raw: dict, section: str, index: int) -> str | None:
    entries = raw.get(section)
    if isinstance(entries, list) and index < len(entries) and isinstance(entries[index], dict):
        name = entries[index].get("name")
        if isinstance(name, str):
            return name
    return None


def _unknown_key(loc: Loc) -> str:
    key, parent = str(loc[-1]), loc[:-1]
    if not parent:
        model = SceneSpec
    elif parent[0] in _TABLES:
        model = _TABLES[parent[0]]
    else:
        model = _ARRAYS[parent[0]]
        # walk down: "shape" then its type tag, "parts" then a part's index
        for k, step in enumerate(parent[2:-1], start=2):
            if step == "shape" and parent[k + 1] in SHAPES:
                model = SHAPES[parent[k + 1]]
            elif step == "parts" and isinstance(parent[k + 1], int):
                model = PartSpec
            elif step == "visuals" and isinstance(parent[k + 1], int):
                model = VisualSpec
    allowed = list(model.model_fields)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f'did you mean "{close[0]}"?' if close else f"allowed keys: {', '.join(allowed)}"
    return f"unknown key {quoted(key)} ({hint})"


def _explain(error: dict) -> tuple[str, Any]:
    """A message for a pydantic error, and the offending value to show (or _NO_VALUE)."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error["input"]
    if kind == "missing":
        return "is required", _NO_VALUE
    if kind == "too_short" and ctx.get("field_type") == "List":
        return f"must have at least {ctx['min_length']} items", value
    if kind in ("too_short", "too_long"):
        count = ctx.get("max_length", ctx.get("min_length"))
        return f"must have exactly {count} items", value
    in_part = "parts" in error["loc"] or "visuals" in error["loc"]
    types = ", ".join(PART_SHAPES if in_part else SHAPES)
    if kind == "union_tag_invalid":
        if in_part and ctx["tag"] in SHAPES:
            return (f"a compound part cannot be a {ctx['tag']} (compounds do not nest, planes "
                    f"are static ground; part types are: {types})"), _NO_VALUE
        kinds = "part" if in_part else "shape"
        return f"unknown shape type {_show(ctx['tag'])} ({kinds} types are: {types})", _NO_VALUE
    if kind == "union_tag_not_found":
        return f'needs a "type" (one of: {types})', _NO_VALUE
    for bound, words in (("gt", "greater than"), ("ge", "at least"), ("lt", "less than"),
                         ("le", "at most")):
        if bound in ctx:
            return f"must be {words} {ctx[bound]:g}", value
    if kind in _MESSAGES:
        return _MESSAGES[kind], value
    return re.sub(r"^Input should be", "must be", error["msg"]), value


def _show(value: Any, room: int = SHOW_CHARS) -> str:
    """A value written the way it would appear in TOML, at most about `room` characters
    (a 300,000-item vector is shown by its first items and its length)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"  # no str()
    if isinstance(value, str):
        return quoted(value, room)
    if isinstance(value, (list, tuple)):
        items, used = [], 0
        for item in value:
            shown = _show(item, max(room - used, 8))
            used += len(shown) + 2
            if used > room:
                return "[" + ", ".join(items) + f", ...] ({len(value)} items)"
            items.append(shown)
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        return "a table"
    text = str(value)
    return text if len(text) <= room else text[:room] + "..."
