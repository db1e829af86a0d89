"""Shared builders and measuring helpers for the physics tests.

Everything here measures the simulator from the outside (positions, velocities, inertias it
was given); nothing computes an expected value from the simulator's own internals.
"""
import json
import math
import os
import subprocess
import sys
from pathlib import Path


def _pin_blas_kernels():
    """OpenBLAS picks its kernels by CPU model (SkylakeX where there is AVX-512, Haswell or Zen
    elsewhere), and numpy's @, norm and eigh round differently with each: a scene's inertia
    axes and quaternions were loaded 1e-16 apart on an AVX-512 machine, and three pinned runs
    (test_physics_determinism) went another way. The tests, and the processes they start,
    use the Haswell kernels (AVX2 and FMA, which every x86-64-v3 CPU has: physics/cache.py),
    as the pins were taken with (the Zen kernels give the same bits). OpenBLAS reads this
    when numpy loads it, so it is set before anything imports numpy."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return
    if {"avx2", "fma"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = BLAS_KERNELS


BLAS_KERNELS = "Haswell"
_pin_blas_kernels()
# a child process that crashes (a segmentation fault) prints where, in the failing test's message
os.environ.setdefault("PYTHONFAULTHANDLER", "1")

import numpy as np  # noqa: E402  (after the kernels are chosen)

from sharnir.physics.shape import Box, Capsule  # noqa: E402
from sharnir.physics.world import World  # noqa: E402

G = 9.81  # the worlds below use gravity (0, 0, -G)
REPO = Path(__file__).resolve().parents[1]


def run_headless_child(code, *args, cwd):
    """Run `code` in a fresh headless (EGL) Python process in `cwd` and return the JSON object
    it prints on its last line. A fresh process keeps pyglet's headless mode and GL state away
    from the other tests; the timeout leaves room for a cold numba compile."""
    env = dict(os.environ, PYGLET_HEADLESS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    # the app's own settings (recent files, window size) in the test's folder, unless the
    # test chose a folder: the user's would change the panel's layout (a list of recent
    # files moved the joints table away from where a test points)
    env.setdefault("XDG_CONFIG_HOME", str(Path(cwd).resolve() / ".config"))
    result = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


_DRAW_CHILD = """
import json, sys
import numpy as np
from sharnir.render.camera import OrbitCamera
from sharnir.render.context import OffscreenTarget, headless_context
from sharnir.render.renderer import Renderer
from sharnir.scenes import load_scene

out, W, H, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
window, ctx = headless_context(W, H)
pictures = {}
for scene in sys.argv[5:]:
    world = load_scene(scene)
    renderer, target = Renderer(ctx), OffscreenTarget(ctx, W, H)
    bounds = renderer.bounds(world.body_pos, world.body_quat, world.body_shapes)
    camera = OrbitCamera()
    camera.frame(bounds, aspect=W / H)
    renderer.fit_grid(bounds)
    for label, kwargs in variants.items():
        target.use()
        ctx.viewport = (0, 0, W, H)
        renderer.draw(camera, W / H, world.body_pos, world.body_quat, world.body_shapes,
                      body_visuals=world.body_visuals, **kwargs)
        rgb = np.frombuffer(target.read_rgb(), np.uint8).reshape(H, W, 3)[::-1]
        pictures[f"{scene}|{label}"] = rgb
    target.release()
    renderer.release()
np.savez(out, **pictures)
print(json.dumps({"ok": True}))
"""


def draw_scenes(folder, scenes, variants, size=(240, 180)):
    """Each scene file drawn by Renderer.draw once per variant (label -> keyword arguments of
    draw), framed by the default camera, in a headless (EGL) child process:
    {(file stem, label): (h, w, 3) uint8 picture, top row first}."""
    out = Path(folder) / "pictures.npz"
    run_headless_child(_DRAW_CHILD, out, size[0], size[1], json.dumps(variants), *scenes,
                       cwd=folder)
    with np.load(out) as data:
        return {(Path(key.split("|")[0]).stem, key.split("|")[1]): data[key]
                for key in data.files}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long physics run (tens of seconds)")


def pytest_sessionstart(session):
    """Compile the physics kernels (or load them from numba's cache) once, up front: the tests
    that start the app or the CLI in a subprocess then load them from the cache instead of each
    racing a cold compile of a minute or more against its own timeout."""
    world = World(dt=0.01)
    world.add_body("warm", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(0.1, 0.0, 0.0))
    world.add_joint("warm", "revolute", "world", "warm", anchor=(0.0, 0.0, 0.0), friction=0.1)
    world.step(1)


# ---- measuring ------------------------------------------------------------------------------

def random_rotation(rng):
    """A uniformly random rotation matrix (a normalised Gaussian quaternion)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rotation_matrices(q):
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) in (w, x, y, z) order."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def kinetic_energy(world, bodies):
    """sum 1/2 m v^2 + 1/2 w . (R diag(I) R^T) w over the given body indices."""
    idx = np.asarray(bodies)
    m = world.body_mass[idx]
    I = world.body_inertia[idx]
    v = np.asarray(world.body_vel)[idx]
    w = np.asarray(world.body_angvel)[idx]
    R = rotation_matrices(np.asarray(world.body_quat)[idx])
    wb = np.einsum("nji,nj->ni", R, w)          # body-frame angular velocity R^T w
    return 0.5 * float(np.sum(m * np.sum(v * v, axis=1)) + np.sum(I * wb * wb))


def potential_energy(world, bodies):
    idx = np.asarray(bodies)
    return G * float(np.sum(world.body_mass[idx] * np.asarray(world.body_pos)[idx, 2]))


def mechanical_energy(world, bodies):
    return kinetic_energy(world, bodies) + potential_energy(world, bodies)


def body_frame_angvel(world, i):
    R = rotation_matrices(np.asarray(world.body_quat[i]))
    return R.T @ np.asarray(world.body_angvel[i])


def quat_about_y(angle):
    """Rotation by `angle` about +y: takes body -z (0, 0, -1) to (-sin a, 0, -cos a)."""
    return (math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)


# ---- builders -------------------------------------------------------------------------------

# A rod pendulum: a 1 kg box 0.04 x 0.04 x 1.0 m (long axis = body z), hung by one end.
ROD_MASS = 1.0
ROD_HALF = (0.02, 0.02, 0.5)
ROD_D = 0.5                      # pivot to centre of mass, m
# inertia about the pivot axis y: box about its centre m (a^2 + c^2) / 3 (half extents a, c)
# plus the parallel-axis term m d^2 (exact for a box)
ROD_I_PIVOT = ROD_MASS * (ROD_HALF[0] ** 2 + ROD_HALF[2] ** 2) / 3 + ROD_MASS * ROD_D ** 2
PIVOT = np.array([0.0, 0.0, 2.0])


def rod_pendulum(joint="revolute", tilt=0.0, friction=0.0, limits=None, **world_kw):
    """A rod hanging from PIVOT, turned by `tilt` rad about +y from straight down (tilt < 0
    swings the centre towards +x). Revolute joints turn about +y. Returns the world."""
    w = World(**world_kw)
    down = np.array([-math.sin(tilt), 0.0, -math.cos(tilt)])
    w.add_body("rod", Box(ROD_HALF), mass=ROD_MASS, pos=PIVOT + ROD_D * down,
               quat=quat_about_y(tilt))
    w.add_joint("pivot", joint, "world", "rod", anchor=PIVOT, axis=(0.0, 1.0, 0.0),
                friction=friction, limits=limits)
    return w


# The 50-link chain of the brief: links 0.1 m, 0.1 kg, capsule r = 0.01, body z along the link.
CHAIN_N = 50
CHAIN_LINK = 0.1
CHAIN_MASS = 0.1
CHAIN_R = 0.01
# solid cylinder r = 0.01, L = 0.1: transverse m (3 r^2 + L^2) / 12, axial m r^2 / 2
CHAIN_I_T = CHAIN_MASS * (3 * CHAIN_R ** 2 + CHAIN_LINK ** 2) / 12
CHAIN_I_A = CHAIN_MASS * CHAIN_R ** 2 / 2
CHAIN_Z = 1.0
# (cos pi/4, 0, sin pi/4, 0): a quarter turn about +y, which takes body z onto world +x
CHAIN_QUAT = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)


def chain(friction=0.05, **world_kw):
    """Horizontal chain along +x at z = 1, at rest; joint i at x = 0.1 i joins link i-1 (or the
    world) to link i. Body i + 1 is link i."""
    w = World(**world_kw)
    prev = "world"
    for i in range(CHAIN_N):
        name = f"link{i}"
        w.add_body(name, Capsule(CHAIN_R, CHAIN_LINK / 2 - CHAIN_R), mass=CHAIN_MASS,
                   inertia=(CHAIN_I_T, CHAIN_I_T, CHAIN_I_A),
                   pos=(CHAIN_LINK * (i + 0.5), 0.0, CHAIN_Z), quat=CHAIN_QUAT)
        w.add_joint(f"ball{i}", "spherical", prev, name, anchor=(CHAIN_LINK * i, 0.0, CHAIN_Z),
                    friction=friction)
        prev = name
    return w


def chain_anchor_gaps(world):
    """|anchor on A - anchor on B| for every chain joint, from the body poses and the chain's
    geometry (joint i sits at the -z end of link i and the +z end of link i-1)."""
    pos = np.asarray(world.body_pos)[1:]
    R = rotation_matrices(np.asarray(world.body_quat)[1:])
    axis = R[:, :, 2]                                  # body z of each link, world frame
    tail = pos - 0.5 * CHAIN_LINK * axis               # joint i on link i
    head = pos + 0.5 * CHAIN_LINK * axis               # joint i + 1 on link i
    on_a = np.vstack([[0.0, 0.0, CHAIN_Z], head[:-1]])
    return np.linalg.norm(tail - on_a, axis=1)


def blas_kernels():
    """The kernels this process's OpenBLAS uses ("Haswell", "SkylakeX", ...), or None where
    numpy's OpenBLAS does not say (another BLAS, another platform)."""
    import ctypes
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line})
    except OSError:
        return None
    for path in paths:
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename"):
            get = getattr(ctypes.CDLL(path), name, None)
            if get is not None:
                get.restype = ctypes.c_char_p
                return get().decode()
    return None
