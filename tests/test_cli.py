"""The ``sharnir`` command line, run as a subprocess: the door of paper 000 through
``sharnir run``, its outputs (summary, JSON, CSV, NPZ), the shipped scenes and its errors."""

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sharnir.app.snapshot import MOTOR_CHANNELS
from sharnir.scenes import SCENE_DIR, read_scene

REPO = Path(__file__).resolve().parent.parent
DOOR = SCENE_DIR / "door.toml"
JOINTS = SCENE_DIR / "joints.toml"
CHAIN = SCENE_DIR / "chain.toml"
PUSH_END = 0.33  # s, when the door's push ends (scenes/door.toml)
# Below this the engine itself calls a joint stuck; a stopped door's speed is ~1e-18 rad/s.
STOPPED = 1e-9  # rad/s
REQUIRED_KEYS = {"steps", "wall_s", "steps_per_s", "mean_iterations", "sim_time", "dt",
                 "max_iterations", "joints"}


def sharnir(*args, cwd, module="sharnir.app.cli"):
    """Run ``python -m MODULE ARGS`` in ``cwd``; the repository stays importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def door_motion(path):
    """t, angle and angular velocity of the hinge from a door CSV."""
    header, data = read_csv(path)
    col = {name: i for i, name in enumerate(header)}
    return data[:, col["t"]], data[:, col["hinge.angle"]], data[:, col["hinge.velocity"]]


def stop_index(t, velocity):
    """The first step after the push from which the door never moves again."""
    moving = np.nonzero((np.abs(velocity) > STOPPED) | (t <= PUSH_END + 1e-9))[0]
    assert moving[-1] + 1 < len(t), "the door never stops"
    return moving[-1] + 1


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    """One door run through the CLI with every output."""
    folder = tmp_path_factory.mktemp("door")
    result = sharnir("run", DOOR, "--json", "--csv", "out/door.csv", "--npz", "out/door.npz",
                     cwd=folder)
    assert result.returncode == 0, result.stderr
    return result, folder / "out"


@pytest.fixture(scope="module")
def stiff_door(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stiff_door")
    result = sharnir("run", DOOR, "--set", "joints.hinge.friction=35", "--json", "--csv",
                     "door.csv", cwd=folder)
    assert result.returncode == 0, result.stderr
    return result, folder


# --- the door of paper 000 ----------------------------------------------------------------


def test_door_stops_at_0_87_s(door):
    t, _, velocity = door_motion(door[1] / "door.csv")
    assert t[stop_index(t, velocity)] == pytest.approx(0.87, abs=0.01)


def test_door_turns_37_62_degrees_and_stays_there(door):
    t, angle, velocity = door_motion(door[1] / "door.csv")
    stop = stop_index(t, velocity)
    assert math.degrees(angle[stop]) == pytest.approx(37.62, abs=0.3)
    assert np.ptp(angle[stop:]) < 1e-9  # rad: round-off only


def test_door_velocity_falls_linearly_from_push_end_to_stop(door):
    t, _, velocity = door_motion(door[1] / "door.csv")
    braking = (t >= PUSH_END - 1e-9) & (np.arange(len(t)) <= stop_index(t, velocity))
    slope, intercept = np.polyfit(t[braking], velocity[braking], 1)
    residual = velocity[braking] - (slope * t[braking] + intercept)
    r_squared = 1 - np.sum(residual**2) / np.sum((velocity[braking] - velocity[braking].mean())**2)
    assert r_squared > 0.999
    assert slope < 0


def test_door_runs_the_scene_duration_by_default(door):
    summary = last_json(door[0].stdout)
    assert summary["steps"] == 200
    assert summary["dt"] == 0.01
    assert summary["sim_time"] == pytest.approx(2.0)


def test_json_summary_is_the_last_stdout_line_with_the_required_keys(door):
    summary = last_json(door[0].stdout)
    assert REQUIRED_KEYS <= summary.keys()
    assert summary["wall_s"] > 0 and summary["steps_per_s"] > 0
    assert 1 <= summary["mean_iterations"] <= summary["max_iterations"]
    hinge = summary["joints"]["hinge"]
    assert {"coordinate", "velocity", "friction", "sliding"} <= hinge.keys()
    assert math.degrees(hinge["coordinate"]) == pytest.approx(37.62, abs=0.3)
    assert hinge["sliding"] is False


def test_human_summary_shows_the_angle_in_degrees_and_radians(door):
    text = door[0].stdout
    summary = last_json(text)
    angle = summary["joints"]["hinge"]["coordinate"]
    assert f"{math.degrees(angle):.3f} deg ({angle:.6g} rad)" in text
    assert "steps/s" in text


def test_csv_has_a_header_and_one_row_per_step(door):
    header, data = read_csv(door[1] / "door.csv")
    assert header == (["t", "hinge.angle", "hinge.velocity", "hinge.friction", "hinge.sliding"]
                      + [f"hinge.{c}" for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
                      + [f"door.contact_{c}" for c in ("fx", "fy", "fz", "tx", "ty", "tz")])
    assert data.shape == (200, 17)
    # the hinge carries the door's weight (m g, paper 000's 21.4565 kg door)
    np.testing.assert_allclose(data[:, 7], 21.4565 * 9.81, rtol=1e-6)
    assert set(np.unique(data[:, 4])) <= {0.0, 1.0}


def test_more_hinge_friction_stops_the_door_earlier_at_a_smaller_angle(door, stiff_door):
    t, angle, velocity = door_motion(door[1] / "door.csv")
    t35, angle35, velocity35 = door_motion(stiff_door[1] / "door.csv")
    stop, stop35 = stop_index(t, velocity), stop_index(t35, velocity35)
    assert t35[stop35] < t[stop] - 0.1
    assert angle35[stop35] < angle[stop] - 0.1
    assert last_json(stiff_door[0].stdout)["joints"]["hinge"]["coordinate"] == angle35[-1]


def test_progress_goes_to_stderr_in_a_few_lines_when_not_a_terminal(door):
    lines = door[0].stderr.splitlines()
    assert 1 <= len(lines) <= 6
    assert lines[-1].strip().startswith("100%")


# --- npz ------------------------------------------------------------------------------------


def test_npz_has_the_documented_arrays_and_shapes(door):
    with np.load(door[1] / "door.npz") as npz:
        assert list(npz["body_names"]) == ["door"]
        assert list(npz["joint_names"]) == ["hinge"]
        assert npz["t"].shape == (200,)
        assert npz["body_pos"].shape == (200, 1, 3)
        assert npz["body_quat"].shape == (200, 1, 4)
        for name in ("joint_coord", "joint_velocity", "joint_friction", "joint_sliding"):
            assert npz[name].shape == (200, 1), name
        _, angle, _ = door_motion(door[1] / "door.csv")
        np.testing.assert_array_equal(npz["joint_coord"][:, 0], angle)


def test_npz_leaves_out_the_world_body_and_keeps_every_joint(tmp_path):
    result = sharnir("run", JOINTS, "--duration", "0.05", "--npz", "j.npz", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    spec = read_scene(JOINTS)
    steps = round(0.05 / spec.world.dt)
    with np.load(tmp_path / "j.npz") as npz:
        assert list(npz["body_names"]) == [b.name for b in spec.bodies]
        assert list(npz["joint_names"]) == [j.name for j in spec.joints]
        nbody, njoint = len(spec.bodies), len(spec.joints)
        assert npz["body_pos"].shape == (steps, nbody, 3)
        assert npz["body_quat"].shape == (steps, nbody, 4)
        assert npz["joint_sliding"].shape == (steps, njoint)
        np.testing.assert_allclose(np.linalg.norm(npz["body_quat"], axis=2), 1.0, atol=1e-9)


# --- options and the shipped scenes ---------------------------------------------------------


def test_steps_are_duration_over_dt_rounded(tmp_path):
    result = sharnir("run", DOOR, "--duration", "0.051", "--dt", "0.01", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert last_json(result.stdout)["steps"] == 5


def test_csv_names_a_prismatic_coordinate_position(tmp_path):
    result = sharnir("run", JOINTS, "--duration", "0.05", "--csv", "j.csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header, _ = read_csv(tmp_path / "j.csv")
    assert "slider.position" in header and "pendulum_pivot.angle" in header


@pytest.mark.parametrize("scene", [JOINTS, CHAIN], ids=lambda p: p.name)
def test_shipped_scene_runs_headless(scene, tmp_path):
    result = sharnir("run", scene, "--duration", "0.05", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = last_json(result.stdout)
    assert list(summary["joints"]) == [j.name for j in read_scene(scene).joints]


def test_chain_scene_is_the_benchmark():
    spec = read_scene(CHAIN)
    assert (spec.world.dt, spec.solver.iterations, spec.duration) == (1 / 240, 20, 10.0)
    assert [b.name for b in spec.bodies] == [f"link{k}" for k in range(50)]
    assert [j.name for j in spec.joints] == [f"j{k}" for k in range(50)]
    m, r, length = 0.1, 0.01, 0.1
    side, axial = m * (3 * r * r + length * length) / 12, m * r * r / 2
    for k, (body, joint) in enumerate(zip(spec.bodies, spec.joints)):
        assert body.mass == m and body.shape.radius == r and body.shape.half_length == 0.04
        assert body.inertia == pytest.approx((side, side, axial))
        assert body.pos == pytest.approx((0.1 * k + 0.05, 0.0, 1.0))
        assert body.quat == pytest.approx((math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0))
        assert (joint.type, joint.friction, joint.body_b) == ("spherical", 0.05, body.name)
        assert joint.body_a == ("world" if k == 0 else f"link{k - 1}")
        assert joint.anchor == pytest.approx((0.1 * k, 0.0, 1.0))


def test_no_arguments_opens_the_app_or_says_why_it_cannot(tmp_path, monkeypatch):
    """Bare ``sharnir`` opens the window app on the default scene; with no display (as here,
    forced) it says so in one line that points to the headless commands, exit status 2."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "PYGLET_HEADLESS"):
        monkeypatch.delenv(name, raising=False)
    result = sharnir(cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("sharnir: error:")
    assert "sharnir run" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_version_via_python_m_sharnir(tmp_path):
    result = sharnir("--version", cwd=tmp_path, module="sharnir")
    assert result.returncode == 0
    assert result.stdout.startswith("sharnir ")


def test_help_documents_the_conventions(tmp_path):
    result = sharnir("run", "--help", cwd=tmp_path)
    assert result.returncode == 0
    for words in ("SI units", "z up", "(w, x, y, z)", "radians"):
        assert words in result.stdout


def test_help_names_every_output_column_and_what_scene_may_be(door, tmp_path):
    """Issue 27: the help said SCENE was a TOML file and named 4 of the CSV's columns."""
    text = " ".join(sharnir("run", "--help", cwd=tmp_path).stdout.split())  # (unwrapped)
    header, _ = read_csv(door[1] / "door.csv")
    for column in header[1:]:          # a joint's J.x or a contact sensor body's B.x
        part = column.partition(".")[2]
        assert f"J.{part}" in text or f"B.{part}" in text, column
    for part in MOTOR_CHANNELS:        # (the door has no motor)
        assert f"J.{part}" in text, part
    with np.load(door[1] / "door.npz") as npz:
        for name in npz.files:
            assert name in text, name
    for words in (".toml", "MJCF model (.xml)", "URDF robot", "shipped scene's name"):
        assert words in text


# --- errors ---------------------------------------------------------------------------------


def write_scene(folder, text):
    path = folder / "scene.toml"
    path.write_text(text, encoding="utf-8")
    return path


NEGATIVE_MASS = '[[bodies]]\nname = "x"\nshape = { type = "sphere", radius = 0.1 }\nmass = -1\n'


def unwritable_folder(folder):
    (folder / "out").write_text("a file where a folder should be")
    return folder / "out" / "result"


def existing_folder(folder):
    (folder / "result").mkdir()
    return folder / "result"


# case -> (arguments before the output option, where the output goes)
FAILURES = {
    "missing_scene": (lambda d: ["run", d / "nope.toml"], None),
    "toml_syntax_error": (lambda d: ["run", write_scene(d, "bodies = [\n")], None),
    "invalid_scene": (lambda d: ["run", write_scene(d, NEGATIVE_MASS)], None),
    "unknown_set_key": (lambda d: ["run", DOOR, "--set", "joints.hinge.frction=3"], None),
    "unknown_set_joint": (lambda d: ["run", DOOR, "--set", "joints.latch.friction=3"], None),
    "nan_set_value": (lambda d: ["run", DOOR, "--set", "joints.hinge.friction=nan"], None),
    "dt_out_of_range": (lambda d: ["run", DOOR, "--dt", "0.5"], None),
    "duration_below_half_a_step": (lambda d: ["run", DOOR, "--duration", "0.001"], None),
    "simulation_blows_up": (lambda d: ["run", DOOR, "--set", "loads.0.torque=[0, 0, 1e308]"], None),
    "output_folder_is_a_file": (lambda d: ["run", DOOR, "--duration", "0.1"], unwritable_folder),
    "output_is_a_folder": (lambda d: ["run", DOOR, "--duration", "0.1"], existing_folder),
}
OUTPUT_CASES = ["simulation_blows_up", "output_folder_is_a_file", "output_is_a_folder"]


@pytest.mark.parametrize("case, option", [(case, "--csv") for case in FAILURES]
                         + [(case, "--npz") for case in OUTPUT_CASES])
def test_failure_is_one_error_message_with_status_2_and_no_output(case, option, tmp_path):
    arguments, make_target = FAILURES[case]
    args = arguments(tmp_path)
    target = make_target(tmp_path) if make_target else tmp_path / "out" / "result"
    before = sorted(tmp_path.rglob("*"))
    result = sharnir(*args, option, target, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("sharnir: error: ")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    # nothing written, not even a temporary file (an empty new output folder may remain)
    after = [p for p in sorted(tmp_path.rglob("*")) if p.is_file() or any(p.iterdir())]
    assert after == [p for p in before if p.is_file() or any(p.iterdir())]
    assert target.is_dir() if case == "output_is_a_folder" else not target.is_file()


@pytest.mark.parametrize("args", [["run"], ["run", DOOR, "--duration", "nan"],
                                  ["run", DOOR, "--iterations", "many"], ["fly"]],
                         ids=["no_scene", "nan_duration", "text_iterations", "unknown_command"])
def test_bad_arguments_exit_with_status_2(args, tmp_path):
    result = sharnir(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "error:" in result.stderr and "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory):
    """Sharnir built as a wheel and installed (without its dependencies, which the test venv
    has) into a folder of its own, as `pip install .` would install it."""
    root = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(root / "dist"), str(REPO)], capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stderr
    wheel = next((root / "dist").glob("sharnir-*.whl"))
    site = root / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                                "--target", str(site), str(wheel)], capture_output=True,
                               text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr
    return wheel, site


def test_the_wheel_installs_one_package_with_its_scenes_and_assets(installed_wheel):
    import zipfile

    wheel, _ = installed_wheel
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"sharnir", next(t for t in tops if t.endswith(".dist-info"))}
    for path in ("sharnir/__init__.py", "sharnir/physics/solver.py", "sharnir/app/cli.py",
                 "sharnir/render/renderer.py", "sharnir/scenes/door.toml",
                 "sharnir/assets/rock.stl"):
        assert path in names
    assert not [n for n in names if n.startswith(("sharnir/tests", "sharnir/bench"))]


@pytest.mark.slow
def test_the_installed_package_runs_every_shipped_scene_from_another_folder(installed_wheel,
                                                                             tmp_path):
    _, site = installed_wheel
    env = dict(os.environ, PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import sharnir; print(sharnir.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.stdout.strip().startswith(str(site)), where.stdout
    listed = subprocess.run([sys.executable, "-m", "sharnir", "--list"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert "door" in names and "shapes" in names
    for name in names:
        result = subprocess.run([sys.executable, "-m", "sharnir", "run", name, "--duration",
                                 "0.02", "--json"], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=1200)
        assert result.returncode == 0, (name, result.stderr)
        assert json.loads(result.stdout.splitlines()[-1])["steps"] >= 1


def test_list_shows_every_shipped_scene_with_its_description(tmp_path):
    from sharnir.scenes import shipped_scenes

    result = sharnir("--list", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    scenes = shipped_scenes()
    assert len(lines) == len(scenes)
    for line, (name, description) in zip(lines, scenes.items(), strict=True):
        assert line.split()[0] == name and line.endswith(description)


def test_an_unknown_scene_name_is_one_error_that_lists_the_shipped_ones(tmp_path):
    result = sharnir("run", "no_such_scene", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "door" in result.stderr
    assert "no such file, nor a shipped scene" in result.stderr


def test_outputs_stream_to_devices_and_stdout_and_never_replace_them(tmp_path):
    import stat

    done = sharnir("run", DOOR, "--duration", "0.05", "--csv", "/dev/null", "--npz",
                   "/dev/null", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)          # still the device
    done = sharnir("run", DOOR, "--duration", "0.05", "--csv", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("t,hinge.angle,")
    assert len([ln for ln in done.stdout.splitlines() if ln[:1].isdigit()]) == 5


def test_every_and_float32_shrink_the_outputs_and_keep_their_columns(tmp_path):
    """--every N keeps steps N, 2N, ... of the series (the summary still counts every step);
    --float32 writes 7 significant digits to the CSV and float32 arrays to the NPZ."""
    from sharnir.app.cli import main

    full, thin = tmp_path / "full.csv", tmp_path / "thin.csv"
    assert main(["run", "door", "--duration", "0.5", "--csv", str(full)]) == 0
    assert main(["run", "door", "--duration", "0.5", "--csv", str(thin), "--every", "10",
                 "--float32", "--npz", str(tmp_path / "thin.npz")]) == 0
    rows = list(csv.reader(full.open()))
    kept = list(csv.reader(thin.open()))
    assert kept[0] == rows[0]                                   # the same columns
    assert len(kept) - 1 == (len(rows) - 1) // 10
    for a, b in zip(rows[10::10], kept[1:]):                    # steps 10, 20, ...
        assert all(len(x.lstrip("-").replace(".", "").split("e")[0].lstrip("0")) <= 7
                   for x in b)
        np.testing.assert_allclose(np.array(b, float), np.array(a, float), rtol=1e-6,
                                   atol=1e-30)
    data = np.load(tmp_path / "thin.npz")
    assert data["t"].dtype == np.float32 and len(data["t"]) == len(kept) - 1
    assert data["body_pos"].dtype == np.float32 and data["joint_sliding"].dtype == bool
    assert data["t"][-1] == np.float32(0.5)
    assert thin.stat().st_size < full.stat().st_size / 10


def test_every_must_be_a_whole_number_of_one_or_more(tmp_path):
    result = sharnir("run", "door", "--every", "0", cwd=tmp_path)
    assert result.returncode == 2 and "--every" in result.stderr
