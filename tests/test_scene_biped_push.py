"""The biped pushed (World.add_load on the pelvis, as a mouse drag would): a push it can take
it recovers from, a push it cannot take fells it, forwards or backwards as pushed, through no
floor and with every number finite.

What it can take is the linear inverted pendulum's capture point (Pratt et al. 2006): a push of
impulse P gives the centre of mass the speed v = P / M, and the robot stops over its feet only
if the capture point x_c = x + v / omega, omega = sqrt(g / z), stays within the feet's support
(from heel to toe). Pushes are chosen with x_c at half the way to the toe (recovers) and at
twice it (falls).
"""
import math

import numpy as np
import pytest

from sharnir.scenes.loader import load_scene

G = 9.81
PUSH_AT, PUSH_FOR = 1.0, 0.2   # s


def standing():
    world = load_scene("biped")
    world.set_hook(None)   # the PD controllers alone hold the standing pose (no valve demo)
    return world


@pytest.fixture(scope="module")
def robot():
    w = standing()
    names = w.body_names
    body = [i for i, n in enumerate(names) if n not in ("world", "ground") and
            not n.startswith("valve")]
    m = w.body_mass[body]
    com = (m[:, None] * w.body_pos[body]).sum(axis=0) / m.sum()
    foot = names.index("left_foot")
    half = w.body_shapes[foot].half_extents[0]
    toe, heel = w.body_pos[foot, 0] + half, w.body_pos[foot, 0] - half
    return dict(mass=float(m.sum()), com=com, toe=toe, heel=heel,
                omega=math.sqrt(G / com[2]))


def push(robot, capture):
    """The force that puts the capture point at x = capture (for PUSH_FOR seconds)."""
    v = (capture - robot["com"][0]) * robot["omega"]
    return robot["mass"] * v / PUSH_FOR


def pushed(force, seconds=5.0):
    w = standing()
    pel = w.body_names.index("pelvis")
    z0, x0 = w.body_pos[pel, 2], w.body_pos[pel, 0]
    w.add_load("pelvis", force=(force, 0.0, 0.0), start=PUSH_AT, end=PUSH_AT + PUSH_FOR)
    rec = w.run(round(seconds / w.dt), record_bodies=True)
    return dict(dz=rec.body_pos[:, pel, 2] - z0, dx=rec.body_pos[:, pel, 0] - x0,
                lowest=float(rec.body_pos[:, :, 2].min()) if np.isfinite(rec.body_pos).all()
                else -np.inf, finite=bool(np.isfinite(rec.body_pos).all()), t=rec.t)


@pytest.mark.parametrize("direction", [1, -1])
def test_a_push_within_its_feet_is_taken_and_it_stands_again(robot, direction):
    edge = robot["toe"] if direction > 0 else robot["heel"]
    capture = robot["com"][0] + 0.5 * (edge - robot["com"][0])
    run = pushed(push(robot, capture))
    assert run["finite"]
    assert abs(run["dx"]).max() > 0.002                   # it was moved
    assert run["dz"].min() > -0.02                        # and did not go down
    after = run["t"] > run["t"][-1] - 1.0
    assert np.abs(run["dz"][after]).max() < 0.01          # standing again at the end
    assert np.abs(run["dx"][after]).max() < 0.02


@pytest.mark.parametrize("direction", [1, -1])
def test_a_push_beyond_its_feet_fells_it_the_way_it_was_pushed(robot, direction):
    edge = robot["toe"] if direction > 0 else robot["heel"]
    capture = robot["com"][0] + 2.0 * (edge - robot["com"][0])
    run = pushed(push(robot, capture))
    assert run["finite"]
    assert run["dz"][-1] < -0.3                           # down
    assert np.sign(run["dx"][-1]) == direction and abs(run["dx"][-1]) > 0.3
    assert run["lowest"] > -0.005                         # nothing went through the floor
