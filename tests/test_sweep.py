"""`sharnir sweep`: a grid over the door's friction and push against the closed form, failing
rows, resume, Ctrl+C, spec errors, and the Ray backend on a real local Ray instance.

The door (scenes/door.toml): a box of mass m, width a = 1.0 m (x), thickness c = 0.04 m (y),
hinged at its edge, I = m (a^2 + c^2) / 12 + m (a / 2)^2 about the hinge. A torque P about the
hinge acts in the steps that start at t < 0.33 s (33 steps of dt = 0.01 s) against the hinge's
Coulomb friction tau (P > tau: it slides). Semi-implicit Euler with the clamped friction
impulse gives, per step k,
    w_k = w_{k-1} + dt (P - tau) / I                     k <= 33 (pushed, sliding)
    w_k = max(w_{k-1} - dt tau / I, 0)                   k > 33 (braking, then stuck)
    theta_k = theta_{k-1} + dt w_k,
so the door stops at theta = dt sum_k w_k, at the first step with w_k = 0. On paper (dt -> 0):
w1 = (P - tau) T / I, theta = w1^2 I / 2 (1 / (P - tau) + 1 / tau), stopping at T (P / tau).
"""
import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sharnir.app.cli import main
from sharnir.scenes import read_scene

DT, PUSH_STEPS = 0.01, 33
STOPPED = 1e-9   # rad/s
FRICTIONS = (15.0, 20.0, 30.0)
PUSHES = (40.0, 55.0, 70.0)

DOOR_SPEC = """
scene = "door"
duration = {duration}

[[grid]]
path = "joints.hinge.friction"
name = "friction"
values = {frictions}

[[grid]]
path = "loads.0.torque.2"
name = "push"
values = {pushes}

[[metrics]]
name = "stop_angle"
channel = "joint.hinge.angle"
reduce = "final"

[[metrics]]
name = "stop_time"
channel = "joint.hinge.rate"
reduce = "stop_time"
"""


def door_inertia():
    door = read_scene("door").bodies[0]
    a, c = 2 * door.shape.half_extents[0], 2 * door.shape.half_extents[1]
    return door.mass * (a * a + c * c) / 12 + door.mass * (a / 2) ** 2


def door_stop(tau, push, inertia):
    """(angle, time) where the discrete recurrence of the module docstring stops (time: the
    end of the first step with w <= STOPPED, the stop_time reducer's default tolerance; 15 N m
    against 40 N m stops on paper at step 88, where the recurrence leaves 1e-16 rad/s)."""
    w, angle, k = 0.0, 0.0, 0
    while True:
        k += 1
        w = w + DT * (push - tau) / inertia if k <= PUSH_STEPS else max(w - DT * tau / inertia,
                                                                        0.0)
        angle += DT * w
        if w <= STOPPED:
            return angle, k * DT


def write_spec(folder, text, name="spec.toml"):
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    return path


def door_spec(folder, duration=2.0, frictions=FRICTIONS, pushes=PUSHES, name="spec.toml"):
    return write_spec(folder, DOOR_SPEC.format(duration=duration, frictions=list(frictions),
                                               pushes=list(pushes)), name)


def read_rows(out):
    with open(Path(out) / "runs.csv", newline="", encoding="utf-8") as f:
        return {int(r["run"]): r for r in csv.DictReader(f)}


def sweep(capsys, *args):
    status = main(["sweep", *map(str, args), "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_door_grid_gives_the_closed_form_stop_angles(tmp_path, capsys):
    spec, out = door_spec(tmp_path), tmp_path / "out"
    status, summary, _ = sweep(capsys, spec, "--out", out)
    assert status == 0 and summary["failed"] == 0 and summary["ran"] == 9
    rows = read_rows(out)
    assert sorted(rows) == list(range(9))
    inertia = door_inertia()
    for tau in FRICTIONS:
        for push in PUSHES:
            row = next(r for r in rows.values()
                       if float(r["friction"]) == tau and float(r["push"]) == push)
            assert row["status"] == "ok", row
            angle, stop = door_stop(tau, push, inertia)
            assert float(row["stop_angle"]) == pytest.approx(angle, abs=1e-6), (tau, push)
            assert float(row["stop_time"]) == pytest.approx(stop, abs=1e-9), (tau, push)
            # and the continuous closed form, within the discretisation (a few steps' worth)
            w1 = (push - tau) * PUSH_STEPS * DT / inertia
            paper = w1 * w1 * inertia / 2 * (1 / (push - tau) + 1 / tau)
            assert float(row["stop_angle"]) == pytest.approx(paper, rel=0.03)
            assert float(row["stop_time"]) == pytest.approx(PUSH_STEPS * DT * push / tau,
                                                            abs=2 * DT)
    info = json.loads((out / "sweep.json").read_text())
    assert info["status"] == "done" and info["runs"] == 9
    assert info["spec"]["grid"][0]["path"] == "joints.hinge.friction"
    for key in ("cpu", "cores", "python", "numba", "sharnir"):
        assert info["machine"][key], key
    if summary["parquet"]:
        import pyarrow.parquet as pq
        table = pq.read_table(out / "runs.parquet").to_pydict()
        assert table["run"] == list(range(9))
        assert table["stop_angle"][4] == pytest.approx(float(rows[4]["stop_angle"]), abs=0)


def test_plots_are_a_heat_map_over_two_grid_parameters(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    spec, out = door_spec(tmp_path, duration=0.5, frictions=(20.0, 30.0), pushes=(40.0, 55.0)), \
        tmp_path / "out"
    status, summary, _ = sweep(capsys, spec, "--out", out, "--backend", "serial", "--plots")
    assert status == 0
    assert sorted(Path(p).name for p in summary["plots"]) == ["stop_angle.png", "stop_time.png"]
    assert (out / "stop_angle.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_extras_are_one_line_errors_naming_them(tmp_path, capsys, monkeypatch):
    spec = door_spec(tmp_path, duration=0.1, frictions=(20.0,), pushes=(55.0,))
    for name in ["matplotlib", "ray", *sys.modules]:   # as if never installed
        if name.split(".")[0] in ("matplotlib", "ray"):
            monkeypatch.setitem(sys.modules, name, None)
    for extra, args in (("sharnir[plots]", ["--plots"]), ("sharnir[ray]", ["--backend", "ray"])):
        assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("sharnir: error:") and extra in err[0], err


def test_a_failing_run_is_a_row_with_its_error_and_the_sweep_goes_on(tmp_path, capsys):
    # friction -5 is refused by the scene's validation; a push of 1e12 N m throws the door
    # beyond max_speed in its first step (a RunawayError)
    spec = door_spec(tmp_path, duration=0.5, frictions=(20.0, -5.0), pushes=(55.0, 1e12))
    status, summary, _ = sweep(capsys, spec, "--out", tmp_path / "out")
    assert status == 0 and summary["done"] == 4 and summary["failed"] == 3
    rows = {(float(r["friction"]), float(r["push"])): r
            for r in read_rows(tmp_path / "out").values()}
    assert rows[20.0, 55.0]["status"] == "ok" and rows[20.0, 55.0]["error"] == ""
    assert float(rows[20.0, 55.0]["stop_angle"]) > 0
    for push in (55.0, 1e12):
        bad = rows[-5.0, push]
        assert bad["status"] == "error" and "friction" in bad["error"], bad
        assert bad["stop_angle"] == ""
    blown = rows[20.0, 1e12]
    assert blown["status"] == "error" and "beyond max_speed" in blown["error"], blown


def test_a_run_past_its_timeout_is_a_row_with_its_error(tmp_path, capsys):
    # 2,000 s of the door (200,000 steps of 0.01 s, over a second of stepping on any machine)
    # against a timeout of 0.05 s: stopped at its first check after 0.05 s, 64 steps apart
    text = DOOR_SPEC.format(duration=2000.0, frictions=[20.0], pushes=[55.0])
    spec = write_spec(tmp_path, "timeout = 0.05\n" + text)
    start = time.perf_counter()
    status, summary, _ = sweep(capsys, spec, "--out", tmp_path / "out", "--backend", "serial")
    assert time.perf_counter() - start < 60
    assert status == 0 and summary["failed"] == 1
    row = read_rows(tmp_path / "out")[0]
    assert row["status"] == "error" and "over the timeout of 0.05 s" in row["error"], row
    assert float(row["wall_s"]) < 10


def test_the_step_of_every_variant_a_value_switches_to_is_compiled_before_the_fan_out(
        tmp_path, capsys, monkeypatch):
    # solver.articulation = "tree" switches the door's step to the trees' variant: the parent
    # readies it (from the shipped cache or by compiling) before any worker starts
    from sharnir.physics import warmup

    made = []
    real = warmup.compile_step

    def recording(world, progress=None):
        made.append(warmup.variant(world))
        return real(world, progress)
    monkeypatch.setattr(warmup, "compile_step", recording)
    spec = write_spec(tmp_path, 'scene = "door"\nduration = 0.1\n[[grid]]\n'
                      'path = "solver.articulation"\nvalues = ["sweep", "tree"]\n'
                      '[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n')
    status, summary, _ = sweep(capsys, spec, "--out", tmp_path / "out", "--backend", "serial")
    assert status == 0 and summary["failed"] == 0
    assert sorted(made) == [(True, False), (True, True)] or sorted(made) == [
        (False, False), (False, True)], made


@pytest.mark.parametrize("text, expected", [
    ('scene = "door"\n[[grid]]\npath = "joints.hinge.friction"\nvalues = [1.0]\n'
     '[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n', "duration: required"),
    ('scene = "door"\nduration = 1.0\n[[grid]]\npath = "joints.hinge.friction"\nvalues = [1.0]\n'
     '[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "median"\n',
     'metrics[0]: reduce: "median" is not one of'),
    ('scene = "door"\nduration = 1.0\n[[grid]]\npath = "joints.hinge.friction"\nvalues = [1.0]\n'
     '[[metrics]]\nchannel = "joint.hing.angle"\nreduce = "final"\n',
     'metrics[0] "final(joint.hing.angle)": channel "joint.hing.angle": no joint "hing"'),
    ('scene = "door"\nduration = 1.0\n[[grid]]\npath = "joints.latch.friction"\n'
     'values = [1.0, 2.0]\n[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n',
     'grid[0] "joints.latch.friction": no value of it makes a valid scene'),
    ('scene = "door"\nduration = 1.0\n[[grid]]\npath = "joints.hinge.friction"\n'
     'linspace = [1, 2]\n[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n',
     'grid[0] "joints.hinge.friction": linspace: expected [start, stop, count]'),
    ('scene = "door"\nduration = 1.0\ncode = "import os"\n', '"code": unknown key'),
    ('scene = "door"\nduration = 1.0\ntimeout = -1\n[[grid]]\npath = "joints.hinge.friction"\n'
     'values = [1.0]\n[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n',
     "timeout: expected wall-clock seconds a run may take, >= 0"),
    ('scene = "door"\nduration = 1.0\n[[random]]\npath = "world.dt"\nuniform = [0.01, 0.02]\n'
     '[[metrics]]\nchannel = "joint.hinge.angle"\nreduce = "final"\n', "samples: expected"),
])
def test_spec_errors_are_one_line_naming_the_entry(tmp_path, capsys, text, expected):
    spec = write_spec(tmp_path, text)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"sharnir: error: {spec}: ") and expected in err[0], err[0]


def test_random_samples_are_seeded_and_reproducible(tmp_path, capsys):
    text = ('scene = "door"\nduration = 0.3\nseed = 7\nsamples = 3\n[[random]]\n'
            'path = "joints.hinge.friction"\nuniform = [10.0, 30.0]\n[[metrics]]\n'
            'channel = "joint.hinge.angle"\nreduce = "max"\n')
    for out in ("a", "b"):
        status, summary, _ = sweep(capsys, write_spec(tmp_path, text), "--out", tmp_path / out,
                                   "--backend", "serial", "--no-plots")
        assert status == 0 and summary["done"] == 3
    a, b = read_rows(tmp_path / "a"), read_rows(tmp_path / "b")
    assert [r["joints.hinge.friction"] for r in a.values()] == \
        [b[i]["joints.hinge.friction"] for i in a]
    assert len({r["joints.hinge.friction"] for r in a.values()}) == 3
    assert all(10 <= float(r["joints.hinge.friction"]) <= 30 for r in a.values())


def test_running_again_resumes_and_skips_the_finished_rows(tmp_path, capsys):
    spec, out = door_spec(tmp_path, duration=1.0), tmp_path / "out"
    status, first, _ = sweep(capsys, spec, "--out", out, "--no-plots")
    assert status == 0 and first["ran"] == 9
    whole = read_rows(out)
    # keep 6 rows and tear the 7th, as a kill mid-write would
    lines = (out / "runs.csv").read_text().splitlines(keepends=True)
    (out / "runs.csv").write_text("".join(lines[:7]) + lines[7][:10])
    status, again, err = sweep(capsys, spec, "--out", out, "--no-plots")
    assert status == 0 and again["skipped"] == 6 and again["ran"] == 3 and again["done"] == 9
    assert "resuming" in err
    resumed = read_rows(out)
    assert sorted(resumed) == list(range(9))
    for i, row in whole.items():
        for key in ("friction", "push", "stop_angle", "stop_time", "status"):
            assert resumed[i][key] == row[key], (i, key)   # deterministic: the same bits
    status, done, _ = sweep(capsys, spec, "--out", out, "--no-plots")
    assert status == 0 and done["ran"] == 0 and done["skipped"] == 9
    # another spec into the same folder is refused, unless --restart
    door_spec(tmp_path, duration=0.5)
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "another sweep (the spec changed)" in err and "--restart" in err
    status, restarted, _ = sweep(capsys, spec, "--out", out, "--no-plots", "--restart")
    assert status == 0 and restarted["ran"] == 9 and restarted["skipped"] == 0


def _child_env():
    return dict(os.environ, PYTHONUNBUFFERED="1")


def test_ctrl_c_stops_cleanly_keeps_the_finished_rows_and_resumes(tmp_path):
    # 24 runs of about 0.5 s each (the energy channel steps one step per call): long enough
    # that the sweep is still running when the third row is written (runs of 0.05 s, all 24
    # took 1 s: the interrupt came after the end)
    text = ('scene = "door"\nduration = 20.0\n[[grid]]\npath = "joints.hinge.friction"\n'
            'linspace = [10.0, 30.0, 24]\n[[metrics]]\nchannel = "energy"\nreduce = "min"\n')
    spec, out = write_spec(tmp_path, text), tmp_path / "out"
    command = [sys.executable, "-m", "sharnir", "sweep", str(spec), "--out", str(out),
               "--no-plots", "--jobs", "2"]
    # (SIGINT back to its default in the child: a background job, as CI's shell may run the
    # tests, starts with it ignored, and Python then never raises KeyboardInterrupt)
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env=_child_env(),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and child.poll() is None:
            csv_file = out / "runs.csv"
            if csv_file.exists() and len(csv_file.read_text().splitlines()) >= 4:
                break
            time.sleep(0.02)
        assert child.poll() is None, child.communicate()
        os.killpg(child.pid, signal.SIGINT)   # as a terminal's Ctrl+C: the whole group
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert "interrupted" in err and "run the same command again to resume" in err
    assert "Traceback" not in err, err
    kept = read_rows(out)
    assert 3 <= len(kept) < 24
    assert all(r["status"] == "ok" and r["min(energy)"] for r in kept.values())
    info = json.loads((out / "sweep.json").read_text())
    assert info["status"] == "interrupted" and info["done"] == len(kept)
    result = subprocess.run(command + ["--json"], capture_output=True, text=True,
                            env=_child_env(), timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["skipped"] == len(kept) and summary["done"] == 24
    assert {i: r["min(energy)"] for i, r in read_rows(out).items() if i in kept} == \
        {i: r["min(energy)"] for i, r in kept.items()}


def test_ray_backend_runs_the_same_spec_on_a_local_ray_instance(tmp_path):
    ray = pytest.importorskip("ray")
    spec = door_spec(tmp_path, duration=2.0, frictions=(15.0, 30.0), pushes=(40.0, 70.0))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        result = subprocess.run(
            [sys.executable, "-m", "sharnir", "sweep", str(spec), "--out", str(tmp_path / "out"),
             "--backend", "ray", "--address", address, "--no-plots", "--json"],
            capture_output=True, text=True, env=_child_env(), timeout=600)
    finally:
        ray.shutdown()
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["backend"]["backend"] == "ray" and summary["backend"]["address"] == address
    assert summary["done"] == 4 and summary["failed"] == 0
    inertia = door_inertia()
    for row in read_rows(tmp_path / "out").values():
        angle, stop = door_stop(float(row["friction"]), float(row["push"]), inertia)
        assert float(row["stop_angle"]) == pytest.approx(angle, abs=1e-6)
        assert float(row["stop_time"]) == pytest.approx(stop, abs=1e-9)


def test_reducers_on_a_known_series():
    from sharnir.app.sweep import Metric, reduce_series

    t = np.arange(1, 7) * 0.5
    x = np.array([0.0, 2.0, -1.0, 0.0, 0.0, 3.0])

    def r(name, **kw):
        return reduce_series(Metric("m", "c", name, **kw), t, x)

    assert (r("final"), r("initial"), r("min"), r("max"), r("max_abs")) == (3, 0, -1, 3, 3)
    assert r("mean") == pytest.approx(4 / 6) and r("range") == 4
    assert r("rms") == pytest.approx(math.sqrt(14 / 6)) and r("integral") == pytest.approx(2.0)
    assert (r("time_of_min"), r("time_of_max")) == (1.5, 3.0)
    assert r("stop_time") == 2.0          # first |x| <= tol after it moved (t = 1.0)
    assert r("first_above", level=2.5) == 3.0 and r("first_below", level=-2) is None
    assert reduce_series(Metric("m", "c", "stop_time"), t, np.zeros(6)) is None


def test_a_worker_that_dies_is_a_failed_row_and_the_others_run(tmp_path, monkeypatch):
    # the pool's workers fork from this process: a run_one patched here is theirs too
    from sharnir.app import sweep as sw

    spec = sw.read_spec(door_spec(tmp_path, duration=0.2))
    job, runs = sw.prepare(spec)
    real = sw.run_one

    def run_one(job, index, sets):
        if index == 4:
            os._exit(9)   # as a segfault or the OOM killer would end it
        return real(job, index, sets)

    monkeypatch.setattr(sw, "run_one", run_one)
    backend = sw.PoolBackend(2)
    backend.start(job)
    try:
        rows = {r["run"]: r for r in backend.rows((r.index, r.sets) for r in runs)}
    finally:
        backend.close()
    assert sorted(rows) == list(range(9))
    assert rows[4]["status"] == "error" and "worker process" in rows[4]["error"]
    assert all(rows[i]["status"] == "ok" for i in rows if i != 4)


def test_sweeps_window_table_plot_and_a_row_opens_that_runs_scene(tmp_path, capsys):
    # the window's work without drawing: the table, the heat map's data, and a click on a row
    # (request_run) sending Load of a scene file that holds the run's values
    from sharnir.app import sweeps_window as window
    from sharnir.app.commands import Load
    from sharnir.app.panel_state import PanelState

    spec, out = door_spec(tmp_path, duration=0.5, frictions=(20.0, 30.0), pushes=(40.0, 55.0)), \
        tmp_path / "out"
    assert sweep(capsys, spec, "--out", out, "--backend", "serial", "--no-plots")[0] == 0
    panel_state = PanelState()
    window.toggle(panel_state)
    state = panel_state.sweeps
    assert state.open and window.request_sweep(state, out / "runs.csv") is None
    table = state.table
    assert [r["run"] for r in table.rows] == [0, 1, 2, 3]
    assert table.parameters == ["friction", "push"] and table.metrics[0] == "stop_angle"
    heat = window.plot_data(table, "stop_angle")
    assert heat["kind"] == "heat" and heat["xs"] == [20.0, 30.0] and heat["ys"] == [40.0, 55.0]
    rows = read_rows(out)
    assert heat["values"][1, 0] == float(next(r for r in rows.values() if r["friction"] ==
                                              "20.0" and r["push"] == "55.0")["stop_angle"])

    class Snapshot:
        run, error_count, source = 0, 0, None

    sent = []
    run = next(i for i, r in rows.items() if r["friction"] == "30.0" and r["push"] == "55.0")
    assert window.request_run(Snapshot(), sent.append, panel_state, state, run) is None
    assert len(sent) == 1 and isinstance(sent[0], Load)
    opened = read_scene(sent[0].path)
    assert Path(sent[0].path) == out / "scenes" / f"run-{run:04d}.toml"
    assert opened.joints[0].friction == 30.0 and opened.loads[0].torque[2] == 55.0
    assert state.selected == run and panel_state.pending.path == sent[0].path
    assert window.request_sweep(state, tmp_path) is not None and "not a sweep" in state.note
    window.toggle(panel_state)
    assert not panel_state.sweeps.open
