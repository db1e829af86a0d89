"""A step that goes non-finite is named by where it started (issue 13): the body and the stage
of the step. World keeps a copy of what the steps carry over at the start of every kernel call
(World._carried) and, when the state goes non-finite, replays the call from it with every stage
checked (Settings.trace, solver.trace_bodies). That replay must repeat the run bit for bit, or
it would diagnose another run."""
import numpy as np
import pytest

from sharnir import Box, Sphere, World
from sharnir.physics import SimulationError
from sharnir.physics.model import STAT_RECORDED
from sharnir.physics.world import REPLAY_STEPS, DCMotor
from sharnir.scenes import load_scene

H = 0.01


def test_an_infinite_velocity_from_a_force_is_named_in_the_forces_stage():
    """v += h F / m with F = 1e308 N on 1 mg: F / m = 1e314 overflows to inf in the stage that
    applies the forces; the pose and velocity were finite before it (nothing else acts)."""
    world = World(dt=H, gravity=(0.0, 0.0, 0.0))
    world.add_body("dust", Sphere(1e-3), mass=1e-6)
    world.add_body("ball", Sphere(0.1), mass=1.0, pos=(1.0, 0.0, 0.0))
    world.run(5)
    world.set_body_force("dust", force=(1e308, 0.0, 0.0))
    with pytest.raises(SimulationError) as info:
        world.run(10)
    message = str(info.value)
    assert "in applying the forces (body 'dust')" in message and "\n" not in message
    assert "t = 0.06 s" in message


def test_a_load_that_throws_a_foot_beyond_the_speed_bound_is_where_it_began():
    """bench/fuzz.py, seed 4, case 0: a load of ~1e308 N on the biped's right foot. Applying
    the forces gives the foot v = h F / m ~ 1e305 m/s, finite but beyond max_speed (1e4 m/s);
    the joints carry that into the other bodies, and the left foot's pose is the first value
    to overflow, later in the step. The error names where it began: the forces stage, the
    right foot, the bound it passed."""
    world = load_scene("biped")
    world.set_hook(None)
    world.run(20)
    world.set_body_force("right_foot", force=(1e308, 1e308 / 3, -1e308))
    with pytest.raises(SimulationError) as info:
        world.run(100)
    message = str(info.value)
    assert ("it began in applying the forces, with body 'right_foot' beyond max_speed = "
            "10000 m/s" in message), message
    assert "\n" not in message and len(message) < 300


def test_a_torque_that_spins_a_box_beyond_the_bound_is_where_it_began():
    """L += h tau with tau = (1e308, 1e308, 0) N m on a 1 kg cube of side 0.2 m
    (I = m (0.2^2 + 0.2^2) / 12 = 6.7e-3 kg m^2): L = 1e306 N m s, w = L / I = 1.5e308 rad/s,
    finite but beyond max_angular_speed (1e5 rad/s), in the forces stage; the rotation by it
    is what overflows, later in the step."""
    world = World(dt=H, gravity=(0.0, 0.0, 0.0))
    world.add_body("top", Box((0.1, 0.1, 0.1)), mass=1.0)
    world.add_body("ball", Sphere(0.1), mass=1.0, pos=(1.0, 0.0, 0.0))
    world.set_body_force("top", torque=(1e308, 1e308, 0.0))
    with pytest.raises(SimulationError) as info:
        world.run(400)
    assert ("t = 0.01 s; it began in applying the forces, with body 'top' beyond "
            "max_angular_speed = 100000 rad/s" in str(info.value))


def test_a_blow_up_after_many_calls_worth_of_steps_is_replayed_from_its_own_call():
    """A constant force F on 1 kg from rest at dt h: v_k = k h F, x_k = h^2 F k (k + 1) / 2.
    With h F = 1.797e308 / (REPLAY_STEPS + 10), v_k passes the largest double (1.7977e308) at
    k = REPLAY_STEPS + 11, in the second kernel call, while x_k = h (k + 1) / 2 v_k stays
    finite at dt 1 ms (at dt 10 ms the position would overflow first, at k = 455): the second
    call's replay finds the forces stage."""
    h = 1e-3
    world = World(dt=h, gravity=(0.0, 0.0, 0.0), max_speed=0.0, max_energy_gain=0.0)
    world.add_body("dust", Sphere(1e-3), mass=1.0)
    world.set_body_force("dust", force=(1.797e308 / (h * (REPLAY_STEPS + 10)), 0.0, 0.0))
    with pytest.raises(SimulationError) as info:
        world.run(3 * REPLAY_STEPS)
    message = str(info.value)
    assert "in applying the forces (body 'dust')" in message
    assert f"t = {(REPLAY_STEPS + 11) * h:g} s" in message


def test_a_hook_that_sets_an_overflowing_force_is_named_in_the_forces_stage():
    """A hook steps one step a call: those steps run traced as they go (no replay)."""
    world = World(dt=H, gravity=(0.0, 0.0, 0.0))
    world.add_body("dust", Sphere(1e-3), mass=1e-6)

    def hook(w):
        if w.time > 0.025:
            w.set_body_force("dust", force=(1e308, 0.0, 0.0))

    world.set_hook(hook)
    with pytest.raises(SimulationError) as info:
        world.run(50)
    assert "at t = 0.04 s in applying the forces (body 'dust')" in str(info.value)


def hinged(world):
    """Two arms on hinges, the second coupled to the first (its warm start is carried in the
    work arrays), the first driven by a servo."""
    world.add_body("lead_arm", mass=1.0, inertia=(0.01, 0.05, 0.05), pos=(0.25, 0.0, 0.0))
    world.add_body("follow_arm", mass=2.0, inertia=(0.02, 0.1, 0.1), pos=(1.25, 0.0, 0.0))
    world.add_joint("lead", "revolute", "world", "lead_arm", axis=(0.0, 0.0, 1.0))
    world.add_joint("follow", "revolute", "world", "follow_arm", anchor=(1.0, 0.0, 0.0),
                    axis=(0.0, 0.0, 1.0), friction=0.5)
    world.add_motor("lead", DCMotor(resistance=1.0, torque_constant=0.5, voltage_limit=48.0))
    world.set_controller("lead", "position", kp=200.0, kd=5.0, sine=(0.0, 0.3, 1.0))
    world.add_coupling("follow", "lead", multiplier=2.0, offset=0.1)
    return world


@pytest.mark.parametrize("name", ["door", "door_push", "biped", "joints", "spinning_top", "pyramid",
                                  "ellipsoid_tube", "coupled"])
def test_a_call_replayed_from_its_saved_copy_repeats_bit_for_bit(name):
    """Run, save what the steps carry over, run on; restore, run again: every state array is
    the same to the bit (contacts, warm starts, motors, couplings included)."""
    if name == "coupled":
        world = hinged(World(dt=0.005))
    else:
        world = load_scene(name)
        world.set_hook(None)
    world.run(30)
    model, state, work = world._ready()
    saved = world._carried(state, work)
    world.run(40)
    first = [a.copy() for a in state]
    world._restore(state, work, saved)
    world.run(40)
    for kept, again, field in zip(first, state, state._fields):
        if field == "solver_stats":
            again, kept = again[STAT_RECORDED:], kept[STAT_RECORDED:]   # (the solve's seconds
                                                                        # differ)
        assert np.array_equal(kept, again), field
