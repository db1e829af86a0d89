"""`sharnir convert` and `sharnir schema`: any scene written as TOML reads back to the same
model, and the documented format (docs/scene-format.md, docs/scene.schema.json) is the one the
loader validates with."""
import json
import tomllib
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from test_cli import sharnir

from sharnir.scenes import SCENE_DIR, build_world, read_scene, shipped_scenes
from sharnir.scenes.reference import reference_markdown, schema, schema_json
from sharnir.scenes.writer import scene_toml

DOCS = Path(__file__).resolve().parent.parent / "docs"
HUMANOID = Path(__file__).parent / "fixtures" / "mjcf" / "humanoid.xml"


def canon(node):
    """A spec's dump with hull files as resolved paths (scenes/../assets/x = assets/x)."""
    if isinstance(node, dict):
        return {k: (str(Path(v).resolve()) if k == "file" and isinstance(v, str) else canon(v))
                for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [canon(x) for x in node]
    return node


def round_trip(path, tmp_path):
    spec = read_scene(path)
    out = tmp_path / "converted.toml"
    out.write_text(scene_toml(spec, base=tmp_path), encoding="utf-8")
    return spec, read_scene(out)


@pytest.mark.parametrize("name", sorted(shipped_scenes()))
def test_every_shipped_scene_converts_to_toml_that_reads_back_the_same(name, tmp_path):
    spec, back = round_trip(name, tmp_path)
    assert canon(back.model_dump()) == canon(spec.model_dump())


def test_mjcf_humanoid_converts_to_toml_that_builds_the_same_world(tmp_path):
    pytest.importorskip("mujoco")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec, back = round_trip(HUMANOID, tmp_path)
    assert back.model_dump() == spec.model_dump()
    a, b = build_world(spec), build_world(back)
    for name in ("body_mass", "body_inertia", "body_pos", "body_quat"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.joint_names == b.joint_names


def test_hull_files_are_written_relative_to_the_output_folder(tmp_path):
    rock = tmp_path / "rock.obj"
    rock.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
    scene = tmp_path / "rock.toml"
    scene.write_text('bodies = [{ name = "rock", shape = { type = "hull", file = "rock.obj" }, '
                     'mass = 1.0 }]\n')
    text = scene_toml(read_scene(scene), base=tmp_path)
    assert tomllib.loads(text)["bodies"][0]["shape"]["file"] == "rock.obj"


def test_cli_convert_writes_a_scene_and_refuses_other_suffixes(tmp_path):
    done = sharnir("convert", "door", tmp_path / "door.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr
    assert read_scene(tmp_path / "door.toml").model_dump() == read_scene("door").model_dump()
    bad = sharnir("convert", "door", tmp_path / "door.json", cwd=tmp_path)
    assert bad.returncode == 2 and "OUT.toml" in bad.stderr
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "door.json").exists()


def test_committed_reference_and_schema_are_current():
    assert (DOCS / "scene-format.md").read_text(encoding="utf-8") == reference_markdown(), \
        "run python -m sharnir.scenes.reference"
    assert (DOCS / "scene.schema.json").read_text(encoding="utf-8") == schema_json()


@pytest.mark.parametrize("name", sorted(shipped_scenes()))
def test_every_shipped_scene_file_validates_against_the_json_schema(name):
    raw = tomllib.loads((SCENE_DIR / f"{name}.toml").read_text(encoding="utf-8"))
    jsonschema.validate(raw, schema())


@pytest.mark.parametrize("fragment,where", [
    ('bodies = [{ name = "b", mass = -1.0, shape = { type = "sphere", radius = 0.1 } }]',
     "mass"),
    ('joints = [{ name = "j", type = "hinge", body_a = "world", body_b = "b" }]', "hinge"),
    ('bodies = [{ name = "b", shape = { type = "blob" } }]', "blob"),
    ('solver = { iterations = 0 }', "iterations"),
])
def test_the_json_schema_rejects_what_the_loader_rejects(fragment, where):
    with pytest.raises(jsonschema.ValidationError) as info:
        jsonschema.validate(tomllib.loads(fragment), schema())
    assert where in str(info.value)


def test_cli_schema_prints_the_schema(tmp_path):
    done = sharnir("schema", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["title"] == "Sharnir scene"
