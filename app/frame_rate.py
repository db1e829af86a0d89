"""The window's frame rate for the panel: frames per second, the time between frames and
the time one takes to draw, averaged over the last half second."""
from collections import deque

WINDOW_S = 0.5


class FrameRate:
    def __init__(self, window_s=WINDOW_S):
        self.window_s = float(window_s)
        self._frames = deque()   # (end time s, seconds spent drawing)

    def add(self, start, end):
        """A frame drawn from `start` to `end` (time.perf_counter() seconds)."""
        frames = self._frames
        frames.append((end, end - start))
        while len(frames) > 2 and frames[0][0] < end - self.window_s:
            frames.popleft()

    @property
    def fps(self):
        """Frames per second over the window (0 before two frames)."""
        frames = self._frames
        if len(frames) < 2 or frames[-1][0] <= frames[0][0]:
            return 0.0
        return (len(frames) - 1) / (frames[-1][0] - frames[0][0])

    @property
    def frame_ms(self):
        """Milliseconds from one frame to the next (0 before two frames)."""
        fps = self.fps
        return 1e3 / fps if fps > 0.0 else 0.0

    @property
    def draw_ms(self):
        """Milliseconds spent drawing a frame, on average."""
        frames = self._frames
        return 1e3 * sum(d for _, d in frames) / len(frames) if frames else 0.0
