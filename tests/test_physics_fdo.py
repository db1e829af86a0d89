"""Functionally defined objects (physics/fdo.py, paper 001 eqs. (1), (2)): mass properties
against closed forms, refused functions, and contacts that reduce to the ellipsoid's when the
perturbations vanish."""
import math

import numpy as np
import pytest

from sharnir.physics import fdo
from sharnir.physics.convex import convex_contact
from sharnir.physics.manifold import collide
from sharnir.physics.shape import (
    BOX,
    CAPSULE,
    CYLINDER,
    ELLIPSOID,
    FDO,
    PLANE,
    Ellipsoid,
    Plane,
    quat_matrix,
)
from sharnir.physics.world import World

AXES = np.array([0.3, 0.2, 0.1])
Q = np.array([0.9, 0.2, -0.3, 0.25]) / np.linalg.norm([0.9, 0.2, -0.3, 0.25])
BUMPY = dict(semi_axes=(0.1, 0.08, 0.06), perturbations=[
    dict(weight=0.8, centre=(0.08, 0.0, 0.03), semi_axes=(0.05, 0.05, 0.05)),
    dict(weight=-2.0, centre=(0.0, 0.0, -0.07), semi_axes=(0.05, 0.04, 0.03))])


def _out():
    return np.zeros((4, 3)), np.zeros(4), np.zeros(3), np.zeros(4, np.int64)


def test_sphere_and_ellipsoid_mass_properties_match_closed_forms():
    s = fdo.Fdo(semi_axes=(1.0, 1.0, 1.0))
    assert s.volume() == pytest.approx(4.0 / 3.0 * math.pi, rel=1e-4)
    assert s.unit_inertia() == pytest.approx([0.4] * 3, rel=1e-4)
    e = fdo.Fdo(semi_axes=AXES)
    a, b, c = AXES
    assert e.volume() == pytest.approx(4.0 / 3.0 * math.pi * a * b * c, rel=1e-4)
    assert e.unit_inertia() == pytest.approx(
        np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0, rel=1e-4)
    assert np.all(e.frame_pos == 0.0)


def test_perturbed_mass_properties_agree_with_a_finer_integration():
    f = fdo.Fdo(**BUMPY)
    v, m1, m2 = fdo._moments(f.rows, 3 * fdo.GRID)
    assert f.volume() == pytest.approx(v, rel=2e-4)
    assert f.frame_pos == pytest.approx(m1 / v, abs=1e-5)
    com = m1 / v
    second = m2 / v - np.outer(com, com)
    assert f.unit_inertia_tensor == pytest.approx(np.trace(second) * np.eye(3) - second,
                                                  rel=1e-3, abs=1e-7)
    assert f.frame_pos[0] > 0.0 and f.frame_pos[2] > 0.0   # the bump's side, off the dent


@pytest.mark.parametrize("kwargs, message", [
    (dict(quadric=[1, 0, 0, 0, -1, -1, 1, 0, 0, 0]), "not bounded"),
    (dict(quadric=[-1, 0, 0, 0, -1, -1, -1, 0, 0, 0]), "empty"),
    (dict(quadric=[1, 0, 0, 0, -1, -1, math.nan, 0, 0, 0]), "NaN or infinite"),
    (dict(semi_axes=(1, 1, 1), perturbations=[dict(weight=1.0, quadric=[1, 0, 0, 0, -1, 0, 0,
                                                                        0, 0, 0])]),
     "unbounded"),
    (dict(semi_axes=(1, 1, 1), perturbations=[dict(weight=-50.0, centre=(0, 0, 0),
                                                   semi_axes=(3, 3, 3))]), "empty"),
    (dict(semi_axes=(1, 1, 1), perturbations=[dict(weight=math.inf, centre=(0, 0, 0),
                                                   semi_axes=(1, 1, 1))]), "weight"),
])
def test_bad_functions_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        fdo.Fdo(**kwargs)
    assert "\n" not in str(info.value)


def test_a_ray_meets_a_sphere_where_the_closed_form_says():
    s = fdo.Fdo(semi_axes=(0.5, 0.5, 0.5))
    hits = s.ray_hits(np.array([2.0, 0.1, 0.0]), np.array([-1.0, 0.0, 0.0]))
    x = math.sqrt(0.25 - 0.01)
    assert hits == pytest.approx([2.0 - x, 2.0 + x], abs=1e-9)


def test_unperturbed_fdo_on_a_plane_is_the_ellipsoid_to_round_off():
    e = fdo.Fdo(semi_axes=AXES)
    hv = np.vstack([e.rows, np.zeros((1, 3))])
    R, pos = quat_matrix(Q), np.array([0.1, 0.2, 0.09])
    mp, md, mn, mf = _out()
    n = fdo.fdo_collide(np.zeros(3), pos, R, 0, len(e.rows), PLANE, np.zeros(3), np.zeros(3),
                        np.eye(3), 0, 0, hv, 0.005, mp, md, mn, mf)
    rp, rd, rn, rf = _out()
    k = collide(PLANE, np.zeros(3), np.zeros(3), np.eye(3), 0, 0, ELLIPSOID, AXES, pos, R, 0,
                0, hv, 0.005, rp, rd, rn, rf)
    assert n == k == 1
    assert md[0] == pytest.approx(rd[0], abs=1e-14)
    assert mp[0] == pytest.approx(rp[0], abs=1e-14)
    assert mn == pytest.approx(-rn, abs=1e-15)


def test_unperturbed_fdo_on_a_box_face_is_the_ellipsoid_to_round_off():
    e = fdo.Fdo(semi_axes=AXES)
    hv = np.vstack([e.rows, np.zeros((1, 3))])
    R, pos = quat_matrix(Q), np.array([0.1, 0.2, 0.058])
    h, P = np.array([1.0, 1.0, 0.2]), np.array([0.05, -0.1, -0.2])
    mp, md, mn, mf = _out()
    n = fdo.fdo_collide(np.zeros(3), pos, R, 0, len(e.rows), BOX, h, P, np.eye(3), 0, 0, hv,
                        0.005, mp, md, mn, mf)
    # ellipsoid_on_face's closed form: the ellipsoid against the face's plane (z = 0)
    rp, rd, rn, rf = _out()
    k = collide(PLANE, np.zeros(3), np.zeros(3), np.eye(3), 0, 0, ELLIPSOID, AXES, pos, R, 0,
                0, hv, 0.005, rp, rd, rn, rf)
    assert n == k == 1
    assert md[0] == pytest.approx(rd[0], abs=1e-14)
    assert mp[0] == pytest.approx(rp[0], abs=1e-14)
    assert mn == pytest.approx(-rn, abs=1e-15)


def test_unperturbed_fdo_pairs_give_the_ellipsoid_pairs_least_translation():
    a, b = fdo.Fdo(semi_axes=AXES), fdo.Fdo(semi_axes=(0.15, 0.25, 0.12))
    hv = np.vstack([a.rows, b.rows])
    R = quat_matrix(Q)
    q2 = np.array([0.3, -0.6, 0.2, 0.7]) / np.linalg.norm([0.3, -0.6, 0.2, 0.7])
    R2, pa, pb = quat_matrix(q2), np.array([0.1, 0.2, 0.09]), np.array([0.25, 0.1, 0.2])
    out = np.zeros(9)
    depth = convex_contact(ELLIPSOID, AXES, pa, R, 0, 0, ELLIPSOID, np.array(b.size) * 0 +
                           (0.15, 0.25, 0.12), pb, R2, 0, 0, hv, np.zeros(3), out)
    for kind, size, start in ((ELLIPSOID, np.array([0.15, 0.25, 0.12]), 0),
                              (FDO, np.zeros(3), len(a.rows))):
        mp, md, mn, mf = _out()
        n = fdo.fdo_collide(np.zeros(3), pa, R, 0, len(a.rows), kind, size, pb, R2, start,
                            len(b.rows), hv, 0.005, mp, md, mn, mf)
        assert n == 1
        assert md[0] == pytest.approx(depth, abs=1e-8)
        assert mn == pytest.approx(out[:3], abs=1e-7)
        assert mp[0] == pytest.approx(0.5 * (out[3:6] + out[6:9]), abs=1e-7)


def test_two_fdo_spheres_overlap_by_the_closed_form():
    s = fdo.Fdo(semi_axes=(0.1, 0.1, 0.1))
    hv = np.vstack([s.rows, s.rows])
    d = np.array([0.12, 0.05, 0.08])
    mp, md, mn, mf = _out()
    n = fdo.fdo_collide(np.zeros(3), np.zeros(3), np.eye(3), 0, len(s.rows), FDO, np.zeros(3),
                        d, quat_matrix(Q), len(s.rows), len(s.rows), hv, 0.005, mp, md, mn, mf)
    assert n == 1
    assert md[0] == pytest.approx(0.2 - np.linalg.norm(d), abs=1e-12)
    assert mn == pytest.approx(d / np.linalg.norm(d), abs=1e-12)


def test_unperturbed_fdo_rests_where_the_ellipsoid_rests():
    poses = []
    for shape in (Ellipsoid((0.1, 0.07, 0.05)), fdo.Fdo(semi_axes=(0.1, 0.07, 0.05))):
        w = World(dt=1 / 240, iterations=20)
        w.add_body("ground", Plane(), kind="static")
        b = w.add_body("e", shape, density=1000.0, pos=(0.0, 0.0, 0.06), quat=tuple(Q))
        w.run(480)
        poses.append(w._current_body_pose(b))
    assert poses[1][0] == pytest.approx(poses[0][0], abs=1e-5)
    assert poses[1][1] == pytest.approx(poses[0][1], abs=1e-4)


def _sphere_vs(kind, size, pos, R, r=0.1):
    """fdo_collide of an unperturbed FDO sphere of radius r at the origin against geom B."""
    s = fdo.Fdo(semi_axes=(r, r, r))
    hv = np.vstack([s.rows, np.zeros((1, 3))])
    mp, md, mn, mf = _out()
    n = fdo.fdo_collide(np.zeros(3), np.zeros(3), np.eye(3), 0, len(s.rows), kind,
                        np.asarray(size, dtype=float), np.asarray(pos, dtype=float), R, 0, 0,
                        hv, 0.005, mp, md, mn, mf)
    return n, mp, md, mn


X_AXIS = quat_matrix(np.array([1.0, 0.0, 1.0, 0.0]) / math.sqrt(2.0))   # local z -> world x


@pytest.mark.parametrize("pos, R", [
    ((0.03, 0.0, 0.13), X_AXIS),       # lying on it
    ((0.0, 0.0, 0.05), X_AXIS),        # its axis inside the sphere
    ((0.03, 0.01, 0.08), X_AXIS),
    ((0.12, 0.02, 0.1), X_AXIS),       # an end nearest
    ((0.0, 0.0, 0.12), np.eye(3)),     # standing on it, the axis through the surface
    ((0.03, 0.01, 0.08), np.eye(3)),
    ((0.05, -0.02, 0.06), quat_matrix(Q)),
])
def test_fdo_sphere_against_a_capsule_matches_the_closed_form(pos, R):
    """depth = r_s + r_c - |c|, c the point of the capsule's axis segment nearest the
    sphere's centre, normal c / |c|: also where the axis crosses the sphere's surface (the
    old fixed point stopped there, depth r_c)."""
    rc, half = 0.05, 0.1
    n, mp, md, mn = _sphere_vs(CAPSULE, (rc, half, 0.0), pos, R)
    p, a = np.asarray(pos), R[:, 2]
    c = p + np.clip(-p @ a, -half, half) * a
    d = np.linalg.norm(c)
    assert n == 1
    assert md[0] == pytest.approx(0.1 + rc - d, abs=1e-10)
    assert mn == pytest.approx(c / d, abs=1e-7)
    assert mp[0] == pytest.approx(0.5 * (0.1 * c / d + c - rc * c / d), abs=1e-8)


def test_capsule_through_the_fdo_centre_is_as_deep_as_a_ball_there():
    for R in (X_AXIS, np.eye(3)):
        n, mp, md, mn = _sphere_vs(CAPSULE, (0.05, 0.1, 0.0), (0.0, 0.0, 0.0), R)
        assert n == 1 and md[0] == pytest.approx(0.15, abs=1e-10)


def test_fdo_sphere_against_a_cylinder_side_and_cap():
    pos = np.array([0.02, 0.01, 0.13])   # lying on it: a ball of its radius on the axis
    n, mp, md, mn = _sphere_vs(CYLINDER, (0.05, 0.1, 0.0), pos, X_AXIS)
    c = np.array([0.0, pos[1], pos[2]])
    assert n == 1
    assert md[0] == pytest.approx(0.15 - np.linalg.norm(c), abs=1e-10)
    assert mn == pytest.approx(c / np.linalg.norm(c), abs=1e-7)
    n, mp, md, mn = _sphere_vs(CYLINDER, (0.05, 0.1, 0.0), (0.01, 0.0, 0.18), np.eye(3))
    assert n == 1   # standing on it: its cap face at z = 0.08
    assert md[0] == pytest.approx(0.02, abs=1e-12)
    assert mn == pytest.approx([0.0, 0.0, 1.0], abs=1e-12)


def test_box_corner_into_an_fdo_sphere():
    u = np.ones(3) / math.sqrt(3.0)   # the box's corner diagonal turned to -z
    k = np.cross(u, [0.0, 0.0, -1.0])
    ang = math.acos(-u[2])
    q = np.concatenate([[math.cos(ang / 2)], math.sin(ang / 2) * k / np.linalg.norm(k)])
    h = 0.05
    n, mp, md, mn = _sphere_vs(BOX, (h, h, h), (0.0, 0.0, 0.09 + h * math.sqrt(3.0)),
                               quat_matrix(q))
    assert n == 1
    assert md[0] == pytest.approx(0.01, abs=1e-12)
    assert mn == pytest.approx([0.0, 0.0, 1.0], abs=1e-12)
    assert mp[0] == pytest.approx([0.0, 0.0, 0.095], abs=1e-12)


# ---- a perturbed object at rest, and in scene files ----------------------------------------

EGG = dict(semi_axes=(0.1, 0.09, 0.085), perturbations=[
    dict(weight=3.0, centre=(0.085, 0.0, 0.0), semi_axes=(0.05, 0.05, 0.05))])


def _surface_points(f, cells=120):
    """Points of F' = 0 (marching cubes on a grid of `cells` along the longest side)."""
    from skimage import measure
    (xs, ys, zs), h = fdo._grid(f.rows, cells, pad=1)
    X, Y, Z = np.meshgrid(xs, ys, zs, indexing="ij")
    F = fdo.evaluate(f.rows, np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1))[0]
    v = measure.marching_cubes(F.reshape(X.shape), level=0.0, spacing=(h, h, h))[0]
    return v + np.array([xs[0], ys[0], zs[0]])


def test_a_bumped_ellipsoid_comes_to_rest_where_its_function_says():
    """A bump on the +x end moves the centre of mass off the base's centre, so the object
    rolls until its lowest point is under it: the up direction u (object frame) of least
    centre-of-mass height max_p (-u . (p - com)) over its surface points p, by brute force
    over u within 15 degrees of +z (the minimum near -z is its mirror image) is ~4 degrees
    from +z, toward -x. Dropped from up = +z and from a tilted start, it comes to rest with
    that up direction within 1.5 degrees and the centre of mass at that height."""
    from sharnir.physics import Material
    f = fdo.Fdo(**EGG)
    P = _surface_points(f) - f.frame_pos
    th, ph = np.meshgrid(np.radians(np.arange(0.0, 15.0, 0.1)), np.radians(np.arange(0, 360, 2)))
    U = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1).reshape(-1, 3)
    height = np.max(-U @ P.T, axis=1)
    up, low = U[np.argmin(height)], float(np.min(height))
    assert math.degrees(math.acos(up[2])) > 3.5 and up[0] < 0.0
    for q0 in ((1.0, 0.0, 0.0, 0.0), (math.cos(0.1), 0.06, 0.08, 0.0)):
        w = World(dt=1 / 240, iterations=20)
        w.add_body("ground", Plane(), kind="static")
        b = w.add_body("egg", f, density=1000.0, pos=(0.0, 0.0, 0.09),
                       quat=tuple(np.array(q0) / np.linalg.norm(q0)),
                       material=Material(friction=0.8, rolling=0.0003))
        w.run(960)
        pos, q = w._current_body_pose(b)
        seen = f.frame_rot @ quat_matrix(q).T @ np.array([0.0, 0.0, 1.0])
        assert math.degrees(math.acos(min(seen @ up, 1.0))) < 1.5
        assert pos[2] == pytest.approx(low, abs=1e-3)


EGG_TOML = ("shape = { type = \"fdo\", semi_axes = [0.1, 0.09, 0.085], perturbations = ["
            "{ weight = 3.0, centre = [0.085, 0.0, 0.0], semi_axes = [0.05, 0.05, 0.05] }, "
            "{ weight = -1.0, quadric = [1.0, 0.0, 0.0, 0.0, -400.0, -400.0, -400.0, 0.0, 0.0, "
            "0.0] }] }")
FDO_SCENE = """\
[[bodies]]
name = "ground"
shape = { type = "plane" }
kind = "static"

[[bodies]]
name = "egg"
{shape}
density = 1000.0
pos = [0.0, 0.0, 0.2]

[[bodies]]
name = "twin"
{shape}
density = 1000.0
pos = [0.5, 0.0, 0.2]
""".replace("{shape}", EGG_TOML)


def test_an_fdo_scene_loads_steps_and_writes_back(tmp_path):
    from sharnir.scenes import build_world, read_scene
    from sharnir.scenes.writer import scene_toml
    path = tmp_path / "fdo.toml"
    path.write_text(FDO_SCENE, encoding="utf-8")
    spec = read_scene(path)
    world = build_world(spec, source=str(path))
    egg, twin = (world.body_names.index(n) for n in ("egg", "twin"))
    shapes = [b.shape for b in world._bodies]
    assert shapes[egg] is shapes[twin] and shapes[egg].kind == FDO   # one object per function
    world.run(120)
    pos, _q = world._current_body_pose(egg)
    assert 0.07 < pos[2] < 0.2
    again = tmp_path / "again.toml"
    again.write_text(scene_toml(spec), encoding="utf-8")
    assert read_scene(again).model_dump() == spec.model_dump()


@pytest.mark.parametrize("shape, fragments", [
    ('{ type = "fdo", semi_axes = [0.1, -0.09, 0.085] }', ['"egg"', "semi_axes"]),
    ('{ type = "fdo" }', ['"egg"', "semi_axes"]),
    ('{ type = "fdo", semi_axes = [0.1, 0.1, 0.1], perturbations = [{ weight = 1.0 }] }',
     ['"egg"', "perturbations", "semi_axes"]),
    ('{ type = "fdo", semi_axes = [0.1, 0.1, 0.1], perturbations = [{ weight = 1.0, '
     'quadric = [1, 0, 0, 0, -1, 0, 0, 0, 0, 0] }] }', ['"egg"', "unbounded"]),
    ('{ type = "fdo", quadric = [1, 0, 0, 0] }', ['"egg"', "quadric"]),
])
def test_a_malformed_fdo_entry_is_one_line_naming_the_body_and_field(tmp_path, shape,
                                                                    fragments):
    from sharnir.scenes import SceneError, load_scene
    text = FDO_SCENE.split("[[bodies]]\nname = \"twin\"")[0]
    text = text.replace(text.splitlines()[7], f"shape = {shape}")
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SceneError) as info:
        load_scene(path)
    message = str(info.value)
    assert "\n" not in message.strip(), message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("kind", [0, 2, 4, 5])
def test_a_knobbed_fdo_touches_the_plane_in_every_orientation(kind):
    """Held 4 mm deep (its lowest surface point, marching cubes) in 300 orientations, each
    bumped kind of the tube scene gets its points (before the support points' ascent, 2-12
    orientations got none, and bodies of fdo_tube.toml rested up to 25 mm deep). The deepest
    is 4 mm to 0.1 mm in all but a few (at most 4 of 300, seen) and never 2.5 mm short: a
    seed in a lower basin of u.x than the lowest point's (a knob's neck) and none in that one."""
    from sharnir.scenes.build import FDO_KINDS
    f = fdo.Fdo(**FDO_KINDS[kind])
    P = _surface_points(f, 160)
    hv = np.vstack([f.rows, np.zeros((1, 3))])
    rng = np.random.default_rng(1)
    off = 0
    for _ in range(300):
        v = rng.normal(size=4)
        R = quat_matrix(v / np.linalg.norm(v))
        pos = np.array([0.0, 0.0, -(P @ R.T)[:, 2].min() - 0.004])   # 4 mm deep
        mp, md, mn, mf = _out()
        n = fdo.fdo_collide(np.zeros(3), pos, R, 0, len(f.rows), PLANE, np.zeros(3),
                            np.zeros(3), np.eye(3), 0, 0, hv, 0.005, mp, md, mn, mf)
        assert n > 0 and abs(md[:n].max() - 0.004) < 2.5e-3
        off += abs(md[:n].max() - 0.004) > 1e-4
    assert off <= 6
