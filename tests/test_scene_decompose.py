"""Convex decomposition of collision meshes on request (a mesh shape's ``decompose = true``, a
URDF robot's ``decompose``; scenes/decompose.py, physics.shape.Decomposed): a concave mesh
collides as convex pieces that fill it and leave its notch empty, weighs as the solid it
encloses, is still drawn with its own triangles, is decomposed once (cached on disk, a corrupt
entry computed again), and what is not decomposed collides as its hull with one warning.

The test mesh is a U written by trimesh: a block 3 u wide (x) and 2 u tall (z), extruded D
along y, with a notch u wide and u deep cut from the middle of its top (u = 1/8 m, D = 1/4 m:
exact in the float32 of STL). On paper it is three boxes: a base 3u x D x u and two posts
u x D x u on its ends; its volume is (3u 2u - u u) D = 5 u^2 D, its notch's floor is at
z = u and its hull's top at z = 2u. CoACD decomposes it in about a second.
"""
import re
import time
import warnings

import numpy as np
import pytest
import trimesh

from sharnir.app.cli import _app_parser, _robot
from sharnir.physics.shape import Compound, Decomposed, Hull, Mesh, Sphere, geoms, quat_matrix
from sharnir.scenes import SceneError, build_world, load_scene, read_scene
from sharnir.scenes import decompose as dec
from sharnir.scenes.loader import MeshWarning, robot_options
from sharnir.scenes.urdf import UrdfWarning

U, D = 0.125, 0.25          # the U's unit and depth, m
RHO = 1000.0
VOLUME = 5 * U * U * D      # 3u x 2u block less the u x u notch, times D
# the U as boxes (centre, full extents), the frame of the file: x centred, y centred, z from 0
BOXES = [((0.0, 0.0, U / 2), (3 * U, D, U)),                   # the base
         ((-U, 0.0, 1.5 * U), (U, D, U)),                      # the left post
         ((U, 0.0, 1.5 * U), (U, D, U))]                       # the right post


def u_mesh():
    """The U, closed and wound outwards: its outline in the x-z plane extruded along y."""
    outline = np.array([(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)],
                       float) * U - (1.5 * U, 0.0)
    triangles = [(0, 1, 4), (0, 4, 5), (1, 2, 3), (1, 3, 4), (0, 5, 6), (0, 6, 7)]
    mesh = trimesh.creation.extrude_triangulation(outline, triangles, D)   # along z
    turn = np.array([[1, 0, 0, 0], [0, 0, -1, D / 2], [0, 1, 0, 0], [0, 0, 0, 1]], float)
    mesh.apply_transform(turn)       # (x, y, z) -> (x, D/2 - z, y): the outline in x-z
    assert mesh.is_volume and mesh.volume == pytest.approx(VOLUME, rel=1e-12)
    return mesh


def write_scene(tmp_path, *bodies):
    u_mesh().export(tmp_path / "u.stl")
    path = tmp_path / "scene.toml"
    path.write_text("bodies = [\n" + "".join(f"  {b},\n" for b in bodies) + "]\n",
                    encoding="utf-8")
    return path


def u_body(name="u", extra="", where="", kind='density = 1000.0'):
    return (f'{{ name = "{name}", {kind}, {where}'
            f'shape = {{ type = "mesh", file = "u.stl", decompose = true{extra} }} }}')


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("decompositions")


@pytest.fixture(autouse=True)
def cache(shared_cache, monkeypatch):
    """Every test's decompositions go to one folder of this module (the U is decomposed once),
    never to the user's cache."""
    monkeypatch.setattr(dec, "cache_folder", lambda: shared_cache)
    return shared_cache


@pytest.fixture
def runs(monkeypatch):
    """The meshes CoACD was run on in this test (a list, appended to as it runs)."""
    seen = []
    real = dec._run_coacd

    def counted(vertices, faces, concavity, remesh=0):
        seen.append(len(faces))
        return real(vertices, faces, concavity, remesh)

    monkeypatch.setattr(dec, "_run_coacd", counted)
    return seen


def inside(hull, points, slack=1e-9):
    return np.all(points @ hull.face_normals.T <= hull.face_offsets + slack, axis=1)


def grid(lo, hi, n=6):
    """n^3 points strictly inside the box lo..hi (cell centres)."""
    axes = [lo[k] + (np.arange(n) + 0.5) * (hi[k] - lo[k]) / n for k in range(3)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)


# ---- the pieces ----------------------------------------------------------------------------

def test_a_decomposed_u_collides_as_pieces_that_fill_it_and_leave_its_notch_empty(tmp_path):
    w = load_scene(write_scene(tmp_path, u_body()))
    shape = w.body_shapes[w.body_names.index("u")]
    assert isinstance(shape, Decomposed)
    pieces = [part[0] for part in shape.parts]
    assert 2 <= len(pieces) <= dec.DEFAULT_MAX_PARTS
    assert all(isinstance(p, Hull) for p in pieces)
    # the pieces' volumes add up to the U's (they neither miss nor overlap much) ...
    assert sum(p.volume() for p in pieces) == pytest.approx(VOLUME, rel=0.01)
    # ... every point of the U lies in a piece, and no point of the notch does
    solid = np.concatenate([grid(np.subtract(c, np.divide(e, 2)), np.add(c, np.divide(e, 2)))
                            for c, e in BOXES])
    assert np.all(np.any([inside(p, solid) for p in pieces], axis=0))
    notch = grid((-U / 2 + 0.01, -D / 2 + 0.01, U + 0.01), (U / 2 - 0.01, D / 2 - 0.01, 2 * U))
    assert not np.any([inside(p, notch) for p in pieces])
    # the engine's geoms are the pieces
    assert [g[0] for g in geoms(shape)] == pieces


def test_a_decomposed_mesh_weighs_as_the_solid_it_encloses(tmp_path):
    path = write_scene(tmp_path, u_body(where="pos = [0.0, 0.0, 1.0], "),
                       '{ name = "plain", density = 1000.0, pos = [1.0, 0.0, 1.0], '
                       'shape = { type = "mesh", file = "u.stl" } }')
    w = load_scene(path)
    i, j = w.body_names.index("u"), w.body_names.index("plain")
    # on paper: the three boxes' masses, centre and inertia (parallel axes) about it
    masses = [RHO * np.prod(e) for _, e in BOXES]
    m = sum(masses)
    com = sum(mk * np.array(c) for mk, (c, _) in zip(masses, BOXES)) / m
    inertia = np.zeros(3)
    for mk, (c, (a, b, h)) in zip(masses, BOXES):
        d = np.array(c) - com
        inertia += mk / 12 * np.array([b * b + h * h, a * a + h * h, a * a + b * b])
        inertia += mk * (d @ d - d * d)
    assert m == pytest.approx(RHO * VOLUME, rel=1e-12)
    assert w.body_mass[i] == pytest.approx(m, rel=1e-9)
    np.testing.assert_allclose(w.body_inertia[i], inertia, rtol=1e-9)
    np.testing.assert_allclose(w.body_pos[i], com + (0.0, 0.0, 1.0), atol=1e-12)
    # the same as without the decomposition: deciding to decompose changes the contacts only
    assert w.body_mass[i] == w.body_mass[j]
    np.testing.assert_array_equal(w.body_inertia[i], w.body_inertia[j])


def test_a_ball_dropped_into_the_notch_rests_on_its_floor_not_on_the_hull(tmp_path):
    r = 0.03

    def ball(name, x):
        return (f'{{ name = "{name}", density = 1000.0, pos = [{x}, 0.0, 0.4], '
                f'shape = {{ type = "sphere", radius = {r} }} }}')

    path = write_scene(tmp_path, u_body(kind='kind = "static"'), ball("in", 0.0),
                       '{ name = "plain", kind = "static", pos = [1.0, 0.0, 0.0], '
                       'shape = { type = "mesh", file = "u.stl" } }', ball("on", 1.0))
    w = load_scene(path)
    w.step(round(1.0 / w.dt))
    inside_ball, on_ball = w.body_names.index("in"), w.body_names.index("on")
    # decomposed: on the notch's floor (z = u); as its hull: on the hull's top (z = 2u)
    assert w.body_pos[inside_ball][2] == pytest.approx(U + r, abs=2e-3)
    assert w.body_pos[on_ball][2] == pytest.approx(2 * U + r, abs=2e-3)
    assert abs(w.body_pos[inside_ball][0]) < U / 2 - r      # between the posts
    assert np.linalg.norm(w.body_vel[inside_ball]) < 1e-2


def test_the_mesh_is_still_drawn_with_its_own_triangles(tmp_path):
    path = write_scene(
        tmp_path, u_body(),
        '{ name = "both", density = 1000.0, pos = [1.0, 0.0, 0.0], shape.type = "compound", '
        'shape.parts = [{ shape = { type = "mesh", file = "u.stl", decompose = true } }, '
        '{ shape = { type = "sphere", radius = 0.05 }, pos = [0.0, 0.0, -0.1] }] }')
    w = load_scene(path)
    (drawn, *_), = w.body_visuals[w.body_names.index("u")]
    assert isinstance(drawn, Mesh) and len(drawn.mesh_faces) == len(u_mesh().faces)
    # a compound holding a decomposed mesh: its parts drawn, the mesh by its triangles
    visuals = w.body_visuals[w.body_names.index("both")]
    assert [type(v[0]).__name__ for v in visuals] == ["Mesh", "Sphere"]
    shape = w.body_shapes[w.body_names.index("both")]
    pieces = len(w.body_shapes[w.body_names.index("u")].parts)
    assert len(shape.body_parts) == pieces + 1          # the U's pieces and the sphere
    sphere = 4 / 3 * np.pi * 0.05 ** 3
    assert w.body_mass[w.body_names.index("both")] == pytest.approx(RHO * (VOLUME + sphere),
                                                                     rel=1e-9)


def test_a_turned_decomposed_part_of_a_compound_has_its_pieces_where_the_part_is():
    u, _ = dec.decompose(Mesh(u_mesh().vertices, u_mesh().faces))
    q = np.array([0.9, 0.2, -0.3, 0.1]) / np.linalg.norm([0.9, 0.2, -0.3, 0.1])
    p = np.array([0.3, -0.2, 0.5])
    body = Compound([(u, p, q), (Sphere(0.05), (0.0, 0.0, -0.3))])
    R = quat_matrix(q)
    assert len(body.body_parts) == len(u.parts) + 1
    for (leaf, pos, rot), (piece, _, _) in zip(body.body_parts, u.parts):
        assert leaf is piece
        # a piece's corner, from the body frame back to the compound's frame, is where the
        # part's pose puts it: p + R x
        back = body.frame_pos + (pos + leaf.vertices @ rot.T) @ body.frame_rot.T
        np.testing.assert_allclose(back, p + leaf.vertices @ R.T, atol=1e-12)
    sphere = 4 / 3 * np.pi * 0.05 ** 3
    assert body.volume() == pytest.approx(VOLUME + sphere, rel=1e-9)


# ---- the cache -------------------------------------------------------------------------------

def test_the_pieces_are_cached_and_a_second_read_runs_no_coacd(tmp_path, monkeypatch, runs):
    monkeypatch.setattr(dec, "cache_folder", lambda: tmp_path / "cache")
    path = write_scene(tmp_path, u_body())
    started = time.perf_counter()
    first = load_scene(path).body_shapes[1]
    took = time.perf_counter() - started
    assert runs == [len(u_mesh().faces)]
    entries = list((tmp_path / "cache").iterdir())
    assert len(entries) == 1 and re.fullmatch(r"[0-9a-f]{64}\.npz", entries[0].name)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # the fast path says nothing
        second = load_scene(path).body_shapes[1]
    assert runs == [len(u_mesh().faces)]         # not run again
    assert time.perf_counter() - started < took
    for a, b in zip(first.parts, second.parts, strict=True):
        np.testing.assert_array_equal(a[0].vertices, b[0].vertices)


def test_a_corrupt_or_misnamed_cache_entry_is_computed_again(tmp_path, monkeypatch, runs):
    monkeypatch.setattr(dec, "cache_folder", lambda: tmp_path / "cache")
    path = write_scene(tmp_path, u_body())
    good = load_scene(path).body_shapes[1]
    entry, = (tmp_path / "cache").iterdir()
    kept = entry.read_bytes()
    for bad in (b"", kept[: len(kept) // 2], b"PK\x03\x04 not a zip file at all"):
        entry.write_bytes(bad)
        again = load_scene(path).body_shapes[1]
        # the same pieces, bit for bit (CoACD's seed is fixed), and a whole entry again
        for a, b in zip(good.parts, again.parts, strict=True):
            np.testing.assert_array_equal(a[0].vertices, b[0].vertices)
        assert len(dec._read_entry(entry, entry.stem)) == len(good.parts)
    assert len(runs) == 4
    # an entry under another mesh's name is not that mesh's: computed again too
    other = entry.with_name("0" * 64 + ".npz")
    other.write_bytes(kept)
    assert dec._read_entry(other, "0" * 64) is None
    assert len(dec._read_entry(entry, entry.stem)) == len(good.parts)
    assert not [p for p in (tmp_path / "cache").iterdir() if p.suffix == ".tmp"]


# ---- caps and refusals -------------------------------------------------------------------------

def test_more_pieces_than_max_parts_are_merged_with_one_warning_line(tmp_path):
    path = write_scene(tmp_path, u_body(extra=", max_parts = 1"))
    with pytest.warns(MeshWarning) as caught:
        w = load_scene(path)
    message, = [str(c.message) for c in caught]
    assert "\n" not in message and "max_parts" in message
    pieces = len(load_scene(write_scene(tmp_path, u_body())).body_shapes[1].parts)
    assert f'"u" (u.stl: {pieces} -> 1 pieces)' in message
    shape = w.body_shapes[1]
    assert len(shape.parts) == 1     # one piece: the U's hull, the block 3u x D x 2u
    assert shape.parts[0][0].volume() == pytest.approx(6 * U * U * D, rel=1e-3)
    assert w.body_mass[1] == pytest.approx(RHO * VOLUME, rel=1e-9)   # still the solid's


def test_a_mesh_of_many_triangles_is_remeshed_coarser_first_and_says_so(tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(dec, "cache_folder", lambda: tmp_path / "cache")
    monkeypatch.setattr(dec, "MAX_FACES", 20)     # the U's 28 triangles are "many" here
    asked = []

    def coacd(vertices, faces, concavity, remesh=0):   # (a real remesh takes ~10 s)
        asked.append(remesh)
        return [np.array([[x, y, z] for x in (-a / 2, a / 2) for y in (-b / 2, b / 2)
                          for z in (-h / 2, h / 2)]) + c for c, (a, b, h) in BOXES]

    monkeypatch.setattr(dec, "_run_coacd", coacd)
    with pytest.warns(MeshWarning) as caught:
        w = load_scene(write_scene(tmp_path, u_body()))
    message, = [str(c.message) for c in caught]
    assert message.endswith(f'"u" (u.stl: 28 triangles remeshed at resolution '
                            f'{dec.REMESH_RESOLUTION})')
    assert asked == [dec.REMESH_RESOLUTION] and len(w.body_shapes[1].parts) == 3
    monkeypatch.setattr(dec, "MAX_FACES", 10_000)  # not remeshed: another cache entry
    load_scene(write_scene(tmp_path, u_body()))
    assert asked == [dec.REMESH_RESOLUTION, 0]


def test_an_open_mesh_is_not_decomposed_and_the_warning_names_it(tmp_path, runs):
    box = trimesh.creation.box(extents=(0.5, 0.25, 0.75))
    trimesh.Trimesh(box.vertices, box.faces[:-2]).export(tmp_path / "open.stl")  # a lid off
    path = write_scene(tmp_path, '{ name = "lidless", mass = 1.0, inertia = [1.0, 1.0, 1.0], '
                                 'shape = { type = "mesh", file = "open.stl", decompose = true } }')
    with pytest.warns(MeshWarning) as caught:
        w = load_scene(path)
    message, = [str(c.message) for c in caught]
    assert re.search(r"meshes not decomposed \(its triangles enclose no volume.*\): they "
                     r'collide as their convex hulls: "lidless" \(open.stl\)$', message)
    assert type(w.body_shapes[1]) is Mesh and runs == []   # (CoACD may never end on one)


def test_coacd_past_its_time_limit_is_stopped_and_the_mesh_collides_as_its_hull(
        tmp_path, monkeypatch, runs):
    monkeypatch.setattr(dec, "cache_folder", lambda: tmp_path / "cache")
    monkeypatch.setattr(dec, "TIME_LIMIT_S", 0.01)
    path = write_scene(tmp_path, u_body())
    started = time.perf_counter()
    with pytest.warns(MeshWarning, match=r"not decomposed \(CoACD took more than 0.01 s and "
                                         r'was stopped.*\).*"u" \(u.stl\)'):
        w = load_scene(path)
    assert time.perf_counter() - started < 30
    assert type(w.body_shapes[1]) is Mesh
    with pytest.warns(MeshWarning, match="took more than 0.01 s"):
        load_scene(path)
    assert len(runs) == 1                # the failure is kept: the next load does not wait
    monkeypatch.setattr(dec, "TIME_LIMIT_S", 120.0)
    assert isinstance(load_scene(path).body_shapes[1], Decomposed)   # a longer limit: again
    assert len(runs) == 2


@pytest.mark.parametrize("extra, message", [
    (", max_parts = 0", 'field "shape.max_parts": must be at least 1 (got 0)'),
    (", max_parts = 1000", 'field "shape.max_parts": must be at most 256 (got 1000)'),
    (", max_parts = 2.5", 'field "shape.max_parts": must be an integer (got 2.5)'),
    (", concavity = 2.0", 'field "shape.concavity": must be at most 1 (got 2.0)'),
    (", concavity = 0.001", 'field "shape.concavity": must be at least 0.01 (got 0.001)'),
])
def test_bad_decompose_options_are_refused_with_their_messages(tmp_path, extra, message):
    with pytest.raises(SceneError) as err:
        read_scene(write_scene(tmp_path, u_body(extra=extra)))
    assert str(err.value).endswith(f'bodies[0] "u": {message}')


@pytest.mark.parametrize("shape, message", [
    ('{ type = "mesh", file = "u.stl", decompose = "yes" }',
     'field "shape.decompose": must be true or false (got "yes")'),
    ('{ type = "mesh", file = "u.stl", max_parts = 8 }',
     'field "shape.max_parts": applies only with decompose = true'),
    ('{ type = "hull", file = "u.stl", decompose = true }',
     'field "shape.decompose": a hull is convex: a concave mesh that collides as convex pieces '
     'is a "mesh" shape with decompose = true'),
])
def test_decompose_where_it_does_not_apply_is_refused(tmp_path, shape, message):
    with pytest.raises(SceneError) as err:
        read_scene(write_scene(tmp_path, f'{{ name = "u", density = 1.0, shape = {shape} }}'))
    assert str(err.value).endswith(f'bodies[0] "u": {message}')


def test_a_visual_is_not_decomposed(tmp_path):
    path = write_scene(tmp_path, '{ name = "u", density = 1.0, shape = { type = "sphere", '
                                 'radius = 0.1 }, visuals = [{ shape = { type = "mesh", file = '
                                 '"u.stl", decompose = true } }] }')
    with pytest.raises(SceneError, match=r'field "visuals.0.shape.decompose": a visual is only '
                                         r"drawn: decompose applies to collision shapes$"):
        read_scene(path)


# ---- robots ------------------------------------------------------------------------------------

URDF = """<robot name="cup">
  <link name="base">
    <inertial><mass value="2.0"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><geometry><mesh filename="u.stl"/></geometry></collision>
    <collision><origin xyz="0 0 -0.1"/><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
    <visual><geometry><mesh filename="u.stl"/></geometry></visual>
  </link>
</robot>
"""


def robot(tmp_path):
    u_mesh().export(tmp_path / "u.stl")
    (tmp_path / "cup.urdf").write_text(URDF, encoding="utf-8")
    return tmp_path / "cup.urdf"


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        return fn(*args, **kwargs)


def test_a_robot_read_with_decompose_has_its_collision_meshes_decomposed(tmp_path):
    path = robot(tmp_path)
    plain = quiet(read_scene, path)
    spec = quiet(read_scene, path, robot={"decompose": True})
    link = {b.name: b for b in spec.bodies}["base"]
    assert [(p.shape.type, getattr(p.shape, "decompose", None)) for p in link.shape.parts] == \
        [("mesh", True), ("box", None)]
    assert link.visuals[0].shape.decompose is False          # drawn only
    w, w_plain = build_world(spec), build_world(plain)
    i = w.body_names.index("base")
    pieces = len(w.body_shapes[w.body_names.index("base")].parts[0][0].parts)
    assert len(w.body_shapes[i].body_parts) == pieces + 1 > 2
    # the file's mass and inertia, decomposed or not
    assert w.body_mass[i] == w_plain.body_mass[i] == 2.0
    np.testing.assert_array_equal(w.body_inertia[i], w_plain.body_inertia[i])


def test_an_included_robot_takes_decompose_among_its_urdf_options(tmp_path):
    robot(tmp_path)
    scene = tmp_path / "scene.toml"
    scene.write_text('include = [{ file = "cup.urdf", urdf = { decompose = true } }]\n')
    spec = quiet(read_scene, scene)
    assert spec.bodies[0].shape.parts[0].shape.decompose is True
    scene.write_text('include = [{ file = "cup.urdf", urdf = { decompose = 1 } }]\n')
    with pytest.raises(SceneError, match='include\\[0\\]: field "urdf.decompose": .*boolean'):
        quiet(read_scene, scene)


def test_the_command_line_and_the_loader_take_decompose_as_a_robot_option(tmp_path):
    args = _app_parser().parse_args(["cup.urdf", "--decompose", "--base", "fixed"])
    assert _robot(args) == {"fixed_base": True, "height": None, "decompose": True}
    assert _robot(_app_parser().parse_args(["cup.urdf"]))["decompose"] is None
    assert robot_options({"decompose": True, "height": None}, "x") == {"decompose": True}
    with pytest.raises(SceneError, match="^x: robot option decompose must be true or false, "
                                         "not 'yes'$"):
        robot_options({"decompose": "yes"}, "x")
    with pytest.raises(SceneError, match=r"the robot options \(decompose\) apply to a URDF "
                                         r"robot \(.urdf\) only"):
        read_scene(write_scene(tmp_path, u_body()), robot={"decompose": True})
