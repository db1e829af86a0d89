"""The scene format's reference, generated from the validation models (`scenes.schema`).

    python -m sharnir.scenes.reference     # rewrite docs/scene-format.md, docs/scene.schema.json
    sharnir schema [OUT.json]              # the JSON Schema alone

`schema_json()` is the JSON Schema (draft 2020-12) of a scene file, for editors (VS Code's
"Even Better TOML" / Taplo read it from a `#:schema` comment or their settings) to validate
and complete scene files; `reference_markdown()` is the reference page: one table per table of
the format (key, type, default, bounds) under the model's docstring. Both come from the same
pydantic models the loader validates with, and a test checks that the committed files are
current, so the documentation cannot drift from what the loader accepts.
"""
import json
from pathlib import Path
from typing import Any

from .schema import SceneSpec

SCHEMA_ID = "https://sharnir.dev/scene.schema.json"

# the order the reference page presents the tables in (the rest follow alphabetically)
_ORDER = ("SceneSpec", "WorldSpec", "SolverSpec", "BehaviourSpec", "BodySpec", "BoxSpec",
          "SphereSpec", "CapsuleSpec", "CylinderSpec", "EllipsoidSpec", "PlaneSpec", "HullSpec",
          "CompoundSpec", "PartSpec", "FrameSpec", "JointSpec", "MotorSpec", "ControllerSpec",
          "LoadSpec")
_TITLES = {"SceneSpec": "the file (top level)", "WorldSpec": "world", "SolverSpec": "solver",
           "BehaviourSpec": "behaviour", "BodySpec": "bodies[]", "JointSpec": "joints[]",
           "MotorSpec": "joints[].motor", "ControllerSpec": "joints[].motor.controller",
           "LoadSpec": "loads[]", "PartSpec": "shape.parts[] (compound)",
           "FrameSpec": "shape.frame (compound)",
           **{f"{k}Spec": f'shape: type = "{k.lower()}"' for k in (
               "Box", "Sphere", "Capsule", "Cylinder", "Ellipsoid", "Plane", "Hull",
               "Compound")}}


_SHAPES = {f"{k}Spec" for k in ("Box", "Sphere", "Capsule", "Cylinder", "Ellipsoid", "Plane",
                                  "Hull", "Compound")}


def schema() -> dict:
    """The JSON Schema of a scene file, TOML's types only (no nulls: a key left out is the
    default)."""
    s = _without_nulls(SceneSpec.model_json_schema())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            **s, "title": "Sharnir scene"}


def schema_json() -> str:
    return json.dumps(schema(), indent=2, sort_keys=False) + "\n"


def _without_nulls(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_nulls(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "default" and v is None:
            continue
        if k == "anyOf":
            options = [x for x in v if x != {"type": "null"}]
            if len(options) == 1:
                out.update(_without_nulls(options[0]))
                continue
            v = options
        out[k] = _without_nulls(v)
    return out


def reference_markdown() -> str:
    s = schema()
    defs = s["$defs"]
    names = [n for n in _ORDER if n in defs] + sorted(set(defs) - set(_ORDER))
    lines = ["# The scene format", "",
             "Generated from the loader's validation models by `python -m "
             "sharnir.scenes.reference` (scenes/reference.py); do not edit by hand.",
             "A scene is a TOML file (or a MuJoCo `.xml`, or a URDF `.urdf`, converted on "
             "load; `sharnir convert IN OUT.toml` writes any of them as TOML). SI units, z up, "
             "quaternions (w, x, y, z). The JSON Schema of the same format is "
             "[scene.schema.json](scene.schema.json) (`sharnir schema`); editors that read "
             "JSON Schemas for TOML validate and complete scene files with it.",
             "Files a scene names (hull meshes, included files, a URDF's meshes, an MJCF "
             "file's includes and assets) are read only from the scene's folder, the folders "
             "the user declares (`--asset-root DIR`, `$SHARNIR_ASSET_PATH`, "
             "`$ROS_PACKAGE_PATH`), ROS packages (a folder with a `package.xml`) and "
             "Sharnir's own `assets/`, symbolic links resolved (scenes/asset_roots.py); a "
             "scene file cannot add folders of its own.", ""]
    for name in ["SceneSpec"] + [n for n in names if n != "SceneSpec"]:
        model = s if name == "SceneSpec" else defs[name]
        lines += _table(name, model)
    return "\n".join(lines).rstrip() + "\n"


def _table(name: str, model: dict) -> list[str]:
    title = _TITLES.get(name, name.removesuffix("Spec").lower())
    lines = [f"## {title}", ""]
    doc = model.get("description", "").strip()
    if doc:
        lines += [" ".join(doc.split()), ""]
    required = set(model.get("required", ()))
    lines += ["| key | type | default | bounds |", "|---|---|---|---|"]
    for key, field in model.get("properties", {}).items():
        default = "required" if key in required else _show(field.get("default", ""))
        lines.append(f"| `{key}` | {_type(field)} | {default} | {_bounds(field)} |")
    return lines + [""]


def _type(field: dict) -> str:
    if "const" in field:
        return f'`"{field["const"]}"`'
    if "enum" in field:
        return " or ".join(f'`"{x}"`' for x in field["enum"])
    if "$ref" in field:
        ref = field["$ref"].rsplit("/", 1)[-1]
        return f"table ({_TITLES.get(ref, ref.removesuffix('Spec').lower())})" if ref not in \
            _SHAPES else f'"{ref.removesuffix("Spec").lower()}"'

    if "oneOf" in field or "anyOf" in field:
        options = field.get("oneOf") or field.get("anyOf")
        if all(x.get("$ref", "").rsplit("/", 1)[-1] in _SHAPES for x in options):
            return "shape table, type " + ", ".join(_type(x) for x in options)
        return " or ".join(_type(x) for x in options)
    kind = field.get("type", "any")
    if kind == "array":
        if "prefixItems" in field:
            return f"{len(field['prefixItems'])} numbers" if all(
                x.get("type") == "number" for x in field["prefixItems"]) else "array"
        items = field.get("items", {})
        return f"array of {_type(items)}"
    return {"number": "number", "integer": "integer", "string": "string",
            "boolean": "bool", "object": "table"}.get(kind, kind)


def _bounds(field: dict) -> str:
    parts = []
    if "prefixItems" in field:   # fixed length: said by the type
        field = {k: v for k, v in field.items() if k not in ("minItems", "maxItems")}
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
                      ("exclusiveMaximum", "<"), ("minItems", "items >="),
                      ("minLength", "length >=")):
        if key in field:
            parts.append(f"{sign} {field[key]:g}" if isinstance(field[key], float)
                         else f"{sign} {field[key]}")
    return ", ".join(parts)


def _show(v: Any) -> str:
    if v == "":
        return ""
    if isinstance(v, str):
        return f'`"{v}"`'
    return f"`{json.dumps(v)}`"


def write_docs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / "scene-format.md", folder / "scene.schema.json"]
    out[0].write_text(reference_markdown(), encoding="utf-8")
    out[1].write_text(schema_json(), encoding="utf-8")
    return out


if __name__ == "__main__":
    for path in write_docs(Path(__file__).resolve().parent.parent / "docs"):
        print(path)
