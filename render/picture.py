"""Still pictures, headless: body poses drawn once offscreen, the camera framed on them, and
PNG files written whole or not at all.

Plain arrays in, as everywhere in `render`: `app.screenshot` loads and steps the scene and
hands its poses to `draw_picture`; the window's F12 saves its own frame with `write_png`.
"""
import contextlib
import io
import os
import secrets
from pathlib import Path

from .camera import OrbitCamera
from .context import OffscreenTarget, RenderError
from .renderer import Renderer


def draw_picture(ctx, width, height, body_pos, body_quat, body_shapes, joint_anchors=(),
                 joint_sliding=None, body_visuals=None):
    """The bodies at these poses, with their joints' anchors (orange where `joint_sliding`),
    drawn offscreen in `ctx` at `width` x `height` px, the camera framed on them and the
    ground grid fitted: the picture's RGB bytes, bottom row first (as OpenGL reads them)."""
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, width, height)
    try:
        bounds = renderer.bounds(body_pos, body_quat, body_shapes, joint_anchors)
        camera = OrbitCamera()
        camera.frame(bounds, aspect=width / height)
        renderer.fit_grid(bounds)
        target.use()
        ctx.viewport = (0, 0, width, height)
        renderer.draw(camera, width / height, body_pos, body_quat, body_shapes,
                      joint_anchors, joint_sliding, body_visuals=body_visuals)
        return target.read_rgb()
    finally:
        target.release()
        renderer.release()


def write_png(path, width, height, rgb):
    """Encode `rgb` (bottom row first) with pyglet and replace `path` only once the whole
    file is written; RenderError when it cannot be."""
    import pyglet.image

    buffer = io.BytesIO()
    # A positive pitch tells pyglet the rows run bottom-up, as OpenGL returns them.
    pyglet.image.ImageData(width, height, "RGB", rgb, pitch=width * 3).save("out.png", buffer)
    target = Path(path)
    temp = target.parent / f".{target.name}.{secrets.token_hex(4)}.part"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(buffer.getvalue())
        os.replace(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):  # nothing to remove when the folder failed
            temp.unlink()
        raise RenderError(f"cannot write {path}: {exc.strerror or exc}") from None
