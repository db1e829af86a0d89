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

from sharnir.app.panel import PLOT_CHANNELS, plot_axis_label, plot_channel_names
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
    from sharnir.app.panel import export_csv
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

    def __init__(self, generation, history, names=("slider", "hinge")):
        self.generation, self.history, self.step = generation, history, history[-1].last_step
        self.joint_names, self.joint_coord_names = names, ("position", "angle")
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
