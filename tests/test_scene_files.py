"""Scene files: validation, error messages and --set overrides (not the physics)."""

import math
import sys
import types

import pytest

from sharnir.scenes import SCENE_DIR, SceneError, SceneSpec, build_world, load_scene, read_scene

DOOR = """\
[[bodies]]
name = "frame"
shape = { type = "box", half_extents = [0.05, 0.05, 1.0] }
kind = "static"

[[bodies]]
name = "door"
shape = { type = "box", half_extents = [0.5, 0.02, 1.0] }
mass = 21.5
pos = [0.5, 0.0, 1.0]

[[joints]]
name = "hinge"
type = "revolute"
body_a = "world"
body_b = "door"
anchor = [0.0, 0.0, 1.0]
friction = 20.0
limits = [-1.0, 1.0]

[[loads]]
body = "door"
torque = [0.0, 0.0, 52.7]
end = 0.33
"""


def write(tmp_path, text):
    path = tmp_path / "scene.toml"
    path.write_text(text, encoding="utf-8")
    return path


def scene_error(path, sets=()):
    """The SceneError message for ``path``, checked to name the file and hold no traceback."""
    with pytest.raises(SceneError) as info:
        read_scene(path, sets)
    message = str(info.value)
    assert str(path) in message
    assert "Traceback" not in message
    return message


def assert_mentions(message, *fragments):
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# --- valid scenes ----------------------------------------------------------


def test_minimal_scene_gets_defaults(tmp_path):
    path = write(tmp_path, '[[bodies]]\nname = "ball"\nshape = { type = "sphere", radius = 0.1 }\nmass = 1\n')
    spec = read_scene(path)
    assert isinstance(spec, SceneSpec)
    assert spec.version == 0
    assert spec.world.gravity == (0.0, 0.0, -9.81)
    assert spec.world.dt == pytest.approx(1 / 240)
    assert (spec.solver.iterations, spec.solver.position_iterations) == (100, 4)
    assert (spec.solver.tolerance, spec.solver.budget_ms, spec.solver.warm_start) == (1e-9, 0.0, True)
    ball = spec.bodies[0]
    assert (ball.pos, ball.quat, ball.vel, ball.angvel) == ((0, 0, 0), (1, 0, 0, 0), (0, 0, 0), (0, 0, 0))
    assert ball.kind == "dynamic"
    assert spec.joints == [] and spec.loads == []


def test_full_scene_validates(tmp_path):
    spec = read_scene(write(tmp_path, DOOR))
    assert [b.name for b in spec.bodies] == ["frame", "door"]
    assert spec.joints[0].limits == (-1.0, 1.0)
    assert spec.joints[0].axis == (0.0, 0.0, 1.0)
    assert spec.loads[0].end == 0.33


def test_omitted_load_end_means_forever(tmp_path):
    spec = read_scene(write(tmp_path, DOOR.replace("end = 0.33\n", "")))
    assert spec.loads[0].end is None


def test_quaternion_and_axis_are_normalised(tmp_path):
    text = DOOR.replace("pos = [0.5", "quat = [2.0, 0.0, 0.0, 0.0]\npos = [0.5").replace(
        "friction = 20.0", "axis = [0.0, 3.0, 4.0]\nfriction = 20.0"
    )
    spec = read_scene(write(tmp_path, text))
    assert spec.bodies[1].quat == (1.0, 0.0, 0.0, 0.0)
    assert spec.joints[0].axis == pytest.approx((0.0, 0.6, 0.8))


def test_body_without_shape_is_valid_with_mass_and_inertia(tmp_path):
    path = write(tmp_path, '[[bodies]]\nname = "point"\nmass = 1.0\ninertia = [0.1, 0.1, 0.1]\n')
    assert read_scene(path).bodies[0].shape is None


def test_overrides_change_values(tmp_path):
    sets = [
        "joints.hinge.friction=35",
        "solver.iterations=100",
        "solver.budget_ms = 2.5",
        "world.gravity=[0,0,-1.62]",
        "bodies.door.shape.half_extents=[0.5,0.02,1]",
        "bodies.door.kind=kinematic",  # not TOML, so taken as a plain string
        "loads.0.end=0.5",
    ]
    spec = read_scene(write(tmp_path, DOOR), sets)
    assert spec.joints[0].friction == 35.0
    assert spec.solver.iterations == 100
    assert spec.solver.budget_ms == 2.5
    assert spec.world.gravity == (0.0, 0.0, -1.62)
    assert spec.bodies[1].shape.half_extents == (0.5, 0.02, 1.0)
    assert spec.bodies[1].kind == "kinematic"
    assert spec.loads[0].end == 0.5


def test_override_creating_an_unknown_key_fails_validation(tmp_path):
    path = write(tmp_path, DOOR)
    message = scene_error(path, ["solver.iteratons=5"])
    assert_mentions(message, "[solver]", 'unknown key "iteratons"', 'did you mean "iterations"?')


# --- syntax, files and keys ------------------------------------------------


def test_bad_toml_syntax_reports_line_and_column(tmp_path):
    path = write(tmp_path, '[[bodies]]\nname = "door"\nmass = = 2\n')
    assert_mentions(scene_error(path), "TOML syntax error", "line 3, column")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    assert scene_error(path) == f"{path}: no such file"


def test_unknown_key_suggests_closest(tmp_path):
    path = write(tmp_path, DOOR.replace("mass = 21.5", "mas = 21.5"))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door"', 'unknown key "mas"', 'did you mean "mass"?')


def test_unknown_shape_key_suggests_closest(tmp_path):
    path = write(tmp_path, DOOR.replace("half_extents = [0.5", "half_extent = [0.5"))
    message = scene_error(path)
    assert_mentions(
        message, 'bodies[1] "door"', 'field "shape"', 'unknown key "half_extent"', 'did you mean "half_extents"?'
    )


def test_several_errors_are_reported_together(tmp_path):
    text = DOOR.replace("mass = 21.5", "mass = -1").replace("friction = 20.0", "friction = -1")
    path = write(tmp_path, text)
    lines = scene_error(path).splitlines()
    assert len(lines) == 2
    assert 'field "mass"' in lines[0] and 'field "friction"' in lines[1]


# --- bad values ------------------------------------------------------------


def test_negative_mass(tmp_path):
    path = write(tmp_path, DOOR.replace("mass = 21.5", "mass = -2.0"))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door": field "mass": must be greater than 0 (got -2.0)')


def test_manifold_reuse_beyond_half_the_contact_margin(tmp_path):
    path = write(tmp_path, "[solver]\nmanifold_reuse = 0.003\n\n" + DOOR)
    message = scene_error(path)
    assert_mentions(message, "[solver]", 'field "manifold_reuse"', "must be at most 0.0025 (got 0.003)")


def test_zero_half_extent(tmp_path):
    path = write(tmp_path, DOOR.replace("[0.5, 0.02, 1.0]", "[0.5, 0.0, 1.0]"))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door"', 'field "shape.half_extents"', "greater than 0", "index 1")


def test_nan_value(tmp_path):
    path = write(tmp_path, DOOR.replace("pos = [0.5, 0.0, 1.0]", "pos = [0.5, nan, 1.0]"))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door"', 'field "pos"', "NaN or infinite value")


def test_inf_value(tmp_path):
    path = write(tmp_path, DOOR.replace("friction = 20.0", "friction = inf"))
    message = scene_error(path)
    assert_mentions(message, 'joints[0] "hinge"', 'field "friction"', "NaN or infinite value")


def test_vector_of_wrong_length(tmp_path):
    short = write(tmp_path, DOOR.replace("pos = [0.5, 0.0, 1.0]", "pos = [0.5, 0.0]"))
    assert_mentions(scene_error(short), 'bodies[1] "door"', 'field "pos"', "too few items")
    long = write(tmp_path, DOOR.replace("pos = [0.5, 0.0, 1.0]", "pos = [0.5, 0.0, 1.0, 2.0]"))
    assert_mentions(scene_error(long), 'bodies[1] "door"', 'field "pos"', "exactly 3 items")


def test_zero_quaternion(tmp_path):
    path = write(tmp_path, DOOR.replace("pos = [0.5", "quat = [0, 0, 0, 0]\npos = [0.5"))
    assert_mentions(scene_error(path), 'bodies[1] "door"', 'field "quat"', "must not be zero")


def test_mass_and_density_both_given(tmp_path):
    path = write(tmp_path, DOOR.replace("mass = 21.5", "mass = 21.5\ndensity = 1000.0"))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door"', 'field "density"', '"mass"')


def test_dynamic_body_without_mass_or_density(tmp_path):
    path = write(tmp_path, DOOR.replace("mass = 21.5\n", ""))
    assert_mentions(scene_error(path), 'bodies[1] "door"', 'field "mass"', '"density"')


def test_world_is_a_reserved_body_name(tmp_path):
    path = write(tmp_path, DOOR.replace('name = "frame"', 'name = "world"'))
    assert_mentions(scene_error(path), 'bodies[0] "world"', 'field "name"', "reserved")


def test_duplicate_body_names(tmp_path):
    path = write(tmp_path, DOOR.replace('name = "frame"', 'name = "door"'))
    message = scene_error(path)
    assert_mentions(message, 'bodies[1] "door"', 'field "name"', 'duplicate name "door"', "bodies[0]")


def test_duplicate_joint_names(tmp_path):
    extra = '[[joints]]\nname = "hinge"\ntype = "fixed"\nbody_a = "world"\nbody_b = "frame"\n'
    message = scene_error(write(tmp_path, DOOR + extra))
    assert_mentions(message, 'joints[1] "hinge"', 'field "name"', 'duplicate name "hinge"')


# --- joints and loads ------------------------------------------------------


def test_joint_with_unknown_body(tmp_path):
    path = write(tmp_path, DOOR.replace('body_b = "door"', 'body_b = "dor"'))
    message = scene_error(path)
    assert_mentions(
        message, 'joints[0] "hinge": field "body_b": unknown body "dor" (bodies are: frame, door)'
    )


def test_joint_joining_a_body_to_itself(tmp_path):
    path = write(tmp_path, DOOR.replace('body_a = "world"', 'body_a = "door"'))
    message = scene_error(path)
    assert_mentions(message, 'joints[0] "hinge"', 'field "body_b"', 'cannot join body "door" to itself')


def test_limits_on_spherical_joint(tmp_path):
    path = write(tmp_path, DOOR.replace('type = "revolute"', 'type = "spherical"'))
    message = scene_error(path)
    assert_mentions(message, 'joints[0] "hinge"', 'field "limits"', "spherical")


def test_limits_lower_not_below_upper(tmp_path):
    path = write(tmp_path, DOOR.replace("limits = [-1.0, 1.0]", "limits = [1.0, 1.0]"))
    message = scene_error(path)
    assert_mentions(message, 'joints[0] "hinge"', 'field "limits"', "lower must be less than upper")


def test_friction_on_fixed_joint(tmp_path):
    text = DOOR.replace('type = "revolute"', 'type = "fixed"').replace("limits = [-1.0, 1.0]\n", "")
    assert_mentions(scene_error(write(tmp_path, text)), 'joints[0] "hinge"', 'field "friction"', "fixed")


def test_load_on_unknown_body(tmp_path):
    path = write(tmp_path, DOOR.replace('body = "door"', 'body = "dor"'))
    message = scene_error(path)
    assert_mentions(message, "loads[0]", 'field "body"', 'unknown body "dor"')


def test_load_on_static_body(tmp_path):
    path = write(tmp_path, DOOR.replace('body = "door"', 'body = "frame"'))
    assert_mentions(scene_error(path), "loads[0]", 'field "body"', "static")


def test_load_ending_before_it_starts(tmp_path):
    path = write(tmp_path, DOOR.replace("end = 0.33", "start = 1.0\nend = 0.33"))
    assert_mentions(scene_error(path), "loads[0]", 'field "end"', "greater than start")


# --- bad --set arguments ---------------------------------------------------


def test_bad_set_unknown_entry_name(tmp_path):
    path = write(tmp_path, DOOR)
    message = scene_error(path, ["joints.hinj.friction=35"])
    assert_mentions(message, '--set "joints.hinj.friction=35"', 'no joint named "hinj"', "joints are: hinge")


def test_bad_set_without_equals(tmp_path):
    message = scene_error(write(tmp_path, DOOR), ["solver.iterations"])
    assert_mentions(message, '--set "solver.iterations"', "KEY=VALUE")


def test_bad_set_path_into_a_value(tmp_path):
    message = scene_error(write(tmp_path, DOOR), ["bodies.door.mass.x=1"])
    assert_mentions(message, '--set "bodies.door.mass.x=1"', '"bodies.door.mass" is not a table')


def test_bad_set_load_index(tmp_path):
    message = scene_error(write(tmp_path, DOOR), ["loads.3.end=1"])
    assert_mentions(message, '--set "loads.3.end=1"', "no loads[3]")


def test_bad_set_whole_entry(tmp_path):
    message = scene_error(write(tmp_path, DOOR), ["loads.0=1"])
    assert_mentions(message, '--set "loads.0=1"', "set a key of one entry")


# --- building a world ------------------------------------------------------


class FakeWorld:
    """Records the calls build_world makes, standing in for physics.World."""

    def __init__(self, **settings):
        self.settings, self.bodies, self.joints, self.loads = settings, [], [], []

    def add_body(self, name, shape=None, **kw):
        if kw["kind"] == "static" and any(kw["vel"]):
            raise ValueError("a static body cannot move")
        self.bodies.append((name, shape, kw))

    def add_joint(self, name, type, body_a, body_b, **kw):
        self.joints.append((name, type, body_a, body_b, kw))

    def add_load(self, body, **kw):
        self.loads.append((body, kw))


@pytest.fixture
def fake_physics(monkeypatch):
    physics = types.SimpleNamespace(World=FakeWorld, SHAPES={"box": lambda **kw: ("box", kw)},
                                    Material=lambda **kw: ("material", kw))
    monkeypatch.setitem(sys.modules, "sharnir.physics", physics)


def test_load_scene_passes_the_spec_to_the_engine(tmp_path, fake_physics):
    path = write(tmp_path, DOOR)
    world = load_scene(path, iterations=7)
    assert world.source == str(path)
    assert world.settings["iterations"] == 7 and world.settings["dt"] == pytest.approx(1 / 240)
    assert world.settings["manifold_reuse"] == 0.0002
    name, shape, body = world.bodies[1]
    assert (name, shape, body["mass"]) == ("door", ("box", {"half_extents": (0.5, 0.02, 1.0)}), 21.5)
    assert world.joints[0][:4] == ("hinge", "revolute", "world", "door")
    assert world.loads[0][1]["end"] == 0.33


def test_load_without_end_is_built_as_infinite(tmp_path, fake_physics):
    world = load_scene(write(tmp_path, DOOR.replace("end = 0.33\n", "")))
    assert world.loads[0][1]["end"] == math.inf


def test_engine_value_error_names_the_entry(tmp_path, fake_physics):
    path = write(tmp_path, DOOR.replace('kind = "static"', 'kind = "static"\nvel = [1.0, 0.0, 0.0]'))
    with pytest.raises(SceneError, match=r'bodies\[0\] "frame": a static body cannot move'):
        load_scene(path)


def test_bad_command_line_option_is_a_scene_error(tmp_path, fake_physics):
    path = write(tmp_path, DOOR)
    with pytest.raises(SceneError, match='field "dt": must be at least 0.0001'):
        build_world(read_scene(path), dt=-0.01, source=str(path))


@pytest.mark.parametrize("path", sorted(SCENE_DIR.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scene_is_valid(path):
    read_scene(path)
