"""The tree pass (physics/tree.py) closes every rotation lock of the joints that form a tree, not
only their point locks: after each step, whatever the velocity solve left open, each hinge's
axis as body A carries it is the axis as body B carries it, a universal joint's two axes stay
perpendicular, and a weld or a slider keeps the relative orientation it was built with, to
rounding. Checked from the bodies' poses alone (each body's local axis taken from the starting
pose), on chains that whip in 3-D with a light link between heavy ones, at a coarse dt and 5
iterations: the rows' own Gauss-Seidel leaves them open by 1e-4..1e-2 rad a step there."""
import numpy as np
import pytest

from sharnir.physics.shape import quat_matrix
from sharnir.physics.world import World

LINK = 0.3
MASSES = (5.0, 0.05, 5.0, 0.5)   # a light link between heavy ones: Gauss-Seidel is slow there


def whip(middle, child_first=False):
    """A chain hung from the world: a hinge about y at the origin, link 0 -> 1 joined by
    `middle` ("revolute" about x, "universal" about x then z, "fixed" or "prismatic" along x;
    child_first: listing link 1 as the joint's body A), then hinges about y and x; every link
    starts turning fast about y and z."""
    w = World(dt=0.01, gravity=(0.0, 0.0, -9.81))
    w.configure(iterations=5, position_iterations=0, tolerance=0.0)
    w.add_body("base", kind="static")
    spin = np.array([0.5, 6.0, 4.0])
    for k, m in enumerate(MASSES):
        c = np.array([(k + 0.5) * LINK, 0.0, 0.0])
        w.add_body(f"l{k}", mass=m, inertia=(0.002 * m, 0.01 * m, 0.01 * m), pos=c,
                   angvel=spin, vel=np.cross(spin, c))
    w.add_joint("root", "revolute", "base", "l0", anchor=(0.0, 0.0, 0.0), axis=(0, 1, 0))
    at = (LINK, 0.0, 0.0)
    pair = ("l1", "l0") if child_first else ("l0", "l1")
    if middle == "universal":
        w.add_joint("u1", "revolute", *pair, anchor=at, axis=(1, 0, 0))
        w.add_joint("u2", "revolute", *pair, anchor=at, axis=(0, 0, 1))
    elif middle == "prismatic":
        w.add_joint("m", "prismatic", *pair, anchor=at, axis=(1, 0, 0), limits=(-0.05, 0.05))
    else:
        w.add_joint("m", middle, *pair, anchor=at, axis=(1, 0, 0))
    w.add_joint("h2", "revolute", "l1", "l2", anchor=(2 * LINK, 0.0, 0.0), axis=(0, 1, 0))
    w.add_joint("h3", "revolute", "l2", "l3", anchor=(3 * LINK, 0.0, 0.0), axis=(1, 0, 0))
    return w


def rot(w, name):
    return quat_matrix(np.asarray(w.body_quat[w.body_names.index(name)]))


def energy(w):
    """Kinetic plus potential energy of the links (J)."""
    total = 0.0
    for k, m in enumerate(MASSES):
        i = w.body_names.index(f"l{k}")
        R = rot(w, f"l{k}")
        v, om = np.asarray(w.body_vel[i]), np.asarray(w.body_angvel[i])
        inertia = R @ np.diag(w.body_inertia[i]) @ R.T
        total += 0.5 * m * v @ v + 0.5 * om @ inertia @ om + m * 9.81 * w.body_pos[i][2]
    return total


def locks(w, middle, start, child_first=False):
    """The largest rotation-lock error of the chain's joints (rad), from the bodies' poses."""
    worst = 0.0
    hinges = [("base", "l0", (0, 1, 0)), ("l1", "l2", (0, 1, 0)), ("l2", "l3", (1, 0, 0))]
    if middle == "revolute":
        hinges.append(("l0", "l1", (1, 0, 0)))
    for a, b, axis in hinges:
        # the axis in each body's frame, as the starting pose has it
        on_a = start[a].T @ np.asarray(axis, float)
        on_b = start[b].T @ np.asarray(axis, float)
        worst = max(worst, np.linalg.norm(np.cross(rot(w, a) @ on_a, rot(w, b) @ on_b)))
    if middle == "universal":
        # the first hinge's axis turns with body A, the second's with body B (gimbal.py)
        a, b = ("l1", "l0") if child_first else ("l0", "l1")
        c1 = rot(w, a) @ (start[a].T @ np.array([1.0, 0.0, 0.0]))
        c2 = rot(w, b) @ (start[b].T @ np.array([0.0, 0.0, 1.0]))
        worst = max(worst, abs(c1 @ c2))
    if middle in ("fixed", "prismatic"):
        rel0 = start["l0"].T @ start["l1"]
        worst = max(worst, np.abs(rot(w, "l0").T @ rot(w, "l1") - rel0).max())
    return worst


@pytest.mark.parametrize("child_first", [False, True], ids=["parent_as_a", "child_as_a"])
@pytest.mark.parametrize("middle", ["revolute", "universal", "fixed", "prismatic"])
def test_the_tree_pass_closes_every_rotation_lock_to_rounding(middle, child_first):
    w = whip(middle, child_first)
    start = {n: rot(w, n) for n in ("base", "l0", "l1", "l2", "l3")}
    energy0 = energy(w)
    worst = 0.0
    for _ in range(100):
        w.step()
        worst = max(worst, locks(w, middle, start, child_first))
    assert worst < 1e-12
    # turning a child carries its motion along: no energy from the closing (the solve itself
    # may only lose some)
    assert energy(w) <= energy0 * (1.0 + 1e-9)
    # and it whipped: the links turned far from where they started
    assert np.abs(rot(w, "l3") - start["l3"]).max() > 0.3

