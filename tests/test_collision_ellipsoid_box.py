"""The closed form for an ellipsoid resting on a box face (contact.ellipsoid_on_face, used by
the tube's staves) against the general convex routine (validated against brute force in
test_collision_convex.py), on random poses; and it declines edges and corners."""
import numpy as np

from sharnir.physics.contact import ellipsoid_on_face
from sharnir.physics.convex import convex_contact
from sharnir.physics.shape import BOX, ELLIPSOID


def _rotation(q):
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _case(rng):
    e = rng.uniform(0.05, 0.1, 3)
    R = _rotation(rng.normal(size=4))
    h = np.array([1.0, 0.05, 0.5])                      # a stave: long, thin
    Q = _rotation(rng.normal(size=4))
    p = rng.normal(size=3) * 0.1
    k, side = rng.integers(3), rng.choice([-1.0, 1.0])
    in_face = rng.uniform(-1.0, 1.0, 3) * h * (np.arange(3) != k)
    n = Q[:, k] * side
    reach = np.sqrt(np.sum((R.T @ n * e) ** 2))          # the ellipsoid's extent along n
    # from a 1 cm gap to a 1 cm overlap (impacts in the pour reach ~9 mm)
    c = p + n * (h[k] + reach + rng.uniform(-0.01, 0.01)) + Q @ in_face
    return e, R, h, Q, p, c


def _fast(e, c, R, h, p, Q, sign):
    mp, md, mn, mf = np.zeros((4, 3)), np.zeros(4), np.zeros(3), np.zeros(4, np.int64)
    n = ellipsoid_on_face(e, c, R, h, p, Q, 0.01, sign, mp, md, mn, mf)
    return n, mp[0].copy(), md[0], mn.copy()


def test_face_contacts_agree_with_the_convex_routine_in_both_orders():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(2000):
        e, R, h, Q, p, c = _case(rng)
        n, point, depth, normal = _fast(e, c, R, h, p, Q, 1.0)
        if n != 1:
            continue
        out = np.zeros(9)
        d = convex_contact(BOX, h, p, Q, 0, 0, ELLIPSOID, e, c, R, 0, 0, np.zeros((1, 3)),
                           np.zeros(3), out)
        assert abs(d - depth) < 1e-7
        np.testing.assert_allclose(normal, out[:3], atol=1e-6)
        np.testing.assert_allclose(point, 0.5 * (out[3:6] + out[6:9]), atol=1e-6)
        n2, point2, depth2, normal2 = _fast(e, c, R, h, p, Q, -1.0)   # ellipsoid as geom A
        assert n2 == 1 and depth2 == depth
        np.testing.assert_array_equal(normal2, -normal)
        checked += 1
    assert checked > 1000


def test_an_ellipsoid_beyond_the_face_edge_is_left_to_the_convex_routine():
    e, R = np.array([0.1, 0.1, 0.1]), np.eye(3)
    h, Q, p = np.array([0.5, 0.5, 0.05]), np.eye(3), np.zeros(3)
    # over the edge x = 0.5: its lowest point lies outside the top face
    n, *_ = _fast(e, np.array([0.55, 0.0, 0.12]), R, h, p, Q, 1.0)
    assert n == -1
    # well over the face: one point under the centre, depth from the closed form
    n, point, depth, normal = _fast(e, np.array([0.2, 0.1, 0.14]), R, h, p, Q, 1.0)
    assert n == 1 and abs(depth - 0.01) < 1e-12
    np.testing.assert_allclose(normal, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(point, [0.2, 0.1, 0.045], atol=1e-12)
