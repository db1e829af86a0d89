"""Open every robot description in one or more folders (URDF, MuJoCo MJCF) as a user would and
report how many load, simulate without error and stay finite, what the robot does in that
time, and whether MuJoCo and PyBullet open the same file.

    .venv/bin/python bench/robot_files.py FOLDER [FOLDER ...] [--seconds 1] [--timeout 60]
                     [--limit N] [--per-group N] [--exclude GLOB] [--jobs N]
                     [--no-reference] [--json OUT] [--write]

Each file is loaded exactly as `sharnir FILE` opens it (`load_scene(path)`, with whatever
defaults it has: base, ground, placement and motors are its choice, not this script's), then
stepped for `--seconds` of simulated time. Outcomes:

    ok          loaded, simulated, every body's pose finite at the end
    load_error  a clean SceneError (the message is kept: it should name file and element)
    sim_error   the simulation stopped with a SimulationError
    nonfinite   finished, but a pose is not finite
    crash       any other exception, or the worker process died
    timeout     Sharnir took longer than --timeout seconds on a file (load and run)
    skipped     an .xml file that is not MJCF (no <mujoco> root)

Behaviour (a file that ran): the robot is the component of bodies held together by joints
with the most moving bodies (single loose bodies, a scene's props, only when there is
nothing else). It is floating when no joint holds it to the world or a static body, else
fixed. A floating robot's root (the body that is no joint's child; the heaviest if several)
is measured: its centre's height at the start and the end, its tilt (the angle its z axis
turned, yaw left out) and the robot's largest body speed at the end; the ground is a static
plane, if any. A fixed robot: its largest joint speed at the end and its largest joint
coordinate change. The verdict:

    stands          floating, on a ground, tilt < 30 deg, root within 25 % of its start
                    height above the ground, every body slower than 0.5 m/s at the end
    settling        the same, but still moving (a body faster than 0.5 m/s)
    tipped over     floating, on a ground, tilt > 60 deg
    leaning         floating, on a ground, tilt 30-60 deg
    sagged          floating, on a ground, root lower by more than 25 % of its height
    fell through    floating, root below the ground plane at the end
    thrown up       floating, root more than 0.5 m above its start
    falls (no ground)  floating in a scene without a ground plane (a robot file without a
                    floor: expected for a bare MJCF robot)
    holds           fixed, every joint slower than 0.05 rad/s (or m/s) at the end
    moving          fixed, a joint faster than that (a sagging or swinging arm, a spinning
                    wheel)

References (in the same worker, after Sharnir's run; --no-reference skips them; their
outputs on the terminal are silenced):

    mujoco      `mujoco.MjModel.from_xml_path(file)`: "ok" or MuJoCo's first error line. MuJoCo
                compiles URDF too, but finds no package:// mesh (it keeps only the file name)
    mujoco_pkg  URDF only: MuJoCo on a copy with every mesh file name made absolute the ROS way
                (package://NAME: the folder NAME holding a package.xml beside the URDF or
                above it, else a folder NAME there, as PyBullet falls back to) and
                <compiler strippath="false"/>: whether MuJoCo opens the robot when its
                packages are found
    pybullet    PyBullet (DIRECT mode) `loadURDF(file)` or, for MJCF, `loadMJCF(file)` (a
                partial MJCF reader): "ok" or its error; "not installed" without pybullet
    mj_*        an MJCF file MuJoCo opens, stepped for --seconds from qpos0 with zero controls
                (MuJoCo's own behaviour of the same file, to compare the verdict with); its
                robot is the tree hanging from the world with the most bodies, floating if
                its root has a free joint, measured as Sharnir's

A file that MuJoCo (either way) or PyBullet opens but Sharnir does not run to the end (any
outcome but ok) is one of Sharnir's failures, listed first and marked **SHARNIR** in the
report; for an MJCF file only MuJoCo counts (Sharnir reads MJCF through MuJoCo's compiler,
and PyBullet's loadMJCF skips what it does not know, a missing mesh file included). An MJCF
file's verdict is compared with the same verdict on MuJoCo's run (coarsely: upright, down,
holds, moving, ...).

Files are grouped into packages: a file's package is the nearest folder above it that holds a
package.xml, below the FOLDER given; else the first folder below FOLDER on its path whose
name is not a generic one (urdf, robots, xml, model, assets, ...); else FOLDER. --per-group N
checks at most N files of a package (spread evenly over its sorted list).

Files are run in worker processes (--jobs N, default one per CPU; --workers is the same),
each with a pipe of its own, that take files one after another: Sharnir first, then MuJoCo,
then PyBullet, each stage with its own --timeout. A worker first loads and steps the shipped
biped, so that compiling the engine's kernels is not charged to its first file. A stage that
hangs or kills its worker (PyBullet's loadMJCF aborts on some files) is recorded against that
stage only, the worker is replaced and the file's remaining stages go on in the new one.
--json keeps every file's raw numbers. --write puts the report into the `## Robot files`
section of bench/results.md, keeping that section's hand-written part (from the line that
starts with NOTES_MARK, "### Notes", to the section's end).
"""
import argparse
import fnmatch
import json
import math
import multiprocessing as mp
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter, defaultdict
from pathlib import Path

SECTION = "## Robot files"
NOTES_MARK = "### Notes"           # the section's hand-written part starts at this line
OUTCOMES = ["ok", "load_error", "sim_error", "nonfinite", "crash", "timeout"]
GENERIC = {"urdf", "urdfs", "robots", "robot", "xml", "model", "models", "mujoco",
           "mujoco_models", "assets", "description", "sdf", "launch", "test", "tests"}
STAND_TILT, TIP_TILT = 30.0, 60.0  # deg
SAG_SHARE = 0.25                    # of the root's start height above the ground
REST_SPEED = 0.5                    # m/s
HOLD_SPEED = 0.05                   # rad/s or m/s
STAGES = ("sharnir", "mujoco", "pybullet")   # a file's work in a worker, in this order

# Package (group) name -> "vendor, robot: kind", for the report.
LABELS = {
    # MuJoCo Menagerie models
    "agilex_piper": "AgileX Piper: arm with gripper",
    "agility_cassie": "Agility Cassie: biped",
    "aloha": "ALOHA (Trossen): bimanual arms with grippers",
    "anybotics_anymal_b": "ANYbotics ANYmal B: quadruped",
    "anybotics_anymal_c": "ANYbotics ANYmal C: quadruped",
    "apptronik_apollo": "Apptronik Apollo: humanoid",
    "arx_l5": "ARX L5: arm with gripper",
    "berkeley_humanoid": "Berkeley Humanoid: humanoid",
    "bitcraze_crazyflie_2": "Bitcraze Crazyflie 2: quadrotor",
    "booster_t1": "Booster T1: humanoid",
    "boston_dynamics_spot": "Boston Dynamics Spot: quadruped (+ arm)",
    "dynamixel_2r": "Dynamixel 2R: 2-link arm",
    "flexiv_rizon4": "Flexiv Rizon 4: arm with grippers",
    "flybody": "Janelia flybody: fruit fly",
    "fourier_n1": "Fourier N1: humanoid",
    "franka_emika_panda": "Franka Emika Panda: arm with gripper",
    "franka_fr3": "Franka FR3: arm",
    "franka_fr3_v2": "Franka FR3 v2: arm",
    "google_barkour_v0": "Google Barkour v0: quadruped",
    "google_barkour_vb": "Google Barkour vB: quadruped",
    "google_robot": "Google Robot: mobile manipulator",
    "hello_robot_stretch": "Hello Robot Stretch 2: mobile manipulator",
    "hello_robot_stretch_3": "Hello Robot Stretch 3: mobile manipulator",
    "i2rt_yam": "I2RT YAM: arm with gripper",
    "iit_softfoot": "IIT SoftFoot: soft foot",
    "kinova_gen3": "Kinova Gen3: arm",
    "kuka_iiwa_14": "KUKA iiwa 14: arm",
    "leap_hand": "LEAP Hand: hand",
    "low_cost_robot_arm": "Low-cost robot arm: arm with gripper",
    "pal_talos": "PAL TALOS: humanoid",
    "pal_tiago": "PAL TIAGo: mobile manipulator",
    "pal_tiago_dual": "PAL TIAGo dual: mobile manipulator",
    "pndbotics_adam_lite": "PNDbotics Adam Lite: humanoid",
    "realsense_d435i": "Intel RealSense D435i: camera",
    "rethink_robotics_sawyer": "Rethink Sawyer: arm",
    "robot_soccer_kit": "Robot Soccer Kit: wheeled robot",
    "robotiq_2f85": "Robotiq 2F-85: gripper",
    "robotiq_2f85_v4": "Robotiq 2F-85 v4: gripper",
    "robotis_op3": "ROBOTIS OP3: humanoid",
    "robotstudio_so101": "RobotStudio SO-101: arm with gripper",
    "shadow_dexee": "Shadow DEX-EE: hand",
    "shadow_hand": "Shadow Hand: hand",
    "skydio_x2": "Skydio X2: quadrotor",
    "stanford_tidybot": "Stanford TidyBot: mobile manipulator",
    "tetheria_aero_hand_open": "TetherIA Aero Hand: hand",
    "toddlerbot_2xc": "ToddlerBot 2XC: humanoid",
    "toddlerbot_2xm": "ToddlerBot 2XM: humanoid",
    "trossen_vx300s": "Trossen ViperX 300s: arm with gripper",
    "trossen_wx250s": "Trossen WidowX 250s: arm with gripper",
    "trossen_wxai": "Trossen WidowX AI: arm with gripper",
    "trs_so_arm100": "TRS SO-ARM100: arm with gripper",
    "ufactory_lite6": "UFACTORY Lite 6: arm with gripper",
    "ufactory_xarm7": "UFACTORY xArm7: arm with gripper",
    "umi_gripper": "UMI gripper: gripper",
    "unitree_a1": "Unitree A1: quadruped",
    "unitree_g1": "Unitree G1: humanoid",
    "unitree_go1": "Unitree Go1: quadruped",
    "unitree_go2": "Unitree Go2: quadruped",
    "unitree_h1": "Unitree H1: humanoid",
    "unitree_z1": "Unitree Z1: arm",
    "universal_robots_ur10e": "Universal Robots UR10e: arm",
    "universal_robots_ur5e": "Universal Robots UR5e: arm",
    "wonik_allegro": "Wonik Allegro: hand",
    # ROS description packages
    "anymal_c": "ANYbotics ANYmal C (simple description): quadruped",
    "baxter_description": "Rethink Baxter: two arms with grippers",
    "fetch_description": "Fetch Robotics Fetch, Freight: mobile manipulator, mobile base",
    "franka_description": "Franka Panda, FR3 (xacro): arm with gripper",
    "franka_gazebo": "Franka Panda (Gazebo test URDF): arm",
    "husky_description": "Clearpath Husky: mobile base",
    "kortex_description": "Kinova Gen3, Gen3 lite (+ Robotiq 2F): arm with gripper",
    "pr2_description": "Willow Garage PR2 (xacro): mobile manipulator",
    "sr_description": "Shadow Hand (+ UR10): hand, arm",
    "stretch_description": "Hello Robot Stretch (CAD export): mobile manipulator",
    "talos_description": "PAL TALOS (xacro): humanoid",
    "turtlebot3_description": "ROBOTIS TurtleBot3: mobile base",
    "ur_description": "Universal Robots UR3-UR30 (xacro): arm",
    # Gepetto example-robot-data (its robots/ folders)
    "a1_description": "Unitree A1: quadruped",
    "alex_description": "IHMC Alex: humanoid upper body with hands",
    "allegro_hand_description": "Wonik Allegro: hand",
    "anymal_b_simple_description": "ANYbotics ANYmal B (+ Kinova arm): quadruped",
    "anymal_c_simple_description": "ANYbotics ANYmal C: quadruped",
    "asr_twodof_description": "ASR two-DoF arm",
    "b1_description": "Unitree B1 (+ Z1 arm): quadruped",
    "bluevolta_description": "BlueVolta (+ Reach Bravo 7): underwater vehicle with arm",
    "bolt_description": "ODRI Bolt: biped",
    "borinot_description": "Borinot: flying arm",
    "bravo7_description": "Reach Robotics Bravo 7: arm with gripper",
    "double_pendulum_description": "double pendulum",
    "falcon_description": "Falcon (+ Bravo 7): underwater vehicle with arm",
    "finger_edu_description": "ODRI finger: 3-DoF finger",
    "go1_description": "Unitree Go1: quadruped",
    "go2_description": "Unitree Go2: quadruped",
    "hector_description": "Hector quadrotor",
    "hextilt_description": "Hextilt flying arm",
    "hyq_description": "IIT HyQ: quadruped",
    "icub_description": "IIT iCub: humanoid",
    "iris_description": "3DR Iris: quadrotor",
    "kinova_description": "Kinova arm",
    "laikago_description": "Unitree Laikago: quadruped",
    "panda_description": "Franka Panda: arm with gripper",
    "pr2_description_erd": "Willow Garage PR2: mobile manipulator",
    "quadruped_description": "generic quadruped",
    "romeo_description": "Aldebaran Romeo: humanoid",
    "simple_humanoid_description": "simple humanoid",
    "solo_description": "ODRI Solo 8, Solo 12: quadruped",
    "talos_data": "PAL TALOS: humanoid",
    "tiago_description": "PAL TIAGo: mobile manipulator",
    "tiago_pro_description": "PAL TIAGo Pro: mobile manipulator",
    "z1_description": "Unitree Z1: arm",
    # IIT iCub (robotology/icub-models), PyBullet's pybullet_data
    "iCub": "IIT iCub (many robots' variants, hands, wrists): humanoid",
    "iCub_creo2urdf": "IIT iCub (CAD export): humanoid",
    "iCub_manual": "IIT iCub (hand-written): humanoid",
    "pybullet_data": "PyBullet's data: R2D2, cart-pole, objects, MJCF files",
    "mjcf": "PyBullet's MJCF files: humanoids, ant, walkers, objects",
    "quadruped": "PyBullet's quadrupeds: Minitaur, Spirit, Vision 60",
    "xarm": "UFACTORY xArm6 (PyBullet): arm with gripper",
    "kuka_iiwa": "KUKA iiwa (PyBullet): arm",
    "franka_panda": "Franka Panda (PyBullet): arm with gripper",
    "laikago": "Unitree Laikago (PyBullet): quadruped",
    "racecar": "MIT racecar (PyBullet): car",
    "husky": "Clearpath Husky (PyBullet): mobile base",
    "humanoid": "PyBullet humanoid",
    "a1": "Unitree A1 (PyBullet): quadruped",
    "aliengo": "Unitree Aliengo (PyBullet): quadruped",
    "mini_cheetah": "MIT Mini Cheetah (PyBullet): quadruped",
    "gripper": "WSG 50 gripper (PyBullet): gripper",
    "biped": "PyBullet 2D biped",
    "bicycle": "PyBullet bicycle",
    "differential": "PyBullet differential drive",
    **{name: "PyBullet's objects" for name in ("domino", "jenga", "lego", "objects", "table",
                                                "table_square", "toys", "tray")},
    # Unitree unitree_ros/robots
    "a2_description": "Unitree A2: quadruped",
    "aliengoZ1_description": "Unitree Aliengo + Z1: quadruped with arm",
    "aliengo_description": "Unitree Aliengo: quadruped",
    "as2_description": "Unitree AS2: quadruped",
    "b2_description": "Unitree B2: quadruped",
    "b2_description_mujoco": "Unitree B2 (MJCF): quadruped",
    "b2w_description": "Unitree B2-W: wheeled quadruped",
    "dexterous_hand_description": "Unitree Dex hands: hand",
    "g1_d_description": "Unitree G1-D: humanoid",
    "g1_description": "Unitree G1: humanoid",
    "g1_with_brainco_hand": "Unitree G1 + BrainCo hands: humanoid",
    "go2w_description": "Unitree Go2-W: wheeled quadruped",
    "h1_2_description": "Unitree H1-2: humanoid",
    "h1_description": "Unitree H1: humanoid",
    "h2_description": "Unitree H2: humanoid",
    "h2_plus": "Unitree H2+: humanoid",
    "r1_air_description": "Unitree R1 Air: humanoid",
    "r1_description": "Unitree R1: humanoid",
}


def find_files(folder):
    files = []
    for path in sorted(Path(folder).rglob("*")):
        suffix = path.suffix.lower()
        if suffix == ".urdf" and path.is_file():
            files.append(path)
        elif suffix == ".xml" and path.is_file():
            try:
                head = path.read_bytes()[:4096].decode("utf-8", "replace")
            except OSError:
                continue
            if "<mujoco" in head:
                files.append(path)
    return files


def group_of(path, folder):
    """The package a file belongs to (see the module): a folder's name."""
    path, folder = Path(path).absolute(), Path(folder).absolute()
    for parent in path.parents:
        if parent == folder or folder not in parent.parents:
            break
        if (parent / "package.xml").is_file():
            return parent.name
    for part in path.relative_to(folder).parts[:-1]:
        if part.lower() not in GENERIC:
            return part
    return folder.name


def spread(items, n):
    """At most n of `items`, evenly spread over the list (all of them when n is 0)."""
    if not n or len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 \
        else [items[0]]


# ---- Sharnir ------------------------------------------------------------------------------


def check(path, seconds):
    """One file's outcome as a dict (runs in a worker)."""
    from sharnir.physics import SimulationError
    from sharnir.scenes import SceneError, load_scene

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            world = load_scene(path)
    except SceneError as exc:
        return dict(outcome="load_error", message=str(exc).splitlines()[0][:300])
    except Exception as exc:  # noqa: BLE001
        return dict(outcome="crash", message=f"load: {type(exc).__name__}: {exc}"[:300],
                    trace=traceback.format_exc(limit=3)[-600:])
    nbody = len(world.body_names) - 1
    load_s = round(time.perf_counter() - t0, 2)
    try:
        start = _snapshot(world)
    except Exception as exc:  # noqa: BLE001
        start = None
        start_error = f"{type(exc).__name__}: {exc}"[:200]
    try:
        steps = max(1, round(seconds / world.dt))
        world.run(steps)
    except SimulationError as exc:
        return dict(outcome="sim_error", message=str(exc)[:300], bodies=nbody)
    except Exception as exc:  # noqa: BLE001
        return dict(outcome="crash", message=f"run: {type(exc).__name__}: {exc}"[:300],
                    trace=traceback.format_exc(limit=3)[-600:], bodies=nbody)
    import numpy as np

    finite = bool(np.isfinite(world.body_pos).all() and np.isfinite(world.body_quat).all())
    out = dict(outcome="ok" if finite else "nonfinite", bodies=nbody,
               joints=len(world.joint_names), load_s=load_s,
               wall_s=round(time.perf_counter() - t0, 2))
    try:
        out.update(behaviour(world, start) if start is not None
                   else dict(verdict="?", behaviour_error=start_error))
    except Exception as exc:  # noqa: BLE001
        out.update(verdict="?", behaviour_error=f"{type(exc).__name__}: {exc}"[:200])
    return out


def _snapshot(world):
    import numpy as np

    return dict(pos=np.array(world.body_pos), quat=np.array(world.body_quat),
                q=np.array(world.joint_coord))


def _tilt(R0, R1):
    """Degrees the body's z axis turned between the two rotations (yaw left out): the angle
    between R1 R0^T's z column and the world z."""
    import numpy as np

    zz = float((np.asarray(R1) @ np.asarray(R0).T)[2, 2])
    return math.degrees(math.acos(max(-1.0, min(1.0, zz))))


def _components(n, pairs):
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups = defaultdict(list)
    for i in range(n):
        groups[find(i)].append(i)
    return list(groups.values())


def behaviour(world, start):
    """The robot's behaviour over the run (see the module): raw numbers and a verdict."""
    import numpy as np

    from sharnir.physics.model import DYNAMIC
    from sharnir.physics.transforms import quat_matrix

    bodies = world._bodies          # the engine's own records: kind and shape per body
    kinds = [b.kind for b in bodies]
    jb = [tuple(j.bodies) for j in world._joints]
    pos, quat = np.array(world.body_pos), np.array(world.body_quat)
    vel = np.array(world.body_vel)
    ground = None
    for i, b in enumerate(bodies):
        if kinds[i] != DYNAMIC and type(b.shape).__name__ == "Plane":
            if quat_matrix(quat[i])[2][2] > 0.9:
                z = float(pos[i][2])
                ground = z if ground is None else max(ground, z)
    comps = _components(len(bodies), jb)
    best = None
    for comp in comps:
        moving = [i for i in comp if kinds[i] == DYNAMIC]
        if not moving:
            continue
        anchored = len(moving) < len(comp)
        key = (len(moving), sum(world.body_mass[i] for i in moving))
        if best is None or key > best[0]:
            best = (key, comp, moving, anchored)
    if best is None:
        return dict(verdict="no moving body", ground=ground)
    _, comp, moving, anchored = best
    members = set(comp)
    out = dict(robot_bodies=len(moving), ground=None if ground is None else round(ground, 3))
    if anchored:
        js = [k for k, (a, b) in enumerate(jb) if a in members or b in members]
        qd = np.abs(np.array(world.joint_vel)[js]) if js else np.zeros(0)
        dq = np.abs(np.array(world.joint_coord)[js] - start["q"][js]) if js else np.zeros(0)
        qd_max = float(np.nanmax(qd)) if qd.size else 0.0
        out.update(base="fixed", joint_speed_max=_r(qd_max),
                   joint_move_max=_r(float(np.nanmax(dq)) if dq.size else 0.0))
        out["verdict"] = ("exploded" if not np.isfinite(qd).all() else
                          "holds" if qd_max < HOLD_SPEED else "moving")
        return out
    children = {b for a, b in jb if a in members and b in members}
    roots = [i for i in moving if i not in children] or moving
    root = max(roots, key=lambda i: world.body_mass[i])
    z0, z1 = float(start["pos"][root][2]), float(pos[root][2])
    tilt = _tilt(quat_matrix(start["quat"][root]), quat_matrix(quat[root]))
    speed = float(np.nanmax(np.linalg.norm(vel[moving], axis=1)))
    out.update(base="floating", root=world.body_names[root], root_z0=_r(z0), root_z1=_r(z1),
               tilt_deg=round(tilt, 1), speed_max=_r(speed))
    out["verdict"] = floating_verdict(ground, z0, z1, tilt, speed)
    return out


def floating_verdict(ground, z0, z1, tilt, speed):
    """The verdict on a floating robot (see the module)."""
    if not (math.isfinite(z1) and math.isfinite(speed)):
        return "exploded"
    if ground is None:
        return "falls (no ground)" if z1 < z0 - 0.5 else "floats (no ground)"
    if z1 < ground - 0.02:
        return "fell through"
    if z1 > z0 + 0.5:
        return "thrown up"
    if tilt > TIP_TILT:
        return "tipped over"
    if tilt > STAND_TILT:
        return "leaning"
    if z1 - ground < (1 - SAG_SHARE) * (z0 - ground):
        return "sagged"
    return "stands" if speed < REST_SPEED else "settling"


def mujoco_verdict(o):
    """The same verdict on MuJoCo's run of the file (the ground: Sharnir's reading of it)."""
    if "mj_root_z1" in o:
        z0, z1, speed = (float(o[k]) for k in ("mj_root_z0", "mj_root_z1", "mj_speed_max"))
        return floating_verdict(o.get("ground"), z0, z1, float(o["mj_tilt_deg"]), speed)
    if "mj_joint_speed_max" in o:
        return "holds" if float(o["mj_joint_speed_max"]) < HOLD_SPEED else "moving"
    if o.get("mj_static"):
        return "no moving body"
    return None


def _r(x):
    return float(f"{x:.4g}") if math.isfinite(x) else str(x)


# ---- references: MuJoCo, PyBullet -----------------------------------------------------------


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _package_dir(name, folder):
    """The folder a package://NAME URI means, the ROS way (a folder NAME holding a
    package.xml, the URDF's folder or beside it or above), else PyBullet's fallback (a folder
    NAME there); None if neither."""
    fallback = None
    for ancestor in (folder, *folder.parents):
        for candidate in (ancestor, ancestor / name):
            if candidate.name == name and candidate.is_dir():
                if (candidate / "package.xml").is_file():
                    return candidate
                fallback = fallback or candidate
    return fallback


def _resolved_urdf(path):
    """A copy of the URDF's text with every mesh file name absolute (package:// resolved as
    `_package_dir`) and MuJoCo told not to strip paths."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.parse(str(path), parser).getroot()
    folder = path.parent.absolute()
    for mesh in root.iter("mesh"):
        uri = mesh.get("filename")
        if not uri:
            continue
        if uri.startswith("package://"):
            name, _, rest = uri[len("package://"):].partition("/")
            pkg = _package_dir(name, folder)
            if pkg is not None:
                mesh.set("filename", str(pkg / rest))
        elif uri.startswith("file://"):
            mesh.set("filename", uri[len("file://"):])
        elif not os.path.isabs(uri):
            mesh.set("filename", str(folder / uri))
    mj = root.find("mujoco")
    if mj is None:
        mj = etree.Element("mujoco")
        root.insert(0, mj)
    compiler = mj.find("compiler")
    if compiler is None:
        compiler = etree.SubElement(mj, "compiler")
    compiler.set("strippath", "false")
    return etree.tostring(root, encoding="unicode")


def mujoco_refs(path, seconds):
    import mujoco
    import numpy as np

    out = {}
    model = None
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
        out["mujoco"] = "ok"
    except Exception as exc:  # noqa: BLE001
        out["mujoco"] = _first_line(exc)
    if path.suffix.lower() == ".urdf":
        try:
            text = _resolved_urdf(path)
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / path.name
                copy.write_text(text, encoding="utf-8")
                mujoco.MjModel.from_xml_path(str(copy))
            out["mujoco_pkg"] = "ok"
        except Exception as exc:  # noqa: BLE001
            out["mujoco_pkg"] = _first_line(exc)
        return out
    if model is None:
        return out
    try:   # MuJoCo's own run of the MJCF file, from qpos0, zero controls
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        # the robot: the tree hanging from the world with the most moving bodies (as
        # `behaviour` picks Sharnir's), floating if its root has a free joint
        trees = defaultdict(list)
        for b in range(1, model.nbody):
            trees[int(model.body_rootid[b])].append(b)
        count = {r: sum(model.body_dofnum[b] > 0 for b in bs) for r, bs in trees.items()}
        if not any(count.values()):
            out["mj_static"] = True
            return out
        root = max(trees, key=lambda r: (count[r], sum(model.body_mass[trees[r]])))
        free = any(model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
                   for j in range(model.jnt_bodyid.shape[0]) if model.jnt_bodyid[j] == root)
        dofs = [d for d in range(model.nv) if model.body_rootid[model.dof_bodyid[d]] == root]
        z0 = float(data.xipos[root][2])
        R0 = data.xmat[root].reshape(3, 3).copy()
        steps = max(1, round(seconds / model.opt.timestep))
        for _ in range(steps):
            mujoco.mj_step(model, data)
        if free:
            v6 = np.zeros(6)
            speed = 0.0
            for b in trees[root]:
                mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, b, v6, 0)
                speed = max(speed, float(np.linalg.norm(v6[3:])))
            out.update(mj_root_z0=_r(z0), mj_root_z1=_r(float(data.xipos[root][2])),
                       mj_tilt_deg=round(_tilt(R0, data.xmat[root].reshape(3, 3)), 1),
                       mj_speed_max=_r(speed))
        else:
            out["mj_joint_speed_max"] = _r(float(np.max(np.abs(data.qvel[dofs]))))
    except Exception as exc:  # noqa: BLE001
        out["mj_run"] = _first_line(exc)
    return out


_PB = {}


def pybullet_ref(path):
    try:
        import pybullet as p
    except ImportError:
        return dict(pybullet="not installed")
    if "client" not in _PB:
        _PB["client"] = p.connect(p.DIRECT)
    cid = _PB["client"]
    p.resetSimulation(physicsClientId=cid)
    try:
        if path.suffix.lower() == ".urdf":
            p.loadURDF(str(path), physicsClientId=cid)
        else:
            p.loadMJCF(str(path), physicsClientId=cid)
        return dict(pybullet="ok")
    except Exception as exc:  # noqa: BLE001
        return dict(pybullet=_first_line(exc))


class _Quiet:
    """Silences the C libraries' prints on file descriptors 1 and 2 (PyBullet's loaders)."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc):
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)


def reference(which, path, seconds):
    """One reference's answers ("mujoco": MuJoCo's, "pybullet": PyBullet's) as a dict."""
    with _Quiet():
        try:
            return mujoco_refs(path, seconds) if which == "mujoco" else pybullet_ref(path)
        except Exception as exc:  # noqa: BLE001
            return {which: f"error: {_first_line(exc)}"}


# ---- workers --------------------------------------------------------------------------------


def _worker(conn, seconds):
    """Takes (index, path, stages) from `conn` one after another; for each stage answers
    (index, "begin", stage), then (index, stage, its result)."""
    os.chdir(tempfile.mkdtemp(prefix="robot_files_"))   # MuJoCo's MUJOCO_LOG.TXT lands here
    try:   # compile (or load) the engine's kernels before the first file's clock starts
        from sharnir.scenes import load_scene

        load_scene("biped").run(10)
    except Exception:  # noqa: BLE001, S110
        pass
    conn.send((None, "ready", None))
    while True:
        item = conn.recv()
        if item is None:
            return
        index, path, stages = item
        for stage in stages:
            conn.send((index, "begin", stage))
            out = (check(path, seconds) if stage == "sharnir"
                   else reference(stage, Path(path), seconds))
            conn.send((index, stage, out))


def run_all(files, seconds, timeout, workers, refs=True):
    """Every file's outcome, in order. Each worker has a pipe of its own (no lock shared
    between processes, so a worker that dies or is killed cannot block the others). A stage
    that hangs or kills its worker is recorded as such, and the file's other stages go on in
    a fresh worker."""
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    stages = STAGES if refs else STAGES[:1]
    pending = [(i, stages) for i in range(len(files))][::-1]
    slots = {}              # connection -> the worker: process, file, stages left, start time
    outcomes = {i: {} for i in range(len(files))}
    done = set()
    spawned = []

    def spawn():
        spawned.append(1)
        if len(spawned) > len(files) + 2 * workers + 10:
            raise RuntimeError("workers keep dying before they take a file")
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_worker, args=(theirs, seconds), daemon=True)
        p.start()
        theirs.close()
        slots[mine] = dict(proc=p, index=None, todo=(), stage=None, started=None)

    def give(conn):
        slot = slots[conn]
        slot.update(index=None, todo=(), stage=None, started=None)
        if pending:
            index, todo = pending.pop()
            slot.update(index=index, todo=todo)
            conn.send((index, str(files[index]), todo))

    def finish(index):
        done.add(index)
        out = outcomes[index]
        ref = ""
        if refs:
            ref = (f" mujoco={'ok' if out.get('mujoco') == 'ok' else 'no'}"
                   f" pybullet={'ok' if out.get('pybullet') == 'ok' else 'no'}")
        print(f"[{len(done)}/{len(files)}] {out['outcome']:10s} {out.get('verdict', ''):12s}"
              f"{ref} {files[index]}", file=sys.stderr)

    def record(slot, stage, out):
        """A stage's result; the file is done after its last stage."""
        index = slot["index"]
        outcomes[index].update(out)
        slot["todo"] = tuple(st for st in slot["todo"] if st != stage)
        slot.update(stage=None, started=None)
        if not slot["todo"]:
            finish(index)

    def fail(slot, why):
        """The worker's running stage ended by `why` (a timeout, a dead worker): recorded,
        and the file's other stages go back in the queue."""
        index, stage = slot["index"], slot["stage"]
        if index is None or index in done:
            return
        if stage is None:               # died between stages: what is left goes back
            pending.append((index, slot["todo"]))
            return
        if stage == "sharnir":
            out = dict(outcome="timeout" if why.startswith("over") else "crash", message=why)
        else:
            out = {stage: f"no answer ({why})"}
        record(slot, stage, out)
        if slot["todo"]:
            pending.append((index, slot["todo"]))

    def replace(conn, why):
        slot = slots.pop(conn)
        fail(slot, why)
        slot["proc"].kill()
        slot["proc"].join(5)
        conn.close()
        if len(done) < len(files):
            spawn()

    for _ in range(min(workers, len(files)) or 1):
        spawn()
    while len(done) < len(files):
        for conn in wait(list(slots), timeout=1.0):
            try:
                index, what, out = conn.recv()
            except (EOFError, OSError):
                slot = slots[conn]
                slot["proc"].join(5)
                replace(conn, f"the worker died (exit code {slot['proc'].exitcode})")
                continue
            slot = slots[conn]
            if what == "ready":
                give(conn)
            elif what == "begin":
                slot.update(stage=out, started=time.time())
            elif index == slot["index"] and what == slot["stage"]:
                record(slot, what, out)
                if not slot["todo"]:
                    give(conn)
        now = time.time()
        for conn, slot in list(slots.items()):
            if slot["started"] is not None and now - slot["started"] > timeout:
                replace(conn, f"over {timeout:g} s")
            elif not slot["proc"].is_alive():
                replace(conn, f"the worker died (exit code {slot['proc'].exitcode})")
    for conn in slots:
        try:
            conn.send(None)
        except OSError:
            pass
    for slot in slots.values():
        slot["proc"].join(5)
        if slot["proc"].is_alive():
            slot["proc"].kill()
    return [outcomes[i] for i in range(len(files))]


# ---- report ---------------------------------------------------------------------------------


def opens_elsewhere(out, mjcf=False):
    """Which reference opens the file ("MuJoCo", "MuJoCo with packages", "PyBullet"); for an
    MJCF file MuJoCo only (PyBullet's loadMJCF reads a part of MJCF and skips what it does not
    know, a missing mesh file included)."""
    names = []
    if out.get("mujoco") == "ok":
        names.append("MuJoCo")
    elif out.get("mujoco_pkg") == "ok":
        names.append("MuJoCo with packages")
    if out.get("pybullet") == "ok" and not mjcf:
        names.append("PyBullet")
    return names


COARSE = {"stands": "up", "settling": "up", "leaning": "down", "tipped over": "down",
          "sagged": "down", "falls (no ground)": "falls", "floats (no ground)": "floats",
          "fell through": "bad", "thrown up": "bad", "exploded": "bad", "holds": "holds",
          "moving": "moving"}


def sharnirs(f, o):
    """Whether the file is one of Sharnir's failures: MuJoCo or PyBullet opens it (MuJoCo
    only, for MJCF), Sharnir does not run it to the end finite."""
    return o["outcome"] != "ok" and bool(opens_elsewhere(o, f.suffix.lower() == ".xml"))


def differs(o):
    """Whether Sharnir's verdict on an MJCF file differs from MuJoCo's run of it (coarsely:
    upright, down, holds, moving, ...)."""
    theirs = mujoco_verdict(o) if o["outcome"] == "ok" else None
    return theirs is not None and COARSE.get(theirs) != COARSE.get(o.get("verdict"))


def report(folders, files, groups, outs, seconds, wall, refs):
    kinds = {".urdf": "URDF", ".xml": "MJCF"}
    table = Counter((kinds[f.suffix.lower()], o["outcome"]) for f, o in zip(files, outs))
    lines = [f"{len(files)} files in {', '.join(str(f) for f in folders)}; {seconds:g} s "
             f"simulated each, {wall:.0f} s wall", "",
             "| kind | files | " + " | ".join(OUTCOMES) + " |",
             "|---|---:|" + "---:|" * len(OUTCOMES)]
    for kind in ("URDF", "MJCF"):
        n = sum(v for (k, _), v in table.items() if k == kind)
        if n:
            lines.append(f"| {kind} | {n} | " + " | ".join(str(table[(kind, o)])
                                                          for o in OUTCOMES) + " |")
    fo = list(zip(files, outs))
    if refs:
        mj = sum(o.get("mujoco") == "ok" for o in outs)
        mjp = sum(o.get("mujoco") == "ok" or o.get("mujoco_pkg") == "ok" for o in outs)
        pb = sum(o.get("pybullet") == "ok" for o in outs)
        either = [(f, o) for f, o in fo if opens_elsewhere(o, f.suffix.lower() == ".xml")]
        ran = sum(o["outcome"] == "ok" for _, o in either)
        lines += ["", f"MuJoCo opens {mj} as they are, {mjp} with package:// resolved; "
                  f"PyBullet opens {pb}. Of the {len(either)} that MuJoCo or PyBullet open "
                  f"(MuJoCo only for MJCF), Sharnir runs {ran}; Sharnir runs "
                  f"{sum(o['outcome'] == 'ok' for o in outs) - ran} that neither opens."]
    verdicts = Counter(o.get("verdict") for o in outs if o["outcome"] == "ok")
    lines += ["", "Behaviour of the files that ran: " + ", ".join(
        f"{v} {n}" for v, n in verdicts.most_common()) + "."]
    if refs:
        compared = [(f, o) for f, o in fo if o["outcome"] == "ok" and mujoco_verdict(o)]
        diff = [(f, o) for f, o in compared if differs(o)]
        lines[-1] += (f" MJCF files MuJoCo also ran: {len(compared)}, the same verdict on "
                      f"{len(compared) - len(diff)}.")
        mine = [(f, o) for f, o in fo if sharnirs(f, o)]
        lines += ["", f"Sharnir's failures (MuJoCo or PyBullet opens the file, Sharnir does "
                  f"not run it): {len(mine)}" + (":" if mine else "."), ""]
        lines += [f"* `{f}`: {o['outcome']}: {o.get('message', '')}; opens in "
                  f"{', '.join(opens_elsewhere(o, f.suffix.lower() == '.xml'))}"
                  .replace("|", "/") for f, o in mine]
        if diff:
            lines += ["", f"Behaviour that differs from MuJoCo's run of the same MJCF file "
                      f"({len(diff)}):", ""]
            lines += [f"* `{f}`: Sharnir {o.get('verdict')}, MuJoCo {mujoco_verdict(o)}"
                      for f, o in diff]
    # per package
    lines += ["", "| package (collection) | robot: kind | files | " + " | ".join(OUTCOMES)
              + (" | MuJoCo opens | PyBullet opens | Sharnir's failures" if refs else "")
              + " | behaviour (Sharnir) |",
              "|---|---|---:|" + "---:|" * len(OUTCOMES) + ("---:|---:|---:|" if refs else "")
              + "---|"]
    by = defaultdict(list)
    for f, g, o in zip(files, groups, outs):
        by[g].append((f, o))
    for g in by:
        items = by[g]
        c = Counter(o["outcome"] for _, o in items)
        row = f"| {g[1]} ({g[0]}) | {LABELS.get(g[1], '')} | {len(items)} | " + " | ".join(
            str(c[o]) if c[o] else "" for o in OUTCOMES)
        if refs:
            mj = sum(o.get("mujoco") == "ok" or o.get("mujoco_pkg") == "ok" for _, o in items)
            pb = sum(o.get("pybullet") == "ok" for _, o in items)
            mine = sum(sharnirs(f, o) for f, o in items)
            row += f" | {mj} | {pb} | {mine or ''}"
        v = Counter(o.get("verdict") for _, o in items if o["outcome"] == "ok")
        row += " | " + ", ".join(f"{k} {n}" if n > 1 else k for k, n in v.most_common())
        nd = sum(differs(o) for _, o in items)
        row += (f" ({nd} unlike MuJoCo)" if nd else "") + " |"
        lines.append(row)
    # per file: behaviour numbers and failures
    lines += ["", "Per file: Sharnir's outcome; for a file that ran, base, verdict and raw "
              "numbers (floating: root centre height start -> end m, tilt deg, largest body "
              "speed m/s at the end; fixed: largest joint speed at the end, largest joint "
              "change), MuJoCo's own run of an MJCF file in brackets; for a failure its "
              "message (the file's path cut). **SHARNIR** marks a file MuJoCo or PyBullet "
              "opens that Sharnir does not run.", ""]
    for g in by:
        lines.append(f"* {g[1]} ({g[0]})")
        for f, o in by[g]:
            lines.append(f"  * {_file_line(f, g, o, refs)}")
    return "\n".join(lines)


def _file_line(f, g, o, refs):
    home = next((d for d in f.parents if d.name == g[1] and g[2] in d.parents), g[2])
    name = str(f.relative_to(home))
    text = f"`{name}`: {o['outcome']}"
    if o["outcome"] == "ok":
        if o.get("base") == "floating":
            text += (f", floating, {o.get('verdict')}: {o['root_z0']} -> {o['root_z1']} m, "
                     f"tilt {o['tilt_deg']}, speed {o['speed_max']}"
                     + ("" if o.get("ground") is not None else ", no ground"))
        elif o.get("base") == "fixed":
            text += (f", fixed, {o.get('verdict')}: joint speed {o['joint_speed_max']}, "
                     f"change {o['joint_move_max']}")
        else:
            text += f", {o.get('verdict')}"
            if o.get("behaviour_error"):
                text += f" ({o['behaviour_error']})"
        if o.get("load_s") is not None and o["load_s"] >= 5:
            text += f", load {o['load_s']:.0f} s"
    else:
        if refs and sharnirs(f, o):
            text = "**SHARNIR** " + text
        text += f": {o.get('message', '').replace(str(f) + ': ', '')}"
    if refs:
        mj = o.get("mujoco", "?")
        text += "; MuJoCo " + ("opens" if mj == "ok" else f"no ({mj[:100]})")
        if "mujoco_pkg" in o and mj != "ok":
            text += (", with packages " + ("opens" if o["mujoco_pkg"] == "ok"
                                           else f"no ({o['mujoco_pkg'][:100]})"))
        if "mj_root_z1" in o:
            text += (f" [{mujoco_verdict(o)}: {o['mj_root_z0']} -> {o['mj_root_z1']} m, "
                     f"tilt {o['mj_tilt_deg']}]")
        elif "mj_joint_speed_max" in o:
            text += f" [{mujoco_verdict(o)}: joint speed {o['mj_joint_speed_max']}]"
        elif o.get("mj_static"):
            text += " [no moving body]"
        elif "mj_run" in o:
            text += f" [MuJoCo's run failed: {o['mj_run'][:80]}]"
        pb = o.get("pybullet", "?")
        text += "; PyBullet " + ("opens" if pb == "ok" else f"no ({pb[:80]})")
    return text.replace("|", "/")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="FOLDER")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds for Sharnir's load and run of a file, and again for "
                        "the references")
    parser.add_argument("--limit", type=int, default=0, help="check only the first N files")
    parser.add_argument("--per-group", type=int, default=0, metavar="N",
                        help="check at most N files of each package")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="leave out files whose path below FOLDER matches (repeatable)")
    parser.add_argument("--workers", "--jobs", type=int, default=os.cpu_count() or 1,
                        dest="workers")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not open the files in MuJoCo and PyBullet")
    parser.add_argument("--write", action="store_true",
                        help="write the table into bench/results.md")
    parser.add_argument("--json", metavar="OUT", help="write every file's outcome as JSON")
    args = parser.parse_args()
    files, groups = [], []
    for folder in args.folders:
        folder = Path(folder).absolute()
        by = defaultdict(list)
        for f in find_files(folder):
            rel = str(f.relative_to(folder))
            if any(fnmatch.fnmatch(rel, pat) for pat in args.exclude):
                continue
            by[group_of(f, folder)].append(f)
        for g, fs in by.items():
            for f in spread(fs, args.per_group):
                files.append(f)
                groups.append((folder.name, g, folder))
    if args.limit:
        files, groups = files[:args.limit], groups[:args.limit]
    refs = not args.no_reference
    t0 = time.time()
    outs = run_all(files, args.seconds, args.timeout, args.workers, refs)
    wall = time.time() - t0
    text = report(args.folders, files, groups, outs, args.seconds, wall, refs)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(
            [dict(file=str(f), package=g[1], collection=g[0], **o)
             for f, g, o in zip(files, groups, outs)], indent=1))
    if args.write:
        sys.path.insert(0, str(Path(__file__).parent))
        from run import RESULTS_MD, machine, write_section

        m = machine()
        old = RESULTS_MD.read_text(encoding="utf-8") if RESULTS_MD.exists() else ""
        notes = ""
        start = old.find(SECTION + "\n")
        if start >= 0:
            end = old.find("\n## ", start + len(SECTION))
            body = old[start:end if end >= 0 else len(old)]
            at = re.search(r"^" + re.escape(NOTES_MARK), body, re.M)
            notes = body[at.start():].rstrip() + "\n" if at else ""
        dirty = " + local changes" if m["dirty"] else ""
        from importlib.metadata import PackageNotFoundError, version

        import mujoco
        try:
            pb = f"PyBullet {version('pybullet')}"
        except PackageNotFoundError:
            pb = "PyBullet not installed"
        write_section(SECTION, f"{SECTION}\n\nMachine: {m['cpu']}, {m['cpus']} CPUs; commit "
                      f"{m['commit']}{dirty}; {m['date_utc']}; MuJoCo {mujoco.__version__}, "
                      f"{pb}. `bench/robot_files.py` (its docstring defines every column)."
                      f"\n\n{text}\n" + (f"\n{notes}" if notes else ""))


if __name__ == "__main__":
    main()
