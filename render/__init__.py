"""Drawing the simulation with moderngl: bodies, joint anchors and a ground grid.

`Renderer` draws plain arrays (body poses, physics shapes, joint anchors), the same data an
app snapshot carries, so it never touches a live ``World``.  `OrbitCamera` is the z-up view.
`render.picture` draws one headless picture of poses and writes PNGs; loading and stepping a
scene for one (`sharnir SCENE --screenshot`) is `app.screenshot`'s.
"""

from .camera import OrbitCamera
from .context import RenderError
from .renderer import Renderer

__all__ = ["OrbitCamera", "RenderError", "Renderer"]
