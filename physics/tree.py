"""The joint tree and its exact closing pass.

Orientations are integrated exactly from w, and the joint velocities are solved, so what
drifts most between a joint's two anchors after a step is the bodies' centres: x += h v
follows a straight line where the constrained body moves on a curve. For joints that form a
tree rooted at static or kinematic bodies the translations that close every point lock are
fully determined: each child must sit where its parent's anchor puts it. One pass in
parent-before-child order closes them all exactly, in O(n) (forward kinematics from the
current orientations):

    point lock:          delta_child = -C (child B) or +C (child A),  C = (xB + rB) - (xA + rA)
                         (a group of hinges: its last anchor, turned by them; gimbal.py)
    prismatic off-axis:  delta_child = -sum_k C_k J_lin_child,k      (rows u_k, orthonormal)
    prismatic limit:     the same along the axis, only while the limit is violated

The rotation locks are closed first, joint by joint in the same order, by turning the child
about its centre by the least rotation delta that closes them (a body turned carries its L and
w along, as a position sweep's turn does: constraint.turn_body), then its anchor is placed.
With a = R(qfA) e_x, b = R(qfB) e_x (revolute), c1 = R(qfA) e_x, c2 = R(qfB) e_y
(a universal joint's first hinge) and turn(u, v) = normalised (1 + u . v, u x v), the least
rotation taking the unit vector u to v:

    axis lock (revolute):           child B: delta = turn(b, a);   child A: delta = turn(a, b)
    universal lock c1 . c2 = 0:     child B: delta = turn(c2, c2 - (c1 . c2) c1, normalised)
                                    child A: delta = turn(c1, c1 - (c1 . c2) c2, normalised)
    orientation (fixed, prismatic): child B: delta = qfA conj(qfB);  child A: qfB conj(qfA)

and q_child <- delta q_child (delta in world axes). A gimbal and a ball joint lock no rotation.
The pass goes by the locks a joint's type has (joint.LOCKS: joint.ROTATION_LOCK, and
joint.BLOCK_LOCK's point lock in slot EQ0 or off-axis lock in slot EQ1), not by the type; a
type whose equality slots hold another lock needs its closing here, since the position sweeps
leave a tree joint's equality rows to this pass (tests/test_physics_joint_table.py checks).
After the pass every tree joint's equality rows hold to rounding, so the position sweeps have
only limits, loop joints and contacts left (solver.solve_positions).

A tree with no static or kinematic body (a floating mechanism) is then shifted back so that
its mass-weighted centre does not move. Loop-closing joints are left to the mass-weighted
sweeps.
"""
from collections import deque

import numpy as np
from numba import njit

from .constraint import SLOT_EQ0, SLOT_EQ1, SLOT_LOWER, SLOT_UPPER, turn_body
from .jit import KERNEL, copy_rows
from .joint import (
    BLOCK_LOCK,
    LOCK_AXIS,
    LOCK_GROUP_POINT,
    LOCK_NONE,
    LOCK_OFF_AXIS,
    LOCK_ORIENTATION,
    LOCK_POINT,
    LOCK_UNIVERSAL,
    ROTATION_LOCK,
    joint_rows,
)
from .math3 import cross, dot, normalized, quat_mul, quat_normalized, quat_rotate


def build_tree(body_kind, body_mass, joint_body, root_kinds):
    """Order the joints into a forest.

    body_kind (nbody,), body_mass (nbody,), joint_body (njoint, 2); root_kinds: the kinds that
    cannot move in a position correction (static, kinematic). Returns joint_child (njoint,)
    (1: B is the child, 0: A is, -1: loop joint), tree_order (ntree,), body_group (nbody,)
    (index of the floating tree a body belongs to, -1 if its tree is rooted) and group count.
    """
    nbody, njoint = len(body_kind), len(joint_body)
    adjacent = [[] for _ in range(nbody)]
    for j, (a, b) in enumerate(joint_body):
        adjacent[a].append((j, b, 1))
        adjacent[b].append((j, a, 0))
    joint_child = np.full(njoint, -1, np.int64)
    body_group = np.full(nbody, -1, np.int64)
    seen = np.zeros(nbody, bool)
    order = []

    def grow(roots, group):
        queue = deque(roots)
        for r in roots:
            seen[r] = True
            body_group[r] = group
        while queue:
            i = queue.popleft()
            for j, other, child_is_b in adjacent[i]:
                if seen[other]:
                    continue   # a joint between two bodies already in the tree closes a loop
                seen[other] = True
                body_group[other] = group
                joint_child[j] = child_is_b
                order.append(j)
                queue.append(other)

    roots = [i for i in range(nbody) if body_kind[i] in root_kinds]
    grow(roots, -1)
    groups = 0
    # floating mechanisms: root each at its heaviest body
    for i in np.argsort(-np.asarray(body_mass), kind="stable"):
        if not seen[i]:
            grow([int(i)], groups)
            groups += 1
    return joint_child, np.array(order, np.int64), body_group, groups


@njit(**KERNEL)
def _shift(pos, i, d0, d1, d2):
    pos[i, 0] += d0
    pos[i, 1] += d1
    pos[i, 2] += d2


@njit(**KERNEL)
def _least_turn(u, v):
    """The least rotation taking unit u to unit v (identity when they are opposite)."""
    c = cross(u, v)
    d = 1.0 + dot(u, v)
    if d < 1e-12:
        return (1.0, 0.0, 0.0, 0.0)
    return quat_normalized((d, c[0], c[1], c[2]))


@njit(**KERNEL)
def close_rotation(lock, qfa, qfb, child_b):
    """delta (world) that turns the child so that joint j's rotation lock `lock`
    (joint.ROTATION_LOCK) holds (identity for LOCK_NONE); see the module's text."""
    if lock == LOCK_AXIS:
        a = quat_rotate(qfa, (1.0, 0.0, 0.0))
        b = quat_rotate(qfb, (1.0, 0.0, 0.0))
        return _least_turn(b, a) if child_b else _least_turn(a, b)
    if lock == LOCK_UNIVERSAL:
        c1 = quat_rotate(qfa, (1.0, 0.0, 0.0))
        c2 = quat_rotate(qfb, (0.0, 1.0, 0.0))
        k = dot(c1, c2)
        if child_b:
            return _least_turn(c2, normalized((c2[0] - k * c1[0], c2[1] - k * c1[1],
                                               c2[2] - k * c1[2]), c2))
        return _least_turn(c1, normalized((c1[0] - k * c2[0], c1[1] - k * c2[1],
                                           c1[2] - k * c2[2]), c1))
    if lock == LOCK_ORIENTATION:
        # delta qf_child = qf_parent: delta = qf_parent conj(qf_child), the short way round
        if child_b:
            d = quat_mul(qfa, (qfb[0], -qfb[1], -qfb[2], -qfb[3]))
        else:
            d = quat_mul(qfb, (qfa[0], -qfa[1], -qfa[2], -qfa[3]))
        if d[0] < 0.0:
            d = (-d[0], -d[1], -d[2], -d[3])
        return quat_normalized(d)
    return (1.0, 0.0, 0.0, 0.0)


@njit(**KERNEL)
def _turn_child(model, state, j, child_b):
    """Turn joint j's child by close_rotation, carrying its L and w along."""
    quat = state.body_quat
    a = model.joint_body[j, 0]
    b = model.joint_body[j, 1]
    f = model.joint_local_frame
    qfa = quat_mul((quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]),
                   (f[j, 0, 0], f[j, 0, 1], f[j, 0, 2], f[j, 0, 3]))
    qfb = quat_mul((quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]),
                   (f[j, 1, 0], f[j, 1, 1], f[j, 1, 2], f[j, 1, 3]))
    d = close_rotation(ROTATION_LOCK[model.joint_type[j]], qfa, qfb, child_b)
    if d[1] == 0.0 and d[2] == 0.0 and d[3] == 0.0:
        return
    i = b if child_b else a
    turn_body(i, d, quat_normalized(quat_mul(d, (quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]))),
              quat, state.body_angvel, state.body_angmom)


@njit(**KERNEL)
def tree_pass(model, state, work):
    """Close every rotation lock, point lock (and prismatic off-axis / violated limit) of the
    tree joints."""
    pos, quat = state.body_pos, state.body_quat
    ngroup = model.group_count[0]
    start = work.body_shift
    if ngroup > 0:
        copy_rows(start, pos)
    for k in range(model.tree_order.shape[0]):
        j = model.tree_order[k]
        jt = model.joint_type[j]
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        child_b = model.joint_child[j] == 1
        child = b if child_b else a
        if ROTATION_LOCK[jt] != LOCK_NONE:
            _turn_child(model, state, j, child_b)
        if BLOCK_LOCK[jt, SLOT_EQ0] == LOCK_GROUP_POINT:
            # a group's last anchor turns with its hinges (gimbal.py): C from its rows
            C = work.joint_C
            joint_rows(work.joint_J, C, j, jt, pos, quat, a, b, model.joint_local_anchor,
                       model.joint_local_frame, state.joint_coord[j])
            sign = -1.0 if child_b else 1.0
            _shift(pos, child, sign * C[j, SLOT_EQ0, 0], sign * C[j, SLOT_EQ0, 1],
                   sign * C[j, SLOT_EQ0, 2])
        elif BLOCK_LOCK[jt, SLOT_EQ0] == LOCK_POINT:
            ra = quat_rotate((quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]),
                             (model.joint_local_anchor[j, 0, 0], model.joint_local_anchor[j, 0, 1],
                              model.joint_local_anchor[j, 0, 2]))
            rb = quat_rotate((quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]),
                             (model.joint_local_anchor[j, 1, 0], model.joint_local_anchor[j, 1, 1],
                              model.joint_local_anchor[j, 1, 2]))
            c0 = pos[b, 0] + rb[0] - pos[a, 0] - ra[0]
            c1 = pos[b, 1] + rb[1] - pos[a, 1] - ra[1]
            c2 = pos[b, 2] + rb[2] - pos[a, 2] - ra[2]
            sign = -1.0 if child_b else 1.0
            _shift(pos, child, sign * c0, sign * c1, sign * c2)
        elif BLOCK_LOCK[jt, SLOT_EQ1] == LOCK_OFF_AXIS:
            J, C = work.joint_J, work.joint_C
            coord = joint_rows(J, C, j, jt, pos, quat, a, b, model.joint_local_anchor,
                               model.joint_local_frame, state.joint_coord[j])
            col = 6 if child_b else 0
            for s in range(SLOT_EQ1, SLOT_UPPER + 1):
                if s == SLOT_EQ1:
                    rows = 2
                else:
                    if not model.joint_has_limit[j]:
                        continue
                    gap = (coord - model.joint_limit[j, 0] if s == SLOT_LOWER
                           else model.joint_limit[j, 1] - coord)
                    if gap >= 0.0:
                        continue
                    C[j, s, 0] = gap
                    rows = 1
                d0 = d1 = d2 = 0.0
                for r in range(rows):
                    d0 -= C[j, s, r] * J[j, s, r, col]
                    d1 -= C[j, s, r] * J[j, s, r, col + 1]
                    d2 -= C[j, s, r] * J[j, s, r, col + 2]
                _shift(pos, child, d0, d1, d2)
                if s == SLOT_EQ1:
                    # the off-axis shift changes the position along the axis only through d
                    coord = joint_rows(J, C, j, jt, pos, quat, a, b, model.joint_local_anchor,
                                       model.joint_local_frame, state.joint_coord[j])
    if ngroup > 0:
        acc = work.group_acc
        acc[:, :] = 0.0
        for i in range(pos.shape[0]):
            g = model.body_group[i]
            if g >= 0 and model.body_inv_mass[i] > 0.0:
                m = 1.0 / model.body_inv_mass[i]
                for q in range(3):
                    acc[g, q] += m * (pos[i, q] - start[i, q])
                acc[g, 3] += m
        for i in range(pos.shape[0]):
            g = model.body_group[i]
            if g >= 0 and acc[g, 3] > 0.0 and model.body_inv_mass[i] > 0.0:
                for q in range(3):
                    pos[i, q] -= acc[g, q] / acc[g, 3]


def build_islands(body_kind, joint_body, dynamic, kinematic):
    """Islands of dynamic bodies connected by joints. Returns body_island (nbody,) (-1 for
    bodies in no joint or not dynamic), island_driven (nisland,) (joined to a kinematic body),
    island_floating (nisland,) (joined to no static or kinematic body: its momentum is its
    own) and the island count."""
    nbody = len(body_kind)
    parent = list(range(nbody))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in joint_body:
        if body_kind[a] == dynamic and body_kind[b] == dynamic:
            parent[find(a)] = find(b)
    body_island = np.full(nbody, -1, np.int64)
    roots = {}
    for a, b in joint_body:
        for i in (a, b):
            if body_kind[i] == dynamic:
                body_island[i] = roots.setdefault(find(i), len(roots))
    driven = np.zeros(len(roots), np.bool_)
    floating = np.ones(len(roots), np.bool_)
    for a, b in joint_body:
        for i, other in ((a, b), (b, a)):
            if body_kind[i] != dynamic and body_kind[other] == dynamic:
                floating[body_island[other]] = False
                if body_kind[i] == kinematic:
                    driven[body_island[other]] = True
    return body_island, driven, floating, len(roots)
