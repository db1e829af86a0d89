"""The flat arrays a world is made of: model (constants), state, scratch, settings.

Names carry the entity (`body_`, `joint_`, `load_`); each comment gives the shape. Body 0 is
the fixed world, as in MuJoCo: joints to the world name body 0 and nothing branches on it.
Kernels take these named tuples of arrays, never objects.
"""
from collections import namedtuple

import numpy as np

from .constraint import MAX_BLOCKS, PACK
from .coupling import COUPLING_COEFS
from .motor import MOTOR_COEFS
from .settings import ARTICULATIONS

ARTICULATION_SWEEP, ARTICULATION_TREE = 0, 1   # Settings.articulation: ARTICULATIONS' indexes
assert ARTICULATIONS[ARTICULATION_TREE] == "tree"

STATIC, DYNAMIC, KINEMATIC = 0, 1, 2
# island_acc columns: mass, momentum (3), first moment sum m x (3), angular momentum about the
# origin (3), inertia about the origin (6: xx, yy, zz, xy, xz, yz), a second angular momentum
# (3) before the position pass and the kinetic energy (momentum.keep_island_momentum)
ACC_MASS, ACC_P, ACC_MX, ACC_L, ACC_I, ACC_LPRE, ACC_E, ISLAND_ACC = 0, 1, 4, 7, 10, 16, 19, 20
# a wrench: force (3) then torque (3)
REACTION = 6
# region_param columns (a body's friction regions, specs.FrictionRegion, in the body frame:
# centre of mass, principal axes): its kind, friction, then a box's centre, half extents and
# axes (rows, body frame: local = A (x - c)), or a half-space's normal and offset (n . x >= d
# in the first two slots)
REGION_BOX, REGION_HALF_SPACE = 0, 1
REGION_KIND, REGION_MU, REGION_POINT, REGION_HALF, REGION_AXES, REGION_COLS = 0, 1, 2, 5, 8, 17
# Recording.joint / rec_joint channels per joint and step (app.snapshot.JOINT_CHANNELS names
# them): coordinate, rate, friction, sliding; the motor's voltage, current, torque, rotor
# speed (0 without a motor); the reaction wrench (joint_reaction)
(REC_COORD, REC_VEL, REC_FRICTION, REC_SLIDING, REC_VOLTAGE, REC_CURRENT, REC_TORQUE,
 REC_MOTOR_SPEED, REC_REACTION, REC_CHANNELS) = 0, 1, 2, 3, 4, 5, 6, 7, 8, 14
BODY_KINDS = {"static": STATIC, "dynamic": DYNAMIC, "kinematic": KINEMATIC}
# state.solver_stats (model.State), by entry: the velocity solve's iterations, its final
# residual max|dp| and its seconds (the first STAT_RECORDED, recorded per step:
# Recording.stats); 1 + the first body found non-finite at the step's end (0: none), 1 + the
# first dynamic body beyond the speed bounds; 1 + the joint found beyond a gap bound at the
# step's start (0: none), its gap (m or rad) and whether it is the angular one; the largest
# point / off-axis and angular gaps of all joints then (m, rad); the step's energy gain (J),
# what its sources could supply (J, energy.py) and 1 + the body that gained most; a traced
# step's (Settings.trace) 1 + the first stage after which a body was found non-finite or
# beyond the speed bounds (its index in solver.STAGES; 0: none yet), 1 + that body and which
# (solver.TRACE_NONFINITE, TRACE_SPEED, TRACE_TURN)
(STAT_ITERATIONS, STAT_RESIDUAL, STAT_SECONDS, STAT_NONFINITE_BODY, STAT_RUNAWAY_BODY,
 STAT_RECORDED) = 0, 1, 2, 3, 4, 3
(STAT_GAP_JOINT, STAT_GAP, STAT_GAP_ANGULAR, STAT_WORST_GAP, STAT_WORST_ANGLE, STAT_GAIN,
 STAT_SUPPLY, STAT_ENERGY_BODY, STAT_TRACE_STAGE, STAT_TRACE_BODY, STAT_TRACE_WHY, STATS) = \
    5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16

Model = namedtuple("Model", [
    "body_kind",           # (nbody,) int64: STATIC, DYNAMIC, KINEMATIC
    "body_inv_mass",       # (nbody,) 1/kg, 0 for static and kinematic bodies
    "body_inertia",        # (nbody, 3) principal moments about the centre of mass, body frame
    "body_inv_inertia",    # (nbody, 3) their inverses, 0 for static and kinematic bodies
    "joint_type",          # (njoint,) int64: joint.REVOLUTE ...
    "joint_body",          # (njoint, 2) int64: bodies A, B
    "joint_local_anchor",  # (njoint, 4, 3) anchor offset from each body's centre, body frame
                           # ([j, 0] on A, [j, 1] on B); [j, 2], [j, 3]: on the first hinge of
                           # a group (gimbal.py) the offsets u_12, u_23 between the hinges'
                           # anchors in the group frame, else zero
    "joint_local_frame",   # (njoint, 2, 4) joint frame in each body frame (x = joint axis)
    "joint_friction",      # (njoint,) Coulomb limit, N m or N; edited live
    "joint_damping",       # (njoint,) viscous damping b, N m s/rad or N s/m (damper.py); live
    "joint_limit",         # (njoint, 2) lower, upper (rad or m)
    "joint_has_limit",     # (njoint,) bool
    "joint_child",         # (njoint,) int64: 1 if B is the child in the joint tree, 0 if A, -1 loop
    "tree_order",          # (ntree,) int64 tree joints, every parent before its children
    "body_group",          # (nbody,) int64 floating tree of the body (no static/kinematic
                           #   root), or -1
    "group_count",         # (1,) int64 number of floating trees
    "body_island",         # (nbody,) int64 island of jointed dynamic bodies, -1 for none
    "island_driven",       # (nisland,) bool: the island is joined to a kinematic body
    "island_floating",     # (nisland,) bool: joined to no static or kinematic body
    "body_dynamic",        # (nbody,) bool
    "geom_body",           # (ngeom,) int64 body owning the geom
    "geom_kind",           # (ngeom,) int64 shape kind (shape.py)
    "geom_size",           # (ngeom, 3) shape numbers (shape.py)
    "geom_local_pos",      # (ngeom, 3) offset from the body's centre of mass, body frame
    "geom_local_rot",      # (ngeom, 3, 3) orientation in the body frame
    "geom_material",       # (ngeom, 8) friction, rolling (m), spinning (m), restitution,
                           #   friction along the anisotropy axis (-1: isotropic), that axis
                           #   (3, body frame, unit)
    "body_region",         # (nbody, 2) int64 first row of region_param and count (0: the
                           #   body's friction is its geoms' everywhere)
    "region_param",        # (nregion, REGION_COLS) friction regions (REGION_* columns)
    "geom_group",          # (ngeom,) int64 collision bits the geom has
    "geom_mask",           # (ngeom,) int64 collision bits the geom collides with
    "geom_hull",           # (ngeom, 2) int64 first vertex and count in hull_vert (hulls)
    "hull_vert",           # (nvert, 3) hull vertices, geom frame
    "pair_excluded",       # (nexcl,) int64 sorted keys lo * nbody + hi of body pairs never
                           #   in contact
    "load_body",           # (nload,) int64
    "load_force",          # (nload, 3) N, world frame, at the centre of mass
    "load_torque",         # (nload, 3) N m, world frame
    "load_window",         # (nload, 2) start <= t < end, s
    "motor_joint",         # (nmotor,) int64 the joint each DC motor drives (motor.py)
    "motor_param",         # (nmotor, MOTOR_PARAMS) R, L, K_t, J_m, gear ratio, efficiency,
                           #   voltage, current and torque limits (motor.py's columns)
    "motor_ctrl",          # (nmotor,) int64 controller: motor.CTRL_VOLTAGE, _POSITION, _VELOCITY
    "motor_gain",          # (nmotor, 2) kp (V per rad, m, or rad/s), kd (V per rad/s or m/s)
    "motor_implicit",      # (nmotor,) bool the controller's rate term is implicit (motor.py)
    "motor_traj",          # (nmotor, MOTOR_TRAJ) set-point: kind, then its numbers (motor.py)
    "motor_key",           # (nkey, 2) keyframes (t, set-point) of every motor, in time order
    "motor_key_range",     # (nmotor, 2) int64 first keyframe row and count
    "coupling_joint",      # (ncoupling, 2) int64 follower and leader joints (coupling.py)
    "coupling_param",      # (ncoupling, COUPLING_PARAMS) multiplier m, offset o, lower and
                           #   upper bound of C = q_f - m q_l - o (coupling.py's columns)
])

State = namedtuple("State", [
    "time",                  # (1,) s
    "step_count",            # (1,) int64
    "body_pos",              # (nbody, 3) centre of mass, world
    "body_quat",             # (nbody, 4) w, x, y, z
    "body_vel",              # (nbody, 3) m/s
    "body_angvel",           # (nbody, 3) rad/s, world
    "body_angmom",           # (nbody, 3) angular momentum about the centre, world (dynamic bodies)
    "body_force",            # (nbody, 3) user force, persists until changed (drag, API)
    "body_torque",           # (nbody, 3) user torque
    "drag_body",             # (1,) int64 the body dragged (perturb.py), -1 for none
    "drag_flags",            # (2,) bool: pull drag_point to drag_target; turn to drag_quat
    "drag_point",            # (3,) the grabbed point, body frame (from the centre of mass)
    "drag_target",           # (3,) where it is pulled to, world
    "drag_quat",             # (4,) the orientation the body is turned to, w, x, y, z
    "drag_param",            # (4,) stiffness 1/s^2, damping ratio, max force N, max torque N m
    "drag_mass",             # (3, 3) the jointed system's effective mass at the point, world,
                             #   kg (World.set_drag); all 0: the body's own (perturb.py)
    "drag_force",            # (3,) the last step's drag force at the point, world, N
    "drag_torque",           # (3,) the last step's drag torque about the centre of mass, N m
    "motor_voltage",         # (nmotor,) V, set live
    "motor_current",         # (nmotor,) A, at the end of the last step
    "motor_torque",          # (nmotor,) N m (N for a slider) the joint got: its impulse / h
    "motor_speed",           # (nmotor,) rotor rad/s, r times the joint's rate
    "motor_target",          # (nmotor,) the controller's last set-point (rad, m or a rate)
    "joint_impulse",         # (njoint, MAX_BLOCKS, 3) accumulated impulses, the warm start
    "joint_damper_impulse",  # (njoint, 3) the damping rows' impulses (damper.py), warm start
    "joint_coord",           # (njoint,) angle (rad, unwrapped) or position (m)
    "joint_vel",             # (njoint,) rad/s or m/s; spherical: |wB - wA|
    "joint_friction_force",  # (njoint,) friction torque/force = p_fr / dt; spherical: its norm
    "joint_friction_vec",    # (njoint, 3) friction torque or force on body B, world
    "joint_sliding",         # (njoint,) bool: friction at its limit (dynamic friction)
    "joint_reaction",        # (njoint, REACTION) the joint's 6-axis sensor: force (N) and torque
                             #   (N m) that body A exerts on body B through the joint (every
                             #   row: locks, limits, friction, motor), world frame, the torque
                             #   about the anchor on B; J^T p / dt of the last step
    "body_contact",          # (nbody, REACTION) summed contact force (N) on each body and its
                             #   torque about the centre of mass (N m), world, the last step
    "solver_stats",          # (STATS,) the STAT_* entries above: the velocity solve's
                             #      iterations, residual and seconds, the bodies found
                             #      non-finite or too fast, joint gaps, energy, the trace
])

Work = namedtuple("Work", [
    "body_rot",              # (nbody, 3, 3) rotation of the current pose
    "body_inv_inertia_world",  # (nbody, 3, 3) at the current pose
    "body_free_angvel",      # (nbody, 3) w before this step's impulses (their share of L)
    "body_turn",             # (nbody,) int8: how a dynamic body turns in a step (solver.py):
                             #   TURN_RATE by h w, TURN_HELD (held by ball joints and no
                             #   other joint) and TURN_FAST (in no joint, turning fast) by L
    "body_end_pos",          # (nbody, 3) x + h v: where the free drift would put the body
    "body_end_quat",         # (nbody, 4) the torque-free rotation of L over h (solver.py)
    "body_force_acc",        # (nbody, 3)
    "body_torque_acc",       # (nbody, 3)
    "body_shift",            # (nbody, 3) positions before the tree pass
    "group_acc",             # (ngroup, 4) mass-weighted shift sums and masses of floating trees
    "island_energy",         # (2, nisland) kinetic energy before / after following the geometry
    "island_acc",            # (nisland, ISLAND_ACC) mass, momentum, first moment, angular
                             #   momentum and inertia sums of floating islands (solver.py)
    "geometry_impulse",      # (njoint, MAX_BLOCKS, 3) impulses of that projection
    "joint_J",               # (njoint, MAX_BLOCKS, 3, 12) row Jacobians
    "joint_W",               # (njoint, MAX_BLOCKS, 3, 12) M^-1 J^T per row
    "joint_C",               # (njoint, MAX_BLOCKS, 3)
    "joint_J_end",           # (njoint, MAX_BLOCKS, 3, 12) scratch: rows at the drifted poses
    "joint_C_end",           # (njoint, MAX_BLOCKS, 3) errors at the drifted poses
    "joint_kinv",            # (njoint, MAX_BLOCKS, 3, 3)
    "joint_bias",            # (njoint, MAX_BLOCKS, 3)
    "joint_rows",            # (njoint, MAX_BLOCKS) int64 rows active this step
    "joint_clamped",         # (njoint, MAX_BLOCKS) bool
    "block_count",           # (1,) int64 active blocks this step
    "block_list",            # (njoint * MAX_BLOCKS, 6) int64: joint, slot, rows, kind, body A, B
    "block_data",            # (njoint * MAX_BLOCKS, PACK) packed rows of each block (constraint.py)
    "block_impulse",         # (njoint * MAX_BLOCKS, 3) accumulated impulses during a solve
    "motor_row",             # (nmotor, 12) each motor's row J (its joint's friction row)
    "motor_w",               # (nmotor, 12) M^-1 J^T
    "motor_coef",            # (nmotor, MOTOR_COEFS) k, c0, c1, largest impulse, starting rate
    "motor_impulse",         # (nmotor,) accumulated impulse of this step's solve
    "damper_list",           # (njoint,) int64 the damped joints this step (damper.py)
    "damper_count",          # (1,) int64 how many
    "damper_w",              # (njoint, 3, 12) M^-1 J^T of each damped row
    "damper_k",              # (njoint, 3) its effective mass
    "damper_c",              # (njoint,) h b
    "coupling_body",         # (ncoupling, 4) int64 the bodies of its four slots (coupling.py)
    "coupling_J",            # (ncoupling, 4, 6) its row, per slot
    "coupling_W",            # (ncoupling, 4, 6) M^-1 J^T per slot
    "coupling_coef",         # (ncoupling, COUPLING_COEFS) k, aimed rate, error, side
    "coupling_impulse",      # (ncoupling,) accumulated impulse (warm start)
    "k3",                    # (3, 3) scratch
    "body_energy",           # (nbody, 4) kinetic, potential energy, |v|, |w| at the step's
                             #   start (energy.py)
    "motor_rate0",           # (nmotor,) |rate| of each motor's joint at the step's start
])
# the work arrays a step reads from the step before (warm starts, the rows the rotors turned
# with: motor.motor_rows); the rest is this step's
WORK_CARRIED = ("motor_impulse", "coupling_impulse", "motor_row")

Settings = namedtuple("Settings", [
    "dt",                    # s
    "gravity",               # 3-tuple, m/s^2
    "iterations",            # velocity iterations (max)
    "position_iterations",
    "tolerance",             # stop when every |dp| <= tolerance (N s)
    "budget_s",              # wall-clock budget for the velocity iterations, 0 = off
    "warm_start",            # bool
    "manifold_reuse",        # m: a touching pair whose bodies moved no point of either geom
                             #   further than this since its manifold was found keeps that
                             #   manifold (contact.detect_contacts); 0 = every pair afresh
    "articulation",          # int: ARTICULATION_SWEEP (a tree's rows swept one by one) or
                             #   ARTICULATION_TREE (each tree one exact block: articulation.py)
    "max_speed",             # m/s: a dynamic body faster than this ends the step as RUNAWAY
    "max_angular_speed",     # rad/s: likewise for its angular velocity; 0 turns either off
    "max_joint_gap",         # m: a joint's point lock or slider off-axis error beyond this at
                             #   the start of a step ends it as JOINT_GAP (0: off)
    "max_joint_angle_gap",   # rad: likewise for its axis or orientation lock
    "max_energy_gain",       # a step whose energy gain exceeds this many times what its
                             #   sources could supply ends as ENERGY_JUMP (0: off; energy.py)
    "trace",                 # bool: check the bodies after every stage of the step and name
                             #   the first that left one non-finite or beyond the speed bounds
                             #   (solver.trace_bodies; World replays a step gone non-finite so)
    "threads",               # int: threads the step's parallel loops run on (physics/threads.py
                             #   sets it per call; 1: no parallel region is entered at all)
])


def make_settings(dt, gravity, iterations, position_iterations, tolerance, budget_ms, warm_start,
                  manifold_reuse, max_speed, max_angular_speed, max_joint_gap,
                  max_joint_angle_gap, max_energy_gain, articulation="sweep", trace=False,
                  threads=1):
    """Settings with the exact scalar types the kernels are compiled for."""
    g = tuple(float(x) for x in gravity)
    return Settings(float(dt), (g[0], g[1], g[2]), int(iterations), int(position_iterations),
                    float(tolerance), float(budget_ms) * 1e-3, bool(warm_start),
                    float(manifold_reuse), ARTICULATIONS.index(articulation),
                    float(max_speed), float(max_angular_speed),
                    float(max_joint_gap), float(max_joint_angle_gap), float(max_energy_gain),
                    bool(trace), int(threads))


def make_state(nbody, njoint, nmotor=0):
    quat = np.zeros((nbody, 4))
    quat[:, 0] = 1.0
    return State(
        time=np.zeros(1), step_count=np.zeros(1, np.int64),
        body_pos=np.zeros((nbody, 3)), body_quat=quat, body_vel=np.zeros((nbody, 3)),
        body_angvel=np.zeros((nbody, 3)), body_angmom=np.zeros((nbody, 3)),
        body_force=np.zeros((nbody, 3)), body_torque=np.zeros((nbody, 3)),
        drag_body=np.full(1, -1, np.int64), drag_flags=np.zeros(2, np.bool_),
        drag_point=np.zeros(3), drag_target=np.zeros(3), drag_quat=np.array([1.0, 0, 0, 0]),
        drag_param=np.zeros(4), drag_mass=np.zeros((3, 3)), drag_force=np.zeros(3),
        drag_torque=np.zeros(3),
        motor_voltage=np.zeros(nmotor), motor_current=np.zeros(nmotor),
        motor_torque=np.zeros(nmotor), motor_speed=np.zeros(nmotor),
        motor_target=np.zeros(nmotor),
        joint_impulse=np.zeros((njoint, MAX_BLOCKS, 3)), joint_coord=np.zeros(njoint),
        joint_damper_impulse=np.zeros((njoint, 3)),
        joint_vel=np.zeros(njoint), joint_friction_force=np.zeros(njoint),
        joint_friction_vec=np.zeros((njoint, 3)), joint_sliding=np.zeros(njoint, np.bool_),
        joint_reaction=np.zeros((njoint, REACTION)), body_contact=np.zeros((nbody, REACTION)),
        solver_stats=np.zeros(STATS))


def make_work(nbody, njoint, ngroup, nisland, nmotor=0, ncoupling=0):
    blocks = (njoint, MAX_BLOCKS)
    return Work(
        body_rot=np.zeros((nbody, 3, 3)), body_inv_inertia_world=np.zeros((nbody, 3, 3)),
        body_free_angvel=np.zeros((nbody, 3)),
        body_turn=np.zeros(nbody, np.int8), body_end_pos=np.zeros((nbody, 3)),
        body_end_quat=np.zeros((nbody, 4)),
        body_force_acc=np.zeros((nbody, 3)), body_torque_acc=np.zeros((nbody, 3)),
        body_shift=np.zeros((nbody, 3)), group_acc=np.zeros((max(ngroup, 1), 4)),
        island_energy=np.zeros((2, max(nisland, 1))),
        island_acc=np.zeros((max(nisland, 1), ISLAND_ACC)),
        geometry_impulse=np.zeros(blocks + (3,)),
        joint_J=np.zeros(blocks + (3, 12)), joint_W=np.zeros(blocks + (3, 12)),
        joint_C=np.zeros(blocks + (3,)), joint_J_end=np.zeros(blocks + (3, 12)),
        joint_C_end=np.zeros(blocks + (3,)), joint_kinv=np.zeros(blocks + (3, 3)),
        joint_bias=np.zeros(blocks + (3,)), joint_rows=np.zeros(blocks, np.int64),
        joint_clamped=np.zeros(blocks, np.bool_), block_count=np.zeros(1, np.int64),
        block_list=np.zeros((njoint * MAX_BLOCKS, 6), np.int64),
        block_data=np.zeros((njoint * MAX_BLOCKS, PACK)),
        block_impulse=np.zeros((njoint * MAX_BLOCKS, 3)), k3=np.zeros((3, 3)),
        motor_row=np.zeros((nmotor, 12)), motor_w=np.zeros((nmotor, 12)),
        motor_coef=np.zeros((nmotor, MOTOR_COEFS)), motor_impulse=np.zeros(nmotor),
        damper_list=np.zeros(njoint, np.int64), damper_count=np.zeros(1, np.int64),
        damper_w=np.zeros((njoint, 3, 12)), damper_k=np.zeros((njoint, 3)),
        damper_c=np.zeros(njoint),
        coupling_body=np.zeros((ncoupling, 4), np.int64),
        coupling_J=np.zeros((ncoupling, 4, 6)), coupling_W=np.zeros((ncoupling, 4, 6)),
        coupling_coef=np.zeros((ncoupling, COUPLING_COEFS)),
        coupling_impulse=np.zeros(ncoupling),
        body_energy=np.zeros((nbody, 4)), motor_rate0=np.zeros(nmotor))
