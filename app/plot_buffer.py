"""PlotBuffer: the last few simulated seconds of every step's joint telemetry, for plotting.

Fed with snapshots as the window draws them, it takes each step exactly once: rows are
matched by step number against the snapshots' telemetry history, so a snapshot seen twice
adds nothing and snapshots never seen cost nothing as long as the history still reaches
back to the last step taken.  A load or reset (a new run) starts the buffer afresh; a grasp or
release (a new generation of the same run: joints made or removed, the world going on) keeps
the rows of the joints that remain, and a new joint's earlier rows are NaN.

The data are kept channel-major, so every series handed out (`t`, `series`) is one
contiguous array, as ImPlot wants; they are read-only views valid until the next `feed`.
"""
import contextlib
import csv
import os
import tempfile
from pathlib import Path

import numpy as np

from .snapshot import CONTACT_CHANNELS, JOINT_CHANNELS, STAT_CHANNELS, csv_columns, csv_header

MIN_CAPACITY = 1024
# Other names of the joint channels: the coordinate is an angle (rad) for revolute and
# spherical joints, a position (m) for prismatic ones, as in the CSV columns.
CHANNEL_ALIASES = {"angle": "coord", "position": "coord"}


class PlotBuffer:
    """The steps of the last `seconds` of simulated time, at most `max_rows` of them."""

    def __init__(self, seconds=10.0, max_rows=100_000):
        if not seconds > 0:
            raise ValueError(f"seconds must be > 0 (got {seconds})")
        if max_rows < 1:
            raise ValueError(f"max_rows must be >= 1 (got {max_rows})")
        self.seconds = float(seconds)
        self.max_rows = int(max_rows)
        self.generation = None
        self.run = None
        self.joint_names = ()
        self.joint_coord_names = ()
        self.motored = ()          # joints with a motor
        self.sensor_bodies = ()    # bodies with a contact sensor (Snapshot.sensor_bodies)
        self.sensor_names = ()
        self.missed = 0        # steps of this generation that no fed snapshot still held
        self._last_step = 0    # the last step taken
        self._allocate(0, 0, 0)

    def _allocate(self, njoint, nsensor, capacity):
        self._t = np.zeros(capacity)
        self._steps = np.zeros(capacity, np.int64)
        self._joint = np.zeros((njoint, len(JOINT_CHANNELS), capacity))
        self._contact = np.zeros((nsensor, len(CONTACT_CHANNELS), capacity))
        self._stats = np.zeros((len(STAT_CHANNELS), capacity))
        self._lo = self._hi = 0  # the live rows are [lo, hi)

    # ---- feeding ----------------------------------------------------------------------------
    def feed(self, snapshot):
        """Take the steps of `snapshot` not taken yet; returns how many rows were added."""
        history = snapshot.history
        if snapshot.generation != self.generation and snapshot.run == self.run:
            self.generation = snapshot.generation
            self._rejoint(snapshot)
        elif snapshot.generation != self.generation:
            self.generation, self.run = snapshot.generation, snapshot.run
            self.joint_names = snapshot.joint_names
            self.joint_coord_names = snapshot.joint_coord_names
            self.motored = tuple(j for j, _ in snapshot.motors)
            self.sensor_bodies = snapshot.sensor_bodies
            self.sensor_names = tuple(snapshot.body_names[i] for i in snapshot.sensor_bodies)
            self.missed = 0
            self._allocate(len(snapshot.joint_names), len(snapshot.sensor_bodies), 0)
            self._last_step = history[0].first_step - 1 if history else snapshot.step
        added = 0
        for chunk in history:
            if chunk.last_step <= self._last_step:
                continue
            self.missed += max(0, chunk.first_step - self._last_step - 1)
            skip = max(0, self._last_step + 1 - chunk.first_step)
            added += self._append(chunk, skip)
            self._last_step = chunk.last_step
        return added

    def _rejoint(self, snapshot):
        """The world's joints (or contact sensors) changed as it went on: each row of those
        that remain moves to its new place, by name; the new ones' past is NaN."""
        capacity = self._t.shape[0]
        joint = np.full((len(snapshot.joint_names), len(JOINT_CHANNELS), capacity), np.nan)
        old = {name: j for j, name in enumerate(self.joint_names)}
        for j, name in enumerate(snapshot.joint_names):
            if name in old:
                joint[j] = self._joint[old[name]]
        sensor_names = tuple(snapshot.body_names[i] for i in snapshot.sensor_bodies)
        contact = np.full((len(sensor_names), len(CONTACT_CHANNELS), capacity), np.nan)
        old = {name: i for i, name in enumerate(self.sensor_names)}
        for i, name in enumerate(sensor_names):
            if name in old:
                contact[i] = self._contact[old[name]]
        self._joint, self._contact = joint, contact
        self.joint_names = snapshot.joint_names
        self.joint_coord_names = snapshot.joint_coord_names
        self.motored = tuple(j for j, _ in snapshot.motors)
        self.sensor_bodies, self.sensor_names = snapshot.sensor_bodies, sensor_names

    def _append(self, chunk, skip):
        rows = slice(max(skip, len(chunk) - self.max_rows), len(chunk))
        k = rows.stop - rows.start
        # Drop the oldest rows that would exceed max_rows, then make room at the end.
        self._lo = max(self._lo, self._hi + k - self.max_rows)
        if self._hi + k > self._t.shape[0]:
            self._make_room(k)
        new = slice(self._hi, self._hi + k)
        self._t[new] = chunk.t[rows]
        self._steps[new] = np.arange(chunk.first_step + rows.start, chunk.first_step + rows.stop)
        self._joint[:, :, new] = chunk.joint[rows].transpose(1, 2, 0)
        self._contact[:, :, new] = chunk.contact[rows].transpose(1, 2, 0)
        self._stats[:, new] = chunk.stats[rows].T
        self._hi += k
        # Keep the last `seconds`: t grows with the step within one generation.
        live = self._t[self._lo:self._hi]
        self._lo += int(np.searchsorted(live, live[-1] - self.seconds, side="left"))
        return k

    def _make_room(self, k):
        """Move the live rows to the front, growing the arrays if they still do not fit; at
        twice the rows needed, the moves cost O(1) per row on average."""
        n = self._hi - self._lo
        capacity = self._t.shape[0]
        if n + k > capacity // 2:
            capacity = max(MIN_CAPACITY, 2 * (n + k))
        live = slice(self._lo, self._hi)
        t, steps = self._t[live].copy(), self._steps[live].copy()
        joint, stats = self._joint[:, :, live].copy(), self._stats[:, live].copy()
        contact = self._contact[:, :, live].copy()
        if capacity != self._t.shape[0]:
            self._allocate(self._joint.shape[0], self._contact.shape[0], capacity)
        self._t[:n], self._steps[:n], self._joint[:, :, :n], self._stats[:, :n] = \
            t, steps, joint, stats
        self._contact[:, :, :n] = contact
        self._lo, self._hi = 0, n

    def clear(self):
        """Forget the rows; feeding goes on from the last step taken."""
        self._lo = self._hi = 0

    # ---- reading ----------------------------------------------------------------------------
    def __len__(self):
        return self._hi - self._lo

    def _view(self, a):
        v = a[..., self._lo:self._hi]
        v.flags.writeable = False
        return v

    @property
    def t(self):
        """(n,) simulated time of each row, s."""
        return self._view(self._t)

    @property
    def steps(self):
        """(n,) the step number of each row (consecutive unless `missed` > 0)."""
        return self._view(self._steps)

    @property
    def joint(self):
        """(njoint, len(JOINT_CHANNELS), n): channels JOINT_CHANNELS of every joint."""
        return self._view(self._joint)

    @property
    def contact(self):
        """(nsensor, 6, n): channels CONTACT_CHANNELS of every contact sensor body."""
        return self._view(self._contact)

    def contact_series(self, body, channel):
        """(n,) a contact sensor's (body name or index into the world's bodies) channel: a
        name in CONTACT_CHANNELS or "force" (the magnitude |F|), N or N m."""
        i = (self.sensor_names.index(body) if isinstance(body, str)
             else self.sensor_bodies.index(body))
        if channel == "force":
            return np.linalg.norm(self._view(self._contact[i, :3]), axis=0)
        if channel not in CONTACT_CHANNELS:
            raise KeyError(f"no contact channel {channel!r}; the channels are force, "
                           f"{', '.join(CONTACT_CHANNELS)}")
        return self._view(self._contact[i, CONTACT_CHANNELS.index(channel)])

    @property
    def stats(self):
        """(3, n): solver statistics STAT_CHANNELS."""
        return self._view(self._stats)

    def series(self, joint, channel):
        """(n,) one joint's (name or index) channel: a name in JOINT_CHANNELS (or "angle" /
        "position" for "coord"), or its index. Units: rad or m, rad/s or m/s, N m or N, V, A."""
        j = self.joint_names.index(joint) if isinstance(joint, str) else joint
        if isinstance(channel, str):
            channel = CHANNEL_ALIASES.get(channel, channel)
            if channel not in JOINT_CHANNELS:
                raise KeyError(f"no channel {channel!r}; the channels are "
                               f"{', '.join(JOINT_CHANNELS)}")
            channel = JOINT_CHANNELS.index(channel)
        return self._view(self._joint[j, channel])

    # ---- saving -----------------------------------------------------------------------------
    def to_csv(self, path):
        """Write the rows as CSV, the columns of ``sharnir run --csv`` (snapshot.csv_header):
        t, every joint's angle (or position), velocity, friction, sliding (0 or 1), the motors'
        voltage, current, torque and rotor speed, every joint's reaction, every contact
        sensor's force and torque. The file is replaced whole or not at all."""
        path = Path(path)
        header = csv_header(self.joint_names, self.joint_coord_names, self.motored,
                            self.sensor_names)
        columns = [c.tolist() for c in csv_columns(
            self.t, self.joint.transpose(2, 0, 1), self.motored,
            self.contact.transpose(2, 0, 1))]
        path.parent.mkdir(parents=True, exist_ok=True)
        # A hidden temporary file in the same folder, renamed over the target when complete.
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(header)
                writer.writerows(zip(*columns))
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
