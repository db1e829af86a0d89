"""From body poses and shapes to per-instance data: model matrices, colours and bounds.

Inputs are plain arrays as a snapshot holds them: positions (n, 3), quaternions (n, 4) in
(w, x, y, z) order and a shape per body (a physics shape with ``kind`` and ``size``, or None
for the shapeless world body).  Nothing here needs a GL context.

Compounds and hulls: the pose is the body frame (centre of mass, principal axes); each piece
(`physics.shape.geoms`: a compound's parts, a hull) is drawn at body pose x piece pose.  A hull
has its own mesh: its instances are keyed by the Hull object itself (the renderer keeps a
vertex buffer per Hull, `hull_mesh`), with an unscaled model matrix (vertices in its frame).
"""
import colorsys
import math

import numpy as np

from ..physics.shape import (
    PLANE,
    Hull,
    Mesh,
    framed,
)
from ..physics.shape import geoms as shape_geoms
from ..physics.transforms import quat_matrices as rotation_matrices

# The meshes the renderer owns; every shape kind is drawn with one or more of them.
MESHES = ("box", "sphere", "cylinder")
GOLDEN = 0.6180339887498949  # hue step: neighbouring bodies get clearly different hues
PLANE_HALF = 50.0            # m: a plane is drawn as a slab this wide each way from its origin
PLANE_THICKNESS = 0.01       # m: ... and this thick, its top a hair below the plane (the grid
PLANE_COLOUR = (0.30, 0.32, 0.36)  # and the shadows lie on it)
# m: what is drawn or framed stays within this of the origin (float32 keeps about 1 mm there).
# A shape bigger than that (a 1e200 m ground slab) is drawn clipped to it and, like a plane,
# left out of the framing unless nothing else is there.
VIEW_LIMIT = 1.0e4


HIGHLIGHT = (1.0, 1.0, 1.0)   # the selected body's colour is pulled toward this: lighter
HIGHLIGHT_SHARE = 0.5


def body_colour(index):
    """A deterministic colour (r, g, b) in [0, 1] for body number `index`."""
    hue = (0.08 + index * GOLDEN) % 1.0
    return colorsys.hsv_to_rgb(hue, 0.55, 0.9)


def _model(pos, rot, scale):
    """Column-major model matrix T R S, flattened to 16 floats as GLSL's mat4 expects."""
    m = np.eye(4)
    m[:3, :3] = rot * np.asarray(scale, dtype=float)
    m[:3, 3] = pos
    return m.T.reshape(16)


def pieces(shape, pos, rot):
    """The world poses [(leaf shape, pos (3,), rot (3, 3))] of a body's drawn pieces: the
    shape itself for a primitive, the parts of a compound, the hull in its own frame."""
    if not framed(shape):
        return [(shape, pos, rot)]
    return [(leaf, pos + rot @ p, rot @ R) for leaf, p, R in shape_geoms(shape)]


SMOOTH_ANGLE = math.radians(30.0)   # a mesh's edges sharper than this are drawn as creases


def hull_mesh(hull):
    """A hull's or mesh's triangle list, rows (x, y, z, nx, ny, nz) float32 in its frame: a
    hull flat-shaded (each face's outward normal); a Mesh's own triangles (`surface()`, not
    its hull) with each corner's normal averaged over the faces meeting there within
    SMOOTH_ANGLE of its face (so curved parts look round and edges stay sharp)."""
    vertices, faces = hull.surface()
    tris = vertices[faces]                                 # (m, 3, 3)
    cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    length = np.linalg.norm(cross, axis=1, keepdims=True)
    face_n = np.divide(cross, length, out=np.zeros_like(cross), where=length > 0)
    if isinstance(hull, Hull) and not isinstance(hull, Mesh):   # (an FDO is smooth)
        normals = np.repeat(face_n[:, None, :], 3, axis=1)
    else:
        normals = _corner_normals(faces, face_n, cross, len(vertices))
    return np.concatenate([tris, normals], axis=2).reshape(-1, 6).astype("f4")


def _corner_normals(faces, face_n, cross, nvert):
    """(m, 3, 3) normals at each face corner: the area-weighted mean of the normals of the
    faces sharing that vertex whose normal is within SMOOTH_ANGLE of this face's."""
    vertex_n = np.zeros((nvert, 3))
    for c in range(3):
        np.add.at(vertex_n, faces[:, c], cross)            # area-weighted vertex normals
    length = np.linalg.norm(vertex_n, axis=1, keepdims=True)
    vertex_n = np.divide(vertex_n, length, out=np.zeros_like(vertex_n), where=length > 0)
    corner = vertex_n[faces]                               # (m, 3, 3)
    # a corner whose smooth normal strays too far from its face keeps the face's (a crease)
    sharp = np.einsum("mcj,mj->mc", corner, face_n) < math.cos(SMOOTH_ANGLE)
    corner[sharp] = np.repeat(face_n[:, None, :], 3, axis=1)[sharp]
    return corner


def body_instances(body_pos, body_quat, body_shapes, body_visuals=None):
    """Per mesh name, an array (k, 19) of rows: 16 model-matrix floats then r, g, b.  Planes
    come apart, under "plane" (drawn with the box mesh, before the shadows); each Hull drawn
    has its rows under the Hull object as key.  (DrawTable, built once for a world's shapes,
    does the same per frame without the set-up.)"""
    return DrawTable(body_shapes, body_visuals).instances(body_pos, body_quat)


class DrawTable:
    """What a world's shapes draw, worked out once: one row per drawn piece (a primitive, a
    capsule's cylinder and end spheres, a compound's parts, a hull, a plane's slab) with its
    mesh, body, pose in the body frame, scale and colour. `instances` then turns body poses
    into instance rows in one vectorised pass, whatever the number of bodies.

    body_visuals (per body, ((shape, pos, rot, rgba or None), ...) in the body frame, as
    World.body_visuals gives them): a body that has visuals is drawn by them instead of its
    collision shape (each visual hull or mesh in its own frame at its pose).
    """

    def __init__(self, body_shapes, body_visuals=None):
        keys, body, pos, rot, scale, colour = [], [], [], [], [], []
        thinnest = []
        visuals = list(body_visuals) if body_visuals is not None else []
        visuals += [()] * (len(body_shapes) - len(visuals))
        for i, body_shape in enumerate(body_shapes):
            if body_shape is not None and max(body_shape.size) > 0:  # (planes have no size)
                thinnest.append(min(x for x in body_shape.size if x > 0))
            if visuals[i]:
                drawn = [(leaf, p, R, body_colour(i) if rgba is None else tuple(rgba[:3]))
                         for leaf, p, R, rgba in visuals[i]]
            elif body_shape is not None:
                drawn = [(leaf, p, R, body_colour(i))
                         for leaf, p, R in pieces(body_shape, np.zeros(3), np.eye(3))]
            else:
                continue
            for leaf, p, R, leaf_colour in drawn:
                for key, offset, size, rgb in _leaf_parts(leaf, leaf_colour, i):
                    keys.append(key)
                    body.append(i)
                    pos.append(p + R @ offset)
                    rot.append(R)
                    scale.append(size)
                    colour.append(rgb)
        k = len(keys)
        self.body = np.array(body, np.int64).reshape(k)          # (k,)
        self.pos = np.array(pos, float).reshape(k, 3)             # (k, 3) in the body frame
        self.rot = np.array(rot, float).reshape(k, 3, 3)          # (k, 3, 3) in the body frame
        self.scale = np.array(scale, float).reshape(k, 3)         # (k, 3) mesh scale
        self.colour = np.array(colour, float).reshape(k, 3)       # (k, 3)
        self.groups = {name: [] for name in MESHES + ("plane",)}  # mesh key -> row indices
        for row, key in enumerate(keys):
            self.groups.setdefault(key, []).append(row)
        self.groups = {key: np.array(rows, np.int64) for key, rows in self.groups.items()}
        self.thinnest = min(thinnest) if thinnest else None  # smallest half-width, m

    def instances(self, body_pos, body_quat, highlight=None):
        """Per mesh key, the rows (k, 19) float32 of the pieces at these body poses; the body
        `highlight` (an index, or None) in its colour brightened toward HIGHLIGHT."""
        R = rotation_matrices(body_quat)[self.body]                 # (k, 3, 3)
        x = np.asarray(body_pos, dtype=float).reshape(-1, 3)[self.body]
        with np.errstate(all="ignore"):  # a blown-up (NaN, huge) pose is clipped below
            pos = x + np.einsum("kij,kj->ki", R, self.pos)
            model = np.matmul(R, self.rot) * self.scale[:, None, :]  # columns scaled
        rows = np.zeros((len(self.body), 19))
        rows[:, 0:3] = model[:, :, 0]     # column-major mat4: its columns one after another
        rows[:, 4:7] = model[:, :, 1]
        rows[:, 8:11] = model[:, :, 2]
        rows[:, 12:15] = pos
        rows[:, 15] = 1.0
        rows[:, 16:19] = self.colour
        if highlight is not None:
            mine = self.body == highlight
            rows[mine, 16:19] = (1.0 - HIGHLIGHT_SHARE) * self.colour[mine] + \
                HIGHLIGHT_SHARE * np.asarray(HIGHLIGHT)
        # clipped in float64: a huge shape becomes a VIEW_LIMIT one, not inf in float32
        rows = np.clip(rows, -VIEW_LIMIT, VIEW_LIMIT).astype("f4")
        return {key: rows[idx] for key, idx in self.groups.items()}


def _leaf_parts(shape, colour, i):
    """The meshes drawing one primitive or hull: [(mesh key, offset (3,) and scale (3,) in
    the leaf's frame, colour)] (the shape's draw_parts; a plane is drawn as a wide slab)."""
    try:
        parts = shape.draw_parts()
    except AttributeError:
        raise ValueError(f"body {i}: unknown shape kind {getattr(shape, 'kind', shape)!r}") \
            from None
    if shape.kind == PLANE:
        return [("plane", np.array([0.0, 0.0, -(0.5 * PLANE_THICKNESS + 2e-3)]),
                 (PLANE_HALF, PLANE_HALF, 0.5 * PLANE_THICKNESS), PLANE_COLOUR)]
    return [(key, offset, scale, colour) for key, offset, scale in parts]


def planes_seen_from_above(rows, eye):
    """The rows (k, 19) of plane slabs whose top side faces the camera at eye (3,): a slab
    seen from below would hide everything above it (an orbit under the floor showed only the
    overlays), so from there it is left out and the bodies are seen through the ground."""
    rows = np.asarray(rows)
    if not len(rows):
        return rows
    normal = rows[:, 8:11].astype(float)       # the slab's z column: its thickness axis
    centre = rows[:, 12:15].astype(float)
    above = np.einsum("ki,ki->k", np.asarray(eye, dtype=float) - centre, normal) > 0.0
    return rows[above]


def point_instances(points, radius, colours):
    """Rows (k, 19) drawing a sphere of `radius` at each point (k, 3) in colours (k, 3)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    colours = np.broadcast_to(np.asarray(colours, dtype=float).reshape(-1, 3), points.shape)
    rows = np.zeros((len(points), 19), dtype="f4")
    rows[:, 0] = rows[:, 5] = rows[:, 10] = radius   # columns of the model matrix
    rows[:, 12:15] = points
    rows[:, 15] = 1.0
    rows[:, 16:19] = colours
    return rows


@np.errstate(all="ignore")  # a NaN or huge pose is checked below, not warned about
def scene_bounds(body_pos, body_quat, body_shapes, points=()):
    """(min (3,), max (3,)) around every shaped body and the extra points (k, 3), within
    +-VIEW_LIMIT.  A body whose pose is not finite (after a blow-up) is left out, and so is
    one bigger than the view or wholly beyond it unless there is nothing else; nothing at all
    gives a 2 m box."""
    lo, hi, big_lo, big_hi = [], [], [], []
    rots = rotation_matrices(body_quat)
    for body_pos_i, body_rot, body_shape in zip(np.asarray(body_pos, dtype=float), rots,
                                                body_shapes):
        if body_shape is None:
            continue
        for shape, pos, rot in pieces(body_shape, body_pos_i, body_rot):
            a, b = shape.world_box(pos, rot)
            if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
                continue
            # bigger than the view, or wholly beyond it (a body flung to 1e300 m): along
            # each axis the box [a, b] is max(a, -b, 0) from the origin
            outlier = (np.max(b - a) > 2.0 * VIEW_LIMIT
                       or np.max(np.maximum(np.maximum(a, -b), 0.0)) > VIEW_LIMIT)
            (big_lo if outlier else lo).append(a)
            (big_hi if outlier else hi).append(b)
    for p in np.asarray(points, dtype=float).reshape(-1, 3):
        if np.all(np.isfinite(p)):
            lo.append(p)
            hi.append(p)
    if not lo:
        lo, hi = big_lo, big_hi
    if not lo:
        return np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 1.0])
    return (np.clip(np.min(lo, axis=0), -VIEW_LIMIT, VIEW_LIMIT),
            np.clip(np.max(hi, axis=0), -VIEW_LIMIT, VIEW_LIMIT))
