"""Small-vector math for nopython kernels: 3-vectors and quaternions as tuples.

Tuples stay in registers, so hot loops never allocate; numba's np.dot needs scipy anyway.
Quaternions are (w, x, y, z), unit, rotating body-frame vectors into the world frame.
Matrices stored in arrays are (3, 3) row-major.
"""
import math

from numba import njit

from .jit import INLINE

_JIT = INLINE


@njit(**_JIT)
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(**_JIT)
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(**_JIT)
def neg(a):
    return (-a[0], -a[1], -a[2])


@njit(**_JIT)
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(**_JIT)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(**_JIT)
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(**_JIT)
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(**_JIT)
def mat_vec(m, v):
    """m (3, 3) array times tuple v."""
    return (m[0, 0] * v[0] + m[0, 1] * v[1] + m[0, 2] * v[2],
            m[1, 0] * v[0] + m[1, 1] * v[1] + m[1, 2] * v[2],
            m[2, 0] * v[0] + m[2, 1] * v[1] + m[2, 2] * v[2])


@njit(**_JIT)
def quat_to_mat(q, out):
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[0, 1] = 2.0 * (x * y - w * z)
    out[0, 2] = 2.0 * (x * z + w * y)
    out[1, 0] = 2.0 * (x * y + w * z)
    out[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[1, 2] = 2.0 * (y * z - w * x)
    out[2, 0] = 2.0 * (x * z - w * y)
    out[2, 1] = 2.0 * (y * z + w * x)
    out[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(**_JIT)
def quat_mul(a, b):
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@njit(**_JIT)
def quat_conj_mul(a, b):
    """conj(a) * b: the rotation b seen from frame a."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3],
            a[0] * b[1] - a[1] * b[0] - a[2] * b[3] + a[3] * b[2],
            a[0] * b[2] + a[1] * b[3] - a[2] * b[0] - a[3] * b[1],
            a[0] * b[3] - a[1] * b[2] + a[2] * b[1] - a[3] * b[0])


@njit(**_JIT)
def quat_rotate(q, v):
    """R(q) v without forming R: t = 2 q_vec x v; v + w t + q_vec x t."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    return (v[0] + w * tx + (y * tz - z * ty),
            v[1] + w * ty + (z * tx - x * tz),
            v[2] + w * tz + (x * ty - y * tx))


@njit(**_JIT)
def normalized(v, fallback):
    """v / |v|, or fallback when |v| is (nearly) zero."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n > 1e-300:
        return (v[0] / n, v[1] / n, v[2] / n)
    return fallback


@njit(**_JIT)
def quat_normalized(q):
    inv = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


# half_turn's series: cos(x / 2) = 1 - x^2/8 + x^4/384 - x^6/46080, sin(x / 2) / x = 1/2 - x^2/48
# + x^4/3840 - x^6/645120
_C1, _C2, _C3 = -1.0 / 8.0, 1.0 / 384.0, -1.0 / 46080.0
_S1, _S2, _S3 = -1.0 / 48.0, 1.0 / 3840.0, -1.0 / 645120.0


@njit(**_JIT)
def half_turn(angle):
    """(cos(angle / 2), sin(angle / 2) / angle) for angle >= 0; below 1e-2 rad by series, exact
    to double precision (the next terms are below 1e-18), which saves the trigonometry of the
    small turns every step makes."""
    if angle < 1e-2:   # (Horner, by the coefficients' reciprocals: no division)
        x2 = angle * angle
        return (1.0 + x2 * (_C1 + x2 * (_C2 + x2 * _C3)),
                0.5 + x2 * (_S1 + x2 * (_S2 + x2 * _S3)))
    return math.cos(0.5 * angle), math.sin(0.5 * angle) / angle


@njit(**_JIT)
def quat_rotated(q, theta):
    """exp(theta / 2) * q: q turned by the world-frame rotation vector theta, renormalised."""
    angle = norm(theta)
    c, s = half_turn(angle)
    d = (c, theta[0] * s, theta[1] * s, theta[2] * s)
    return quat_normalized(quat_mul(d, q))


@njit(**_JIT)
def rotation_vector(q):
    """The rotation vector (axis * angle, angle in [0, pi]) of a unit quaternion."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-15:
        return (2.0 * x, 2.0 * y, 2.0 * z)
    angle = 2.0 * math.atan2(s, w)
    return (x * angle / s, y * angle / s, z * angle / s)


@njit(**_JIT)
def wrap_angle(a):
    """a mapped into (-pi, pi]."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@njit(**_JIT)
def inverse3(k, out, n):
    """Inverse of the leading n x n block (n = 1, 2, 3) of a (3, 3) array into out (zeros
    elsewhere). Returns False, with zeros, when the block is singular."""
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.0
    if n == 1:
        if abs(k[0, 0]) <= 1e-300:
            return False
        out[0, 0] = 1.0 / k[0, 0]
        return True
    if n == 2:
        det = k[0, 0] * k[1, 1] - k[0, 1] * k[1, 0]
        if abs(det) <= 1e-300:
            return False
        out[0, 0] = k[1, 1] / det
        out[1, 1] = k[0, 0] / det
        out[0, 1] = -k[0, 1] / det
        out[1, 0] = -k[1, 0] / det
        return True
    c00 = k[1, 1] * k[2, 2] - k[1, 2] * k[2, 1]
    c01 = k[1, 2] * k[2, 0] - k[1, 0] * k[2, 2]
    c02 = k[1, 0] * k[2, 1] - k[1, 1] * k[2, 0]
    det = k[0, 0] * c00 + k[0, 1] * c01 + k[0, 2] * c02
    if abs(det) <= 1e-300:
        return False
    inv = 1.0 / det
    out[0, 0] = c00 * inv
    out[0, 1] = (k[0, 2] * k[2, 1] - k[0, 1] * k[2, 2]) * inv
    out[0, 2] = (k[0, 1] * k[1, 2] - k[0, 2] * k[1, 1]) * inv
    out[1, 0] = c01 * inv
    out[1, 1] = (k[0, 0] * k[2, 2] - k[0, 2] * k[2, 0]) * inv
    out[1, 2] = (k[0, 2] * k[1, 0] - k[0, 0] * k[1, 2]) * inv
    out[2, 0] = c02 * inv
    out[2, 1] = (k[0, 1] * k[2, 0] - k[0, 0] * k[2, 1]) * inv
    out[2, 2] = (k[0, 0] * k[1, 1] - k[0, 1] * k[1, 0]) * inv
    return True
