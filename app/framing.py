"""What the camera frames (F, a newly opened scene) and where the view's centre is.

F frames every body with its extent and, for parts that hang from a fixed body by a joint
(a chain from a ball joint, a pendulum on a horizontal hinge), the room they swing through
under gravity: a chain released horizontally stays in the picture as it falls.  The panel
covers the left of the window, so the view is the rest: `view_part` gives the camera's
sideways shift and that part's aspect.  Nothing here runs per frame.
"""
import numpy as np

from ..physics.joint import JOINT_TYPE_INFO
from ..render.instances import scene_bounds

HANG_MIN_GRAVITY = 1e-9   # m/s^2: below this nothing hangs
AXIS_ALONG_GRAVITY = 0.999  # |cos|: a hinge about the vertical does not swing under gravity
HANGING_SINE = 0.05       # a part within this sine of straight down from its ball joint hangs


def view_part(window_width, window_height, panel_width):
    """(shift_x, aspect): the camera shift (NDC) that puts the picture's centre in the middle
    of the part of the window right of a panel `panel_width` px wide, and that part's
    width / height."""
    w, h = max(int(window_width), 1), max(int(window_height), 1)
    panel = min(max(float(panel_width), 0.0), w / 2.0)
    return panel / w, (w - panel) / h


def hanging_bounds(snap, joint_bodies, body_island):
    """(lo (3,), hi (3,)) of the room the parts hanging from fixed bodies swing through
    under gravity, or None when nothing hangs.

    A part is an island of the model (`body_island`: dynamic bodies joined to each other;
    -1 for the fixed ones), held by a hinge or a ball joint at p0 on a fixed body.  It
    swings about an axis n through p0: the hinge's, or for
    a ball joint the horizontal axis across the line from p0 to the part (it falls in the
    vertical plane through that line; a part already hanging straight down adds nothing).
    Each corner of the part keeps its height along n and its distance from the axis, as
    for one rigid body (a jointed part that unfolds can reach further).  Gravity does not
    lift a part above where it is now (or p0): when gravity lies along a world axis, the
    room ends there.  Prismatic and fixed holds, hinges about the vertical and a world
    without gravity add nothing."""
    gravity = np.asarray(snap.settings.get("gravity", (0.0, 0.0, -9.81)), dtype=float)
    g = float(np.linalg.norm(gravity))
    types = snap.joint_types
    if g < HANG_MIN_GRAVITY or snap.joint_anchor is None or not len(types):
        return None
    down = gravity / g
    members = {}
    for body, island in enumerate(body_island):
        if island >= 0:
            members.setdefault(island, []).append(body)
    lo, hi = [], []
    for j, ((a, b), kind) in enumerate(zip(joint_bodies, types)):
        turns = JOINT_TYPE_INFO[kind]   # a hinge or a ball joint: free motion, all rotation
        if (body_island[a] < 0) == (body_island[b] < 0) or turns.dofs == 0 or turns.linear:
            continue
        p0 = np.asarray(snap.joint_anchor[j], dtype=float)
        corners = _corners(snap, members[max(body_island[a], body_island[b])]) - p0  # (8 k, 3)
        if not len(corners):
            continue
        if turns.dofs == 1:   # a hinge: about its axis
            n = np.asarray(snap.joint_axis[j], dtype=float)
        else:  # a ball joint: the part falls in the vertical plane through it
            n = np.cross(down, corners.mean(axis=0))
            if np.linalg.norm(n) < HANGING_SINE * np.linalg.norm(corners.mean(axis=0)):
                continue
        n = n / max(np.linalg.norm(n), 1e-300)
        if not np.all(np.isfinite(n)) or abs(n @ down) > AXIS_ALONG_GRAVITY:
            continue
        along = corners @ n                                      # kept while it turns
        rho = float(np.linalg.norm(corners - np.outer(along, n), axis=1).max())
        spread = rho * np.sqrt(np.clip(1.0 - n * n, 0.0, 1.0))  # a circle's extent per axis
        part_lo = p0 + np.minimum(along.min() * n, along.max() * n) - spread
        part_hi = p0 + np.maximum(along.min() * n, along.max() * n) + spread
        axis = int(np.argmax(np.abs(down)))
        if abs(down[axis]) > AXIS_ALONG_GRAVITY:  # not above where it is now (or p0)
            if down[axis] < 0.0:
                part_hi[axis] = min(part_hi[axis], p0[axis] + max(corners[:, axis].max(), 0.0))
            else:
                part_lo[axis] = max(part_lo[axis], p0[axis] + min(corners[:, axis].min(), 0.0))
        lo.append(part_lo)
        hi.append(part_hi)
    if not lo:
        return None
    return np.min(lo, axis=0), np.max(hi, axis=0)


def _corners(snap, bodies):
    """(8 k, 3) corners of the bounding boxes of the given bodies (world frame)."""
    out = []
    for i in bodies:
        if snap.body_shapes[i] is None:
            continue
        lo, hi = scene_bounds(snap.body_pos[i:i + 1], snap.body_quat[i:i + 1],
                              snap.body_shapes[i:i + 1])
        out += [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                for z in (lo[2], hi[2])]
    return np.asarray(out, dtype=float).reshape(-1, 3)


def frame_bounds(snap, joint_bodies=None, body_island=None):
    """What F frames: every body with its extent, and the room hanging parts swing through
    (when the joints' bodies and the bodies' islands are known)."""
    lo, hi = scene_bounds(snap.body_pos, snap.body_quat, snap.body_shapes)
    if joint_bodies is not None and body_island is not None and len(joint_bodies):
        hang = hanging_bounds(snap, joint_bodies, body_island)
        if hang is not None:
            lo, hi = np.minimum(lo, hang[0]), np.maximum(hi, hang[1])
    return lo, hi

