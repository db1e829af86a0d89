"""Tunnelling (issue 13): no body crosses a static plane or box at any allowed dt.

At dt 0.05-0.1 grains of the granular pile were pushed into the floor box by the pile above
them until their centre passed its mid-plane, where the shortest way out is the far side;
spinning ellipsoids and boxes shot at a thin plate went through it the same way.  The checks
come from the geometry in the files and the tests: a centre below a floor's top face, inside
its footprint, has entered the floor.
"""
import math

import numpy as np
import pytest

from sharnir.physics import Box, Ellipsoid, Plane, Sphere, World
from sharnir.scenes import SCENE_DIR, load_scene, read_scene


def _floor(spec):
    """The granular pile's floor box: (top face z, footprint half sizes x, y)."""
    floor = next(b for b in spec.bodies if b.name == "floor")
    half = floor.shape.half_extents
    assert floor.kind == "static" and tuple(floor.quat) == (1.0, 0.0, 0.0, 0.0)
    return floor.pos[2] + half[2], half[0], half[1]


@pytest.mark.parametrize("dt", [0.05, 0.1])
def test_no_grain_of_the_pile_enters_the_floor_at_a_large_step(dt):
    path = SCENE_DIR / "granular_pile.toml"
    spec = read_scene(path)
    top, hx, hy = _floor(spec)
    world = load_scene(path, [f"world.dt={dt}"])
    grains = [i for i, name in enumerate(world.body_names)
              if name[0] == "g" and name[1:].isdigit()]
    assert len(grains) == 324
    rec = world.run(int(round(spec.duration / dt)), record_bodies=True)
    p = rec.body_pos[:, grains]                     # (steps, grains, 3)
    over = (np.abs(p[..., 0]) < hx) & (np.abs(p[..., 1]) < hy)
    sunk = over & (p[..., 2] < top)
    assert not sunk.any(), (
        f"{np.unique(np.nonzero(sunk)[1]).size} grains entered the floor; lowest centre "
        f"z = {p[..., 2][over].min():.4f} m, floor top {top} m")
    assert np.isfinite(p).all()


SHOTS = {
    "sphere": Sphere(0.05),
    "small sphere": Sphere(0.005),
    "spinning ellipsoid": Ellipsoid((0.05, 0.02, 0.01)),
    "spinning box": Box((0.02, 0.01, 0.005)),
}


@pytest.mark.parametrize("shape", sorted(SHOTS))
@pytest.mark.parametrize("start", [1.3731, 0.4])
def test_a_body_at_100_m_s_does_not_pass_a_1_cm_static_box(shape, start):
    """dt 0.01: the body covers 1 m per step, a hundred times the plate's thickness.  Over
    the plate (40 m wide: the impact throws a spinning body sideways at up to 8 m/s) its
    centre must stay above the plate's top face, z = 0.005, for the whole second."""
    half = 20.0
    # (with the energy check on: the spinning shots once gained energy from their rotation,
    # turned by h w; solver.free_motion)
    world = World(dt=0.01, iterations=20)
    world.add_body("plate", Box((half, half, 0.005)), kind="static")
    world.add_body("shot", SHOTS[shape], density=1000.0, pos=(0.01, 0.02, start),
                   quat=(0.9, 0.3, 0.2, 0.1))
    spin = (0.0, 0.0, 0.0) if shape == "sphere" else (40.0, -30.0, 10.0)
    world.set_body_velocity("shot", vel=(0.0, 0.0, -100.0), angvel=spin)
    rec = world.run(100, record_bodies=True)
    p = rec.body_pos[:, 2]
    over = (np.abs(p[:, 0]) < half) & (np.abs(p[:, 1]) < half)
    assert over.all(), "the body left the plate's footprint: the check would say nothing"
    assert p[:, 2].min() > 0.005, f"the centre reached z = {p[:, 2].min():.4f} m"


def test_a_spinning_ellipsoid_dropped_at_the_largest_dt_stays_above_a_plane():
    """dt 0.1 (the largest allowed), shot down at 50 m/s while spinning: the plane z <= 0
    is never entered by the centre."""
    # (with the energy check on: spinning on the floor at dt 0.1 it once spun up from 60 to
    # 500 rad/s and gained several times its energy a step; solver.free_motion)
    world = World(dt=0.1, iterations=10)
    world.add_body("ground", Plane(), kind="static")
    world.add_body("egg", Ellipsoid((0.1, 0.04, 0.02)), density=1000.0, pos=(0.0, 0.0, 3.0),
                   quat=(math.cos(0.4), math.sin(0.4), 0.0, 0.0))
    world.set_body_velocity("egg", vel=(1.0, 0.0, -50.0), angvel=(0.0, 60.0, 5.0))
    rec = world.run(50, record_bodies=True)
    assert rec.body_pos[:, 2, 2].min() > 0.0


@pytest.mark.parametrize("mask", [0, 2])
def test_a_static_box_that_touches_nothing_stops_nothing(mask):
    """A static plate whose collision bits do not match the ball's (mask 0, or group 2
    against the ball's mask 1) is not in its way: the ball falls through as in free fall,
    z(t) = z0 - g t^2 / 2 in the step's semi-implicit Euler, z_n = z0 - g h^2 n (n + 1) / 2."""
    h, z0, g = 0.01, 1.0, 9.81
    world = World(dt=h, iterations=20)
    world.add_body("plate", Box((1.0, 1.0, 0.005)), kind="static", group=2 if mask else 1,
                   mask=mask)
    world.add_body("ball", Sphere(0.05), density=1000.0, pos=(0.0, 0.0, z0), mask=1)
    rec = world.run(100, record_bodies=True)
    n = np.arange(1, 101)
    assert np.allclose(rec.body_pos[:, 2, 2], z0 - g * h * h * n * (n + 1) / 2, atol=1e-9)
