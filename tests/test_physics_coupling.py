"""Joint couplings (physics/coupling.py, URDF's <mimic>): a follower joint keeps
q_f = m q_l + o while its leader is driven, in code, in a scene file and from a URDF.

The expectation is the relation itself with the file's multiplier and offset: with the leader
swept by a servo, q_f - (2 q_l + 0.1) stays within 1e-6 rad from the end of the first step on
(that step closes the offset from q_f = 0). About a fixed hinge axis the coordinate is linear
in the rates, so the row aimed at C = 0 at the step's end meets it to rounding (~1e-15 seen).
"""
import math
import warnings

import numpy as np
import pytest

from sharnir.physics import World
from sharnir.physics.world import DCMotor
from sharnir.scenes import SceneError, load_scene, read_scene
from sharnir.scenes.urdf import UrdfWarning

M, O = 2.0, 0.1
TOL = 1e-6    # rad


def two_hinges(gravity=(0.0, 0.0, -9.81)):
    """A leader arm on a vertical hinge at the origin, a follower arm on its own hinge at
    x = 1, both on the fixed world; the leader driven by a position servo sweeping a sine."""
    w = World(dt=0.005, gravity=gravity)
    w.add_body("lead_arm", mass=1.0, inertia=(0.01, 0.05, 0.05), pos=(0.25, 0.0, 0.0))
    w.add_body("follow_arm", mass=2.0, inertia=(0.02, 0.1, 0.1), pos=(1.25, 0.0, 0.0))
    w.add_joint("lead", "revolute", "world", "lead_arm", anchor=(0.0, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0))
    w.add_joint("follow", "revolute", "world", "follow_arm", anchor=(1.0, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0))
    w.add_motor("lead", DCMotor(resistance=1.0, torque_constant=0.5, voltage_limit=48.0))
    w.set_controller("lead", "position", kp=200.0, kd=5.0, sine=(0.0, 0.3, 1.0))
    return w


def coords(world, steps):
    rec = world.run(steps)
    return rec.joint[:, :, 0]     # (steps, njoint) joint coordinates


def test_follower_keeps_twice_the_leader_plus_the_offset_while_driven():
    w = two_hinges()
    w.add_coupling("follow", "lead", multiplier=M, offset=O)
    q = coords(w, 400)
    lead, follow = q[:, 0], q[:, 1]
    assert np.ptp(lead) > 0.4                      # the leader did move (+-0.3 rad sine)
    np.testing.assert_allclose(follow[1:], M * lead[1:] + O, atol=TOL)


def test_without_the_coupling_the_follower_stays_put():
    w = two_hinges()
    q = coords(w, 200)
    assert np.ptp(q[:, 0]) > 0.2 and np.max(np.abs(q[:, 1])) < 1e-9


def test_coupling_a_slider_to_a_hinge_holds_in_metres_per_radian():
    w = World(dt=0.005, gravity=(0.0, 0.0, 0.0))
    w.add_body("wheel", mass=1.0, inertia=(0.05, 0.05, 0.05))
    w.add_body("rack", mass=3.0, inertia=(0.1, 0.1, 0.1), pos=(0.0, 1.0, 0.0))
    w.add_joint("turn", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0))
    w.add_joint("slide", "prismatic", "world", "rack", anchor=(0.0, 1.0, 0.0),
                axis=(1.0, 0.0, 0.0))
    w.add_coupling("slide", "turn", multiplier=-0.05, offset=0.0)   # a 5 cm pinion
    w.add_load("wheel", torque=(0.0, 0.0, 0.2), start=0.0, end=0.5)
    q = coords(w, 200)
    assert np.ptp(q[:, 0]) > 0.5
    np.testing.assert_allclose(q[:, 1], -0.05 * q[:, 0], atol=1e-4)


def test_bad_couplings_are_value_errors():
    w = two_hinges()
    with pytest.raises(ValueError, match="cannot follow itself"):
        w.add_coupling("lead", "lead")
    w.add_body("ball", mass=1.0, inertia=(1.0, 1.0, 1.0), pos=(3.0, 0.0, 0.0))
    w.add_joint("socket", "spherical", "world", "ball", anchor=(3.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="only revolute and prismatic"):
        w.add_coupling("socket", "lead")
    with pytest.raises(ValueError, match="finite"):
        w.add_coupling("follow", "lead", multiplier=math.inf)
    w.add_coupling("follow", "lead")
    with pytest.raises(ValueError, match="follows 'lead' already"):
        w.add_coupling("follow", "lead")
    with pytest.raises(ValueError, match="is coupled"):
        w.release("follow")


SCENE = """
world = { dt = 0.005, gravity = [0.0, 0.0, -9.81] }
bodies = [
  { name = "lead_arm", mass = 1.0, inertia = [0.01, 0.05, 0.05], pos = [0.25, 0.0, 0.0] },
  { name = "follow_arm", mass = 2.0, inertia = [0.02, 0.1, 0.1], pos = [1.25, 0.0, 0.0] },
]

[[joints]]
name = "lead"
type = "revolute"
body_a = "world"
body_b = "lead_arm"
axis = [0.0, 0.0, 1.0]
motor.resistance = 1.0
motor.torque_constant = 0.5
motor.voltage_limit = 48.0
motor.controller = { mode = "position", kp = 200.0, kd = 5.0, sine = [0.0, 0.3, 1.0] }

[[joints]]
name = "follow"
type = "revolute"
body_a = "world"
body_b = "follow_arm"
anchor = [1.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
MIMIC
"""


def test_scene_file_mimic_keeps_the_relation(tmp_path):
    path = tmp_path / "mimic.toml"
    path.write_text(SCENE.replace("MIMIC", 'mimic = { joint = "lead", multiplier = 2.0, '
                                           "offset = 0.1 }"))
    q = coords(load_scene(path), 300)
    np.testing.assert_allclose(q[1:, 1], M * q[1:, 0] + O, atol=TOL)


@pytest.mark.parametrize("mimic, message", [
    ('mimic = { joint = "nobody" }', 'field "mimic.joint": unknown joint "nobody"'),
    ('mimic = { joint = "follow" }', 'field "mimic.joint": a joint cannot follow itself'),
])
def test_bad_mimic_entries_name_the_joint_and_field(tmp_path, mimic, message):
    path = tmp_path / "mimic.toml"
    path.write_text(SCENE.replace("MIMIC", mimic))
    with pytest.raises(SceneError, match=message):
        read_scene(path)


URDF = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="palm"/>
  <link name="left"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.002"/></inertial></link>
  <link name="right"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.002"/></inertial></link>
  <joint name="left_hinge" type="revolute"><parent link="palm"/><child link="left"/>
    <origin xyz="0 0.05 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="4"/></joint>
  <joint name="right_hinge" type="revolute"><parent link="palm"/><child link="right"/>
    <origin xyz="0 -0.05 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="4"/>
    <mimic joint="left_hinge" multiplier="2" offset="0.1"/></joint>
</robot>
"""


def test_urdf_mimic_joint_follows_its_leader(tmp_path):
    path = tmp_path / "gripper.urdf"
    path.write_text(URDF)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UrdfWarning)
        spec = read_scene(path)
    right = next(j for j in spec.joints if j.name == "right_hinge")
    assert right.mimic.joint == "left_hinge" and right.mimic.multiplier == M
    assert right.mimic.offset == O and right.motor is None   # its leader drives it
    world = load_scene(path)
    world.set_controller("left_hinge", "position", kp=40.0, sine=(0.0, 0.3, 1.0))
    q = coords(world, 300)
    j_l, j_r = world.joint_names.index("left_hinge"), world.joint_names.index("right_hinge")
    assert np.ptp(q[:, j_l]) > 0.2
    np.testing.assert_allclose(q[1:, j_r], M * q[1:, j_l] + O, atol=TOL)


G = 9.81


def balanced(follower, bounds=None):
    """A follower held still by its coupling to a leader whose weight balances it (virtual work:
    tau_l dq_l + tau_f dq_f = 0 with dq_f = m dq_l, so tau_l = -m tau_f), both at rest at q = 0
    with no motor, friction or limit. Leader: a 1 kg arm 1 m out along -x from a hinge about y
    at the origin, its weight's moment about +y is (-1, 0, 0) x (0, 0, -g) = -g.
    follower "hinge": a 2 kg arm 0.25 m out along +x from a hinge about y at x = 1: its weight's
    moment 0.5 g about +y, so m = 2 (-g = -2 * 0.5 g).
    follower "slider": a 3 kg rack on a vertical slider (its weight -3 g along +z), leader arm
    0.15 m out along +x from the hinge (moment 0.15 g), so m = 0.05 m/rad (0.15 g = 0.05 * 3 g).
    With `bounds`, the coupling is that limit on C = q_f - m q_l instead of the equality.
    Returns the world and the weight's (force, moment about the anchor) of leader and follower."""
    w = World(dt=0.005, gravity=(0.0, 0.0, -G), iterations=100, tolerance=1e-12)
    if follower == "hinge":
        lever, m = -1.0, 2.0
        w.add_body("follow_arm", mass=2.0, inertia=(0.02, 0.1, 0.1), pos=(1.25, 0.0, 0.0))
        w.add_joint("follow", "revolute", "world", "follow_arm", anchor=(1.0, 0.0, 0.0),
                    axis=(0.0, 1.0, 0.0))
        follow_weight = ([0.0, 0.0, -2.0 * G], [0.0, 0.5 * G, 0.0])
    else:
        lever, m = 0.15, 0.05
        w.add_body("rack", mass=3.0, inertia=(0.1, 0.1, 0.1), pos=(0.0, 1.0, 0.0))
        w.add_joint("follow", "prismatic", "world", "rack", anchor=(0.0, 1.0, 0.0),
                    axis=(0.0, 0.0, 1.0))
        follow_weight = ([0.0, 0.0, -3.0 * G], [0.0, 0.0, 0.0])
    w.add_body("lead_arm", mass=1.0, inertia=(0.01, 0.05, 0.05), pos=(lever, 0.0, 0.0))
    w.add_joint("lead", "revolute", "world", "lead_arm", axis=(0.0, 1.0, 0.0))
    lower, upper = (0.0, 0.0) if bounds is None else bounds
    w.add_coupling("follow", "lead", multiplier=m, offset=0.0, lower=lower, upper=upper)
    lead_weight = ([0.0, 0.0, -G], [0.0, lever * G, 0.0])
    return w, lead_weight, follow_weight


@pytest.mark.parametrize("follower", ["hinge", "slider"])
def test_reactions_of_coupled_joints_at_rest_carry_the_couplings_share(follower):
    """Each arm is at rest, so its joint's reaction (all the wrench body A exerts on B through
    the joint) is minus its weight's wrench about the anchor, the moment about the axis
    included, which only the coupling carries: tau_c = -tau_f on the follower (its row J_f) and
    -m tau_c = -tau_l on the leader (its row -m J_l), tau_f, tau_l the weights' moments about
    the axes. Without the coupling's share both axial parts would read 0."""
    w, lead_weight, follow_weight = balanced(follower)
    w.step(50)
    lead, follow = w.joint_names.index("lead"), w.joint_names.index("follow")
    assert np.max(np.abs(w.joint_vel)) < 1e-6          # held still by the coupling alone
    for j, (force, moment) in ((lead, lead_weight), (follow, follow_weight)):
        np.testing.assert_allclose(w.joint_reaction[j, :3], -np.array(force), atol=1e-6 * G)
        np.testing.assert_allclose(w.joint_reaction[j, 3:], -np.array(moment), atol=1e-6 * G)


def three_hinges():
    """two_hinges and a third arm on a hinge at x = 2 (the chain's end)."""
    w = two_hinges()
    w.add_body("end_arm", mass=0.5, inertia=(0.005, 0.02, 0.02), pos=(2.25, 0.0, 0.0))
    w.add_joint("end", "revolute", "world", "end_arm", anchor=(2.0, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0))
    return w


def test_a_chain_of_couplings_composes_to_its_root_leader():
    """end follows follow follows lead: q_end = -0.5 q_follow + 0.2 = -0.5 (2 q_lead + 0.1)
    + 0.2 = -q_lead + 0.15."""
    w = three_hinges()
    w.add_coupling("follow", "lead", multiplier=M, offset=O)
    w.add_coupling("end", "follow", multiplier=-0.5, offset=0.2)
    q = coords(w, 400)
    assert np.ptp(q[:, 0]) > 0.4
    np.testing.assert_allclose(q[1:, 1], M * q[1:, 0] + O, atol=TOL)
    np.testing.assert_allclose(q[1:, 2], -q[1:, 0] + 0.15, atol=TOL)


def test_a_cycle_of_couplings_is_a_value_error_naming_the_joints():
    w = three_hinges()
    w.add_coupling("follow", "lead")
    w.add_coupling("end", "follow")
    with pytest.raises(ValueError, match="cycle \\('lead' -> 'end' -> 'follow' -> 'lead'\\)"):
        w.add_coupling("lead", "end")
    w.step(1)                                # the refused coupling left nothing behind
    assert np.all(np.isfinite(w.joint_coord))
    pair = two_hinges()
    pair.add_coupling("follow", "lead")
    with pytest.raises(ValueError, match="cycle \\('lead' -> 'follow' -> 'lead'\\)"):
        pair.add_coupling("lead", "follow")


CHAIN = (SCENE.replace("MIMIC", "MIMIC_FOLLOW") + """
[[joints]]
name = "end"
type = "revolute"
body_a = "world"
body_b = "end_arm"
anchor = [2.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
MIMIC_END
""").replace("bodies = [\n", 'bodies = [\n  { name = "end_arm", mass = 0.5, '
                     'inertia = [0.005, 0.02, 0.02], pos = [2.25, 0.0, 0.0] },\n')


def test_scene_file_chain_of_mimics_composes(tmp_path):
    path = tmp_path / "chain.toml"
    path.write_text(CHAIN.replace("MIMIC_FOLLOW", 'mimic = { joint = "lead", multiplier = 2.0, '
                                  "offset = 0.1 }")
                    .replace("MIMIC_END", 'mimic = { joint = "follow", multiplier = -0.5, '
                             "offset = 0.2 }"))
    world = load_scene(path)
    q = coords(world, 300)
    end = world.joint_names.index("end")
    np.testing.assert_allclose(q[1:, end], -q[1:, 0] + 0.15, atol=TOL)


def test_scene_file_mimic_cycle_is_one_scene_error_naming_file_and_joints(tmp_path):
    path = tmp_path / "cycle.toml"
    path.write_text(CHAIN.replace("MIMIC_FOLLOW", 'mimic = { joint = "end" }')
                    .replace("MIMIC_END", 'mimic = { joint = "follow" }'))
    with pytest.raises(SceneError) as err:
        read_scene(path)
    message = str(err.value)
    assert str(path) in message and message.count("form a cycle") == 1
    assert 'the mimic joints form a cycle ("follow" -> "end" -> "follow")' in message


def test_urdf_chain_of_mimics_composes(tmp_path):
    """A third finger mimicking the right one: q = 3 q_right - 0.2 = 6 q_left + 0.1."""
    path = tmp_path / "chain.urdf"
    path.write_text(URDF.replace("</robot>", """
  <link name="thumb"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.002"/></inertial></link>
  <joint name="thumb_hinge" type="revolute"><parent link="palm"/><child link="thumb"/>
    <origin xyz="0.05 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-10" upper="10" effort="5" velocity="4"/>
    <mimic joint="right_hinge" multiplier="3" offset="-0.2"/></joint>
</robot>"""))
    world = load_scene(path)
    world.set_controller("left_hinge", "position", kp=40.0, sine=(0.0, 0.1, 1.0))
    q = coords(world, 300)
    left, thumb = world.joint_names.index("left_hinge"), world.joint_names.index("thumb_hinge")
    assert np.ptp(q[:, left]) > 0.05
    np.testing.assert_allclose(q[1:, thumb], 6.0 * q[1:, left] + 0.1, atol=TOL)


@pytest.mark.parametrize("left_mimic, right_mimic, message", [
    ("", "right_hinge", 'line 11: joint "right_hinge": <mimic> names the joint itself'),
    ('<mimic joint="right_hinge"/>', "left_hinge",
     'line 8: joint "left_hinge": the <mimic> joints form a cycle ("left_hinge" -> '
     '"right_hinge" -> "left_hinge")'),
])
def test_urdf_self_mimic_or_cycle_is_one_scene_error_naming_file_line_and_joints(
        tmp_path, left_mimic, right_mimic, message):
    path = tmp_path / "bad.urdf"
    path.write_text(URDF.replace('velocity="4"/></joint>', f'velocity="4"/>{left_mimic}</joint>',
                                 1).replace('mimic joint="left_hinge"',
                                            f'mimic joint="{right_mimic}"'))
    with pytest.raises(SceneError) as err:
        read_scene(path)
    assert str(err.value).startswith(f"{path}: {message}") and "\n" not in str(err.value)


# --- coupling limits: C = q_f - m q_l - o kept within [lower, upper] (MuJoCo's fixed tendons) --

H = 0.005
REACH = H * 25.0   # a bound nearer than h (2 |Cdot| + 25 rad/s) enters the solve (constraint.py)


def falling_arms(bounds=None):
    """Two arms on hinges about +y, level and at rest at the start. The leader, 1 kg 0.25 m out
    along -x from a hinge at the origin (I_l = 0.05 + 1 * 0.25^2 = 0.1125 kg m^2 about it),
    and the follower, 2 kg 0.25 m out along +x from a hinge at x = 1 (I_f = 0.1 + 2 * 0.25^2
    = 0.225). Their weights' moments about +y, (-0.25 cos q_l, 0, .) x (0, 0, -g) and
    (0.25 cos q_f, 0, .) x (0, 0, -2 g), are tau_l = -0.25 g cos q_l and tau_f = 0.5 g cos q_f,
    so gravity drives them apart: C = q_f - q_l has C'' = tau_f / I_f - tau_l / I_l
    = (20 g / 9) (cos q_f + cos q_l) > 0 while cos q_f + cos q_l > 0."""
    w = World(dt=H, gravity=(0.0, 0.0, -G), iterations=100, tolerance=1e-12)
    w.add_body("lead_arm", mass=1.0, inertia=(0.01, 0.05, 0.05), pos=(-0.25, 0.0, 0.0))
    w.add_body("follow_arm", mass=2.0, inertia=(0.02, 0.1, 0.1), pos=(1.25, 0.0, 0.0))
    w.add_joint("lead", "revolute", "world", "lead_arm", axis=(0.0, 1.0, 0.0))
    w.add_joint("follow", "revolute", "world", "follow_arm", anchor=(1.0, 0.0, 0.0),
                axis=(0.0, 1.0, 0.0))
    if bounds is not None:
        w.add_coupling("follow", "lead", lower=bounds[0], upper=bounds[1])
    return w


def test_a_coupling_limit_stops_the_arms_gravity_drives_apart_exactly_at_its_bound():
    """Free, C reaches 0.3 after about 0.1 s. Coupled with C in [-0.2, 0.3]: the same motion,
    bit for bit, until the step in which the free C would pass 0.3 (the row, in reach, takes
    no impulse: it only stops an approach that would cross the bound within the step); from
    then on C = 0.3 (about a fixed hinge axis the coordinates are linear in the rates, so the
    row aimed at the bound meets it to rounding) while cos q_f + cos q_l > 0, never above it,
    and the row only pushes C down: its impulse P <= 0. Held, the arms turn as one, q_f'' =
    q_l'': (tau_f + lam) / I_f = (tau_l - lam) / I_l (the row's torque lam on the follower,
    -m lam = -lam on the leader), so lam = (I_f tau_l - I_l tau_f) / (I_f + I_l)
    = -(g / 6) (cos q_l + cos q_f) at the step's start, which P / h is once the impact of the
    first held step is past."""
    steps = 120
    free = coords(falling_arms(), steps)
    reach = int(np.argmax(free[:, 1] - free[:, 0] > 0.3))
    assert 10 < reach < steps - 20                        # it does cross 0.3, well inside the run
    w = falling_arms((-0.2, 0.3))
    q, impulse, lam = np.zeros((steps, 2)), np.zeros(steps), np.zeros(steps)
    for n in range(steps):
        lam[n] = -(G / 6.0) * (math.cos(w.joint_coord[0]) + math.cos(w.joint_coord[1]))
        w.step()
        q[n] = w.joint_coord
        impulse[n] = w._work.coupling_impulse[0]
    np.testing.assert_array_equal(q[:reach], free[:reach])
    C = q[:, 1] - q[:, 0]
    assert np.max(C) <= 0.3 + 1e-12
    held = np.cos(q[:, 0]) + np.cos(q[:, 1]) > 0.0
    assert held[reach:].sum() > 50
    np.testing.assert_allclose(C[reach:][held[reach:]], 0.3, atol=1e-12)
    assert np.all(impulse <= 0.0) and np.all(impulse[:reach] == 0.0)
    np.testing.assert_allclose(impulse[reach + 2:] / H, lam[reach + 2:], atol=1e-6)


def test_inside_its_range_a_coupling_limit_changes_nothing():
    """two_hinges' leader sweeps about +-0.3 rad and the free follower stays at 0 (see
    test_without_the_coupling_the_follower_stays_put), so C = q_f - q_l stays inside
    [-0.35, 0.35]; the record is the uncoupled one bit for bit, though the bound came within
    a step's reach (the row was in the solve, with no impulse)."""
    free = two_hinges().run(400).joint
    w = two_hinges()
    w.add_coupling("follow", "lead", lower=-0.35, upper=0.35)
    got = w.run(400).joint
    C = got[:, 1, 0] - got[:, 0, 0]
    assert 0.35 - np.max(np.abs(C)) < REACH
    np.testing.assert_array_equal(got, free)


def test_an_equal_lower_and_upper_is_the_equality_at_that_value():
    """lower = upper = 0.1 with no offset holds C = q_f - 2 q_l at 0.1: the offset's relation
    q_f = 2 q_l + 0.1; the default bounds (0, 0) are the plain mimic, bit for bit."""
    w = two_hinges()
    w.add_coupling("follow", "lead", multiplier=M, lower=O, upper=O)
    q = coords(w, 400)
    np.testing.assert_allclose(q[1:, 1], M * q[1:, 0] + O, atol=TOL)
    plain, zero = two_hinges(), two_hinges()
    plain.add_coupling("follow", "lead", multiplier=M, offset=O)
    zero.add_coupling("follow", "lead", multiplier=M, offset=O, lower=0.0, upper=0.0)
    np.testing.assert_array_equal(plain.run(200).joint, zero.run(200).joint)


@pytest.mark.parametrize("bounds, message", [
    ((0.2, 0.1), "joint 'follow': the coupling's lower bound must not exceed its upper "
                 "\\(got \\[0.2, 0.1\\]\\)"),
    ((math.nan, 0.1), "joint 'follow': the coupling's lower and upper bounds must be finite "
                      "\\(got nan, 0.1\\)"),
    ((-math.inf, 0.1), "joint 'follow': the coupling's lower and upper bounds must be finite"),
])
def test_bad_coupling_bounds_are_one_line_value_errors_naming_the_joint(bounds, message):
    w = two_hinges()
    with pytest.raises(ValueError, match=message) as err:
        w.add_coupling("follow", "lead", lower=bounds[0], upper=bounds[1])
    assert "\n" not in str(err.value)
    w.add_coupling("follow", "lead", lower=-0.1, upper=0.1)   # nothing was left behind


@pytest.mark.parametrize("follower, bounds", [("hinge", (-0.1, 0.0)), ("slider", (0.0, 0.1))])
def test_a_coupling_limit_holding_the_arms_at_its_bound_carries_the_equalitys_reactions(
        follower, bounds):
    """balanced(): with the limit instead of the equality, gravity drives C = q_f - m q_l into
    the bound it starts at (C = 0): the hinge follower's moment +0.5 g turns q_f up and the
    leader's -g turns q_l down, so C'' > 0 and the upper bound 0 holds it; the rack falls
    (q_f'' < 0 along +z) and the leader arm's +0.15 g turns q_l up, so C'' < 0 and the lower
    bound 0 holds it. Held at C = 0 the arms are the balanced pair at rest, with the same
    reactions (test_reactions_of_coupled_joints_at_rest_carry_the_couplings_share)."""
    w, lead_weight, follow_weight = balanced(follower, bounds)
    w.step(50)
    lead, follow = w.joint_names.index("lead"), w.joint_names.index("follow")
    assert np.max(np.abs(w.joint_vel)) < 1e-6          # held still by the limit alone
    m = 2.0 if follower == "hinge" else 0.05
    C = w.joint_coord[follow] - m * w.joint_coord[lead]
    assert abs(C) < 1e-12                              # at the bound C = 0 it starts at
    for j, (force, moment) in ((lead, lead_weight), (follow, follow_weight)):
        np.testing.assert_allclose(w.joint_reaction[j, :3], -np.array(force), atol=1e-6 * G)
        np.testing.assert_allclose(w.joint_reaction[j, 3:], -np.array(moment), atol=1e-6 * G)


def test_scene_file_mimic_range_drags_the_follower_only_at_its_bounds(tmp_path):
    """mimic = { joint = "lead", lower = -0.1, upper = 0.1 }: C = q_f - q_l stays within
    +-0.1 rad. The free follower would stay at 0 while the leader sweeps about +-0.3 rad, so
    the bounds must drag it: it turns at least ptp(q_l) - 0.2."""
    path = tmp_path / "limit.toml"
    path.write_text(SCENE.replace("MIMIC", 'mimic = { joint = "lead", lower = -0.1, '
                                           "upper = 0.1 }"))
    spec = read_scene(path)
    mimic = next(j for j in spec.joints if j.name == "follow").mimic
    assert (mimic.multiplier, mimic.offset, mimic.lower, mimic.upper) == (1.0, 0.0, -0.1, 0.1)
    q = coords(load_scene(path), 400)
    C = q[:, 1] - q[:, 0]
    assert np.ptp(q[:, 0]) > 0.4
    assert np.max(np.abs(C)) <= 0.1 + TOL
    assert np.ptp(q[:, 1]) >= np.ptp(q[:, 0]) - 0.2 - TOL


@pytest.mark.parametrize("mimic, message", [
    ('mimic = { joint = "lead", lower = 0.2, upper = 0.1 }',
     'joints\\[1\\] "follow": field "mimic.upper": must not be less than lower = 0.2 '
     '\\(got 0.1\\)'),
    ('mimic = { joint = "lead", lower = nan }', 'field "mimic.lower": NaN or infinite value'),
])
def test_bad_mimic_ranges_are_one_scene_error_naming_the_joint_and_field(tmp_path, mimic,
                                                                         message):
    path = tmp_path / "limit.toml"
    path.write_text(SCENE.replace("MIMIC", mimic))
    with pytest.raises(SceneError, match=message) as err:
        read_scene(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
