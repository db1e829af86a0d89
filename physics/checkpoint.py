"""Checkpoints: everything a step reads from the step before, saved and restored bit for bit
(World.save_state, World.restore_state; MuJoCo's mj_getState / mj_setState).

A Checkpoint holds copies of arrays by name:

    state.<field>        every State field (model.py): time, step count, poses, velocities,
                         angular momenta, user forces, the drag, the motors' voltage, current
                         and rotor speed, the joints' warm-start impulses and coordinates...
    contacts.<field>     the contact points of the last step (contact.ContactPoints: count
                         and the first `count` rows of POINT_FIELDS): the contacts' warm
                         start and manifold reuse
    work.<name>          the work arrays a step carries over (WORK_CARRIED: the motors' and
                         couplings' warm starts, the rows the rotors turned with)
    trees.node_lam       the trees' block warm start (solver.articulation = "tree")

and the world's fingerprint (its bodies, joints and motors by name, and how many collision
geometries it has): a checkpoint restores only into a world of the same model. What it does
not hold: the model (masses, friction limits, gains, set-points and the settings: a live edit
made after saving stays), and a Python hook's own variables (World.set_hook: a controller
that keeps a phase or an integral in Python resumes with its own, not the saved one's).

Saved as `.npz` (numpy's format, no pickles), written to a temporary name and renamed.
"""
import os
from dataclasses import dataclass

import numpy as np

FORMAT = 1                # of the .npz files: a file of another format is refused
_FINGERPRINT = "fingerprint"
_FORMAT_KEY = "format"


class CheckpointError(ValueError):
    """A checkpoint that cannot be restored here, or a file that holds none."""


@dataclass(frozen=True)
class Checkpoint:
    fingerprint: tuple      # (body names, joint names, motor joints' names, geometries)
    arrays: dict            # name -> a private copy (see the module)

    @property
    def time(self):
        """The simulated time it was saved at, s."""
        return float(self.arrays["state.time"][0])

    def write(self, file):
        """Write it as .npz to the binary file object `file`."""
        names, joints, motors, geoms = self.fingerprint
        np.savez(file, **{_FORMAT_KEY: np.array(FORMAT),
                          f"{_FINGERPRINT}.bodies": np.array(names, dtype=str),
                          f"{_FINGERPRINT}.joints": np.array(joints, dtype=str),
                          f"{_FINGERPRINT}.motors": np.array(motors, dtype=str),
                          f"{_FINGERPRINT}.geoms": np.array(geoms)},
                 **self.arrays)

    def save(self, path):
        """Write it to `path` (.npz), whole or not at all (a temporary name, then renamed)."""
        path = os.fspath(path)
        part = f"{path}.{os.getpid()}.part"
        try:
            with open(part, "wb") as f:
                self.write(f)
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.unlink(part)

    @classmethod
    def load(cls, path):
        """The checkpoint in the .npz file at `path`; CheckpointError naming the file if it
        holds none (or another format's)."""
        path = os.fspath(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                if _FORMAT_KEY not in data.files or int(data[_FORMAT_KEY]) != FORMAT:
                    raise CheckpointError(f"{path}: not a Sharnir state file (format "
                                          f"{FORMAT})")
                fingerprint = (tuple(str(x) for x in data[f"{_FINGERPRINT}.bodies"]),
                               tuple(str(x) for x in data[f"{_FINGERPRINT}.joints"]),
                               tuple(str(x) for x in data[f"{_FINGERPRINT}.motors"]),
                               int(data[f"{_FINGERPRINT}.geoms"]))
                arrays = {name: np.array(data[name]) for name in data.files
                          if name != _FORMAT_KEY and not name.startswith(_FINGERPRINT)}
        except CheckpointError:
            raise
        except (OSError, ValueError, KeyError, EOFError) as exc:
            # (a missing or unreadable file, not a zip, a member missing or damaged)
            raise CheckpointError(f"{path}: cannot read a state from it ({exc})") from None
        return cls(fingerprint, arrays)


def mismatch(saved, here):
    """None if a checkpoint of the fingerprint `saved` fits a world of `here`; else why not,
    one line."""
    what = ("bodies", "joints", "motors")
    for name, a, b in zip(what, saved[:3], here[:3]):
        if tuple(a) != tuple(b):
            extra = [x for x in a if x not in b][:3]
            missing = [x for x in b if x not in a][:3]
            return (f"its {name} are not this world's ({len(a)} saved, {len(b)} here"
                    + (f"; saved, not here: {', '.join(map(repr, extra))}" if extra else "")
                    + (f"; here, not saved: {', '.join(map(repr, missing))}" if missing
                       else "") + ")")
    if saved[3] != here[3]:
        return (f"it was saved with {saved[3]} collision geometries and this world has "
                f"{here[3]}")
    return None
