"""Shadows (Renderer._draw_shadows) are drawn translucent and write no depth: a body drawn
after them covers them wherever it is, even one lying within the millimetre the shadows are
lifted above the ground (a tile on the floor). moderngl's Context has no `depth_mask` (a
Framebuffer has): setting it on the context did nothing, and the tile's own shadow hid it.

Pictures are drawn in a headless (EGL) child process, as in tests/test_app_view.py.
"""
import textwrap

import numpy as np
from conftest import run_headless_child

DRAW_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from sharnir.render.camera import OrbitCamera
    from sharnir.render.context import OffscreenTarget, headless_context
    from sharnir.render.renderer import Renderer
    from sharnir.scenes import load_scene

    W, H = 200, 150
    window, ctx = headless_context(W, H)
    world = load_scene(sys.argv[2])
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, W, H)
    bounds = renderer.bounds(world.body_pos, world.body_quat, world.body_shapes)
    camera = OrbitCamera()
    camera.frame(bounds, aspect=W / H)
    renderer.fit_grid(bounds)
    pictures = {}
    for shadows in (False, True):
        target.use()
        ctx.viewport = (0, 0, W, H)
        renderer.draw(camera, W / H, world.body_pos, world.body_quat, world.body_shapes,
                      body_visuals=world.body_visuals, shadows=shadows)
        rgb = np.frombuffer(target.read_rgb(), np.uint8).reshape(H, W, 3)[::-1]
        pictures[str(shadows)] = rgb
    np.savez(sys.argv[1], **pictures)
    print(json.dumps({"ok": True}))
""")

# A red tile 0.8 mm thick lying on the ground (its top 0.9 mm up, under the shadows' 1 mm).
TILE = ('bodies = [{ name = "tile", kind = "static", pos = [0.0, 0.0, 0.0005], '
        'shape = { type = "box", half_extents = [0.5, 0.5, 0.0004] }, '
        'visuals = [{ shape = { type = "box", half_extents = [0.5, 0.5, 0.0004] }, '
        'rgba = [1.0, 0.0, 0.0, 1.0] }] }]\n')


def test_a_tile_on_the_ground_is_drawn_over_its_own_shadow(tmp_path):
    (tmp_path / "tile.toml").write_text(TILE)
    out = tmp_path / "pictures.npz"
    run_headless_child(DRAW_CHILD, out, tmp_path / "tile.toml", cwd=tmp_path)
    with np.load(out) as data:
        plain, shadowed = data["False"], data["True"]

    def red(rgb):
        return (rgb[:, :, 0] > 150) & (rgb[:, :, 1] < 60) & (rgb[:, :, 2] < 60)

    # the tile fills much of the picture, and its shadow hides none of it (a few pixels of its
    # edge may blend with the shadow's; with the shadows writing depth, 42 of 6,679 were left)
    assert red(plain).sum() > 2000
    assert abs(int(red(shadowed).sum()) - int(red(plain).sum())) < 0.01 * red(plain).sum()
