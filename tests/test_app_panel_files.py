"""Scene files in the app: the recent-files list (app.recent), the panel's load / reload /
browse requests and how it follows a load (app.panel_state), and, in a headless app, dropping a
file on the window, a malformed file's modal and reloading an edited file.

The recent list and the request functions are plain Python and are tested in-process; the
app runs in a subprocess (PYGLET_HEADLESS=1) like tests/test_app_window.py.
"""
import json
import os
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import run_headless_child

from sharnir.app import panel_state
from sharnir.app.commands import Configure, Load
from sharnir.app.panel_state import (
    PanelState,
    check_load,
    open_recent,
    poll_browse,
    request_load,
    request_reload,
    request_settings,
    start_browse,
)
from sharnir.app.recent import RECENT_MAX, RecentFiles, default_path

REPO = Path(__file__).resolve().parents[1]
DOOR = REPO / "scenes" / "door.toml"
JOINTS = REPO / "scenes" / "joints.toml"


# ---- the recent-files list ------------------------------------------------------------------

def test_recent_files_most_recent_first_without_duplicates_and_at_most_eight(tmp_path):
    store = tmp_path / "cfg" / "recent.json"
    recent = RecentFiles(store)
    assert list(recent) == [] and recent.note is None      # no file yet: empty, no note
    files = [tmp_path / f"s{i}.toml" for i in range(RECENT_MAX + 3)]
    for f in files:
        assert recent.add(f) is None
    assert list(recent) == [str(f) for f in reversed(files)][:RECENT_MAX]
    recent.add(files[5])                                   # again: moves up, not duplicated
    assert recent.files[0] == str(files[5]) and len(recent) == RECENT_MAX
    assert list(recent).count(str(files[5])) == 1
    recent.add(tmp_path / "x" / ".." / "s5.toml")          # the same file, spelled otherwise
    assert list(recent).count(str(files[5])) == 1
    # Persisted: a new list reads the same entries back, in the same order.
    again = RecentFiles(store)
    assert list(again) == list(recent) and again.note is None
    data = json.loads(store.read_text())
    assert data["files"] == list(recent)


def test_recent_files_are_written_atomically(tmp_path, monkeypatch):
    store = tmp_path / "recent.json"
    recent = RecentFiles(store)
    recent.add(tmp_path / "a.toml")
    before = store.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["recent.json"]  # no temporary file left

    # A failure before the rename leaves the old file whole and no temporary file behind.
    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    note = recent.add(tmp_path / "b.toml")
    assert "cannot save" in note and "No space left" in note
    assert store.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["recent.json"]
    assert recent.files[0] == str(tmp_path / "b.toml")      # the list in memory is kept


@pytest.mark.parametrize("content", ["{not json", '{"files": "a.toml"}', "[1, 2]",
                                     '{"files": [1, 2]}', "null", b"\xff\xfe\x00bad"])
def test_a_corrupt_recent_file_is_ignored_with_a_note(tmp_path, content):
    store = tmp_path / "recent.json"
    (store.write_bytes if isinstance(content, bytes) else store.write_text)(content)
    recent = RecentFiles(store)
    assert list(recent) == []
    assert recent.note and str(store) in recent.note and "ignored" in recent.note
    assert recent.add(tmp_path / "a.toml") is None          # and a new list replaces it
    assert json.loads(store.read_text())["files"] == [str(tmp_path / "a.toml")]


def test_an_unreadable_recent_file_is_ignored_with_a_note(tmp_path):
    store = tmp_path / "recent.json"
    store.mkdir()                                           # reading it fails (a folder)
    recent = RecentFiles(store)
    assert list(recent) == [] and "cannot read" in recent.note
    assert "cannot save" in recent.add(tmp_path / "a.toml")  # saving fails too: a note only


def test_recent_files_live_in_the_xdg_config_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "sharnir" / "recent.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")   # the spec: absolute only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".config" / "sharnir" / "recent.json"


# ---- the panel's requests -------------------------------------------------------------------

def snap(generation=1, error_count=0, error=None, source=str(DOOR), scene="door", warning=None):
    # (a load makes a new run: here each generation is one)
    return SimpleNamespace(generation=generation, run=generation, error_count=error_count,
                           error=error, source=source, scene=scene, warning=warning)


def fresh_state(tmp_path):
    return PanelState(recent=RecentFiles(tmp_path / "recent.json"))


def test_load_requests_refuse_bad_paths_and_send_load_otherwise(tmp_path):
    state, sent = fresh_state(tmp_path), []
    assert "type the path" in request_load(snap(), sent.append, state, "  ")
    assert "does not exist" in request_load(snap(), sent.append, state, tmp_path / "no.toml")
    assert "is a folder" in request_load(snap(), sent.append, state, tmp_path)
    assert sent == [] and state.pending is None
    assert request_load(snap(), sent.append, state, JOINTS) is None
    assert sent == [Load(str(JOINTS))] and state.pending.path == str(JOINTS)


def test_a_missing_recent_file_is_refused_with_a_note(tmp_path):
    state, sent = fresh_state(tmp_path), []
    gone = tmp_path / "gone.toml"
    state.recent.add(gone)
    note = open_recent(snap(), sent.append, state, str(gone))
    assert "no longer exists" in note and sent == []


def test_reload_reads_the_file_again_but_not_a_world_built_in_code(tmp_path):
    state, sent = fresh_state(tmp_path), []
    assert request_reload(snap(), sent.append, state) is None
    assert sent == [Load(str(DOOR))] and state.pending.what == "reload"
    sent.clear()
    note = request_reload(snap(source=None, scene="double_pendulum"), sent.append,
                          fresh_state(tmp_path))
    assert "built in code" in note and "double_pendulum" in note and sent == []


def test_check_load_tells_success_from_failure(tmp_path):
    state = fresh_state(tmp_path)
    request_load(snap(generation=3, error_count=2), lambda c: None, state, JOINTS)
    assert check_load(snap(generation=3, error_count=2), state) is None   # not answered yet
    assert check_load(snap(generation=4, error_count=2, source=str(JOINTS)), state) == "loaded"
    assert state.recent.files[0] == str(JOINTS) and state.load_error is None
    assert "loaded" in state.note and state.pending is None

    message = 'bad.toml: joints[0] "hinge": field "friction": must be a number (got "x")'
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 0\n")
    request_load(snap(generation=4, error_count=2), lambda c: None, state, bad)
    assert check_load(snap(generation=4, error_count=3, error=message), state) == "failed"
    assert message in state.load_error and str(bad) in state.load_error
    assert state.recent.files[0] == str(JOINTS)             # a failed file is not remembered
    # An error with no load in flight (a refused setting, say) opens no modal.
    state.load_error = None
    assert check_load(snap(generation=4, error_count=4, error="friction: ..."), state) is None
    assert state.load_error is None


def test_browse_without_a_dialog_program_points_to_the_path_box(tmp_path, monkeypatch):
    monkeypatch.setattr(panel_state.shutil, "which", lambda name: None)
    monkeypatch.setattr(panel_state.sys, "platform", "linux")
    state = fresh_state(tmp_path)
    note = start_browse(state)
    assert "no file dialog" in note and "path" in note and state.dialog is None


def test_browse_polls_the_dialog_and_loads_the_chosen_file(tmp_path):
    class FakeDialog:
        def __init__(self, answers, result):
            self.answers, self._result = list(answers), result

        def ready(self, timeout=20):
            return self.answers.pop(0)

        def result(self):
            return self._result

    state, sent = fresh_state(tmp_path), []
    state.dialog = FakeDialog([False, True], [str(JOINTS)])
    assert poll_browse(snap(), sent.append, state) is None and sent == []   # still open
    assert poll_browse(snap(), sent.append, state) is None
    assert sent == [Load(str(JOINTS))] and state.dialog is None
    state.dialog = FakeDialog([True], [])                   # cancelled, or no dialog shown
    assert "no file chosen" in poll_browse(snap(), sent.append, state)


def test_dt_and_gravity_are_clamped_or_refused_never_nan():
    sent = []
    assert "out of range" in request_settings(sent.append, dt=0.5)
    assert "out of range" in request_settings(sent.append, gravity=(0.0, 0.0, -1e9))
    assert "not three numbers" in request_settings(sent.append, gravity=(0.0, float("nan"), 1))
    assert "not a number" in request_settings(sent.append, dt=float("nan"))
    assert request_settings(sent.append, dt=0.002, gravity=[0, 0, -1.62]) is None
    assert sent == [Configure(dt=0.1), Configure(gravity=(0.0, 0.0, -1000.0)),
                    Configure(dt=0.002, gravity=(0.0, 0.0, -1.62))]


# ---- in the app -----------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sharnir.app.window import App

    door, joints, folder = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    out = {}
    app = App(door, width=900, height=700, paused=True)
    state = app.panel_state

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    try:
        until(lambda: app.snapshot.ready, 900)   # a cold numba compile can take minutes
        app.run_frames(2)

        # 1. Dropping a file on the window loads it.
        gen = app.snapshot.generation
        app.window.dispatch_event("on_file_drop", 20, 20, [str(joints)])
        out["dropped"] = until(lambda: app.snapshot.scene == "joints")
        app.run_frames(2)
        out["drop_generation_up"] = app.snapshot.generation > gen
        out["drop_note"] = state.note
        out["recent_after_drop"] = list(state.recent_files())

        # 2. A malformed file: the modal opens with the whole message; joints keeps running.
        bad = folder / "broken.toml"
        bad.write_text(door.read_text().replace("friction = 20.0", 'friction = "lots"'))
        out["bad_note"] = app.action_open(bad)
        out["modal"] = until(lambda: state.load_error is not None)
        out["load_error"] = state.load_error
        app.run_frames(3)
        app.action_screenshot(folder / "modal.png")
        out["scene_after_bad"] = app.snapshot.scene
        app.action_toggle_pause()
        step = app.snapshot.step
        out["still_running"] = until(lambda: app.snapshot.step > step + 10)
        app.action_toggle_pause()
        out["recent_after_bad"] = list(state.recent_files())
        state.load_error = None      # what the modal's Close does
        app.run_frames(2)

        # 3. Reload re-reads an edited file.
        copy = folder / "door_copy.toml"
        copy.write_text(door.read_text())
        app.action_open(copy)
        out["copy_loaded"] = until(lambda: app.snapshot.scene == "door_copy")
        out["friction_before"] = float(app.snapshot.friction_limit[0])
        copy.write_text(door.read_text().replace("friction = 20.0", "friction = 35.0"))
        gen = app.snapshot.generation
        out["reload_note"] = app.action_reload()
        out["reloaded"] = until(lambda: app.snapshot.generation > gen)
        out["friction_after"] = float(app.snapshot.friction_limit[0])
        until(lambda: state.pending is None)
        out["reload_done_note"] = state.note
        # ... and a broken edit is a reload failure in the modal, the loaded world kept.
        copy.write_text(door.read_text().replace("dt = 0.01", "dt = -1.0"))
        app.action_reload()
        out["reload_modal"] = until(lambda: state.load_error is not None)
        out["reload_error"] = state.load_error
        out["scene_after_bad_reload"] = app.snapshot.scene
        out["friction_after_bad_reload"] = float(app.snapshot.friction_limit[0])
        out["recent_file"] = json.loads((folder / "cfg" / "sharnir" / "recent.json").read_text())
        # A recent file that has gone is greyed in the list and refused.
        state.load_error = None
        gone = folder / "gone.toml"
        gone.write_text(door.read_text())
        state.recent_files().add(gone)
        gone.unlink()
        out["missing_note"] = app.action_open(gone)
        app.run_frames(3)
        app.action_screenshot(folder / "recent.png")
        # 4. A MuJoCo file dropped on the window opens; what it cannot simulate is in the note.
        arm = folder / "arm.xml"
        arm.write_text("<mujoco><worldbody><body name='arm' pos='0 0 1'>"
                       "<joint name='h' type='hinge' axis='0 1 0'/>"
                       "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/>"
                       "</body></worldbody><tendon><fixed name='t' limited='true' range='-1 1'>"
                       "<joint joint='h' coef='1'/></fixed></tendon></mujoco>")
        app.window.dispatch_event("on_file_drop", 20, 20, [str(arm)])
        out["mjcf_loaded"] = until(lambda: app.snapshot.scene == "arm")
        until(lambda: state.pending is None)
        out["mjcf_note"] = state.note
    finally:  # an exception must not leave the physics thread running
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def app_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("panel_files")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(folder / "cfg"))   # the child's recent list goes here
    try:
        out = run_headless_child(CHILD, DOOR, JOINTS, folder, cwd=folder)
    finally:
        mp.undo()
    return out, folder


def test_dropping_a_file_on_the_window_loads_it(app_run):
    out, _ = app_run
    assert out["dropped"] and out["drop_generation_up"]
    assert out["drop_note"] == f"loaded {JOINTS}"
    assert out["recent_after_drop"] == [str(JOINTS)]


def test_a_malformed_file_opens_the_modal_and_the_scene_keeps_running(app_run):
    out, folder = app_run
    assert out["bad_note"] is None and out["modal"]
    text = out["load_error"]
    assert str(folder / "broken.toml") in text          # the file
    assert '"hinge"' in text and '"friction"' in text   # the entry and the field
    assert "must be a number" in text
    assert out["scene_after_bad"] == "joints" and out["still_running"]
    assert out["recent_after_bad"] == [str(JOINTS)]
    assert (folder / "modal.png").is_file()


def test_reload_reads_the_edited_file_again(app_run):
    out, folder = app_run
    assert out["copy_loaded"] and out["friction_before"] == pytest.approx(20.0)
    assert out["reload_note"] is None and out["reloaded"]
    assert out["friction_after"] == pytest.approx(35.0)
    assert out["reload_done_note"].startswith("reloaded")
    assert out["reload_modal"] and "Could not reload" in out["reload_error"]
    assert "dt" in out["reload_error"]
    assert out["scene_after_bad_reload"] == "door_copy"
    assert out["friction_after_bad_reload"] == pytest.approx(35.0)
    assert out["recent_file"]["files"] == [str(folder / "door_copy.toml"), str(JOINTS)]
    assert "does not exist" in out["missing_note"]
    assert out["closed"] is True


def test_a_dropped_mjcf_file_opens_and_its_warning_is_the_note(app_run):
    out, folder = app_run
    assert out["mjcf_loaded"]
    note = out["mjcf_note"]
    assert note.startswith(f"loaded {folder / 'arm.xml'}") and "tendon" in note
    assert "\n" not in note
