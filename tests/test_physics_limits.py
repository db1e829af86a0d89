"""Joint limits hold: a body falling into a limit does not pass it.

Revolute: the rod of conftest starts horizontal along +x (tilt -90 deg) on a revolute joint
about +y with limits [-0.5, 0.5] rad relative to that start. Gravity turns it about +y (the
centre falls from (0.5, 0, 2) towards (0, 0, 1.5)), so the joint angle grows and hits +0.5 rad
with w^2 = 2 m g d sin(0.5) / I_pivot, w ~ 3.7 rad/s (~0.015 rad per step at 240 Hz).
Prismatic: a block on a vertical slider, axis (0, 0, -1), limits [-0.3, 0.3] m; it free-falls
and hits +0.3 m at sqrt(2 g 0.3) = 2.4 m/s (1 cm per step).
"""
import math

import numpy as np
from conftest import rod_pendulum

from sharnir.physics.shape import Box
from sharnir.physics.world import World

DT = 1.0 / 240.0


def test_revolute_limit_stops_falling_pendulum_with_overshoot_below_001_rad():
    world = rod_pendulum("revolute", tilt=-math.pi / 2, limits=(-0.5, 0.5), dt=DT)
    rec = world.run(720)
    angle = rec.joint[:, 0, 0]
    assert angle.max() > 0.49                      # it did reach the limit
    overshoot = np.max(angle - 0.5)
    assert overshoot < 0.01, overshoot
    assert np.min(angle) > -0.5 - 0.01
    # it rests on the limit at the end
    assert abs(angle[-1] - 0.5) < 0.01


def test_prismatic_limit_stops_falling_block_with_overshoot_below_1_mm():
    world = World(dt=DT)
    world.add_body("block", Box((0.05, 0.05, 0.05)), mass=1.0, pos=(0.0, 0.0, 2.0))
    world.add_joint("slide", "prismatic", "world", "block", anchor=(0.0, 0.0, 2.0),
                    axis=(0.0, 0.0, -1.0), limits=(-0.3, 0.3))
    rec = world.run(720)
    s = rec.joint[:, 0, 0]
    assert s.max() > 0.299
    overshoot = np.max(s - 0.3)
    assert overshoot < 1e-3, overshoot
    assert abs(s[-1] - 0.3) < 1e-3
