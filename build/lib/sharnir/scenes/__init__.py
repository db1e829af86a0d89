"""Scene files: TOML descriptions of worlds, bodies, joints and loads.

`read_scene` validates a file into a `SceneSpec`, `build_world` turns that into
a physics ``World`` and `load_scene` does both.  Every problem is reported as a
`SceneError` whose message names the file, entry and field.  The format is
documented in `scenes.schema`; shipped scenes live in `SCENE_DIR`.
"""

from .loader import (
                     SCENE_DIR,
                     SceneError,
                     apply_overrides,
                     build_world,
                     load_scene,
                     read_scene,
                     resolve_scene,
                     shipped_scenes,
)
from .schema import SceneSpec

__all__ = [
    "SCENE_DIR",
    "SceneError",
    "SceneSpec",
    "apply_overrides",
    "build_world",
    "load_scene",
    "read_scene",
    "resolve_scene",
    "shipped_scenes",
]
