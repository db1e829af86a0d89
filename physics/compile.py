"""Compiling a world: the records of physics/specs.py (bodies, joints, loads, motors,
couplings) into the named tuples of flat arrays the kernels take (physics/model.py), as MuJoCo
compiles an mjSpec into an mjModel.

`build` makes all of it at once, at the first step after an edit that added or removed
something (World._ready):

    Model      the constants: masses, the joints in their model form (a universal joint's or
               gimbal's hinges take their group's type and frame: `group_model`), geoms and
               hull vertices (`geoms`), loads, motors and their controllers, couplings
               (`couplings`), the joint tree and the islands (tree.py)
    State      the records' poses and velocities; continued from the running state `carry`
               when there is one (time, angular momenta, user forces, warm starts, joint
               coordinates, the drag): a rebuild goes on where the steps were
    Work       scratch, sized for the model
    Trees      the trees' blocks of the velocity solve (articulation.py)
    ContactSet the contact store (contact.py: points, rows, scratch), None where no two
               geoms can ever touch (`may_touch`: the step is then compiled without the
               contact stages)

The records are read, never changed, here.
"""
from collections import namedtuple

import numpy as np

from .articulation import make_trees
from .contact import make_contacts
from .coupling import COUPLING_PARAMS, LOWER, MULTIPLIER, OFFSET, UPPER
from .joint import GROUP_TYPE
from .model import (
    DYNAMIC,
    KINEMATIC,
    REGION_AXES,
    REGION_BOX,
    REGION_COLS,
    REGION_HALF,
    REGION_HALF_SPACE,
    REGION_KIND,
    REGION_MU,
    REGION_POINT,
    STATIC,
    Model,
    make_state,
    make_work,
)
from .motor import CTRL_VOLTAGE, MOTOR_TRAJ
from .shape import FDO, HULL, Hull, matrix_quat
from .shape import geoms as shape_geoms
from .shape import quat_matrix as quat_to_matrix
from .specs import revolute_groups
from .transforms import quat_mul
from .tree import build_islands, build_tree

# what build gives: the arrays, the trees' blocks and the contact store (or None)
Compiled = namedtuple("Compiled", ["model", "state", "work", "trees", "contacts"])
# the drag's State fields, carried over by a rebuild (bodies are only ever added)
DRAG_FIELDS = ("drag_body", "drag_flags", "drag_point", "drag_target", "drag_quat",
               "drag_param", "drag_mass")


def build(bodies, joints, loads, carry=None, contacts=None):
    """The Compiled world of the records; `carry` the State the steps left (None at the
    start), `contacts` the ContactSet before, kept (its warm start) when the geoms are the
    same: a rebuild that changed only joints, such as a grasp."""
    model, groups, islands = model_of(bodies, joints, loads)
    state = state_of(model, bodies, joints, carry)
    nb, nj, nm = len(bodies), len(joints), model.motor_joint.shape[0]
    work = make_work(nb, nj, groups, islands, nm, model.coupling_joint.shape[0])
    trees = make_trees(model.joint_type, model.joint_body, model.joint_child, model.tree_order,
                       model.body_kind, nm)
    ng = model.geom_kind.shape[0]
    kept = contacts is not None and contacts.scratch.geom_pos.shape[0] == ng
    if kept:   # (its pair cache holds the pairs the old filters let through: emptied)
        contacts.scratch.bp_fat_state[:] = 0
    contacts = (contacts if kept else make_contacts(ng)) if may_touch(model) else None
    return Compiled(model, state, work, trees, contacts)


def model_of(bodies, joints, loads):
    """(Model, number of floating trees, number of islands) of the records."""
    nb, nj, nl = len(bodies), len(joints), len(loads)
    kind = np.array([b.kind for b in bodies], np.int64)
    mass = np.array([b.mass for b in bodies])
    inertia = np.array([b.inertia for b in bodies]).reshape(nb, 3)
    dyn = kind == DYNAMIC
    inv_mass = np.where(dyn, 1.0 / np.where(dyn, mass, 1.0), 0.0)
    inv_inertia = np.where(dyn[:, None], 1.0 / np.where(dyn[:, None], inertia, 1.0), 0.0)
    J = joints
    limit = np.array([j.limits if j.limits else (0.0, 0.0) for j in J]).reshape(nj, 2)
    joint_type, joint_anchor, joint_frame = group_model(joints)
    joint_child, tree_order, body_group, groups = build_tree(
        kind, mass, [j.bodies for j in J], (STATIC, KINEMATIC))
    body_island, island_driven, island_floating, islands = build_islands(
        kind, [j.bodies for j in J], DYNAMIC, KINEMATIC)
    model = Model(
        body_kind=kind, body_inv_mass=inv_mass, body_inertia=inertia,
        body_inv_inertia=inv_inertia,
        joint_type=joint_type,
        joint_body=np.array([j.bodies for j in J], np.int64).reshape(nj, 2),
        joint_local_anchor=joint_anchor,
        joint_local_frame=joint_frame,
        joint_friction=np.array([j.friction for j in J], float).reshape(nj),
        joint_damping=np.array([j.damping for j in J], float).reshape(nj),
        joint_limit=limit,
        joint_has_limit=np.array([j.limits is not None for j in J], np.bool_).reshape(nj),
        joint_child=joint_child, tree_order=tree_order, body_group=body_group,
        group_count=np.array([groups], np.int64), body_island=body_island,
        island_driven=island_driven, island_floating=island_floating,
        **geoms(bodies, joints, kind),
        load_body=np.array([ld.body for ld in loads], np.int64).reshape(nl),
        load_force=np.array([ld.force for ld in loads]).reshape(nl, 3),
        load_torque=np.array([ld.torque for ld in loads]).reshape(nl, 3),
        load_window=np.array([ld.window for ld in loads]).reshape(nl, 2),
        **motors(joints),
        **couplings(joints),
    )
    return model, groups, islands


def motors(joints):
    """The Model's motor arrays: the motored joints in order, each motor's parameters
    (DCMotor.row) and controller (a motor without one is in voltage mode), the controllers'
    keyframes in one table (motor_key) and each one's rows in it (first, count)."""
    motored = [j for j, joint in enumerate(joints) if joint.motor is not None]
    nm = len(motored)
    ctrl = [joints[j].controller
            or (CTRL_VOLTAGE, (0.0, 0.0), np.zeros(MOTOR_TRAJ), (), False) for j in motored]
    key_count = [len(c[3]) for c in ctrl]
    key_first = np.concatenate([[0], np.cumsum(key_count)[:-1]]).astype(np.int64)
    keys = [k for c in ctrl for k in c[3]]
    return dict(
        motor_joint=np.array(motored, np.int64).reshape(nm),
        motor_param=np.array([joints[j].motor.row() for j in motored], float).reshape(nm, 9),
        motor_ctrl=np.array([c[0] for c in ctrl], np.int64).reshape(nm),
        motor_gain=np.array([c[1] for c in ctrl], float).reshape(nm, 2),
        motor_implicit=np.array([c[4] for c in ctrl], np.bool_).reshape(nm),
        motor_traj=np.array([c[2] for c in ctrl], float).reshape(nm, MOTOR_TRAJ),
        motor_key=np.array(keys, float).reshape(len(keys), 2),
        motor_key_range=np.stack([key_first[:nm], np.array(key_count, np.int64)],
                                 axis=1).reshape(nm, 2))


def state_of(model, bodies, joints, carry):
    """The State the steps start from: the records' poses, velocities and motor voltages,
    what `carry` (the running State before a rebuild, or None) holds for the bodies and
    joints it had, and the rates of the joints new in this build."""
    nb, nj, nm = len(bodies), len(joints), model.motor_joint.shape[0]
    s = make_state(nb, nj, nm)
    s.motor_voltage[:] = [joints[j].voltage for j in model.motor_joint]
    for i, b in enumerate(bodies):
        s.body_pos[i], s.body_quat[i] = b.pos, b.quat
        s.body_vel[i], s.body_angvel[i] = b.vel, b.angvel
        if b.kind == DYNAMIC:
            R = quat_to_matrix(b.quat)
            s.body_angmom[i] = R @ (b.inertia * (R.T @ b.angvel))
    old = carry
    if old is not None:
        nbo, njo = old.body_pos.shape[0], old.joint_coord.shape[0]
        s.time[:] = old.time
        s.step_count[:] = old.step_count
        s.body_angmom[:nbo] = old.body_angmom
        s.body_force[:nbo] = old.body_force
        s.body_torque[:nbo] = old.body_torque
        s.joint_impulse[:njo] = old.joint_impulse
        s.joint_damper_impulse[:njo] = old.joint_damper_impulse
        s.joint_coord[:njo] = old.joint_coord
        s.joint_vel[:njo] = old.joint_vel
        for name in DRAG_FIELDS:
            getattr(s, name)[:] = getattr(old, name)
    # the rates of the joints new in this build, which a step reads before it reports
    # them (the controllers' w, a limit's approach): measured as the step would, where
    # anything moves (a scene's initial velocities; a grasp's joint on moving bodies)
    first = 0 if old is None else old.joint_coord.shape[0]
    if first < nj and (np.any(s.body_vel) or np.any(s.body_angvel)):
        from .keyframe import measure

        _, rate = measure(model, s.body_pos, s.body_quat, s.body_vel, s.body_angvel,
                          s.joint_coord)
        s.joint_vel[first:] = rate[first:]
    return s


def carry_back(bodies, joints, model, state):
    """Before a rebuild: what the arrays hold that the records must give the next build. The
    bodies' poses and velocities (`state`, the running State); and, while `model` is the one
    built from the records (None once an edit has dropped it: the records are the truth
    then), what the live edits wrote there: the joints' friction and damping, the voltages of
    the motors no controller drives (State.motor_voltage) and the controllers' set-points
    (Model.motor_traj). World changes a record it shares with the model only after this."""
    s = state
    for i in range(s.body_pos.shape[0]):
        b = bodies[i]
        b.pos, b.quat = s.body_pos[i].copy(), s.body_quat[i].copy()
        b.vel, b.angvel = s.body_vel[i].copy(), s.body_angvel[i].copy()
    if model is None:
        return
    for j in range(model.joint_friction.shape[0]):
        joints[j].friction = float(model.joint_friction[j])
        joints[j].damping = float(model.joint_damping[j])
    for m, j in enumerate(model.motor_joint):
        joint = joints[j]
        if joint.controller is None:
            joint.voltage = float(s.motor_voltage[m])
        else:
            mode, gains, _, keys, implicit = joint.controller
            joint.controller = (mode, gains, model.motor_traj[m].copy(), keys, implicit)


def group_model(joints):
    """The model's joint types, anchors and frames: a revolute joint in a group of 2 or 3
    between the same two bodies takes its place's type (joint.UNIVERSAL_1 ...) and the
    group's frame (gimbal.py: x = the first axis, y = the second, z = x cross y, on each
    body; the third joint's turned half a turn about y when its axis is -z); the first
    hinge's anchors [j, 2:4] the offsets u_12, u_23 between the hinges' anchors."""
    nj = len(joints)
    types = np.array([jn.type for jn in joints], np.int64)
    frames = np.array([jn.local_frame for jn in joints]).reshape(nj, 2, 4)
    anchors = np.zeros((nj, 4, 3))
    anchors[:, :2] = np.array([jn.local_anchor for jn in joints]).reshape(nj, 2, 3)
    for group in revolute_groups(joints).values():
        if len(group) < 2:
            continue
        for side in range(2):
            own = [quat_to_matrix(joints[k].local_frame[side])[:, 0] for k in group]
            x = own[0]
            y = own[1] - (own[1] @ x) * x
            y /= np.linalg.norm(y)
            z = np.cross(x, y)
            F = matrix_quat(np.column_stack((x, y, z)))
            for place, k in enumerate(group):
                types[k] = GROUP_TYPE[len(group), place]
                turned = place == 2 and own[2] @ z < 0.0
                frames[k, side] = quat_mul(F, (0.0, 0.0, 1.0, 0.0)) if turned else F
            if side == 0:   # the anchors' offsets, in the group frame at q = 0
                Fm = np.column_stack((x, y, z))
                for place in range(1, len(group)):
                    anchors[group[0], 1 + place] = Fm.T @ (
                        joints[group[place]].local_anchor[0]
                        - joints[group[place - 1]].local_anchor[0])
    return types, anchors, frames


def couplings(joints):
    """The Model's coupling arrays: (follower, leader) joint rows and (multiplier, offset,
    lower, upper) in coupling.py's columns."""
    index = {joint.name: j for j, joint in enumerate(joints)}
    rows = [(j, index[joint.mimic[0]]) for j, joint in enumerate(joints)
            if joint.mimic is not None]
    n = len(rows)
    param = np.zeros((n, COUPLING_PARAMS))
    for c, (j, _) in enumerate(rows):
        _, param[c, MULTIPLIER], param[c, OFFSET], param[c, LOWER], param[c, UPPER] = \
            joints[j].mimic
    return dict(coupling_joint=np.array(rows, np.int64).reshape(n, 2), coupling_param=param)


def geoms(bodies, joints, kind):
    """The Model's geom arrays: one geom per primitive body at its centre of mass, one per
    part of a compound and one per hull, each at its pose in the body frame (shape.geoms);
    a hull's vertices (in its own frame, the geom frame) go to hull_vert, its rows
    (start, count) to geom_hull, its geom_size is zeros. `kind` the bodies' kinds."""
    owner, leaves = [], []
    for i, b in enumerate(bodies):
        if b.shape is not None:
            for leaf in shape_geoms(b.shape):
                owner.append(i)
                leaves.append(leaf)
    ng = len(leaves)
    nb = len(bodies)
    held = sorted({(min(j.bodies), max(j.bodies)) for j in joints})
    hull = np.zeros((ng, 2), np.int64)
    verts, start, rows = [], 0, {}
    for g, (leaf, _, _) in enumerate(leaves):
        if leaf.kind == HULL or leaf.kind == FDO:   # an FDO's function rows (physics/fdo.py)
            if id(leaf) not in rows:      # a hull used twice shares its rows
                data = leaf.vertices if leaf.kind == HULL else leaf.rows
                rows[id(leaf)] = (start, len(data))
                verts.append(data)
                start += len(data)
            hull[g] = rows[id(leaf)]
    owners = [bodies[i] for i in owner]
    return dict(
        body_dynamic=kind == DYNAMIC,
        geom_body=np.array(owner, np.int64).reshape(ng),
        geom_kind=np.array([leaf.kind for leaf, _, _ in leaves], np.int64).reshape(ng),
        geom_size=np.array([(0.0, 0.0, 0.0) if leaf.kind in (HULL, FDO) else leaf.size
                            for leaf, _, _ in leaves], float).reshape(ng, 3),
        geom_local_pos=np.array([p for _, p, _ in leaves], float).reshape(ng, 3),
        geom_local_rot=np.array([r for _, _, r in leaves], float).reshape(ng, 3, 3),
        geom_material=np.array([b.material.row() for b in owners], float).reshape(ng, 8),
        **friction_regions(bodies),
        geom_group=np.array([b.group for b in owners], np.int64).reshape(ng),
        geom_mask=np.array([b.mask for b in owners], np.int64).reshape(ng),
        geom_hull=hull,
        hull_vert=np.concatenate(verts).astype(float) if verts else np.zeros((1, 3)),
        pair_excluded=np.array(sorted(lo * nb + hi for lo, hi in held), np.int64))


FACE_TOLERANCE = 0.01   # a face region's depth, as a share of its hull's largest extent


def friction_regions(bodies):
    """The Model's body_region and region_param (model.REGION_*) of the bodies' materials'
    FrictionRegion records, moved from the frame the shape is written in (x_ref) to the body
    frame (centre of mass c, principal axes Rp: x_ref = c + Rp x): a box's centre
    Rp^T (c_box - c) and axes the rows of Rp; a half-space n . x_ref >= d becomes
    (Rp^T n) . x >= d - n . c; a hull's face k the half-space of its outward plane
    n_k . x_ref <= o_k pushed in by FACE_TOLERANCE of the hull's extent."""
    spans = np.zeros((len(bodies), 2), np.int64)
    rows = []
    for i, b in enumerate(bodies):
        regions = b.material.regions
        spans[i] = (len(rows), len(regions))
        c, Rp = b.frame if b.frame is not None else (np.zeros(3), np.eye(3))
        c, Rp = np.asarray(c, dtype=float), np.asarray(Rp, dtype=float)
        for k, r in enumerate(regions):
            row = np.zeros(REGION_COLS)
            row[REGION_MU] = r.friction
            if r.box is not None:
                row[REGION_KIND] = REGION_BOX
                row[REGION_POINT:REGION_POINT + 3] = Rp.T @ (np.asarray(r.box[0]) - c)
                row[REGION_HALF:REGION_HALF + 3] = r.box[1]
                row[REGION_AXES:REGION_AXES + 9] = Rp.reshape(9)
            else:
                if r.face is not None:
                    hull = b.shape
                    if not isinstance(hull, Hull) or r.face >= len(hull.face_normals):
                        count = len(hull.face_normals) if isinstance(hull, Hull) else 0
                        raise ValueError(f"body {b.name!r}: friction region {k}: face {r.face} "
                                         f"is not a face of its shape (a hull has {count})")
                    n = np.asarray(hull.face_normals[r.face], dtype=float)
                    extent = float(np.ptp(hull.vertices, axis=0).max())
                    d = float(hull.face_offsets[r.face]) - FACE_TOLERANCE * extent
                else:
                    n, d = np.asarray(r.half_space[0], dtype=float), r.half_space[1]
                row[REGION_KIND] = REGION_HALF_SPACE
                row[REGION_POINT:REGION_POINT + 3] = Rp.T @ n
                row[REGION_HALF] = d - float(n @ c)
            rows.append(row)
    param = np.array(rows, float).reshape(len(rows), REGION_COLS) if rows else \
        np.zeros((1, REGION_COLS))
    return dict(body_region=spans, region_param=param)


def may_touch(model):
    """Whether any two geoms may ever touch: of different bodies, one of them dynamic, their
    collision bits matching and the pair not joined (broadphase.may_collide's filters)."""
    ng = model.geom_kind.shape[0]
    if ng < 2:
        return False
    if ng > 2048:
        return True
    body = model.geom_body
    dyn = model.body_dynamic[body]
    nb = model.body_dynamic.shape[0]
    a, b = np.triu_indices(ng, 1)
    ok = (body[a] != body[b]) & (dyn[a] | dyn[b])
    ok &= ((model.geom_group[a] & model.geom_mask[b]) != 0)
    ok &= ((model.geom_group[b] & model.geom_mask[a]) != 0)
    lo, hi = np.minimum(body[a], body[b]), np.maximum(body[a], body[b])
    ok &= ~np.isin(lo * nb + hi, model.pair_excluded)
    return bool(ok.any())
