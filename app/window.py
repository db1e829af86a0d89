"""The desktop app: a pyglet window drawing the physics thread's latest snapshot, with an
orbit camera, keyboard shortcuts (`app.keys`), the ImGui control panel (`app.panel`) and
dragging bodies with the mouse (`app.drag`).

Rendering never waits for the physics: each frame reads `PhysicsThread.snapshot` and
draws it.  Every frame goes into an offscreen framebuffer that is then copied to the
window, so a screenshot (F12) is exactly what is on screen, panel included.
`run_frames(n)` draws n frames without pyglet's event loop (tests, headless use); `run()`
is the interactive loop.  Under ``PYGLET_HEADLESS=1`` the window is an EGL pbuffer.
Opened without a size, the window takes the size it closed at last time (app.recent's
window.json, clamped by `opening_size`) and stores its size when it closes.
"""
import math
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path

import moderngl
import numpy as np

from ..physics.warmup import ProgressPrinter
from ..render.camera import OrbitCamera
from ..render.context import GL_VERSION, OffscreenTarget, gl_config
from ..render.picture import write_png
from ..render.renderer import SHAPE_VIEWS, VISUALS, Renderer
from .commands import ClearDrag, MoveBody, Reset, Step
from .drag import Drag, SpringDrawing, cursor_ray, pick
from .frame_rate import FrameRate
from .framing import frame_bounds, view_part
from .physics_thread import PhysicsThread
from .plot_buffer import PlotBuffer

ORBIT_RAD_PER_PX = 0.008
PITCH_LIMIT = math.radians(89.0)
ZOOM_PER_NOTCH = 0.9
FRAME_INTERVAL_S = 1.0 / 60.0
COMPILING_FRAME_S = 0.25  # while the kernels compile, the scene and panel redraw this often
PANEL_WIDTH = 480  # px, the panel's width when the window opens
WINDOW_SIZE = (1280, 800)  # px, the window's first size (later: the size it closed at)
WINDOW_MIN = (640, 400)    # px, the smallest size it reopens at
DOUBLE_CLICK_S = 0.35     # s: two left presses this close select the body under the cursor
DOUBLE_CLICK_PX = 6       # px: ... and this near each other
SPEED_ASKED_S = 0.5  # s: + or - this soon after the last one steps on from the speed it asked


def _marked(centres, point):
    """The centres to draw with one more point (the selected body's centre of mass)."""
    point = np.asarray(point, dtype=float).reshape(1, 3)
    return point if centres is None else np.concatenate([np.asarray(centres, float), point])


def _latest_sliding(snap):
    """Each joint's sliding flag at the latest step in the snapshot's history, None if the
    history has no step of the joints on show (a grasp or release changed them since: the
    history keeps the steps before it)."""
    joints = len(snap.joint_names)
    for chunk in reversed(snap.history):
        if len(chunk):
            flags = chunk.joint[-1, :, 3]
            return flags if len(flags) == joints else None
    return None


_SHAPED = [None, None]  # (body_shapes, its mask), worked out once per world


def _dynamic_centres(snap):
    """Centres of mass of the bodies with a shape (body 0, the world, has none)."""
    if _SHAPED[0] is not snap.body_shapes:
        _SHAPED[:] = snap.body_shapes, np.array([s is not None for s in snap.body_shapes], bool)
    return np.asarray(snap.body_pos).reshape(-1, 3)[_SHAPED[1]]


def _force_scale(snap):
    """Metres of line per newton of contact force: the weight of a body of the median size
    (mass estimated at water density) is drawn as long as that body is big, so forces read
    on any scale.  Depends only on the world: computed once per world (App._scene_changed)."""
    g = float(np.linalg.norm(snap.settings.get("gravity", (0.0, 0.0, -9.81)))) or 9.81
    sizes = [max(shape.size) for shape in snap.body_shapes
             if shape is not None and max(shape.size) > 0.0]
    if not sizes:
        return 0.0
    size = float(np.median(sizes))
    # size / (1000 (2 size)^3 g), in an order that cannot overflow for a huge body
    scale = 1.0 / (8000.0 * g * size) / size
    return scale if math.isfinite(scale) else 0.0  # (a tiny body: no force lines)


def _finish_without_gil(ctx):
    """Wait for the GL to finish this frame's drawing with the GIL released.

    moderngl's calls hold the GIL, and a software GL (Mesa llvmpipe) rasterises a frame
    inside whichever call first needs the pixels (here the copy to the window): tens of
    milliseconds in which the physics thread, which needs the GIL between its nogil kernel
    calls, cannot run.  pyglet's GL functions go through ctypes, which releases the GIL, so
    its glFinish does that work while the physics thread steps.  Measured on llvmpipe (2 cores,
    chain scene, unpaced): 837 steps/s beside the renderer without this, 5,062 with it.
    """
    from pyglet import gl

    _ = ctx.error  # pyglet checks glGetError after its calls: clear what moderngl's left
    gl.glFinish()


def _present(ctx, target):
    """Copy the frame from the offscreen target to the window's back buffer.

    Through pyglet's GL, not moderngl: moderngl's `ctx.screen` sets the default framebuffer's
    draw buffer to GL_COLOR_ATTACHMENT0, which a window's framebuffer does not have, so its
    copy was GL_INVALID_OPERATION and the window stayed black (under X; the EGL tests read
    the target, never the window).  The target is resolved first: a multisampled blit needs
    the same format on both sides, and the window's is not RGBA8."""
    from pyglet import gl

    src = target.resolve()
    w, h = target.size
    _ = ctx.error  # (pyglet checks glGetError after its calls)
    gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, src.glo)
    gl.glReadBuffer(gl.GL_COLOR_ATTACHMENT0)
    gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, 0)
    gl.glDrawBuffer(gl.GL_BACK)
    gl.glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, gl.GL_COLOR_BUFFER_BIT, gl.GL_NEAREST)
    src.use()   # moderngl binds what it believes is bound (a later read would fail on 0)


def opening_size(stored, screen=None):
    """The size the window opens at: the `stored` one (or WINDOW_SIZE when None), at least
    WINDOW_MIN and at most the `screen`'s size (width, height) when known."""
    width, height = stored or WINDOW_SIZE
    width, height = max(int(width), WINDOW_MIN[0]), max(int(height), WINDOW_MIN[1])
    if screen:
        width = min(width, max(int(screen[0]), WINDOW_MIN[0]))
        height = min(height, max(int(screen[1]), WINDOW_MIN[1]))
    return width, height


def _screen_size():
    """The default screen's size in px, or None when pyglet cannot tell (no display)."""
    try:
        import pyglet

        screen = pyglet.display.get_display().get_default_screen()
        return screen.width, screen.height
    except Exception:  # noqa: BLE001  (no display: _open_window says so)
        return None


class NoDisplayError(Exception):
    """No display to open a window on."""


def _open_window(width, height, title):
    import pyglet

    headless = bool(pyglet.options["headless"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            import pyglet.gl
            import pyglet.window

            kwargs = {"resizable": True, "visible": not headless,
                      "config": gl_config(pyglet.gl)}
            try:  # file_drops: dropping a scene file on the window opens it (on_file_drop)
                return pyglet.window.Window(width, height, title, file_drops=True, **kwargs)
            except TypeError:  # a pyglet without file drops
                return pyglet.window.Window(width, height, title, **kwargs)
    except Exception as exc:  # noqa: BLE001  (pyglet raises many kinds: no display, no GL...)
        if type(exc).__name__ == "NoSuchDisplayException":
            raise NoDisplayError(
                "no display to open the window on; use 'sharnir run SCENE' for a headless "
                "run, or 'sharnir SCENE --screenshot OUT.png' for a picture") from None
        raise NoDisplayError(f"cannot open an OpenGL {GL_VERSION[0]}.{GL_VERSION[1]} window "
                             f"({type(exc).__name__}: {exc})") from None


class App:
    """The window app for one scene file; `panel=False` draws the 3D view alone."""

    def __init__(self, scene, width=None, height=None, paused=False, panel=True,
                 screenshot_dir=".", asset_roots=(), robot=None):
        # a bad scene fails before a window; asset_roots: folders every scene opened in this
        # session may read files from besides its own (scenes.asset_roots); robot: how a URDF
        # robot is read (scenes.loader.robot_options)
        self.thread = PhysicsThread(scene, paused=paused, asset_roots=asset_roots,
                                    robot=robot)
        loading = self.thread.preload()   # the step kernel loads while the window opens
        # no size given: the size it closed at last time, which it stores again on closing
        self.remember_size = width is None and height is None
        if self.remember_size:
            from .recent import load_window_size

            width, height = opening_size(load_window_size(), _screen_size())
        self.window = _open_window(width or WINDOW_SIZE[0], height or WINDOW_SIZE[1],
                                   f"Sharnir - {self.thread.snapshot.scene}")
        import pyglet
        self.headless = bool(pyglet.options["headless"])   # (an EGL pbuffer: nothing to show)
        self.ctx = moderngl.create_context(require=GL_VERSION[0] * 100 + GL_VERSION[1] * 10)
        self.renderer = Renderer(self.ctx)
        self.camera = OrbitCamera()
        self.target = None
        self.plot = PlotBuffer(seconds=10.0)
        self.frame_rate = FrameRate()
        self.screenshot_dir = Path(screenshot_dir)
        self.show_help = False
        self.show_panel = True      # Tab hides it
        self._speed_asked = None    # (speed asked, when) by the last + or -
        self.show_joints, self.show_centres, self.show_shadows = True, False, True
        self.show_contacts = True
        self.shape_view = VISUALS     # how bodies with visuals are drawn (S: SHAPE_VIEWS)
        self.selected = None        # (run, body) last grabbed or double-clicked (G, T)
        self.tracking = False       # T: the camera follows the selected body
        self.force_gain = 1.0       # the contact force lines' length, times _force_scale's
        self._last_press = (-1.0, 0.0, 0.0)   # (time, x, y) of the last left press
        first = self.thread.snapshot
        self._shown = (first.generation, first.scene, first.source)  # the world on screen
        self._force_scale = _force_scale(first)  # contact force lines, m per N
        self.closed = False
        self.drag = None            # the body being dragged with the mouse (app.drag.Drag)
        self._spring = None         # its drawing, made at the first drag

        self._joint_cache = None    # (generation, joint_bodies, body_island)
        self.last_screenshot = None
        self.recording = None          # F9: the view being recorded (app.recording)
        self._finishing = []           # recordings stopped, their files being finished
        self._compile_printer = None   # compile progress in the terminal (warmup.py)
        self._full_frame_time = 0.0    # when the scene and panel were last drawn
        self._frame_time = time.perf_counter()
        self.gui = self.panel_state = None
        if panel:
            from .imgui_glue import ImGuiLayer
            from .panel_state import PanelState

            self.gui, self.panel_state = ImGuiLayer(), PanelState()
        self.window.push_handlers(self)
        self.action_frame()
        loading.join()
        self.thread.start()

    # ---- frames -----------------------------------------------------------------------------
    @property
    def snapshot(self):
        return self.thread.snapshot

    def draw_frame(self):
        """Draw the latest snapshot (and the panel) into the offscreen target and the window."""
        snap = self.thread.snapshot
        self._report_compile(snap)
        fb_size = self.window.get_framebuffer_size()
        now = time.perf_counter()
        if (not snap.ready and snap.compile_progress is not None and self.target is not None
                and self.target.size == tuple(fb_size)
                and now - self._full_frame_time < COMPILING_FRAME_S):
            # while the kernels compile, redraw a few times a second and otherwise show the
            # last frame again: software GL would take the compiler's CPU
            if not self.headless:
                _present(self.ctx, self.target)
            return
        self._full_frame_time = now
        self.plot.feed(snap)
        if (snap.generation, snap.scene) != self._shown[:2]:
            self._scene_changed(snap)
        if self.tracking:
            self._follow(snap)
        target = self._target_for(fb_size)
        target.use()
        self.ctx.viewport = (0, 0, *fb_size)
        aspect = fb_size[0] / max(fb_size[1], 1)
        # the anchors, axes and flags of the joints on show, all of one count (a grasp or a
        # release between two publications can leave one of them of the joints before)
        joints = (self.show_joints and snap.joint_anchor is not None and len(snap.joint_names)
                  and len(snap.joint_anchor) == len(snap.joint_names)
                  and (snap.joint_axis is None or len(snap.joint_axis) == len(snap.joint_names)))
        self.renderer.draw(
            self.camera, aspect, snap.body_pos, snap.body_quat, snap.body_shapes,
            joint_anchors=snap.joint_anchor if joints else None,
            joint_sliding=_latest_sliding(snap) if joints else None,
            joint_axes=snap.joint_axis if joints else None,
            centres=self._centres(snap),
            shadows=self.show_shadows,
            contact_points=snap.contact_point if self.show_contacts else None,
            contact_sliding=snap.contact_sliding, contact_forces=snap.contact_force,
            force_scale=self.contact_force_scale() if self.show_contacts else 0.0,
            body_visuals=snap.body_visuals, collision_shapes=self.shape_view,
            highlight=self.selected_body(snap))
        if self.drag is not None:
            self._pull(snap)
        if self.recording is not None:   # the view alone: before the panel is drawn over it
            left = round(self.panel_width() * fb_size[0] / max(self.window.get_size()[0], 1))
            self.recording.capture(self.ctx, target, left, _finish_without_gil)
        if self._finishing:
            self._poll_recordings()
        if self.gui is not None:
            self._draw_gui(snap, fb_size)
        _finish_without_gil(self.ctx)
        if not self.headless:
            _present(self.ctx, target)

    def _report_compile(self, snap):
        """The kernels' compile progress, also in the terminal (first run only)."""
        if snap.compile_progress is not None:
            if self._compile_printer is None:
                self._compile_printer = ProgressPrinter(sys.stderr)
            self._compile_printer(*snap.compile_progress)
        elif snap.ready and self._compile_printer is not None:
            self._compile_printer.close()
            self._compile_printer = None

    def _scene_changed(self, snap):
        """A new world: a reset keeps the view; another scene is framed from the default
        direction of view, and titled."""
        if snap.scene != self._shown[1] or snap.source != self._shown[2]:
            self.window.set_caption(f"Sharnir - {snap.scene}")
            self.camera.reset_orientation()
            self.action_frame()
        self._shown = (snap.generation, snap.scene, snap.source)
        self._force_scale = _force_scale(snap)

    def _draw_gui(self, snap, fb_size):
        from . import panel
        from .keys import HELP

        now = time.perf_counter()
        self.gui.new_frame(self.window.get_size(), fb_size, now - self._frame_time)
        self._frame_time = now
        panel.draw_panel(snap, self.thread.send, self.panel_state, self.plot, PANEL_WIDTH,
                         drag=self.drag, frame_rate=self.frame_rate, view=self,
                         shown=self.show_panel)
        if self.show_help:
            panel.draw_help(HELP, left=self.panel_width())
        if self.recording is not None:
            from .recording import draw_rec_mark

            draw_rec_mark(self.panel_width(), self.recording.seconds)
        self.fit_view()  # (the panel's width may have changed)
        self.ctx.disable(moderngl.DEPTH_TEST)
        self.gui.render()

    def _target_for(self, size):
        if self.target is None or self.target.size != tuple(size):
            if self.target is not None:
                self.target.release()
            self.target = OffscreenTarget(self.ctx, *size)
        return self.target

    def _draw_timed(self):
        """draw_frame, timed for the frame-rate readout."""
        start = time.perf_counter()
        self.draw_frame()
        self.frame_rate.add(start, time.perf_counter())

    def run_frames(self, n):
        """Draw n frames now, handling pending window events, without pyglet's loop."""
        for _ in range(n):
            if self.closed:
                break
            self.window.switch_to()
            self.window.dispatch_events()
            if self.closed:
                break
            self._draw_timed()
            self.window.flip()

    def run(self):
        """The interactive loop, until the window closes."""
        import pyglet

        try:
            pyglet.app.run(FRAME_INTERVAL_S)
        finally:
            self.close()

    def close(self):
        """Stop the physics thread and close the window; True when the thread has ended."""
        if self.closed:
            return not self.thread.is_alive()
        self.closed = True
        stopped = self.thread.stop()
        if self.recording is not None:   # the video so far is finished and kept
            self.action_toggle_recording()
        for recording in self._finishing:
            recording.wait(30.0)
            print(f"sharnir: {recording.summary()}", file=sys.stderr)
        self._finishing = []
        if self.remember_size:
            from .recent import save_window_size

            save_window_size(*self.window.get_size())  # (a failure only loses the size)
        self.window.switch_to()
        if self.gui is not None:
            self.gui.shutdown()
        if self.target is not None:
            self.target.release()
        if self._spring is not None:
            self._spring.release()
        self.renderer.release()
        # read (and so clear) any GL error the releases left: pyglet's glFlush on closing an
        # X window raises it otherwise (GLException 0x1282, seen under Xvfb)
        _ = self.ctx.error
        self.window.close()
        return stopped

    # ---- actions (keys and buttons) ---------------------------------------------------------
    def action_toggle_pause(self):
        from .panel_state import toggle_pause

        toggle_pause(self.thread.snapshot, self.thread.send)

    def action_step(self):
        self.thread.send(Step())

    def action_step_back(self):
        from .panel_state import request_rewind

        note = request_rewind(self.thread.snapshot, self.thread.send, back=1)
        if note and self.panel_state is not None:
            self.panel_state.note = note

    def action_reset(self):
        self.thread.send(Reset())

    def action_frame(self):
        """Frame every body and the room the parts hanging from fixed bodies swing through
        (app.framing), in the part of the window right of the panel. Only bodies whose pose is
        finite count; after a blow-up that left none, the camera and the grid stay as they
        are."""
        snap = self.thread.snapshot
        shaped = np.array([shape is not None for shape in snap.body_shapes], bool)
        finite = (np.isfinite(snap.body_pos).all(axis=1)
                  & np.isfinite(snap.body_quat).all(axis=1))
        if shaped.any() and not (finite & shaped).any():
            if self.panel_state is not None:
                self.panel_state.note = "frame: no body has a finite pose; the view stays"
            return
        joint_bodies, body_island = self._topology(snap)
        bounds = frame_bounds(snap, joint_bodies, body_island)
        self.camera.frame(bounds, aspect=self.fit_view())
        self.renderer.fit_grid(bounds)

    def panel_width(self):
        """Pixels the panel covers at the window's left (0 without one, or hidden)."""
        if self.gui is None or not self.show_panel:
            return 0.0
        width = getattr(self.panel_state, "width", None)
        return float(width if width else PANEL_WIDTH)

    def fit_view(self):
        """Centre the camera's picture in the part of the window the panel leaves; returns
        that part's aspect (width / height)."""
        shift, aspect = view_part(*self.window.get_size(), self.panel_width())
        self.camera.shift_x = shift
        return aspect

    def _topology(self, snap):
        """(joint_bodies, body_island) of the snapshot's world, or (None, None) while a newer
        world is being installed (static data, read once per world)."""
        cache = self._joint_cache
        if cache is None or cache[0] != snap.generation:
            bodies, island = snap.joint_bodies, snap.body_island
            if len(bodies) != len(snap.joint_names) or len(island) != len(snap.body_names):
                return None, None
            self._joint_cache = cache = (snap.generation, [tuple(b) for b in bodies],
                                         list(island))
        return cache[1], cache[2]

    def action_toggle_help(self):
        self.show_help = not self.show_help

    def action_toggle_panel(self):
        """Hide the panel (the view takes the whole window) or show it again."""
        self.show_panel = not self.show_panel
        if self.panel_state is not None and not self.show_panel:
            self.panel_state.note = "panel hidden: Tab shows it again"

    def action_faster(self):
        self._step_speed(faster=True)

    def action_slower(self):
        self._step_speed(faster=False)

    def _step_speed(self, faster):
        """One step along the panel's speed ladder (+ and -), told in a note.  Within
        SPEED_ASKED_S of the previous press, the speed it asked is the one stepped from
        (the snapshots may not show it yet), so that quick presses add up."""
        from .panel_state import request_speed_step

        now = time.monotonic()
        current = self.thread.snapshot.speed
        if self._speed_asked is not None and now - self._speed_asked[1] < SPEED_ASKED_S:
            current = self._speed_asked[0]
        speed, note = request_speed_step(self.thread.send, current, faster)
        self._speed_asked = (speed, now)
        if self.panel_state is not None:
            self.panel_state.note = note

    def action_toggle_joints(self):
        self.show_joints = not self.show_joints

    def action_toggle_centres(self):
        self.show_centres = not self.show_centres

    def action_toggle_contacts(self):
        self.show_contacts = not self.show_contacts

    def action_toggle_shadows(self):
        self.show_shadows = not self.show_shadows

    def action_cycle_shape_view(self):
        """The next way of drawing bodies with visuals: visuals, collision shapes instead,
        visuals with the collision shapes over them, and round again."""
        k = SHAPE_VIEWS.index(self.shape_view)
        self.shape_view = SHAPE_VIEWS[(k + 1) % len(SHAPE_VIEWS)]

    def action_focus(self):
        """Orbit around the selected body's centre of mass (the whole scene if none)."""
        snap = self.thread.snapshot
        body = self.selected_body(snap)
        if body is None:
            self.action_frame()
            return
        target = np.asarray(snap.body_pos[body], dtype=float)
        if not np.all(np.isfinite(target)):  # blown up: the view stays
            if self.panel_state is not None:
                self.panel_state.note = "focus: the body's position is not finite; the view stays"
            return
        self.camera.target = target.copy()

    def action_screenshot(self, path=None):
        """Save the last drawn frame (3D view and panel) as a PNG; returns its path."""
        if self.target is None:
            self.draw_frame()
        if path is None:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            path = self.screenshot_dir / f"sharnir-{stamp}.png"
        width, height = self.target.size
        write_png(path, width, height, self.target.read_rgb())
        self.last_screenshot = Path(path)
        if self.panel_state is not None:
            self.panel_state.note = f"screenshot saved: {path}"
        return self.last_screenshot

    def action_toggle_recording(self, path=None):
        """F9: start recording the 3D view to a video (`path`, default sharnir-TIME.mp4 in
        the screenshot folder), or stop it; the note says where the file goes."""
        from .recording import ViewRecording, recording_path

        if self.recording is not None:
            recording, self.recording = self.recording, None
            recording.stop()
            self._finishing.append(recording)
            self._note(f"recording stopped; finishing {recording.path}")
            return recording.path
        from ..render.video import VideoError

        if self.target is None:
            self.draw_frame()
        width, height = self.target.size
        left = round(self.panel_width() * width / max(self.window.get_size()[0], 1))
        try:
            self.recording = ViewRecording(path or recording_path(self.screenshot_dir),
                                           width - min(left, width - 2), height)
        except VideoError as exc:
            self._note(str(exc))
            return None
        self._note(f"recording the view to {self.recording.path} (F9 stops)")
        return self.recording.path

    def _poll_recordings(self):
        """Tell of each stopped recording whose file is finished."""
        for recording in [r for r in self._finishing if r.done]:
            self._finishing.remove(recording)
            self._note(recording.summary())

    def _note(self, text):
        if self.panel_state is not None:
            self.panel_state.note = text

    def action_quit(self):
        self.close()

    def action_open(self, path):
        """Load the scene file `path` (as the panel's Open does); returns the panel's note
        when the path is refused at once, else None (a failed load opens the modal)."""
        from .panel_state import PanelState, request_load

        state = self.panel_state if self.panel_state is not None else PanelState()
        note = request_load(self.thread.snapshot, self.thread.send, state, path)
        if note and self.panel_state is not None:
            self.panel_state.note = note
        return note

    def action_reload(self):
        """Read the current scene file again (the panel's Reload)."""
        from .panel_state import PanelState, request_reload

        state = self.panel_state if self.panel_state is not None else PanelState()
        note = request_reload(self.thread.snapshot, self.thread.send, state)
        if note and self.panel_state is not None:
            self.panel_state.note = note
        return note

    # ---- pyglet events ----------------------------------------------------------------------
    def on_draw(self):
        if not self.closed:
            self._draw_timed()

    def on_resize(self, width, height):
        self.fit_view()  # (pyglet's own handler runs after this one)

    def on_close(self):
        self.close()
        return True  # handled: the window is already closed

    def on_file_drop(self, x, y, paths):
        """A file dropped on the window is opened (the first one, if several)."""
        if paths:
            self.action_open(paths[0])
            if len(paths) > 1 and self.panel_state is not None and not self.panel_state.note:
                self.panel_state.note = f"opened the first of {len(paths)} dropped files"
        return True

    def on_key_press(self, symbol, modifiers):
        """A shortcut of app.keys. Escape never quits: ImGui takes it to leave a text field
        or close a dialog, and here it closes the help; quitting is Ctrl+Q or the window's
        close button."""
        from pyglet.window import key

        from .keys import ALWAYS_ACTIVE, CTRL_SHORTCUTS, SHORTCUTS

        if self.gui is not None:
            self.gui.on_key_press(symbol, modifiers)
        if modifiers & key.MOD_CTRL and symbol in CTRL_SHORTCUTS:
            getattr(self, f"action_{CTRL_SHORTCUTS[symbol]}")()
            return True
        if self.gui is not None and self.gui.wants_keyboard and symbol not in ALWAYS_ACTIVE:
            return True
        if symbol == key.ESCAPE:
            self.show_help = False
            return True  # and not to pyglet's default handler, which closes the window
        action = SHORTCUTS.get(symbol)
        if action is not None:
            getattr(self, f"action_{action}")()
        return True

    def on_key_release(self, symbol, modifiers):
        if self.gui is not None:
            self.gui.on_key_release(symbol, modifiers)

    def on_text(self, text):
        if self.gui is not None:
            self.gui.on_text(text)

    def on_mouse_motion(self, x, y, dx, dy):
        if self.gui is not None:
            self.gui.on_mouse_motion(x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        from pyglet.window import key, mouse

        if self.gui is not None:
            self.gui.on_mouse_press(x, y, button, modifiers)
            if self.gui.wants_mouse:
                return
        if button == mouse.LEFT:
            now = time.monotonic()
            t, px, py = self._last_press
            self._last_press = (now, x, y)
            if now - t <= DOUBLE_CLICK_S and abs(x - px) + abs(y - py) <= DOUBLE_CLICK_PX:
                self.end_drag()
                self.select_at(x, y)
                return
            self.start_drag(x, y, rotate=bool(modifiers & key.MOD_CTRL))

    def on_mouse_release(self, x, y, button, modifiers):
        from pyglet.window import mouse

        if self.gui is not None:
            self.gui.on_mouse_release(x, y, button, modifiers)
        if button == mouse.LEFT:
            self.end_drag()

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        from pyglet.window import mouse

        if self.gui is not None:
            self.gui.on_mouse_drag(x, y, dx, dy, buttons, modifiers)
        if self.drag is not None and buttons & mouse.LEFT:
            self.move_drag(x, y)
            return
        if self.gui is not None and self.gui.wants_mouse:
            return
        if buttons & mouse.LEFT:
            self.orbit(dx, dy)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE):
            self.pan(dx, dy)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        if self.gui is not None:
            self.gui.on_mouse_scroll(x, y, scroll_x, scroll_y)
            # over the panel (or another ImGui window): the wheel scrolls it, not the view;
            # the position decides too, as ImGui's flag is from the last frame
            if self.gui.wants_mouse or x < self.panel_width():
                return
        self.zoom(scroll_y)

    # ---- dragging bodies ----------------------------------------------------------------------
    def _mass_properties(self, snap):
        """(body_mass, body_inertia) of the snapshot's world, or None (a snapshot made without
        them)."""
        if snap.body_mass is None or snap.body_inertia is None:
            return None
        return snap.body_mass, snap.body_inertia

    def _cursor_ray(self, x, y):
        return cursor_ray(self.camera, x, y, *self.window.get_size())

    def contact_force_scale(self):
        """Metres of contact force line per newton: the scene's own scale (_force_scale)
        times the panel's factor."""
        return self._force_scale * self.force_gain

    def _centres(self, snap):
        """The dots drawn at centres of mass: every dynamic body's (C), and the selected
        body's."""
        centres = _dynamic_centres(snap) if self.show_centres else None
        body = self.selected_body(snap)
        if body is not None and np.all(np.isfinite(snap.body_pos[body])):
            centres = _marked(centres, snap.body_pos[body])
        return centres

    def selected_body(self, snap):
        """The selected body's index in `snap`'s world, or None (none selected, or the world
        was loaded or reset since: a grasp keeps it)."""
        if self.selected is None or self.selected[0] != snap.run:
            return None
        body = self.selected[1]
        return body if 0 <= body < len(snap.body_names) else None

    def select_at(self, x, y):
        """Select the body under window pixel (x, y) (a double click; nothing there: none),
        as MuJoCo's viewer does: its name and numbers in the panel, a marker at its centre
        of mass, G focuses on it, T makes the camera follow it."""
        snap = self.thread.snapshot
        origin, direction = self._cursor_ray(x, y)
        hit = pick(origin, direction, snap.body_pos, snap.body_quat, snap.body_shapes)
        if hit is None:
            self.selected, self.tracking = None, False
            note = "selection cleared"
        else:
            self.selected = (snap.run, hit[0])
            note = (f"selected {snap.body_names[hit[0]]} (G: focus, T: follow with the "
                    "camera, double-click elsewhere: clear)")
        if self.panel_state is not None:
            self.panel_state.note = note
        return None if hit is None else hit[0]

    def action_track(self):
        """Make the camera follow the selected body (T again: stay where it is)."""
        snap = self.thread.snapshot
        if not self.tracking and self.selected_body(snap) is None:
            if self.panel_state is not None:
                self.panel_state.note = "track: double-click a body to select it first"
            return
        self.tracking = not self.tracking
        if self.panel_state is not None:
            name = snap.body_names[self.selected[1]]
            self.panel_state.note = (f"the camera follows {name}" if self.tracking
                                     else "the camera stays")

    def _follow(self, snap):
        """Tracking: the camera's target on the selected body's centre of mass."""
        body = self.selected_body(snap)
        if body is None:
            self.tracking = False
            return
        target = np.asarray(snap.body_pos[body], dtype=float)
        if np.all(np.isfinite(target)):
            self.camera.target = target.copy()

    def start_drag(self, x, y, rotate=False):
        """Grab the body under window pixel (x, y); True if a movable body was hit."""
        self.end_drag()
        snap = self.thread.snapshot
        origin, direction = self._cursor_ray(x, y)
        hit = pick(origin, direction, snap.body_pos, snap.body_quat, snap.body_shapes)
        props = self._mass_properties(snap) if hit is not None else None
        if props is None:
            return False
        body, grab_local, distance = hit
        mass, inertia = props
        if not (mass[body] > 0.0 and np.all(inertia[body] > 0.0)):
            return False  # static and kinematic bodies do not answer forces
        self.drag = Drag(body, grab_local, origin + distance * direction, snap.body_quat[body],
                         mass=mass[body], rotate=rotate, cursor=(x, y))
        self.drag.generation = snap.generation
        self.selected = (snap.run, body)
        self.move_drag(x, y)
        return True

    def move_drag(self, x, y):
        """The cursor moved: send the new target (the physics pulls toward it every step);
        while paused, a free body is put there directly. The cursor counts only within the
        view: over the panel or beyond the window's edge it is held at the view's border, so
        a drag cannot fling a body out of sight (the spring is critically damped: the grabbed
        point does not pass its target)."""
        drag = self.drag
        if drag is None:
            return
        width, height = self.window.get_size()
        x = min(max(x, self.panel_width()), width)
        y = min(max(y, 0), height)
        snap = self.thread.snapshot
        if drag.generation != snap.generation:  # reset or loaded: the grabbed body is gone
            self.drag = None
            return
        command = drag.move(*self._cursor_ray(x, y), self.camera.back, (x, y))
        jointed = snap.body_jointed[drag.body] if len(snap.body_jointed) else True
        if snap.paused and not jointed:
            pos, quat = drag.placement(snap.body_pos[drag.body], snap.body_quat[drag.body])
            if not (np.allclose(pos, snap.body_pos[drag.body], rtol=0.0, atol=1e-9)
                    and np.allclose(quat, snap.body_quat[drag.body], rtol=0.0, atol=1e-12)):
                self.thread.send(MoveBody(drag.body, tuple(pos), tuple(quat)))
        self.thread.send(command)

    def end_drag(self):
        """Let go: the physics stops pulling."""
        if self.drag is not None:
            if self.drag.generation == self.thread.snapshot.generation:
                self.thread.send(ClearDrag())
            self.drag = None

    def _pull(self, snap):
        """Draw the spring from the grabbed point (at the snapshot's pose) to the target."""
        drag = self.drag
        if drag.generation != snap.generation:  # reset or loaded: the grabbed body is gone
            self.drag = None
            return
        if self._spring is None:
            self._spring = SpringDrawing(self.renderer)
        self._spring.draw(self.camera, *drag.spring_ends(snap.body_pos[drag.body],
                                                         snap.body_quat[drag.body]))

    # ---- camera -----------------------------------------------------------------------------
    def orbit(self, dx, dy):
        self.camera.yaw -= dx * ORBIT_RAD_PER_PX
        self.camera.pitch = min(max(self.camera.pitch - dy * ORBIT_RAD_PER_PX, -PITCH_LIMIT),
                                PITCH_LIMIT)

    def pan(self, dx, dy):
        """Move the target so that the scene follows the pointer."""
        view = self.camera.view()
        side, up = view[0, :3], view[1, :3]
        height = self.window.get_size()[1]
        metres_per_px = 2.0 * self.camera.distance * math.tan(self.camera.fov_y / 2) / height
        self.camera.target = self.camera.target - metres_per_px * (dx * side + dy * up)

    def zoom(self, notches):
        self.camera.distance = max(1e-3, self.camera.distance * ZOOM_PER_NOTCH ** notches)


def run_app(scene, **kwargs):
    """Open the window on `scene` and run until it closes; returns the exit status."""
    app = App(scene, **kwargs)
    app.run()
    return 0


def read_rgb_image(app):
    """The last frame as an (height, width, 3) uint8 array, top row first (for checks)."""
    width, height = app.target.size
    rgb = np.frombuffer(app.target.read_rgb(), np.uint8).reshape(height, width, 3)
    return rgb[::-1]
