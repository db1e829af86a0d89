"""The physics thread: steps a World at a fixed dt, paced to the wall clock, and publishes
Snapshots for the window to draw.

After `start()` only this thread touches the World.  Other threads talk to it with
commands (`send`) and read it through `snapshot`, the latest published `Snapshot`.  Each
loop iteration does all the steps that are due in one `World.run(k)` call -- one nogil
kernel call -- so the render thread runs beside it rather than waiting for the GIL.

No exception ends the thread: a refused command is reported in the snapshot's `error`, and
a simulation that goes non-finite pauses with the engine's message there; so does any
exception of a stage the loop runs by itself (stepping, publishing), reported once rather
than at every iteration. A step beyond a stated bound (physics.BoundError: a body beyond
the speed bounds, a joint pulled apart, energy from nothing; finite, but an explosion, not
physics) pauses the same way; Resume or Step then goes on with that check off for this world
(Reset or a load brings it back), as the message says.
One call steps for at most about MAX_CALL_S of wall time, so commands are answered within
that (or one step, if a step takes longer) at any dt.
"""
import bisect
import dataclasses
import math
import queue
import sys
import threading
import time
import warnings
from collections import deque
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ..physics import BoundError, RunawayError, SimulationError, World
from ..physics.settings import SETTINGS
from ..physics.warmup import compile_step, load_cached, step_signature
from ..scenes import load_scene
from .commands import (
    ApplyKeyframe,
    CaptureKeyframe,
    ClearDrag,
    Command,
    Configure,
    Load,
    MoveBody,
    Pause,
    Quit,
    Reset,
    Resume,
    ResumeController,
    Rewind,
    SetBodyForce,
    SetDrag,
    SetFriction,
    SetSpeed,
    SetTarget,
    SetVoltage,
    Step,
)
from .printable import printable
from .snapshot import Snapshot, Telemetry

SPEED_MIN, SPEED_MAX = SETTINGS["speed"].min, SETTINGS["speed"].max
# Simulated seconds one iteration may catch up: a scene slower than real time falls behind
# (the real-time factor shows it) instead of owing ever more steps (a spiral of death).
MAX_CATCH_UP_S = 0.1
# Wall seconds one World.run call may take, from the measured time per step: with a tiny dt
# or a heavy scene the steps due are done in several calls, commands answered in between.
MAX_CALL_S = 0.05
MAX_STEPS_PER_CALL = 10_000  # bounds the recording one call allocates
# The stages the loop runs by itself: if one raises, the thread pauses (it would raise again
# at every iteration) and the exception is reported once.
STAGES = frozenset({"starting the physics", "stepping", "publishing"})
# The shortest wait between iterations: with a tiny dt, steps are batched rather than run
# one Python round trip each.
MIN_WAIT_S = 0.001
RTF_WINDOW_S = 1.0  # wall seconds the achieved real-time factor is averaged over
# Telemetry kept in each snapshot's history: a reader polling at least this often (in
# wall seconds) misses no step. The row cap bounds memory when dt is tiny.
HISTORY_S = 1.0
# The timeline: a state (physics.checkpoint) kept every TIMELINE_PERIOD_S of simulated time,
# the oldest dropped beyond TIMELINE_MB (the biped's 14 kB states: 74 s; 1000 ellipsoids'
# 228 kB: 4.7 s), for going back (Rewind) and resuming from there.
TIMELINE_PERIOD_S = 1.0 / 60.0
TIMELINE_MB = 64.0
HISTORY_MAX_ROWS = 20_000
# The interpreter's thread switch interval while the thread runs (default 5 ms): the render
# thread gets the GIL back quickly whenever this thread runs Python between kernel calls.
SWITCH_INTERVAL_S = 0.0005


def _load_if_cached(sig):
    """PhysicsThread.preload's thread: the step for `sig` from numba's cache, if it is
    there (any failure is left to the physics thread's compile_step to meet and report)."""
    try:
        load_cached(sig)
    except Exception:   # noqa: BLE001 -- only an early start: run() does it properly
        pass


class PhysicsThread(threading.Thread):
    """Runs the world from `source`: a scene file path, or a function returning a World.

    The first world is built here, in the caller's thread, so a bad scene file raises
    `SceneError` at once. `scene` names a world built in code (default: the function's
    name). The thread starts running unless `paused`. Every scene file it loads may read
    files from the folders `asset_roots` besides its own (scenes.asset_roots).
    """

    def __init__(self, source, *, scene=None, speed=1.0, paused=False, asset_roots=(),
                 robot=None):
        # A daemon: if the program dies without stop() (an exception in the window code),
        # the process still ends instead of waiting forever on this thread.
        super().__init__(name="physics", daemon=True)
        if not callable(source):
            source = str(source)
        self._source = source
        self._asset_roots = tuple(asset_roots)
        self._robot = dict(robot or {})   # how the URDF robot in `source` is read (Load)
        self._commands = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._snapshot = None
        self._saved_switch_interval = None
        self._speed = SETTINGS["speed"].check(speed)
        self._paused = bool(paused)
        self._ready = False
        self._compile_progress = None   # (kernels done, total, seconds) while compiling
        self._error, self._error_count = None, 0
        self._warning = None
        self._runaway = ()          # the settings whose check paused this world (BoundError)
        self._generation = 0
        self._run = 0               # Snapshot.run
        self._owed = 0.0            # simulated seconds due but not yet stepped
        self._sim_total = 0.0       # simulated seconds stepped, over all worlds (for the RTF)
        self._rates = deque()       # (wall s, _sim_total) samples for the RTF
        self._pending = []          # Recordings stepped since the last publish
        self._history = deque()     # (wall s, Telemetry) published recently
        self._history_rows = 0
        self._changed = False
        self._modes_seen, self._modes = None, ()   # World.motor_modes (_motor_modes)
        self._timeline = deque()    # (time, Checkpoint, bytes) kept, oldest first
        self._timeline_bytes = 0
        self._timeline_at = None    # the index gone back to (Rewind), until stepping on
        self._keyframe_capture = None   # (serial, time, World.keyframe_state()): CaptureKeyframe
        self._install(self._build(source, self._robot), scene or self._scene_name(source))
        self._publish()

    def preload(self):
        """Start loading the world's step kernel from numba's cache on a thread of its own
        and return that thread: the window opens meanwhile (numba's loading waits in LLVM,
        without the interpreter), and `run` finds the kernel loaded. Join it before `start`.
        A kernel not in the cache is left to `run` (compiled, with progress)."""
        sig = step_signature(self._world)   # (here: the world is only read by one thread)
        loader = threading.Thread(target=_load_if_cached, args=(sig,), daemon=True,
                                  name="sharnir-kernel-load")
        loader.start()
        return loader

    # ---- the other threads' side ----------------------------------------------------------
    @property
    def snapshot(self):
        """The latest published Snapshot (never None, never half-written)."""
        with self._lock:
            return self._snapshot

    def send(self, command):
        """Queue a command; the thread applies it before its next step."""
        if not isinstance(command, Command):
            raise TypeError(f"not a physics command: {command!r}")
        self._commands.put(command)

    def start(self):
        """Start the thread; until `stop`, the interpreter switches threads every 0.5 ms."""
        self._saved_switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        super().start()

    def stop(self, timeout=5.0):
        """Ask the thread to end (after the commands already sent) and wait up to `timeout`
        s; True if it has ended."""
        self.send(Quit())
        if self.ident is not None:
            self.join(timeout)
        if self.is_alive():
            return False
        if self._saved_switch_interval is not None:
            sys.setswitchinterval(self._saved_switch_interval)
            self._saved_switch_interval = None
        return True

    # ---- the loop ---------------------------------------------------------------------------
    def run(self):
        self._guarded("starting the physics", self._warm_up)
        last = time.perf_counter()
        wait = MIN_WAIT_S
        while True:
            commands = self._receive(wait)
            now = time.perf_counter()
            if not self._paused:
                self._owed = min(self._owed + (now - last) * self._speed, MAX_CATCH_UP_S)
            last = now
            for command in commands:
                if isinstance(command, Quit):
                    self._guarded("publishing", self._publish)
                    return
                self._guarded(type(command).__name__, self._apply, command)
            if not self._paused:
                self._guarded("stepping", self._step_due)
            if self._changed:
                self._guarded("publishing", self._publish)
            # Sleep until the next step is due; a command wakes the thread earlier.
            wait = None if self._paused else max(
                MIN_WAIT_S, (self._world.dt - self._owed) / self._speed)

    def _warm_up(self):
        self._compile()
        if not self._paused:
            self._start_rates()
        self._publish()

    def _compile(self):
        """Make the world's step kernel ready: loaded from numba's cache, or compiled in a
        child process (the window keeps the interpreter) with its progress published."""
        self._ready = False
        self._compile_progress = None
        self._publish()
        try:
            compile_step(self._world, self._publish_compile_progress)
        finally:
            self._ready = True
            self._compile_progress = None

    def _publish_compile_progress(self, done, total, elapsed):
        self._compile_progress = (int(done), int(total), float(elapsed))
        with self._lock:
            if self._snapshot is not None:
                self._snapshot = replace(self._snapshot,
                                         compile_progress=self._compile_progress)

    def _receive(self, wait):
        """The commands that arrive within `wait` s (None: until one does), in order."""
        try:
            commands = [self._commands.get(timeout=wait)]
        except queue.Empty:
            return []
        while True:
            try:
                commands.append(self._commands.get_nowait())
            except queue.Empty:
                return commands

    def _step_due(self):
        dt = self._world.dt
        k = math.floor(self._owed / dt + 1e-9)  # the epsilon absorbs rounding of owed
        # At most MAX_CALL_S of stepping: the rest stays owed (capped at MAX_CATCH_UP_S) and
        # is stepped at the next iteration, after the commands that came meanwhile.
        k = min(k, MAX_STEPS_PER_CALL, max(1, int(MAX_CALL_S / self._step_s)))
        if k > 0:
            self._owed = max(0.0, self._owed - k * dt)
            self._advance(k)

    def _advance(self, k):
        if self._timeline_at is not None:   # stepping on from a state gone back to: the
            while len(self._timeline) > self._timeline_at + 1:   # kept future is rewritten
                self._timeline_bytes -= self._timeline.pop()[2]
            self._timeline_at = None
        try:
            rec = self._world.run(k)
        except BoundError as exc:
            self._set_paused(True)
            self._runaway = exc.switch_off
            checks = "the speed checks" if isinstance(exc, RunawayError) else "this check"
            self._report(f"{exc}; paused (reset to start again, or resume to go on without "
                         f"{checks})")
            return
        except SimulationError as exc:
            self._set_paused(True)
            self._report(f"{exc}; paused (reset to start again)")
            return
        self._pending.append(rec)
        if tuple(self._world.joint_names) != self._static["joint_names"]:
            self._joints_changed()
        if rec.wall_s > 0.0:  # the time per step, for the next call's size
            self._step_s = max(rec.wall_s / k, 1e-7)
        self._step += k
        self._sim_total += k * self._world.dt
        self._keep_state()
        if not self._paused:
            self._sample_rate(time.perf_counter())
        self._changed = True

    def _keep_state(self):
        """Keep the world's state on the timeline if TIMELINE_PERIOD_S has passed since the
        last one kept; drop the oldest beyond TIMELINE_MB."""
        t = self._world.time
        if self._timeline and t < self._timeline[-1][0] + TIMELINE_PERIOD_S * (1 - 1e-9):
            return
        checkpoint = self._world.save_state()
        size = sum(a.nbytes for a in checkpoint.arrays.values())
        self._timeline.append((t, checkpoint, size))
        self._timeline_bytes += size
        while len(self._timeline) > 1 and self._timeline_bytes > TIMELINE_MB * 2**20:
            self._timeline_bytes -= self._timeline.popleft()[2]

    def _rewind(self, t, back):
        """Pause at the kept state at or before time `t` (the first kept if none), or `back`
        kept states before the current one; the plot starts again from there (a new run)."""
        if not self._timeline:
            self._report("rewind: no state kept yet")
            return
        times = [entry[0] for entry in self._timeline]
        if back > 0:
            now = (self._timeline_at if self._timeline_at is not None else
                   bisect.bisect_left(times, self._world.time - TIMELINE_PERIOD_S * 1e-6))
            index = max(0, now - back)
        else:
            index = max(0, bisect.bisect_right(times, t + TIMELINE_PERIOD_S * 1e-6) - 1)
        self._set_paused(True)
        if self._pending:
            self._publish()   # the steps before going back go out under their own run
        self._world.restore_state(self._timeline[index][1])
        self._timeline_at = index
        self._generation += 1   # (a new run of this world: the plot starts again)
        self._run += 1
        self._step = 0
        self._pending.clear()
        self._history.clear()
        self._history_rows = 0
        self._changed = True

    def _guarded(self, what, action, *args):
        """Run one action; an exception becomes a reported problem, never the thread's end.
        A stage of the loop that raises pauses the thread, so it is reported once."""
        try:
            action(*args)
        except Exception as exc:  # noqa: BLE001  (a bug must not stop the simulation)
            message = f"{what}: {type(exc).__name__}: {exc}"
            if what in STAGES:
                self._set_paused(True)
                message += "; paused (resume or reset to try again)"
            self._report(message)
            if what == "publishing":
                self._publish_error()

    # ---- commands ---------------------------------------------------------------------------
    def _apply(self, command):
        self._changed = True
        match command:
            case Pause():
                self._set_paused(True)
            case Resume():
                self._past_runaway()
                self._set_paused(False)
            case Step():
                self._past_runaway()
                self._set_paused(True)
                self._advance(1)
            case Rewind(time=t, back=back):
                self._rewind(t, back)
            case CaptureKeyframe():   # (a Python walk over the joints: on request only)
                serial = self._keyframe_capture[0] + 1 if self._keyframe_capture else 1
                self._keyframe_capture = (serial, float(self._world.time), MappingProxyType(
                    self._world.keyframe_state()))
                self._changed = True
            case ApplyKeyframe(name=name):
                keys = getattr(self._world, "keyframes", {})
                if name not in keys:
                    self._report(f"keyframe: the scene has no keyframe {name!r}")
                else:
                    self._refusing("keyframe", self._world.apply_keyframe, **keys[name],
                                   name=f"keyframe {name!r}")
                    self._keep_state()
            case Reset():
                self._replace(self._source, f"reset: could not rebuild {self._scene}",
                              self._robot)
            case Load(path=path, robot=robot):
                self._replace(str(path), None, dict(robot or {}))
            case SetSpeed(factor=factor):
                self._set_speed(factor)
            case Configure(settings=settings):
                self._refusing("configure", self._world.configure, **settings)
                if "articulation" in settings:   # another step variant: warmup.py
                    self._compile()
            case SetFriction(joint=joint, value=value):
                self._refusing("friction", self._world.set_friction, joint, value)
            case SetVoltage(joint=joint, value=value):
                self._refusing("voltage", self._world.set_voltage, joint, value)
            case SetTarget(joint=joint, value=value):
                self._refusing("set-point", self._world.set_target, joint, value)
            case ResumeController(joint=joint):
                self._refusing("controller", self._world.resume_controller, joint)
            case SetBodyForce(body=body, force=force, torque=torque):
                self._refusing("body force", self._world.set_body_force, body, force, torque)
            case SetDrag(body=body, point=point, target=target, quat=quat):
                self._refusing("drag", self._world.set_drag, body, point, target, quat=quat)
            case ClearDrag():
                self._world.clear_drag()
            case MoveBody(body=body, pos=pos, quat=quat):
                self._refusing("move body", self._world.set_body_pose, body, pos, quat)

    def _refusing(self, what, action, *args, **kwargs):
        """Apply a live edit; a refused value (the World checks) keeps the old one."""
        try:
            action(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            self._report(f"{what}: {exc}; the previous value is kept")

    def _past_runaway(self):
        """Going on after a pause for a bound (a runaway, a joint gap, an energy jump): that
        check is turned off for this world (it would fire again at once), as the pause's
        message said."""
        if self._runaway:
            self._world.configure(**dict.fromkeys(self._runaway, 0.0))
            self._runaway = ()

    def _set_paused(self, paused):
        if paused:
            self._owed = 0.0
        elif self._paused:
            self._start_rates()
        self._paused = paused

    def _set_speed(self, factor):
        try:
            value = SETTINGS["speed"].check(factor)  # (also refuses NaN)
        except ValueError as exc:
            self._report(f"{exc}; the previous value is kept")
            return
        self._speed = value
        self._start_rates()

    def _replace(self, source, failure, robot):
        """Build a world from `source` (a URDF robot read with the `robot` options) and run
        it instead of the current one; if that fails the current world keeps running and
        the reason is reported."""
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                world = self._build(source, robot)
        except Exception as exc:  # noqa: BLE001  (SceneError, or anything a factory raises)
            self._report(f"{failure}: {exc}" if failure else str(exc))
            return
        self._warning = printable("; ".join(dict.fromkeys(  # (once each, in order)
            " ".join(str(w.message).split()) for w in caught))) or None
        if self._pending:
            self._publish()  # the old world's last steps go out under its own generation
        self._source, self._robot = source, robot
        self._install(world, self._scene_name(source))
        if self._ready:   # a world of the other kind (with or without contacts) compiles here
            self._compile()
        self._changed = True

    # ---- worlds -----------------------------------------------------------------------------
    def _build(self, source, robot):
        if callable(source):
            world = source()
            if not isinstance(world, World):
                raise TypeError(f"the world factory returned {type(world).__name__}, "
                                "not a World")
            return world
        return load_scene(source, asset_roots=self._asset_roots, robot=robot)

    @staticmethod
    def _scene_name(source):
        """A name to show: a file name that is not UTF-8 has its bytes as escapes."""
        name = getattr(source, "__name__", "world") if callable(source) else Path(source).stem
        return printable(name)

    def _install(self, world, scene, run_on=False):
        """A new world on show (run_on: the same world going on, its joints changed)."""
        self._world, self._scene = world, scene
        self._generation += 1
        self._run += 0 if run_on else 1
        self._step_s = MAX_CALL_S / 16  # until measured: the first call does at most 16 steps
        self._step = 0
        self._pending.clear()
        self._history.clear()
        self._history_rows = 0
        self._error = None
        self._runaway = ()
        self._timeline.clear()   # (a checkpoint restores only into its own model)
        self._timeline_bytes, self._timeline_at = 0, None
        self._keep_state()
        # What does not change while this world runs, shared by all its snapshots.
        self._static = dict(
            description=getattr(world, "description", ""),
            keyframes=tuple(getattr(world, "keyframes", {})),
            robot=(MappingProxyType(dict(self._robot)) if not callable(self._source)
                   and Path(self._source).suffix.lower() == ".urdf" else None),
            body_names=tuple(world.body_names), body_shapes=tuple(world.body_shapes),
            body_visuals=tuple(world.body_visuals),
            body_jointed=tuple(world.body_jointed), joint_limits=tuple(world.joint_limits),
            body_island=tuple(int(i) for i in world.body_island),
            joint_names=tuple(world.joint_names), joint_types=tuple(world.joint_types),
            joint_coord_names=tuple(world.joint_coord_name(j)
                                    for j in range(len(world.joint_names))),
            body_mass=_read_only(world.body_mass), body_inertia=_read_only(world.body_inertia),
            motors=tuple((j, motor) for j, motor in world.motors),
            joint_bodies=tuple(tuple(int(b) for b in pair) for pair in world.joint_bodies),
            sensor_bodies=tuple(int(i) for i in world.sensor_bodies))

    def _joints_changed(self):
        """A controller hook grasped or released (a joint made or removed at run time): the
        telemetry's columns change, so what was recorded is published and a new generation
        begins, with the world, its run and its time going on (the plots keep the joints that
        remain: PlotBuffer)."""
        self._publish()
        step = self._step
        self._install(self._world, self._scene, run_on=True)
        self._step = step
        self._changed = True

    # ---- publishing -------------------------------------------------------------------------
    def _report(self, message):
        self._error = printable(message)  # a file name in it may not be UTF-8
        self._error_count += 1
        self._changed = True

    def _start_rates(self):
        self._rates.clear()
        self._rates.append((time.perf_counter(), self._sim_total))

    def _sample_rate(self, now):
        self._rates.append((now, self._sim_total))
        while len(self._rates) > 2 and self._rates[1][0] <= now - RTF_WINDOW_S:
            self._rates.popleft()

    def _realtime_factor(self):
        if self._paused or len(self._rates) < 2:
            return 0.0
        (w0, s0), (w1, s1) = self._rates[0], self._rates[-1]
        return (s1 - s0) / (w1 - w0) if w1 > w0 else 0.0

    def _telemetry(self):
        """The pending recordings as one chunk, added to the history."""
        nj = len(self._static["joint_names"])
        first = self._step + 1 - sum(len(rec.t) for rec in self._pending)
        if not self._pending:
            return Telemetry.empty(first, nj, len(self._static["sensor_bodies"]))
        recs, self._pending = self._pending, []
        chunk = Telemetry(first, np.concatenate([r.t for r in recs]),
                          np.concatenate([r.joint for r in recs]),
                          np.concatenate([r.stats for r in recs]),
                          np.concatenate([r.contact for r in recs]))
        now = time.perf_counter()
        self._history.append((now, chunk))
        self._history_rows += len(chunk)
        while len(self._history) > 1 and (self._history[0][0] < now - HISTORY_S
                                          or self._history_rows > HISTORY_MAX_ROWS):
            self._history_rows -= len(self._history.popleft()[1])
        return chunk

    def _publish(self):
        w = self._world
        anchor, axis = w.joint_frames_world()
        contacts = w.contacts()
        snapshot = Snapshot(
            scene=self._scene, source=None if callable(self._source) else self._source,
            generation=self._generation, run=self._run, step=self._step, time=w.time, dt=w.dt,
            paused=self._paused, ready=self._ready, speed=self._speed,
            compile_progress=self._compile_progress,
            realtime_factor=self._realtime_factor(), settings=w.settings,
            threads=w.threads_used,
            body_pos=w.body_pos, body_quat=w.body_quat, friction_limit=w.joint_friction_limit,
            telemetry=self._telemetry(), history=tuple(c for _, c in self._history),
            error=self._error, error_count=self._error_count, warning=self._warning,
            timeline=((self._timeline[0][0], self._timeline[-1][0]) if self._timeline
                      else None),
            joint_anchor=anchor,
            joint_axis=axis, contact_point=contacts["point"], contact_normal=contacts["normal"],
            contact_force=contacts["force"], contact_sliding=contacts["sliding"],
            motor_state=_read_only_motors(w.motor_state), motor_modes=self._motor_modes(),
            joint_reaction=w.joint_reaction, body_contact=w.body_contact,
            keyframe_capture=self._keyframe_capture,
            **_drag_fields(w.drag), **self._static)
        with self._lock:
            self._snapshot = snapshot
        self._changed = False

    def _motor_modes(self):
        """World.motor_modes, read again only when the world says they changed."""
        w = self._world
        if self._modes_seen != (w, w.controllers_changed):
            self._modes_seen = (w, w.controllers_changed)
            self._modes = w.motor_modes
        return self._modes

    def _publish_error(self):
        """After a failed publish: the last snapshot again, paused and with the error, so
        the window still hears of it."""
        with self._lock:
            if self._snapshot is not None:
                self._snapshot = dataclasses.replace(
                    self._snapshot, paused=self._paused, error=self._error,
                    error_count=self._error_count)
        self._changed = False


def _read_only_motors(state):
    """World.motor_state with read-only arrays (a snapshot's)."""
    return {name: _read_only(value) for name, value in state.items()}


def _read_only(a):
    """An array shared by every snapshot of one world: made read-only once."""
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _drag_fields(drag):
    """The Snapshot's drag_* fields from World.drag (None: no body dragged)."""
    if drag is None:
        return {}
    return dict(drag_body=drag["body"], drag_point=drag["point"],
                drag_point_vel=drag["point_vel"], drag_target=drag["target"],
                drag_force=drag["force"], drag_torque=drag["torque"])
