"""Viscous joint damping (physics/damper.py) against what it is on paper: an implicit torque
-b w' at the end of each step, so w_{n+1} = w_n / (1 + h b / I) for a body turning freely
about a damped hinge (-> w0 exp(-b t / I)), the terminal speed F / b of a damped slider pulled
by F, and a pair of equal and opposite impulses that keeps a free system's momentum."""
import math

import numpy as np
import pytest

from sharnir.physics import Box, World
from sharnir.scenes import SceneError, build_world
from sharnir.scenes.schema import SceneSpec

H = 1.0 / 240.0
I_Z = 0.1   # kg m^2 about the hinge


def momenta(world):
    """Linear momentum and angular momentum about the origin: m v for each body, x x m v plus
    its own angular momentum about its centre."""
    p = world.body_mass[1:, None] * world.body_vel[1:]   # (body 0 is the fixed world)
    return p.sum(0), (np.cross(world.body_pos[1:], p) + world.body_angmom[1:]).sum(0)


def kinetic_energy(world):
    v2 = (world.body_vel[1:] ** 2).sum(1)
    spin = (world.body_angvel[1:] * world.body_angmom[1:]).sum(1)
    return float(np.sum(0.5 * world.body_mass[1:] * v2 + 0.5 * spin))


def spinning_wheel(damping, w0=5.0):
    world = World(dt=H, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-14)
    world.add_body("wheel", Box((0.1, 0.1, 0.1)), mass=1.0, inertia=(0.2, 0.3, I_Z),
                   angvel=(0.0, 0.0, w0))
    world.add_joint("axle", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0),
                    damping=damping)
    return world


def test_a_damped_hinge_slows_by_the_implicit_factor_each_step():
    b, w0, n = 0.05, 5.0, 480
    world = spinning_wheel(b, w0)
    rec = world.run(n)
    steps = np.arange(1, n + 1)
    expected = w0 / (1.0 + H * b / I_Z) ** steps
    assert np.max(np.abs(rec.joint[:, 0, 1] / expected - 1.0)) < 1e-9
    # and the discrete law is the exponential decay within h b / I per time constant
    assert rec.joint[-1, 0, 1] == pytest.approx(w0 * math.exp(-b * n * H / I_Z), rel=2e-3)


def test_a_stiff_damper_at_a_large_step_stays_stable_and_stops_the_joint():
    # b h / I = 4000: an explicit damper would reverse and blow up; the implicit one stops
    world = spinning_wheel(damping=1e4)
    world.configure(dt=0.04)
    rec = world.run(50)
    assert np.all(np.isfinite(rec.joint))
    assert np.all(np.abs(rec.joint[:, 0, 1]) <= 5.0 / (1.0 + 0.04 * 1e4 / I_Z) * (1 + 1e-9))


def test_a_damped_slider_pulled_by_a_force_reaches_f_over_b():
    m, b, force = 2.0, 1.5, 3.0
    world = World(dt=H, gravity=(0.0, 0.0, -9.81), iterations=50, tolerance=1e-14)
    world.add_body("cart", Box((0.1, 0.1, 0.1)), mass=m)
    world.add_joint("rail", "prismatic", "world", "cart", axis=(1.0, 0.0, 0.0), damping=b)
    world.add_load("cart", force=(force, 0.0, 0.0))
    rec = world.run(round(20.0 / H))
    # time constant m / b = 1.33 s: after 15 of them the speed is F / b to e^-15
    assert rec.joint[-1, 0, 1] == pytest.approx(force / b, rel=1e-5)
    # on the way: v_n = (F / b) (1 - (1 + h b / m)^-n) exactly (semi-implicit Euler)
    n = round(1.0 / H)
    assert rec.joint[n - 1, 0, 1] == pytest.approx(force / b * (1 - (1 + H * b / m) ** -n),
                                                   rel=1e-9)


def test_a_damped_ball_joint_keeps_a_free_pairs_momentum_and_only_takes_energy():
    world = World(dt=H, gravity=(0.0, 0.0, 0.0), iterations=100, tolerance=1e-14)
    world.add_body("a", Box((0.2, 0.1, 0.1)), mass=1.0, pos=(-0.2, 0.0, 0.0),
                   vel=(0.0, 0.3, 0.1), angvel=(0.5, 2.0, -1.0))
    world.add_body("b", Box((0.2, 0.1, 0.1)), mass=2.0, pos=(0.2, 0.0, 0.0),
                   vel=(0.1, -0.2, 0.0), angvel=(-1.0, 0.0, 3.0))
    world.add_joint("ball", "spherical", "a", "b", anchor=(0.0, 0.0, 0.0), damping=0.02)
    world.step(1)
    p0, l0 = momenta(world)
    energies = [kinetic_energy(world)]
    for _ in range(60):
        world.step(40)
        energies.append(kinetic_energy(world))
    p1, l1 = momenta(world)
    assert np.linalg.norm(p1 - p0) <= 1e-9 * np.linalg.norm(p0)
    assert np.linalg.norm(l1 - l0) <= 1e-9 * np.linalg.norm(l0)
    # the damper only takes energy; what a free tumbling pair's integration itself does to
    # it is far smaller (test_physics_floating_momentum: +0.36 % over 600 s)
    assert np.all(np.diff(energies) <= 1e-4 * energies[0])
    # the relative spin is damped out: the pair ends turning as one rigid body
    w = world.body_angvel
    assert np.linalg.norm(w[1] - w[2]) < 1e-2 * np.linalg.norm((1.5, 2.0, -4.0))
    assert energies[-1] < 0.9 * energies[0]


def test_damping_is_set_live_and_bad_values_are_refused_by_name():
    world = spinning_wheel(0.0)
    world.step(10)
    assert world.joint_vel[0] == pytest.approx(5.0, rel=1e-12)
    world.set_damping("axle", 0.05)
    before = world.joint_vel[0]
    world.step(1)
    assert world.joint_vel[0] == pytest.approx(before / (1.0 + H * 0.05 / I_Z), rel=1e-9)
    for bad in (-1.0, math.nan, math.inf, 1e300):
        with pytest.raises(ValueError, match="axle.*damping"):
            world.set_damping("axle", bad)


def scene(joint):
    return SceneSpec.model_validate({
        "bodies": [{"name": "wheel", "shape": {"type": "box", "half_extents": [0.1] * 3},
                    "mass": 1.0}],
        "joints": [{"name": "axle", "body_a": "world", "body_b": "wheel", **joint}]})


def test_a_scene_file_gives_a_joint_its_damping():
    world = build_world(scene({"type": "revolute", "damping": 0.25}))
    assert list(world.joint_damping) == [0.25]


@pytest.mark.parametrize("joint, field", [
    ({"type": "fixed", "damping": 1.0}, "damping"),
    ({"type": "revolute", "damping": -1.0}, "damping"),
])
def test_a_scene_with_bad_damping_is_refused_naming_the_field(joint, field):
    with pytest.raises((SceneError, ValueError), match=field):
        build_world(scene(joint))
