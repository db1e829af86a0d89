"""After a build the arrays are the truth (physics/compile.py, physics/specs.py): a live edit
(set_friction, set_damping, set_voltage, set_target) writes the Model or the State only, the
readers read them, and a rebuild (a body added, a grasp) goes on with every edit made since
the last one, as if the world had been built with it."""
import numpy as np
import pytest

from sharnir.physics import Box, DCMotor, World

MOTOR = DCMotor(resistance=2.0, torque_constant=0.05, gear_ratio=10.0)


def arm():
    world = World(dt=0.002, gravity=(0.0, 0.0, 0.0))
    world.add_body("link", Box((0.2, 0.05, 0.05)), mass=1.0, pos=(0.1, 0.0, 0.0))
    world.add_joint("shoulder", "revolute", "world", "link", axis=(0.0, 0.0, 1.0))
    world.add_motor("shoulder", MOTOR)
    return world


def test_friction_and_damping_edits_are_the_models_and_outlive_a_rebuild():
    world = arm()
    world.step(2)
    world.set_friction("shoulder", 0.3)
    world.set_damping("shoulder", 0.02)
    assert world._model.joint_friction[0] == 0.3 and world._model.joint_damping[0] == 0.02
    assert world.joint_friction_limit.tolist() == [0.3]
    assert world.joint_damping.tolist() == [0.02]
    world.add_body("ball", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.0, 1.0, 0.0))
    assert world.joint_friction_limit.tolist() == [0.3]    # (the records hold it again)
    world.step(1)
    assert world._model.joint_friction[0] == 0.3 and world._model.joint_damping[0] == 0.02


def test_a_voltage_set_between_builds_drives_the_rebuilt_world():
    world = arm()
    world.step(2)
    world.set_voltage("shoulder", 6.0)
    assert world.motor_state["voltage"].tolist() == [6.0]
    assert world.keyframe_state()["voltages"] == {"shoulder": 6.0}
    world.add_body("ball", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.0, 1.0, 0.0))
    world.step(1)
    assert world.motor_state["voltage"].tolist() == [6.0]


def test_a_set_point_moved_between_builds_survives_a_rebuild_and_a_hold():
    world = arm()
    world.set_controller("shoulder", "position", kp=5.0, kd=0.1, target=0.0)
    world.step(2)
    world.set_target("shoulder", 0.4, 0.1)
    assert world._model.motor_traj[0, 1:3].tolist() == [0.4, 0.1]
    assert world.keyframe_state()["targets"] == {"shoulder": [0.4, 0.1]}
    world.add_body("ball", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.0, 1.0, 0.0))
    world.step(1)
    assert world._model.motor_traj[0, 1:3].tolist() == [0.4, 0.1]
    world.set_target("shoulder", -0.2)
    world.set_voltage("shoulder", 1.0)      # holds the controller, with its set-point
    world.step(1)
    world.resume_controller("shoulder")
    world.step(1)
    assert world.motor_modes == (("position", False),)
    assert world._model.motor_traj[0, 1:3].tolist() == [-0.2, 0.0]
    world.set_controller("shoulder", "velocity", kp=1.0, target=0.7)   # a new one: its own
    world.step(1)
    assert world._model.motor_traj[0, 1:3].tolist() == [0.7, 0.0]


def test_a_rebuilt_world_runs_as_one_built_with_the_edits():
    """Edits made live, then a rebuild, step bit for bit as the same edits made before a
    rebuild at the same moment."""
    def run(live):
        world = arm()
        world.set_controller("shoulder", "velocity", kp=2.0, target=1.0)
        world.step(20)
        if not live:
            world.add_body("ball", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.0, 1.0, 0.0))
        world.set_friction("shoulder", 0.01)
        world.set_damping("shoulder", 0.001)
        world.set_target("shoulder", 2.0)
        if live:
            world.add_body("ball", Box((0.05, 0.05, 0.05)), mass=0.1, pos=(0.0, 1.0, 0.0))
        world.step(50)
        return np.concatenate([world.body_pos.ravel(), world.joint_vel, world.body_angmom.ravel()])

    np.testing.assert_array_equal(run(live=True), run(live=False))


def test_names_are_looked_up_in_the_builds_map_and_an_unknown_one_is_refused():
    world = arm()
    world.step(1)
    world.grasp("link", "world", name="hold")
    assert world.joint_names == ["shoulder", "hold"]
    world.step(1)
    world.release("hold")
    world.step(1)
    world.set_voltage("shoulder", 2.0)
    assert world.motor_state["voltage"].tolist() == [2.0]
    with pytest.raises(ValueError, match="unknown joint 'hold'"):
        world.set_friction("hold", 0.1)
    with pytest.raises(ValueError, match="unknown body 'nobody'"):
        world.set_body_force("nobody", (1.0, 0.0, 0.0))
