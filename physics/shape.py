"""Primitive shapes and their mass properties in closed form.

Every shape is centred on its body's centre of mass with its axes on the body axes; capsules
and cylinders lie along the body z axis. `unit_inertia` is the principal inertia per kilogram
(uniform density), so inertia = mass * unit_inertia.
"""
import math
from dataclasses import dataclass

import numpy as np

# shape kind codes, shared with collision and the renderer (shape_size holds each kind's
# numbers): box (a, b, c) half extents; sphere (r, 0, 0); capsule and cylinder (r, h, 0) with
# half length h along local z; ellipsoid (a, b, c) semi-axes; plane: the half-space z <= 0 of
# its frame (normal +z, static only, size unused); hull: a convex polytope whose vertices
# are stored apart (hull_vert), size unused.
BOX, SPHERE, CAPSULE, CYLINDER, ELLIPSOID, PLANE, HULL = 0, 1, 2, 3, 4, 5, 6


def _positive(name, *values):
    for v in values:
        if not (math.isfinite(v) and v > 0.0):
            raise ValueError(f"{name} must be positive and finite (got {v})")


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


SHAPES = {"box": Box, "sphere": Sphere, "capsule": Capsule, "cylinder": Cylinder,
          "ellipsoid": Ellipsoid, "plane": Plane}
