"""Each island's kinetic energy and momentum kept through the step's projections (solver.py).

Two stages of the step move velocities or poses onto the joints and would change what no
force changed: following the geometry (the velocities projected onto the joints at this step's
poses take a share (w h)^2 / 2 of the turning energy) and the position solve (poses moved
without their velocities change a floating island's orbital angular momentum). Here each
island of jointed bodies (model.body_island) gets back what they took, by a common scale of
its velocities and, for an island joined to nothing fixed (model.island_floating), a rigid
turn of the whole island (which keeps every joint inside it satisfied, J v = 0):

    kinetic_energy_by_island    the energy per island, before and after the projection
    restore_island_energy       follow_geometry's loss given back (stage follow_geometry)
    island_momentum_before      each floating island's angular momentum before the position
                                solve, and keep_island_momentum after it (stage
                                solve_positions)

work.island_acc (nisland, ISLAND_ACC) holds the per-island sums (model.ACC_*) and, once
summed, the per-island results the last pass over the bodies applies.
"""
import math

from numba import njit

from .jit import KERNEL
from .math3 import mat_vec, quat_to_mat
from .model import ACC_E, ACC_I, ACC_L, ACC_LPRE, ACC_MASS, ACC_MX, ACC_P

_JIT = KERNEL
MAX_RESTORED = 0.02   # largest share of an island's kinetic energy that counts as geometric loss


@njit(**_JIT)
def kinetic_energy_by_island(model, state, work, out):
    """out[island] = sum over its bodies of m v^2 / 2 + w . I w / 2 (I at the current pose)."""
    out[:] = 0.0
    R = work.body_rot
    for i in range(model.body_kind.shape[0]):
        k = model.body_island[i]
        if k < 0:
            continue
        w = (state.body_angvel[i, 0], state.body_angvel[i, 1], state.body_angvel[i, 2])
        I = model.body_inertia[i]
        rot = 0.0
        for c in range(3):
            wc = R[i, 0, c] * w[0] + R[i, 1, c] * w[1] + R[i, 2, c] * w[2]
            rot += I[c] * wc * wc
        v2 = state.body_vel[i, 0] ** 2 + state.body_vel[i, 1] ** 2 + state.body_vel[i, 2] ** 2
        out[k] += 0.5 * (v2 / model.body_inv_mass[i] + rot)


@njit(**_JIT)
def world_inertia(R, d):
    """The six numbers (xx, yy, zz, xy, xz, yz) of R diag(d) R^T: a body's inertia, world."""
    return (R[0, 0] * R[0, 0] * d[0] + R[0, 1] * R[0, 1] * d[1] + R[0, 2] * R[0, 2] * d[2],
            R[1, 0] * R[1, 0] * d[0] + R[1, 1] * R[1, 1] * d[1] + R[1, 2] * R[1, 2] * d[2],
            R[2, 0] * R[2, 0] * d[0] + R[2, 1] * R[2, 1] * d[1] + R[2, 2] * R[2, 2] * d[2],
            R[0, 0] * R[1, 0] * d[0] + R[0, 1] * R[1, 1] * d[1] + R[0, 2] * R[1, 2] * d[2],
            R[0, 0] * R[2, 0] * d[0] + R[0, 1] * R[2, 1] * d[1] + R[0, 2] * R[2, 2] * d[2],
            R[1, 0] * R[2, 0] * d[0] + R[1, 1] * R[2, 1] * d[1] + R[1, 2] * R[2, 2] * d[2])


@njit(**_JIT)
def add_island_body(acc, k, m, x, v, w, I):
    """Add a body (mass m, centre x, velocity v, angular velocity w, world inertia I as six
    numbers) to island k's sums: mass, momentum, first moment, angular momentum about the
    origin (x x m v + I w) and inertia about the origin (I + m (|x|^2 E - x x^T))."""
    ixx, iyy, izz, ixy, ixz, iyz = I
    p0, p1, p2 = m * v[0], m * v[1], m * v[2]
    acc[k, ACC_MASS] += m
    acc[k, ACC_P] += p0
    acc[k, ACC_P + 1] += p1
    acc[k, ACC_P + 2] += p2
    acc[k, ACC_MX] += m * x[0]
    acc[k, ACC_MX + 1] += m * x[1]
    acc[k, ACC_MX + 2] += m * x[2]
    acc[k, ACC_L] += x[1] * p2 - x[2] * p1 + ixx * w[0] + ixy * w[1] + ixz * w[2]
    acc[k, ACC_L + 1] += x[2] * p0 - x[0] * p2 + ixy * w[0] + iyy * w[1] + iyz * w[2]
    acc[k, ACC_L + 2] += x[0] * p1 - x[1] * p0 + ixz * w[0] + iyz * w[1] + izz * w[2]
    x2s = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    acc[k, ACC_I] += ixx + m * (x2s - x[0] * x[0])
    acc[k, ACC_I + 1] += iyy + m * (x2s - x[1] * x[1])
    acc[k, ACC_I + 2] += izz + m * (x2s - x[2] * x[2])
    acc[k, ACC_I + 3] += ixy - m * x[0] * x[1]
    acc[k, ACC_I + 4] += ixz - m * x[0] * x[2]
    acc[k, ACC_I + 5] += iyz - m * x[1] * x[2]


@njit(**_JIT)
def island_about_centre(acc, k):
    """From island k's sums: its centre of mass c and its inertia about c,
    I_c = I_o - M (|c|^2 E - c c^T), as (c0, c1, c2, a00, a11, a22, a01, a02, a12)."""
    M = acc[k, ACC_MASS]
    c0, c1, c2 = acc[k, ACC_MX] / M, acc[k, ACC_MX + 1] / M, acc[k, ACC_MX + 2] / M
    c2s = c0 * c0 + c1 * c1 + c2 * c2
    return (c0, c1, c2,
            acc[k, ACC_I] - M * (c2s - c0 * c0), acc[k, ACC_I + 1] - M * (c2s - c1 * c1),
            acc[k, ACC_I + 2] - M * (c2s - c2 * c2), acc[k, ACC_I + 3] + M * c0 * c1,
            acc[k, ACC_I + 4] + M * c0 * c2, acc[k, ACC_I + 5] + M * c1 * c2)


@njit(**_JIT)
def solve_symmetric3(a00, a11, a22, a01, a02, a12, l0, l1, l2):
    """x with A x = l for the symmetric A (by its adjugate); zeros when A is not positive."""
    b00 = a11 * a22 - a12 * a12
    b01 = a02 * a12 - a01 * a22
    b02 = a01 * a12 - a02 * a11
    det = a00 * b00 + a01 * b01 + a02 * b02
    if not det > 0.0:
        return 0.0, 0.0, 0.0
    b11 = a00 * a22 - a02 * a02
    b12 = a01 * a02 - a00 * a12
    b22 = a00 * a11 - a01 * a01
    return ((b00 * l0 + b01 * l1 + b02 * l2) / det, (b01 * l0 + b11 * l1 + b12 * l2) / det,
            (b02 * l0 + b12 * l1 + b22 * l2) / det)


@njit(**_JIT)
def restore_island_energy(model, state, work, before, after):
    """Give each island the kinetic energy the projection onto the joints took (follow_geometry).

    An island held by a static body: v_i, w_i *= f, f = sqrt(E_before / E_after) for all its
    bodies (a common scale keeps J v = 0).
    A floating island (joined to nothing fixed) must keep its momentum P and angular momentum
    L, which a common scale would scale too. Its motion splits into the rigid motion of the
    whole island and the rest:
        M = sum m_i,  c = sum m_i x_i / M,  v_c = P / M,
        L_c = sum (x_i - c) x m_i v_i + I_i w_i,   I_c = sum I_i + m_i (|r_i|^2 E - r_i r_i^T),
        Omega = I_c^-1 L_c,  r_i = x_i - c,
        rigid:  v_i^R = v_c + Omega x r_i,  w_i^R = Omega,
        E_R = (M |v_c|^2 + Omega . L_c) / 2.
    The rest carries no momentum and no angular momentum (it is orthogonal to every rigid
    motion in the kinetic-energy metric), so E = E_R + E_rest, and only the rest is scaled:
        v_i = v_i^R + f (v_i - v_i^R),  w_i = Omega + f (w_i - Omega),
        f = sqrt((E_before - E_R) / (E_after - E_R)).
    A rigid motion of the whole island satisfies every joint inside it, so J v = 0 still holds.
    Islands driven by kinematic bodies, and losses larger than MAX_RESTORED, are left as they
    are.
    """
    vel, angvel, pos = state.body_vel, state.body_angvel, state.body_pos
    acc = work.island_acc
    acc[:] = 0.0
    nbody = model.body_kind.shape[0]
    for i in range(nbody):
        k = model.body_island[i]
        if k < 0 or not model.island_floating[k]:
            continue
        add_island_body(acc, k, 1.0 / model.body_inv_mass[i], pos[i], vel[i], angvel[i],
                        world_inertia(work.body_rot[i], model.body_inertia[i]))
    # per island: the scale f, and for floating islands c, v_c, Omega (overwriting the sums)
    for k in range(acc.shape[0]):
        f = 1.0
        if k < after.shape[0] and after[k] > 0.0 and not model.island_driven[k]:
            lost = (before[k] - after[k]) / before[k]
            if 0.0 < lost < MAX_RESTORED:
                f = math.sqrt(before[k] / after[k])
        if f != 1.0 and model.island_floating[k]:
            M = acc[k, ACC_MASS]
            P0, P1, P2 = acc[k, ACC_P], acc[k, ACC_P + 1], acc[k, ACC_P + 2]
            c0, c1, c2, a00, a11, a22, a01, a02, a12 = island_about_centre(acc, k)
            # about the centre of mass: L_c = L_o - c x P; Omega = I_c^-1 L_c
            l0 = acc[k, ACC_L] - (c1 * P2 - c2 * P1)
            l1 = acc[k, ACC_L + 1] - (c2 * P0 - c0 * P2)
            l2 = acc[k, ACC_L + 2] - (c0 * P1 - c1 * P0)
            o0, o1, o2 = solve_symmetric3(a00, a11, a22, a01, a02, a12, l0, l1, l2)
            e_rigid = 0.5 * ((P0 * P0 + P1 * P1 + P2 * P2) / M + o0 * l0 + o1 * l1 + o2 * l2)
            rest_after = after[k] - e_rigid
            rest_before = before[k] - e_rigid
            f = (math.sqrt(rest_before / rest_after)
                 if rest_after > 1e-12 * after[k] and rest_before > 0.0 else 1.0)
            acc[k, 1], acc[k, 2], acc[k, 3] = c0, c1, c2
            acc[k, 4], acc[k, 5], acc[k, 6] = P0 / M, P1 / M, P2 / M
            acc[k, 7], acc[k, 8], acc[k, 9] = o0, o1, o2
        acc[k, 0] = f
    for i in range(nbody):
        k = model.body_island[i]
        if k < 0 or acc[k, 0] == 1.0:
            continue
        f = acc[k, 0]
        if not model.island_floating[k]:
            for q in range(3):
                vel[i, q] *= f
                angvel[i, q] *= f
            continue
        r0, r1, r2 = pos[i, 0] - acc[k, 1], pos[i, 1] - acc[k, 2], pos[i, 2] - acc[k, 3]
        o0, o1, o2 = acc[k, 7], acc[k, 8], acc[k, 9]
        vr0 = acc[k, 4] + o1 * r2 - o2 * r1
        vr1 = acc[k, 5] + o2 * r0 - o0 * r2
        vr2 = acc[k, 6] + o0 * r1 - o1 * r0
        vel[i, 0] = vr0 + f * (vel[i, 0] - vr0)
        vel[i, 1] = vr1 + f * (vel[i, 1] - vr1)
        vel[i, 2] = vr2 + f * (vel[i, 2] - vr2)
        angvel[i, 0] = o0 + f * (angvel[i, 0] - o0)
        angvel[i, 1] = o1 + f * (angvel[i, 1] - o1)
        angvel[i, 2] = o2 + f * (angvel[i, 2] - o2)


@njit(**_JIT)
def island_momentum_before(model, state, work):
    """island_acc[k, ACC_LPRE:ACC_LPRE + 3] = sum x_i x m_i v_i + I_i w_i over each floating
    island, before the position pass (see keep_island_momentum)."""
    acc = work.island_acc
    acc[:] = 0.0
    pos, vel, angvel = state.body_pos, state.body_vel, state.body_angvel
    for i in range(model.body_kind.shape[0]):
        k = model.body_island[i]
        if k < 0 or not model.island_floating[k]:
            continue
        m = 1.0 / model.body_inv_mass[i]
        ixx, iyy, izz, ixy, ixz, iyz = world_inertia(work.body_rot[i], model.body_inertia[i])
        x, v, w = pos[i], vel[i], angvel[i]
        acc[k, ACC_LPRE] += m * (x[1] * v[2] - x[2] * v[1]) + ixx * w[0] + ixy * w[1] + ixz * w[2]
        acc[k, ACC_LPRE + 1] += (m * (x[2] * v[0] - x[0] * v[2]) + ixy * w[0] + iyy * w[1]
                                 + iyz * w[2])
        acc[k, ACC_LPRE + 2] += (m * (x[0] * v[1] - x[1] * v[0]) + ixz * w[0] + iyz * w[1]
                                 + izz * w[2])


@njit(**_JIT)
def keep_island_momentum(model, state, work):
    """Give a floating island back the angular momentum the position pass took, keeping its
    kinetic energy.

    The position pass moves bodies without touching their velocities (poses only). It keeps
    the centre of mass c of a floating island, so P, but not its orbital angular momentum:
    moving body i by dx_i changes L by dL = sum m_i dx_i x v_i (the pass pulls bodies that
    drifted outward along straight lines back in, so dL is a steady loss). A rigid turn of the
    whole island gives it back and keeps P and J v = 0:
        dOmega = -I_c^-1 dL,  v_i += dOmega x r_i,  w_i += dOmega,   r_i = x_i - c.
    That turn adds the energy dE = dOmega . L_c + dOmega . I_c dOmega / 2; the motion that is
    not rigid (restore_island_energy) is scaled to take it back, so E is what it was:
        Omega = I_c^-1 L_c (the turned L_c),  E_R = (|P|^2 / M + Omega . L_c) / 2,
        v_i = v_i^R + f (v_i - v_i^R),  w_i = Omega + f (w_i - Omega),
        f = sqrt((E - E_R) / (E + dE - E_R)).
    Each body's own angular momentum follows its angular velocity: L_i += I_i (w_i' - w_i).
    """
    acc = work.island_acc
    pos, vel, angvel = state.body_pos, state.body_vel, state.body_angvel
    R = work.body_rot
    nbody = model.body_kind.shape[0]
    for i in range(nbody):
        k = model.body_island[i]
        if k < 0 or not model.island_floating[k]:
            continue
        m = 1.0 / model.body_inv_mass[i]
        quat_to_mat(state.body_quat[i], R[i])   # the pose the pass left (it turns bodies)
        inertia = world_inertia(R[i], model.body_inertia[i])
        add_island_body(acc, k, m, pos[i], vel[i], angvel[i], inertia)
        ixx, iyy, izz, ixy, ixz, iyz = inertia
        w0, w1, w2 = angvel[i, 0], angvel[i, 1], angvel[i, 2]
        acc[k, ACC_E] += 0.5 * (m * (vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2)
                                + w0 * (ixx * w0 + ixy * w1 + ixz * w2)
                                + w1 * (ixy * w0 + iyy * w1 + iyz * w2)
                                + w2 * (ixz * w0 + iyz * w1 + izz * w2))
    # per island (results over the sums): 0 f, 1-3 c, 4-6 dOmega, 7-9 Omega, 10-12 v_c
    for k in range(acc.shape[0]):
        M = acc[k, ACC_MASS]
        if not M > 0.0:
            continue
        P0, P1, P2 = acc[k, ACC_P], acc[k, ACC_P + 1], acc[k, ACC_P + 2]
        c0, c1, c2, a00, a11, a22, a01, a02, a12 = island_about_centre(acc, k)
        # -dL, the angular momentum the pass took
        n0 = acc[k, ACC_LPRE] - acc[k, ACC_L]
        n1 = acc[k, ACC_LPRE + 1] - acc[k, ACC_L + 1]
        n2 = acc[k, ACC_LPRE + 2] - acc[k, ACC_L + 2]
        d0, d1, d2 = solve_symmetric3(a00, a11, a22, a01, a02, a12, n0, n1, n2)
        # L about c now, and as it is to be
        l0 = acc[k, ACC_L] - (c1 * P2 - c2 * P1)
        l1 = acc[k, ACC_L + 1] - (c2 * P0 - c0 * P2)
        l2 = acc[k, ACC_L + 2] - (c0 * P1 - c1 * P0)
        e = acc[k, ACC_E]
        e_turned = e + d0 * l0 + d1 * l1 + d2 * l2 + 0.5 * (
            d0 * (a00 * d0 + a01 * d1 + a02 * d2) + d1 * (a01 * d0 + a11 * d1 + a12 * d2)
            + d2 * (a02 * d0 + a12 * d1 + a22 * d2))
        t0, t1, t2 = l0 + n0, l1 + n1, l2 + n2
        W0, W1, W2 = solve_symmetric3(a00, a11, a22, a01, a02, a12, t0, t1, t2)
        e_rigid = 0.5 * ((P0 * P0 + P1 * P1 + P2 * P2) / M + W0 * t0 + W1 * t1 + W2 * t2)
        f = 1.0
        if e_turned - e_rigid > 1e-12 * e and e - e_rigid > 0.0:
            f = math.sqrt((e - e_rigid) / (e_turned - e_rigid))
        acc[k, 0], acc[k, 1], acc[k, 2], acc[k, 3] = f, c0, c1, c2
        acc[k, 4], acc[k, 5], acc[k, 6] = d0, d1, d2
        acc[k, 7], acc[k, 8], acc[k, 9] = W0, W1, W2
        acc[k, 10], acc[k, 11], acc[k, 12] = P0 / M, P1 / M, P2 / M
    for i in range(nbody):
        k = model.body_island[i]
        if k < 0 or not model.island_floating[k]:
            continue
        f = acc[k, 0]
        r0, r1, r2 = pos[i, 0] - acc[k, 1], pos[i, 1] - acc[k, 2], pos[i, 2] - acc[k, 3]
        d0, d1, d2 = acc[k, 4], acc[k, 5], acc[k, 6]
        W0, W1, W2 = acc[k, 7], acc[k, 8], acc[k, 9]
        # turned, then the part that is not rigid scaled by f
        vt0 = vel[i, 0] + d1 * r2 - d2 * r1
        vt1 = vel[i, 1] + d2 * r0 - d0 * r2
        vt2 = vel[i, 2] + d0 * r1 - d1 * r0
        vr0 = acc[k, 10] + W1 * r2 - W2 * r1
        vr1 = acc[k, 11] + W2 * r0 - W0 * r2
        vr2 = acc[k, 12] + W0 * r1 - W1 * r0
        vel[i, 0] = vr0 + f * (vt0 - vr0)
        vel[i, 1] = vr1 + f * (vt1 - vr1)
        vel[i, 2] = vr2 + f * (vt2 - vr2)
        dw0 = W0 + f * (angvel[i, 0] + d0 - W0) - angvel[i, 0]
        dw1 = W1 + f * (angvel[i, 1] + d1 - W1) - angvel[i, 1]
        dw2 = W2 + f * (angvel[i, 2] + d2 - W2) - angvel[i, 2]
        angvel[i, 0] += dw0
        angvel[i, 1] += dw1
        angvel[i, 2] += dw2
        dl = mat_vec(R[i], (
            (R[i, 0, 0] * dw0 + R[i, 1, 0] * dw1 + R[i, 2, 0] * dw2) * model.body_inertia[i, 0],
            (R[i, 0, 1] * dw0 + R[i, 1, 1] * dw1 + R[i, 2, 1] * dw2) * model.body_inertia[i, 1],
            (R[i, 0, 2] * dw0 + R[i, 1, 2] * dw1 + R[i, 2, 2] * dw2) * model.body_inertia[i, 2]))
        for q in range(3):
            state.body_angmom[i, q] += dl[q]
