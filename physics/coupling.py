"""Joint couplings: joint f follows joint l as q_f = m q_l + o (URDF's <mimic>), or keeps
q_f - m q_l - o within a range (MuJoCo's limited fixed tendon of two joints); one row of the
velocity solve, beside the motor rows.

    C     = q_f - m q_l - o          the coordinates: rad on a hinge, m on a slider
    Cdot  = J_f v - m J_l v          J_f, J_l the joints' rate rows (the friction rows, as the
                                     motors use: (wB - wA) . a on a hinge, along a on a slider)
    J     = [J_f | -m J_l]           over four body slots (f's A and B, l's A and B); a body in
                                     two slots (the palm both fingers hang on) takes both parts
    k     = 1 / (J M^-1 J^T),        J M^-1 J^T = sum over slots s, t of the same body of
                                     J_s . W_t,   W = M^-1 J^T

Each row keeps C in [lower, upper] (model.coupling_param's LOWER, UPPER), aiming at the bound
b at the step's end from the coordinates at its start:

    TARGET = -(C - b) / h,   dP = k (TARGET - J v),   P += dP

* lower = upper (an equality; lower = upper = 0 is the plain mimic): b = lower, P free, SIDE 0.
  It closes C - b within the step.
* lower < upper (a limit, one row per coupling, as a joint limit's row: solver.prepare_joints):
  the nearer bound is the row's, SIDE +1 at lower (J v' >= TARGET = -(C - lower) / h, the
  accumulated P >= 0: it only pushes C up), SIDE -1 at upper (J v' <= TARGET = (upper - C) / h,
  P <= 0: it only pushes C down). The accumulated P is clamped, dP = P_new - P. With C inside
  the range TARGET lets C approach the bound at any rate that does not cross it within the step
  (speculative, as a joint limit's bias gap / h); beyond it (a jolt the step could not stop, a
  start outside) TARGET brings C back to the bound within the step (there is no position pass
  for couplings: this is the equality row's correction). A bound farther than
  h (2 |Cdot| + LIMIT_REACH_SPEED) (Cdot the last step's rate) is out of the solve: k = 0, no
  impulse, as a joint limit's block beyond reach. A range narrower than a step's reach is
  guarded on its nearer side only (the other bound is caught on the next step).

The row is warm started from the last step's impulse when it is still in the solve on the
same side (P SIDE >= 0), else from 0. The solver (solver.py) calls prepare_couplings after
prepare_joints, warm_start_couplings with the other warm starts and solve_couplings in every
iteration. Each joint's reaction wrench includes its share of the row's impulse P
(solver.py report_reactions): J_f,B P / h on the follower, -m J_l,B P / h on the leader.
"""
from numba import njit

from .constraint import LIMIT_REACH_SPEED, SLOT_FRICTION
from .jit import KERNEL
from .math3 import mat_vec

_JIT = KERNEL
# coupling_param columns (model.py): m, o, the range of C
MULTIPLIER, OFFSET, LOWER, UPPER, COUPLING_PARAMS = range(5)
# coupling_coef columns: k (effective mass; 0: out of the solve), the rate the row aims at
# (-(C - b) / h), C, the side: 0 an equality, +1 the lower bound (P >= 0), -1 the upper (P <= 0)
K_EFF, TARGET, ERROR, SIDE, COUPLING_COEFS = range(5)


@njit(**_JIT)
def prepare_couplings(model, state, work, settings):
    """Each coupling's row J (four body slots), W = M^-1 J^T, k and aim at this step's poses."""
    h = settings.dt
    J = work.joint_J
    ima, iiw = model.body_inv_mass, work.body_inv_inertia_world
    for c in range(model.coupling_joint.shape[0]):
        f, lead = model.coupling_joint[c, 0], model.coupling_joint[c, 1]
        param = model.coupling_param[c]
        m, o = param[MULTIPLIER], param[OFFSET]
        body, row, w = work.coupling_body[c], work.coupling_J[c], work.coupling_W[c]
        for side in range(2):
            j = f if side == 0 else lead
            scale = 1.0 if side == 0 else -m
            for e in range(2):
                s = 2 * side + e
                i = model.joint_body[j, e]
                body[s] = i
                for q in range(6):
                    row[s, q] = scale * J[j, SLOT_FRICTION, 0, 6 * e + q]
                wa = mat_vec(iiw[i], (row[s, 3], row[s, 4], row[s, 5]))
                for q in range(3):
                    w[s, q] = ima[i] * row[s, q]
                    w[s, 3 + q] = wa[q]
        jmj = 0.0
        for s in range(4):
            for t in range(4):
                if body[s] == body[t]:
                    for q in range(6):
                        jmj += row[s, q] * w[t, q]
        err = state.joint_coord[f] - m * state.joint_coord[lead] - o
        coef = work.coupling_coef[c]
        coef[K_EFF] = 1.0 / jmj if jmj > 1e-300 else 0.0
        coef[ERROR] = err
        lo, hi = param[LOWER], param[UPPER]
        if lo == hi:   # an equality: C = lo (lo - 0.0: the plain mimic's arithmetic exactly)
            coef[SIDE] = 0.0
            coef[TARGET] = -(err - lo) / h
            continue
        below, above = err - lo, hi - err   # the gaps to the bounds (< 0: beyond)
        if below <= above:
            coef[SIDE], coef[TARGET], gap = 1.0, -below / h, below
        else:
            coef[SIDE], coef[TARGET], gap = -1.0, above / h, above
        rate = state.joint_vel[f] - m * state.joint_vel[lead]   # the last step's
        if gap > h * (2.0 * abs(rate) + LIMIT_REACH_SPEED):    # out of this step's reach
            coef[K_EFF] = 0.0


@njit(**_JIT)
def _apply(body, w, dp, vel, angvel):
    for s in range(4):
        i = body[s]
        for q in range(3):
            vel[i, q] += dp * w[s, q]
            angvel[i, q] += dp * w[s, 3 + q]


@njit(**_JIT)
def warm_start_couplings(work, vel, angvel, enabled):
    """Start each coupling row from its impulse of the last step, applied; a limit's only
    when it is on the row's side this step (P SIDE >= 0)."""
    for c in range(work.coupling_impulse.shape[0]):
        p = work.coupling_impulse[c] if enabled else 0.0
        if work.coupling_coef[c, K_EFF] <= 0.0:
            p = 0.0
        if work.coupling_coef[c, SIDE] * p < 0.0:   # the other bound's, or out: from 0
            p = 0.0
        work.coupling_impulse[c] = p
        if p != 0.0:
            _apply(work.coupling_body[c], work.coupling_W[c], p, vel, angvel)


@njit(**_JIT)
def solve_couplings(coupling_body, coupling_J, coupling_W, coupling_coef, coupling_impulse, vel,
                    angvel):
    """One Gauss-Seidel pass over the coupling rows, a limit's accumulated impulse clamped to
    its side; returns the largest dP^2. (Arrays, not the tuples, as solve_motors takes
    them.)"""
    worst = 0.0
    for c in range(coupling_body.shape[0]):
        k = coupling_coef[c, K_EFF]
        if k <= 0.0:
            continue
        body, row = coupling_body[c], coupling_J[c]
        rate = 0.0
        for s in range(4):
            i = body[s]
            for q in range(3):
                rate += row[s, q] * vel[i, q] + row[s, 3 + q] * angvel[i, q]
        dp = k * (coupling_coef[c, TARGET] - rate)
        side = coupling_coef[c, SIDE]
        if side == 0.0:
            coupling_impulse[c] += dp
        else:   # a limit: P SIDE >= 0
            p = coupling_impulse[c] + dp
            if side * p < 0.0:
                p = 0.0
            dp = p - coupling_impulse[c]
            coupling_impulse[c] = p
        _apply(body, coupling_W[c], dp, vel, angvel)
        if dp * dp > worst:
            worst = dp * dp
    return worst
