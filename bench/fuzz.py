"""Fuzz what a user loads or types (issue 13): mutate every shipped scene, URDF and MJCF file,
run each mutant as `sharnir run` does in a child process with a wall-time and a memory limit,
and sort the outcomes.

    .venv/bin/python bench/fuzz.py [--cases 200] [--seed 1] [-j 2] [--keep DIR | --keep-bad DIR]
                                   [--fresh] [--timeout 20] [--memory-gib 2] [--duration 0.25]
                                   [--only K,K] [--log FILE] [--json] [--write]
    .venv/bin/python bench/fuzz.py --replay DIR/00042     # one kept case again, verbose

Inputs: scenes/*.toml, and every .toml, .urdf and .xml under tests/fixtures (the URDFs'
meshes are linked into the case folder; a mutation may corrupt one). Mutations: deleting and
duplicating keys, tables and elements; swapping types (string, number, array, table); huge and
tiny numbers (1e308, 5e-324, ...), NaN and inf, very long strings and arrays (300,000 items),
nesting 400 to 1000 deep, integers of 5000 digits, truncation, random byte flips, bytes that
are not UTF-8, absurd dt, huge loads and far anchors, hull and mesh files that are missing, a
folder, /dev/zero or a FIFO, `--set` overrides with hostile values, and for XML entity bombs,
missing parents, joint cycles and bad numbers. Case k of seed s is the same on every run (its
own `random.Random`), so `--seed S --cases N` is reproducible and `--keep DIR` writes each
case's folder (the mutated file, its `--set`s in case.json) for `--replay`; `--keep-bad DIR`
only those that are not ok or a clean error; `--only K,K` runs those cases of the seed again.

Each case runs `sharnir.app.cli.main(["run", FILE, "--duration", D, "--npz", OUT, ...])` in a
child with RLIMIT_AS set to `--memory-gib`: by default a child forked from this process, which
has imported everything and loaded both step kernels (a case then costs its own work, not an
interpreter's start); with `--fresh` a new interpreter per case. Outcomes:

    ok                exit 0 and every number in the NPZ recording finite
    clean_error       exit 2 and one `sharnir: error:` line per problem (at most 11), each at
                      most 300 characters besides the case's path; no traceback
    crash             a traceback, any other exit status or signal, or an error message that
                      is too long or not of that form
    hang              still running after --timeout seconds (killed)
    oom               a MemoryError, or killed for memory
    nonfinite_silent  exit 0 with NaN or inf in the recording

`--write` puts the counts into the `## Fuzz` section of bench/results.md.
"""
import argparse
import contextlib
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Fuzz"
OUTCOMES = ("ok", "clean_error", "crash", "hang", "oom", "nonfinite_silent")
MAX_MESSAGE = 300       # characters of one error line, besides the case's path
MAX_ERROR_LINES = 11    # the loader reports up to 10 problems and "... and N more"
LONG = 300_000          # items of a long array, characters of a long string
ERROR_PREFIX = "sharnir: error: "
OOM_STATUS = 86         # a child's exit status after a MemoryError
CRASH_STATUS = 87       # a child's exit status after any other exception


# --- inputs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One input file to mutate: its kind (toml, urdf, mjcf) and path."""
    kind: str
    path: Path

    @property
    def name(self):
        return str(self.path.relative_to(ROOT))


def seed_inputs():
    """The shipped scenes and the fixtures' scene, URDF and MJCF files, in a fixed order."""
    seeds = [Seed("toml", p) for p in sorted((ROOT / "scenes").glob("*.toml"))]
    fixtures = ROOT / "tests" / "fixtures"
    for path in sorted(fixtures.rglob("*")):
        suffix = path.suffix.lower()
        if suffix == ".toml":
            seeds.append(Seed("toml", path))
        elif suffix == ".urdf":
            seeds.append(Seed("urdf", path))
        elif suffix == ".xml" and b"<mujoco" in path.read_bytes()[:4096]:
            seeds.append(Seed("mjcf", path))
    return seeds


# --- TOML written back from a dict ------------------------------------------------------


class Raw(str):
    """Text written into the TOML as it is (nesting, 5000-digit integers, nan)."""


def toml_value(value):
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) \
            + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def toml_key(key):
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def toml_text(raw):
    """A dict as TOML: one line per top-level key, tables inline."""
    return "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in raw.items())


# --- mutations ------------------------------------------------------------------------------


HUGE_TINY = [1e308, -1e308, 5e-324, -5e-324, 1e-300, 0, 0.0, -0.0, -1, -1.0, 1e300, -1e300,
             2 ** 63, 2 ** 64, -(2 ** 63), 1.7976931348623157e308]
NONFINITE = [Raw("nan"), Raw("inf"), Raw("-inf"), Raw("+nan"), "nan", "inf", "NaN", "-inf",
             "1e999", "Infinity"]
ODD_FILES = ["missing", "folder", "/dev/zero", "fifo", "/dev/null", "empty", "text", "self",
             "escape", "/proc/self/status", "~/no_such_mesh.stl", "nul_name", "long_name"]


def _paths(node, prefix=()):
    """Every (path, value) below `node` (dicts and lists), the node itself first."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list) and len(node) <= 64:
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _get(root, path):
    for p in path:
        root = root[p]
    return root


def _set(root, path, value):
    _get(root, path[:-1])[path[-1]] = value


def _numbers(raw):
    return [p for p, v in _paths(raw) if p and isinstance(v, (int, float))
            and not isinstance(v, bool)]


def _pick(rng, items, what="an item"):
    if not items:
        raise _NotApplicable(f"no {what}")
    return rng.choice(items)


class _NotApplicable(Exception):
    """This mutation does not fit this input: another is drawn."""


def _swap_value(rng, old):
    """A value of another type than `old`."""
    choices = ["a string", 1.5, 7, True, [1.0, 2.0], {"x": 1.0}, [], {}, [[1.0], "a"], ""]
    choices = [c for c in choices if type(c) is not type(old)]
    return rng.choice(choices)


@dataclass
class Case:
    """One fuzz case: what it came from and how it was changed; `files` are written into
    its folder (name -> bytes, or "FIFO"/"DIR"), `main` is the file to run."""
    index: int
    seed: str
    mutation: str
    detail: str = ""
    main: str = ""
    files: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)   # name -> existing file to link
    sets: list = field(default_factory=list)

    def describe(self):
        return f"{self.seed} {self.mutation}" + (f" ({self.detail})" if self.detail else "")


def _odd_file(rng, case, which=None):
    """A path to something that is not a good mesh or scene, its support made in the case."""
    which = which or rng.choice(ODD_FILES)
    if which == "missing":
        return "no_such_file.stl", which
    if which == "folder":
        case.files["adir"] = "DIR"
        return "adir", which
    if which == "fifo":
        case.files["pipe.stl"] = "FIFO"
        return "pipe.stl", which
    if which == "empty":
        case.files["empty.stl"] = b""
        return "empty.stl", which
    if which == "text":
        case.files["notes.stl"] = b"solid x\nthis is not a mesh\n" * 10
        return "notes.stl", which
    if which == "self":
        return case.main, which
    if which == "escape":
        return "../" * 12 + "etc/passwd", which
    if which == "nul_name":
        return "a\u0000b.stl", which
    if which == "long_name":
        return "x" * 5000 + ".stl", which
    return which, which


_PARSED = {}   # seed path -> its TOML as JSON text (a cheap deep copy)


def mutate_toml(rng, seed, case):
    if seed.path not in _PARSED:
        raw = tomllib.loads(seed.path.read_text(encoding="utf-8"))
        _absolute_files(raw, seed.path.parent)
        _PARSED[seed.path] = json.dumps(raw)
    raw = json.loads(_PARSED[seed.path])
    kind = rng.choice(TOML_MUTATIONS)
    case.mutation = kind
    case.main = "scene.toml"
    if kind in ("truncate", "byte_flip", "non_utf8"):
        data = seed.path.read_bytes() if rng.random() < 0.5 else toml_text(raw).encode()
        case.files[case.main] = _mutate_bytes(rng, kind, data, case)
        return
    if kind == "set":
        case.files[case.main] = toml_text(raw).encode()
        case.sets = [_hostile_set(rng, raw, case) for _ in range(rng.randint(1, 3))]
        return
    TOML_STRUCTURAL[kind](rng, raw, case)
    case.files[case.main] = toml_text(raw).encode()


def _absolute_files(raw, base):
    """Hull files made absolute, so that a mutant written elsewhere still finds them."""
    for path, value in list(_paths(raw)):
        if path and path[-1] == "file" and isinstance(value, str):
            _set(raw, path, str((base / value).resolve()))


def _mutate_bytes(rng, kind, data, case):
    if kind == "truncate":
        cut = rng.randrange(len(data)) if data else 0
        case.detail = f"cut at byte {cut} of {len(data)}"
        return data[:cut]
    if kind == "byte_flip":
        data = bytearray(data)
        n = rng.randint(1, 20)
        for _ in range(n):
            data[rng.randrange(len(data))] = rng.randrange(256)
        case.detail = f"{n} bytes"
        return bytes(data)
    bad = rng.choice([b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"\x80abc"])
    at = rng.randrange(len(data) + 1)
    case.detail = f"{bad!r} at byte {at}"
    return data[:at] + bad + data[at:]


def _leaf_or_table(rng, raw):
    return _pick(rng, [p for p, _ in _paths(raw) if p], "key")


def _m_delete(rng, raw, case):
    path = _leaf_or_table(rng, raw)
    del _get(raw, path[:-1])[path[-1]]
    case.detail = _show_path(path)


def _m_duplicate(rng, raw, case):
    path = _pick(rng, [p for p, v in _paths(raw) if isinstance(v, (dict, list)) and v
                       and p], "table or array")
    node = _get(raw, path)
    if isinstance(node, list):
        i = rng.randrange(len(node))
        node.insert(i, json.loads(json.dumps(node[i])))
    elif isinstance(_get(raw, path[:-1]), dict):
        _get(raw, path[:-1])[f"{path[-1]}_copy"] = json.loads(json.dumps(node))
    else:   # a table in an array of tables: the array gets it twice
        _get(raw, path[:-1]).append(json.loads(json.dumps(node)))
    case.detail = _show_path(path)


def _m_type_swap(rng, raw, case):
    path = _leaf_or_table(rng, raw)
    new = _swap_value(rng, _get(raw, path))
    _set(raw, path, new)
    case.detail = f"{_show_path(path)} = {toml_value(new)[:40]}"


def _m_extreme(rng, raw, case):
    path = _pick(rng, _numbers(raw), "number")
    value = rng.choice(HUGE_TINY)
    _set(raw, path, value)
    case.detail = f"{_show_path(path)} = {value!r}"


def _m_nonfinite(rng, raw, case):
    path = _pick(rng, _numbers(raw), "number")
    value = rng.choice(NONFINITE)
    _set(raw, path, value)
    case.detail = f"{_show_path(path)} = {value!r}"


def _m_long_string(rng, raw, case):
    paths = [p for p, v in _paths(raw) if p and isinstance(v, str)] or [("description",)]
    path = rng.choice(paths)
    value = rng.choice(["x", "\u00e9", "\U0001f600", "a b", "\\"]) * LONG
    _set(raw, path, value)
    case.detail = _show_path(path)


def _m_long_array(rng, raw, case):
    paths = [p for p, v in _paths(raw) if p and isinstance(v, list)
             and all(isinstance(x, (int, float)) for x in v)] or [("world", "gravity")]
    path = rng.choice(paths)
    raw.setdefault(path[0], {}) if len(path) == 2 and path[0] == "world" else None
    item = rng.choice([1.0, 0, "s", [1.0, 2.0, 3.0], {}])
    _set(raw, path, [item] * LONG)
    case.detail = f"{_show_path(path)}, {LONG} x {toml_value(item)}"


def _m_deep(rng, raw, case):
    depth = rng.randint(400, 1000)
    value = Raw(rng.choice([
        "[" * depth + "]" * depth,
        "[" * depth + "1.0" + "]" * depth,
        "{ a = " * depth + "1" + " }" * depth,
    ]))
    path = _leaf_or_table(rng, raw) if raw else ("x",)
    _set(raw, path, value)
    case.detail = f"{_show_path(path)} nested {depth} deep"


def _m_big_int(rng, raw, case):
    paths = _numbers(raw) or [("duration",)]
    path = rng.choice(paths)
    digits = rng.choice([4301, 5000, 20_000])
    _set(raw, path, Raw(rng.choice(["", "-"]) + "9" * digits))
    case.detail = f"{_show_path(path)} = {digits} digits"


def _m_dt(rng, raw, case):
    value = rng.choice([1e-200, 0.1, 1e-4, 0.0999, 0.1000001, 9.9e-5, -0.01, 0.0, 1e-300,
                        5e-324])
    raw.setdefault("world", {})
    if not isinstance(raw["world"], dict):
        raw["world"] = {}
    raw["world"]["dt"] = value
    case.detail = f"dt = {value!r}"


def _bodies(raw):
    bodies = raw.get("bodies")
    return [b for b in bodies if isinstance(b, dict)] if isinstance(bodies, list) else []


def _m_huge_load(rng, raw, case):
    names = [b.get("name") for b in _bodies(raw) if b.get("kind", "dynamic") != "static"]
    name = _pick(rng, [n for n in names if isinstance(n, str)], "dynamic body")
    size = rng.choice([1e300, 1e308, 1e30, 1e15, -1e300, 1e200])
    load = {"body": name, rng.choice(["force", "torque"]): [size, size / 3, -size]}
    if rng.random() < 0.5:
        load["end"] = rng.choice([1e-300, 1e300, 0.001])
    raw.setdefault("loads", [])
    if isinstance(raw["loads"], list):
        raw["loads"].append(load)
    case.detail = f"{name} {toml_value(load)[:60]}"


def _m_far(rng, raw, case):
    size = rng.choice([1e300, -1e300, 1e30, 1e154, 1e155, 1e200, 1.7e308])
    joints = [j for j in raw.get("joints", []) if isinstance(j, dict)] \
        if isinstance(raw.get("joints"), list) else []
    targets = [("joint", j, "anchor") for j in joints] + \
        [("body", b, k) for b in _bodies(raw) for k in ("pos", "vel", "angvel")]
    what, entry, key = _pick(rng, targets, "joint or body")
    entry[key] = [size, 0.0, 0.0] if rng.random() < 0.5 else [size, size, size]
    case.detail = f"{what} {entry.get('name')} {key} = {size:g}"


def _m_odd_file(rng, raw, case):
    hulls = [p for p, v in _paths(raw) if isinstance(v, dict) and v.get("type") == "hull"]
    if not hulls or rng.random() < 0.3:
        # an include (scene, URDF or MJCF) of an odd file, or a body with an odd hull
        path, which = _odd_file(rng, case)
        if rng.random() < 0.5:
            raw["include"] = [{"file": path}]
        else:
            raw.setdefault("bodies", [])
            if isinstance(raw["bodies"], list):
                raw["bodies"].append({"name": "odd", "mass": 1.0,
                                      "shape": {"type": "hull", "file": path}})
        case.detail = which
        return
    path, which = _odd_file(rng, case)
    hull = _get(raw, rng.choice(hulls))
    hull.pop("vertices", None)
    hull["file"] = path
    case.detail = which


def _m_include(rng, raw, case):
    """Include another input (or this scene itself), with odd options."""
    choice = rng.choice(["self", "urdf", "mjcf", "cycle", "deep_prefix", "pose"])
    fixtures = ROOT / "tests" / "fixtures"
    include = {"file": case.main}
    if choice == "urdf":
        include = {"file": str(fixtures / "urdf" / "r2d2" / "r2d2.urdf"),
                   "urdf": {"fixed_base": rng.random() < 0.5, "ground": rng.random() < 0.5,
                            "package_roots": rng.choice([[], ["/dev/zero"], ["/"], ["x" * 300]])}}
    elif choice == "mjcf":
        include = {"file": str(fixtures / "mjcf" / "humanoid.xml")}
    elif choice == "cycle":
        case.files["other.toml"] = b'include = [{ file = "scene.toml" }]\n'
        include = {"file": "other.toml"}
    elif choice == "deep_prefix":
        include = {"file": str(ROOT / "scenes" / "door.toml"), "prefix": "p" * LONG}
    elif choice == "pose":
        include = {"file": str(ROOT / "scenes" / "door.toml"),
                   "pos": [rng.choice(HUGE_TINY)] * 3, "quat": [1e-300, 0.0, 0.0, 0.0]}
    raw["include"] = [include]
    case.detail = choice


def _m_none(rng, raw, case):
    case.detail = "unchanged"


TOML_STRUCTURAL = {
    "delete": _m_delete,
    "duplicate": _m_duplicate,
    "type_swap": _m_type_swap,
    "extreme_number": _m_extreme,
    "nonfinite": _m_nonfinite,
    "long_string": _m_long_string,
    "long_array": _m_long_array,
    "deep_nesting": _m_deep,
    "big_int": _m_big_int,
    "absurd_dt": _m_dt,
    "huge_load": _m_huge_load,
    "far_away": _m_far,
    "odd_file": _m_odd_file,
    "include": _m_include,
    "none": _m_none,
}
TOML_MUTATIONS = [*TOML_STRUCTURAL, "truncate", "byte_flip", "non_utf8", "set"]


def _show_path(path):
    return ".".join(map(str, path))


def _hostile_set(rng, raw, case):
    """A --set KEY=VALUE with a real or made-up key and a hostile value."""
    keys = ["solver.iterations", "solver.position_iterations", "world.dt", "world.gravity",
            "duration", "solver.tolerance", "solver.budget_ms", "loads.0.end", "loads.99.force",
            "bodies.x.mass", "world", "nope.deep.key", "joints", ".", "a..b", "=", ""]
    for b in _bodies(raw):
        if isinstance(b.get("name"), str):
            keys += [f"bodies.{b['name']}.{k}" for k in ("mass", "pos", "shape", "shape.radius",
                                                         "kind", "quat")]
    joints = raw.get("joints") if isinstance(raw.get("joints"), list) else []
    for j in joints:
        if isinstance(j, dict) and isinstance(j.get("name"), str):
            keys += [f"joints.{j['name']}.{k}" for k in ("friction", "anchor", "axis", "limits",
                                                         "motor.voltage", "type")]
    key = rng.choice(keys)
    value = rng.choice(["1e308", "-1e308", "5e-324", "nan", "inf", "-inf", "0", "-1", "[]",
                        "{}", "[1e300, 0, 0]", "[nan, 0, 0]", "9" * 5000, "[" * 900 + "]" * 900,
                        "x" * LONG, '"\\u0000"', "true", "{ a = 1 }", "[1, 2, 3, 4]",
                        "1e-200", "'unterminated", "1.5"])
    case.detail += f"{key}={value[:30]} "
    return f"{key}={value}"


# --- XML mutations ---------------------------------------------------------------------------


XML_VALUES = ["nan", "inf", "-inf", "1e308", "-1e308", "5e-324", "1e-300", "0", "-1", "",
              "abc", "1 2", "1 2 3 4 5", "9" * 5000, "1e999", " ", "0x10", "1,2,3",
              ("1 " * LONG).strip(), "x" * LONG, "-0", "1e-200 1e-200 1e-200", "1e300 0 0"]
BOMB = ('<!DOCTYPE lolz [<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
    for i in range(1, 10)) + "]>\n")


def mutate_xml(rng, seed, case):
    from lxml import etree

    case.main = seed.path.name
    if seed.kind == "urdf":
        for mesh in seed.path.parent.rglob("*.stl"):
            case.links[str(mesh.relative_to(seed.path.parent))] = str(mesh)
    data = seed.path.read_bytes()
    kind = rng.choice(URDF_MUTATIONS if seed.kind == "urdf" else MJCF_MUTATIONS)
    case.mutation = kind
    if kind in ("truncate", "byte_flip", "non_utf8"):
        case.files[case.main] = _mutate_bytes(rng, kind, data, case)
        return
    if kind == "entity_bomb":
        text = data.decode()
        at = text.find("<robot") if seed.kind == "urdf" else text.find("<mujoco")
        text = text[:at] + BOMB + text[at:]
        text = text.replace('name="', 'name="&lol9;', 1)
        case.files[case.main] = text.encode()
        return
    if kind == "mesh_bytes":
        meshes = sorted(case.links)
        name = _pick(rng, meshes, "mesh")
        sub = rng.choice(["truncate", "byte_flip", "non_utf8"])
        case.files[name] = _mutate_bytes(rng, sub, Path(case.links.pop(name)).read_bytes(), case)
        case.files[case.main] = data
        case.detail = f"{name}: {sub} {case.detail}"
        return
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    XML_STRUCTURAL[kind](rng, root, case, seed)
    case.files[case.main] = etree.tostring(root, xml_declaration=False)


def _elements(root, tag=None):
    from lxml import etree

    return [e for e in root.iter(tag) if isinstance(e.tag, str) and e is not root
            and not isinstance(e, etree._Comment)]


def _x_delete(rng, root, case, seed):
    el = _pick(rng, _elements(root), "element")
    el.getparent().remove(el)
    case.detail = f"<{el.tag} {el.get('name') or ''}>"


def _x_duplicate(rng, root, case, seed):
    import copy

    el = _pick(rng, _elements(root), "element")
    el.addnext(copy.deepcopy(el))
    case.detail = f"<{el.tag} {el.get('name') or ''}>"


def _x_delete_attr(rng, root, case, seed):
    el = _pick(rng, [e for e in _elements(root) if e.attrib], "attribute")
    key = rng.choice(list(el.attrib))
    del el.attrib[key]
    case.detail = f"<{el.tag}> {key}"


def _x_value(rng, root, case, seed):
    el = _pick(rng, [e for e in _elements(root) if e.attrib], "attribute")
    key = rng.choice(list(el.attrib))
    value = rng.choice(XML_VALUES)
    el.set(key, value)
    case.detail = f"<{el.tag}> {key}={value[:20]!r}"


def _x_numbers(rng, root, case, seed):
    """A numeric attribute (xyz, rpy, value, size, pos, ...) given an extreme number."""
    found = [(e, k) for e in _elements(root) for k, v in e.attrib.items()
             if re.fullmatch(r"[-+0-9.eE ]+", v.strip() or "x")]
    el, key = _pick(rng, found, "numeric attribute")
    parts = el.get(key).split()
    i = rng.randrange(len(parts))
    parts[i] = rng.choice(["1e308", "-1e308", "5e-324", "1e-300", "0", "-1", "nan", "inf",
                           "1e300", "1e30", "-1e30"])
    el.set(key, " ".join(parts))
    case.detail = f"<{el.tag}> {key}={el.get(key)[:40]!r}"


def _x_missing_parent(rng, root, case, seed):
    if seed.kind == "urdf":
        el = _pick(rng, _elements(root, "parent") + _elements(root, "child"), "joint")
        el.set("link", rng.choice(["no_such_link", "", "world"]))
        case.detail = f"<{el.tag} link={el.get('link')!r}>"
        return
    refs = [(e, k) for e in _elements(root) for k in ("joint", "body1", "body2", "body",
                                                      "class", "material", "mesh", "childclass")
            if k in e.attrib]
    el, key = _pick(rng, refs, "reference")
    el.set(key, "no_such_thing")
    case.detail = f"<{el.tag}> {key}"


def _x_cycle(rng, root, case, seed):
    if seed.kind == "urdf":
        joints = _elements(root, "joint")
        a, b = _pick(rng, joints, "joint"), _pick(rng, joints, "joint")
        pa, cb = a.find("parent"), b.find("child")
        if pa is None or cb is None:
            raise _NotApplicable("joint without parent or child")
        pa.set("link", cb.get("link"))   # a's parent becomes b's child: a loop or two parents
        case.detail = f"{a.get('name')} parent = {cb.get('link')}"
        return
    # MJCF: a body's subtree moved under one of its own descendants is impossible in a tree;
    # an equality weld/connect that closes a loop is the nearest thing
    bodies = [e.get("name") for e in _elements(root, "body") if e.get("name")]
    a, b = _pick(rng, bodies, "body"), _pick(rng, bodies, "body")
    from lxml import etree

    eq = root.find("equality")
    if eq is None:
        eq = etree.SubElement(root, "equality")
    etree.SubElement(eq, rng.choice(["connect", "weld"]), body1=a, body2=b, anchor="0 0 0")
    case.detail = f"{a} - {b}"


def _x_deep(rng, root, case, seed):
    from lxml import etree

    depth = rng.randint(400, 1000)
    if seed.kind == "urdf":
        # a chain of `depth` links, each hanging from the last
        last = root.find("link").get("name")
        for i in range(depth):
            link = etree.SubElement(root, "link", name=f"deep{i}")
            inertial = etree.SubElement(link, "inertial")
            etree.SubElement(inertial, "mass", value="0.1")
            etree.SubElement(inertial, "inertia", ixx="0.001", iyy="0.001", izz="0.001",
                             ixy="0", ixz="0", iyz="0")
            joint = etree.SubElement(root, "joint", name=f"deepj{i}", type="revolute")
            etree.SubElement(joint, "parent", link=last)
            etree.SubElement(joint, "child", link=f"deep{i}")
            etree.SubElement(joint, "origin", xyz="0 0 0.01")
            etree.SubElement(joint, "axis", xyz="1 0 0")
            etree.SubElement(joint, "limit", lower="-1", upper="1", effort="1", velocity="1")
            last = f"deep{i}"
    else:
        parent = root.find("worldbody")
        for i in range(depth):
            parent = etree.SubElement(parent, "body", name=f"deep{i}", pos="0 0 0.01")
            etree.SubElement(parent, "joint", name=f"deepj{i}", type="hinge")
            etree.SubElement(parent, "geom", type="sphere", size="0.01")
    case.detail = f"{depth} deep"


def _x_mesh_file(rng, root, case, seed):
    from lxml import etree

    path, which = _odd_file(rng, case)
    if seed.kind == "urdf":
        meshes = _elements(root, "mesh")
        if meshes:
            rng.choice(meshes).set("filename", rng.choice([path, "package://nope/" + path,
                                                           "file://" + path]))
        else:
            link = _pick(rng, _elements(root, "link"), "link")
            col = etree.SubElement(link, "collision")
            geo = etree.SubElement(col, "geometry")
            etree.SubElement(geo, "mesh", filename=path)
    else:
        if rng.random() < 0.3:
            root.insert(0, etree.Element("include", file=path))
        else:
            asset = root.find("asset")
            if asset is None:
                asset = etree.SubElement(root, "asset")
            etree.SubElement(asset, "mesh", name="odd", file=path)
            body = _pick(rng, _elements(root, "body"), "body")
            etree.SubElement(body, "geom", type="mesh", mesh="odd")
    case.detail = which


XML_STRUCTURAL = {
    "delete": _x_delete,
    "duplicate": _x_duplicate,
    "delete_attribute": _x_delete_attr,
    "bad_value": _x_value,
    "extreme_number": _x_numbers,
    "missing_parent": _x_missing_parent,
    "joint_cycle": _x_cycle,
    "deep_nesting": _x_deep,
    "odd_file": _x_mesh_file,
}
URDF_MUTATIONS = [*XML_STRUCTURAL, "truncate", "byte_flip", "non_utf8", "entity_bomb",
                  "mesh_bytes"]
MJCF_MUTATIONS = [*XML_STRUCTURAL, "truncate", "byte_flip", "non_utf8", "entity_bomb"]


def make_case(seed_number, index, seeds):
    """Case `index` of run `seed_number`: the same on every run."""
    rng = random.Random(f"{seed_number}:{index}")
    seed = seeds[index % len(seeds)] if index < len(seeds) else rng.choice(seeds)
    for _ in range(20):
        case = Case(index, seed.name, "")
        try:
            (mutate_toml if seed.kind == "toml" else mutate_xml)(rng, seed, case)
            return case
        except _NotApplicable:
            continue
        except ValueError:   # lxml refuses the value (a NUL in an attribute): another
            continue
    raise RuntimeError(f"no mutation applies to {seed.name}")


def write_case(case, folder):
    """The case's files in `folder` (created), and case.json to replay it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if data == "FIFO":
            os.mkfifo(target)
        elif data == "DIR":
            target.mkdir()
        else:
            target.write_bytes(data)
    for name, source in case.links.items():   # copied: a link out of the folder is refused
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(source, target)
    meta = {"index": case.index, "seed": case.seed, "mutation": case.mutation,
            "detail": case.detail, "main": case.main, "sets": case.sets}
    (folder / "case.json").write_text(json.dumps(meta) + "\n")
    return folder / case.main


# --- running a case ---------------------------------------------------------------------------


def cli_args(path, out, duration, sets):
    return ["run", str(path), "--duration", repr(duration), "--npz", str(out),
            *[f"--set={s}" for s in sets]]


def _child(argv, stderr_path, memory):
    """The forked child: stdout to /dev/null, stderr to a file, address space limited, then
    the CLI; never returns."""
    try:
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        from sharnir.app.cli import main
        from sharnir.physics import threads

        threads.cap(1)   # forked: GNU OpenMP aborts a child that starts threads (threads.py)

        try:
            status = main(argv)
        except SystemExit as exc:   # argparse
            status = exc.code if isinstance(exc.code, int) else 2
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status or 0)
    except MemoryError:
        with contextlib.suppress(BaseException):
            sys.stderr.write("MemoryError (fuzz child)\n")
            sys.stderr.flush()
        os._exit(OOM_STATUS)
    except BaseException:  # noqa: BLE001 -- the child reports everything as a traceback
        with contextlib.suppress(BaseException):
            traceback.print_exc()
            sys.stderr.flush()
        os._exit(CRASH_STATUS)


FRESH_CHILD = """\
import resource, sys
memory = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
from sharnir.app.cli import main
sys.exit(main(sys.argv[2:]))
"""


@dataclass
class Running:
    case: Case
    folder: Path
    main: Path
    pid: int = 0
    popen: subprocess.Popen | None = None
    started: float = 0.0


def start(case, folder, options):
    main = write_case(case, folder)
    run = Running(case, folder, main, started=time.monotonic())
    argv = cli_args(main, folder / "out.npz", options.duration, case.sets)
    memory = int(options.memory_gib * (1 << 30))
    stderr_path = folder / "stderr.txt"
    if options.fresh:
        with open(stderr_path, "wb") as err:
            run.popen = subprocess.Popen([sys.executable, "-c", FRESH_CHILD, str(memory), *argv],
                                         stdout=subprocess.DEVNULL, stderr=err,
                                         start_new_session=True)
        return run
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        _child(argv, str(stderr_path), memory)
    run.pid = pid
    return run


def poll(run):
    """The child's wait status if it has ended, else None."""
    if run.popen is not None:
        code = run.popen.poll()
        if code is None:
            return None
        return code
    pid, status = os.waitpid(run.pid, os.WNOHANG)
    if pid == 0:
        return None
    return os.waitstatus_to_exitcode(status)


def kill(run):
    pid = run.popen.pid if run.popen is not None else run.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    if run.popen is not None:
        run.popen.wait()
    else:
        os.waitpid(run.pid, 0)


def classify(code, stderr, npz, case_path):
    """(outcome, the first relevant stderr line) of a finished child."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(ERROR_PREFIX)]
    if errors:
        first = errors[0]
    else:
        first = ([line for line in lines if "Error" in line] or lines or [""])[-1]
    if code == OOM_STATUS or ("Traceback" in stderr and "MemoryError" in stderr):
        return "oom", first
    if code == -signal.SIGKILL:   # not by the fuzzer (a hang is killed after its timeout)
        return "oom", f"killed (status {code})"
    if "Traceback" in stderr:
        return "crash", first
    if code == 0:
        return _finite(npz), ""
    if code != 2:
        return "crash", f"exit status {code}: {first}"
    if not errors or len(errors) > MAX_ERROR_LINES:
        return "crash", f"{len(errors)} error lines: {first}"
    folder = str(Path(case_path).parent)
    for line in errors:
        bare = line[len(ERROR_PREFIX):].replace(str(case_path), "FILE").replace(folder, "DIR")
        if len(bare) > MAX_MESSAGE:
            return "crash", f"{len(bare)} characters: {first[:200]}"
    return "clean_error", first


def _finite(npz):
    import numpy as np

    try:
        with np.load(npz) as data:
            for name in data.files:
                a = data[name]
                if a.dtype.kind in "fc" and not np.isfinite(a).all():
                    return "nonfinite_silent"
    except Exception:  # noqa: BLE001 -- an unreadable recording is the program's fault
        return "nonfinite_silent"
    return "ok"


def finish(run, code, options):
    stderr = (run.folder / "stderr.txt").read_text(encoding="utf-8", errors="replace")
    outcome, first = classify(code, stderr, run.folder / "out.npz", run.main)
    lines = sum(line.startswith(ERROR_PREFIX) for line in stderr.splitlines())
    return {"index": run.case.index, "seed": run.case.seed, "mutation": run.case.mutation,
            "error_lines": lines,
            "detail": run.case.detail[:120], "outcome": outcome, "status": code,
            "seconds": round(time.monotonic() - run.started, 2), "message": first[:300],
            "folder": str(run.folder)}


def prepare():
    """Import everything a case needs and load both step kernels (with and without
    contacts) once, so that forked children start warm."""
    import mujoco  # noqa: F401
    import trimesh  # noqa: F401
    from lxml import etree  # noqa: F401

    import sharnir.app.cli  # noqa: F401
    from sharnir.physics.warmup import compile_step
    from sharnir.scenes import (
        load_scene,
        urdf,  # noqa: F401
    )

    for name in ("door", "stack"):
        world = load_scene(name)
        compile_step(world)
        world.run(1)
    # every module of the engine and the scene readers, so that the children run the code
    # this process started with even if the files change during a long run
    import importlib
    import pkgutil

    import sharnir

    for module in pkgutil.walk_packages(sharnir.__path__, "sharnir."):
        if module.name.split(".")[1] in ("physics", "scenes"):   # (the CLI imports the rest)
            with contextlib.suppress(Exception):
                importlib.import_module(module.name)


def run_cases(options, cases, report=None):
    """Run `cases` (indices) `options.jobs` at a time; the list of results."""
    seeds = seed_inputs()
    if not options.fresh:
        prepare()
    results, queue, running = [], list(cases), []
    work = Path(tempfile.mkdtemp(prefix="sharnir-fuzz-"))
    try:
        while queue or running:
            while queue and len(running) < options.jobs:
                index = queue.pop(0)
                case = make_case(options.seed, index, seeds)
                keep = options.keep or options.keep_bad
                folder = (Path(keep) if keep else work) / f"{index:05d}"
                if folder.exists():
                    shutil.rmtree(folder)
                running.append(start(case, folder, options))
            time.sleep(0.005)
            for run in list(running):
                code = poll(run)
                if code is None and time.monotonic() - run.started > options.timeout:
                    kill(run)
                    result = finish(run, None, options)
                    result.update(outcome="hang", message=f"still running after "
                                  f"{options.timeout:g} s")
                elif code is None:
                    continue
                else:
                    result = finish(run, code, options)
                running.remove(run)
                results.append(result)
                if report is not None:
                    report(result, len(results), len(cases))
                if not (options.keep or options.keep_bad and result["outcome"] not in
                        ("ok", "clean_error")):
                    shutil.rmtree(run.folder, ignore_errors=True)
    finally:
        for run in running:
            kill(run)
        shutil.rmtree(work, ignore_errors=True)
    return sorted(results, key=lambda r: r["index"])


def summary_text(results, options, wall, command, machine=None):
    counts = Counter(r["outcome"] for r in results)
    lines = [SECTION, ""]
    if machine:
        lines.append(f"Machine: {machine['cpu']}, {machine['cpus']} CPUs; commit "
                     f"{machine['commit']}; {machine['date_utc']}. `{command}`: "
                     f"{len(results)} cases in {wall / 60:.1f} min wall.")
        lines.append("")
    lines.append("| " + " | ".join(OUTCOMES) + " |")
    lines.append("|" + "---:|" * len(OUTCOMES))
    lines.append("| " + " | ".join(str(counts.get(o, 0)) for o in OUTCOMES) + " |")
    several = sum(1 for r in results if r["outcome"] == "clean_error"
                  and r.get("error_lines", 1) > 1)
    lines.append("")
    lines.append(f"Clean errors of more than one line (one `sharnir: error:` line per problem "
                 f"found, as the loader reports several at once): {several}.")
    lines.append("")
    for column, title in (("seed", "input"), ("mutation", "mutation")):
        counted = Counter((r[column], r["outcome"]) for r in results)
        lines.append(f"| {title} | " + " | ".join(OUTCOMES) + " |")
        lines.append("|---|" + "---:|" * len(OUTCOMES))
        for key in sorted({r[column] for r in results}):
            lines.append(f"| {key} | " + " | ".join(str(counted.get((key, o), 0))
                                                   for o in OUTCOMES) + " |")
        lines.append("")
    bad = [r for r in results if r["outcome"] not in ("ok", "clean_error")]
    if bad:
        lines.append("Cases that are not ok or a clean error (replay with "
                     f"`--seed {options.seed}` and the case number):")
        lines.append("")
        for r in bad[:50]:
            lines.append(f"* {r['index']} {r['outcome']}: {r['seed']} {r['mutation']} "
                         f"({r['detail'][:60]}): {r['message'][:160]}")
        if len(bad) > 50:
            lines.append(f"* ... and {len(bad) - 50} more")
    else:
        lines.append("No crash, hang, oom or silent non-finite result.")
    return "\n".join(lines) + "\n"


def replay(folder, options):
    """Run one kept case again in the foreground and show everything it wrote."""
    folder = Path(folder)
    meta = json.loads((folder / "case.json").read_text())
    case = Case(meta["index"], meta["seed"], meta["mutation"], meta["detail"], meta["main"],
                sets=meta["sets"])
    argv = cli_args(folder / case.main, folder / "out.npz", options.duration, case.sets)
    print("sharnir " + " ".join(a[:80] for a in argv))
    memory = int(options.memory_gib * (1 << 30))
    with open(folder / "stderr.txt", "wb") as err:
        proc = subprocess.run([sys.executable, "-c", FRESH_CHILD, str(memory), *argv],
                              stdout=subprocess.DEVNULL, stderr=err, timeout=options.timeout)
    stderr = (folder / "stderr.txt").read_text(errors="replace")
    print(stderr[-3000:])
    outcome, first = classify(proc.returncode, stderr, folder / "out.npz", folder / case.main)
    print(f"{outcome}: {first}")
    return 0 if outcome in ("ok", "clean_error") else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0, help="s per case")
    parser.add_argument("--memory-gib", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=0.25, help="simulated s per case")
    parser.add_argument("--keep", metavar="DIR", help="keep every case's folder here")
    parser.add_argument("--keep-bad", metavar="DIR",
                        help="keep the folders of the cases that are not ok or a clean error")
    parser.add_argument("--only", metavar="K,K,...",
                        help="run only these case numbers (of --seed)")
    parser.add_argument("--fresh", action="store_true", help="a new interpreter per case")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--log", metavar="FILE", help="append each result as a JSON line")
    parser.add_argument("--write", action="store_true", help="write bench/results.md")
    parser.add_argument("--replay", metavar="DIR", help="run one kept case again")
    parser.add_argument("--summarize", metavar="LOG",
                        help="only summarize the results a --log file holds (a run cut short)")
    options = parser.parse_args(argv)
    if options.replay:
        return replay(options.replay, options)
    if options.summarize:
        with open(options.summarize) as f:
            results = sorted((json.loads(line) for line in f if line.strip()),
                             key=lambda r: r["index"])
        command = "python bench/fuzz.py " + " ".join(argv if argv is not None else sys.argv[1:])
        print(summary_text(results, options, 0.0, command))
        return 0
    log = open(options.log, "a") if options.log else None   # noqa: SIM115

    def report(result, done, total):
        if log is not None:
            log.write(json.dumps(result) + "\n")
            log.flush()
        if result["outcome"] not in ("ok", "clean_error"):
            print(f"[{done}/{total}] case {result['index']} {result['outcome']}: "
                  f"{result['seed']} {result['mutation']} ({result['detail'][:60]}): "
                  f"{result['message'][:200]}", file=sys.stderr, flush=True)
        elif done % 100 == 0:
            print(f"[{done}/{total}]", file=sys.stderr, flush=True)

    # a run stopped by kill still kills its children and removes its work folder
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    began = time.monotonic()
    cases = [int(k) for k in options.only.split(",")] if options.only else \
        range(options.first, options.first + options.cases)
    results = run_cases(options, cases, report)
    wall = time.monotonic() - began
    command = "python bench/fuzz.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if options.json:
        print(json.dumps({"counts": Counter(r["outcome"] for r in results),
                          "results": results, "wall_s": wall}))
    else:
        print(summary_text(results, options, wall, command))
    if options.write:
        sys.path.insert(0, str(Path(__file__).parent))
        from run import machine, write_section

        write_section(SECTION, summary_text(results, options, wall, command, machine()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
