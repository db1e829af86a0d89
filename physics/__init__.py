"""Sharnir physics: articulated rigid bodies in maximal coordinates with Coulomb joint
friction, solved by warm-started sequential impulses (papers 000/003 and 002), and contacts
(papers 002, 001 and 004). The papers, and the equations each module cites ("paper 002, eq. 9"),
are listed in docs/papers.md.

Imports numpy and numba only (and trimesh, lazily, to build hulls). `World` is the entry point.
"""
from . import cache

cache.register()  # before any kernel module is imported
from . import threads  # noqa: E402, F401 (before numba starts its threads: the wait policy)
from .checkpoint import Checkpoint, CheckpointError  # noqa: E402
from .errors import (  # noqa: E402
    BoundError,
    EnergyJumpError,
    JointGapError,
    RunawayError,
    SimulationError,
)
from .shape import SHAPES, Box, Capsule, Cylinder, Ellipsoid, Plane, Sphere  # noqa: E402
from .specs import DCMotor, FrictionRegion, Material, Recording  # noqa: E402
from .world import World  # noqa: E402

__all__ = ["World", "Recording", "SimulationError", "BoundError", "RunawayError",
           "JointGapError", "EnergyJumpError", "Material", "FrictionRegion", "DCMotor", "Box",
           "Sphere", "Capsule", "Cylinder", "Ellipsoid", "Plane", "SHAPES", "Checkpoint",
           "CheckpointError"]
