"""World: build bodies, joints and loads in Python, then step them with one nogil kernel call.

World is the API and delegates: its records of bodies, joints and loads, and the checks of
what is added, are physics/specs.py (MuJoCo's mjSpec); compile.build (physics/compile.py)
makes the arrays of physics/model.py from them at the first step after an edit that adds or
removes something; guard.steps (physics/guard.py) calls the kernel and turns a blow-up into
its error (physics/errors.py). After a build the arrays are the truth: live edits write the
Model or the State, the readers read them, and a rebuild first hands them back to the
records (compile.carry_back).

Conventions: SI units, z is up, quaternions (w, x, y, z), angles in radians. Body 0 is the
fixed world ("world"). Joint anchors and axes are given in world coordinates at the pose the
bodies have when the joint is added; joint coordinates are zero there.

Body frames. The engine's frame of a body is its centre of mass and principal axes: body_pos,
body_quat (and everything read or set through them: set_body_pose, the snapshot, joints'
local anchors) are that frame. For primitives it is the frame the shape is written in. A Hull
or Compound is written in a reference frame of the user's choosing (shape.py); add_body(pos,
quat) places that REFERENCE frame, and the engine pose is it composed with the shape's
(centre of mass c, principal axes Rp): x = pos + R c, R_body = R Rp. `body_reference_pose`
gives the reference frame's pose back.
"""
import math
import time

import numpy as np

from . import guard
from .checkpoint import Checkpoint, CheckpointError, mismatch
from .compile import build, carry_back
from .constraint import SLOT_LOWER
from .contact import POINT_FIELDS, make_contacts  # noqa: E402
from .errors import (  # noqa: F401 (BoundError: still importable from here)
    BoundError,
    EnergyJumpError,
    JointGapError,
    RunawayError,
    SimulationError,
)
from .guard import REPLAY_STEPS  # noqa: F401 (importable from here)
from .guard import empty_records as _empty_records  # noqa: F401 (warmup, bench/step_stages)
from .joint import (  # noqa: E402
    GROUP_HINGES,
    GROUP_INDEX,
    HAS_MOTOR,
    JOINT_TABLE,
    JOINT_TYPE_NAMES,
    PRISMATIC,
    REVOLUTE,
    scene_types_with,
)
from .model import (  # noqa: E402
    ARTICULATION_TREE,
    DYNAMIC,
    REACTION,
    REC_CHANNELS,
    REC_VOLTAGE,
    STAT_ITERATIONS,
    STAT_RECORDED,
    STAT_RESIDUAL,
    STAT_SECONDS,
    STATIC,
    WORK_CARRIED,
    make_settings,
)
from .motor import CTRL_POSITION, CTRL_VELOCITY, MOTOR_TRAJ, TRAJ_CONSTANT
from .perturb import DAMPING_RATIO, FORCE_CAP_G, STANDARD_GRAVITY, STIFFNESS
from .settings import HOST_SETTINGS, SETTINGS, WORLD_SETTINGS
from .shape import matrix_quat
from .shape import quat_matrix as quat_to_matrix
from .specs import (  # noqa: F401 (Material, Recording, frame_from_axis: importable from here)
    ALL_GROUPS,
    BodySpec,
    DCMotor,
    JointSpec,
    Material,
    Recording,
    body_spec,
    check_group,
    controller_spec,
    coupling_spec,
    entry_index,
    frame_from_axis,
    joint_code,
    joint_options,
    load_spec,
    number,
    positive,
    revolute_groups,
    vector,
)
from .threads import Choice
from .transforms import quat_conj, quat_matrices, quat_mul


def _rotations(q):
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) (w, x, y, z)."""
    return quat_matrices(q, normalise=False)


DRAG_MASS_KEEP_S = 0.25   # s of simulated time a grab's system effective mass is kept

class World:
    def __init__(self, dt=SETTINGS["dt"].default, gravity=SETTINGS["gravity"].default,
                 iterations=SETTINGS["iterations"].default,
                 position_iterations=SETTINGS["position_iterations"].default,
                 tolerance=SETTINGS["tolerance"].default, budget_ms=SETTINGS["budget_ms"].default,
                 warm_start=SETTINGS["warm_start"].default,
                 manifold_reuse=SETTINGS["manifold_reuse"].default,
                 max_speed=SETTINGS["max_speed"].default,
                 max_angular_speed=SETTINGS["max_angular_speed"].default,
                 max_joint_gap=SETTINGS["max_joint_gap"].default,
                 max_joint_angle_gap=SETTINGS["max_joint_angle_gap"].default,
                 max_energy_gain=SETTINGS["max_energy_gain"].default,
                 articulation=SETTINGS["articulation"].default,
                 threads=SETTINGS["threads"].default):
        self._bodies = [BodySpec("world", STATIC, 0.0, np.zeros(3), np.zeros(3),
                                 np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.zeros(3))]
        self._joints = []
        self.controllers_changed = 0   # counts changes of what drives the motors (motor_modes)
        self._loads = []
        self._model = self._state = self._work = None
        self._trees = None   # the trees' blocks (articulation.py), built with the model
        self._body_of = self._joint_of = self._motor_of = None   # (_build's lookups)
        self._drag_mass = None   # (key, time, mass) of the last grab (_system_point_mass)
        self._contacts = None
        self._carry = None       # the running state a rebuild continues from
        self._settings = None
        self._traced = None   # the same settings, every stage checked (_step_kernel)
        self._config = {}
        self._threads = Choice()   # the thread count of each kernel call (threads.py)
        self._hook, self._hook_every = None, 1
        self.configure(dt=dt, gravity=gravity, iterations=iterations,
                       position_iterations=position_iterations, tolerance=tolerance,
                       budget_ms=budget_ms, warm_start=warm_start, manifold_reuse=manifold_reuse,
                       max_speed=max_speed, max_angular_speed=max_angular_speed,
                       max_joint_gap=max_joint_gap, max_joint_angle_gap=max_joint_angle_gap,
                       max_energy_gain=max_energy_gain, articulation=articulation,
                       threads=threads)
        self.source = None
        self.description = ""   # the scene's one-line description (scenes.load_scene)

    # ---- settings -------------------------------------------------------------------------
    def configure(self, **changes):
        """Change solver or world settings (dt, gravity, iterations, position_iterations,
        tolerance, budget_ms, warm_start, manifold_reuse, articulation, max_speed,
        max_angular_speed, max_joint_gap, max_joint_angle_gap, max_energy_gain, threads);
        takes effect at the next step. `threads` changes the speed only, never the results
        (physics/partition.py).
        The ranges are `physics.settings.SETTINGS`: a value out of range (or an unknown
        name) raises ValueError naming the setting, the value and the range, and nothing
        changes then."""
        cfg = dict(self._config)
        for key, value in changes.items():
            if key not in WORLD_SETTINGS:
                raise ValueError(f"unknown setting {key!r} (settings are: "
                                 f"{', '.join(WORLD_SETTINGS)})")
            cfg[key] = SETTINGS[key].check(value)
        self._config = cfg
        self._settings = make_settings(**{k: v for k, v in cfg.items()
                                          if k not in HOST_SETTINGS})
        self._traced = self._settings._replace(trace=True)

    @property
    def settings(self):
        return dict(self._config)

    @property
    def threads_used(self):
        """The threads the last kernel call ran on (the `threads` setting, or for 0 what the
        World measured faster: physics/threads.py)."""
        return int(self._settings.threads)

    @property
    def dt(self):
        return self._config["dt"]

    # ---- building ---------------------------------------------------------------------------
    def add_body(self, name, shape=None, *, mass=None, density=None, inertia=None,
                 pos=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0), vel=(0.0, 0.0, 0.0),
                 angvel=(0.0, 0.0, 0.0), kind="dynamic", material=None, group=1,
                 mask=ALL_GROUPS, visuals=()):
        """Add a rigid body; returns its index. Mass properties come from `inertia` (principal
        moments about the centre of mass, body frame) if given, else from the shape with
        `mass` or `density` (default 1000 kg/m^3).  A shaped body collides with the others
        through its `material` (default Material()); bodies a and b may touch iff
        group_a & mask_b and group_b & mask_a (bit sets), and never when a joint joins them.

        A Hull or Compound shape is written in its own reference frame: `pos` and `quat` place
        that frame, and the body (centre of mass, principal axes; see the module) starts at
        pos + R(quat) c turned by quat * Rp; `inertia` is then about those principal axes and
        `vel` is the velocity of the centre of mass.

        `visuals` [(shape, pos, quat, rgba or None), ...] are shapes only drawn (no collision,
        no mass), posed in the frame `pos` / `quat` place; the world keeps them in the body
        frame for the renderer (`body_visuals`)."""
        self._bodies.append(body_spec(
            name, self.body_names, shape, mass=mass, density=density, inertia=inertia,
            pos=pos, quat=quat, vel=vel, angvel=angvel, kind=kind, material=material,
            group=group, mask=mask, visuals=visuals))
        self._invalidate()
        return len(self._bodies) - 1

    def add_joint(self, name, type, body_a, body_b, *, anchor=(0.0, 0.0, 0.0),
                  axis=(0.0, 0.0, 1.0), friction=0.0, limits=None, damping=0.0):
        """Join two bodies; anchor and axis in world coordinates at the bodies' current poses.
        friction: Coulomb limit, N m (revolute, spherical) or N (prismatic).
        limits: (lower, upper) in rad (revolute) or m (prismatic).
        damping: viscous, N m s/rad (revolute, spherical) or N s/m (prismatic) (damper.py)."""
        jt = joint_code(name, type, self.joint_names)
        where = f"joint {name!r}"
        a, b = self._body_index(body_a, where), self._body_index(body_b, where)
        if a == b:
            raise ValueError(f"joint {name!r}: a joint cannot join body "
                             f"{self._bodies[a].name!r} to itself")
        if DYNAMIC not in (self._bodies[a].kind, self._bodies[b].kind):
            raise ValueError(f"joint {name!r}: at least one of its bodies must be dynamic")
        p = vector("anchor", anchor)
        n = vector("axis", axis)
        if np.linalg.norm(n) < 1e-12:
            raise ValueError(f"joint {name!r}: axis must not be zero")
        friction, damping, limits = joint_options(name, type, jt, friction, damping, limits)
        frame = frame_from_axis(n)
        anchors, frames = np.zeros((2, 3)), np.zeros((2, 4))
        for side, i in enumerate((a, b)):
            body = self._current_body_pose(i)
            R = quat_to_matrix(body[1])
            anchors[side] = R.T @ (p - body[0])
            frames[side] = quat_mul(quat_conj(body[1]), frame)
        if jt == REVOLUTE:
            R = quat_to_matrix(self._current_body_pose(a)[1])
            check_group(self._joints, self._bodies, name, a, b, n / np.linalg.norm(n), R)
        self._joints.append(JointSpec(name, jt, (a, b), anchors, frames, friction, limits,
                                      damping))
        self._invalidate()
        return len(self._joints) - 1

    def add_motor(self, joint, motor, voltage=0.0):
        """Put a DCMotor on a revolute or prismatic joint (one per joint), with its supply
        voltage (V, within the motor's voltage_limit)."""
        j = self._joint_index(joint)
        if not HAS_MOTOR[self._joints[j].type]:
            raise ValueError(f"joint {self._joints[j].name!r}: only "
                             f"{scene_types_with('motor')} joints take a motor")
        if not isinstance(motor, DCMotor):
            raise ValueError(f"joint {self._joints[j].name!r}: the motor must be a DCMotor "
                             f"(got {type(motor).__name__})")
        self._invalidate()
        self._joints[j].motor = motor
        self._joints[j].voltage = 0.0
        self.set_voltage(j, voltage)

    def add_coupling(self, joint, leader, multiplier=1.0, offset=0.0, *, lower=0.0, upper=0.0):
        """Make `joint` follow `leader`: q = multiplier * q_leader + offset (rad or m), an
        equality row of the velocity solve (physics/coupling.py; URDF's <mimic>). With
        lower < upper it is a limit instead: C = q - multiplier * q_leader - offset is kept in
        [lower, upper] (free inside, a one-sided row at a bound, as a joint limit; MuJoCo's
        limited fixed tendon of two joints); lower = upper keeps C = lower. Both joints
        revolute or prismatic; a joint follows at most one leader. The leader may follow another
        (a chain: each row holds its own pair, so the relations compose to the chain's root);
        a cycle is refused."""
        j, lead = self._joint_index(joint), self._joint_index(leader)
        mimic = coupling_spec(self._joints, j, lead, multiplier, offset, lower, upper)
        self._joints[j].mimic = mimic
        self._invalidate()

    def set_controller(self, joint, mode, *, kp=0.0, kd=0.0, target=0.0, sine=None,
                       keyframes=None, implicit=False):
        """Drive the motor on `joint` by a controller that sets its voltage every step,
        saturated at the motor's supply:
          mode "position": u = kp (q* - q) + kd (w* - w), q* the set-point (rad or m);
          mode "velocity": u = kp (w* - w) + K_t r w*, w* the set-point (rad/s or m/s);
          mode "voltage": no controller (the voltage stays as set_voltage left it).
        The set-point is `target` (a constant), or `sine` = (offset, amplitude, frequency in
        Hz[, phase in rad]), or `keyframes` = [(t, value), ...] (times rising; linear between
        them, held after the last). The joint's rate w is the one at the step's start (a
        digital controller sampled at the physics rate), or with `implicit` the one at its end,
        solved with the step (MuJoCo's implicitfast servos: stable at any kd; motor.py). Takes
        effect at the next step."""
        j = self._joint_index(joint)
        joint_ = self._joints[j]
        where = f"joint {joint_.name!r}"
        if joint_.motor is None:
            raise ValueError(f"{where} has no motor")
        controller = controller_spec(where, mode, kp=kp, kd=kd, target=target, sine=sine,
                                     keyframes=keyframes, implicit=implicit)
        self._invalidate()
        joint_.controller, joint_.held = controller, None
        self.controllers_changed += 1

    def resume_controller(self, joint):
        """Hand the motor on `joint` back to the controller that a voltage took over
        (set_voltage), with the set-point it has now (set_target moves a held controller's
        set-point too). Effective at the next step."""
        j = self._joint_index(joint)
        joint_ = self._joints[j]
        where = f"joint {joint_.name!r}"
        if joint_.motor is None:
            raise ValueError(f"{where} has no motor")
        if joint_.held is None:
            now = "its controller drives it" if joint_.controller else "no controller was set"
            raise ValueError(f"{where}: no controller to hand back ({now})")
        self._invalidate()
        joint_.controller, joint_.held = joint_.held, None
        self.controllers_changed += 1

    @property
    def motor_modes(self):
        """Per motor, in motor_state's order: (mode, held), mode what sets its voltage now
        ("position" or "velocity": its controller; "voltage": set_voltage), held True where a
        voltage took over a controller that resume_controller hands back. controllers_changed
        counts the changes (read this again when it moved)."""
        names = {CTRL_POSITION: "position", CTRL_VELOCITY: "velocity"}
        return tuple((names[j.controller[0]] if j.controller else "voltage", j.held is not None)
                     for j in self._joints if j.motor is not None)

    def set_target(self, joint, target, rate=0.0):
        """Move the constant set-point of the position or velocity controller on `joint`
        (rad, m, or a rate), and for a position controller the rate it aims at (rad/s or m/s,
        the kd term's w*): cheap, for calling every control tick (IK, user hooks), effective
        at the next step. A sine or keyframe controller becomes a constant one."""
        j = self._joint_index(joint)
        joint_ = self._joints[j]
        where = f"joint {joint_.name!r}"
        if joint_.motor is None or (joint_.controller is None and joint_.held is None):
            raise ValueError(f"{where} has no position or velocity controller "
                             "(set_controller first)")
        t, w = number(f"{where}: target", target), number(f"{where}: rate", rate)
        if not (math.isfinite(t) and math.isfinite(w)):
            raise ValueError(f"{where}: target and rate must be finite numbers "
                             f"(got {target}, {rate})")
        row = np.zeros(MOTOR_TRAJ)
        row[:3] = (TRAJ_CONSTANT, t, w)
        if joint_.controller is None:   # a voltage holds it: the set-point waits for it
            mode, gains, _, _, implicit = joint_.held
            joint_.held = (mode, gains, row, (), implicit)
            return
        mode, gains, _, keys, implicit = joint_.controller
        if keys:   # (the model's table of keyframes changes: a rebuild)
            self._invalidate()
            joint_.controller = (mode, gains, row, (), implicit)
        elif self._model is not None:   # the model's row is the set-point now
            self._model.motor_traj[self._motor_of[j]] = row
        else:
            joint_.controller = (mode, gains, row, keys, implicit)

    def set_voltage(self, joint, voltage):
        """The supply voltage of the motor on `joint` (V), effective at the next step; a
        controller on it is held (it would set the voltage itself) until resume_controller
        hands the motor back to it."""
        j = self._joint_index(joint)
        joint_ = self._joints[j]
        if joint_.motor is None:
            raise ValueError(f"joint {joint_.name!r} has no motor")
        u = number(f"joint {joint_.name!r}: voltage", voltage)
        limit = joint_.motor.voltage_limit
        if not (math.isfinite(u) and abs(u) <= limit):
            raise ValueError(f"joint {joint_.name!r}: voltage must be a finite number within "
                             f"+-{limit:g} V, the motor's supply limit (got {voltage})")
        if joint_.controller is not None:   # it takes the controller's place: a rebuild
            self._invalidate()
            joint_.held, joint_.controller = joint_.controller, None
            joint_.voltage = u
            self.controllers_changed += 1
        elif self._model is not None:   # the state's voltage is the motor's now
            self._state.motor_voltage[self._motor_of[j]] = u
        else:
            joint_.voltage = u

    @property
    def motors(self):
        """[(joint index, DCMotor)] for every joint with a motor, in motor_state's order."""
        return [(j, joint.motor) for j, joint in enumerate(self._joints)
                if joint.motor is not None]

    @property
    def motor_state(self):
        """The motors after the last step, as arrays over the joints that have one: joint
        (index), voltage (V), current (A), torque (the joint's, N m or N), speed (the rotor's,
        rad/s) and power (u i, W)."""
        self._ready()
        s = self._state
        return dict(joint=self._model.motor_joint.copy(), voltage=s.motor_voltage.copy(),
                    target=s.motor_target.copy(),
                    current=s.motor_current.copy(), torque=s.motor_torque.copy(),
                    speed=s.motor_speed.copy(), power=s.motor_voltage * s.motor_current)

    def add_load(self, body, *, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0), start=0.0,
                 end=math.inf):
        """A timed external load: force (N, at the centre of mass) and torque (N m), world
        frame, acting while start <= t < end."""
        i = self._body_index(body, "load")
        if self._bodies[i].kind != DYNAMIC:
            raise ValueError(f"load: body {self._bodies[i].name!r} is not dynamic")
        self._loads.append(load_spec(i, force, torque, start, end))
        self._invalidate()
        return len(self._loads) - 1

    def _body_index(self, ref, where):
        return entry_index(self._bodies, ref, "body", where,
                           None if self._model is None else self._body_of)

    def _joint_index(self, ref):
        return entry_index(self._joints, ref, "joint", "",
                           None if self._model is None else self._joint_of)

    def _current_body_pose(self, i):
        if self._state is not None and i < self._state.body_pos.shape[0]:
            return self._state.body_pos[i].copy(), self._state.body_quat[i].copy()
        b = self._bodies[i]
        return b.pos, b.quat

    def _invalidate(self):
        if self._state is not None:
            self._capture_state()
        self._model = None

    def _capture_state(self):
        """Hand the running state and the live edits back to the records, so that a rebuild
        goes on from them (compile.carry_back)."""
        carry_back(self._bodies, self._joints, self._model, self._state)
        self._carry = self._state

    def _build(self):
        """The arrays of the records (physics/compile.py), going on from the running state
        (_carry) where there is one."""
        (self._model, self._state, self._work, self._trees,
         self._contacts) = build(self._bodies, self._joints, self._loads, self._carry,
                                 self._contacts)
        self._carry = None
        # while the model stands: names to indexes, and each motored joint's motor row
        self._body_of = {b.name: i for i, b in enumerate(self._bodies)}
        self._joint_of = {jn.name: j for j, jn in enumerate(self._joints)}
        self._motor_of = {int(j): m for m, j in enumerate(self._model.motor_joint)}

    def _ready(self):
        if self._model is None:
            self._build()
        return self._model, self._state, self._work

    def _step_trees(self):
        """The Trees the step takes: None unless solver.articulation is "tree" and the world
        has a tree (numba then prunes the trees' block from the step, as it prunes the contact
        stages for a world without contacts: articulation.py's kernels are compiled only for
        worlds that use them)."""
        t = self._trees
        if (t is None or self._settings.articulation != ARTICULATION_TREE
                or t.comp_root.shape[0] == 0):
            return None
        return t

    # ---- checkpoints (physics/checkpoint.py) --------------------------------------------------
    def _fingerprint(self):
        """What a checkpoint must have been saved from (physics/checkpoint.py), made once
        per model."""
        model, _, _ = self._ready()
        made = getattr(self, "_fingerprint_made", None)
        if made is None or made[0] is not model:
            made = self._fingerprint_made = (model, (
                tuple(b.name for b in self._bodies), tuple(j.name for j in self._joints),
                tuple(self._joints[int(j)].name for j in model.motor_joint),
                int(model.geom_kind.shape[0])))
        return made[1]

    def _checkpoint_targets(self):
        """(name, live array) of everything a Checkpoint holds but the contact points."""
        _, state, work = self._ready()
        out = [(f"state.{name}", getattr(state, name)) for name in state._fields]
        out += [(f"work.{name}", getattr(work, name)) for name in WORK_CARRIED]
        if self._trees is not None:
            out.append(("trees.node_lam", self._trees.node_lam))
        return out

    def save_state(self):
        """A Checkpoint of everything the next step reads from the steps before (see
        physics/checkpoint.py: not the model, the settings or a hook's own variables);
        `.save(path)` writes it as .npz."""
        arrays = {name: live.copy() for name, live in self._checkpoint_targets()}
        c = self._contacts.points if self._contacts is not None else None
        if c is not None:
            count = int(c.count[0])
            arrays["contacts.count"] = c.count.copy()
            for name in POINT_FIELDS:
                arrays[f"contacts.{name}"] = getattr(c, name)[:count].copy()
        return Checkpoint(self._fingerprint(), arrays)

    def restore_state(self, checkpoint):
        """Put the world back in the state of `checkpoint` (a Checkpoint, or the path of a
        .npz file it was saved to): the steps after it repeat those after the save bit for
        bit (with the same settings, the time budget off). A checkpoint of another model,
        or a file that holds none, is a CheckpointError naming why; nothing is changed then."""
        if not isinstance(checkpoint, Checkpoint):
            checkpoint = Checkpoint.load(checkpoint)
        where = f"cannot restore the state saved at t = {checkpoint.time:.6g} s"
        why = mismatch(checkpoint.fingerprint, self._fingerprint())
        saved = checkpoint.arrays
        targets = self._checkpoint_targets()
        c = self._contacts.points if self._contacts is not None else None
        if why is None:
            for name, live in targets:
                if name not in saved:
                    why = f"it has no {name}"
                elif saved[name].shape != live.shape or saved[name].dtype != live.dtype:
                    why = (f"its {name} is {saved[name].dtype} {saved[name].shape}, here "
                           f"{live.dtype} {live.shape}")
                if why is not None:
                    break
        if why is None and (c is None) != ("contacts.count" not in saved):
            why = "it was saved from a world whose bodies could touch and this one's cannot"
        if why is None and c is not None:
            count = int(saved["contacts.count"][0])
            for name in POINT_FIELDS:
                kept = saved.get(f"contacts.{name}")
                live = getattr(c, name)
                if kept is None or kept.shape[0] != count or kept.shape[1:] != live.shape[1:]:
                    why = f"its contacts.{name} does not hold {count} contact points"
                    break
        if why is not None:
            raise CheckpointError(f"{where}: {why}")
        for name, live in targets:
            live[...] = saved[name]
        if c is not None:
            count = int(saved["contacts.count"][0])
            if c.geom.shape[0] < count:   # (more points than it holds now: room for them)
                self._contacts = make_contacts(self._model.geom_kind.shape[0], cap=2 * count,
                                               pcap=self._contacts.scratch.pairs.shape[0])
                c = self._contacts.points
            c.count[0] = count
            for name in POINT_FIELDS:
                getattr(c, name)[:count] = saved[f"contacts.{name}"]

    # ---- keyframes (physics/keyframe.py) -----------------------------------------------------
    def check_keyframe(self, joints=None, rates=None, bodies=None, voltages=None, targets=None,
                       *, name="keyframe"):
        """What apply_keyframe checks, without applying it."""
        self._checked_keyframe(joints, rates, bodies, voltages, targets, name)

    def _keyframe_groups(self, model):
        """({first hinge: [the group's hinges]}, same): the universal joints and gimbals
        (gimbal.py), and each joint's stand-in for keyframe.outward (its group's first hinge)."""
        groups = {}
        same = list(range(len(self._joints)))
        for members in revolute_groups(self._joints).values():
            if len(members) > 1 and GROUP_HINGES[model.joint_type[members[0]]] > 0:
                groups[members[0]] = list(members)
                for k in members:
                    same[k] = members[0]
        return groups, same

    def _checked_keyframe(self, joints, rates, bodies, voltages, targets, name):
        from .joint import SPHERICAL
        from .keyframe import UNIT_TOLERANCE, component, outward

        model, state, work = self._ready()
        where = f"{name}:"
        fixed = [b.kind != DYNAMIC for b in self._bodies]
        jb = [tuple(int(x) for x in pair) for pair in model.joint_body]
        groups, same = self._keyframe_groups(model)
        coords, speeds, placed, set_points = {}, {}, {}, {}
        for table, out, what in ((joints or {}, coords, "joint"), (rates or {}, speeds, "rate")):
            for ref, value in table.items():
                j = self._joint_index(ref)
                jn = self._joints[j]
                kind = jn.type
                if kind == SPHERICAL:   # a rotation (w, x, y, z), an angular velocity (3,)
                    v = vector(f"{where} the {'rotation' if what == 'joint' else what} of "
                             f"spherical joint {jn.name!r}", value, 4 if what == "joint" else 3)
                    if what == "joint":
                        n = float(np.linalg.norm(v))
                        if abs(n - 1.0) > UNIT_TOLERANCE:
                            raise ValueError(f"{where} the rotation of spherical joint "
                                             f"{jn.name!r} must be a unit quaternion (w, x, y, "
                                             f"z) (its norm is {n:.6g})")
                        v = v / n
                elif kind in (REVOLUTE, PRISMATIC):
                    v = number(f"{where} {what} of joint {jn.name!r}", value)
                    if not math.isfinite(v):
                        raise ValueError(f"{where} the {what} of joint {jn.name!r} must be "
                                         f"finite (got {value})")
                    jt = model.joint_type[j]
                    if what == "joint" and GROUP_HINGES[jt] > 0 and GROUP_INDEX[jt] == 1 \
                            and not abs(v) < 0.5 * math.pi:
                        raise ValueError(f"{where} joint {jn.name!r} is the middle hinge of a "
                                         "universal joint or gimbal (physics/gimbal.py): its "
                                         f"angle must lie within +-pi/2 (got {value})")
                else:
                    raise ValueError(f"{where} joint {jn.name!r} is {JOINT_TYPE_NAMES[kind]}: "
                                     "a keyframe sets revolute, prismatic and spherical joints "
                                     "only")
                out[j] = v
        for ref, entry in (bodies or {}).items():
            i = self._body_index(ref, where)
            members = component(jb, fixed, i) if not fixed[i] else None
            if members is None:
                raise ValueError(f"{where} body {self._bodies[i].name!r} is static or held to "
                                 "the fixed world by a joint: its pose is the joints'")
            unknown = set(entry) - {"pos", "quat", "vel", "angvel"}
            if unknown:
                raise ValueError(f"{where} body {self._bodies[i].name!r}: unknown keys "
                                 f"{sorted(unknown)} (pos, quat, vel, angvel)")
            got = {k: vector(f"{where} body {self._bodies[i].name!r} {k}", v,
                           4 if k == "quat" else 3) for k, v in entry.items()}
            if "quat" in got:
                n = float(np.linalg.norm(got["quat"]))
                if n < 1e-9:
                    raise ValueError(f"{where} body {self._bodies[i].name!r}: quat must not "
                                     "be zero")
                got["quat"] = got["quat"] / n
            placed[i] = (members, got)
        order, far, subtree = outward(jb, fixed, first=list(placed), same=same)
        loose = [self._joints[j].name for j in (*coords, *speeds) if j not in far]
        if loose:
            raise ValueError(f"{where} joints in a closed loop take no coordinate or rate "
                             f"here: {', '.join(map(repr, loose))}")
        for ref, u in (voltages or {}).items():   # (checked by set_voltage below, first)
            j = self._joint_index(ref)
            if self._joints[j].motor is None:
                raise ValueError(f"{where} joint {self._joints[j].name!r} has no motor")
            limit = self._joints[j].motor.voltage_limit
            v = number(f"{where} voltage of joint {self._joints[j].name!r}", u)
            if not (math.isfinite(v) and abs(v) <= limit):
                raise ValueError(f"{where} the voltage of joint {self._joints[j].name!r} must "
                                 f"be finite and within +-{limit:g} V (got {u})")
        for ref, value in (targets or {}).items():
            j = self._joint_index(ref)
            jn = self._joints[j]
            if jn.motor is None or (jn.controller is None and jn.held is None):
                raise ValueError(f"{where} joint {jn.name!r} has no position or velocity "
                                 "controller to take a target")
            label = f"{where} the target of joint {jn.name!r}"
            if isinstance(value, (list, tuple, np.ndarray)):
                t, w = vector(f"{label} (set-point, rate)", value, 2)
            else:
                t, w = number(label, value), 0.0
                if not math.isfinite(t):
                    raise ValueError(f"{label} must be finite (got {value})")
            set_points[j] = (float(t), float(w))
        return coords, speeds, placed, set_points, (order, far, subtree), groups

    def apply_keyframe(self, joints=None, rates=None, bodies=None, voltages=None, targets=None,
                       *, name="keyframe"):
        """Put a pose written by hand into the world (physics/keyframe.py): `joints` name ->
        coordinate (rad or m) of a revolute or prismatic joint, or rotation (w, x, y, z: the
        joint frame on B relative to the one on A) of a spherical joint; `rates` name -> rate
        (rad/s, m/s), or a spherical joint's angular velocity (3,: B relative to A, in the
        joint frame on B); the hinges of a universal joint or gimbal take their angles as each
        reports them. `bodies` name -> {pos, quat, vel, angvel} of a body that no joint holds
        to the fixed world (a free body, or a floating robot's base: the robot moves with it;
        the engine's body frame, centre of mass and principal axes, as body_pos);
        `voltages` name -> motor voltage (V); `targets` name -> the set-point of the joint's
        position or velocity controller, or (set-point, rate it aims at) (set_target).
        Joints not named keep their coordinates; every moving body starts at rest but for
        what is given. Everything is checked first (check_keyframe): a bad entry is a
        ValueError naming `name` and the entry, and nothing is changed."""
        from .joint import SPHERICAL
        from .keyframe import (
            group_angles,
            group_axes,
            group_offset,
            group_rotation,
            measure,
            move_subtree,
            quats,
        )

        coords, speeds, placed, set_points, (order, far, subtree), groups = \
            self._checked_keyframe(joints, rates, bodies, voltages, targets, name)
        model, state, work = self._ready()
        # ---- the pose: placed bodies' robots, then the joints outwards
        pos = state.body_pos.copy()
        rot = _rotations(state.body_quat)
        moved = set()   # (the others keep their poses to the bit)
        for i, (members, got) in placed.items():
            R = quat_to_matrix(got["quat"]) @ rot[i].T if "quat" in got else np.eye(3)
            p = got.get("pos", pos[i])
            anchor = pos[i].copy()
            for k in members:
                pos[k] = p + R @ (pos[k] - anchor)
                rot[k] = R @ rot[k]
            moved.update(members)
        frames = _rotations(model.joint_local_frame.reshape(-1, 4)).reshape(-1, 2, 3, 3)
        la = model.joint_local_anchor

        def joint_frame(j):
            """The joint's anchor and axis (world) at the pose being made."""
            b = int(model.joint_body[j, 1])
            return pos[b] + rot[b] @ la[j, 1], rot[b] @ frames[j, 1][:, 0]

        def place(j, body, R, x):
            """Move joint j's far side rigidly so that `body` has rotation R at x."""
            D = R @ rot[body].T
            x0 = pos[body].copy()
            for k in subtree[j]:
                pos[k] = x + D @ (pos[k] - x0)
                rot[k] = D @ rot[k]
            moved.update(subtree[j])

        def group_state(j):
            """A group's angles about its frame's x, y, z now (the ones given, the others
            measured at the pose being made), and the third hinge's sign s."""
            members = groups[j]
            a, b = (int(x) for x in model.joint_body[j])
            RfA, RfB = rot[a] @ frames[j, 0], rot[b] @ frames[j, 1]
            s = [1.0] * len(members)
            if len(members) == 3 and frames[members[2], 0][:, 0] @ frames[j, 0][:, 0] < 0.0:
                s[2] = -1.0   # (its frame turned half a turn about y: its axis is -z)
            now = group_angles(RfA.T @ RfB, len(members),
                               [s[i] * float(state.joint_coord[k])
                                for i, k in enumerate(members)])
            return [s[i] * coords[k] if k in coords else now[i]
                    for i, k in enumerate(members)], s

        angles = {}
        for j in order:
            kind = self._joints[j].type
            a, b = (int(x) for x in model.joint_body[j])
            if j in groups or kind == SPHERICAL:
                if j in groups:
                    if not any(k in coords for k in groups[j]):
                        continue
                    q, _ = angles[j] = group_state(j)
                    G, u12, u23 = group_rotation(q), la[j, 2], la[j, 3]
                elif j in coords:
                    G, q, u12, u23 = quat_to_matrix(coords[j]), (0.0, 0.0), np.zeros(3), \
                        np.zeros(3)
                else:
                    continue
                if far[j]:   # B's side: R(qfB) = R(qfA) G, the last anchors met
                    RfA = rot[a] @ frames[j, 0]
                    RfB = RfA @ G
                    R = RfB @ frames[j, 1].T
                    x = (pos[a] + rot[a] @ la[j, 0] + group_offset(RfA, q, u12, u23)
                         - R @ la[j, 1] - RfB @ (u12 + u23))
                    place(j, b, R, x)
                else:        # A's side: R(qfA) = R(qfB) G^T
                    RfB = rot[b] @ frames[j, 1]
                    RfA = RfB @ G.T
                    R = RfA @ frames[j, 0].T
                    x = (pos[b] + rot[b] @ la[j, 1] + RfB @ (u12 + u23)
                         - R @ la[j, 0] - group_offset(RfA, q, u12, u23))
                    place(j, a, R, x)
                continue
            if j not in coords:
                continue
            anchor, axis = joint_frame(j)
            dq = (coords[j] - float(state.joint_coord[j])) * (1.0 if far[j] else -1.0)
            moved.update(subtree[j])
            if kind == REVOLUTE:
                move_subtree(pos, rot, subtree[j], anchor, axis, dq, np.zeros(3))
            else:
                move_subtree(pos, rot, subtree[j], anchor, axis, 0.0, dq * axis)
        # ---- the velocities: at rest, but for the placed bodies' and the joints' rates
        vel, angvel = np.zeros_like(state.body_vel), np.zeros_like(state.body_angvel)
        for i, (members, got) in placed.items():
            v, w = got.get("vel", np.zeros(3)), got.get("angvel", np.zeros(3))
            for k in members:
                vel[k] = v + np.cross(w, pos[k] - pos[i])
                angvel[k] = w
        for j in order:
            kind = self._joints[j].type
            a, b = (int(x) for x in model.joint_body[j])
            sign = 1.0 if far[j] else -1.0
            if j in groups:   # each hinge about its axis c_i through its anchor p_i
                members = groups[j]
                if not any(k in speeds for k in members):
                    continue
                q, s = angles[j] if j in angles else group_state(j)
                c, p = group_axes(rot[a] @ frames[j, 0], q, pos[a] + rot[a] @ la[j, 0],
                                  la[j, 2], la[j, 3])
                turns = [(sign * s[i] * speeds[k] * c[i], p[i])
                         for i, k in enumerate(members) if k in speeds]
            elif j not in speeds:
                continue
            elif kind == SPHERICAL:   # W in the joint frame on B, about the anchor
                turns = [(sign * (rot[b] @ frames[j, 1] @ speeds[j]),
                          pos[b] + rot[b] @ la[j, 1])]
            else:
                anchor, axis = joint_frame(j)
                if kind == REVOLUTE:
                    turns = [(sign * speeds[j] * axis, anchor)]
                else:
                    for k in subtree[j]:
                        vel[k] += sign * speeds[j] * axis
                    continue
            for k in subtree[j]:
                for w, p in turns:
                    angvel[k] += w
                    vel[k] += np.cross(w, pos[k] - p)
        moving = [i for i, b in enumerate(self._bodies) if b.kind == DYNAMIC]
        quats(rot, [i for i in moving if i in moved], state.body_quat)
        state.body_pos[moving] = pos[moving]
        state.body_vel[moving] = vel[moving]
        state.body_angvel[moving] = angvel[moving]
        for i in moving:
            R = rot[i]
            state.body_angmom[i] = R @ (self._bodies[i].inertia * (R.T @ angvel[i]))
        # the joints' reports at the new state (the coordinates given, exactly)
        coord, rate = measure(model, state.body_pos, state.body_quat, state.body_vel,
                              state.body_angvel, state.joint_coord)
        for j, q in coords.items():
            if self._joints[j].type != SPHERICAL:
                coord[j] = q
        state.joint_coord[:] = coord
        state.joint_vel[:] = rate
        state.joint_impulse[...] = 0.0           # the warm starts of the pose left
        state.joint_damper_impulse[...] = 0.0
        for carried in WORK_CARRIED:
            if carried != "motor_row":
                getattr(work, carried)[...] = 0.0
        if self._contacts is not None:
            self._contacts.points.count[0] = 0
        for j, (t, w) in set_points.items():
            self.set_target(j, t, w)
        for ref, u in (voltages or {}).items():
            self.set_voltage(ref, u)

    def keyframe_state(self):
        """The state now as a keyframe (apply_keyframe's arguments; physics/keyframe.py):
        every revolute and prismatic joint's coordinate and rate (as the last step reported
        them), every spherical joint's rotation (w, x, y, z, w >= 0) and angular velocity
        (joint frame on B) (not the joints that close a loop), the first body of each robot
        that no joint holds to the fixed world (and every free body: pos, quat, vel, angvel,
        the engine's frame), the voltages of the motors no controller drives and the constant
        set-points of the controllers. Applied to this world it gives this pose and these
        velocities back."""
        from .joint import SPHERICAL
        from .keyframe import joint_frames, outward

        model, state, _ = self._ready()
        roots = getattr(self, "_keyframe_roots", None)
        if roots is None or roots[0] is not model:   # (the same while the model stands)
            fixed = [b.kind != DYNAMIC for b in self._bodies]
            jb = [tuple(int(x) for x in pair) for pair in model.joint_body]
            _, far, subtree = outward(jb, fixed, same=self._keyframe_groups(model)[1])
            inside = {i for j in far for i in subtree[j]}
            roots = self._keyframe_roots = (model, [i for i in range(len(fixed))
                                                    if not fixed[i] and i not in inside], far)
        joints, rates, bodies, voltages, targets = {}, {}, {}, {}, {}
        for j, jn in enumerate(self._joints):
            if j not in roots[2]:   # a joint in a loop: the others' coordinates set it
                pass
            elif jn.type in (REVOLUTE, PRISMATIC):
                joints[jn.name] = float(state.joint_coord[j])
                rates[jn.name] = float(state.joint_vel[j])
            elif jn.type == SPHERICAL:
                a, b = jn.bodies
                qfa, qfb = joint_frames(model, state.body_quat, j)
                q = quat_mul(quat_conj(qfa), qfb)
                q = q / np.linalg.norm(q)
                joints[jn.name] = [float(x) for x in (-q if q[0] < 0.0 else q)]
                dw = state.body_angvel[b] - state.body_angvel[a]
                rates[jn.name] = [float(x) for x in quat_to_matrix(qfb).T @ dw]
            if jn.motor is not None:   # (the state's voltage, the model's set-point)
                m = self._motor_of[j]
                row = model.motor_traj[m]
                if jn.controller is None:
                    voltages[jn.name] = float(state.motor_voltage[m])
                elif row[0] == TRAJ_CONSTANT and not jn.controller[3]:
                    targets[jn.name] = float(row[1]) if row[2] == 0.0 else \
                        [float(row[1]), float(row[2])]
        for i in roots[1]:   # a free body, or a floating robot's root
            body = self._bodies[i]
            bodies[body.name] = {
                "pos": [float(x) for x in state.body_pos[i]],
                "quat": [float(x) for x in state.body_quat[i]],
                "vel": [float(x) for x in state.body_vel[i]],
                "angvel": [float(x) for x in state.body_angvel[i]]}
        return dict(joints=joints, rates=rates, bodies=bodies, voltages=voltages,
                    targets=targets)

    # ---- stepping -----------------------------------------------------------------------------
    def step(self, n=1):
        """Advance n steps. Raises SimulationError if the state goes non-finite."""
        self._advance(int(n), None)

    def run(self, nsteps, record_bodies=False, chunk=0, progress=None):
        """Advance nsteps steps and return a Recording of every step. With `progress`, the
        steps run in chunks of `chunk` and progress(done, nsteps) is called after each."""
        model, state, _ = self._ready()
        nb, nj = state.body_pos.shape[0], state.joint_coord.shape[0]
        rb = nsteps if record_bodies else 0
        sensors = self.sensor_bodies
        rec = Recording(np.zeros(nsteps), np.zeros((nsteps, nj, REC_CHANNELS)),
                        np.zeros((nsteps, STAT_RECORDED)), np.zeros((rb, nb, 3)),
                        np.zeros((rb, nb, 4)),
                        contact=np.zeros((nsteps, len(sensors), REACTION)),
                        contact_bodies=sensors)
        chunk = chunk if chunk > 0 else nsteps
        done = 0
        wall = 0.0
        while done < nsteps:
            k = min(chunk, nsteps - done)
            sl = slice(done, done + k)
            t0 = time.perf_counter()
            self._advance(k, (rec.t[sl], rec.joint[sl], rec.stats[sl],
                              rec.body_pos[sl] if rb else rec.body_pos,
                              rec.body_quat[sl] if rb else rec.body_quat,
                              rec.contact[sl], sensors))
            wall += time.perf_counter() - t0
            guard.check_telemetry(rec, sl, self._joints, self._bodies)
            done += k
            if progress is not None:
                progress(done, nsteps)
        rec.motor = rec.joint[:, model.motor_joint, REC_VOLTAGE:REC_VOLTAGE + 4].copy()
        rec.wall_s = wall
        return rec

    def _advance(self, n, rec):
        if self._hook is not None:
            self._advance_hooked(n, rec)
            return
        model, state, work = self._ready()
        if rec is None:
            rec = guard.empty_records(state)
        guard.steps(self, model, state, work, n, rec)

    def _carried(self, state, work):
        """A copy of all a step carries over to the next (guard.carried)."""
        return guard.carried(state, work, self._contacts)

    def _restore(self, state, work, saved):
        """Put back what _carried saved."""
        guard.restore(state, work, self._contacts, saved)

    def _advance_hooked(self, n, rec):
        """One kernel call per step, the hook called before each (see set_hook)."""
        for k in range(n):
            model, state, work = self._ready()
            if k % self._hook_every == 0:
                self._call_hook()
                model, state, work = self._ready()   # the hook may have grasped or released
            one = guard.empty_records(state) if rec is None else guard.records_part(rec, k, k + 1)
            # (a grasp appends a joint, a release removes one: a recording begun before goes
            # on with the joints it began with, the first ones)
            guard.steps(self, model, state, work, 1, one)

    # ---- user controllers -----------------------------------------------------------------------
    def set_hook(self, hook, every=1):
        """Call `hook(world)` before every `every`-th step (None removes it): a user's
        controller in Python. It reads the sensors and joints (joint_coord, joint_vel,
        joint_reaction, body_contact, motor_state, time: the state after the last step) and
        acts through the live API (set_voltage for motors in voltage mode, set_target for
        controlled ones, grasp / release, set_body_force). The world then steps one kernel
        call per step instead of many: it costs the kernel call's overhead plus the hook's
        own time per step (bench/results.md, "Controller hook"). An exception in the hook
        propagates, with the step's time in its note; the state is that after the last step."""
        if hook is not None and not callable(hook):
            raise ValueError(f"the hook must be callable (got {type(hook).__name__})")
        every = int(every)
        if every < 1:
            raise ValueError(f"every must be >= 1 (got {every})")
        self._hook, self._hook_every = hook, every

    @property
    def hook(self):
        return self._hook

    def _call_hook(self):
        try:
            self._hook(self)
        except Exception as exc:
            exc.add_note(f"in the controller hook at t = {self.time:.6g} s")
            raise

    # ---- grasping -------------------------------------------------------------------------------
    def grasp(self, hand, body, name=None, point=None, kind="fixed"):
        """Hold `body` with `hand` where they are now: a joint created at run time (its
        reaction, joint_reaction, is what a force sensor in the hand reads; the pair stops
        colliding while held). `point` (world) is the grip, by default the middle of the two
        centres. kind "fixed" holds the body rigidly (a tool in a fist); "spherical" holds the
        point and lets the hand turn about it (a hand round a handle: two hands on a wheel
        then leave it its one turning freedom). Returns the joint's name; release(name) lets
        go. The joint is the last one, so the indices of the others do not move."""
        if kind not in ("fixed", "spherical"):
            raise ValueError(f"grasp: kind must be 'fixed' or 'spherical' (got {kind!r})")
        a, b = self._body_index(hand, "grasp"), self._body_index(body, "grasp")
        if name is None:
            k = 0
            while f"grasp:{self._bodies[a].name}:{k}" in self.joint_names:
                k += 1
            name = f"grasp:{self._bodies[a].name}:{k}"
        if point is None:
            pa, pb = self._current_body_pose(a)[0], self._current_body_pose(b)[0]
            point = 0.5 * (np.asarray(pa) + np.asarray(pb))
        self.add_joint(name, kind, a, b, anchor=point)
        return name

    def release(self, joint):
        """Remove a joint (a grasp) at run time; the joints after it move down by one."""
        j = self._joint_index(joint)
        if self._joints[j].motor is not None:
            raise ValueError(f"joint {self._joints[j].name!r} has a motor: only a joint "
                             "without one can be released")
        name = self._joints[j].name
        if self._joints[j].mimic is not None or any(
                other.mimic is not None and other.mimic[0] == name for other in self._joints):
            raise ValueError(f"joint {name!r} is coupled: only an uncoupled joint can be "
                             "released")
        if self._state is not None:
            self._capture_state()
            c = self._carry
            self._carry = c._replace(joint_impulse=np.delete(c.joint_impulse, j, axis=0),
                                     joint_damper_impulse=np.delete(c.joint_damper_impulse, j,
                                                                    axis=0),
                                     joint_coord=np.delete(c.joint_coord, j, axis=0),
                                     joint_vel=np.delete(c.joint_vel, j, axis=0))
        del self._joints[j]
        self._model = None

    # ---- live edits ---------------------------------------------------------------------------
    def set_friction(self, joint, value):
        """Set a joint's Coulomb friction limit (N m or N), effective at the next step."""
        self._set_joint_number(joint, "friction", value, "joint_friction")

    def set_damping(self, joint, value):
        """Set a joint's viscous damping (N m s/rad or N s/m), effective at the next step."""
        self._set_joint_number(joint, "damping", value, "joint_damping")

    def _set_joint_number(self, joint, name, value, field):
        """A joint's setting `name` (physics.settings' range) into model.field, or into its
        record while there is no model."""
        j = self._joint_index(joint)
        where = f"joint {self._joints[j].name!r}"
        try:
            v = SETTINGS[name].check(value)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        jt = self._joints[j].type
        if v > 0 and not getattr(JOINT_TABLE[jt], name):   # its friction or damping column
            raise ValueError(f"{where}: a {JOINT_TYPE_NAMES[jt]} joint has no {name}")
        if self._model is not None:
            getattr(self._model, field)[j] = v
        else:
            setattr(self._joints[j], name, v)

    def set_body_force(self, body, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)):
        """A force at the centre of mass and a torque (world frame) that act until changed."""
        i = self._body_index(body, "force")
        _, state, _ = self._ready()
        state.body_force[i] = vector("force", force)
        state.body_torque[i] = vector("torque", torque)

    def set_drag(self, body, point, target=None, *, quat=None, stiffness=STIFFNESS,
                 damping_ratio=DAMPING_RATIO, max_force=None, max_torque=None):
        """Drag a dynamic body, as with the mouse: from the next step until `clear_drag`, a
        spring-damper computed in every step from the body's pose and velocity of that step
        (physics/perturb.py) pulls its `point` (body frame: from the centre of mass, along the
        principal axes) toward the world point `target`, and/or turns it toward the
        orientation `quat` (w, x, y, z); give at least one of them.  The spring is scaled by
        the body's effective mass at the point (its inertia for turning), so any body moves as
        an oscillator of `stiffness` (1/s^2, default a 2 Hz one) and `damping_ratio` (1:
        critical); the force is capped at `max_force` (N, default FORCE_CAP_G times the
        body's weight) and the turning torque at `max_torque` (N m, default max_force times
        the body's radius of gyration).  One body is dragged at a time: this replaces any
        earlier drag.  Raises ValueError naming a bad value; nothing changes then."""
        i = self._body_index(body, "drag")
        b = self._bodies[i]
        if b.kind != DYNAMIC:
            raise ValueError(f"drag: body {b.name!r} is not dynamic; only dynamic bodies "
                             "can be dragged")
        p = vector("drag point", point)
        if target is None and quat is None:
            raise ValueError("drag: give a target point, a target quat or both")
        t = None if target is None else vector("drag target", target)
        q = None
        if quat is not None:
            q = vector("drag quat", quat, 4)
            n = float(np.linalg.norm(q))
            if n < 1e-9:
                raise ValueError("drag quat must not be zero")
            q = q / n
        k = positive("drag stiffness", stiffness)
        zeta = number("drag damping_ratio", damping_ratio)
        if not (math.isfinite(zeta) and zeta >= 0.0):
            raise ValueError(f"drag damping_ratio must be a finite number >= 0 "
                             f"(got {damping_ratio})")
        mass = self._system_point_mass(i, p) if t is not None else None
        if max_force is None:
            g = float(np.linalg.norm(self._config["gravity"]))
            heft = b.mass if mass is None else max(b.mass, float(np.trace(mass)) / 3.0)
            max_force = FORCE_CAP_G * heft * (g if g > 0.0 else STANDARD_GRAVITY)
        fmax = positive("drag max_force", max_force)
        if max_torque is None:
            max_torque = fmax * math.sqrt(float(np.sum(b.inertia)) / b.mass)
        tmax = positive("drag max_torque", max_torque)
        _, state, _ = self._ready()
        state.drag_mass[:] = 0.0 if mass is None else mass
        state.drag_flags[:] = (t is not None, q is not None)
        state.drag_point[:] = p
        state.drag_target[:] = t if t is not None else 0.0
        state.drag_quat[:] = q if q is not None else (1.0, 0.0, 0.0, 0.0)
        state.drag_param[:] = (k, zeta, fmax, tmax)
        state.drag_body[0] = i

    def _system_point_mass(self, i, point):
        """The effective mass (3, 3), world, kg, at `point` (body i's frame) of the dynamic
        bodies jointed to body i (perturb.py: W^+, W = J_p P J_p^T through the joints' locks),
        or None where no joint ties body i to another dynamic body (its own is used then).
        Worked out once per grab: kept while the body and point stay and the world has not
        gone on by DRAG_MASS_KEEP_S."""
        model, state, work = self._ready()
        key = (i, tuple(float(x) for x in point))
        kept = self._drag_mass
        if kept is not None and kept[0] == key and \
                state.time[0] - kept[1] < DRAG_MASS_KEEP_S:
            return kept[2]
        kinds, jb = model.body_kind, model.joint_body
        island, todo = {i}, [i]
        while todo:
            b = todo.pop()
            for j in np.flatnonzero((jb[:, 0] == b) | (jb[:, 1] == b)):
                for o in (int(jb[j, 0]), int(jb[j, 1])):
                    if kinds[o] == DYNAMIC and o not in island:
                        island.add(o)
                        todo.append(o)
        mass = None
        if len(island) > 1:
            col = {b: 6 * k for k, b in enumerate(sorted(island))}
            n = 6 * len(col)
            M = np.zeros((n, n))
            for b, c in col.items():
                R = quat_to_matrix(state.body_quat[b])
                M[c:c + 3, c:c + 3] = np.eye(3) / model.body_inv_mass[b]
                M[c + 3:c + 6, c + 3:c + 6] = R @ np.diag(model.body_inertia[b]) @ R.T
            rows = []
            for j in range(jb.shape[0]):
                ends = [(e, int(jb[j, e])) for e in (0, 1) if int(jb[j, e]) in col]
                for slot in range(SLOT_LOWER) if ends else ():
                    for r in range(work.joint_rows[j, slot]):
                        row = np.zeros(n)
                        for e, b in ends:
                            row[col[b]:col[b] + 6] = work.joint_J[j, slot, r, 6 * e:6 * e + 6]
                        rows.append(row)
            G = np.array(rows).reshape(-1, n)
            K = np.block([[M, G.T], [G, np.zeros((len(G), len(G)))]])
            r = quat_to_matrix(state.body_quat[i]) @ np.asarray(point, float)
            Jp = np.zeros((3, n))
            c = col[i]
            Jp[:, c:c + 3] = np.eye(3)
            Jp[:, c + 3:c + 6] = [[0.0, r[2], -r[1]], [-r[2], 0.0, r[0]], [r[1], -r[0], 0.0]]
            x = np.linalg.lstsq(K, np.vstack([Jp.T, np.zeros((len(G), 3))]), rcond=None)[0]
            W = Jp @ x[:n]
            mass = np.linalg.pinv(0.5 * (W + W.T), rcond=1e-9, hermitian=True)
            if not np.all(np.isfinite(mass)):
                mass = None
        self._drag_mass = (key, float(state.time[0]), mass)
        return mass

    def clear_drag(self):
        """Let go of the dragged body (if any): no drag force from the next step on."""
        _, state, _ = self._ready()
        state.drag_body[0] = -1
        state.drag_flags[:] = False
        state.drag_force[:] = 0.0
        state.drag_torque[:] = 0.0

    @property
    def drag(self):
        """The drag now, or None: a dict of body (index), point (3,) the grabbed point and
        point_vel (3,) its velocity, world, now; target (3,) or None; quat (4,) or None; force
        (3,) the drag force at the point (N) and torque (3,) about the centre of mass (N m)
        of the last step, world."""
        _, s, _ = self._ready()
        i = int(s.drag_body[0])
        if i < 0:
            return None
        r = quat_to_matrix(s.body_quat[i]) @ s.drag_point
        return dict(body=i, point=s.body_pos[i] + r,
                    point_vel=s.body_vel[i] + np.cross(s.body_angvel[i], r),
                    target=s.drag_target.copy() if s.drag_flags[0] else None,
                    quat=s.drag_quat.copy() if s.drag_flags[1] else None,
                    force=s.drag_force.copy(), torque=s.drag_torque.copy())

    def set_body_pose(self, body, pos=None, quat=None):
        """Place a dynamic body that no joint holds (moving it by hand, e.g. dragging while
        paused): centre of mass `pos` (world) and orientation `quat` (w, x, y, z; normalised
        here).  The body is left at rest.  A jointed body is refused: its pose is the joints'."""
        i = self._body_index(body, "pose")
        b = self._bodies[i]
        if b.kind != DYNAMIC:
            raise ValueError(f"body {b.name!r} is not dynamic; only dynamic bodies are moved")
        if any(i in j.bodies for j in self._joints):
            raise ValueError(f"body {b.name!r} is held by a joint; pull it with a force instead")
        p = None if pos is None else vector("pos", pos)
        q = None if quat is None else vector("quat", quat, 4)
        if q is not None:
            n = float(np.linalg.norm(q))
            if n < 1e-9:
                raise ValueError(f"body {b.name!r}: quat must not be zero")
            q = q / n
        _, state, _ = self._ready()
        if p is not None:
            state.body_pos[i] = p
        if q is not None:
            state.body_quat[i] = q
        state.body_vel[i] = 0.0
        state.body_angvel[i] = 0.0
        state.body_angmom[i] = 0.0

    @property
    def body_island(self):
        """(nbody,) int: the island (dynamic bodies joined by joints) of each body, -1 for a
        static or kinematic body and for a dynamic one that no joint holds (Model.body_island)."""
        model, _, _ = self._ready()
        return model.body_island.copy()

    @property
    def body_jointed(self):
        """For each body, whether a joint holds it."""
        held = set()
        for j in self._joints:
            held.update(j.bodies)
        return [i in held for i in range(len(self._bodies))]

    def set_body_velocity(self, body, vel=None, angvel=None):
        i = self._body_index(body, "velocity")
        b = self._bodies[i]
        if b.kind == STATIC:
            raise ValueError(f"body {b.name!r} is static")
        _, state, _ = self._ready()
        if vel is not None:
            state.body_vel[i] = vector("vel", vel)
        if angvel is not None:
            w = vector("angvel", angvel)
            state.body_angvel[i] = w
            if b.kind == DYNAMIC:
                R = quat_to_matrix(state.body_quat[i])
                state.body_angmom[i] = R @ (b.inertia * (R.T @ w))

    # ---- reading ------------------------------------------------------------------------------
    @property
    def body_names(self):
        return [b.name for b in self._bodies]

    @property
    def joint_names(self):
        return [j.name for j in self._joints]

    @property
    def joint_types(self):
        return [JOINT_TYPE_NAMES[j.type] for j in self._joints]

    def joint_coord_name(self, joint):
        """'position' for prismatic joints, else 'angle' (joint.JOINT_TABLE's coordinate)."""
        return JOINT_TABLE[self._joints[self._joint_index(joint)].type].coordinate[0]

    def _read(self, name):
        _, state, _ = self._ready()
        a = getattr(state, name).view()
        a.flags.writeable = False
        return a

    time = property(lambda self: float(self._read("time")[0]))
    body_pos = property(lambda self: self._read("body_pos"))        # (nbody, 3)
    body_quat = property(lambda self: self._read("body_quat"))      # (nbody, 4)
    body_vel = property(lambda self: self._read("body_vel"))        # (nbody, 3)
    body_angvel = property(lambda self: self._read("body_angvel"))  # (nbody, 3)
    body_angmom = property(lambda self: self._read("body_angmom"))  # (nbody, 3)
    joint_coord = property(lambda self: self._read("joint_coord"))  # (njoint,)
    joint_vel = property(lambda self: self._read("joint_vel"))      # (njoint,)
    joint_friction_force = property(lambda self: self._read("joint_friction_force"))
    joint_friction_vec = property(lambda self: self._read("joint_friction_vec"))
    joint_sliding = property(lambda self: self._read("joint_sliding"))
    joint_impulse = property(lambda self: self._read("joint_impulse"))
    # the sensors, of the last step: (njoint, 6) force (N) and torque (N m) that body A exerts
    # on body B through each joint (all its rows and its motor), world frame, the torque about
    # the anchor on B; (nbody, 6) each body's summed contact force and its torque about the
    # centre of mass
    joint_reaction = property(lambda self: self._read("joint_reaction"))
    body_contact = property(lambda self: self._read("body_contact"))

    def joint_reaction_local(self, joint):
        """Joint `joint`'s reaction (force, torque) in its frame on body B (x = the joint
        axis), as a force/torque sensor mounted there reads it: two 3-vectors."""
        j = self._joint_index(joint)
        _, state, _ = self._ready()
        b = self._joints[j].bodies[1]
        R = quat_to_matrix(quat_mul(state.body_quat[b], self._joints[j].local_frame[1]))
        w = state.joint_reaction[j]
        return R.T @ w[:3], R.T @ w[3:]

    @property
    def sensor_bodies(self):
        """(k,) int64 the bodies whose contact force is recorded every step (Recording.contact,
        the app's plots, CSV): the dynamic bodies held by a joint that have a shape -- a
        robot's feet and hands, a door. Any body's is in body_contact."""
        held = {i for j in self._joints for i in j.bodies}
        return np.array([i for i, b in enumerate(self._bodies)
                         if b.kind == DYNAMIC and b.shape is not None and i in held], np.int64)

    @property
    def joint_friction_limit(self):
        """Each joint's Coulomb friction limit, N m or N."""
        return self._joint_numbers("friction", "joint_friction")

    @property
    def joint_damping(self):
        """Each joint's viscous damping, N m s/rad or N s/m."""
        return self._joint_numbers("damping", "joint_damping")

    def _joint_numbers(self, name, field):
        """A copy of the joints' setting `name`: model.field once built (set_friction and
        set_damping write there), else the records'."""
        if self._model is not None:
            return getattr(self._model, field).copy()
        return np.array([getattr(j, name) for j in self._joints], float)

    @property
    def body_mass(self):
        return np.array([b.mass for b in self._bodies])

    @property
    def body_inertia(self):
        return np.array([b.inertia for b in self._bodies])

    @property
    def body_shapes(self):
        return [b.shape for b in self._bodies]

    @property
    def body_visuals(self):
        """Per body, its drawn-only shapes: ((shape, pos (3,), rot (3, 3), rgba or None), ...)
        in the body frame (centre of mass, principal axes)."""
        return [b.visuals for b in self._bodies]

    def body_reference_pose(self, body):
        """(pos (3,), quat (4,)) now of the frame the body's shape is written in: for a Hull or
        Compound the reference frame add_body placed (x_ref = x - R_ref c, R_ref = R Rp^T);
        for every other body its body_pos, body_quat."""
        i = self._body_index(body, "reference pose")
        pos, quat = self._current_body_pose(i)
        pos, quat = np.array(pos, dtype=float), np.array(quat, dtype=float)
        frame = self._bodies[i].frame
        if frame is None:
            return pos, quat
        c, Rp = frame
        q = quat_mul(quat, quat_conj(matrix_quat(Rp)))
        q = q / np.linalg.norm(q)
        return pos - quat_to_matrix(q) @ c, q

    @property
    def joint_limits(self):
        """Each joint's (lower, upper) limits (rad or m), or None where it has none."""
        return [j.limits for j in self._joints]

    @property
    def joint_bodies(self):
        return [j.bodies for j in self._joints]

    def joint_anchor_world(self, joint):
        """World positions (2, 3) of the joint's anchor as seen on body A and on body B."""
        j = self._joint_index(joint)
        model, state, _ = self._ready()
        out = np.zeros((2, 3))
        for side, i in enumerate(model.joint_body[j]):
            R = quat_to_matrix(state.body_quat[i])
            out[side] = state.body_pos[i] + R @ model.joint_local_anchor[j, side]
        return out

    def joint_frames_world(self):
        """Every joint's anchor on body B (njoint, 3) and joint axis (njoint, 3), world frame,
        at the current state (the x axis of the joint frame on body B; for drawing)."""
        nj = len(self._joints)
        anchors, axes = np.zeros((nj, 3)), np.zeros((nj, 3))
        if nj == 0:
            return anchors, axes
        model, state, _ = self._ready()
        b = model.joint_body[:, 1]
        R = _rotations(state.body_quat[b])
        anchors[:] = state.body_pos[b] + np.einsum("nij,nj->ni", R, model.joint_local_anchor[:, 1])
        F = _rotations(model.joint_local_frame[:, 1])
        axes[:] = np.einsum("nij,nj->ni", R, F[:, :, 0])
        hinges, index = GROUP_HINGES[model.joint_type], GROUP_INDEX[model.joint_type]
        grouped = hinges > 0
        if grouped.any():   # the hinges of a group (gimbal.py): c_1 on A, the middle c_2,
            a = model.joint_body[:, 0]  # the last c_2 (universal) or c_3 on B
            FA = np.einsum("nij,njk->nik", _rotations(state.body_quat[a]),
                           _rotations(model.joint_local_frame[:, 0]))
            FB = np.einsum("nij,njk->nik", R, F)
            first = grouped & (index == 0)
            axes[first] = FA[first, :, 0]
            last = grouped & (index == hinges - 1)
            axes[last] = FB[last, :, index[last]]   # the group frame's axis `index` on B
            mid = grouped & ~first & ~last   # a gimbal's: c_2 = c_3 x c_1 / cos q_2
            c2 = np.cross(FB[mid, :, 2], FA[mid, :, 0])
            axes[mid] = c2 / np.maximum(np.linalg.norm(c2, axis=1), 1e-300)[:, None]
        return anchors, axes

    def contacts(self):
        """This step's contact points (copies): a dict of arrays over k points --
        body (k, 2) bodies A, B; point (k, 3) midpoint, world; normal (k, 3) A to B;
        depth (k,) overlap (> 0) or gap (< 0), m; impulse (k, 6) accumulated p_n, p_t1, p_t2
        (N s) and rolling p_r1, p_r2, spinning p_s (N m s) of the last step; force (k, 3) the
        contact force on B (normal and sliding impulses / dt), world; sliding (k,) bool.
        Friction is solved once per pair (at the centroid of its points, contact_solver.py);
        here each point gets the share of it that its normal impulse has of the pair's."""
        self._ready()
        c = self._contacts
        if c is None:   # nothing in this world can touch
            c = make_contacts(0)
        c, rows = c.points, c.rows
        k = int(c.count[0])
        n, t = c.normal[:k], rows.tangent[:k]
        p = c.impulse[:k].copy()
        nman = int(rows.man_count[0])
        if k and nman:
            first = rows.man_first[:nman + 1]
            sizes = np.diff(first)
            owner = np.repeat(np.arange(nman), sizes)
            total = np.add.reduceat(p[:, 0], first[:-1])
            share = np.where(total[owner] > 0.0,
                             p[:, 0] / np.where(total > 0.0, total, 1.0)[owner],
                             1.0 / sizes[owner])
            p[:, 1:] = p[first[:-1], 1:][owner] * share[:, None]
        force = (p[:, 0:1] * n + p[:, 1:2] * t[:, 0] + p[:, 2:3] * t[:, 1]) / self.dt
        return dict(body=c.body[:k].copy(), point=c.point[:k].copy(), normal=n.copy(),
                    depth=c.depth[:k].copy(), impulse=p, force=force,
                    sliding=c.sliding[:k].copy())

    @property
    def contact_stats(self):
        """Of the last step: candidate pairs from the broad phase, contact points, seconds
        spent detecting (broad + narrow phase), deepest overlap (m), seconds of the broad
        phase alone (part of detect_s), touching pairs that kept their manifold (see the
        manifold_reuse setting)."""
        self._ready()
        s = self._contacts.scratch.stats if self._contacts is not None else np.zeros(6)
        return dict(pairs=int(s[0]), points=int(s[1]), detect_s=float(s[2]),
                    max_depth=float(s[3]), broad_s=float(s[4]), reused=int(s[5]))

    @property
    def solver_stats(self):
        """Last step: iterations done, final residual (max |dp|, N s), solve wall seconds."""
        _, state, _ = self._ready()
        stats = state.solver_stats
        return {"iterations": int(stats[STAT_ITERATIONS]), "residual": float(stats[STAT_RESIDUAL]),
                "seconds": float(stats[STAT_SECONDS])}

