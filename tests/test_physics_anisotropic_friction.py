"""Anisotropic friction (paper 001: two coefficients along a body-fixed direction).

A body whose material has friction_axis a (body frame) and friction_along mu_1 slides along
a's projection onto the contact plane with mu_1 and across it with mu_2 = its `friction`:
the friction impulse lies in the ellipse (p_1 / mu_1)^2 + (p_2 / mu_2)^2 <= p_n^2.  The
ground gets friction 0 so that the larger-of-the-two rule leaves the block's coefficients.

What is derived on paper:
* along a principal direction the ellipse is the Coulomb law with that direction's mu: a
  block on an incline sticks iff tan th <= mu of the down-slope direction, and slides at
  g (sin th - mu cos th);
* sliding in a general direction, maximal dissipation (the force on the ellipse that
  maximises -f . v) gives f_k = -N mu_k^2 v_k / sqrt(mu_1^2 v_1^2 + mu_2^2 v_2^2): for a
  block sliding at 45 degrees to the axis the force is NOT opposite to the velocity.
"""
import math

import numpy as np
import pytest
from conftest import G

from sharnir.physics import Box, Material, Plane, World
from sharnir.scenes import SceneError, build_world, read_scene

THETA = math.radians(30.0)          # tan = 0.577
SMOOTH = Material(friction=0.0)


def incline_block(axis, along, across):
    """A 1 kg cube on a 30 degree incline (turned about +y), its body x down the slope."""
    w = World(dt=1.0 / 240.0, iterations=30)
    q = (math.cos(THETA / 2), 0.0, math.sin(THETA / 2), 0.0)
    w.add_body("ground", Plane(), kind="static", quat=q, material=SMOOTH)
    n = np.array([math.sin(THETA), 0.0, math.cos(THETA)])
    d = np.array([math.cos(THETA), 0.0, -math.sin(THETA)])
    mat = Material(friction=across, friction_axis=axis, friction_along=along)
    b = w.add_body("block", Box((0.1, 0.1, 0.1)), mass=1.0, pos=n * 0.1, quat=q, material=mat)
    return w, b, d


@pytest.mark.parametrize("axis, slides", [((1.0, 0.0, 0.0), True), ((0.0, 1.0, 0.0), False)])
def test_block_on_incline_obeys_the_coefficient_of_the_down_slope_direction(axis, slides):
    # mu along the axis 0.2, across it 0.8; tan 30 deg = 0.577 lies between them.  Axis down
    # the slope: mu = 0.2 there, it slides at g (sin - 0.2 cos).  Axis across the slope: the
    # down-slope mu is 0.8 and it sticks.
    w, b, d = incline_block(axis, along=0.2, across=0.8)
    p0 = np.array(w.body_pos[b])
    rec = w.run(480, record_bodies=True)
    s = (rec.body_pos[:, b] - p0) @ d
    if slides:
        A = np.vstack([np.ones_like(rec.t), rec.t, 0.5 * rec.t ** 2]).T
        a = float(np.linalg.lstsq(A[24:], s[24:], rcond=None)[0][2])
        expected = G * (math.sin(THETA) - 0.2 * math.cos(THETA))
        assert a == pytest.approx(expected, rel=0.02), (a, expected)
    else:
        assert np.max(np.abs(s)) < 1e-4, np.max(np.abs(s))


def test_diagonal_sliding_takes_the_force_of_maximal_dissipation():
    # A cube on a level floor, axis along body x, mu_1 = 0.2 along, mu_2 = 0.6 across, sent
    # at 2 m/s at 45 degrees to the axis.  Semi-implicit Euler: the acceleration of step k is
    # (x_{k+1} - 2 x_k + x_{k-1}) / h^2 and the velocity after step k is (x_{k+1} - x_k) / h.
    mu1, mu2, h = 0.2, 0.6, 1.0 / 240.0
    w = World(dt=h, iterations=30)
    w.add_body("ground", Plane(), kind="static", material=SMOOTH)
    mat = Material(friction=mu2, friction_axis=(1.0, 0.0, 0.0), friction_along=mu1)
    v0 = 2.0 * np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
    b = w.add_body("block", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.0, 0.0, 0.1),
                   vel=tuple(v0), material=mat)
    rec = w.run(40, record_bodies=True)
    x = rec.body_pos[:, b, :2]
    checked = 0
    for k in range(5, 30):
        v = (x[k] - x[k - 1]) / h                     # velocity before step k + 1
        a = (x[k + 1] - 2.0 * x[k] + x[k - 1]) / h ** 2
        f = -G * np.array([mu1 ** 2 * v[0], mu2 ** 2 * v[1]]) / math.hypot(mu1 * v[0],
                                                                          mu2 * v[1])
        assert a == pytest.approx(f, rel=0.02, abs=1e-3), (k, a, f)
        # on the ellipse, and not opposite to the velocity
        assert (a[0] / mu1) ** 2 + (a[1] / mu2) ** 2 == pytest.approx(G ** 2, rel=0.02)
        cos = -(a @ v) / (np.linalg.norm(a) * np.linalg.norm(v))
        assert cos < 0.95
        checked += 1
    assert checked == 25
    # it neither turns nor leaves the floor
    q = rec.body_quat[-1, b]
    assert abs(q[0]) == pytest.approx(1.0, abs=1e-6)


def test_isotropic_coefficients_given_as_anisotropic_match_plain_friction():
    # friction_along = friction is the circle: the same law as without an axis.  Only the
    # tangent basis differs (t1 along the axis's projection instead of the default), and a
    # finite number of sweeps over the two tangent rows of a turning block converges to
    # slightly basis-dependent values: measured 1.9 mm apart after 0.46 m of travel (0.4 %).
    runs = []
    for mat in (Material(friction=0.3),
                Material(friction=0.3, friction_axis=(0.3, -1.0, 0.2), friction_along=0.3)):
        w = World(dt=1.0 / 240.0, iterations=20)
        w.add_body("ground", Plane(), kind="static", material=SMOOTH)
        b = w.add_body("block", Box((0.1, 0.2, 0.05)), mass=2.0, pos=(0.0, 0.0, 0.05),
                       vel=(1.5, -0.7, 0.0), angvel=(0.0, 0.0, 2.0), material=mat)
        rec = w.run(120, record_bodies=True)
        runs.append(rec.body_pos[:, b])
    travel = np.linalg.norm(runs[0][-1] - runs[0][0])
    assert np.max(np.linalg.norm(runs[0] - runs[1], axis=1)) < 0.01 * travel


SCENE = """
[[bodies]]
name = "ground"
shape = { type = "plane" }
kind = "static"
friction = 0.0

[[bodies]]
name = "sled"
shape = { type = "box", half_extents = [0.2, 0.1, 0.05] }
mass = 1.0
pos = [0.0, 0.0, 0.05]
vel = [1.0, 0.0, 0.0]
friction = 0.8
{extra}
"""


def test_scene_files_take_friction_axis_and_friction_along(tmp_path):
    path = tmp_path / "sled.toml"
    path.write_text(SCENE.replace("{extra}", "friction_axis = [2.0, 0.0, 0.0]\n"
                                             "friction_along = 0.1\n"), encoding="utf-8")
    w = build_world(read_scene(path))
    w.run(240)
    # the runner slides along its axis with mu 0.1: v = 1 - 0.1 g t until it stops at 1.02 s
    v = w.body_vel[w.body_names.index("sled")]
    assert v[0] == pytest.approx(1.0 - 0.1 * G * 1.0, abs=0.01)


@pytest.mark.parametrize("extra, field, words", [
    ("friction_axis = [1.0, 0.0, 0.0]\n", "friction_along", "needs both"),
    ("friction_along = 0.1\n", "friction_axis", "needs both"),
    ("friction_axis = [0.0, 0.0, 0.0]\nfriction_along = 0.1\n", "friction_axis", "zero vector"),
    ("friction_axis = [1.0, 0.0, 0.0]\nfriction_along = -0.1\n", "friction_along", "0"),
])
def test_bad_anisotropic_friction_in_a_scene_file_is_named(tmp_path, extra, field, words):
    path = tmp_path / "bad.toml"
    path.write_text(SCENE.replace("{extra}", extra), encoding="utf-8")
    with pytest.raises(SceneError) as info:
        read_scene(path)
    message = str(info.value)
    assert str(path) in message and "sled" in message and field in message, message
    assert words in message, message


@pytest.mark.parametrize("articulation", ["sweep", "tree"])
def test_a_friction_of_zero_holds_nothing(articulation):
    # both bodies mu = 0: the ellipse is the point 0 (the clamp once let any friction
    # through: q = 0 <= lim^2 = 0). Two 1 kg cubes welded side by side on a level floor (a
    # tree: "tree" solves its contacts in the tree's block), pushed by 2 N: their centre of
    # mass at 1 m/s^2 (the push, off that centre, turns them too)
    w = World(dt=1e-3, gravity=(0.0, 0.0, -G), articulation=articulation)
    w.add_body("ground", Box((5.0, 5.0, 0.1)), kind="static", pos=(0.0, 0.0, -0.1),
               material=SMOOTH)
    a = w.add_body("a", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.0, 0.0, 0.1), material=SMOOTH)
    b = w.add_body("b", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.0, 0.25, 0.1), material=SMOOTH)
    w.add_joint("weld", "fixed", "a", "b", anchor=(0.0, 0.125, 0.1))
    w.add_load("a", force=(2.0, 0.0, 0.0))
    w.run(300)
    centre = 0.5 * (w.body_vel[a] + w.body_vel[b])
    assert centre[0] == pytest.approx(1.0 * 0.3, rel=1e-6)


def test_an_axis_of_zero_friction_slides_freely_along_it_and_holds_across():
    # mu_1 = 0 along body x, mu_2 = 0.8 across: the ellipse is the segment |p_2| <= 0.8 p_n.
    # On the 30 degree incline (tan = 0.577) with the axis down the slope the cube slides at
    # g sin 30; with the axis across the slope it holds
    for axis, slides in (((1.0, 0.0, 0.0), True), ((0.0, 1.0, 0.0), False)):
        w, b, d = incline_block(axis, along=0.0, across=0.8)
        p0 = np.array(w.body_pos[b])
        rec = w.run(240, record_bodies=True)
        s = (rec.body_pos[:, b] - p0) @ d
        if slides:
            v = float(np.asarray(w.body_vel)[b] @ d)
            assert v == pytest.approx(G * math.sin(THETA) * 1.0, rel=0.01)
        else:
            assert np.max(np.abs(s)) < 1e-4
