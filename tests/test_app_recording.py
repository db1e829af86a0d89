"""F9 in the app (issue 29): the 3D view recorded to a video on a writer thread, a red REC
mark while it records, a note that says where the file went.  The app runs headless (EGL)
in a subprocess; the video is decoded back here with PyAV."""
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_headless_child

av = pytest.importorskip("av")

REPO = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from pyglet.window import key
    from sharnir.app.window import App, read_rgb_image

    folder = Path(sys.argv[2])
    app = App(sys.argv[1], width=960, height=600, screenshot_dir=folder)
    out = {}

    def rec_red(rgb):   # the REC mark's red (app.recording.REC_COLOUR), not the x axis'
        return (rgb[..., 0] > 215) & (rgb[..., 1] < 45) & (rgb[..., 2] < 45)

    def press(symbol):
        app.window.dispatch_event("on_key_press", symbol, 0)
        app.window.dispatch_event("on_key_release", symbol, 0)
        app.run_frames(1)

    def run_for(seconds):
        end = time.time() + seconds
        while time.time() < end:
            app.run_frames(1)

    try:
        deadline = time.time() + 900
        while not app.snapshot.ready and time.time() < deadline:
            app.run_frames(1)
        app.action_reset()      # the door's push from the start, while it records
        press(key.F9)
        out["start_note"] = app.panel_state.note
        out["path"] = str(app.recording.path)
        out["view"] = [app.target.size[0] - app.panel_width(), app.target.size[1]]
        run_for(1.5)
        app.action_screenshot(folder / "rec.png")
        rgb = read_rgb_image(app)            # the frame with the panel and the mark
        h, w = rgb.shape[:2]
        corner = rgb[h - 60:, w - 200:].astype(int)
        out["red_in_corner"] = int(rec_red(corner).sum())
        out["writer_thread"] = app.recording.writer._thread.is_alive()
        press(key.F9)
        out["stop_note"] = app.panel_state.note
        out["recording_after_stop"] = app.recording is not None
        deadline = time.time() + 60
        while app._finishing and time.time() < deadline:
            app.run_frames(1)
        out["saved_note"] = app.panel_state.note
        app.run_frames(2)
        app.action_screenshot(folder / "after.png")
        rgb = read_rgb_image(app)
        corner = rgb[h - 60:, w - 200:].astype(int)
        out["red_after"] = int(rec_red(corner).sum())
        sys.modules["av"] = None          # PyAV missing: F9 says what to install
        press(key.F9)
        out["missing_note"] = app.panel_state.note
        out["recording_without_av"] = app.recording is not None
    finally:
        out["closed"] = app.close()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recording")
    out = run_headless_child(CHILD, REPO / "scenes" / "door.toml", folder, cwd=folder)
    return out, folder


def test_f9_starts_and_stops_a_recording_with_a_note_naming_the_file(recorded):
    out, folder = recorded
    path = Path(out["path"])
    assert path.parent == folder and path.suffix == ".mp4"
    assert out["start_note"] == f"recording the view to {path} (F9 stops)"
    assert out["writer_thread"]
    assert out["stop_note"].startswith("recording stopped") and not out["recording_after_stop"]
    assert out["saved_note"].startswith(f"video saved: {path} (")
    assert [p.name for p in folder.iterdir() if p.suffix in (".mp4", ".part")] == [path.name]
    assert out["closed"]


def test_a_red_rec_mark_shows_while_recording_only(recorded):
    out, _ = recorded
    assert out["red_in_corner"] > 30
    assert out["red_after"] == 0


def test_the_video_is_the_view_alone_and_shows_the_door_move(recorded):
    out, _ = recorded
    with av.open(out["path"]) as container:
        frames = [f.to_ndarray(format="rgb24").astype(int) for f in container.decode(video=0)]
    view_w, view_h = out["view"]
    assert frames[0].shape == (view_h - view_h % 2, view_w - view_w % 2, 3)
    assert len(frames) >= 5
    assert np.abs(frames[-1] - frames[0]).mean() > 1.0   # the door turned
    # no REC mark in the video: the bottom-right corner has no red
    corner = frames[len(frames) // 2][-60:, -200:]
    assert ((corner[..., 0] > 215) & (corner[..., 1] < 45) & (corner[..., 2] < 45)).sum() == 0


def test_without_pyav_f9_names_the_extra(recorded):
    out, _ = recorded
    assert out["missing_note"] == "writing video needs PyAV: pip install 'sharnir[video]'"
    assert not out["recording_without_av"]
