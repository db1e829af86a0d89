"""The joint tree and its exact translation pass.

Orientations are integrated exactly from w, and the joint velocities are solved, so what drifts
between a joint's two anchors after a step is the bodies' centres: x += h v follows a straight
line where the constrained body moves on a curve. For joints that form a tree rooted at static
or kinematic bodies the translations that close every point lock are fully determined: each
child must sit where its parent's anchor puts it. One pass in parent-before-child order closes
them all exactly, in O(n) (forward kinematics from the current orientations):

    point lock:          delta_child = -C (child B) or +C (child A),  C = (xB + rB) - (xA + rA)
    prismatic off-axis:  delta_child = -sum_k C_k J_lin_child,k      (rows u_k, orthonormal)
    prismatic limit:     the same along the axis, only while the limit is violated

A correction is not a force. A body hinged to a static body (a revolute joint whose parent
cannot move) and moved by delta back onto the fixed hinge keeps its angular momentum about
the fixed hinge axis a:

    L_child -= ((delta x m v_child) . a) a

Without this, the next velocity solve projects the body's velocity, tangent to its old circle
about the hinge, onto the new tangent and removes a fraction (w h)^2 / 2 of its turning energy
every step: a door braked by friction would stop early. With it a friction-braked door follows
the exact discrete solution of the clamped impulse.

What is NOT restored (measured, see the tests): between two moving bodies, and for ball
joints, the projection keeps that second-order loss; restoring all three components feeds a
slender body's spin about its own axis back into itself (unstable), and the variants tried
for moving hinges pumped energy in. The loss is dissipative and shrinks with dt.

A tree with no static or kinematic body (a floating mechanism) is then shifted back so that
its mass-weighted centre does not move. Loop-closing joints are left to the mass-weighted
sweeps.
"""
from collections import deque

import numpy as np
from numba import njit

from .constraint import KIND_POINT, SLOT_EQ0, SLOT_EQ1, SLOT_LOWER, SLOT_UPPER
from .joint import BLOCK_KIND, PRISMATIC, REVOLUTE, joint_rows
from .math3 import cross, dot, quat_mul, quat_rotate


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


@njit(nogil=True, cache=True)
def _shift(pos, i, d0, d1, d2):
    pos[i, 0] += d0
    pos[i, 1] += d1
    pos[i, 2] += d2


@njit(nogil=True, cache=True)
def _keep_hinge_momentum(state, model, child, axis, d0, d1, d2):
    """L_child -= ((delta x m v_child) . a) a for a child moved by delta about a fixed hinge."""
    m = 1.0 / model.body_inv_mass[child]
    v = (m * state.body_vel[child, 0], m * state.body_vel[child, 1], m * state.body_vel[child, 2])
    along = dot(cross((d0, d1, d2), v), axis)
    for q in range(3):
        state.body_angmom[child, q] -= along * axis[q]


@njit(nogil=True, cache=True)
def tree_pass(model, state, work, static_kind):
    """Close every point lock (and prismatic off-axis / violated limit) of the tree joints."""
    pos, quat = state.body_pos, state.body_quat
    ngroup = model.group_count[0]
    start = work.body_shift
    if ngroup > 0:
        start[:] = pos
    for k in range(model.tree_order.shape[0]):
        j = model.tree_order[k]
        jt = model.joint_type[j]
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        child_b = model.joint_child[j] == 1
        child = b if child_b else a
        parent = a if child_b else b
        if BLOCK_KIND[jt, SLOT_EQ0] == KIND_POINT:
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
            if jt == REVOLUTE and model.body_kind[parent] == static_kind:
                side = 0 if child_b else 1       # the parent's side of the joint
                pq = (quat[parent, 0], quat[parent, 1], quat[parent, 2], quat[parent, 3])
                axis = quat_rotate(quat_mul(pq, (model.joint_local_frame[j, side, 0],
                                                 model.joint_local_frame[j, side, 1],
                                                 model.joint_local_frame[j, side, 2],
                                                 model.joint_local_frame[j, side, 3])),
                                   (1.0, 0.0, 0.0))
                _keep_hinge_momentum(state, model, child, axis, sign * c0, sign * c1, sign * c2)
        elif jt == PRISMATIC:
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
                    gap = coord - model.joint_limit[j, 0] if s == SLOT_LOWER else model.joint_limit[j, 1] - coord
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
