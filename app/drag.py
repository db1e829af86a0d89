"""Dragging bodies with the mouse, as in MuJoCo's viewer.

Picking: a ray from the eye through the cursor, intersected exactly with every body's shape
in that body's frame (box: slab test; sphere and ellipsoid: a scaled unit sphere; cylinder:
side and flat caps; capsule: side and the two end spheres; hull: the ray clipped by the
half-spaces of its faces, n . x <= offset; compound: each part in its own frame, the
nearest); the nearest hit wins.

The drag: the grabbed point (r in the body frame) is pulled toward a target that follows
the cursor in the view plane through the grab point; with Ctrl the body is turned instead,
toward its orientation at grab time turned about the view axis by the cursor's sideways
motion.  The window only says where (a `SetDrag` command when the cursor moves); the
spring-damper itself is computed by the physics in every step from that step's pose and
velocity (physics/perturb.py: a 2 Hz critically damped spring scaled by the body's effective
mass at the point, capped at 50 times its weight), so a drag is as steady at 5 frames per
second as at 60.

Everything here but `SpringDrawing` is plain numpy (no GL, no window).
"""
import math

import numpy as np

from ..physics.shape import framed
from ..physics.shape import geoms as shape_geoms
from ..physics.transforms import quat_matrices as rotation_matrices
from ..physics.transforms import quat_mul
from ..render.instances import point_instances
from .commands import SetDrag

ROTATE_RAD_PER_PX = 0.01                # Ctrl-drag: target angle per pixel of cursor motion
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


def shape_hit(shape, origin, direction):
    """The smallest t >= 0 where origin + t direction (body frame) meets the shape, or None.
    A Hull or Compound is tested piece by piece (physics.shape.geoms: each piece's pose in
    the body frame); rotations keep t the same in every frame."""
    o, d = np.asarray(origin, dtype=float), np.asarray(direction, dtype=float)
    if framed(shape):
        ts = [_leaf_hit(leaf, R.T @ (o - p), R.T @ d) for leaf, p, R in shape_geoms(shape)]
        ts = [t for t in ts if t is not None]
        return min(ts) if ts else None
    return _leaf_hit(shape, o, d)


def _leaf_hit(shape, o, d):
    """shape_hit for a primitive, or a hull in its own frame (physics/ray.py)."""
    hits = shape.ray_hits(o, d)
    if hits is None:
        return None   # the ground is never grabbed
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


# ---- the drag ---------------------------------------------------------------------------------
class Drag:
    """One drag, from the mouse press to its release: what the cursor asks for.

    `move` follows the cursor (a new ray and the view direction) and returns the `SetDrag`
    command to send; the physics applies the spring-damper in every step from it.
    `placement` is where a free body goes by hand while paused.
    """

    def __init__(self, body, grab_local, hit_point, quat, *, mass=0.0, rotate=False,
                 cursor=(0.0, 0.0)):
        self.body = int(body)
        self.grab_local = np.asarray(grab_local, dtype=float)
        self.mass = float(mass)
        self.rotate = bool(rotate)
        self.target = np.asarray(hit_point, dtype=float).copy()
        self.cursor0 = np.asarray(cursor, dtype=float)
        self.quat0 = np.asarray(quat, dtype=float).copy()
        self.axis = np.array([0.0, 0.0, 1.0])
        self.angle_target = 0.0

    def move(self, origin, direction, view_back, cursor):
        """The cursor moved: its ray (origin, unit direction) and the unit vector from the
        camera's target toward the eye (the view axis, toward the viewer). Returns the
        SetDrag command that asks the physics for the new target."""
        back = np.asarray(view_back, dtype=float)
        self.axis = back / np.linalg.norm(back)
        if self.rotate:
            # Dragging right turns the body clockwise as seen from the camera.
            self.angle_target = -ROTATE_RAD_PER_PX * float(cursor[0] - self.cursor0[0])
            return self.command()
        denom = float(np.asarray(direction) @ self.axis)
        if abs(denom) >= 1e-9:  # else the ray runs along the view plane: keep the last target
            t = float((self.target - origin) @ self.axis) / denom
            if t > 0.0:
                self.target = (np.asarray(origin, dtype=float)
                               + t * np.asarray(direction, dtype=float))
        return self.command()

    def target_quat(self):
        """Turning: the orientation at grab time turned by the target angle about the view
        axis (world frame)."""
        half = 0.5 * self.angle_target
        turn = np.concatenate([[math.cos(half)], math.sin(half) * self.axis])
        return quat_mul(turn, self.quat0)

    def command(self):
        """The SetDrag command for the physics: pull the grabbed point to the target, or
        (Ctrl) turn the body to the target orientation."""
        point = tuple(float(x) for x in self.grab_local)
        if self.rotate:
            return SetDrag(self.body, point, quat=tuple(float(x) for x in self.target_quat()))
        return SetDrag(self.body, point, target=tuple(float(x) for x in self.target))

    def placement(self, pos, quat):
        """Where to put the body by hand (while paused): (centre, quat) that brings the
        grabbed point onto the target keeping the orientation, or when rotating, the
        target orientation about the same centre."""
        quat = np.asarray(quat, dtype=float)
        if self.rotate:
            return np.asarray(pos, dtype=float).copy(), self.target_quat()
        R = rotation_matrices(quat)[0]
        return self.target - R @ self.grab_local, quat.copy()

    def spring_ends(self, pos, quat):
        """The two ends of the drawn spring for the body's pose (pos, quat): the grab point
        and the target (when rotating: the centre of mass and the grab point)."""
        pos = np.asarray(pos, dtype=float)
        point = pos + rotation_matrices(np.asarray(quat, dtype=float))[0] @ self.grab_local
        return (pos, point) if self.rotate else (point, self.target)


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
