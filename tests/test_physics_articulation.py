"""A jointed tree as one exact block of the sequential-impulse loop (physics/articulation.py,
solver.articulation = "tree").

Expected on paper:
  * the factor solves the augmented system K [du; y] = [f; g], K = [[M, J^T], [J, -C]], of a
    random branching tree with locks and compliant rows exactly (checked against a dense
    numpy solve of the same K);
  * a chain hanging at rest carries, at each joint, the weight of everything below it after
    one step of ONE iteration, whatever its links' mass ratio (10 kg and 10 g here);
  * a motor and a damper folded into the factor keep their laws: the motor's no-load speed
    u / (K_t r) and its current's rise 1 - exp(-t R / L), a damped wheel's w_n = w_0 /
    (1 + h b / I)^n;
  * a box-clamped friction row (the door of paper 000) follows the clamped-impulse recurrence
    and sticks at once, to round-off;
  * a foot resting on four coplanar contact points does not drift;
  * the tree's velocity solve is the converged solve: at the default settings one step of
    MuJoCo's humanoid lying on the floor differs from a solve to tolerance 0 by < 1e-8.
"""
import math

import numpy as np
import pytest
from conftest import random_rotation

from sharnir.physics import Box, DCMotor, Plane, World
from sharnir.physics.articulation import factor_component, solve_component
from sharnir.physics.model import DYNAMIC, REC_COORD, REC_VEL, STATIC

G = 9.81


def random_tree(rng, nbody=12, floating=True):
    """Body 0 static. Floating: body 1 is the root and every further body hangs from an
    earlier dynamic one; else body 1 hangs from body 0. Each joint has 3 to 6 node rows, the
    last 0-3 of them compliant (c > 0), its child on side A or B at random."""
    kind = np.full(nbody, DYNAMIC, np.int64)
    kind[0] = STATIC
    mass = 10.0 ** rng.uniform(-1.5, 1.5, nbody)   # ratios up to 1000
    inv_mass = np.where(kind == DYNAMIC, 1.0 / mass, 0.0)
    inertia = mass[:, None] * 10.0 ** rng.uniform(-2, -1, (nbody, 3))
    R = np.array([random_rotation(rng) for _ in range(nbody)])
    njoint = nbody - 2 if floating else nbody - 1
    joint_body = np.zeros((njoint, 2), np.int64)
    joint_child = np.zeros(njoint, np.int64)
    node_n = np.zeros(njoint, np.int64)
    node_J = np.zeros((njoint, 6, 12))
    node_c = np.zeros((njoint, 6))
    for j in range(njoint):
        child = j + 2 if floating else j + 1
        parent = int(rng.integers(1, child)) if (floating or child > 1) else 0
        if not floating and child == 1:
            parent = 0
        side = int(rng.integers(0, 2))   # 1: the child is body B
        joint_body[j] = (parent, child) if side == 1 else (child, parent)
        joint_child[j] = side
        m = int(rng.integers(3, 7))
        node_n[j] = m
        q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
        cc = 6 * side
        for r in range(m):
            node_J[j, r] = rng.normal(size=12)
            node_J[j, r, cc:cc + 6] = q[r]
        compliant = int(rng.integers(0, min(3, m - 2) + 1))
        for r in range(m - compliant, m):
            node_c[j, r] = 10.0 ** rng.uniform(-3, 1)
    return dict(kind=kind, inv_mass=inv_mass, inertia=inertia, R=R, joint_body=joint_body,
                joint_child=joint_child, node_n=node_n, node_J=node_J, node_c=node_c,
                order=np.arange(njoint, dtype=np.int64),
                first=np.array([0, njoint], np.int64),
                root=np.array([1 if floating else -1], np.int64))


def dense_system(t):
    """K over the dynamic bodies' 6 velocities each and every node row, in that order."""
    nbody = len(t["kind"])
    dyn = [i for i in range(nbody) if t["kind"][i] == DYNAMIC]
    col = {i: 6 * k for k, i in enumerate(dyn)}
    nrow = int(t["node_n"].sum())
    n = 6 * len(dyn) + nrow
    K = np.zeros((n, n))
    for i in dyn:
        K[col[i]:col[i] + 3, col[i]:col[i] + 3] = np.eye(3) / t["inv_mass"][i]
        K[col[i] + 3:col[i] + 6, col[i] + 3:col[i] + 6] = (
            t["R"][i] @ np.diag(t["inertia"][i]) @ t["R"][i].T)
    rows = []
    at = 6 * len(dyn)
    for j in range(len(t["joint_body"])):
        for r in range(t["node_n"][j]):
            for e in range(2):
                i = t["joint_body"][j, e]
                if t["kind"][i] == DYNAMIC:
                    K[at, col[i]:col[i] + 6] = t["node_J"][j, r, 6 * e:6 * e + 6]
                    K[col[i]:col[i] + 6, at] = t["node_J"][j, r, 6 * e:6 * e + 6]
            K[at, at] = -t["node_c"][j, r]
            rows.append((j, r))
            at += 1
    return K, dyn, col, rows


@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tree_factor_solves_the_augmented_system_exactly(seed, floating):
    rng = np.random.default_rng(seed)
    t = random_tree(rng, floating=floating)
    nbody, njoint = len(t["kind"]), len(t["joint_body"])
    body_d = np.zeros((nbody, 6, 6))
    dinv, lc, g, jc, jp = (np.zeros((njoint, 6, 6)) for _ in range(5))
    assert factor_component(0, t["order"], t["first"], t["root"], t["joint_child"],
                            t["joint_body"], t["kind"], t["inv_mass"], t["inertia"], t["R"],
                            t["node_n"], t["node_J"], t["node_c"], body_d, dinv, lc, g, jc,
                            jp)
    K, dyn, col, rows = dense_system(t)
    f = rng.normal(size=(nbody, 6))
    f[0] = 0.0
    gz = np.zeros((njoint, 6))
    for j, r in rows:
        gz[j, r] = rng.normal()
    rhs = np.concatenate([np.concatenate([f[i] for i in dyn]), [gz[j, r] for j, r in rows]])
    expected = np.linalg.solve(K, rhs)
    bx, jx = np.zeros((nbody, 6)), np.zeros((njoint, 6))
    solve_component(0, t["order"], t["first"], t["root"], t["joint_child"], t["joint_body"],
                    t["kind"], t["node_n"], body_d, dinv, lc, g, f.copy(), gz.copy(),
                    bx, jx)
    got = np.concatenate([np.concatenate([bx[i] for i in dyn]), [jx[j, r] for j, r in rows]])
    # to rounding times K's condition (random rows, masses 1:1000)
    scale = np.linalg.norm(expected)
    assert np.linalg.norm(got - expected) < 1e-8 * scale, np.linalg.norm(got - expected) / scale


def test_dependent_lock_rows_fail_the_factor_instead_of_dividing_by_zero():
    rng = np.random.default_rng(4)
    t = random_tree(rng)
    j = 4
    t["node_c"][j] = 0.0
    t["node_J"][j, 1] = t["node_J"][j, 0]   # two locks of one joint the same
    nbody, njoint = len(t["kind"]), len(t["joint_body"])
    ok = factor_component(0, t["order"], t["first"], t["root"], t["joint_child"],
                          t["joint_body"], t["kind"], t["inv_mass"], t["inertia"], t["R"],
                          t["node_n"], t["node_J"], t["node_c"], np.zeros((nbody, 6, 6)),
                          *(np.zeros((njoint, 6, 6)) for _ in range(5)))
    assert not ok


@pytest.mark.parametrize("joint", ["revolute", "spherical", "fixed", "prismatic"])
def test_hanging_chain_of_mass_ratio_1000_carries_its_weight_in_one_iteration(joint):
    """Links alternately 10 kg and 10 g hang straight down at rest; after the first step,
    with a single velocity iteration, joint k holds up everything below it: F_z = g sum m."""
    world = World(dt=1.0 / 240.0, iterations=1, gravity=(0.0, 0.0, -G), articulation="tree")
    masses = [10.0 if k % 2 == 0 else 0.01 for k in range(8)]
    parent = 0
    for k, m in enumerate(masses):
        body = world.add_body(f"link{k}", mass=m, inertia=(m * 1e-3,) * 3,
                              pos=(0.0, 0.0, -0.1 * k - 0.05))
        world.add_joint(f"j{k}", joint, parent, body, anchor=(0.0, 0.0, -0.1 * k),
                        axis=(1.0, 0.0, 0.0) if joint == "prismatic" else (0.0, 1.0, 0.0))
        parent = body
    world.step()
    force = np.array(world.joint_reaction)[:, :3]
    below = G * np.cumsum(masses[::-1])[::-1]
    np.testing.assert_allclose(force[:, 2], below, rtol=1e-9)
    np.testing.assert_allclose(force[:, :2], 0.0, atol=1e-9 * below[0])
    # and nothing moved: the weight is carried, not left to the next step
    assert np.abs(np.array(world.body_vel)).max() < 1e-12


def axle(motor, voltage, dt, limits=None):
    world = World(dt=dt, gravity=(0.0, 0.0, 0.0), iterations=50, tolerance=1e-12,
                  articulation="tree")
    world.add_body("wheel", Box((0.1, 0.1, 0.1)), mass=1.0, inertia=(0.01,) * 3)
    world.add_joint("axle", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0), limits=limits)
    world.add_motor("axle", motor, voltage=voltage)
    return world


def test_a_folded_motor_runs_at_its_no_load_speed():
    motor = DCMotor(resistance=2.0, inductance=0.002, torque_constant=0.05,
                    rotor_inertia=1e-5, gear_ratio=10.0)
    world = axle(motor, 12.0, 0.001)
    world.step(4000)
    assert world.joint_vel[0] == pytest.approx(12.0 / (0.05 * 10.0), rel=0.02)
    assert world._trees.motor_folded[0]   # in the factor, not swept


def test_a_folded_motors_current_rises_with_the_electrical_time_constant():
    motor = DCMotor(resistance=2.0, inductance=0.02, torque_constant=0.05, gear_ratio=10.0)
    world = axle(motor, 12.0, 0.0005, limits=(-1e-6, 1e-6))
    world.step(round(motor.electrical_time_constant / 0.0005))
    assert world.motor_state["current"][0] == pytest.approx(6.0 * (1 - math.exp(-1)), rel=0.05)


def test_a_motor_at_its_current_limit_leaves_the_factor_and_holds_the_limit():
    motor = DCMotor(resistance=2.0, torque_constant=0.05, gear_ratio=10.0, current_limit=1.5)
    world = axle(motor, 12.0, 0.001, limits=(-1e-6, 1e-6))
    world.step(200)
    assert world.motor_state["current"][0] == pytest.approx(1.5, rel=1e-6)
    assert world.motor_state["torque"][0] == pytest.approx(10.0 * 0.05 * 1.5, rel=1e-6)
    assert not world._trees.motor_folded[0]


def test_a_folded_damper_brakes_a_wheel_by_the_implicit_recurrence():
    h, b, inertia, w0 = 0.01, 0.3, 0.01, 5.0
    world = World(dt=h, gravity=(0.0, 0.0, 0.0), articulation="tree")
    world.add_body("wheel", Box((0.1, 0.1, 0.1)), mass=1.0, inertia=(inertia,) * 3,
                   angvel=(0.0, 0.0, w0))
    world.add_joint("axle", "revolute", "world", "wheel", axis=(0.0, 0.0, 1.0), damping=b)
    rec = world.run(50)
    n = np.arange(1, 51)
    np.testing.assert_allclose(rec.joint[:, 0, REC_VEL], w0 / (1 + h * b / inertia) ** n, rtol=1e-9)


def test_door_friction_row_follows_the_clamped_recurrence_and_sticks_in_the_tree_block():
    """The door of paper 000 (tests/test_physics_door.py), its hinge a tree of one joint:
    w_k = w_{k-1} - tau dt / I until it would cross zero, then 0 and held."""
    mass, a, c, tau, dt, w0 = 30.0, 1.0, 0.04, 20.0, 0.01, 2.0
    inertia = mass * (a * a + c * c) / 12 + mass * (a / 2) ** 2
    world = World(dt=dt, gravity=(0.0, 0.0, -9.81), articulation="tree")
    world.add_body("door", Box((a / 2, c / 2, 1.0)), mass=mass, pos=(0.5, 0.0, 1.0),
                   vel=(0.0, w0 * 0.5, 0.0), angvel=(0.0, 0.0, w0))
    world.add_joint("hinge", "revolute", "world", "door", anchor=(0.0, 0.0, 1.0),
                    axis=(0.0, 0.0, 1.0), friction=tau)
    ws, w = [], w0
    while w > 0.0:
        w = max(w - tau * dt / inertia, 0.0)
        ws.append(w)
    rec = world.run(len(ws) + 300)
    np.testing.assert_allclose(rec.joint[:len(ws), 0, REC_VEL], ws, atol=1e-12)
    assert np.abs(rec.joint[len(ws):, 0, REC_VEL]).max() < 1e-14
    angle = rec.joint[len(ws) - 1, 0, REC_COORD]
    assert angle == pytest.approx(dt * sum(ws), abs=1e-12)
    assert np.abs(rec.joint[len(ws):, 0, REC_COORD] - angle).max() < 1e-14


def test_a_foot_on_four_coplanar_points_rests_without_drift():
    """A shin hinged to a 0.2 x 0.1 box foot, standing on the floor (the foot's face on
    four coplanar points: a rank-deficient contact matrix), gravity on: after settling,
    the foot does not creep."""
    world = World(dt=1.0 / 240.0, articulation="tree")
    world.add_body("floor", Plane(), kind="static")
    foot = world.add_body("foot", Box((0.1, 0.05, 0.02)), mass=1.0, pos=(0.0, 0.0, 0.02))
    shin = world.add_body("shin", Box((0.03, 0.03, 0.2)), mass=3.0, pos=(0.0, 0.0, 0.25))
    world.add_joint("ankle", "revolute", foot, shin, anchor=(0.0, 0.0, 0.04),
                    axis=(0.0, 1.0, 0.0), limits=(-1e-3, 1e-3))
    world.step(240)
    start = np.array(world.body_pos)[foot].copy()
    world.step(480)
    drift = np.abs(np.array(world.body_pos)[foot] - start)
    assert drift[:2].max() < 1e-9, drift
    assert drift[2] < 1e-6, drift


def hanging_pair(bounds):
    """Two 1 kg links hanging at rest from hinges about y, the second from the first, with
    their coordinates coupled q_1 - q_0 in `bounds` (a limited fixed tendon, as MuJoCo's
    humanoid has two)."""
    world = World(dt=0.01, gravity=(0.0, 0.0, -G), iterations=50, tolerance=1e-12,
                  articulation="tree")
    for k in range(2):
        world.add_body(f"link{k}", mass=1.0, inertia=(0.01,) * 3,
                       pos=(0.0, 0.0, -0.2 * k - 0.1))
        world.add_joint(f"j{k}", "revolute", "world" if k == 0 else "link0", f"link{k}",
                        anchor=(0.0, 0.0, -0.2 * k), axis=(0.0, 1.0, 0.0))
    world.add_coupling("j1", "j0", lower=bounds[0], upper=bounds[1])
    return world


def test_a_tree_whose_coupling_limit_is_out_of_reach_is_one_exact_pass():
    """The first link driven about its hinge, C = q_1 - q_0 far from the bounds +-1: the
    coupling's row is out of the solve, so no row is left outside the tree and one outer
    iteration is the whole solve
    (with the row counted, every step of MuJoCo's humanoid ran the cap of 100 outer
    iterations of 100 tree sweeps). In reach, the outer loop runs again and the bound holds."""
    far = hanging_pair((-1.0, 1.0))
    far.add_load("link0", torque=(0.0, 0.5, 0.0))   # (moving: each step's solve has work)
    for _ in range(15):
        far.step()
        assert far.solver_stats["iterations"] == 1
    q = np.array(far.joint_coord)
    assert abs(q[0]) > 0.05 and abs(q[1] - q[0]) < 0.5   # it turned; C stayed well inside
    # in reach: the first link driven about its hinge, the second held to it by the row
    near = hanging_pair((-1e-3, 1e-3))
    near.add_load("link0", torque=(0.0, 0.5, 0.0))
    iterations = []
    for _ in range(15):
        near.step()
        iterations.append(near.solver_stats["iterations"])
    q = np.array(near.joint_coord)
    assert abs(q[0]) > 0.02                              # the leader did turn
    assert abs(q[1] - q[0]) <= 1e-3 + 1e-9               # and the follower kept up
    assert max(iterations) > 1
