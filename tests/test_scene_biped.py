"""scenes/biped.toml, paper 002's demonstration: the biped stands under its motors' control,
then turns the valve with its hands (IK, grasps, force feedback) and back."""
import numpy as np
import pytest

from sharnir.scenes.loader import load_scene

G = 9.81
LINKS = ("pelvis", "torso", "head", "left_thigh", "right_thigh", "left_shank", "right_shank",
         "left_foot", "right_foot", "left_upper_arm", "right_upper_arm", "left_forearm",
         "right_forearm")


@pytest.fixture(scope="module")
def run():
    world = load_scene("biped")
    names = world.body_names
    pel = names.index("pelvis")
    feet = [names.index("left_foot"), names.index("right_foot")]
    z0, feet0 = world.body_pos[pel, 2], world.body_pos[feet].copy()
    robot = [i for i, n in enumerate(names) if n not in ("world", "ground", "valve_wheel")]
    mass = float(world.body_mass[robot].sum())
    valve = world.joint_names.index("valve")
    steps = round(44.0 / world.dt)
    rec = world.run(steps, record_bodies=True)
    sensors = list(rec.contact_bodies)
    return dict(world=world, rec=rec, t=rec.t, pelvis=rec.body_pos[:, pel, 2] - z0,
                slip=np.abs(rec.body_pos[:, feet] - feet0).max(axis=(1, 2)), mass=mass,
                feet_fz=rec.contact[:, [sensors.index(f) for f in feet], 2].sum(axis=1),
                valve=np.degrees(rec.joint[:, valve, 0]))


def test_the_biped_has_its_links_motors_and_joint_friction(run):
    w = run["world"]
    assert set(LINKS) <= set(w.body_names)
    motored = {w.joint_names[j] for j, _ in w.motors}
    for side in ("left", "right"):
        for j in ("hip_pitch", "knee", "ankle_pitch", "shoulder_pitch", "shoulder_roll",
                  "elbow"):
            assert f"{side}_{j}" in motored
    for j, kind in enumerate(w.joint_types):
        if kind != "fixed":
            assert w.joint_friction_limit[j] > 0, w.joint_names[j]
    assert w.joint_types[w.joint_names.index("valve")] == "revolute"


def test_it_stands_thirty_seconds_on_its_feet(run):
    t = run["t"]
    standing = t <= 30.0
    assert np.abs(run["pelvis"][standing]).max() < 0.02
    assert run["slip"][standing].max() < 0.01
    # the feet carry the whole robot: their contact forces sum to m g (statics)
    last = (t > 29.0) & standing
    assert run["feet_fz"][last].mean() == pytest.approx(run["mass"] * G, rel=0.01)


def test_it_turns_the_valve_ninety_degrees_and_back(run):
    t, valve = run["t"], run["valve"]
    assert np.abs(valve[t < 32.0]).max() < 0.5          # untouched while it stands and reaches
    peak = int(np.argmax(valve))
    assert valve[peak] >= 90.0
    assert 35.0 < t[peak] < 38.0
    assert abs(valve[-1]) < 5.0                           # and back
    # it stays on its feet throughout, and lets go: no grip joints at the end
    assert np.abs(run["pelvis"]).max() < 0.02
    assert not any("grip" in name for name in run["world"].joint_names)
