"""Shadows (Renderer._draw_shadows) are drawn translucent and write no depth: a body drawn
after them covers them wherever it is, even one lying within the millimetre the shadows are
lifted above the ground (a tile on the floor). moderngl's Context has no `depth_mask` (a
Framebuffer has): setting it on the context did nothing, and the tile's own shadow hid it.

Pictures are drawn in a headless (EGL) child process (conftest.draw_scenes).
"""
from conftest import draw_scenes

# A red tile 0.8 mm thick lying on the ground (its top 0.9 mm up, under the shadows' 1 mm).
TILE = ('bodies = [{ name = "tile", kind = "static", pos = [0.0, 0.0, 0.0005], '
        'shape = { type = "box", half_extents = [0.5, 0.5, 0.0004] }, '
        'visuals = [{ shape = { type = "box", half_extents = [0.5, 0.5, 0.0004] }, '
        'rgba = [1.0, 0.0, 0.0, 1.0] }] }]\n')


def test_a_tile_on_the_ground_is_drawn_over_its_own_shadow(tmp_path):
    (tmp_path / "tile.toml").write_text(TILE)
    pictures = draw_scenes(tmp_path, [tmp_path / "tile.toml"],
                           {"plain": {"shadows": False}, "shadowed": {"shadows": True}},
                           size=(200, 150))
    plain, shadowed = pictures["tile", "plain"], pictures["tile", "shadowed"]

    def red(rgb):
        return (rgb[:, :, 0] > 150) & (rgb[:, :, 1] < 60) & (rgb[:, :, 2] < 60)

    # the tile fills much of the picture, and its shadow hides none of it (a few pixels of its
    # edge may blend with the shadow's; with the shadows writing depth, 42 of 6,679 were left)
    assert red(plain).sum() > 2000
    assert abs(int(red(shadowed).sum()) - int(red(plain).sum())) < 0.01 * red(plain).sum()
