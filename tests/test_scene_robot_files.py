"""Robot files as they ship (issue 28): Collada meshes in their own units, mirrored meshes,
inertias rounded in the file, all zero or unphysical, repaired with a warning naming the link
(an error under --strict). Every expected number is worked out here from the geometry."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh

from sharnir.physics.shape import Mesh
from sharnir.scenes import SceneError, read_scene
from sharnir.scenes.urdf import UrdfWarning, read_urdf


def write(folder, text, name="robot.urdf"):
    path = Path(folder) / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="test">\n{text}\n</robot>\n')
    return path


def link(name, inertia, mass=2.0, geometry=""):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/>'
            f'<inertia {inertia}/></inertial>{geometry}</link>')


def read(path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = read_urdf(path, fixed_base=False, **options)
    notes = [str(w.message) for w in caught if issubclass(w.category, UrdfWarning)]
    return raw, notes


def moments(raw, name):
    body = next(b for b in raw["bodies"] if b["name"] == name)
    return np.sort(np.asarray(body["inertia"], dtype=float))


# --- inertias -------------------------------------------------------------------------------

def test_an_inertia_off_by_the_rounding_of_its_digits_loads_without_a_word(tmp_path):
    """ixx = iyy = 9e-8, ixy = 9.4e-8, izz = 18e-8 as written to the 1e-8 (rounding 5e-9 an
    entry): principal moments -0.4e-8, 18e-8, 18.4e-8, a tensor no body has, but only by
    the rounding of the digits. It is taken to the nearest valid one without a warning: the
    negative moment to 0, then the largest (over the sum of the others by 0.4e-8) moved
    with them by 0.4e-8 / 3."""
    path = write(tmp_path, link("a", 'ixx="0.00000009" iyy="0.00000009" izz="0.00000018" '
                                'ixy="0.000000094" ixz="0" iyz="0"', mass=0.001))
    raw, notes = read(path)
    assert notes == []
    t = 0.4e-8 / 3
    np.testing.assert_allclose(moments(raw, "a"), [t, 18e-8 + t, 18.4e-8 - t], rtol=1e-6)


def test_an_unphysical_inertia_is_repaired_to_the_nearest_one_and_named(tmp_path):
    """Principal moments (-0.021, 0.052, 0.099) as met in a real file: the negative one goes
    to 0, then the largest is over the sum of the others by 0.047: each of the two smaller
    gains 0.047/3 and the largest loses it (the nearest point on the face c = a + b)."""
    path = write(tmp_path, link("thigh", 'ixx="-0.021" iyy="0.052" izz="0.099" ixy="0" '
                                'ixz="0" iyz="0"'))
    raw, notes = read(path)
    t = 0.047 / 3
    np.testing.assert_allclose(moments(raw, "thigh"), [t, 0.052 + t, 0.099 - t], rtol=1e-12)
    assert len(notes) == 1 and '"thigh"' in notes[0] and "repaired" in notes[0]
    with pytest.raises(SceneError, match=r'line 3: link "thigh" <inertial> <inertia>: is not a '
                                         r"physical inertia .*--strict"):
        read_urdf(path, fixed_base=False, strict=True)


def test_a_principal_moment_over_the_sum_of_the_others_is_repaired_too(tmp_path):
    path = write(tmp_path, link("rod", 'ixx="0.01" iyy="0.01" izz="0.05" ixy="0" ixz="0" '
                                'iyz="0"'))
    raw, notes = read(path)
    t = 0.03 / 3
    np.testing.assert_allclose(moments(raw, "rod"), [0.01 + t, 0.01 + t, 0.05 - t])
    assert len(notes) == 1 and '"rod"' in notes[0]


def test_a_mass_with_an_all_zero_inertia_takes_the_inertia_of_its_collision_box(tmp_path):
    """A 0.2 x 0.4 x 0.6 m box of 2 kg: m (b^2 + c^2) / 12 and so on, about its centre; the
    file's centre of mass (origin) is kept, here the box's own."""
    box = ('<collision><geometry><box size="0.2 0.4 0.6"/></geometry></collision>')
    path = write(tmp_path, link("crate", 'ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"',
                                geometry=box))
    raw, notes = read(path)
    m = 2.0
    want = sorted([m * (0.4**2 + 0.6**2) / 12, m * (0.2**2 + 0.6**2) / 12,
                   m * (0.2**2 + 0.4**2) / 12])
    np.testing.assert_allclose(moments(raw, "crate"), want, rtol=1e-9)
    assert len(notes) == 1 and "collision geometry" in notes[0] and '"crate"' in notes[0]
    with pytest.raises(SceneError, match=r'link "crate" <inertial>: has mass 2 and no inertia'):
        read_urdf(path, fixed_base=False, strict=True)


def test_a_rod_inertia_on_a_box_link_takes_the_inertia_of_its_box(tmp_path):
    """pybullet_data's biped2d: a 70 kg torso, a 0.1 x 0.1 x 0.48 m box, written with the
    principal moments (0, 0.2504, 0.2504) of a rod of no thickness. Raised to the floor
    (70 kg x 1 mm^2) the torso turned 3,500 times faster about one axis than the others and
    its joints opened; its box's moments are m (b^2 + c^2) / 12 and so on, as PyBullet's
    loadURDF computes by default."""
    box = '<collision><geometry><box size="0.1 0.1 0.48"/></geometry></collision>'
    path = write(tmp_path, link("torso", 'ixx="0.2404" ixy="-0.01" ixz="-0.048" iyy="0.2404" '
                                'iyz="-0.048" izz="0.02"', mass=70.0, geometry=box))
    raw, notes = read(path)
    m = 70.0
    want = sorted([m * (0.1**2 + 0.1**2) / 12, m * (0.1**2 + 0.48**2) / 12,
                   m * (0.1**2 + 0.48**2) / 12])
    np.testing.assert_allclose(moments(raw, "torso"), want, rtol=1e-9)
    assert len(notes) == 1 and "collision geometry" in notes[0] and '"torso"' in notes[0]
    assert "principal moment of zero" in notes[0]


def test_a_thin_link_whose_geometry_is_thin_too_keeps_the_files_inertia(tmp_path):
    """A needle of 1 mm radius: the file's moments (about 0, m L^2 / 12, m L^2 / 12) match its
    geometry, whose smallest moment is below the floor as well: no geometry inertia."""
    needle = ('<collision><geometry><cylinder radius="0.0005" length="0.5"/></geometry>'
              '</collision>')
    m, L = 0.1, 0.5
    rod = m * L * L / 12
    path = write(tmp_path, link("needle", f'ixx="{rod}" iyy="{rod}" izz="0" ixy="0" ixz="0" '
                                'iyz="0"', mass=m, geometry=needle))
    raw, notes = read(path)
    assert sorted(moments(raw, "needle"))[1:] == pytest.approx([rod, rod], rel=1e-9)
    assert not any("collision geometry" in n for n in notes)


def test_strict_on_the_command_line_refuses_what_would_be_repaired(tmp_path):
    path = write(tmp_path, link("thigh", 'ixx="-0.021" iyy="0.052" izz="0.099" ixy="0" '
                                'ixz="0" iyz="0"'))
    cli = [sys.executable, "-m", "sharnir", "run", str(path), "--duration", "0.01"]
    strict = subprocess.run(cli + ["--strict"], capture_output=True, text=True, timeout=300)
    assert strict.returncode == 2
    assert strict.stderr.count("\n") == 1 and "--strict" in strict.stderr
    loose = subprocess.run(cli + ["--json"], capture_output=True, text=True, timeout=300)
    assert loose.returncode == 0, loose.stderr
    assert json.loads(loose.stdout.splitlines()[-1])["steps"] >= 1


# --- meshes ---------------------------------------------------------------------------------

def _wedge():
    """A closed, chiral wedge: no mirror plane through the axes, so a mirror image differs."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3], [0.5, 0.2, 0.1]], dtype=float)
    return trimesh.convex.convex_hull(v)


def test_a_mirrored_mesh_is_the_reflection_with_its_normals_outward(tmp_path):
    _wedge().export(tmp_path / "wedge.stl")
    plain = Mesh.from_file(tmp_path / "wedge.stl")
    mirrored = Mesh.from_file(tmp_path / "wedge.stl", scale=(1.0, -1.0, 1.0))
    assert mirrored.volume() == pytest.approx(plain.volume(), rel=1e-12)
    np.testing.assert_allclose(np.sort(mirrored.unit_inertia()), np.sort(plain.unit_inertia()),
                               rtol=1e-9)
    # the hull's corners are the plain ones reflected (both in their own body frames: compare
    # the corner sets in the file's frame)
    corner = lambda m: m.frame_pos + m.vertices @ m.frame_rot.T
    got = {tuple(np.round(p, 9)) for p in corner(mirrored)}
    want = {tuple(np.round(p * [1, -1, 1], 9)) for p in corner(plain)}
    assert got == want
    # drawn outward: the surface's signed volume is positive
    surface = trimesh.Trimesh(*mirrored.surface(), process=False)
    assert surface.volume > 0.0


def test_a_urdf_mesh_mirrored_by_its_scale_loads_and_zero_is_refused(tmp_path):
    _wedge().export(tmp_path / "wedge.stl")
    geometry = ('<collision><geometry><mesh filename="wedge.stl" scale="1 -1 1"/>'
                '</geometry></collision>')
    raw, _ = read(write(tmp_path, link("left", 'ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
                                       'iyz="0"', geometry=geometry)))
    part = next(b for b in raw["bodies"] if b["name"] == "left")["shape"]["parts"][0]["shape"]
    assert part["scale"] == [1.0, -1.0, 1.0]
    zero = geometry.replace('scale="1 -1 1"', 'scale="1 0 1"')
    with pytest.raises(SceneError, match=r"<mesh scale>: must not be zero"):
        read_urdf(write(tmp_path, link("left", 'ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
                                       'iyz="0"', geometry=zero), "zero.urdf"))


def test_a_collada_mesh_in_millimetres_is_read_in_metres(tmp_path):
    """A Collada (.dae) box written in mm (<unit meter="0.001">) of 100 x 200 x 300: the body
    is 0.1 x 0.2 x 0.3 m, its hull's volume 0.006 m^3."""
    box = trimesh.creation.box((100.0, 200.0, 300.0))
    text = trimesh.exchange.dae.export_collada(box).decode()
    assert "<asset>" in text
    (tmp_path / "box.dae").write_text(
        text.replace("<asset>", '<asset><unit meter="0.001" name="millimeter"/>', 1))
    mesh = Mesh.from_file(tmp_path / "box.dae")
    assert mesh.volume() == pytest.approx(0.006, rel=1e-6)
    geometry = ('<visual><geometry><mesh filename="box.dae"/></geometry></visual>'
                '<collision><geometry><mesh filename="box.dae"/></geometry></collision>')
    spec = read_scene(write(tmp_path, link("case", 'ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
                                           'iyz="0"', geometry=geometry)))
    assert [b.name for b in spec.bodies] == ["ground", "case"]   # (opened: on a ground)


def test_the_app_and_run_read_strict_only_where_asked(tmp_path):
    """The loader's default is the forgiving one (as MuJoCo's and PyBullet's)."""
    path = write(tmp_path, link("thigh", 'ixx="-0.021" iyy="0.052" izz="0.099" ixy="0" '
                                'ixz="0" iyz="0"'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        assert read_scene(path).bodies[1].name == "thigh"   # (after the ground)
    with pytest.raises(SceneError):
        read_scene(path, strict=True)
    assert os.path.isfile(path)


def test_a_repair_is_one_warning_line_naming_the_file_and_the_link(tmp_path):
    """As the errors read: `sharnir: warning: FILE: ... "LINK" ...`, no Python source line."""
    path = write(tmp_path, link("thigh", 'ixx="-0.021" iyy="0.052" izz="0.099" ixy="0" '
                                'ixz="0" iyz="0"'))
    done = subprocess.run([sys.executable, "-m", "sharnir", "run", str(path), "--duration",
                           "0.01"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [x for x in done.stderr.splitlines() if "warning" in x]
    assert len(lines) == 1
    assert lines[0].startswith(f"sharnir: warning: {path}: ") and '"thigh"' in lines[0]
    assert "warnings.warn" not in done.stderr and "UrdfWarning" not in done.stderr


def _sphere_mesh(subdivisions):
    return trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.1)


def test_a_visual_mesh_of_160000_vertices_is_drawn_whole_and_never_refused(tmp_path):
    """An icosphere of 163,842 vertices as a URDF visual: loads, and the drawn triangles are
    all of the file's (a visual is never hulled for drawing)."""
    big = _sphere_mesh(7)
    assert len(big.vertices) > 150_000
    big.export(tmp_path / "big.stl")
    geometry = ('<visual><geometry><mesh filename="big.stl"/></geometry></visual>'
                '<collision><geometry><sphere radius="0.1"/></geometry></collision>')
    from sharnir.scenes import load_scene
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        world = load_scene(write(tmp_path, link("ball", 'ixx="0.004" iyy="0.004" '
                                                'izz="0.004" ixy="0" ixz="0" iyz="0"',
                                                geometry=geometry)))
    (visual, _, _, _), = world.body_visuals[world.body_names.index("ball")]
    assert len(visual.surface()[1]) == len(big.faces)


def test_a_collision_mesh_over_the_corner_cap_is_thinned_with_a_note_and_stays_inside(
        tmp_path):
    """A sphere mesh of 40,962 vertices, all on its hull, as a collision mesh: the hull keeps
    at most MAX_HULL_VERTICES corners, all of them the file's, its volume within a few
    percent of the sphere's, and the loader says it was thinned."""
    from sharnir.physics.shape import MAX_HULL_VERTICES
    from sharnir.scenes import load_scene
    dense = _sphere_mesh(6)
    dense.export(tmp_path / "dense.stl")
    mesh = Mesh.from_file(tmp_path / "dense.stl")
    assert mesh.thinned[0] == len(dense.vertices) and mesh.thinned[1] <= MAX_HULL_VERTICES
    corners = mesh.frame_pos + mesh.vertices @ mesh.frame_rot.T
    np.testing.assert_allclose(np.linalg.norm(corners, axis=1), 0.1, rtol=1e-6)
    assert 0.97 * (4 / 3) * np.pi * 0.1**3 < mesh.volume() <= (4 / 3) * np.pi * 0.1**3
    geometry = '<collision><geometry><mesh filename="dense.stl"/></geometry></collision>'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_scene(write(tmp_path, link("ball", 'ixx="0.004" iyy="0.004" izz="0.004" '
                                        'ixy="0" ixz="0" iyz="0"', geometry=geometry)))
    notes = [str(w.message) for w in caught if "thinned" in str(w.message)]
    assert len(notes) == 1 and "dense.stl (40962 ->" in notes[0]


LENIENT = """
<link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
  ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  <collision><geometry><cylinder radius="0.05" length="0"/></geometry></collision>
  <visual><geometry><sphere radius="0.0"/></geometry></visual>
</link>
<link name="slider"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
  ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
<joint name="x_to_world" type="prismatic"><parent link="base"/><child link="slider"/>
  <origin xyz="0.07, 0, -0.03"/><axis xyz="1 0 0"/>
  <limit lower="1" upper="-1" effort="0" velocity="0"/></joint>
"""


def test_what_pybullet_reads_in_its_own_files_loads_with_one_warning(tmp_path):
    """pybullet_data writes lower 1, upper -1 for a joint without limits, radius 0 for a
    visual it does not draw, a cylinder of length 0, and numbers with commas; PyBullet
    loads them, and so does Sharnir, each named in the one warning; --strict refuses."""
    path = write(tmp_path, LENIENT)
    raw, notes = read(path)
    [note] = notes
    assert "read as no limits" in note and '"x_to_world"' in note
    assert "shapes of zero size (left out)" in note and "<cylinder length>" in note
    assert "<sphere radius>" in note
    base = next(b for b in raw["bodies"] if b["name"] == "base")
    assert len(base["shape"]["parts"]) == 1 and "visuals" not in base
    [joint] = [j for j in raw["joints"] if j["name"] == "x_to_world"]
    assert "limits" not in joint
    assert joint["anchor"] == pytest.approx([0.07, 0.0, -0.03])
    with pytest.raises(SceneError, match="<cylinder length>: must be positive"):
        read_urdf(path, fixed_base=False, strict=True)
    sized = LENIENT.replace('length="0"', 'length="0.1"').replace('radius="0.0"',
                                                                   'radius="0.1"')
    with pytest.raises(SceneError, match="lower must not exceed upper"):
        read_urdf(write(tmp_path, sized, "r2.urdf"), strict=True)
