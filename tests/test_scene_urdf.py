"""URDF files read as scenes (scenes/urdf.py): every number checked against the file's own
numbers, worked through on paper here (rotations written out, the parallel-axis theorem, the
small-angle period), or against yourdfpy's forward kinematics; malformed files give one
SceneError naming the file and the element."""
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, G, rotation_matrices

from sharnir.scenes import SceneError, build_world, load_scene, read_scene
from sharnir.scenes.schema import SceneSpec
from sharnir.scenes.urdf import LOOP_TAU, UrdfWarning, motor_spec, read_urdf

FIXTURES = Path(__file__).parent / "fixtures" / "urdf"


def rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rpy(r, p, y):
    """URDF's roll, pitch, yaw about the fixed x, y, z axes."""
    return rz(y) @ ry(p) @ rx(r)


def write(folder, text, name="robot.urdf"):
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0"?>\n<robot name="test">\n{text}\n</robot>\n')
    return path


def world_of(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        raw = read_urdf(path, **options)
    return build_world(SceneSpec.model_validate(raw), source=str(path))


def body(world, name):
    return world.body_names.index(name)


def world_inertia(world, name):
    i = body(world, name)
    R = rotation_matrices(world.body_quat[i])
    return R @ np.diag(world.body_inertia[i]) @ R.T


# --- a double pendulum: masses, centres, inertias, joints ------------------------------------

BASE_XYZ = np.array([0.1, 0.0, 1.2])
HINGE_RPY = (0.0, 0.0, 0.7)
ROD_COM, ROD_COM_RPY = np.array([0.02, 0.01, -0.4]), (0.3, -0.2, 0.5)
ROD_I = np.array([[0.08, 0.01, 0.0], [0.01, 0.07, 0.005], [0.0, 0.005, 0.03]])
ELBOW_XYZ, ELBOW_RPY = np.array([0.0, 0.0, -0.8]), (0.4, 0.0, 0.0)
TIP_COM, TIP_COM_RPY = np.array([0.0, 0.03, -0.25]), (0.0, 0.6, 0.0)
TIP_I = np.array([[0.02, 0.0, 0.003], [0.0, 0.025, 0.0], [0.003, 0.0, 0.008]])

DOUBLE = """
<link name="base">
  <inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial>
</link>
<link name="rod">
  <inertial>
    <origin xyz="0.02 0.01 -0.4" rpy="0.3 -0.2 0.5"/>
    <mass value="1.5"/>
    <inertia ixx="0.08" ixy="0.01" ixz="0" iyy="0.07" iyz="0.005" izz="0.03"/>
  </inertial>
  <collision>
    <origin xyz="0 0 -0.4"/>
    <geometry><box size="0.04 0.06 0.8"/></geometry>
  </collision>
</link>
<link name="tip">
  <inertial>
    <origin xyz="0 0.03 -0.25" rpy="0 0.6 0"/>
    <mass value="0.7"/>
    <inertia ixx="0.02" ixy="0" ixz="0.003" iyy="0.025" iyz="0" izz="0.008"/>
  </inertial>
  <collision>
    <origin xyz="0 0 -0.25" rpy="1.5707963267948966 0 0"/>
    <geometry><cylinder radius="0.03" length="0.5"/></geometry>
  </collision>
  <collision>
    <origin xyz="0 0 -0.5"/>
    <geometry><sphere radius="0.05"/></geometry>
  </collision>
</link>
<joint name="hinge" type="revolute">
  <parent link="base"/><child link="rod"/>
  <origin xyz="0.1 0 1.2" rpy="0 0 0.7"/>
  <axis xyz="0 1 0"/>
  <limit lower="-1.2" upper="0.9" effort="5" velocity="3"/>
  <dynamics friction="0.25" damping="0.1"/>
</joint>
<joint name="elbow" type="continuous">
  <parent link="rod"/><child link="tip"/>
  <origin xyz="0 0 -0.8" rpy="0.4 0 0"/>
  <axis xyz="0 0.6 0.8"/>
  <limit effort="2" velocity="4"/>
</joint>
"""


@pytest.fixture(scope="module")
def double(tmp_path_factory):
    return world_of(write(tmp_path_factory.mktemp("double"), DOUBLE), motors=False)


def link_poses():
    """The rod's and the tip's link frames at q = 0, composed by hand."""
    R_rod = rpy(*HINGE_RPY)
    p_tip = BASE_XYZ + R_rod @ ELBOW_XYZ
    return (BASE_XYZ, R_rod), (p_tip, R_rod @ rpy(*ELBOW_RPY))


def test_links_become_bodies_with_the_files_masses(double):
    assert sorted(double.body_names) == ["base", "rod", "tip", "world"]
    assert double.body_mass[body(double, "base")] == 2.0
    assert double.body_mass[body(double, "rod")] == 1.5
    assert double.body_mass[body(double, "tip")] == 0.7


def test_each_body_sits_at_its_links_inertial_origin(double):
    (p_rod, R_rod), (p_tip, R_tip) = link_poses()
    assert np.allclose(double.body_pos[body(double, "rod")], p_rod + R_rod @ ROD_COM,
                       atol=1e-12)
    assert np.allclose(double.body_pos[body(double, "tip")], p_tip + R_tip @ TIP_COM,
                       atol=1e-12)


def test_a_rotated_inertial_gives_the_rotated_inertia_tensor(double):
    (_, R_rod), (_, R_tip) = link_poses()
    A = R_rod @ rpy(*ROD_COM_RPY)
    assert np.allclose(world_inertia(double, "rod"), A @ ROD_I @ A.T, atol=1e-12)
    B = R_tip @ rpy(*TIP_COM_RPY)
    assert np.allclose(world_inertia(double, "tip"), B @ TIP_I @ B.T, atol=1e-12)


def test_the_collision_shapes_stay_where_the_file_puts_them(double):
    # body_reference_pose is the link frame the compound is written in
    (p_rod, R_rod), (p_tip, R_tip) = link_poses()
    for name, (p, R) in (("rod", (p_rod, R_rod)), ("tip", (p_tip, R_tip))):
        pos, quat = double.body_reference_pose(name)
        assert np.allclose(pos, p, atol=1e-12)
        assert np.allclose(rotation_matrices(quat), R, atol=1e-12)
    parts = double.body_shapes[body(double, "tip")].parts
    assert [type(s).__name__ for s, _, _ in parts] == ["Cylinder", "Sphere"]
    assert parts[0][0].radius == 0.03 and parts[0][0].half_length == 0.25
    assert np.allclose(parts[1][1], (0.0, 0.0, -0.5))
    assert double.body_shapes[body(double, "rod")].parts[0][0].half_extents == (0.02, 0.03, 0.4)


def test_joints_have_the_files_anchors_axes_limits_and_friction(double):
    (p_rod, R_rod), (p_tip, R_tip) = link_poses()
    names = double.joint_names
    assert names == ["base_to_world", "hinge", "elbow"]
    anchors, axes = double.joint_frames_world()
    assert np.allclose(anchors[1], p_rod, atol=1e-12)
    assert np.allclose(axes[1], R_rod @ (0.0, 1.0, 0.0), atol=1e-12)
    assert np.allclose(anchors[2], p_tip, atol=1e-12)
    assert np.allclose(axes[2], R_tip @ (0.0, 0.6, 0.8), atol=1e-12)
    assert double.joint_limits == [None, (-1.2, 0.9), None]
    assert list(double.joint_friction_limit) == [0.0, 0.25, 0.0]
    assert list(double.joint_types) == ["fixed", "revolute", "revolute"]


def test_damping_becomes_the_joints_viscous_damping_without_a_warning(tmp_path):
    path = write(tmp_path, DOUBLE)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UrdfWarning)
        read_urdf(path, motors=False)
    assert list(world_of(path, motors=False).joint_damping) == [0.0, 0.1, 0.0]


def test_a_prismatic_joint_slides_along_its_axis_from_its_anchor(tmp_path):
    """A frictionless slider tilted 30 degrees from vertical: q = (g . axis) t^2 / 2 (as the
    integrator steps it) until it reaches its lower limit, which it keeps."""
    text = """
<link name="rail"/>
<link name="carriage"><inertial><mass value="0.8"/><inertia ixx="0.001" iyy="0.001"
  izz="0.001"/></inertial></link>
<joint name="slide" type="prismatic">
  <parent link="rail"/><child link="carriage"/>
  <origin xyz="0.3 -0.2 1.0" rpy="0.5235987755982988 0 0"/>
  <axis xyz="0 0 1"/>
  <limit lower="-0.4" upper="0.1" effort="10" velocity="1"/>
</joint>
"""
    w = world_of(write(tmp_path, text), motors=False)
    axis = rx(math.pi / 6) @ (0.0, 0.0, 1.0)
    anchors, axes = w.joint_frames_world()
    assert np.allclose(anchors[0], (0.3, -0.2, 1.0)) and np.allclose(axes[0], axis)
    assert list(w.joint_types) == ["prismatic"] and w.joint_limits == [(-0.4, 0.1)]
    rec = w.run(int(round(0.2 / w.dt)))
    a = -G * axis[2]
    t = rec.t[-1]   # semi-implicit Euler under a constant a: q_n = a h^2 n (n + 1) / 2
    assert rec.joint[-1, 0, 0] == pytest.approx(0.5 * a * t * (t + w.dt), rel=1e-4)
    rec = w.run(int(round(1.0 / w.dt)))
    assert rec.joint[-1, 0, 0] == pytest.approx(-0.4, abs=1e-3)


def test_floating_planar_and_mimic_joints_are_named_in_the_warning(tmp_path):
    text = TWO_LINKS + """
<link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
<link name="d"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
<joint name="free" type="floating"><parent link="a"/><child link="b"/></joint>
<joint name="flat" type="planar"><parent link="a"/><child link="c"/><axis xyz="0 0 1"/></joint>
<joint name="follower" type="continuous"><parent link="a"/><child link="d"/>
  <mimic joint="free" multiplier="2"/></joint>
"""
    with pytest.warns(UrdfWarning) as caught:
        raw = read_urdf(write(tmp_path, text))
    assert len(caught) == 1
    message = str(caught[0].message)
    for words in ('floating joints (the child is left free): "free"',
                  'planar joints (the child is left free): "flat"',
                  '"follower" (mimics "free")'):
        assert words in message
    assert [j["name"] for j in raw["joints"]] == ["a_to_world", "follower"]


def test_without_merging_a_fixed_joint_stays_a_fixed_joint(arm):
    path, _ = arm
    text = DOUBLE.replace('type="continuous"', 'type="fixed"')
    world = world_of(write(path.parent, text, "welded.urdf"), merge_fixed=False)
    assert world.joint_names == ["base_to_world", "hinge", "elbow"]
    assert list(world.joint_types) == ["fixed", "revolute", "fixed"]
    merged = world_of(write(path.parent, text, "welded.urdf"))
    assert merged.joint_names == ["base_to_world", "hinge"] and "tip" not in merged.body_names
    assert merged.body_mass[body(merged, "rod")] == pytest.approx(1.5 + 0.7)


# --- the pendulum's period --------------------------------------------------------------------

TILT = 0.05  # rad, the joint origin's pitch: the zero pose is 0.05 rad off the hanging one


def pendulum_text(mass, d, inertia_rpy):
    return f"""
<link name="pivot"/>
<link name="bob">
  <inertial>
    <origin xyz="0 0 {-d}" rpy="{inertia_rpy[0]} {inertia_rpy[1]} {inertia_rpy[2]}"/>
    <mass value="{mass}"/>
    <inertia ixx="0.02" ixy="0.002" ixz="0" iyy="0.03" iyz="0" izz="0.012"/>
  </inertial>
  <collision><origin xyz="0 0 {-d}"/><geometry><sphere radius="0.05"/></geometry></collision>
</link>
<joint name="swing" type="continuous">
  <parent link="pivot"/><child link="bob"/>
  <origin xyz="0 0 2" rpy="0 {TILT} 0"/>
  <axis xyz="0 1 0"/>
</joint>
"""


def test_pendulum_swings_with_the_small_angle_period_of_its_file(tmp_path):
    mass, d, inertia_rpy = 1.2, 0.5, (0.4, 0.3, 0.2)
    w = world_of(write(tmp_path, pendulum_text(mass, d, inertia_rpy)), motors=False)
    # on paper: the inertia about the axis y through the pivot, from the file's numbers
    I_c = np.array([[0.02, 0.002, 0.0], [0.002, 0.03, 0.0], [0.0, 0.0, 0.012]])
    A = ry(TILT) @ rpy(*inertia_rpy)
    I_axis = (A @ I_c @ A.T)[1, 1] + mass * d * d
    t0 = 2 * math.pi * math.sqrt(I_axis / (mass * G * d))
    # the massless pivot of a fixed base is the world itself: one body, one joint
    assert w.body_names == ["world", "bob"] and w.joint_names == ["swing"]
    rec = w.run(int(round(8 * t0 / w.dt)))
    x = rec.joint[:, 0, 0] + TILT       # about the hanging pose
    up = np.where((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]
    crossings = rec.t[up] + (rec.t[up + 1] - rec.t[up]) * (-x[up]) / (x[up + 1] - x[up])
    assert len(crossings) >= 6
    period = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert abs(period / t0 - 1.0) < 0.005, (period, t0)
    assert np.max(np.abs(x)) == pytest.approx(TILT, rel=0.05)


def test_joint_coordinate_is_the_urdf_angle_about_its_axis(tmp_path):
    """Turning the child at 0.3 rad/s about the file's axis for 1 s reads +0.3 on the joint
    (zero gravity, no friction: nothing else acts on it)."""
    w = world_of(write(tmp_path, pendulum_text(1.0, 0.5, (0.0, 0.0, 0.0))), motors=False)
    w.configure(gravity=(0.0, 0.0, 0.0))
    pivot = np.array([0.0, 0.0, 2.0])
    a = np.array([0.0, 0.3, 0.0])
    w.set_body_velocity("bob", angvel=a, vel=np.cross(a, w.body_pos[1] - pivot))
    rec = w.run(int(round(1.0 / w.dt)))
    assert rec.joint[-1, 0, 0] == pytest.approx(0.3, abs=1e-6)


# --- a 6-joint arm with STL meshes in a package:// layout -------------------------------------

ARM_JOINTS = [  # name, origin xyz, rpy, axis, effort, velocity
    ("shoulder_pan", (0, 0, 0.1), (0, 0, 0), (0, 0, 1), 80.0, 2.0),
    ("shoulder_lift", (0, 0.05, 0.1), (0, 0.3, 0), (0, 1, 0), 80.0, 2.0),
    ("elbow", (0, 0, 0.3), (0, -0.5, 0), (0, 1, 0), 40.0, 2.5),
    ("wrist_1", (0, 0, 0.25), (0.2, 0, 0), (0, 1, 0), 10.0, 3.0),
    ("wrist_2", (0, 0, 0.08), (0, 0, 0.4), (0, 0, 1), 10.0, 3.0),
    ("wrist_3", (0, 0, 0.08), (0, 0, 0), (0, 1, 0), 5.0, 3.0),
]


def make_package(root):
    """ws/src/my_robot: package.xml, meshes/*.stl written by trimesh, urdf/arm.urdf."""
    import trimesh

    pkg = Path(root) / "ws" / "src" / "my_robot"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>my_robot</name></package>\n")
    trimesh.creation.box((0.2, 0.2, 0.1)).export(pkg / "meshes" / "base.stl")
    for k in range(len(ARM_JOINTS)):
        length = ARM_JOINTS[k + 1][1][2] if k + 1 < len(ARM_JOINTS) else 0.06
        mesh = trimesh.creation.cylinder(radius=0.04, height=length, sections=16)
        mesh.apply_translation((0.0, 0.0, length / 2))
        mesh.export(pkg / "meshes" / f"link{k + 1}.stl")
    links = ['<link name="base_link"><inertial><mass value="4"/><inertia ixx="0.02" '
             'iyy="0.02" izz="0.03"/></inertial><collision><origin xyz="0 0 0.05"/><geometry>'
             '<mesh filename="package://my_robot/meshes/base.stl"/></geometry></collision>'
             '</link>']
    joints = []
    parent = "base_link"
    for k, (name, xyz, r, axis, effort, velocity) in enumerate(ARM_JOINTS):
        child = f"link{k + 1}"
        scale = ' scale="1.5 1 0.5"' if k == 5 else ""
        links.append(
            f'<link name="{child}"><inertial><origin xyz="0 0 0.05"/><mass value="{2.0 - 0.3 * k}"'
            f'/><inertia ixx="0.01" iyy="0.01" izz="0.004"/></inertial><collision><geometry>'
            f'<mesh filename="package://my_robot/meshes/{child}.stl"{scale}/></geometry>'
            f'</collision></link>')
        joints.append(
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, r))}"/>'
            f'<axis xyz="{" ".join(map(str, axis))}"/><limit lower="-2" upper="2" '
            f'effort="{effort}" velocity="{velocity}"/></joint>')
        parent = child
    # a massless tool frame on a fixed joint, as ROS arms have
    links.append('<link name="tool0"/>')
    joints.append('<joint name="flange" type="fixed"><parent link="link6"/><child link="tool0"/>'
                  '<origin xyz="0 0 0.06"/></joint>')
    return write(pkg / "urdf", "\n".join(links + joints), "arm.urdf"), pkg


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path, pkg = make_package(tmp_path_factory.mktemp("arm"))
    return path, pkg


def test_an_arm_in_a_ros_package_loads_without_any_set_up(arm, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    path, pkg = arm
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # nothing to warn about: tool0 merges silently
        world = load_scene(path)
    # opened as a scene: on a ground plane, the base fixed (the arm stands on it)
    assert world.body_names == ["world", "ground", "base_link",
                                *[f"link{k}" for k in range(1, 7)]]
    assert world.joint_names == ["base_link_to_world", *[j[0] for j in ARM_JOINTS]]
    hull = world.body_shapes[body(world, "link3")].parts[0][0]
    assert Path(hull.source) == pkg / "meshes" / "link3.stl"


def mesh_link(filename):
    return (f'<link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" '
            f'izz="0.01"/></inertial><collision><geometry><mesh filename="{filename}"/>'
            f'</geometry></collision></link>')


def hull_file(path, **options):
    world = world_of(path, **options)
    return Path(world.body_shapes[body(world, "arm")].parts[0][0].source)


def test_a_package_elsewhere_is_found_through_package_roots_or_ros_package_path(
        arm, tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    _, pkg = arm
    path = write(tmp_path, mesh_link("package://my_robot/meshes/link2.stl"))
    with pytest.raises(SceneError, match="no such mesh file"):
        read_urdf(path, strict=True)
    with pytest.warns(UrdfWarning, match="collision meshes not found .*link2.stl"):
        read_urdf(path)   # (as PyBullet: left out, said)
    src = pkg.parent
    assert hull_file(path, package_roots=[src]) == pkg / "meshes" / "link2.stl"
    assert hull_file(path, package_roots=[pkg]) == pkg / "meshes" / "link2.stl"
    assert hull_file(path, package_roots=[src.parent.parent]) == pkg / "meshes" / "link2.stl"
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"/nonexistent{os.pathsep}{src}")
    assert hull_file(path) == pkg / "meshes" / "link2.stl"


def test_plain_paths_are_relative_to_the_urdf_and_file_uris_absolute(arm, tmp_path):
    _, pkg = arm
    mesh = pkg / "meshes" / "link4.stl"
    relative = os.path.relpath(mesh, pkg / "urdf")
    assert hull_file(write(pkg / "urdf", mesh_link(relative), "rel.urdf")) == mesh
    # (a file outside the URDF's folder and packages needs its folder declared)
    assert hull_file(write(tmp_path, mesh_link(f"file://{mesh}")), package_roots=[pkg]) == mesh


def test_a_non_uniform_mesh_scale_stretches_the_hull(arm):
    path, _ = arm
    world = world_of(path)
    hull = world.body_shapes[body(world, "link6")].parts[0][0]
    lo, hi = hull.vertices.min(axis=0), hull.vertices.max(axis=0)
    # the cylinder of radius 0.04 and height 0.06 scaled by (1.5, 1, 0.5)
    assert np.allclose(hi - lo, (0.12, 0.08, 0.03), atol=1e-3)


def test_link_poses_match_yourdfpys_forward_kinematics(arm):
    yourdfpy = pytest.importorskip("yourdfpy")
    path, _ = arm
    world = world_of(path)
    model = yourdfpy.URDF.load(str(path), build_scene_graph=True, load_meshes=False)
    for k in range(1, 7):
        T = model.get_transform(f"link{k}", "base_link")
        pos, quat = world.body_reference_pose(f"link{k}")
        assert np.allclose(pos, T[:3, 3], atol=1e-12)
        assert np.allclose(rotation_matrices(quat), T[:3, :3], atol=1e-12)


def test_motors_are_sized_from_effort_and_velocity(arm):
    path, _ = arm
    raw = read_urdf(path)
    for joint, (_, _, _, _, effort, velocity) in zip(raw["joints"][1:], ARM_JOINTS):
        m = joint["motor"]
        V = m["voltage_limit"]
        # stall torque r K_t V / R and no-load speed V / (K_t r) at the 24 V supply
        assert m["gear_ratio"] * m["torque_constant"] * V / m["resistance"] == \
            pytest.approx(effort)
        assert V / (m["torque_constant"] * m["gear_ratio"]) == pytest.approx(velocity)
        assert V == 24.0 and m["torque_limit"] == effort
        assert m["controller"] == {"mode": "position", "kp": pytest.approx(
            V / (velocity * LOOP_TAU)), "kd": 0.0, "target": 0.0}


def test_the_motors_hold_the_arm_within_velocity_times_tau(arm):
    """Each PD saturates at velocity * tau of error with the full effort; gravity on this
    arm needs less than the effort, so after settling no joint is off by more."""
    path, _ = arm
    world = world_of(path)
    rec = world.run(int(2.0 / world.dt))
    assert np.all(np.isfinite(rec.joint))
    for j, (_, _, _, _, _, velocity) in enumerate(ARM_JOINTS, start=1):
        assert np.max(np.abs(rec.joint[-60:, j, 0])) <= velocity * LOOP_TAU


def test_motor_spec_no_load_speed_is_the_velocity_limit():
    m = motor_spec(effort=12.0, velocity=1.5)
    assert 24.0 / (m["torque_constant"] * m["gear_ratio"]) == pytest.approx(1.5)


# --- a floating quadruped ---------------------------------------------------------------------


def quadruped_text():
    links = ['<link name="trunk"><inertial><mass value="8"/><inertia ixx="0.05" iyy="0.2" '
             'izz="0.22"/></inertial><collision><geometry><box size="0.5 0.3 0.1"/></geometry>'
             '</collision></link>']
    joints = []
    for leg, (x, y) in {"fl": (0.2, 0.15), "fr": (0.2, -0.15), "hl": (-0.2, 0.15),
                        "hr": (-0.2, -0.15)}.items():
        for part, mass in (("thigh", 1.0), ("shank", 0.5)):
            links.append(
                f'<link name="{leg}_{part}"><inertial><origin xyz="0 0 -0.1"/>'
                f'<mass value="{mass}"/><inertia ixx="0.004" iyy="0.004" izz="0.0005"/>'
                f'</inertial><collision><origin xyz="0 0 -0.1"/><geometry><capsule radius="0.02"'
                f' length="0.16"/></geometry></collision></link>')
        joints.append(
            f'<joint name="{leg}_hip" type="revolute"><parent link="trunk"/>'
            f'<child link="{leg}_thigh"/><origin xyz="{x} {y} 0"/><axis xyz="0 1 0"/>'
            f'<limit lower="-1" upper="1" effort="20" velocity="8"/></joint>')
        joints.append(
            f'<joint name="{leg}_knee" type="revolute"><parent link="{leg}_thigh"/>'
            f'<child link="{leg}_shank"/><origin xyz="0 0 -0.2"/><axis xyz="0 1 0"/>'
            f'<limit lower="-2" upper="0" effort="20" velocity="8"/></joint>')
    return "\n".join(links + joints)


def momenta(world):
    m = world.body_mass[:, None]
    p = m * world.body_vel
    return p.sum(0), (np.cross(world.body_pos, p) + world.body_angmom).sum(0)


def test_a_floating_quadruped_keeps_its_momentum_in_zero_gravity(tmp_path):
    path = write(tmp_path, quadruped_text())
    raw = read_urdf(path, fixed_base=False)
    raw["world"] = {"gravity": [0.0, 0.0, 0.0]}
    raw["solver"] = {"tolerance": 1e-12}
    rng = np.random.default_rng(7)
    for b in raw["bodies"]:
        b["vel"] = rng.normal(0.0, 0.3, 3).tolist()
        b["angvel"] = rng.normal(0.0, 1.0, 3).tolist()
    world = build_world(SceneSpec.model_validate(raw))
    assert len(world.body_names) == 1 + 9 and len(world.joint_names) == 8  # no base joint
    world.step(1)   # the first step makes the velocities agree with the joints
    p0, l0 = momenta(world)
    world.step(int(5.0 / world.dt))
    p, l = momenta(world)
    assert np.all(np.isfinite(world.body_pos))
    assert np.linalg.norm(p - p0) <= 1e-9 * np.linalg.norm(p0)
    assert np.linalg.norm(l - l0) <= 1e-9 * np.linalg.norm(l0)


def test_the_ground_goes_under_the_lowest_foot_and_the_robot_lands_on_it(tmp_path):
    # a shank's capsule reaches 0.2 + 0.1 + 0.08 + 0.02 = 0.4 m below the trunk's origin
    raw = read_urdf(write(tmp_path, quadruped_text()), fixed_base=False, ground=True,
                    motors=True)
    assert raw["bodies"][0] == {"name": "ground", "shape": {"type": "plane"},
                                "kind": "static", "pos": [0.0, 0.0, pytest.approx(-0.4)]}
    world = build_world(SceneSpec.model_validate(raw))
    world.step(int(1.0 / world.dt))
    trunk = world.body_pos[body(world, "trunk")]
    assert np.all(np.isfinite(world.body_pos))
    assert -0.15 < trunk[2] <= 1e-3    # it stands or crouches, it does not sink or fly


# --- inertials: merging, missing ---------------------------------------------------------------


def test_a_fixed_child_merges_by_the_parallel_axis_theorem(tmp_path):
    text = """
<link name="a"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.2" izz="0.3"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
<link name="b"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>
  <inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>
  <collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
<joint name="weld" type="fixed"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/></joint>
"""
    world = world_of(write(tmp_path, text), fixed_base=False)
    assert world.body_names == ["world", "a"] and world.joint_names == []
    assert world.body_mass[1] == 3.0
    c = (2.0 * np.zeros(3) + 1.0 * np.array([0.3, 0.0, 0.1])) / 3.0
    assert np.allclose(world.body_pos[1], c)
    d_a, d_b = -c, np.array([0.3, 0.0, 0.1]) - c
    shift = lambda m, d: m * (d @ d * np.eye(3) - np.outer(d, d))
    expected = np.diag([0.1, 0.2, 0.3]) + shift(2.0, d_a) + np.diag([0.01] * 3) + shift(1.0, d_b)
    assert np.allclose(world_inertia(world, "a"), expected, atol=1e-12)
    assert len(world.body_shapes[1].parts) == 2


def test_massless_links_get_a_small_mass_and_one_warning_naming_them(tmp_path):
    text = """
<link name="base"><inertial><mass value="3"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial>
</link>
<link name="ghost1"/>
<link name="ghost2"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="ghost1"/></joint>
<joint name="j2" type="continuous"><parent link="ghost1"/><child link="ghost2"/></joint>
"""
    path = write(tmp_path, text)
    with pytest.warns(UrdfWarning) as caught:
        raw = read_urdf(path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert '"ghost1", "ghost2"' in message and "0.03 kg" in message
    masses = {b["name"]: b["mass"] for b in raw["bodies"]}
    assert masses == {"base": 3.0, "ghost1": 0.03, "ghost2": 0.03}


def test_tiny_principal_moments_are_raised_to_a_1_mm_radius_of_gyration(tmp_path):
    """iCub's ankle: 0.5 kg with moments of 1e-20 kg m^2 (a radius of gyration of 1e-10 m).
    Raised to mass * (1 mm)^2 = 5e-7, and named; a link with its own moments kept."""
    text = """
<link name="base"><inertial><mass value="3"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial>
</link>
<link name="ankle"><inertial><mass value="0.5"/><inertia ixx="1e-20" iyy="1e-20" izz="2e-20"/>
</inertial></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="ankle"/></joint>
"""
    with pytest.warns(UrdfWarning, match='principal moments raised to a floor.*"ankle"'):
        raw = read_urdf(write(tmp_path, text), motors=False)
    inertia = {b["name"]: b["inertia"] for b in raw["bodies"]}
    assert inertia["ankle"] == pytest.approx([5e-7] * 3)
    assert inertia["base"] == pytest.approx([0.1] * 3)


def test_a_root_link_named_world_is_the_world(tmp_path):
    text = """
<link name="world"/>
<link name="stand"><collision><geometry><box size="0.2 0.2 0.4"/></geometry></collision></link>
<link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.001"
  iyy="0.01" izz="0.01"/></inertial></link>
<joint name="bolt" type="fixed"><parent link="world"/><child link="stand"/>
  <origin xyz="0 0 0.2"/></joint>
<joint name="pan" type="continuous"><parent link="stand"/><child link="arm"/>
  <origin xyz="0 0 0.2"/></joint>
"""
    raw = read_urdf(write(tmp_path, text), fixed_base=False, motors=False)
    kinds = {b["name"]: b.get("kind", "dynamic") for b in raw["bodies"]}
    assert kinds == {"stand": "static", "arm": "dynamic"}     # massless, bolted: static
    assert [(j["name"], j["body_a"]) for j in raw["joints"]] == [("pan", "stand")]


# --- malformed files: one SceneError naming the file and the element ---------------------------

TWO_LINKS = """
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
"""
BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE robot [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<robot name="&lol9;"><link name="&lol9;"/></robot>
"""

MALFORMED = {
    "missing parent": (TWO_LINKS + '<joint name="j" type="revolute"><parent link="nowhere"/>'
                       '<child link="b"/></joint>', ['joint "j"', '"nowhere"']),
    "cycle": (TWO_LINKS + '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/>'
              '</joint><joint name="ba" type="fixed"><parent link="b"/><child link="a"/>'
              '</joint>', ['cycle', '"ab"', '"ba"']),
    "bad number": ('<link name="arm"><inertial><mass value="1.5kg"/></inertial></link>',
                   ['link "arm"', "<mass value>", '"1.5kg"']),
    "short vector": ('<link name="arm"><collision><origin xyz="0 0"/><geometry>'
                     '<sphere radius="1"/></geometry></collision></link>',
                     ['link "arm"', "<origin xyz>", "3 numbers"]),
    "missing mesh": ('<link name="arm"><collision><geometry><mesh '
                     'filename="package://nobody/meshes/arm.stl"/></geometry></collision></link>',
                     ['link "arm"', "package://nobody/meshes/arm.stl"]),
    "two roots": (TWO_LINKS, ['"a"', '"b"', "root"]),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_urdf_gives_one_error_naming_file_and_element(case, tmp_path):
    text, words = MALFORMED[case]
    path = write(tmp_path, text)
    # (a number with trailing characters and a missing collision mesh are read as PyBullet
    # reads them, with a warning: --strict makes them errors)
    with pytest.raises(SceneError) as caught:
        read_scene(path, strict=case in ("bad number", "missing mesh"))
    message = str(caught.value)
    assert message.startswith(str(path) + ": line ") and "\n" not in message
    for word in words:
        assert word in message


def test_an_entity_bomb_is_refused_before_it_expands(tmp_path):
    path = tmp_path / "bomb.urdf"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(SceneError) as caught:
        read_scene(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line 2: <!DOCTYPE>") and "\n" not in message


def test_not_well_formed_xml_is_one_error_with_its_line(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text('<robot name="r">\n<link name="a">\n</robot>\n')
    with pytest.raises(SceneError, match=r"broken.urdf: line 3: not well-formed XML"):
        read_scene(path)


# --- real robots (pybullet_data, zlib licence: tests/fixtures/urdf/README.md) ----------------


@pytest.mark.parametrize("name", ["r2d2/r2d2.urdf", "kuka_iiwa/model.urdf"])
def test_a_real_robot_loads_and_simulates_1_s_staying_finite(name):
    world = world_of(FIXTURES / name, ground=True)
    rec = world.run(int(round(1.0 / world.dt)), record_bodies=True)
    assert np.all(np.isfinite(rec.body_pos)) and np.all(np.isfinite(rec.joint))
    assert np.max(np.abs(rec.body_pos[-1] - rec.body_pos[0])) < 0.05


# --- the command line ----------------------------------------------------------------------------


def test_sharnir_run_simulates_a_urdf_file(tmp_path):
    path = write(tmp_path, DOUBLE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    result = subprocess.run([sys.executable, "-m", "sharnir.app.cli", "run", str(path),
                             "--duration", "0.5", "--json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 120
    assert list(summary["joints"]) == ["base_to_world", "hinge", "elbow"]
    assert "warning" not in result.stderr.lower()   # damping is simulated, not listed


# ---- what real files do that ROS tools and PyBullet accept ----------------------------------

BALL_LINKS = """
<link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
  ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="head"><inertial><mass value="0.5"/><inertia ixx="0.002" iyy="0.002" izz="0.002"
  ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><mesh filename="package://parts/meshes/ball.stl"/></geometry></collision>
</link>
<joint name="neck" type="spherical"><parent link="base"/><child link="head"/>
  <origin xyz="0 0 0.3"/><dynamics friction="0.2"/></joint>
"""


def test_pybullets_ball_joints_loose_declarations_and_package_folders_load(tmp_path):
    import trimesh

    meshes = tmp_path / "parts" / "meshes"                 # a package without package.xml
    meshes.mkdir(parents=True)
    trimesh.creation.icosphere(radius=0.05).export(meshes / "ball.stl")
    path = tmp_path / "robot.urdf"
    path.write_text('<!-- made by hand -->\n<?xml version="0.0" ?>\n<robot name="t">'
                    + BALL_LINKS + "</robot>\n")
    spec = read_scene(path)
    neck = next(j for j in spec.joints if j.name == "neck")
    assert neck.type == "spherical" and neck.friction == 0.2
    # opened as a scene, the robot is lifted so that its lowest point, the bottom of the
    # head's ball mesh (radius 0.05, centred on the neck), rests on the ground
    np.testing.assert_allclose(neck.anchor, (0.0, 0.0, 0.05), atol=1e-6)
    world = build_world(spec)
    world.run(10)
    assert np.isfinite(world.body_pos).all()


def test_a_package_uri_with_three_slashes_names_the_package_after_them(tmp_path):
    """TALOS (example-robot-data) writes package:///example-robot-data/robots/...: the
    package is the first folder after the slashes, as pinocchio reads it."""
    import trimesh

    meshes = tmp_path / "parts" / "meshes"
    meshes.mkdir(parents=True)
    trimesh.creation.icosphere(radius=0.05).export(meshes / "ball.stl")
    robots = tmp_path / "parts" / "robots"
    robots.mkdir()
    path = robots / "robot.urdf"
    path.write_text('<robot name="t">' + BALL_LINKS.replace("package://parts",
                                                             "package:///parts")
                    + "</robot>\n")
    spec = read_scene(path)
    head = next(b for b in spec.bodies if b.name == "head")
    [part] = head.shape.parts        # (a compound: the link's frame is not its inertial's)
    assert part.shape.type == "mesh" and Path(part.shape.file) == meshes / "ball.stl"


def test_a_missing_package_is_still_one_clear_error(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text('<robot name="t">' + BALL_LINKS + "</robot>\n")
    with pytest.raises(SceneError, match='looked for a package "parts"'):
        read_scene(path, strict=True)


LOOSE = """<robot name="loose">
<link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/>
</inertial><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
<link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/>
</inertial><collision><geometry><mesh filename="gone.stl" scale="1 1 1 1"/></geometry>
</collision><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
  <origin xyz="$(optenv SHARNIR_TEST_XYZ 0.1 0 0.2)" rpy="0 0 0 0"/>
  <limit lower="-1.57." upper="1.57" effort="10" velocity="2"/></joint>
</robot>
<extra/>
"""


def test_pybullets_loose_files_are_read_as_pybullet_reads_them_and_said(tmp_path,
                                                                         monkeypatch):
    """What PyBullet reads (humanoid.urdf's tag after </robot>, husky's xacro $(optenv),
    microtaur's rpy of 4 numbers, racecar's scale of 4, biped2d's "-1.57.", Unitree's hands'
    missing meshes) is read the same way, each named in the one warning; --strict refuses
    each."""
    monkeypatch.delenv("SHARNIR_TEST_XYZ", raising=False)
    path = tmp_path / "loose.urdf"
    path.write_text(LOOSE)
    with pytest.warns(UrdfWarning) as caught:
        raw = read_urdf(path, motors=False)
    said = " ".join(str(w.message) for w in caught)
    for words in ("follows </robot>", "extra numbers", "trailing characters",
                  "collision meshes not found"):
        assert words in said, words
    joint = next(j for j in raw["joints"] if j["name"] == "j")
    assert joint["limits"][0] == -1.57
    base = next(b for b in raw["bodies"] if b["name"] == "base")
    assert joint["anchor"][0] - base["pos"][0] == pytest.approx(0.1)   # the default
    monkeypatch.setenv("SHARNIR_TEST_XYZ", "0.3 0 0.2")
    with pytest.warns(UrdfWarning):
        raw = read_urdf(path, motors=False)
    base = next(b for b in raw["bodies"] if b["name"] == "base")
    joint = next(j for j in raw["joints"] if j["name"] == "j")
    assert joint["anchor"][0] - base["pos"][0] == pytest.approx(0.3)
    with pytest.raises(SceneError):
        read_urdf(path, strict=True)


def test_pybullets_implicit_plane_opens_and_an_empty_robot_is_one_error(tmp_path):
    plane = tmp_path / "plane.urdf"
    plane.write_text('<robot name="p"><link name="planeLink"><inertial><mass value="0"/>'
                     '<inertia ixx="0" iyy="0" izz="0"/></inertial><collision><origin '
                     'xyz="0 0 -0.5"/><geometry><plane normal="0 0 1"/></geometry></collision>'
                     '</link></robot>')
    world = load_scene(plane, robot={"fixed_base": True})
    kinds = {name: type(shape).__name__ for name, shape in zip(world.body_names,
                                                               world.body_shapes)}
    assert kinds["planeLink"] == "Plane"
    tilted = tmp_path / "tilted.urdf"
    tilted.write_text(plane.read_text().replace('normal="0 0 1"', 'normal="1 0 0"'))
    with pytest.raises(SceneError, match="only the normal 0 0 1"):
        read_scene(tilted)
    empty = tmp_path / "empty.urdf"   # (a xacro output left empty: MuJoCo opens nothing)
    empty.write_text('<robot name="nothing"></robot>')
    with pytest.raises(SceneError, match="line 1: <robot> has no <link>"):
        read_scene(empty)
