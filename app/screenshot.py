"""`sharnir SCENE --screenshot`: a scene file loaded, stepped a few frames and drawn once,
headless, into a PNG (render.picture draws the poses and writes the file)."""
from ..render.context import RenderError, headless_context
from ..render.picture import draw_picture, write_png
from ..scenes import load_scene

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
        anchors = [world.joint_anchor_world(name)[1] for name in world.joint_names]
        rgb = draw_picture(ctx, width, height, world.body_pos, world.body_quat,
                           world.body_shapes, anchors, world.joint_sliding,
                           body_visuals=world.body_visuals)
    finally:
        ctx.release()
        window.close()
    write_png(out_png, width, height, rgb)
