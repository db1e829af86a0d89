"""scenes/door_push.toml, paper 000's demonstration: a mobile robot pushes the door open
through contact and withdraws; the door runs free under hinge friction and stops. Checked
against the door's own numbers (I = 7.155 kg m^2 about the hinge, 20 N m of friction)."""
import numpy as np
import pytest

from sharnir.scenes.loader import load_scene

I_HINGE = 21.4565 * (1.0 ** 2 + 0.04 ** 2) / 12 + 21.4565 * 0.5 ** 2
FRICTION = 20.0


@pytest.fixture(scope="module")
def run():
    world = load_scene("door_push")
    rec = world.run(round(3.0 / world.dt))
    names = world.joint_names
    door = world.body_names.index("door")
    sensors = list(rec.contact_bodies)
    return dict(world=world, rec=rec, t=rec.t, speed=rec.joint[:, names.index("hinge"), 1],
                angle=rec.joint[:, names.index("hinge"), 0],
                push=rec.contact[:, sensors.index(door), :3])


def test_the_robot_has_a_mobile_base_and_a_motorised_arm(run):
    w = run["world"]
    motored = {w.joint_names[j] for j, _ in w.motors}
    assert {"rail", "shoulder_yaw", "shoulder_pitch", "elbow"} <= motored
    assert w.joint_types[w.joint_names.index("rail")] == "prismatic"
    assert w.joint_friction_limit[w.joint_names.index("hinge")] == FRICTION


def test_the_three_phases_come_in_order(run):
    t, speed, touching = run["t"], run["speed"], np.linalg.norm(run["push"], axis=1) > 1e-6
    first_touch = t[np.argmax(touching)]
    last_touch = t[len(t) - 1 - np.argmax(touching[::-1])]
    moving = np.abs(speed) > 1e-6
    stop = t[len(t) - 1 - np.argmax(moving[::-1])]
    # 1. at rest until the pusher arrives, then pushed open
    assert np.all(np.abs(speed[t < first_touch]) < 1e-9)
    assert 0.7 < first_touch < 0.9 and speed[t > first_touch][5] > 0.5
    # 2. then free: no contact from the last touch on, and it stops afterwards
    assert last_touch < stop
    # 3. stopped and held for the rest of the run
    assert stop < 2.0 and np.all(np.abs(speed[t > stop + 0.01]) < 1e-9)
    assert np.degrees(run["angle"][-1]) > 20.0


def test_the_free_door_decelerates_at_friction_over_inertia(run):
    """Nothing but the hinge's 20 N m acts after the last touch: d omega/dt = -tau / I."""
    t, speed, push = run["t"], run["speed"], np.linalg.norm(run["push"], axis=1)
    free = (t > t[push > 1e-6].max() + 0.02) & (speed > 0.05)
    assert free.sum() > 30
    slope = np.polyfit(t[free], speed[free], 1)[0]
    assert slope == pytest.approx(-FRICTION / I_HINGE, rel=0.01)


def test_the_pusher_pushes_the_door_open_and_withdraws(run):
    t, push = run["t"], run["push"]
    pushing = (t > 1.1) & (t < 1.25)
    # the pusher pushes along +y (the door opens counter-clockwise): force on the door +y
    assert np.mean(push[pushing, 1]) > FRICTION / 0.7 * 0.5
    assert np.all(np.linalg.norm(push[t > 1.4], axis=1) == 0.0)
    w = run["world"]
    gap = w.body_pos[w.body_names.index("pusher")] - w.body_pos[w.body_names.index("door")]
    assert np.linalg.norm(gap) > 0.3
