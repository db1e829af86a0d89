"""Convex hulls and compound bodies: mass properties against closed forms, resting contact,
scene files, picking, drawing and a screenshot of scenes/shapes.toml.

Expected values are worked out by hand (sphere 2/5 m r^2, box m (b^2 + c^2) / 3 per half
extents, parallel axes), never read back from the code under test.
"""
import colorsys
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from test_render import read_png, sharnir

from sharnir.app.drag import pick
from sharnir.physics import Box, Capsule, Cylinder, Plane, Sphere
from sharnir.physics.shape import Compound, Hull, matrix_quat, quat_matrix
from sharnir.physics.world import World, quat_to_matrix
from sharnir.render.instances import body_colour, body_instances, hull_mesh, scene_bounds
from sharnir.scenes import SCENE_DIR, SceneError, load_scene

REPO = Path(__file__).resolve().parents[1]
ROCK = REPO / "assets" / "rock.stl"
RHO = 1000.0


def corners(a, b, c):
    return np.array(list(itertools.product((-a, a), (-b, b), (-c, c))), dtype=float)


def quat_about(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def world_vertices(world, body, hull):
    """The hull's vertices in the world, through the reference pose the world reports."""
    pos, quat = world.body_reference_pose(body)
    return hull.vertices @ quat_to_matrix(quat).T + pos


# ---- mass properties ---------------------------------------------------------------------------

def test_two_sphere_dumbbell_has_the_inertia_worked_by_hand():
    r, L = 0.1, 0.4
    dumbbell = Compound([(Sphere(r), (-L, 0.0, 0.0)), (Sphere(r), (L, 0.0, 0.0))])
    m_s = RHO * 4.0 / 3.0 * math.pi * r ** 3
    w = World()
    i = w.add_body("d", dumbbell, density=RHO, pos=(1.0, 2.0, 3.0))
    assert w.body_mass[i] == pytest.approx(2 * m_s, rel=1e-12)
    axial = 2 * 0.4 * m_s * r * r
    side = 2 * (0.4 * m_s * r * r + m_s * L * L)
    np.testing.assert_allclose(w.body_inertia[i], [axial, side, side], rtol=1e-12)
    # symmetric about its reference origin: the body frame is the reference frame
    np.testing.assert_array_equal(w.body_pos[i], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(w.body_quat[i], [1.0, 0.0, 0.0, 0.0])


def test_off_centre_compound_body_starts_at_its_centre_of_mass_and_reports_its_reference():
    r, L = 0.1, 0.4
    c = np.array([0.3, -0.2, 0.1])           # where the dumbbell's middle sits in its frame
    dumbbell = Compound([(Sphere(r), c - (L, 0, 0)), (Sphere(r), c + (L, 0, 0))])
    np.testing.assert_allclose(dumbbell.frame_pos, c, atol=1e-15)
    q = quat_about((0.0, 0.0, 1.0), 0.7)
    pos = np.array([1.0, 0.0, 2.0])
    w = World()
    i = w.add_body("d", dumbbell, density=RHO, pos=pos, quat=q)
    np.testing.assert_allclose(w.body_pos[i], pos + quat_matrix(q) @ c, atol=1e-14)
    ref_pos, ref_quat = w.body_reference_pose("d")
    np.testing.assert_allclose(ref_pos, pos, atol=1e-14)
    np.testing.assert_allclose(ref_quat, q, atol=1e-14)


def test_compound_with_a_given_frame_puts_the_centre_of_mass_there_and_the_parts_stay():
    # a link whose measured centre of mass is off its geometry (URDF <inertial>): the body
    # frame is the given one, the box stays where the reference frame puts it, and the
    # uniform inertia about the frame is the box's own plus the parallel-axis shift
    a, d = 0.1, np.array([0.0, 0.2, 0.0])
    fq = quat_about((0.0, 0.0, 1.0), 0.3)
    link = Compound([(Box((a, a, a)), (0.0, 0.0, 0.0))], frame=(d, fq))
    np.testing.assert_allclose(link.frame_pos, d)
    q = quat_about((1.0, 0.0, 0.0), 0.5)
    pos = np.array([0.0, 0.0, 1.0])
    w = World()
    i = w.add_body("link", link, mass=2.0, inertia=(0.1, 0.2, 0.3), pos=pos, quat=q)
    np.testing.assert_allclose(w.body_pos[i], pos + quat_matrix(q) @ d, atol=1e-14)
    np.testing.assert_allclose(quat_matrix(w.body_quat[i]), quat_matrix(q) @ quat_matrix(fq),
                               atol=1e-14)
    np.testing.assert_allclose(w.body_inertia[i], (0.1, 0.2, 0.3))
    ref_pos, _ = w.body_reference_pose("link")
    np.testing.assert_allclose(ref_pos, pos, atol=1e-14)
    box_inertia = (2 * a) ** 2 / 6                      # per unit mass, about any axis
    shift = quat_matrix(fq).T @ ((d @ d) * np.eye(3) - np.outer(d, d)) @ quat_matrix(fq)
    np.testing.assert_allclose(link.unit_inertia(), box_inertia + np.diag(shift), atol=1e-14)


def test_hull_of_a_boxs_corners_has_the_boxs_mass_properties():
    half = (0.1, 0.2, 0.3)
    hull, box = Hull(corners(*half)), Box(half)
    assert len(hull.vertices) == 8 and len(hull.faces) == 12
    assert hull.volume() == pytest.approx(box.volume(), rel=1e-12)
    np.testing.assert_allclose(hull.unit_inertia(), box.unit_inertia(), rtol=1e-12)
    np.testing.assert_array_equal(hull.frame_pos, np.zeros(3))
    np.testing.assert_array_equal(hull.frame_rot, np.eye(3))
    w = World()
    a = w.add_body("hull", hull, density=RHO, pos=(0.0, 0.0, 1.0))
    b = w.add_body("box", box, density=RHO, pos=(1.0, 0.0, 1.0))
    assert w.body_mass[a] == pytest.approx(w.body_mass[b], rel=1e-12)
    np.testing.assert_allclose(w.body_inertia[a], w.body_inertia[b], rtol=1e-12)
    np.testing.assert_array_equal(w.body_pos[a], (0.0, 0.0, 1.0))


def test_hull_of_a_moved_and_turned_box_finds_the_centre_and_axes_back():
    half = np.array([0.1, 0.2, 0.3])
    shift = np.array([0.5, -0.25, 0.125])
    R = quat_matrix(quat_about((1.0, 2.0, 3.0), 0.9))
    hull = Hull(corners(*half) @ R.T + shift)
    np.testing.assert_allclose(hull.frame_pos, shift, atol=1e-12)
    # moments ascending: the box's, sorted
    np.testing.assert_allclose(hull.unit_inertia(), np.sort(Box(tuple(half)).unit_inertia()),
                               rtol=1e-10)
    Rp = hull.frame_rot
    assert np.linalg.det(Rp) == pytest.approx(1.0)
    # the principal axes are the box's axes (up to sign): smallest moment about the longest
    for k, axis in enumerate((2, 1, 0)):
        assert abs(Rp[:, k] @ R[:, axis]) == pytest.approx(1.0, abs=1e-9)
    # the vertices seen from the body frame are the box's corners (turned onto its axes)
    local = (hull.vertices - hull.frame_pos) @ Rp
    np.testing.assert_allclose(np.sort(np.abs(local), axis=0)[0], half[[2, 1, 0]], rtol=1e-9)


def test_l_shaped_compound_has_its_principal_axes_on_the_diagonals():
    a, t = 0.5, 0.05    # arm half length, half thickness
    arm_x, arm_y = Box((a, t, t)), Box((t, a, t))
    L = Compound([(arm_x, (a, 0.0, 0.0)), (arm_y, (0.0, a, 0.0))])
    np.testing.assert_allclose(L.frame_pos, [a / 2, a / 2, 0.0], atol=1e-15)
    # by hand (per kg, each arm half the mass): d = +-(a/2, -a/2, 0) from the centre of mass
    ix, iy, iz = (t * t + t * t) / 3, (a * a + t * t) / 3, (a * a + t * t) / 3   # arm_x
    d2 = 2 * (a / 2) ** 2
    about_diagonal = (ix + iy) / 2 + d2          # u = (1, 1, 0)/sqrt 2 is normal to d
    about_antidiagonal = (ix + iy) / 2           # w = (1, -1, 0)/sqrt 2 runs along d
    about_z = iz + d2
    moments = sorted([about_antidiagonal, about_diagonal, about_z])
    np.testing.assert_allclose(L.unit_inertia(), moments, rtol=1e-12)
    Rp = L.frame_rot
    s = 1 / math.sqrt(2)
    np.testing.assert_allclose(Rp[:, 0], [s, -s, 0.0], atol=1e-12)   # largest component > 0
    np.testing.assert_allclose(Rp[:, 1], [s, s, 0.0], atol=1e-12)
    np.testing.assert_allclose(Rp[:, 2], [0.0, 0.0, 1.0], atol=1e-12)
    # the engine body is turned by that frame; the parts sit where they were written
    w = World()
    i = w.add_body("L", L, density=RHO)
    np.testing.assert_allclose(w.body_quat[i], matrix_quat(Rp), atol=1e-15)
    np.testing.assert_allclose(w.body_inertia[i], w.body_mass[i] * np.array(moments), rtol=1e-12)
    tips = [L.frame_pos + Rp @ p for _, p, _ in L.body_parts]
    np.testing.assert_allclose(tips, [[a, 0.0, 0.0], [0.0, a, 0.0]], atol=1e-14)


def test_compound_of_one_centred_box_runs_bit_identical_to_the_box():
    def run(shape):
        w = World()
        w.add_body("ground", Plane(), kind="static")
        w.add_body("b", shape, density=RHO, pos=(0.0, 0.0, 0.3), quat=quat_about((1, 1, 0), 0.3),
                   angvel=(0.5, 0.2, 0.0))
        rec = w.run(240, record_bodies=True)
        return rec.body_pos, rec.body_quat

    box = Box((0.2, 0.1, 0.05))
    p1, q1 = run(box)
    p2, q2 = run(Compound([(box, (0.0, 0.0, 0.0))]))
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(q1, q2)


def test_primitive_worlds_keep_their_geom_arrays():
    w = World()
    w.add_body("ground", Plane(), kind="static")
    w.add_body("ball", Sphere(0.1), mass=1.0, pos=(0, 0, 1))
    model, _, _ = w._ready()
    np.testing.assert_array_equal(model.geom_body, [1, 2])
    np.testing.assert_array_equal(model.geom_local_pos, np.zeros((2, 3)))
    np.testing.assert_array_equal(model.geom_local_rot, np.tile(np.eye(3), (2, 1, 1)))
    np.testing.assert_array_equal(model.geom_hull, np.zeros((2, 2), np.int64))
    np.testing.assert_array_equal(model.hull_vert, np.zeros((1, 3)))


def test_compound_and_hull_geoms_carry_their_parts_and_vertices():
    hull = Hull(corners(0.1, 0.1, 0.1) + (0.5, 0.0, 0.0))
    w = World()
    w.add_body("h", hull, mass=1.0)
    w.add_body("c", Compound([(Sphere(0.1), (0, 0, -0.2)), (hull, (0, 0, 0.2))]), mass=1.0,
               pos=(3, 0, 0))
    model, _, _ = w._ready()
    np.testing.assert_array_equal(model.geom_body, [1, 2, 2])
    np.testing.assert_array_equal(model.geom_hull[[0, 2]], [[0, 8], [0, 8]])  # shared rows
    np.testing.assert_array_equal(model.hull_vert, hull.vertices)
    # the lone hull's geom sits at -c in the body (centre of mass) frame
    np.testing.assert_allclose(model.geom_local_pos[0], [-0.5, 0.0, 0.0], atol=1e-15)


def test_bad_hulls_and_compounds_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="at least 4 distinct points"):
        Hull([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="coplanar"):
        Hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]])
    with pytest.raises(ValueError, match=r"hull file .*nope\.stl: cannot read a mesh \(no such"):
        Hull.from_file(tmp_path / "nope.stl")
    junk = tmp_path / "junk.stl"
    junk.write_text("not a mesh at all\n")
    with pytest.raises(ValueError, match=r"hull file .*junk\.stl"):
        Hull.from_file(junk)
    with pytest.raises(ValueError, match="do not nest"):
        Compound([(Compound([(Sphere(0.1), (0, 0, 0))]), (0, 0, 0))])
    with pytest.raises(ValueError, match="must be a box, sphere"):
        Compound([(Plane(), (0, 0, 0))])
    with pytest.raises(ValueError, match="at least one part"):
        Compound([])


def test_hull_from_file_reads_the_rock_asset():
    rock = Hull.from_file(ROCK)
    big = Hull.from_file(ROCK, scale=2.0)
    assert rock.source == str(ROCK) and len(rock.vertices) >= 8
    assert big.volume() == pytest.approx(8.0 * rock.volume(), rel=1e-12)
    np.testing.assert_allclose(big.unit_inertia(), 4.0 * rock.unit_inertia(), rtol=1e-10)


# ---- resting contact ---------------------------------------------------------------------------

def test_hull_dropped_on_a_plane_rests_on_a_face():
    rock = Hull.from_file(ROCK)
    w = World()
    w.add_body("ground", Plane(), kind="static")
    i = w.add_body("rock", rock, density=2500.0, pos=(0.0, 0.0, 0.4),
                   quat=quat_about((1.0, 0.5, 0.2), 1.1))
    w.step(int(3.0 / w.dt))
    assert np.linalg.norm(w.body_vel[i]) < 1e-3 and np.linalg.norm(w.body_angvel[i]) < 1e-2
    z = world_vertices(w, i, rock)[:, 2]
    assert z.min() > -1e-3, f"penetration {-z.min() * 1e3:.3f} mm"
    assert np.sum(z < 1e-3) >= 3, "not resting on a face (fewer than 3 vertices touch)"
    c = w.contacts()
    mine = c["body"][:, 1] == i
    assert mine.sum() >= 3
    # the contact forces carry the weight
    assert c["force"][mine, 2].sum() == pytest.approx(w.body_mass[i] * 9.81, rel=1e-3)


def test_compound_table_stands_on_its_four_legs():
    top_h, leg_r, leg_h = 0.03, 0.03, 0.3
    feet = [(sx * 0.42, sy * 0.27) for sx in (-1, 1) for sy in (-1, 1)]
    top = Box((0.5, 0.35, top_h))
    legs = [(Cylinder(leg_r, leg_h), (x, y, leg_h)) for x, y in feet]
    table = Compound([(top, (0.0, 0.0, 2 * leg_h + top_h))] + legs)
    v_top, v_leg = top.volume(), math.pi * leg_r ** 2 * 2 * leg_h
    com_z = (v_top * (2 * leg_h + top_h) + 4 * v_leg * leg_h) / (v_top + 4 * v_leg)
    w = World()
    w.add_body("ground", Plane(), kind="static")
    i = w.add_body("table", table, density=600.0, pos=(0.0, 0.0, 0.002))
    w.step(int(2.0 / w.dt))
    assert w.body_pos[i][2] == pytest.approx(com_z, abs=1e-3)
    np.testing.assert_allclose(w.body_quat[i], [1, 0, 0, 0], atol=1e-6)   # upright, unturned
    c = w.contacts()
    points = c["point"][c["body"][:, 1] == i]
    assert np.all(np.abs(points[:, 2]) < 1e-3)   # on the floor
    for x, y in feet:            # every foot touches, and nothing else does
        near = np.hypot(points[:, 0] - x, points[:, 1] - y) <= leg_r + 1e-6
        assert near.any(), f"no contact under the foot at ({x}, {y})"
    assert all(min(np.hypot(px - x, py - y) for x, y in feet) <= leg_r + 1e-6
               for px, py, _ in points)
    assert np.sum(c["force"][c["body"][:, 1] == i, 2]) == pytest.approx(
        w.body_mass[i] * 9.81, rel=1e-3)


# ---- scene files -------------------------------------------------------------------------------

HEAD = '[[bodies]]\nname = "ground"\nshape = { type = "plane" }\nkind = "static"\n'


def scene(tmp_path, body):
    path = tmp_path / "scene.toml"
    path.write_text(HEAD + "\n[[bodies]]\nname = \"thing\"\nmass = 1.0\n" + body, encoding="utf-8")
    return path


def load_error(path):
    with pytest.raises(SceneError) as info:
        load_scene(path)
    return str(info.value)


def test_hull_scene_from_a_file_next_to_the_scene(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "r.stl").write_bytes(ROCK.read_bytes())
    w = load_scene(scene(tmp_path, 'shape = { type = "hull", file = "meshes/r.stl", scale = 2.0 }'))
    hull = w.body_shapes[2]
    assert isinstance(hull, Hull)
    assert hull.volume() == pytest.approx(8.0 * Hull.from_file(ROCK).volume(), rel=1e-12)


def test_compound_scene_with_parts_tables(tmp_path):
    w = load_scene(scene(tmp_path, """pos = [0.0, 0.0, 1.0]
shape.type = "compound"
[[bodies.shape.parts]]
shape = { type = "sphere", radius = 0.1 }
pos = [-0.3, 0.0, 0.0]
[[bodies.shape.parts]]
shape = { type = "hull", vertices = [[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]] }
pos = [0.3, 0.0, 0.0]
quat = [2.0, 0.0, 0.0, 0.0]
"""))
    shape = w.body_shapes[2]
    assert isinstance(shape, Compound) and len(shape.parts) == 2
    np.testing.assert_array_equal(shape.parts[1][2], [1.0, 0.0, 0.0, 0.0])   # normalised


@pytest.mark.parametrize("body,fragments", [
    ('shape = { type = "hull" }',
     ['bodies[1] "thing"', 'field "shape.vertices"', 'give "vertices" or "file", not neither']),
    (('shape = { type = "hull", file = "a.stl", vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], '
     '[0, 0, 1]] }'), ['field "shape.file"', "no such file"]),
    ('shape = { type = "hull", vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]] }',
     ['field "shape.vertices"', "must have at least 4 items"]),
    ('shape = { type = "hull", vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]] }',
     ['bodies[1] "thing"', 'field "shape.vertices"', "coplanar"]),
    ('shape = { type = "hull", vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, "x"]] }',
     ['field "shape.vertices.3"', "must be a number"]),
    ('shape = { type = "hull", file = "missing.stl" }',
     ['field "shape.file"', "no such file", "missing.stl"]),
    ('shape = { type = "hull", file = "junk.stl" }',
     ['bodies[1] "thing"', 'field "shape.file"', "cannot read a mesh"]),
    ('shape = { type = "hull", file = "junk.stl", scale = 0.0 }',
     ['field "shape.scale"', "must be greater than 0"]),
    ('shape = { type = "compound", parts = [] }', ['field "shape.parts"', "at least 1"]),
    ('shape = { type = "compound" }', ['field "shape.parts"', "is required"]),
    ('shape = { type = "compound", parts = [{ shape = { type = "compound", parts = [] } }] }',
     ['field "shape.parts.0.shape"', "cannot be a compound", "do not nest"]),
    ('shape = { type = "compound", parts = [{ shape = { type = "plane" } }] }',
     ['field "shape.parts.0.shape"', "cannot be a plane"]),
    ('shape = { type = "compound", parts = [{ shape = { type = "sphere", radius = -1.0 } }] }',
     ['field "shape.parts.0.shape.radius"', "must be greater than 0"]),
    (('shape = { type = "compound", parts = [{ shape = { type = "sphere", radius = 1.0 }, '
     'pso = [0, 0, 0] }] }'), ['field "shape.parts.0"', 'unknown key "pso"', 'did you mean "pos"']),
    (('shape = { type = "compound", parts = [{ shape = { type = "box", half_extent = [1, 1, 1] } '
     '}] }'), ['unknown key "half_extent"', 'did you mean "half_extents"']),
    (('shape = { type = "compound", parts = [{ shape = { type = "sphere", radius = 1.0 }, '
     'quat = [0, 0, 0, 0] }] }'), ['field "shape.parts.0.quat"', "must not be zero"]),
    ('shape = { type = "compound", parts = [{ pos = [0, 0, 0] }] }',
     ['field "shape.parts.0.shape"', "is required"]),
])
def test_bad_hull_and_compound_entries_name_the_entry_and_field(tmp_path, body, fragments):
    (tmp_path / "junk.stl").write_text("not a mesh\n")
    message = load_error(scene(tmp_path, body))
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_shapes_scene_loads_and_settles():
    w = load_scene(SCENE_DIR / "shapes.toml")
    kinds = {type(s).__name__ for s in w.body_shapes if s is not None}
    assert {"Hull", "Compound", "Box", "Sphere", "Capsule", "Cylinder", "Ellipsoid",
            "Plane"} <= kinds
    w.step(int(3.0 / w.dt))
    assert w.contact_stats["max_depth"] < 1e-3
    for name in ("table", "rock", "gem", "dumbbell"):
        i = w.body_names.index(name)
        assert np.linalg.norm(w.body_vel[i]) < 0.01, name


# ---- picking and drawing -----------------------------------------------------------------------

def test_pick_hits_compound_parts_and_hulls():
    hull = Hull(corners(0.1, 0.1, 0.1) + (0.3, 0.0, 0.0))          # off its centre of mass
    dumbbell = Compound([(Sphere(0.1), (-0.5, 0.0, 0.0)), (Sphere(0.1), (0.5, 0.0, 0.0))])
    w = World()
    w.add_body("ground", Plane(), kind="static")
    w.add_body("hull", hull, mass=1.0, pos=(0.0, 0.0, 1.0), quat=quat_about((0, 0, 1), 0.5))
    w.add_body("dumbbell", dumbbell, mass=1.0, pos=(5.0, 0.0, 1.0))
    pos, quat, shapes = w.body_pos, w.body_quat, w.body_shapes
    down = np.array([0.0, 0.0, -1.0])
    # straight down onto the hull's cube (its reference origin is 0.3 m off the cube's middle)
    corner_x = quat_matrix(quat_about((0, 0, 1), 0.5)) @ (0.3, 0.0, 0.0)
    hit = pick(np.array([corner_x[0], corner_x[1], 3.0]), down, pos, quat, shapes)
    assert hit is not None and hit[0] == 2 and hit[2] == pytest.approx(3.0 - 1.1, abs=1e-12)
    # between the two balls the ray misses; over one ball it hits its top
    assert pick(np.array([5.0, 0.0, 3.0]), down, pos, quat, shapes) is None
    hit = pick(np.array([5.5, 0.0, 3.0]), down, pos, quat, shapes)
    assert hit is not None and hit[0] == 3 and hit[2] == pytest.approx(3.0 - 1.1, abs=1e-12)
    np.testing.assert_allclose(hit[1], [0.5, 0.0, 0.1], atol=1e-12)   # body frame grab point


def test_compounds_and_hulls_become_instances_and_bounds():
    hull = Hull(corners(0.1, 0.2, 0.3))
    dumbbell = Compound([(Sphere(0.1), (-0.5, 0.0, 0.0)), (Sphere(0.1), (0.5, 0.0, 0.0)),
                         (Capsule(0.02, 0.5), (0, 0, 0), quat_about((0, 1, 0), math.pi / 2))])
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [3.0, 0.0, 1.0]])
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    rows = body_instances(pos, quat, [None, hull, dumbbell])
    assert len(rows["sphere"]) == 4 and len(rows["cylinder"]) == 1     # 2 balls + 2 caps
    assert len(rows[hull]) == 1
    balls = sorted(r[12] for r in rows["sphere"])
    np.testing.assert_allclose(balls, [2.5, 2.5, 3.5, 3.5], atol=1e-6)
    np.testing.assert_allclose(rows[hull][0][16:], body_colour(1), rtol=1e-6)
    mesh = hull_mesh(hull)
    assert mesh.shape == (36, 6)
    lo, hi = scene_bounds(pos, quat, [None, hull, dumbbell])
    np.testing.assert_allclose(lo, [-0.1, -0.2, 0.7], atol=1e-12)
    np.testing.assert_allclose(hi, [3.6, 0.2, 1.3], atol=1e-12)


def test_screenshot_of_the_shapes_scene(tmp_path):
    out = tmp_path / "shapes.png"
    result = sharnir(str(SCENE_DIR / "shapes.toml"), "--screenshot", str(out), "--frames", "120",
                     "--size", "480x360")
    assert result.returncode == 0, result.stderr
    pixels = read_png(out)
    assert pixels.shape == (360, 480, 3)
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in pixels.reshape(-1, 3) / 255.0])
    lit = hsv[:, 1] > 0.3
    names = load_scene(SCENE_DIR / "shapes.toml").body_names
    hues = {n: colorsys.rgb_to_hsv(*body_colour(i))[0] for i, n in enumerate(names)}
    for name in ("table", "dumbbell", "rock", "gem"):
        gap = np.abs((hsv[:, 0] - hues[name] + 0.5) % 1.0 - 0.5)
        assert np.sum(lit & (gap < 0.01)) > 20, f"{name} is not in the picture"


# A hull's points may sit anywhere in their own frame, far from its origin: the bounding
# sphere the narrow phase starts from must still hold them (it was once centred on the
# origin with the radius of the box around the points, and such hulls fell through boxes).
def test_hull_written_far_from_its_origin_rests_on_a_box():
    w = World(dt=1.0 / 240.0, iterations=30)
    w.add_body("table", Box((0.5, 0.5, 0.1)), kind="static")
    cube = Hull(corners(0.1, 0.1, 0.1) + (2.0, 0.0, 0.0))   # the points 2 m off their origin
    i = w.add_body("cube", cube, mass=1.0, pos=(-2.0, 0.0, 0.25))   # its centre over the table
    w.run(240)
    # rests on the table top (z = 0.1) with its centre a half edge above it (less the slop)
    assert w.body_pos[i][2] == pytest.approx(0.2, abs=1e-3)


def test_ball_dropped_on_a_spike_hulls_apex_rests_on_it():
    # square pyramid 1 m tall on a 0.2 m base: its centre of mass is 0.25 m up, the apex
    # 0.75 m above that, farther than half the diagonal of its bounding box (0.52 m)
    spike = Hull([[-0.1, -0.1, 0.0], [0.1, -0.1, 0.0], [0.1, 0.1, 0.0], [-0.1, 0.1, 0.0],
                  [0.0, 0.0, 1.0]])
    w = World(dt=1.0 / 240.0, iterations=30)
    w.add_body("spike", spike, kind="static")
    r = 0.05
    i = w.add_body("ball", Sphere(r), mass=1.0, pos=(0.0, 0.0, 1.0 + r + 0.02))
    w.run(120)
    assert w.body_pos[i][2] == pytest.approx(1.0 + r, abs=1e-3)
