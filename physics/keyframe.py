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

A joint in a loop (its far side reaches back), and spherical and fixed joints, take no
coordinate here (one error naming them). The joints' and contacts' warm starts are dropped
(they belong to the pose left), the angular momenta follow the new velocities.
"""
import math

import numpy as np


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


def outward(joint_body, fixed, first=()):
    """(order, far, subtree) of the joints from the fixed bodies outwards (in a floating
    robot, from its body listed first in `first`, else its first body): `order` the joints
    of the tree in breadth-first order, far[j] 1 if body B is the far side of joint j (0: A),
    subtree[j] the bodies on its far side; joints in a loop are left out of `order`."""
    nbody = len(fixed)
    edges = [[] for _ in range(nbody)]
    for j, (a, b) in enumerate(joint_body):
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
