"""F9: the app's 3D view recorded to a video file while the simulation runs.

`ViewRecording` reads the view (the part of the frame right of the panel, before the panel
is drawn over it, so the video has no panel and no REC mark) at most `fps` times a second
of wall-clock time and hands the pixels to a `render.video.BackgroundWriter`, whose thread
converts and encodes them.  The window's thread only waits for the GL to finish the frame
(with the GIL released, as every frame does: `window._finish_without_gil`) and copies the
pixels; the physics thread never waits for either.  A frame that finds the writer behind is
dropped and counted.  The video's size is fixed when it starts (the view's, made even); a
view resized later is cropped or padded to it.  Frames carry their wall-clock time, so a
window that draws fewer than `fps` frames a second makes a video that still plays in real
time (a frame is held until the next).
"""
import time
from datetime import datetime
from pathlib import Path

from ..render.renderer import BACKGROUND

REC_COLOUR = (0.9, 0.1, 0.1, 1.0)   # the REC mark's dot and text
VIDEO_SUFFIX = ".mp4"


def recording_path(folder):
    """A new video file's path in `folder`, named by the time (as the F12 screenshots)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(folder) / f"sharnir-{stamp}{VIDEO_SUFFIX}"
    k = 2
    while path.exists():   # two recordings within a second
        path = Path(folder) / f"sharnir-{stamp}-{k}{VIDEO_SUFFIX}"
        k += 1
    return path


class ViewRecording:
    """One recording: `capture` after the 3D view is drawn each frame, `stop` to finish.
    Raises render.video.VideoError (PyAV missing, a bad path) when it cannot start."""

    def __init__(self, path, width, height, fps=30):
        from ..render.video import BackgroundWriter

        fill = tuple(round(255 * c) for c in BACKGROUND)
        self.writer = BackgroundWriter(path, width, height, fps=fps, fill=fill)
        self.path = self.writer.path
        self.fps = self.writer.fps
        self.started = time.perf_counter()
        self.last_index = -1
        self.stopped = False

    @property
    def seconds(self):
        return time.perf_counter() - self.started

    def due(self, now=None):
        """Whether this frame falls in a new 1/fps slot of wall-clock time."""
        now = time.perf_counter() if now is None else now
        return int((now - self.started) * self.fps) > self.last_index

    def capture(self, ctx, target, left, finish=None):
        """Read the view from the offscreen `target` (its columns from `left` px on) and
        queue it, when a frame is due.  `finish(ctx)` waits for the GL first (the window's
        `_finish_without_gil`)."""
        if self.stopped:
            return False
        now = time.perf_counter()
        if not self.due(now):
            return False
        width, height = target.size
        left = min(max(int(left), 0), max(width - 2, 0))
        if finish is not None:
            finish(ctx)
        raw = target.resolve().read(viewport=(left, 0, width - left, height), components=3,
                                    alignment=1)
        self.last_index = int((now - self.started) * self.fps)
        return self.writer.offer(raw, width - left, height, self.last_index)

    def stop(self):
        """Stop taking frames; the writer finishes the file on its thread (`done`)."""
        self.stopped = True
        self.writer.stop()

    @property
    def done(self):
        return self.writer.done

    def wait(self, timeout=None):
        return self.writer.wait(timeout)

    def summary(self):
        """The one-line note once the file is finished (or failed)."""
        w = self.writer
        if w.error:
            return f"video not saved: {w.error}"
        dropped = f", {w.dropped} dropped" if w.dropped else ""
        return (f"video saved: {w.result} ({w.frames} frames, {self.last_index / self.fps:.1f} s"
                f"{dropped})")


def draw_rec_mark(left, seconds):
    """The red REC mark at the bottom right of the view (over the frame, after the panel:
    never in the video)."""
    from imgui_bundle import imgui

    io = imgui.get_io()
    text = f"REC {int(seconds) // 60}:{int(seconds) % 60:02d}"
    size = imgui.calc_text_size(text)
    radius = size.y * 0.45
    right = io.display_size.x - 12.0
    top = io.display_size.y - size.y - 12.0   # (the notes are at the view's top left)
    x = max(right - size.x - 2.6 * radius, left + 8.0)
    draw = imgui.get_foreground_draw_list()
    colour = imgui.get_color_u32(imgui.ImVec4(*REC_COLOUR))
    backdrop = imgui.get_color_u32(imgui.ImVec4(0.0, 0.0, 0.0, 0.55))
    draw.add_rect_filled(imgui.ImVec2(x - 6.0, top - 4.0),
                         imgui.ImVec2(right + 6.0, top + size.y + 4.0), backdrop, 4.0)
    if int(seconds * 2) % 2 == 0:   # the dot blinks once a second
        draw.add_circle_filled(imgui.ImVec2(x + radius, top + size.y / 2), radius, colour)
    draw.add_text(imgui.ImVec2(x + 2.6 * radius, top), colour, text)
