"""The drag (physics/perturb.py, World.set_drag): the mouse's spring-damper, computed by the
physics in every step from that step's pose and velocity.

On paper: a free body pulled at its centre of mass is a critically damped oscillator of
w = 2 pi 2 Hz, so its error after a step d of the target is d (1 + w t) e^(-w t); the
integrator (the spring is implicit: v+ = (v + h k e) / (1 + h c + h^2 k)) follows it to
first order in h.  The first step's force from rest is M k e / (1 + h c + h^2 k), M the
effective mass matrix at the point.  Whatever the rate the target moves at (2, 10, 60 Hz
here: a frame rate, the target jumping along a path while the world steps at its own dt),
the grabbed point settles on the target, the speeds stay under the critically damped bound
(a jump d gives at most d w / e) and the drag's work goes where the paper says (into the
hinge's friction, into lifting a box) rather than into a growing swing.
"""
import math

import numpy as np
import pytest
from conftest import kinetic_energy

from sharnir.physics import Box, World
from sharnir.physics.perturb import FORCE_CAP_G, STIFFNESS
from sharnir.physics.shape import quat_matrix
from sharnir.scenes import SCENE_DIR, load_scene

OMEGA = math.sqrt(STIFFNESS)   # 4 pi rad/s: the 2 Hz spring
C = 2.0 * OMEGA                # critical damping, 1/s
G = 9.81
BOX = Box((0.5, 0.2, 0.1))


def free_box(dt=1 / 240, mass=3.0, gravity=(0.0, 0.0, 0.0)):
    w = World(dt=dt, gravity=gravity)
    w.add_body("box", BOX, mass=mass)
    return w


def implicit_factor(dt):
    """1 + h c + h^2 k: what the implicit spring divides by."""
    return 1.0 + dt * C + dt * dt * STIFFNESS


def effective_mass_matrix(world, i, r):
    """M = K^-1, K = 1/m - [r]x I_w^-1 [r]x, from the mass and inertia the world was given."""
    R = quat_matrix(np.asarray(world.body_quat[i]))
    inv_iw = R @ np.diag(1.0 / world.body_inertia[i]) @ R.T
    S = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    return np.linalg.inv(np.eye(3) / world.body_mass[i] - S @ inv_iw @ S)


def drag_along(world, body, local, path, rate, move_s, hold_s):
    """Drag `local` (body frame) of `body` along path(s), s from 0 to 1 over move_s seconds,
    with the target updated only `rate` times a second (a frame rate: it jumps to where the
    path is at each frame), then held for hold_s.  Returns per-step arrays: t, point,
    target, speed (of the point), ke (of the body) and work (the drag's, summed: its force
    times the point's displacement)."""
    i = world.body_names.index(body)
    out = {k: [] for k in ("t", "point", "target", "speed", "ke", "work", "heat")}
    work, heat, target = 0.0, 0.0, None
    for step in range(round((move_s + hold_s) / world.dt)):
        frame = math.floor(step * world.dt * rate + 1e-9) / rate
        new = np.asarray(path(min(frame, move_s) / move_s), dtype=float)
        if target is None or np.any(new != target):
            target = new
            world.set_drag(i, local, target)
        before = world.drag["point_vel"]
        world.step(1)
        d = world.drag
        work += float(d["force"] @ (before + d["point_vel"])) * 0.5 * world.dt
        heat += float(np.sum(np.abs(world.joint_friction_force * world.joint_vel))) * world.dt
        for key, value in (("t", world.time), ("point", d["point"]), ("target", target),
                           ("speed", np.linalg.norm(d["point_vel"])),
                           ("ke", kinetic_energy(world, [i])), ("work", work),
                           ("heat", heat)):
            out[key].append(value)
    return {k: np.asarray(v) for k, v in out.items()}


def largest_jump(path, rate, move_s):
    """The largest distance the target jumps at one frame."""
    frames = [path(min(k / rate, move_s) / move_s) for k in range(math.ceil(rate * move_s) + 1)]
    return float(np.linalg.norm(np.diff(frames, axis=0), axis=1).max())


# ---- the law, on paper ------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [1 / 240, 1 / 480])
def test_a_free_body_pulled_at_its_centre_is_a_critically_damped_2_hz_oscillator(dt):
    d = 0.2
    world = free_box(dt)
    world.set_drag("box", (0.0, 0.0, 0.0), (d, 0.0, 0.0))
    rec = world.run(round(1.0 / dt), record_bodies=True)
    error = d - rec.body_pos[:, 1, 0]
    paper = d * (1.0 + OMEGA * rec.t) * np.exp(-OMEGA * rec.t)
    # first order in h: 0.8 % of d at 1/240 s, 0.4 % at 1/480 s (h w = 0.052, 0.026)
    assert np.abs(error - paper).max() <= 0.2 * OMEGA * dt * d
    assert error.min() > 0.0                  # critically damped: it never overshoots
    np.testing.assert_allclose(rec.body_pos[:, 1, 1:], 0.0, atol=1e-15)


def test_the_first_step_from_rest_pulls_with_the_implicit_spring_force():
    dt, d = 1 / 240, 0.05
    world = free_box(dt)
    world.set_drag("box", (0.0, 0.0, 0.0), (0.0, 0.0, d))
    world.step(1)
    expected = world.body_mass[1] * STIFFNESS * d / implicit_factor(dt)
    np.testing.assert_allclose(world.drag["force"], (0.0, 0.0, expected), rtol=1e-12)
    np.testing.assert_allclose(world.drag["torque"], 0.0, atol=1e-12)


def test_off_the_centre_the_force_is_the_effective_mass_matrix_times_the_spring():
    dt = 1 / 240
    world = free_box(dt)
    r = np.array([0.5, 0.0, 0.1])
    e = np.array([0.03, 0.04, -0.02])
    world.set_drag("box", r, r + e)
    M = effective_mass_matrix(world, 1, r)      # at the pose the step starts from
    world.step(1)
    force = world.drag["force"]
    np.testing.assert_allclose(force, M @ (STIFFNESS * e) / implicit_factor(dt), rtol=1e-9)
    np.testing.assert_allclose(world.drag["torque"], np.cross(r, force), rtol=1e-12)
    # pulling across the lever arm: 1 / (1/m + r^2 / I), MuJoCo's effective mass
    world.set_drag("box", (0.5, 0.0, 0.0), (0.5, 0.01, 0.0))
    world.set_body_pose("box", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    world.step(1)
    m, inertia_z = world.body_mass[1], world.body_inertia[1, 2]
    along = 1.0 / (1.0 / m + 0.25 / inertia_z)
    assert world.drag["force"][1] == pytest.approx(
        along * STIFFNESS * 0.01 / implicit_factor(dt), rel=1e-9)


def test_a_heavier_body_gets_proportionally_more_force():
    forces = []
    for mass in (1.0, 7.0):
        world = free_box(mass=mass)
        world.set_drag("box", (0.5, 0.1, 0.0), (0.4, 0.4, 0.2))
        world.step(1)
        forces.append(world.drag["force"])
    np.testing.assert_allclose(forces[1], 7.0 * forces[0], rtol=1e-12)  # the same motion


def test_damping_opposes_the_point_velocity():
    world = free_box()
    world.set_body_velocity("box", vel=(1.0, 0.0, 0.0))
    world.set_drag("box", (0.0, 0.0, 0.0), world.body_pos[1].copy())
    world.step(1)
    assert world.drag["force"][0] < 0.0
    np.testing.assert_allclose(world.drag["force"][1:], 0.0, atol=1e-12)


def test_the_force_is_capped_at_fifty_times_the_weight():
    world = free_box(gravity=(0.0, 0.0, -G))
    world.set_drag("box", (0.0, 0.0, 0.0), (1000.0, 0.0, 0.0))
    world.step(1)
    cap = FORCE_CAP_G * world.body_mass[1] * G
    assert np.linalg.norm(world.drag["force"]) == pytest.approx(cap, rel=1e-12)
    world.set_drag("box", (0.0, 0.0, 0.0), (1000.0, 0.0, 0.0), max_force=5.0)
    world.step(1)
    assert np.linalg.norm(world.drag["force"]) == pytest.approx(5.0, rel=1e-12)


def test_turning_is_the_same_critically_damped_spring_on_the_angle():
    # a quarter turn about the body's z axis (a principal axis): the angle error follows
    # (1 + w t) e^(-w t) like the point's, and no force acts
    dt, angle = 1 / 480, 0.5
    world = free_box(dt)
    world.set_drag("box", (0.5, 0.0, 0.0), quat=(math.cos(angle / 2), 0.0, 0.0,
                                                 math.sin(angle / 2)))
    rec = world.run(round(1.0 / dt), record_bodies=True)
    q = rec.body_quat[:, 1]
    turned = 2.0 * np.arctan2(q[:, 3], q[:, 0])
    paper = angle * (1.0 - (1.0 + OMEGA * rec.t) * np.exp(-OMEGA * rec.t))
    assert np.abs(turned - paper).max() <= 0.2 * OMEGA * dt * angle
    np.testing.assert_allclose(rec.body_pos[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(world.drag["force"], 0.0, atol=0.0)


def test_a_dragged_body_hangs_below_the_target_by_its_weight_over_the_spring():
    # at rest: M k e / (1 + h c + h^2 k) = m g  ->  e = g (1 + h c + h^2 k) / k
    dt = 1 / 240
    world = free_box(dt, gravity=(0.0, 0.0, -G))
    world.set_drag("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    world.step(round(3.0 / dt))
    sag = G * implicit_factor(dt) / STIFFNESS
    np.testing.assert_allclose(world.body_pos[1], (0.0, 0.0, -sag), atol=1e-9)
    np.testing.assert_allclose(world.drag["force"], (0.0, 0.0, world.body_mass[1] * G),
                               rtol=1e-7)


# ---- at any frame rate -----------------------------------------------------------------------

RATES = [2, 10, 60]   # Hz: how often the target moves (the app's frame rate)


@pytest.mark.parametrize("rate", RATES)
def test_a_free_body_follows_a_target_updated_at_any_rate(rate):
    world = free_box(1 / 240)
    local = np.array([0.5, 0.2, 0.1])           # a corner: the body turns as it follows
    start = local.copy()

    def path(s):
        return start + s * np.array([0.6, -0.3, 0.4])

    r = drag_along(world, "box", local, path, rate, 1.0, 2.0)
    error = np.linalg.norm(r["point"] - r["target"], axis=1)
    # settled on the target, up to the wobble of the spin about the grabbed point (which
    # the drag does not damp: it holds the point, not the orientation)
    hold = r["t"] > 2.0
    assert error[hold].max() < 0.01 * np.linalg.norm([0.6, -0.3, 0.4])
    # the speed never exceeds the bound of a critically damped approach, jump after jump
    jump = largest_jump(path, rate, 1.0)
    path_speed = np.linalg.norm([0.6, -0.3, 0.4]) / 1.0
    assert r["speed"].max() <= OMEGA * jump / math.e + path_speed
    # the drag is the only force: its work is the kinetic energy at every step; once the
    # target holds still, no swing grows (the spin left over decays slowly)
    np.testing.assert_allclose(r["work"], r["ke"], atol=0.01 * r["ke"].max())
    settling = (r["t"] > 1.0) & (r["t"] <= 1.5)
    assert r["ke"][r["t"] > 2.5].max() <= r["ke"][settling].max()


def door_world():
    """scenes/door.toml without its push: a 21.4565 kg door on a vertical hinge with 20 N m
    of friction, dt 0.01 s (the largest dt the shipped scenes use)."""
    return load_scene(SCENE_DIR / "door.toml", ["loads.0.torque=[0,0,0]"])


DOOR_TURN = -0.8       # rad: the target goes round the hinge by this much
DOOR_FRICTION = 20.0   # N m


@pytest.mark.parametrize("rate", RATES)
def test_the_door_follows_a_target_updated_at_any_rate(rate):
    world = door_world()
    assert world.dt == 0.01
    hinge = np.array([0.0, 0.0, 1.0])
    local = np.array([0.0, -0.02, 0.0])         # the middle of the door's face
    arm = world.body_pos[1] + local - hinge

    def path(s):
        c, si = math.cos(DOOR_TURN * s), math.sin(DOOR_TURN * s)
        return hinge + (c * arm[0] - si * arm[1], si * arm[0] + c * arm[1], arm[2])

    r = drag_along(world, "door", local, path, rate, 1.0, 2.0)
    # friction holds the door where the spring's torque about the hinge falls below 20 N m:
    # m k d^2 |angle error| / (1 + h c + h^2 k) <= 20, d = 0.5 m (M = m at the centre)
    dead_band = DOOR_FRICTION * implicit_factor(0.01) / (world.body_mass[1] * STIFFNESS * 0.25)
    assert abs(world.joint_coord[0] - DOOR_TURN) <= dead_band * 1.01
    assert abs(world.joint_vel[0]) < 1e-9     # stopped (held by friction)
    jump = largest_jump(path, rate, 1.0)
    assert r["speed"].max() <= OMEGA * jump / math.e + abs(DOOR_TURN) * np.linalg.norm(arm)
    # the drag's work is the door's kinetic energy plus the hinge's friction heat at every
    # step, never a growing swing; in all, 20 N m times the angle and what the damper
    # takes braking each jump: 15.4 J for the 0.77 rad, 18.5 J at 2 Hz
    np.testing.assert_allclose(r["work"], r["ke"] + r["heat"], atol=0.02 * r["work"].max())
    friction_work = DOOR_FRICTION * abs(world.joint_coord[0])
    assert friction_work * 0.99 <= r["work"][-1] <= 1.25 * friction_work


def test_a_force_held_over_a_whole_frame_swings_the_door_but_the_drag_does_not():
    # The app once computed the spring force once per drawn frame, from the pose and the
    # velocity it saw in the snapshots (the last two frames), and held it for the frame: at
    # 10 frames/s on the door (dt 0.01) that explicit, lagging step (c T = 2.5 > 2) swung the
    # door at tens of rad/s.  The same pull applied by the physics every step settles.
    local = np.array([0.0, -0.02, 0.0])
    target = door_world().body_pos[1] + local + (0.0, -0.35, 0.0)
    held, dragged = door_world(), door_world()
    cap = FORCE_CAP_G * held.body_mass[1] * G
    swing, previous = [], None
    for _ in range(40):                         # 4 s of 10 Hz frames
        point = held.body_pos[1] + quat_matrix(np.asarray(held.body_quat[1])) @ local
        r = point - held.body_pos[1]
        vel = np.zeros(3) if previous is None else (point - previous) / 0.1
        previous = point
        force = effective_mass_matrix(held, 1, r) @ (STIFFNESS * (target - point) - C * vel)
        force *= min(1.0, cap / np.linalg.norm(force))
        held.set_body_force(1, force, np.cross(r, force))
        swing.append(np.abs(held.run(10).joint[:, 0, 1]).max())
    dragged.set_drag(1, local, target)
    rec = dragged.run(400)
    assert max(swing[20:]) > 20.0 and max(swing[20:]) > 2.0 * swing[0]   # it grew
    # the critically damped bound: the 0.35 m jump at 0.5 m from the hinge, 3.2 rad/s
    assert np.abs(rec.joint[:, 0, 1]).max() <= OMEGA * 0.35 / math.e / 0.5
    assert abs(rec.joint[-1, 0, 1]) < 1e-9                                 # and stopped


STACK_LIFT = np.array([0.0, 0.4, 0.3])   # the top box goes 0.4 m sideways and 0.3 m up


@pytest.mark.parametrize("scene, body, rate", [
    ("stack", "box9", 2), ("stack", "box9", 10), ("stack", "box9", 60),
    ("pyramid", "r19b00", 10),
])
def test_a_box_lifted_off_a_stack_follows_a_target_updated_at_any_rate(scene, body, rate):
    world = load_scene(SCENE_DIR / f"{scene}.toml")
    i = world.body_names.index(body)
    others = [j for j, m in enumerate(world.body_mass) if m > 0.0 and j != i]
    local = np.array([0.0, 0.0, 0.1])           # the middle of its top face
    start = world.body_pos[i] + local

    def path(s):
        return start + s * STACK_LIFT

    r = drag_along(world, body, local, path, rate, 1.0, 2.0)
    # it hangs below the target by g (1 + h c + h^2 k) / k (6.9 cm at dt 1/240), up to a
    # little swing about the grabbed point (which the drag does not damp)
    sag = G * implicit_factor(world.dt) / STIFFNESS
    np.testing.assert_allclose(r["point"][-1], path(1.0) - (0.0, 0.0, sag), atol=5e-3)
    late = r["t"] > 2.0
    assert r["speed"][late].max() < 0.05
    assert r["speed"][r["t"] > 2.5].max() <= r["speed"][late & (r["t"] <= 2.5)].max()
    jump = largest_jump(path, rate, 1.0)
    assert r["speed"].max() <= OMEGA * jump / math.e + np.linalg.norm(STACK_LIFT)
    # the work lifts it (m g times the rise) and no more than a little besides (damping)
    lift = world.body_mass[i] * G * (r["point"][-1, 2] - start[2])
    assert lift <= r["work"][-1] <= 1.15 * lift
    assert r["work"].max() <= 1.15 * lift
    # and the rest of the stack stands as it does when nobody touches it (it settles by
    # its 1 mm gaps and sways a little by itself)
    alone = load_scene(SCENE_DIR / f"{scene}.toml")
    alone.step(len(r["t"]))
    moved = np.array(world.body_pos)[others] - np.array(alone.body_pos)[others]
    assert np.linalg.norm(moved, axis=1).max() < 0.005


# ---- the API ----------------------------------------------------------------------------------

def test_clearing_the_drag_stops_the_pull_from_the_next_step():
    world = free_box()
    world.set_drag("box", (0.0, 0.0, 0.0), (0.1, 0.0, 0.0))
    world.step(10)
    assert world.drag["force"][0] > 0.0
    world.clear_drag()
    assert world.drag is None
    vel = np.array(world.body_vel[1])
    world.step(10)
    np.testing.assert_allclose(world.body_vel[1], vel, atol=0.0)   # nothing pulls now


def test_a_drag_survives_adding_a_body():
    world = free_box()
    world.set_drag("box", (0.1, 0.0, 0.0), (0.3, 0.0, 0.0))
    world.step(5)
    world.add_body("other", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(5.0, 0.0, 0.0))
    world.step(1)
    assert world.drag["body"] == 1 and world.drag["force"][0] > 0.0


@pytest.mark.parametrize("args, kwargs, words", [
    (("box", (0.0, 0.0, math.nan), (0.0, 0.0, 0.0)), {}, "drag point"),
    (("box", (0.0, 0.0, 0.0), (math.inf, 0.0, 0.0)), {}, "drag target"),
    (("box", (0.0, 0.0, 0.0), (0.0, 0.0)), {}, "drag target must have 3 numbers"),
    (("box", (0.0, 0.0, 0.0)), {}, "give a target"),
    (("box", (0.0, 0.0, 0.0)), {"quat": (0.0, 0.0, 0.0, 0.0)}, "quat must not be zero"),
    (("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {"stiffness": -1.0}, "stiffness"),
    (("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {"stiffness": "stiff"}, "stiffness"),
    (("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {"damping_ratio": math.nan}, "damping_ratio"),
    (("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {"max_force": 0.0}, "max_force"),
    (("ground", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {}, "'ground' is not dynamic"),
    (("lid", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), {}, "unknown body 'lid'"),
])
def test_a_bad_drag_is_refused_naming_the_value_and_the_old_drag_kept(args, kwargs, words):
    world = free_box()
    world.add_body("ground", Box((1.0, 1.0, 0.1)), kind="static", pos=(0.0, 0.0, -1.0))
    world.set_drag("box", (0.1, 0.0, 0.0), (0.2, 0.0, 0.0))
    with pytest.raises(ValueError, match=words):
        world.set_drag(*args, **kwargs)
    np.testing.assert_allclose(world.drag["target"], (0.2, 0.0, 0.0))


# ---- a body jointed to others: the system's effective mass -------------------------------------

def welded_pair(dt=1 / 240):
    """A 1 kg box welded to a 100 kg box, floating without gravity, their common centre of
    mass at the origin: the light box's centre at x = 1, the heavy one's at x = -0.01."""
    w = World(dt=dt, gravity=(0.0, 0.0, 0.0))
    w.add_body("heavy", Box((0.1, 0.1, 0.1)), mass=100.0, pos=(-0.01, 0.0, 0.0))
    w.add_body("light", Box((0.1, 0.1, 0.1)), mass=1.0, pos=(1.0, 0.0, 0.0))
    w.add_joint("weld", "fixed", "heavy", "light", anchor=(0.5, 0.0, 0.0))
    return w


def test_a_light_body_welded_to_a_heavy_one_is_pulled_with_the_pairs_mass():
    """Grabbed on the light box at the pair's centre of mass, the pair (101 kg) moves as one
    free body of 101 kg pulled at its centre: the critically damped 2 Hz approach of the free
    box above, not the 101 times slower one of a spring scaled by the light box alone."""
    d, dt = 0.2, 1 / 240
    world = welded_pair(dt)
    world.step(1)
    world.set_drag("light", (-1.0, 0.0, 0.0), (d, 0.0, 0.0))
    np.testing.assert_allclose(world._state.drag_mass, 101.0 * np.eye(3), rtol=1e-6, atol=1e-9)
    rec = world.run(round(1.0 / dt), record_bodies=True)
    com = (100.0 * rec.body_pos[:, 1] + 1.0 * rec.body_pos[:, 2]) / 101.0
    error = d - com[:, 0]
    t = rec.t - dt   # (the drag began after the first step, which gave the joints' rows)
    paper = d * (1.0 + OMEGA * t) * np.exp(-OMEGA * t)
    assert np.abs(error - paper).max() <= 0.2 * OMEGA * dt * d
    assert error.min() > 0.0
    np.testing.assert_allclose(com[:, 1:], 0.0, atol=1e-9)


def test_a_hand_on_an_arm_is_pulled_only_where_the_arm_lets_it_move():
    """A two-link arm hinged about y, bent at the elbow: the hand's point can move only in the
    x-z plane (both ways: the arm is not stretched), so the system's effective mass there has
    no component along the hinges' axis (a pull along a locked direction would only load the
    joints); it is symmetric and positive in the plane. A body alone on a hinge keeps its own
    effective mass (no system mass is set)."""
    w = World(dt=1 / 240, gravity=(0.0, 0.0, 0.0))
    w.add_body("upper", Box((0.2, 0.05, 0.05)), mass=2.0, pos=(0.2, 0.0, 1.0))
    w.add_body("hand", Box((0.05, 0.05, 0.05)), mass=0.3, pos=(0.4, 0.0, 1.05))  # bent up
    w.add_joint("shoulder", "revolute", "world", "upper", anchor=(0.0, 0.0, 1.0),
                axis=(0.0, 1.0, 0.0))
    w.add_joint("elbow", "revolute", "upper", "hand", anchor=(0.4, 0.0, 1.0),
                axis=(0.0, 1.0, 0.0))
    w.step(1)
    w.set_drag("hand", (0.0, 0.0, 0.05), (0.3, 0.0, 1.3))
    M = w._state.drag_mass
    np.testing.assert_allclose(M, M.T, atol=1e-9)
    np.testing.assert_allclose(M[1], 0.0, atol=1e-9)     # nothing along the axes
    assert np.all(np.linalg.eigvalsh(M[np.ix_([0, 2], [0, 2])]) > 0.0)
    # more than the hand's own mass along the arm's swing (the arm comes with it)
    assert M[2, 2] > 0.3
    w.step(120)
    assert w.body_pos[2, 2] > 1.05 + 0.05                  # the hand moved up toward it
    door = door_world()
    door.step(1)
    door.set_drag("door", (0.2, 0.0, 0.0), (0.5, 0.5, 1.0))
    assert not door._state.drag_mass.any()
