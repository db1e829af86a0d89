"""The step: sequential impulses over joint blocks, warm started, stopped by a tolerance or a
wall-clock budget (paper 000), on semi-implicit Euler with angular momentum (paper 002); the
joints' equality rows as a RATTLE step (aim at the end of the step, project at its start).

Only this module knows the order of the stages of one step. STAGES below names them, in that
order, each with a few words (the words a blow-up's error names it by, World's guard.py);
here is what each does, the kernels it runs in brackets where they are not the stage's name:

    free_motion          inertia at the pose of time t, w = I^-1 L                (002, eq. 9)
    energy_before        each body's energy at the step's start, for the energy check at its
                         end (energy.py)
    detect_contacts      broad and narrow phase at the poses of time t (contact.py)
    prepare_joints       rows J, W = M^-1 J^T, K^-1 = (J W)^-1, bias at the poses of time t;
                         the DC motors' rows (motor.motor_rows)
    follow_geometry      velocities onto the joints at the poses of time t (equality rows,
                         RATTLE's velocity half), the DC motors' rotors carried with them (their
                         rows and inertia in the projection and the energy, motor.py); each
                         island gets its kinetic energy back (momentum.py)
    control_motors       each controlled motor's voltage (motor.py)
    prepare_motors       the motors' coefficients
    prepare_dampers      viscous joint damping's rows (damper.py)
    prepare_couplings    the joint couplings' rows (coupling.py)
    prepare_contacts     arms, tangents, effective masses, approach speeds
    apply_forces         v += h (g + F/m);  L += h tau                          (002, eq. 7-8)
                         F and tau include the drag, a spring-damper computed from this step's
                         pose and velocity (perturb.py)
    forced_approach      each contact's approach speed after the forces, for the speed at
                         impact inside the step (contact_solver.py)
    aim_at_step_end      the ball joints of bodies held only by them: bias = C_e / h - J v, C_e
                         the error at the poses of the free drift (x + h v, the torque-free
                         rotation of L); other rows aim at time t
    warm_start           p^(0) = p(t - h), clamped to this step's bounds, applied (joints, and
                         contacts: contact_solver.warm_start_contacts)
    solve_velocities     Gauss-Seidel over joint blocks, motor and damping rows, joint
                         couplings (coupling.py: q_f = m q_l + o, or q_f - m q_l - o kept in
                         [lower, upper]), then contact rows, until every |dp| <= eps (000,
                         eq. 17) or the wall-clock budget is spent; then restitution (002,
                         eq. 19)
    integrate_positions  L += I(t) dw (the impulses' share);  x += h v;
                         q <- the torque-free rotation of L over h;  w = I(t + h)^-1 L
                                                                        (002, eq. 10-11)
    solve_positions      "separate impulses": poses only, velocities untouched. The tree pass
                         closes the tree joints' rotation and point locks exactly (tree.py),
                         then mass-weighted nonlinear Gauss-Seidel sweeps correct angle limits,
                         loop joints and contact overlap, then the tree pass again (after
                         aim_at_step_end the joints are nearly closed); each floating island
                         gets back the angular momentum the pass took
                         (momentum.island_momentum_before, keep_island_momentum)
    guard_static         no shape's centre enters a static plane or box within the step:
                         stopped on the face it would have crossed (ccd.py)
    report               joint coordinate, velocity, friction, stick/slip (report_joints); the
                         sensors: each joint's reaction wrench (report_reactions), each body's
                         contact wrench (contact_solver.contact_wrenches)
    check                the time advanced; a non-finite or too fast body (scan_bodies), the
                         energy check (energy.energy_jump), the joint gaps prepare_joints found

A traced step (Settings.trace) checks the bodies after the stages that move them, or a motor's
state (STAGE_* below: trace_bodies, trace_motors), and keeps the first where a value was not
finite or a body beyond the speed bounds (World names it in its error: guard.py).

`step_many` runs several steps in one nogil call and records per-step telemetry.
"""
import math

from numba import njit, prange

from .articulation import (
    MAX_REFACTOR,
    ST_LAST,
    ST_REFACTOR,
    finish_trees,
    outer_rows,
    prepare_trees,
    refactor_trees,
    solve_trees,
)
from .ccd import guard_static
from .clock import monotonic_seconds
from .constraint import (
    A_BIAS,
    KIND_ANGULAR,
    KIND_GENERAL,
    KIND_POINT,
    LIMIT_REACH_SPEED,
    MAX_BLOCKS,
    P_BIAS,
    SLOT_EQ0,
    SLOT_EQ1,
    SLOT_FRICTION,
    SLOT_LOWER,
    SLOT_UPPER,
    apply_impulse,
    effective_mass_inverse,
    impulse_map,
    pack_block,
    row_velocity,
    solve_general_block,
    solve_packed_angular_rows,
    solve_packed_point,
    solve_position_block,
)
from .contact import detect_contacts
from .contact_solver import (
    contact_wrenches,
    forced_approach,
    gather_arrays,
    gather_lanes,
    lanes_pay,
    prepare_contacts,
    restitution,
    scatter_lanes,
    solve_contact_positions,
    solve_contacts,
    solve_contacts_claimed,
    spread_sliding,
    sweeps_claimed,
    warm_start_contacts,
)
from .coupling import prepare_couplings, solve_couplings, warm_start_couplings
from .damper import any_positive, prepare_dampers, solve_dampers, warm_start_dampers
from .energy import energy_before, energy_jump
from .jit import ENTRY, INLINE, KERNEL, PARALLEL, STAGE, copy_rows
from .joint import (
    BLOCK_KIND,
    BLOCK_ROWS,
    BLOCK_TRANSLATES,
    COORD_LINEAR,
    DOFS,
    SPHERICAL,
    joint_rows,
    joint_state,
)
from .math3 import (
    half_turn,
    mat_vec,
    quat_mul,
    quat_normalized,
    quat_rotate,
    quat_rotated,
    quat_to_mat,
    rotation_vector,
)
from .model import (
    ARTICULATION_TREE,
    DYNAMIC,
    REACTION,
    REC_COORD,
    REC_CURRENT,
    REC_FRICTION,
    REC_MOTOR_SPEED,
    REC_REACTION,
    REC_SLIDING,
    REC_TORQUE,
    REC_VEL,
    REC_VOLTAGE,
    STAT_GAP,
    STAT_GAP_ANGULAR,
    STAT_GAP_JOINT,
    STAT_ITERATIONS,
    STAT_NONFINITE_BODY,
    STAT_RECORDED,
    STAT_RESIDUAL,
    STAT_RUNAWAY_BODY,
    STAT_SECONDS,
    STAT_TRACE_BODY,
    STAT_TRACE_STAGE,
    STAT_TRACE_WHY,
    STAT_WORST_ANGLE,
    STAT_WORST_GAP,
    STATIC,
)
from .momentum import (
    island_momentum_before,
    keep_island_momentum,
    kinetic_energy_by_island,
    restore_island_energy,
)
from .motor import (
    add_rotor_energy,
    control_motors,
    finish_motors,
    motor_rows,
    prepare_motors,
    project_rotors,
    scale_rotors,
    solve_motors,
    warm_start_motors,
)
from .partition import BODY_SHARE, threaded
from .perturb import add_drag
from .tree import tree_pass

_JIT = KERNEL
BODY_CHUNK = 64   # bodies a thread takes at a time (free motion, integration)
# Strang splitting of the free rotation: body axis 1, body axis 3, world L, body axis 3, axis 1
SPLIT_PARTS = (0, 2, 1, 2, 0)
SPLIT_FRACTIONS = (0.5, 0.5, 1.0, 0.5, 0.5)
SPLIT_TURN = 0.5        # rad: free_rotation_parts splits a step into parts of at most this
SPLIT_MAX_PARTS = 256   # turn, up to this many (128 rad a step: 1,280 rad/s at dt 0.1)
FAST_TURN = 1.0         # rad a step: beyond it a body in no joint turns by its L (free_motion)
# work.body_turn: how a dynamic body turns in a step (free_motion)
TURN_RATE = 0   # by h w, w the rate of its torque-free rotation over the step
TURN_HELD = 1   # held by ball joints and no other joint: by its L, its joints aimed
TURN_FAST = 2   # in no joint, over FAST_TURN a step: by its L, in parts
# step status: RUNAWAY, JOINT_GAP and ENERGY_JUMP are steps done whose result no real system
# has (a body beyond the speed bounds, a joint pulled apart, energy from nothing)
OK, NONFINITE, OVERFLOW, RUNAWAY, JOINT_GAP, ENERGY_JUMP = 0, 1, 2, 3, 4, 5
POSITION_STALL = 0.5   # a position sweep that leaves more than this share of the error the
                       # previous one met is the last: a light link between heavy ones (a
                       # shoulder) takes off ~2 % a sweep, so further sweeps cost, do nothing
GEOMETRY_SWEEPS = 2   # Gauss-Seidel sweeps of that projection (the mismatch is small; what is
                      # left over is removed, without the energy, by the solve proper)
# the stages of one step, in order (the module docstring says what each does): name, and the
# words a blow-up's error names it by ("it began in applying the forces")
STAGES = (
    ("free_motion", "the free motion"),
    ("energy_before", "the energy before the step"),
    ("detect_contacts", "detecting the contacts"),
    ("prepare_joints", "preparing the joints"),
    ("follow_geometry", "following the geometry"),
    ("control_motors", "the motors' controllers"),
    ("prepare_motors", "the motors' preparation"),
    ("prepare_dampers", "preparing the joint damping"),
    ("prepare_couplings", "preparing the joint couplings"),
    ("prepare_contacts", "preparing the contacts"),
    ("apply_forces", "applying the forces"),
    ("forced_approach", "the contacts' speeds at impact"),
    ("aim_at_step_end", "aiming the ball joints at the step's end"),
    ("warm_start", "the warm start"),
    ("solve_velocities", "the velocity solve"),
    ("integrate_positions", "integrating the positions"),
    ("solve_positions", "the position solve"),
    ("guard_static", "the static guard"),
    ("report", "the report"),
    ("check", "the checks at the step's end"),
)
STAGE_NAMES = tuple(name for name, _ in STAGES)
# the stages after which a traced step (Settings.trace) checks the bodies (trace_bodies) or the
# motors (trace_motors): those that change a body's pose or velocity, or a motor's state; each
# an index into STAGES (an int, which the kernels take as a compile-time constant)
STAGE_FREE_MOTION = STAGE_NAMES.index("free_motion")
STAGE_FOLLOW_GEOMETRY = STAGE_NAMES.index("follow_geometry")
STAGE_PREPARE_MOTORS = STAGE_NAMES.index("prepare_motors")
STAGE_APPLY_FORCES = STAGE_NAMES.index("apply_forces")
STAGE_WARM_START = STAGE_NAMES.index("warm_start")
STAGE_SOLVE_VELOCITIES = STAGE_NAMES.index("solve_velocities")
STAGE_INTEGRATE_POSITIONS = STAGE_NAMES.index("integrate_positions")
STAGE_SOLVE_POSITIONS = STAGE_NAMES.index("solve_positions")
STAGE_GUARD_STATIC = STAGE_NAMES.index("guard_static")
# what a traced stage found first: a value not finite, a dynamic body beyond max_speed or
# beyond max_angular_speed (a blow-up that went non-finite later in the step started there)
TRACE_NONFINITE, TRACE_SPEED, TRACE_TURN = 0, 1, 2


@njit(**_JIT)
def free_motion(model, state, work, settings):
    """Inertia at the current pose and the angular velocity the solve starts from.

    A body whose rotation a revolute, prismatic or fixed joint constrains, or that no joint
    holds, starts from the rate w of its torque-free rotation over h (exp(h w) q is that
    rotation: free_rotation) and turns by h times its solved w (002, eq. 9-11). A body held
    only by ball joints to fixed or kinematic bodies (a top, a gyroscope, a spherical
    pendulum) starts from w = I^-1 L and drifts by the torque-free rotation of its solved L,
    its joints aimed at the end of the step (aim_at_step_end).

    Chains of ball joints keep the first way: with 20 Gauss-Seidel iterations the aim, a
    linearisation, does not converge along a whipping 50-link chain and the position pass
    then lifts its links (+8.6 J of 123 J at the whip even with 200 iterations), while the
    first way, with the energy kept per island, never gains.

    A body in no joint that turns more than FAST_TURN in a step (TURN_FAST) takes the second
    way too, without an aim, in parts (free_rotation_parts): the rate of a rotation is only
    defined modulo 2 pi / h (a turn of 6 rad a step reads as -0.28 rad the other way), so its
    contacts would see a wrong velocity, and turning by h w then changes L . I^-1 L: a slender
    ellipsoid spinning on a plane at dt 0.1 spun up from 60 to 500 rad/s, gaining several
    times its energy a step. (How a body turns is one int8 per body, not a flag array of its
    own: one more array in the work tuple alone made the biped's step 4 % slower, measured.)"""
    h = settings.dt
    R = work.body_rot
    iiw = work.body_inv_inertia_world
    turn = work.body_turn
    for i in range(model.body_kind.shape[0]):
        turn[i] = TURN_RATE
    for j in range(model.joint_type.shape[0]):
        if model.joint_type[j] == SPHERICAL:
            for e in range(2):
                turn[model.joint_body[j, e]] = TURN_HELD
    for j in range(model.joint_type.shape[0]):
        a, b = model.joint_body[j, 0], model.joint_body[j, 1]
        if model.joint_type[j] != SPHERICAL or (model.body_kind[a] == DYNAMIC
                                                 and model.body_kind[b] == DYNAMIC):
            turn[a] = TURN_RATE
            turn[b] = TURN_RATE
    # each body on its own: on the step's threads where there are many
    bodies = (model.body_kind, model.body_island, model.body_inv_inertia, state.body_quat,
              state.body_angmom, state.body_vel, state.body_angvel, R, iiw, turn,
              work.body_free_angvel)
    nbody = model.body_kind.shape[0]
    if threaded(nbody // BODY_SHARE, settings.threads):
        _free_all(nbody, bodies, h)
    else:   # (one call: a call a body, its arrays passed by value, costs ~30 ns a body)
        _free_range(0, nbody, bodies, h)


@njit(**PARALLEL)
def _free_all(nbody, bodies, h):
    for c in prange((nbody + BODY_CHUNK - 1) // BODY_CHUNK):
        _free_range(c * BODY_CHUNK, min(nbody, (c + 1) * BODY_CHUNK), bodies, h)


@njit(**_JIT)
def _free_range(lo, hi, bodies, h):
    for i in range(lo, hi):
        _free_body(i, bodies, h)


@njit(**INLINE)
def _free_body(i, bodies, h):
    """Body i's rotation matrix, world inverse inertia and starting angular velocity
    (free_motion)."""
    kinds, island, inv_inertia, quat, angmom, vel, angvel, R, iiw, turn, free_angvel = bodies
    quat_to_mat(quat[i], R[i])
    kind = kinds[i]
    if kind != DYNAMIC:
        turn[i] = TURN_RATE
        iiw[i, :, :] = 0.0
        if kind == STATIC:
            vel[i, :] = 0.0
            angvel[i, :] = 0.0
        return
    world_inverse_inertia(R[i], inv_inertia[i], iiw[i])
    q0 = (quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3])
    L = (angmom[i, 0], angmom[i, 1], angmom[i, 2])
    w = mat_vec(iiw[i], L)
    if turn[i] == TURN_RATE and island[i] < 0:   # in no joint
        if h * h * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) > FAST_TURN * FAST_TURN:
            turn[i] = TURN_FAST
        else:
            v = rotation_vector(quat_mul(free_rotation(q0, L, inv_inertia[i], h),
                                         (q0[0], -q0[1], -q0[2], -q0[3])))
            w = (v[0] / h, v[1] / h, v[2] / h)
    for q in range(3):
        angvel[i, q] = w[q]
        free_angvel[i, q] = w[q]


@njit(**_JIT)
def apply_forces(model, state, work, settings):
    """v += h (g + F/m); L += h tau, w += I^-1 h tau (002, eq. 7-8); timed loads and the drag
    (from the velocities before this step's forces) included."""
    h = settings.dt
    g = settings.gravity
    t = state.time[0]
    force = work.body_force_acc
    torque = work.body_torque_acc
    copy_rows(force, state.body_force)
    copy_rows(torque, state.body_torque)
    for k in range(model.load_body.shape[0]):
        if model.load_window[k, 0] <= t < model.load_window[k, 1]:
            i = model.load_body[k]
            for q in range(3):
                force[i, q] += model.load_force[k, q]
                torque[i, q] += model.load_torque[k, q]
    add_drag(model, state, work, h, force, torque)
    for i in range(model.body_kind.shape[0]):
        if model.body_kind[i] != DYNAMIC:
            continue
        im = model.body_inv_mass[i]
        dw = mat_vec(work.body_inv_inertia_world[i], (h * torque[i, 0], h * torque[i, 1],
                                                      h * torque[i, 2]))
        for q in range(3):
            state.body_vel[i, q] += h * (g[q] + force[i, q] * im)
            state.body_angmom[i, q] += h * torque[i, q]
            state.body_angvel[i, q] += dw[q]
            work.body_free_angvel[i, q] += dw[q]


@njit(**_JIT)
def follow_geometry(model, state, work, settings):
    """Carry the velocities over to the joints at the current poses without losing energy.

    They satisfy the joints at the previous poses; projecting them onto the current ones (the
    equality rows, before any force) removes a share (w h)^2 / 2 of the turning energy of
    every body that turns about a joint. That loss is geometry, not physics: each island of
    jointed bodies gets its kinetic energy back by a common scale of its velocities (which
    keeps J v = 0). For one degree of freedom this is exactly semi-implicit Euler in the joint
    coordinate: the position pass puts the body at angle + h w, and w changes only by the
    forces' impulses. One degree of freedom is then exact (a door braked by friction follows
    the clamped-impulse recurrence); islands driven by kinematic bodies, and losses larger
    than momentum.MAX_RESTORED (not geometric: a teleport, a collision), are left as projected.

    A DC motor's rotor is a body turning with its joint (motor.py): its row J v - s = 0 and
    inertia J_r are in the projection, its energy J_r s^2 / 2 in its island's, and its speed s
    is scaled with the island's velocities.
    """
    before = work.island_energy[0]
    after = work.island_energy[1]
    kinetic_energy_by_island(model, state, work, before)
    rotors = model.motor_joint.shape[0] > 0
    if rotors:
        add_rotor_energy(model, work, before)
    J, W, kinv = work.joint_J, work.joint_W, work.joint_kinv
    p = work.geometry_impulse
    p[:] = 0.0
    pk = work.block_impulse
    pk[:] = 0.0
    data = work.block_data
    vel, angvel = state.body_vel, state.body_angvel
    blocks = work.block_list
    tol2 = settings.tolerance * settings.tolerance
    for _ in range(min(settings.iterations, GEOMETRY_SWEEPS)):
        worst = 0.0
        for k in range(work.block_count[0]):
            j, s, n, kind, a, b = (blocks[k, 0], blocks[k, 1], blocks[k, 2], blocks[k, 3],
                                   blocks[k, 4], blocks[k, 5])
            if s >= SLOT_LOWER:
                continue
            if kind == KIND_POINT:
                dp2 = solve_packed_point(data, pk, k, vel, angvel, a, b)
            elif kind == KIND_ANGULAR:
                dp2, _ = solve_packed_angular_rows(data, pk, k, s, n, 0.0, angvel, a, b)
            else:
                dp2, _ = solve_general_block(J, W, kinv, work.joint_bias, p, j, s, n, 0.0,
                                             vel, angvel, a, b)
            if dp2 > worst:
                worst = dp2
        if rotors:
            dp2 = project_rotors(model.motor_joint, model.joint_body, work.motor_coef,
                                 work.motor_row, work.motor_w, vel, angvel)
            if dp2 > worst:
                worst = dp2
        if worst <= tol2:
            break
    # the packed blocks' impulses to geometry_impulse too: it is a force the joint exerts
    # (the centripetal pull of a swinging pendulum), reported by report_reactions
    for k in range(work.block_count[0]):
        if blocks[k, 3] != KIND_GENERAL and blocks[k, 1] < SLOT_LOWER:
            for q in range(3):
                p[blocks[k, 0], blocks[k, 1], q] = pk[k, q]
    kinetic_energy_by_island(model, state, work, after)
    if rotors:
        add_rotor_energy(model, work, after)
    for i in range(model.body_kind.shape[0]):   # islands aimed at the step's end (RATTLE)
        if work.body_turn[i] == TURN_HELD and model.body_island[i] >= 0:   # keep their energy
            after[model.body_island[i]] = 0.0                    # without a rescale
    restore_island_energy(model, state, work, before, after)
    if rotors:
        scale_rotors(model, work, work.island_acc)
    momentum_follows_impulses(model, state, work)
    copy_rows(work.body_free_angvel, angvel)


@njit(**_JIT)
def free_rotation(q0, L, inv_inertia, h):
    """exp(h w) q0 for the torque-free motion over h of a body with angular momentum L.

    Paper 002 turns by h I^-1 L; that explicit step gains energy on a tumbling body and lets
    a slender body spin up about its own axis (the error grows by (h w)^2 (I_t / I_x) / 2 per
    step). Here the free motion is a symmetric (Strang) splitting of
        H = |L|^2 / (2 I_2) + L_1^2 (1/I_1 - 1/I_2) / 2 + L_3^2 (1/I_3 - 1/I_2) / 2
    into exact rotations: about body axis 1, body axis 3, the world vector L, then back. L is
    kept exactly, energy stays bounded, a sphere turns exactly about L, a symmetric body keeps
    its axial spin exactly, and stiff bodies need no iteration.
    """
    q = q0
    for k in range(5):
        part = SPLIT_PARTS[k]
        frac = SPLIT_FRACTIONS[k]
        if part == 1:
            # about the world vector L at rate |L| / I_2
            turn = (frac * h * L[0] * inv_inertia[1], frac * h * L[1] * inv_inertia[1],
                    frac * h * L[2] * inv_inertia[1])
            q = quat_rotated(q, turn)
        else:
            # about a body axis at rate L_k (1/I_k - 1/I_2); nothing for a symmetric pair
            rate = inv_inertia[part] - inv_inertia[1]
            if rate == 0.0:
                continue
            lb = quat_rotate((q[0], -q[1], -q[2], -q[3]), L)
            angle = frac * h * lb[part] * rate
            c, s = half_turn(abs(angle))
            sn = s * angle
            turn_b = (c, sn if part == 0 else 0.0, 0.0, sn if part == 2 else 0.0)
            q = quat_normalized(quat_mul(q, turn_b))
    return q


@njit(**_JIT)
def free_rotation_parts(q0, L, inv_inertia, h):
    """free_rotation over h in equal parts that each turn the body at most SPLIT_TURN, for
    the fast bodies of free_motion: the splitting's energy error grows with the turn (a brick
    turning 6 rad a step ranged over 0.7-3.0 times its energy; at 0.6 rad a step, within
    0.2 %). Beyond SPLIT_MAX_PARTS parts a step resolves nothing of the motion (a body blown
    up by an absurd force: the speed checks' business), and it stays one part, the cheapest."""
    top = max(inv_inertia[0], inv_inertia[1], inv_inertia[2])    # |w| <= |L| / I_min
    turn = h * top * math.sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2])
    parts = 1
    if SPLIT_TURN < turn <= SPLIT_TURN * SPLIT_MAX_PARTS:
        parts = int(math.ceil(turn / SPLIT_TURN))
    q = q0
    for _ in range(parts):
        q = free_rotation(q, L, inv_inertia, h / parts)
    return q


@njit(**_JIT)
def impulses_momentum(model, state, work, i):
    """Body i's angular momentum with this step's impulses so far: L + I (w - w_free), I at
    the pose of time t (the inertia the impulses were applied with)."""
    R = work.body_rot
    dw = (state.body_angvel[i, 0] - work.body_free_angvel[i, 0],
          state.body_angvel[i, 1] - work.body_free_angvel[i, 1],
          state.body_angvel[i, 2] - work.body_free_angvel[i, 2])
    I = model.body_inertia[i]
    l0 = (R[i, 0, 0] * dw[0] + R[i, 1, 0] * dw[1] + R[i, 2, 0] * dw[2]) * I[0]
    l1 = (R[i, 0, 1] * dw[0] + R[i, 1, 1] * dw[1] + R[i, 2, 1] * dw[2]) * I[1]
    l2 = (R[i, 0, 2] * dw[0] + R[i, 1, 2] * dw[1] + R[i, 2, 2] * dw[2]) * I[2]
    dL = mat_vec(R[i], (l0, l1, l2))
    return (state.body_angmom[i, 0] + dL[0], state.body_angmom[i, 1] + dL[1],
            state.body_angmom[i, 2] + dL[2])


@njit(**_JIT)
def aimed(joint_type, joint_rows, joint_body, body_turn, j):
    """Joint j is a ball joint of a body it holds alone (free_motion): aimed at the step's
    end. (Arrays, not the model and work tuples: a call that takes those costs ~0.5 us,
    a reference count per array in them.)"""
    return (joint_type[j] == SPHERICAL and joint_rows[j, SLOT_EQ0] > 0
            and (body_turn[joint_body[j, 0]] == TURN_HELD
                 or body_turn[joint_body[j, 1]] == TURN_HELD))


@njit(**_JIT)
def aims_at_step_end(model, work):
    jt, rows, jb, turn = model.joint_type, work.joint_rows, model.joint_body, work.body_turn
    for j in range(jt.shape[0]):
        if aimed(jt, rows, jb, turn, j):
            return True
    return False


@njit(**_JIT)
def aim_at_step_end(model, state, work, settings):
    """Equality rows aim at the end of the step (a SHAKE step; RATTLE with follow_geometry).

    Every jointed body drifts freely from its present velocity and momentum: x_e = x + h v,
    q_e = the torque-free rotation of L over h (free_rotation; kinematic bodies turn by h w).
    At those poses each equality row has the error C_e (a point lock's anchors part by the
    curvature of their paths, (h w)^2 |r| / 2, which a velocity row at time t cannot see).
    The rows keep their Jacobian J of time t and get the bias
        bias = C_e / h - J v,   so   J v' + bias = C_e(v') / h  to first order in v' - v:
    the solved impulses carry the joints closed to the end of the step, where the drift of
    integrate_positions puts the bodies. A fast spinning top on a ball joint keeps its
    precession (its anchor circles the spin axis by h w = 0.6 rad a step at 150 rad/s and
    1/240 s), and a pendulum's angular momentum about its pivot changes only by the forces.
    One Newton step: taking the aim again mid-solve from the momenta the impulses had reached
    (a second step) made the top unstable after ~100 s (energy +27 % at 180 s), while one
    step drifts smoothly (over 200 s: tilt +20 deg, energy -0.65 %).
    """
    h = settings.dt
    pos, quat, vel, angvel = state.body_pos, state.body_quat, state.body_vel, state.body_angvel
    end_pos, end_quat = work.body_end_pos, work.body_end_quat
    if not aims_at_step_end(model, work):
        return
    for i in range(model.body_kind.shape[0]):
        kind = model.body_kind[i]
        if kind == DYNAMIC and model.body_island[i] < 0:
            continue   # in no joint
        q = (quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3])
        if work.body_turn[i] == TURN_HELD:
            q = free_rotation(q, impulses_momentum(model, state, work, i),
                              model.body_inv_inertia[i], h)
        elif kind != STATIC:   # turned by h w (integrate_positions)
            q = quat_rotated(q, (h * angvel[i, 0], h * angvel[i, 1], h * angvel[i, 2]))
        for c in range(3):
            end_pos[i, c] = pos[i, c] + h * vel[i, c]
        for c in range(4):
            end_quat[i, c] = q[c]
    Je, Ce, J, bias = work.joint_J_end, work.joint_C_end, work.joint_J, work.joint_bias
    jt, rows, jb, turn = model.joint_type, work.joint_rows, model.joint_body, work.body_turn
    for j in range(model.joint_type.shape[0]):
        if not aimed(jt, rows, jb, turn, j):
            continue
        joint_rows(Je, Ce, j, model.joint_type[j], end_pos, end_quat, model.joint_body[j, 0],
                   model.joint_body[j, 1], model.joint_local_anchor, model.joint_local_frame,
                   state.joint_coord[j])
    blocks, data = work.block_list, work.block_data
    for k in range(work.block_count[0]):
        j, s, n, kind, a, b = (blocks[k, 0], blocks[k, 1], blocks[k, 2], blocks[k, 3],
                               blocks[k, 4], blocks[k, 5])
        if s >= SLOT_LOWER or not aimed(jt, rows, jb, turn, j):
            continue
        for r in range(n):
            bias[j, s, r] = Ce[j, s, r] / h - row_velocity(J, j, s, r, vel, angvel, a, b)
            if kind == KIND_POINT:
                data[k, P_BIAS + r] = bias[j, s, r]
            elif kind == KIND_ANGULAR:
                data[k, A_BIAS + r] = bias[j, s, r]


@njit(**_JIT)
def world_inverse_inertia(R, d, out):
    """out = R diag(d) R^T (out may be R itself)."""
    m00 = R[0, 0] * d[0] * R[0, 0] + R[0, 1] * d[1] * R[0, 1] + R[0, 2] * d[2] * R[0, 2]
    m01 = R[0, 0] * d[0] * R[1, 0] + R[0, 1] * d[1] * R[1, 1] + R[0, 2] * d[2] * R[1, 2]
    m02 = R[0, 0] * d[0] * R[2, 0] + R[0, 1] * d[1] * R[2, 1] + R[0, 2] * d[2] * R[2, 2]
    m11 = R[1, 0] * d[0] * R[1, 0] + R[1, 1] * d[1] * R[1, 1] + R[1, 2] * d[2] * R[1, 2]
    m12 = R[1, 0] * d[0] * R[2, 0] + R[1, 1] * d[1] * R[2, 1] + R[1, 2] * d[2] * R[2, 2]
    m22 = R[2, 0] * d[0] * R[2, 0] + R[2, 1] * d[1] * R[2, 1] + R[2, 2] * d[2] * R[2, 2]
    out[0, 0], out[0, 1], out[0, 2] = m00, m01, m02
    out[1, 0], out[1, 1], out[1, 2] = m01, m11, m12
    out[2, 0], out[2, 1], out[2, 2] = m02, m12, m22


# A limit's block enters the solve only when the joint could reach the limit within the step:
# its gap is under h (2 |rate| + LIMIT_REACH_SPEED), the rate the last step's. Farther, its
# impulse would stay 0 (its bias gap / h lets the joint approach at any rate below that), so
# leaving it out changes nothing but the cost: a biped's 13 limited joints had 26 idle blocks
# of 74. A jolt beyond that speed within one step is caught by the position pass.
# (LIMIT_REACH_SPEED, 25 rad/s or m/s, is constraint.py's: coupling limits use it too)


@njit(**_JIT)
def prepare_joints(model, state, work, settings):
    """Rows at the current poses (J, W, K^-1, bias) and the list of active blocks; the joints'
    gaps at these poses, the end of the last step, into solver_stats (joint_gaps)."""
    h = settings.dt
    J, W, kinv, bias = work.joint_J, work.joint_W, work.joint_kinv, work.joint_bias
    C = work.joint_C
    count = 0
    worst, worst_angle, worst_j, worst_angle_j = 0.0, 0.0, -1, -1
    for j in range(model.joint_type.shape[0]):
        jt = model.joint_type[j]
        a = model.joint_body[j, 0]
        b = model.joint_body[j, 1]
        coord = joint_rows(J, C, j, jt, state.body_pos, state.body_quat, a, b,
                           model.joint_local_anchor, model.joint_local_frame,
                           state.joint_coord[j])
        for s in range(SLOT_LOWER):   # the equality blocks' errors: the joint's gaps
            n = BLOCK_ROWS[jt, s]
            if n == 0:
                continue
            c2 = 0.0
            for r in range(n):
                c2 += C[j, s, r] * C[j, s, r]
            if BLOCK_KIND[jt, s] == KIND_ANGULAR:
                if c2 > worst_angle:
                    worst_angle, worst_angle_j = c2, j
            elif c2 > worst:
                worst, worst_j = c2, j
        for s in range(MAX_BLOCKS):
            n = BLOCK_ROWS[jt, s]
            if s == SLOT_LOWER or s == SLOT_UPPER:
                if not model.joint_has_limit[j]:
                    n = 0
                else:   # a limit out of this step's reach stays out of the solve
                    lo, hi = model.joint_limit[j, 0], model.joint_limit[j, 1]
                    gap = coord - lo if s == SLOT_LOWER else hi - coord
                    if gap > h * (2.0 * abs(state.joint_vel[j]) + LIMIT_REACH_SPEED):
                        n = 0
            if s == SLOT_FRICTION and not model.joint_friction[j] > 0.0:
                n = 0
            if n > 0:
                impulse_map(J, W, j, s, n, model.body_inv_mass, work.body_inv_inertia_world,
                            a, b)
                if not effective_mass_inverse(J, W, kinv, work.k3, j, s, n, BLOCK_KIND[jt, s]):
                    n = 0
            work.joint_rows[j, s] = n
            work.joint_clamped[j, s] = False
            bias[j, s, 0] = bias[j, s, 1] = bias[j, s, 2] = 0.0
            if n == 0:
                state.joint_impulse[j, s, :] = 0.0
                continue
            blk = work.block_list[count]
            blk[0], blk[1], blk[2], blk[3], blk[4], blk[5] = j, s, n, BLOCK_KIND[jt, s], a, b
            count += 1
            if s == SLOT_LOWER or s == SLOT_UPPER:
                lo, hi = model.joint_limit[j, 0], model.joint_limit[j, 1]
                gap = coord - lo if s == SLOT_LOWER else hi - coord
                if gap > 0.0:
                    bias[j, s, 0] = gap / h
            if BLOCK_KIND[jt, s] != KIND_GENERAL:
                pack_block(J, W, kinv, bias, j, s, BLOCK_KIND[jt, s], work.block_data[count - 1])
    work.block_count[0] = count
    joint_gaps(state.solver_stats, settings, math.sqrt(worst), worst_j, math.sqrt(worst_angle),
               worst_angle_j)


@njit(**_JIT)
def joint_gaps(stats, settings, gap, j, angle, j_angle):
    """Record the largest point / off-axis gap (m, joint j) and angular gap (rad, joint
    j_angle) of the equality blocks, and which joint is beyond max_joint_gap or
    max_joint_angle_gap (the linear one first; 0 bounds are off). The gaps are those of the
    poses the step starts from: the joints' rows are built there, so this costs no pass of
    its own (the pose a step ends with is checked by the next step)."""
    stats[STAT_WORST_GAP] = gap
    stats[STAT_WORST_ANGLE] = angle
    stats[STAT_GAP_JOINT] = 0.0
    stats[STAT_GAP] = 0.0
    stats[STAT_GAP_ANGULAR] = 0.0
    if settings.max_joint_gap > 0.0 and gap > settings.max_joint_gap:
        stats[STAT_GAP_JOINT] = j + 1
        stats[STAT_GAP] = gap
    elif settings.max_joint_angle_gap > 0.0 and angle > settings.max_joint_angle_gap:
        stats[STAT_GAP_JOINT] = j_angle + 1
        stats[STAT_GAP] = angle
        stats[STAT_GAP_ANGULAR] = 1.0


@njit(**_JIT)
def momentum_follows_impulses(model, state, work):
    """L += I dw for the angular velocity change dw the impulses made, with the inertia they
    were applied with (I = body_rot diag(I_body) body_rot^T)."""
    for i in range(model.body_kind.shape[0]):
        if model.body_kind[i] == DYNAMIC:
            _follow_impulses(i, work.body_rot, model.body_inertia, state.body_angvel,
                             work.body_free_angvel, state.body_angmom)


@njit(**INLINE)
def _follow_impulses(i, R, inertia, angvel, free_angvel, angmom):
    """momentum_follows_impulses for body i."""
    dw = (angvel[i, 0] - free_angvel[i, 0], angvel[i, 1] - free_angvel[i, 1],
          angvel[i, 2] - free_angvel[i, 2])
    I = inertia[i]
    l0 = (R[i, 0, 0] * dw[0] + R[i, 1, 0] * dw[1] + R[i, 2, 0] * dw[2]) * I[0]
    l1 = (R[i, 0, 1] * dw[0] + R[i, 1, 1] * dw[1] + R[i, 2, 1] * dw[2]) * I[1]
    l2 = (R[i, 0, 2] * dw[0] + R[i, 1, 2] * dw[1] + R[i, 2, 2] * dw[2]) * I[2]
    dL = mat_vec(R[i], (l0, l1, l2))
    for q in range(3):
        angmom[i, q] += dL[q]


@njit(**_JIT)
def warm_start(model, state, work, settings):
    h = settings.dt
    p = state.joint_impulse
    blocks = work.block_list
    for k in range(work.block_count[0]):
        j, s, n = blocks[k, 0], blocks[k, 1], blocks[k, 2]
        if not settings.warm_start:
            p[j, s, :] = 0.0
            continue
        if s == SLOT_LOWER or s == SLOT_UPPER:
            p[j, s, 0] = max(p[j, s, 0], 0.0)
        elif s == SLOT_FRICTION:
            radius = model.joint_friction[j] * h
            m = math.sqrt(p[j, s, 0] ** 2 + p[j, s, 1] ** 2 + p[j, s, 2] ** 2)
            if m > radius:
                for q in range(3):
                    p[j, s, q] *= radius / m
        apply_impulse(work.joint_W, j, s, n, (p[j, s, 0], p[j, s, 1], p[j, s, 2]),
                      state.body_vel, state.body_angvel, blocks[k, 4], blocks[k, 5])
    for k in range(work.block_count[0]):
        for q in range(3):
            work.block_impulse[k, q] = p[blocks[k, 0], blocks[k, 1], q]
    warm_start_motors(model, work, state.body_vel, state.body_angvel, settings.warm_start)
    if work.damper_count[0] > 0:
        warm_start_dampers(model, state, work, settings.warm_start)
    if model.coupling_joint.shape[0] > 0:
        warm_start_couplings(work, state.body_vel, state.body_angvel, settings.warm_start)


@njit(**INLINE)
def _sweep_arrays(points, rows):
    """What contact_solver.solve_contacts reads to sweep a manifold at a time."""
    return (rows.man_first, points.body, rows.point_rows, rows.man_rows, rows.man_tree,
            points.impulse, points.sliding, rows.part_order)


@njit(**INLINE)
def _lane_arrays(rows):
    """What it reads to sweep the manifolds in lanes."""
    return (rows.lane_rows, rows.lane_impulse, rows.lane_body, rows.lane_points,
            rows.lane_sliding)


@njit(**STAGE)
def solve_velocities(model, state, work, points, rows, trees, settings):
    """Sequential impulses; records iterations done, final residual max |dp| and seconds.
    With settings.articulation == ARTICULATION_TREE each tree is one block of the loop,
    solved exactly (articulation.py); the rows it takes are skipped by the sweeps here."""
    h = settings.dt
    tol2 = settings.tolerance * settings.tolerance
    start = monotonic_seconds()
    done = 0
    worst = 0.0
    blocks = work.block_list
    J, W, kinv, bias = work.joint_J, work.joint_W, work.joint_kinv, work.joint_bias
    p = state.joint_impulse
    pk, data = work.block_impulse, work.block_data
    vel, angvel, friction = state.body_vel, state.body_angvel, model.joint_friction
    tree = False
    refactors = 0
    outer = True
    # (trees is None where the articulation is "sweep" or there is no tree: numba then
    # prunes every branch below that reads it; each read of it stays under such a test)
    if trees is not None:
        if settings.articulation == ARTICULATION_TREE and trees.comp_root.shape[0] > 0:
            tree = prepare_trees(model, state, work, points, rows, trees, settings)
        # the outer loop has rows of its own: blocks, motors, dampers, couplings or manifolds
        # that no tree took (without them, one exact pass of the trees is the solve)
        outer = not tree or outer_rows(model, work, rows, trees)
    deadline = start + settings.budget_s if settings.budget_s > 0.0 else 0.0
    # contacts alone, on threads: every sweep in one parallel region (solve_contacts_claimed)
    claimed = False
    lanes = False
    if points is not None:
        if points.count[0] > 0:   # the manifolds no tree took, into lanes where they pay
            lanes = lanes_pay(rows, settings.iterations)
            claimed = (not tree and work.block_count[0] == 0
                       and model.motor_joint.shape[0] == 0 and work.damper_count[0] == 0
                       and model.coupling_joint.shape[0] == 0
                       and sweeps_claimed(rows.part_start, settings.threads))
        if claimed:
            done, worst = solve_contacts_claimed(
                _sweep_arrays(points, rows), _lane_arrays(rows), lanes, vel, angvel,
                rows.part_start, rows.lane_span, rows.part_worst, rows.part_sync,
                settings.threads, settings.iterations, tol2, settings.budget_s, start,
                gather_arrays(rows, points, model.body_inv_mass), lanes)
    for it in range(0 if claimed else settings.iterations):
        worst = 0.0
        if trees is not None:
            if tree:
                dp2 = solve_trees(trees, model.joint_child, model.joint_body, model.body_kind,
                                  vel, angvel, tol2, settings.iterations, deadline)
                if dp2 > worst:
                    worst = dp2
        for k in range(work.block_count[0]):
            j, s, n, kind, a, b = (blocks[k, 0], blocks[k, 1], blocks[k, 2], blocks[k, 3],
                                   blocks[k, 4], blocks[k, 5])
            if trees is not None:
                if tree and trees.joint_skip[j]:
                    continue
            if kind == KIND_POINT:
                dp2 = solve_packed_point(data, pk, k, vel, angvel, a, b)
            else:
                if kind == KIND_ANGULAR:
                    dp2, clamped = solve_packed_angular_rows(data, pk, k, s, n,
                                                             friction[j] * h, angvel, a, b)
                else:
                    dp2, clamped = solve_general_block(J, W, kinv, bias, p, j, s, n,
                                                       friction[j] * h, vel, angvel, a, b)
                if s == SLOT_FRICTION:
                    work.joint_clamped[j, s] = clamped
            if dp2 > worst:
                worst = dp2
        if model.motor_joint.shape[0] > 0:
            if trees is not None:
                dp2 = solve_motors(model.motor_joint, model.joint_type, model.joint_body,
                                   work.motor_coef, work.motor_row, work.motor_w,
                                   work.motor_impulse, vel, angvel, trees.motor_folded, tree)
            else:   # (the same types: the mask is not read without its flag)
                dp2 = solve_motors(model.motor_joint, model.joint_type, model.joint_body,
                                   work.motor_coef, work.motor_row, work.motor_w,
                                   work.motor_impulse, vel, angvel, state.joint_sliding, False)
            if dp2 > worst:
                worst = dp2
        if work.damper_count[0] > 0:
            if trees is not None:
                dp2 = solve_dampers(work.damper_list, work.damper_count[0], model.joint_type,
                                    model.joint_body, J, work.damper_w, work.damper_k,
                                    work.damper_c, state.joint_damper_impulse, vel, angvel,
                                    trees.joint_skip, tree)
            else:
                dp2 = solve_dampers(work.damper_list, work.damper_count[0], model.joint_type,
                                    model.joint_body, J, work.damper_w, work.damper_k,
                                    work.damper_c, state.joint_damper_impulse, vel, angvel,
                                    state.joint_sliding, False)
            if dp2 > worst:
                worst = dp2
        if model.coupling_joint.shape[0] > 0:
            dp2 = solve_couplings(work.coupling_body, work.coupling_J, work.coupling_W,
                                  work.coupling_coef, work.coupling_impulse, vel, angvel)
            if dp2 > worst:
                worst = dp2
        if points is not None:
            if points.count[0] > 0:
                # (the lanes filled unit by unit in the first sweep, each unit right before
                # it is swept; refactor_trees fills them all at once)
                dp2 = solve_contacts(_sweep_arrays(points, rows), _lane_arrays(rows), lanes,
                                     vel, angvel, it % 2 == 1, rows.part_start,
                                     rows.lane_span, rows.part_worst, settings.threads,
                                     gather_arrays(rows, points, model.body_inv_mass),
                                     lanes and it == 0)
                if dp2 > worst:
                    worst = dp2
        done = it + 1
        converged = worst <= tol2 or not outer
        if trees is not None:
            if tree and (converged or it + 1 == settings.iterations):
                # a motor the trees' solve left beyond a limit is swept from here on: refactor
                if (finish_trees(model, state, work, points, trees)
                        and refactors < MAX_REFACTOR):
                    refactors += 1
                    if points is not None:   # (the trees may take or leave manifolds)
                        if lanes:
                            scatter_lanes(rows, points)
                    tree = refactor_trees(model, state, work, points, rows, trees, settings)
                    if points is not None:
                        if points.count[0] > 0:
                            lanes = lanes_pay(rows, settings.iterations)
                            if lanes:
                                gather_lanes(rows, points, model.body_inv_mass)
                    outer = True
                    continue
        if converged:
            break
        if settings.budget_s > 0.0 and monotonic_seconds() - start >= settings.budget_s:
            if trees is not None:
                if tree:
                    finish_trees(model, state, work, points, trees)
            break
    if trees is not None:
        if tree:
            trees.stats[ST_REFACTOR] = refactors
            if not outer:   # one exact pass: what is left is the trees' last PGS sweep
                worst = trees.stats[ST_LAST]
    if points is not None:
        if points.count[0] > 0:
            if lanes:
                scatter_lanes(rows, points)
            spread_sliding(points, rows)
            restitution(model, state, work, points, rows, settings.dt)
    finish_motors(model, state, work, settings)
    # the packed blocks' impulses back to their joints (warm start, reports)
    for k in range(work.block_count[0]):
        if blocks[k, 3] != KIND_GENERAL:
            for q in range(3):
                p[blocks[k, 0], blocks[k, 1], q] = pk[k, q]
    state.solver_stats[STAT_ITERATIONS] = done
    state.solver_stats[STAT_RESIDUAL] = math.sqrt(worst)
    state.solver_stats[STAT_SECONDS] = monotonic_seconds() - start


@njit(**_JIT)
def integrate_positions(model, state, work, settings):
    """Each body on its own (momentum_follows_impulses, then x += h v and the turn): on the
    step's threads where there are many."""
    bodies = (model.body_kind, model.body_island, model.body_inertia, model.body_inv_inertia,
              state.body_pos, state.body_quat, state.body_vel, state.body_angvel,
              state.body_angmom, work.body_rot, work.body_inv_inertia_world,
              work.body_free_angvel, work.body_turn)
    nbody = model.body_kind.shape[0]
    if threaded(nbody // BODY_SHARE, settings.threads):
        _integrate_all(nbody, bodies, settings.dt)
    else:   # (one call, as in free_motion)
        _integrate_range(0, nbody, bodies, settings.dt)


@njit(**PARALLEL)
def _integrate_all(nbody, bodies, h):
    for c in prange((nbody + BODY_CHUNK - 1) // BODY_CHUNK):
        _integrate_range(c * BODY_CHUNK, min(nbody, (c + 1) * BODY_CHUNK), bodies, h)


@njit(**_JIT)
def _integrate_range(lo, hi, bodies, h):
    for i in range(lo, hi):
        _integrate_body(i, bodies, h)


@njit(**INLINE)
def _integrate_body(i, bodies, h):
    (kinds, island, inertia, inv_inertia, pos, quat, vel, angvel, angmom, R, iiw, free_angvel,
     turn) = bodies
    kind = kinds[i]
    if kind == STATIC:
        return
    if kind == DYNAMIC:
        _follow_impulses(i, R, inertia, angvel, free_angvel, angmom)
    w = (angvel[i, 0], angvel[i, 1], angvel[i, 2])
    for q in range(3):
        pos[i, q] += h * vel[i, q]
    q0 = (quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3])
    L = (angmom[i, 0], angmom[i, 1], angmom[i, 2])
    if turn[i] == TURN_HELD or island[i] >= 0:   # by L, torque-free
        turned = free_rotation(q0, L, inv_inertia[i], h)
    elif turn[i] == TURN_FAST:
        turned = free_rotation_parts(q0, L, inv_inertia[i], h)
    else:
        turned = quat_rotated(q0, (h * w[0], h * w[1], h * w[2]))
    for q in range(4):
        quat[i, q] = turned[q]
    if kind == DYNAMIC:
        # the angular velocity that goes with L at the new orientation
        quat_to_mat(turned, R[i])
        world_inverse_inertia(R[i], inv_inertia[i], iiw[i])
        w = mat_vec(iiw[i], (angmom[i, 0], angmom[i, 1], angmom[i, 2]))
        for q in range(3):
            angvel[i, q] = w[q]


@njit(**STAGE)
def solve_positions(model, state, work, points, rows, settings):
    """Tree pass, mass-weighted sweeps over what it does not close (violated limits, loop
    joints, then the contacts' overlap), tree pass again. A joint with only limits left to
    sweep (a tree joint, a group's later hinge) builds its rows only where one is violated."""
    tree_pass(model, state, work)
    J, C = work.joint_J, work.joint_C
    ima = model.body_inv_mass
    last = math.inf
    joints_swept = True
    for _ in range(settings.position_iterations):
        swept = False
        worst = 0.0   # the largest joint error this sweep met (before correcting it)
        for j in range(model.joint_type.shape[0] if joints_swept else 0):
            jt = model.joint_type[j]
            in_tree = model.joint_child[j] >= 0
            if in_tree and (BLOCK_TRANSLATES[jt, SLOT_LOWER] or not model.joint_has_limit[j]):
                continue   # the tree pass closed all it has (tree.py)
            a = model.joint_body[j, 0]
            b = model.joint_body[j, 1]
            if in_tree or BLOCK_ROWS[jt, SLOT_EQ0] + BLOCK_ROWS[jt, SLOT_EQ1] == 0:
                # only its limits are left: rows only where one is violated
                if not model.joint_has_limit[j]:
                    continue
                coord, _ = joint_state(j, jt, state.body_pos, state.body_quat, state.body_vel,
                                       state.body_angvel, a, b, model.joint_local_anchor,
                                       model.joint_local_frame, state.joint_coord[j])
                if model.joint_limit[j, 0] <= coord <= model.joint_limit[j, 1]:
                    continue
            coord = joint_rows(J, C, j, jt, state.body_pos, state.body_quat, a, b,
                               model.joint_local_anchor, model.joint_local_frame,
                               state.joint_coord[j])
            for s in range(SLOT_FRICTION):
                n = BLOCK_ROWS[jt, s]
                if n == 0 or (in_tree and (s < SLOT_LOWER or BLOCK_TRANSLATES[jt, s])):
                    continue
                if s == SLOT_LOWER or s == SLOT_UPPER:
                    if not model.joint_has_limit[j]:
                        continue
                    lo, hi = model.joint_limit[j, 0], model.joint_limit[j, 1]
                    gap = coord - lo if s == SLOT_LOWER else hi - coord
                    if gap >= 0.0:
                        continue
                    C[j, s, 0] = gap
                for r in range(n):
                    worst = max(worst, abs(C[j, s, r]))
                solve_position_block(
                    J, work.joint_W, work.joint_kinv, C, work.k3, j, s, n, ima,
                    work.body_inv_inertia_world, a, b, state.body_pos, state.body_quat,
                    state.body_angvel, state.body_angmom)
                swept = True
        if worst > POSITION_STALL * last:
            joints_swept = False   # Gauss-Seidel has stalled on the joints (a light link
        last = worst               # between heavy ones): the next step's aim closes the rest
        if points is not None:
            if points.count[0] > 0:
                if solve_contact_positions(model, state, work, points, rows,
                                           settings.threads) > 0.0:
                    swept = True
        if not swept:
            break   # nothing was out of place: the next sweeps would change nothing
    if settings.position_iterations > 0:
        tree_pass(model, state, work)


@njit(**_JIT)
def report_joints(model, state, work, settings):
    h = settings.dt
    J = work.joint_J
    vel = state.body_vel
    angvel = state.body_angvel
    pos, quat = state.body_pos, state.body_quat
    joint_type, joint_body = model.joint_type, model.joint_body
    anchor, frame = model.joint_local_anchor, model.joint_local_frame
    for j in range(joint_type.shape[0]):
        jt = joint_type[j]
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        coord, speed = joint_state(j, jt, pos, quat, vel, angvel, a, b, anchor, frame,
                                   state.joint_coord[j])
        state.joint_coord[j] = coord
        state.joint_vel[j] = speed
        n = work.joint_rows[j, SLOT_FRICTION]
        p = state.joint_impulse[j, SLOT_FRICTION]
        # friction on body B: the B columns of J^T p (a force along a length, else a torque)
        col = 6 if COORD_LINEAR[jt] else 9
        for q in range(3):
            f = 0.0
            for r in range(n):
                f += J[j, SLOT_FRICTION, r, col + q] * p[r]
            state.joint_friction_vec[j, q] = f / h
        if n == 1:
            state.joint_friction_force[j] = p[0] / h
        else:
            state.joint_friction_force[j] = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) / h
        if n > 0:
            state.joint_sliding[j] = work.joint_clamped[j, SLOT_FRICTION]
        else:
            state.joint_sliding[j] = DOFS[jt] > 0 and abs(speed) > 1e-9


@njit(**_JIT)
def report_reactions(model, state, work, settings):
    """Each joint's 6-axis sensor: the wrench body A exerts on body B through the joint, from
    the step's accumulated impulses p of every row (locks, limits, friction, its share of a
    coupling's row, equality or limit: J_f on the follower, -m J_l on the leader), the motor's
    and the equality rows' projection onto this step's poses (follow_geometry: the centripetal
    share),
        F = sum_r J_r,linB p_r / h,   T_c = sum_r J_r,angB p_r / h   (about B's centre),
    moved to the anchor on B (rB from the centre):  T = T_c - rB x F."""
    h = settings.dt
    J = work.joint_J
    out = state.joint_reaction
    out[:] = 0.0
    for j in range(model.joint_type.shape[0]):
        for s in range(MAX_BLOCKS):
            n = work.joint_rows[j, s]
            for r in range(n):
                p = state.joint_impulse[j, s, r]
                if s < SLOT_LOWER:   # and the impulse that turned the velocities onto the
                    p += work.geometry_impulse[j, s, r]   # joints at this step's poses
                if p == 0.0:
                    continue
                for q in range(3):
                    out[j, q] += J[j, s, r, 6 + q] * p
                    out[j, 3 + q] += J[j, s, r, 9 + q] * p
    for m in range(model.motor_joint.shape[0]):
        j = model.motor_joint[m]
        p = work.motor_impulse[m]
        for q in range(3):
            out[j, q] += work.motor_row[m, 6 + q] * p
            out[j, 3 + q] += work.motor_row[m, 9 + q] * p
    for c in range(model.coupling_joint.shape[0]):
        # the coupling row J = [J_f | -m J_l] (coupling.py): slot 1 is the follower's body B,
        # slot 3 the leader's; each joint reports its own share of the row's impulse
        p = work.coupling_impulse[c]
        for side in range(2):
            j = model.coupling_joint[c, side]
            s = 2 * side + 1
            for q in range(6):
                out[j, q] += work.coupling_J[c, s, q] * p
    for d in range(work.damper_count[0]):
        j = work.damper_list[d]
        for r in range(3):
            p = state.joint_damper_impulse[j, r]
            if p == 0.0:
                continue
            for q in range(3):
                out[j, q] += J[j, SLOT_FRICTION, r, 6 + q] * p
                out[j, 3 + q] += J[j, SLOT_FRICTION, r, 9 + q] * p
    for j in range(model.joint_type.shape[0]):
        b = model.joint_body[j, 1]
        rb = quat_rotate((state.body_quat[b, 0], state.body_quat[b, 1], state.body_quat[b, 2],
                          state.body_quat[b, 3]),
                         (model.joint_local_anchor[j, 1, 0], model.joint_local_anchor[j, 1, 1],
                          model.joint_local_anchor[j, 1, 2]))
        f0, f1, f2 = out[j, 0] / h, out[j, 1] / h, out[j, 2] / h
        out[j, 0], out[j, 1], out[j, 2] = f0, f1, f2
        out[j, 3] = out[j, 3] / h - (rb[1] * f2 - rb[2] * f1)
        out[j, 4] = out[j, 4] / h - (rb[2] * f0 - rb[0] * f2)
        out[j, 5] = out[j, 5] / h - (rb[0] * f1 - rb[1] * f0)


@njit(**_JIT)
def scan_bodies(body_kind, pos, quat, vel, angvel, angmom, max_speed, max_angular_speed):
    """One pass over the bodies: (bad, fast, why). bad: the first body whose pose, velocity or
    angular momentum is not finite, a moving one first (a NaN spreads through the joints
    within the step into the fixed world and static bodies, which cannot have started it).
    fast: the first dynamic body moving faster than max_speed (m/s), why = TRACE_SPEED, or
    turning faster than max_angular_speed (rad/s), why = TRACE_TURN; a bound of 0 is off.
    -1 where none. Squared norms against squared bounds: no square root per body. (The
    arrays one by one, not the state: a call site's cost in compile time grows with the arrays
    it passes.)"""
    v2 = max_speed * max_speed
    w2 = max_angular_speed * max_angular_speed
    bad, fast, why = -1, -1, TRACE_SPEED
    for i in range(pos.shape[0]):
        ok = math.isfinite(quat[i, 3])
        for q in range(3):
            ok = ok and (math.isfinite(pos[i, q]) and math.isfinite(vel[i, q])
                         and math.isfinite(angvel[i, q]) and math.isfinite(angmom[i, q])
                         and math.isfinite(quat[i, q]))
        if body_kind[i] != DYNAMIC:
            if not ok and bad < 0:
                bad = i
            continue
        if not ok:
            return i, fast, why
        if fast < 0:
            if max_speed > 0.0 and vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2 > v2:
                fast, why = i, TRACE_SPEED
            elif (max_angular_speed > 0.0
                  and angvel[i, 0] ** 2 + angvel[i, 1] ** 2 + angvel[i, 2] ** 2 > w2):
                fast, why = i, TRACE_TURN
    return bad, fast, why


@njit(**_JIT)
def trace_bodies(body_kind, pos, quat, vel, angvel, angmom, stats, stage, settings):
    """A traced step (Settings.trace), after `stage` (STAGE_*): what scan_bodies finds, the
    first non-finite body or else the first beyond the speed bounds, recorded as
    stats[STAT_TRACE_STAGE] = 1 + stage, stats[STAT_TRACE_BODY] = 1 + body and
    stats[STAT_TRACE_WHY] = TRACE_NONFINITE, TRACE_SPEED or TRACE_TURN, unless an earlier stage
    of the step was."""
    if stats[STAT_TRACE_STAGE] > 0.0:
        return
    bad, fast, why = scan_bodies(body_kind, pos, quat, vel, angvel, angmom, settings.max_speed,
                                 settings.max_angular_speed)
    if bad >= 0:
        fast, why = bad, TRACE_NONFINITE
    if fast >= 0:
        stats[STAT_TRACE_STAGE] = 1 + stage
        stats[STAT_TRACE_BODY] = 1 + fast
        stats[STAT_TRACE_WHY] = why


@njit(**_JIT)
def trace_motors(joint_body, motor_joint, current, speed, torque, stats, stage):
    """Likewise for the motors: the body driven by the first whose current, rotor speed or
    torque is not finite."""
    if stats[STAT_TRACE_STAGE] > 0.0:
        return
    for m in range(motor_joint.shape[0]):
        if not (math.isfinite(current[m]) and math.isfinite(speed[m])
                and math.isfinite(torque[m])):
            stats[STAT_TRACE_STAGE] = 1 + stage
            stats[STAT_TRACE_BODY] = 1 + joint_body[motor_joint[m], 1]
            stats[STAT_TRACE_WHY] = TRACE_NONFINITE
            return


@njit(**INLINE)
def traced(model, state, settings, stage):
    """In a traced step (Settings.trace), the bodies checked after `stage` (trace_bodies)."""
    if settings.trace:
        trace_bodies(model.body_kind, state.body_pos, state.body_quat, state.body_vel,
                     state.body_angvel, state.body_angmom, state.solver_stats, stage, settings)


@njit(**INLINE)
def traced_motors(model, state, settings, stage):
    """In a traced step, the motors checked after `stage` (trace_motors)."""
    if settings.trace:
        trace_motors(model.joint_body, model.motor_joint, state.motor_current,
                     state.motor_speed, state.motor_torque, state.solver_stats, stage)


@njit(**_JIT)
def step(model, state, work, points, rows, scratch, trees, settings):
    """Advance the world by one step of settings.dt: the stages of STAGES, in order. Returns OK,
    NONFINITE (the state went non-finite), RUNAWAY (a dynamic body beyond the speed bounds:
    finite, but no real system's; solver_stats[STAT_RUNAWAY_BODY] names it), JOINT_GAP (a
    joint was open beyond max_joint_gap or max_joint_angle_gap at the step's start;
    solver_stats[STAT_GAP_JOINT] names it), ENERGY_JUMP (the step gained energy far beyond its
    sources: energy.py) or OVERFLOW (the contact arrays are too small: nothing changed, grow
    them and call again)."""
    free_motion(model, state, work, settings)
    energy_before(model, state, work, settings)
    if settings.trace:   # (this step's first stage: one that healed in a step before is not it)
        state.solver_stats[STAT_TRACE_STAGE] = 0.0
    traced(model, state, settings, STAGE_FREE_MOTION)   # (energy_before moves nothing)
    touching = False
    if points is not None:  # None: nothing in the world can touch (compiled without contacts)
        if not detect_contacts(model, state, work, points, scratch, settings.dt,
                               settings.manifold_reuse, settings.threads):
            return OVERFLOW
        touching = points.count[0] > 0  # (the contact stages take ~23 arrays: skip them idle)
    prepare_joints(model, state, work, settings)
    motor_rows(model, state, work)
    follow_geometry(model, state, work, settings)
    traced(model, state, settings, STAGE_FOLLOW_GEOMETRY)
    control_motors(model, state, settings, work.motor_coef)
    prepare_motors(model, state, work, settings)
    traced_motors(model, state, settings, STAGE_PREPARE_MOTORS)
    if any_positive(model.joint_damping):   # (a stage call costs a reference count per
        prepare_dampers(model, state, work, settings)   # array in the tuples: skip it idle)
    else:
        work.damper_count[0] = 0
        state.joint_damper_impulse[:] = 0.0
    if model.coupling_joint.shape[0] > 0:
        prepare_couplings(model, state, work, settings)
    if points is not None:
        if touching:
            prepare_contacts(model, state, work, points, rows, settings.dt)
    apply_forces(model, state, work, settings)
    traced(model, state, settings, STAGE_APPLY_FORCES)
    if points is not None:
        if touching:
            forced_approach(model, state, work, points, rows)
    aim_at_step_end(model, state, work, settings)
    warm_start(model, state, work, settings)
    if points is not None:
        if touching:
            warm_start_contacts(model, state, work, points, rows, settings.warm_start)
    traced(model, state, settings, STAGE_WARM_START)
    solve_velocities(model, state, work, points, rows, trees, settings)
    traced(model, state, settings, STAGE_SOLVE_VELOCITIES)
    integrate_positions(model, state, work, settings)
    traced(model, state, settings, STAGE_INTEGRATE_POSITIONS)
    island_momentum_before(model, state, work)
    solve_positions(model, state, work, points, rows, settings)
    keep_island_momentum(model, state, work)
    traced(model, state, settings, STAGE_SOLVE_POSITIONS)
    if scratch is not None:
        guard_static(model, state, scratch)
        traced(model, state, settings, STAGE_GUARD_STATIC)
    report_joints(model, state, work, settings)
    report_reactions(model, state, work, settings)
    if points is not None:
        contact_wrenches(model, state, points, rows, settings.dt)
    state.time[0] += settings.dt
    state.step_count[0] += 1
    bad, fast, _ = scan_bodies(model.body_kind, state.body_pos, state.body_quat, state.body_vel,
                               state.body_angvel, state.body_angmom, settings.max_speed,
                               settings.max_angular_speed)
    state.solver_stats[STAT_NONFINITE_BODY] = bad + 1
    if bad >= 0:
        return NONFINITE
    state.solver_stats[STAT_RUNAWAY_BODY] = fast + 1
    jump = energy_jump(model, state, work, settings)
    if fast >= 0:
        return RUNAWAY
    if state.solver_stats[STAT_GAP_JOINT] > 0.0:
        return JOINT_GAP
    return ENERGY_JUMP if jump else OK


@njit(**ENTRY)   # (called from Python: jit.py)
def step_many(model, state, work, points, rows, scratch, trees, settings, nsteps, rec_time,
              rec_joint, rec_stats, rec_pos, rec_quat, rec_contact, contact_bodies):
    """Run up to nsteps steps in one call (points, rows, scratch: the contacts' three tuples,
    contact.contact_args; all None where nothing can touch); record each step into the arrays
    whose first dimension is at least nsteps (pass a zero-length first dimension to skip one):
    rec_time (n,), rec_joint (n, njoint, REC_CHANNELS) = coord, velocity, friction, sliding,
    the motor's voltage, current, torque and rotor speed (0 without one), the reaction
    wrench (model.REC_* name the columns), rec_stats (n, STAT_RECORDED), rec_pos (n, nbody, 3),
    rec_quat (n, nbody, 4), rec_contact (n, len(contact_bodies), REACTION) the summed contact
    wrench of the bodies contact_bodies (int64).
    Returns (steps done, status of the last step): fewer steps than asked when the state
    went non-finite (NONFINITE), a body ran away (RUNAWAY), a joint was pulled apart
    (JOINT_GAP) or energy came from nothing (ENERGY_JUMP) -- those three steps done and
    recorded -- or the contact arrays must grow (OVERFLOW, that step not done)."""
    for k in range(nsteps):
        status = step(model, state, work, points, rows, scratch, trees, settings)
        if status == OVERFLOW:
            return k, status
        if rec_time.shape[0] > k:
            rec_time[k] = state.time[0]
        if rec_joint.shape[0] > k:
            for j in range(min(rec_joint.shape[1], state.joint_coord.shape[0])):
                rec_joint[k, j, REC_COORD] = state.joint_coord[j]
                rec_joint[k, j, REC_VEL] = state.joint_vel[j]
                rec_joint[k, j, REC_FRICTION] = state.joint_friction_force[j]
                rec_joint[k, j, REC_SLIDING] = 1.0 if state.joint_sliding[j] else 0.0
                for q in range(REACTION):
                    rec_joint[k, j, REC_REACTION + q] = state.joint_reaction[j, q]
            for m in range(model.motor_joint.shape[0]):
                j = model.motor_joint[m]
                if j >= rec_joint.shape[1]:   # (a recording begun before a grasp changed
                    continue                   # the joints holds the first ones)
                rec_joint[k, j, REC_VOLTAGE] = state.motor_voltage[m]
                rec_joint[k, j, REC_CURRENT] = state.motor_current[m]
                rec_joint[k, j, REC_TORQUE] = state.motor_torque[m]
                rec_joint[k, j, REC_MOTOR_SPEED] = state.motor_speed[m]
        if rec_stats.shape[0] > k:
            for q in range(STAT_RECORDED):
                rec_stats[k, q] = state.solver_stats[q]
        if rec_pos.shape[0] > k:
            copy_rows(rec_pos[k], state.body_pos)
        if rec_quat.shape[0] > k:
            copy_rows(rec_quat[k], state.body_quat)
        if rec_contact.shape[0] > k:
            for c in range(contact_bodies.shape[0]):
                for q in range(REACTION):
                    rec_contact[k, c, q] = state.body_contact[contact_bodies[c], q]
        if status != OK:
            return k + 1, status
    return nsteps, OK
