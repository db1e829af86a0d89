"""Placing a body by hand (World.set_body_pose): free bodies only, at rest, bad values refused."""
import math

import numpy as np
import pytest

from sharnir.physics import World
from sharnir.physics.shape import Box


def _world():
    w = World(dt=0.01)
    w.add_body("free", Box((0.1, 0.1, 0.1)), mass=2.0, pos=(0.0, 0.0, 1.0))
    w.add_body("held", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(1.0, 0.0, 1.0))
    w.add_joint("hinge", "revolute", "world", "held", anchor=(0.9, 0.0, 1.0))
    return w


def test_a_placed_body_starts_at_rest_where_it_was_put_then_falls_freely():
    w = _world()
    w.step(10)
    q = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    w.set_body_pose("free", pos=(0.5, -0.5, 3.0), quat=tuple(2 * c for c in q))  # normalised here
    np.testing.assert_allclose(w.body_pos[1], (0.5, -0.5, 3.0))
    np.testing.assert_allclose(w.body_quat[1], q, atol=1e-15)
    np.testing.assert_array_equal(w.body_vel[1], 0.0)
    w.step(10)  # free fall from rest: z = 3 - g t^2 / 2 up to the integrator's O(dt) term
    t = 0.1
    assert w.body_pos[1][2] == pytest.approx(3.0 - 0.5 * 9.81 * t * t, abs=9.81 * 0.01 * t)


@pytest.mark.parametrize("body, kwargs, message", [
    ("held", dict(pos=(0, 0, 0)), "held by a joint"),
    ("world", dict(pos=(0, 0, 0)), "not dynamic"),
    ("free", dict(pos=(0, math.nan, 0)), "NaN"),
    ("free", dict(quat=(0, 0, 0, 0)), "zero"),
    ("free", dict(pos=(1, 2)), "3 numbers"),
])
def test_bad_placements_are_refused_and_change_nothing(body, kwargs, message):
    w = _world()
    before = np.array(w.body_pos), np.array(w.body_quat)
    with pytest.raises(ValueError, match=message):
        w.set_body_pose(body, **kwargs)
    np.testing.assert_array_equal(w.body_pos, before[0])
    np.testing.assert_array_equal(w.body_quat, before[1])
