"""Convex decomposition of collision meshes, on request (a mesh shape's ``decompose = true``,
a URDF robot's ``decompose``): CoACD (Wei et al., "Approximate convex decomposition for 3D
meshes with collision-aware concavity and tree search", SIGGRAPH 2022; the ``coacd``
package) cuts a closed mesh into convex pieces, and the mesh then collides as those pieces
(physics.shape.Decomposed) instead of its one convex hull.

    decompose(mesh, max_parts=32, concavity=0.05) -> (Decomposed or None, note or None)

* Cost: CoACD takes a second to a minute a mesh. It runs in a child process
  (scenes/coacd_worker.py) stopped after TIME_LIMIT_S: some meshes it never finishes, and a
  crash in its C++ code fails one decomposition, not the app. Its seed is fixed (SEED): the
  same mesh gives the same pieces.
* Cache: each result is kept on disk, in the folder beside the compiled kernels
  (`cache_folder()`: $SHARNIR_CACHE_DIR or ~/.cache/sharnir, then decompositions/), one
  ``.npz`` file a mesh, named by a SHA-256 of the triangles CoACD is given (the file's
  vertices times the shape's scale, and its faces: so the content counts, not the file's
  name or time), the concavity, the seed, CoACD's version and this format's. A file is
  written whole under another name, then renamed; one that cannot be read, or does not hold
  what its name says, is computed again, never trusted. A failure (CoACD stopped or
  crashed) is kept too, so that the next load does not wait for it again (a timeout only
  until the time limit is raised). Pieces are merged down to `max_parts` after the cache,
  so changing max_parts never runs CoACD again.
* What is not decomposed collides as its convex hull, as without the option, and the note
  says why: a mesh whose triangles enclose no volume (not watertight or not consistently
  wound: CoACD may never finish one), CoACD missing, stopped or failed.
* More pieces than max_parts are merged, the pair whose merged hull adds the least volume
  first, and the note says so ("45 -> 32 pieces"); a mesh of more than MAX_FACES triangles
  (a scan: CoACD's time grows with them, 160 s for 65,536) is remeshed coarser first, by
  CoACD's own manifold preprocess at REMESH_RESOLUTION (about 30 s for those 65,536), and
  the note says that too. The loader prints one warning line for the scene. Nothing is
  refused for its size alone.
"""
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

DEFAULT_MAX_PARTS = 32      # pieces a decomposed mesh keeps at most, unless its shape says
MAX_PARTS = 256             # ... and the most it may say
DEFAULT_CONCAVITY = 0.05    # CoACD's threshold: the concavity a piece may keep, a share of
MIN_CONCAVITY = 0.01        # the mesh's size; its default and range (smaller: finer, more
MAX_CONCAVITY = 1.0         # pieces, slower)
SEED = 0                    # CoACD's random seed: the same mesh gives the same pieces
MAX_FACES = 10_000          # a mesh of more triangles is remeshed coarser before the cut ...
REMESH_RESOLUTION = 20      # ... by CoACD's manifold preprocess at this resolution
TIME_LIMIT_S = 120.0        # s: CoACD is stopped after this long (one mesh)
FORMAT = 1                  # of the cache files: a change makes every entry stale
WORKER = Path(__file__).with_name("coacd_worker.py")


def cache_folder() -> Path:
    """Where decompositions are kept: the folder above the compiled kernels' (physics/cache.py:
    $SHARNIR_CACHE_DIR or ~/.cache/sharnir), then decompositions/."""
    from ..physics.cache import cache_dir

    return cache_dir().parent / "decompositions"


def coacd_version() -> str | None:
    """The installed coacd's version, or None where it is not installed."""
    try:
        return importlib.metadata.version("coacd")
    except importlib.metadata.PackageNotFoundError:
        return None


def cache_key(vertices, faces, concavity: float, version: str, remesh: int = 0) -> str:
    """The name of a mesh's decomposition in the cache: a SHA-256 of the triangles and the
    parameters (see the module; `remesh`: the resolution it is remeshed at first, or 0)."""
    v = np.ascontiguousarray(vertices, dtype="<f8")
    f = np.ascontiguousarray(faces, dtype="<i8")
    h = hashlib.sha256(f"sharnir decompose {FORMAT} coacd {version} threshold {concavity!r} "
                       f"seed {SEED} remesh {remesh} vertices {v.shape} faces {f.shape}\n"
                       .encode())
    h.update(v.tobytes())
    h.update(f.tobytes())
    return h.hexdigest()


class _Failed(Exception):
    """CoACD gave no pieces: `reason` (a few words); `limit`: the time limit it ran past, or 0;
    `keep`: whether the next load would fail the same way (kept in the cache)."""

    def __init__(self, reason: str, limit: float = 0.0, keep: bool = True):
        super().__init__(reason)
        self.reason, self.limit, self.keep = reason, limit, keep


def decompose(mesh, *, max_parts: int = DEFAULT_MAX_PARTS,
              concavity: float = DEFAULT_CONCAVITY):
    """(shape, note) for a physics.shape.Mesh: the Decomposed mesh and None, or with a note
    of how many pieces were merged into max_parts ("45 -> 32 pieces"); or None (it collides
    as its hull) and why not, a few words for the loader's warning."""
    from ..physics.shape import Decomposed, Hull

    if not mesh.closed:
        return None, ("its triangles enclose no volume: not watertight or not consistently "
                      "wound")
    version = coacd_version()
    if version is None:
        return None, "coacd is not installed (pip install coacd)"
    vertices, faces = mesh.mesh_vertices, mesh.mesh_faces
    remesh = REMESH_RESOLUTION if len(faces) > MAX_FACES else 0
    key = cache_key(vertices, faces, concavity, version, remesh)
    path = cache_folder() / f"{key}.npz"
    found = _read_entry(path, key)
    if found is None:
        try:
            found = _run_coacd(vertices, faces, concavity, remesh)
        except _Failed as failure:
            found = failure
        if not isinstance(found, _Failed) or found.keep:
            _write_entry(path, key, found)
    if isinstance(found, _Failed):
        return None, found.reason
    pieces = []
    for cloud in found:
        try:
            pieces.append(Hull(cloud, source=mesh.source))
        except ValueError:   # a flat sliver: the pieces around it cover it
            pass
    if not pieces:
        return None, "CoACD gave no piece with a volume"
    notes = [f"{len(faces):,} triangles remeshed at resolution {remesh}"] if remesh else []
    if len(pieces) > max_parts:
        clouds = _merged([p.vertices for p in pieces], max_parts)
        notes.append(f"{len(pieces)} -> {len(clouds)} pieces")
        pieces = [Hull(cloud, source=mesh.source) for cloud in clouds]
    return Decomposed(mesh, pieces), "; ".join(notes) or None


def _run_coacd(vertices, faces, concavity: float, remesh: int = 0) -> list:
    """The pieces' vertex clouds [(n_i, 3)] of CoACD's decomposition of a closed mesh (first
    remeshed at resolution `remesh`, if not 0), run in the worker process; _Failed where it
    cannot start, crashes or runs past TIME_LIMIT_S."""
    limit = float(TIME_LIMIT_S)
    with tempfile.TemporaryDirectory(prefix="sharnir-coacd-") as folder:
        source, target = os.path.join(folder, "mesh.npz"), os.path.join(folder, "pieces.npz")
        np.savez(source, vertices=np.asarray(vertices, dtype=np.float64),
                 faces=np.asarray(faces, dtype=np.int64), threshold=np.float64(concavity),
                 seed=np.int64(SEED), remesh=np.int64(remesh))
        try:
            done = subprocess.run([sys.executable, "-P", str(WORKER), source, target],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=limit, check=False)
        except subprocess.TimeoutExpired:
            raise _Failed(f"CoACD took more than {limit:g} s and was stopped; a larger "
                          "concavity is faster", limit) from None
        except OSError as exc:
            raise _Failed(f"cannot start CoACD ({exc.strerror or exc})", keep=False) from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = (lines[-1][:200] if lines and done.returncode > 0
                   else f"exit status {done.returncode}")
            raise _Failed(f"CoACD failed ({why})")
        clouds = _read_pieces(target)
        if clouds is None:
            raise _Failed("CoACD wrote no readable result", keep=False)
        return clouds


def _read_pieces(path, key: str | None = None):
    """The vertex clouds in an npz file of pieces (`vertices`, `counts`; with `key`, its `key`
    must be that), or None if it is not one; a failure entry as _Failed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if key is not None and str(data["key"]) != key:
                return None
            if "failure" in data.files:
                return _Failed(str(data["failure"]), float(data["limit"]))
            vertices, counts = data["vertices"], data["counts"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if (vertices.dtype != np.float64 or vertices.ndim != 2 or vertices.shape[1] != 3
            or counts.dtype.kind != "i" or counts.ndim != 1 or np.any(counts < 4)
            or int(counts.sum()) != len(vertices) or not np.all(np.isfinite(vertices))):
        return None
    return np.split(vertices, np.cumsum(counts)[:-1]) if len(counts) else []


def _read_entry(path: Path, key: str):
    """The cached result under `path` (clouds, or _Failed), or None: absent, unreadable, not
    what its name says, or a timeout under a shorter time limit than today's."""
    if not path.is_file():
        return None
    found = _read_pieces(path, key)
    if isinstance(found, _Failed) and found.limit and found.limit < TIME_LIMIT_S:
        return None
    return found


def _write_entry(path: Path, key: str, found) -> None:
    """Keep a result (clouds, or _Failed) under `path`: written whole to a temporary file in
    the same folder, then renamed over it. A cache that cannot be written is skipped."""
    if isinstance(found, _Failed):
        arrays = {"failure": np.str_(found.reason), "limit": np.float64(found.limit)}
    else:
        arrays = {"vertices": (np.concatenate(found) if found else np.zeros((0, 3))),
                  "counts": np.array([len(c) for c in found], dtype=np.int64)}
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}-",
                                             suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            np.savez(out, key=np.str_(key), **arrays)
        os.replace(temporary, path)
        temporary = None
    except OSError:
        pass
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _merged(clouds: list, cap: int) -> list:
    """`clouds` (the pieces' vertices) merged down to `cap` pieces: each time the pair whose
    merged convex hull adds the least volume to theirs (ties: the first pair), the merged
    piece keeping its hull's corners. Deterministic."""
    from scipy.spatial import ConvexHull

    def hull(points):
        h = ConvexHull(points)
        return points[h.vertices], float(h.volume)

    alive = {}
    for i, cloud in enumerate(clouds):
        alive[i] = hull(np.asarray(cloud, dtype=float))
    cost = {}

    def price(i, j):
        union = hull(np.concatenate([alive[i][0], alive[j][0]]))
        cost[i, j] = (union[1] - alive[i][1] - alive[j][1], union)

    ids = sorted(alive)
    for a, i in enumerate(ids):
        for j in ids[a + 1:]:
            price(i, j)
    fresh = len(clouds)
    while len(alive) > cap:
        i, j = min(cost, key=lambda pair: (cost[pair][0], pair))
        union = cost[i, j][1]
        del alive[i], alive[j]
        cost = {pair: c for pair, c in cost.items() if i not in pair and j not in pair}
        alive[fresh] = union
        for k in sorted(alive)[:-1]:
            price(k, fresh)
        fresh += 1
    return [alive[k][0] for k in sorted(alive)]
