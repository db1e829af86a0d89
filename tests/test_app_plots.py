"""The panel's joint plots: angle (or position), velocity and friction of the ticked joints,
fed with every physics step through the PlotBuffer, frozen while paused, CSV export of every
channel, and the units on the axis.

The app runs headless in a subprocess (as tests/test_app_window.py) on scenes/door.toml; it
saves what its PlotBuffer holds, and this process compares that with a headless `World.run`
of the same scene, step by step.
"""
import csv
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_headless_child

from sharnir.app.panel_state import PLOT_CHANNELS, plot_axis_label, plot_channel_names
from sharnir.app.plot_buffer import PlotBuffer
from sharnir.app.snapshot import Telemetry
from sharnir.scenes import load_scene

REPO = Path(__file__).resolve().parents[1]
DOOR = REPO / "scenes" / "door.toml"
DOOR_STOP_DEG = 37.620   # scenes/door.toml: the door stops 37.62 degrees open

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from sharnir.app.commands import SetSpeed
    from sharnir.app.panel_state import export_csv
    from sharnir.app.window import App

    folder = Path(sys.argv[2])
    out = {}
    app = App(sys.argv[1], width=1000, height=1150, paused=True)
    state = app.panel_state

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    try:
        until(lambda: app.snapshot.ready, 900)   # a cold numba compile can take minutes
        state.plotted.add("hinge")
        app.thread.send(SetSpeed(4.0))
        app.action_toggle_pause()
        out["ran"] = until(lambda: app.snapshot.time >= 1.2)
        app.action_toggle_pause()
        until(lambda: app.snapshot.paused)
        app.run_frames(3)
        rows = len(app.plot)
        app.run_frames(10)                       # paused: the plot stays as it is
        out["frozen"] = len(app.plot) == rows
        np.savez(folder / "plot.npz", t=app.plot.t, steps=app.plot.steps, joint=app.plot.joint,
                 coord=app.plot.series("hinge", "angle"),
                 friction=app.plot.series("hinge", "friction"))
        out["missed"] = app.plot.missed
        out["joint_names"] = list(app.plot.joint_names)
        out["csv_note"] = export_csv(app.plot, str(folder / "plot.csv"))
        for channel in ("coord", "friction", "velocity"):
            state.plot_channel = channel
            app.run_frames(2)
            app.action_screenshot(folder / f"plot-{channel}.png")
        state.plot_channel = "coord"
        app.run_frames(2)
        app.action_screenshot(folder / "plot-angle.png")
    finally:  # an exception must not leave the physics thread running
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plots")
    out = run_headless_child(CHILD, DOOR, folder, cwd=folder)
    data = dict(np.load(folder / "plot.npz"))
    return out, data, folder


def test_every_step_is_plotted_and_the_plot_freezes_while_paused(plotted):
    out, data, _ = plotted
    assert out["ran"] and out["frozen"] and out["missed"] == 0
    n = len(data["t"])
    assert n >= 120                                      # 1.2 s at dt = 0.01
    assert data["steps"].tolist() == list(range(1, n + 1))


def test_angle_and_friction_channels_equal_the_physics_telemetry(plotted):
    _, data, _ = plotted
    n = len(data["t"])
    reference = load_scene(DOOR).run(n)                  # the same scene, headless
    assert np.array_equal(data["t"], reference.t)
    for c, channel in enumerate(("coord", "velocity", "friction", "sliding")):
        assert np.array_equal(data["joint"][0, c], reference.joint[:, 0, c]), channel
    assert np.array_equal(data["coord"], reference.joint[:, 0, 0])
    assert np.array_equal(data["friction"], reference.joint[:, 0, 2])
    # The physics the plot shows: the door stops 37.62 degrees open, held by friction
    # (20 N m while it slides, less once it sticks).
    assert math.degrees(data["coord"][-1]) == pytest.approx(DOOR_STOP_DEG, abs=5e-4)
    assert np.abs(data["friction"]).max() == pytest.approx(20.0)


def test_csv_export_has_every_channel_of_every_step(plotted):
    out, data, folder = plotted
    assert out["csv_note"] == f"wrote {len(data['t'])} rows to {folder / 'plot.csv'}"
    with open(folder / "plot.csv", newline="") as f:
        rows = list(csv.reader(f))
    reaction = [f"hinge.{c}" for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
    contact = [f"door.contact_{c}" for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
    assert rows[0] == ["t", "hinge.angle", "hinge.velocity", "hinge.friction",
                       "hinge.sliding"] + reaction + contact
    table = np.array(rows[1:], dtype=float)
    assert table.shape == (len(data["t"]), 17)
    assert np.array_equal(table[:, 0], data["t"])
    for c in range(3):
        assert np.array_equal(table[:, 1 + c], data["joint"][0, c])
    assert np.array_equal(table[:, 4], (data["joint"][0, 3] > 0.5).astype(float))
    for c in range(6):
        assert np.array_equal(table[:, 5 + c], data["joint"][0, 8 + c])
    # the hinge holds the door up: its reaction's z is the door's weight
    np.testing.assert_allclose(table[:, 7], 21.4565 * 9.81, rtol=1e-6)


def test_screenshots_of_each_channel_differ(plotted):
    _, _, folder = plotted
    shots = [(folder / f"plot-{c}.png").read_bytes() for c in ("coord", "velocity", "friction")]
    assert all(s[:8] == b"\x89PNG\r\n\x1a\n" for s in shots)
    assert len(set(shots)) == 3                          # the plotted curve changes


# ---- in-process: units and channel names ----------------------------------------------------

def test_axis_labels_carry_the_units_of_the_plotted_joints():
    # the panel is read by people: degrees, as in the joints table (the CSV keeps radians)
    assert plot_axis_label("coord", ["angle"]) == "angle (deg)"
    assert plot_axis_label("coord", ["position"]) == "position (m)"
    assert plot_axis_label("coord", ["angle", "position"]) == "angle (deg) / position (m)"
    assert plot_axis_label("velocity", ["angle"]) == "angular velocity (deg/s)"
    assert plot_axis_label("velocity", ["position"]) == "velocity (m/s)"
    assert plot_axis_label("velocity", ["position", "angle"]) == "velocity (deg/s, m/s)"
    assert plot_axis_label("friction", ["angle"]) == "friction torque (N m)"
    assert plot_axis_label("friction", ["position"]) == "friction force (N)"
    assert plot_axis_label("friction", ["angle", "position"]) == \
        "friction torque / force (N m, N)"
    assert plot_axis_label("coord", []) == "angle (deg)"
    assert plot_channel_names(["position"])["coord"] == "position"
    assert plot_channel_names(["angle"])["coord"] == "angle"
    assert set(PLOT_CHANNELS) == {"coord", "velocity", "friction"}
    assert plot_axis_label("torque", ["angle"]) == "motor torque (N m)"
    assert plot_axis_label("contact_force", ["angle", "position"]) == "contact force (N)"


class _Snap:
    """The few snapshot fields PlotBuffer.feed reads."""

    def __init__(self, generation, history, names=("slider", "hinge"), run=0):
        self.generation, self.history, self.step = generation, history, history[-1].last_step
        self.run = run
        self.joint_names, self.joint_coord_names = names, ("position", "angle")[:len(names)]
        self.motors, self.sensor_bodies, self.body_names = (), (), ("world",)


def test_plot_buffer_channels_by_name_and_alias():
    joint = np.arange(5 * 2 * 14, dtype=float).reshape(5, 2, 14)
    buffer = PlotBuffer()
    buffer.feed(_Snap(1, (Telemetry(1, np.arange(1, 6) * 0.01, joint, np.zeros((5, 3))),)))
    assert np.array_equal(buffer.series("slider", "position"), joint[:, 0, 0])
    assert np.array_equal(buffer.series("hinge", "angle"), joint[:, 1, 0])
    assert np.array_equal(buffer.series(1, "friction"), joint[:, 1, 2])
    assert np.array_equal(buffer.series("hinge", "voltage"), joint[:, 1, 4])
    assert np.array_equal(buffer.series("slider", "fz"), joint[:, 0, 10])
    with pytest.raises(KeyError, match="no channel"):
        buffer.series("hinge", "wobble")


def test_a_grasp_keeps_the_plotted_history_of_the_joints_that_remain():
    """A grasp or release makes a new generation of the same run (a joint made or removed,
    the world going on): the rows of the joints that remain stay, by name, and a new joint's
    past is NaN (no line); a load or reset (a new run) starts afresh."""
    before = np.arange(5 * 2 * 14, dtype=float).reshape(5, 2, 14)
    after = -np.arange(3 * 2 * 14, dtype=float).reshape(3, 2, 14)
    buffer = PlotBuffer()
    buffer.feed(_Snap(1, (Telemetry(1, np.arange(1, 6) * 0.01, before, np.zeros((5, 3))),)))
    grasp = _Snap(2, (Telemetry(6, np.arange(6, 9) * 0.01, after, np.zeros((3, 3))),),
                  names=("hinge", "grip"))
    assert buffer.feed(grasp) == 3
    assert list(buffer.steps) == list(range(1, 9))
    assert np.array_equal(buffer.series("hinge", "coord"),
                          np.concatenate([before[:, 1, 0], after[:, 0, 0]]))
    grip = buffer.series("grip", "velocity")
    assert np.isnan(grip[:5]).all() and np.array_equal(grip[5:], after[:, 1, 1])
    assert buffer.joint_names == ("hinge", "grip") and "slider" not in buffer.joint_names
    reset = _Snap(3, (Telemetry(1, np.arange(1, 3) * 0.01, after[:2], np.zeros((2, 3))),),
                  names=("hinge", "grip"), run=1)
    buffer.feed(reset)
    assert list(buffer.steps) == [1, 2]


GRASPING = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from sharnir.app.commands import SetSpeed
    from sharnir.app.window import App
    from sharnir.physics import World
    from sharnir.physics.shape import Box

    def make():
        w = World(dt=1 / 240)
        w.add_body("hand", Box((0.05, 0.05, 0.05)), mass=0.5, pos=(0.0, 0.0, 1.0))
        w.add_joint("arm", "revolute", "world", "hand", anchor=(0.2, 0.0, 1.0), axis=(0, 1, 0))
        w.add_body("box", Box((0.05, 0.05, 0.05)), mass=2.0, pos=(0.0, 0.0, 0.9))
        held = []
        def hook(world):
            if world.time >= 0.3 and not held:
                held.append(world.grasp("hand", "box"))
            elif world.time >= 0.6 and len(held) == 1:
                world.release(held[0])
                held.append(None)
        w.set_hook(hook)
        return w

    app = App(make, width=900, height=700)
    try:
        deadline = time.time() + 900
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
            time.sleep(0.05)
        # at half speed, the snapshots read between frames too: the grasp is on show for
        # 0.3 s of simulated time, which a frame drawn slowly on a busy machine could skip
        app.thread.send(SetSpeed(0.5))
        seen = set()
        while app.snapshot.time < 0.9 and time.time() < deadline:
            app.run_frames(1)
            for _ in range(4):
                seen.add(tuple(app.snapshot.joint_names))
                time.sleep(0.005)
        buf = app.plot
        arm = buf.series("arm", "coord")
        out = {"seen": sorted(seen), "names": list(buf.joint_names), "t0": float(buf.t[0]),
               "t1": float(buf.t[-1]), "rows": len(buf), "missed": buf.missed,
               "arm_nan": int(np.isnan(arm).sum()), "steps_ok": bool(
                   np.all(np.diff(buf.steps) >= 1))}
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_the_plot_keeps_its_history_through_a_grasp_and_a_release(tmp_path):
    """The app's plot across a hook's grasp (t = 0.3 s) and release (0.6 s): the arm's curve
    goes on from the start, nothing is wiped."""
    out = run_headless_child(GRASPING, cwd=tmp_path)
    assert ["arm", "grasp:hand:0"] in out["seen"]          # the grasp was on show
    assert out["names"] == ["arm"]                        # released again
    assert out["t0"] <= 0.3 and out["t1"] >= 0.6          # one history through both
    assert out["arm_nan"] == 0
    assert out["rows"] + out["missed"] >= round(out["t1"] * 240) - 1


def test_a_frame_after_a_grasp_draws_and_tables_only_rows_of_the_joints_on_show():
    """The history keeps the rows of the joints before a grasp (17 on the biped) while the
    snapshot shows the joints after it (19): the sliding flags drawn and the joint table's
    last row are of the joints on show, or none (the app crashed on the drawing)."""
    from types import SimpleNamespace

    from sharnir.app.panel_state import _latest
    from sharnir.app.window import _latest_sliding

    class Chunk(SimpleNamespace):
        def __len__(self):
            return len(self.joint)

    before = Chunk(joint=np.ones((2, 17, 8)), stats=np.ones((2, 4)))
    empty = Chunk(joint=np.zeros((0, 19, 8)), stats=np.zeros((0, 4)))
    snap = SimpleNamespace(joint_names=[f"j{k}" for k in range(19)], history=(before,),
                           telemetry=empty)
    assert _latest_sliding(snap) is None and _latest(snap, "joint") is None
    assert _latest(snap, "stats") is not None
    after = Chunk(joint=np.ones((1, 19, 8)), stats=np.ones((1, 4)))
    snap.history = (before, after)
    assert len(_latest_sliding(snap)) == 19 and len(_latest(snap, "joint")) == 19
