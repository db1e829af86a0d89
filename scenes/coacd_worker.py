"""The child process that runs CoACD for scenes/decompose.py (never imported by Sharnir).

    python -P coacd_worker.py IN.npz OUT.npz

IN holds the mesh (`vertices` (n, 3) float64, `faces` (m, 3) int64) and the parameters
(`threshold`, `seed`, `remesh`: a resolution to remesh it at first, or 0); OUT gets the
pieces' vertices one after another (`vertices` (N, 3)) and each piece's vertex count
(`counts` (k,)). A process of its own, so that a mesh CoACD never finishes (some open
meshes) is stopped by the time limit and a crash in its C++ code is one failed
decomposition, not a crashed app. It imports numpy and coacd only (starting in a second or
less); CoACD's log is silenced.
"""
import sys

import numpy as np


def main(source: str, target: str) -> None:
    import coacd

    coacd.set_log_level("off")
    with np.load(source, allow_pickle=False) as data:
        vertices, faces = data["vertices"], data["faces"]
        threshold, seed, remesh = (float(data["threshold"]), int(data["seed"]),
                                   int(data["remesh"]))
    pieces = coacd.run_coacd(coacd.Mesh(vertices, faces.astype(np.int32)), threshold=threshold,
                             max_convex_hull=-1, seed=seed,
                             preprocess_mode="on" if remesh else "auto",
                             preprocess_resolution=remesh or 50)
    points = [np.asarray(v, dtype=np.float64).reshape(-1, 3) for v, _ in pieces]
    counts = np.array([len(v) for v in points], dtype=np.int64)
    stacked = np.concatenate(points) if points else np.zeros((0, 3))
    with open(target, "wb") as out:
        np.savez(out, vertices=stacked, counts=counts)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
