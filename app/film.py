"""``sharnir run SCENE --video OUT.mp4`` and ``sharnir replay RUN.npz --video OUT.mp4``.

A video shows the run at `speed` simulated seconds per second of video, `fps` frames a
second: frame k shows the state after s_k = round(k speed / (fps dt)) steps of the run
(k = 0 is the state it started from), for every k with k speed / fps within the run's
duration.  `RunFilm` keeps the poses at those steps while `World.run` steps (its progress
calls, in chunks that land on every s_k), so the run is the same call as without a video
and its numbers the same; `render_video` then draws them headless (render.video.FrameDrawer)
and streams each picture to the encoder (render.video.VideoWriter).  Only the poses are
kept, never the pictures.  The camera is fixed for the whole video, framed on everything
any frame shows.

A replay reads the poses from an NPZ that ``sharnir run --npz`` wrote and the bodies' shapes
from the scene the NPZ names (its ``run_info``: the scene file, the ``--set`` overrides, the
asset folders and the robot options), so the same run gives the same video either way.  An
NPZ written before ``run_info`` existed needs ``--scene``.
"""
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_SIZE = (640, 480)
SPEED_RANGE = (1.0 / 64.0, 64.0)   # simulated seconds per second of video


@dataclass
class Drawing:
    """What stays the same in every frame: the bodies' shapes and visuals, and where each
    joint's anchor is on its body B (joint_body_b (njoint,), local_anchor_b (njoint, 3))."""
    body_shapes: list
    body_visuals: list
    joint_body_b: np.ndarray
    local_anchor_b: np.ndarray


def world_drawing(world):
    """The Drawing of `world` (its anchors read at its current pose)."""
    from ..physics.transforms import quat_matrix

    b = np.array([pair[1] for pair in world.joint_bodies], dtype=int)
    anchors, _ = world.joint_frames_world()
    local = np.zeros((len(b), 3))
    pos, quat = world.body_pos, world.body_quat
    for j, i in enumerate(b):
        local[j] = quat_matrix(quat[i]).T @ (anchors[j] - pos[i])
    return Drawing(list(world.body_shapes), list(world.body_visuals), b, local)


def frame_steps(steps, dt, fps, speed):
    """The step counts s_k after which the frames are drawn (0: the state at the start)."""
    span = steps * dt
    count = math.floor(span * fps / speed + 1e-9) + 1
    return [min(round(k * speed / (fps * dt)), steps) for k in range(count)]


class RunFilm:
    """Keeps the poses of a World at the steps the frames show; pass `chunk` and `progress`
    to World.run (`progress` also calls `report(done, total)` about PROGRESS_CALLS times)."""

    PROGRESS_CALLS = 50

    def __init__(self, world, steps, fps, speed, report=None):
        self.world, self.steps, self.report = world, steps, report
        self.wanted = frame_steps(steps, world.dt, fps, speed)
        gaps = [b - a for a, b in zip(self.wanted, self.wanted[1:]) if b > a]
        self.chunk = math.gcd(*gaps) if gaps else steps
        self.frames = []   # (body_pos, body_quat, joint_sliding) per frame
        self._next = 0
        self._reported = 0
        self._capture(0)

    def _capture(self, done):
        while self._next < len(self.wanted) and self.wanted[self._next] <= done:
            w = self.world
            self.frames.append((np.array(w.body_pos), np.array(w.body_quat),
                                np.array(w.joint_sliding, dtype=bool)))
            self._next += 1

    def progress(self, done, total):
        self._capture(done)
        if self.report is not None:
            reached = self.PROGRESS_CALLS * done // total
            if reached > self._reported or done == total:
                self._reported = reached
                self.report(done, total)


class FilmOutput:
    """A video file to come: opened before the run, so that a missing PyAV, a file name
    without a video suffix or a machine without EGL fails at once, not after simulating.
    `write` draws the frames and encodes them; close it (or use `with`)."""

    def __init__(self, path, drawing, size=DEFAULT_SIZE, fps=30):
        from ..render.video import FrameDrawer, encoded_size, require_av

        require_av()
        encoded_size(path, *size)   # (the suffix and the size)
        if Path(path).is_dir():
            from ..render.video import VideoError

            raise VideoError(f"cannot write {path}: it is a folder")
        self.path, self.drawing, self.size, self.fps = path, drawing, size, fps
        self.drawer = FrameDrawer(*size, drawing.body_shapes, drawing.body_visuals)

    def write(self, frames, progress=None):
        """Draw `frames` ((body_pos, body_quat, joint_sliding) each) and encode them into
        the file (written whole or not at all); returns the (width, height) it has."""
        from ..render.video import VideoWriter, joint_anchor_points

        drawing, drawer = self.drawing, self.drawer
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        anchors = []
        for pos, quat, _ in frames:
            a = joint_anchor_points(pos, quat, drawing.joint_body_b, drawing.local_anchor_b)
            anchors.append(a)
            f_lo, f_hi = drawer.bounds(pos, quat, a)
            if np.all(np.isfinite(f_lo)) and np.all(np.isfinite(f_hi)):
                lo, hi = np.minimum(lo, f_lo), np.maximum(hi, f_hi)
        if np.all(np.isfinite(lo)):
            drawer.frame((lo, hi))
        with VideoWriter(self.path, *self.size, fps=self.fps) as writer:
            for k, ((pos, quat, sliding), a) in enumerate(zip(frames, anchors)):
                writer.write(drawer.draw(pos, quat, a, sliding))
                if progress is not None:
                    progress(k + 1, len(frames))
        return writer.width, writer.height

    def close(self):
        self.drawer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---- replay -------------------------------------------------------------------------------------

class ReplayError(Exception):
    """The NPZ cannot be replayed (the CLI reports it as one error line)."""


def run_info(args, world):
    """What a replay needs to know about a run, as the NPZ's `run_info` (a JSON text)."""
    robot = {"fixed_base": None if args.base is None else args.base == "fixed",
             "height": args.height, "decompose": True if args.decompose else None}
    return json.dumps({
        "scene": str(Path(args.scene).resolve()),
        "sets": list(args.sets),
        "asset_roots": [str(Path(r).resolve()) for r in args.asset_roots],
        "robot": robot,
        "dt": world.dt,
        "every": args.every,
    })


def initial_arrays(world):
    """The NPZ's arrays of the state the run started from (bodies without the world body)."""
    return {"initial_t": np.float64(world.time),
            "initial_body_pos": np.array(world.body_pos[1:]),
            "initial_body_quat": np.array(world.body_quat[1:]),
            "initial_joint_sliding": np.array(world.joint_sliding, dtype=bool)}


def replay_frames(data, dt, fps, speed):
    """The (body_pos, body_quat, sliding) of each frame from an NPZ's arrays (`data`, a
    mapping), the world body put back at the origin; frame k is the recorded row nearest to
    the start time + s_k dt (frame_steps)."""
    t = np.asarray(data["t"], dtype=float)
    pos, quat = np.asarray(data["body_pos"]), np.asarray(data["body_quat"])
    sliding = np.asarray(data["joint_sliding"], dtype=bool)
    if "initial_body_pos" in data:
        t = np.concatenate([[float(data["initial_t"])], t])
        pos = np.concatenate([np.asarray(data["initial_body_pos"])[None], pos])
        quat = np.concatenate([np.asarray(data["initial_body_quat"])[None], quat])
        sliding = np.concatenate([np.asarray(data["initial_joint_sliding"], bool)[None],
                                  sliding])
    if not len(t):
        raise ReplayError("the recording has no steps")
    if pos.shape[0] != len(t) or quat.shape[0] != len(t):
        raise ReplayError("the recording has no body poses (body_pos, body_quat) for its steps")
    start = t[0]
    steps = round((t[-1] - start) / dt)
    rows = []
    for s in frame_steps(steps, dt, fps, speed):
        when = start + s * dt
        k = int(np.searchsorted(t, when))
        if k == len(t) or (k > 0 and when - t[k - 1] <= t[k] - when):
            k -= 1
        rows.append(k)
    nbody = pos.shape[1] + 1
    world_pos, world_quat = np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0, 0.0]])
    frames = []
    for k in rows:
        frames.append((np.concatenate([world_pos, pos[k]]).reshape(nbody, 3),
                       np.concatenate([world_quat, quat[k]]).reshape(nbody, 4),
                       sliding[k]))
    return frames


def read_recording(path):
    """The NPZ's arrays as a dict; ReplayError when it is not one sharnir run --npz wrote."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise ReplayError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path}: not an NPZ recording ({exc})") from None
    missing = [n for n in ("t", "body_names", "body_pos", "body_quat", "joint_sliding")
               if n not in arrays]
    if missing:
        raise ReplayError(f"{path}: not a recording of 'sharnir run --npz' (no "
                          f"{', '.join(missing)})")
    return arrays


def recording_info(arrays):
    """The NPZ's run_info as a dict ({} for an NPZ written before it existed)."""
    if "run_info" not in arrays:
        return {}
    try:
        return json.loads(str(arrays["run_info"]))
    except ValueError:
        return {}


def recording_dt(arrays, info):
    """The run's time step: run_info's, else guessed from the recorded times."""
    if info.get("dt"):
        return float(info["dt"])
    t = np.asarray(arrays["t"], dtype=float)
    if len(t) > 1:
        return float(np.min(np.diff(t)))
    return float(t[0]) if len(t) and t[0] > 0 else 1.0 / 60.0


def replay_video(npz, out, scene=None, asset_roots=(), fps=30, size=DEFAULT_SIZE, speed=1.0,
                 progress=None):
    """Render the recording `npz` (sharnir run --npz) into the video `out`; the bodies'
    shapes come from `scene` or, without it, from the scene the NPZ names.  Returns
    (frames, (width, height))."""
    from ..scenes import build_world, read_scene, resolve_scene

    arrays = read_recording(npz)
    info = recording_info(arrays)
    if scene is None:
        scene = info.get("scene")
        if scene is None:
            raise ReplayError(f"{npz} does not name its scene (an NPZ of an older sharnir): "
                              "give it with --scene SCENE")
        if not Path(scene).exists():
            raise ReplayError(f"{npz} was recorded from {scene}, which is not there now: "
                              "give the scene with --scene SCENE")
    else:
        scene = resolve_scene(scene)
    roots = [*info.get("asset_roots", []), *asset_roots]
    spec = read_scene(scene, info.get("sets", []), roots, False, info.get("robot"))
    world = build_world(spec, source=scene)
    names = [str(n) for n in arrays["body_names"]]
    if names != list(world.body_names[1:]):
        raise ReplayError(f"{npz}: the bodies of {scene} are not the recording's (the scene "
                          f"has {len(world.body_names) - 1}, the recording {len(names)}: "
                          f"{', '.join(names[:5])}{', ...' if len(names) > 5 else ''})")
    if np.asarray(arrays["joint_sliding"]).shape[1:] != (len(world.joint_names),):
        raise ReplayError(f"{npz}: the joints of {scene} are not the recording's")
    drawing = world_drawing(world)
    frames = replay_frames(arrays, recording_dt(arrays, info), fps, speed)
    with FilmOutput(out, drawing, size, fps) as film:
        return len(frames), film.write(frames, progress)
