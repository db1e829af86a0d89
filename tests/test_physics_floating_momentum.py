"""A free-floating jointed system (a walking robot's base) keeps its momentum: with no external
force or torque, linear and angular momentum are constants of the motion (Newton's third law for
every joint impulse), whatever the joints do inside the system."""
import numpy as np
import pytest

from sharnir.physics import Box, Capsule, World

DT = 1.0 / 240.0


def momenta(world):
    """Linear momentum and angular momentum about the origin, from the state the engine
    exposes: m v for each body, x x m v + its own angular momentum about its centre."""
    m = world.body_mass[:, None]
    p = m * world.body_vel
    return p.sum(0), (np.cross(world.body_pos, p) + world.body_angmom).sum(0)


def two_rods():
    w = World(dt=DT, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-12)
    w.add_body("a", Box((0.5, 0.05, 0.05)), mass=2.0, pos=(-0.5, 0.0, 0.0))
    w.add_body("b", Box((0.5, 0.04, 0.06)), mass=1.0, pos=(0.5, 0.0, 0.0))
    w.add_joint("hinge", "revolute", "a", "b", anchor=(0.0, 0.0, 0.0), axis=(0.0, 0.6, 0.8))
    w.set_body_velocity("a", vel=(0.3, 0.1, -0.2), angvel=(0.2, -0.3, 1.0))
    w.set_body_velocity("b", vel=(-0.1, 0.4, 0.1), angvel=(0.5, 1.0, -2.0))
    return w


def tumbling_chain():
    """Four capsules on ball, hinge and slider joints, thrown spinning."""
    w = World(dt=DT, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-12)
    for k in range(4):
        w.add_body(f"link{k}", Capsule(0.05, 0.2), mass=1.0 + 0.5 * k,
                   pos=(0.0, 0.0, 0.5 * k), mask=0)
    w.add_joint("ball", "spherical", "link0", "link1", anchor=(0.0, 0.0, 0.25))
    w.add_joint("hinge", "revolute", "link1", "link2", anchor=(0.0, 0.0, 0.75),
                axis=(1.0, 0.0, 0.0))
    w.add_joint("slider", "prismatic", "link2", "link3", anchor=(0.0, 0.0, 1.25),
                axis=(0.0, 0.0, 1.0))
    rng = np.random.default_rng(3)
    for k in range(4):
        w.set_body_velocity(f"link{k}", vel=rng.normal(0.0, 0.3, 3),
                            angvel=rng.normal(0.0, 1.5, 3))
    return w


@pytest.mark.parametrize("build", [two_rods, tumbling_chain])
def test_a_floating_jointed_system_keeps_its_momentum_for_60_s(build):
    world = build()
    world.step(1)  # the first step makes the velocities agree with the joints (inelastic)
    p0, l0 = momenta(world)
    world.step(round(60.0 / DT))
    p, l = momenta(world)
    assert np.linalg.norm(p - p0) <= 1e-9 * np.linalg.norm(p0)
    assert np.linalg.norm(l - l0) <= 1e-9 * np.linalg.norm(l0)


def test_the_centre_of_mass_moves_in_a_straight_line_at_constant_speed():
    world = two_rods()
    world.step(0)
    m = world.body_mass[:, None]
    c0 = (m * world.body_pos).sum(0) / m.sum()
    v = (m * world.body_vel).sum(0) / m.sum()
    world.step(round(10.0 / DT))
    c = (m * world.body_pos).sum(0) / m.sum()
    assert np.allclose(c, c0 + v * world.time, atol=1e-9)
