"""Viscous joint damping, implicit in the step (URDF's <dynamics damping>, MuJoCo's damping).

A damped joint j brakes its rate w = J v, the joint's free rows (the friction rows: the hinge
axis, the slider's axis, the three axes of a ball joint) with the torque (a force for a slider)

    tau = -b w'        b = joint_damping[j] >= 0, N m s/rad (N s/m for a slider),

w' the rate at the end of the step, after every impulse of the step (implicit, as MuJoCo's
Euler integrator treats damping: stable for any b h / I). Its impulse over the step is a row
of the velocity solve along J, with the row's effective mass k = 1 / (J M^-1 J^T) and
accumulated impulse P (per row of a ball joint):

    P = -c w',   c = h b;     dP = (-c w' - P) / (1 + c / k),   w' the row's current rate.

The pair of impulses J^T P acts on both bodies, equal and opposite: momentum is kept, energy
only taken. On paper, a body of inertia I free to turn about a damped hinge (nothing else
acting) keeps w_{n+1} = w_n / (1 + h b / I), which tends to w0 exp(-b t / I) as h -> 0; a slider
of mass m pulled by a constant force F reaches the speed F / b.
P is warm started from the last step's, like the joints' rows, and reported in the joint's
reaction wrench (solver.report_reactions).
"""
from numba import njit

from .constraint import SLOT_FRICTION, apply_row, row_map, row_rate
from .jit import KERNEL
from .joint import BLOCK_ROWS

_JIT = KERNEL


@njit(**_JIT)
def any_positive(values):
    """Whether any joint is damped (joint_damping, (njoint,)): the step skips the damper
    stages when none is."""
    for v in values:
        if v > 0.0:
            return True
    return False


@njit(**_JIT)
def prepare_dampers(model, state, work, settings):
    """The list of damped joints, each row's impulse map W = M^-1 J^T (its joint's friction
    rows, built by prepare_joints at this step's poses) and effective mass."""
    h = settings.dt
    J = work.joint_J
    ima, iiw = model.body_inv_mass, work.body_inv_inertia_world
    count = 0
    for j in range(model.joint_type.shape[0]):
        b_damp = model.joint_damping[j]
        n = BLOCK_ROWS[model.joint_type[j], SLOT_FRICTION]
        if not b_damp > 0.0 or n == 0:
            state.joint_damper_impulse[j, :] = 0.0
            continue
        work.damper_list[count] = j
        count += 1
        a, b = model.joint_body[j, 0], model.joint_body[j, 1]
        for r in range(n):
            jw = row_map(J[j, SLOT_FRICTION, r], work.damper_w[j, r], ima, iiw, a, b)
            work.damper_k[j, r] = 1.0 / jw if jw > 0.0 else 0.0
        for r in range(n, 3):
            state.joint_damper_impulse[j, r] = 0.0
        work.damper_c[j] = h * b_damp
    work.damper_count[0] = count


@njit(**_JIT)
def warm_start_dampers(model, state, work, enabled):
    """Start each damped row from the last step's impulse, applied (or from 0)."""
    vel, angvel = state.body_vel, state.body_angvel
    for d in range(work.damper_count[0]):
        j = work.damper_list[d]
        a, b = model.joint_body[j, 0], model.joint_body[j, 1]
        for r in range(BLOCK_ROWS[model.joint_type[j], SLOT_FRICTION]):
            p = state.joint_damper_impulse[j, r]
            if not (enabled and work.damper_k[j, r] > 0.0):
                p = 0.0
            state.joint_damper_impulse[j, r] = p
            if p == 0.0:
                continue
            apply_row(work.damper_w[j, r], p, vel, angvel, a, b)


@njit(**_JIT)
def solve_dampers(damper_list, damper_count, joint_type, joint_body, joint_J, damper_w,
                  damper_k, damper_c, impulse, vel, angvel, skip, use_skip):
    """One Gauss-Seidel pass over the damped joints' rows; returns the largest dP^2. (Arrays,
    not the model/work tuples: a call that takes those costs a reference count per array in
    them, and this one runs every iteration.) With use_skip, the joints skip[j] are in a
    tree's factor (articulation.py) and skipped here."""
    worst = 0.0
    for d in range(damper_count):
        j = damper_list[d]
        if use_skip and skip[j]:
            continue
        a, b = joint_body[j, 0], joint_body[j, 1]
        c = damper_c[j]
        for r in range(BLOCK_ROWS[joint_type[j], SLOT_FRICTION]):
            k = damper_k[j, r]
            if not k > 0.0:
                continue
            row, w = joint_J[j, SLOT_FRICTION, r], damper_w[j, r]
            rate = row_rate(row, vel, angvel, a, b)
            old = impulse[j, r]
            dp = (-c * rate - old) / (1.0 + c / k)
            impulse[j, r] = old + dp
            apply_row(w, dp, vel, angvel, a, b)
            if dp * dp > worst:
                worst = dp * dp
    return worst
