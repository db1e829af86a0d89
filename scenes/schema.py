"""Scene file schema, version 0: the pydantic models a scene TOML file must match.

Units are SI (m, kg, s, N, rad), the world frame has z up, quaternions are
written (w, x, y, z) and angles are in radians.  Every number must be finite
(``nan`` and ``inf`` are rejected), vectors have exactly 3 numbers (quaternions
4), and unknown keys anywhere are errors.  A complete file::

    version = 0                      # optional, must be 0 if given
    description = "free text"        # optional
    duration = 5.0                   # s, > 0, how long a headless run lasts by default, default 5

    behaviour = { name = "valve_turn" }  # optional: a shipped controller (scenes/behaviours.py)
                                     # that drives the robot; scene files run no code

    [world]                          # optional table; the ranges of [world] and [solver]
    gravity = [0.0, 0.0, -9.81]      # are listed under "Ranges" below
    dt = 0.01                        # s
    max_speed = 1e4                  # m/s: a dynamic body faster than this stops the run as
    max_angular_speed = 1e5          # a blow-up (rad/s: turning faster); 0 = no such check
    max_joint_gap = 0.1              # m: a joint whose anchors are this far apart stops it
    max_joint_angle_gap = 0.5        # rad: likewise for a joint's locked axes
    max_energy_gain = 10.0           # a step gaining more energy than this many times what
                                     # its forces, motors and drag could supply stops it

    [solver]                         # optional table
    iterations = 100                 # velocity iterations (max)
    position_iterations = 4          # mass-weighted position sweeps
    tolerance = 1e-9                 # N s: stop when every |dp| <= tolerance
    budget_ms = 0.0                  # wall-clock budget per step in ms, 0 = off
    warm_start = true
    manifold_reuse = 0.0002          # m: a touching pair whose bodies moved no point
                                     # further than this since its contact points were found
                                     # keeps them (0 = every pair afresh each step)
    articulation = "sweep"           # a jointed tree's rows: "sweep" (row by row, with the
                                     # rest) or "tree" (each tree one block solved exactly,
                                     # physics/articulation.py)
    threads = 0                      # threads a step may use, 0 = every core (the same
                                     # results for any number: physics/partition.py)

    [[bodies]]
    name = "door"                    # required, unique, not "world" (the fixed world body)
    shape = { type = "box", half_extents = [0.5, 0.02, 1.0] }
    mass = 21.5                      # kg > 0
    # density = 1000.0               # kg/m^3 > 0, instead of mass
    # inertia = [Ixx, Iyy, Izz]      # principal moments about the centre of mass, body frame, > 0
    pos = [0.5, 0.0, 1.0]            # m, default [0, 0, 0]
    quat = [1.0, 0.0, 0.0, 0.0]      # default identity; normalised on load, must not be zero
    vel = [0.0, 0.0, 0.0]            # m/s, default zero
    angvel = [0.0, 0.0, 0.0]         # rad/s, world frame, default zero
    kind = "dynamic"                 # dynamic | static | kinematic, default dynamic
    friction = 0.5                   # Coulomb mu >= 0 of the surface, default 0.5
    rolling = 0.0                    # rolling resistance, m (torque <= rolling x N), default 0
    spinning = 0.0                   # spinning resistance, m (torque <= spinning x N), default 0
    restitution = 0.0                # 0..1, default 0; a contact takes the larger of the two
                                     # bodies' values of each of these four (MuJoCo's rule)
    # friction_axis = [1.0, 0.0, 0.0]  # optional anisotropic friction (paper 001): a body-frame
    # friction_along = 0.2           # direction and mu for sliding along it ("friction" is
                                     # the mu across it); give both or neither
    # friction_regions = [{ friction = 0.9, box = { center = [0.1, 0, 0], half_extents =
    #   [0.1, 0.2, 0.1] } }, { friction = 0.1, half_space = { normal = [-1, 0, 0] } }]
                                     # parts of the surface with a mu of their own (paper
                                     # 001): a box, a half-space n . x >= offset or a hull's
                                     # face = k, in the body's frame; the first that holds a
                                     # contact point gives its mu there
    # visuals = [{ shape = { type = "mesh", file = "arm.obj" }, rgba = [0.8, 0.8, 0.8, 1.0] }]
    group = 1                        # collision bits of the body, default 1
    mask = 4611686018427387903       # bits it collides with (2^62 - 1: all, the default);
                                     # a and b touch iff group_a & mask_b and group_b & mask_a,
                                     # and never when a joint joins them

    [[joints]]
    name = "hinge"                   # required, unique
    type = "revolute"                # revolute | prismatic | spherical | fixed; 2 or 3
                                     # revolute joints between the same bodies compose in
                                     # order (a universal joint, a gimbal)
    body_a = "world"                 # a body name or "world"
    body_b = "door"                  # a body name or "world", not body_a
    anchor = [0.0, 0.0, 1.0]         # world-frame point at the initial pose, default [0, 0, 0]
    axis = [0.0, 0.0, 1.0]           # world-frame axis (revolute, prismatic), normalised
    friction = 20.0                  # Coulomb limit, N m (revolute, spherical) or N (prismatic),
                                     # default 0 (range below); must be 0 on fixed joints
    damping = 0.0                    # viscous, N m s/rad (revolute, spherical) or N s/m
                                     # (prismatic), implicit; default 0; 0 on fixed joints
    limits = [-1.0, 1.0]             # optional [lower, upper], lower < upper; rad (revolute) or
                                     # m (prismatic); not allowed on spherical and fixed joints
    # mimic = { joint = "other", multiplier = 2.0, offset = 0.1 }  # optional: follow joint
                                     # "other" as q = multiplier q_other + offset (revolute and
                                     # prismatic; an equality row of the solve, URDF's <mimic>;
                                     # "other" may follow a third joint, not round in a cycle)
    # mimic = { joint = "knee", multiplier = 1.0, lower = -0.6, upper = 4.0 }  # or a limit:
                                     # q - multiplier q_other - offset kept within [lower,
                                     # upper] (lower <= upper, default 0 and 0: the equality),
                                     # free inside (MuJoCo's limited fixed tendon)

    [[loads]]                        # timed external loads, world frame
    body = "door"                    # a body name, not "world", not a static body
    force = [0.0, 0.0, 0.0]          # N at the centre of mass, default zero
    torque = [0.0, 0.0, 52.7]        # N m, default zero
    start = 0.0                      # s, >= 0, default 0
    end = 0.33                       # s, > start; omit for a load that never ends

Shapes (``type`` selects one; capsules and cylinders lie along the body z axis):

* ``box``: ``half_extents = [hx, hy, hz]``, each > 0
* ``sphere``: ``radius`` > 0
* ``capsule``: ``radius`` > 0, ``half_length`` > 0 (of the cylindrical part)
* ``cylinder``: ``radius`` > 0, ``half_length`` > 0
* ``ellipsoid``: ``semi_axes = [a, b, c]``, each > 0
* ``fdo``: a functionally defined object (paper 001): ``semi_axes = [a, b, c]`` of the base
  ellipsoid (or ``quadric``, its 10 coefficients k0..k9 of k0 + k1 x + k2 y + k3 z + k4 x^2 +
  k5 y^2 + k6 z^2 + k7 xy + k8 yz + k9 xz, bounded) and ``perturbations = [{ weight = f,
  centre = [x, y, z], semi_axes = [a, b, c], quat = [w, x, y, z] }, ...]`` (or ``quadric``
  instead of centre and semi_axes): F' = F + sum f Q^3 where Q >= 0, positive inside; a bump
  (f > 0) needs a bounded support
* ``plane``: no numbers; the half-space z <= 0 of the body frame (the ground), static only
* ``hull``: the convex hull of ``vertices = [[x, y, z], ...]`` (at least 4 points, not all in
  one plane) or of the vertices of the mesh ``file = "rock.stl"`` (any format trimesh reads:
  STL, OBJ, PLY, OFF, GLB ...; a relative path is relative to the scene file; the file must
  lie in the scene's folder or a declared asset root: scenes/asset_roots.py), each vertex
  multiplied by ``scale`` (> 0, default 1).  Give ``vertices`` or ``file``, not both.
* ``mesh``: a triangle mesh, from ``file = "part.stl"`` (STL, OBJ, DAE, GLB ... anything
  trimesh reads; relative to the scene file) or inline ``vertices = [[x, y, z], ...]`` with
  ``faces = [[i, j, k], ...]`` (vertex rows counted from 0, counter-clockwise seen from
  outside), each vertex multiplied by ``scale`` (one number or ``[sx, sy, sz]``, none zero;
  a negative factor mirrors the mesh).  It
  collides as its convex hull (as MuJoCo's mesh geoms do: a concave mesh is filled in for
  contacts), weighs as the solid it encloses when its triangles close a volume (watertight,
  consistently wound; otherwise as its hull, with a warning where the body's mass comes from
  it) and is drawn with its own triangles.  Give ``file`` or ``vertices`` and ``faces``.
  ``decompose = true`` makes a concave mesh collide as convex pieces instead of its hull (its
  convex decomposition by CoACD, as PyBullet's V-HACD or CoACD run for MuJoCo; cached on disk:
  scenes/decompose.py), still drawn with its triangles and weighing as the solid it encloses;
  ``max_parts`` (1..256, default 32) caps the pieces (more are merged, with a warning) and
  ``concavity`` (0.01..1, default 0.05, a share of the mesh's size: smaller is finer, more
  pieces and slower) is how concave a piece may stay.  A mesh whose triangles enclose no
  volume is not decomposed (a warning; it collides as its hull).
* ``compound``: several shapes on one body,
  ``parts = [{ shape = {...}, pos = [x, y, z], quat = [w, x, y, z] }, ...]`` (at least one;
  ``pos`` default zero, ``quat`` default identity, normalised); a part's shape is any type
  above but ``plane`` and ``compound`` (compounds do not nest).  The parts share one density:
  their volumes add (overlaps count twice).

Hulls and compounds are written in their own reference frame: the vertices and part poses
are in it and the body's ``pos`` / ``quat`` place it.  The simulated body frame is the centre
of mass and principal axes (physics.shape); its pose is what the viewer and outputs report as
the body's position and orientation, ``vel`` is the centre of mass's velocity and
``inertia`` (if given) is about the principal axes.  For example a dumbbell::

    [[bodies]]
    name = "dumbbell"
    density = 1000.0
    pos = [0.0, 0.0, 0.5]
    shape.type = "compound"
    [[bodies.shape.parts]]
    shape = { type = "sphere", radius = 0.1 }
    pos = [-0.3, 0.0, 0.0]
    [[bodies.shape.parts]]
    shape = { type = "sphere", radius = 0.1 }
    pos = [0.3, 0.0, 0.0]
    [[bodies.shape.parts]]           # the bar: a capsule along z turned onto x
    shape = { type = "capsule", radius = 0.03, half_length = 0.3 }
    quat = [0.7071068, 0.0, 0.7071068, 0.0]

(TOML inline tables must fit on one line; ``[[bodies.shape.parts]]`` tables do not.)

Visual shapes: ``visuals = [{ shape = {...}, pos = [x, y, z], quat = [w, x, y, z],
rgba = [r, g, b, a] }, ...]`` on a body are drawn with it but take no part in collision or
mass (URDF's ``<visual>``, MJCF's visual-only geoms).  A shape is any type a compound part
may be; ``pos`` / ``quat`` place it in the frame the body's ``pos`` / ``quat`` place (the
reference frame of a hull, mesh or compound; default zero and identity); ``rgba`` is its
colour, each in 0..1 (alpha is not drawn; default: the body's colour).  A body with visuals is
drawn by them, its collision shape is not drawn.  A static body with visuals needs no shape
(scenery that touches nothing: MJCF's visual-only world geoms).

Mass: a dynamic body needs exactly one of ``mass`` / ``density``; static and
kinematic bodies need neither (but may not have both).  ``inertia`` overrides
the moments computed from the shape.  ``shape`` may be left out only if both
``mass`` and ``inertia`` are given.

Rules that span fields or entries are raised as ``scene`` errors (see
`problem`) so the loader can point each one at the exact entry and field.

Ranges (`physics.settings.SETTINGS`, the one table the engine, the app and this schema
share; ``friction`` is a joint's, ``speed`` only the app's), appended below from the table.
"""

import math
import os
import sys
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictStr,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..physics.joint import JOINT_TYPE_INFO, JOINT_TYPES, scene_types_with
from ..physics.message import listing, quoted
from ..physics.settings import SETTINGS, reference
from .decompose import (
    DEFAULT_CONCAVITY,
    DEFAULT_MAX_PARTS,
    MAX_CONCAVITY,
    MAX_PARTS,
    MIN_CONCAVITY,
)

if __doc__:  # (None under python -OO)
    __doc__ += "\n" + "\n".join("    " + line for line in reference().splitlines()) + "\n"

SCHEMA_VERSION = 0
MAX_DURATION = 1e6   # s (11.6 days): a run's steps must stay countable
MAX_START_HEIGHT_M = 1e4   # m: a robot file's start height above its ground, at most
WORLD_BODY = "world"
# Below this norm a quaternion or axis has no usable direction.
MIN_NORM = 1e-9

# Strict so that TOML strings and booleans are not silently coerced to numbers;
# strict floats still accept TOML integers.
Real = Annotated[float, Strict(), AllowInfNan(False)]
Positive = Annotated[Real, Field(gt=0)]
NonNegative = Annotated[Real, Field(ge=0)]
Vec3 = tuple[Real, Real, Real]
PositiveVec3 = tuple[Positive, Positive, Positive]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0)]
Fraction = Annotated[Real, Field(ge=0, le=1)]
Quat = tuple[Real, Real, Real, Real]
Name = Annotated[StrictStr, Field(min_length=1)]

Loc = tuple[str | int, ...]


def _ranged(name: str, kind: type = float):
    """The type of a number within the range of setting `name` (physics.settings)."""
    s = SETTINGS[name]
    if kind is int:
        return Annotated[int, Strict(), Field(ge=s.min, le=s.max)]
    return Annotated[Real, Field(ge=s.min, le=s.max)]


def problem(*problems: tuple[Loc, str]) -> PydanticCustomError:
    """An error of type ``scene`` carrying one or more (loc, message) problems.

    Each loc is relative to the model (or field) being validated, so a
    scene-wide check can point into any entry; the loader appends it to
    pydantic's own loc.  A validator can raise only one error, hence the list.
    """
    return PydanticCustomError(
        "scene",
        "{message}",
        {"message": "; ".join(message for _, message in problems), "problems": list(problems)},
    )


def _unit(vector: tuple[float, ...]) -> tuple[float, ...]:
    norm = math.sqrt(sum(c * c for c in vector))
    if norm < MIN_NORM:
        raise problem(((), f"must not be zero (norm {norm:g})"))
    if abs(norm - 1.0) <= 4.0 * sys.float_info.epsilon:
        return tuple(vector)   # unit already: dividing again would change its last bits
    return tuple(c / norm for c in vector)


# a quaternion or axis given unit length (normalised; zero is an error)
UnitQuat = Annotated[Quat, AfterValidator(_unit)]
UnitVec3 = Annotated[Vec3, AfterValidator(_unit)]


def _nonzero(scale):
    if any(c == 0.0 for c in (scale if isinstance(scale, tuple) else (scale,))):
        raise problem(((), "must not be zero (a negative factor mirrors the mesh)"))
    return scale


# a mesh's scale: one factor or one per axis; a negative one mirrors (left and right limbs
# sharing one mesh), zero flattens it and is an error
MeshScale = Annotated[Real | Vec3, AfterValidator(_nonzero)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BoxSpec(_Spec):
    type: Literal["box"]
    half_extents: PositiveVec3


class SphereSpec(_Spec):
    type: Literal["sphere"]
    radius: Positive


class CapsuleSpec(_Spec):
    type: Literal["capsule"]
    radius: Positive
    half_length: Positive


class CylinderSpec(_Spec):
    type: Literal["cylinder"]
    radius: Positive
    half_length: Positive


class EllipsoidSpec(_Spec):
    type: Literal["ellipsoid"]
    semi_axes: PositiveVec3


class PlaneSpec(_Spec):
    """The half-space z <= 0 of the body's frame (the ground); static bodies only."""
    type: Literal["plane"]


class HullSpec(_Spec):
    """The convex hull of `vertices` or of the mesh `file`'s vertices, times `scale`."""
    type: Literal["hull"]
    vertices: Annotated[list[Vec3], Field(min_length=4)] | None = None
    file: Name | None = None
    scale: Positive = 1.0

    @model_validator(mode="before")
    @classmethod
    def _not_decomposed(cls, data):
        if isinstance(data, dict) and "decompose" in data:
            raise problem((("decompose",), 'a hull is convex: a concave mesh that collides as '
                                           'convex pieces is a "mesh" shape with decompose = '
                                           'true'))
        return data

    @field_validator("file")
    @classmethod
    def _file_exists(cls, file: str | None) -> str | None:
        # the loader has made a relative path relative to the scene file already
        if file is not None and not os.path.isfile(file):
            if os.path.exists(file):
                raise problem(((), f"{quoted(file, 200)} is not a regular file (a folder, pipe "
                                   "or device)"))
            raise problem(((), f"no such file {quoted(file, 200)}"))
        return file

    @model_validator(mode="after")
    def _one_source(self) -> "HullSpec":
        if (self.vertices is None) == (self.file is None):
            which = "both" if self.file is not None else "neither"
            raise problem((("vertices",), f'give "vertices" or "file", not {which}'))
        return self


class MeshSpec(_Spec):
    """A triangle mesh: the mesh `file` (or inline `vertices` and `faces`), times `scale` (a
    negative factor mirrors it); collides as its convex hull, or with `decompose` as convex
    pieces (its convex decomposition: at most `max_parts` pieces, each concave by at most
    `concavity` times the mesh's size), weighs as the solid it encloses, drawn with its
    triangles."""
    type: Literal["mesh"]
    file: Name | None = None
    vertices: Annotated[list[Vec3], Field(min_length=4)] | None = None
    faces: Annotated[list[tuple[NonNegativeInt, NonNegativeInt, NonNegativeInt]],
                     Field(min_length=1)] | None = None
    scale: MeshScale = 1.0
    decompose: StrictBool = False
    max_parts: Annotated[int, Strict(), Field(ge=1, le=MAX_PARTS)] = DEFAULT_MAX_PARTS
    concavity: Annotated[Real, Field(ge=MIN_CONCAVITY, le=MAX_CONCAVITY)] = DEFAULT_CONCAVITY

    @field_validator("file")
    @classmethod
    def _file_exists(cls, file: str | None) -> str | None:
        # the loader has made a relative path relative to the scene file already
        if file is not None and not os.path.isfile(file):
            raise problem(((), f'no such file "{file}"'))
        return file

    @model_validator(mode="after")
    def _one_source(self) -> "MeshSpec":
        inline = self.vertices is not None or self.faces is not None
        if (self.file is not None) == inline:
            which = "both" if self.file is not None else "neither"
            raise problem((("file",), f'give "file" or "vertices" and "faces", not {which}'))
        if inline and (self.vertices is None or self.faces is None):
            missing = "faces" if self.faces is None else "vertices"
            raise problem(((missing,), 'inline mesh needs both "vertices" and "faces"'))
        if self.faces is not None and self.vertices is not None:
            top = max(max(f) for f in self.faces)
            if top >= len(self.vertices):
                raise problem((("faces",), f"a face names vertex {top}, the mesh has "
                                           f"{len(self.vertices)} (counted from 0)"))
        knobs = [k for k in ("max_parts", "concavity") if k in self.model_fields_set]
        if knobs and not self.decompose:
            raise problem(((knobs[0],), "applies only with decompose = true"))
        return self


class PerturbationSpec(_Spec):
    """One perturbation of an FDO: weight f (> 0 a bump, < 0 a dent) times Q^3 where the
    perturbing quadric Q >= 0: an ellipsoidal support (centre, semi_axes, quat) or the 10
    coefficients of Q (physics/fdo.py)."""
    weight: Real
    centre: Vec3 | None = None
    semi_axes: PositiveVec3 | None = None
    quat: UnitQuat | None = None
    quadric: Annotated[list[Real], Field(min_length=10, max_length=10)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "PerturbationSpec":
        if self.quadric is not None and (self.centre is not None or self.semi_axes is not None
                                         or self.quat is not None):
            raise problem((("quadric",), 'give "quadric" or "centre" and "semi_axes", not both'))
        if self.quadric is None and (self.centre is None or self.semi_axes is None):
            raise problem((("semi_axes",), 'a perturbation needs "centre" and "semi_axes" '
                                           '(or "quadric")'))
        return self


class FdoSpec(_Spec):
    """A functionally defined object (paper 001): the base ellipsoid by `semi_axes` (or a
    bounded quadric by its 10 coefficients, `quadric`) plus `perturbations`."""
    type: Literal["fdo"]
    semi_axes: PositiveVec3 | None = None
    quadric: Annotated[list[Real], Field(min_length=10, max_length=10)] | None = None
    perturbations: list[PerturbationSpec] = []

    @model_validator(mode="after")
    def _one_base(self) -> "FdoSpec":
        if (self.semi_axes is None) == (self.quadric is None):
            which = "both" if self.quadric is not None else "neither"
            raise problem((("semi_axes",), f'give "semi_axes" or "quadric", not {which}'))
        return self


# the shapes a compound part may be
PART_SHAPES: dict[str, type[_Spec]] = {
    "box": BoxSpec,
    "sphere": SphereSpec,
    "capsule": CapsuleSpec,
    "cylinder": CylinderSpec,
    "ellipsoid": EllipsoidSpec,
    "hull": HullSpec,
    "mesh": MeshSpec,
}
PartShapeSpec = Annotated[
    BoxSpec | SphereSpec | CapsuleSpec | CylinderSpec | EllipsoidSpec | HullSpec | MeshSpec,
    Field(discriminator="type"),
]


class PartSpec(_Spec):
    """One part of a compound: its shape and pose in the compound's reference frame."""
    shape: PartShapeSpec
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: UnitQuat = (1.0, 0.0, 0.0, 0.0)


class FrameSpec(_Spec):
    """A pose in a compound's reference frame."""
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: UnitQuat = (1.0, 0.0, 0.0, 0.0)


class CompoundSpec(_Spec):
    """Several parts on one body. `frame`: the body frame (centre of mass, principal axes) in
    the compound's reference frame, for a body whose mass is not spread like its parts (give
    its mass and inertia too); by default the parts' uniform-density centre and axes."""
    type: Literal["compound"]
    parts: Annotated[list[PartSpec], Field(min_length=1)]
    frame: FrameSpec | None = None


SHAPES: dict[str, type[_Spec]] = {
    "box": BoxSpec,
    "sphere": SphereSpec,
    "capsule": CapsuleSpec,
    "cylinder": CylinderSpec,
    "ellipsoid": EllipsoidSpec,
    "plane": PlaneSpec,
    "hull": HullSpec,
    "mesh": MeshSpec,
    "compound": CompoundSpec,
    "fdo": FdoSpec,
}
ShapeSpec = Annotated[
    BoxSpec | SphereSpec | CapsuleSpec | CylinderSpec | EllipsoidSpec | PlaneSpec | HullSpec
    | MeshSpec | CompoundSpec | FdoSpec,
    Field(discriminator="type"),
]


class BoxRegionSpec(_Spec):
    center: Vec3
    half_extents: PositiveVec3


class HalfSpaceRegionSpec(_Spec):
    normal: Vec3
    offset: Real = 0.0

    @model_validator(mode="after")
    def _normal(self) -> "HalfSpaceRegionSpec":
        if not any(self.normal):
            raise problem((("normal",), "must not be the zero vector"))
        return self


class FrictionRegionSpec(_Spec):
    """A part of the body's surface with a friction of its own (physics.FrictionRegion), in
    the frame the body's pos / quat place: a box, a half-space n . x >= offset, or face k of
    a hull or mesh body (Hull.faces' row k and the faces in its plane)."""
    friction: NonNegative
    box: BoxRegionSpec | None = None
    half_space: HalfSpaceRegionSpec | None = None
    face: NonNegativeInt | None = None

    @model_validator(mode="after")
    def _one_place(self) -> "FrictionRegionSpec":
        given = [k for k in ("box", "half_space", "face") if getattr(self, k) is not None]
        if len(given) != 1:
            raise problem(((), "give exactly one of box, half_space, face (got "
                               f"{', '.join(given) or 'none'})"))
        return self


class VisualSpec(_Spec):
    """A shape drawn on a body, in no collision and of no mass: its pose in the frame the
    body's pos / quat place, and its colour (None: the body's)."""
    shape: PartShapeSpec
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: UnitQuat = (1.0, 0.0, 0.0, 0.0)
    rgba: tuple[Fraction, Fraction, Fraction, Fraction] | None = None

    @model_validator(mode="after")
    def _drawn_only(self) -> "VisualSpec":
        if self.shape.type == "mesh" and self.shape.decompose:
            raise problem((("shape", "decompose"), "a visual is only drawn: decompose applies "
                                                   "to collision shapes"))
        return self


class WorldSpec(_Spec):
    gravity: tuple[_ranged("gravity"), _ranged("gravity"), _ranged("gravity")] = \
        SETTINGS["gravity"].default
    dt: _ranged("dt") = SETTINGS["dt"].default
    max_speed: _ranged("max_speed") = SETTINGS["max_speed"].default
    max_angular_speed: _ranged("max_angular_speed") = SETTINGS["max_angular_speed"].default
    max_joint_gap: _ranged("max_joint_gap") = SETTINGS["max_joint_gap"].default
    max_joint_angle_gap: _ranged("max_joint_angle_gap") = \
        SETTINGS["max_joint_angle_gap"].default
    max_energy_gain: _ranged("max_energy_gain") = SETTINGS["max_energy_gain"].default


class SolverSpec(_Spec):
    iterations: _ranged("iterations", int) = SETTINGS["iterations"].default
    position_iterations: _ranged("position_iterations", int) = \
        SETTINGS["position_iterations"].default
    tolerance: _ranged("tolerance") = SETTINGS["tolerance"].default
    budget_ms: _ranged("budget_ms") = SETTINGS["budget_ms"].default
    warm_start: StrictBool = SETTINGS["warm_start"].default
    manifold_reuse: _ranged("manifold_reuse") = SETTINGS["manifold_reuse"].default
    articulation: Literal[SETTINGS["articulation"].choices] = SETTINGS["articulation"].default
    threads: _ranged("threads", int) = SETTINGS["threads"].default


class BodySpec(_Spec):
    name: Name
    shape: ShapeSpec | None = None
    mass: Positive | None = None
    density: Positive | None = None
    inertia: PositiveVec3 | None = None
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: UnitQuat = (1.0, 0.0, 0.0, 0.0)
    vel: Vec3 = (0.0, 0.0, 0.0)
    angvel: Vec3 = (0.0, 0.0, 0.0)
    kind: Literal["dynamic", "static", "kinematic"] = "dynamic"
    friction: NonNegative = 0.5
    rolling: NonNegative = 0.0
    spinning: NonNegative = 0.0
    restitution: Annotated[Real, Field(ge=0, le=1)] = 0.0
    friction_axis: Vec3 | None = None
    friction_along: NonNegative | None = None
    friction_regions: list[FrictionRegionSpec] = []
    group: Annotated[int, Strict(), Field(ge=0, lt=2**62)] = 1
    mask: Annotated[int, Strict(), Field(ge=0, lt=2**62)] = 2**62 - 1
    visuals: list[VisualSpec] = []

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if name == WORLD_BODY:
            raise problem(((), f'"{WORLD_BODY}" is reserved for the fixed world body'))
        return name


    @model_validator(mode="after")
    def _mass_is_defined(self) -> "BodySpec":
        problems = []
        if self.mass is not None and self.density is not None:
            problems.append((("density",), 'give either "mass" or "density", not both'))
        elif self.kind == "dynamic" and self.mass is None and self.density is None:
            problems.append((("mass",), 'a dynamic body needs "mass" or "density"'))
        if (self.friction_axis is None) != (self.friction_along is None):
            missing = "friction_along" if self.friction_along is None else "friction_axis"
            problems.append(((missing,), 'anisotropic friction needs both "friction_axis" '
                                         'and "friction_along"'))
        elif self.friction_axis is not None and not any(self.friction_axis):
            problems.append((("friction_axis",), "must not be the zero vector"))
        # Without a shape there is nothing to compute a volume or inertia from.
        if self.shape is not None and self.shape.type == "plane" and self.kind != "static":
            problems.append((("kind",), 'a plane is infinite: its body must be "static"'))
        decoration = self.kind == "static" and bool(self.visuals)   # drawn, touches nothing
        if self.shape is None and (self.mass is None or self.inertia is None) and not decoration:
            problems.append((("shape",), 'is required unless both "mass" and "inertia" are given'))
        if problems:
            raise problem(*problems)
        return self


class ControllerSpec(_Spec):
    """What sets a motor's voltage every step (World.set_controller): a PD on the joint's
    coordinate, or a P on its rate; the set-point is `target`, `sine` or `keyframes`.
    `implicit` takes the rate term at the step's end (MuJoCo's implicitfast servos)."""
    mode: Literal["position", "velocity"]
    kp: NonNegative = 0.0
    kd: NonNegative = 0.0
    target: Real = 0.0
    sine: tuple[Real, Real, Real] | tuple[Real, Real, Real, Real] | None = None
    keyframes: list[tuple[Real, Real]] | None = None
    # the rate term (kd; kp of a velocity controller) on the joint's rate at the step's end,
    # solved with the step (stable at any gain, as MuJoCo's implicitfast servos) instead of
    # the rate at its start (a digital controller sampled at the physics rate)
    implicit: StrictBool = False

    @model_validator(mode="after")
    def _one_set_point(self) -> "ControllerSpec":
        if self.sine is not None and self.keyframes is not None:
            raise problem((("keyframes",), "give sine or keyframes, not both"))
        if self.keyframes is not None:
            times = [t for t, _ in self.keyframes]
            if not times or any(b <= a for a, b in zip(times, times[1:])):
                raise problem((("keyframes",), "needs (t, value) pairs with rising times"))
        return self


class MotorSpec(_Spec):
    """A DC motor with a gearbox on a revolute or prismatic joint (physics.DCMotor)."""
    resistance: Positive                      # ohm
    torque_constant: Positive                 # N m/A = V s/rad
    inductance: NonNegative = 0.0             # H
    rotor_inertia: NonNegative = 0.0          # kg m^2
    gear_ratio: Positive = 1.0                # rotor turns per joint turn (rad/m on a slider)
    efficiency: Annotated[Real, Field(gt=0, le=1)] = 1.0
    voltage_limit: Positive | None = None     # V, the supply; none: no limit
    current_limit: Positive | None = None     # A
    torque_limit: Positive | None = None      # N m (N on a slider)
    voltage: Real = 0.0                       # V at the start
    controller: ControllerSpec | None = None  # sets the voltage every step

    @model_validator(mode="after")
    def _within_supply(self) -> "MotorSpec":
        if self.voltage_limit is not None and abs(self.voltage) > self.voltage_limit:
            raise problem((("voltage",), f"must be within +-{self.voltage_limit:g} V, "
                                         "the voltage_limit"))
        return self


class MimicSpec(_Spec):
    """This joint follows another: q = multiplier * q_joint + offset (URDF's <mimic>); with
    lower < upper it is a limit instead: q - multiplier * q_joint - offset stays within
    [lower, upper] (rad or m) and is free inside (MuJoCo's limited fixed tendon of two
    joints); lower = upper holds it at that value."""
    joint: Name
    multiplier: Real = 1.0
    offset: Real = 0.0
    lower: Real = 0.0
    upper: Real = 0.0

    @model_validator(mode="after")
    def _ordered(self) -> "MimicSpec":
        if self.lower > self.upper:
            raise problem((("upper",), f"must not be less than lower = {self.lower} "
                                       f"(got {self.upper})"))
        return self


class JointSpec(_Spec):
    """A joint between two bodies (physics.World.add_joint). Two or three revolute joints
    between the same two bodies, with perpendicular axes, turn in the order listed, each axis
    and anchor carried by the ones before it: a universal joint or a gimbal, as MuJoCo's joints
    in one body (physics/gimbal.py); the middle one of three must be limited within +-85
    degrees, away from gimbal lock."""
    name: Name
    type: Literal[tuple(JOINT_TYPES)]   # the scene's types (physics.joint.JOINT_TABLE)
    body_a: Name
    body_b: Name
    anchor: Vec3 = (0.0, 0.0, 0.0)
    axis: UnitVec3 = (0.0, 0.0, 1.0)
    friction: _ranged("friction") = SETTINGS["friction"].default
    damping: _ranged("damping") = SETTINGS["damping"].default
    limits: tuple[Real, Real] | None = None
    motor: MotorSpec | None = None
    mimic: MimicSpec | None = None


    @model_validator(mode="after")
    def _consistent(self) -> "JointSpec":
        problems = []
        if self.body_a == self.body_b:
            problems.append((("body_b",), f"a joint cannot join body {quoted(self.body_a)} to "
                                          "itself"))
        can = JOINT_TYPE_INFO[self.type]   # what the type takes: physics.joint.JOINT_TABLE
        if self.mimic is not None and not can.coupling:
            problems.append((("mimic",), f"not allowed on a {self.type} joint "
                                         f"(only {scene_types_with('coupling')})"))
        if self.mimic is not None and self.mimic.joint == self.name:
            problems.append((("mimic", "joint"), "a joint cannot follow itself"))
        if self.motor is not None and not can.motor:
            problems.append((("motor",), f"not allowed on a {self.type} joint "
                                         f"(only {scene_types_with('motor')})"))
        if not can.friction and self.friction > 0:
            problems.append((("friction",), f"must be 0 on a {self.type} joint, which cannot "
                                            "slip"))
        if not can.damping and self.damping > 0:
            problems.append((("damping",), f"must be 0 on a {self.type} joint, which cannot "
                                           "move"))
        if self.limits is not None:
            lower, upper = self.limits
            if not can.limits:
                problems.append(
                    (("limits",), f"not allowed on a {self.type} joint "
                                  f"(only {scene_types_with('limits')})")
                )
            elif lower >= upper:
                problems.append((("limits",), "lower must be less than upper "
                                 f"(got [{lower}, {upper}])"))
        if problems:
            raise problem(*problems)
        return self


class KeyframeBodySpec(_Spec):
    """A free body's state in a keyframe (or a floating robot's base's: the robot moves with
    it); what is left out stays (the pose) or is zero (the velocities)."""
    pos: Vec3 | None = None
    quat: UnitQuat | None = None
    vel: Vec3 | None = None
    angvel: Vec3 | None = None


class KeyframeSpec(_Spec):
    """A pose to start from, written by hand (physics/keyframe.py; `sharnir run --keyframe
    NAME`, the panel's Keyframes; MJCF `<key>`s): in `joints` a revolute or prismatic joint's
    coordinate (rad or m; each hinge of a universal joint or gimbal its own angle, the middle
    one's within +-pi/2) or a spherical joint's rotation [w, x, y, z] (a unit quaternion: the
    joint's frame on body_b relative to the one on body_a, frames whose x is the joint's
    axis; the angle it reports is the rotation's); in `rates` their rates (rad/s or m/s), a
    spherical joint's angular velocity [x, y, z] (rad/s, body_b relative to body_a, in the
    joint's frame on body_b); free bodies' states (the engine's frame: centre of mass and
    principal axes); motor voltages (V); in `targets` the set-point of a joint's position or
    velocity controller (rad, m, or a rate for a velocity controller), or [set-point, rate it
    aims at] (World.set_target). Joints not named keep their coordinates; every moving body
    starts at rest but for the rates and velocities given."""
    name: Name
    joints: dict[Name, Real | Quat] = {}
    rates: dict[Name, Real | Vec3] = {}
    bodies: dict[Name, KeyframeBodySpec] = {}
    voltages: dict[Name, Real] = {}
    targets: dict[Name, Real | tuple[Real, Real]] = {}


class LoadSpec(_Spec):
    body: Name
    force: Vec3 = (0.0, 0.0, 0.0)
    torque: Vec3 = (0.0, 0.0, 0.0)
    start: NonNegative = 0.0
    end: Real | None = None  # None: the load never ends

    @model_validator(mode="after")
    def _ends_after_start(self) -> "LoadSpec":
        if self.end is not None and self.end <= self.start:
            raise problem((("end",), f"must be greater than start = {self.start} (got {self.end})"))
        return self


class BehaviourSpec(_Spec):
    """A controller shipped with Sharnir that drives the scene (scenes/behaviours.py), by
    name: scene files run no code of their own."""
    name: Name


class UrdfOptionsSpec(_Spec):
    """How an included URDF file is read (scenes/urdf.py, read_urdf): a fixed or floating
    base (absent: what the file means, fixed for a robot standing on its base, floating for
    one standing on wheels or legs), the start height of its lowest point above the include's
    frame (absent: where the file puts it), a ground plane under it, motors on its actuated
    joints, fixed joints merged, its links colliding with one another, its collision meshes
    decomposed into convex pieces (a mesh shape's decompose = true, with its defaults), and
    more folders holding ROS packages (relative to the including file, and inside the folders
    the scene may read from: scenes/asset_roots.py)."""
    fixed_base: StrictBool | None = None
    height: Annotated[Real, Field(ge=-MAX_START_HEIGHT_M, le=MAX_START_HEIGHT_M)] | None = None
    ground: StrictBool = False
    motors: StrictBool = True
    merge_fixed: StrictBool = True
    self_collision: StrictBool = False
    decompose: StrictBool = False
    package_roots: list[Name] = []


class IncludeSpec(_Spec):
    """Another scene, MJCF or URDF file placed in this one (scenes/include.py): its bodies,
    joints and loads, names prefixed by `prefix`, moved by `pos` and turned by `quat`; `urdf`
    says how a URDF file is read."""
    file: Name
    prefix: StrictStr = ""
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: UnitQuat = (1.0, 0.0, 0.0, 0.0)
    urdf: UrdfOptionsSpec | None = None


class SceneSpec(_Spec):
    version: Annotated[int, Strict()] = SCHEMA_VERSION
    description: StrictStr = ""
    duration: Annotated[Real, Field(gt=0, le=MAX_DURATION)] = 5.0
    behaviour: BehaviourSpec | None = None
    world: WorldSpec = Field(default_factory=WorldSpec)
    solver: SolverSpec = Field(default_factory=SolverSpec)
    bodies: list[BodySpec] = []
    joints: list[JointSpec] = []
    loads: list[LoadSpec] = []
    keyframes: list[KeyframeSpec] = []
    include: list[IncludeSpec] = []   # expanded by the loader before validation: always empty

    @field_validator("version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version != SCHEMA_VERSION:
            raise problem(((), f"must be {SCHEMA_VERSION}, the only scene file version "
                               f"(got {version})"))
        return version

    @model_validator(mode="after")
    def _references_resolve(self) -> "SceneSpec":
        problems = [
            *_duplicates("bodies", [b.name for b in self.bodies]),
            *_duplicates("joints", [j.name for j in self.joints]),
            *_duplicates("keyframes", [k.name for k in self.keyframes]),
        ]
        kinds = {body.name: body.kind for body in self.bodies}
        known = listing(kinds)
        types = {joint.name: joint.type for joint in self.joints}
        for i, joint in enumerate(self.joints):
            leader = joint.mimic.joint if joint.mimic is not None else None
            if leader is not None and leader != joint.name:
                if leader not in types:
                    problems.append((("joints", i, "mimic", "joint"),
                                     f"unknown joint {quoted(leader)} (joints are: "
                                     f"{listing(types)})"))
                elif not JOINT_TYPE_INFO[types[leader]].coupling:
                    problems.append((("joints", i, "mimic", "joint"),
                                     f"joint {quoted(leader)} is {types[leader]}: only "
                                     f"{scene_types_with('coupling')} joints can be followed"))
        problems += _mimic_cycles(self.joints)
        for i, joint in enumerate(self.joints):
            for field in ("body_a", "body_b"):
                name = getattr(joint, field)
                if name != WORLD_BODY and name not in kinds:
                    problems.append((("joints", i, field),
                                     f"unknown body {quoted(name)} (bodies are: {known})"))
        for i, load in enumerate(self.loads):
            loc = ("loads", i, "body")
            if load.body == WORLD_BODY:
                problems.append((loc, "the fixed world body cannot carry a load"))
            elif load.body not in kinds:
                problems.append((loc, f"unknown body {quoted(load.body)} (bodies are: {known})"))
            elif kinds[load.body] == "static":
                problems.append((loc, f"body {quoted(load.body)} is static and cannot carry a "
                                      "load"))
        if problems:
            raise problem(*problems)
        return self


def _mimic_cycles(joints: list[JointSpec]) -> list[tuple[Loc, str]]:
    """One problem per cycle of mimic leaders (a follows b follows ... follows a), at its first
    joint; a chain that ends at a joint following none is fine (its relations compose). A joint
    following itself is JointSpec's own problem."""
    index = {joint.name: i for i, joint in enumerate(joints)}
    leader = {joint.name: joint.mimic.joint for joint in joints
              if joint.mimic is not None and joint.mimic.joint != joint.name}
    problems, reported = [], set()
    for joint in joints:
        chain = [joint.name]
        while chain[-1] in leader and leader[chain[-1]] not in chain:
            chain.append(leader[chain[-1]])
        if chain[-1] not in leader:
            continue
        cycle = chain[chain.index(leader[chain[-1]]):]
        if reported.isdisjoint(cycle):
            reported.update(cycle)
            names = " -> ".join(quoted(name) for name in [*cycle, cycle[0]])
            problems.append((("joints", index[cycle[0]], "mimic", "joint"),
                             f"the mimic joints form a cycle ({names}); a chain of followers "
                             "must end at a joint that follows none"))
    return problems


def _duplicates(section: str, names: list[str]) -> list[tuple[Loc, str]]:
    first: dict[str, int] = {}
    problems = []
    for i, name in enumerate(names):
        if name in first:
            problems.append(
                ((section, i, "name"),
                 f"duplicate name {quoted(name)} (already used by {section}[{first[name]}])")
            )
        else:
            first[name] = i
    return problems
