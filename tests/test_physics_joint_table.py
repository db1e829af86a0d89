"""The joint-type table (physics/joint.py, JOINT_TABLE): every type code once, its columns
consistent with each other, the flat arrays the kernels read derived from it, the group
types agreeing with the revolute joint they stay to the user, every lock one the tree pass
closes, and the motion subspace it states the one its row builder leaves free (a twist along
each axis of a jointed body: kept where the table says free, removed where it says locked).

Nothing here names a type's rows or capabilities: a type added to the table is checked as it
is (ARCHITECTURE.md, "Adding a joint type")."""
import numpy as np
import pytest

from sharnir.physics import joint
from sharnir.physics.constraint import (
    KIND_ANGULAR,
    KIND_GENERAL,
    KIND_POINT,
    MAX_BLOCKS,
    SLOT_EQ0,
    SLOT_EQ1,
    SLOT_FRICTION,
    SLOT_LOWER,
    SLOT_UPPER,
)
from sharnir.physics.joint import ANGULAR, JOINT_TABLE, LINEAR, LOCKS
from sharnir.physics.shape import quat_matrix
from sharnir.physics.world import World
from sharnir.scenes.schema import JointSpec

SCENE = [t for t in JOINT_TABLE if t.scene == t.name]
GROUPED = [t for t in JOINT_TABLE if t.group[0] > 0]


def test_every_type_code_appears_once_in_code_order_with_its_constant():
    assert [t.code for t in JOINT_TABLE] == list(range(len(JOINT_TABLE)))
    assert len({t.name for t in JOINT_TABLE}) == len(JOINT_TABLE)
    for t in JOINT_TABLE:
        assert getattr(joint, t.name.upper()) == t.code
        assert t.scene in joint.JOINT_TYPES, f"{t.name} reports as an unknown type"
    assert joint.JOINT_TYPES == {t.name: t.code for t in SCENE}
    assert joint.JOINT_TYPE_NAMES == {t.code: t.name for t in SCENE}
    assert set(joint.JOINT_TYPE_INFO) == {t.name for t in JOINT_TABLE}
    # the scene files take exactly the scene's types
    assert set(JointSpec.model_fields["type"].annotation.__args__) == set(joint.JOINT_TYPES)


def test_lock_codes_are_distinct_and_match_their_constants():
    assert sorted(lock.code for lock in LOCKS.values()) == list(range(len(LOCKS)))
    for name, lock in LOCKS.items():
        assert getattr(joint, f"LOCK_{name.upper()}") == lock.code
        assert 0 <= lock.rows <= 3
        assert lock.kind in (KIND_POINT, KIND_ANGULAR, KIND_GENERAL)
        assert not (lock.translates and lock.turns)
        assert (lock.kind == KIND_POINT) == (lock.rows == 3 and lock.translates)


@pytest.mark.parametrize("t", JOINT_TABLE, ids=lambda t: t.name)
def test_each_row_is_consistent_in_itself(t):
    assert len(t.locks) == 2 and all(name in LOCKS for name in t.locks)
    assert all(kind in (ANGULAR, LINEAR) and axis in (0, 1, 2) for kind, axis in t.motion)
    assert len(set(t.motion)) == len(t.motion) <= 6
    assert t.coordinate == (("position", "m") if t.linear else ("angle", "rad"))
    if t.limits or t.motor or t.coupling:   # one coordinate to bound, drive or couple
        assert t.dofs == 1
    if t.motor or t.damping:                # they act on the friction rows
        assert t.friction
    if t.friction or t.damping:
        assert t.dofs > 0                   # free motion to brake or damp
    if t.linear:
        assert all(kind == LINEAR for kind, _ in t.motion)
    # at most one lock turns (the tree pass closes one rotation lock per joint)
    assert sum(LOCKS[name].turns for name in t.locks) <= 1


@pytest.mark.parametrize("t", JOINT_TABLE, ids=lambda t: t.name)
def test_the_kernels_arrays_are_the_table(t):
    c = t.code
    for slot, name in zip((SLOT_EQ0, SLOT_EQ1), t.locks):
        lock = LOCKS[name]
        assert joint.BLOCK_ROWS[c, slot] == lock.rows
        assert joint.BLOCK_KIND[c, slot] == lock.kind
        assert joint.BLOCK_TRANSLATES[c, slot] == lock.translates
        assert joint.BLOCK_LOCK[c, slot] == lock.code
    for slot in (SLOT_LOWER, SLOT_UPPER):
        assert joint.BLOCK_ROWS[c, slot] == (1 if t.limits else 0)
        assert joint.BLOCK_TRANSLATES[c, slot] == (t.limits and t.linear)
    assert joint.BLOCK_ROWS[c, SLOT_FRICTION] == (t.dofs if t.friction else 0)
    assert not joint.BLOCK_TRANSLATES[c, SLOT_FRICTION]
    for slot in (SLOT_LOWER, SLOT_UPPER, SLOT_FRICTION):
        assert joint.BLOCK_KIND[c, slot] == (KIND_GENERAL if t.linear else KIND_ANGULAR)
    turning = [LOCKS[name].code for name in t.locks if LOCKS[name].turns]
    assert joint.ROTATION_LOCK[c] == (turning[0] if turning else joint.LOCK_NONE)
    assert (joint.GROUP_HINGES[c], joint.GROUP_INDEX[c]) == t.group
    assert joint.DOFS[c] == t.dofs
    assert joint.COORD_LINEAR[c] == t.linear
    for column in ("friction", "limits", "motor", "coupling", "damping"):
        assert getattr(joint, f"HAS_{column.upper()}")[c] == getattr(t, column)
    for array in (joint.BLOCK_ROWS, joint.BLOCK_KIND, joint.BLOCK_TRANSLATES):
        assert array.shape == (len(JOINT_TABLE), MAX_BLOCKS)
        assert array.flags.c_contiguous
    assert joint.BLOCK_ROWS.max() <= 3


@pytest.mark.parametrize("t", SCENE, ids=lambda t: t.name)
def test_a_scene_types_equality_rows_lock_what_its_motion_leaves(t):
    rows = joint.BLOCK_ROWS[t.code]
    assert rows[SLOT_EQ0] + rows[SLOT_EQ1] == 6 - t.dofs
    assert t.group == (0, 0)


def test_group_types_make_whole_groups_of_the_revolute_joint_they_stay():
    sizes = sorted({t.group[0] for t in GROUPED})
    assert sizes and all(size >= 2 for size in sizes)
    for size in sizes:
        members = sorted((t for t in GROUPED if t.group[0] == size), key=lambda t: t.group[1])
        assert [t.group[1] for t in members] == list(range(size))
        scene = joint.JOINT_TYPE_INFO[members[0].scene]
        assert scene.dofs == 1 and not scene.linear
        # the group locks together what its hinges' motion leaves: 6 - size rows
        assert sum(joint.BLOCK_ROWS[t.code, s] for t in members
                   for s in (SLOT_EQ0, SLOT_EQ1)) == 6 - size
        # the first hinge holds the point lock (the others have their own rows only)
        assert members[0].locks[0] == "group_point"
        assert all(t.locks == ("none", "none") for t in members[1:])
        for t in members:
            assert t.scene == scene.name
            # each hinge turns about its own axis of the group frame (gimbal.py)
            assert t.motion == ((ANGULAR, t.group[1]),)
            for column in ("coordinate", "friction", "limits", "motor", "coupling",
                           "damping"):
                assert getattr(t, column) == getattr(scene, column), (t.name, column)
            assert joint.GROUP_TYPE[t.group] == t.code
    assert len(joint.GROUP_TYPE) == len(GROUPED)


@pytest.mark.parametrize("t", JOINT_TABLE, ids=lambda t: t.name)
def test_every_lock_is_one_the_tree_pass_closes(t):
    """The position sweeps leave a tree joint's equality rows to the tree pass (solver.
    solve_positions, tree.py), which goes by lock: the rotation lock by turning the child,
    then a point lock in slot EQ0, else a slider's off-axis lock in slot EQ1, by moving it."""
    eq0, eq1 = (LOCKS[name] for name in t.locks)
    for slot, lock in ((SLOT_EQ0, eq0), (SLOT_EQ1, eq1)):
        if lock.turns or lock.rows == 0:
            continue
        if slot == SLOT_EQ0:
            assert lock.code in (joint.LOCK_POINT, joint.LOCK_GROUP_POINT), t.name
        else:
            assert lock.code == joint.LOCK_OFF_AXIS and not eq0.translates, t.name


# ---- the motion subspace is what the row builders leave free ------------------------------------
CASES = [(t.name, [t.name], [(1.0, 0.0, 0.0)]) for t in SCENE] + [
    ("universal", ["revolute"] * 2, [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]),
    ("gimbal", ["revolute"] * 3, [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]),
]


def held(kinds, axes):
    """A unit body (mass 1, inertia 1) at the origin, held to the world there by the joints."""
    w = World(dt=1 / 240, gravity=(0.0, 0.0, 0.0))
    w.add_body("base", kind="static")
    w.add_body("b", mass=1.0, inertia=(1.0, 1.0, 1.0))
    for k, (kind, axis) in enumerate(zip(kinds, axes)):
        limits = (-1.0, 1.0) if k == 1 and len(kinds) == 3 else None   # a gimbal's middle
        w.add_joint(f"j{k}", kind, "base", "b", axis=axis, limits=limits)
    w.configure(iterations=50, tolerance=0.0)
    return w


def free_twists(world):
    """The (kind, world axis) the table says the joints leave free: each type's motion, in
    its joint frame on the (static, unturned) base."""
    model, _, _ = world._ready()
    free = set()
    for j, code in enumerate(model.joint_type):
        R = quat_matrix(model.joint_local_frame[j, 0])
        for kind, axis in JOINT_TABLE[code].motion:
            d = R[:, axis]
            k = int(np.argmax(np.abs(d)))
            assert abs(abs(d[k]) - 1.0) < 1e-12, "the test's axes lie along the world's"
            free.add((kind, k))
    return free


@pytest.mark.parametrize("name, kinds, axes", CASES, ids=[c[0] for c in CASES])
def test_the_row_builders_leave_free_exactly_the_tables_motion(name, kinds, axes):
    free = free_twists(held(kinds, axes))
    for kind in (LINEAR, ANGULAR):
        for k in range(3):
            w = held(kinds, axes)
            _, state, _ = w._ready()
            i = w.body_names.index("b")
            (state.body_vel if kind == LINEAR else state.body_angvel)[i] = np.eye(3)[k]
            state.body_angmom[i] = state.body_angvel[i]   # inertia 1
            w.run(1)
            twist = np.concatenate([w.body_vel[i], w.body_angvel[i]])
            want = np.zeros(6)
            if (kind, k) in free:
                want[(0 if kind == LINEAR else 3) + k] = 1.0
            assert np.allclose(twist, want, atol=1e-6), (name, kind, k, twist)
