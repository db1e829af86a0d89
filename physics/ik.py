"""Inverse kinematics of a joint chain by damped least squares (paper 002 drives its robot's
arms by IK).

A chain is the joints k = 0 .. n-1 from a base body to an end body; s_k = +1 when joint k's
body B is on the end's side, -1 when the chain runs through it backwards. At a configuration
(anchors a_k, unit axes u_k, world) the end point p and the end body's orientation R_e move
with the joint coordinates q as

    revolute k:    dp = s_k u_k x (p - a_k) dq_k,    dtheta = s_k u_k dq_k
    prismatic k:   dp = s_k u_k dq_k,                dtheta = 0

which are the columns of the Jacobian J (3 x n, or 6 x n with orientation). The error is
e = (p* - p) (and the rotation vector of R* R_e^T), and a damped least-squares step

    dq = J^T (J J^T + lambda^2 E)^-1 e',        scaled down to max_k |dq_k| <= max_step,

(e' = e shortened to at most MAX_REACH: a far target is approached in steps along which the
linearisation holds) stays bounded where J loses rank (a stretched arm, a target out of
reach: it then moves the point as close as it can). The step is applied to a copy of the
chain by forward kinematics of world points -- joint k turns (or slides) every anchor, axis
and the end point downstream of it about its own, already moved, axis -- and the whole is
repeated until |e| <= tol.
Coordinates are clamped to the joints' limits. Nothing is stepped: the result is the
coordinates (the world's joint_coord convention) for position controllers to go to
(World.set_target; CartesianFollower does it every control tick).
"""
import numpy as np

from .joint import JOINT_TYPE_INFO, scene_types_with
from .transforms import quat_matrices, rotation, rotation_vector

MAX_REACH = 0.1   # m (or rad of orientation error): the longest error one step aims at


def _one_dof(joint_type):
    """IK drives a joint of one coordinate (joint.JOINT_TABLE), about or along its axis."""
    return joint_type.dofs == 1


def joint_chain(world, base, end):
    """The joints (indices) on the path from body `base` to body `end` (names or indices),
    base side first. Raises ValueError if no joints connect them."""
    names = world.body_names
    a = names.index(base) if isinstance(base, str) else int(base)
    b = names.index(end) if isinstance(end, str) else int(end)
    pairs = world.joint_bodies
    came = {a: None}
    frontier = [a]
    while frontier and b not in came:
        nxt = []
        for body in frontier:
            for j, (x, y) in enumerate(pairs):
                for here, there in ((x, y), (y, x)):
                    if here == body and there not in came and there != 0:
                        came[there] = (j, body)
                        nxt.append(there)
        frontier = nxt
    if b not in came:
        raise ValueError(f"no chain of joints from body {names[a]!r} to body {names[b]!r}")
    chain = []
    while came[b] is not None:
        j, b = came[b]
        chain.append(j)
    return chain[::-1]


class ArmIK:
    """Damped least-squares IK of the joints `joints` (indices or names, base side first:
    joint_chain gives them) for a point `point` fixed in `end_body` (body frame, from its
    centre of mass) and, with orientation=True, the end body's orientation."""

    def __init__(self, world, joints, end_body, point=(0.0, 0.0, 0.0), damping=0.05,
                 max_step=0.3, orientation=False):
        names = world.joint_names
        self.world = world
        self.joints = [names.index(j) if isinstance(j, str) else int(j) for j in joints]
        if not self.joints:
            raise ValueError("IK needs at least one joint")
        types = world.joint_types
        for j in self.joints:   # one coordinate, about or along the axis joint_frames_world has
            if JOINT_TYPE_INFO[types[j]].dofs != 1:
                raise ValueError(f"joint {names[j]!r} is {types[j]}: IK drives "
                                 f"{scene_types_with(_one_dof)} joints")
        self.end = (world.body_names.index(end_body) if isinstance(end_body, str)
                    else int(end_body))
        self.point = np.asarray(point, float).reshape(3)
        if not (np.all(np.isfinite(self.point)) and damping >= 0 and max_step > 0):
            raise ValueError("IK: point must be finite, damping >= 0 and max_step > 0")
        self.damping, self.max_step, self.orientation = float(damping), float(max_step), \
            bool(orientation)
        # which side of each joint the end is on: +1 when body B is downstream
        pairs = world.joint_bodies
        self.sign = np.ones(len(self.joints))
        self.linear = np.array([JOINT_TYPE_INFO[types[j]].linear for j in self.joints])
        body = self.end
        for k in range(len(self.joints) - 1, -1, -1):
            a, b = pairs[self.joints[k]]
            if body == b:
                self.sign[k], body = 1.0, a
            elif body == a:
                self.sign[k], body = -1.0, b
            else:
                raise ValueError(f"joints {[names[j] for j in self.joints]} are not a chain "
                                 f"ending at body {world.body_names[self.end]!r} (list them "
                                 "base side first; joint_chain finds them)")
        limits = world.joint_limits
        self.lower = np.array([limits[j][0] if limits[j] else -np.inf for j in self.joints])
        self.upper = np.array([limits[j][1] if limits[j] else np.inf for j in self.joints])
        self.error = np.inf       # |e| of the last solve
        self.iterations = 0

    def end_pose(self):
        """The point (world) and the end body's rotation matrix, now."""
        R = quat_matrices(self.world.body_quat[self.end])[0]   # (normalised)
        return self.world.body_pos[self.end] + R @ self.point, R

    def solve(self, target_pos, target_quat=None, iterations=50, tol=1e-7):
        """Joint coordinates (rad or m, one per joint, continuing world.joint_coord) that put
        the point at target_pos (and, with orientation, the end body at target_quat), from
        the world's current pose; the residual |e| is left in self.error."""
        target = np.asarray(target_pos, float).reshape(3)
        if not np.all(np.isfinite(target)):
            raise ValueError(f"IK target must be 3 finite numbers (got {target_pos})")
        Rt = None
        if self.orientation:
            if target_quat is None:
                raise ValueError("IK with orientation needs target_quat")
            Rt = quat_matrices(target_quat)[0]
        anchors, axes = self.world.joint_frames_world()
        a = anchors[self.joints].copy()
        u = axes[self.joints].copy()
        p, Re = self.end_pose()
        q0 = self.world.joint_coord[self.joints].copy()
        q = q0.copy()
        n = len(self.joints)
        rows = 6 if self.orientation else 3
        lam2 = self.damping ** 2
        self.iterations = 0
        for _ in range(iterations):
            e = np.empty(rows)
            e[:3] = target - p
            if self.orientation:
                e[3:] = rotation_vector(Rt @ Re.T)
            self.error = float(np.linalg.norm(e))
            if self.error <= tol:
                break
            Jm = np.zeros((rows, n))
            for k in range(n):
                if not self.linear[k]:
                    Jm[:3, k] = self.sign[k] * np.cross(u[k], p - a[k])
                    if self.orientation:
                        Jm[3:, k] = self.sign[k] * u[k]
                else:
                    Jm[:3, k] = self.sign[k] * u[k]
            # a far target is approached in steps of at most MAX_REACH (Buss's error clamp)
            scale = min(1.0, MAX_REACH / self.error)
            dq = Jm.T @ np.linalg.solve(Jm @ Jm.T + lam2 * np.eye(rows), scale * e)
            big = np.abs(dq).max()
            if big > self.max_step:     # scaled as a whole: the direction is kept
                dq *= self.max_step / big
            dq = np.clip(q + dq, self.lower, self.upper) - q
            q += dq
            # forward kinematics: joint k moves everything downstream about its moved axis
            for k in range(n):
                if dq[k] == 0.0:
                    continue
                if not self.linear[k]:
                    R = rotation(u[k], self.sign[k] * dq[k])
                    a[k + 1:] = (a[k + 1:] - a[k]) @ R.T + a[k]
                    u[k + 1:] = u[k + 1:] @ R.T
                    p = R @ (p - a[k]) + a[k]
                    Re = R @ Re
                else:
                    shift = self.sign[k] * dq[k] * u[k]
                    a[k + 1:] += shift
                    p = p + shift
            self.iterations += 1
        else:
            e = target - p
            self.error = float(np.linalg.norm(e)) if not self.orientation else float(
                np.linalg.norm(np.concatenate([e, rotation_vector(Rt @ Re.T)])))
        return q


class CartesianFollower:
    """Drive the chain of `ik` so that its point follows `trajectory(t)` -> position (or
    (position, quaternion) with orientation): call update() every control tick, e.g. from a
    World.set_hook. Each joint must carry a motor with a position controller; the set-points
    and the rates they aim at (finite differences of successive solutions) go to
    World.set_target."""

    def __init__(self, ik, trajectory):
        self.ik, self.trajectory = ik, trajectory
        self._last = None

    def update(self, t=None):
        world = self.ik.world
        t = world.time if t is None else t
        goal = self.trajectory(t)
        if self.ik.orientation:
            q = self.ik.solve(goal[0], goal[1])
        else:
            q = self.ik.solve(goal)
        rate = np.zeros_like(q)
        if self._last is not None and t > self._last[0]:
            rate = (q - self._last[1]) / (t - self._last[0])
        self._last = (t, q)
        for j, qj, wj in zip(self.ik.joints, q, rate):
            world.set_target(j, float(qj), float(wj))
        return q

    def __call__(self, world):
        """As a World.set_hook hook."""
        self.update(world.time)
