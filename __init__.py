"""Sharnir: a real-time simulator of articulated rigid bodies with Coulomb joint friction and
contacts and DC motors in the joints, solved by warm-started sequential impulses. The
source papers: docs/papers.md; the layout: ARCHITECTURE.md.

    from . import World, load_scene

`sharnir.physics` is the engine (numpy and numba only), `sharnir.scenes` reads scene files,
`sharnir.render` draws snapshots with OpenGL and `sharnir.app` is the desktop app and the
`sharnir` command. The shipped scenes are listed by `sharnir --list` and `shipped_scenes()`.
"""
from .physics import (
    SHAPES,
    Box,
    Capsule,
    Cylinder,
    DCMotor,
    Ellipsoid,
    FrictionRegion,
    Material,
    Plane,
    Recording,
    SimulationError,
    Sphere,
    World,
)
from .scenes import SceneError, build_world, load_scene, read_scene, shipped_scenes

__version__ = "0.1.0"

__all__ = ["World", "Recording", "SimulationError", "Material", "FrictionRegion", "DCMotor",
           "Box", "Sphere",
           "Capsule", "Cylinder", "Ellipsoid", "Plane", "SHAPES", "SceneError", "build_world",
           "load_scene", "read_scene", "shipped_scenes", "__version__"]
