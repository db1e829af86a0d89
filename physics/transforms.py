"""Rotations in numpy for the Python side (building, scene files, keyframes, IK, the app and
the renderer): unit quaternions are (w, x, y, z), as everywhere in Sharnir; matrices rotate
column vectors (v_world = R v_body). The kernels have their own, written out by hand, in
math3.py.

    quat_mul(a, b)          the Hamilton product: the rotation b, then a
    quat_conj(q)            the inverse of a unit quaternion
    quat_matrix(q)          R of a unit quaternion
    quat_matrices(q)        R (n, 3, 3) of quaternions (n, 4), normalised first
    matrix_quat(R)          the unit quaternion, w >= 0, of R (Shepperd's method)
    rotation(axis, angle)   R by `angle` about the unit `axis` (Rodrigues)
    rotation_vector(R)      axis x angle of R
"""
import math

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


def quat_matrix(q):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_matrices(quat, normalise=True):
    """Rotation matrices (n, 3, 3) of quaternions (n, 4) (w, x, y, z); normalised first unless
    `normalise` is False (unit already: the same bits as quat_matrix on each)."""
    q = np.asarray(quat, dtype=float).reshape(-1, 4)
    if normalise:
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], 1)


def matrix_quat(R):
    """The unit quaternion (w, x, y, z), w >= 0, of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    if t > 0.0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                      (R[1, 0] - R[0, 1]) / s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + R[i, i] - R[j, j] - R[k, k], 0.0))
        q = np.zeros(4)
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = q / np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


def rotation(axis, angle):
    """The rotation matrix by `angle` (rad) about the unit `axis` (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


def rotation_vector(R):
    """The rotation vector (axis times angle, |angle| <= pi) of the rotation matrix R."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.linalg.norm(v)
    # atan2, not arccos(c): near c = 1, arccos resolves angles only to sqrt(eps) ~ 1.5e-8
    angle = np.arctan2(0.5 * s, c)
    if s < 1e-12:
        if c > 0.0:
            return 0.5 * v
        # a half turn: the axis is the column of R + E of largest norm
        M = R + np.eye(3)
        k = int(np.argmax(np.linalg.norm(M, axis=0)))
        return angle * M[:, k] / np.linalg.norm(M[:, k])
    return angle * v / s
