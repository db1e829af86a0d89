"""The drag: a spring-damper that pulls one body toward a target, applied inside every step
(MuJoCo's perturbation, what its viewer does when you drag a body with the mouse).

The state says what is dragged (`drag_*` arrays, model.State): a body, a point on it (body
frame), a world target for that point and/or a target orientation, a stiffness k (1/s^2),
a damping ratio zeta and caps on the force and the torque.  Every step `add_drag` turns them
into a force at the point and a torque, from the body's pose and velocity of THAT step, so
the pull is the same whatever rate the target is updated at.

The law.  The grabbed point p = x + r (r = R r_body) should move as a critically damped
oscillator toward the target:  p'' = k e - c p',  e = target - p,  c = 2 zeta sqrt(k).
The force that gives a free body that acceleration is F = M (k e - c v_p), M = K^-1 the
body's effective mass matrix at p,

    K = 1/m 1 - [r]x I_w^-1 [r]x        (the point's velocity change per impulse at p),

so light and heavy bodies, pulled at their centre or at a corner, answer alike.  Along the
pull this is 1 / (1/m + (r x n) . I_w^-1 (r x n)) as in MuJoCo's viewer.  The spring is
integrated implicitly (the velocity it aims at is the one after the step):

    v_p+ = (v_p + h k e) / (1 + h c + h^2 k),   impulse P = M (v_p+ - v_p),   F = P / h,

which is stable at any h and for any mass ratio (the force held over a whole 0.1 s frame,
as the app once did, was not: with c h = 2.5 > 2 and a velocity from the last two frames
the door swung at up to 47 rad/s).  A joint or a contact only takes mobility away: the
point's velocity changes by a share alpha in [0, 1] of what a free body's would, a blend of
this step and no change, so the approach is slower (a door pulled at its centre, alpha =
m d^2 / I_hinge = 0.75: 2 Hz * sqrt(alpha), damping ratio sqrt(alpha)) and stays stable.
A body jointed to other dynamic bodies (a robot's hand) is pulled with the effective mass of
the whole jointed system at the point instead, M = W^+, W = J_p P J_p^T (P the bodies' part of
the inverse of [[M, G^T], [G, 0]] over the system's joint locks G; W^+ the pseudo-inverse: no
pull along a locked direction), which World.set_drag works out once per grab (drag_mass), as
MuJoCo scales its perturbation by the body's weight in the whole tree: dragging a light hand
moves the arm it is on. At rest against another force (gravity, the hinge's friction) the
spring holds with M k e / (1 + h c + h^2 k), 11 % softer than k at dt 1/240 s and 27 % at
0.01 s: the price of an implicit force computed before the solve (a soft constraint solved
with the joints would hold with k exactly).  Turning is the same law on the rotation vector
e = log(q_target q^-1) with the inertia I_w in place of M.  |F| and |torque| are capped.

The force goes into the step's force accumulators (applied with gravity and the loads,
solver.apply_forces) and is kept in drag_force / drag_torque for reports.
"""
import math

from numba import njit

from .jit import KERNEL
from .math3 import add, cross, dot, mat_vec, quat_mul, rotation_vector, scale, sub
from .model import DYNAMIC

_JIT = KERNEL

STIFFNESS = (2.0 * math.pi * 2.0) ** 2  # 1/s^2: a 2 Hz spring whatever the body's mass
DAMPING_RATIO = 1.0                     # critical damping
FORCE_CAP_G = 50.0                      # default cap: the force is at most 50 times the weight
STANDARD_GRAVITY = 9.81                 # for that cap when the world has no gravity


@njit(**_JIT)
def _det3(a, b, c):
    """det [a b c] (columns) = a . (b x c)."""
    return dot(a, cross(b, c))


@njit(**_JIT)
def _capped(v, cap):
    size = math.sqrt(dot(v, v))
    return scale(v, cap / size) if size > cap else v


@njit(**_JIT)
def point_impulse(inv_mass, inv_inertia, r, dv):
    """The impulse P at the point r (from the centre of mass, world) that changes the point's
    velocity by dv on a free body: K P = dv, K = 1/m 1 - [r]x I_w^-1 [r]x (Cramer's rule on
    K's columns K e_j = e_j / m - r x I_w^-1 (r x e_j); K >= 1/m, never singular)."""
    c0 = sub((inv_mass, 0.0, 0.0), cross(r, mat_vec(inv_inertia, cross(r, (1.0, 0.0, 0.0)))))
    c1 = sub((0.0, inv_mass, 0.0), cross(r, mat_vec(inv_inertia, cross(r, (0.0, 1.0, 0.0)))))
    c2 = sub((0.0, 0.0, inv_mass), cross(r, mat_vec(inv_inertia, cross(r, (0.0, 0.0, 1.0)))))
    det = _det3(c0, c1, c2)
    return (_det3(dv, c1, c2) / det, _det3(c0, dv, c2) / det, _det3(c0, c1, dv) / det)


@njit(**_JIT)
def add_drag(model, state, work, h, force, torque):
    """Add this step's drag force and torque to the accumulators force, torque (nbody, 3),
    from the dragged body's current pose (work.body_rot, body_inv_inertia_world) and velocity;
    record them in drag_force (at the point) and drag_torque (about the centre of mass)."""
    state.drag_force[:] = 0.0
    state.drag_torque[:] = 0.0
    i = state.drag_body[0]
    if i < 0 or i >= model.body_kind.shape[0] or model.body_kind[i] != DYNAMIC:
        return
    k, zeta, max_force, max_torque = (state.drag_param[0], state.drag_param[1],
                                      state.drag_param[2], state.drag_param[3])
    c = 2.0 * zeta * math.sqrt(k)
    # v+ - v = (h k e - (h c + h^2 k) v) / (1 + h c + h^2 k): the implicit spring-damper
    a, b = h * k, h * c + h * h * k
    inv_d = 1.0 / (1.0 + b)
    R = work.body_rot[i]
    v = (state.body_vel[i, 0], state.body_vel[i, 1], state.body_vel[i, 2])
    w = (state.body_angvel[i, 0], state.body_angvel[i, 1], state.body_angvel[i, 2])
    f = (0.0, 0.0, 0.0)
    tau = (0.0, 0.0, 0.0)
    if state.drag_flags[0]:
        # pull the point: force F at p, torque r x F
        r = mat_vec(R, (state.drag_point[0], state.drag_point[1], state.drag_point[2]))
        p = (state.body_pos[i, 0] + r[0], state.body_pos[i, 1] + r[1], state.body_pos[i, 2] + r[2])
        e = (state.drag_target[0] - p[0], state.drag_target[1] - p[1], state.drag_target[2] - p[2])
        vp = add(v, cross(w, r))
        dv = scale(sub(scale(e, a), scale(vp, b)), inv_d)
        if state.drag_mass[0, 0] > 0.0 or state.drag_mass[1, 1] > 0.0 or \
                state.drag_mass[2, 2] > 0.0:   # the jointed system's (World.set_drag)
            P = mat_vec(state.drag_mass, dv)
        else:
            P = point_impulse(model.body_inv_mass[i], work.body_inv_inertia_world[i], r, dv)
        f = _capped(scale(P, 1.0 / h), max_force)
        tau = cross(r, f)
    if state.drag_flags[1]:
        # turn toward the target orientation: torque I_w dw / h, I_w = R diag(I) R^T
        q = (state.body_quat[i, 0], -state.body_quat[i, 1], -state.body_quat[i, 2],
             -state.body_quat[i, 3])
        e = rotation_vector(quat_mul((state.drag_quat[0], state.drag_quat[1],
                                      state.drag_quat[2], state.drag_quat[3]), q))
        dw = scale(sub(scale(e, a), scale(w, b)), inv_d)
        inertia = model.body_inertia[i]
        local = (R[0, 0] * dw[0] + R[1, 0] * dw[1] + R[2, 0] * dw[2],
                 R[0, 1] * dw[0] + R[1, 1] * dw[1] + R[2, 1] * dw[2],
                 R[0, 2] * dw[0] + R[1, 2] * dw[1] + R[2, 2] * dw[2])
        L = mat_vec(R, (inertia[0] * local[0], inertia[1] * local[1], inertia[2] * local[2]))
        tau = add(tau, _capped(scale(L, 1.0 / h), max_torque))
    for q in range(3):
        force[i, q] += f[q]
        torque[i, q] += tau[q]
        state.drag_force[q] = f[q]
        state.drag_torque[q] = tau[q]
