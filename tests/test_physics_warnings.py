"""What no real system does stops the run (issue 13), beside the speed bounds
(test_physics_runaway.py): a joint open beyond `max_joint_gap` (m) or out of line beyond
`max_joint_angle_gap` (rad) raises a JointGapError naming the joint, its gap, the bound and the
step whose pose was found open; a step that gains more energy than `max_energy_gain` times
what its forces, motors and drag could supply raises an EnergyJumpError naming the body that
gained most and both energies. 0 turns each off; `sharnir run` stops with one line and status
2; the app pauses once and Resume goes on without that check. The shipped scenes stay far
inside every bound."""
import json
from pathlib import Path

import pytest
from test_app_robustness import _wait
from test_cli import sharnir

from sharnir import Box, Plane, Sphere, World
from sharnir.app.commands import Pause, Reset, Resume
from sharnir.app.physics_thread import PhysicsThread
from sharnir.physics import (
    BoundError,
    EnergyJumpError,
    JointGapError,
    RunawayError,
    SimulationError,
)
from sharnir.physics.energy import LIFT
from sharnir.physics.settings import SETTINGS
from sharnir.scenes import SceneError, load_scene

REPO = Path(__file__).resolve().parent.parent
H = 0.01
G = 9.81


def pulled_ball(joint_type, vel=(0.0, 0.0, 0.0), angvel=(0.0, 0.0, 0.0), **settings):
    """A ball at x = 0.5 m held to the fixed world by `pin` (anchor at its centre) and to a
    kinematic hand at the origin by `grip` (anchor at the hand's centre), the hand moving at
    vel and turning at angvel: no solve can keep both joints closed, their gaps add up to
    the hand's motion. No gravity."""
    world = World(dt=H, gravity=(0.0, 0.0, 0.0), **settings)
    world.add_body("hand", Sphere(0.05), kind="kinematic", vel=vel, angvel=angvel)
    world.add_body("ball", Sphere(0.1), mass=1.0, pos=(0.5, 0.0, 0.0))
    world.add_joint("grip", joint_type, "hand", "ball", anchor=(0.0, 0.0, 0.0))
    world.add_joint("pin", joint_type, "world", "ball", anchor=(0.5, 0.0, 0.0))
    return world


def test_a_joint_pulled_open_stops_the_run_naming_the_joint_and_its_gap():
    # the hand moves 1.5 m/s * 0.01 s = 0.015 m a step: after step k the two ball joints are
    # open by 0.015 k m together, so one by at least half that: beyond 0.1 m no earlier than
    # after step 7 (0.105 m) and no later than after step 14 (0.21 m); the next step finds it
    world = pulled_ball("spherical", vel=(1.5, 0.0, 0.0))
    with pytest.raises(JointGapError) as info:
        world.run(100)
    e = info.value
    assert 7 <= e.step <= 14 and e.time == pytest.approx(e.step * H)
    assert e.joint in ("grip", "pin") and (e.quantity, e.setting) == ("gap", "max_joint_gap")
    assert 0.1 < e.value <= 0.015 * e.step + 1e-12 and e.bound == 0.1
    assert world.time == pytest.approx((e.step + 1) * H)     # stopped after the next step
    message = str(e)
    assert "\n" not in message
    for words in (f"joint {e.joint!r}", f"after step {e.step} ", "max_joint_gap = 0.1 m",
                  f"{e.value:.3g} m"):
        assert words in message
    assert isinstance(e, BoundError) and isinstance(e, SimulationError)
    assert not isinstance(e, RunawayError) and e.switch_off == ("max_joint_gap",)


def test_a_joint_turned_out_of_line_stops_at_max_joint_angle_gap():
    # the hand turns 1.5 rad/s about z: 0.015 k rad after step k, shared by the two welds'
    # orientation locks (rotations about one axis add), so one is beyond 0.5 rad no earlier
    # than after step 34 (0.51 rad) and no later than after step 67 (1.005 rad)
    world = pulled_ball("fixed", angvel=(0.0, 0.0, 1.5), max_joint_gap=0.0)
    with pytest.raises(JointGapError) as info:
        world.run(200)
    e = info.value
    assert 34 <= e.step <= 67
    assert (e.quantity, e.setting) == ("angular gap", "max_joint_angle_gap")
    assert 0.5 < e.value <= 0.015 * e.step + 1e-9
    assert "out of line by" in str(e) and "rad" in str(e)


def test_the_gap_bounds_are_settings_and_zero_turns_them_off():
    world = pulled_ball("spherical", vel=(1.5, 0.0, 0.0), max_joint_gap=0.0)
    world.run(20)                       # 0.3 m of pull, unflagged
    world.configure(max_joint_gap=1.0)
    world.run(20)                       # 0.6 m < 1 m
    with pytest.raises(ValueError, match=r"max_joint_angle_gap must be in \[0, 10\] rad"):
        world.configure(max_joint_angle_gap=11.0)
    assert (SETTINGS["max_joint_gap"].default, SETTINGS["max_joint_angle_gap"].default,
            SETTINGS["max_energy_gain"].default) == (0.1, 0.5, 10.0)


def sunk_box(depth, **settings):
    """A 1 kg box of side 0.2 m created with its bottom `depth` below a floor."""
    world = World(dt=H, **settings)
    world.add_body("ground", Plane(), kind="static")
    world.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.0, 0.0, 0.1 - depth))
    return world


def test_a_box_created_deep_in_the_floor_stops_at_its_first_step_as_an_energy_jump():
    # nothing supplies energy: no force (gravity is inside the energy), no motor, no drag,
    # at rest: the supply is the position pass's allowance m g LIFT = 9.81 * 0.002 J; pushed
    # out by the position pass the box gains m g times its lift, at most m g 0.3 m (plus
    # the kinetic energy of one step's fall, m (g h)^2 / 2)
    world = sunk_box(0.3)
    with pytest.raises(EnergyJumpError) as info:
        world.run(10)
    e = info.value
    assert (e.body, e.step, e.setting, e.bound) == ("box", 1, "max_energy_gain", 10.0)
    assert e.supply == pytest.approx(G * LIFT) and LIFT == 0.002
    assert 10.0 * e.supply < e.value <= G * 0.3 + 0.5 * (G * H) ** 2
    message = str(e)
    assert "\n" not in message
    for words in ("body 'box'", "step 1 ", "t = 0.01 s", f"{e.value:.3g} J",
                  f"{e.supply:.3g} J", "max_energy_gain = 10"):
        assert words in message
    assert e.switch_off == ("max_energy_gain",)


def test_a_box_created_a_millimetre_into_the_floor_is_pushed_out_unflagged():
    # the lift, at most 1 mm, is within the allowance of 2 mm
    world = sunk_box(0.001)
    world.run(100)
    assert world.body_pos[2, 2] == pytest.approx(0.1, abs=1e-3)


def test_the_energy_bound_is_a_setting_and_zero_turns_it_off():
    world = sunk_box(0.3, max_energy_gain=0.0)
    world.run(100)
    assert world.body_pos[2, 2] == pytest.approx(0.1, abs=1e-3)    # out, and resting
    with pytest.raises(ValueError, match="max_energy_gain must be in"):
        world.configure(max_energy_gain=-1.0)


def test_a_force_supplies_the_energy_it_gives():
    # 100 N on a free 1 kg ball for 100 steps: it gains (F h k)^2 / (2 m) = 5000 J, all of
    # it the force's work; the energy check stays quiet, the speed check too (100 m/s)
    world = World(dt=H, gravity=(0.0, 0.0, 0.0))
    world.add_body("ball", Sphere(0.1), mass=1.0)
    world.set_body_force("ball", force=(100.0, 0.0, 0.0))
    world.run(100)
    assert world.body_vel[1, 0] == pytest.approx(100.0)


def test_a_scene_sets_the_new_bounds_in_its_world_table(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[world]\nmax_joint_gap = 0.02\nmax_joint_angle_gap = 0.1\n"
                    "max_energy_gain = 3.0\n")
    world = load_scene(path)
    assert (world.settings["max_joint_gap"], world.settings["max_joint_angle_gap"],
            world.settings["max_energy_gain"]) == (0.02, 0.1, 3.0)
    path.write_text("[world]\nmax_energy_gain = -1.0\n")
    with pytest.raises(SceneError, match="max_energy_gain"):
        load_scene(path)


SHIPPED = [("scenes/biped.toml", 2.0), ("scenes/door_push.toml", 3.0),
           ("scenes/joints.toml", 2.0), ("scenes/granular_pile.toml", 2.0),
           ("scenes/chain.toml", 2.0), ("scenes/door.toml", 2.0), ("scenes/pyramid.toml", 2.0),
           ("tests/fixtures/mjcf/humanoid.xml", 0.5)]


@pytest.mark.parametrize("scene, seconds", SHIPPED)
def test_the_shipped_scenes_stay_five_times_inside_the_bounds(scene, seconds):
    # measured at their own dt: joint gaps below 1e-15 m and 0.02 rad (the biped, the
    # humanoid), no step gaining more than 0.48 times its supply (door_push)
    world = load_scene(REPO / scene)
    world.configure(max_joint_gap=0.02, max_joint_angle_gap=0.1, max_energy_gain=2.0)
    world.run(round(seconds / world.dt))


SUNK = """\
[world]
dt = 0.01
[[bodies]]
name = "ground"
kind = "static"
shape = { type = "plane" }
[[bodies]]
name = "box"
shape = { type = "box", half_extents = [0.1, 0.1, 0.1] }
mass = 1.0
pos = [0.0, 0.0, -0.2]
"""


def test_sharnir_run_stops_an_energy_jump_with_one_line_and_status_2(tmp_path):
    (tmp_path / "sunk.toml").write_text(SUNK)
    done = sharnir("run", "sunk.toml", "--json", "--duration", "0.1", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("sharnir: error: the world gained")
    assert "step 1 " in last and "body 'box'" in last and "max_energy_gain" in last
    off = sharnir("run", "sunk.toml", "--json", "--duration", "0.1",
                  "--set", "world.max_energy_gain=0", cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout.strip().splitlines()[-1])["steps"] == 10


def test_an_energy_jump_pauses_the_app_once_and_resume_goes_on_without_that_check(tmp_path):
    path = tmp_path / "sunk.toml"
    path.write_text(SUNK)
    sim = PhysicsThread(str(path))
    sim.start()
    try:
        snap = _wait(sim, lambda s: s.error is not None)
        assert snap.paused and "the world gained" in snap.error
        assert "resume to go on without this check" in snap.error
        sim.send(Resume())
        gone_on = _wait(sim, lambda s: s.step > snap.step + 20 and not s.paused)
        assert gone_on.error_count == snap.error_count
        assert gone_on.settings["max_energy_gain"] == 0.0
        assert gone_on.settings["max_speed"] == SETTINGS["max_speed"].default
        sim.send(Reset())
        fresh = _wait(sim, lambda s: s.generation > gone_on.generation)
        assert fresh.settings["max_energy_gain"] == SETTINGS["max_energy_gain"].default
    finally:
        sim.send(Pause())
        assert sim.stop()
