"""DC motors with voltage input in revolute and prismatic joints (paper 002, eqs. 13-18).

A motor m drives joint j = motor_joint[m] through a gear of ratio r and efficiency eta:

    electrical      L di/dt + R i = u - K_t w_m            (K_t: torque and back-EMF constant)
    rotor speed     w_m = r w,          w = J v, the joint's rate (the friction row, J = [0, -a,
                                        0, a] for a hinge: (wB - wA) . a; along a for a slider)
    joint torque    tau = r eta K_t i   (a force for a slider), rotor inertia J_m felt at the
                                        joint as J_r = r^2 J_m

Discrete (step h, e = exp(-h R / L), e = 0 for L = 0): the current is advanced exactly for a
joint rate held at its end-of-step value w',

    i' = e i + (1 - e) (u - K_t r w') / R,

and the joint takes the impulse of that current over the step, less what spins the rotor up:

    P = h r eta K_t i' - J_r (w' - w)  =  c0 - c1 w',
    c0 = h r eta K_t (e i + (1 - e) u / R) + J_r w,   c1 = h r eta K_t (1 - e) K_t r / R + J_r.

P is a row of the velocity solve along J, implicit in w' (back-EMF damping and reflected
inertia both act through c1, so gear ratios of hundreds stay stable at any dt): with the
row's effective mass k = 1 / (J M^-1 J^T) and its accumulated impulse P,

    dP = (c0 - c1 w' - P) / (1 + c1 / k),   w' the row's current rate,

At the current limit the motor gives r eta K_t i_max, the rotor takes its share and the joint
the rest: P = s h r eta K_t i_max - J_r (w' - w), s the sign, again implicit in w'; the joint's
|P| <= h tau_max (the torque limit). After the solve, i' = (P + J_r (w' - w)) / (h r eta K_t)
is the current that impulse took and P / h the joint's torque, so the telemetry (current,
torque, rotor speed, power u i) is the one the bodies felt. P is
warm started from the last step's, like the joints' rows.
Steady states on paper: no load w = u / (K_t r); stall torque r eta K_t u / R; current rising
as 1 - exp(-t R / L); mechanical time constant (J_load + J_r) R / (r^2 eta K_t^2).

The rotor in a chain of joints. The rotor is a body of its own, turning at the joint's rate
(r times it, J_r = r^2 J_m felt at the joint): its speed s (a joint rate) is part of the state,
the kinetic energy is T = V^T M V / 2 + sum_m J_r s_m^2 / 2, and the rotor's constraint is the
row J V - s = 0. Everything the step does to the bodies' velocities in the metric M must then
be done to (V, s) in the metric diag(M, J_r):

  * follow_geometry (solver.py) carries the velocities onto the joints at the new poses: the
    projection min |V - V0|_M^2 / 2 + sum J_r (s - s0)^2 / 2 subject to the joints' equality
    rows G V = 0 and the rotors' rows J V - s = 0, s0 = J V0 (motor_rows: the rate the last
    step left, measured with this step's row). Gauss-Seidel on a rotor's row, k = 1 / (J W):

        dP = (s - J V) / (1/k + 1/J_r),   V += W dP,   s -= dP / J_r      (project_rotors)

    and each island's energy, bodies and rotors (add_rotor_energy), is restored by a common
    scale f of V and s (scale_rotors), which keeps G V = 0 and J V = s.
  * the solve starts the motor's row from that s: w = s in c0 above, so -J_r (w' - w) is the
    rotor's momentum change exactly and the rotor exchanges with its joint only what this
    step's forces make.

For a single hinge the projection does not change the joint's rate (one degree of freedom:
the rescale gives it back whole), so measuring w after a projection in M alone was the same.
In a chain it is not: the projection is where maximal coordinates make the chain's coupling
(the centripetal and Coriolis terms), it changes each joint's rate by O(h) per step, and in
M alone it accelerates the joints as if the rotors were not there, while a rotor started from
that rate gets the momentum J_r dw from nothing and the rescale, counting the bodies only,
does not see it. That error is O(h) per step, O(1) over a time, whatever the dt: measured on
the humanoid's arm (armature 0.01, dt 1.25 ms, 0.5 s) the rotors lost 0.17 J there and the
elbow was 0.17 rad off MuJoCo; carried with the projection, 0.005 rad (0.012 at 2.5 ms).

Controllers (control_motors) set u each step from the joint's coordinate q and rate w at the
step's start (a digital controller sampled at the physics rate) and a set-point at its end: a
PD on q, or a P on w with the back-EMF feed-forward K_t r w*, saturated at the supply.

An implicit controller (model.motor_implicit; MuJoCo's implicitfast servos) takes its rate
term at the end of the step instead: u = u0 - d w', d = kd (position) or kp (velocity), u0 the
rest of the law at the step's start. Sampled, a rate gain d is a damper of impulse c w
(c = lam d, lam = h r eta K_t (1 - e) / R the impulse per volt over the step) on the rate
the step started with, w' = w - c w / k, which diverges once c > 2 k (k the row's effective
mass): a 200 N m s/rad servo on a wrist of 0.001 kg m^2 at any usual dt. Implicit, it is
part of the row,

    P = c0 - c1 w',   c0 = ... + lam u0,   c1 = ... + lam d,

stable at any gain, as the back-EMF is. At the supply's limit U (|u0 - d w'| > U) the row is
the sampled one at u = +-U: c0 + lam (+-U - u0), c1 - lam d. P(w') is continuous and
decreasing across the two pieces, so the solve takes the linear piece's solution and, where
its voltage is beyond the limit, the saturated piece's.
"""
import math

from numba import njit

from .constraint import apply_row, row_map, row_rate
from .jit import KERNEL
from .joint import COORD_LINEAR

_JIT = KERNEL
# motor_param columns
(M_RESISTANCE, M_INDUCTANCE, M_KT, M_ROTOR_INERTIA, M_GEAR, M_EFFICIENCY, M_VOLTAGE_LIMIT,
 M_CURRENT_LIMIT, M_TORQUE_LIMIT, MOTOR_PARAMS) = range(10)
# motor_coef columns: k (effective mass), c0, c1, largest impulse (torque limit), rate at the
# step's start, h r eta K_t, J_r, the current limit, 1 / k and 1 / (1 + c1 / k) (the solve's
# divisors as factors: they are on the chain of dependent operations from row to row); the
# voltage u0 and its rate gain d (u = u0 - d w', d = 0 but for an implicit controller), the
# supply's limit U and lam, the impulse per volt over the step
(K_EFF, C0, C1, P_MAX, RATE0, GAIN, J_ROTOR, I_MAX, INV_K, RELAX, U_FREE, U_RATE, U_LIMIT,
 LAMBDA, MOTOR_COEFS) = range(15)


@njit(**_JIT)
def motor_rows(model, state, work):
    """Each motor's row J (the friction row of its joint, built by prepare_joints), its impulse
    map W = M^-1 J^T and effective mass k, at the poses of the step's start; and the rotor's
    speed s from the velocities the last step left, before follow_geometry carries them onto
    the joints at these poses (it carries s with them). s is the rate the rotor turned at,
    measured with the row it turned with (the last step's J_old v, state.motor_speed / r,
    taken before free_motion turned the bodies' w): the rotor keeps its speed. Measured with
    this step's row instead, J v differs from it by O(h) wherever the row turns with the other
    joints' rates (a hinge of a universal joint or gimbal: d_i moves with q_1, q_2), and the
    rotor's momentum J_r (J v - J_old v) came from nothing each step: the hinges with armature
    of a gimbal and a universal joint ended 0.024-0.026 rad off MuJoCo's at any dt, 0.0009
    rad at 1.25 ms with the rotor's speed kept. (A single hinge's row turns with its own body
    only, and J v = J_old v to O(h^2).) Without a last row (the step after a build),
    s = J v."""
    J = work.joint_J
    ima, iiw = model.body_inv_mass, work.body_inv_inertia_world
    vel, angvel = state.body_vel, state.body_angvel
    for m in range(model.motor_joint.shape[0]):
        j = model.motor_joint[m]
        a, b = model.joint_body[j, 0], model.joint_body[j, 1]
        row, w = work.motor_row[m], work.motor_w[m]
        coef = work.motor_coef[m]
        p = model.motor_param[m]
        kept = False   # a last row (none in the first step after a build) and a gear
        for q in range(12):
            if row[q] != 0.0:
                kept = p[M_GEAR] > 0.0
        if kept:
            coef[RATE0] = state.motor_speed[m] / p[M_GEAR]
        for q in range(12):
            row[q] = J[j, 4, 0, q]   # (constraint.SLOT_FRICTION, row 0)
        jw = row_map(row, w, ima, iiw, a, b)
        coef[K_EFF] = 1.0 / jw if jw > 0.0 else 0.0
        coef[INV_K] = jw if jw > 0.0 else 0.0
        if not kept:
            coef[RATE0] = row_rate(row, vel, angvel, a, b)
        coef[J_ROTOR] = p[M_GEAR] * p[M_GEAR] * p[M_ROTOR_INERTIA]


@njit(**_JIT)
def project_rotors(motor_joint, joint_body, motor_coef, motor_row, motor_w, vel, angvel):
    """One Gauss-Seidel pass of the rotors' rows J v - s = 0 in follow_geometry's projection
    (a rotor is a body of inertia J_r turning with its joint): dP = (s - J v) / (1/k + 1/J_r),
    v += W dP, s -= dP / J_r. Returns the largest dP^2; motors without a rotor are skipped."""
    worst = 0.0
    for m in range(motor_joint.shape[0]):
        coef = motor_coef[m]
        jr, k = coef[J_ROTOR], coef[K_EFF]
        if jr <= 0.0 or k <= 0.0:
            continue
        j = motor_joint[m]
        a, b = joint_body[j, 0], joint_body[j, 1]
        row, w = motor_row[m], motor_w[m]
        dp = (coef[RATE0] - row_rate(row, vel, angvel, a, b)) / (1.0 / k + 1.0 / jr)
        coef[RATE0] -= dp / jr
        apply_row(w, dp, vel, angvel, a, b)
        if dp * dp > worst:
            worst = dp * dp
    return worst


@njit(**_JIT)
def motor_island(model, m):
    """The island of motor m's joint (of its body B, or A where B is fixed): -1 if none."""
    j = model.motor_joint[m]
    k = model.body_island[model.joint_body[j, 1]]
    return k if k >= 0 else model.body_island[model.joint_body[j, 0]]


@njit(**_JIT)
def add_rotor_energy(model, work, out):
    """out[island] += J_r s^2 / 2 for each rotor, s its speed (a joint rate)."""
    for m in range(model.motor_joint.shape[0]):
        k = motor_island(model, m)
        if k >= 0 and k < out.shape[0]:
            out[k] += 0.5 * work.motor_coef[m, J_ROTOR] * work.motor_coef[m, RATE0] ** 2


@njit(**_JIT)
def scale_rotors(model, work, scale):
    """s *= scale[island] for each rotor: the common scale of its island's velocities."""
    for m in range(model.motor_joint.shape[0]):
        k = motor_island(model, m)
        if k >= 0:
            work.motor_coef[m, RATE0] *= scale[k, 0]


@njit(**_JIT)
def prepare_motors(model, state, work, settings):
    """The coefficients c0, c1 of each motor's row this step (motor_rows built the row, and
    follow_geometry left the rotor's speed w in RATE0)."""
    h = settings.dt
    for m in range(model.motor_joint.shape[0]):
        p = model.motor_param[m]
        R, L, kt, r, eta = p[M_RESISTANCE], p[M_INDUCTANCE], p[M_KT], p[M_GEAR], p[M_EFFICIENCY]
        coef = work.motor_coef[m]
        jr, rate = coef[J_ROTOR], coef[RATE0]
        e = math.exp(-h * R / L) if L > 0.0 else 0.0
        gain = h * r * eta * kt
        coef[C0] = gain * (e * state.motor_current[m] + (1.0 - e) * coef[U_FREE] / R) \
            + jr * rate
        coef[C1] = gain * (1.0 - e) * kt * r / R + jr
        coef[LAMBDA] = gain * (1.0 - e) / R
        if coef[U_RATE] > 0.0:   # an implicit controller's rate term (the module's end)
            coef[C1] += coef[LAMBDA] * coef[U_RATE]
        coef[U_LIMIT] = p[M_VOLTAGE_LIMIT]
        coef[RELAX] = 1.0 / (1.0 + coef[C1] * coef[INV_K])
        coef[P_MAX] = h * p[M_TORQUE_LIMIT]
        coef[GAIN] = gain
        coef[I_MAX] = p[M_CURRENT_LIMIT]


@njit(**_JIT)
def warm_start_motors(model, work, vel, angvel, enabled):
    """Start each motor row from the impulse of the last step (clamped to this step's bound),
    applied: a motor holding a load against a stiff chain needs it, the Gauss-Seidel pass
    between its row and the joints converges as slowly as their effective masses differ."""
    for m in range(model.motor_joint.shape[0]):
        bound = work.motor_coef[m, P_MAX]
        p = max(-bound, min(bound, work.motor_impulse[m])) if enabled else 0.0
        work.motor_impulse[m] = p
        if p == 0.0:
            continue
        a, b = model.joint_body[model.motor_joint[m], 0], model.joint_body[model.motor_joint[m], 1]
        apply_row(work.motor_w[m], p, vel, angvel, a, b)


@njit(**_JIT)
def solve_motors(motor_joint, joint_type, joint_body, motor_coef, motor_row, motor_w,
                 motor_impulse, vel, angvel, folded, use_folded):
    """One Gauss-Seidel pass over the motor rows; returns the largest dP^2. A hinge's row has
    no linear columns (J = [0, -a, 0, a]): they are skipped. With use_folded, the motors
    folded[m] are in their tree's factor (articulation.py) and skipped here."""
    worst = 0.0
    for m in range(motor_joint.shape[0]):
        coef = motor_coef[m]
        k = coef[K_EFF]
        if k <= 0.0 or (use_folded and folded[m]):
            continue
        j = motor_joint[m]
        a, b = joint_body[j, 0], joint_body[j, 1]
        row, w = motor_row[m], motor_w[m]
        hinge = not COORD_LINEAR[joint_type[j]]   # an angle: a revolute joint, alone or in a group
        if hinge:
            rate = ((row[3] * angvel[a, 0] + row[4] * angvel[a, 1])
                    + (row[5] * angvel[a, 2] + row[9] * angvel[b, 0])) + (
                        row[10] * angvel[b, 1] + row[11] * angvel[b, 2])
        else:
            rate = row_rate(row, vel, angvel, a, b)
        old = motor_impulse[m]
        # old + (C0 - C1 rate - old) RELAX, with the rate (the chain from the last row) last
        new = (old + (coef[C0] - old) * coef[RELAX]) - (coef[C1] * coef[RELAX]) * rate
        d = coef[U_RATE]
        if d > 0.0:   # an implicit controller: beyond the supply, the saturated piece
            u = coef[U_FREE] - d * (rate + (new - old) * coef[INV_K])
            if abs(u) > coef[U_LIMIT]:
                lam = coef[LAMBDA]
                c0 = coef[C0] + lam * (math.copysign(coef[U_LIMIT], u) - coef[U_FREE])
                c1 = coef[C1] - lam * d
                relax = 1.0 / (1.0 + c1 * coef[INV_K])
                new = (old + (c0 - old) * relax) - (c1 * relax) * rate
        # the current that impulse takes, the rotor spun up to the rate it leaves:
        # i' = (P + J_r (w' - w0)) / gain,  w' = rate + (P - old) / k
        jr, gain = coef[J_ROTOR], coef[GAIN]
        drive = new + jr * (rate + (new - old) * coef[INV_K] - coef[RATE0])
        limit = gain * coef[I_MAX]
        if abs(drive) > limit:   # at the current limit: the torque K_t i_max spins the rotor
            held = limit if drive > 0.0 else -limit    # and drives the joint with the rest
            new = (held - jr * (rate - old / k - coef[RATE0])) / (1.0 + jr / k)
        new = max(-coef[P_MAX], min(coef[P_MAX], new))
        dp = new - old
        motor_impulse[m] = new
        if hinge:
            for q in range(3):
                angvel[a, q] += dp * w[3 + q]
                angvel[b, q] += dp * w[9 + q]
        else:
            apply_row(w, dp, vel, angvel, a, b)
        if dp * dp > worst:
            worst = dp * dp
    return worst


@njit(**_JIT)
def finish_motors(model, state, work, settings):
    """The current, joint torque and rotor speed the solved impulses mean."""
    h = settings.dt
    vel, angvel = state.body_vel, state.body_angvel
    for m in range(model.motor_joint.shape[0]):
        j = model.motor_joint[m]
        a, b = model.joint_body[j, 0], model.joint_body[j, 1]
        row = work.motor_row[m]
        rate = (row[0] * vel[a, 0] + row[1] * vel[a, 1] + row[2] * vel[a, 2]
                + row[3] * angvel[a, 0] + row[4] * angvel[a, 1] + row[5] * angvel[a, 2]
                + row[6] * vel[b, 0] + row[7] * vel[b, 1] + row[8] * vel[b, 2]
                + row[9] * angvel[b, 0] + row[10] * angvel[b, 1] + row[11] * angvel[b, 2])
        p = model.motor_param[m]
        r, eta, kt = p[M_GEAR], p[M_EFFICIENCY], p[M_KT]
        jr = r * r * p[M_ROTOR_INERTIA]
        impulse = work.motor_impulse[m] + jr * (rate - work.motor_coef[m, RATE0])
        current = impulse / (h * r * eta * kt)
        state.motor_current[m] = current
        state.motor_torque[m] = work.motor_impulse[m] / h   # what the joint got
        state.motor_speed[m] = r * rate
        d = work.motor_coef[m, U_RATE]
        if d > 0.0:   # an implicit controller's voltage at the rate the step ended with
            limit = work.motor_coef[m, U_LIMIT]
            state.motor_voltage[m] = max(-limit, min(limit, work.motor_coef[m, U_FREE] - d * rate))


# controllers (motor_ctrl): the voltage as set; PD on the joint's position; P on its rate with
# the back-EMF feed-forward K_t r w*
CTRL_VOLTAGE, CTRL_POSITION, CTRL_VELOCITY = 0, 1, 2
# set-point sources (motor_traj[:, TRAJ_KIND]): a constant a0 (aiming at the rate a1, 0 unless
# World.set_target gives one); a0 + a1 sin(2 pi a2 t + a3);
# piecewise-linear keyframes (motor_key rows motor_key_range[m] = first, count), held after
TRAJ_KIND, TRAJ_CONSTANT, TRAJ_SINE, TRAJ_KEYS, MOTOR_TRAJ = 0, 0, 1, 2, 5


@njit(**_JIT)
def set_point(motor_traj, motor_key_range, keys, m, t):
    """The set-point (coordinate, rate) of motor m's controller at time t (model.motor_traj,
    motor_key_range, motor_key)."""
    tr = motor_traj[m]
    kind = int(tr[TRAJ_KIND])
    if kind == TRAJ_SINE:
        w = 2.0 * math.pi * tr[3]
        return (tr[1] + tr[2] * math.sin(w * t + tr[4]), tr[2] * w * math.cos(w * t + tr[4]))
    if kind == TRAJ_KEYS:
        first, count = motor_key_range[m, 0], motor_key_range[m, 1]
        if count == 0:
            return 0.0, 0.0
        if t <= keys[first, 0]:
            return keys[first, 1], 0.0
        for k in range(first, first + count - 1):
            t0, t1 = keys[k, 0], keys[k + 1, 0]
            if t < t1:
                rate = (keys[k + 1, 1] - keys[k, 1]) / (t1 - t0)
                return keys[k, 1] + rate * (t - t0), rate
        return keys[first + count - 1, 1], 0.0
    return tr[1], tr[2]


@njit(**_JIT)
def control_motors(model, state, settings, motor_coef):
    """Each controlled motor's voltage for this step, from the joint's coordinate and rate at
    the step's start and the set-point at its end, saturated at the supply:
        position:  u = kp (q* - q) + kd (w* - w)
        velocity:  u = kp (w* - w) + K_t r w*   (w* the set-point, a rate)
    The voltage the step uses goes to motor_coef's U_FREE (and U_RATE = 0); an implicit
    controller (model.motor_implicit) leaves its rate term, -d w with d = kd or kp, to the
    solve instead (U_FREE = u0, U_RATE = d; the module's end), and state.motor_voltage is its
    voltage at the step's start until finish_motors sets the one the step took."""
    t = state.time[0] + settings.dt
    traj, key_range, keys = model.motor_traj, model.motor_key_range, model.motor_key
    for m in range(model.motor_joint.shape[0]):
        mode = model.motor_ctrl[m]
        coef = motor_coef[m]
        coef[U_RATE] = 0.0
        if mode == CTRL_VOLTAGE:
            coef[U_FREE] = state.motor_voltage[m]
            continue
        j = model.motor_joint[m]
        q, w = state.joint_coord[j], state.joint_vel[j]
        target, rate = set_point(traj, key_range, keys, m, t)
        kp, kd = model.motor_gain[m, 0], model.motor_gain[m, 1]
        p = model.motor_param[m]
        if mode == CTRL_POSITION:
            u = kp * (target - q) + kd * (rate - w)
            u0, d = kp * (target - q) + kd * rate, kd
        else:  # the set-point is a rate
            u = kp * (target - w) + p[M_KT] * p[M_GEAR] * target
            u0, d = kp * target + p[M_KT] * p[M_GEAR] * target, kp
        state.motor_target[m] = target
        limit = p[M_VOLTAGE_LIMIT]
        state.motor_voltage[m] = max(-limit, min(limit, u))
        if model.motor_implicit[m] and d > 0.0:
            coef[U_FREE], coef[U_RATE] = u0, d
        else:
            coef[U_FREE] = state.motor_voltage[m]
