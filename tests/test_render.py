"""The renderer: camera framing and instance data in-process, screenshots through the CLI.

Screenshots run `sharnir SCENE --screenshot` in a subprocess with PYGLET_HEADLESS=1, so the
EGL context never touches the test process.  PNGs are decoded here with zlib alone.
"""
import math
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from sharnir.physics.shape import Box, Capsule, Cylinder, Ellipsoid, Plane, Sphere
from sharnir.render.camera import OrbitCamera
from sharnir.render.instances import body_colour, body_instances, scene_bounds
from sharnir.scenes import SCENE_DIR

SIZE = (320, 240)


def read_png(path):
    """(height, width, 3) uint8 pixels of an 8-bit RGB or RGBA PNG, top row first."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], np.frombuffer(line[1:], dtype=np.uint8).astype(np.int32)
        cur = np.zeros(stride, dtype=np.int32)
        for x in range(stride):
            left = cur[x - channels] if x >= channels else 0
            up, up_left = prev[x], (prev[x - channels] if x >= channels else 0)
            if kind == 0:
                base = 0
            elif kind == 1:
                base = left
            elif kind == 2:
                base = up
            elif kind == 3:
                base = (left + up) // 2
            else:  # Paeth
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                base = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
            cur[x] = (row[x] + base) & 0xFF
        out[y], prev = cur, cur
    return out.reshape(height, width, channels)[:, :, :3].astype(np.uint8)


def sharnir(*args, env=None):
    full_env = {**os.environ, "PYGLET_HEADLESS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "sharnir", *args], capture_output=True, text=True,
                          env=full_env, timeout=1200)


# ---- screenshots ------------------------------------------------------------------------------

@pytest.mark.parametrize("scene", sorted(p.stem for p in SCENE_DIR.glob("*.toml")))
def test_screenshot_of_a_shipped_scene_shows_bodies_and_grid(scene, tmp_path):
    out = tmp_path / "shots" / f"{scene}.png"
    result = sharnir(str(SCENE_DIR / f"{scene}.toml"), "--screenshot", str(out), "--frames", "2",
                     "--size", f"{SIZE[0]}x{SIZE[1]}")
    assert result.returncode == 0, result.stderr
    pixels = read_png(out)
    assert pixels.shape == (SIZE[1], SIZE[0], 3)
    background = pixels[0, 0]
    differs = np.any(pixels != background, axis=2)
    assert differs.mean() > 0.01, "almost everything is background"
    colours = {tuple(p) for p in pixels.reshape(-1, 3)}
    assert len(colours) > 50, "too few colours for lit bodies over a grid"
    # Lit bodies are saturated (the palette); the background and grid are greys.
    rgb = pixels.astype(int)
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) > 60
    assert saturated.sum() > 30, "no body colours in the picture"


def test_frames_without_screenshot_is_an_error(tmp_path):
    result = sharnir(str(SCENE_DIR / "door.toml"), "--frames", "3")
    assert result.returncode == 2
    assert result.stderr.strip() == "sharnir: error: --frames only applies with --screenshot"


def test_bad_frames_and_size_exit_with_status_2(tmp_path):
    out = str(tmp_path / "x.png")
    for extra in (["--frames", "-1"], ["--size", "0x10"], ["--size", "big"]):
        result = sharnir(str(SCENE_DIR / "door.toml"), "--screenshot", out, *extra)
        assert result.returncode == 2, extra
        assert not (tmp_path / "x.png").exists()


def test_missing_egl_is_one_clear_error(tmp_path):
    # glvnd finds no EGL driver when pointed at a vendor file that does not exist.
    result = sharnir(str(SCENE_DIR / "door.toml"), "--screenshot", str(tmp_path / "x.png"),
                     env={"__EGL_VENDOR_LIBRARY_FILENAMES": str(tmp_path / "none.json")})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sharnir: error: ")
    assert "EGL" in lines[0] and "libegl" in lines[0]
    assert "Traceback" not in result.stderr


def test_unwritable_screenshot_is_an_error(tmp_path):
    (tmp_path / "file").write_text("")
    result = sharnir(str(SCENE_DIR / "door.toml"), "--screenshot", str(tmp_path / "file" / "x.png"))
    assert result.returncode == 2
    assert result.stderr.startswith("sharnir: error: cannot write")


# ---- camera and instances (no GL) -------------------------------------------------------------

@pytest.mark.parametrize("aspect", [0.5, 4 / 3, 3.0])
@pytest.mark.parametrize("yaw,pitch", [(-1.0, 0.4), (2.0, 1.2), (0.3, -0.2)])
def test_frame_puts_every_corner_of_the_bounds_in_view(aspect, yaw, pitch):
    lo, hi = np.array([-1.0, 2.0, 0.0]), np.array([4.0, 3.0, 0.5])
    camera = OrbitCamera(yaw=yaw, pitch=pitch)
    camera.frame((lo, hi), aspect=aspect)
    vp = camera.view_projection(aspect)
    ndc = []
    corners = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    for corner in corners:
        clip = vp @ np.array([*corner, 1.0])
        assert clip[3] > 0
        ndc.append(clip[:3] / clip[3])
    ndc = np.abs(np.array(ndc))
    assert ndc[:, :2].max() <= 1.0 + 1e-9
    assert ndc[:, :2].max() > 0.8  # and tightly: the box fills most of the picture
    assert ndc[:, 2].max() < 1.0   # between the near and far planes


def test_camera_is_z_up_and_orbits_the_target():
    camera = OrbitCamera(target=(1.0, 2.0, 3.0), distance=4.0, yaw=0.0, pitch=math.pi / 2 - 0.1)
    assert np.linalg.norm(camera.eye - camera.target) == pytest.approx(4.0)
    assert camera.eye[2] > camera.target[2]
    view = camera.view()
    assert view[1, 2] > 0  # the camera's up has a positive world z


def test_each_shape_kind_becomes_its_instances():
    shapes = [None, Box((1.0, 2.0, 3.0)), Sphere(0.5), Capsule(0.1, 0.4), Cylinder(0.2, 0.3),
              Ellipsoid((0.1, 0.2, 0.3)), Plane()]
    n = len(shapes)
    pos = np.arange(3 * n, dtype=float).reshape(n, 3)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    rows = body_instances(pos, quat, shapes)
    # sphere, 2 capsule caps, ellipsoid are spheres; capsule body and cylinder are cylinders
    assert {name: len(r) for name, r in rows.items()} == {"box": 1, "sphere": 4, "cylinder": 2,
                                                          "plane": 1}
    box = rows["box"][0]
    model = box[:16].reshape(4, 4).T  # column-major
    np.testing.assert_allclose(np.diag(model)[:3], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(model[:3, 3], pos[1])
    np.testing.assert_allclose(box[16:], body_colour(1), rtol=1e-6)
    caps = sorted(r[12 + 2] for r in rows["sphere"][1:3])  # z of the two capsule caps
    np.testing.assert_allclose(caps, [pos[3, 2] - 0.4, pos[3, 2] + 0.4], rtol=1e-6)


def test_palette_is_deterministic_and_neighbours_differ():
    colours = [body_colour(i) for i in range(12)]
    assert colours == [body_colour(i) for i in range(12)]
    for a, b in zip(colours, colours[1:]):
        assert np.abs(np.subtract(a, b)).max() > 0.15


def test_bounds_follow_rotation():
    quarter_about_y = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)
    lo, hi = scene_bounds([[0.0, 0.0, 1.0]], [quarter_about_y], [Capsule(0.01, 0.04)])
    np.testing.assert_allclose(lo, [-0.05, -0.01, 0.99], atol=1e-12)
    np.testing.assert_allclose(hi, [0.05, 0.01, 1.01], atol=1e-12)


def test_the_draw_table_gives_each_piece_its_pose_times_its_mesh_scale():
    """DrawTable's vectorised rows equal, piece by piece, the model matrix T R S worked out
    one body at a time, for every shape kind (a capsule is a cylinder and two end spheres, a
    plane a slab below its surface, a compound its parts, a hull its own mesh)."""
    from sharnir.physics.shape import (
        Box,
        Capsule,
        Compound,
        Cylinder,
        Ellipsoid,
        Hull,
        Plane,
        Sphere,
    )
    from sharnir.render.instances import (
        PLANE_HALF,
        PLANE_THICKNESS,
        DrawTable,
        _model,
        pieces,
        rotation_matrices,
    )

    hull = Hull([(0, 0, 0), (0.3, 0, 0), (0, 0.2, 0), (0, 0, 0.4), (0.2, 0.2, 0.2)])
    part_a, part_b = Box((0.1, 0.2, 0.3)), Sphere(0.15)
    compound = Compound([(part_a, (0.2, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)),
                         (part_b, (-0.3, 0.1, 0.0), (1.0, 0.0, 0.0, 0.0))])
    shapes = [None, Box((0.1, 0.2, 0.3)), Sphere(0.2), Ellipsoid((0.1, 0.2, 0.3)),
              Cylinder(0.1, 0.4), Capsule(0.05, 0.2), Plane(), hull, compound]
    rng = np.random.default_rng(7)
    pos = rng.normal(size=(len(shapes), 3))
    quat = rng.normal(size=(len(shapes), 4))
    rows = DrawTable(shapes).instances(pos, quat)
    rots = rotation_matrices(quat)
    expected = {}
    for i, shape in enumerate(shapes):
        if shape is None:
            continue
        for leaf, p, R in pieces(shape, pos[i], rots[i]):
            a, b, c = leaf.size
            kind = type(leaf).__name__
            parts = {"Box": [("box", p, (a, b, c))], "Sphere": [("sphere", p, (a, a, a))],
                     "Ellipsoid": [("sphere", p, (a, b, c))],
                     "Cylinder": [("cylinder", p, (a, a, b))],
                     "Capsule": [("cylinder", p, (a, a, b)), ("sphere", p + R[:, 2] * b, (a,) * 3),
                                 ("sphere", p - R[:, 2] * b, (a,) * 3)],
                     "Plane": [("plane", p - R[:, 2] * (0.5 * PLANE_THICKNESS + 2e-3),
                                (PLANE_HALF, PLANE_HALF, 0.5 * PLANE_THICKNESS))],
                     "Hull": [(leaf, p, (1.0, 1.0, 1.0))]}[kind]
            for key, centre, scale in parts:
                expected.setdefault(key, []).append(_model(centre, R, scale))
    assert set(expected) <= set(rows)
    for key, mats in expected.items():
        np.testing.assert_allclose(rows[key][:, :16], np.array(mats), atol=1e-6)
    assert all(len(rows[key]) == 0 for key in rows if key not in expected)


def test_the_window_reads_the_physics_only_through_snapshots():
    """The window and panel never reach into the physics thread's private state (its world):
    what they draw and show comes from the published snapshots."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    for name in ("app/window.py", "app/panel.py", "app/panel_state.py", "app/framing.py",
                 "app/drag.py"):
        text = (repo / name).read_text()
        assert not re.search(r"thread\._|\._world\b|_world\b\"", text), name


def test_render_draws_arrays_and_loads_no_scene():
    """No module of `render` imports the World, the scenes or the app: it draws the arrays
    it is given (app/screenshot.py loads and steps a scene for `--screenshot`)."""
    import ast
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    for path in sorted((repo / "render").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):   # relative ones resolved from render
                base = ["sharnir", "render"][:2 - node.level + 1] if node.level else []
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                continue
            for name in names:
                assert not name.startswith(("sharnir.physics.world", "sharnir.scenes",
                                            "sharnir.app")), f"{path.name} imports {name}"


def test_a_ground_plane_seen_from_below_is_left_out_so_it_hides_nothing():
    # an orbit under the floor showed only the overlays: the slab hid every body above it
    from sharnir.render.instances import DrawTable, planes_seen_from_above
    table = DrawTable([Plane(), Box((0.1, 0.1, 0.1))])
    quat = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0]])
    rows = table.instances(np.array([[0.0, 0, 0], [0.0, 0, 1.0]]), quat)["plane"]
    assert len(rows) == 1
    assert len(planes_seen_from_above(rows, (3.0, 1.0, 2.0))) == 1     # above: drawn
    assert len(planes_seen_from_above(rows, (3.0, 1.0, -0.5))) == 0    # below: left out
    # a plane tilted 90 degrees about x (its top facing -y) is judged by its own normal
    half = math.sqrt(0.5)
    tilted = DrawTable([Plane()]).instances(np.zeros((1, 3)), np.array([[half, half, 0, 0]]))
    assert len(planes_seen_from_above(tilted["plane"], (0.0, -2.0, 5.0))) == 1
    assert len(planes_seen_from_above(tilted["plane"], (0.0, 2.0, 5.0))) == 0


def test_the_selected_body_is_drawn_brightened_and_only_it():
    """The highlight pulls the selected body's pieces' colour toward HIGHLIGHT (its share
    HIGHLIGHT_SHARE); every other row, and every matrix, stays as it was."""
    from sharnir.physics import Box, Sphere
    from sharnir.render.instances import HIGHLIGHT, HIGHLIGHT_SHARE, DrawTable

    table = DrawTable([None, Box((0.1, 0.2, 0.3)), Sphere(0.2), Box((0.3, 0.1, 0.1))])
    pos = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (4, 1))
    plain, lit = table.instances(pos, quat), table.instances(pos, quat, highlight=2)
    sphere_rows = table.groups["sphere"]
    assert len(sphere_rows) == 1
    np.testing.assert_allclose(lit["sphere"][:, 16:19],
                               (1 - HIGHLIGHT_SHARE) * plain["sphere"][:, 16:19]
                               + HIGHLIGHT_SHARE * np.array(HIGHLIGHT), atol=1e-6)
    np.testing.assert_array_equal(lit["sphere"][:, :16], plain["sphere"][:, :16])
    np.testing.assert_array_equal(lit["box"], plain["box"])
