"""The panel's voltage slider drives a motor live: the request is clamped to the supply and the
joint settles at the new no-load speed; the snapshot carries the motor's telemetry."""
import textwrap

import pytest
from conftest import run_headless_child
from test_physics_motor import MOTOR_SCENE

# the children's start: the app on the scene file argv[1], `run(seconds)` of frames, ready
OPENED = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sharnir.app.window import App
    from sharnir.app.commands import ResumeController
    from sharnir.app.panel_state import request_target, request_voltage

    app = App(Path(sys.argv[1]), width=900, height=700)
    def run(seconds):
        end = time.time() + seconds
        while time.time() < end:
            app.run_frames(1)
            time.sleep(0.02)
    deadline = time.time() + 900
    while not app.snapshot.ready and time.time() < deadline:
        run(0.05)
""")

CHILD = OPENED + textwrap.dedent("""
    try:
        run(1.0)
        out = {"v0": float(app.snapshot.motor_state["voltage"][0])}
        out["note"] = request_voltage(app.snapshot, app.thread.send, "axle", 50.0)
        out["none"] = request_voltage(app.snapshot, app.thread.send, "nope", 5.0)
        run(1.5)
        s = app.snapshot
        out["v1"] = float(s.motor_state["voltage"][0])
        out["rate"] = float(s.motor_state["speed"][0]) / 10.0
        out["power"] = float(s.motor_state["power"][0])
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_the_voltage_slider_drives_the_motor_live_within_its_supply(tmp_path):
    scene = tmp_path / "motor.toml"
    scene.write_text(MOTOR_SCENE.replace("VOLTAGE", "voltage = 12.0, voltage_limit = 24.0")
                     .replace("duration = 0.5", "duration = 10.0"))
    out = run_headless_child(CHILD, scene, cwd=tmp_path)
    assert out["v0"] == 12.0
    assert "clamped to 24 V" in out["note"] and "has no motor" in out["none"]
    assert out["v1"] == 24.0
    assert out["rate"] == pytest.approx(24.0 / (0.05 * 10.0), rel=0.02)  # no-load at 24 V


CONTROLLED = OPENED + textwrap.dedent("""
    try:
        run(0.5)
        out = {"modes0": app.snapshot.motor_modes}
        request_voltage(app.snapshot, app.thread.send, "axle", 0.0)
        run(0.5)
        out["modes1"] = app.snapshot.motor_modes
        out["bad"] = request_target(app.snapshot, app.thread.send, "axle", "nan")
        request_target(app.snapshot, app.thread.send, "axle", -0.5)
        app.thread.send(ResumeController("axle"))
        run(4.0)
        s = app.snapshot
        out["modes2"] = s.motor_modes
        out["target"] = float(s.motor_state["target"][0])
        rows = [t for t in (s.telemetry, *reversed(s.history)) if len(t.joint)]
        out["q"] = float(rows[0].joint[-1, 0, 0])
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_a_voltage_on_a_controlled_motor_can_hand_it_back_to_its_controller(tmp_path):
    """The panel's motor row shows what drives the motor; a voltage takes it over, the
    controller is held (not lost), and handing it back makes the slider's set-point count."""
    scene = tmp_path / "motor.toml"
    scene.write_text(MOTOR_SCENE.replace(
        "VOLTAGE", 'voltage_limit = 24.0, controller = { mode = "position", kp = 40.0, '
        'kd = 4.0, target = 1.0 }').replace("duration = 0.5", "duration = 30.0"))
    out = run_headless_child(CONTROLLED, scene, cwd=tmp_path)
    assert out["modes0"] == [["position", False]]
    assert out["modes1"] == [["voltage", True]]
    assert "not a finite number" in out["bad"]
    assert out["modes2"] == [["position", False]]
    assert out["target"] == -0.5
    assert out["q"] == pytest.approx(-0.5, abs=0.01)
