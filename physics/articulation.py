"""An articulated tree as one block of the sequential-impulse loop, solved exactly
(solver.articulation = "tree").

The outer algorithm stays the sequential-impulse loop of solver.solve_velocities: blocks of
rows, warm start, the tolerance, the wall-clock budget. A tree (the bodies the tree joints of
tree.build_tree hold together, one component per floating mechanism or per subtree hanging
from a static or kinematic body) is ONE block of that loop: each outer iteration solves all
of the tree's rows at once, given the velocities of everything outside it.

The tree's rows come in two kinds.

F rows, folded into a factor (one node per tree joint, at most 6 rows): the tree joint's
equality rows (point, axis, orientation locks) and, on each free axis of the joint (and of the
other hinges of its group, gimbal.py), one compliant row that carries that axis's viscous
damper (damper.py: P_d = -c_d w') and DC motor (motor.py: P_m = c0 - c1 w', back-EMF and the
rotor's reflected inertia in c1) together, P = c0 - c w', c = c1 + c_d. Each F row r is

    J_r u + c_r lam_r + b_r = 0,   c_r = 1 / c (0 for a lock),  b_r = -c0 / c (lock: its bias)

with u the bodies' velocities (v, w per body, world) after the impulses, lam_r the row's
accumulated impulse. A motor at its current or torque limit is not linear: it leaves the
factor for that step and is swept as a row of the outer loop (motor.solve_motors).

R rows, solved on the tree's Delassus matrix: the tree joints' limit and friction rows and the
contact rows between the tree's bodies and static or kinematic ones (or the tree's own
bodies). Rows that touch a dynamic body outside the tree stay rows of the outer sweep.

The factor (Baraff 1996, "Linear-time dynamics using Lagrange multipliers", with compliance):
the augmented system over the tree's dynamic bodies i and tree joints j,

    K [du; y] = [f; g],   K = [[M, J^T], [J, -C]],   M_i = diag(m_i E, I_i),

has the tree's graph, so a block LDL^T that eliminates leaves first has no fill-in. In
comp_order reversed, joint j with child body c and parent p:

    body c:   D_c = M_c - sum_{k under c} J_kc^T D_k^-1 J_kc         (6 x 6, SPD)
              L_jc = J_jc D_c^-1
    joint j:  D_j = -(J_jc D_c^-1 J_jc^T + C_j)                        (m_j x m_j, < 0)
              G_j = D_j^-1 J_jp,   D_p -= J_jp^T G_j   (p dynamic)

then the root (a floating tree's heaviest body) gets D^-1 last. A solve is two sweeps:

    forward, leaves first:  z = [f; g];  z_j -= L_jc z_c;  z_p -= G_j^T z_j
    back, root first:       x_root = D_root^-1 z_root;  x_j = D_j^-1 z_j - G_j x_p;
                            x_c = D_c^-1 z_c - L_jc^T x_j

One outer iteration on one tree (lam_F, lam_R the accumulated impulses, u the velocities):

 1. g = -(J_F u + C lam_F + b_F), f = 0:  du0 = x_body (the F rows solved alone).
 2. The R rows' velocities w = J_R (u + du0) + bias_R, and their Delassus matrix through the
    tree A = J_R P J_R^T, P the body block of K^-1. A is built once a step from the factor:
    with e_r = [J_r^T; 0] and K = L D L^T, A_rs = e_r^T K^-1 e_s = z_r^T D^-1 z_s,
    z_r = L^-1 e_r (the forward sweep alone), which is nonzero only on the path from the
    row's bodies to the root: O(depth) a row, O(shared path) a pair (_row_path).
 3. Projected Gauss-Seidel on A (w += A_:r dlam_r after each update), block by block: a limit
    or contact normal lam >= 0; a joint's friction ||lam|| <= F h (paper 000's ball); a
    manifold's sliding pair on its ellipse mu P, rolling pair on the disk mu_r P, twist on
    [-mu_t P, mu_t P] (contact_solver.py's rows and cones), P the manifold's normal total;
    until every |dlam| <= tolerance, or the iterations or the budget run out. After
    POLISH_FIRST sweeps, then after 4, 8, 16... a Newton step on the active set the sweep
    left (_polish): the active rows solved exactly, A_aa dlam_a = -w_a, with a friction group
    at its bound scaled with its manifold's P (lam_g = (lam_g / P) P'), kept only if it
    lowers the merit (the largest change a Jacobi sweep from the iterate would make; 0 at
    a solution) and taken back otherwise. Where the active set is right,
    the sweep after the step changes nothing: the solve is exact, to rounding. A step
    stopped by the budget returns the PGS iterate.
 4. f = J_R^T dlam, the same g: u += x_body, lam_F -= x_joint.

The tree's own rows then hold exactly (to the PGS tolerance on the R rows), so a scene whose
rows all belong to trees takes one outer iteration; rows outside (other bodies, loop joints,
couplings, saturated motors) couple to the trees by the outer Gauss-Seidel as before. A
limited coupling counts as a row outside only while a bound is in the step's reach (out of
reach its row takes no impulse: coupling.py); while one is, each outer iteration runs the
trees' PGS again, up to the iteration count.

Arrays: the Model's tree_member, body_comp, comp_order, comp_first, comp_root (tree.py
build_components); the Work's tree_* arrays (model.py, shapes there). Kernels that run every
iteration take arrays, not the tuples.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from .clock import monotonic_seconds
from .constraint import MAX_BLOCKS, SLOT_FRICTION, SLOT_LOWER, SLOT_UPPER
from .contact import (
    M_DIR,
    M_LIN,
    M_MU,
    M_MU2,
    M_ROLL,
    M_TWIST,
    N_DIR,
    N_LIN,
    N_TARGET,
    P_N,
    P_R1,
    P_S,
    P_T1,
)
from .coupling import K_EFF as COUPLING_K_EFF
from .jit import ENTRY, INLINE, KERNEL
from .joint import BLOCK_ROWS, GROUP_HINGES, GROUP_INDEX
from .motor import (
    C0,
    C1,
    GAIN,
    I_MAX,
    J_ROTOR,
    K_EFF,
    M_CURRENT_LIMIT,
    P_MAX,
    RATE0,
    U_FREE,
    U_LIMIT,
    U_RATE,
)

_JIT = KERNEL
DYNAMIC = 1   # model.DYNAMIC (model.py imports this module's sizes; kept here against a cycle)
NODE_ROWS = 6   # rows of a joint's node: 6 - dofs locks + at most one compliant row a dof
PIVOT_SHARE = 1e-12   # a pivot below this share of its block's largest diagonal: singular
TREE_MANIFOLDS = 32   # contact manifolds a step may put into tree blocks (more: outer sweep)
# R row groups (tree_grp[:, G_KIND]): a limit row, a joint's friction rows, a contact point's
# normal, a manifold's sliding pair, rolling pair, twist
G_LIMIT, G_JFRIC, G_NORMAL, G_SLIDE, G_ROLL, G_TWIST = 0, 1, 2, 3, 4, 5
# tree_grp columns: first row, rows, kind, the manifold's first normal row, its normal rows
G_FIRST, G_N, G_KIND, G_NFIRST, G_NCOUNT, GROUP_COLS = 0, 1, 2, 3, 4, 5
# tree_row_ref columns: what a row's impulse is: (REF_JOINT, joint, slot * 3 + row) or
# (REF_CONTACT, point, impulse column)
REF_JOINT, REF_CONTACT = 0, 1
# Trees.stats: R rows this step, the largest |dlam|^2 of the last PGS sweep, refactors this
# step, PGS sweeps this step, polish steps this step, seconds in the factor and Delassus
# matrices (prepare_trees, refactor_trees), seconds in the trees' iterations (solve_trees)
(ST_ROWS, ST_LAST, ST_REFACTOR, ST_SWEEPS, ST_POLISH, ST_PREPARE_S, ST_SOLVE_S,
 TREE_STATS) = range(8)
POLISH_FIRST = 2   # PGS sweeps before the first polish step (_polish); the next after 4, 8...
POLISH_REGULARISE = 1e-11   # share of A_aa's largest diagonal entry added to its diagonal
POLISH_TRIES, POLISH_DAMPING = 3, 1e4   # a step the merit refuses is tried again, damped
# node row sources (tree_node_src[:, :, 1]): s * 3 + r for a lock; FREE_ROW + r for free axis r
FREE_ROW = 100
MAX_REFACTOR = 2   # a step refactors at most this often for motors that reached a limit


Trees = namedtuple("Trees", [
    # the structure (build_components), fixed until the World is rebuilt
    "joint_member",   # (njoint, 3) int64 a tree joint's node carries the free axes of these
                      #   joints: itself, then the other hinges of its group; -1 padded
    "body_comp",      # (nbody,) int64 the component (tree) of a dynamic body, -1 for none
    "comp_order",     # (ntree,) int64 the tree joints, component by component, parents first
    "comp_first",     # (ncomp + 1,) int64 each component's first entry in comp_order
    "comp_root",      # (ncomp,) int64 a floating component's root body, -1 if it hangs
                      #   from a static or kinematic body
    # this step's blocks
    "joint_skip",     # (njoint,) bool: the joint's rows are the trees' (the outer sweep skips)
    "joint_motor",    # (njoint,) int64 the joint's motor, -1 for none
    "joint_block",    # (njoint, MAX_BLOCKS) int64 the block_list entry of a joint's slot
    "motor_folded",   # (nmotor,) bool: the motor's row is in its tree's factor
    "node_n",         # (njoint,) int64 rows of a tree joint's node
    "node_J",         # (njoint, NODE_ROWS, 12) their Jacobians (body A's 6, body B's 6)
    "node_c",         # (njoint, NODE_ROWS) compliance c_r (0 for a lock)
    "node_b",         # (njoint, NODE_ROWS) bias b_r
    "node_lam",       # (njoint, NODE_ROWS) accumulated impulse
    "node_g",         # (njoint, NODE_ROWS) scratch: -(J u + c lam + b) of an iteration
    "node_src",       # (njoint, NODE_ROWS, 2) int64 the joint a row is of and which:
                      #   slot * 3 + row for a lock, FREE_ROW + r for free axis r
    "body_d",         # (nbody, 6, 6) D_c, then D_c^-1
    "body_hot",       # (nbody,) bool: a body a row's path has reached (_row_path)
    "path_node",      # (nrow, nbody + njoint) int64 the nodes a row's z reaches (a body i, a
                      #   joint nbody + j)
    "path_len",       # (nrow,) int64 how many
    "path_z",         # (nrow, nbody + njoint, 6) z_r on them
    "path_w",         # (nrow, nbody + njoint, 6) D^-1 z_r on them
    "node_pos",       # (nrow, nbody + njoint) int64 a node's place in the row's path, -1
    "joint_dinv",     # (njoint, 6, 6) D_j^-1
    "joint_lc",       # (njoint, 6, 6) L_jc
    "joint_g",        # (njoint, 6, 6) G_j
    "joint_jc",       # (njoint, 6, 6) node rows' child columns
    "joint_jp",       # (njoint, 6, 6) node rows' parent columns
    "body_z",         # (nbody, 6) solve scratch
    "body_x",         # (nbody, 6) a solve's body velocity changes
    "joint_z",        # (njoint, 6) solve scratch
    "joint_x",        # (njoint, 6) a solve's joint unknowns y
    "row_J",          # (nrow, 12) R rows' Jacobians
    "row_body",       # (nrow, 2) int64 their bodies A, B
    "row_bias",       # (nrow,) w = J u + bias
    "row_lam",        # (nrow,) accumulated impulse
    "row_lam0",       # (nrow,) at the start of an outer iteration
    "row_w",          # (nrow,) the rows' velocities during the PGS
    "row_ref",        # (nrow, 3) int64 what the impulse is (REF_JOINT / REF_CONTACT, ...)
    "row_scratch",    # (12,)
    "grp",            # (nrow, GROUP_COLS) int64 row groups
    "grp_f",          # (nrow, 2) a group's bound or friction coefficients
    "grp_inv",        # (nrow, 3, 3) the inverse of a group's diagonal block of A
    "grp_clamped",    # (nrow,) bool: its clamp acted in the last sweep
    "A",              # (nrow, nrow) the Delassus matrices, a block per component
    "comp_rows",      # (ncomp + 1,) int64 each component's first R row
    "comp_groups",    # (ncomp + 1,) int64 each component's first row group
    "row_active",     # (nrow,) int64 polish scratch: the active rows
    "polish_L",       # (nrow, nrow) polish scratch: Cholesky factor of A_aa
    "polish_y",       # (nrow,) polish scratch
    "polish_total",   # (nrow,) polish scratch: a clamped group's normal total
    "polish_lam",     # (nrow,) the iterate a polish step started from
    "polish_w",       # (nrow,)
    "polish_clamped",  # (nrow,) bool
    "stats",          # (TREE_STATS,) ST_ROWS ... ST_SOLVE_S
])


def build_components(joint_type, joint_body, joint_child, tree_order, body_kind):
    """The trees' structure: each tree joint's group members, each dynamic tree body's
    component, the tree joints by component (parents first) and each component's root.
    Plain Python, once per World build."""
    nbody, njoint = len(body_kind), len(joint_type)
    member = np.full((njoint, 3), -1, np.int64)
    comp = np.full(nbody, -1, np.int64)
    roots = []
    joint_comp = []
    later = {}
    for k in range(njoint):   # the later hinges of groups (gimbal.py)
        if GROUP_INDEX[joint_type[k]] > 0:
            later.setdefault(frozenset(int(x) for x in joint_body[k]), []).append(k)
    for j in tree_order:
        a, b = int(joint_body[j, 0]), int(joint_body[j, 1])
        c, p = (b, a) if joint_child[j] == 1 else (a, b)
        member[j, 0] = j
        if GROUP_HINGES[joint_type[j]] > 0:   # a group's first hinge carries the others
            for i, k in enumerate(later.get(frozenset((a, b)), [])[:2]):
                member[j, 1 + i] = k
        if body_kind[p] == DYNAMIC:
            if comp[p] < 0:
                comp[p] = len(roots)
                roots.append(p)
            comp[c] = comp[p]
        else:
            comp[c] = len(roots)
            roots.append(-1)
        joint_comp.append(comp[c])
    order = np.array(tree_order, np.int64)[np.argsort(np.array(joint_comp, np.int64),
                                                      kind="stable")] if len(tree_order) else \
        np.zeros(0, np.int64)
    counts = np.bincount(np.array(joint_comp, np.int64), minlength=len(roots)) if joint_comp \
        else np.zeros(0, np.int64)
    first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return member, comp, order, first, np.array(roots, np.int64)


def make_trees(joint_type, joint_body, joint_child, tree_order, body_kind, nmotor):
    """The Trees of a World's model (arrays of size 0 where there is no tree)."""
    member, comp, order, first, roots = build_components(joint_type, joint_body, joint_child,
                                                         tree_order, body_kind)
    nbody, njoint = len(body_kind), len(joint_type)
    nrow = row_capacity(njoint, len(order))
    ncomp = len(roots)
    z = np.zeros
    return Trees(
        joint_member=member, body_comp=comp, comp_order=order, comp_first=first,
        comp_root=roots,
        joint_skip=z(njoint, np.bool_), joint_motor=np.full(njoint, -1, np.int64),
        joint_block=z((njoint, MAX_BLOCKS), np.int64), motor_folded=z(nmotor, np.bool_),
        node_n=z(njoint, np.int64), node_J=z((njoint, NODE_ROWS, 12)),
        node_c=z((njoint, NODE_ROWS)), node_b=z((njoint, NODE_ROWS)),
        node_lam=z((njoint, NODE_ROWS)), node_g=z((njoint, NODE_ROWS)),
        node_src=z((njoint, NODE_ROWS, 2), np.int64),
        body_d=z((nbody, 6, 6)),
        body_hot=z(nbody, np.bool_),
        path_node=z((nrow, nbody + njoint), np.int64), path_len=z(nrow, np.int64),
        path_z=z((nrow, nbody + njoint, 6)), path_w=z((nrow, nbody + njoint, 6)),
        node_pos=np.full((nrow, nbody + njoint), -1, np.int64),
        joint_dinv=z((njoint, 6, 6)), joint_lc=z((njoint, 6, 6)), joint_g=z((njoint, 6, 6)),
        joint_jc=z((njoint, 6, 6)), joint_jp=z((njoint, 6, 6)),
        body_z=z((nbody, 6)), body_x=z((nbody, 6)), joint_z=z((njoint, 6)),
        joint_x=z((njoint, 6)),
        row_J=z((nrow, 12)), row_body=z((nrow, 2), np.int64), row_bias=z(nrow),
        row_lam=z(nrow), row_lam0=z(nrow), row_w=z(nrow), row_ref=z((nrow, 3), np.int64),
        row_scratch=z(12), grp=z((nrow, GROUP_COLS), np.int64), grp_f=z((nrow, 2)),
        grp_inv=z((nrow, 3, 3)), grp_clamped=z(nrow, np.bool_), A=z((nrow, nrow)),
        comp_rows=z(ncomp + 1, np.int64), comp_groups=z(ncomp + 1, np.int64),
        row_active=z(nrow, np.int64), polish_L=z((nrow, nrow)), polish_y=z(nrow),
        polish_total=z(nrow), polish_lam=z(nrow), polish_w=z(nrow),
        polish_clamped=z(nrow, np.bool_),
        stats=z(TREE_STATS))


def row_capacity(njoint, ntree):
    """How many R rows the Work holds: every tree joint's limit and friction rows, and
    TREE_MANIFOLDS manifolds of up to 4 points (9 rows each); 0 without trees."""
    if ntree == 0:
        return 0
    return 5 * njoint + 9 * TREE_MANIFOLDS


# ---- small dense helpers ---------------------------------------------------------------------
@njit(**INLINE)
def sweep_inverse(A, i, n):
    """A[i, :n, :n] (symmetric, definite: positive or negative) replaced by its inverse, in
    place (the sweep operator, no pivoting). False if a pivot is too small."""
    scale = 0.0
    for q in range(n):
        if abs(A[i, q, q]) > scale:
            scale = abs(A[i, q, q])
    if not scale > 0.0:
        return False
    for k in range(n):
        d = A[i, k, k]
        if not abs(d) > PIVOT_SHARE * scale:
            return False
        inv = 1.0 / d
        for r in range(n):
            if r == k:
                continue
            f = A[i, r, k] * inv
            if f == 0.0:
                continue
            for c in range(n):
                if c != k:
                    A[i, r, c] -= f * A[i, k, c]
        for r in range(n):
            if r != k:
                A[i, r, k] *= inv
                A[i, k, r] *= inv
        A[i, k, k] = -inv
    for r in range(n):   # the sweep leaves -A^-1
        for c in range(n):
            A[i, r, c] = -A[i, r, c]
    return True


@njit(**INLINE)
def _mass_matrix(D, i, inv_mass, R, inertia):
    """D[i] = diag(m E, R diag(I) R^T)."""
    m = 1.0 / inv_mass[i]
    for r in range(6):
        for c in range(6):
            D[i, r, c] = 0.0
    for r in range(3):
        D[i, r, r] = m
        for c in range(3):
            D[i, 3 + r, 3 + c] = (R[i, r, 0] * R[i, c, 0] * inertia[i, 0]
                                  + R[i, r, 1] * R[i, c, 1] * inertia[i, 1]
                                  + R[i, r, 2] * R[i, c, 2] * inertia[i, 2])


@njit(**INLINE)
def _ends(joint_body, joint_child, j):
    """(child, parent) bodies of tree joint j."""
    if joint_child[j] == 1:
        return joint_body[j, 1], joint_body[j, 0]
    return joint_body[j, 0], joint_body[j, 1]


@njit(**INLINE)
def _rate(Jr, vel, angvel, a, b):
    """J u of one 12-column row between bodies a and b."""
    return (((Jr[0] * vel[a, 0] + Jr[1] * vel[a, 1]) + (Jr[2] * vel[a, 2] + Jr[3] * angvel[a, 0]))
            + ((Jr[4] * angvel[a, 1] + Jr[5] * angvel[a, 2]) + (Jr[6] * vel[b, 0]
                                                               + Jr[7] * vel[b, 1]))
            + ((Jr[8] * vel[b, 2] + Jr[9] * angvel[b, 0]) + (Jr[10] * angvel[b, 1]
                                                             + Jr[11] * angvel[b, 2])))


# ---- the factor and the solve ------------------------------------------------------------------
@njit(**ENTRY)   # (the tests call it)
def factor_component(k, comp_order, comp_first, comp_root, joint_child, joint_body, body_kind,
                     inv_mass, inertia, R, node_n, node_J, node_c, body_d, dinv, lc, g, jc, jp):
    """The block LDL^T of component k's augmented system at this step's rows (see the
    module's text). False if a pivot failed."""
    j0, j1 = comp_first[k], comp_first[k + 1]
    for q in range(j0, j1):
        j = comp_order[q]
        c, p = _ends(joint_body, joint_child, j)
        _mass_matrix(body_d, c, inv_mass, R, inertia)
        cc = 6 if joint_child[j] == 1 else 0
        for r in range(node_n[j]):
            for t in range(6):
                jc[j, r, t] = node_J[j, r, cc + t]
                jp[j, r, t] = node_J[j, r, 6 - cc + t]
    root = comp_root[k]
    if root >= 0:
        _mass_matrix(body_d, root, inv_mass, R, inertia)
    for q in range(j1 - 1, j0 - 1, -1):
        j = comp_order[q]
        c, p = _ends(joint_body, joint_child, j)
        if not sweep_inverse(body_d, c, 6):
            return False
        m = node_n[j]
        for r in range(6):
            for t in range(6):
                lc[j, r, t] = 0.0
                dinv[j, r, t] = 0.0
                g[j, r, t] = 0.0
        if m == 0:
            continue   # c is the root of a part no node holds this step
        for r in range(m):   # L_jc = J_jc D_c^-1
            for t in range(6):
                v = 0.0
                for s in range(6):
                    v += jc[j, r, s] * body_d[c, s, t]
                lc[j, r, t] = v
        for r in range(m):   # D_j = -(L_jc J_jc^T + C_j)
            for t in range(r, m):
                v = 0.0
                for s in range(6):
                    v += lc[j, r, s] * jc[j, t, s]
                if t == r:
                    v += node_c[j, r]
                dinv[j, r, t] = -v
                dinv[j, t, r] = -v
        if not sweep_inverse(dinv, j, m):
            return False
        if body_kind[p] != DYNAMIC:
            continue
        for r in range(m):   # G_j = D_j^-1 J_jp
            for t in range(6):
                v = 0.0
                for s in range(m):
                    v += dinv[j, r, s] * jp[j, s, t]
                g[j, r, t] = v
        for a in range(6):   # D_p -= J_jp^T G_j
            for t in range(a, 6):
                v = 0.0
                for r in range(m):
                    v += jp[j, r, a] * g[j, r, t]
                body_d[p, a, t] -= v
                if t != a:
                    body_d[p, t, a] -= v
    if root >= 0:
        if not sweep_inverse(body_d, root, 6):
            return False
    return True


@njit(**ENTRY)   # (the tests call it)
def solve_component(k, comp_order, comp_first, comp_root, joint_child, joint_body, body_kind,
                    node_n, body_d, dinv, lc, g, bz, jz, bx, jx):
    """x = K^-1 z for component k: bz (nbody, 6), jz (njoint, 6) the right-hand side (both
    overwritten by the forward sweep), bx, jx the solution (body velocity changes, joint
    rows' y)."""
    j0, j1 = comp_first[k], comp_first[k + 1]
    for q in range(j1 - 1, j0 - 1, -1):   # forward, leaves first
        j = comp_order[q]
        m = node_n[j]
        if m == 0:
            continue
        c, p = _ends(joint_body, joint_child, j)
        for r in range(m):
            v = 0.0
            for t in range(6):
                v += lc[j, r, t] * bz[c, t]
            jz[j, r] -= v
        if body_kind[p] == DYNAMIC:
            for t in range(6):
                v = 0.0
                for r in range(m):
                    v += g[j, r, t] * jz[j, r]
                bz[p, t] -= v
    root = comp_root[k]
    if root >= 0:
        for t in range(6):
            v = 0.0
            for s in range(6):
                v += body_d[root, t, s] * bz[root, s]
            bx[root, t] = v
    for q in range(j0, j1):   # back, root first
        j = comp_order[q]
        m = node_n[j]
        c, p = _ends(joint_body, joint_child, j)
        dyn = body_kind[p] == DYNAMIC
        for r in range(m):
            v = 0.0
            for s in range(m):
                v += dinv[j, r, s] * jz[j, s]
            if dyn:
                for t in range(6):
                    v -= g[j, r, t] * bx[p, t]
            jx[j, r] = v
        for t in range(6):
            v = 0.0
            for s in range(6):
                v += body_d[c, t, s] * bz[c, s]
            for r in range(m):
                v -= lc[j, r, t] * jx[j, r]
            bx[c, t] = v


@njit(**INLINE)
def _clear_component(k, comp_order, comp_first, comp_root, joint_child, joint_body, bz, jz):
    for q in range(comp_first[k], comp_first[k + 1]):
        j = comp_order[q]
        c, p = _ends(joint_body, joint_child, j)
        for t in range(6):
            bz[c, t] = 0.0
            bz[p, t] = 0.0
            jz[j, t] = 0.0
    if comp_root[k] >= 0:
        for t in range(6):
            bz[comp_root[k], t] = 0.0


@njit(**INLINE)
def _add_row_force(bz, body_comp, body_kind, k, Jr, a, b, scale):
    """bz += J_r^T scale on the component's bodies a, b."""
    if body_kind[a] == DYNAMIC and body_comp[a] == k:
        for t in range(6):
            bz[a, t] += Jr[t] * scale
    if body_kind[b] == DYNAMIC and body_comp[b] == k:
        for t in range(6):
            bz[b, t] += Jr[6 + t] * scale


@njit(**INLINE)
def _row_change(Jr, bx, body_comp, body_kind, k, a, b):
    """J_r du for the velocity changes bx of component k's bodies."""
    v = 0.0
    if body_kind[a] == DYNAMIC and body_comp[a] == k:
        for t in range(6):
            v += Jr[t] * bx[a, t]
    if body_kind[b] == DYNAMIC and body_comp[b] == k:
        for t in range(6):
            v += Jr[6 + t] * bx[b, t]
    return v


# ---- the step's blocks ---------------------------------------------------------------------------
@njit(**_JIT)
def motor_saturated(coef, impulse, rate):
    """Whether a motor's impulse at the joint rate `rate` is beyond its torque limit or
    needs more than its current limit (motor.solve_motors' two clamps), or an implicit
    controller's voltage at that rate is beyond the supply (solve_motors' saturated piece)."""
    if abs(impulse) > coef[P_MAX] * (1.0 + 1e-9):
        return True
    if coef[U_RATE] > 0.0 and abs(coef[U_FREE] - coef[U_RATE] * rate) > coef[U_LIMIT] * (
            1.0 + 1e-9):   # an implicit controller beyond the supply
        return True
    drive = impulse + coef[J_ROTOR] * (rate - coef[RATE0])
    return abs(drive) > coef[GAIN] * coef[I_MAX] * (1.0 + 1e-9)


@njit(**_JIT)
def _build_nodes(model, state, work, T):
    """Each tree joint's node rows (locks, then compliant free axes) with their accumulated
    impulses after the warm start."""
    J, bias, p = work.joint_J, work.joint_bias, state.joint_impulse
    nJ, nc, nb = T.node_J, T.node_c, T.node_b
    src, lam = T.node_src, T.node_lam
    coef = work.motor_coef
    for q in range(T.comp_order.shape[0]):
        j = T.comp_order[q]
        n = 0
        for s in range(SLOT_LOWER):
            for r in range(work.joint_rows[j, s]):
                for t in range(12):
                    nJ[j, n, t] = J[j, s, r, t]
                nc[j, n] = 0.0
                nb[j, n] = bias[j, s, r]
                lam[j, n] = p[j, s, r]
                src[j, n, 0] = j
                src[j, n, 1] = s * 3 + r
                n += 1
        for i in range(3):
            k = T.joint_member[j, i]
            if k < 0:
                break
            damped = model.joint_damping[k] > 0.0
            m = T.joint_motor[k]
            for r in range(BLOCK_ROWS[model.joint_type[k], SLOT_FRICTION]):
                c = 0.0
                c0 = 0.0
                start = 0.0
                if damped and work.damper_k[k, r] > 0.0:
                    c += work.damper_c[k]
                    start += state.joint_damper_impulse[k, r]
                if r == 0 and m >= 0 and T.motor_folded[m]:
                    c += coef[m, C1]
                    c0 = coef[m, C0]
                    start += work.motor_impulse[m]
                if not c > 0.0 or n >= NODE_ROWS:
                    continue
                for t in range(12):
                    nJ[j, n, t] = J[k, SLOT_FRICTION, r, t]
                nc[j, n] = 1.0 / c
                nb[j, n] = -c0 / c
                lam[j, n] = start
                src[j, n, 0] = k
                src[j, n, 1] = FREE_ROW + r
                n += 1
        T.node_n[j] = n


@njit(**INLINE)
def _put_row(T, i, Jr, a, b, bias, lam, kind, x, y):
    for t in range(12):
        T.row_J[i, t] = Jr[t]
    T.row_body[i, 0] = a
    T.row_body[i, 1] = b
    T.row_bias[i] = bias
    T.row_lam[i] = lam
    T.row_ref[i, 0] = kind
    T.row_ref[i, 1] = x
    T.row_ref[i, 2] = y


@njit(**INLINE)
def _put_group(T, gi, first, n, kind, nfirst, ncount, f0, f1):
    grp = T.grp
    grp[gi, G_FIRST] = first
    grp[gi, G_N] = n
    grp[gi, G_KIND] = kind
    grp[gi, G_NFIRST] = nfirst
    grp[gi, G_NCOUNT] = ncount
    T.grp_f[gi, 0] = f0
    T.grp_f[gi, 1] = f1


@njit(**INLINE)
def _manifold_component(body_comp, body_kind, a, b):
    """The component whose block a manifold between bodies a and b belongs to, -1 for none
    (a dynamic body in no tree, or two trees)."""
    ka = body_comp[a] if body_kind[a] == DYNAMIC else -2
    kb = body_comp[b] if body_kind[b] == DYNAMIC else -2
    if ka == -1 or kb == -1:
        return -1
    if ka == -2:
        return kb
    if kb == -2 or ka == kb:
        return ka
    return -1


@njit(**_JIT)
def _build_rows(model, state, work, points, rows, T, settings):
    """The R rows, grouped, component by component: the tree joints' limit and friction
    blocks, then the contacts of the component's bodies."""
    h = settings.dt
    J, bias, p = work.joint_J, work.joint_bias, state.joint_impulse
    ncomp = T.comp_root.shape[0]
    cap = T.row_J.shape[0]
    nrow = 0
    ngrp = 0
    nman_in = 0
    if rows is not None:
        for m in range(rows.man_count[0]):
            rows.man_tree[m] = -1
    for k in range(ncomp):
        T.comp_rows[k] = nrow
        T.comp_groups[k] = ngrp
        for q in range(T.comp_first[k], T.comp_first[k + 1]):
            j = T.comp_order[q]
            for i in range(3):
                jj = T.joint_member[j, i]
                if jj < 0:
                    break
                a, b = model.joint_body[jj, 0], model.joint_body[jj, 1]
                for s in (SLOT_LOWER, SLOT_UPPER):
                    if work.joint_rows[jj, s] > 0:
                        _put_group(T, ngrp, nrow, 1, G_LIMIT, 0, 0, 0.0, 0.0)
                        ngrp += 1
                        _put_row(T, nrow, J[jj, s, 0], a, b, bias[jj, s, 0], p[jj, s, 0],
                                 REF_JOINT, jj, s * 3)
                        nrow += 1
                n = work.joint_rows[jj, SLOT_FRICTION]
                if n > 0:
                    _put_group(T, ngrp, nrow, n, G_JFRIC, 0, 0,
                               model.joint_friction[jj] * h, 0.0)
                    ngrp += 1
                    for r in range(n):
                        _put_row(T, nrow, J[jj, SLOT_FRICTION, r], a, b, 0.0,
                                 p[jj, SLOT_FRICTION, r], REF_JOINT, jj, SLOT_FRICTION * 3 + r)
                        nrow += 1
        if rows is not None:
            for m in range(rows.man_count[0]):
                f0, f1 = rows.man_first[m], rows.man_first[m + 1]
                a, b = points.body[f0, 0], points.body[f0, 1]
                if _manifold_component(T.body_comp, model.body_kind,
                                       a, b) != k:
                    continue
                mr = rows.man_rows[m]
                need = (f1 - f0) + 2 + (2 if mr[M_ROLL] > 0.0 else 0) + (
                    1 if mr[M_TWIST] > 0.0 else 0)
                if nrow + need > cap or nman_in >= TREE_MANIFOLDS:
                    continue   # left to the outer sweep
                nman_in += 1
                rows.man_tree[m] = nrow
                nfirst = nrow
                row = T.row_scratch
                for c in range(f0, f1):
                    rec = rows.point_rows[c]
                    for t in range(3):
                        row[t] = -rec[N_DIR + t]
                        row[3 + t] = -rec[N_LIN + t]
                        row[6 + t] = rec[N_DIR + t]
                        row[9 + t] = rec[N_LIN + 3 + t]
                    _put_group(T, ngrp, nrow, 1, G_NORMAL, 0, 0, 0.0, 0.0)
                    ngrp += 1
                    _put_row(T, nrow, row, a, b, -rec[N_TARGET],
                             points.impulse[c, P_N], REF_CONTACT, c, P_N)
                    nrow += 1
                nn = f1 - f0
                _put_group(T, ngrp, nrow, 2, G_SLIDE, nfirst, nn, mr[M_MU], mr[M_MU2])
                ngrp += 1
                for r in range(2):
                    for t in range(3):
                        row[t] = -mr[M_DIR + 3 + 3 * r + t]
                        row[3 + t] = -mr[M_LIN + 12 * r + t]
                        row[6 + t] = mr[M_DIR + 3 + 3 * r + t]
                        row[9 + t] = mr[M_LIN + 12 * r + 3 + t]
                    _put_row(T, nrow, row, a, b, 0.0, points.impulse[f0, P_T1 + r],
                             REF_CONTACT, f0, P_T1 + r)
                    nrow += 1
                if mr[M_ROLL] > 0.0:
                    _put_group(T, ngrp, nrow, 2, G_ROLL, nfirst, nn, mr[M_ROLL], 0.0)
                    ngrp += 1
                    for r in range(2):
                        for t in range(3):
                            row[t] = 0.0
                            row[3 + t] = -mr[M_DIR + 3 + 3 * r + t]
                            row[6 + t] = 0.0
                            row[9 + t] = mr[M_DIR + 3 + 3 * r + t]
                        _put_row(T, nrow, row, a, b, 0.0, points.impulse[f0, P_R1 + r],
                                 REF_CONTACT, f0, P_R1 + r)
                        nrow += 1
                if mr[M_TWIST] > 0.0:
                    _put_group(T, ngrp, nrow, 1, G_TWIST, nfirst, nn, mr[M_TWIST], 0.0)
                    ngrp += 1
                    for t in range(3):
                        row[t] = 0.0
                        row[3 + t] = -mr[M_DIR + t]
                        row[6 + t] = 0.0
                        row[9 + t] = mr[M_DIR + t]
                    _put_row(T, nrow, row, a, b, 0.0, points.impulse[f0, P_S],
                             REF_CONTACT, f0, P_S)
                    nrow += 1
    T.comp_rows[ncomp] = nrow
    T.comp_groups[ncomp] = ngrp
    T.stats[ST_ROWS] = nrow


@njit(**_JIT)
def _row_path(k, r, T, joint_child, joint_body, body_kind, nbody):
    """z_r = L^-1 e_r (e_r = J_r^T on the component's bodies) on the nodes it reaches: the
    paths from the row's bodies to the root. Each node n reached is kept in the row's path
    with z_n and w_n = D_n^-1 z_n (path_node, path_z, path_w; node_pos[r, n] its place)."""
    bz, jz, hot = T.body_z, T.joint_z, T.body_hot
    for q in range(T.path_len[r]):   # the last build's entries
        T.node_pos[r, T.path_node[r, q]] = -1
    n = 0
    Jr = T.row_J[r]
    for e in range(2):
        i = T.row_body[r, e]
        if body_kind[i] == DYNAMIC and T.body_comp[i] == k:
            for t in range(6):
                bz[i, t] += Jr[6 * e + t]
            hot[i] = True
    order, first = T.comp_order, T.comp_first
    for q in range(first[k + 1] - 1, first[k] - 1, -1):
        j = order[q]
        c, p = _ends(joint_body, joint_child, j)
        if not hot[c]:
            continue
        hot[c] = False
        m = T.node_n[j]
        for rr in range(m):
            v = 0.0
            for t in range(6):
                v -= T.joint_lc[j, rr, t] * bz[c, t]
            jz[j, rr] = v
        n = _keep_body(T, r, n, c)   # (clears bz[c])
        if m == 0:
            continue   # c is the root of a part no node holds this step
        T.path_node[r, n] = nbody + j
        T.node_pos[r, nbody + j] = n
        for rr in range(6):
            v = 0.0
            for t in range(m):
                v += T.joint_dinv[j, rr, t] * jz[j, t]
            T.path_z[r, n, rr] = jz[j, rr] if rr < m else 0.0
            T.path_w[r, n, rr] = v if rr < m else 0.0
        n += 1
        if body_kind[p] == DYNAMIC:
            for t in range(6):
                v = 0.0
                for rr in range(m):
                    v += T.joint_g[j, rr, t] * jz[j, rr]
                bz[p, t] -= v
            hot[p] = True
    root = T.comp_root[k]
    if root >= 0 and hot[root]:
        n = _keep_body(T, r, n, root)
        hot[root] = False
    T.path_len[r] = n


@njit(**INLINE)
def _keep_body(T, r, n, c):
    """Body c's z (then cleared) and D_c^-1 z into row r's path at place n; returns n + 1."""
    T.path_node[r, n] = c
    T.node_pos[r, c] = n
    for t in range(6):
        v = 0.0
        for u in range(6):
            v += T.body_d[c, t, u] * T.body_z[c, u]
        T.path_z[r, n, t] = T.body_z[c, t]
        T.path_w[r, n, t] = v
    for t in range(6):
        T.body_z[c, t] = 0.0
    return n + 1


@njit(**_JIT)
def _build_delassus(model, T):
    """A = J_R K^-1 J_R^T = Z^T D^-1 Z block by block (the rows' paths, _row_path: each row's
    z_r = L^-1 e_r reaches only the nodes between its bodies and the root, and two rows meet
    only on the nodes their paths share), and each group's block inverse (a scalar for one
    row; 2 x 2, 3 x 3 for pairs and a ball joint's friction)."""
    A = T.A
    nbody = model.body_kind.shape[0]
    for k in range(T.comp_root.shape[0]):
        r0, r1 = T.comp_rows[k], T.comp_rows[k + 1]
        _clear_component(k, T.comp_order, T.comp_first, T.comp_root, model.joint_child,
                         model.joint_body, T.body_z, T.joint_z)
        for r in range(r0, r1):
            _row_path(k, r, T, model.joint_child, model.joint_body, model.body_kind, nbody)
        for r in range(r0, r1):
            for s in range(r, r1):
                v = 0.0
                for q in range(T.path_len[r]):
                    at = T.node_pos[s, T.path_node[r, q]]
                    if at < 0:
                        continue
                    for t in range(6):
                        v += T.path_z[r, q, t] * T.path_w[s, at, t]
                A[r, s] = v
                A[s, r] = v
        for gi in range(T.comp_groups[k], T.comp_groups[k + 1]):
            first, n = T.grp[gi, G_FIRST], T.grp[gi, G_N]
            kin = T.grp_inv
            for r in range(3):
                for c in range(3):
                    kin[gi, r, c] = A[first + r, first + c] if r < n and c < n else 0.0
            if not sweep_inverse(kin, gi, n):
                for r in range(3):
                    for c in range(3):
                        kin[gi, r, c] = 0.0


@njit(**_JIT)
def prepare_trees(model, state, work, points, rows, T, settings):
    """This step's tree blocks, after the warm start: which rows they take from the outer
    sweep, their nodes, factors, R rows and Delassus matrices. Returns False if a factor
    failed (the trees' rows then all stay in the outer sweep this step)."""
    ncomp = T.comp_root.shape[0]
    for j in range(model.joint_type.shape[0]):
        T.joint_skip[j] = False
        T.joint_motor[j] = -1
    for m in range(model.motor_joint.shape[0]):
        T.joint_motor[model.motor_joint[m]] = m
        T.motor_folded[m] = False
    if rows is not None:
        for m in range(rows.man_count[0]):
            rows.man_tree[m] = -1
    for q in range(TREE_STATS):
        T.stats[q] = 0.0
    if ncomp == 0:
        return True
    h = settings.dt
    for q in range(T.comp_order.shape[0]):
        j = T.comp_order[q]
        for i in range(3):
            k = T.joint_member[j, i]
            if k < 0:
                break
            T.joint_skip[k] = True
            m = T.joint_motor[k]
            if m >= 0 and work.motor_coef[m, K_EFF] > 0.0:
                # folded unless the last step left it at a limit (it is swept then)
                p = model.motor_param[m]
                at_limit = (abs(state.motor_torque[m]) * h >= work.motor_coef[m, P_MAX]
                            * (1.0 - 1e-9)) or (abs(state.motor_current[m])
                                                >= p[M_CURRENT_LIMIT] * (1.0 - 1e-9)) or (
                    work.motor_coef[m, U_RATE] > 0.0 and abs(state.motor_voltage[m])
                    >= work.motor_coef[m, U_LIMIT] * (1.0 - 1e-9))
                T.motor_folded[m] = not at_limit
    return refactor_trees(model, state, work, points, rows, T, settings)


@njit(**_JIT)
def refactor_trees(model, state, work, points, rows, T, settings):
    """Nodes, factors, R rows and Delassus matrices from the accumulated impulses where they
    are (prepare_trees, or a refactor mid-solve after finish_trees wrote them back)."""
    start = monotonic_seconds()
    _build_nodes(model, state, work, T)
    for k in range(T.comp_root.shape[0]):
        if not factor_component(k, T.comp_order, T.comp_first, T.comp_root,
                                model.joint_child, model.joint_body, model.body_kind,
                                model.body_inv_mass, model.body_inertia, work.body_rot,
                                T.node_n, T.node_J, T.node_c,
                                T.body_d, T.joint_dinv, T.joint_lc,
                                T.joint_g, T.joint_jc, T.joint_jp):
            release_trees(model, T, rows)
            return False
    _build_rows(model, state, work, points, rows, T, settings)
    _build_delassus(model, T)
    T.stats[ST_PREPARE_S] += monotonic_seconds() - start
    return True


@njit(**_JIT)
def outer_rows(model, work, rows, T):
    """Whether the outer loop has rows no tree took: joint blocks, motors, dampers, couplings
    in the solve (a limited tendon out of reach is not: MuJoCo's humanoid has two, and with
    them counted every step ran 100 outer iterations of 100 tree sweeps each) or contact
    manifolds."""
    for k in range(work.block_count[0]):
        if not T.joint_skip[work.block_list[k, 0]]:
            return True
    for m in range(model.motor_joint.shape[0]):
        if not T.motor_folded[m] and work.motor_coef[m, K_EFF] > 0.0:
            return True
    for d in range(work.damper_count[0]):
        if not T.joint_skip[work.damper_list[d]]:
            return True
    for c in range(model.coupling_joint.shape[0]):
        if work.coupling_coef[c, COUPLING_K_EFF] > 0.0:   # (0: a limit out of reach)
            return True
    if rows is not None:
        for m in range(rows.man_count[0]):
            if rows.man_tree[m] < 0:
                return True
    return False


@njit(**_JIT)
def release_trees(model, T, rows):
    """Every row back to the outer sweep (a failed factor)."""
    for j in range(model.joint_type.shape[0]):
        T.joint_skip[j] = False
    for m in range(model.motor_joint.shape[0]):
        T.motor_folded[m] = False
    if rows is not None:
        for m in range(rows.man_count[0]):
            rows.man_tree[m] = -1
    for k in range(T.comp_root.shape[0] + 1):
        T.comp_rows[k] = 0
        T.comp_groups[k] = 0
    T.stats[ST_ROWS] = 0


@njit(**INLINE)
def _scale_onto(lam, first, n, radius):
    """Scale lam[first:first + n] onto the ball of `radius`; True if it was outside."""
    m2 = 0.0
    for r in range(n):
        m2 += lam[first + r] * lam[first + r]
    if m2 > radius * radius:
        f = radius / math.sqrt(m2) if m2 > 0.0 else 0.0
        for r in range(n):
            lam[first + r] *= f
        return True
    return False


@njit(**_JIT)
def _pgs(A, w, lam, grp, grp_f, grp_inv, g0, g1, r0, r1, clamped, apply):
    """One projected Gauss-Seidel sweep over groups g0..g1 (rows r0..r1) of the R rows on
    the Delassus matrix A; w (the rows' velocities) follows every change. Returns the
    largest |dlam|^2 of a group. Without `apply`, each group's change is measured from the
    present iterate and not made (a Jacobi sweep: the merit of a polish step)."""
    worst = 0.0
    old = (0.0, 0.0, 0.0)
    for gi in range(g0, g1):
        first, n, kind = grp[gi, G_FIRST], grp[gi, G_N], grp[gi, G_KIND]
        old = (lam[first], lam[first + 1] if n > 1 else 0.0, lam[first + 2] if n > 2 else 0.0)
        e0 = w[first]
        e1 = w[first + 1] if n > 1 else 0.0
        e2 = w[first + 2] if n > 2 else 0.0
        for r in range(n):
            lam[first + r] -= grp_inv[gi, r, 0] * e0 + grp_inv[gi, r, 1] * e1 + \
                grp_inv[gi, r, 2] * e2
        hit = False
        if kind == G_LIMIT or kind == G_NORMAL:
            if lam[first] < 0.0:
                lam[first] = 0.0
                hit = True
        elif kind == G_JFRIC:
            hit = _scale_onto(lam, first, n, grp_f[gi, 0])
        else:
            total = 0.0
            for r in range(grp[gi, G_NFIRST], grp[gi, G_NFIRST] + grp[gi, G_NCOUNT]):
                total += lam[r]
            if kind == G_SLIDE and not (grp_f[gi, 0] > 0.0 and grp_f[gi, 1] > 0.0):
                # a mu of 0: a segment or the point 0 (contact_solver.solve_contacts)
                for k in range(2):
                    c = grp_f[gi, k] * total
                    v = min(max(lam[first + k], -c), c)
                    if v != lam[first + k]:
                        hit = True
                        lam[first + k] = v
            elif kind == G_SLIDE:
                mu1, mu2 = grp_f[gi, 0], grp_f[gi, 1]
                lim = mu1 * mu2 * total
                q = (lam[first] * mu2) ** 2 + (lam[first + 1] * mu1) ** 2
                if q > lim * lim:
                    hit = True
                    if mu1 != mu2:   # anisotropic: the step of maximal dissipation
                        top = max(mu1 * mu1, mu2 * mu2)
                        lam[first] = old[0] + (lam[first] - old[0]) * (mu1 * mu1 / top)
                        lam[first + 1] = old[1] + (lam[first + 1] - old[1]) * (mu2 * mu2 / top)
                        q = (lam[first] * mu2) ** 2 + (lam[first + 1] * mu1) ** 2
                    if q > lim * lim:
                        f = lim / math.sqrt(q)
                        lam[first] *= f
                        lam[first + 1] *= f
            elif kind == G_ROLL:
                hit = _scale_onto(lam, first, 2, grp_f[gi, 0] * total)
            else:
                lim = grp_f[gi, 0] * total
                if lam[first] > lim:
                    lam[first] = lim
                    hit = True
                elif lam[first] < -lim:
                    lam[first] = -lim
                    hit = True
        clamped[gi] = hit
        d2 = 0.0
        for r in range(n):
            d = lam[first + r] - old[r]
            if d == 0.0:
                continue
            d2 += d * d
            if not apply:
                lam[first + r] = old[r]
                continue
            for s in range(r0, r1):   # (A is symmetric: its row, contiguous)
                w[s] += A[first + r, s] * d
        if d2 > worst:
            worst = d2
    return worst


@njit(**_JIT)
def _polish(A, w, lam, grp, g0, g1, r0, r1, clamped, active, L, y, scratch, regularise):
    """One Newton step on the PGS iterate (its active set as the last sweep left it):

      * active rows, solved exactly: a limit or contact normal with lam > 0, every row of a
        friction group inside its cone or box;
      * a contact friction group on its cone (sliding, rolling or twisting at its bound)
        keeps its direction and scales with its manifold's normal total P: lam_g =
        (lam_g / P) P', so each active normal's column of the system carries
        A_:g lam_g / P (the system is not symmetric then: LU with partial pivoting);
      * a joint's friction at its bound keeps its impulse.

    The system's diagonal is raised by `regularise` times its largest entry, so that
    dependent rows (a face's four coplanar points: rank 3; more contacts than the tree has
    degrees of freedom) take a least-change answer.
    Returns False (nothing changed) if the system is singular even so; the caller checks
    the step with the next PGS sweep and takes it back if that sweep found it worse."""
    na = 0
    for gi in range(g0, g1):
        first, n, kind = grp[gi, G_FIRST], grp[gi, G_N], grp[gi, G_KIND]
        if kind == G_LIMIT or kind == G_NORMAL:
            if lam[first] > 0.0:
                active[na] = first
                na += 1
        elif not clamped[gi]:
            for r in range(n):
                active[na] = first + r
                na += 1
    if na == 0:
        return False
    for i in range(na):
        for k in range(na):
            L[i, k] = A[active[i], active[k]]
    for gi in range(g0, g1):   # sliding friction follows its manifold's normals
        scratch[gi] = 0.0
        if grp[gi, G_KIND] < G_SLIDE or not clamped[gi]:
            continue
        nf, nc = grp[gi, G_NFIRST], grp[gi, G_NCOUNT]
        total = 0.0
        for r in range(nf, nf + nc):
            total += lam[r]
        scratch[gi] = total
        if not total > 0.0:
            continue
        first, n = grp[gi, G_FIRST], grp[gi, G_N]
        for k in range(na):
            if nf <= active[k] < nf + nc:
                for i in range(na):
                    v = 0.0
                    for r in range(n):
                        v += A[active[i], first + r] * lam[first + r]
                    L[i, k] += v / total
    top = 0.0
    for i in range(na):
        if abs(L[i, i]) > top:
            top = abs(L[i, i])
    if not top > 0.0:
        return False
    for i in range(na):
        L[i, i] += regularise * top
        y[i] = -w[active[i]]
    for c in range(na):   # LU, partial pivoting, in place
        piv = c
        for r in range(c + 1, na):
            if abs(L[r, c]) > abs(L[piv, c]):
                piv = r
        if not abs(L[piv, c]) > 0.0:
            return False
        if piv != c:
            for t in range(na):
                L[c, t], L[piv, t] = L[piv, t], L[c, t]
            y[c], y[piv] = y[piv], y[c]
        for r in range(c + 1, na):
            f = L[r, c] / L[c, c]
            if f != 0.0:
                for t in range(c + 1, na):
                    L[r, t] -= f * L[c, t]
                y[r] -= f * y[c]
    for i in range(na - 1, -1, -1):
        v = y[i]
        for t in range(i + 1, na):
            v -= L[i, t] * y[t]
        y[i] = v / L[i, i]
    for i in range(na):
        d = y[i]
        if d == 0.0:
            continue
        ai = active[i]
        lam[ai] += d
        for s in range(r0, r1):
            w[s] += A[ai, s] * d
    for gi in range(g0, g1):
        if not scratch[gi] > 0.0:
            continue
        nf, nc = grp[gi, G_NFIRST], grp[gi, G_NCOUNT]
        total = 0.0
        for r in range(nf, nf + nc):
            total += lam[r]
        ratio = total / scratch[gi] - 1.0
        first, n = grp[gi, G_FIRST], grp[gi, G_N]
        for r in range(first, first + n):
            d = lam[r] * ratio
            lam[r] += d
            for s in range(r0, r1):
                w[s] += A[r, s] * d
    return True


@njit(**_JIT)
def _try_polish(T, w, lam, g0, g1, r0, r1):
    """A polish step (_polish), kept only if it lowers the merit: the largest change a
    Jacobi sweep from the iterate would make (_pgs without apply; 0 at a solution). A step
    refused is tried again with the diagonal raised POLISH_DAMPING times more (where the
    active set is not yet right, the exact step along dependent rows is huge; the damped
    one is not), up to POLISH_TRIES times."""
    before = _pgs(T.A, w, lam, T.grp, T.grp_f, T.grp_inv, g0, g1, r0, r1, T.grp_clamped,
                  False)
    for r in range(r0, r1):
        T.polish_lam[r] = lam[r]
        T.polish_w[r] = w[r]
    for gi in range(g0, g1):
        T.polish_clamped[gi] = T.grp_clamped[gi]
    regularise = POLISH_REGULARISE
    for _ in range(POLISH_TRIES):
        T.stats[ST_POLISH] += 1
        if _polish(T.A, w, lam, T.grp, g0, g1, r0, r1, T.grp_clamped, T.row_active,
                   T.polish_L, T.polish_y, T.polish_total, regularise):
            after = _pgs(T.A, w, lam, T.grp, T.grp_f, T.grp_inv, g0, g1, r0, r1,
                         T.grp_clamped, False)
            if after < before:
                return
        for r in range(r0, r1):   # (NaN too) back to the iterate before the step
            lam[r] = T.polish_lam[r]
            w[r] = T.polish_w[r]
        for gi in range(g0, g1):
            T.grp_clamped[gi] = T.polish_clamped[gi]
        regularise *= POLISH_DAMPING   # a damped step (Levenberg-Marquardt) next


@njit(**_JIT)
def solve_trees(T, joint_child, joint_body, body_kind, vel, angvel, tol2, sweeps, deadline):
    """One outer iteration of every tree block (module's text, steps 1-4). Returns the
    largest |dlam|^2 of any of its rows."""
    start = monotonic_seconds()
    bz, jz, bx, jx = T.body_z, T.joint_z, T.body_x, T.joint_x
    order, first, root = T.comp_order, T.comp_first, T.comp_root
    child, jbody, kind, bcomp = joint_child, joint_body, body_kind, T.body_comp
    nJ, nc, nb, lam_f = T.node_J, T.node_c, T.node_b, T.node_lam
    w, lam, rJ, rb = T.row_w, T.row_lam, T.row_J, T.row_body
    worst = 0.0
    for k in range(root.shape[0]):
        # 1. the F rows alone: g = -(J u + C lam + b)
        _clear_component(k, order, first, root, child, jbody, bz, jz)
        for q in range(first[k], first[k + 1]):
            j = order[q]
            a, b = jbody[j, 0], jbody[j, 1]
            for r in range(T.node_n[j]):
                jz[j, r] = -(_rate(nJ[j, r], vel, angvel, a, b) + nc[j, r] * lam_f[j, r]
                             + nb[j, r])
                T.node_g[j, r] = jz[j, r]
        r0, r1 = T.comp_rows[k], T.comp_rows[k + 1]
        if r1 > r0:
            solve_component(k, order, first, root, child, jbody, kind, T.node_n,
                            T.body_d, T.joint_dinv, T.joint_lc,
                            T.joint_g, bz, jz, bx, jx)
            # 2. the R rows' velocities after it
            for r in range(r0, r1):
                a, b = rb[r, 0], rb[r, 1]
                w[r] = (_rate(rJ[r], vel, angvel, a, b) + T.row_bias[r]
                        + _row_change(rJ[r], bx, bcomp, kind, k, a, b))
                T.row_lam0[r] = lam[r]
            # 3. projected Gauss-Seidel on A
            g0, g1 = T.comp_groups[k], T.comp_groups[k + 1]
            next_polish = POLISH_FIRST   # then after twice as many sweeps, and so on
            for it in range(sweeps):
                d2 = _pgs(T.A, w, lam, T.grp, T.grp_f, T.grp_inv, g0, g1, r0, r1,
                          T.grp_clamped, True)
                T.stats[ST_SWEEPS] += 1
                T.stats[ST_LAST] = d2
                if d2 <= tol2:
                    break
                if it + 1 == next_polish:
                    next_polish *= 2
                    _try_polish(T, w, lam, g0, g1, r0, r1)
                if deadline > 0.0 and monotonic_seconds() >= deadline:
                    break
            # 4. both together: f = J_R^T dlam, the same g
            _clear_component(k, order, first, root, child, jbody, bz, jz)
            for r in range(r0, r1):
                d = lam[r] - T.row_lam0[r]
                if d * d > worst:
                    worst = d * d
                if d != 0.0:
                    _add_row_force(bz, bcomp, kind, k, rJ[r], rb[r, 0], rb[r, 1], d)
            for q in range(first[k], first[k + 1]):
                j = order[q]
                for r in range(T.node_n[j]):
                    jz[j, r] = T.node_g[j, r]
        solve_component(k, order, first, root, child, jbody, kind, T.node_n,
                        T.body_d, T.joint_dinv, T.joint_lc,
                        T.joint_g, bz, jz, bx, jx)
        for q in range(first[k], first[k + 1]):
            j = order[q]
            c, p = _ends(jbody, child, j)
            for t in range(3):
                vel[c, t] += bx[c, t]
                angvel[c, t] += bx[c, 3 + t]
            for r in range(T.node_n[j]):
                d = -jx[j, r]
                lam_f[j, r] += d
                if d * d > worst:
                    worst = d * d
        if root[k] >= 0:
            i = root[k]
            for t in range(3):
                vel[i, t] += bx[i, t]
                angvel[i, t] += bx[i, 3 + t]
    T.stats[ST_SOLVE_S] += monotonic_seconds() - start
    return worst


@njit(**_JIT)
def finish_trees(model, state, work, points, T):
    """The tree blocks' impulses back where the rest of the step reads them: joint blocks
    (state.joint_impulse and the packed blocks' work.block_impulse), motors, dampers,
    contacts. Returns True if a folded motor ended beyond a limit: it is then swept by the
    outer loop (tree_skip_motor cleared) and the caller refactors."""
    p, pk = state.joint_impulse, work.block_impulse
    blocks = work.block_list
    for k in range(work.block_count[0]):   # (joint, slot) -> its packed block
        T.joint_block[blocks[k, 0], blocks[k, 1]] = k
    vel, angvel = state.body_vel, state.body_angvel
    coef = work.motor_coef
    saturated = False
    for q in range(T.comp_order.shape[0]):
        j = T.comp_order[q]
        for r in range(T.node_n[j]):
            jj, code = T.node_src[j, r, 0], T.node_src[j, r, 1]
            lam = T.node_lam[j, r]
            if code < FREE_ROW:
                s, rr = code // 3, code % 3
                p[jj, s, rr] = lam
                pk[T.joint_block[jj, s], rr] = lam
                continue
            rr = code - FREE_ROW
            a, b = model.joint_body[jj, 0], model.joint_body[jj, 1]
            rate = _rate(work.joint_J[jj, SLOT_FRICTION, rr], vel, angvel, a, b)
            pd = 0.0
            if model.joint_damping[jj] > 0.0 and work.damper_k[jj, rr] > 0.0:
                pd = -work.damper_c[jj] * rate
                state.joint_damper_impulse[jj, rr] = pd
            m = T.joint_motor[jj]
            if rr == 0 and m >= 0 and T.motor_folded[m]:
                work.motor_impulse[m] = lam - pd
                if motor_saturated(coef[m], lam - pd, rate):
                    T.motor_folded[m] = False
                    saturated = True
    for gi in range(T.comp_groups[T.comp_root.shape[0]]):
        first, n, kind = T.grp[gi, G_FIRST], T.grp[gi, G_N], \
            T.grp[gi, G_KIND]
        for r in range(first, first + n):
            x, y = T.row_ref[r, 1], T.row_ref[r, 2]
            lam = T.row_lam[r]
            if T.row_ref[r, 0] == REF_JOINT:
                s, rr = y // 3, y % 3
                p[x, s, rr] = lam
                pk[T.joint_block[x, s], rr] = lam
                if s == SLOT_FRICTION:
                    work.joint_clamped[x, s] = T.grp_clamped[gi]
            elif points is not None:
                points.impulse[x, y] = lam
                if kind == G_SLIDE:
                    points.sliding[x] = T.grp_clamped[gi]
    return saturated
