"""Keyframes: a pose written by hand (joint coordinates and rates, free bodies' poses and
velocities, motor voltages) put into a world (World.apply_keyframe; a scene file's
[[keyframes]], `sharnir run --keyframe NAME`; MuJoCo's mj_resetDataKeyframe).

Sharnir keeps every body's pose (maximal coordinates), so a joint coordinate is set by moving
the bodies on the joint's far side from the fixed world (its subtree), rigidly:

    revolute:   every body of the subtree turned by dq = q - q_now about the joint axis a
                (world, at the current pose) through the anchor p:
                x -> p + R(a, dq) (x - p),   R_body -> R(a, dq) R_body
    prismatic:  moved by dq a

the joints taken from the fixed world outwards, each at the pose its parents' moves left,
so that the coordinates compose (forward kinematics). The subtree is B's side when B is the
farther body from the fixed world (or, in a floating robot, from its first body), else A's,
turned by -dq. Rates then: every moving body of the robot starts at rest (or at the velocity
its free body is given), and each joint adds its rate w to its subtree outwards:

    revolute:   angvel += w a,   vel += w a x (x - p)          prismatic: vel += w a

A spherical joint's coordinate is its relative rotation, the unit quaternion

    q = conj(qfA) qfB        (qfA, qfB: the joint frame on A and on B, world; x = the axis
                              add_joint was given: the frames agree at q = 1)

whose angle 2 atan2(|q_xyz|, |q_w|) is what the joint reports (spherical.py), and its rate
the relative angular velocity in the joint frame on B,

    W = R(qfB)^T (wB - wA),  dq/dt = q (0, W) / 2,   |W| what the joint reports

(MuJoCo's ball joint: qpos and qvel). Setting it turns B's side so that R(qfB) = R(qfA) R(q)
with the anchors met (x_B = anchor_A - R_B r_B), and adds the rigid motion of angular velocity
R(qfB) W about the anchor to B's side.

The hinges of a universal joint or gimbal (gimbal.py: 2 or 3 revolute joints between one pair
of bodies) take their angles as each reports them; the group is set at once, from its frame
on A: R(qfB) = R(qfA) G, G = Rx(q_1) Ry(q_2) [Rz(s q_3)] (s = -1 where the third hinge's frame
is turned, its axis -z), and its last anchor met: x_B + r_B + o_B = x_A + r_A + o_A (gimbal.py's
offsets u_12, u_23). Hinges of the group not named keep their angles. A hinge turns about
c_i through its anchor p_i (p_1 = x_A + r_A, p_2 = p_1 + R(qfA) Rx(q_1) u_12,
p_3 = p_2 + R(qfA) Rx(q_1) Ry(q_2) u_23), so its rate adds q_i' c_i x (x - p_i) to B's side:

    c_1 = R(qfA) e_x,   c_2 = R(qfA) Rx(q_1) e_y,   c_3 = R(qfA) Rx(q_1) Ry(q_2) e_z s

The middle hinge's angle must lie within +-pi/2 (beyond, the group's angles are another
triple: gimbal.py reads q_2 in [-pi/2, pi/2]).

A joint in a loop (its far side reaches back), and fixed joints, take no coordinate here (one
error naming them). The joints' and contacts' warm starts are dropped (they belong to the pose
left), the angular momenta follow the new velocities, and the joints' reports
(joint_coord, joint_vel) are measured again at the new state (`report`, the kernels'
joint.joint_state in numpy).
"""
import math

import numpy as np

from .transforms import quat_conj, quat_mul
from .transforms import quat_matrix as matrix

# a spherical joint's rotation in a keyframe: a unit quaternion, its norm within this of 1
# (then normalised: four digits typed by hand are enough)
UNIT_TOLERANCE = 1e-3


def _axis_rotation(a, angle):
    """The rotation matrix of `angle` about the unit axis a (Rodrigues)."""
    x, y, z = a
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array([[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
                     [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
                     [t * x * z - s * y, t * y * z + s * x, t * z * z + c]])


def _quat_of(R):
    """The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = (0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s)
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = ((R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s)
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = ((R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = ((R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s)
    q = np.array(q)
    return q / np.linalg.norm(q)


def outward(joint_body, fixed, first=(), same=None):
    """(order, far, subtree) of the joints from the fixed bodies outwards (in a floating
    robot, from its body listed first in `first`, else its first body): `order` the joints
    of the tree in breadth-first order, far[j] 1 if body B is the far side of joint j (0: A),
    subtree[j] the bodies on its far side; joints in a loop are left out of `order`.
    `same[j]` (optional) the joint that stands for joint j: the hinges of a group are one
    edge, their first hinge's (the others get its far side and subtree, not a place in
    `order`)."""
    nbody = len(fixed)
    same = list(range(len(joint_body))) if same is None else same
    edges = [[] for _ in range(nbody)]
    for j, (a, b) in enumerate(joint_body):
        if same[j] != j:
            continue
        edges[a].append((j, b))
        edges[b].append((j, a))
    seen, order, far, parent_joint = set(), [], {}, {}
    roots = [i for i in range(nbody) if fixed[i]] + list(first)
    roots += [i for i in range(nbody) if not fixed[i]]   # floating robots: their first body
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        queue = [root]
        while queue:
            body = queue.pop(0)
            for j, other in edges[body]:
                if j in far or other in seen or (fixed[body] and fixed[other]):
                    continue
                far[j] = 1 if joint_body[j][1] == other else 0
                parent_joint[other] = j
                seen.add(other)
                order.append(j)
                queue.append(other)
    subtree = {}
    for j in order:
        start = joint_body[j][far[j]]
        inside, stack = {start}, [start]
        while stack:
            body = stack.pop()
            for k, other in edges[body]:
                if k != j and other not in inside and parent_joint.get(other) == k:
                    inside.add(other)
                    stack.append(other)
        subtree[j] = sorted(inside)
    for j, rep in enumerate(same):
        if rep != j and rep in far:
            far[j], subtree[j] = far[rep], subtree[rep]
    return order, far, subtree


def move_subtree(pos, rot, bodies, anchor, axis, turn, shift):
    """Turn the bodies (pos (n, 3), rot (n, 3, 3), in place) by `turn` rad about `axis`
    through `anchor`, then shift them by `shift` (3,)."""
    R = _axis_rotation(axis, turn)
    for i in bodies:
        pos[i] = anchor + R @ (pos[i] - anchor) + shift
        rot[i] = R @ rot[i]


def quats(rot, bodies, out):
    for i in bodies:
        out[i] = _quat_of(rot[i])


def component(joint_body, fixed, body):
    """The bodies joined to `body` through joints, none of them fixed (None if one is)."""
    found, stack = {body}, [body]
    while stack:
        i = stack.pop()
        for a, b in joint_body:
            for here, other in ((a, b), (b, a)):
                if here == i and other not in found:
                    if fixed[other]:
                        return None
                    found.add(other)
                    stack.append(other)
    return sorted(found)


# ---- quaternions, and the groups' rotations (gimbal.py) -------------------------------------
def relative(qfa, qfb):
    """q = conj(qfA) qfB, the sign with w >= 0 (a spherical joint's coordinate)."""
    q = quat_mul(quat_conj(qfa), qfb)
    q = q / np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


_AXES = np.eye(3)


def group_rotation(angles):
    """G = Rx(q_1) Ry(q_2) [Rz(q_3)] of a group's angles about its frame's x, y, z."""
    G = np.eye(3)
    for i, q in enumerate(angles):
        G = G @ _axis_rotation(_AXES[i], q)
    return G


def group_angles(R, hinges, prev):
    """The angles (q_1, q_2[, q_3]) of a group's relative rotation R = G (gimbal.py's
    gimbal_axis), each unwrapped across +-pi towards prev[i]."""
    raw = [math.atan2(-R[1, 2], R[2, 2]), math.atan2(R[0, 2], math.hypot(R[1, 2], R[2, 2])),
           math.atan2(-R[0, 1], R[0, 0])][:hinges]
    return [unwrap(a, p) for a, p in zip(raw, prev)]


def unwrap(angle, prev):
    """`angle` moved by whole turns into (prev - pi, prev + pi] (math3.wrap_angle)."""
    d = angle - prev
    return prev + d - 2.0 * math.pi * math.floor((d + math.pi) / (2.0 * math.pi))


def group_axes(RfA, angles, p1, u12, u23):
    """([c_1, c_2, c_3], [p_1, p_2, p_3]): each hinge's axis and anchor (world) of a group
    whose frame on A is RfA (3, 3), at `angles` about the group frame's axes."""
    R1 = RfA @ _axis_rotation(_AXES[0], angles[0])
    R2 = R1 @ _axis_rotation(_AXES[1], angles[1])
    p2 = p1 + R1 @ u12
    return [RfA[:, 0], R1[:, 1], R2[:, 2]], [p1, p2, p2 + R2 @ u23]


def group_offset(RfA, angles, u12, u23):
    """oA = R(qfA) (Rx(q_1) u_12 + Rx(q_1) Ry(q_2) u_23): the group's last anchor from its
    first, turned by the hinges (gimbal.py)."""
    R1 = RfA @ _axis_rotation(_AXES[0], angles[0])
    return R1 @ u12 + R1 @ _axis_rotation(_AXES[1], angles[1]) @ u23


# ---- the joints' reports, measured as the step measures them (joint.joint_state) -------------
def joint_frames(model, body_quat, j):
    """(qfA, qfB): joint j's frames on A and on B, world."""
    a, b = (int(x) for x in model.joint_body[j])
    return (quat_mul(body_quat[a], model.joint_local_frame[j, 0]),
            quat_mul(body_quat[b], model.joint_local_frame[j, 1]))


def measure(model, body_pos, body_quat, body_vel, body_angvel, prev):
    """(coord (njoint,), rate (njoint,)): every joint's coordinate and rate at this state, as
    the step reports them (joint.joint_state: revolute angles unwrapped towards prev,
    spherical joints' rotation angle and |wB - wA|, fixed joints 0)."""
    from .gimbal import MIN_COS
    from .joint import DOFS, GROUP_HINGES, GROUP_INDEX, PRISMATIC, REVOLUTE, SPHERICAL

    nj = model.joint_type.shape[0]
    coord, rate = np.zeros(nj), np.zeros(nj)
    for j in range(nj):
        t = int(model.joint_type[j])
        if DOFS[t] == 0:
            continue
        a, b = (int(x) for x in model.joint_body[j])
        qfa, qfb = joint_frames(model, body_quat, j)
        dw = body_angvel[b] - body_angvel[a]
        rel = quat_mul(quat_conj(qfa), qfb)
        Ra = matrix(qfa)
        if t == REVOLUTE:
            coord[j] = unwrap(2.0 * math.atan2(rel[1], rel[0]), prev[j])
            rate[j] = dw @ Ra[:, 0]
        elif t == SPHERICAL:
            coord[j] = 2.0 * math.atan2(np.linalg.norm(rel[1:]), abs(rel[0]))
            rate[j] = np.linalg.norm(dw)
        elif t == PRISMATIC:
            ra = matrix(body_quat[a]) @ model.joint_local_anchor[j, 0]
            rb = matrix(body_quat[b]) @ model.joint_local_anchor[j, 1]
            d = (body_pos[b] + rb) - (body_pos[a] + ra)
            x = Ra[:, 0]
            coord[j] = d @ x
            rate[j] = ((body_vel[b] - body_vel[a]) @ x - body_angvel[a] @ np.cross(ra + d, x)
                       + body_angvel[b] @ np.cross(rb, x))
        elif GROUP_HINGES[t] > 0:
            hinges, index = int(GROUP_HINGES[t]), int(GROUP_INDEX[t])
            R = matrix(rel)
            coord[j] = group_angles(R, 3, [prev[j]] * 3)[index]
            Rb = matrix(qfb)
            if hinges == 2:
                d = Ra[:, 0] if index == 0 else Rb[:, 1]
            else:
                cos_q2 = math.hypot(R[1, 2], R[2, 2])
                c2 = Ra @ np.array([0.0, R[2, 2], -R[1, 2]]) / max(cos_q2, 1e-300)
                inv = 1.0 / max(cos_q2, MIN_COS)
                d = (c2 if index == 1 else np.cross(c2, Rb[:, 2]) * inv if index == 0
                     else np.cross(Ra[:, 0], c2) * inv)
            rate[j] = dw @ d
    return coord, rate
