"""The app never dies and never freezes on what a user can throw at it: a broken recent-files
list, a scene file whose name is not UTF-8, F after a blow-up, a scene of huge sizes, a tiny
dt through the command API, a stage of the physics loop that raises, and Escape.

Each case is a bug report that killed or froze the app; the tests reproduce them.  The plain
Python parts run in-process; the app runs in headless subprocesses (PYGLET_HEADLESS=1), one
per start, with its recent list under a temporary XDG_CONFIG_HOME.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sharnir.app.commands import Configure, Pause, Reset, Resume, SetBodyForce, SetSpeed, Step
from sharnir.app.panel_state import PanelState, open_recent, request_load
from sharnir.app.physics_thread import PhysicsThread
from sharnir.app.printable import from_printable, printable
from sharnir.app.recent import READ_MAX, RecentFiles
from sharnir.physics.settings import SETTINGS

REPO = Path(__file__).resolve().parents[1]
DOOR = REPO / "scenes" / "door.toml"
ODD_NAME = os.fsdecode(b"\xff-door.toml")  # a file name that is not valid UTF-8
# A pendulum and a ball on the ground, apart: forcing the pendulum to blow up (its joint
# turns the force into NaN at once) leaves the ball finite.
TWO_BODIES = """\
version = 0
[world]
dt = 0.01
[[bodies]]
name = "ground"
shape = { type = "plane" }
kind = "static"
[[bodies]]
name = "a"
shape = { type = "box", half_extents = [0.1, 0.1, 0.3] }
density = 1000.0
pos = [0.0, 0.0, 1.0]
[[bodies]]
name = "b"
shape = { type = "sphere", radius = 0.2 }
density = 1000.0
pos = [3.0, 0.0, 0.2]
[[joints]]
name = "pivot"
type = "revolute"
body_a = "world"
body_b = "a"
anchor = [0.0, 0.0, 1.3]
axis = [0.0, 1.0, 0.0]
"""
# A valid scene of huge sizes: a 1e200 m static slab, a 0.2 m ball resting on it.
HUGE = """\
version = 0
[world]
dt = 0.01
[[bodies]]
name = "slab"
kind = "static"
shape = { type = "box", half_extents = [1e200, 1e200, 1.0] }
pos = [0.0, 0.0, -1.0]
[[bodies]]
name = "ball"
shape = { type = "sphere", radius = 0.2 }
density = 1000.0
pos = [0.0, 0.0, 0.2]
"""


def run_child(code, *args, cwd, config, timeout=600):
    """Run `code` headless in a fresh process with its settings under `config`; the JSON
    object on its last line.  A hang is a failure after `timeout` s, not a frozen suite."""
    env = dict(os.environ, PYGLET_HEADLESS="1", XDG_CONFIG_HOME=str(config))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    result = subprocess.run([sys.executable, "-c", code, *map(os.fsencode, args)], cwd=cwd,
                            env=env, capture_output=True, text=True, timeout=timeout,
                            errors="backslashreplace")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---- the recent-files list, in-process ----------------------------------------------------

def _load_within(path, seconds=5.0):
    """RecentFiles(path) in a thread; fails if it has not returned in `seconds`."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", RecentFiles(path)),
                              daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"reading {path} hung"
    return box["r"]


@pytest.mark.parametrize("case, words", [
    ("deep", "nested too deep"),
    ("zero", "a character device"),
    ("fifo", "a FIFO"),
    ("folder", "a folder"),
    ("big", "more than a list of recent files"),
    ("binary", "not UTF-8"),
])
def test_a_broken_recent_list_is_ignored_with_one_line(tmp_path, case, words):
    store = tmp_path / "recent.json"
    if case == "deep":      # a JSON list nested 100,000 deep (RecursionError in json)
        store.write_text('{"files": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif case == "zero":    # a symlink to a device that never ends
        os.symlink("/dev/zero", store)
    elif case == "fifo":    # opening a FIFO waits for a writer forever
        os.mkfifo(store)
    elif case == "folder":
        store.mkdir()
    elif case == "big":
        store.write_text('{"files": []}' + " " * (READ_MAX + 1))
    else:
        store.write_bytes(b'{"files": ["\xff\xfe"]}')
    recent = _load_within(store)
    assert list(recent) == []
    assert words in recent.note and "ignored" in recent.note and "\n" not in recent.note
    printable(recent.note).encode("utf-8")  # showable


def test_recent_names_that_cannot_be_files_are_dropped_and_escaped_bytes_kept(tmp_path):
    store = tmp_path / "recent.json"
    # \ud800 names no file; \udcff is the byte 0xff of a name that is not UTF-8; \u0000 a NUL
    store.write_text('{"version": 1, "files": ["/tmp/\\ud800.toml", "/tmp/\\udcff.toml", '
                     '"/tmp/a\\u0000b.toml", "/tmp/ok.toml"]}')
    recent = _load_within(store)
    assert list(recent) == ["/tmp/\udcff.toml", "/tmp/ok.toml"]
    assert "2 of the names" in recent.note and "ignored" in recent.note
    # Saved and read back: the byte survives, as the same file name.
    assert recent.save() is None
    assert list(RecentFiles(store)) == ["/tmp/\udcff.toml", "/tmp/ok.toml"]
    assert os.fsencode(RecentFiles(store).files[0]) == b"/tmp/\xff.toml"


def test_writing_the_recent_list_never_dies_on_a_name(tmp_path):
    recent = RecentFiles(tmp_path / "recent.json")
    assert "cannot name a file" in recent.add("/tmp/\ud800.toml")   # refused, no exception
    assert recent.add(tmp_path / ODD_NAME) is None
    assert RecentFiles(tmp_path / "recent.json").files == [str(tmp_path / ODD_NAME)]
    nul = RecentFiles(tmp_path / "a\0b" / "recent.json")          # a folder that cannot be
    assert nul.add(tmp_path / "x.toml").startswith("recent files: cannot save")


# ---- names that are not UTF-8, in-process ---------------------------------------------------

def test_printable_escapes_bytes_and_reads_back():
    assert printable("door.toml") == "door.toml"
    assert printable(ODD_NAME) == "\\xff-door.toml"
    assert printable("a\ud800b") == "a\\ud800b"
    assert from_printable(printable(ODD_NAME)) == ODD_NAME
    printable("/x/" + ODD_NAME + "\ud800").encode("utf-8")


def test_a_scene_whose_name_is_not_utf8_is_loaded_from_the_path_box(tmp_path):
    odd = tmp_path / ODD_NAME
    shutil.copy(DOOR, odd)
    snap = type("Snap", (), {"generation": 1, "run": 1, "error_count": 0, "source": None,
                             "scene": "door"})
    sent, state = [], PanelState(recent=RecentFiles(tmp_path / "recent.json"))
    # as typed in the box (which shows the name with \xNN escapes), as the real name, as a
    # recent entry, and as bytes
    for path in (printable(odd), odd, str(odd), os.fsencode(odd)):
        assert request_load(snap, sent.append, state, path) is None
        assert sent.pop().path == str(odd)
    assert open_recent(snap, sent.append, state, str(odd)) is None
    assert sent.pop().path == str(odd)
    # a drop whose name the file manager's decoding replaced by U+FFFD: one line, no load
    note = request_load(snap, sent.append, state, str(tmp_path / "\ufffd-door.toml"))
    assert "does not exist" in note and "UTF-8" in note and not sent


# ---- the physics thread ---------------------------------------------------------------------

def _answers(thread, seconds):
    """Whether the thread applies a command (a speed change) within `seconds`."""
    before = thread.snapshot.speed
    target = 0.5 if before != 0.5 else 0.25
    thread.send(SetSpeed(target))
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if thread.snapshot.speed == target:
            return time.perf_counter() - (deadline - seconds)
        time.sleep(0.002)
    return None


def _wait(thread, condition, seconds=30.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        snap = thread.snapshot
        if condition(snap):
            return snap
        time.sleep(0.005)
    raise AssertionError("the physics thread did not get there")


def test_a_tiny_dt_is_refused_by_the_command_api_with_its_range():
    sim = PhysicsThread(DOOR)
    sim.start()
    try:
        _wait(sim, lambda s: s.ready and s.step > 0)
        sim.send(Configure(dt=1e-9))
        refused = _wait(sim, lambda s: s.error is not None)
        assert "dt" in refused.error and "1e-09" in refused.error
        assert SETTINGS["dt"].range_text in refused.error
        assert refused.dt == 0.01
        assert _answers(sim, 1.0) is not None
    finally:
        assert sim.stop()


@pytest.mark.parametrize("scene", ["door", "pyramid"])
def test_at_the_smallest_dt_the_thread_still_answers_within_a_second(scene):
    """dt at its minimum owes 1,000 steps per catch-up; the pyramid's 210 boxes take far more
    than a second for that, so the thread must split the work and answer in between."""
    sim = PhysicsThread(REPO / "scenes" / f"{scene}.toml")
    sim.start()
    try:
        _wait(sim, lambda s: s.ready, 900)
        sim.send(Configure(dt=SETTINGS["dt"].min))
        _wait(sim, lambda s: s.dt == SETTINGS["dt"].min)
        time.sleep(1.0)                       # running, behind real time for the pyramid
        for _ in range(3):
            took = _answers(sim, 1.0)
            assert took is not None and took < 1.0
        assert sim.snapshot.error is None and not sim.snapshot.paused
    finally:
        assert sim.stop()


def test_a_stage_that_raises_pauses_and_is_reported_once():
    sim = PhysicsThread(DOOR)
    world = sim._world

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in a stage")

    sim.start()
    try:
        _wait(sim, lambda s: s.ready and s.step > 0)
        world.run = broken                    # every step from now on raises
        snap = _wait(sim, lambda s: s.error is not None)
        time.sleep(0.5)                       # hundreds of loop iterations, were it running
        later = sim.snapshot
        assert "a bug in a stage" in later.error and "paused" in later.error
        assert later.paused and later.error_count == snap.error_count == 1
        assert _answers(sim, 1.0) is not None
    finally:
        sim.send(Pause())
        assert sim.stop()


def test_a_non_finite_state_pauses_and_is_reported_once():
    sim = PhysicsThread(DOOR)
    sim.start()
    try:
        _wait(sim, lambda s: s.ready and s.step > 0)
        sim.send(Configure(max_speed=0.0, max_angular_speed=0.0))   # NaN, not a runaway
        sim.send(SetBodyForce("door", (1e308, 1e308, 0.0)))
        snap = _wait(sim, lambda s: s.error is not None)
        time.sleep(0.5)                       # hundreds of loop iterations, were it running
        later = sim.snapshot
        assert "non-finite" in later.error and "'door'" in later.error
        assert later.paused and later.error_count == snap.error_count
        assert _answers(sim, 1.0) is not None
    finally:
        assert sim.stop()


def test_a_runaway_pauses_once_and_resume_goes_on_without_the_speed_checks():
    # 1e13 N on the 21 kg door: thousands of km/s within a step, finite
    sim = PhysicsThread(DOOR)
    sim.start()
    try:
        _wait(sim, lambda s: s.ready and s.step > 0)
        sim.send(SetBodyForce("door", (0.0, 1e13, 0.0)))
        snap = _wait(sim, lambda s: s.error is not None)
        time.sleep(0.5)
        later = sim.snapshot
        assert later.paused and later.error_count == snap.error_count
        assert "body 'door' reached a" in later.error and "max_speed" in later.error
        assert "resume to go on without the speed checks" in later.error
        assert np.isfinite(later.body_pos).all()
        sim.send(SetBodyForce("door", (0.0, 0.0, 0.0)))
        sim.send(Step())                      # one step, then on: no new report either way
        sim.send(Resume())
        gone_on = _wait(sim, lambda s: s.step > later.step + 20 and not s.paused)
        assert gone_on.error_count == later.error_count
        assert gone_on.settings["max_speed"] == gone_on.settings["max_angular_speed"] == 0.0
        sim.send(Reset())                     # a fresh world has its checks again
        fresh = _wait(sim, lambda s: s.generation > gone_on.generation)
        assert fresh.settings["max_speed"] == SETTINGS["max_speed"].default
    finally:
        sim.send(Pause())
        assert sim.stop()


def test_a_failed_publish_still_reaches_the_window():
    sim = PhysicsThread(DOOR, paused=True)
    world = sim._world

    def broken():
        raise RuntimeError("cannot read the contacts")

    world.contacts = broken                   # publishing reads them
    sim.start()
    try:
        snap = _wait(sim, lambda s: s.error is not None)
        assert "publishing" in snap.error and "cannot read the contacts" in snap.error
        time.sleep(0.3)
        assert sim.snapshot.error_count == snap.error_count
    finally:
        assert sim.stop()


# ---- the app, headless ----------------------------------------------------------------------

APP_CHILD = textwrap.dedent("""
    import json, os, sys, time, traceback
    from pathlib import Path
    import numpy as np
    from sharnir.app.commands import Configure, Resume, SetBodyForce
    from sharnir.app.panel_state import PanelState
    from sharnir.app.window import App, read_rgb_image

    door, folder = Path(os.fsdecode(sys.argv[1])), Path(os.fsdecode(sys.argv[2]))
    odd = folder / os.fsdecode(sys.argv[3])
    out = {"errors": {}}
    app = App(door, width=900, height=600, paused=True)

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    def colours():
        rgb = read_rgb_image(app)
        return len(np.unique(rgb[:, 480:].reshape(-1, 3), axis=0))  # right of the panel

    def camera():
        c = app.camera
        return {"target": c.target.tolist(), "distance": c.distance,
                "grid": list(app.renderer.grid_extent)}

    def section(name, body):
        try:
            body()
        except Exception:
            out["errors"][name] = traceback.format_exc()

    until(lambda: app.snapshot.ready, 900)

    def recent():
        store = Path(os.environ["XDG_CONFIG_HOME"]) / "sharnir" / "recent.json"
        store.parent.mkdir(parents=True, exist_ok=True)
        cases = {
            "deep": lambda: store.write_text('{"files": ' + "[" * 100000 + "]" * 100000 + "}"),
            "surrogate": lambda: store.write_text(
                '{"version": 1, "files": ["/tmp/\\\\ud800.toml"]}'),
            "zero": lambda: os.symlink("/dev/zero", store),
            "fifo": lambda: os.mkfifo(store),
        }
        for name, make in cases.items():
            if os.path.lexists(store):
                os.remove(store)
            make()
            app.panel_state = PanelState()      # what a start does: the list is read anew
            t0 = time.perf_counter()
            app.run_frames(3)
            out[name] = {"note": app.panel_state.note, "s": time.perf_counter() - t0,
                         "files": list(app.panel_state.recent_files()), "closed": app.closed}
        os.remove(store)
        app.panel_state = PanelState()

    def names():
        state = app.panel_state
        out["names"] = []
        for how in ("open", "box", "drop", "recent"):
            gen = app.snapshot.generation
            if how == "open":
                note = app.action_open(odd)
            elif how == "box":
                state.scene_path = state.scene_path   # as the box shows it (escaped)
                note = app.action_open(state.scene_path)
            elif how == "drop":
                app.window.dispatch_event("on_file_drop", 600, 300, [str(odd)])  # (queued)
                note = None
            else:
                from sharnir.app.panel_state import open_recent
                note = open_recent(app.snapshot, app.thread.send, state, str(odd))
            loaded = until(lambda: app.snapshot.generation > gen and state.pending is None)
            note = note if loaded else state.note      # (a refused drop says why there)
            app.run_frames(3)                       # the panel draws the name and the list
            out["names"].append({"how": how, "note": note, "loaded": loaded,
                                 "box": state.scene_path, "scene": app.snapshot.scene})
        out["recent_list"] = list(state.recent_files())
        app.action_screenshot(folder / "odd_name.png")
        # the same name, broken: the load-error modal shows it
        broken = folder / (os.fsdecode(b"\\xfe") + "-broken.toml")
        broken.write_text(door.read_text().replace("friction = 20.0", 'friction = "x"'))
        app.action_open(broken)
        out["modal"] = until(lambda: state.load_error is not None)
        app.run_frames(3)
        app.action_screenshot(folder / "odd_modal.png")
        state.load_error = None

    def blowup():
        app.action_open(door)
        until(lambda: app.snapshot.scene == "door" and app.panel_state.pending is None)
        before = camera()
        app.thread.send(Resume())
        app.thread.send(Configure(max_speed=0.0, max_angular_speed=0.0))  # a NaN blow-up
        app.thread.send(SetBodyForce("door", (1e308, 1e308, 0.0)))
        out["blown"] = until(lambda: app.snapshot.error is not None)
        out["blown_error"] = app.snapshot.error
        out["blown_pos"] = np.isfinite(app.snapshot.body_pos).all(axis=1).tolist()
        app.action_frame()                          # F
        app.run_frames(5)
        out["door_camera"] = {"before": before, "after": camera()}
        out["door_note"] = app.panel_state.note
        app.selected = (app.snapshot.run, 1)   # as if the door had been grabbed
        app.action_focus()                            # G
        out["door_focus"] = {"camera": camera(), "note": app.panel_state.note}
        app.action_screenshot(folder / "blowup_door.png")
        # a pendulum blows up, F frames the ball that is still finite
        app.action_open(folder / "two.toml")
        until(lambda: app.snapshot.scene == "two" and app.panel_state.pending is None)
        app.thread.send(Resume())
        app.thread.send(Configure(max_speed=0.0, max_angular_speed=0.0))
        app.thread.send(SetBodyForce("a", (1e308, 0.0, 1e308)))
        out["two_blown"] = until(lambda: app.snapshot.error is not None)
        out["two_finite"] = np.isfinite(app.snapshot.body_pos).all(axis=1).tolist()
        out["b_pos"] = app.snapshot.body_pos[3].tolist()
        app.action_frame()
        app.run_frames(5)
        out["two_camera"] = camera()
        w, h = app.window.get_size()
        clip = app.camera.view_projection(w / h) @ np.append(app.snapshot.body_pos[3], 1.0)
        out["b_on_screen"] = (clip[:2] / clip[3]).tolist()   # in [-1, 1]: in the picture
        app.action_screenshot(folder / "blowup_two.png")
        out["two_colours"] = colours()

    def huge():
        gen = app.snapshot.generation
        app.action_open(folder / "huge.toml")
        out["huge_loaded"] = until(lambda: app.snapshot.generation > gen
                                   and app.snapshot.scene == "huge")
        app.thread.send(Resume())
        step = app.snapshot.step
        until(lambda: app.snapshot.step > step + 30)
        app.action_frame()
        app.run_frames(10)
        out["huge_camera"] = camera()
        out["huge_error"] = app.snapshot.error
        out["huge_ball"] = app.snapshot.body_pos[2].tolist()
        app.action_screenshot(folder / "huge.png")
        out["huge_colours"] = colours()

    try:
        for name, body in (("recent", recent), ("names", names), ("blowup", blowup),
                           ("huge", huge)):
            section(name, body)
    finally:
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def app_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robust")
    shutil.copy(DOOR, folder / ODD_NAME)
    (folder / "two.toml").write_text(TWO_BODIES)
    (folder / "huge.toml").write_text(HUGE)
    out = run_child(APP_CHILD, DOOR, folder, ODD_NAME, cwd=folder, config=folder / "cfg")
    return out, folder


@pytest.mark.parametrize("case", ["deep", "surrogate", "zero", "fifo"])
def test_the_app_starts_with_a_broken_recent_list(app_run, case):
    out, _ = app_run
    assert "recent" not in out["errors"], out["errors"].get("recent")
    got = out[case]
    assert not got["closed"] and got["s"] < 5.0          # drew its frames, no hang
    assert got["files"] == [] and "ignored" in got["note"] and "\n" not in got["note"]


def test_a_scene_named_in_bytes_opens_from_box_drop_and_recent_list(app_run):
    out, folder = app_run
    assert "names" not in out["errors"], out["errors"].get("names")
    for row in out["names"]:
        assert row["loaded"] and row["note"] is None, row
        assert row["scene"] == "\\xff-door"      # (a headless window keeps no caption)
        assert row["box"] == printable(str(folder / ODD_NAME))
    assert out["recent_list"][0] == str(folder / ODD_NAME)
    assert out["modal"]


def test_frame_after_a_blow_up_keeps_the_camera_when_nothing_is_finite(app_run):
    out, _ = app_run
    assert "blowup" not in out["errors"], out["errors"].get("blowup")
    assert out["blown"] and "non-finite" in out["blown_error"]
    assert out["blown_pos"] == [True, False]             # the world body, the door
    assert out["door_camera"]["after"] == out["door_camera"]["before"]
    assert "no body has a finite pose" in out["door_note"]
    assert out["door_focus"]["camera"] == out["door_camera"]["before"]       # G, too
    assert "not finite" in out["door_focus"]["note"]


def test_frame_after_a_blow_up_frames_what_is_finite(app_run):
    out, _ = app_run
    assert out["two_blown"] and out["two_finite"] == [True, True, False, True]
    camera = out["two_camera"]
    assert np.all(np.isfinite(camera["target"])) and np.isfinite(camera["distance"])
    assert camera["distance"] < 10.0                      # framed on the metre scale
    x, y = out["b_on_screen"]                               # and ball b, at x = 3, in view,
    assert -1.0 < x < 1.0 and -1.0 < y < 1.0                # not the NaN pendulum
    assert out["two_colours"] > 20                        # b, its shadow and the grid drawn


def test_a_scene_of_huge_sizes_opens_and_draws(app_run):
    out, _ = app_run
    assert "huge" not in out["errors"], out["errors"].get("huge")
    assert out["huge_loaded"] and out["huge_error"] is None
    camera = out["huge_camera"]
    assert np.all(np.isfinite(camera["target"])) and camera["distance"] < 10.0  # the ball
    half, spacing = camera["grid"]
    assert np.isfinite(half) and half < 1e5 and spacing > 0
    assert out["huge_ball"][2] == pytest.approx(0.2, abs=0.01)   # resting on the slab
    assert out["huge_colours"] > 20


KEYS_CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from pyglet.window import key, mouse
    from sharnir.app.window import App

    scene, folder = Path(os.fsdecode(sys.argv[1])), Path(os.fsdecode(sys.argv[2]))
    out = {}
    app = App(scene, width=900, height=600, paused=True)   # as `sharnir SCENE` makes it
    out["caption"] = app.window.caption

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    def press(symbol, modifiers=0):
        app.window.dispatch_event("on_key_press", symbol, modifiers)
        app.window.dispatch_event("on_key_release", symbol, modifiers)
        app.run_frames(3)

    try:
        until(lambda: app.snapshot.ready, 900)
        app.run_frames(3)
        # click down the panel until a text field (the scene path box) takes the keyboard
        height = app.window.get_size()[1]
        for y in range(8, 200, 4):
            app.window.dispatch_event("on_mouse_press", 200, height - y, mouse.LEFT, 0)
            app.window.dispatch_event("on_mouse_release", 200, height - y, mouse.LEFT, 0)
            app.run_frames(2)
            if app.gui.wants_keyboard:
                break
        out["typing"] = app.gui.wants_keyboard
        press(key.ESCAPE)                       # leaves the text field
        out["after_escape_in_field"] = {"closed": app.closed, "typing": app.gui.wants_keyboard}
        press(key.ESCAPE)                       # nothing to leave: still nothing happens
        out["after_escape"] = app.closed
        app.action_toggle_help()
        press(key.ESCAPE)                       # closes the help
        out["help_after_escape"] = app.show_help
        app.action_open(folder / "broken.toml")  # the load-error dialog
        out["dialog"] = until(lambda: app.panel_state.load_error is not None)
        app.run_frames(3)
        press(key.ESCAPE)                       # closes the dialog, not the app
        out["dialog_after_escape"] = app.panel_state.load_error
        out["closed_after_dialog"] = app.closed
        press(key.Q, key.MOD_CTRL)              # quits
        out["closed_by_ctrl_q"] = app.closed
        out["thread_alive"] = app.thread.is_alive()
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_escape_never_quits_and_ctrl_q_does(tmp_path):
    odd = tmp_path / ODD_NAME                 # started on a name that is not UTF-8, too
    shutil.copy(DOOR, odd)
    (tmp_path / "broken.toml").write_text(DOOR.read_text().replace("dt = 0.01", "dt = -1.0"))
    out = run_child(KEYS_CHILD, odd, tmp_path, cwd=tmp_path, config=tmp_path / "cfg")
    assert out["caption"] == "Sharnir - \\xff-door"
    assert out["typing"]
    assert out["after_escape_in_field"] == {"closed": False, "typing": False}
    assert out["after_escape"] is False
    assert out["help_after_escape"] is False
    assert out["dialog"] and out["dialog_after_escape"] is None
    assert out["closed_after_dialog"] is False
    assert out["closed_by_ctrl_q"] is True and out["thread_alive"] is False
