"""MuJoCo MJCF files as Sharnir scenes, read through MuJoCo's own compiler.

`read_mjcf(path)` compiles the file with ``mujoco.MjModel.from_xml_path`` (defaults, includes,
``fromto``, mesh scaling and inertia from geoms are MuJoCo's), runs its forward kinematics at
``qpos0`` and writes the raw scene dict a TOML scene parses to (`scenes.schema`), which the
loader validates and builds like any other scene.  MuJoCo is a dependency of Sharnir (the
extra ``sharnir[mjcf]`` is kept for old install commands).

What maps, and how:

* **Bodies.** A body with joints (or a free joint) is one Sharnir body at its inertial frame:
  centre of mass ``d.xipos``, principal axes ``d.ximat``, ``body_mass``, ``body_inertia``. A
  body without joints is welded to its parent: its geoms and mass are merged into the parent
  (inertias added about the joint centre of mass, principal axes found again). Bodies welded to
  the world, mocap bodies included, become static: one static body per geom (planes are static
  ``plane`` bodies).
* **Shapes.** sphere, capsule, cylinder, ellipsoid and box keep their sizes; a mesh becomes a
  ``mesh`` of the mesh's vertices and triangles (``m.mesh_vert``, ``m.mesh_face``, in the geom
  frame): it collides as its convex hull, as in MuJoCo, and is drawn with its triangles. One
  geom centred on the centre of mass with the inertia diagonal in its axes is a plain shape;
  anything else is a ``compound`` written in the MuJoCo body frame (``d.xpos``, ``d.xquat``)
  with ``frame`` the inertial frame in it, so ``World.body_reference_pose`` gives the MuJoCo
  body frame back. Geoms with ``contype = conaffinity = 0`` (visual only) are left out of a
  body's collision shape when it has others.
* **Visuals.** A moving body with a visual-only geom, or whose visible geoms have a material or
  a colour of their own, gets ``visuals``: the geoms MuJoCo draws by default (groups 0-2,
  alpha > 0), each with its pose and rgba (the material's when it has one), so it looks as in
  MuJoCo's viewer. The world's visual-only geoms (planes excepted) are the visuals of one
  shapeless static body, ``world.visuals``, at the origin.
* **Materials.** A body takes the largest ``friction`` of its geoms (sliding -> friction,
  torsional -> spinning when ``condim >= 4``, rolling -> rolling when ``condim = 6``;
  ``condim = 1`` is frictionless, friction 0). MuJoCo mixes two geoms by the larger value, as
  Sharnir does.
* **Collision filters.** MuJoCo's rule (``contype_a & conaffinity_b`` OR the reverse, never a
  body with its parent, never an ``<exclude>`` pair) is turned into Sharnir's group/mask bits
  exactly: each bit is a clique of bodies that may all touch one another (a greedy edge clique
  cover of the "may touch" graph), a body's group and mask are the bits of its cliques. Two
  bodies joined by a joint (Sharnir never lets them touch) or both static may share a bit, so
  a chain's parents and children do not cost bits: dm_control's dog.xml (57 moving bodies and
  6 static geoms that collide) needs 23. Past 62 bits contype/conaffinity are used as
  group/mask, which loses the ``<exclude>`` pairs and the parents (named in the warning).
* **Start inside the floor.** A free-floating tree whose geoms lie more than `GROUND_SINK_M`
  (1 mm) inside the world's static geoms at ``qpos0`` (MuJoCo's own contacts there, those with
  a near-vertical normal) is raised by its deepest penetration (its free joint's ``qpos0``),
  named in the warning with the file's keyframes: contacts here are hard, and menagerie's
  Barkour scenes start the robot 10 cm through the floor (MuJoCo's soft contacts push it out
  over the first steps). Keyframes keep their own poses.
* **Joints.** hinge -> revolute, slide -> prismatic, ball -> spherical, free -> none (a
  floating body); anchor ``d.xanchor`` and axis ``d.xaxis`` in the world at ``qpos0``;
  ``jnt_range - qpos0`` when limited; ``dof_frictionloss`` -> ``friction`` (Coulomb).
  A body's 2 or 3 hinges with perpendicular axes (the middle one of 3 limited within 85
  degrees) join it to its parent directly: Sharnir composes revolute joints between the same
  two bodies in the order listed, each axis and anchor carried by the ones before it, as MuJoCo
  does (physics/gimbal.py). Any other body with n > 1 joints gets n - 1 intermediate
  bodies (``<body>.<joint>``, no geometry) chained by the joints in MuJoCo's order. Each takes
  `INTERMEDIATE_MASS` (5 %) of the body's mass as a small sphere at its joint's anchor (radius
  the body's smallest radius of gyration); the body keeps the rest, its inertia scaled by the
  same factor. The total mass is kept. About a fixed anchor the motion is unchanged (the
  body's gravity torque and inertia about the anchor scale alike, the anchor's share adds to
  neither); when the anchor moves (a hip on a falling pelvis) that share rides with the anchor
  instead of the body's centre of mass, which moves the subtree's centre of mass towards the
  anchor by (n - 1) 5 % of their distance. On MuJoCo's humanoid, 1 % instead of 5 % moves the
  torso's fall by 2 cm over a second.
* **Tendons.** A limited fixed tendon of two hinges or slides, L = a q1 + b q2 within
  [lo, hi] (MuJoCo's humanoid's hamstrings: 0.5 q_hip_y - 0.5 q_knee in [-0.3, 2]), becomes a
  coupling limit (joint 1's ``mimic`` with a range, physics/coupling.py): C = q1 - m q2 kept
  within [(lo - L0) / a, (hi - L0) / a] (swapped for a < 0), m = -b / a, L0 = a q1 + b q2 at
  ``qpos0`` (Sharnir's coordinates start there); MuJoCo's soft limit becomes a hard one. Joint
  2 follows instead where joint 1 follows another tendon already (a joint has one leader, and
  no cycles). An unlimited fixed tendon without stiffness, damping, frictionloss or armature
  puts no force in MuJoCo's dynamics and is left out (an actuator on it is named with the
  actuators). Spatial tendons, fixed tendons of other than two joints or of joints that are
  not hinges or slides, and a tendon's stiffness, damping, frictionloss and armature are named
  in the warning.
* **Damping, armature, springs and actuators** go through Sharnir's DC motor (physics/motor.py),
  whose back-EMF is a viscous damper implicit in the step like MuJoCo's Euler damping, whose
  rotor inertia is MuJoCo's armature and whose controller (sampled at the step's start) is an
  explicit spring like MuJoCo's:

  ====================  =====================================================================
  MuJoCo                Sharnir DC motor on the joint (gear_ratio 1, efficiency 1)
  ====================  =====================================================================
  damping b             back-EMF: K^2 / R = b
  armature a            rotor_inertia = a
  stiffness k, ref      controller "position": kp = k / (K / R), target = springref - qpos0
  motor, gear g         voltage = ctrl: K / R = g (K = b / g, R = b / g^2); voltage_limit =
                        the ctrlrange's larger bound when ctrllimited and there is no spring
  position kp, kv       volts are N m (K = R = b); controller "position": kp g^2, kd = kv g^2,
                        target 0 - qpos0 (MuJoCo's servo acts on the length g q; a spring
                        adds into the same controller)
  velocity kv           volts are N m (K = R = b); controller "velocity": kp = kv g^2, target 0
                        (with a spring: "position", kp = k, kd = kv g^2, as at ctrl 0)
  integrator implicit,  the servos' rate terms (kv) are implicit, as there: the controllers
  implicitfast          are ``implicit`` (physics/motor.py; the implicit integrator's Coriolis
                        derivatives are named in the warning)
  dcmotor R, K, te      resistance R, torque_constant K, inductance te R, gear_ratio g,
                        voltage_limit as for motor (its ctrl is the terminal voltage)
  no actuator           K / R = sqrt(b): R = 1, K = sqrt(b); damping alone (no armature, no
                        spring, no actuator) is the joint's own viscous damping instead, as
                        is a ball joint's and the damping under a dcmotor (physics/damper.py)
  ====================  =====================================================================

  With b = 0 the back-EMF cannot vanish: it is `NO_DAMPING` (1e-6 N m s). ``forcerange`` ->
  ``torque_limit`` (times the gear). Stiffness and armature on a ball joint, other actuator types
  (general, muscle, cylinder, adhesion, intvelocity, damper), actuators on tendons or sites and
  a second actuator on one joint do not map.

* **Keyframes.** Each ``<key>`` becomes a ``[[keyframes]]`` entry (physics/keyframe.py), named
  as MuJoCo names it (unnamed: ``key<index>``): a hinge's or slide's coordinate
  ``qpos - qpos0`` and rate ``qvel``; a ball joint's rotation, the rotation of its joint frame
  (x = its axis, at ``qpos0``) on the child relative to the one on the parent, both carried
  by their bodies' motions from ``qpos0`` to the key (``conj(q0) q`` for a ball alone in its
  body), and its ``qvel`` (MuJoCo's: about the body's own axes) in the joint frame on the
  child; a free joint's body at its physics pose (centre of mass, principal axes) moved by
  the rigid motion of MuJoCo's body frame between ``qpos0`` and the key
  (``mj_kinematics``), its velocity MuJoCo's (the anchor's linear velocity, the angular
  velocity in the body frame) at the centre of mass. ``ctrl`` (clamped to ``ctrlrange``) goes
  through the actuator's mapping: a motor's or dcmotor's is its voltage, a position servo's
  set-point ``ctrl / gear - qpos0`` (with a spring, the one controller's
  ``(kp t + k s) / (kp + k)``), a velocity servo's the rate ``ctrl / gear``. What a key holds
  that does not map (``act``, mocap poses, ``time``, the ctrl of an actuator that does not
  map, a gimbal's middle hinge beyond 90 degrees) is named in the warning; a key never keeps
  the file from loading.

Known gaps (tests/test_scene_mjcf.py): Gauss-Seidel converges slowly on a tree as big as the
humanoid's, where the contacts of the feet and hands must be carried up the tree (after 100
iterations a step's body velocities are within 4.4e-5 m/s of the converged solve's, after 20
within 1.9e-3; bench/humanoid_bench.py). Converged, its hard frictionless contacts can wedge
the lower arms against the thighs, where MuJoCo's soft ones let them slip (at 1000 iterations
the fall stops at 0.6 s). (An armature in a chain of joints follows MuJoCo's run like the
chain without one, to first order in dt: the rotor is carried with the bodies, physics/motor.py.)

Everything that does not map (the tendons named above, equality constraints, sensors,
contact pairs, soft contact parameters, margins, fluid forces, non-Euler integrators, ...) is
named in ONE warning (`MjcfWarning`) per file; nothing else is dropped silently (an unlimited
force-free fixed tendon has nothing to drop).  MuJoCo's soft, pyramidal-cone contacts
become Sharnir's hard contacts with a circular cone.
"""

import math
import os
import stat
import warnings
from pathlib import Path

import numpy as np

from ..physics.gimbal import MAX_MIDDLE_ANGLE
from ..physics.message import quoted
from .asset_roots import AssetRoots
from .source import SceneError, read_bytes

# share of a body's mass each intermediate body of a multi-joint body takes
INTERMEDIATE_MASS = 0.05
# N m s/rad (N s/m): the back-EMF of a motor standing in for an undamped MuJoCo joint
NO_DAMPING = 1e-6
# MuJoCo's defaults, to tell which soft-contact parameters a file changed
_SOLREF = (0.02, 1.0)
_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
# mjtGeom codes
_PLANE, _HFIELD, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX, _MESH = range(8)
_DEFAULT_RGBA = np.array([0.5, 0.5, 0.5, 1.0], dtype=np.float32)   # MuJoCo's geom rgba
_SHAPE_NAMES = {_PLANE: "plane", _HFIELD: "hfield", _SPHERE: "sphere", _CAPSULE: "capsule",
                _ELLIPSOID: "ellipsoid", _CYLINDER: "cylinder", _BOX: "box", _MESH: "mesh"}
# mjtJoint codes and the Sharnir joint types
_FREE, _BALL, _SLIDE, _HINGE = range(4)
_JOINT_TYPES = {_HINGE: "revolute", _SLIDE: "prismatic", _BALL: "spherical"}


_MAX_INCLUDES = 8   # nested <include>s checked for files that are not regular


class MjcfWarning(UserWarning):
    """What of an MJCF file Sharnir does not simulate, in one message."""


def read_mjcf(path: str | Path, asset_roots: AssetRoots | None = None) -> dict:
    """The raw scene dict (the structure a TOML scene parses to) of the MJCF file `path`;
    what cannot be simulated is named in one `MjcfWarning`. Its includes and asset files
    must lie in `asset_roots` (default: `AssetRoots.of(path)`; see `confine_files`)."""
    raw, notes = mjcf_scene(path, asset_roots)
    if notes:
        warnings.warn(f"{path}: Sharnir does not simulate: " + "; ".join(notes), MjcfWarning,
                      stacklevel=2)
    return raw


def mjcf_scene(path: str | Path, asset_roots: AssetRoots | None = None
               ) -> tuple[dict, list[str]]:
    """(raw scene dict, notes on what does not map) of the MJCF file `path`."""
    source = str(path)
    confine_files(Path(path), AssetRoots.of(path) if asset_roots is None else asset_roots)
    m = _compile(source)
    import mujoco

    raised = _raise_onto_ground(m)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    raw, notes = _Reader(m, d, source).scene()
    return raw, raised + notes


GROUND_SINK_M = 1e-3   # m: a free body deeper than this in the ground at qpos0 is raised
GROUND_NORMAL_Z = 0.7  # a contact whose normal is this close to vertical is with the ground


def _raise_onto_ground(m) -> list[str]:
    """Raise each free-floating tree whose geoms start more than GROUND_SINK_M inside the
    world's static geoms at ``qpos0`` (MuJoCo's contacts there, `mj_fwdPosition`, those with a
    near-vertical normal: a floor, a plane or a box) by its deepest penetration, in
    ``m.qpos0``: a hard contact cannot start 10 cm deep (menagerie's Barkour scenes put the
    torso at the origin, the legs through the floor; MuJoCo's soft contacts push it out over
    the first steps). Keyframes keep their own poses. The notes name each body raised."""
    import mujoco

    d = mujoco.MjData(m)
    raised: dict[int, float] = {}
    for _ in range(3):   # raised onto a floor, a tree may meet a table above it
        mujoco.mj_resetData(m, d)
        mujoco.mj_fwdPosition(m, d)
        depth: dict[int, float] = {}
        for c in d.contact[:d.ncon]:
            if abs(float(c.frame[2])) < GROUND_NORMAL_Z or -float(c.dist) <= GROUND_SINK_M:
                continue
            g1, g2 = int(c.geom1), int(c.geom2)
            for ground, other in ((g1, g2), (g2, g1)):
                if int(m.body_weldid[int(m.geom_bodyid[ground])]) != 0:
                    continue
                root = int(m.body_rootid[int(m.geom_bodyid[other])])
                j = int(m.body_jntadr[root])
                if root == 0 or j < 0 or int(m.jnt_type[j]) != _FREE:
                    continue
                depth[j] = max(depth.get(j, 0.0), -float(c.dist))
        if not depth:
            break
        for j, sink in depth.items():
            m.qpos0[int(m.jnt_qposadr[j]) + 2] += sink
            raised[j] = raised.get(j, 0.0) + sink
    keys = [_name(m, mujoco.mjtObj.mjOBJ_KEY, k, f"key{k}") for k in range(m.nkey)]
    notes = []
    for j, sink in sorted(raised.items()):
        root = int(m.jnt_bodyid[j])
        name = _name(m, mujoco.mjtObj.mjOBJ_BODY, root, f"body{root}")
        notes.append(f'"{name}" starting {sink:.3g} m inside the ground at qpos0 (raised onto '
                     "it" + (f"; the file's keyframes: {', '.join(keys)})" if keys else ")"))
    return notes


def _compile(source: str):
    try:
        import mujoco
    except ImportError:
        raise SceneError("MJCF files need MuJoCo's compiler: pip install mujoco") \
            from None
    read_bytes(Path(source), source)   # a regular file of bounded size, or SceneError
    _check_files(Path(source), source)
    try:
        m = mujoco.MjModel.from_xml_path(source)
    except (ValueError, mujoco.FatalError) as exc:
        message = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise SceneError(f"{source}: MuJoCo cannot compile it: {message[:200]}") from None
    _check_finite(m, source)
    return m


# the compiled arrays Sharnir reads numbers from, by the kind of object they describe
_FINITE = {"geom": ("size", "pos", "quat", "friction"),
           "body": ("pos", "quat", "ipos", "iquat", "mass", "inertia"),
           "jnt": ("pos", "axis", "range", "stiffness"),
           "dof": ("damping", "frictionloss", "armature"),
           "actuator": ("gear", "gainprm", "biasprm", "ctrlrange")}


def _check_finite(m, source: str) -> None:
    """SceneError naming the first object whose compiled numbers are not finite: MuJoCo
    compiles a geom of size inf, whose mass and inertia are then NaN."""
    import mujoco

    objects = {"body": mujoco.mjtObj.mjOBJ_BODY, "geom": mujoco.mjtObj.mjOBJ_GEOM,
               "jnt": mujoco.mjtObj.mjOBJ_JOINT, "dof": mujoco.mjtObj.mjOBJ_DOF,
               "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR}
    words = {"jnt": "joint", "dof": "joint"}
    for kind, fields in _FINITE.items():
        for name in fields:
            values = np.asarray(getattr(m, f"{kind}_{name}"), dtype=float)
            if values.size and not np.isfinite(values).all():
                i = int(np.argwhere(~np.isfinite(values.reshape(len(values), -1)))[0][0])
                if kind == "dof":
                    i, kind = int(m.dof_jntid[i]), "jnt"
                label = _id2name(m, objects[kind], i) or str(i)
                raise SceneError(f"{source}: {words.get(kind, kind)} {quoted(label)}: its "
                                 f"compiled {name} is not finite (a size, position or mass "
                                 "too large or infinite)")


def _check_files(path: Path, source: str, depth: int = 0) -> None:
    """SceneError for a file the MJCF names (an include, a mesh, a texture, ...) that exists
    but is not a regular file: MuJoCo's compiler would wait on a FIFO, or read a device
    without end. Looked for where MuJoCo looks: next to the file and in the compiler's
    meshdir, texturedir and assetdir; included files are checked the same way."""
    from lxml import etree

    data = read_bytes(path, source)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:   # (MuJoCo would take it, its names then undecodable)
        which = f"{path.name}, included: " if depth else ""
        raise SceneError(f"{source}: {which}not UTF-8 text (bad byte at offset {exc.start})") \
            from None
    try:
        root = etree.fromstring(data, etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False))
    except (etree.XMLSyntaxError, ValueError):
        return   # MuJoCo's compiler reports what is wrong with the XML
    folders = [path.parent]
    for compiler in root.iter("compiler"):
        folders += [path.parent / compiler.get(key) for key in ("meshdir", "texturedir",
                                                                "assetdir") if compiler.get(key)]
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for key, value in el.attrib.items():
            if not key.startswith("file") or not value:
                continue
            for candidate in [Path(value)] if Path(value).is_absolute() else \
                    [folder / value for folder in folders]:
                try:
                    mode = os.stat(candidate).st_mode
                except (OSError, ValueError):
                    continue
                if not stat.S_ISREG(mode):
                    raise SceneError(f"{source}: line {el.sourceline}: <{el.tag} {key}="
                                     f"{quoted(value)}>: not a regular file (a folder, pipe "
                                     "or device)")
                if el.tag == "include" and depth < _MAX_INCLUDES:
                    _check_files(candidate, source, depth + 1)


# the attributes of MJCF elements that name files (<include>, <mesh>, <hfield>, <skin>,
# <texture>'s cube faces, <model>) and the <compiler> folders they are looked up in
_FILE_ATTRS = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
_DIR_ATTRS = ("meshdir", "texturedir", "assetdir")
_NESTED = ("include", "model")   # elements whose file is MJCF naming files of its own
MAX_INCLUDES = 256   # MJCF files one model may include, all levels together


def confine_files(path: Path, roots: AssetRoots) -> None:
    """Refuse the MJCF file `path` if a file it or its includes name lies outside `roots`,
    before MuJoCo's compiler opens any: the XML is read here (lxml, no entities, no DTD, no
    network), includes and <model> files first, each checked before it is read. Every place
    MuJoCo could look a name up is checked (the main file's folder, the including file's,
    each <compiler> meshdir, texturedir and assetdir), so no reading of the rules lets a
    file out."""
    top = Path(os.path.abspath(path))
    folders = [top.parent]
    named, todo, seen = [], [top], set()
    while todo:
        xml = todo.pop()
        if os.path.realpath(xml) in seen:
            continue
        seen.add(os.path.realpath(xml))
        if len(seen) > MAX_INCLUDES:
            raise SceneError(f"{path}: includes more than {MAX_INCLUDES} files")
        for el in _parse_mjcf(xml).iter():
            if not isinstance(el.tag, str):
                continue
            folders += [top.parent / el.get(a) for a in _DIR_ATTRS if el.get(a)]
            for attr in _FILE_ATTRS:
                value = el.get(attr)
                if not value:
                    continue
                if el.tag not in _NESTED:
                    named.append((xml, el.sourceline, el.tag, attr, value))
                    continue
                places = dict.fromkeys(f / value for f in (*folders, xml.parent))
                for place in places:
                    _confined(roots, path, xml, el.sourceline, el.tag, attr, value, place)
                todo += [place for place in places if _is_file(place)]
    for xml, line, tag, attr, value in named:
        for folder in dict.fromkeys((*folders, xml.parent)):
            _confined(roots, path, xml, line, tag, attr, value, folder / value)


def _is_file(place: Path) -> bool:
    """Path.is_file, False for a name the system refuses (too long: ENAMETOOLONG, which
    Python 3.11's is_file raises); MuJoCo's compiler then reports the file it cannot read."""
    try:
        return place.is_file()
    except OSError:
        return False


def _confined(roots, path, xml, line, tag, attr, value, place):
    refusal = roots.refusal(value, place)
    if refusal is not None:
        where = f"{xml}" if os.path.abspath(xml) == os.path.abspath(path) else \
            f"{path}: included {xml}"
        raise SceneError(f'{where}: line {line}: <{tag} {attr}="{value[:80]}">: {refusal}')


def _parse_mjcf(xml: Path):
    from lxml import etree

    data = read_bytes(xml, str(xml))   # a regular file of bounded size, or SceneError
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=True, remove_pis=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else "?"
        raise SceneError(f"{xml}: line {line}: not well-formed XML ({exc.msg})") from None


def _name(m, kind, i: int, fallback: str) -> str:
    return _id2name(m, kind, i) or fallback


def _id2name(m, kind, i: int) -> str | None:
    """MuJoCo's name of object i, None for none or one that is not UTF-8 (a character
    reference such as &#xD800; compiles to bytes Python cannot decode)."""
    import mujoco

    try:
        return mujoco.mj_id2name(m, kind, i)
    except UnicodeDecodeError:
        return None


def _quat(R: np.ndarray) -> list[float]:
    import mujoco

    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, dtype=float).reshape(9))
    return _floats(q)


def _matrix(q) -> np.ndarray:
    import mujoco

    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=float))
    return R.reshape(3, 3)


def _floats(v) -> list[float]:
    return [float(x) for x in np.asarray(v, dtype=float).reshape(-1)]


def _principal(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(moments (3,), axes (3, 3) right-handed columns) of a symmetric inertia tensor."""
    moments, axes = np.linalg.eigh(0.5 * (T + T.T))
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


class _Link:
    """One Sharnir body: a MuJoCo body and the bodies welded to it."""

    def __init__(self, root: int, name: str, static: bool):
        self.root = root          # the MuJoCo body that carries the joints
        self.name = name
        self.static = static
        self.bodies: list[int] = []
        self.geoms: list[int] = []
        self.parent: _Link | None = None
        # mass, centre of mass (3,), principal moments (3,) and axes (3, 3), world frame
        self.mass, self.com, self.moments, self.axes = 0.0, None, None, None


class _Reader:
    def __init__(self, m, d, source: str):
        import mujoco

        self.mj = mujoco
        self.m, self.d, self.source = m, d, source
        self.notes: list[str] = []
        # MuJoCo's implicit integrators take the actuators' rate terms (kv) at the step's end
        self.implicit_servos = int(m.opt.integrator) in (
            int(mujoco.mjtIntegrator.mjINT_IMPLICIT), int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def body_name(self, b: int) -> str:
        return "world" if b == 0 else _name(self.m, self.mj.mjtObj.mjOBJ_BODY, b, f"body{b}")

    def scene(self) -> tuple[dict, list[str]]:
        m = self.m
        links = self.links()
        bodies: list[dict] = []
        joints: list[dict] = []
        for link in links:
            if link.static:
                bodies.extend(self.static_bodies(link))
            else:
                entry = self.dynamic_body(link)
                bodies.append(entry)
                bodies_, joints_ = self.joints(link, entry)
                bodies.extend(bodies_)
                joints.extend(joints_)
        self.unique_static_names(bodies)
        self.collision_bits(bodies, joints)
        self.tendons(joints)
        by_id = {j["_id"]: j for j in joints}   # (actuators() takes the ids off)
        self.actuated: dict[int, tuple] = {}    # actuator -> (joint id, kind): motor()'s
        self.actuators(joints)
        self.unmapped()
        keyframes = self.keyframes(bodies, by_id)
        gravity = _floats(m.opt.gravity)
        if m.opt.disableflags & int(self.mj.mjtDisableBit.mjDSBL_GRAVITY):
            gravity = [0.0, 0.0, 0.0]
        if m.opt.disableflags & int(self.mj.mjtDisableBit.mjDSBL_CONTACT):
            for entry in bodies:
                entry["group"], entry["mask"] = 0, 0
        model = bytes(m.names).split(b"\0", 1)[0].decode("utf-8", "replace")  # (names[0])
        raw = {
            "description": f'MuJoCo model "{model}" from {Path(self.source).name}' if model
            else f"MuJoCo model from {Path(self.source).name}",
            "world": {"dt": float(m.opt.timestep), "gravity": gravity},
            "bodies": bodies,
            "joints": joints,
        }
        if keyframes:
            raw["keyframes"] = keyframes
        return raw, self.notes

    # --- bodies -------------------------------------------------------------

    @staticmethod
    def unique_static_names(bodies: list[dict]) -> None:
        """Rename static bodies (named after geoms) whose name a moving body or an earlier
        static body took; joints never name static bodies (they join "world")."""
        taken = {b["name"] for b in bodies if b.get("kind") != "static"}
        for entry in bodies:
            if entry.get("kind") != "static":
                continue
            name, k = entry["name"], 1
            while name in taken:
                k += 1
                name = f'{entry["name"]}.{k}'
            entry["name"] = name
            taken.add(name)

    def links(self) -> list[_Link]:
        """Group MuJoCo bodies into Sharnir bodies (tree order: parents first)."""
        m = self.m
        world = _Link(0, "world", static=True)
        world.bodies.append(0)
        of: dict[int, _Link] = {0: world}
        links = [world]
        for b in range(1, m.nbody):
            parent = of[int(m.body_parentid[b])]
            mocap = int(m.body_mocapid[b]) >= 0
            if mocap:
                self.note(f'mocap body "{self.body_name(b)}" (static at its initial pose)')
            if m.body_jntnum[b] == 0 or mocap:
                link = world if parent.static or mocap else parent
            else:
                link = _Link(b, self.body_name(b), static=False)
                link.parent = parent
                links.append(link)
            link.bodies.append(b)
            of[b] = link
        for g in range(m.ngeom):
            of[int(m.geom_bodyid[g])].geoms.append(g)
        self.link_of = of
        return links

    def shape(self, g: int, where: str) -> dict | None:
        """The Sharnir shape of geom g (in the geom's frame), or None (noted)."""
        m = self.m
        t, size = int(m.geom_type[g]), m.geom_size[g]
        if t == _SPHERE:
            return {"type": "sphere", "radius": float(size[0])}
        if t == _CAPSULE:
            return {"type": "capsule", "radius": float(size[0]), "half_length": float(size[1])}
        if t == _CYLINDER:
            return {"type": "cylinder", "radius": float(size[0]), "half_length": float(size[1])}
        if t == _ELLIPSOID:
            return {"type": "ellipsoid", "semi_axes": _floats(size)}
        if t == _BOX:
            return {"type": "box", "half_extents": _floats(size)}
        if t == _MESH:
            mesh = int(m.geom_dataid[g])
            a, n = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
            fa, fn = int(m.mesh_faceadr[mesh]), int(m.mesh_facenum[mesh])
            return {"type": "mesh", "vertices": [_floats(v) for v in m.mesh_vert[a:a + n]],
                    "faces": [[int(i) for i in f] for f in m.mesh_face[fa:fa + fn]]}
        kind = _SHAPE_NAMES.get(t, f"type {t}")
        self.note(f"{kind} geom {where}" + (" (planes only on the world)" if t == _PLANE else ""))
        return None

    def geom_label(self, g: int) -> str:
        name = _id2name(self.m, self.mj.mjtObj.mjOBJ_GEOM, g)
        body = self.body_name(int(self.m.geom_bodyid[g]))
        return f'"{name}" of body "{body}"' if name else f'{g} of body "{body}"'

    def colliding(self, geoms: list[int]) -> list[int]:
        """The geoms that take part in contacts (all of them when none does)."""
        m = self.m
        touching = [g for g in geoms if m.geom_contype[g] or m.geom_conaffinity[g]]
        return touching or list(geoms)

    def material(self, geoms: list[int], entry: dict) -> None:
        m = self.m
        values = []
        for g in geoms:
            condim = int(m.geom_condim[g])
            slide, torsion, roll = (float(x) for x in m.geom_friction[g])
            values.append((slide if condim > 1 else 0.0, torsion if condim >= 4 else 0.0,
                           roll if condim == 6 else 0.0))
        if not values:
            return
        if len(set(values)) > 1:
            self.note(f'different frictions on the geoms of body "{entry["name"]}" '
                      "(the largest of each is used)")
        entry["friction"] = max(v[0] for v in values)
        entry["spinning"] = max(v[1] for v in values)
        entry["rolling"] = max(v[2] for v in values)

    def visuals(self, link: _Link, entry: dict) -> None:
        """The body's visuals (see the module), posed in the frame its pos / quat place."""
        m, d = self.m, self.d
        drawn = [g for g in link.geoms if m.geom_group[g] <= 2 and self.rgba(g)[3] > 0]
        visual_only = any(not (m.geom_contype[g] or m.geom_conaffinity[g]) for g in drawn)
        coloured = any(m.geom_matid[g] >= 0 or np.any(m.geom_rgba[g] != _DEFAULT_RGBA)
                       for g in drawn)
        if not drawn or not (visual_only or coloured):
            return
        x = np.array(entry["pos"], dtype=float)
        Rt = _matrix(entry["quat"]).T
        out = []
        for g in drawn:
            shape = self.shape(g, self.geom_label(g))
            if shape is None:
                continue
            out.append({"shape": shape, "pos": _floats(Rt @ (d.geom_xpos[g] - x)),
                        "quat": _quat(Rt @ d.geom_xmat[g].reshape(3, 3)),
                        "rgba": [min(max(float(c), 0.0), 1.0) for c in self.rgba(g)]})
        if out:
            entry["visuals"] = out

    def rgba(self, g: int) -> np.ndarray:
        """A geom's colour as MuJoCo draws it: its material's when it has one."""
        mat = int(self.m.geom_matid[g])
        return self.m.mat_rgba[mat] if mat >= 0 else self.m.geom_rgba[g]

    def static_bodies(self, link: _Link) -> list[dict]:
        """One static body per colliding geom of the world (planes as planes), and one
        shapeless static body "world.visuals" (at the origin) whose visuals are the world's
        drawn visual-only geoms (contype = conaffinity = 0, group 0-2, alpha > 0; planes
        excepted, which stay static planes that touch nothing)."""
        m, d = self.m, self.d
        out = []
        shown = [g for g in link.geoms
                 if not (m.geom_contype[g] or m.geom_conaffinity[g]) and m.geom_group[g] <= 2
                 and self.rgba(g)[3] > 0 and int(m.geom_type[g]) != _PLANE]
        visuals = []
        for g in shown:
            shape = self.shape(g, self.geom_label(g))
            if shape is not None:
                visuals.append({"shape": shape, "pos": _floats(d.geom_xpos[g]),
                                "quat": _quat(d.geom_xmat[g].reshape(3, 3)),
                                "rgba": [min(max(float(c), 0.0), 1.0) for c in self.rgba(g)]})
        if visuals:
            out.append({"name": f"{link.name}.visuals", "kind": "static", "visuals": visuals})
        rest = [g for g in link.geoms if g not in shown]
        for g in self.colliding(rest) if rest else ():
            plane = int(m.geom_type[g]) == _PLANE
            shape = {"type": "plane"} if plane else self.shape(g, self.geom_label(g))
            if shape is None:
                continue
            name = _id2name(m, self.mj.mjtObj.mjOBJ_GEOM, g)
            body = self.body_name(int(m.geom_bodyid[g]))
            entry = {"name": name or f"{body}.geom{g}", "kind": "static", "shape": shape,
                     "pos": _floats(d.geom_xpos[g]), "quat": _quat(d.geom_xmat[g])}
            self.material([g], entry)
            entry["_geoms"] = [g]
            out.append(entry)
        return out

    def mass_properties(self, link: _Link) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(mass, centre of mass (3,), principal moments (3,), axes (3, 3)) in the world."""
        m, d = self.m, self.d
        if len(link.bodies) == 1 or all(m.body_mass[b] == 0 for b in link.bodies[1:]):
            b = link.root
            return (float(m.body_mass[b]), d.xipos[b].copy(), m.body_inertia[b].copy(),
                    d.ximat[b].reshape(3, 3).copy())
        masses = np.array([m.body_mass[b] for b in link.bodies])
        total = float(masses.sum())
        T = np.zeros((3, 3))
        with np.errstate(all="ignore"):   # (far apart: not finite, said below)
            com = masses @ np.array([d.xipos[b] for b in link.bodies]) / total
            for b, mb in zip(link.bodies, masses):
                R = d.ximat[b].reshape(3, 3)
                r = d.xipos[b] - com
                T += (R @ np.diag(m.body_inertia[b]) @ R.T
                      + mb * ((r @ r) * np.eye(3) - np.outer(r, r)))
        if not (np.isfinite(T).all() and np.isfinite(com).all()):   # (eigh would not converge)
            raise SceneError(f'{self.source}: body "{link.name}": the inertia of it and the '
                             "bodies welded to it is not finite: positions or masses too large")
        moments, axes = _principal(T)
        return total, com, moments, axes

    def dynamic_body(self, link: _Link) -> dict:
        d = self.d
        mass, com, moments, axes = self.mass_properties(link)
        if mass <= 0:
            raise SceneError(f'{self.source}: body "{link.name}": has no mass (a moving body '
                             "needs mass in Sharnir)")
        link.mass, link.com, link.moments, link.axes = mass, com, moments, axes
        entry: dict = {"name": link.name, "mass": mass}
        geoms = self.colliding(link.geoms)
        parts = []
        for g in geoms:
            shape = self.shape(g, self.geom_label(g))
            if shape is not None:
                parts.append((g, shape))
        tensor = axes @ np.diag(moments) @ axes.T
        if len(parts) == 1:
            g, shape = parts[0]
            Rg = d.geom_xmat[g].reshape(3, 3)
            local = Rg.T @ tensor @ Rg
            off = np.abs(local - np.diag(np.diag(local))).max()
            centred = np.linalg.norm(d.geom_xpos[g] - com) <= 1e-9 * max(1.0, np.abs(com).max())
            if shape["type"] != "mesh" and centred and off <= 1e-9 * np.trace(local):
                entry.update(shape=shape, inertia=_floats(np.diag(local)),
                             pos=_floats(d.geom_xpos[g]), quat=_quat(Rg))
                parts = []
        if parts:
            # the compound's reference frame: the MuJoCo body frame of the link's root
            xr, Rr = d.xpos[link.root], d.xmat[link.root].reshape(3, 3)
            entry["shape"] = {
                "type": "compound",
                "parts": [{"shape": shape, "pos": _floats(Rr.T @ (d.geom_xpos[g] - xr)),
                           "quat": _quat(Rr.T @ d.geom_xmat[g].reshape(3, 3))}
                          for g, shape in parts],
                "frame": {"pos": _floats(Rr.T @ (com - xr)), "quat": _quat(Rr.T @ axes)},
            }
            entry.update(inertia=_floats(moments), pos=_floats(xr), quat=_quat(Rr))
        elif "shape" not in entry:
            entry.update(inertia=_floats(moments), pos=_floats(com), quat=_quat(axes))
        entry["inertia"] = [max(x, 1e-12 * max(moments.max(), 1e-300)) for x in entry["inertia"]]
        self.visuals(link, entry)
        self.material([g for g, _ in parts] or geoms, entry)
        entry["_geoms"] = [g for g in geoms]
        return entry

    # --- joints -------------------------------------------------------------

    def joints(self, link: _Link, entry: dict) -> tuple[list[dict], list[dict]]:
        """The joints of `link` to its parent, with the intermediate bodies a body with several
        joints needs."""
        m, d = self.m, self.d
        b = link.root
        ids = list(range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])))
        if any(m.jnt_type[j] == _FREE for j in ids):
            return [], []
        names = [_name(m, self.mj.mjtObj.mjOBJ_JOINT, j, f"{link.name}.joint{k}")
                 for k, j in enumerate(ids)]
        inter: list[dict] = []
        n = len(ids)
        if n > 1 and not self.composes(ids):
            share = INTERMEDIATE_MASS * entry["mass"]
            keep = 1.0 - (n - 1) * INTERMEDIATE_MASS
            # a small sphere: the body's smallest radius of gyration
            radius = max(math.sqrt(min(link.moments) / link.mass), 1e-3)
            for k in range(n - 1):
                inter.append({"name": f"{link.name}.{names[k]}", "mass": share,
                              "inertia": [0.4 * share * radius * radius] * 3,
                              "pos": _floats(d.xanchor[ids[k]]), "group": 0, "mask": 0})
            entry["mass"] = entry["mass"] * keep
            entry["inertia"] = [x * keep for x in entry["inertia"]]
        parent = link.parent.name if not link.parent.static else "world"
        chain = ([parent, *(e["name"] for e in inter), link.name] if inter
                 else [parent] + [link.name] * n)
        out = []
        for k, j in enumerate(ids):
            t = int(m.jnt_type[j])
            joint = {"name": names[k], "type": _JOINT_TYPES[t], "body_a": chain[k if inter else 0],
                     "body_b": chain[k + 1], "anchor": _floats(d.xanchor[j])}
            dof = int(m.jnt_dofadr[j])
            qadr = int(m.jnt_qposadr[j])
            if t in (_HINGE, _SLIDE):
                joint["axis"] = _floats(d.xaxis[j])
                if m.jnt_limited[j]:
                    q0 = float(m.qpos0[qadr])
                    joint["limits"] = [float(m.jnt_range[j, 0]) - q0,
                                       float(m.jnt_range[j, 1]) - q0]
                friction = float(m.dof_frictionloss[dof])
            else:
                friction = float(max(m.dof_frictionloss[dof:dof + 3]))
                if len(set(m.dof_frictionloss[dof:dof + 3])) > 1:
                    self.note(f'unequal frictionloss on the axes of ball joint "{names[k]}" '
                              "(the largest is used)")
                if m.jnt_limited[j]:
                    self.note(f'the cone limit of ball joint "{names[k]}"')
                damping = [float(x) for x in m.dof_damping[dof:dof + 3]]
                if max(damping) > 0:   # isotropic viscous damping (physics/damper.py)
                    joint["damping"] = max(damping)
                    if len(set(damping)) > 1:
                        self.note(f'unequal damping on the axes of ball joint "{names[k]}" '
                                  "(the largest is used)")
                if m.jnt_stiffness[j] or any(m.dof_armature[dof:dof + 3]):
                    self.note(f'stiffness or armature of ball joint "{names[k]}"')
            if friction > 0:
                joint["friction"] = friction
            joint["_id"] = j
            out.append(joint)
        return inter, out

    def composes(self, ids: list[int]) -> bool:
        """Whether a body's joints make one of Sharnir's revolute groups (physics/gimbal.py):
        2 or 3 hinges with perpendicular axes, the middle one of 3 limited away from gimbal
        lock. Then they join the body to its parent directly, with no intermediate body."""
        m, d = self.m, self.d
        if len(ids) > 3 or any(m.jnt_type[j] != _HINGE for j in ids):
            return False
        axes = [d.xaxis[j] / np.linalg.norm(d.xaxis[j]) for j in ids]
        if any(abs(float(axes[i] @ axes[k])) > 1e-6
               for i in range(len(ids)) for k in range(i)):
            return False
        if len(ids) == 3:
            middle = ids[1]
            q0 = float(m.qpos0[int(m.jnt_qposadr[middle])])
            if not m.jnt_limited[middle] or max(abs(float(x) - q0)
                                                 for x in m.jnt_range[middle]) > MAX_MIDDLE_ANGLE:
                return False
        return True

    # --- actuators, damping, springs ---------------------------------------

    def actuators(self, joints: list[dict]) -> None:
        """Put a DC motor on every hinge or slide with an actuator, damping, armature or a
        spring (see the module's table)."""
        m = self.m
        by_joint = {j["_id"]: j for j in joints}
        acts: dict[int, list[int]] = {}
        for a in range(m.nu):
            label = _name(m, self.mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}")
            trn = int(m.actuator_trntype[a])
            target = int(m.actuator_trnid[a, 0])
            on_joint = trn in (int(self.mj.mjtTrn.mjTRN_JOINT),
                               int(self.mj.mjtTrn.mjTRN_JOINTINPARENT))
            if not on_joint or target not in by_joint \
                    or by_joint[target]["type"] not in ("revolute", "prismatic"):
                self.note(f'actuator "{label}" (only actuators on hinges and slides map)')
                continue
            acts.setdefault(target, []).append(a)
        for j, joint in by_joint.items():
            if joint["type"] not in ("revolute", "prismatic"):
                continue
            mine = acts.get(j, [])
            dof = int(m.jnt_dofadr[j])
            if not mine and m.jnt_stiffness[j] == 0 and m.dof_armature[dof] == 0:
                if m.dof_damping[dof] > 0:   # damping alone: the joint's viscous damping
                    joint["damping"] = float(m.dof_damping[dof])
                continue
            for a in mine[1:]:
                label = _name(m, self.mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}")
                self.note(f'actuator "{label}" (a second actuator on joint "{joint["name"]}")')
            motor = self.motor(j, joint["name"], mine[0] if mine else None)
            if motor is not None:
                joint["motor"] = motor
                if motor.pop("_damping", 0.0) > 0:   # a dcmotor's back-EMF is its own: the
                    joint["damping"] = float(m.dof_damping[dof])   # joint's damping adds
        for joint in joints:
            joint.pop("_id", None)

    def motor(self, j: int, joint: str, a: int | None) -> dict | None:
        m = self.m
        dof, qadr = int(m.jnt_dofadr[j]), int(m.jnt_qposadr[j])
        b = float(m.dof_damping[dof])
        armature = float(m.dof_armature[dof])
        k = float(m.jnt_stiffness[j])
        spring_target = float(m.qpos_spring[qadr] - m.qpos0[qadr])
        q0 = float(m.qpos0[qadr])
        if a is None and b == 0 and armature == 0 and k == 0:
            return None
        damping = b if b > 0 else NO_DAMPING
        motor: dict = {"rotor_inertia": armature}
        kp = kd = 0.0
        target = 0.0
        mode = "position"
        if a is None:
            motor.update(resistance=1.0, torque_constant=math.sqrt(damping))
        else:
            label = _name(m, self.mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}")
            g = float(m.actuator_gear[a, 0])
            gain_t, bias_t = int(m.actuator_gaintype[a]), int(m.actuator_biastype[a])
            dyn_t = int(m.actuator_dyntype[a])
            gp, bp = m.actuator_gainprm[a], m.actuator_biasprm[a]
            kind = None
            if gain_t == int(self.mj.mjtGain.mjGAIN_DCMOTOR):
                kind = "dcmotor"
            elif dyn_t == 0 and gain_t == int(self.mj.mjtGain.mjGAIN_FIXED):
                if bias_t == int(self.mj.mjtBias.mjBIAS_NONE):
                    kind = "motor"
                elif (bias_t == int(self.mj.mjtBias.mjBIAS_AFFINE) and bp[0] == 0
                      and bp[1] == -gp[0] and gp[0] > 0):
                    kind = "position"
                elif (bias_t == int(self.mj.mjtBias.mjBIAS_AFFINE) and bp[0] == 0
                      and bp[1] == 0 and bp[2] == -gp[0] and gp[0] > 0):
                    kind = "velocity"
            self.actuated[a] = (j, kind if g > 0 and g * g != 0.0 else None)   # (keyframes)
            if kind is None or g <= 0 or g * g == 0.0:   # (a gear whose square underflows)
                self.note(f'actuator "{label}" (only motor, position, velocity and dcmotor '
                          "with a positive gear map)")
                motor.update(resistance=1.0, torque_constant=math.sqrt(damping))
            elif kind == "dcmotor":
                R, K = float(m.actuator_gainprm[a, 0]), float(m.actuator_gainprm[a, 1])
                te = float(m.actuator_dynprm[a, 0])
                motor.update(resistance=R, torque_constant=K, gear_ratio=g,
                             inductance=max(te, 0.0) * R, _damping=b)
                if m.actuator_ctrllimited[a] and k == 0:
                    motor["voltage_limit"] = float(np.abs(m.actuator_ctrlrange[a]).max())
                if int(m.actuator_actnum[a]) > (1 if te > 0 else 0):
                    self.note(f'dcmotor "{label}": its controller, cogging, thermal or LuGre '
                              "states (the bare motor is used)")
            else:
                # volts -> joint torque K / R = v (the gear for a motor, 1 for a servo, whose
                # voltage is its controller's output in N m); back-EMF K^2 / R = damping
                v = g if kind == "motor" else 1.0
                motor.update(resistance=damping / (v * v), torque_constant=damping / v)
                if kind == "motor" and m.actuator_ctrllimited[a] and k == 0:
                    motor["voltage_limit"] = float(np.abs(m.actuator_ctrlrange[a]).max())
                # a servo acts on the actuator length g q: joint torque g kp (ctrl - g q) ...
                if kind == "position":
                    kp, kd = g * g * float(gp[0]), g * g * float(-bp[2])
                    target = -q0
                elif kind == "velocity":
                    mode = "velocity"
                    kp = g * g * float(gp[0])
            if m.actuator_forcelimited[a] and kind is not None:
                motor["torque_limit"] = float(np.abs(m.actuator_forcerange[a]).max()) * \
                    float(m.actuator_gear[a, 0])
            if getattr(m, "actuator_damping", None) is not None and (
                    m.actuator_damping[a] or m.actuator_armature[a]):
                self.note(f'the damping and armature of actuator "{label}"')
        resistance = motor["resistance"]
        if not (0.0 < resistance < math.inf):   # (a gear of 1e300: damping / gear^2 is 0)
            raise SceneError(f"{self.source}: joint {quoted(joint)}: its actuator maps to a "
                             f"motor resistance of {resistance:g} ohm (a gear or gain too "
                             "large or too small)")
        volts = motor["torque_constant"] / resistance * motor.get("gear_ratio", 1.0)
        if k > 0:
            if mode == "velocity":
                # a velocity servo at rest (ctrl 0) is a damper: with the spring, one PD
                mode, kp, kd, target = "position", 0.0, kp, 0.0
            # spring and position servo add: (kp (t - q) + k (s - q)) = (kp + k)(x - q)
            target = (kp * target + k * spring_target) / (kp + k)
            kp += k
        if kp > 0 or kd > 0:
            motor["controller"] = {"mode": mode, "kp": kp / volts, "kd": kd / volts,
                                   "target": target}
            if self.implicit_servos and (kd > 0 or mode == "velocity"):
                motor["controller"]["implicit"] = True
        return motor

    # --- tendons -------------------------------------------------------------

    def tendons(self, joints: list[dict]) -> None:
        """A limited fixed tendon of two hinges or slides, L = a q1 + b q2 within [lo, hi],
        becomes a coupling limit on q1 led by q2 (see the module); what else a tendon does is
        named. An unlimited fixed tendon without stiffness, damping, friction or armature puts
        no force in MuJoCo's dynamics (only an actuator on it would: named there): left out."""
        m, mj = self.m, self.mj
        by_id = {j["_id"]: j for j in joints}
        for t in range(m.ntendon):
            label = _name(m, mj.mjtObj.mjOBJ_TENDON, t, f"tendon{t}")
            wraps = range(int(m.tendon_adr[t]), int(m.tendon_adr[t] + m.tendon_num[t]))
            if any(int(m.wrap_type[w]) != int(mj.mjtWrap.mjWRAP_JOINT) for w in wraps):
                self.note(f'spatial tendon "{label}"')
                continue
            forces = [what for what, value in (
                ("stiffness", m.tendon_stiffness[t]), ("damping", m.tendon_damping[t]),
                ("frictionloss", m.tendon_frictionloss[t]),
                ("armature", getattr(m, "tendon_armature", [0.0] * m.ntendon)[t])) if value]
            if not m.tendon_limited[t]:
                if forces:
                    self.note(f'fixed tendon "{label}" ({", ".join(forces)})')
                continue
            why = self.tendon_coupling(t, [int(m.wrap_objid[w]) for w in wraps],
                                       [float(m.wrap_prm[w]) for w in wraps], by_id)
            if why:
                self.note(f'fixed tendon "{label}" ({why})')
                continue
            if forces:
                self.note(f'the {", ".join(forces)} of fixed tendon "{label}" (its limit is '
                          "simulated)")
            if m.tendon_margin[t]:
                self.note(f'the limit margin of fixed tendon "{label}"')
            if (np.any(np.abs(m.tendon_solref_lim[t] - _SOLREF) > 1e-12)
                    or np.any(np.abs(m.tendon_solimp_lim[t] - _SOLIMP) > 1e-12)):
                self.note("soft tendon-limit solref/solimp (limits are hard)")

    def tendon_coupling(self, t: int, ids: list[int], coefs: list[float],
                        by_id: dict[int, dict]) -> str | None:
        """Put the limit of fixed tendon t, L = a q1 + b q2 in [lo, hi] (MuJoCo's coordinates),
        on joint 1 as a coupling led by joint 2: with Sharnir's coordinates q = q_mj - qpos0,
        L - L0 = a (q1 - m q2), m = -b / a, L0 = a qpos0_1 + b qpos0_2, so C = q1 - m q2 in
        [(lo - L0) / a, (hi - L0) / a] (swapped for a < 0). When joint 1 follows another
        already, or would close a cycle, joint 2 follows joint 1 instead. Returns None, or why
        the tendon does not map."""
        m = self.m
        if len(ids) != 2 or ids[0] == ids[1]:
            return f"of {len(set(ids))} joint{'s' if len(set(ids)) != 1 else ''}: only two map"
        if any(j not in by_id or by_id[j]["type"] not in ("revolute", "prismatic")
               for j in ids):
            return "its joints must both be hinges or slides"
        if any(c == 0.0 for c in coefs):
            return "a coefficient of 0"
        leaders = {j["name"]: j["mimic"]["joint"] for j in by_id.values() if "mimic" in j}
        q0 = [float(m.qpos0[int(m.jnt_qposadr[j])]) for j in ids]
        lo, hi = (float(x) for x in m.tendon_range[t])
        for first, second in ((0, 1), (1, 0)):
            follower, leader = by_id[ids[first]], by_id[ids[second]]
            name, k = follower["name"], leader["name"]
            if name in leaders:
                continue
            while k in leaders and k != name:   # the leader's own leaders: no cycle
                k = leaders[k]
            if k == name:
                continue
            a, b = coefs[first], coefs[second]
            length0 = a * q0[first] + b * q0[second]
            bounds = sorted(((lo - length0) / a, (hi - length0) / a))
            multiplier = -b / a
            if not all(math.isfinite(x) for x in (*bounds, multiplier)):
                return "its range or coefficients out of range"
            follower["mimic"] = {"joint": leader["name"], "multiplier": multiplier,
                                 "offset": 0.0, "lower": bounds[0], "upper": bounds[1]}
            return None
        return "its joints follow other tendons already (one leader each, no cycle)"

    # --- collision filters --------------------------------------------------

    def collision_bits(self, bodies: list[dict], joints: list[dict]) -> None:
        """Group and mask bits reproducing MuJoCo's contact filter (see the module). Sharnir
        never lets two bodies joined by a joint touch, nor two static bodies, so those pairs
        may share a bit or not: only the pairs MuJoCo keeps apart that nothing else keeps
        apart must never share one."""
        m = self.m
        # the entries that collide, with their geoms, MuJoCo link and bit classes
        nodes = []
        for entry in bodies:
            geoms = entry.pop("_geoms", None)
            if geoms is None:
                continue
            if not geoms or "shape" not in entry:
                entry["group"], entry["mask"] = 0, 0
                continue
            ct = ca = 0
            for g in geoms:
                ct |= int(m.geom_contype[g])
                ca |= int(m.geom_conaffinity[g])
            if len({(int(m.geom_contype[g]), int(m.geom_conaffinity[g])) for g in geoms}) > 1:
                self.note(f'different contype/conaffinity on the geoms of body "{entry["name"]}" '
                          "(their union is used)")
            link = self.link_of[int(m.geom_bodyid[geoms[0]])]
            nodes.append((entry, link, ct, ca))
        excluded = set()
        for sig in m.exclude_signature:
            b1, b2 = int(sig) >> 16, int(sig) & 0xFFFF
            excluded.add(frozenset((id(self.link_of[b1]), id(self.link_of[b2]))))
        filterparent = not (m.opt.disableflags & int(self.mj.mjtDisableBit.mjDSBL_FILTERPARENT))

        def may_touch(x, y) -> bool:
            (_, la, cta, caa), (_, lb, ctb, cab) = x, y
            if la.static and lb.static:
                return False
            if la is lb:
                return False
            if not (cta & cab or ctb & caa):
                return False
            if frozenset((id(la), id(lb))) in excluded:
                return False
            if filterparent and ((la.parent is lb and not lb.static)
                                 or (lb.parent is la and not la.static)):
                return False
            return True

        jointed = {frozenset((j["body_a"], j["body_b"])) for j in joints}

        def free(x, y) -> bool:
            """Whether Sharnir keeps x and y apart whatever their bits (joined, or static)."""
            (ea, la, _, _), (eb, lb, _, _) = x, y
            return (la.static and lb.static) or \
                frozenset((ea["name"], eb["name"])) in jointed

        n = len(nodes)
        # edges: the pairs that must touch; allowed: those that may share a bit (the pairs
        # that must touch and those Sharnir keeps apart anyway)
        edges, allowed = set(), {i: set() for i in range(n)}
        for i in range(n):
            for k in range(i + 1, n):
                if free(nodes[i], nodes[k]):
                    pass
                elif may_touch(nodes[i], nodes[k]):
                    edges.add((i, k))
                else:
                    continue
                allowed[i].add(k)
                allowed[k].add(i)
        if all(len(allowed[i]) == n - 1 for i in range(n)):
            return  # nothing to keep apart that Sharnir does not: its defaults
        # a greedy cover of the edges by cliques of the allowed pairs, each grown first by the
        # bodies with the most edges still to cover
        cliques: list[set[int]] = []
        left = set(edges)
        uncovered = [0] * n
        for i, k in edges:
            uncovered[i] += 1
            uncovered[k] += 1
        while left:
            i, k = min(left)
            clique = {i, k}
            for w in sorted(allowed[i] & allowed[k], key=lambda w: (-uncovered[w], w)):
                if all(w in allowed[c] for c in clique):
                    clique.add(w)
            cliques.append(clique)
            covered = {(x, y) for x in clique for y in clique if x < y} & left
            left -= covered
            for x, y in covered:
                uncovered[x] -= 1
                uncovered[y] -= 1
        if len(cliques) > 62:
            self.note("the contact filter needs more than 62 group bits: contype/conaffinity "
                      "are used as group/mask")
            for entry, _, ct, ca in nodes:
                entry["group"], entry["mask"] = ct, ca
            return
        for i, (entry, _, _, _) in enumerate(nodes):
            bits = sum(1 << c for c, clique in enumerate(cliques) if i in clique)
            entry["group"], entry["mask"] = bits, bits

    # --- keyframes -----------------------------------------------------------

    def keyframes(self, bodies: list[dict], by_id: dict[int, dict]) -> list[dict]:
        """The file's <key>s as [[keyframes]] (see the module); what a key holds that does not
        map is noted. A key that cannot be read is left out (noted): keyframes never keep a
        file from loading."""
        m, mj = self.m, self.mj
        out: list[dict] = []
        taken: set[str] = set()
        entries = {b["name"]: b for b in bodies}
        dk = mj.MjData(m)
        for k in range(int(m.nkey)):
            name = _id2name(m, mj.mjtObj.mjOBJ_KEY, k) or f"key{k}"
            base, n = name, 1
            while name in taken:
                n += 1
                name = f"{base}.{n}"
            taken.add(name)
            try:
                key, lost = self.keyframe(k, name, dk, entries, by_id)
            except Exception as exc:  # noqa: BLE001  (a key must not fail the file)
                self.note(f'keyframe "{name}" ({type(exc).__name__}: {exc})')
                continue
            out.append(key)
            if lost:
                self.note(f'in keyframe "{name}": {", ".join(lost)}')
        return out

    def keyframe(self, k: int, name: str, dk, entries: dict, by_id: dict
                 ) -> tuple[dict, list[str]]:
        """(the [[keyframes]] entry of key k, what of it does not map)."""
        from ..physics.world import frame_from_axis

        m, mj, d0 = self.m, self.mj, self.d
        qpos, qvel, ctrl = m.key_qpos[k].copy(), m.key_qvel[k], m.key_ctrl[k]
        for j in range(m.njnt):   # (MuJoCo normalises its quaternions too)
            t, a = int(m.jnt_type[j]), int(m.jnt_qposadr[j])
            for start in ((a + 3,) if t == _FREE else (a,) if t == _BALL else ()):
                n = np.linalg.norm(qpos[start:start + 4])
                qpos[start:start + 4] = qpos[start:start + 4] / n if n > 0 else (1, 0, 0, 0)
        dk.qpos[:], dk.qvel[:] = qpos, qvel
        mj.mj_kinematics(m, dk)
        q0 = m.qpos0
        joints: dict = {}
        rates: dict = {}
        bodies: dict = {}
        lost: list[str] = []
        frames = {0: self.joint_rotations(d0, q0), 1: self.joint_rotations(dk, qpos)}
        for j in range(m.njnt):
            t, a, v = int(m.jnt_type[j]), int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            b = int(m.jnt_bodyid[j])
            if t == _FREE:   # the physics body's pose moved as MuJoCo's body frame moved
                entry = entries.get(self.link_of[b].name)
                if entry is None or self.link_of[b].root != b:
                    continue
                p0, R0 = np.array(entry["pos"], dtype=float), _matrix(entry["quat"])
                frame = (entry.get("shape") or {}).get("frame")
                if frame is not None:
                    p0 = p0 + R0 @ np.array(frame["pos"], dtype=float)
                    R0 = R0 @ _matrix(frame["quat"])
                D = dk.xmat[b].reshape(3, 3) @ d0.xmat[b].reshape(3, 3).T
                p = dk.xpos[b] + D @ (p0 - d0.xpos[b])
                w = dk.xmat[b].reshape(3, 3) @ qvel[v + 3:v + 6]
                state = {"pos": _floats(p), "quat": _quat(D @ R0)}
                if np.any(qvel[v:v + 6]):   # MuJoCo's: the anchor's velocity, w in the body
                    state["vel"] = _floats(qvel[v:v + 3] + np.cross(w, p - dk.xanchor[j]))
                    state["angvel"] = _floats(w)
                bodies[entry["name"]] = state
                continue
            joint = by_id.get(j)
            if joint is None:
                continue
            if t in (_HINGE, _SLIDE):
                joints[joint["name"]] = float(qpos[a] - q0[a])
                if qvel[v]:
                    rates[joint["name"]] = float(qvel[v])
                continue
            # a ball: Sharnir's rotation is of its joint frame F0 (x = its axis, at qpos0) on
            # B relative to the one on A, both carried by their bodies' motions since qpos0
            F0 = _matrix(frame_from_axis(np.array(joint.get("axis", (0.0, 0.0, 1.0)))))
            (before0, after0), (before, after) = frames[0][j], frames[1][j]
            turn_a, turn_b = before @ before0.T, after @ after0.T
            joints[joint["name"]] = _quat(F0.T @ turn_a.T @ turn_b @ F0)
            if np.any(qvel[v:v + 3]):   # MuJoCo's ball dofs turn about the body's own axes
                rel = dk.xmat[b].reshape(3, 3) @ qvel[v:v + 3]
                rates[joint["name"]] = _floats((turn_b @ F0).T @ rel)
        for hinges in self.groups_of(by_id):   # a gimbal's middle hinge beyond +-90 degrees:
            middle = by_id[hinges[1]]["name"]   # its angles are another triple in Sharnir
            if middle in joints and not abs(joints[middle]) < 0.5 * math.pi:
                for h in hinges:
                    joints.pop(by_id[h]["name"], None)
                    rates.pop(by_id[h]["name"], None)
                names = ", ".join(quoted(by_id[h]["name"]) for h in hinges)
                lost.append(f"the angles of joints {names} (the middle one beyond +-90 degrees)")
        voltages, targets, ignored = self.key_controls(ctrl, by_id)
        for why, labels in ignored.items():
            lost.append(f"the ctrl of actuator{'s' if len(labels) > 1 else ''} "
                        f"{', '.join(labels)} ({why})")
        if m.na and np.any(m.key_act[k]):
            lost.append("its actuator activations (act)")
        mocap = sorted((int(m.body_mocapid[b]), b) for b in range(m.nbody)
                       if m.body_mocapid[b] >= 0)
        mocap = [b for _, b in mocap]
        if mocap and (np.any(m.key_mpos[k] != m.body_pos[mocap])
                      or np.any(m.key_mquat[k] != m.body_quat[mocap])):
            lost.append("its mocap bodies' poses (mpos, mquat)")
        if m.key_time[k]:
            lost.append(f"its time ({float(m.key_time[k]):g} s)")
        key: dict = {"name": name, "joints": joints}
        for field, table in (("rates", rates), ("bodies", bodies), ("voltages", voltages),
                             ("targets", targets)):
            if table:
                key[field] = table
        return key, lost

    def joint_rotations(self, d, qpos) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per joint that turns (hinge, ball): the rotation (world) of its body's frame
        before and after it (MuJoCo's mj_kinematics: a body's joints turn in order, each
        carried by the ones before it; a hinge by q - qpos0)."""
        import mujoco

        m = self.m
        out = {}
        for b in range(1, m.nbody):
            first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
            if count == 0 or any(m.jnt_type[j] == _FREE for j in range(first, first + count)):
                continue
            R = d.xmat[int(m.body_parentid[b])].reshape(3, 3) @ _matrix(m.body_quat[b])
            for j in range(first, first + count):
                t, a = int(m.jnt_type[j]), int(m.jnt_qposadr[j])
                before = R
                if t == _HINGE:
                    q = np.zeros(4)
                    mujoco.mju_axisAngle2Quat(q, m.jnt_axis[j], float(qpos[a] - m.qpos0[a]))
                    R = R @ _matrix(q)
                elif t == _BALL:
                    R = R @ _matrix(qpos[a:a + 4])
                out[j] = (before, R)
        return out

    def groups_of(self, by_id: dict) -> list[list[int]]:
        """The hinges (MuJoCo joint ids) of each body whose joints compose (a gimbal or
        universal joint: Sharnir's group)."""
        m = self.m
        out = []
        for b in range(1, m.nbody):
            ids = list(range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])))
            if len(ids) > 1 and all(j in by_id for j in ids) and self.composes(ids):
                out.append(ids)
        return out

    def key_controls(self, ctrl, by_id: dict) -> tuple[dict, dict, dict[str, list[str]]]:
        """(voltages, targets, {why: actuators whose ctrl does not map}) of a key's ctrl, as
        `motor` maps each actuator (see the module's table): a motor's or dcmotor's ctrl is
        its voltage, a position servo's its set-point ctrl / gear - qpos0 (with a spring on
        the joint, the one controller's: (kp t + k s) / (kp + k)), a velocity servo's the
        rate ctrl / gear it aims at. MuJoCo clamps ctrl to ctrlrange."""
        m = self.m
        voltages: dict = {}
        targets: dict = {}
        ignored: dict[str, list[str]] = {}
        for a in range(m.nu):
            c = float(ctrl[a])
            if m.actuator_ctrllimited[a] and not (
                    m.opt.disableflags & int(self.mj.mjtDisableBit.mjDSBL_CLAMPCTRL)):
                c = min(max(c, float(m.actuator_ctrlrange[a, 0])),
                        float(m.actuator_ctrlrange[a, 1]))
            j, kind = self.actuated.get(a, (None, None))
            label = quoted(_name(m, self.mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}"))
            if j is None or kind is None:
                if c:
                    ignored.setdefault("not mapped", []).append(label)
                continue
            joint = by_id[j]
            motor = joint.get("motor") or {}
            k = float(m.jnt_stiffness[j])
            g = float(m.actuator_gear[a, 0])
            qadr = int(m.jnt_qposadr[j])
            spring = float(m.qpos_spring[qadr] - m.qpos0[qadr])
            if kind in ("motor", "dcmotor"):
                if "controller" in motor:   # a spring's controller sets its voltage
                    if c:
                        ignored.setdefault("a motor on a joint with a spring", []).append(label)
                    continue
                limit = float(motor.get("voltage_limit", math.inf))
                voltages[joint["name"]] = min(max(c, -limit), limit)
            elif kind == "position":
                kp = g * g * float(m.actuator_gainprm[a, 0])
                t = c / g - float(m.qpos0[qadr])
                targets[joint["name"]] = (kp * t + k * spring) / (kp + k)
            elif kind == "velocity":
                targets[joint["name"]] = [spring, c / g] if k > 0 else c / g
        return voltages, targets, ignored

    # --- what does not map --------------------------------------------------

    def unmapped(self) -> None:
        m, mj = self.m, self.mj
        counts = [("neq", "equality constraint"), ("nsensor", "sensor"),
                  ("npair", "explicit contact pair"), ("nflex", "flex"), ("nplugin", "plugin"),
                  ("nhfield", "height field")]
        for attr, what in counts:
            k = int(getattr(m, attr, 0))
            if k:
                self.note(f"{k} {what}{'s' if k > 1 else ''}")
        if m.opt.integrator not in (int(mj.mjtIntegrator.mjINT_EULER),
                                    int(mj.mjtIntegrator.mjINT_IMPLICITFAST)):
            self.note(f"the {mj.mjtIntegrator(m.opt.integrator).name[6:].lower()} integrator "
                      "(Sharnir steps its own way)")
        if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
            self.note("fluid forces (density, viscosity, wind)")
        if np.any(m.body_gravcomp):
            self.note("gravity compensation (gravcomp)")
        if np.any(m.geom_margin) or np.any(m.geom_gap):
            self.note("geom margin/gap")
        if (np.any(np.abs(m.geom_solref - _SOLREF) > 1e-12)
                or np.any(np.abs(m.geom_solimp - _SOLIMP) > 1e-12)
                or np.any(m.geom_solmix != 1.0)):
            self.note("soft-contact solref/solimp/solmix on geoms (contacts are hard)")
        if (np.any(np.abs(m.jnt_solref - _SOLREF) > 1e-12)
                or np.any(np.abs(m.jnt_solimp - _SOLIMP) > 1e-12)):
            self.note("soft joint-limit solref/solimp (limits are hard)")
        if np.any(m.jnt_margin):
            self.note("joint limit margins")
