"""The timeline (app/physics_thread.py: a state kept every 1/60 s of simulated time, within
TIMELINE_MB; the Rewind command, the panel's slider and the Left arrow): going back to a
kept time restores that state exactly, and going on from there repeats the steps taken the
first time bit for bit."""
import numpy as np
import pytest
from test_app_simulation import DOOR, DOOR_DT, start, step_paused, wait_for  # noqa: F401

from sharnir.app import physics_thread
from sharnir.app.commands import Resume, Rewind
from sharnir.app.panel_state import request_rewind
from sharnir.app.plot_buffer import PlotBuffer


def test_going_back_restores_the_kept_state_and_going_on_repeats_the_run(start):  # noqa: F811
    sim = start(DOOR, paused=True)
    seen = {}
    for _ in range(40):   # 0.4 s, the push and the slide, step by step
        snap = step_paused(sim, 1)
        seen[snap.step] = (snap.body_pos.copy(), snap.body_quat.copy())
    assert snap.timeline[0] == 0.0 and snap.timeline[1] == pytest.approx(0.4)
    sim.send(Rewind(time=0.1))
    back = wait_for(sim, lambda s: s.step == 0 and s.time == pytest.approx(0.1))
    assert back.paused
    np.testing.assert_array_equal(back.body_pos, seen[10][0])
    np.testing.assert_array_equal(back.body_quat, seen[10][1])
    for k in range(1, 21):   # on from 0.1 s: the very same states, to the bit
        snap = step_paused(sim, 1)
        np.testing.assert_array_equal(snap.body_pos, seen[10 + k][0])
        np.testing.assert_array_equal(snap.body_quat, seen[10 + k][1])
    # going on dropped what was kept after 0.1 s; what is kept now ends at 0.3 s
    assert snap.timeline[1] == pytest.approx(0.3)


def test_going_back_starts_the_plot_afresh(start):  # noqa: F811
    sim = start(DOOR, paused=True)
    plot = PlotBuffer()
    step_paused(sim, 30)
    plot.feed(sim.snapshot)
    assert len(plot) == 30
    sim.send(Rewind(time=0.1))
    plot.feed(wait_for(sim, lambda s: s.step == 0))
    assert len(plot) == 0
    step_paused(sim, 5)
    plot.feed(sim.snapshot)
    np.testing.assert_allclose(plot.t, 0.1 + DOOR_DT * np.arange(1, 6))


def test_the_left_arrow_goes_back_one_kept_state(start):  # noqa: F811
    sim = start(DOOR, paused=True)
    step_paused(sim, 10)   # 0.1 s; a state kept every 1/60 s: at 0, 0.02, 0.04 ... (dt 0.01)
    assert request_rewind(sim.snapshot, sim.send, back=1) is None
    snap = wait_for(sim, lambda s: s.step == 0)
    assert snap.time == pytest.approx(0.08)
    sim.send(Rewind(back=1))
    wait_for(sim, lambda s: s.time == pytest.approx(0.06))
    sim.send(Rewind(time=0.5))   # beyond what is kept: the last kept (0.1 s)
    wait_for(sim, lambda s: s.time == pytest.approx(0.1))


def test_the_timeline_keeps_the_latest_states_within_its_memory(start, monkeypatch):  # noqa: F811
    monkeypatch.setattr(physics_thread, "TIMELINE_MB", 20 * 1123 / 2**20)   # ~20 door states
    sim = start(DOOR)
    wait_for(sim, lambda s: s.time > 1.0)
    sim.send(Rewind(time=0.0))   # long dropped: the oldest kept
    back = wait_for(sim, lambda s: s.paused and s.step == 0)
    first, last = back.timeline
    assert first > 0.5 and last - first == pytest.approx(19 * 2 * DOOR_DT, abs=3 * DOOR_DT)
    assert back.time == pytest.approx(first)
    sim.send(Resume())
    wait_for(sim, lambda s: not s.paused and s.time > first + 0.2)


def test_rewind_requests_are_checked(start):  # noqa: F811
    sim = start(DOOR, paused=True)
    sent = []
    assert "must be a number" in request_rewind(sim.snapshot, sent.append, "x")
    assert "must be a number" in request_rewind(sim.snapshot, sent.append, float("nan"))
    assert request_rewind(sim.snapshot, sent.append, -5.0) is None
    assert sent == [Rewind(time=0.0)]   # clamped to what is kept


def test_a_scene_keyframe_loads_in_the_app_and_the_pose_copies_as_toml(start, tmp_path):  # noqa: F811
    import tomllib

    from sharnir.app.commands import ApplyKeyframe
    from sharnir.app.panel_state import keyframe_toml

    scene = tmp_path / "door.toml"
    scene.write_text(DOOR.read_text() + '\n[[keyframes]]\nname = "ajar"\n'
                     'joints = { hinge = 0.5 }\n')
    sim = start(scene, paused=True)
    assert sim.snapshot.keyframes == ("ajar",)
    sim.send(ApplyKeyframe("ajar"))
    snap = step_paused(sim, 1)
    assert snap.telemetry.joint[-1, 0, 0] == pytest.approx(0.5, abs=1e-3)
    table = tomllib.loads(keyframe_toml(snap, "copied"))["keyframes"][0]
    assert table["name"] == "copied" and table["joints"]["hinge"] == pytest.approx(0.5, abs=1e-3)
    sim.send(ApplyKeyframe("nope"))
    wait_for(sim, lambda s: s.error is not None and "no keyframe 'nope'" in s.error)
