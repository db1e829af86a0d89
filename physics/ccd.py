"""Continuous collision against static planes and boxes, at the level of positions: no shape's
centre crosses into a static plane or box within a step (issue 13: grains fell through the
floor at dt 0.05-0.1).

Speculative contacts (contact.py, contact_solver.py) stop most approaches: a pair closer than
the margin CONTACT_MARGIN + h |vB - vA| gets a row whose target lets the gap close to zero.
What they miss: motion the margin did not foresee (this step's forces, impulses from other
contacts, a spin that swings a far point down) and a Gauss-Seidel solve that stops short of
holding a pile.  The point then sinks into the static shape; past a thin box's mid-plane the
narrow phase's shortest way out is the far side, and the body is pushed through.

The guard runs after the position pass (Box2D v3 solves the continuous collision of fast
bodies against static shapes at the same place; Rapier's CCD clamps the motion too).  Each
geom g of a dynamic body has an inner point k_g, a point inside it: the centre of a
primitive, the mean of a hull's vertices (inside a convex polytope).  Its path over the step
is the segment

    p0 = x_g(t) + R_g(t) k_g   ->   p1 = x_g(t + h) + R_g(t + h) k_g

(x_g(t), R_g(t): scratch.geom_pos, geom_rot, the poses detection saw).  Against a static
plane n . x <= d: if s0 = n . p0 - d > 0 and s1 = n . p1 - d <= 0, the segment enters at
tau = s0 / (s0 - s1).  Against a static box (centre c, rotation Q, half extents e), in the
box frame a = Q^T (p0 - c), u = Q^T (p1 - p0): the slab test gives the entry tau and the face
it enters by (normal n_f, world), unless a lies inside already (a body that began inside
is left to the position pass).  On entry the body is moved by

    dx = (p0 + tau (p1 - p0) + GUARD_GAP n) - p1

(its orientation kept), so the inner point stops on the face, and the velocity loses its part
into the face, v -= min(n . v, 0) n (the face is static: a stop, without restitution).  The
inner point then lies outside the shape, so the next detection's shortest way out is back
through the face it came in by.  Sphere-like overlap of up to the shape's size is left to
the position pass.

Only pairs the broad phase would pair are guarded (collision groups and masks, bodies joined
by a joint): a static box that touches nothing stops nothing.
A stop moves one body, or, for a body of a floating jointed system (a walking robot), the
whole system by the same dx: a tree joint's child moved alone opened its joint, which the
next tree pass closed by putting the body back (dm_control's dog sliding on its floor:
finger_R open by 0.1 m at 0.9 s, JointGapError), and leaving such bodies unguarded let a
falling biped's hand sink 4 cm (tests/test_scene_biped_push.py).
Cost: each dynamic geom against each static plane or box, a box test first: O(dynamic geoms
x static planes and boxes) per step, no narrow phase.
"""
import math

from numba import njit

from .broadphase import may_collide
from .jit import KERNEL
from .math3 import quat_rotate
from .model import STATIC
from .shape import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, PLANE, SPHERE

_JIT = KERNEL

GUARD_GAP = 1e-6   # m: how far outside the face a stopped inner point is put


@njit(inline="always", **_JIT)
def _convex(kind):
    """The kinds whose inner point is known: the primitives and hulls."""
    return (kind == BOX or kind == SPHERE or kind == CAPSULE or kind == CYLINDER
            or kind == ELLIPSOID or kind == HULL)


@njit(**_JIT)
def _inner_point(kind, first, count, hull_vert):
    """k_g, in the geom's frame: 0 for a primitive, the mean of a hull's vertices (first,
    count: the geom's model.geom_hull row; arrays and numbers, not the named tuples: a call
    that takes a tuple costs a reference count per array in it)."""
    if kind != HULL:
        return 0.0, 0.0, 0.0
    k0 = k1 = k2 = 0.0
    for i in range(first, first + count):
        k0 += hull_vert[i, 0]
        k1 += hull_vert[i, 1]
        k2 += hull_vert[i, 2]
    s = 1.0 / max(count, 1)
    return k0 * s, k1 * s, k2 * s


@njit(**_JIT)
def _box_entry(a0, a1, a2, u0, u1, u2, e0, e1, e2):
    """The segment a + tau u (tau in [0, 1]) against the box |x_k| <= e_k: (tau, axis, sign)
    of its entry (the face sign e_axis), or tau = -1 if it does not enter or a is inside."""
    if abs(a0) < e0 and abs(a1) < e1 and abs(a2) < e2:
        return -1.0, 0, 0.0
    near, far, axis, side = -math.inf, math.inf, 0, 0.0
    for k in range(3):
        a = (a0, a1, a2)[k]
        u = (u0, u1, u2)[k]
        e = (e0, e1, e2)[k]
        if u == 0.0:
            if abs(a) > e:
                return -1.0, 0, 0.0
            continue
        t0 = (-e - a) / u
        t1 = (e - a) / u
        s = -1.0       # entering through -e_k when moving in +k
        if t0 > t1:
            t0, t1 = t1, t0
            s = 1.0
        if t0 > near:
            near, axis, side = t0, k, s
        far = min(far, t1)
    if near > far or near < 0.0 or near > 1.0:
        return -1.0, 0, 0.0
    return near, axis, side


@njit(inline="always", **_JIT)
def _moved(path, seg, o, d0, d1, d2):
    """Geom o's end point moved by d, and its path's box with it where the guard moves o."""
    path[o, 1, 0] += d0
    path[o, 1, 1] += d1
    path[o, 1, 2] += d2
    if seg[o, 0] <= seg[o, 3]:
        for q in range(3):
            seg[o, q] = min(path[o, 0, q], path[o, 1, q])
            seg[o, 3 + q] = max(path[o, 0, q], path[o, 1, q])


@njit(**_JIT)
def _stop(model, state, path, seg, g, tau, n0, n1, n2):
    """Move geom g's body (a body of a floating jointed system: the whole system) so that its
    inner point, at p1 = path[g, 1], goes to p0 + tau (p1 - p0) + GUARD_GAP n
    (p0 = path[g, 0]) and the moved geoms' end points (and their paths' boxes, seg) with it;
    drop the body's velocity into n."""
    b = model.geom_body[g]
    d0 = path[g, 0, 0] + tau * (path[g, 1, 0] - path[g, 0, 0]) + GUARD_GAP * n0 - path[g, 1, 0]
    d1 = path[g, 0, 1] + tau * (path[g, 1, 1] - path[g, 0, 1]) + GUARD_GAP * n1 - path[g, 1, 1]
    d2 = path[g, 0, 2] + tau * (path[g, 1, 2] - path[g, 0, 2]) + GUARD_GAP * n2 - path[g, 1, 2]
    k = model.body_island[b]
    if k >= 0 and model.island_floating[k]:
        # a body of a floating jointed system: the whole system moves, its joints stay closed
        for i in range(model.body_island.shape[0]):
            if model.body_island[i] == k:
                state.body_pos[i, 0] += d0
                state.body_pos[i, 1] += d1
                state.body_pos[i, 2] += d2
        for o in range(model.geom_body.shape[0]):
            if model.body_island[model.geom_body[o]] == k:
                _moved(path, seg, o, d0, d1, d2)
    else:
        state.body_pos[b, 0] += d0
        state.body_pos[b, 1] += d1
        state.body_pos[b, 2] += d2
        first = g   # a body's geoms are consecutive
        while first > 0 and model.geom_body[first - 1] == b:
            first -= 1
        end = g + 1
        while end < model.geom_body.shape[0] and model.geom_body[end] == b:
            end += 1
        for o in range(first, end):
            _moved(path, seg, o, d0, d1, d2)
    vn = n0 * state.body_vel[b, 0] + n1 * state.body_vel[b, 1] + n2 * state.body_vel[b, 2]
    if vn < 0.0:
        state.body_vel[b, 0] -= vn * n0
        state.body_vel[b, 1] -= vn * n1
        state.body_vel[b, 2] -= vn * n2


@njit(**_JIT)
def guard_static(model, state, scratch):
    """After the position pass: stop every dynamic geom's inner point on the face of a static
    plane or box it would have entered this step (module docstring); returns how many
    stops.  (Arrays are taken out of the tuples once and indexed in place: a helper call
    with a tuple, or a view per geom, cost more than the tests themselves.)"""
    kinds, gbody, dynamic = model.geom_kind, model.geom_body, model.body_dynamic
    gpos, grot = scratch.geom_pos, scratch.geom_rot
    path, seg = scratch.guard_path, scratch.guard_box
    lrot, lpos, hulls, verts = (model.geom_local_rot, model.geom_local_pos, model.geom_hull,
                                model.hull_vert)
    x, quat = state.body_pos, state.body_quat
    ngeom = kinds.shape[0]
    for g in range(ngeom):   # each inner point's path over the step, and its box
        if not (dynamic[gbody[g]] and _convex(kinds[g])):
            for q in range(3):   # (empty: no static box overlaps it, and no plane test runs)
                seg[g, q] = math.inf
                seg[g, 3 + q] = -math.inf
            continue
        k = _inner_point(kinds[g], hulls[g, 0], hulls[g, 1], verts)
        kb = (lpos[g, 0] + lrot[g, 0, 0] * k[0] + lrot[g, 0, 1] * k[1] + lrot[g, 0, 2] * k[2],
              lpos[g, 1] + lrot[g, 1, 0] * k[0] + lrot[g, 1, 1] * k[1] + lrot[g, 1, 2] * k[2],
              lpos[g, 2] + lrot[g, 2, 0] * k[0] + lrot[g, 2, 1] * k[1] + lrot[g, 2, 2] * k[2])
        b = gbody[g]
        off = quat_rotate((quat[b, 0], quat[b, 1], quat[b, 2], quat[b, 3]), kb)
        for q in range(3):
            path[g, 0, q] = (gpos[g, q] + grot[g, q, 0] * k[0] + grot[g, q, 1] * k[1]
                             + grot[g, q, 2] * k[2])
            path[g, 1, q] = x[b, q] + off[q]
            seg[g, q] = min(path[g, 0, q], path[g, 1, q])
            seg[g, 3 + q] = max(path[g, 0, q], path[g, 1, q])
    stops = 0
    box, plane, size = scratch.geom_aabb, scratch.geom_plane, model.geom_size
    groups, masks, excluded = model.geom_group, model.geom_mask, model.pair_excluded
    for s in range(ngeom):
        ks = kinds[s]
        if (ks != PLANE and ks != BOX) or model.body_kind[gbody[s]] != STATIC:
            continue
        # (the box test first, on the paths' boxes: each dynamic geom against each static
        # box made the tube's guard 157 us a step, most of it the filters of pairs far apart)
        for g in range(ngeom):
            if not seg[g, 0] <= seg[g, 3]:
                continue   # not guarded
            if ks == BOX and (seg[g, 3] < box[s, 0] or seg[g, 0] > box[s, 3]
                              or seg[g, 4] < box[s, 1] or seg[g, 1] > box[s, 4]
                              or seg[g, 5] < box[s, 2] or seg[g, 2] > box[s, 5]):
                continue   # the segment's box misses the static box's (grown by the margin)
            if not may_collide(g, s, gbody, dynamic, groups, masks, excluded):
                continue   # the pairs the broad phase never pairs (group, mask, joined)
            if ks == PLANE:
                s0 = (plane[s, 0] * path[g, 0, 0] + plane[s, 1] * path[g, 0, 1]
                      + plane[s, 2] * path[g, 0, 2] - plane[s, 3])
                s1 = (plane[s, 0] * path[g, 1, 0] + plane[s, 1] * path[g, 1, 1]
                      + plane[s, 2] * path[g, 1, 2] - plane[s, 3])
                if s0 > 0.0 and s1 <= 0.0:
                    _stop(model, state, path, seg, g, s0 / (s0 - s1), plane[s, 0], plane[s, 1],
                          plane[s, 2])
                    stops += 1
                continue
            c0, c1, c2 = (path[g, 0, 0] - gpos[s, 0], path[g, 0, 1] - gpos[s, 1],
                          path[g, 0, 2] - gpos[s, 2])
            w0, w1, w2 = (path[g, 1, 0] - path[g, 0, 0], path[g, 1, 1] - path[g, 0, 1],
                          path[g, 1, 2] - path[g, 0, 2])
            tau, axis, side = _box_entry(
                grot[s, 0, 0] * c0 + grot[s, 1, 0] * c1 + grot[s, 2, 0] * c2,
                grot[s, 0, 1] * c0 + grot[s, 1, 1] * c1 + grot[s, 2, 1] * c2,
                grot[s, 0, 2] * c0 + grot[s, 1, 2] * c1 + grot[s, 2, 2] * c2,
                grot[s, 0, 0] * w0 + grot[s, 1, 0] * w1 + grot[s, 2, 0] * w2,
                grot[s, 0, 1] * w0 + grot[s, 1, 1] * w1 + grot[s, 2, 1] * w2,
                grot[s, 0, 2] * w0 + grot[s, 1, 2] * w1 + grot[s, 2, 2] * w2,
                size[s, 0], size[s, 1], size[s, 2])
            if tau < 0.0:
                continue
            _stop(model, state, path, seg, g, tau, side * grot[s, 0, axis],
                  side * grot[s, 1, axis], side * grot[s, 2, axis])
            stops += 1
    return stops
