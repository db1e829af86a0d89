"""Ray casts against one shape in its own frame (plain numpy; the app's picking uses them, as
MuJoCo's engine_ray.c serves its viewer).

Each function gives the parameters t where the ray o + t d meets the shape's surface (entry
and exit; nothing if it misses); `shape.ray_hits(o, d)` (physics/shape.py) picks the function
of its kind:

    ellipsoid   (o - c) / s . (o - c) / s = 1 on the scaled ray: a quadratic in t (a sphere
                is an ellipsoid with equal semi-axes s)
    box         the slab test: the intervals between each pair of faces, intersected
    cylinder    the side x^2 + y^2 = r^2 for |z| <= h, and the two flat ends
    hull        Cyrus-Beck: each face n_k . x <= offset_k cuts the interval
"""
import math

import numpy as np


def quadratic_roots(a, b, c):
    disc = b * b - 4.0 * a * c
    if a <= 0.0 or disc < 0.0:
        return ()
    s = math.sqrt(disc)
    return ((-b - s) / (2.0 * a), (-b + s) / (2.0 * a))


def ellipsoid_hits(o, d, centre, semi_axes):
    """Ray parameters where o + t d meets an axis-aligned ellipsoid."""
    os_, ds = (o - centre) / semi_axes, d / semi_axes
    return quadratic_roots(ds @ ds, 2.0 * (os_ @ ds), os_ @ os_ - 1.0)


def box_hits(o, d, half):
    t0, t1 = -math.inf, math.inf
    for k in range(3):
        if abs(d[k]) < 1e-15:
            if abs(o[k]) > half[k]:
                return ()
            continue
        a, b = (-half[k] - o[k]) / d[k], (half[k] - o[k]) / d[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
    return (t0, t1) if t0 <= t1 else ()


def cylinder_hits(o, d, radius, half_length, caps):
    """Hits of the side |z| <= half_length and, with caps, of the two flat ends."""
    hits = [t for t in quadratic_roots(d[0] ** 2 + d[1] ** 2, 2.0 * (o[0] * d[0] + o[1] * d[1]),
                                       o[0] ** 2 + o[1] ** 2 - radius ** 2)
            if abs(o[2] + t * d[2]) <= half_length]
    if caps and abs(d[2]) > 1e-15:
        for z in (-half_length, half_length):
            t = (z - o[2]) / d[2]
            q = o + t * d
            if q[0] ** 2 + q[1] ** 2 <= radius ** 2:
                hits.append(t)
    return hits


def capsule_hits(o, d, radius, half_length):
    """The side and the outer half of each end sphere."""
    hits = list(cylinder_hits(o, d, radius, half_length, caps=False))
    for z in (-half_length, half_length):
        hits += [t for t in ellipsoid_hits(o, d, np.array([0.0, 0.0, z]), np.full(3, radius))
                 if (o[2] + t * d[2]) * z >= 0.0]
    return hits


def hull_hits(o, d, normals, offsets):
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
