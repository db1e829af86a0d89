"""The desktop app's physics side without a window: the physics thread, its commands, its
snapshots and the plot buffer, driven the way the window will drive them (commands in,
snapshots polled out) on scenes/door.toml and small worlds built here.

Timing is only asserted with wide margins; waits are long because the first run after a
change to physics/ compiles the kernels (about a minute).
"""
import csv
import dataclasses
import math
import time

import numpy as np
import pytest

from sharnir.app.commands import (
    Configure,
    Load,
    Pause,
    Reset,
    Resume,
    SetBodyForce,
    SetFriction,
    SetSpeed,
    Step,
)
from sharnir.app.physics_thread import PhysicsThread
from sharnir.app.plot_buffer import PlotBuffer
from sharnir.physics import Box, World
from sharnir.physics.model import STAT_ITERATIONS
from sharnir.scenes import SCENE_DIR

DOOR = SCENE_DIR / "door.toml"
DOOR_DT = 0.01
DOOR_FRICTION = 20.0   # N m, the hinge's limit in door.toml
DOOR_PUSH_STEPS = 33   # the push (stronger than any friction used here) lasts 33 steps
READY_TIMEOUT = 600.0  # s: compiling the kernels after physics/ changed
TIMEOUT = 30.0         # s: anything else


def double_pendulum():
    """Two 1 kg rods on hinges with a little friction, released from sideways."""
    w = World(dt=1e-3)
    w.add_body("upper", Box((0.02, 0.02, 0.25)), mass=1.0, pos=(0.25, 0.0, 2.0),
               quat=(math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0))
    w.add_body("lower", Box((0.02, 0.02, 0.25)), mass=1.0, pos=(0.75, 0.0, 2.0),
               quat=(math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0))
    w.add_joint("shoulder", "revolute", "world", "upper", anchor=(0.0, 0.0, 2.0),
                axis=(0.0, 1.0, 0.0), friction=0.05)
    w.add_joint("elbow", "revolute", "upper", "lower", anchor=(0.5, 0.0, 2.0),
                axis=(0.0, 1.0, 0.0), friction=0.05)
    return w


def wait_for(sim, condition, timeout=TIMEOUT):
    """Poll the snapshots until `condition(snapshot)` holds; return that snapshot."""
    end = time.monotonic() + timeout
    while True:
        snap = sim.snapshot
        if condition(snap):
            return snap
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout} s; last snapshot: step {snap.step}, "
                        f"paused {snap.paused}, ready {snap.ready}, error {snap.error!r}")
        time.sleep(0.001)


@pytest.fixture
def start():
    """start(source=DOOR, **kw): a running PhysicsThread whose kernels are ready; every
    thread started is stopped after the test (they are not daemons)."""
    threads = []

    def _start(source=DOOR, **kw):
        sim = PhysicsThread(source, **kw)
        threads.append(sim)
        sim.start()
        wait_for(sim, lambda s: s.ready, READY_TIMEOUT)
        return sim

    yield _start
    for sim in threads:
        assert sim.stop(timeout=TIMEOUT)


def step_paused(sim, n):
    """Advance a paused simulation n single steps; the snapshot after the last."""
    target = sim.snapshot.step + n
    for _ in range(n):
        sim.send(Step())
    return wait_for(sim, lambda s: s.step == target)


# ---- commands reach the physics -------------------------------------------------------------

def test_a_friction_change_brakes_the_very_next_step(start):
    sim = start(paused=True)
    before = step_paused(sim, 5)
    assert np.abs(before.joint[:, 0, 2]) == pytest.approx(DOOR_FRICTION, rel=1e-12)
    sim.send(SetFriction("hinge", 30.0))
    after = step_paused(sim, 1)
    assert after.telemetry.last_step == 6
    hinge = after.joint[-1, 0]
    assert hinge[3] == 1.0  # sliding, so braked by the full new limit
    assert abs(hinge[2]) == pytest.approx(30.0, rel=1e-12)
    assert after.friction_limit.tolist() == [30.0]


def test_a_friction_change_while_running_holds_from_the_next_step_on(start):
    sim = start(speed=0.25)  # slow motion: the push lasts about 1.3 s of wall time
    buffer = PlotBuffer()
    buffer.feed(wait_for(sim, lambda s: s.step >= 2))
    sim.send(SetFriction("hinge", 30.0))
    changed = wait_for(sim, lambda s: s.friction_limit[0] == 30.0)
    last = wait_for(sim, lambda s: s.step >= changed.step + 3)
    buffer.feed(changed)
    buffer.feed(last)
    assert last.step < DOOR_PUSH_STEPS, "the door stopped pushing: the machine is too slow"
    friction = np.abs(buffer.series("hinge", "friction"))
    old = np.isclose(friction, DOOR_FRICTION, rtol=1e-12, atol=0.0)
    new = np.isclose(friction, 30.0, rtol=1e-12, atol=0.0)
    assert np.all(new[buffer.steps > changed.step])
    assert old[0] and np.all(old | new)
    assert np.all(np.diff(new.astype(int)) >= 0)  # one switch from the old limit to the new


def test_an_iteration_cap_reaches_the_solver(start):
    sim = start(paused=True)
    free = step_paused(sim, 3)
    assert free.stats[:, STAT_ITERATIONS].max() > 3  # the door needs more than 3 at first
    sim.send(Configure(iterations=3, tolerance=0.0))
    capped = step_paused(sim, 3)
    assert capped.stats[:, STAT_ITERATIONS].tolist() == [3.0, 3.0, 3.0]
    assert capped.settings["iterations"] == 3 and capped.error is None


@pytest.mark.parametrize("command, words", [
    (Configure(dt=math.nan), "dt"),
    (Configure(dt=5.0), "dt"),
    (Configure(iterations=0), "iterations"),
    (Configure(tolerance=-1.0), "tolerance"),
    (Configure(gravity=(0.0, 0.0, math.inf)), "gravity"),
    (Configure(dt=0.02, warp=3), "warp"),
    (SetSpeed(100.0), "speed"),
    (SetSpeed(math.nan), "speed"),
    (SetFriction("hinge", -1.0), "friction"),
    (SetFriction("hinge", math.nan), "friction"),
    (SetFriction("latch", 1.0), "latch"),
    (SetBodyForce("door", (math.nan, 0.0, 0.0)), "force"),
])
def test_an_absurd_value_is_refused_with_a_message_and_the_old_value_kept(start, command,
                                                                          words):
    sim = start(paused=True)
    before = step_paused(sim, 1)
    sim.send(command)
    refused = wait_for(sim, lambda s: s.error_count == before.error_count + 1)
    assert words in refused.error and "the previous value is kept" in refused.error
    assert dict(refused.settings) == dict(before.settings)
    assert refused.speed == before.speed
    assert refused.friction_limit.tolist() == before.friction_limit.tolist()
    assert step_paused(sim, 2).error == refused.error  # and the simulation goes on


def test_a_command_must_be_a_command(start):
    sim = start(paused=True)
    with pytest.raises(TypeError):
        sim.send("pause")


# ---- pause, step, resume, speed -------------------------------------------------------------

def test_pause_single_step_and_resume_do_what_they_say(start):
    sim = start()
    wait_for(sim, lambda s: s.step >= 3)
    sim.send(Pause())
    paused = wait_for(sim, lambda s: s.paused)
    time.sleep(0.1)  # ten door steps of wall time
    assert sim.snapshot.step == paused.step
    one = step_paused(sim, 1)
    assert one.step == paused.step + 1 and one.paused and len(one.telemetry) == 1
    three = step_paused(sim, 2)
    time.sleep(0.1)
    assert sim.snapshot.step == three.step == paused.step + 3
    sim.send(Resume())
    running = wait_for(sim, lambda s: s.step >= three.step + 5)
    assert not running.paused


def test_a_step_while_running_pauses_after_exactly_one_step(start):
    sim = start()
    wait_for(sim, lambda s: s.step >= 3)
    sim.send(Step())
    stepped = wait_for(sim, lambda s: s.paused)
    time.sleep(0.1)
    assert sim.snapshot.step == stepped.step


def test_the_simulation_keeps_pace_with_the_wall_clock_at_the_requested_speed(start):
    sim = start(speed=0.5)
    first = sim.snapshot
    t0 = time.monotonic()
    time.sleep(1.5)
    last = sim.snapshot
    wall = time.monotonic() - t0
    assert 0.3 * wall < last.time - first.time < 0.6 * wall
    assert 0.3 < last.realtime_factor < 0.6 and last.speed == 0.5


# ---- worlds: load, reset, blow-ups ----------------------------------------------------------

def test_loading_a_bad_scene_keeps_the_old_world_running_and_reports_why(start, tmp_path):
    sim = start()
    before = wait_for(sim, lambda s: s.step >= 3)
    bad = tmp_path / "bad.toml"
    bad.write_text("[world]\ndt = -1.0\n")
    sim.send(Load(bad))
    reported = wait_for(sim, lambda s: s.error_count == 1)
    assert "bad.toml" in reported.error and "dt" in reported.error
    assert reported.scene == "door" and reported.generation == before.generation
    assert wait_for(sim, lambda s: s.step >= reported.step + 5).error == reported.error


def test_loading_a_scene_replaces_the_world_and_restarts_the_step_count(start):
    sim = start()
    before = wait_for(sim, lambda s: s.step >= 3)
    sim.send(Load(SCENE_DIR / "joints.toml"))
    loaded = wait_for(sim, lambda s: s.generation == before.generation + 1)
    assert loaded.scene == "joints" and loaded.source == str(SCENE_DIR / "joints.toml")
    assert loaded.joint_names != before.joint_names and loaded.error is None
    wait_for(sim, lambda s: s.step >= 3 and s.generation == loaded.generation)


def test_reset_rebuilds_the_world_from_its_factory(start):
    built = []

    def factory():
        built.append(double_pendulum())
        return built[-1]

    sim = start(factory)
    first = wait_for(sim, lambda s: s.step >= 50)
    sim.send(Pause())
    sim.send(Reset())
    reset = wait_for(sim, lambda s: s.generation == first.generation + 1)
    assert len(built) == 2 and reset.scene == "factory" and reset.source is None
    assert reset.step == 0 and reset.time == 0.0 and reset.paused
    assert np.array_equal(reset.body_pos, double_pendulum().body_pos)


def test_a_blow_up_pauses_with_the_message_and_a_reset_starts_again(start):
    sim = start()
    before = wait_for(sim, lambda s: s.step >= 3)
    sim.send(SetBodyForce("door", (1e308, 1e308, 1e308)))  # overflows to inf, then NaN
    blown = wait_for(sim, lambda s: s.error_count == 1)
    assert blown.paused and "non-finite" in blown.error and sim.is_alive()
    sim.send(Reset())
    reset = wait_for(sim, lambda s: s.generation == before.generation + 1)
    assert reset.error is None and reset.step == 0 and np.all(np.isfinite(reset.body_pos))
    sim.send(Resume())
    assert wait_for(sim, lambda s: s.step >= 5).error is None


# ---- snapshots and the plot buffer ----------------------------------------------------------

def test_snapshot_arrays_are_read_only_and_stay_as_published(start):
    sim = start()
    snap = wait_for(sim, lambda s: s.step >= 5 and len(s.telemetry) > 0)
    arrays = [snap.body_pos, snap.body_quat, snap.friction_limit, snap.t, snap.joint,
              snap.stats] + [a for chunk in snap.history for a in (chunk.t, chunk.joint)]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[...] = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.step = 0
    with pytest.raises(TypeError):
        snap.settings["dt"] = 1.0
    sim.send(SetFriction("hinge", 25.0))
    wait_for(sim, lambda s: s.step >= snap.step + 10 and s.friction_limit[0] == 25.0)
    assert all(np.array_equal(a, c) for a, c in zip(arrays, copies))
    assert snap.friction_limit[0] == DOOR_FRICTION


def test_the_plot_buffer_gets_every_step_exactly_once_across_many_snapshots(start):
    sim = start(double_pendulum, speed=2.0)
    buffer = PlotBuffer(seconds=100.0)
    seen = set()
    rng = np.random.default_rng(3)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        snap = sim.snapshot
        seen.add(id(snap))
        buffer.feed(snap)
        buffer.feed(snap)  # a snapshot fed twice adds nothing
        time.sleep(rng.uniform(0.0, 0.03))  # sometimes several snapshots go by unseen
    sim.send(Pause())
    buffer.feed(wait_for(sim, lambda s: s.paused))
    n = len(buffer)
    assert len(seen) > 10 and n > 1000 and buffer.missed == 0
    assert buffer.steps.tolist() == list(range(1, n + 1))
    reference = double_pendulum().run(n)
    assert np.array_equal(buffer.t, reference.t)
    for j, name in enumerate(buffer.joint_names):
        assert np.array_equal(buffer.series(name, "velocity"), reference.joint[:, j, 1])
        assert np.array_equal(buffer.joint[j], reference.joint[:, j, :].T)


def test_the_plot_buffer_keeps_the_last_seconds_as_contiguous_arrays(start, tmp_path):
    sim = start(paused=True)
    buffer = PlotBuffer(seconds=0.05)
    buffer.feed(step_paused(sim, 20))
    t = buffer.t
    assert 5 <= len(buffer) <= 6 and t[-1] == pytest.approx(20 * DOOR_DT)
    assert t[-1] - t[0] <= 0.05 + 1e-9
    for series in (t, buffer.series("hinge", "coord"), buffer.series(0, 1),
                   buffer.stats[STAT_ITERATIONS]):
        assert series.flags.c_contiguous and not series.flags.writeable
        assert series.shape == (len(buffer),)

    out = tmp_path / "plots" / "door.csv"
    buffer.to_csv(out)
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:5] == ["t", "hinge.angle", "hinge.velocity", "hinge.friction",
                           "hinge.sliding"]
    assert rows[0][5:11] == [f"hinge.{c}" for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
    assert [float(r[0]) for r in rows[1:]] == t.tolist()
    assert [float(r[2]) for r in rows[1:]] == buffer.series("hinge", "velocity").tolist()
    assert {r[4] for r in rows[1:]} == {"1"}
    assert [p.name for p in out.parent.iterdir()] == ["door.csv"]  # no temporary file left


def test_the_plot_buffer_starts_afresh_for_a_new_world(start):
    sim = start(paused=True)
    buffer = PlotBuffer()
    first = step_paused(sim, 4)
    buffer.feed(first)
    sim.send(Reset())
    wait_for(sim, lambda s: s.generation == first.generation + 1)
    buffer.feed(step_paused(sim, 2))
    assert buffer.steps.tolist() == [1, 2] and buffer.generation == first.generation + 1


# ---- the thread's life ----------------------------------------------------------------------

@pytest.mark.parametrize("paused", [False, True])
def test_stop_ends_the_thread(paused):
    sim = PhysicsThread(DOOR, paused=paused)
    sim.start()
    wait_for(sim, lambda s: s.ready, READY_TIMEOUT)
    assert sim.stop(timeout=TIMEOUT)
    assert not sim.is_alive()


def test_a_bad_first_scene_is_refused_before_any_thread_starts(tmp_path):
    from sharnir.scenes import SceneError

    with pytest.raises(SceneError, match="no such file"):
        PhysicsThread(tmp_path / "missing.toml")
