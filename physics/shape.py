"""Shapes and their mass properties: primitives in closed form, convex hulls and compounds.

Every primitive is centred on its body's centre of mass with its axes on the body axes;
capsules and cylinders lie along the body z axis. `unit_inertia` is the principal inertia per
kilogram (uniform density), so inertia = mass * unit_inertia.

Hull and Compound are written in a REFERENCE frame of the user's choosing (the hull's vertices,
the compound's part poses). The engine's body frame must be the centre of mass and the
principal axes (model.py keeps three principal moments), so each of them computes

    frame_pos  c   (3,)    the centre of mass in the reference frame
    frame_rot  Rp  (3, 3)  columns = the principal axes in the reference frame

(`body_frame(shape)`; (0, I) for the primitives) and `unit_inertia()` gives the principal
moments in that order. A point x_ref of the reference frame is x_body = Rp^T (x_ref - c) in
the body frame. World.add_body(pos, quat) keeps meaning the pose of the reference frame; the
engine's body pose is that pose composed with (c, Rp).

Principal axes (`principal_axes`): a tensor whose off-diagonal terms are below 1e-12 of its
trace keeps the reference axes (so a hull of a box's corners or a dumbbell along x keep
theirs, moments in x, y, z order); otherwise np.linalg.eigh's axes, moments ascending, each
axis signed so its largest component is positive (the first on ties), the third flipped if
needed to make the frame right-handed.

`geoms(shape)` lists the collision/drawing pieces of a body: (leaf shape, pos, rot) in the
body frame, one per primitive, hull or compound part.

What a shape kind is lives here and in physics/support.py (its kernels: support point,
bounding box, bounding radius): every leaf class has `kind`, `size` (its geom_size row),
`volume()`, `unit_inertia()`, `ray_hits(o, d)` (the ray parameters where o + t d meets its
surface in its frame, physics/ray.py; None: never picked), `draw_parts()` (the renderer's
meshes: [(mesh key, offset, scale)] in its frame) and `world_box(pos, rot)` (its world
bounds at a pose). A new kind adds a class here, its kernels in support.py and its table in
scenes/schema.py.
"""
import math
import os
import stat
from dataclasses import dataclass

import numpy as np

from . import ray
from .transforms import matrix_quat, quat_matrix  # noqa: F401 -- shape's API too

# shape kind codes, shared with collision and the renderer (shape_size holds each kind's
# numbers): box (a, b, c) half extents; sphere (r, 0, 0); capsule and cylinder (r, h, 0) with
# half length h along local z; ellipsoid (a, b, c) semi-axes; plane: the half-space z <= 0 of
# its frame (normal +z, static only, size unused); hull: a convex polytope whose vertices
# are stored apart (hull_vert), size unused (geom_size row of zeros). COMPOUND is the kind of
# a Compound shape object only: a compound body has one geom per part, never a COMPOUND geom.
# fdo: a functionally defined object (physics/fdo.py), its function's rows stored as a hull's
# (hull_vert), size unused.
BOX, SPHERE, CAPSULE, CYLINDER, ELLIPSOID, PLANE, HULL = 0, 1, 2, 3, 4, 5, 6
COMPOUND = 7
FDO = 8
_ZERO = np.zeros(3)
_ZERO.flags.writeable = False


def _positive(name, *values):
    for v in values:
        if not (math.isfinite(v) and v > 0.0):
            raise ValueError(f"{name} must be positive and finite (got {v})")


def mass_properties(shape):
    """(volume, unit_inertia (3,)) of a shape, ValueError if they are not positive finite
    numbers (a radius of 1e300 overflows, one of 5e-324 vanishes): checked where a body needs
    its mass properties, not for a static body's shape, which may be as large as it likes."""
    try:
        volume, inertia = float(shape.volume()), np.asarray(shape.unit_inertia(), dtype=float)
    except (OverflowError, ZeroDivisionError):
        volume, inertia = math.nan, np.full(3, math.nan)
    if not (math.isfinite(volume) and volume > 0.0 and np.all(np.isfinite(inertia))
            and np.all(inertia > 0.0)):
        sizes = ", ".join(f"{x:g}" for x in shape.size if x)
        raise ValueError(f"{type(shape).__name__.lower()} of size {sizes}: its volume or "
                         "inertia is not a positive finite number (too large or too small)")
    return volume, inertia


@dataclass(frozen=True)
class Box:
    half_extents: tuple
    kind = BOX

    def __post_init__(self):
        _positive("box half_extents", *self.half_extents)

    @property
    def size(self):
        return tuple(float(x) for x in self.half_extents)

    def volume(self):
        a, b, c = self.half_extents
        return 8.0 * a * b * c

    def unit_inertia(self):
        a, b, c = self.half_extents
        return np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 3.0

    def ray_hits(self, o, d):
        return ray.box_hits(o, d, np.asarray(self.size))

    def draw_parts(self):
        return [("box", _ZERO, self.size)]

    def world_box(self, pos, rot):
        half = np.abs(rot) @ self.size
        return pos - half, pos + half


@dataclass(frozen=True)
class Sphere:
    radius: float
    kind = SPHERE

    def __post_init__(self):
        _positive("sphere radius", self.radius)

    @property
    def size(self):
        return (float(self.radius), 0.0, 0.0)

    def volume(self):
        return 4.0 / 3.0 * math.pi * self.radius ** 3

    def unit_inertia(self):
        return np.full(3, 0.4 * self.radius ** 2)

    def ray_hits(self, o, d):
        return ray.ellipsoid_hits(o, d, _ZERO, np.full(3, float(self.radius)))

    def draw_parts(self):
        r = float(self.radius)
        return [("sphere", _ZERO, (r, r, r))]

    def world_box(self, pos, rot):
        return pos - self.radius, pos + self.radius


@dataclass(frozen=True)
class Ellipsoid:
    semi_axes: tuple
    kind = ELLIPSOID

    def __post_init__(self):
        _positive("ellipsoid semi_axes", *self.semi_axes)

    @property
    def size(self):
        return tuple(float(x) for x in self.semi_axes)

    def volume(self):
        a, b, c = self.semi_axes
        return 4.0 / 3.0 * math.pi * a * b * c

    def unit_inertia(self):
        a, b, c = self.semi_axes
        return np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0

    def ray_hits(self, o, d):
        return ray.ellipsoid_hits(o, d, _ZERO, np.asarray(self.size))

    def draw_parts(self):
        return [("sphere", _ZERO, self.size)]

    def world_box(self, pos, rot):   # the box around the box of its semi-axes (generous)
        half = np.abs(rot) @ self.size
        return pos - half, pos + half


@dataclass(frozen=True)
class Cylinder:
    radius: float
    half_length: float
    kind = CYLINDER

    def __post_init__(self):
        _positive("cylinder radius and half_length", self.radius, self.half_length)

    @property
    def size(self):
        return (float(self.radius), float(self.half_length), 0.0)

    def volume(self):
        return math.pi * self.radius ** 2 * 2.0 * self.half_length

    def unit_inertia(self):
        r, length = self.radius, 2.0 * self.half_length
        side = (3.0 * r * r + length * length) / 12.0
        return np.array([side, side, 0.5 * r * r])

    def ray_hits(self, o, d):
        return ray.cylinder_hits(o, d, self.radius, self.half_length, caps=True)

    def draw_parts(self):
        r, h = float(self.radius), float(self.half_length)
        return [("cylinder", _ZERO, (r, r, h))]

    def world_box(self, pos, rot):
        half = np.abs(rot) @ (self.radius, self.radius, self.half_length)
        return pos - half, pos + half


@dataclass(frozen=True)
class Capsule:
    """A cylinder of length 2 half_length along z capped by two hemispheres of the same radius."""
    radius: float
    half_length: float
    kind = CAPSULE

    def __post_init__(self):
        _positive("capsule radius and half_length", self.radius, self.half_length)

    @property
    def size(self):
        return (float(self.radius), float(self.half_length), 0.0)

    def volume(self):
        r, length = self.radius, 2.0 * self.half_length
        return math.pi * r * r * length + 4.0 / 3.0 * math.pi * r ** 3

    def unit_inertia(self):
        r, length = self.radius, 2.0 * self.half_length
        v_cyl = math.pi * r * r * length
        v_caps = 4.0 / 3.0 * math.pi * r ** 3
        m_cyl, m_caps = v_cyl / (v_cyl + v_caps), v_caps / (v_cyl + v_caps)
        # each hemisphere: 2/5 m r^2 about its own base diameter, shifted to the centre
        side = (m_cyl * (length * length / 12.0 + r * r / 4.0)
                + m_caps * (0.4 * r * r + length * length / 4.0 + 3.0 * length * r / 8.0))
        axial = m_cyl * 0.5 * r * r + m_caps * 0.4 * r * r
        return np.array([side, side, axial])

    def ray_hits(self, o, d):
        return ray.capsule_hits(o, d, self.radius, self.half_length)

    def draw_parts(self):
        # a cylinder with a whole sphere at each end: the inner halves hide in the cylinder
        r, h = float(self.radius), float(self.half_length)
        return [("cylinder", _ZERO, (r, r, h)), ("sphere", np.array([0.0, 0.0, h]), (r, r, r)),
                ("sphere", np.array([0.0, 0.0, -h]), (r, r, r))]

    def world_box(self, pos, rot):
        half = np.abs(rot) @ (0.0, 0.0, self.half_length) + self.radius
        return pos - half, pos + half


@dataclass(frozen=True)
class Plane:
    """The infinite half-space z <= 0 of its body's frame (normal +z); static bodies only."""
    kind = PLANE

    @property
    def size(self):
        return (0.0, 0.0, 0.0)

    def volume(self):
        raise ValueError("a plane has no volume: it belongs to a static body")

    def unit_inertia(self):
        raise ValueError("a plane has no inertia: it belongs to a static body")

    def ray_hits(self, o, d):
        return None   # the ground is never grabbed

    def draw_parts(self):
        return [("plane", None, None)]   # infinite: the renderer chooses how much to draw

    def world_box(self, pos, rot):
        return pos.copy(), pos.copy()


# ---- convex hulls and compounds ------------------------------------------------------------
HULL_TOLERANCE = 1e-9   # relative to the point cloud's extent: closer points count as on a face
# A hull keeps at most this many corners: the contact kernels search them (support points,
# faces); a finer one (a scanned or sculpted mesh hulled whole) is thinned to fit, each cell
# of a grid over it keeping its corner farthest out, and says so (Hull.thinned).
MAX_HULL_VERTICES = 2_000


def principal_axes(tensor):
    """(Rp, moments) of a symmetric inertia tensor: T = Rp diag(moments) Rp^T with Rp a
    right-handed rotation; deterministic (see the module docstring)."""
    T = 0.5 * np.asarray(tensor, dtype=float) + 0.5 * np.asarray(tensor, dtype=float).T
    if not np.isfinite(T).all():   # (eigh would not converge)
        raise ValueError(f"the inertia tensor is not finite ({T.tolist()}): sizes, masses "
                         "or positions too large")
    off = max(abs(T[0, 1]), abs(T[0, 2]), abs(T[1, 2]))
    if off <= 1e-12 * abs(np.trace(T)):
        return np.eye(3), np.diag(T).copy()
    moments, V = np.linalg.eigh(T)
    for k in range(3):
        j = int(np.argmax(np.abs(V[:, k])))
        if V[j, k] < 0.0:
            V[:, k] = -V[:, k]
    if np.linalg.det(V) < 0.0:
        V[:, 2] = -V[:, 2]
    return V, moments


def _thinned_hull(corners):
    """(vertices, faces) of the hull of at most MAX_HULL_VERTICES of `corners` (a hull's):
    a grid over their box, coarser until few enough cells are used, keeps in each cell the
    corner farthest from the centre (the hull shrinks by at most a cell)."""
    centre = 0.5 * (corners.min(axis=0) + corners.max(axis=0))
    lo, span = corners.min(axis=0), np.ptp(corners, axis=0)
    far = np.linalg.norm(corners - centre, axis=1)
    cells = int(np.ceil(np.sqrt(MAX_HULL_VERTICES)))   # cells along an axis: a surface
    while True:
        index = np.minimum((cells * (corners - lo) / np.where(span > 0, span, 1.0)).astype(
            np.int64), cells - 1)
        key = (index[:, 0] * cells + index[:, 1]) * cells + index[:, 2]
        order = np.lexsort((-far, key))                  # by cell, farthest first
        first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
        vertices, faces = _convex_hull(corners[first])
        if len(vertices) <= MAX_HULL_VERTICES or cells <= 2:
            return vertices, faces
        cells = max(2, int(cells * 0.8))


def _convex_hull(points):
    """(vertices (k, 3), faces (m, 3)) of the convex hull of points (n, 3), by qhull (scipy):
    faces wound counter-clockwise seen from outside; raises ValueError for fewer than 4 points
    or a flat (collinear / coplanar) cloud, told apart first with HULL_TOLERANCE x extent.
    Coplanar faces stay split into triangles."""
    P = np.unique(np.asarray(points, dtype=float).reshape(-1, 3), axis=0)
    if len(P) < 4:
        raise ValueError(f"a hull needs at least 4 distinct points (got {len(P)})")
    extent = float(np.max(P.max(axis=0) - P.min(axis=0)))
    eps = HULL_TOLERANCE * extent
    i0 = int(np.argmin(P[:, 0]))
    i1 = int(np.argmax(np.linalg.norm(P - P[i0], axis=1)))
    u = P[i1] - P[i0]
    if np.linalg.norm(u) <= eps:
        raise ValueError("the points are all (nearly) one point")
    line = np.linalg.norm(np.cross(P - P[i0], u / np.linalg.norm(u)), axis=1)
    i2 = int(np.argmax(line))
    if line[i2] <= 1e3 * eps:
        raise ValueError("the points are (nearly) collinear: a hull needs volume")
    n = np.cross(u, P[i2] - P[i0])
    n /= np.linalg.norm(n)
    height = (P - P[i0]) @ n
    i3 = int(np.argmax(np.abs(height)))
    if abs(height[i3]) <= 1e3 * eps:
        raise ValueError("the points are (nearly) coplanar: a hull needs volume")
    from scipy.spatial import ConvexHull, QhullError  # lazily: the kernels never need it

    try:
        hull = ConvexHull(P)   # qhull; triangulated facets
    except QhullError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "qhull failed"
        raise ValueError(f"cannot build the hull ({first})") from None
    faces = np.asarray(hull.simplices, dtype=np.int64).copy()
    # qhull's triangles are not wound consistently: turn each to face its outward normal
    a, b, c = P[faces[:, 0]], P[faces[:, 1]], P[faces[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0.0
    faces[flip] = faces[flip][:, ::-1]
    used = np.unique(faces)
    remap = np.full(len(P), -1, np.int64)
    remap[used] = np.arange(len(used))
    return P[used].copy(), remap[faces]


class Hull:
    """The convex hull of a point cloud, written in the points' own (reference) frame.

    vertices (k, 3)      the hull's corners, reference frame
    faces (m, 3)         triangles (vertex rows), counter-clockwise seen from outside
    face_normals (m, 3)  outward unit normals; face_offsets (m,): the hull is
                         { x : face_normals @ x <= face_offsets }
    frame_pos, frame_rot the body frame (centre of mass, principal axes), see the module
    source               the file it was loaded from, or None

    Mass properties (uniform density) come from trimesh. Equality is identity (the renderer
    keeps a mesh per Hull object).
    """
    kind = HULL

    def __init__(self, vertices, *, source=None):
        import trimesh  # lazily: the kernels never need it

        pts = np.asarray(vertices, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise ValueError(f"hull vertices must be an array of [x, y, z] rows "
                             f"(got shape {pts.shape})")
        if not np.all(np.isfinite(pts)):
            raise ValueError("hull vertices have a NaN or infinite value")
        self.source = None if source is None else str(source)
        self.vertices, self.faces = _convex_hull(pts)
        self.thinned = None   # (corners of the whole hull, corners kept) where it was thinned
        if len(self.vertices) > MAX_HULL_VERTICES:
            whole = len(self.vertices)
            self.vertices, self.faces = _thinned_hull(self.vertices)
            self.thinned = (whole, len(self.vertices))
        mesh = trimesh.Trimesh(self.vertices, self.faces, process=False)
        props = mesh.mass_properties
        self._volume = float(props.volume)
        extent = float(np.max(self.vertices.max(axis=0) - self.vertices.min(axis=0)))
        if not self._volume > 1e-9 * extent ** 3:
            raise ValueError(f"the hull is flat (volume {self._volume:g})")
        self.face_normals = np.asarray(mesh.face_normals, dtype=float).copy()
        self.face_offsets = np.einsum("ij,ij->i", self.face_normals,
                                      self.vertices[self.faces[:, 0]])
        self._take_mass_properties(props, extent)

    def _take_mass_properties(self, props, extent):
        """Volume, centre and inertia per unit mass from trimesh's mass properties of the
        solid (`extent`: its size, to zero round-off in the centre)."""
        self._volume = float(props.volume)
        com = np.asarray(props.center_mass, dtype=float).copy()
        com[np.abs(com) <= 1e-12 * extent] = 0.0
        # trimesh's inertia is for density 1 (mass = volume), about the centre of mass
        self.unit_inertia_tensor = np.asarray(props.inertia, dtype=float) / props.mass
        self.frame_rot, self._moments = principal_axes(self.unit_inertia_tensor)
        self.frame_pos = com

    @classmethod
    def from_file(cls, path, scale=1.0):
        """The hull of the vertices of a mesh file trimesh can read (STL, OBJ, PLY, OFF, GLB
        ...), each vertex multiplied by `scale`; ValueError naming the file if it cannot be
        read, holds no mesh or its hull is flat."""

        scale = float(scale)
        if not (math.isfinite(scale) and scale > 0.0):
            raise ValueError(f"hull file {path}: scale must be positive and finite (got {scale})")
        mesh = read_mesh(path, "hull")
        verts = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
        if len(verts) == 0:
            raise ValueError(f"hull file {path}: cannot read a mesh (no vertices in it)")
        try:
            return cls(verts * scale, source=path)
        except ValueError as exc:
            raise ValueError(f"hull file {path}: {exc}") from None

    @property
    def size(self):
        """Half extents of the hull's box about the centre of mass, body frame (for display
        heuristics: marker sizes, drag reach); the geom_size row of a hull is zeros."""
        return _half_extents(self.vertices, self.frame_pos, self.frame_rot)

    def volume(self):
        return self._volume

    def unit_inertia(self):
        return self._moments.copy()

    def ray_hits(self, o, d):
        return ray.hull_hits(o, d, self.face_normals, self.face_offsets)

    def draw_parts(self):
        return [(self, _ZERO, (1.0, 1.0, 1.0))]   # its own mesh (render/instances.py: hull_mesh)

    def surface(self):
        """(vertices (n, 3), faces (m, 3)): the triangles drawn, in its frame (the hull's)."""
        return self.vertices, self.faces

    def world_box(self, pos, rot):
        world = self.vertices @ rot.T + pos
        return world.min(axis=0), world.max(axis=0)

    def __repr__(self):
        where = f" from {self.source!r}" if self.source else ""
        return f"Hull({len(self.vertices)} vertices, {len(self.faces)} faces{where})"


class Mesh(Hull):
    """A triangle mesh (STL, OBJ, DAE, GLB ... read by trimesh), written in its own (file)
    frame. It collides as its convex hull, as MuJoCo's mesh geoms do: for the engine it IS a
    Hull (kind HULL, `vertices` / `faces` / `face_normals` are the hull's), so every kernel
    serves it unchanged. What differs:

    surface()       its own triangles (mesh_vertices (n, 3), mesh_faces (m, 3)), drawn
                    instead of the hull
    closed          True when the triangles enclose a volume (watertight, consistently
                    wound): the mass properties are then the solid's (trimesh's
                    mass_properties, density 1); otherwise they are the hull's, and the loader
                    warns where a body's mass comes from them

    A mesh only drawn (`drawn_only`: a visual) may be flat, a cloth or a decal: its hull,
    which then only bounds the view, is given a thickness of FLAT_VISUAL_THICKNESS times its
    extent along each direction it has none in.
    """

    def __init__(self, vertices, faces, *, source=None, drawn_only=False):
        import trimesh

        pts = np.asarray(vertices, dtype=float)
        unique = np.unique(pts, axis=0) if pts.ndim == 2 else pts
        try:
            super().__init__(unique, source=source)
        except ValueError:
            if not (drawn_only and pts.ndim == 2 and len(unique) >= 3):
                raise
            super().__init__(_thickened(unique), source=source)
        tris = np.asarray(faces, dtype=np.int64)
        if tris.ndim != 2 or tris.shape[1] != 3 or len(tris) == 0:
            raise ValueError(f"mesh faces must be rows of 3 vertex indices (got shape "
                             f"{tris.shape})")
        if tris.min() < 0 or tris.max() >= len(pts):
            raise ValueError(f"a mesh face names a vertex that is not there (indices "
                             f"{tris.min()}..{tris.max()}, {len(pts)} vertices)")
        mesh = trimesh.Trimesh(pts, tris, process=True)   # merges coincident vertices
        if mesh.is_watertight and mesh.is_winding_consistent and mesh.volume < 0.0:
            mesh.invert()                                   # wound inside out
        self.mesh_vertices = np.asarray(mesh.vertices, dtype=float).copy()
        self.mesh_faces = np.asarray(mesh.faces, dtype=np.int64).copy()
        self.closed = bool(mesh.is_volume)
        if self.closed:
            self._take_mass_properties(mesh.mass_properties,
                                       float(np.max(pts.max(axis=0) - pts.min(axis=0))))

    @classmethod
    def from_file(cls, path, scale=1.0, drawn_only=False):
        """The mesh of a file trimesh can read, each vertex multiplied by `scale` (a number or
        one per axis); ValueError naming the file if it cannot be read, holds no triangles or
        is flat (but `drawn_only`, see the class)."""

        s = np.asarray(scale, dtype=float).reshape(-1)
        if s.shape not in ((1,), (3,)) or not (np.all(np.isfinite(s)) and np.all(s != 0.0)):
            raise ValueError(f"mesh file {path}: scale must be one or three finite numbers, "
                             f"none zero (got {scale})")
        mesh = read_mesh(path, "mesh")
        verts = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
        faces = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int64)
        if len(verts) == 0 or len(faces) == 0:
            raise ValueError(f"mesh file {path}: cannot read a mesh (no triangles in it)")
        if np.prod(np.sign(np.broadcast_to(s, 3))) < 0.0:
            faces = faces[:, ::-1]   # mirrored: the winding turns too (normals stay outward)
        try:
            return cls(verts * s, faces, source=path, drawn_only=drawn_only)
        except ValueError as exc:
            raise ValueError(f"mesh file {path}: {exc}") from None

    def surface(self):
        return self.mesh_vertices, self.mesh_faces

    def __repr__(self):
        where = f" from {self.source!r}" if self.source else ""
        return (f"Mesh({len(self.mesh_vertices)} vertices, {len(self.mesh_faces)} faces, "
                f"hull of {len(self.vertices)}{where})")


FLAT_VISUAL_THICKNESS = 1e-4   # a flat drawn mesh's hull, relative to its extent


def _thickened(points):
    """The points (n, 3) and copies moved by FLAT_VISUAL_THICKNESS x the extent along each
    principal direction in which the cloud is flat (a plane: one, a line: two)."""
    centred = points - points.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    extent = float(np.max(points.max(axis=0) - points.min(axis=0)))
    out = points
    for axis in axes:
        spread = np.ptp(centred @ axis)
        if spread < FLAT_VISUAL_THICKNESS * extent:
            out = np.vstack([out, out + FLAT_VISUAL_THICKNESS * extent * axis])
    return out


MAX_MESH_BYTES = 256 << 20   # a mesh file larger than this is refused before it is read
COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".lzma", ".zst")


def read_mesh(path, what):
    """The trimesh mesh of a hull or mesh file (readable_mesh_file's checks first), or one
    ValueError naming the `what` file and why it cannot be read."""
    import trimesh
    readable_mesh_file(path, what=what)
    try:
        mesh = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # noqa: BLE001 -- trimesh raises many kinds; all mean "cannot read"
        reason = "no such file" if not _exists(path) else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{what} file {path}: cannot read a mesh ({reason})") from None
    units = getattr(mesh, "units", None)   # (Collada files say theirs, mm or inches; STL none)
    if units and units != "meters":
        try:
            mesh.convert_units("meters")
        except Exception:  # noqa: BLE001 -- a unit trimesh does not know: taken as metres
            pass
    return mesh


def readable_mesh_file(path, what="hull"):
    """ValueError unless `path` is a regular mesh file of bounded size, not compressed: a FIFO
    or device may never end, and a 785-byte .stl.bz2 decompressed to 1 GiB. `what` names the
    shape in the message ("hull file ...", "mesh file ...")."""
    try:
        info = os.stat(path)
    except OSError as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else exc.strerror
        raise ValueError(f"{what} file {path}: cannot read a mesh ({reason})") from None
    except ValueError:   # (a NUL character in the name)
        raise ValueError(f"{what} file {path!r}: not a usable file name") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{what} file {path}: not a regular file (a folder, pipe or device)")
    if info.st_size > MAX_MESH_BYTES:
        raise ValueError(f"{what} file {path}: {info.st_size:,} bytes, more than the "
                         f"{MAX_MESH_BYTES:,} a mesh file may have")
    if str(path).lower().endswith(COMPRESSED):
        raise ValueError(f"{what} file {path}: compressed mesh files are not read; "
                         "decompress it first")


def _exists(path):
    return os.path.exists(str(path))


def _half_extents(points, centre, rot):
    local = (np.asarray(points, dtype=float) - centre) @ rot
    return tuple(float(x) for x in np.max(np.abs(local), axis=0))


def _leaf_box(shape):
    """(centre, half extents) of a part's own box in its frame."""
    if shape.kind == HULL:
        lo, hi = shape.vertices.min(axis=0), shape.vertices.max(axis=0)
        return 0.5 * (lo + hi), 0.5 * (hi - lo)
    a, b, c = shape.size
    if shape.kind == SPHERE:
        e = (a, a, a)
    elif shape.kind == CAPSULE:
        e = (a, a, b + a)
    elif shape.kind == CYLINDER:
        e = (a, a, b)
    else:
        e = (a, b, c)
    return np.zeros(3), np.array(e, dtype=float)


class Compound:
    """Several shapes on one body: parts = [(shape, pos, quat), ...] (quat may be left out),
    each part's pose in the compound's reference frame. Parts are primitives (not planes),
    Hulls or Decomposed meshes (each adds its pieces), never Compounds.  Mass properties
    assume one uniform density: the parts' volumes add (overlapping parts count twice), the
    centre of mass is their volume-weighted mean and the inertia the sum of the parts' tensors
    shifted to it (parallel axes).

    frame = (pos, quat) gives the body frame instead, in the reference frame: for bodies whose
    mass is not spread like their collision geometry (a robot link's measured centre of mass
    and principal axes, URDF's <inertial>, MJCF's inertial frame); the body's inertia should
    then be given too (unit_inertia() is the uniform one about this frame, off-diagonal terms
    dropped).

    parts           the normalised parts: tuples (shape, pos (3,), quat (4,)), reference frame
    frame_pos/rot   the body frame (centre of mass, principal axes), see the module
    body_parts      the parts as (shape, pos (3,), rot (3, 3)) in the body frame

    Equality is identity.
    """
    kind = COMPOUND

    def __init__(self, parts, frame=None):
        parts = list(parts)
        if not parts:
            raise ValueError("a compound needs at least one part")
        norm = []
        for i, part in enumerate(parts):
            if not isinstance(part, (tuple, list)) or len(part) not in (2, 3):
                raise ValueError(f"compound part {i}: must be (shape, pos) or (shape, pos, quat)")
            shape, pos = part[0], part[1]
            quat = part[2] if len(part) == 3 else (1.0, 0.0, 0.0, 0.0)
            if isinstance(shape, Compound) and not isinstance(shape, Decomposed):
                raise ValueError(f"compound part {i}: compounds do not nest")  # noqa: TRY004
            if getattr(shape, "kind", None) not in (BOX, SPHERE, CAPSULE, CYLINDER, ELLIPSOID,
                                                    HULL) and not isinstance(shape, Decomposed):
                raise ValueError(f"compound part {i}: the shape must be a box, sphere, capsule, "
                                 f"cylinder, ellipsoid or hull (got {shape!r})")
            p = np.asarray(pos, dtype=float).reshape(-1)
            q = np.asarray(quat, dtype=float).reshape(-1)
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"compound part {i}: pos must be 3 finite numbers")
            if q.shape != (4,) or not np.all(np.isfinite(q)) or np.linalg.norm(q) < 1e-9:
                raise ValueError(f"compound part {i}: quat must be 4 finite numbers, not zero")
            norm.append((shape, p, q / np.linalg.norm(q)))
        self.parts = tuple(norm)
        vols = []
        for i, (shape, _, _) in enumerate(norm):
            try:   # (a part's radius of 1e300 overflows its volume)
                vols.append(mass_properties(shape)[0])
            except ValueError as exc:
                raise ValueError(f"compound part {i}: {exc}") from None
        vols = np.array(vols)
        total = float(vols.sum())
        w = vols / total
        centres, tensors = [], []
        for shape, p, q in norm:
            R = quat_matrix(q)
            c_own, R_own = body_frame(shape)
            centres.append(p + R @ c_own)
            A = R @ R_own
            tensors.append(A @ np.diag(shape.unit_inertia()) @ A.T)
        centres = np.array(centres)
        com = w @ centres
        scale = max(float(np.max(np.abs(centres - centres.mean(axis=0)))), 1e-300)
        com[np.abs(com) <= 1e-12 * max(scale, float(np.max(np.abs(com))))] = 0.0
        T = np.zeros((3, 3))
        for wi, ci, Ti in zip(w, centres, tensors):
            d = ci - com
            T += wi * (Ti + (d @ d) * np.eye(3) - np.outer(d, d))
        self._volume = total
        self.unit_inertia_tensor = T
        self.frame_pos = com
        self.frame_rot, self._moments = principal_axes(T)
        if frame is not None:
            fp = np.asarray(frame[0], dtype=float).reshape(-1)
            fq = np.asarray(frame[1], dtype=float).reshape(-1)
            if (fp.shape != (3,) or fq.shape != (4,) or not np.all(np.isfinite(fp))
                    or not np.all(np.isfinite(fq)) or np.linalg.norm(fq) < 1e-9):
                raise ValueError("frame must be (pos: 3 finite numbers, quat: 4, not zero)")
            d = com - fp
            Rf = quat_matrix(fq / np.linalg.norm(fq))
            self.frame_pos = fp
            self.frame_rot = Rf
            self._moments = np.diag(Rf.T @ (T + (d @ d) * np.eye(3) - np.outer(d, d)) @ Rf).copy()
            com = fp
        self.body_parts = _body_parts(norm, com, self.frame_rot)

    @property
    def size(self):
        """Half extents of the parts' boxes about the centre of mass, body frame (display)."""
        hi = np.zeros(3)
        for shape, p, R in self.body_parts:
            c, e = _leaf_box(shape)
            hi = np.maximum(hi, np.abs(p + R @ c) + np.abs(R) @ e)
        return tuple(float(x) for x in hi)

    def volume(self):
        return self._volume

    def unit_inertia(self):
        return self._moments.copy()

    def __repr__(self):
        return f"Compound({len(self.parts)} parts)"


def _body_parts(parts, com, rot):
    """Parts (shape, pos, quat) of a reference frame as (leaf, pos, rot) in the body frame
    (centre `com`, axes `rot`); a Decomposed part gives its pieces."""
    out = []
    for s, p, q in parts:
        R = quat_matrix(q)
        if isinstance(s, Decomposed):   # its pieces, posed by the part's pose
            out += [(leaf, rot.T @ (p + R @ (s.frame_pos + s.frame_rot @ pb) - com),
                     rot.T @ R @ s.frame_rot @ Rb) for leaf, pb, Rb in s.body_parts]
        else:
            out.append((s, rot.T @ (p - com), rot.T @ R))
    return tuple(out)


class Decomposed(Compound):
    """A mesh that collides as convex pieces, its convex decomposition (computed by the scene
    loader: scenes/decompose.py), and is drawn with its own triangles (the loader makes the
    mesh the body's visual).

    mesh            the Mesh (closed: its triangles enclose a volume), in the reference frame
    parts           the pieces: (Hull, 0, identity), their vertices in the reference frame
    source, closed  the mesh's

    Its mass properties are the mesh's own (the solid its triangles enclose, as without the
    decomposition), not the pieces': they overlap a little and cover the solid only to within
    the decomposition's concavity. So deciding to decompose changes the contacts, not the
    mass. A compound may have a Decomposed part: its pieces become the compound's geoms
    (`body_parts`) and it adds the mesh's mass properties."""

    def __init__(self, mesh, pieces):
        if not isinstance(mesh, Mesh) or not mesh.closed:
            raise ValueError("only a closed mesh (its triangles enclose a volume) is "
                             "decomposed")
        super().__init__([(piece, _ZERO, (1.0, 0.0, 0.0, 0.0)) for piece in pieces])
        self.mesh = mesh
        self.source = mesh.source
        self.closed = True
        self._volume = mesh.volume()
        self.unit_inertia_tensor = mesh.unit_inertia_tensor
        self.frame_pos, self.frame_rot = mesh.frame_pos, mesh.frame_rot
        self._moments = mesh.unit_inertia()
        self.body_parts = _body_parts(self.parts, self.frame_pos, self.frame_rot)

    def __repr__(self):
        where = f" from {self.source!r}" if self.source else ""
        return f"Decomposed({len(self.parts)} convex pieces{where})"


def body_frame(shape):
    """(c (3,), Rp (3, 3)): the body frame (centre of mass, principal axes) in the shape's
    reference frame; (0, I) for the primitives."""
    if isinstance(shape, (Hull, Compound)) or getattr(shape, "kind", None) == FDO:
        return shape.frame_pos, shape.frame_rot
    return np.zeros(3), np.eye(3)


def geoms(shape):
    """The body's geoms as [(leaf shape, pos (3,), rot (3, 3))] in the body frame: a compound's
    parts; a hull at -Rp^T c turned by Rp^T (its vertices stay in its own frame); a
    primitive at the origin."""
    if isinstance(shape, Compound):
        return list(shape.body_parts)
    if isinstance(shape, Hull) or getattr(shape, "kind", None) == FDO:
        R = shape.frame_rot
        return [(shape, -(R.T @ shape.frame_pos), R.T.copy())]
    return [(shape, np.zeros(3), np.eye(3))]


def framed(shape):
    """Whether the shape is written in a reference frame of its own (a hull, mesh, compound or
    FDO): its body frame is then `body_frame(shape)`, its pieces `geoms(shape)`."""
    return isinstance(shape, (Hull, Compound)) or getattr(shape, "kind", None) == FDO


# (at the end: physics/fdo.py reads this module's kind codes and the kernels' helpers)
from .fdo import Fdo  # noqa: E402

SHAPES = {"box": Box, "sphere": Sphere, "capsule": Capsule, "cylinder": Cylinder,
          "ellipsoid": Ellipsoid, "plane": Plane, "hull": Hull, "mesh": Mesh,
          "compound": Compound, "fdo": Fdo}
