"""Mesh shapes: the mass properties of the solid a mesh file encloses against closed forms, the
hull it collides as (resting height), errors for missing or unreadable files, and drawing with
its own triangles rather than its hull.

Meshes are written by trimesh in the test; their sizes are exact in float32 (STL keeps
float32), so the expected values are the closed forms of the solids (box m (b^2 + c^2) / 12
per full extents, parallel axes), not numbers read back from the code under test.
"""
import colorsys
import warnings

import numpy as np
import pytest
import trimesh
from test_render import read_png, sharnir

from sharnir.physics.shape import Hull, Mesh
from sharnir.physics.world import World, quat_to_matrix
from sharnir.render.instances import body_colour, hull_mesh
from sharnir.scenes import SceneError, load_scene
from sharnir.scenes.loader import MeshWarning

RHO = 1000.0
A, B, C = 0.5, 0.25, 0.75      # full extents of the test box, exact in float32


def box_file(path, extents=(A, B, C), offset=(0.0, 0.0, 0.0)):
    mesh = trimesh.creation.box(extents=extents)
    mesh.apply_translation(offset)
    mesh.export(path)
    return path


def box_inertia(m, a, b, c):
    return m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def scene(tmp_path, body, ground=True):
    text = "bodies = [\n"
    if ground:
        text += '  { name = "ground", shape = { type = "plane" }, kind = "static" },\n'
    text += f"  {body},\n]\n"
    path = tmp_path / "scene.toml"
    path.write_text(text, encoding="utf-8")
    return path


# ---- mass properties ---------------------------------------------------------------------------

def test_mesh_of_a_box_file_weighs_and_turns_as_the_box(tmp_path):
    mesh = Mesh.from_file(box_file(tmp_path / "box.stl", offset=(1.0, 2.0, 3.0)))
    assert mesh.closed
    w = World()
    i = w.add_body("box", mesh, density=RHO)
    m = RHO * A * B * C
    assert w.body_mass[i] == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(w.body_inertia[i], box_inertia(m, A, B, C), rtol=1e-9)
    # the file's box is centred on (1, 2, 3) of its frame: the body starts there
    np.testing.assert_allclose(w.body_pos[i], [1.0, 2.0, 3.0], atol=1e-12)


def test_mesh_of_two_cubes_weighs_as_the_cubes_not_their_hull(tmp_path):
    s, d = 0.25, 0.5     # cube side, centres at x = +-d
    cubes = trimesh.util.concatenate([
        trimesh.creation.box(extents=(s, s, s)).apply_translation((x, 0.0, 0.0))
        for x in (-d, d)])
    cubes.export(tmp_path / "cubes.obj")
    mesh = Mesh.from_file(tmp_path / "cubes.obj")
    assert mesh.closed
    w = World()
    i = w.add_body("cubes", mesh, density=RHO)
    m_c = RHO * s ** 3
    assert w.body_mass[i] == pytest.approx(2 * m_c, rel=1e-9)
    own = m_c * s * s / 6.0          # a cube about any axis through its centre
    np.testing.assert_allclose(w.body_inertia[i], [2 * own, 2 * (own + m_c * d * d),
                                                    2 * (own + m_c * d * d)], rtol=1e-9)
    # it collides as its hull: the box spanning both cubes
    hull = Hull(mesh.mesh_vertices)
    assert hull.volume() == pytest.approx((2 * d + s) * s * s, rel=1e-9)
    assert len(mesh.vertices) == 8


def test_inline_tetrahedron_has_its_volume_and_centre(tmp_path):
    a, b, c = 0.3, 0.2, 0.1
    body = ('{ name = "tet", density = 500.0, shape = { type = "mesh", '
            f'vertices = [[0.0, 0.0, 0.0], [{a}, 0.0, 0.0], [0.0, {b}, 0.0], [0.0, 0.0, {c}]], '
            'faces = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]] } }')
    w = load_scene(scene(tmp_path, body, ground=False))
    i = w.body_names.index("tet")
    assert w.body_mass[i] == pytest.approx(500.0 * a * b * c / 6.0, rel=1e-12)
    np.testing.assert_allclose(w.body_pos[i], [a / 4, b / 4, c / 4], atol=1e-12)


def test_inside_out_mesh_is_turned_and_keeps_its_mass(tmp_path):
    box = trimesh.creation.box(extents=(A, B, C))
    mesh = Mesh(box.vertices, box.faces[:, ::-1])     # every face wound inwards
    assert mesh.closed and mesh.volume() == pytest.approx(A * B * C, rel=1e-12)


def test_open_mesh_weighs_as_its_hull_and_the_loader_warns(tmp_path):
    box = trimesh.creation.box(extents=(A, B, C))
    trimesh.Trimesh(box.vertices, box.faces[:-2]).export(tmp_path / "open.stl")  # a lid off
    assert not Mesh.from_file(tmp_path / "open.stl").closed
    path = scene(tmp_path, '{ name = "open", density = 1000.0, '
                           'shape = { type = "mesh", file = "open.stl" } }')
    with pytest.warns(MeshWarning, match='"open" \\(open.stl\\)'):
        w = load_scene(path)
    assert w.body_mass[w.body_names.index("open")] == pytest.approx(RHO * A * B * C, rel=1e-9)


def test_open_mesh_with_a_given_inertia_does_not_warn(tmp_path):
    box = trimesh.creation.box(extents=(A, B, C))
    trimesh.Trimesh(box.vertices, box.faces[:-2]).export(tmp_path / "open.stl")
    path = scene(tmp_path, '{ name = "open", mass = 2.0, inertia = [0.1, 0.1, 0.1], '
                           'shape = { type = "mesh", file = "open.stl" } }')
    with warnings.catch_warnings():
        warnings.simplefilter("error", MeshWarning)
        load_scene(path)


def test_non_uniform_scale_stretches_each_axis(tmp_path):
    box_file(tmp_path / "cube.stl", extents=(1.0, 1.0, 1.0))
    mesh = Mesh.from_file(tmp_path / "cube.stl", scale=(A, B, C))
    assert mesh.volume() == pytest.approx(A * B * C, rel=1e-12)
    np.testing.assert_allclose(mesh.unit_inertia(), box_inertia(1.0, A, B, C), rtol=1e-9)


# ---- contact -----------------------------------------------------------------------------------

def test_mesh_box_dropped_on_the_ground_rests_on_its_bottom_face(tmp_path):
    # the file's frame has its origin on the middle of the box's bottom face
    box_file(tmp_path / "box.stl", offset=(0.0, 0.0, C / 2))
    path = scene(tmp_path, '{ name = "box", density = 1000.0, pos = [0.0, 0.0, 0.1], '
                           'shape = { type = "mesh", file = "box.stl" } }')
    w = load_scene(path)
    w.step(150)
    pos, quat = w.body_reference_pose("box")
    assert abs(pos[2]) < 2e-3                        # the bottom face on z = 0
    i = w.body_names.index("box")
    assert w.body_pos[i][2] == pytest.approx(C / 2, abs=2e-3)
    np.testing.assert_allclose(quat_to_matrix(quat)[:, 2], [0.0, 0.0, 1.0], atol=1e-6)
    assert np.linalg.norm(w.body_vel[i]) < 1e-2


# ---- errors ------------------------------------------------------------------------------------

def test_missing_mesh_file_is_one_error_naming_it(tmp_path):
    path = scene(tmp_path, '{ name = "m", density = 1.0, '
                           'shape = { type = "mesh", file = "nowhere.stl" } }')
    with pytest.raises(SceneError) as err:
        load_scene(path)
    message = str(err.value)
    assert "nowhere.stl" in message and 'bodies[1] "m"' in message and "\n" not in message


def test_unreadable_mesh_file_is_one_error_naming_it(tmp_path):
    (tmp_path / "junk.stl").write_bytes(b"\x00\x01 not a mesh at all" * 3)
    path = scene(tmp_path, '{ name = "m", density = 1.0, '
                           'shape = { type = "mesh", file = "junk.stl" } }')
    with pytest.raises(SceneError, match=r'bodies\[1\] "m": field "shape.file": mesh file '
                                         r'.*junk.stl'):
        load_scene(path)


def test_compressed_and_special_mesh_files_are_refused(tmp_path):
    (tmp_path / "m.stl.gz").write_bytes(b"x")
    with pytest.raises(ValueError, match="mesh file .*m.stl.gz: compressed"):
        Mesh.from_file(tmp_path / "m.stl.gz")
    with pytest.raises(ValueError, match="mesh file .*: not a regular file"):
        Mesh.from_file(tmp_path)


def test_face_naming_a_missing_vertex_is_an_error(tmp_path):
    body = ('{ name = "t", density = 1.0, shape = { type = "mesh", vertices = [[0.0, 0.0, 0.0], '
            '[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], faces = [[0, 1, 4]] } }')
    with pytest.raises(SceneError, match='field "shape.faces": a face names vertex 4'):
        load_scene(scene(tmp_path, body))


# ---- drawing -----------------------------------------------------------------------------------

def test_a_mesh_is_drawn_with_its_own_triangles_a_hull_with_the_hulls(tmp_path):
    torus = trimesh.creation.torus(major_radius=0.3, minor_radius=0.05)
    mesh = Mesh(torus.vertices, torus.faces)
    rows = hull_mesh(mesh)
    assert rows.shape == (3 * len(mesh.mesh_faces), 6)
    np.testing.assert_allclose(rows[:, :3], mesh.mesh_vertices[mesh.mesh_faces].reshape(-1, 3),
                               atol=1e-6)
    assert len(hull_mesh(Hull(torus.vertices))) != len(rows)
    np.testing.assert_allclose(np.linalg.norm(rows[:, 3:], axis=1), 1.0, atol=1e-5)


def test_screenshot_of_a_ring_mesh_shows_its_hole(tmp_path):
    # a flat ring seen from the default camera: drawn as its hull it would fill its hole;
    # its own triangles leave about (0.27/0.33)^2 = 67 % of the hull's disc uncovered
    trimesh.creation.torus(major_radius=0.3, minor_radius=0.03).export(tmp_path / "ring.stl")
    counts = {}
    for kind in ("mesh", "hull"):
        path = scene(tmp_path, f'{{ name = "ring", kind = "static", pos = [0.0, 0.0, 0.3], '
                               f'shape = {{ type = "{kind}", file = "ring.stl" }} }}',
                     ground=False)
        out = tmp_path / f"{kind}.png"
        result = sharnir(str(path), "--screenshot", str(out), "--frames", "1",
                         "--size", "320x240")
        assert result.returncode == 0, result.stderr
        hsv = np.array([colorsys.rgb_to_hsv(*p) for p in read_png(out).reshape(-1, 3) / 255.0])
        hue = colorsys.rgb_to_hsv(*body_colour(1))[0]
        gap = np.abs((hsv[:, 0] - hue + 0.5) % 1.0 - 0.5)
        counts[kind] = int(np.sum((hsv[:, 1] > 0.3) & (gap < 0.02)))
    assert counts["mesh"] > 500
    assert counts["mesh"] < 0.8 * counts["hull"]
