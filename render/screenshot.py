"""Headless screenshots: load a scene, step it, render one picture offscreen, save a PNG."""
import contextlib
import io
import os
import secrets
from pathlib import Path

from sharnir.scenes import load_scene

from .camera import OrbitCamera
from .context import OffscreenTarget, RenderError, headless_context
from .renderer import Renderer

FRAME_S = 1.0 / 60.0  # simulated time per frame, as in a 60 Hz window


def render_scene_png(scene_path, out_png, frames=1, width=800, height=600, asset_roots=(),
                     robot=None):
    """Render `scene_path` after `frames` frames of 1/60 s each into the PNG `out_png`; the
    scene's files may also come from the folders `asset_roots` (scenes.asset_roots).

    Raises SceneError for a bad scene, physics.SimulationError if the simulation fails and
    RenderError when there is no usable OpenGL or the PNG cannot be written.
    """
    if width < 1 or height < 1:
        raise RenderError(f"the picture size must be positive (got {width} x {height})")
    # The GL context first: a machine without EGL fails at once, not after simulating.
    window, ctx = headless_context(width, height)
    try:
        world = load_scene(scene_path, asset_roots=asset_roots, robot=robot)
        world.step(frames * max(1, round(FRAME_S / world.dt)))
        rgb = _render_world(ctx, world, width, height)
    finally:
        ctx.release()
        window.close()
    _write_png(out_png, width, height, rgb)


def _render_world(ctx, world, width, height):
    anchors = [world.joint_anchor_world(name)[1] for name in world.joint_names]
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, width, height)
    try:
        bounds = renderer.bounds(world.body_pos, world.body_quat, world.body_shapes, anchors)
        camera = OrbitCamera()
        camera.frame(bounds, aspect=width / height)
        renderer.fit_grid(bounds)
        target.use()
        ctx.viewport = (0, 0, width, height)
        renderer.draw(camera, width / height, world.body_pos, world.body_quat,
                      world.body_shapes, anchors, world.joint_sliding,
                      body_visuals=world.body_visuals)
        return target.read_rgb()
    finally:
        target.release()
        renderer.release()


def _write_png(path, width, height, rgb):
    """Encode with pyglet and replace `path` only once the whole file is written."""
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
