"""Videos (issue 29): render.video's encoder in-process, ``sharnir run --video`` and
``sharnir replay`` through the CLI in headless (EGL) subprocesses.  Every file is decoded
back with PyAV: its frame count, its size, and frames that differ as the scene moves."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from sharnir.render.video import (
    MISSING_AV,
    VideoError,
    VideoWriter,
    encoded_size,
    fit_frame,
    joint_anchor_points,
    require_av,
)

av = pytest.importorskip("av")

REPO = Path(__file__).resolve().parents[1]
SIZE = (160, 120)


def decode(path):
    """Every frame of a video file as (h, w, 3) int arrays, and their times in s."""
    with av.open(str(path)) as container:
        frames = list(container.decode(video=0))
    return ([f.to_ndarray(format="rgb24").astype(int) for f in frames],
            [float(f.time) for f in frames])


def moving_square(k, width=64, height=48):
    """A picture with a red square k * 4 px from the left: each frame differs."""
    image = np.full((height, width, 3), 30, np.uint8)
    image[10:30, 4 * k:4 * k + 16] = (220, 40, 40)
    return image


def sharnir(*args, cwd):
    env = dict(os.environ, PYGLET_HEADLESS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    return subprocess.run([sys.executable, "-m", "sharnir", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=1200)


# ---- the encoder ---------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_writer_frames_decode_back_in_order(suffix, tmp_path):
    out = tmp_path / f"square{suffix}"
    with VideoWriter(out, 64, 48, fps=10) as writer:
        for k in range(6):
            writer.write(moving_square(k))
    frames, times = decode(out)
    assert len(frames) == 6
    assert frames[0].shape == (48, 64, 3)
    assert times == pytest.approx([k / 10 for k in range(6)], abs=0.011)
    for k, frame in enumerate(frames):   # the square is where it was drawn, in its colour
        assert np.abs(frame[20, 4 * k + 8] - (220, 40, 40)).max() < 40
        assert np.abs(frame[40, 60] - 30).max() < 20
    assert not list(tmp_path.glob(".*.part"))


def test_writer_holds_a_frame_over_skipped_indices_and_makes_h264_sizes_even(tmp_path):
    out = tmp_path / "odd.mp4"
    assert encoded_size(out, 65, 49) == (64, 48)
    assert encoded_size(tmp_path / "odd.gif", 65, 49) == (65, 49)
    with VideoWriter(out, 65, 49, fps=10) as writer:
        for k, index in enumerate((0, 1, 5, 5, 6)):   # the second 5 is not after the last
            writer.write(moving_square(k, 65, 49), index)
    frames, times = decode(out)
    assert writer.frames == 4 and len(frames) == 4
    assert frames[0].shape == (48, 64, 3)
    assert times == pytest.approx([0.0, 0.1, 0.5, 0.6], abs=0.011)


def test_fit_frame_crops_and_pads_about_the_centre():
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    assert fit_frame(image, 6, 4) is image
    np.testing.assert_array_equal(fit_frame(image, 4, 2), image[1:3, 1:5])
    padded = fit_frame(image, 8, 6, fill=(9, 9, 9))
    np.testing.assert_array_equal(padded[1:5, 1:7], image)
    assert (padded[0] == 9).all() and (padded[:, 0] == 9).all()


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_an_interrupted_video_leaves_no_file(failure, tmp_path):
    out = tmp_path / "cut.mp4"
    with pytest.raises(failure):
        with VideoWriter(out, 64, 48, fps=10) as writer:
            writer.write(moving_square(0))
            raise failure()
    assert list(tmp_path.iterdir()) == []


def test_bad_names_and_empty_videos_are_one_line_errors(tmp_path):
    with pytest.raises(VideoError, match=r"\.mp4, \.mkv, \.mov, \.webm, \.gif"):
        VideoWriter(tmp_path / "film.avi", 64, 48)
    (tmp_path / "folder.mp4").mkdir()
    with pytest.raises(VideoError, match="it is a folder"):
        VideoWriter(tmp_path / "folder.mp4", 64, 48)
    with pytest.raises(VideoError, match="no frames"):
        VideoWriter(tmp_path / "empty.mp4", 64, 48).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.mp4"]


def test_without_pyav_the_error_names_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "av", None)   # import av raises ImportError
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)   # (main sets it)
    with pytest.raises(VideoError) as error:
        require_av()
    assert str(error.value) == MISSING_AV
    assert "pip install 'sharnir[video]'" in MISSING_AV and "\n" not in MISSING_AV
    from sharnir.app.cli import main

    capsys.readouterr()
    status = main(["run", "door", "--duration", "0.1", "--video", str(tmp_path / "x.mp4")])
    assert status == 2
    assert capsys.readouterr().err.splitlines() == [f"sharnir: error: {MISSING_AV}"]
    assert list(tmp_path.iterdir()) == []


def test_anchor_points_rotate_with_the_body():
    quat = np.array([[1.0, 0, 0, 0], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]])
    pos = np.array([[0.0, 0, 0], [1.0, 2.0, 3.0]])
    a = joint_anchor_points(pos, quat, [1], [[1.0, 0.0, 0.0]])   # turned 90 deg about z
    np.testing.assert_allclose(a, [[1.0, 3.0, 3.0]], atol=1e-12)


# ---- sharnir run --video and sharnir replay ------------------------------------------------------

@pytest.fixture(scope="module")
def door_videos(tmp_path_factory):
    """The door for 1 s at 10 fps, with and without a video, both recorded to NPZ; then the
    recording replayed to MP4 and, twice as fast, to GIF."""
    folder = tmp_path_factory.mktemp("video")
    video = ("--fps", "10", "--size", f"{SIZE[0]}x{SIZE[1]}")
    run = ("run", "door", "--duration", "1", "--json")
    results = {
        "plain": sharnir(*run, "--npz", "plain.npz", cwd=folder),
        "video": sharnir(*run, "--npz", "run.npz", "--video", "run.mp4", *video, cwd=folder),
    }
    results["replay"] = sharnir("replay", "run.npz", "--video", "replay.mp4", *video,
                                cwd=folder)
    results["gif"] = sharnir("replay", "run.npz", "--video", "replay.gif", *video,
                             "--speed", "2", cwd=folder)
    for name, result in results.items():
        assert result.returncode == 0, (name, result.stderr)
    return folder, results


def test_run_video_has_a_frame_per_tenth_of_a_second_and_shows_the_door_turn(door_videos):
    folder, results = door_videos
    frames, times = decode(folder / "run.mp4")
    assert len(frames) == 11   # t = 0, 0.1, ..., 1.0 s
    assert frames[0].shape == (SIZE[1], SIZE[0], 3)
    assert times == pytest.approx([k / 10 for k in range(11)], abs=0.011)
    change = [np.abs(b - a).mean() for a, b in zip(frames, frames[1:])]
    assert min(change[1:4]) > 0.8   # pushed, it turns fast between the early frames ...
    assert change[-1] < 0.2         # ... and has stopped (at 0.87 s) by the last two
    assert np.abs(frames[-1] - frames[0]).mean() > 2.0
    assert len(np.unique(frames[0].reshape(-1, 3) // 16, axis=0)) > 5   # not one colour
    assert "wrote run.mp4 (11 frames, 160x120, 10 fps)" in results["video"].stderr


def test_rendering_the_video_leaves_the_run_as_it_was(door_videos):
    folder, results = door_videos
    summaries = [json.loads(results[k].stdout.strip().splitlines()[-1]) for k in ("plain",
                                                                                  "video")]
    for summary in summaries:
        del summary["wall_s"], summary["steps_per_s"]
    assert summaries[0] == summaries[1]
    with np.load(folder / "plain.npz") as plain, np.load(folder / "run.npz") as run:
        assert plain.files == run.files
        for name in plain.files:
            np.testing.assert_array_equal(plain[name], run[name], err_msg=name)


def test_replay_renders_the_same_video_as_the_run(door_videos):
    folder, results = door_videos
    run, _ = decode(folder / "run.mp4")
    replay, _ = decode(folder / "replay.mp4")
    assert len(replay) == len(run)
    for a, b in zip(run, replay):
        assert np.abs(a - b).mean() < 1.0
    gif, times = decode(folder / "replay.gif")
    assert len(gif) == 6              # every 0.2 s of the run at --speed 2
    assert gif[0].shape == (SIZE[1], SIZE[0], 3)
    assert np.abs(gif[-1] - gif[0]).mean() > 2.0


def test_replay_of_an_npz_without_its_scene_asks_for_it(door_videos):
    folder, _ = door_videos
    with np.load(folder / "run.npz") as data:
        old = {k: data[k] for k in data.files if k != "run_info" and not k.startswith("initial")}
    np.savez(folder / "old.npz", **old)
    result = sharnir("replay", "old.npz", "--video", "old.mp4", "--fps", "5", "--size", "64x48",
                     cwd=folder)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "sharnir: error: old.npz does not name its scene (an NPZ of an older sharnir): give "
        "it with --scene SCENE"]
    assert not (folder / "old.mp4").exists()
    result = sharnir("replay", "old.npz", "--video", "old.mp4", "--fps", "5", "--size", "64x48",
                     "--scene", "door", cwd=folder)
    assert result.returncode == 0, result.stderr
    frames, _ = decode(folder / "old.mp4")
    assert len(frames) == 5 and frames[0].shape == (48, 64, 3)   # from the first kept step


def test_video_options_need_video(tmp_path):
    result = sharnir("run", "door", "--fps", "10", cwd=tmp_path)
    assert result.returncode == 2
    assert "--fps only applies with --video" in result.stderr
