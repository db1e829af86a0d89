"""The z-up orbit camera: a target point seen from a distance, yaw and pitch."""
import math

import numpy as np

# A three-quarter view from the front left, slightly from above.
DEFAULT_YAW = math.radians(-60.0)
DEFAULT_PITCH = math.radians(25.0)
DEFAULT_FOV_Y = math.radians(45.0)  # vertical field of view
FRAME_MARGIN = 1.1  # room around the framed bounds


def perspective(fov_y, aspect, near, far):
    """OpenGL projection matrix (4, 4) for a vertical field of view in radians."""
    f = 1.0 / math.tan(fov_y / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def look_at(eye, target, up=(0.0, 0.0, 1.0)):
    """View matrix (4, 4) of an eye looking at target."""
    eye, target, up = (np.asarray(v, dtype=float) for v in (eye, target, up))
    forward = target - eye
    forward /= np.linalg.norm(forward)
    side = np.cross(forward, up)
    if np.linalg.norm(side) < 1e-9:  # looking straight up or down: any side will do
        side = np.cross(forward, (0.0, 1.0, 0.0))
    side /= np.linalg.norm(side)
    true_up = np.cross(side, forward)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = side, true_up, -forward
    m[:3, 3] = -m[:3, :3] @ eye
    return m


class OrbitCamera:
    """Looks at `target` from `distance` m; `yaw` turns about world z (0 = from +x), `pitch`
    raises the eye above the target's horizontal plane (radians).

    `shift_x` moves the picture's centre sideways, in normalised device units (0.25 = an
    eighth of the width to the right): a panel over the left part of the window leaves the
    rest of it as the view, and the target is drawn in that part's middle."""

    def __init__(self, target=(0.0, 0.0, 0.0), distance=5.0, yaw=DEFAULT_YAW,
                 pitch=DEFAULT_PITCH, fov_y=DEFAULT_FOV_Y):
        self.target = np.array(target, dtype=float)
        self.distance = float(distance)
        self.yaw = float(yaw)
        self.pitch = float(pitch)
        self.fov_y = float(fov_y)
        self.shift_x = 0.0

    @property
    def back(self):
        """The unit vector from the target towards the eye."""
        cp = math.cos(self.pitch)
        return np.array([cp * math.cos(self.yaw), cp * math.sin(self.yaw), math.sin(self.pitch)])

    @property
    def eye(self):
        return self.target + self.distance * self.back

    def view(self):
        return look_at(self.eye, self.target)

    def projection(self, aspect):
        # Near and far follow the distance so that both tiny and large scenes keep depth precision.
        m = perspective(self.fov_y, aspect, self.distance * 0.01, self.distance * 100.0)
        m[0, :] += self.shift_x * m[3, :]  # x_ndc += shift_x (an off-centre projection)
        return m

    def reset_orientation(self):
        """The default three-quarter view direction (a new scene starts with it)."""
        self.yaw, self.pitch = DEFAULT_YAW, DEFAULT_PITCH

    def view_projection(self, aspect):
        return self.projection(aspect) @ self.view()

    def frame(self, bounds, aspect=1.0):
        """Aim at the middle of bounds ((3,) min, (3,) max) and, keeping the direction of
        view, move just far enough back that all eight corners of the box are in the picture.
        `aspect` is the width / height of the part of the window the view has (centred on
        the target, see shift_x). Bounds that are not finite change nothing."""
        lo, hi = (np.asarray(b, dtype=float) for b in bounds)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return  # (bodies blown up to NaN) the camera stays where it is
        self.target = (lo + hi) / 2.0
        view = look_at(self.target + self.back, self.target)  # the direction only
        side, up, back = view[0, :3], view[1, :3], view[2, :3]
        tan_y = math.tan(self.fov_y / 2.0) / FRAME_MARGIN
        tan_x = tan_y * aspect
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])]) - self.target
        # A corner c is inside when |c.side| <= tan_x * depth and |c.up| <= tan_y * depth,
        # where depth = distance - c.back.
        needed = corners @ back + np.maximum(np.abs(corners @ side) / tan_x,
                                             np.abs(corners @ up) / tan_y)
        self.distance = max(float(needed.max()), 1e-3)
