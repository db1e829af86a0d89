"""What a user of MuJoCo's viewer expects of the window (issue 27): Tab hides and shows the
panel (not while a text field has the keyboard), + and - step the simulation's speed, the
scene's description heads the panel, the path box takes shipped scene names, notes fade
out, and the window reopens at the size it closed at.

The plain functions run in-process; the app runs headless in a subprocess
(PYGLET_HEADLESS=1) with its settings under a temporary XDG_CONFIG_HOME, as in
tests/test_app_window.py.
"""
import json
import os
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import run_headless_child

from sharnir.app.commands import Load, SetSpeed
from sharnir.app.panel_state import (
    NOTE_FADE_S,
    NOTE_MAX_SECONDS,
    NOTE_SECONDS,
    SPEED_LADDER,
    PanelState,
    elide,
    next_speed,
    note_alpha,
    note_seconds,
    request_load,
    request_speed_step,
    scene_description,
    speed_text,
)
from sharnir.app.recent import RecentFiles, load_window_size, save_window_size
from sharnir.app.window import WINDOW_MIN, WINDOW_SIZE, opening_size
from sharnir.physics.settings import SETTINGS
from sharnir.scenes import SCENE_DIR, shipped_scenes

REPO = Path(__file__).resolve().parents[1]
DOOR = SCENE_DIR / "door.toml"
BIPED = SCENE_DIR / "biped.toml"


# ---- in-process: the speed ladder of + and - ------------------------------------------------

def test_the_speed_ladder_doubles_across_the_whole_speed_range():
    assert SPEED_LADDER[0] == SETTINGS["speed"].min and SPEED_LADDER[-1] == SETTINGS["speed"].max
    assert 1.0 in SPEED_LADDER
    assert all(b == 2.0 * a for a, b in zip(SPEED_LADDER, SPEED_LADDER[1:]))
    assert [speed_text(s) for s in (1 / 32, 1 / 8, 0.5, 1.0, 2.0, 4.0, 0.3)] == \
        ["x1/32", "x1/8", "x1/2", "x1", "x2", "x4", "x0.3"]


def test_plus_and_minus_step_to_the_next_rung_and_stop_at_the_ends():
    assert next_speed(1.0, True) == 2.0 and next_speed(1.0, False) == 0.5
    # off the ladder (the slider set it): the next rung in that direction
    assert next_speed(0.3, True) == 0.5 and next_speed(0.3, False) == 0.25
    assert next_speed(4.0, True) == 4.0 and next_speed(1 / 32, False) == 1 / 32
    sent = []
    assert request_speed_step(sent.append, 1.0, True) == (2.0, "speed x2")
    assert request_speed_step(sent.append, 0.25, False) == (0.125, "speed x1/8")
    speed, note = request_speed_step(sent.append, 4.0, True)
    assert speed == 4.0 and "the fastest" in note
    speed, note = request_speed_step(sent.append, 1 / 32, False)
    assert speed == 1 / 32 and "the slowest" in note
    assert sent == [SetSpeed(2.0), SetSpeed(0.125), SetSpeed(4.0), SetSpeed(1 / 32)]


# ---- in-process: the scene's description -----------------------------------------------------

def test_the_description_of_every_shipped_scene_is_read_as_the_loader_reads_it():
    for name, description in shipped_scenes().items():
        assert scene_description(SCENE_DIR / f"{name}.toml") == " ".join(description.split())
    assert scene_description(BIPED).startswith("Paper 002's biped")


def test_a_description_is_one_line_and_a_file_without_one_has_none(tmp_path):
    multi = tmp_path / "multi.toml"
    multi.write_text('version = 0\ndescription = """A door,\n   pushed\n"""\n'
                     '[world]\ndt = 0.01\n')
    assert scene_description(multi) == "A door, pushed"
    late = tmp_path / "late.toml"    # (a key after a table is that table's, not the scene's)
    late.write_text('version = 0\n[world]\ndescription = "no"\n')
    assert scene_description(late) == ""
    big = tmp_path / "big.toml"      # thousands of inline bodies after it: not parsed
    big.write_text('description = "many"\nbodies = [\n'
                   + "".join(f'  {{ name = "b{i}" }},\n' for i in range(20000)) + "]\n")
    assert scene_description(big) == "many"
    broken = tmp_path / "broken.toml"
    broken.write_text('description = "never closed\n[world]\n')
    assert scene_description(broken) == ""
    (tmp_path / "arm.xml").write_text("<mujoco/>")
    assert scene_description(tmp_path / "arm.xml") == ""
    assert scene_description(None) == "" and scene_description(tmp_path / "gone.toml") == ""


def test_reading_a_description_never_opens_a_fifo(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("d", scene_description(fifo)),
                              daemon=True)
    thread.start()
    thread.join(5.0)
    assert box.get("d") == ""


def test_a_long_description_is_cut_to_the_width_with_dots():
    assert elide("short", 10, len) == "short"
    cut = elide("a description far too long for the panel", 20, len)
    assert cut.endswith("...") and len(cut) <= 20 and "a description".startswith(cut[:10])
    assert elide("abc", 0, len) == "..."


# ---- in-process: notes fade ------------------------------------------------------------------

def test_a_note_stays_a_few_seconds_then_fades_longer_ones_stay_longer():
    short, long_ = "speed x2", "x" * 200
    assert note_seconds(short) >= NOTE_SECONDS
    assert note_seconds(long_) > note_seconds(short)
    assert note_seconds("x" * 100000) == NOTE_MAX_SECONDS
    end = note_seconds(short)
    assert note_alpha(short, 0.0) == 1.0 and note_alpha(short, end) == 1.0
    assert note_alpha(short, end + NOTE_FADE_S / 2) == pytest.approx(0.5)
    assert note_alpha(short, end + NOTE_FADE_S) == 0.0
    assert note_alpha(long_, end + NOTE_FADE_S) == 1.0


def test_setting_a_note_starts_its_time_even_with_the_same_text():
    state = PanelState()
    state.note = "speed x4: the fastest (- slows down)"
    first = state.note_since
    state.note_since -= 100.0
    state.note = "speed x4: the fastest (- slows down)"
    assert state.note_since >= first


# ---- in-process: the path box takes shipped names ------------------------------------------

def _snap():
    from types import SimpleNamespace

    return SimpleNamespace(generation=1, run=1, error_count=0, source=str(DOOR), scene="door")


def test_the_path_box_takes_shipped_names_and_paths_from_the_current_folder(tmp_path,
                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    state, sent = PanelState(recent=RecentFiles(tmp_path / "recent.json")), []
    assert request_load(_snap(), sent.append, state, "biped") is None
    assert request_load(_snap(), sent.append, state, " door.toml ") is None
    assert sent == [Load(str(BIPED)), Load(str(DOOR))]
    assert state.scene_path == str(DOOR)          # the box shows the file it loaded
    # a file of that name in the current folder wins, as on the command line
    (tmp_path / "biped").write_text(DOOR.read_text())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.toml").write_text(DOOR.read_text())
    sent.clear()
    assert request_load(_snap(), sent.append, state, "biped") is None
    assert request_load(_snap(), sent.append, state, "sub/mine.toml") is None
    assert sent == [Load(str(tmp_path / "biped")), Load(str(tmp_path / "sub" / "mine.toml"))]
    # neither a file nor a shipped scene: one line naming both, and the shipped names
    sent.clear()
    note = request_load(_snap(), sent.append, state, "bipod")
    assert note.startswith(f"open: {tmp_path / 'bipod'} does not exist, nor is 'bipod' a "
                           "shipped scene (")
    assert "biped" in note and "door" in note and "\n" not in note
    note = request_load(_snap(), sent.append, state, "sub/biped")   # a path: no shipped name
    assert note == f"open: {tmp_path / 'sub' / 'biped'} does not exist"
    assert sent == []


# ---- in-process: the window's size -----------------------------------------------------------

def test_the_window_size_is_stored_and_read_back(tmp_path):
    store = tmp_path / "cfg" / "window.json"
    assert load_window_size(store) is None                    # nothing stored yet
    assert save_window_size(1024, 700, store) is None
    assert load_window_size(store) == (1024, 700)
    assert json.loads(store.read_text()) == {"version": 1, "size": [1024, 700]}
    assert [p.name for p in store.parent.iterdir()] == ["window.json"]   # no temp file left
    for bad in ("", "{", "[1, 2]", '{"size": [1, 2, 3]}', '{"size": ["a", 2]}',
                '{"size": [0, 700]}', '{"size": [true, 700]}', '{"size": [1e3, 700]}'):
        store.write_text(bad)
        assert load_window_size(store) is None, bad
    os.remove(store)
    os.mkfifo(store)                                          # never opened
    assert load_window_size(store) is None
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert "cannot save" in save_window_size(800, 600, blocked / "window.json")


def test_the_window_opens_at_the_stored_size_within_sane_bounds():
    assert opening_size(None) == WINDOW_SIZE
    assert opening_size((1000, 700)) == (1000, 700)
    assert opening_size((100, 50)) == WINDOW_MIN
    assert opening_size((5000, 3000), (1920, 1080)) == (1920, 1080)
    assert opening_size(None, (1024, 600)) == (1024, 600)
    assert opening_size((900, 700), (300, 200)) == WINDOW_MIN   # a tiny screen: the minimum


# ---- in the app --------------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from pyglet.window import key, mouse
    from sharnir.app import panel_state
    from sharnir.app.keys import ALWAYS_ACTIVE, HELP, SHORTCUTS
    from sharnir.app.window import App, read_rgb_image

    door, folder = sys.argv[1], Path(sys.argv[2])
    out = {"help": [control for control, _ in HELP],
           "keys": {name: SHORTCUTS.get(getattr(key, name)) for name in (
               "TAB", "PLUS", "EQUAL", "NUM_ADD", "MINUS", "NUM_SUBTRACT")},
           "tab_always": key.TAB in ALWAYS_ACTIVE}
    app = App(door, paused=True)          # no size given: the stored one
    state = app.panel_state
    out["size"] = list(app.window.get_size())

    def until(condition, timeout=120):
        deadline = time.time() + timeout
        while not condition() and time.time() < deadline:
            app.run_frames(1)
        return condition()

    def press(symbol, modifiers=0, frames=3):
        app.window.dispatch_event("on_key_press", symbol, modifiers)
        app.window.dispatch_event("on_key_release", symbol, modifiers)
        app.run_frames(frames)

    def left_strip():     # the mean colour of the window's left 300 px
        return read_rgb_image(app)[:, :300].reshape(-1, 3).mean(axis=0).tolist()

    try:
        until(lambda: app.snapshot.ready, 900)
        app.run_frames(3)
        out["description"] = state.description[1]
        app.action_screenshot(folder / "panel.png")
        out["strip_shown"] = left_strip()

        # Tab hides the panel: the view takes the whole window; Tab shows it again
        press(key.TAB)
        out["hidden"] = {"shown": app.show_panel, "width": app.panel_width(),
                         "shift": app.camera.shift_x, "note": state.note}
        app.action_screenshot(folder / "hidden.png")
        out["strip_hidden"] = left_strip()
        press(key.TAB)
        out["shown_again"] = {"shown": app.show_panel, "width": app.panel_width()}

        # ... but not while a text field (the path box) has the keyboard
        height = app.window.get_size()[1]
        for y in range(8, 240, 4):
            app.window.dispatch_event("on_mouse_press", 200, height - y, mouse.LEFT, 0)
            app.window.dispatch_event("on_mouse_release", 200, height - y, mouse.LEFT, 0)
            app.run_frames(2)
            if app.gui.wants_keyboard:
                break
        out["typing"] = app.gui.wants_keyboard
        press(key.TAB)
        out["shown_after_tab_in_field"] = app.show_panel
        press(key.ESCAPE)
        out["typing_after_escape"] = app.gui.wants_keyboard

        # + and - (and the keypad's): one rung each; quick presses add up; the ends hold
        speeds = []
        for symbol in (key.PLUS, key.EQUAL):
            press(symbol, frames=0)
        until(lambda: app.snapshot.speed == 4.0, 30)
        speeds.append((app.snapshot.speed, state.note))
        press(key.NUM_ADD)
        until(lambda: state.note is not None and "fastest" in state.note, 30)
        speeds.append((app.snapshot.speed, state.note))
        app.action_screenshot(folder / "speed.png")
        for _ in range(7):
            press(key.MINUS, frames=1)
        until(lambda: app.snapshot.speed == 1 / 32, 30)
        speeds.append((app.snapshot.speed, state.note))
        press(key.NUM_SUBTRACT)
        speeds.append((app.snapshot.speed, state.note))
        out["speeds"] = speeds

        # notes fade: half-way through the fade, then gone
        state.note = "a note that fades out"
        app.run_frames(2)
        out["note_while_fresh"] = state.note
        state.note_since -= panel_state.note_seconds(state.note) + panel_state.NOTE_FADE_S / 2
        app.run_frames(1)
        app.action_screenshot(folder / "fading.png")
        state.note = "a note that fades out"
        app.run_frames(1)
        state.note_since -= panel_state.NOTE_MAX_SECONDS + panel_state.NOTE_FADE_S
        app.run_frames(2)
        out["note_after_fade"] = state.note

        # the path box takes a shipped scene's name
        out["open_biped"] = panel_state.request_load(app.snapshot, app.thread.send, state, "biped")
        out["biped_loaded"] = until(lambda: app.snapshot.scene == "biped"
                                    and app.snapshot.ready and state.pending is None, 600)
        app.run_frames(3)
        out["biped_source"] = app.snapshot.source
        out["biped_description"] = state.description[1]
        state.note = None
        app.run_frames(2)
        app.action_screenshot(folder / "biped.png")
    finally:
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def viewer_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("viewer")
    store = folder / "cfg" / "sharnir" / "window.json"
    store.parent.mkdir(parents=True)
    # the size the window closed at last time, with a key the app does not write
    store.write_text(json.dumps({"version": 1, "size": [1100, 700], "left": "by the test"}))
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(folder / "cfg"))
    try:
        out = run_headless_child(CHILD, DOOR, folder, cwd=folder)
    finally:
        mp.undo()
    return out, folder


def test_the_window_reopens_at_its_stored_size_and_stores_it_on_closing(viewer_run):
    out, folder = viewer_run
    assert out["size"] == [1100, 700]
    assert out["closed"] is True
    stored = json.loads((folder / "cfg" / "sharnir" / "window.json").read_text())
    assert stored == {"version": 1, "size": [1100, 700]}      # written again on closing


def test_tab_hides_and_shows_the_panel_but_not_in_a_text_field(viewer_run):
    out, folder = viewer_run
    assert out["keys"]["TAB"] == "toggle_panel" and not out["tab_always"]
    assert "Tab" in out["help"]
    hidden = out["hidden"]
    assert hidden["shown"] is False and hidden["width"] == 0.0 and hidden["shift"] == 0.0
    assert "Tab" in hidden["note"]
    assert out["shown_again"] == {"shown": True, "width": pytest.approx(480.0, abs=60.0)}
    # the panel's grey left strip becomes the view's sky and floor
    assert max(abs(a - b) for a, b in zip(out["strip_shown"], out["strip_hidden"])) > 10.0
    assert out["typing"] and out["shown_after_tab_in_field"] is True
    assert out["typing_after_escape"] is False
    assert (folder / "hidden.png").is_file()


def test_plus_and_minus_step_the_speed_with_a_note(viewer_run):
    out, _ = viewer_run
    assert out["keys"] == {"TAB": "toggle_panel", "PLUS": "faster", "EQUAL": "faster",
                           "NUM_ADD": "faster", "MINUS": "slower", "NUM_SUBTRACT": "slower"}
    assert "+ / -" in out["help"]
    (two_presses, note), (top, top_note), (bottom, _), (still, bottom_note) = out["speeds"]
    assert two_presses == 4.0 and note == "speed x4"     # two quick presses: x1 -> x2 -> x4
    assert top == 4.0 and "the fastest" in top_note
    assert bottom == still == 1 / 32 and "the slowest" in bottom_note


def test_a_note_fades_out(viewer_run):
    out, folder = viewer_run
    assert out["note_while_fresh"] == "a note that fades out"
    assert out["note_after_fade"] is None
    assert (folder / "fading.png").is_file()


def test_the_panel_heads_with_the_description_and_opens_shipped_names(viewer_run):
    out, folder = viewer_run
    assert out["description"] == " ".join(shipped_scenes()["door"].split())
    assert out["open_biped"] is None and out["biped_loaded"]
    assert out["biped_source"] == str(BIPED)
    assert out["biped_description"].startswith("Paper 002's biped")
    assert (folder / "biped.png").is_file()


FORCE_LINES = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from sharnir.app.window import App, read_rgb_image

    app = App("stack", width=800, height=600)
    try:
        deadline = time.time() + 900
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
            time.sleep(0.05)
        while app.snapshot.time < 0.5 and time.time() < deadline:
            app.run_frames(1)
        app.action_toggle_pause()
        app.run_frames(3)
        base = app.contact_force_scale()
        shots = []
        for gain in (1.0, 10.0):
            app.force_gain = gain
            app.draw_frame()
            shots.append(read_rgb_image(app).astype(float))
        out = {"base": base, "scaled": app.contact_force_scale(),
               "changed": float(np.abs(shots[1] - shots[0]).sum(axis=-1).astype(bool).mean())}
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_the_contact_force_lines_scale_with_the_panel_factor(tmp_path):
    """The View section's factor lengthens the contact force lines: ten times the metres per
    newton, and the picture changes (the stack's contacts, paused)."""
    out = run_headless_child(FORCE_LINES, cwd=tmp_path)
    assert out["base"] > 0.0 and out["scaled"] == pytest.approx(10.0 * out["base"])
    assert out["changed"] > 1e-4


WHEEL = textwrap.dedent("""
    import json, sys, time
    from sharnir.app.window import App

    app = App(sys.argv[1], width=900, height=900, paused=True)
    try:
        deadline = time.time() + 900
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
            time.sleep(0.05)
        app.run_frames(3)
        x0, y0, x1, y1 = app.panel_state.joints_rect
        x, y = (x0 + x1) / 2, 900 - (y0 + 30)   # a row near its top (y from the bottom)
        app.on_mouse_motion(x, y, 0, 0)
        app.run_frames(2)
        scrolls = []
        for _ in range(160):   # (how many notches it takes depends on the frames' timing)
            app.on_mouse_scroll(x, y, 0, -1)
            app.run_frames(2)
            scrolls.append([app.panel_state.joints_scroll[0], app.panel_state.controls_scroll[0]])
            if scrolls[-1][1] == app.panel_state.controls_scroll[1] > 0.0:
                break
        out = {"scrolls": scrolls, "end": app.panel_state.controls_scroll[1],
               "rect": [x0, y0, x1, y1]}
    finally:
        app.close()
    print(json.dumps(out))
""")


def test_the_wheel_over_the_joints_table_at_its_end_scrolls_the_panel(tmp_path):
    """MuJoCo's humanoid: its joints table scrolls first; once at its end, more wheel
    scrolls the panel on, to the panel's end (it used to stop while the pointer was on the
    table, and the table was always where the pointer rests when scrolling down)."""
    humanoid = Path(__file__).parent / "fixtures" / "mjcf" / "humanoid.xml"
    out = run_headless_child(WHEEL, humanoid, cwd=tmp_path)
    table, panel = zip(*out["scrolls"])
    assert panel[0] == 0.0 and table[0] > 0.0           # the table takes the first notches
    first = panel.index(next(p for p in panel if p > 0.0))
    assert table[first] == max(table)                     # ... until it is at its end
    assert panel[-1] == out["end"]                        # then the panel, to its end
