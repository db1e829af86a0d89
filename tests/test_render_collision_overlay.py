"""The collision overlay (Renderer.draw(collision_shapes="overlay"), the S key's third view):
the visuals drawn as they are, then the collision shapes of the bodies with visuals as one
see-through layer in OVERLAY_COLOUR, also where a visual hides them; a body without visuals
is drawn once, the same in every view; draw's old True / False still mean what they meant.

Pictures are drawn in a headless (EGL) child process (conftest.draw_scenes).
"""
import numpy as np
import pytest
from conftest import draw_scenes

from sharnir.render.renderer import COLLISION, OVERLAY, SHAPE_VIEWS, VISUALS, shape_view

# A red sphere (0.4 m) drawn for a body whose collision shape is a 0.15 m cube inside it.
BOX_INSIDE_SPHERE = ('bodies = [{ name = "b", kind = "static", pos = [0.0, 0.0, 0.5], '
                     'shape = { type = "box", half_extents = [0.15, 0.15, 0.15] }, '
                     'visuals = [{ shape = { type = "sphere", radius = 0.4 }, '
                     'rgba = [1.0, 0.0, 0.0, 1.0] }] }]\n')
# Bodies without visuals only: a box and a capsule.
NO_VISUALS = ('bodies = [{ name = "a", kind = "static", pos = [0.0, 0.0, 0.3], '
              'shape = { type = "box", half_extents = [0.3, 0.2, 0.3] } }, '
              '{ name = "c", kind = "static", pos = [0.8, 0.0, 0.3], '
              'shape = { type = "capsule", radius = 0.15, half_length = 0.2 } }]\n')


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    """{(scene name, view): (h, w, 3) uint8 picture, top row first}."""
    folder = tmp_path_factory.mktemp("overlay")
    scenes = {"inside": BOX_INSIDE_SPHERE, "plain": NO_VISUALS}
    for name, text in scenes.items():
        (folder / f"{name}.toml").write_text(text)
    views = {str(view): {"collision_shapes": view}
             for view in ("visuals", "collision", "overlay", False, True)}
    return draw_scenes(folder, [folder / f"{name}.toml" for name in scenes], views)


def test_a_collision_shape_inside_its_visual_shows_through_it(pictures):
    """The 0.15 m cube lies wholly inside the 0.4 m sphere: hidden by it in the visuals,
    it is tinted over the sphere's middle in the overlay, while the sphere's rim beyond the
    cube's outline stays as it was."""
    visuals, overlay = pictures["inside", "visuals"], pictures["inside", "overlay"]
    h, w, _ = visuals.shape
    centre = (h // 2, w // 2)
    assert visuals[centre][2] < 10 and visuals[centre][0] > 100   # plain red sphere
    assert overlay[centre][2] > 40                                # tinted toward magenta
    changed = np.any(visuals != overlay, axis=2)
    red = (visuals[:, :, 0] > 60) & (visuals[:, :, 1] < 10) & (visuals[:, :, 2] < 10)
    # the cube's outline is well within the sphere's: (0.15 * sqrt(3) / 0.4)^2 < 0.43 of the
    # sphere's disc at most; some of the sphere is left untouched
    assert 0.05 * red.sum() < (changed & red).sum() < 0.6 * red.sum()
    assert not np.any(changed & ~red)        # nothing outside the sphere changes


def test_bodies_without_visuals_look_the_same_in_every_view(pictures):
    """Drawn once, by their collision shape: no second, z-fighting copy in the overlay."""
    base = pictures["plain", "visuals"]
    assert base.std() > 5.0                  # (a picture, not a blank)
    for view in ("collision", "overlay"):
        assert np.array_equal(pictures["plain", view], base), view


def test_draw_still_takes_true_and_false_for_the_collision_view(pictures):
    assert np.array_equal(pictures["inside", "False"], pictures["inside", "visuals"])
    assert np.array_equal(pictures["inside", "True"], pictures["inside", "collision"])
    assert not np.array_equal(pictures["inside", "collision"], pictures["inside", "visuals"])


def test_shape_view_names_the_three_views_and_refuses_others():
    assert SHAPE_VIEWS == (VISUALS, COLLISION, OVERLAY)
    assert [shape_view(v) for v in (False, True, *SHAPE_VIEWS)] == [
        VISUALS, COLLISION, VISUALS, COLLISION, OVERLAY]
    for bad in ("wireframe", None, 2):
        with pytest.raises(ValueError, match="collision_shapes"):
            shape_view(bad)
