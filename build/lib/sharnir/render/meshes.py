"""Unit meshes of the primitive shapes and the ground grid, as interleaved float32 arrays.

Each solid is a triangle list of rows (x, y, z, nx, ny, nz) sized so that scaling by the
shape's numbers gives the shape: the box spans [-1, 1]^3, the sphere has radius 1 and the
cylinder radius 1 and z in [-1, 1] (capsules are a cylinder plus two spheres).
"""
import math

import numpy as np


def box():
    rows = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.zeros(3), np.zeros(3)
            u[(axis + 1) % 3], v[(axis + 2) % 3] = 1.0, 1.0
            if sign < 0:  # keep the winding counter-clockwise seen from outside
                u, v = v, u
            corners = [n - u - v, n + u - v, n + u + v, n - u + v]
            for i in (0, 1, 2, 0, 2, 3):
                rows.append((*corners[i], *n))
    return np.array(rows, dtype="f4")


def sphere(rings=16, segments=32):
    def point(i, j):
        theta, phi = math.pi * i / rings, 2.0 * math.pi * j / segments
        p = (math.sin(theta) * math.cos(phi), math.sin(theta) * math.sin(phi), math.cos(theta))
        return (*p, *p)  # on a unit sphere the normal is the position

    rows = []
    for i in range(rings):
        for j in range(segments):
            a, b, c, d = point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1)
            rows += [a, b, c, a, c, d]
    return np.array(rows, dtype="f4")


def cylinder(segments=32):
    rows = []
    for j in range(segments):
        p0, p1 = (2.0 * math.pi * k / segments for k in (j, j + 1))
        c0, s0, c1, s1 = math.cos(p0), math.sin(p0), math.cos(p1), math.sin(p1)
        side = [(c0, s0, -1.0, c0, s0, 0.0), (c1, s1, -1.0, c1, s1, 0.0),
                (c1, s1, 1.0, c1, s1, 0.0), (c0, s0, 1.0, c0, s0, 0.0)]
        rows += [side[0], side[1], side[2], side[0], side[2], side[3]]
        rows += [(0.0, 0.0, 1.0, 0.0, 0.0, 1.0), (c0, s0, 1.0, 0.0, 0.0, 1.0),
                 (c1, s1, 1.0, 0.0, 0.0, 1.0)]
        rows += [(0.0, 0.0, -1.0, 0.0, 0.0, -1.0), (c1, s1, -1.0, 0.0, 0.0, -1.0),
                 (c0, s0, -1.0, 0.0, 0.0, -1.0)]
    return np.array(rows, dtype="f4")


GRID_COLOUR = (0.55, 0.57, 0.6)
X_AXIS_COLOUR = (0.85, 0.25, 0.25)
Y_AXIS_COLOUR = (0.25, 0.7, 0.3)


def nice_spacing(half_size, lines=10):
    """A 1, 2 or 5 times power-of-ten spacing giving about `lines` lines per half of the grid."""
    raw = max(half_size / lines, 1e-6)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(step * power for step in (1.0, 2.0, 5.0, 10.0) if step * power >= raw)


def grid(half_size, spacing):
    """Lines at z = 0 over [-half_size, half_size]^2 as rows (x, y, z, r, g, b); the lines
    through the origin are the x (red) and y (green) axes."""
    n = int(math.ceil(half_size / spacing))
    extent = n * spacing
    rows = []
    for k in range(-n, n + 1):
        c = k * spacing
        along_x = X_AXIS_COLOUR if k == 0 else GRID_COLOUR  # the line y = 0 is the x axis
        along_y = Y_AXIS_COLOUR if k == 0 else GRID_COLOUR
        rows += [(-extent, c, 0.0, *along_x), (extent, c, 0.0, *along_x)]
        rows += [(c, -extent, 0.0, *along_y), (c, extent, 0.0, *along_y)]
    return np.array(rows, dtype="f4")
