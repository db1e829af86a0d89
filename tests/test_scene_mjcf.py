"""MuJoCo MJCF files opened as Sharnir scenes (scenes/mjcf.py): the bodies, joints, motors and
contact filters match the file's own numbers, a double pendulum follows the same trajectory
as its TOML twin, MuJoCo's humanoid loads and falls like MuJoCo's own simulation of it, and
bad files are one SceneError."""

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from sharnir.scenes import SceneError, build_world, load_scene, read_scene  # noqa: E402
from sharnir.scenes.mjcf import INTERMEDIATE_MASS, NO_DAMPING, MjcfWarning, read_mjcf  # noqa: E402

HUMANOID = Path(__file__).parent / "fixtures" / "mjcf" / "humanoid.xml"
REPO = Path(__file__).resolve().parents[1]

PENDULUM = """
<mujoco model="pendulum">
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="rod" pos="0 0 1">
      <joint name="pivot" type="hinge" axis="0 1 0" range="-90 45" frictionloss="0.3"/>
      <geom type="box" size="0.05 0.05 0.2" pos="0 0 -0.2" density="1000"/>
    </body>
  </worldbody>
</mujoco>
"""

# link1 starts level (turned 90 degrees about y), link2 hangs from its tip; explicit inertials
DOUBLE = """
<mujoco model="double pendulum">
  <option timestep="0.002"/>
  <worldbody>
    <body name="link1" pos="0 0 1" euler="0 90 0">
      <joint name="hinge1" axis="0 1 0" range="-120 120" frictionloss="0.3"/>
      <inertial pos="0 0 -0.2" mass="1" diaginertia="0.02 0.021 0.003"/>
      <geom type="box" size="0.03 0.03 0.2" pos="0 0 -0.2"/>
      <body name="link2" pos="0 0 -0.4" euler="0 -90 0">
        <joint name="hinge2" axis="0 1 0" frictionloss="0.1"/>
        <inertial pos="0 0 -0.3" mass="2" diaginertia="0.03 0.04 0.01"/>
        <geom type="capsule" size="0.03 0.2" pos="0 0 -0.2"/>
        <geom type="sphere" size="0.06" pos="0 0 -0.45"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# the same double pendulum written by hand as a Sharnir scene: link1's centre of mass is 0.2 m
# along its body z, which the 90-degree turn about y lays along -x; link2's frame is at
# link1's tip (-0.4, 0, 1), upright again; MuJoCo never lets a body touch its parent, and
# there is nothing else to touch (group = mask = 0)
DOUBLE_TOML = """
world = { dt = 0.002 }

[[bodies]]
name = "link1"
shape = { type = "box", half_extents = [0.03, 0.03, 0.2] }
mass = 1.0
inertia = [0.02, 0.021, 0.003]
pos = [-0.2, 0.0, 1.0]
quat = [0.7071067811865476, 0.0, 0.7071067811865476, 0.0]
group = 0
mask = 0

[[bodies]]
name = "link2"
mass = 2.0
inertia = [0.03, 0.04, 0.01]
pos = [-0.4, 0.0, 1.0]
group = 0
mask = 0
shape.type = "compound"
shape.frame = { pos = [0.0, 0.0, -0.3] }
[[bodies.shape.parts]]
shape = { type = "capsule", radius = 0.03, half_length = 0.2 }
pos = [0.0, 0.0, -0.2]
[[bodies.shape.parts]]
shape = { type = "sphere", radius = 0.06 }
pos = [0.0, 0.0, -0.45]

[[joints]]
name = "hinge1"
type = "revolute"
body_a = "world"
body_b = "link1"
anchor = [0.0, 0.0, 1.0]
axis = [0.0, 1.0, 0.0]
friction = 0.3
limits = [-2.0943951023931953, 2.0943951023931953]

[[joints]]
name = "hinge2"
type = "revolute"
body_a = "link1"
body_b = "link2"
anchor = [-0.4, 0.0, 1.0]
axis = [0.0, 1.0, 0.0]
friction = 0.1
"""


def write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def quiet_read(path, sets=()):
    """read_scene, failing on any MjcfWarning (the file has nothing Sharnir cannot do)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", MjcfWarning)
        return read_scene(path, sets)


def by_name(items, name):
    return next(item for item in items if item.name == name)


# --- what the reader writes -------------------------------------------------


def test_pendulum_mass_inertia_anchor_axis_range_and_frictionloss_match_the_file(tmp_path):
    spec = quiet_read(write(tmp_path, PENDULUM))
    rod = by_name(spec.bodies, "rod")
    # a 0.1 x 0.1 x 0.4 m box of density 1000: 4 kg, I = m (b^2 + c^2) / 12 on full sides
    assert rod.mass == pytest.approx(4.0, rel=1e-12)
    assert rod.inertia == pytest.approx([4.0 * (0.01 + 0.16) / 12, 4.0 * (0.01 + 0.16) / 12,
                                         4.0 * (0.01 + 0.01) / 12], rel=1e-9)
    assert rod.shape.type == "box" and rod.shape.half_extents == pytest.approx((0.05, 0.05, 0.2))
    assert rod.pos == pytest.approx((0.0, 0.0, 0.8), abs=1e-12)
    pivot = by_name(spec.joints, "pivot")
    assert (pivot.type, pivot.body_a, pivot.body_b) == ("revolute", "world", "rod")
    assert pivot.anchor == pytest.approx((0.0, 0.0, 1.0), abs=1e-12)
    assert pivot.axis == pytest.approx((0.0, 1.0, 0.0), abs=1e-12)
    assert pivot.limits == pytest.approx((-math.pi / 2, math.pi / 4), rel=1e-12)
    assert pivot.friction == pytest.approx(0.3)
    assert pivot.motor is None  # no damping, armature, spring or actuator
    assert spec.world.dt == 0.002 and spec.world.gravity == (0.0, 0.0, -9.81)


def test_double_pendulum_bodies_and_joints_match_the_file(tmp_path):
    spec = quiet_read(write(tmp_path, DOUBLE))
    link1, link2 = by_name(spec.bodies, "link1"), by_name(spec.bodies, "link2")
    assert (link1.mass, link2.mass) == (1.0, 2.0)
    assert link1.inertia == pytest.approx((0.02, 0.021, 0.003), rel=1e-12)
    assert link2.inertia == pytest.approx((0.03, 0.04, 0.01), rel=1e-12)
    assert link1.pos == pytest.approx((-0.2, 0.0, 1.0), abs=1e-12)
    # two geoms and a centre of mass of its own: a compound in the MuJoCo body frame
    assert link2.shape.type == "compound" and len(link2.shape.parts) == 2
    assert link2.pos == pytest.approx((-0.4, 0.0, 1.0), abs=1e-12)
    assert link2.shape.frame.pos == pytest.approx((0.0, 0.0, -0.3), abs=1e-12)
    hinge2 = by_name(spec.joints, "hinge2")
    assert (hinge2.body_a, hinge2.body_b) == ("link1", "link2")
    assert hinge2.anchor == pytest.approx((-0.4, 0.0, 1.0), abs=1e-12)
    assert hinge2.axis == pytest.approx((0.0, 1.0, 0.0), abs=1e-12)
    assert hinge2.friction == pytest.approx(0.1) and hinge2.limits is None
    assert by_name(spec.joints, "hinge1").limits == pytest.approx((-2 * math.pi / 3,
                                                                    2 * math.pi / 3))


def test_double_pendulum_from_mjcf_follows_its_toml_twin(tmp_path):
    from_xml = build_world(quiet_read(write(tmp_path, DOUBLE)))
    toml = tmp_path / "double.toml"
    toml.write_text(DOUBLE_TOML, encoding="utf-8")
    from_toml = build_world(read_scene(toml))
    steps = 500  # 1 s
    a = from_xml.run(steps, record_bodies=True)
    b = from_toml.run(steps, record_bodies=True)
    assert np.ptp(a.joint[:, 0, 0]) > 0.5  # it swings
    assert np.abs(a.joint[:, :, :2] - b.joint[:, :, :2]).max() < 1e-9
    assert np.abs(a.body_pos - b.body_pos).max() < 1e-9
    assert np.abs(a.body_quat - b.body_quat).max() < 1e-9


def test_a_welded_body_is_merged_into_its_parent_with_their_joint_mass(tmp_path):
    xml = """<mujoco><worldbody>
      <body name="arm" pos="0 0 1"><joint name="j" axis="1 0 0"/>
        <geom type="sphere" size="0.1" mass="1"/>
        <body name="hand" pos="0.3 0 0"><geom type="sphere" size="0.05" mass="3"/></body>
      </body></worldbody></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    assert [b.name for b in spec.bodies] == ["arm"]
    arm = spec.bodies[0]
    assert arm.mass == pytest.approx(4.0)
    # centre of mass 3/4 of the way to the hand: x = 0.225; about x the spheres' own
    # moments add, about y and z the parallel axes too (d = 0.225 and 0.075)
    moments = sorted([0.4 * 1 * 0.01 + 0.4 * 3 * 0.0025,
                      0.4 * 1 * 0.01 + 0.4 * 3 * 0.0025 + 1 * 0.225**2 + 3 * 0.075**2,
                      0.4 * 1 * 0.01 + 0.4 * 3 * 0.0025 + 1 * 0.225**2 + 3 * 0.075**2])
    assert sorted(arm.inertia) == pytest.approx(moments, rel=1e-9)
    assert arm.shape.type == "compound"
    assert arm.shape.frame.pos == pytest.approx((0.225, 0.0, 0.0), abs=1e-12)


def test_three_hinges_with_an_unlimited_middle_chain_two_intermediate_bodies(tmp_path):
    # unlimited, the middle hinge could reach gimbal lock: the hinges do not compose
    xml = """<mujoco><worldbody>
      <body name="thigh" pos="0 0 1">
        <joint name="hx" axis="1 0 0"/><joint name="hz" axis="0 0 1"/>
        <joint name="hy" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05" mass="5"/>
      </body></worldbody></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    names = [b.name for b in spec.bodies]
    assert names == ["thigh", "thigh.hx", "thigh.hz"]
    chain = [(j.name, j.body_a, j.body_b) for j in spec.joints]
    assert chain == [("hx", "world", "thigh.hx"), ("hz", "thigh.hx", "thigh.hz"),
                     ("hy", "thigh.hz", "thigh")]
    masses = {b.name: b.mass for b in spec.bodies}
    assert sum(masses.values()) == pytest.approx(5.0)  # the total is kept
    assert masses["thigh.hx"] == pytest.approx(INTERMEDIATE_MASS * 5.0)
    assert masses["thigh"] == pytest.approx((1 - 2 * INTERMEDIATE_MASS) * 5.0)
    for name in ("thigh.hx", "thigh.hz"):  # at the joints' common anchor, touching nothing
        inter = by_name(spec.bodies, name)
        assert inter.pos == pytest.approx((0.0, 0.0, 1.0)) and inter.shape is None
        assert (inter.group, inter.mask) == (0, 0)
    assert [j.axis for j in spec.joints] == [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)]


LEG = """<mujoco><option timestep="{dt}"/><worldbody>
  <body name="thigh" pos="0 0 1">
    <joint name="hx" axis="1 0 0"/><joint name="hz" axis="0 0 1" range="-80 80"/>
    <joint name="hy" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 .1 .15 -.4" size=".05"/>
    <body name="shin" pos=".1 .15 -.4">
      <joint name="s1" axis="2 1 1"/><joint name="s2" axis="0 -1 1"/>
      <geom type="capsule" fromto="0 0 0 .2 -.1 -.2" size=".04"/>
    </body></body></worldbody></mujoco>"""


def test_hinges_about_one_anchor_join_the_body_to_its_parent_directly(tmp_path):
    spec = quiet_read(write(tmp_path, LEG.format(dt=0.002)))
    assert [b.name for b in spec.bodies] == ["thigh", "shin"]
    assert [(j.name, j.body_a, j.body_b) for j in spec.joints] == [
        ("hx", "world", "thigh"), ("hz", "world", "thigh"), ("hy", "world", "thigh"),
        ("s1", "thigh", "shin"), ("s2", "thigh", "shin")]
    assert sum(b.mass for b in spec.bodies) == pytest.approx(
        float(mujoco.MjModel.from_xml_path(str(tmp_path / "model.xml")).body_mass.sum()))


# the same with the hinges' anchors apart, carried by the hinges before them
LEG_APART = LEG.replace('<joint name="hz" axis="0 0 1"',
                        '<joint name="hz" pos="0 .02 -.06" axis="0 0 1"'
                        ).replace('<joint name="hy" axis="0 1 0"/>',
                                  '<joint name="hy" pos=".03 0 -.1" axis="0 1 0"/>'
                        ).replace('<joint name="s2" axis="0 -1 1"/>',
                                  '<joint name="s2" pos=".05 .02 -.03" axis="0 -1 1"/>')


# the same with armature on every hinge (each a DC motor's rotor: physics/motor.py)
LEG_ARMATURE = LEG.replace("<worldbody>", '<default><joint armature=".01"/></default><worldbody>')


def leg_gap(tmp_path, dt, duration=0.5, xml=LEG):
    """Largest joint-angle gap between MuJoCo's run of a gimbal (hip) and a universal joint
    (the humanoid's shoulder axes) and Sharnir's run of the same file."""
    path = write(tmp_path, xml.format(dt=dt), f"leg_{dt}.xml")
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    expected = []
    for _ in range(round(duration / dt)):
        mujoco.mj_step(m, d)
        expected.append(d.qpos.copy())
    expected = np.array(expected)
    world = build_world(quiet_read(path), iterations=200)
    got = world.run(len(expected)).joint[:, :, 0]
    assert np.ptp(expected, axis=0).min() > 0.15         # every hinge turns
    assert np.abs(expected[:, 1]).max() < math.radians(80)   # the middle within its range
    return np.abs(got - expected).max()


@pytest.mark.parametrize("xml, bound", [(LEG, 0.002), (LEG_APART, 0.012),
                                        (LEG_ARMATURE, 0.002)],
                         ids=["one_anchor", "anchors_apart", "armature"])
def test_gimbal_and_universal_joint_converge_to_mujocos_trajectory(tmp_path, xml, bound):
    # first order in dt, as maximal and reduced coordinates discretise differently: seen
    # 0.00314, 0.00158, 0.00080, 0.00040 rad at 5, 2.5, 1.25, 0.625 ms over 0.5 s (anchors
    # apart: 0.0290, 0.0141, 0.0070, 0.0035; with armature 0.0036, 0.0018, 0.00091, 0.00046,
    # 0.024-0.026 at any dt while the rotors'
    # speed was measured with each step's new row: motor.motor_rows)
    coarse, fine = leg_gap(tmp_path, 0.0025, xml=xml), leg_gap(tmp_path, 0.00125, xml=xml)
    assert fine < bound
    assert fine < 0.6 * coarse


def test_free_joint_is_a_floating_body_and_world_geoms_are_static(tmp_path):
    xml = """<mujoco><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1" friction="0.8 0.01 0.001"/>
      <geom name="step" type="box" size="0.2 0.2 0.05" pos="1 0 0.05"/>
      <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" condim="6"
        friction="0.6 0.02 0.003"/></body></worldbody></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    assert spec.joints == []
    floor, step, ball = (by_name(spec.bodies, n) for n in ("floor", "step", "ball"))
    assert (floor.kind, floor.shape.type, step.kind) == ("static", "plane", "static")
    assert floor.friction == 0.8 and (floor.spinning, floor.rolling) == (0.0, 0.0)  # condim 3
    assert (ball.friction, ball.spinning, ball.rolling) == (0.6, 0.02, 0.003)   # condim 6
    assert ball.mass == pytest.approx(1000 * 4 / 3 * math.pi * 0.001)


def test_contact_filter_reproduces_mujocos_rule(tmp_path):
    # contype/conaffinity pairs that touch one way only, a parent and child, an exclude
    xml = """<mujoco><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1" contype="1" conaffinity="1"/>
      <body name="a" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" contype="2"
        conaffinity="1"/></body>
      <body name="b" pos="1 0 1"><freejoint/><geom type="sphere" size="0.1" contype="1"
        conaffinity="2"/></body>
      <body name="c" pos="2 0 1"><freejoint/><geom type="sphere" size="0.1" contype="4"
        conaffinity="4"/></body>
      <body name="d" pos="3 0 1"><freejoint/><geom type="sphere" size="0.1"/>
        <body name="e" pos="0.3 0 0"><joint axis="0 1 0"/><geom type="sphere" size="0.1"/>
        </body></body>
      <body name="f" pos="4 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
    </worldbody><contact><exclude body1="f" body2="d"/></contact></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    bodies = {b.name: b for b in spec.bodies}
    m = mujoco.MjModel.from_xml_string(xml)

    def mujoco_touches(x, y):
        gx = m.geom(x) if x == "floor" else m.geom(int(m.body(x).geomadr[0]))
        gy = m.geom(y) if y == "floor" else m.geom(int(m.body(y).geomadr[0]))
        if not (gx.contype[0] & gy.conaffinity[0] or gy.contype[0] & gx.conaffinity[0]):
            return False
        return {x, y} not in ({"d", "e"}, {"d", "f"})  # parent and child; the exclude

    names = list(bodies)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            assert sharnir_touches(spec, x, y) == mujoco_touches(x, y), (x, y)


def sharnir_touches(spec, x, y):
    """Whether Sharnir lets bodies x and y touch: their bits match, they are not joined by a
    joint and not both static (physics/broadphase.py's filters)."""
    bodies = {b.name: b for b in spec.bodies}
    bx, by = bodies[x], bodies[y]
    if bx.kind == "static" and by.kind == "static":
        return False
    if any({j.body_a, j.body_b} == {x, y} for j in spec.joints):
        return False
    return bool(bx.group & by.mask) and bool(by.group & bx.mask)


def tail_xml(n):
    """A floating box with a tail of n capsules, each hinged to the one before, every capsule
    excluded from the one two links on (as the caudal vertebrae of MuJoCo's dog.xml)."""
    tail = ""
    for i in range(n, 0, -1):
        axis = "0 1 0" if i % 2 else "0 0 1"
        tail = (f'<body name="c{i}" pos="0.05 0 0"><joint axis="{axis}"/>'
                f'<geom type="capsule" size="0.01" fromto="0 0 0 0.05 0 0"/>{tail}</body>')
    excludes = "".join(f'<exclude body1="c{i}" body2="c{i + 2}"/>' for i in range(1, n - 1))
    return (f'<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>'
            f'<body name="root" pos="0 0 1"><freejoint/><geom type="box" size="0.05 0.05 0.05"/>'
            f"{tail}</body></worldbody><contact>{excludes}</contact></mujoco>")


def test_excluded_pairs_stay_apart_in_a_tail_too_long_for_one_bit_per_pair(tmp_path):
    # 40 links: covering the pairs that touch while keeping every parent and child apart too
    # took more than the 62 bits (the filter then fell back to contype/conaffinity, and the
    # excluded neighbours, overlapping at rest, pushed each other apart); the joined pairs
    # Sharnir keeps apart itself may share a bit
    xml = tail_xml(40)
    spec = quiet_read(write(tmp_path, xml))   # (no warning: the filter maps)
    m = mujoco.MjModel.from_xml_string(xml)
    excluded = {frozenset((int(sig) >> 16, int(sig) & 0xFFFF)) for sig in m.exclude_signature}

    def mujoco_touches(x, y):
        bx, by = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n) for n in (x, y))
        if x == "floor" or y == "floor":
            return True
        return (int(m.body_parentid[bx]) != by and int(m.body_parentid[by]) != bx
                and frozenset((bx, by)) not in excluded)

    names = [b.name for b in spec.bodies]
    assert len(names) == 42
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            assert sharnir_touches(spec, x, y) == mujoco_touches(x, y), (x, y)


def test_damping_armature_and_spring_become_a_dc_motor_with_those_constants(tmp_path):
    xml = """<mujoco><worldbody><body name="wheel" pos="0 0 1">
      <joint name="axle" axis="0 0 1" damping="0.5" armature="0.02" stiffness="3"
        springref="10"/>
      <geom type="cylinder" size="0.2 0.02" mass="2"/></body>
      <body name="cart" pos="1 0 1"><joint name="rail" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      <body name="arm" pos="2 0 1"><joint name="shoulder" axis="0 1 0" damping="5"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      <body name="finger" pos="3 0 1"><joint name="knuckle" axis="0 1 0" damping="2"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      <body name="lift" pos="4 0 1"><joint name="screw" type="slide" axis="0 0 1"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      </worldbody>
      <actuator><motor joint="shoulder" gear="40" ctrlrange="-1 1"/>
        <position joint="knuckle" kp="10" kv="0.5"/>
        <velocity joint="rail" kv="7"/>
        <motor joint="screw" gear="3" forcerange="-2 2"/></actuator></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    joints = {j.name: j for j in spec.joints}

    def gain(motor):  # joint torque per volt at stall, and the back-EMF damping
        return motor.torque_constant / motor.resistance, motor.torque_constant ** 2 / \
            motor.resistance

    axle = joints["axle"].motor  # no actuator: a shorted motor, K / R = sqrt(b)
    assert gain(axle)[1] == pytest.approx(0.5) and axle.rotor_inertia == 0.02
    c = axle.controller  # the spring: torque 3 (10 deg - q) through K / R volts
    assert (c.mode, c.kp * gain(axle)[0]) == ("position", pytest.approx(3.0))
    assert c.target == pytest.approx(math.radians(10))
    shoulder = joints["shoulder"].motor  # motor gear 40 on damping 5
    assert gain(shoulder) == pytest.approx((40.0, 5.0))
    assert shoulder.voltage_limit == 1.0 and shoulder.controller is None
    knuckle = joints["knuckle"].motor  # position servo kp 10, kv 0.5 on damping 2
    assert gain(knuckle)[1] == pytest.approx(2.0)
    c = knuckle.controller
    assert c.mode == "position" and c.target == 0.0
    assert (c.kp * gain(knuckle)[0], c.kd * gain(knuckle)[0]) == pytest.approx((10.0, 0.5))
    rail = joints["rail"].motor  # velocity servo kv 7, no damping: a negligible back-EMF
    assert gain(rail)[1] == pytest.approx(NO_DAMPING)
    assert (rail.controller.mode, rail.controller.kp * gain(rail)[0]) == \
        ("velocity", pytest.approx(7.0))
    screw = joints["screw"].motor  # forcerange 2 times gear 3
    assert gain(screw)[0] == pytest.approx(3.0) and screw.torque_limit == pytest.approx(6.0)


def test_damped_sprung_hinge_with_armature_follows_mujocos_own_trajectory(tmp_path):
    # one degree of freedom: MuJoCo's Euler step (implicit damping, explicit spring, armature
    # in the mass matrix) and Sharnir's motor row are the same recurrence
    xml = """<mujoco><option timestep="0.002"/><worldbody>
      <body name="bar" pos="0 0 1" euler="0 60 0">
        <joint name="pin" axis="0 1 0" damping="0.2" stiffness="2" armature="0.01"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03"/></body>
      </worldbody></mujoco>"""
    path = write(tmp_path, xml)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    steps = 500
    expected = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        expected.append(d.qpos[0])
    world = build_world(quiet_read(path))
    got = world.run(steps).joint[:, 0, 0]
    assert np.ptp(expected) > 0.3
    assert np.abs(got - np.array(expected)).max() < 1e-7  # seen: 1e-9


# --- what does not map -------------------------------------------------------


def test_what_sharnir_cannot_simulate_is_named_in_one_warning(tmp_path):
    xml = """<mujoco><option integrator="RK4"/><worldbody>
      <body name="a" pos="0 0 1"><joint name="ja" axis="0 1 0"/>
        <geom type="sphere" size="0.1" margin="0.01"/><site name="s"/></body>
      <body name="b" pos="1 0 1"><joint name="jb" type="ball" damping="1" range="0 30"/>
        <geom type="sphere" size="0.1"/></body></worldbody>
      <tendon><fixed name="t" limited="true" range="-1 1"><joint joint="ja" coef="1"/></fixed>
      </tendon>
      <equality><connect body1="a" body2="b" anchor="0.5 0 1"/></equality>
      <sensor><touch site="s"/></sensor>
      <actuator><general joint="ja" gaintype="affine" gainprm="1 2 3"/></actuator>
      </mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = read_scene(write(tmp_path, xml))
    mine = [w for w in caught if issubclass(w.category, MjcfWarning)]
    assert len(mine) == 1
    text = str(mine[0].message)
    assert "model.xml" in text
    for what in ('fixed tendon "t" (of 1 joint: only two map)', "1 equality constraint",
                 "1 sensor", "rk4 integrator",
                 "margin", 'cone limit of ball joint "jb"', 'actuator "actuator0"'):
        assert what in text, what
    assert "damping" not in text   # the ball joint's damping is simulated
    assert {j.name: j.damping for j in spec.joints}["jb"] == 1.0


def test_malformed_mjcf_is_one_scene_error_naming_the_file(tmp_path):
    path = write(tmp_path, "<mujoco><worldbody><body><geom type='box'/></body>", "broken.xml")
    with pytest.raises(SceneError) as err:
        read_scene(path)
    message = str(err.value)
    # (read by lxml first, to check the files it names, before MuJoCo's compiler)
    assert str(path) in message and "not well-formed XML" in message
    assert "\n" not in message and "Traceback" not in message


def test_unknown_attribute_is_one_scene_error_with_mujocos_message(tmp_path):
    path = write(tmp_path, "<mujoco><worldbody><body><geom sise='1'/></body></worldbody>"
                           "</mujoco>", "typo.xml")
    with pytest.raises(SceneError, match=r"typo\.xml: MuJoCo cannot compile it: .*sise"):
        read_scene(path)


def test_without_mujoco_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco -> ImportError
    with pytest.raises(SceneError) as err:
        read_scene(write(tmp_path, PENDULUM))
    assert str(err.value) == "MJCF files need MuJoCo's compiler: pip install mujoco"


# --- MuJoCo's humanoid --------------------------------------------------------


def humanoid_spec():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = read_scene(HUMANOID)
    return spec, [w for w in caught if issubclass(w.category, MjcfWarning)]


def test_humanoid_loads_with_its_bodies_joints_and_mass():
    spec, caught = humanoid_spec()
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    # 14 bodies: head and hands are welded (merged), the torso floats; the waist, upper arms
    # and feet have 2 hinges and the thighs 3, which compose (universal joints, gimbals: no
    # intermediate body): 13, and the floor
    dynamic = [b for b in spec.bodies if b.kind == "dynamic"]
    assert len(dynamic) == 13
    assert [b.name for b in spec.bodies if b.kind == "static"] == ["floor"]
    assert len(spec.joints) == 21 and all(j.type == "revolute" for j in spec.joints)
    assert sum(b.mass for b in dynamic) == pytest.approx(float(m.body_mass.sum()), rel=1e-12)
    # every hinge has an actuator (gear) and damping: a motor; the hamstrings map (below)
    assert all(j.motor is not None for j in spec.joints)
    assert len(caught) == 1 and "tendon" not in str(caught[0].message)


def test_humanoid_hamstrings_become_coupling_limits_of_the_hips_on_the_knees():
    """hamstring_right: L = 0.5 q_hip_y - 0.5 q_knee within [-0.3, 2] (qpos0 = 0, so MuJoCo's
    coordinates are Sharnir's): a = 0.5, b = -0.5, so C = q_hip - m q_knee with m = -b / a = 1
    kept within [-0.3 / a, 2 / a] = [-0.6, 4]."""
    spec, _ = humanoid_spec()
    joints = {j.name: j for j in spec.joints}
    for side in ("right", "left"):
        mimic = joints[f"hip_y_{side}"].mimic
        assert mimic.joint == f"knee_{side}"
        assert (mimic.multiplier, mimic.offset) == (1.0, 0.0)
        assert (mimic.lower, mimic.upper) == (pytest.approx(-0.6), pytest.approx(4.0))
    assert sum(j.mimic is not None for j in spec.joints) == 2


def test_humanoid_hamstring_holds_its_length_when_the_hip_is_driven_as_in_mujoco():
    """The right hip_y motor at ctrl -1 (-120 N m) flexes the hip to its limit (-150 degrees)
    with the knee free: the hamstring L = 0.5 q_hip_y - 0.5 q_knee reaches its lower bound
    -0.3 and bends the knee. In Sharnir L never goes below -0.3 by more than the step's
    second-order turn: the row aims C at the bound with the rates, and a gimbal hinge's
    coordinate moves by h Cdot plus at most about (h w)^2 (w the fastest body's rate) in a
    step, re-measured the next step (not accumulated). MuJoCo's limit is soft (solref 0.02 s):
    it lets L below -0.3 by some centimetres (0.044 seen) under the 120 N m."""
    steps = 100
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    d = mujoco.MjData(m)
    d.ctrl[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, "hip_y_right")] = -1.0
    tendon = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_TENDON, "hamstring_right")
    expected = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        expected.append(d.ten_length[tendon])
    spec, _ = humanoid_spec()
    world = build_world(spec)
    world.set_voltage("hip_y_right", -1.0)        # volts are ctrl (the motor's K / R = gear)
    hip, knee = world.joint_names.index("hip_y_right"), world.joint_names.index("knee_right")
    got, fastest = [], 0.0
    for _ in range(steps):
        world.step()
        got.append(0.5 * world.joint_coord[hip] - 0.5 * world.joint_coord[knee])
        fastest = max(fastest, float(np.abs(world.body_angvel).max()))
    tol = (world.dt * fastest) ** 2
    assert tol < 0.01                               # (seen 7e-3: 17 rad/s)
    assert -0.3 - 0.1 < min(expected) < -0.3        # MuJoCo: the bound reached, soft
    assert min(got) >= -0.3 - tol and max(got) <= 2.0 + tol
    assert min(got) < -0.3 + tol                    # Sharnir: the bound reached too


def test_fixed_tendons_map_to_coupling_limits_or_are_named(tmp_path):
    """t1: L = -2 q_a + q_b in [-1, 0.5], with a's ref 0.2 rad (qpos0 = 0.2: Sharnir's q_a
    starts at 0): L - L0 = -2 (q_a - 0.5 q_b), L0 = -0.4, so a follows b with m = -1 / -2 = 0.5
    and C within [(0.5 + 0.4) / -2, (-1 + 0.4) / -2] = [-0.45, 0.3] (swapped: a < 0). t8 on a
    and c: a follows b already, so c follows a: L = q_c + q_a, m = -1, L0 = 0.2, C within
    [-1.2, 0.8]. t7 on the slider s and c: m = -0.5 / 1, [-0.5, 0.5], its damping named. t6
    (unlimited, no force) does nothing in MuJoCo and is not named; t2 (spatial), t3 (three
    joints) and t5 (a spring, unlimited) are named."""
    xml = """<mujoco><compiler angle="radian"/><worldbody>
      <body name="A" pos="0 0 1"><joint name="a" axis="0 1 0" ref="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/><site name="sa" pos="0.3 0 0"/>
      </body>
      <body name="B" pos="1 0 1"><joint name="b" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/><site name="sb" pos="0.3 0 0"/>
      </body>
      <body name="C" pos="2 0 1"><joint name="c" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body>
      <body name="S" pos="3 0 1"><joint name="s" type="slide" axis="1 0 0"/>
        <geom type="box" size="0.1 0.1 0.1"/></body>
      </worldbody>
      <tendon>
        <fixed name="t1" limited="true" range="-1 0.5">
          <joint joint="a" coef="-2"/><joint joint="b" coef="1"/></fixed>
        <spatial name="t2"><site site="sa"/><site site="sb"/></spatial>
        <fixed name="t3" limited="true" range="-1 1">
          <joint joint="a" coef="1"/><joint joint="b" coef="1"/><joint joint="c" coef="1"/></fixed>
        <fixed name="t5" stiffness="10"><joint joint="b" coef="1"/><joint joint="c" coef="1"/>
        </fixed>
        <fixed name="t6"><joint joint="b" coef="1"/><joint joint="c" coef="1"/></fixed>
        <fixed name="t7" limited="true" range="-0.5 0.5" damping="2">
          <joint joint="s" coef="1"/><joint joint="c" coef="0.5"/></fixed>
        <fixed name="t8" limited="true" range="-1 1">
          <joint joint="a" coef="1"/><joint joint="c" coef="1"/></fixed>
      </tendon></mujoco>"""
    path = write(tmp_path, xml)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = read_scene(path)
    mine = [w for w in caught if issubclass(w.category, MjcfWarning)]
    assert len(mine) == 1
    text = str(mine[0].message)
    for what in ('spatial tendon "t2"', 'fixed tendon "t3" (of 3 joints: only two map)',
                 'fixed tendon "t5" (stiffness)', 'the damping of fixed tendon "t7"'):
        assert what in text, what
    assert '"t1"' not in text and '"t6"' not in text and '"t8"' not in text
    mimic = {j.name: j.mimic for j in spec.joints}
    assert mimic["b"] is None
    for name, (leader, m, lower, upper) in {"a": ("b", 0.5, -0.45, 0.3),
                                            "c": ("a", -1.0, -1.2, 0.8),
                                            "s": ("c", -0.5, -0.5, 0.5)}.items():
        got = mimic[name]
        assert got.joint == leader and got.offset == 0.0, name
        assert (got.multiplier, got.lower, got.upper) == pytest.approx((m, lower, upper)), name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        world = load_scene(path)
    world.step(10)                                   # the couplings build and step
    assert np.all(np.isfinite(world.joint_coord))


def humanoid_torso_heights():
    """The torso's height over the first second, zero control, in MuJoCo and in Sharnir."""
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    d = mujoco.MjData(m)
    torso = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "torso")
    steps = round(1.0 / m.opt.timestep)  # the first second, zero control, same dt
    expected = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        expected.append(d.xpos[torso][2])
    expected = np.array(expected)
    spec, _ = humanoid_spec()
    # at the default 100 iterations (1000 put the torso 4 cm higher at 1 s; with intermediate
    # bodies for the waist, hips and shoulders 100 left it limp, 0.27 m lower)
    world = build_world(spec)
    got = []
    for _ in range(steps):
        world.step()
        got.append(world.body_reference_pose("torso")[0][2])  # the MuJoCo torso frame
    return np.array(got), expected


def test_humanoid_torso_falls_like_in_mujocos_own_simulation():
    got, expected = humanoid_torso_heights()
    start = 1.282
    assert start - expected[-1] > 0.3 and start - got[-1] > 0.3  # both fall (seen 0.397, 0.403)
    # the first 0.4 s (standing, sagging under the joint springs) agree to 0.6 mm (seen) ...
    assert np.abs(got[:80] - expected[:80]).max() < 0.003
    # ... and the whole second, the knees locked at their limits and the feet carrying the
    # fall, to 6 mm (seen). The body's geoms are frictionless (condim 1): until 1f5e3ea a
    # friction of 0 held everything, the limbs stuck where they touched, and Sharnir's torso
    # stayed up to 0.15 m higher than MuJoCo's.
    assert np.abs(got - expected).max() < 0.015


# --- the command line ---------------------------------------------------------


def test_sharnir_run_opens_an_mjcf_file(tmp_path):
    path = write(tmp_path, DOUBLE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    result = subprocess.run([sys.executable, "-m", "sharnir", "run", str(path), "--duration",
                             "0.1", "--json"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 50
    assert set(summary["joints"]) == {"hinge1", "hinge2"}


def test_load_scene_of_an_xml_remembers_its_file(tmp_path):
    path = write(tmp_path, PENDULUM)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MjcfWarning)
        world = load_scene(path)
    assert world.source == str(path) and world.body_names == ["world", "rod"]


def test_mesh_geom_is_a_mesh_whose_corners_stay_where_the_file_puts_them(tmp_path):
    # MuJoCo moves a mesh to its centre of mass and principal axes and the geom's pose back;
    # the hull's corners, carried to the world, are the file's corners plus the body's place
    corners = np.array([[0, 0, 0], [0.3, 0, 0], [0, 0.2, 0], [0, 0, 0.1]], dtype=float)
    xml = f"""<mujoco><asset><mesh name="tet" vertex="{' '.join(map(str, corners.ravel()))}"/>
      </asset><worldbody><body name="rock" pos="1 2 3"><freejoint/>
      <geom type="mesh" mesh="tet" density="500"/></body></worldbody></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    rock = by_name(spec.bodies, "rock")
    assert rock.shape.type == "compound" and len(rock.shape.parts) == 1
    part = rock.shape.parts[0]
    assert part.shape.type == "mesh" and len(part.shape.faces) == 4   # a tetrahedron

    def rot(q):
        w, x, y, z = q
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

    local = np.array(part.shape.vertices) @ rot(part.quat).T + np.array(part.pos)
    world = local @ rot(rock.quat).T + np.array(rock.pos)
    want = corners + np.array([1.0, 2.0, 3.0])
    for corner in want:  # (MuJoCo keeps mesh vertices in float32)
        assert np.min(np.linalg.norm(world - corner, axis=1)) < 1e-6
    assert rock.mass == pytest.approx(500 * 0.3 * 0.2 * 0.1 / 6, rel=1e-6)  # float32 too


def test_slide_and_ball_joints_map_to_prismatic_and_spherical(tmp_path):
    xml = """<mujoco><worldbody>
      <body name="cart" pos="0 0 1" euler="0 0 90"><joint name="rail" type="slide"
        axis="1 0 0" range="-0.5 0.25" frictionloss="4"/>
        <geom type="box" size="0.1 0.1 0.1" mass="2"/>
        <body name="bob" pos="0 0 -0.5"><joint name="ball" type="ball" pos="0 0 0.5"
          frictionloss="0.2"/><geom type="sphere" size="0.05" mass="1"/></body>
      </body></worldbody></mujoco>"""
    spec = quiet_read(write(tmp_path, xml))
    rail, ball = by_name(spec.joints, "rail"), by_name(spec.joints, "ball")
    assert (rail.type, rail.body_a, rail.body_b) == ("prismatic", "world", "cart")
    assert rail.axis == pytest.approx((0.0, 1.0, 0.0), abs=1e-12)  # x turned 90 deg about z
    assert rail.limits == pytest.approx((-0.5, 0.25)) and rail.friction == 4.0
    assert (ball.type, ball.body_a, ball.body_b) == ("spherical", "cart", "bob")
    assert ball.anchor == pytest.approx((0.0, 0.0, 1.0), abs=1e-12)
    assert ball.friction == 0.2 and ball.limits is None


def test_world_geoms_named_like_a_body_get_names_of_their_own(tmp_path):
    xml = """<mujoco><worldbody><geom name="ball" type="plane" size="1 1 1"/>
      <geom name="ball" type="box" size="1 1 1" pos="5 0 0"/>
      <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
      </worldbody></mujoco>"""
    try:
        mujoco.MjModel.from_xml_string(xml)
    except ValueError:  # this MuJoCo wants unique geom names: one clash is enough
        xml = xml.replace('<geom name="ball" type="box" size="1 1 1" pos="5 0 0"/>', "")
    spec = quiet_read(write(tmp_path, xml))
    names = [b.name for b in spec.bodies]
    assert len(set(names)) == len(names) and "ball" in names


ARM = """<mujoco><option timestep="{dt}"/><default><joint armature="{armature}"/></default>
  <worldbody><body name="upper" pos="0 0 1">
    <joint name="shoulder" axis="2 1 1"/>
    <geom type="capsule" fromto="0 0 0 .16 -.16 -.16" size=".04"/>
    <body name="lower" pos=".18 -.18 -.18"><joint name="elbow" axis="0 -1 1"/>
      <geom type="capsule" fromto=".01 .01 .01 .17 .17 .17" size=".031"/>
      <body name="hand" pos=".18 .18 .18"><geom type="sphere" size=".04"/></body>
    </body></body></worldbody></mujoco>"""


def arm_gap(tmp_path, dt, armature, duration=0.5):
    """Largest joint-angle gap between MuJoCo's run of the humanoid's right arm (a double
    pendulum on skew axes, the hand welded on) and Sharnir's run of the same file."""
    path = write(tmp_path, ARM.format(dt=dt, armature=armature), f"arm_{dt}_{armature}.xml")
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    steps = round(duration / dt)
    expected = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        expected.append(d.qpos.copy())
    world = build_world(quiet_read(path), iterations=1000)
    got = world.run(steps).joint[:, :, 0]
    assert np.ptp(np.array(expected)[:, 1]) > 1.0  # the elbow swings
    return np.abs(got - np.array(expected)).max()


def test_arm_chain_converges_to_mujocos_trajectory_as_the_step_shrinks(tmp_path):
    # maximal and reduced coordinates discretise differently: first order in dt (seen 0.020
    # rad at 2.5 ms, 0.010 at 1.25 ms over 0.5 s of a swing of 3.6 rad)
    coarse, fine = arm_gap(tmp_path, 0.0025, 0.0), arm_gap(tmp_path, 0.00125, 0.0)
    assert fine < 0.03
    assert fine < 0.6 * coarse


def test_armature_in_an_arm_chain_follows_mujocos_trajectory(tmp_path):
    # the rotors carried with the bodies through each step (physics/motor.py): seen 0.0051 rad
    # (0.0118 at 2.5 ms); 0.17 rad at any dt while the projection left them out
    assert arm_gap(tmp_path, 0.00125, 0.01) < 0.03


def arm_energy_drift(tmp_path, dt, armature, duration=10.0):
    """Largest change of the arm chain's energy over `duration`: the bodies' kinetic energy,
    the rotors' J_r w^2 / 2 (gear 1: the rotor turns at the joint's rate) and the potential."""
    path = write(tmp_path, ARM.format(dt=dt, armature=armature), f"e_{dt}_{armature}.xml")
    world = build_world(quiet_read(path), iterations=1000)
    mass, inertia = np.array(world.body_mass), np.array(world.body_inertia)
    moving = [i for i, m in enumerate(mass) if 0.0 < m < math.inf]

    def energy():
        e = 0.0
        for i in moving:
            w, x, y, z = world.body_quat[i]
            R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
            wb = R.T @ world.body_angvel[i]
            e += 0.5 * mass[i] * world.body_vel[i] @ world.body_vel[i] + 0.5 * wb @ (
                inertia[i] * wb) + 9.81 * mass[i] * world.body_pos[i][2]
        if world.motors:
            e += 0.5 * armature * float(np.sum(world.motor_state["speed"] ** 2))
        return e

    start, worst = energy(), 0.0
    for _ in range(round(duration / dt / 40)):
        world.step(40)
        worst = max(worst, abs(energy() - start))
    return worst


def test_arm_chain_with_armature_keeps_its_energy_like_one_without(tmp_path):
    # frictionless, unforced (the motors' back-EMF is NO_DAMPING: under 1e-3 J in 10 s): the
    # step's own drift, seen over 10 s at 1.25 ms 0.39 J of 26 J without armature, 0.37 J with
    # (0.96 J while the projection left the rotors out)
    without = arm_energy_drift(tmp_path, 0.00125, 0.0)
    assert 0.0 < without < 1.0
    assert arm_energy_drift(tmp_path, 0.00125, 0.01) < 1.5 * without


def test_dcmotor_actuator_is_the_same_dc_motor(tmp_path):
    xml = """<mujoco><worldbody><body name="arm" pos="0 0 1"><joint name="j" axis="0 1 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody>
      <actuator><dcmotor joint="j" resistance="2" motorconst="0.05" gear="100"
        inductance="0.001" ctrlrange="-24 24"/></actuator></mujoco>"""
    motor = quiet_read(write(tmp_path, xml)).joints[0].motor
    assert (motor.resistance, motor.torque_constant, motor.gear_ratio) == (2.0, 0.05, 100.0)
    assert motor.inductance == pytest.approx(0.001) and motor.voltage_limit == 24.0
    assert motor.efficiency == 1.0 and motor.controller is None


@pytest.mark.parametrize("actuator", [
    '<position joint="pin" kp="5" kv="0.3" gear="2"/>',
    '<velocity joint="pin" kv="0.4" gear="1.5"/>',
    '<motor joint="pin" gear="30" ctrlrange="-1 1"/>',
])
def test_servo_on_a_hinge_follows_mujocos_own_trajectory(tmp_path, actuator):
    # zero control: a position servo holds q = 0 with gear^2 kp, a velocity servo brakes with
    # gear^2 kv, a motor adds nothing; all three on top of the joint's damping and spring
    xml = f"""<mujoco><option timestep="0.002"/><worldbody>
      <body name="bar" pos="0 0 1" euler="0 60 0">
        <joint name="pin" axis="0 1 0" damping="0.1" stiffness="0.5"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03"/></body>
      </worldbody><actuator>{actuator}</actuator></mujoco>"""
    path = write(tmp_path, xml)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    expected = []
    for _ in range(500):
        mujoco.mj_step(m, d)
        expected.append(d.qpos[0])
    got = build_world(quiet_read(path)).run(500).joint[:, 0, 0]
    assert np.ptp(expected) > 0.15
    assert np.abs(got - np.array(expected)).max() < 1e-7  # seen: 1e-9


SERVO_WRIST = """<mujoco>
  <option integrator="{integrator}" timestep="0.002"/>
  <worldbody>
    <body name="hand" pos="0 0 1">
      <joint name="wrist" type="hinge" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="0.1" diaginertia="0.001 0.001 0.001"/>
    </body>
  </worldbody>
  <actuator><position joint="wrist" kp="2000" kv="200"/></actuator>
</mujoco>
"""


@pytest.mark.parametrize("integrator, implicit", [("implicitfast", True), ("implicit", True),
                                                  ("Euler", False), ("RK4", False)])
def test_servos_of_an_implicit_integrator_take_their_rate_term_implicitly(
        tmp_path, integrator, implicit):
    """iiwa14's wrist: kv = 200 on 0.001 kg m^2 at dt 2 ms is h kv / I = 400, stable only
    implicitly, as MuJoCo's implicitfast integrator takes it; under Euler MuJoCo samples it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        spec = read_scene(write(tmp_path, SERVO_WRIST.format(integrator=integrator)))
    [joint] = spec.joints
    assert joint.motor.controller.implicit is implicit


def test_a_stiff_implicit_servo_settles_as_implicit_euler_says(tmp_path):
    """Turned 0.1 rad and let go under kp 2000, kv 200 (its own damping: none, the back-EMF
    1e-6): implicit Euler with the position term sampled, q' = q + h w',
    (I + h kv) w' = I w - h kp q, from the step's start. MuJoCo's implicitfast takes the
    same update."""
    h, I, kp, kv = 0.002, 0.001, 2000.0, 200.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        world = load_scene(write(tmp_path, SERVO_WRIST.format(integrator="implicitfast")),
                           sets=["joints.wrist.motor.controller.target=-0.1"])
    q, w = 0.0, 0.0     # Sharnir's coordinate: 0 at the start; the target is 0.1 rad away
    for _ in range(400):     # 0.8 s: 8 time constants kv / kp
        world.step(1)
        w = (I * w - h * kp * (q + 0.1)) / (I + h * kv)
        q += h * w
    assert world.joint_coord[0] == pytest.approx(q, abs=2e-5)
    assert abs(world.joint_coord[0] + 0.1) < 1e-3           # settled on the target


SUNK = """
<mujoco model="sunk">
  <worldbody>
    <geom name="floor" type="{floor}" size="{size}" pos="0 0 {floor_z}"/>
    <body name="crate" pos="0.3 0 {z}">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.05" density="500"/>
    </body>
  </worldbody>
  <keyframe><key name="up" qpos="0 0 1  1 0 0 0"/></keyframe>
</mujoco>
"""


@pytest.mark.parametrize("floor, size, floor_z", [("plane", "5 5 0.1", 0.0),
                                                  ("box", "5 5 0.01", -0.01)])
def test_a_free_body_sunk_in_the_floor_at_qpos0_is_raised_onto_it(tmp_path, floor, size,
                                                                  floor_z):
    # the crate's centre at z = 0: 5 cm of its 10 cm inside a floor whose top is z = 0
    path = write(tmp_path, SUNK.format(floor=floor, size=size, floor_z=floor_z, z=0.0))
    with pytest.warns(MjcfWarning, match=r'"crate" starting 0\.05 m inside the ground at '
                                         r"qpos0 \(raised onto it; the file's keyframes: up"):
        raw = read_mjcf(path)
    crate = next(b for b in raw["bodies"] if b["name"] == "crate")
    assert crate["pos"] == pytest.approx([0.3, 0.0, 0.05], abs=1e-9)   # resting on the top
    assert raw["keyframes"][0]["bodies"]["crate"]["pos"] == pytest.approx([0.0, 0.0, 1.0])
    with pytest.warns(MjcfWarning):
        world = build_world(read_scene(path))
    world.run(200)                           # and it rests there: no energy from nothing
    _, state, _ = world._ready()
    assert state.body_pos[world.body_names.index("crate"), 2] == pytest.approx(0.05, abs=2e-3)


def test_a_free_body_touching_the_floor_within_a_millimetre_stays_where_the_file_puts_it(
        tmp_path):
    path = write(tmp_path, SUNK.format(floor="plane", size="5 5 0.1", floor_z=0.0, z=0.0495))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MjcfWarning)
        raw = read_mjcf(path)
    crate = next(b for b in raw["bodies"] if b["name"] == "crate")
    assert crate["pos"][2] == pytest.approx(0.0495, abs=1e-12)
