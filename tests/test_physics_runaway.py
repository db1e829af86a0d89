"""A finite explosion is not passed off as physics (issue 13): a dynamic body faster than
`max_speed` or turning faster than `max_angular_speed` stops the run with a RunawayError that
names the body, the quantity, its value, the step and the time; a tiny dt is refused where it
is set; `sharnir run --json` never crashes on a number that is not finite."""
import json
import math

import pytest
from test_cli import sharnir

from sharnir import Sphere, World
from sharnir.app.cli import _json_ready
from sharnir.physics import RunawayError, SimulationError
from sharnir.physics.settings import SETTINGS
from sharnir.scenes import SceneError, load_scene

H = 0.01
# a 1 kg ball of radius 0.1 m: I = 2/5 m r^2 = 0.004 kg m^2
MASS, RADIUS, INERTIA = 1.0, 0.1, 0.004


def ball_world(**settings):
    world = World(dt=H, gravity=(0.0, 0.0, 0.0), **settings)
    world.add_body("ball", Sphere(RADIUS), mass=MASS)
    return world


def test_a_pushed_ball_stops_the_run_at_the_step_it_passes_max_speed():
    # F = 1e5 N on 1 kg: v = k h F / m = 1000 k m/s after step k, exactly (sums of 1000.0);
    # 10,000 m/s is reached at step 10, not passed; step 11 passes it at 11,000 m/s
    world = ball_world()
    world.set_body_force("ball", force=(1e5, 0.0, 0.0))
    with pytest.raises(RunawayError) as info:
        world.run(100)
    e = info.value
    assert (e.body, e.quantity, e.setting, e.step) == ("ball", "speed", "max_speed", 11)
    assert e.value == pytest.approx(11_000.0) and e.bound == 10_000.0
    assert e.time == pytest.approx(11 * H)
    message = str(e)
    assert "\n" not in message
    for words in ("'ball'", "speed of 1.1e+04 m/s", "step 11", "t = 0.11 s", "max_speed"):
        assert words in message
    assert isinstance(e, SimulationError)     # every handler of blow-ups catches it


def test_a_spun_ball_stops_at_the_step_it_passes_max_angular_speed():
    # tau = 4200 N m: w = k h tau / I = 10,500 k rad/s; 94,500 after step 9, 105,000 after 10
    world = ball_world()
    world.set_body_force("ball", torque=(0.0, 0.0, 4200.0))
    with pytest.raises(RunawayError) as info:
        world.run(100)
    e = info.value
    assert (e.quantity, e.setting, e.step) == ("angular speed", "max_angular_speed", 10)
    assert e.value == pytest.approx(10 * H * 4200.0 / INERTIA)
    assert "rad/s" in str(e)


def test_the_bounds_are_settings_and_zero_turns_them_off():
    world = ball_world(max_speed=0.0)
    world.set_body_force("ball", force=(1e5, 0.0, 0.0))
    world.run(20)
    assert world.body_vel[1, 0] == 20 * 1000.0
    world.configure(max_speed=15_000.0)
    with pytest.raises(RunawayError):      # already beyond it: the next step says so
        world.run(1)
    with pytest.raises(ValueError, match=r"max_speed must be in \[0, 10000000000\] m/s"):
        world.configure(max_speed=1e11)
    assert SETTINGS["max_angular_speed"].default == 1e5


def test_a_kinematic_body_moves_as_fast_as_it_is_told():
    world = World(dt=H, gravity=(0.0, 0.0, 0.0))
    world.add_body("rail", Sphere(RADIUS), kind="kinematic", vel=(2e4, 0.0, 0.0))
    world.run(5)
    assert world.body_vel[1, 0] == 2e4


def test_a_scene_sets_the_bounds_in_its_world_table(tmp_path):
    path = tmp_path / "s.toml"
    body = 'bodies = [{ name = "b", shape = { type = "sphere", radius = 0.1 }, mass = 1.0 }]\n'
    path.write_text(body + "[world]\nmax_speed = 5.0\ngravity = [0.0, 0.0, -9.81]\ndt = 0.01\n")
    world = load_scene(path)
    # free fall: |v| = g h k passes 5 m/s at k = 51 (9.81 * 0.51 = 5.0031 m/s; 50: 4.905)
    with pytest.raises(RunawayError) as info:
        world.run(100)
    assert info.value.step == 51
    path.write_text(body + "[world]\nmax_speed = -1.0\n")
    with pytest.raises(SceneError, match="max_speed"):
        load_scene(path)


@pytest.mark.parametrize("dt", [1e-200, 5e-324, 0.0, -1.0, math.nan, math.inf])
def test_a_tiny_or_bad_dt_is_refused_where_it_is_set(dt, tmp_path):
    with pytest.raises(ValueError, match="dt must be in"):
        World(dt=dt)
    with pytest.raises(ValueError, match="dt must be in"):
        World().configure(dt=dt)
    if math.isfinite(dt):
        path = tmp_path / "s.toml"
        path.write_text(f"[world]\ndt = {dt!r}\n")
        with pytest.raises(SceneError, match='field "dt": must be at least 0.0001'):
            load_scene(path)


def test_json_ready_writes_non_finite_numbers_as_null():
    summary = {"steps": 3, "wall_s": 0.5, "joints": {"j": {"velocity": math.inf,
                                                           "friction": -math.inf,
                                                           "coordinate": math.nan}},
               "list": [1.0, math.nan]}
    text = json.dumps(_json_ready(summary), allow_nan=False)
    assert json.loads(text) == {"steps": 3, "wall_s": 0.5, "list": [1.0, None],
                                "joints": {"j": {"velocity": None, "friction": None,
                                                 "coordinate": None}}}


PUSHED_DOOR = """\
[world]
dt = 0.01
[[bodies]]
name = "door"
shape = { type = "box", half_extents = [0.5, 0.02, 1.0] }
mass = 20.0
pos = [0.5, 0.0, 1.0]
[[joints]]
name = "hinge"
type = "revolute"
body_a = "world"
body_b = "door"
anchor = [0.0, 0.0, 1.0]
axis = [0.0, 0.0, 1.0]
[[loads]]
body = "door"
force = [0.0, 1e13, 0.0]
"""


def test_sharnir_run_stops_a_runaway_with_one_line_and_status_2(tmp_path):
    # 1e13 N on a 20 kg door: it was reported as a hinge turning at -7.9e8 rad/s
    (tmp_path / "door.toml").write_text(PUSHED_DOOR)
    done = sharnir("run", "door.toml", "--json", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("sharnir: error: body 'door' reached a")
    assert "step 1 " in last and "t = 0.01 s" in last and "max_" in last
    off = sharnir("run", "door.toml", "--json", "--duration", "0.02",
                  "--set", "world.max_speed=0", "--set", "world.max_angular_speed=0",
                  cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert abs(json.loads(off.stdout.strip().splitlines()[-1])
               ["joints"]["hinge"]["velocity"]) > 1e5
