"""Quaternion arithmetic in numpy for the Python side (building, keyframes, the app): unit
quaternions are (w, x, y, z), as everywhere in Sharnir. (The kernels have their own, written
out by hand, in math3.py; a quaternion's rotation matrix is shape.quat_matrix.)"""
import numpy as np


def quat_mul(a, b):
    """The Hamilton product a b (the rotation b, then a)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quat_conj(q):
    """The conjugate (w, -x, -y, -z): a unit quaternion's inverse."""
    return np.array([q[0], -q[1], -q[2], -q[3]])
