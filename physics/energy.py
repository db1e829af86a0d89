"""Energy: the check that a step gains no more energy than its sources could supply (issue 13).

A finite explosion (a body created deep inside another and pushed out, a solve gone wrong)
shows as a step in which the world's energy grows with nothing to feed it. The energy is the
mechanical energy of the dynamic bodies,

    E = sum_i m_i |v_i|^2 / 2 + w_i . I_i w_i / 2 - m_i g . x_i,

so gravity is inside it (falling trades potential for kinetic energy: no gain) and joints,
contacts, friction, dampers and restitution (e <= 1) only ever keep or take energy. What may
add energy in a step of length h, and the most it can add:

* a force F and torque T on a body (a body force, a [[loads]] entry, the drag's spring) do
  the work F . v + T . w over the step, at most  h (|F| max(|v0|, |v1|) + |T| max(|w0|, |w1|))
  (v0, v1: the body's velocity before and after the step; the same for w);
* a motor does the work tau . rate on its joint, at most  h |tau| max(|rate0|, |rate1|);
* the solver itself, from the kinetic energy there is: its geometric make-up of what
  projecting velocities onto the joints takes (solver.follow_geometry) is at most
  MAX_RESTORED = 2 % of it; counted as REL_KINETIC = 10 % of it, so with the factor 10 a
  step may double the kinetic energy without a source (a blow-up that grows slower than
  that meets the speed bounds soon);
* the position pass moving bodies against gravity: a resting contact keeps its overlap below
  the slop (0.5 mm) and a joint's drift is corrected by far less in a step; counted as every
  body lifted by LIFT = 2 mm (so with the factor 10 a body created up to about 1 cm inside
  the floor is pushed out unflagged, one 3 cm or more deep is not);
* a coupling (a mimic joint, coupling.py) closing its error C within the step: its row aims
  at J v' = -C / h, which gives at most the kinetic energy k (C / h)^2 / 2 of that speed on
  the row's effective mass k (a URDF mimic with an offset starts open by the offset: its
  first step pushes the follower there, and is not an energy from nothing); a coupling's
  limit only when C is beyond its bound (its aim then pushes C back: k (aim)^2 / 2), inside
  the range it only slows an approach (no supply);
* a kinematic body that moves: it has no mass, so it can give any energy; a step in which
  one moves is not checked.

The step is flagged (ENERGY_JUMP) when its gain exceeds `max_energy_gain` (default 10) times
that sum, the supply. On the shipped scenes at their own dt (biped, joints 2 s; door_push,
chain, door, stack, pyramid, granular_pile, shapes, spinning_top 3 s; the MJCF humanoid
0.5 s) no step gained more than 0.48 times its supply (door_push; the rest below 0.26); a
1 kg box created 0.3 m deep in the floor gained 0.84 J in its first step against a supply of
0.0196 J. A thin ellipsoid spinning on a floor at dt 0.1 s once gained 7.6 J from about 2 J in
a step (34 times its supply, flagged); the cause was its rotation, turned by h w at 30 rad a
step, not the contact (solver.free_motion: such a body now turns by its L). Shot at the floor
at 50 m/s, it still leaves the impact at 600-700 rad/s (60-70 rad a step) and may gain up to
7.5 J of its 44 J in a step, within the bound. An absurd load (1e13 N) supplies the energy it gives
by this account, and is the speed bounds' to catch; so is a motor at an absurd voltage.

The pass before the step stores each dynamic body's kinetic and potential energy and speeds in
work.body_energy; the pass after compares, one visit per body and per motor each step.
"""
import math

from numba import njit

from .coupling import K_EFF, SIDE, TARGET
from .jit import KERNEL
from .math3 import quat_rotate
from .model import DYNAMIC, KINEMATIC, STAT_ENERGY_BODY, STAT_GAIN, STAT_SUPPLY

REL_KINETIC = 0.1    # what the solver may add in a step, a share of the kinetic energy
LIFT = 2e-3          # m: the position pass's correction against gravity counted as a supply
ROUNDING = 1e-9      # J: below this a gain is rounding


@njit(**KERNEL)
def body_energy(model, state, i, g):
    """(kinetic energy, potential energy, angular speed) of body i: m v^2 / 2 + L . I^-1 L / 2,
    -m g . x and |I^-1 L|, from its angular momentum L (the state the step keeps; the
    angular velocity a step starts from is the rate of its turn over h, not I^-1 L)."""
    q = state.body_quat[i]
    lb = quat_rotate((q[0], -q[1], -q[2], -q[3]),
                     (state.body_angmom[i, 0], state.body_angmom[i, 1], state.body_angmom[i, 2]))
    inv = model.body_inv_inertia[i]
    w0, w1, w2 = lb[0] * inv[0], lb[1] * inv[1], lb[2] * inv[2]
    m = 1.0 / model.body_inv_mass[i]
    v, x = state.body_vel[i], state.body_pos[i]
    kinetic = 0.5 * (m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                     + lb[0] * w0 + lb[1] * w1 + lb[2] * w2)
    return (kinetic, -m * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]),
            math.sqrt(w0 * w0 + w1 * w1 + w2 * w2))


@njit(**KERNEL)
def energy_before(model, state, work, settings):
    """Store each dynamic body's kinetic and potential energy, speed and angular speed at the
    start of the step (work.body_energy), and each motor's joint rate (work.motor_rate0)."""
    if not settings.max_energy_gain > 0.0:
        return
    e = work.body_energy
    for i in range(model.body_kind.shape[0]):
        if model.body_kind[i] != DYNAMIC:
            continue
        e[i, 0], e[i, 1], e[i, 3] = body_energy(model, state, i, settings.gravity)
        e[i, 2] = _norm(state.body_vel[i])
    for m in range(model.motor_joint.shape[0]):
        work.motor_rate0[m] = abs(state.joint_vel[model.motor_joint[m]])


@njit(**KERNEL)
def energy_jump(model, state, work, settings):
    """After the step: its energy gain and supply into solver_stats (STAT_GAIN, STAT_SUPPLY,
    STAT_ENERGY_BODY: 1 + the body that gained most); True if the gain exceeds
    max_energy_gain times the supply (0: off, and a moving kinematic body skips the check)."""
    stats = state.solver_stats
    stats[STAT_GAIN] = stats[STAT_SUPPLY] = stats[STAT_ENERGY_BODY] = 0.0
    factor = settings.max_energy_gain
    if not factor > 0.0:
        return False
    h, g = settings.dt, settings.gravity
    weight_g = math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
    e = work.body_energy
    gain = kinetic0 = supply = 0.0
    best, best_gain = -1, 0.0
    for i in range(model.body_kind.shape[0]):
        kind = model.body_kind[i]
        if kind == KINEMATIC:
            if _norm(state.body_vel[i]) > 0.0 or _norm(state.body_angvel[i]) > 0.0:
                return False
            continue
        if kind != DYNAMIC:
            continue
        kinetic, potential, turn = body_energy(model, state, i, g)
        d = kinetic + potential - e[i, 0] - e[i, 1]
        gain += d
        kinetic0 += e[i, 0]
        if best < 0 or d > best_gain:
            best, best_gain = i, d
        supply += h * (_norm(work.body_force_acc[i]) * max(e[i, 2], _norm(state.body_vel[i]))
                       + _norm(work.body_torque_acc[i]) * max(e[i, 3], turn))
        supply += LIFT * weight_g / model.body_inv_mass[i]
    for m in range(model.motor_joint.shape[0]):
        rate = max(work.motor_rate0[m], abs(state.joint_vel[model.motor_joint[m]]))
        supply += h * abs(state.motor_torque[m]) * rate
    for c in range(model.coupling_joint.shape[0]):
        aim = work.coupling_coef[c, TARGET]
        side = work.coupling_coef[c, SIDE]
        if side != 0.0:   # a limit's: only an aim that pushes (C beyond the bound)
            aim = max(side * aim, 0.0)
        supply += 0.5 * work.coupling_coef[c, K_EFF] * aim * aim
    supply += REL_KINETIC * kinetic0 + ROUNDING
    stats[STAT_GAIN] = gain
    stats[STAT_SUPPLY] = supply
    stats[STAT_ENERGY_BODY] = best + 1
    return gain > factor * supply


@njit(**KERNEL)
def _norm(v):
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
