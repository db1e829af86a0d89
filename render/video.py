"""Videos: RGB frames in, an MP4 (or GIF, MKV, MOV, WebM) file out, encoded in-process by PyAV.

`VideoWriter` takes one frame at a time, (height, width, 3) uint8 top row first, and streams
it to the encoder: no frame is kept once it is encoded.  The file is written under a
temporary name beside the target (``.NAME.xxxxxxxx.part``) and renamed to NAME only when the
encoder has finished: an error, an exception or Ctrl+C leaves nothing half-written.  Each
frame has an index in units of 1/fps (`write(image, index)`); an index that skips numbers
holds the previous frame on screen that long (the app records at the pace it draws).

MP4, MKV and MOV are H.264 (libx264; FFmpeg's MPEG-4 part 2 where a build lacks it), 4:2:0,
so their width and height are made even (the last column or row is dropped).  WebM is VP9.
A GIF gets a palette of its own for each frame (FFmpeg's palettegen / paletteuse filters),
its delays in hundredths of a second.

`BackgroundWriter` runs a `VideoWriter` on a thread of its own behind a short queue: the
app's window hands it the pixels it read and goes on; a frame that finds the queue full is
dropped (and counted), never waited for.  `FrameDrawer` renders body poses headless (EGL)
with a fixed camera, for ``sharnir run --video`` and ``sharnir replay``.

PyAV is an optional dependency (the ``video`` extra); without it, `require_av` raises
`VideoError` with the one line that says how to install it.
"""
import contextlib
import os
import queue
import secrets
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..physics.transforms import quat_matrices
from .context import RenderError

MISSING_AV = "writing video needs PyAV: pip install 'sharnir[video]'"
DEFAULT_FPS = 30
MAX_FPS = 240
# suffix -> (FFmpeg container, encoders to try in order, pixel format); GIF is special-cased
FORMATS = {
    ".mp4": ("mp4", ("libx264", "mpeg4"), "yuv420p"),
    ".mkv": ("matroska", ("libx264", "mpeg4"), "yuv420p"),
    ".mov": ("mov", ("libx264", "mpeg4"), "yuv420p"),
    ".webm": ("webm", ("libvpx-vp9", "libvpx"), "yuv420p"),
    ".gif": ("gif", ("gif",), "pal8"),
}
# x264 presets: "quality" for files rendered headless, "fast" for the app, whose encoder
# shares the CPU with the physics thread and the window
PRESETS = {"quality": {"preset": "medium", "crf": "18"},
           "fast": {"preset": "veryfast", "crf": "23"}}


class VideoError(RenderError):
    """A video cannot be written: PyAV missing, an unknown format, an encoder or file error."""


def require_av():
    """The `av` module, or VideoError(MISSING_AV) when PyAV is not installed."""
    try:
        import av
    except ImportError:
        raise VideoError(MISSING_AV) from None
    return av


def video_format(path):
    """The FORMATS entry of `path`'s suffix; VideoError naming the known suffixes."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(FORMATS)
        raise VideoError(f"cannot write {path}: a video file must end in one of {known}")
    return FORMATS[suffix]


def encoded_size(path, width, height):
    """The (width, height) a video of frames width x height is written at: even for the
    4:2:0 formats (their last column or row dropped), as asked for a GIF."""
    _, _, pix_fmt = video_format(path)
    if pix_fmt == "yuv420p":
        width, height = width - width % 2, height - height % 2
    if width < 2 or height < 2:
        raise VideoError(f"cannot write {path}: {width} x {height} pixels is too small a video")
    return width, height


def fit_frame(image, width, height, fill=(0, 0, 0)):
    """`image` (h, w, 3) made exactly width x height: cropped about its centre where it is
    larger, padded with `fill` around it where it is smaller (a window resized while it
    records)."""
    h, w = image.shape[:2]
    if (w, h) == (width, height):
        return image
    top, left = max((h - height) // 2, 0), max((w - width) // 2, 0)
    image = image[top:top + height, left:left + width]
    h, w = image.shape[:2]
    if (w, h) == (width, height):
        return image
    out = np.empty((height, width, 3), np.uint8)
    out[...] = np.asarray(fill, np.uint8)
    y, x = (height - h) // 2, (width - w) // 2
    out[y:y + h, x:x + w] = image
    return out


def image_from_gl(raw, width, height):
    """RGB bytes as OpenGL reads them (rows bottom-up, no padding) as (height, width, 3),
    top row first."""
    return np.frombuffer(raw, np.uint8).reshape(height, width, 3)[::-1]


def _temporary(target):
    return target.parent / f".{target.name}.{secrets.token_hex(4)}.part"


class VideoWriter:
    """One video file: `write` frames, then `close` (or use it as a context manager, which
    closes on success and `abort`s on any exception, KeyboardInterrupt included).

    `width` x `height` is the size of the frames given (see `encoded_size` for the file's);
    a frame of another size is cropped or padded to it (`fit_frame`).  `fps` frames a
    second; `preset` one of PRESETS (H.264 only)."""

    def __init__(self, path, width, height, fps=DEFAULT_FPS, preset="quality", threads=0,
                 fill=(0, 0, 0)):
        av = require_av()
        container, codecs, pix_fmt = video_format(path)
        if not (0 < fps <= MAX_FPS) or int(fps) != fps:
            raise VideoError(f"the frame rate must be a whole number from 1 to {MAX_FPS} "
                             f"(got {fps:g})")
        self.path = Path(path)
        if self.path.is_dir():
            raise VideoError(f"cannot write {path}: it is a folder")
        self.width, self.height = encoded_size(path, width, height)
        self.fps = int(fps)
        self.fill = fill
        self.frames = 0          # frames written
        self.last_index = -1     # the index of the last frame written
        self._graph = None
        self._temp = _temporary(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = av.open(str(self._temp), "w", format=container)
        except (FileExistsError, NotADirectoryError):
            raise VideoError(f"cannot write {path}: part of its folder path is a file") from None
        except OSError as exc:
            raise VideoError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            self._stream = self._add_stream(av, codecs, pix_fmt, preset, threads)
            if pix_fmt == "pal8":
                self._graph = self._palette_graph(av)
        except BaseException:
            self._discard()
            raise

    def _add_stream(self, av, codecs, pix_fmt, preset, threads):
        for name in codecs:
            try:
                av.codec.Codec(name, "w")
            except Exception:  # noqa: BLE001  (not in this FFmpeg build: the next one)
                continue
            stream = self._out.add_stream(name, rate=self.fps)
            stream.width, stream.height, stream.pix_fmt = self.width, self.height, pix_fmt
            stream.codec_context.time_base = Fraction(1, self.fps)
            if name == "libx264":
                stream.options = dict(PRESETS[preset])
            elif name.startswith("libvpx"):
                stream.options = {"crf": "32", "b": "0", "deadline": "realtime",
                                  "cpu-used": "8"}
            elif name == "mpeg4":
                stream.codec_context.qscale = 3
                stream.codec_context.flags |= "QSCALE"
            if threads:
                stream.codec_context.thread_count = int(threads)
            return stream
        raise VideoError(f"cannot write {self.path}: this PyAV's FFmpeg has none of the "
                         f"encoders {', '.join(codecs)}")

    def _palette_graph(self, av):
        """rgb24 -> a palette of this frame's own colours -> pal8 (FFmpeg's filters)."""
        graph = av.filter.Graph()
        source = graph.add_buffer(width=self.width, height=self.height, format="rgb24",
                                  time_base=Fraction(1, self.fps))
        split = graph.add("split")
        palette = graph.add("palettegen", "stats_mode=single:max_colors=256")
        use = graph.add("paletteuse", "new=1")
        sink = graph.add("buffersink")
        source.link_to(split)
        split.link_to(use, 0, 0)
        split.link_to(palette, 1, 0)
        palette.link_to(use, 0, 1)
        use.link_to(sink)
        graph.configure()
        return graph

    def write(self, image, index=None):
        """Encode one frame (h, w, 3) uint8, top row first, shown from frame `index` (in
        units of 1/fps; default: the one after the last).  A frame whose index is not after
        the last one's is skipped; returns whether it was written."""
        index = self.last_index + 1 if index is None else int(index)
        if index <= self.last_index:
            return False
        av = require_av()
        image = np.ascontiguousarray(fit_frame(np.asarray(image, np.uint8), self.width,
                                               self.height, self.fill))
        frame = av.VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts, frame.time_base = index, Fraction(1, self.fps)
        try:
            if self._graph is None:
                self._encode(frame)
            else:
                self._graph.push(frame)
                self._drain_graph(av, index)
        except av.error.FFmpegError as exc:
            raise VideoError(f"cannot write {self.path}: the encoder failed ({exc})") from None
        except OSError as exc:
            raise VideoError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.last_index = index
        self.frames += 1
        return True

    def _encode(self, frame):
        for packet in self._stream.encode(frame):
            self._out.mux(packet)

    def _drain_graph(self, av, index=None):
        while True:
            try:
                out = self._graph.pull()
            except (av.error.BlockingIOError, av.error.EOFError):
                return
            if index is not None:
                out.pts, out.time_base = index, Fraction(1, self.fps)
            self._encode(out)

    def close(self):
        """Flush the encoder, finish the file and give it its name; returns its path.
        A video without a single frame is an error (and no file)."""
        if self._out is None:
            return self.path
        av = require_av()
        if self.frames == 0:
            self.abort()
            raise VideoError(f"cannot write {self.path}: no frames to write")
        try:
            if self._graph is not None:
                self._graph.push(None)
                self._drain_graph(av)
            self._encode(None)
            self._out.close()
            self._out = None
            os.replace(self._temp, self.path)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, av.error.FFmpegError):
                raise VideoError(f"cannot write {self.path}: the encoder failed ({exc})") from None
            if isinstance(exc, OSError):
                raise VideoError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            raise
        return self.path

    def abort(self):
        """Stop without a file: the temporary one is removed."""
        self._discard()

    def _discard(self):
        out, self._out = getattr(self, "_out", None), None
        if out is not None:
            with contextlib.suppress(Exception):
                out.close()
        with contextlib.suppress(OSError):
            self._temp.unlink()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        else:
            self.abort()
        return False


class BackgroundWriter:
    """A VideoWriter on a thread of its own: `offer` hands a frame over without waiting
    (False when the queue is full and the frame is dropped), `stop` asks the thread to
    finish the file and returns at once; `done` tells when it has, then `result` is the
    file's path or `error` the VideoError's text.  The frames' conversion (OpenGL's
    bottom-up rows, a size that changed) happens on the thread too."""

    QUEUE_FRAMES = 8

    def __init__(self, path, width, height, fps=DEFAULT_FPS, fill=(0, 0, 0)):
        # opened here, so that a bad path or a missing PyAV is told at once
        self.writer = VideoWriter(path, width, height, fps=fps, preset="fast", threads=1,
                                  fill=fill)
        self.path = self.writer.path
        self.size = (self.writer.width, self.writer.height)
        self.fps = self.writer.fps
        self.dropped = 0
        self.result = self.error = None
        self._queue = queue.Queue(maxsize=self.QUEUE_FRAMES)
        self._stopping = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._work, name="sharnir-video", daemon=True)
        self._thread.start()

    @property
    def frames(self):
        return self.writer.frames

    @property
    def done(self):
        return self._done.is_set()

    def offer(self, raw, width, height, index, bottom_up=True):
        """Queue RGB bytes of a width x height picture shown from frame `index`; False (and
        counted in `dropped`) when the writer is behind or stopping."""
        if self._stopping:
            return False
        try:
            self._queue.put_nowait((raw, width, height, index, bottom_up))
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def stop(self):
        """Finish the file after the frames already queued; returns at once."""
        if not self._stopping:
            self._stopping = True
            self._queue.put(None)   # (the thread empties the queue: never blocks for long)

    def wait(self, timeout=None):
        """Wait for the thread to finish (after `stop`); whether it has."""
        return self._done.wait(timeout)

    def _work(self):
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    break
                raw, width, height, index, bottom_up = item
                image = (image_from_gl(raw, width, height) if bottom_up else
                         np.frombuffer(raw, np.uint8).reshape(height, width, 3))
                self.writer.write(image, index)
            self.result = self.writer.close()
        except VideoError as exc:
            self.writer.abort()
            self.error = str(exc)
        except BaseException as exc:  # noqa: BLE001  (reported by the app, never a traceback)
            self.writer.abort()
            self.error = f"cannot write {self.path}: {type(exc).__name__}: {exc}"
        finally:
            self._done.set()


def joint_anchor_points(body_pos, body_quat, joint_body_b, local_anchor_b):
    """The joints' anchors on body B (njoint, 3), world frame: x_B + R(q_B) a_B."""
    b = np.asarray(joint_body_b, dtype=int)
    if not len(b):
        return np.zeros((0, 3))
    a = np.asarray(local_anchor_b, dtype=float)
    R = quat_matrices(np.asarray(body_quat, dtype=float)[b], normalise=False)
    return np.asarray(body_pos, dtype=float)[b] + np.einsum("nij,nj->ni", R, a)


class FrameDrawer:
    """Draws body poses headless (an EGL context of its own) with one fixed camera, as
    `render.picture.draw_picture` does: bodies with their shadows, the joints' anchors
    (blue: friction holds, orange: sliding).  `frame(bounds)` aims the camera once; `draw`
    returns the picture as (height, width, 3) uint8, top row first.  Close it (or use
    `with`)."""

    def __init__(self, width, height, body_shapes, body_visuals=None):
        from .camera import OrbitCamera
        from .context import OffscreenTarget, headless_context
        from .renderer import Renderer

        if width < 1 or height < 1:
            raise RenderError(f"the picture size must be positive (got {width} x {height})")
        self.size = (width, height)
        self.body_shapes, self.body_visuals = body_shapes, body_visuals
        self.window, self.ctx = headless_context(width, height)
        self.renderer = self.target = None
        try:
            self.renderer = Renderer(self.ctx)
            self.target = OffscreenTarget(self.ctx, width, height)
        except BaseException:
            self.close()
            raise
        self.camera = OrbitCamera()

    def frame(self, bounds):
        """Aim the camera at bounds ((3,) lo, (3,) hi) and fit the ground grid to them."""
        width, height = self.size
        self.camera.frame(bounds, aspect=width / height)
        self.renderer.fit_grid(bounds)

    def bounds(self, body_pos, body_quat, anchors=()):
        return self.renderer.bounds(body_pos, body_quat, self.body_shapes, anchors)

    def draw(self, body_pos, body_quat, anchors=None, sliding=None):
        width, height = self.size
        self.target.use()
        self.ctx.viewport = (0, 0, width, height)
        has_joints = anchors is not None and len(anchors)
        self.renderer.draw(self.camera, width / height, body_pos, body_quat, self.body_shapes,
                           joint_anchors=anchors if has_joints else None,
                           joint_sliding=sliding if has_joints else None,
                           body_visuals=self.body_visuals)
        return image_from_gl(self.target.read_rgb(), width, height)

    def close(self):
        for obj in (self.target, self.renderer):
            if obj is not None:
                with contextlib.suppress(Exception):
                    obj.release()
        self.target = self.renderer = None
        if self.ctx is not None:
            with contextlib.suppress(Exception):
                self.ctx.release()
            self.window.close()
            self.ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
