"""Behaviours: the controllers shipped with Sharnir that a scene file may name
(`behaviour = { name = "..." }`): Python hooks (World.set_hook) over the public World API, IK
(physics.ik) and the sensors. Scene files run no code of their own; only these.

valve_turn  paper 002's demonstration (scenes/biped.toml): the biped stands, reaches the
            valve's rim with both hands by IK, grasps it, turns it 90 degrees and back with
            force feedback from the hand sensors, lets go and lowers its arms.
"""
import math

import numpy as np

from ..physics.ik import ArmIK, joint_chain
from ..physics.transforms import quat_matrix, rotation

TURN = math.radians(100.0)   # commanded; the arms lag a few degrees behind it


def smoothstep(x):
    """0 before 0, 1 after 1, 3x^2 - 2x^3 between: a move that starts and ends at rest."""
    x = min(1.0, max(0.0, x))
    return x * x * (3.0 - 2.0 * x)


class ValveTurn:
    """The timeline (s): stand until `stand`; reach the rim in `reach`; grasp; turn by
    `angle` in `turn` and back in `turn`; let go; lower the arms in `reach`.

    Each hand's target is its grip, turned about the axle by the commanded angle. Force
    feedback: each grip's reaction f (World.joint_reaction: the force from the hand on the
    wheel) less its part along the rim's tangent (the turning force) moves the hand's target
    by ds/dt = -k f_squeeze (an admittance, |s_i| <= 2 cm), so the two hands, which would
    otherwise squeeze, stretch or twist the wheel wherever the arms and the rim disagree,
    settle where the grips carry only the turning force."""

    CONTROL_EVERY = 4      # steps between IK solves (60 Hz at dt = 1/240)
    ADMITTANCE = 4e-4      # m/(N s)
    MAX_OFFSET = 0.02      # m

    def __init__(self, world, stand=30.0, reach=2.0, turn=4.0, angle=TURN):
        self.world = world
        self.stand, self.reach, self.turn, self.angle = stand, reach, turn, angle
        names = world.body_names
        self.wheel = names.index("valve_wheel")
        valve = world.joint_names.index("valve")
        anchors, axes = world.joint_frames_world()
        self.centre, self.axis = anchors[valve].copy(), axes[valve].copy()
        shape = world.body_shapes[self.wheel]
        self.radius = float(shape.radius)
        # the rim in the wheel's plane: e1 (towards the robot's left), e2 = axis x e1 (up)
        self.e1 = np.array([0.0, 1.0, 0.0])
        self.e2 = np.cross(self.axis, self.e1)
        # the hand's centre stands off the wheel's mid-plane by the wheel's half thickness and
        # the hand's radius, on the robot's side
        self.standoff = float(shape.half_length) + 0.035
        self.sides = []
        for side, phase in (("left", 0.0), ("right", math.pi)):
            hand = names.index(f"{side}_hand")
            forearm = f"{side}_forearm"
            chain = joint_chain(world, "torso", forearm)
            # the hand's centre in the forearm's frame
            R = quat_matrix(world.body_quat[names.index(forearm)])
            point = R.T @ (world.body_pos[hand] - world.body_pos[names.index(forearm)])
            self.sides.append(dict(name=side, hand=hand, phase=phase, grip=None, shift=np.zeros(3),
                                   ik=ArmIK(world, chain, forearm, point=point), rest=None))
        self.steps = 0
        self.log = []      # (t, phase) when each phase begins, for tests and the note

    # the timeline
    def phase_at(self, t):
        t0 = self.stand
        marks = (("stand", t0), ("reach", t0 + self.reach), ("grasp", t0 + self.reach + 0.3),
                 ("turn", t0 + self.reach + 0.3 + self.turn),
                 ("back", t0 + self.reach + 0.3 + 2 * self.turn),
                 ("release", t0 + self.reach + 0.6 + 2 * self.turn),
                 ("lower", t0 + 2 * self.reach + 0.6 + 2 * self.turn))
        for name, end in marks:
            if t < end:
                return name, end
        return "done", math.inf

    def rim_point(self, phase, radius):
        return (self.centre - self.standoff * self.axis
                + radius * (math.cos(phase) * self.e1 + math.sin(phase) * self.e2))

    def __call__(self, world):
        self.steps += 1
        t = world.time
        phase, end = self.phase_at(t)
        if not self.log or self.log[-1][1] != phase:
            self.log.append((t, phase))
            self._enter(phase)
        if phase == "stand" or (self.steps - 1) % self.CONTROL_EVERY:
            return
        h = world.dt * self.CONTROL_EVERY
        turned = 0.0
        if phase in ("turn", "back", "grasp"):
            s = smoothstep(1.0 - (end - t) / self.turn) if phase != "grasp" else 0.0
            turned = self.angle * (s if phase == "turn" else 1.0 - s if phase == "back" else 0)
        for side in self.sides:
            if phase == "reach":
                s = smoothstep(1.0 - (end - t) / self.reach)
                goal = (1.0 - s) * side["start"] + s * self.rim_point(side["phase"], self.radius)
            elif phase in ("grasp", "turn", "back"):
                # the grip turns with the wheel: where it was taken, rotated about the axle
                # by the commanded angle, moved by the admittance offset
                rot = rotation(self.axis, turned)
                goal = self.centre + rot @ (side["held"] - self.centre)
                if side["grip"] is not None:
                    j = world.joint_names.index(side["grip"])
                    f = world.joint_reaction[j, :3]       # on the wheel, from the hand
                    tangent = np.cross(self.axis, goal - self.centre)
                    tangent /= np.linalg.norm(tangent)
                    squeeze = f - (f @ tangent) * tangent  # all but the turning force
                    side["shift"] = np.clip(side["shift"] - self.ADMITTANCE * squeeze * h,
                                            -self.MAX_OFFSET, self.MAX_OFFSET)
                goal = goal + side["shift"]
            elif phase == "release":
                goal = side["held"] + side["shift"]
            elif phase == "lower":
                s = smoothstep(1.0 - (end - t) / self.reach)
                goal = (1.0 - s) * side["let_go"] + s * side["rest"]
            else:   # done
                goal = side["rest"]
            q = side["ik"].solve(goal, iterations=20, tol=1e-5)
            last = side.get("last")
            rate = (q - last) / h if last is not None else np.zeros_like(q)
            side["last"] = q
            for jj, qj, wj in zip(side["ik"].joints, q, rate):
                world.set_target(jj, float(qj), float(wj))

    def _enter(self, phase):
        world = self.world
        for side in self.sides:
            hand_pos = side["ik"].end_pose()[0]
            if phase == "reach":
                side["start"] = side["rest"] = hand_pos.copy()
            elif phase == "grasp":
                side["held"] = hand_pos.copy()
                side["shift"] = np.zeros(3)
                side["grip"] = world.grasp(f"{side['name']}_hand", self.wheel,
                                           name=f"{side['name']}_grip",
                                           point=world.body_pos[side["hand"]],
                                           kind="spherical")
            elif phase == "release" and side["grip"] is not None:
                world.release(side["grip"])
                side["grip"] = None
            elif phase == "lower":
                side["let_go"] = hand_pos.copy()


BEHAVIOURS = {"valve_turn": ValveTurn}


def make(name, world):
    """The hook of behaviour `name` for `world`; ValueError naming the known ones."""
    if name not in BEHAVIOURS:
        raise ValueError(f"unknown behaviour {name!r} (behaviours are: "
                         f"{', '.join(sorted(BEHAVIOURS))})")
    try:
        return BEHAVIOURS[name](world)
    except (ValueError, KeyError, AttributeError) as exc:
        raise ValueError(f"behaviour {name!r} does not fit this scene: {exc}") from None
