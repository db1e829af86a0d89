"""Drawing the simulation with moderngl: bodies, joint anchors and a ground grid.

`Renderer` draws plain arrays (body poses, physics shapes, joint anchors), the same data an
app snapshot carries, so it never touches a live ``World``.  `OrbitCamera` is the z-up view.
`render_scene_png` renders a scene file headless (EGL) into a PNG; importing it pulls in
pyglet and the physics, so it is loaded only when asked for.
"""

from .camera import OrbitCamera
from .context import RenderError
from .renderer import Renderer

__all__ = ["OrbitCamera", "RenderError", "Renderer", "render_scene_png"]


def __getattr__(name):
    if name == "render_scene_png":
        from .screenshot import render_scene_png
        return render_scene_png
    raise AttributeError(f"module 'render' has no attribute {name!r}")
