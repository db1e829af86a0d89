"""OpenGL contexts and offscreen framebuffers.

A headless context comes from pyglet's EGL pbuffer window (no display server needed) and
moderngl attaches to it.  Pictures are rendered into an offscreen framebuffer and read from
there: reading the default framebuffer leaves a GL error behind that pyglet trips over later.
"""
import warnings

import moderngl

GL_VERSION = (3, 3)
MSAA_SAMPLES = 4
# What a fresh Debian machine needs for headless EGL rendering (named in the error message).
EGL_PACKAGES = "libegl1 libgl1 libgl1-mesa-dri libegl-mesa0"


class RenderError(Exception):
    """Rendering is impossible here (no EGL / OpenGL 3.3) or its output cannot be written."""


def gl_config(pyglet_gl):
    """OpenGL 3.3 core with 8-bit RGBA and a 24-bit depth buffer: without explicit sizes the
    headless surface is RGB565 and colours come out wrong."""
    return pyglet_gl.Config(major_version=GL_VERSION[0], minor_version=GL_VERSION[1],
                            forward_compatible=True, red_size=8, green_size=8, blue_size=8,
                            alpha_size=8, depth_size=24, double_buffer=True)


def headless_context(width, height):
    """An invisible EGL window and the moderngl context attached to it, as (window, ctx).
    Raises RenderError naming the problem when EGL or OpenGL 3.3 is not available."""
    import pyglet

    pyglet.options["headless"] = True  # must precede the first import of pyglet.window
    try:
        # pyglet warns before it fails; the RenderError below says it once and clearly.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            import pyglet.gl
            import pyglet.window

            window = pyglet.window.Window(width, height, visible=False,
                                          config=gl_config(pyglet.gl))
    except Exception as exc:  # pyglet raises many kinds here: missing library, no device, ...
        raise RenderError(
            f"cannot create a headless OpenGL {GL_VERSION[0]}.{GL_VERSION[1]} context through "
            f"EGL ({type(exc).__name__}: {exc}); install Mesa's EGL and GL drivers "
            f"(Debian: apt-get install {EGL_PACKAGES})") from None
    try:
        ctx = moderngl.create_context(require=GL_VERSION[0] * 100 + GL_VERSION[1] * 10)
    except Exception as exc:
        window.close()
        raise RenderError(f"OpenGL {GL_VERSION[0]}.{GL_VERSION[1]} is not available: "
                          f"{exc}") from None
    return window, ctx


class OffscreenTarget:
    """A colour + depth framebuffer of a fixed size, multisampled when the driver allows it,
    with a plain framebuffer to resolve into and read back from."""

    def __init__(self, ctx, width, height, samples=MSAA_SAMPLES):
        self.ctx = ctx
        self.size = (width, height)
        self.samples = min(samples, ctx.max_samples)
        self.resolved = ctx.simple_framebuffer(self.size, components=4)
        if self.samples > 1:
            self.colour = ctx.renderbuffer(self.size, 4, samples=self.samples)
            self.depth = ctx.depth_renderbuffer(self.size, samples=self.samples)
            self.fbo = ctx.framebuffer(self.colour, self.depth)
        else:
            self.colour = self.depth = None
            self.fbo = self.resolved

    def use(self):
        self.fbo.use()

    def resolve(self):
        """The picture in a plain (single-sample RGBA8) framebuffer: the multisampled one
        resolved into `resolved`.  Copy to the window from this one: a multisampled blit
        into a framebuffer of another format (an X window's RGB8) is GL_INVALID_OPERATION
        and leaves the window black."""
        if self.fbo is not self.resolved:
            self.ctx.copy_framebuffer(self.resolved, self.fbo)
        return self.resolved

    def read_rgb(self):
        """The picture as RGB bytes, rows bottom-up (OpenGL order)."""
        return self.resolve().read(components=3, alignment=1)

    def release(self):
        if self.fbo is not self.resolved:
            for obj in (self.fbo, self.colour, self.depth):
                obj.release()
        self.resolved.release()
