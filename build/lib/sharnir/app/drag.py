"""Dragging bodies with the mouse, as in MuJoCo's viewer.

Picking: a ray from the eye through the cursor, intersected exactly with every body's shape
in that body's frame (box: slab test; sphere and ellipsoid: a scaled unit sphere; cylinder:
side and flat caps; capsule: side and the two end spheres; hull: the ray clipped by the
half-spaces of its faces, n . x <= offset; compound: each part in its own frame, the
nearest); the nearest hit wins.

The drag law: a spring-damper pulls the grabbed point p = x + R r toward the target, a
point that follows the cursor in the view plane through the grab point.  The force is
scaled by the effective mass at p along the pull, 1 / (1/m + (r x n) . I_world^-1 (r x n)),
so that light and heavy bodies answer alike (stiffness in 1/s^2, critical damping), capped
at FORCE_CAP_G times the body's weight, and applied at p (a force at the centre of mass
plus the torque (p - x) x F).  Rotating (Ctrl) is the same spring on the angle about the
view axis, scaled by the effective inertia about that axis.

Everything here but `SpringDrawing` is plain numpy (no GL, no window).
"""
import math

import numpy as np

from sharnir.physics.shape import (
    BOX,
    CAPSULE,
    CYLINDER,
    ELLIPSOID,
    HULL,
    PLANE,
    SPHERE,
    Compound,
    Hull,
)
from sharnir.physics.shape import geoms as shape_geoms
from sharnir.render.instances import point_instances, rotation_matrices

STIFFNESS = (2.0 * math.pi * 2.0) ** 2  # 1/s^2: a 2 Hz spring whatever the body's mass
DAMPING_RATIO = 1.0                     # critical damping
FORCE_CAP_G = 50.0                      # the force is at most this many times the weight
ROTATE_RAD_PER_PX = 0.01                # Ctrl-drag: target angle per pixel of cursor motion
STANDARD_GRAVITY = 9.81                 # for the cap when the world has no gravity
SPRING_COLOUR = (1.0, 0.85, 0.2)
GRAB_COLOUR = (1.0, 0.3, 0.2)
MARKER_SIZE = 0.008                     # marker radius as a fraction of the view's half height


# ---- picking ---------------------------------------------------------------------------------
def cursor_ray(camera, x, y, width, height):
    """The ray (origin = eye, unit direction) through window pixel (x, y) (origin at the
    bottom left, as pyglet gives it) of a width x height view."""
    inv = np.linalg.inv(camera.view_projection(width / max(height, 1)))
    ndc = np.array([2.0 * x / width - 1.0, 2.0 * y / height - 1.0, 1.0, 1.0])
    far = inv @ ndc
    eye = np.asarray(camera.eye, dtype=float)
    direction = far[:3] / far[3] - eye
    return eye, direction / np.linalg.norm(direction)


def project(camera, point, width, height):
    """Window pixel (x, y) of a world point (the inverse of `cursor_ray`)."""
    clip = camera.view_projection(width / max(height, 1)) @ np.append(point, 1.0)
    ndc = clip[:2] / clip[3]
    return (ndc[0] + 1.0) * width / 2.0, (ndc[1] + 1.0) * height / 2.0


def _quadratic_roots(a, b, c):
    disc = b * b - 4.0 * a * c
    if a <= 0.0 or disc < 0.0:
        return ()
    s = math.sqrt(disc)
    return ((-b - s) / (2.0 * a), (-b + s) / (2.0 * a))


def _sphere_hits(o, d, centre, semi_axes):
    """Ray parameters where o + t d meets an axis-aligned ellipsoid."""
    os_, ds = (o - centre) / semi_axes, d / semi_axes
    return _quadratic_roots(ds @ ds, 2.0 * (os_ @ ds), os_ @ os_ - 1.0)


def _box_hits(o, d, half):
    t0, t1 = -math.inf, math.inf
    for k in range(3):
        if abs(d[k]) < 1e-15:
            if abs(o[k]) > half[k]:
                return ()
            continue
        a, b = (-half[k] - o[k]) / d[k], (half[k] - o[k]) / d[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
    return (t0, t1) if t0 <= t1 else ()


def _cylinder_hits(o, d, radius, half_length, caps):
    """Hits of the side |z| <= half_length and, with caps, of the two flat ends."""
    hits = [t for t in _quadratic_roots(d[0] ** 2 + d[1] ** 2, 2.0 * (o[0] * d[0] + o[1] * d[1]),
                                        o[0] ** 2 + o[1] ** 2 - radius ** 2)
            if abs(o[2] + t * d[2]) <= half_length]
    if caps and abs(d[2]) > 1e-15:
        for z in (-half_length, half_length):
            t = (z - o[2]) / d[2]
            q = o + t * d
            if q[0] ** 2 + q[1] ** 2 <= radius ** 2:
                hits.append(t)
    return hits


def _hull_hits(o, d, normals, offsets):
    """Entry and exit parameters of o + t d through the convex polytope n_k . x <= offset_k
    (Cyrus-Beck clipping: each face plane cuts the interval)."""
    denom = normals @ d
    room = offsets - normals @ o          # >= 0 where o is inside the face's half-space
    flat = np.abs(denom) < 1e-15
    if np.any(flat & (room < 0.0)):
        return ()                          # parallel to a face and outside it
    t = room[~flat] / denom[~flat]
    entering = denom[~flat] < 0.0
    t0 = np.max(t[entering]) if np.any(entering) else -math.inf
    t1 = np.min(t[~entering]) if np.any(~entering) else math.inf
    return (float(t0), float(t1)) if t0 <= t1 else ()


def shape_hit(shape, origin, direction):
    """The smallest t >= 0 where origin + t direction (body frame) meets the shape, or None.
    A Hull or Compound is tested piece by piece (physics.shape.geoms: each piece's pose in
    the body frame); rotations keep t the same in every frame."""
    o, d = np.asarray(origin, dtype=float), np.asarray(direction, dtype=float)
    if isinstance(shape, (Hull, Compound)):
        ts = [_leaf_hit(leaf, R.T @ (o - p), R.T @ d) for leaf, p, R in shape_geoms(shape)]
        ts = [t for t in ts if t is not None]
        return min(ts) if ts else None
    return _leaf_hit(shape, o, d)


def _leaf_hit(shape, o, d):
    """shape_hit for a primitive, or a hull in its own frame."""
    if shape.kind == HULL:
        ahead = [t for t in _hull_hits(o, d, shape.face_normals, shape.face_offsets) if t >= 0.0]
        return min(ahead) if ahead else None
    a, b, c = shape.size
    if shape.kind == BOX:
        hits = _box_hits(o, d, np.array([a, b, c]))
    elif shape.kind == SPHERE:
        hits = _sphere_hits(o, d, np.zeros(3), np.array([a, a, a]))
    elif shape.kind == ELLIPSOID:
        hits = _sphere_hits(o, d, np.zeros(3), np.array([a, b, c]))
    elif shape.kind == CYLINDER:
        hits = _cylinder_hits(o, d, a, b, caps=True)
    elif shape.kind == CAPSULE:
        hits = list(_cylinder_hits(o, d, a, b, caps=False))
        for z in (-b, b):
            hits += [t for t in _sphere_hits(o, d, np.array([0.0, 0.0, z]), np.array([a, a, a]))
                     if (o[2] + t * d[2]) * z >= 0.0]  # the outer half of each end sphere
    elif shape.kind == PLANE:
        return None  # the ground is never grabbed
    else:
        raise ValueError(f"unknown shape kind {shape.kind!r}")
    ahead = [t for t in hits if t >= 0.0]
    return min(ahead) if ahead else None


def pick(origin, direction, body_pos, body_quat, body_shapes):
    """The nearest body the ray meets: (body index, grab point in the body frame, distance
    along the ray), or None.  Shapeless bodies are never hit."""
    best = None
    rots = rotation_matrices(body_quat)
    origin, direction = np.asarray(origin, dtype=float), np.asarray(direction, dtype=float)
    for i, shape in enumerate(body_shapes):
        if shape is None:
            continue
        R = rots[i]
        o_local = R.T @ (origin - np.asarray(body_pos[i], dtype=float))
        t = shape_hit(shape, o_local, R.T @ direction)
        if t is not None and (best is None or t < best[2]):
            best = (i, o_local + t * (R.T @ direction), t)
    return best


# ---- the drag law ----------------------------------------------------------------------------
def _inverse_world_inertia(inertia, R):
    return R @ np.diag(1.0 / np.asarray(inertia, dtype=float)) @ R.T


def effective_mass(mass, inertia, R, r_world, n):
    """The mass felt pushing the body's point at r_world (from the centre of mass) along the
    unit vector n: 1 / (1/m + (r x n) . I_world^-1 (r x n))."""
    rn = np.cross(r_world, n)
    return 1.0 / (1.0 / mass + rn @ _inverse_world_inertia(inertia, R) @ rn)


def spring_force(mass, inertia, R, r_world, point, point_vel, target, gravity=STANDARD_GRAVITY,
                 stiffness=STIFFNESS, damping_ratio=DAMPING_RATIO):
    """The capped spring-damper force pulling `point` (moving at point_vel) to `target`."""
    error = np.asarray(target, dtype=float) - np.asarray(point, dtype=float)
    vel = np.asarray(point_vel, dtype=float)
    norm = np.linalg.norm(error)
    if norm > 1e-12:
        n = error / norm
    elif np.linalg.norm(vel) > 1e-12:
        n = vel / np.linalg.norm(vel)
    else:
        return np.zeros(3)
    m_eff = effective_mass(mass, inertia, R, r_world, n)
    force = m_eff * (stiffness * error - 2.0 * damping_ratio * math.sqrt(stiffness) * vel)
    return _capped(force, FORCE_CAP_G * mass * (gravity if gravity > 0.0 else STANDARD_GRAVITY))


def spring_torque(mass, inertia, R, axis, angle_error, angvel, reach, gravity=STANDARD_GRAVITY,
                  stiffness=STIFFNESS, damping_ratio=DAMPING_RATIO):
    """The capped torque about the unit `axis` turning the body by angle_error, scaled by the
    effective inertia about the axis; the cap is the force cap at a lever arm `reach`."""
    axis = np.asarray(axis, dtype=float)
    i_eff = 1.0 / (axis @ _inverse_world_inertia(inertia, R) @ axis)
    spin = float(np.asarray(angvel, dtype=float) @ axis)
    torque = i_eff * (stiffness * angle_error - 2.0 * damping_ratio * math.sqrt(stiffness)
                      * spin) * axis
    g = gravity if gravity > 0.0 else STANDARD_GRAVITY
    return _capped(torque, FORCE_CAP_G * mass * g * reach)


def _capped(v, cap):
    size = np.linalg.norm(v)
    return v * (cap / size) if size > cap else v


def _quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def rotation_vector(q_from, q_to):
    """The world-frame rotation vector (axis times angle, |angle| <= pi) taking q_from to q_to."""
    q_from = np.asarray(q_from, dtype=float) / np.linalg.norm(q_from)
    q_to = np.asarray(q_to, dtype=float) / np.linalg.norm(q_to)
    conj = q_from * np.array([1.0, -1.0, -1.0, -1.0])
    q = _quat_mul(q_to, conj)
    if q[0] < 0.0:
        q = -q
    s = np.linalg.norm(q[1:])
    return np.zeros(3) if s < 1e-12 else q[1:] * (2.0 * math.atan2(s, q[0]) / s)


def _gravity(settings):
    g = settings.get("gravity") if settings is not None else None
    return float(np.linalg.norm(g)) if g is not None else STANDARD_GRAVITY


class Drag:
    """One drag, from the mouse press to its release.

    `move` follows the cursor (a new ray and the view direction); `update` takes the body's
    latest pose and the simulated time and returns the (force, torque) to apply now.
    """

    def __init__(self, body, grab_local, hit_point, mass, inertia, shape, pos, quat, time,
                 rotate=False, cursor=(0.0, 0.0)):
        self.body = int(body)
        self.grab_local = np.asarray(grab_local, dtype=float)
        self.mass, self.inertia = float(mass), np.asarray(inertia, dtype=float)
        self.reach = max(float(np.linalg.norm(shape.size)), 1e-3) if shape is not None else 1.0
        self.rotate = bool(rotate)
        self.target = np.asarray(hit_point, dtype=float).copy()
        self.cursor0 = np.asarray(cursor, dtype=float)
        self.quat0 = np.asarray(quat, dtype=float).copy()
        self.axis = np.array([0.0, 0.0, 1.0])
        self.angle_target = 0.0
        self.point = self.target.copy()
        self.centre = np.asarray(pos, dtype=float).copy()
        self._prev = (float(time), self.point.copy(), self.quat0.copy())
        self.point_vel = np.zeros(3)
        self.angvel = np.zeros(3)

    def move(self, origin, direction, view_back, cursor):
        """The cursor moved: its ray (origin, unit direction) and the unit vector from the
        camera's target toward the eye (the view axis, toward the viewer)."""
        back = np.asarray(view_back, dtype=float)
        self.axis = back / np.linalg.norm(back)
        if self.rotate:
            # Dragging right turns the body clockwise as seen from the camera.
            self.angle_target = -ROTATE_RAD_PER_PX * float(cursor[0] - self.cursor0[0])
            return
        denom = float(np.asarray(direction) @ self.axis)
        if abs(denom) < 1e-9:
            return  # the ray runs along the view plane: keep the last target
        t = float((self.target - origin) @ self.axis) / denom
        if t > 0.0:
            self.target = np.asarray(origin, dtype=float) + t * np.asarray(direction, dtype=float)

    def update(self, pos, quat, time, paused=False, settings=None):
        """The (force at the centre of mass, torque) for the body's pose at `time` (s)."""
        pos, quat = np.asarray(pos, dtype=float), np.asarray(quat, dtype=float)
        R = rotation_matrices(quat)[0]
        r_world = R @ self.grab_local
        self.point, self.centre = pos + r_world, pos.copy()
        t_prev, p_prev, q_prev = self._prev
        if paused:
            self.point_vel, self.angvel = np.zeros(3), np.zeros(3)
        elif time > t_prev:  # velocities from the last two poses of the grabbed point
            self.point_vel = (self.point - p_prev) / (time - t_prev)
            self.angvel = rotation_vector(q_prev, quat) / (time - t_prev)
        if time != t_prev:
            self._prev = (float(time), self.point.copy(), quat.copy())
        g = _gravity(settings)
        if self.rotate:
            angle = float(rotation_vector(self.quat0, quat) @ self.axis)
            torque = spring_torque(self.mass, self.inertia, R, self.axis,
                                   self.angle_target - angle, self.angvel, self.reach, g)
            return np.zeros(3), torque
        force = spring_force(self.mass, self.inertia, R, r_world, self.point, self.point_vel,
                             self.target, g)
        return force, np.cross(r_world, force)

    def placement(self, pos, quat):
        """Where to put the body by hand (while paused): (centre, quat) that brings the
        grabbed point onto the target keeping the orientation, or when rotating, the
        orientation at grab time turned by the target angle about the view axis."""
        quat = np.asarray(quat, dtype=float)
        if self.rotate:
            half = 0.5 * self.angle_target
            turn = np.concatenate([[math.cos(half)], math.sin(half) * self.axis])
            return np.asarray(pos, dtype=float).copy(), _quat_mul(turn, self.quat0)
        R = rotation_matrices(quat)[0]
        return self.target - R @ self.grab_local, quat.copy()

    def spring_ends(self):
        """The two ends of the drawn spring: the grab point and the target (when rotating:
        the centre of mass and the grab point)."""
        return (self.centre, self.point) if self.rotate else (self.point, self.target)


class SpringDrawing:
    """Draws the spring with the renderer's line program and two dots at its ends; call
    right after `Renderer.draw`, which sets the programs' camera."""

    def __init__(self, renderer):
        self.renderer = renderer
        self.vbo = renderer.ctx.buffer(reserve=2 * 6 * 4, dynamic=True)
        self.vao = renderer.ctx.vertex_array(
            renderer.line, [(self.vbo, "3f 3f", "in_position", "in_colour")])

    def draw(self, camera, start, end):
        ctx = self.renderer.ctx
        rows = np.array([[*start, *SPRING_COLOUR], [*end, *SPRING_COLOUR]], dtype="f4")
        self.vbo.write(rows.tobytes())
        ctx.disable(ctx.DEPTH_TEST)  # seen through the body it pulls
        self.vao.render(ctx.LINES)
        radius = MARKER_SIZE * camera.distance * math.tan(camera.fov_y / 2.0)
        self.renderer.anchors.draw(point_instances([start, end], radius,
                                                   [GRAB_COLOUR, SPRING_COLOUR]))
        ctx.enable(ctx.DEPTH_TEST)

    def release(self):
        self.vao.release()
        self.vbo.release()
