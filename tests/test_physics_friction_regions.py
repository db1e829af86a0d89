"""Friction that depends on where bodies touch (paper 001; specs.FrictionRegion): a body's
regions (a box, a half-space, a hull's face) give the contact points there a Coulomb
coefficient of their own, and a manifold's bound is the mean of its points' coefficients
weighted by their normal loads.

The incline (worked by hand). A block of half length a (down the slope, x) and half height c
rests on an incline of angle theta; its uphill half has mu_u, its downhill half mu_d (the
incline's own mu is 0, so each point takes the block's). Moments about the centre of mass:
the friction F acts uphill in the contact plane, c below it, so the downhill edge carries
more of the load, N_d - N_u = (c / a) F. Coulomb friction at every point bounds F by
mu_u N_u + mu_d N_d = mean N + (delta / 2) (N_d - N_u) (mean = (mu_u + mu_d) / 2,
delta = mu_d - mu_u). At the bound, F = mu N with

    mu = mean / (1 - (delta / 2) (c / a)),

so the block holds for tan theta <= mu and slides down at g (sin theta - mu cos theta)
beyond it. The plain mean of the points' coefficients (mean) would let it slide earlier.
"""
import math

import numpy as np
import pytest

from sharnir.physics import Box, FrictionRegion, Material, World
from sharnir.physics.shape import Hull
from sharnir.physics.transforms import matrix_quat, rotation
from sharnir.scenes import SceneError, build_world, read_scene

G = 9.81
A, W, C = 0.2, 0.15, 0.05          # the block's half length (down the slope), width, height
MU_UP, MU_DOWN = 0.2, 0.6
MEAN, DELTA = (MU_UP + MU_DOWN) / 2, MU_DOWN - MU_UP
MU = MEAN / (1.0 - 0.5 * DELTA * C / A)     # 0.42105...
DT = 1e-3


def incline(tan_theta, regions=None, material=None):
    """The block on the incline, at rest; x down the slope is the rotation about y by theta
    of the world x (which turns x towards -z)."""
    theta = math.atan(tan_theta)
    R = rotation((0.0, 1.0, 0.0), theta)
    q = matrix_quat(R)
    down, normal = R[:, 0], R[:, 2]
    world = World(dt=DT, gravity=(0.0, 0.0, -G), iterations=200, tolerance=1e-12)
    world.add_body("incline", Box((3.0, 1.0, 0.1)), kind="static", pos=-0.1 * normal, quat=q,
                   material=Material(friction=0.0))
    if material is None:
        material = Material(friction=MU_UP, regions=(
            FrictionRegion(MU_DOWN, half_space=((1.0, 0.0, 0.0), 0.0)),) if regions is None
            else regions)
    world.add_body("block", Box((A, W, C)), mass=2.0, pos=C * normal, quat=q,
                   material=material)
    return world, down


def velocity_along(world, down, steps):
    world.run(steps)
    i = world.body_names.index("block")
    return float(np.asarray(world.body_vel)[i] @ down)


def test_a_block_below_the_load_weighted_bound_holds():
    # tan theta = 0.41: above the plain mean of the halves' coefficients (0.4), below the
    # bound of the loads the incline puts on them (0.421)
    world, down = incline(0.41)
    assert abs(velocity_along(world, down, 1000)) < 1e-6


def test_a_block_beyond_the_bound_slides_at_the_closed_form_acceleration():
    tan_theta = 0.5
    theta = math.atan(tan_theta)
    world, down = incline(tan_theta)
    v1 = velocity_along(world, down, 500)
    v2 = velocity_along(world, down, 500)
    accel = (v2 - v1) / (500 * DT)
    want = G * (math.sin(theta) - MU * math.cos(theta))
    assert accel == pytest.approx(want, rel=0.01)
    # the plain mean of the halves would accelerate it 27 % faster
    assert abs(accel - G * (math.sin(theta) - MEAN * math.cos(theta))) > 0.1 * want


def test_a_box_region_covers_its_points_and_the_rest_keep_the_material():
    # the downhill half written as a box instead of a half-space: the same bound
    box = FrictionRegion(MU_DOWN, box=((A / 2, 0.0, 0.0), (A / 2 + 1e-6, W + 1e-6, C + 1e-6)))
    world, down = incline(0.41, regions=(box,))
    assert abs(velocity_along(world, down, 1000)) < 1e-6
    # a box that holds none of the block's points: the block slides on mu_up alone
    away = FrictionRegion(MU_DOWN, box=((5.0, 0.0, 0.0), (0.1, 0.1, 0.1)))
    world, down = incline(0.41, regions=(away,))
    theta = math.atan(0.41)
    v = velocity_along(world, down, 500)
    assert v / (500 * DT) == pytest.approx(G * (math.sin(theta) - MU_UP * math.cos(theta)),
                                           rel=0.01)


def test_a_hull_face_region_is_the_friction_of_that_face_only():
    """A cube as a hull, mu = 1 but 0 on one face: pushed along the ground by a force below
    mu m g it holds on any other face and slides at F / m on that one, wherever it is turned."""
    cube = Hull([(x, y, z) for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    k = int(np.argmin(cube.face_normals[:, 2]))          # a triangle of the face z = -0.1
    slick = Material(friction=1.0, regions=(FrictionRegion(0.0, face=k),))
    for upside_down in (False, True):
        world = World(dt=DT, gravity=(0.0, 0.0, -G), iterations=100)
        world.add_body("ground", Box((5.0, 5.0, 0.1)), kind="static", pos=(0.0, 0.0, -0.1),
                       material=Material(friction=0.0))
        q = (0.0, 1.0, 0.0, 0.0) if upside_down else (1.0, 0.0, 0.0, 0.0)
        world.add_body("cube", cube, mass=1.0, pos=(0.0, 0.0, 0.1), quat=q, material=slick)
        world.add_load("cube", force=(2.0, 0.0, 0.0))     # 2 N < mu m g = 9.81 N
        world.run(300)
        vx = float(np.asarray(world.body_vel)[world.body_names.index("cube"), 0])
        if upside_down:
            assert abs(vx) < 1e-6                          # on a face of mu = 1: it holds
        else:
            assert vx == pytest.approx(2.0 * 300 * DT, rel=1e-3)   # on the slick face


def test_regions_are_checked_where_they_are_written():
    with pytest.raises(ValueError, match="exactly one of box, half_space, face"):
        FrictionRegion(0.3, box=((0, 0, 0), (1, 1, 1)), face=2)
    with pytest.raises(ValueError, match="friction must be a finite number >= 0"):
        FrictionRegion(-1.0, face=0)
    with pytest.raises(ValueError, match="non|finite nonzero normal"):
        FrictionRegion(0.3, half_space=((0.0, 0.0, 0.0), 1.0))
    world = World()
    with pytest.raises(ValueError, match=r"body 'b': friction region 0: face 3 is not a face "
                                         r"of its shape \(only a hull or mesh has faces\)"):
        world.add_body("b", Box((0.1, 0.1, 0.1)), mass=1.0,
                       material=Material(regions=(FrictionRegion(0.3, face=3),)))


SCENE = """
[world]
dt = 0.001
[[bodies]]
name = "ground"
kind = "static"
shape = {{ type = "plane" }}
friction = 0.0
[[bodies]]
name = "block"
shape = {{ type = "box", half_extents = [0.2, 0.15, 0.05] }}
mass = 2.0
pos = [0.0, 0.0, 0.05]
friction = 0.2
friction_regions = [{regions}]
"""


def test_a_scene_file_writes_regions_and_a_bad_one_is_one_line(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(SCENE.format(regions='{ friction = 0.6, half_space = { normal = [1, 0, 0] '
                                         '} }, { friction = 0.9, box = { center = [0, 0, 0], '
                                         'half_extents = [0.01, 0.01, 0.01] } }'))
    world = build_world(read_scene(path))
    regions = world._bodies[world.body_names.index("block")].material.regions
    assert [r.friction for r in regions] == [0.6, 0.9]
    assert regions[0].half_space == ((1.0, 0.0, 0.0), 0.0)
    path.write_text(SCENE.format(regions="{ friction = 0.6, face = 1, half_space = { normal = "
                                         "[1, 0, 0] } }"))
    with pytest.raises(SceneError) as err:
        read_scene(path)
    assert "friction_regions" in str(err.value) and "exactly one of" in str(err.value)
    assert "\n" not in str(err.value).strip()
