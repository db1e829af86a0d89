"""Every setting's range lives in physics.settings, and every door into the engine obeys it:
World(...), World.configure, World.set_friction / add_joint, scene files (scenes.schema), the
physics thread's commands and the panel's clamps.  Each test takes its bounds from the table,
so a range changed there is checked everywhere at once."""
import math
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from sharnir.app.commands import Configure
from sharnir.app.panel_state import request_friction, request_settings, request_speed
from sharnir.physics import Box, World, contact
from sharnir.physics.settings import SETTINGS, WORLD_SETTINGS, check
from sharnir.scenes.schema import JointSpec, SolverSpec, WorldSpec

REPO = Path(__file__).resolve().parents[1]
NUMBERS = [name for name in WORLD_SETTINGS if SETTINGS[name].kind in ("float", "int")]


def _beyond(s):
    """A value just below the range and one just above it."""
    if s.kind == "int":
        return [s.min - 1, s.max + 1]
    return [s.min / 2 if s.min > 0 else s.min - 1e-3, s.max * 1.001]


def test_the_table_has_every_setting_the_brief_names():
    for name in ("dt", "gravity", "iterations", "position_iterations", "tolerance",
                 "budget_ms", "warm_start", "manifold_reuse", "speed", "friction"):
        s = SETTINGS[name]
        assert s.min <= s.max and s.unit is not None and s.description
    assert set(WORLD_SETTINGS) <= set(SETTINGS)


@pytest.mark.parametrize("name", NUMBERS)
def test_world_configure_refuses_out_of_range_with_name_value_and_range(name):
    s = SETTINGS[name]
    world = World()
    before = world.settings
    for value in _beyond(s):
        with pytest.raises(ValueError) as refused:
            world.configure(**{name: value})
        message = str(refused.value)
        assert name in message and repr(value) in message and s.range_text in message
        assert world.settings == before     # nothing changed
    with pytest.raises(ValueError, match=name):
        World(**{name: _beyond(s)[1]})
    world.configure(**{name: s.min})        # both ends are allowed
    world.configure(**{name: s.max})
    assert world.settings[name] == s.max


def test_world_refuses_nan_gravity_beyond_range_and_wrong_types():
    world = World()
    g = SETTINGS["gravity"]
    for value in ((0.0, 0.0, math.nan), (0.0, 0.0, g.min * 1.001), (0.0, 0.0), "down"):
        with pytest.raises(ValueError, match="gravity"):
            world.configure(gravity=value)
    for name, value in (("iterations", 2.5), ("iterations", "20"), ("dt", None),
                        ("dt", True), ("warm_start", "no")):
        with pytest.raises(ValueError, match=name):
            world.configure(**{name: value})
    with pytest.raises(ValueError, match="warp"):
        world.configure(warp=3)
    world.configure(iterations=20.0, warm_start=0)
    assert world.settings["iterations"] == 20 and world.settings["warm_start"] is False


def test_joint_friction_range_holds_in_add_joint_and_set_friction():
    top = SETTINGS["friction"].max
    world = World()
    world.add_body("door", Box((0.5, 0.02, 1.0)), mass=30.0, pos=(0.5, 0.0, 1.0))
    with pytest.raises(ValueError, match="'hinge': friction must be in"):
        world.add_joint("hinge", "revolute", "world", "door", friction=10 * top)
    world.add_joint("hinge", "revolute", "world", "door", friction=top)
    with pytest.raises(ValueError, match="friction must be in"):
        world.set_friction("hinge", 2 * top)
    with pytest.raises(ValueError, match="friction"):
        world.set_friction("hinge", math.nan)


@pytest.mark.parametrize("name", NUMBERS)
def test_scene_files_take_exactly_the_engines_range(name):
    s = SETTINGS[name]
    spec = WorldSpec if name in WorldSpec.model_fields else SolverSpec
    assert getattr(spec(), name) == s.default == World().settings[name]
    spec.model_validate({name: s.min})
    spec.model_validate({name: s.max})
    for value in _beyond(s):
        with pytest.raises(ValidationError):
            spec.model_validate({name: value})


def test_scene_files_bound_gravity_and_joint_friction_by_the_table():
    g, f = SETTINGS["gravity"], SETTINGS["friction"]
    WorldSpec.model_validate({"gravity": [0.0, g.max, g.min]})
    with pytest.raises(ValidationError):
        WorldSpec.model_validate({"gravity": [0.0, 0.0, g.min * 1.5]})
    joint = {"name": "j", "type": "revolute", "body_a": "world", "body_b": "b"}
    JointSpec.model_validate({**joint, "friction": f.max})
    with pytest.raises(ValidationError):
        JointSpec.model_validate({**joint, "friction": f.max * 1.5})


def test_position_iterations_has_one_range_in_files_engine_and_panel():
    s = SETTINGS["position_iterations"]
    assert s.max == 1000
    SolverSpec.model_validate({"position_iterations": s.max})
    World(position_iterations=s.max)
    with pytest.raises(ValidationError):
        SolverSpec.model_validate({"position_iterations": s.max + 1})
    with pytest.raises(ValueError):
        World(position_iterations=s.max + 1)
    sent = []
    note = request_settings(sent.append, position_iterations=100_000)
    assert sent == [Configure(position_iterations=s.max)]
    assert "out of range [0, 1000]" in note and f"set to {s.max}" in note


@pytest.mark.parametrize("name", NUMBERS)
def test_the_panel_clamps_to_the_table_and_says_so(name):
    s = SETTINGS[name]
    for value, end in zip(_beyond(s), (s.min, s.max), strict=True):
        sent = []
        note = request_settings(sent.append, **{name: value})
        assert sent == [Configure(**{name: end})]
        assert "out of range" in note and s.range_text in note
        World().configure(**sent[0].settings)   # what the panel sends, the engine takes


def test_the_panel_clamps_speed_and_friction_to_the_table():
    sent = []
    assert "out of range" in request_speed(sent.append, 100.0)
    snap = type("Snap", (), {"joint_names": ("hinge",)})
    assert "out of range" in request_friction(snap, sent.append, "hinge", 1e12)
    assert [c.factor if hasattr(c, "factor") else c.value for c in sent] == [
        SETTINGS["speed"].max, SETTINGS["friction"].max]


def test_manifold_reuse_range_is_the_contact_modules():
    s = SETTINGS["manifold_reuse"]
    assert s.max == contact.MANIFOLD_REUSE_MAX and s.default == contact.MANIFOLD_REUSE


def test_check_names_unknown_settings():
    with pytest.raises(ValueError, match="unknown setting 'warp'"):
        check("warp", 1)
    assert check("dt", 0.01) == 0.01


def test_readme_lists_the_ranges_of_the_table():
    """README's table of ranges is the table (a range changed in one place only fails here)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    for s in SETTINGS.values():
        row = re.search(rf"^\| `{s.name}` \| ([^|]+) \|", text, re.MULTILINE)
        assert row, f"README has no row for {s.name}"
        assert row.group(1).strip() == s.range_text, s.name
