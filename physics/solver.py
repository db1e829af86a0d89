"""The step: sequential impulses over joint blocks, warm started, stopped by a tolerance or a
wall-clock budget (paper 000), on semi-implicit Euler with angular momentum (paper 002).

Only this module knows the order of the stages of one step:

    1. integrate velocities   v += h (g + F/m);  L += h tau;  w = I(t)^-1 L      (002, eq. 7-9)
    2. prepare joints         rows J, K^-1, bias at the poses of time t
    3. warm start             p^(0) = p(t - h), clamped to this step's bounds, applied
    4. solve velocities       Gauss-Seidel over blocks until every |dp| <= eps (000, eq. 17)
                              or the wall-clock budget is spent
    5. integrate positions    L = I(t) w;  x += h v;  q <- exp(h w / 2) q        (002, eq. 10-11)
    6. solve positions        nonlinear Gauss-Seidel on the joints' position errors
                              ("separate impulses": poses only, velocities untouched);
                              centre drift by translation first, the last sweep in full
    7. report                 joint coordinate, velocity, friction, stick/slip

`step_many` runs several steps in one nogil call and records per-step telemetry.
"""
import math

from numba import njit

from .clock import monotonic_seconds
from .constraint import (MAX_BLOCKS, SLOT_FRICTION, SLOT_LOWER, SLOT_UPPER,
                         effective_mass_inverse, row_velocity, solve_position_block,
                         solve_velocity_block, transpose_times, apply_impulse)
from .joint import BLOCK_ROWS, BLOCK_TRANSLATES, FIXED, PRISMATIC, SPHERICAL, joint_rows
from .math3 import mat_vec, quat_rotated, quat_to_mat
from .model import DYNAMIC, STATIC

_JIT = dict(nogil=True, cache=True)


@njit(**_JIT)
def integrate_velocities(model, state, work, settings):
    h = settings.dt
    g = settings.gravity
    t = state.time[0]
    force = work.body_force_acc
    torque = work.body_torque_acc
    force[:] = state.body_force
    torque[:] = state.body_torque
    for k in range(model.load_body.shape[0]):
        if model.load_window[k, 0] <= t < model.load_window[k, 1]:
            i = model.load_body[k]
            for q in range(3):
                force[i, q] += model.load_force[k, q]
                torque[i, q] += model.load_torque[k, q]
    for i in range(model.body_kind.shape[0]):
        R = work.body_rot[i]
        quat_to_mat(state.body_quat[i], R)
        iiw = work.body_inv_inertia_world[i]
        kind = model.body_kind[i]
        if kind != DYNAMIC:
            iiw[:, :] = 0.0
            if kind == STATIC:
                state.body_vel[i, :] = 0.0
                state.body_angvel[i, :] = 0.0
            continue
        d = model.body_inv_inertia[i]
        for r in range(3):
            for c in range(3):
                iiw[r, c] = R[r, 0] * d[0] * R[c, 0] + R[r, 1] * d[1] * R[c, 1] + R[r, 2] * d[2] * R[c, 2]
        im = model.body_inv_mass[i]
        L = state.body_angmom[i]
        for q in range(3):
            state.body_vel[i, q] += h * (g[q] + force[i, q] * im)
            L[q] += h * torque[i, q]
        w = mat_vec(iiw, (L[0], L[1], L[2]))
        for q in range(3):
            state.body_angvel[i, q] = w[q]


@njit(**_JIT)
def prepare_joints(model, state, work, settings):
    h = settings.dt
    for j in range(model.joint_type.shape[0]):
        jt = model.joint_type[j]
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        J = work.joint_J[j]
        C = work.joint_C[j]
        coord = joint_rows(jt, J, C, state.body_pos, state.body_quat, a, b,
                           model.joint_local_anchor[j], model.joint_local_frame[j],
                           state.joint_coord[j])
        ima = model.body_inv_mass[a]
        imb = model.body_inv_mass[b]
        iia = work.body_inv_inertia_world[a]
        iib = work.body_inv_inertia_world[b]
        for s in range(MAX_BLOCKS):
            n = BLOCK_ROWS[jt, s]
            if (s == SLOT_LOWER or s == SLOT_UPPER) and not model.joint_has_limit[j]:
                n = 0
            if s == SLOT_FRICTION and not model.joint_friction[j] > 0.0:
                n = 0
            if n > 0 and not effective_mass_inverse(J, s, n, ima, iia, imb, iib, work.k3,
                                                    work.joint_kinv[j, s]):
                n = 0
            work.joint_rows[j, s] = n
            work.joint_clamped[j, s] = False
            work.joint_bias[j, s, :] = 0.0
            if n == 0:
                state.joint_impulse[j, s, :] = 0.0
            elif s == SLOT_LOWER or s == SLOT_UPPER:
                gap = coord - model.joint_limit[j, 0] if s == SLOT_LOWER else model.joint_limit[j, 1] - coord
                if gap > 0.0:
                    work.joint_bias[j, s, 0] = gap / h


@njit(**_JIT)
def warm_start(model, state, work, settings):
    h = settings.dt
    for j in range(model.joint_type.shape[0]):
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        for s in range(MAX_BLOCKS):
            n = work.joint_rows[j, s]
            if n == 0:
                continue
            p = state.joint_impulse[j, s]
            if not settings.warm_start:
                p[:] = 0.0
                continue
            if s == SLOT_LOWER or s == SLOT_UPPER:
                p[0] = max(p[0], 0.0)
            elif s == SLOT_FRICTION:
                radius = model.joint_friction[j] * h
                m = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
                if m > radius:
                    p[:] *= radius / m
            apply_impulse(work.joint_J[j], s, n, (p[0], p[1], p[2]), a, b,
                          model.body_inv_mass[a], work.body_inv_inertia_world[a],
                          model.body_inv_mass[b], work.body_inv_inertia_world[b],
                          state.body_vel, state.body_angvel)


@njit(**_JIT)
def solve_velocities(model, state, work, settings):
    """Sequential impulses; returns (iterations done, final residual max |dp|)."""
    h = settings.dt
    start = monotonic_seconds()
    done = 0
    residual = 0.0
    for it in range(settings.iterations):
        residual = 0.0
        for j in range(model.joint_type.shape[0]):
            a = model.joint_body[j, 0]
            b = model.joint_body[j, 1]
            ima = model.body_inv_mass[a]
            imb = model.body_inv_mass[b]
            iia = work.body_inv_inertia_world[a]
            iib = work.body_inv_inertia_world[b]
            radius = model.joint_friction[j] * h
            for s in range(MAX_BLOCKS):
                n = work.joint_rows[j, s]
                if n == 0:
                    continue
                dp, clamped = solve_velocity_block(
                    work.joint_J[j], work.joint_kinv[j], work.joint_bias[j],
                    state.joint_impulse[j], s, n, radius, a, b, ima, iia, imb, iib,
                    state.body_vel, state.body_angvel)
                work.joint_clamped[j, s] = clamped
                residual = max(residual, dp)
        done = it + 1
        if residual <= settings.tolerance:
            break
        if settings.budget_s > 0.0 and monotonic_seconds() - start >= settings.budget_s:
            break
    state.solver_stats[0] = done
    state.solver_stats[1] = residual
    state.solver_stats[2] = monotonic_seconds() - start


@njit(**_JIT)
def integrate_positions(model, state, work, settings):
    h = settings.dt
    for i in range(model.body_kind.shape[0]):
        kind = model.body_kind[i]
        if kind == STATIC:
            continue
        w = (state.body_angvel[i, 0], state.body_angvel[i, 1], state.body_angvel[i, 2])
        if kind == DYNAMIC:
            # L(t + h) = I(t) w(t + h): the momentum the next step starts from (002, eq. 9)
            R = work.body_rot[i]
            I = model.body_inertia[i]
            wl0 = (R[0, 0] * w[0] + R[1, 0] * w[1] + R[2, 0] * w[2]) * I[0]
            wl1 = (R[0, 1] * w[0] + R[1, 1] * w[1] + R[2, 1] * w[2]) * I[1]
            wl2 = (R[0, 2] * w[0] + R[1, 2] * w[1] + R[2, 2] * w[2]) * I[2]
            L = mat_vec(R, (wl0, wl1, wl2))
            for q in range(3):
                state.body_angmom[i, q] = L[q]
        for q in range(3):
            state.body_pos[i, q] += h * state.body_vel[i, q]
        turned = quat_rotated((state.body_quat[i, 0], state.body_quat[i, 1],
                               state.body_quat[i, 2], state.body_quat[i, 3]),
                              (h * w[0], h * w[1], h * w[2]))
        for q in range(4):
            state.body_quat[i, q] = turned[q]


@njit(**_JIT)
def solve_positions(model, state, work, settings):
    last = settings.position_iterations - 1
    for it in range(settings.position_iterations):
        for j in range(model.joint_type.shape[0]):
            jt = model.joint_type[j]
            a = model.joint_body[j, 0]
            b = model.joint_body[j, 1]
            J = work.joint_J[j]
            C = work.joint_C[j]
            coord = joint_rows(jt, J, C, state.body_pos, state.body_quat, a, b,
                               model.joint_local_anchor[j], model.joint_local_frame[j],
                               state.joint_coord[j])
            ima = model.body_inv_mass[a]
            imb = model.body_inv_mass[b]
            iia = work.body_inv_inertia_world[a]
            iib = work.body_inv_inertia_world[b]
            for s in range(SLOT_FRICTION):
                n = BLOCK_ROWS[jt, s]
                if n == 0:
                    continue
                if s == SLOT_LOWER or s == SLOT_UPPER:
                    if not model.joint_has_limit[j]:
                        continue
                    gap = coord - model.joint_limit[j, 0] if s == SLOT_LOWER else model.joint_limit[j, 1] - coord
                    if gap >= 0.0:
                        continue
                    C[s, 0] = gap
                translate = it < last and BLOCK_TRANSLATES[jt, s]
                solve_position_block(J, C, s, n, a, b, ima, work.zero3 if translate else iia,
                                     imb, work.zero3 if translate else iib, state.body_pos,
                                     state.body_quat, state.body_vel, state.body_angmom,
                                     work.k3, work.kinv3)


@njit(**_JIT)
def report_joints(model, state, work, settings):
    h = settings.dt
    vel = state.body_vel
    angvel = state.body_angvel
    for j in range(model.joint_type.shape[0]):
        jt = model.joint_type[j]
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        J = work.joint_J[j]
        coord = joint_rows(jt, J, work.joint_C[j], state.body_pos, state.body_quat, a, b,
                           model.joint_local_anchor[j], model.joint_local_frame[j],
                           state.joint_coord[j])
        state.joint_coord[j] = coord
        va = (vel[a, 0], vel[a, 1], vel[a, 2])
        wa = (angvel[a, 0], angvel[a, 1], angvel[a, 2])
        vb = (vel[b, 0], vel[b, 1], vel[b, 2])
        wb = (angvel[b, 0], angvel[b, 1], angvel[b, 2])
        if jt == FIXED:
            speed = 0.0
        elif jt == SPHERICAL:
            speed = math.sqrt((wb[0] - wa[0]) ** 2 + (wb[1] - wa[1]) ** 2 + (wb[2] - wa[2]) ** 2)
        else:
            speed = row_velocity(J, SLOT_FRICTION, 0, va, wa, vb, wb)
        state.joint_vel[j] = speed
        n = work.joint_rows[j, SLOT_FRICTION]
        p = state.joint_impulse[j, SLOT_FRICTION]
        _, ang_a, lin_b, ang_b = transpose_times(J, SLOT_FRICTION, n, (p[0], p[1], p[2]))
        on_b = lin_b if jt == PRISMATIC else ang_b
        for q in range(3):
            state.joint_friction_vec[j, q] = on_b[q] / h
        if n == 1:
            state.joint_friction_force[j] = p[0] / h
        else:
            state.joint_friction_force[j] = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) / h
        if n > 0:
            state.joint_sliding[j] = work.joint_clamped[j, SLOT_FRICTION]
        else:
            state.joint_sliding[j] = jt != FIXED and abs(speed) > 1e-9


@njit(**_JIT)
def first_nonfinite_body(state):
    for i in range(state.body_pos.shape[0]):
        for q in range(3):
            if not (math.isfinite(state.body_pos[i, q]) and math.isfinite(state.body_vel[i, q])
                    and math.isfinite(state.body_angvel[i, q])):
                return i
    return -1


@njit(**_JIT)
def step(model, state, work, settings):
    """Advance the world by one step of settings.dt. Returns False if it went non-finite."""
    integrate_velocities(model, state, work, settings)
    prepare_joints(model, state, work, settings)
    warm_start(model, state, work, settings)
    solve_velocities(model, state, work, settings)
    integrate_positions(model, state, work, settings)
    solve_positions(model, state, work, settings)
    report_joints(model, state, work, settings)
    state.time[0] += settings.dt
    state.step_count[0] += 1
    bad = first_nonfinite_body(state)
    state.solver_stats[3] = bad + 1
    return bad < 0


@njit(**_JIT)
def step_many(model, state, work, settings, nsteps, rec_time, rec_joint, rec_stats, rec_pos,
              rec_quat):
    """Run up to nsteps steps in one call; record each step into the arrays whose first
    dimension is at least nsteps (pass a zero-length first dimension to skip one):
    rec_time (n,), rec_joint (n, njoint, 4) = coord, velocity, friction, sliding,
    rec_stats (n, 3), rec_pos (n, nbody, 3), rec_quat (n, nbody, 4).
    Returns the number of steps done (fewer if the state went non-finite)."""
    for k in range(nsteps):
        ok = step(model, state, work, settings)
        if rec_time.shape[0] > k:
            rec_time[k] = state.time[0]
        if rec_joint.shape[0] > k:
            for j in range(rec_joint.shape[1]):
                rec_joint[k, j, 0] = state.joint_coord[j]
                rec_joint[k, j, 1] = state.joint_vel[j]
                rec_joint[k, j, 2] = state.joint_friction_force[j]
                rec_joint[k, j, 3] = 1.0 if state.joint_sliding[j] else 0.0
        if rec_stats.shape[0] > k:
            for q in range(3):
                rec_stats[k, q] = state.solver_stats[q]
        if rec_pos.shape[0] > k:
            rec_pos[k] = state.body_pos
        if rec_quat.shape[0] > k:
            rec_quat[k] = state.body_quat
        if not ok:
            return k + 1
    return nsteps
