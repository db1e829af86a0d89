"""The guarded step: a World's calls of solver.step_many, and what a call that blows up is
reported as (ARCHITECTURE.md, "Where a blow-up started").

`steps` runs n steps in calls of at most REPLAY_STEPS steps, growing the contact arrays
when they overflow (`kernel_steps`). A call of fewer than TRACED_BELOW steps (a hook's, the
app's frames) runs with every stage checked as it goes (Settings.trace); a longer one runs
unchecked from a saved copy of what the steps carry over (`carried`). A state gone
non-finite raises SimulationError naming the stage where the value started: found by the
traced call itself, or by restoring the saved copy and replaying the call, its last step
traced (`nonfinite_stage`; the replay repeats the run bit for bit). A step beyond a bound
raises its BoundError (physics/errors.py): RunawayError (a body beyond max_speed or
max_angular_speed), JointGapError (a joint open beyond max_joint_gap or
max_joint_angle_gap), EnergyJumpError (a gain beyond max_energy_gain times its supply).

The functions that step take the World whose arrays they step and read of it: _contacts
(replaced by a grown ContactSet when they overflow), _step_trees(), _settings, _traced (the
same settings, traced), _config (the bounds, for the messages) and _bodies and _joints (the
names).
"""
import math
import time

import numpy as np

from .contact import POINT_FIELDS, contact_args, grown
from .errors import EnergyJumpError, JointGapError, RunawayError, SimulationError
from .model import (
    DYNAMIC,
    REACTION,
    REC_CHANNELS,
    STAT_ENERGY_BODY,
    STAT_GAIN,
    STAT_GAP,
    STAT_GAP_ANGULAR,
    STAT_GAP_JOINT,
    STAT_NONFINITE_BODY,
    STAT_RECORDED,
    STAT_RUNAWAY_BODY,
    STAT_SUPPLY,
    STAT_TRACE_BODY,
    STAT_TRACE_STAGE,
    STAT_TRACE_WHY,
    WORK_CARRIED,
)
from .solver import (
    ENERGY_JUMP,
    JOINT_GAP,
    NONFINITE,
    OK,
    OVERFLOW,
    RUNAWAY,
    STAGES,
    TRACE_SPEED,
    TRACE_TURN,
    step_many,
)
from .threads import use as use_threads

REPLAY_STEPS = 1024   # most steps of one kernel call: a call gone non-finite is replayed
                      # from its start to name the stage (nonfinite_stage)
# a body beyond a speed bound (solver.TRACE_SPEED / TRACE_TURN): quantity, setting, unit
SPEED_BOUNDS = {TRACE_SPEED: ("speed", "max_speed", "m/s"),
                TRACE_TURN: ("angular speed", "max_angular_speed", "rad/s")}
TRACED_BELOW = 16     # calls of fewer steps check every stage as they go: on the biped ~2 us
                      # a step, against ~17 us a call for the copy a replay starts from


def steps(world, model, state, work, n, rec):
    """n steps of `world`, in kernel calls of at most REPLAY_STEPS steps. A state gone
    non-finite is reported with the stage of the step where the value started: calls of fewer
    than TRACED_BELOW steps (a hook's, the app's frames) run with every stage checked
    (Settings.trace); longer ones start from a saved copy of what the steps carry over
    and, gone non-finite, are replayed from it, their last step checked."""
    for start in range(0, n, REPLAY_STEPS):
        k = min(REPLAY_STEPS, n - start)
        part = rec if k == n else records_part(rec, start, start + k)
        traced = k < TRACED_BELOW
        saved = None if traced else carried(state, work, world._contacts)
        done, status = kernel_steps(world, model, state, work,
                                    world._traced if traced else world._settings, k, part)
        if status == NONFINITE or state.solver_stats[STAT_NONFINITE_BODY] > 0:
            found = (traced_stage(state) if traced else
                     nonfinite_stage(world, model, state, work, saved, done))
            raise SimulationError(nonfinite(state, world._config, world._bodies,
                                            int(state.solver_stats[STAT_NONFINITE_BODY]) - 1,
                                            found))
        if status == RUNAWAY:
            raise runaway(state, world._config, world._bodies,
                          int(state.solver_stats[STAT_RUNAWAY_BODY]) - 1)
        if status == JOINT_GAP:
            raise joint_gap(state, world._config, world._joints)
        if status == ENERGY_JUMP:
            raise energy_jump(state, world._config, world._bodies)


def kernel_steps(world, model, state, work, settings, n, rec):
    """Up to n steps of `world` in kernel calls (growing its contact arrays when they
    overflow): (steps done, status of the last)."""
    done, status = 0, OVERFLOW
    threads = world._threads.pick(world._config["threads"])
    use_threads(threads)   # (numba keeps the count per calling thread)
    if settings.threads != threads:
        settings = settings._replace(threads=threads)
        world._settings = world._settings._replace(threads=threads)
        world._traced = world._traced._replace(threads=threads)
    start = time.perf_counter()
    while status == OVERFLOW:
        try:
            k, status = step_many(model, state, work, *contact_args(world._contacts),
                                  world._step_trees(), settings, n - done,
                                  *records_part(rec, done, n))
        except ZeroDivisionError:
            # (nopython code raises this where a state already out of range, say a speed
            # of 1e300 m/s from a force of 1e308 N, divides by a zero it produced)
            raise SimulationError(
                f"the simulation broke down at t = {state.time[0]:.6g} s (a division by "
                f"zero; body {world._bodies[runaway_body(model, state)].name!r} moved "
                "fastest); check the parameters last changed") from None
        done += k
        if status == OVERFLOW:  # more pairs or points than the arrays hold: grow, go on
            assert world._contacts is not None
            world._contacts = grown(world._contacts, model.geom_kind.shape[0])
    world._threads.record(threads, time.perf_counter() - start, done)
    return done, status


def carried(state, work, contacts):
    """Copies of all a step carries over to the next: the state, the contact points (the
    warm start and manifold reuse) and the motors' and couplings' warm starts."""
    points = None
    if contacts is not None:
        c = contacts.points
        count = int(c.count[0])
        points = count, tuple(getattr(c, name)[:count].copy() for name in POINT_FIELDS)
    return (tuple(a.copy() for a in state), points,
            tuple(getattr(work, name).copy() for name in WORK_CARRIED))


def restore(state, work, contacts, saved):
    """Put back what `carried` saved."""
    arrays, points, kept_work = saved
    for live, kept in zip(state, arrays):
        live[...] = kept
    if points is not None:
        count, kept = points
        contacts.points.count[0] = count
        for name, values in zip(POINT_FIELDS, kept):
            getattr(contacts.points, name)[:count] = values
    for name, values in zip(WORK_CARRIED, kept_work):
        getattr(work, name)[...] = values


def nonfinite_stage(world, model, state, work, saved, steps):
    """Replay `steps` steps from `saved`, the last with every stage checked (Settings.trace,
    solver.trace_bodies): what `traced_stage` finds, or None when the replay does not go
    non-finite where the run did (a time budget, budget_ms, makes iterations differ). The
    state ends non-finite, as the run left it."""
    restore(state, work, world._contacts, saved)
    empty = empty_records(state)
    try:
        if steps > 1:
            done, status = kernel_steps(world, model, state, work, world._settings, steps - 1,
                                        empty)
            if done != steps - 1 or status != OK:
                return None
        _, status = kernel_steps(world, model, state, work, world._traced, 1, empty)
    except SimulationError:
        return None
    if status != NONFINITE:
        return None
    return traced_stage(state)


def traced_stage(state):
    """(stage, body, what: solver.TRACE_NONFINITE, TRACE_SPEED or TRACE_TURN) that a traced
    step found first (solver.trace_bodies), or None."""
    stats = state.solver_stats
    stage = int(stats[STAT_TRACE_STAGE])
    if stage == 0:
        return None
    return (STAGES[stage - 1][1], int(stats[STAT_TRACE_BODY]) - 1,
            int(stats[STAT_TRACE_WHY]))


def nonfinite(state, config, bodies, i, found):
    """The message of a step gone non-finite: body i found so at its end, or, `found` by
    a traced step, the stage and body where it started."""
    t = f"{state.time[0]:.6g}"
    if found is None:
        return (f"the simulation became non-finite at t = {t} s (body "
                f"{bodies[i].name!r}); check the parameters last changed")
    stage, i, why = found
    name = bodies[i].name
    if why in SPEED_BOUNDS:
        _, setting, unit = SPEED_BOUNDS[why]
        return (f"the simulation became non-finite at t = {t} s; it began in {stage}, "
                f"with body {name!r} beyond {setting} = {config[setting]:g} {unit}; "
                "check the parameters last changed")
    return (f"the simulation became non-finite at t = {t} s in {stage} (body {name!r}); "
            "check the parameters last changed")


def beyond(config, cls, event, setting, unit, why, **fields):
    """The error of a step beyond a bound: `event` (what happened, when), then "beyond
    {setting} = {bound} {unit}: {why}" and how to turn the check off."""
    bound = config[setting]
    return cls(f"{event}, beyond {setting} = {bound:g} {unit}: {why} ({setting} = 0 turns "
               "this check off)", bound=bound, setting=setting, **fields)


def joint_gap(state, config, joints):
    """The JointGapError of the joint the last step found open beyond a gap bound."""
    stats = state.solver_stats
    if stats[STAT_GAP_ANGULAR]:
        quantity, setting, unit, how = ("angular gap", "max_joint_angle_gap", "rad",
                                        "out of line")
    else:
        quantity, setting, unit, how = "gap", "max_joint_gap", "m", "open"
    value = float(stats[STAT_GAP])
    step = int(state.step_count[0]) - 1        # the pose the step began from
    t = float(state.time[0]) - config["dt"]
    name = joints[int(stats[STAT_GAP_JOINT]) - 1].name
    return beyond(
        config, JointGapError, f"joint {name!r} was {how} by {value:.3g} {unit} after step "
        f"{step} (t = {t:.6g} s)", setting, unit, "the joint no longer holds, a force or a "
        "parameter is far off", joint=name, quantity=quantity, value=value, step=step, time=t)


def energy_jump(state, config, bodies):
    """The EnergyJumpError of the last step, which gained energy from nothing."""
    stats = state.solver_stats
    gain, supply = float(stats[STAT_GAIN]), float(stats[STAT_SUPPLY])
    step, t = int(state.step_count[0]), float(state.time[0])
    name = bodies[int(stats[STAT_ENERGY_BODY]) - 1].name
    return beyond(
        config, EnergyJumpError, f"the world gained {gain:.3g} J of energy in step {step} "
        f"(t = {t:.6g} s), body {name!r} most, where its forces, motors and drag could "
        f"supply {supply:.3g} J", "max_energy_gain", "times that", "energy from nothing, "
        "such as a body created inside another", body=name, supply=supply,
        quantity="energy gain", value=gain, step=step, time=t)


def runaway(state, config, bodies, i):
    """The RunawayError of body i, found beyond a speed bound by the last step."""
    speed = math.hypot(*state.body_vel[i])       # (no overflow for a finite 1e200)
    turn = math.hypot(*state.body_angvel[i])
    why = (TRACE_SPEED if config["max_speed"] > 0.0 and speed > config["max_speed"]
           else TRACE_TURN)
    quantity, setting, unit = SPEED_BOUNDS[why]
    value = speed if why == TRACE_SPEED else turn
    step, t = int(state.step_count[0]), float(state.time[0])
    name = bodies[i].name
    return beyond(
        config, RunawayError, f"body {name!r} reached a {quantity} of {value:.3g} {unit} at "
        f"step {step} (t = {t:.6g} s)", setting, unit, "no rigid body does that, a force or a "
        "parameter is far off", body=name, quantity=quantity, value=value, step=step, time=t)


def runaway_body(model, state):
    """The dynamic body whose state is non-finite, or else the one moving fastest."""
    speed = np.abs(state.body_vel).sum(axis=1) + np.abs(state.body_angvel).sum(axis=1)
    speed = np.where(np.isfinite(speed) & np.isfinite(state.body_pos).all(axis=1), speed,
                     np.inf)
    speed[model.body_kind != DYNAMIC] = -1.0
    return int(np.argmax(speed))


def check_telemetry(rec, sl, joints, bodies):
    """SimulationError if the recorded joint or contact telemetry of steps `sl` (a
    Recording's) is not finite while the bodies are (an absurd but finite state, such as a
    spin of 1e154 rad/s, whose joint velocity overflows): a recording is never silently NaN."""
    for what, series, names in (("joint", rec.joint[sl], joints),
                                ("contact sensor", rec.contact[sl],
                                 [bodies[i] for i in rec.contact_bodies])):
        bad = ~np.isfinite(series)
        if bad.any():
            k, i = np.argwhere(bad)[0][:2]
            raise SimulationError(
                f"the {what} telemetry became non-finite at t = {rec.t[sl][k]:.6g} s "
                f"({what} {names[i].name!r}); check the parameters last changed")


def records_part(rec, start, stop):
    """Steps start..stop of the recording arrays step_many takes (a zero-length one, skipped,
    stays as it is; the last array is the contact sensors' body list, not a recording)."""
    return tuple(r[start:stop] if r.shape[0] else r for r in rec[:-1]) + (rec[-1],)


def empty_records(state):
    """The recording arrays of a call that records nothing."""
    nb, nj = state.body_pos.shape[0], state.joint_coord.shape[0]
    return (np.zeros(0), np.zeros((0, nj, REC_CHANNELS)), np.zeros((0, STAT_RECORDED)),
            np.zeros((0, nb, 3)),
            np.zeros((0, nb, 4)), np.zeros((0, 0, REACTION)), np.zeros(0, np.int64))
