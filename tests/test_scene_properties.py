"""Properties that hold for any input (issue 13), checked with hypothesis:

* a scene file, whatever its text or values (a valid scene with values replaced by anything
  or removed, any bytes, any `--set`), loads to a World or fails with one SceneError
  of short lines; a World it gives steps to a finite state or stops with a SimulationError;
* the World's live edits (friction, voltage, settings, forces, poses, drags, loads) take any
  argument: a value is accepted, and the world stays finite after a step or stops with a
  SimulationError, or it is refused with a one-line ValueError or TypeError naming it;
* the commands the app's panel sends to the physics thread (app/commands.py, app/panel.py)
  never end the thread: a refused value is reported in the snapshot's error, and the poses
  it publishes are finite unless the error says the simulation blew up.

Bounded (50-100 examples each, no deadline) so that they take well under a minute once the
kernels are compiled.
"""
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharnir.app.commands import (
    ClearDrag,
    Configure,
    MoveBody,
    Reset,
    SetBodyForce,
    SetDrag,
    SetFriction,
    SetSpeed,
    SetVoltage,
    Step,
)
from sharnir.app.panel_state import (
    request_friction,
    request_settings,
    request_speed,
    request_voltage,
)
from sharnir.app.physics_thread import PhysicsThread
from sharnir.physics import Box, DCMotor, Plane, SimulationError, Sphere, World
from sharnir.physics.settings import WORLD_SETTINGS
from sharnir.scenes import SceneError, load_scene, read_scene

MAX_LINE = 300   # characters of one message line, besides the scene file's path
BOUNDED = settings(max_examples=60, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --- values -----------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-10.0, max_value=10.0),
    st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, 1e-300, 1e300, 1e-4, 0.1, 2 ** 62]),
)
TEXT = st.text(max_size=20) | st.sampled_from(["", "nan", "inf", "x" * 1000, "\\", "\u0000"])
SCALARS = NUMBERS | TEXT | st.booleans()
ANY = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                   | st.dictionaries(st.sampled_from(["a", "type", "name", "x"]), inner,
                                     max_size=3), max_leaves=8)
VECTOR = st.lists(NUMBERS, min_size=3, max_size=3) | st.lists(NUMBERS, max_size=5) | ANY
QUAT = st.lists(NUMBERS, min_size=4, max_size=4) | VECTOR


def maybe(strategy):
    return st.none() | strategy


# --- scenes -----------------------------------------------------------------------------------


# A valid scene (bodies a, b, c on the ground, joints, a load) with up to three of its values
# replaced by anything or removed: most examples are near the format, so that both the
# refusals and the runs of odd but valid values are explored.
SMALL = st.floats(min_value=0.05, max_value=2.0)
COORD = st.floats(min_value=-2.0, max_value=2.0)
VEC = st.lists(COORD, min_size=3, max_size=3)
POSITIVE_VEC = st.lists(SMALL, min_size=3, max_size=3)
VALID_SHAPE = st.one_of(
    st.fixed_dictionaries({"type": st.just("sphere"), "radius": SMALL}),
    st.fixed_dictionaries({"type": st.just("box"), "half_extents": POSITIVE_VEC}),
    st.fixed_dictionaries({"type": st.sampled_from(["capsule", "cylinder"]), "radius": SMALL,
                           "half_length": SMALL}),
    st.fixed_dictionaries({"type": st.just("ellipsoid"), "semi_axes": POSITIVE_VEC}),
)
VALID_BODY = st.fixed_dictionaries(
    {"shape": VALID_SHAPE, "mass": SMALL, "pos": VEC},
    optional={"vel": VEC, "angvel": VEC, "quat": st.lists(SMALL, min_size=4, max_size=4),
              "friction": st.floats(0.0, 1.0), "restitution": st.floats(0.0, 1.0)},
)
VALID_JOINT = st.fixed_dictionaries(
    {"type": st.sampled_from(["revolute", "prismatic", "spherical", "fixed"]),
     "body_a": st.sampled_from(["world", "a"]), "body_b": st.sampled_from(["b", "c"])},
    optional={"anchor": VEC, "axis": POSITIVE_VEC},
)
VALID_SCENE = st.builds(
    lambda bodies, joints, loads, dt, ground: {
        "world": {"dt": dt},
        "bodies": ([{"name": "ground", "kind": "static", "shape": {"type": "plane"}}]
                   if ground else []) + [{"name": n, **b} for n, b in zip("abc", bodies)],
        "joints": [{"name": f"j{k}", **j} for k, j in enumerate(joints)],
        "loads": [{"body": "c", "force": f} for f in loads]},
    st.lists(VALID_BODY, min_size=3, max_size=3), st.lists(VALID_JOINT, max_size=2),
    st.lists(VEC, max_size=1), st.sampled_from([0.01, 1.0 / 240.0]), st.booleans())
EDIT = st.tuples(st.integers(min_value=0, max_value=10_000), st.none() | ANY)


def _paths(node, prefix=()):
    yield prefix, node
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, (*prefix, k))


def edited(scene, edits):
    """`scene` with each edit (a path by number, a new value or None: removed) applied."""
    for pick, value in edits:
        paths = [p for p, _ in _paths(scene) if p]
        path = paths[pick % len(paths)]
        parent = scene
        for step in path[:-1]:
            parent = parent[step]
        if value is None:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return scene


SCENE = st.builds(edited, VALID_SCENE, st.lists(EDIT, max_size=3))


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) \
        + " }"


def _short_lines(message, path):
    bare = message.replace(str(path), "FILE").replace(str(Path(path).parent), "DIR")
    return all(len(line) <= MAX_LINE for line in bare.split("\n")) and bare.strip() != ""


def _finite(world):
    pos = world._state.body_pos if world._state is not None else None
    return pos is None or (np.isfinite(pos).all() and np.isfinite(world._state.body_quat).all())


def load_and_step(path):
    """World or SceneError, never another exception; a World steps finite or stops with a
    SimulationError."""
    try:
        world = load_scene(path)
    except SceneError as exc:
        assert _short_lines(str(exc), path), str(exc)[:2000]
        return "refused"
    try:
        world.step(3)
    except SimulationError as exc:
        assert "\n" not in str(exc) and len(str(exc)) <= MAX_LINE, str(exc)
        return "blew up"
    assert _finite(world)
    return "ran"


@BOUNDED
@given(scene=SCENE)
def test_any_scene_gives_a_world_or_one_scene_error(scene):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scene.toml"
        path.write_text("".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in
                                scene.items()), encoding="utf-8")
        load_and_step(path)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_read_as_a_scene_or_one_scene_error(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scene.toml"
        path.write_bytes(data)
        try:
            read_scene(path)
        except SceneError as exc:
            assert _short_lines(str(exc), path), str(exc)[:2000]


@BOUNDED
@given(key=st.sampled_from(["world.dt", "world.gravity", "solver.iterations", "duration",
                            "bodies.b.mass", "bodies.b.pos", "joints.j.friction", "loads.0.end",
                            "nope.x", "bodies", "joints.nope.anchor"]) | TEXT,
       value=st.text(max_size=40) | SCALARS.map(toml_value))
def test_any_override_gives_a_scene_or_one_scene_error(key, value):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scene.toml"
        path.write_text('bodies = [{ name = "b", shape = { type = "sphere", radius = 0.1 }, '
                        'mass = 1.0 }]\njoints = [{ name = "j", type = "revolute", '
                        'body_a = "world", body_b = "b", anchor = [0.0, 0.0, 1.0] }]\n'
                        'loads = [{ body = "b", force = [1.0, 0.0, 0.0] }]\n')
        try:
            read_scene(path, [f"{key}={value}"])
        except SceneError as exc:
            assert _short_lines(str(exc), path), str(exc)[:2000]


# --- the World API ------------------------------------------------------------------------------


def small_world():
    """Ground, a hinged box with a motor under a position controller, a free ball."""
    w = World(dt=0.01)
    w.add_body("ground", Plane(), kind="static")
    w.add_body("box", Box((0.1, 0.1, 0.3)), mass=2.0, pos=(0.0, 0.0, 1.0))
    w.add_body("ball", Sphere(0.1), mass=1.0, pos=(1.0, 0.0, 0.1))
    w.add_joint("hinge", "revolute", "world", "box", anchor=(0.0, 0.0, 1.3),
                axis=(0.0, 1.0, 0.0), friction=1.0)
    w.add_motor("hinge", DCMotor(resistance=1.0, torque_constant=0.1, voltage_limit=24.0))
    w.set_controller("hinge", "position", kp=10.0, kd=1.0, target=0.1)
    w.step(1)
    return w


# mostly valid arguments, so that accepted edits (and what a step makes of them) are explored
# as well as refusals
BODY_REF = st.one_of(st.sampled_from(["box", "ball", 1, 2]), st.sampled_from(["box", "ball"]),
                     st.sampled_from(["ground", "world", 0, 3, -1, 99]), ANY)
JOINT_REF = st.one_of(st.just("hinge"), st.just("hinge"), st.sampled_from([0, 1, -1]), ANY)
GOOD = st.floats(min_value=-5.0, max_value=5.0)
VALUE = st.one_of(GOOD, GOOD, GOOD, NUMBERS, ANY)
TRIPLE = st.lists(GOOD, min_size=3, max_size=3)
VECTOR = st.one_of(TRIPLE, TRIPLE, TRIPLE, st.lists(NUMBERS, min_size=3, max_size=3), VECTOR)
QUAT = st.one_of(st.lists(GOOD, min_size=4, max_size=4), QUAT)
SETTING = st.one_of(st.sampled_from([0.01, 0.002, 1e-4, 0.1, 20, 4, 0, 1e-6, True, 0.0002,
                                     (0.0, 0.0, -9.81), (0.0, 0.0, -1000.0)]), VALUE)
EDITS = st.one_of(
    st.tuples(st.just("set_friction"), JOINT_REF, VALUE),
    st.tuples(st.just("set_voltage"), JOINT_REF, VALUE),
    st.tuples(st.just("set_target"), JOINT_REF, VALUE, VALUE),
    st.tuples(st.just("configure"), st.dictionaries(
        st.sampled_from([*WORLD_SETTINGS, "nope"]), SETTING | VECTOR, min_size=1,
        max_size=2)),
    st.tuples(st.just("set_body_force"), BODY_REF, VECTOR, VECTOR),
    st.tuples(st.just("set_body_pose"), BODY_REF, maybe(VECTOR), maybe(QUAT)),
    st.tuples(st.just("set_body_velocity"), BODY_REF, maybe(VECTOR), maybe(VECTOR)),
    st.tuples(st.just("set_drag"), BODY_REF, VECTOR, maybe(VECTOR), maybe(QUAT)),
    st.tuples(st.just("add_load"), BODY_REF, VECTOR, VECTOR, VALUE, VALUE),
)
# the words a refusal of each edit names (its arguments, or the entity it refers to)
NAMED = {
    "set_friction": ("friction", "joint"),
    "set_voltage": ("voltage", "joint", "motor"),
    "set_target": ("target", "joint", "controller"),
    "configure": (*WORLD_SETTINGS, "setting"),
    "set_body_force": ("force", "torque", "body"),
    "set_body_pose": ("pos", "quat", "body"),
    "set_body_velocity": ("vel", "angvel", "body"),
    "set_drag": ("drag", "body"),
    "add_load": ("load", "force", "torque", "body", "start", "end"),
}


def apply_edit(world, edit):
    name, *args = edit
    if name == "configure":
        world.configure(**args[0])
    elif name == "set_target":
        world.set_target(args[0], args[1], rate=args[2])
    elif name == "set_drag":
        world.set_drag(args[0], args[1], args[2], quat=args[3])
    elif name == "add_load":
        world.add_load(args[0], force=args[1], torque=args[2], start=args[3], end=args[4])
    else:
        getattr(world, name)(*args)


@pytest.fixture(scope="module")
def world_factory():
    small_world()   # compiles (or loads) the step kernel once
    return small_world


@BOUNDED
@given(edits=st.lists(EDITS, min_size=1, max_size=3))
def test_a_live_edit_is_accepted_and_stays_finite_or_refused_by_name(world_factory, edits):
    world = world_factory()
    for edit in edits:
        try:
            apply_edit(world, edit)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            assert "\n" not in message and len(message) <= MAX_LINE, message[:2000]
            assert any(word in message for word in NAMED[edit[0]]), message
    try:
        world.step(3)
    except SimulationError as exc:
        assert "\n" not in str(exc) and len(str(exc)) <= MAX_LINE
        return
    assert _finite(world)


# --- the command API the panel uses ------------------------------------------------------------


@pytest.fixture(scope="module")
def physics_thread():
    sim = PhysicsThread(small_world, paused=True)
    sim.start()
    try:
        _wait(sim, lambda s: s.ready, 900)
        yield sim
    finally:
        assert sim.stop()


def _wait(sim, condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        snap = sim.snapshot
        if condition(snap):
            return snap
        time.sleep(0.002)
    raise AssertionError("the physics thread stopped answering")


COMMANDS = st.one_of(
    st.builds(lambda s: ("command", Configure(**s)), st.dictionaries(
        st.sampled_from([*WORLD_SETTINGS, "nope"]), SETTING | VECTOR, min_size=1,
        max_size=2)),
    st.builds(lambda j, v: ("command", SetFriction(j, v)), JOINT_REF, VALUE),
    st.builds(lambda j, v: ("command", SetVoltage(j, v)), JOINT_REF, VALUE),
    st.builds(lambda b, f, t: ("command", SetBodyForce(b, f, t)), BODY_REF, VECTOR, VECTOR),
    st.builds(lambda b, p, t, q: ("command", SetDrag(b, p, t, q)), BODY_REF, VECTOR,
              maybe(VECTOR), maybe(QUAT)),
    st.builds(lambda b, p, q: ("command", MoveBody(b, p, q)), BODY_REF, VECTOR, QUAT),
    st.builds(lambda v: ("command", SetSpeed(v)), NUMBERS | ANY),
    st.builds(lambda s: ("settings", s), st.dictionaries(
        st.sampled_from([*WORLD_SETTINGS, "nope"]), NUMBERS | VECTOR | TEXT, min_size=1,
        max_size=2)),
    st.builds(lambda j, v: ("friction", (j, v)), st.sampled_from(["hinge", "nope"]),
              NUMBERS | TEXT),
    st.builds(lambda j, v: ("voltage", (j, v)), st.sampled_from(["hinge", "nope"]),
              NUMBERS | TEXT),
    st.builds(lambda v: ("speed", v), NUMBERS | TEXT),
)


def _send(sim, item):
    kind, value = item
    snap = sim.snapshot
    if kind == "command":
        sim.send(value)
    elif kind == "settings":
        request_settings(sim.send, **value)
    elif kind == "friction":
        request_friction(snap, sim.send, *value)
    elif kind == "voltage":
        request_voltage(snap, sim.send, *value)
    else:
        request_speed(sim.send, value)


@settings(max_examples=50, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(commands=st.lists(COMMANDS, min_size=1, max_size=3))
def test_panel_commands_never_end_the_physics_thread(physics_thread, commands):
    sim = physics_thread
    generation = sim.snapshot.generation
    sim.send(Reset())
    _wait(sim, lambda s: s.generation > generation)
    for item in commands:
        _send(sim, item)
    sim.send(ClearDrag())
    before = sim.snapshot
    sim.send(Step())
    sim.send(Step())
    snap = _wait(sim, lambda s: s.step >= 2 or s.error_count > before.error_count)
    assert sim.is_alive()
    if snap.error is not None:
        assert "\n" not in snap.error and len(snap.error) <= 2 * MAX_LINE, snap.error
    if snap.error is None or "non-finite" not in snap.error and "broke down" not in snap.error:
        assert np.isfinite(snap.body_pos).all() and np.isfinite(snap.body_quat).all()
    assert os.getpid()   # (the test process itself is alive: nothing called exit)


@pytest.mark.parametrize("edit,word", [
    (("set_voltage", "hinge", []), "voltage"),
    (("set_target", "hinge", "abc", 0.0), "target"),
    (("set_body_force", "ball", "abc", (0.0, 0.0, 0.0)), "force"),
    (("set_body_force", "ball", [[1.0], [2.0, 3.0]], (0.0, 0.0, 0.0)), "force"),
    (("add_load", "ball", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), {}, 1.0), "start"),
    (("set_body_velocity", "ball", [10 ** 400, 0, 0], None), "vel"),
])
def test_a_live_edit_given_text_or_a_table_is_refused_by_name(world_factory, edit, word):
    """float() and numpy raised their own messages (or TypeError, OverflowError), naming
    neither the argument nor the body."""
    with pytest.raises(ValueError) as info:
        apply_edit(world_factory(), edit)
    assert word in str(info.value)
