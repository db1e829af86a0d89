"""URDF robot descriptions read as Sharnir scenes: `read_urdf` turns a .urdf file into the raw
scene dict a TOML scene parses to (scenes/schema.py), which then goes through the same
validation and `build_world`; `read_scene` dispatches on the suffix.

The XML is read by lxml with entities left unresolved, no network and no DTD, after a check
that refuses any DOCTYPE or ENTITY declaration (an entity-expansion bomb is one clean error).
Numbers are checked as read: every problem is a SceneError naming the file, the line and the
element (``link "arm" <inertial>/<mass value>``), never a traceback.

Mapping (the zero configuration, every joint at q = 0, is the initial pose):

* link -> body. Each link's world pose T_link comes from forward kinematics along the joints'
  <origin>s from the root, placed at the world origin. The body frame is the centre of mass and
  principal axes: the <inertial> origin c gives the centre in the link frame, its inertia
  R I R^T (R the inertial origin's rotation) is diagonalised, I = Rp diag(moments) Rp^T. A link
  with <collision> geometry gets shape = compound with a part per <collision> (box ->
  half_extents = size / 2; sphere; cylinder along z, length -> half_length = length / 2;
  capsule likewise; mesh -> a ``mesh`` shape of the file, scale per axis: it collides as its
  convex hull, or with ``decompose`` as its convex decomposition's pieces, and is drawn with
  its triangles), its parts and `frame` = (c, Rp) written in the
  link frame, body pos/quat = the link's pose, mass and inertia given. A link without
  collision geometry gets no shape: pos/quat = the body frame itself.
* <visual> -> the body's ``visuals`` (drawn, no collision, no mass): the same shapes at their
  <origin> in the link frame (in the body frame for a shapeless body), colour from the
  <material>'s <color rgba> (inline or a <robot>-level material by name; none: the body's
  colour). A visual mesh file that is not found is left out, listed in the warning (the link
  is drawn by its collision shape if no visual is left); a link welded to the fixed world
  without collision geometry is not drawn.
* Missing inertials as ROS tools treat them: a link without <inertial> is massless. A massless
  leaf link welded by a fixed joint (a tool or sensor frame) is merged into its parent. The
  massless root of a fixed-base robot is the fixed world (a static body when it has
  geometry); a root link named "world" always is. Any other massless link gets a small mass
  (1 % of the lightest link's, inertia from its geometry or a 5 cm ball), listed in the warning.
  Principal moments below 1e-6 of the link's largest (zero in the file), or below the mass
  times (1 mm)^2 (a radius of gyration of 1 mm: iCub's ankle has 1e-20 kg m^2), are raised
  to that (all zero: to those of a 1 cm ball), listed in the warning; unless the link's
  collision geometry has no moment that small: then the link takes its geometry's inertia
  (`flat_inertia`), as an all-zero tensor does.
* joints: revolute -> revolute with its limits, continuous -> revolute without, prismatic ->
  prismatic with its limits (lower = upper: a locked joint, made fixed, listed), fixed ->
  the child merged into its parent (merge_fixed, default: masses, centres and inertias added
  with the parallel-axis theorem, collision parts moved into the parent's frame) or else a
  Sharnir fixed joint. Anchor = the child link's origin, axis = the joint axis, both in world
  coordinates at the initial pose; body_a = the parent, body_b = the child, so the joint
  coordinate is the URDF q. <dynamics friction> -> the joint's Coulomb friction, damping ->
  its viscous damping (physics/damper.py); floating and planar joints (the child is left free)
  are listed in the warning. <mimic joint multiplier offset> -> the joint's ``mimic`` (q =
  multiplier q_joint + offset, an equality row of the solve: physics/coupling.py); a mimic
  joint gets no motor (its leader drives it); one whose leader is not a moving joint is listed;
  a chain of mimics is kept (the relations compose), a <mimic> naming its own joint or a cycle
  of mimics is a SceneError.
* base: fixed_base joins the root link's body to "world" with a fixed joint named
  "<root>_to_world" (it reports the base's reaction wrench); False lets the robot float.
  None (the default) reads what the file means from its collision geometry at the initial
  pose: a robot that stands on its root link (an arm: its base is the lowest part) is fixed
  there; one that stands on links that move against the root (wheels, legs, casters on a
  wheeled base: a part within BASE_CONTACT_M of the lowest point that is not welded to the
  root) floats; where the root (with the links welded to it) has no collision geometry,
  those low links must lie on two branches or more (legs, wheels), else the robot hangs from
  a mounting frame (a pendulum) and is fixed; without collision geometry it is fixed. PyBullet
  floats every robot unless told (useFixedBase); MuJoCo fixes every URDF.
  height moves the robot up or down so that the lowest point of its collision geometry at
  the initial pose is at z = height (None: where the file puts it). ground adds a static
  plane "ground": at z = 0 when height is given (the robot stands on it), else under the
  lowest point. A URDF opened as a scene (scenes.loader: OPENED_URDF) has ground = True
  and height = 0: it stands on the floor, like r2d2, whose root is at the origin.
  Links do not touch each other unless self_collision (group 2, mask all
  but 2, as pybullet's default); they touch everything else.
* motors: each revolute, continuous or prismatic joint whose <limit> has effort > 0 and
  velocity > 0 gets a DC motor on a 24 V supply sized so that its stall torque is the effort
  and its no-load speed the velocity: a motor of no-load speed w_m0 = 600 rad/s at 24 V
  (K_t = 24 / 600 = 0.04 N m/A), gear ratio r = w_m0 / velocity, efficiency 1, no rotor
  inertia or inductance, and R = r K_t V / effort; the effort is also its torque limit.
  A position PD (kp = V / (velocity tau), kd = 0, tau = 0.05 s) holds the initial angle (0,
  clamped into the limits): the back-EMF's damping r^2 K_t^2 / R = effort / velocity closes
  the loop with the time constant tau, and a load of the full effort moves it off by at most
  velocity * tau. motors=False leaves every joint passive.

Mesh files: ``package://NAME/rest`` is looked up the way ROS tools do, in order: the URDF's
folder and each folder above it, where NAME is that folder itself (holding a package.xml) or
a sub-folder NAME holding a package.xml; then each folder of ``package_roots`` and of
$ROS_PACKAGE_PATH, being NAME, holding NAME, or holding NAME with a package.xml a few levels
down. ``file://`` paths are absolute; plain paths are relative to the URDF's folder.

Every mesh file must lie in the folders a scene may read from (`scenes.asset_roots`): the
URDF's folder, `package_roots`, $ROS_PACKAGE_PATH, $SHARNIR_ASSET_PATH, the package (a folder
with a package.xml) the URDF lies in, and the package a ``package://`` URI found by the ROS
rule (NAME holding a package.xml) or holding the URDF (a folder of the package's name the
URDF lies in is that package). Another folder NAME without a package.xml (PyBullet's fallback)
is used only where it lies in those folders already; anything else is one error.
"""

import functools
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..physics.message import listing, quoted
from .asset_roots import AssetRoots, own_package
from .source import SceneError, read_bytes

WORLD = "world"
SUPPLY_V = 24.0          # V, every motor's supply
MOTOR_SPEED = 600.0      # rad/s, the motor's no-load speed at the supply
LOOP_TAU = 0.05          # s, the position loop's time constant
MASSLESS_SHARE = 0.01    # a massless link's mass, as a share of the lightest link's
MOMENT_FLOOR = 1e-6      # principal moments below this share of the largest are raised
GYRATION_FLOOR_M = 1e-3  # and all of them to mass * this^2 (a radius of gyration of 1 mm: a
#                          link of 0.5 kg with moments of 1e-20 kg m^2 is a file's slip)
BASE_CONTACT_M = 0.005   # m: a part this close to the lowest point is what the robot stands on
ROBOT_GROUP = 2
ALL_GROUPS = 2**62 - 1
_SEARCH_DEPTH = 3        # folders below a package root searched for a package
# "spherical" is PyBullet's extension (a ball joint), which Sharnir has
_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar",
                "spherical")
_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


class UrdfWarning(UserWarning):
    """What a URDF file asks for that Sharnir does not simulate as written."""


@dataclass
class _Link:
    name: str
    line: int
    mass: float = 0.0
    has_inertial: bool = False
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))       # link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about com, link axes
    parts: list = field(default_factory=list)   # (shape dict, pos (3,), R (3, 3)) link frame
    visuals: list = field(default_factory=list)  # (shape dict, pos, R, rgba or None) link frame


@dataclass
class _Joint:
    name: str
    line: int
    type: str
    parent: str
    child: str
    pos: np.ndarray
    rot: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    effort: float = 0.0
    velocity: float = 0.0
    friction: float = 0.0
    damping: float = 0.0
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0


def read_urdf(path, *, fixed_base=None, package_roots=(), ground=False, height=None,
              motors=True, merge_fixed=True, self_collision=False, decompose=False,
              asset_roots=None, strict=False) -> dict:
    """The raw scene dict (the structure of a TOML scene) of the URDF file at `path`; see the
    module for the mapping. What cannot be simulated as written is one UrdfWarning (strict:
    an inertia that is repaired or computed is an error instead). decompose: every collision
    mesh gets ``decompose = true`` (convex pieces instead of its hull: scenes/decompose.py,
    done as the world is built). Meshes
    are read from `asset_roots` (an AssetRoots; default: `AssetRoots.of(path)`), the
    `package_roots` and the ROS packages found (see the module)."""
    path = Path(path)
    source = str(path)
    root_el = _parse_xml(path, source, strict)
    roots = AssetRoots.of(path) if asset_roots is None else asset_roots
    own = own_package(path)
    roots = roots.widened(*package_roots, *([own] if own is not None else []))
    notes = _Notes()
    reader = _Reader(source, path.parent, [Path(p) for p in package_roots], roots, notes,
                     strict=strict)
    links, joints = reader.read(root_el)
    builder = _Builder(source, links, joints, notes, fixed_base=fixed_base, motors=motors,
                       merge_fixed=merge_fixed, self_collision=self_collision)
    bodies, scene_joints = builder.build()
    if decompose:
        for body in bodies:
            _decompose_meshes(body)
    lowest = 0.0
    if ground or height is not None:
        lowest = min((_lowest_z(*part) for part in builder.world_parts), default=math.inf)
        lowest = lowest if math.isfinite(lowest) else 0.0
    if height is not None:
        _lift(bodies, scene_joints, float(height) - lowest)
    if ground:
        names = {b["name"] for b in bodies}
        name = "ground"
        while name in names:
            name += "_plane"
        bodies.insert(0, {"name": name, "shape": {"type": "plane"}, "kind": "static",
                          "pos": [0.0, 0.0, 0.0 if height is not None else lowest]})
    robot = root_el.get("name") or path.stem
    n_links = len(links)
    base = "fixed base" if builder.fixed_base else "floating base"
    if fixed_base is None:
        base += (" (it stands on its base)" if builder.fixed_base
                 else " (it stands on legs or wheels)")
    description = (f'URDF robot "{robot}" ({path.name}): {n_links} links as {len(bodies)} '
                   f'bodies, {len(scene_joints)} joints, {base}')
    notes.emit(source)
    return {"description": description, "bodies": bodies, "joints": scene_joints}


# --- XML ------------------------------------------------------------------------------------


_XML_DECL = re.compile(rb"<\?xml\s[^>]*\?>")


def _parse_xml(path: Path, source: str, strict: bool = False):
    from lxml import etree

    data = read_bytes(path, source)   # a regular file of bounded size, or SceneError
    match = _DECLARATION.search(data)
    if match:
        line = data.count(b"\n", 0, match.start()) + 1
        raise SceneError(f"{source}: line {line}: <!{match.group(1).decode().upper()}> "
                         "declarations are not allowed in a URDF file (entities can expand "
                         "to gigabytes); remove the document type declaration")
    # an XML declaration after a comment or with version "0.0" (both seen in PyBullet's data,
    # which ROS tools and PyBullet read) says nothing a URDF needs: drop it, keep the lines
    data = _XML_DECL.sub(lambda m: b"\n" * m.group(0).count(b"\n"), data)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else "?"
        root = None
        if "Extra content at the end of the document" in exc.msg and not strict:
            # (PyBullet's humanoid.urdf: a stray tag after </robot>; PyBullet and MuJoCo
            # read the file up to </robot>): read so, and said
            end = data.rfind(b"</robot>")
            if end >= 0:
                try:
                    root = etree.fromstring(data[:end + len(b"</robot>")], parser)
                    warnings.warn(f"{source}: line {line}: what follows </robot> is not read "
                                  "(not XML)", UrdfWarning, stacklevel=4)
                except etree.XMLSyntaxError:
                    root = None
        if root is None:
            raise SceneError(f"{source}: line {line}: not well-formed XML ({exc.msg})") from None
    if root.tag != "robot":
        raise SceneError(f"{source}: line {root.sourceline}: the root element is <{root.tag}>, "
                         "a URDF file's is <robot>")
    return root


_NUMBER_PREFIX = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_OPTENV = re.compile(r"\$\(optenv\s+(\w+)\s*([^)]*)\)")


def _substituted(text):
    """xacro's $(optenv NAME default) left in a file written out by xacro (Clearpath's husky):
    the environment variable NAME, else the default, as xacro would have put it."""
    if "$(" not in text:
        return text
    return _OPTENV.sub(lambda m: os.environ.get(m.group(1), m.group(2)), text)


def _rpy_matrix(r, p, y):
    """URDF's fixed-axis roll, pitch, yaw: R = Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), \
        math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


class _Reader:
    """Reads <link> and <joint> elements, checking every number and name."""

    def __init__(self, source, folder, package_roots, roots, notes=None, strict=False):
        self.source = source
        self.strict = strict
        self.folder = folder
        self.package_roots = package_roots
        self.roots = roots
        self.notes = _Notes() if notes is None else notes
        self.materials = {}     # <robot>-level material name -> rgba

    def fail(self, el, where, message):
        raise SceneError(f"{self.source}: line {el.sourceline}: {where}: {message}")

    def numbers(self, el, attr, count, where, default=None):
        """`count` finite numbers of attribute `attr` (count None: 1 or 3, a mesh scale)."""
        text = el.get(attr)
        label = f'{where} <{el.tag} {attr}>'
        if text is None:
            if default is None:
                self.fail(el, label, "is required")
            return np.array(default, dtype=float)
        words = _substituted(text).replace(",", " ").split()   # ("0.07, 0, -0.03": PyBullet
        try:                                                      # reads it)
            values = [float(w) for w in words]
        except ValueError:
            # PyBullet reads each word as C's atof does, up to what is not a number ("-1.57."
            # is -1.57): read so, and said (--strict: an error)
            prefixes = [_NUMBER_PREFIX.match(w) for w in words]
            if self.strict or not all(prefixes):
                self.fail(el, label, f'must be numbers (got {quoted(text)})')
            values = [float(m.group(0)) for m in prefixes]
            self.notes.add("numbers with trailing characters (read up to them, as PyBullet "
                           "does)", f"{label} {quoted(text)}")
        wanted = (1, 3) if count is None else (count,)
        if len(values) > max(wanted) and not self.strict:   # ("rpy" of 4, a scale of 4)
            self.notes.add("extra numbers (the first ones read, as PyBullet does)",
                           f"{label} {quoted(text)}")
            values = values[:max(wanted)]
        if count is None:
            if len(values) not in (1, 3):
                self.fail(el, label, f'must be 1 or 3 numbers (got {quoted(text)})')
        elif len(values) != count:
            self.fail(el, label, f'must be {count} number{"s" * (count > 1)} (got {quoted(text)})')
        if not all(math.isfinite(v) for v in values):
            self.fail(el, label, f'must be finite (got {quoted(text)})')
        return np.array(values)

    def number(self, el, attr, where, default=None, low=None):
        value = float(self.numbers(el, attr, 1, where,
                                   None if default is None else [default])[0])
        if low is not None and value < low:
            self.fail(el, f"{where} <{el.tag} {attr}>", f"must be at least {low:g} "
                      f"(got {value:g})")
        return value

    def origin(self, parent, where):
        el = parent.find("origin")
        if el is None:
            return np.zeros(3), np.eye(3)
        xyz = self.numbers(el, "xyz", 3, where, (0.0, 0.0, 0.0))
        rpy = self.numbers(el, "rpy", 3, where, (0.0, 0.0, 0.0))
        return xyz, _rpy_matrix(*rpy)

    def name(self, el, what):
        name = el.get("name")
        if not name:
            self.fail(el, f"<{what}>", 'needs a "name"')
        return name

    def read(self, root):
        links, joints = {}, {}
        for el in root.findall("material"):
            rgba = self.colour(el, f'<material name="{el.get("name")}">')
            if el.get("name") and rgba is not None:
                self.materials[el.get("name")] = rgba
        for el in root.findall("link"):
            name = self.name(el, "link")
            if name in links:
                self.fail(el, f'link "{name}"', f"duplicate name (already on line "
                          f"{links[name].line})")
            links[name] = self.link(el, name)
        if not links:   # (a xacro output left empty: a clean error, as issue 28 asks)
            raise SceneError(f"{self.source}: line {root.sourceline}: <robot> has no <link>")
        # a material named in one <visual> may be defined in another (as ROS tools read it)
        for link in links.values():
            link.visuals = [(shape, pos, rot, self.materials.get(rgba)
                             if isinstance(rgba, str) else rgba)
                            for shape, pos, rot, rgba in link.visuals]
        for el in root.findall("joint"):
            name = self.name(el, "joint")
            if name in joints:
                self.fail(el, f'joint "{name}"', f"duplicate name (already on line "
                          f"{joints[name].line})")
            joints[name] = self.joint(el, name, links)
        return links, joints

    def link(self, el, name):
        where = f'link "{name}"'
        link = _Link(name, el.sourceline)
        inertial = el.find("inertial")
        if inertial is not None:
            w = f"{where} <inertial>"
            mass_el = inertial.find("mass")
            if mass_el is None:
                self.fail(inertial, w, "needs a <mass>")
            link.mass = self.number(mass_el, "value", w, low=0.0)
            link.has_inertial = True
            pos, rot = self.origin(inertial, w)
            I = np.zeros((3, 3))
            inertia = inertial.find("inertia")
            if inertia is not None:
                keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
                get = {k: self.number(inertia, k, w, default=0.0) for k in keys}
                I = np.array([[get["ixx"], get["ixy"], get["ixz"]],
                              [get["ixy"], get["iyy"], get["iyz"]],
                              [get["ixz"], get["iyz"], get["izz"]]])
                if link.mass > 0:
                    I = self.valid_inertia(I, [inertia.get(k) for k in keys], inertia,
                                           f"{w} <inertia>", name)
            if link.mass > 0 and not np.any(I) and self.strict:
                self.fail(inertial, w, f"has mass {link.mass:g} and no inertia (--strict)")
            link.com = pos
            link.inertia = rot @ I @ rot.T
        for k, coll in enumerate(el.findall("collision")):
            w = f"{where} <collision> {k}"
            pos, rot = self.origin(coll, w)
            geometry = coll.find("geometry")
            if geometry is None or len(geometry) != 1:
                self.fail(coll, w, "needs a <geometry> with one shape in it")
            shape = self.shape(geometry[0], w, empty_ok=True, missing_ok=not self.strict,
                               missing_note="collision meshes not found (left out, as PyBullet "
                                            "does; --strict: an error)")
            if shape is not None:
                link.parts.append((shape, pos, rot))
        for k, vis in enumerate(el.findall("visual")):
            w = f"{where} <visual> {k}"
            pos, rot = self.origin(vis, w)
            geometry = vis.find("geometry")
            if geometry is None or len(geometry) != 1:
                if not self.strict:   # (drawn only: PyBullet draws nothing for it either)
                    self.notes.add("<visual>s without a shape (left out)", quoted(name))
                    continue
                self.fail(vis, w, "needs a <geometry> with one shape in it")
            shape = self.shape(geometry[0], w, missing_ok=True, empty_ok=True)
            if shape is None:
                continue
            material = vis.find("material")
            rgba = None
            if material is not None:
                rgba = self.colour(material, f"{w} <material>")
                if rgba is None:         # by name: resolved once every link is read
                    rgba = material.get("name")
                elif material.get("name"):
                    self.materials.setdefault(material.get("name"), rgba)
            link.visuals.append((shape, pos, rot, rgba))
        if link.mass > 0 and not np.any(link.inertia):
            link.inertia = self.geometry_inertia(link)
        elif link.mass > 0 and link.parts and not self.strict:
            self.flat_inertia(link)
        return link

    def flat_inertia(self, link):
        """A link whose file gives a principal moment of (nearly) zero, below mass x
        GYRATION_FLOOR_M^2 (a rod or a disc of no thickness: pybullet_data's biped2d writes
        (0, 0.25, 0.25) for a 70 kg box torso), while its own collision geometry has none that
        small, takes the inertia of that geometry, as for an all-zero inertia (PyBullet's
        loadURDF always does by default). A moment raised to the floor instead makes a body
        that turns 1e5 times faster about one axis than about the others, and the joints
        holding it open."""
        floor = link.mass * GYRATION_FLOOR_M**2
        with np.errstate(all="ignore"):
            if not np.isfinite(link.inertia).all() or \
                    float(np.linalg.eigvalsh(link.inertia)[0]) >= floor:
                return
            geometric = self.geometry_inertia(link, note=False)
            if not np.isfinite(geometric).all() or \
                    float(np.linalg.eigvalsh(geometric)[0]) < floor:
                return
        self.notes.add("inertias computed from the collision geometry (a principal moment of "
                       "zero in the file)", f'"{link.name}"')
        link.inertia = geometric

    def geometry_inertia(self, link, note=True):
        """The inertia about the link's centre of mass of its collision geometry at uniform
        density and the link's mass (MuJoCo's inertiafromgeom), for a link whose file gives a
        mass and an all-zero inertia; zero (raised to the floor, said in the warning) when it
        has no collision geometry."""
        from ..physics.shape import SHAPES, Compound, Mesh
        from ..physics.transforms import matrix_quat as quat_of

        def make(d):   # a <collision>'s shape dict: the fields of its physics shape
            if d["type"] == "mesh":
                return Mesh.from_file(d["file"], scale=d["scale"])
            return SHAPES[d["type"]](**{k: v for k, v in d.items() if k != "type"})

        try:
            body = Compound([(make(d), pos, quat_of(rot)) for d, pos, rot in link.parts])
        except ValueError:
            return link.inertia
        R = body.frame_rot
        I = R @ np.diag(link.mass * np.asarray(body.unit_inertia(), dtype=float)) @ R.T
        d = np.asarray(body.frame_pos, dtype=float) - link.com
        if note:
            self.notes.add("inertias computed from the collision geometry (a mass with an "
                           "all-zero inertia in the file)", f'"{link.name}"')
        return I + link.mass * (d @ d * np.eye(3) - np.outer(d, d))

    def valid_inertia(self, I, texts, el, where, link):
        """I, or the nearest valid tensor (principal moments >= 0 and each at most the sum of
        the other two) where the file's is not one: silently when the difference is within
        the rounding of the digits written, else with a note naming the link (an error under
        --strict)."""
        with np.errstate(all="ignore"):   # (overflow: not finite, said where the link's
            moments, axes = np.linalg.eigh(I)   # mass properties are summed)
            fixed = _valid_moments(moments)
            gap = float(np.linalg.norm(fixed - moments))
        if np.array_equal(fixed, moments) or not np.isfinite(gap):
            return I
        # the file's tensor is within the rounding of a valid one if the moments move no
        # more than the rounded entries can move them (Weyl: by the Frobenius norm of the
        # rounding; keys ixx iyy izz ixy ixz iyz, the products count twice)
        d = [_rounding(t) for t in texts]
        bound = math.sqrt(sum(x * x for x in d[:3]) + 2.0 * sum(x * x for x in d[3:]))
        if gap > bound + 1e-12 * float(np.max(np.abs(moments))):
            shown = f"{_round(moments)} -> {_round(fixed)}"
            if self.strict:
                self.fail(el, where, "is not a physical inertia (principal moments "
                          f"{_round(moments)}: each must be >= 0 and at most the sum of the "
                          "other two; --strict)")
            self.notes.add("inertias repaired to the nearest physical one (principal "
                           "moments)", f'"{link}" {shown}')
        return axes @ np.diag(fixed) @ axes.T

    def colour(self, material, where):
        """The rgba of a <material>'s <color>, or None if it has none."""
        color = material.find("color")
        if color is None:
            return None
        rgba = self.numbers(color, "rgba", 4, where)
        if not np.all((rgba >= 0) & (rgba <= 1)):
            self.fail(color, f"{where} <color rgba>", f'each must be in 0..1 (got '
                      f'"{color.get("rgba")}")')
        return [float(x) for x in rgba]

    def shape(self, el, where, missing_ok=False, empty_ok=False,
              missing_note="visual meshes not found (not drawn)"):
        """The shape dict of a geometry element; missing_ok: a mesh file that is not found
        gives None (listed in the warning) instead of an error; empty_ok: so does a shape of
        zero size (a sphere of radius 0: PyBullet loads it, and it has nothing to draw or to
        touch), but for --strict."""
        tag = el.tag
        if tag == "box":
            size = self.numbers(el, "size", 3, where)
            if self.empty(el, "size", size, where, empty_ok):
                return None
            return {"type": "box", "half_extents": [float(s) / 2 for s in size]}
        if tag == "sphere":
            r = self.number(el, "radius", where)
            if self.empty(el, "radius", [r], where, empty_ok):
                return None
            return {"type": "sphere", "radius": r}
        if tag in ("cylinder", "capsule"):
            r, length = self.number(el, "radius", where), self.number(el, "length", where)
            if (self.empty(el, "radius", [r], where, empty_ok)
                    or self.empty(el, "length", [length], where, empty_ok)):
                return None
            return {"type": tag, "radius": r, "half_length": length / 2}
        if tag == "mesh":
            return self.mesh(el, where, missing_ok, missing_note)
        if tag == "plane":   # PyBullet's: z = 0 of its frame, the normal +z (only that one)
            normal = self.numbers(el, "normal", 3, where, (0.0, 0.0, 1.0))
            if np.linalg.norm(normal) == 0.0 or abs(normal[2]) < np.linalg.norm(normal) * (
                    1.0 - 1e-9) or normal[2] < 0.0:
                self.fail(el, f"{where} <plane normal>", "only the normal 0 0 1 is read (got "
                          f"{quoted(el.get('normal') or '')}): turn the plane by <origin rpy>")
            return {"type": "plane"}
        self.fail(el, where, "unknown geometry <" + tag + "> (box, sphere, cylinder, capsule, "
                  "mesh, plane)")

    def empty(self, el, attr, values, where, empty_ok):
        """True for sizes of which one is 0 (and the rest positive) where that may be left
        out (listed in the warning); a negative size, or 0 where it may not, is an error."""
        if empty_ok and not self.strict and all(v >= 0 for v in values) and 0 in values:
            self.notes.add("shapes of zero size (left out)", f"{where} <{el.tag} {attr}>")
            return True
        self.positive(el, attr, values, where)
        return False

    def positive(self, el, attr, values, where):
        if not all(v > 0 for v in values):
            self.fail(el, f"{where} <{el.tag} {attr}>", "must be positive (got "
                      f'"{el.get(attr)}")')

    def mesh(self, el, where, missing_ok=False,
             missing_note="visual meshes not found (not drawn)"):
        uri = el.get("filename")
        if not uri:
            self.fail(el, f"{where} <mesh>", 'needs a "filename"')
        scale = self.numbers(el, "scale", None, where, (1.0,))
        if np.any(scale == 0.0):     # (a negative factor mirrors the mesh: left and right)
            self.fail(el, f"{where} <{el.tag} scale>", "must not be zero (got "
                      f'"{el.get("scale")}")')
        file, tried, package = self.resolve(uri)
        if file is None and missing_ok:
            self.notes.add(missing_note, quoted(uri))
            return None
        if file is None:
            self.fail(el, f"{where} <mesh filename={quoted(uri, 40)}>",
                      f"no such mesh file (looked for {_cut(tried)})")
        roots = self.roots if package is None else self.roots.widened(package)
        refusal = roots.refusal(file, file)
        if refusal is not None:
            self.fail(el, f"{where} <mesh filename={quoted(uri, 40)}>", refusal)
        if len(scale) == 1 or np.all(scale == scale[0]):
            return {"type": "mesh", "file": str(file), "scale": float(scale[0])}
        return {"type": "mesh", "file": str(file), "scale": _floats(scale)}

    def resolve(self, uri):
        """(the mesh file, or None; a description of where it was looked for; the ROS
        package folder it was found in by the package.xml rule, or None)."""
        if uri.startswith("package://"):
            # (package:///NAME/rest, as TALOS's files write it, names the package NAME: the
            # path after package:// is joined to a package folder, as pinocchio does)
            name, _, rest = uri[len("package://"):].lstrip("/").partition("/")
            places = list(self.packages(name))
            for folder, declared in places:
                if _is_file(folder / rest):
                    return folder / rest, "", folder if declared else None
            where = ", ".join(str(p / rest) for p, _ in places) or (
                f'a package "{name}": none next to the URDF or above it, in package_roots '
                "or in $ROS_PACKAGE_PATH")
            return None, where, None
        if uri.startswith("file://"):
            file = Path(uri[len("file://"):])
        else:
            file = Path(uri)
        file = Path(os.path.abspath(self.folder / file.expanduser()))
        return (file, "", None) if _is_file(file) else (None, str(file), None)

    def packages(self, name):
        """The folders that could be package `name`, the way ROS tools find them, each with
        whether it is a package by the ROS rule (a package.xml beside the URDF or above it)."""
        seen = set()
        folder = self.folder.resolve()
        for ancestor in (folder, *folder.parents):
            for candidate in (ancestor, ancestor / name):
                if candidate.name == name and (candidate / "package.xml").is_file():
                    if candidate not in seen:
                        seen.add(candidate)
                        yield candidate, True
        env = [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        for root in (*self.package_roots, *env):
            root = root.expanduser()
            for candidate in (root, root / name, *_package_dirs(root, name)):
                if candidate.name == name and candidate.is_dir() and candidate not in seen:
                    seen.add(candidate)
                    yield candidate, False
        # last, as PyBullet does: a folder NAME next to the file or above it, package.xml or
        # not (robots shipped without their package.xml, PyBullet's own data among them).
        # One that holds the URDF is the robot's own package by its name (iCub's
        # iCub/robots/NAME/model.urdf naming package://iCub/meshes), as a package.xml would
        # declare it (not the file system's root or the home folder); one beside is not
        # declared: its files must lie in the allowed folders already
        too_wide = {Path(os.path.abspath(os.sep)), Path(os.path.expanduser("~")).resolve()}
        for ancestor in (folder, *folder.parents):
            for candidate in (ancestor, ancestor / name):
                if candidate.name == name and candidate.is_dir() and candidate not in seen:
                    seen.add(candidate)
                    yield candidate, candidate == ancestor and ancestor not in too_wide

    def joint(self, el, name, links):
        where = f'joint "{name}"'
        kind = el.get("type")
        if kind not in _JOINT_TYPES:
            self.fail(el, where, f'type must be one of {", ".join(_JOINT_TYPES)} '
                      f"(got {quoted(kind or '')})")
        ends = {}
        for end in ("parent", "child"):
            end_el = el.find(end)
            if end_el is None or not end_el.get("link"):
                self.fail(el, where, f'needs <{end} link="...">')
            link = end_el.get("link")
            if link not in links:
                known = listing(links)
                self.fail(end_el, f"{where} <{end} link={quoted(link, 40)}>",
                          f"no link named {quoted(link, 40) if len(link) <= 40 else 'so'} in "
                          f"the file (links: {known})")
            ends[end] = link
        if ends["parent"] == ends["child"]:
            self.fail(el, where, f'joins link "{ends["parent"]}" to itself')
        pos, rot = self.origin(el, where)
        joint = _Joint(name, el.sourceline, kind, ends["parent"], ends["child"], pos, rot,
                       np.array([1.0, 0.0, 0.0]))
        axis_el = el.find("axis")
        if axis_el is not None and kind in ("revolute", "continuous", "prismatic", "planar"):
            axis = self.numbers(axis_el, "xyz", 3, where, (1.0, 0.0, 0.0))
            norm = float(np.linalg.norm(axis))
            if norm < 1e-9:
                self.fail(axis_el, f"{where} <axis xyz>", "must not be zero")
            joint.axis = axis / norm
        limit = el.find("limit")
        if limit is not None:
            w = f"{where} <limit>"
            joint.effort = self.number(limit, "effort", w, default=0.0, low=0.0)
            joint.velocity = self.number(limit, "velocity", w, default=0.0, low=0.0)
            if kind in ("revolute", "prismatic"):
                joint.lower = self.number(limit, "lower", w, default=0.0)
                joint.upper = self.number(limit, "upper", w, default=0.0)
                if joint.lower > joint.upper:
                    if self.strict:
                        self.fail(limit, w, f"lower must not exceed upper (got lower "
                                  f"{joint.lower:g}, upper {joint.upper:g})")
                    # PyBullet's own files write lower 1, upper -1 for a joint without
                    # limits, and PyBullet reads them so
                    self.notes.add("limits with lower > upper (read as no limits, as "
                                   "PyBullet does)", quoted(name))
                    joint.lower = joint.upper = None
        dynamics = el.find("dynamics")
        if dynamics is not None:
            w = f"{where} <dynamics>"
            joint.friction = self.number(dynamics, "friction", w, default=0.0, low=0.0)
            joint.damping = self.number(dynamics, "damping", w, default=0.0, low=0.0)
        mimic = el.find("mimic")
        if mimic is not None:
            joint.mimic = mimic.get("joint") or "?"
            joint.multiplier = self.number(mimic, "multiplier", where + " <mimic>", default=1.0)
            joint.offset = self.number(mimic, "offset", where + " <mimic>", default=0.0)
        return joint


def _cut(text, room=100):
    """A description of where a file was looked for, cut to about `room` characters."""
    return text if len(text) <= room else text[:room] + f"... ({len(text):,} characters)"


def _is_file(path):
    """Whether `path` is a file; False for a name the system cannot take (too long, a NUL)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _package_dirs(root, name, depth=_SEARCH_DEPTH):
    """Folders named `name` holding a package.xml up to `depth` levels below `root`."""
    if depth <= 0 or not root.is_dir():
        return
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return
    for child in children:
        if child.name == name and (child / "package.xml").is_file():
            yield child
        yield from _package_dirs(child, name, depth - 1)


# --- the scene ------------------------------------------------------------------------------


class _Notes:
    """What is not simulated as written, gathered into one warning."""

    def __init__(self):
        self.items: dict[str, list[str]] = {}

    def add(self, what, item):
        self.items.setdefault(what, []).append(item)

    def emit(self, source):
        if self.items:
            lines = [f"{what}: {', '.join(dict.fromkeys(items))}"   # (each named once)
                     for what, items in self.items.items()]
            warnings.warn(f"{source}: not simulated as written: " + "; ".join(lines),
                          UrdfWarning, stacklevel=3)


class _Builder:
    def __init__(self, source, links, joints, notes, *, fixed_base, motors, merge_fixed,
                 self_collision):
        self.source, self.links, self.joints, self.notes = source, links, joints, notes
        self.fixed_base, self.motors = fixed_base, motors
        self.merge_fixed, self.self_collision = merge_fixed, self_collision

    def fail(self, line, where, message):
        raise SceneError(f"{self.source}: line {line}: {where}: {message}")

    def tree(self):
        """(the root link, joints in breadth-first order from it); a link with two parents,
        a cycle or more than one root is a SceneError."""
        parent_joint = {}
        for joint in self.joints.values():
            if joint.child in parent_joint:
                other = parent_joint[joint.child]
                self.fail(joint.line, f'joint "{joint.name}"', f'link "{joint.child}" already '
                          f'has a parent (joint "{other.name}", line {other.line}); a URDF is '
                          "a tree")
            parent_joint[joint.child] = joint
        for start in self.links:
            seen, link = [], start
            while link in parent_joint:
                if link in seen:
                    cycle = seen[seen.index(link):]
                    names = " -> ".join(f'"{parent_joint[x].name}"' for x in cycle)
                    j = parent_joint[link]
                    self.fail(j.line, f'joint "{j.name}"', f"the joints form a cycle ({names}); "
                              "a URDF is a tree")
                seen.append(link)
                link = parent_joint[link].parent
        roots = [name for name in self.links if name not in parent_joint]
        if len(roots) > 1:
            first, second = roots[0], roots[1]
            others = ", ".join(f'"{r}"' for r in roots[1:])
            self.fail(self.links[second].line, f'link "{second}"',
                      f'no joint has it as its child, and "{first}" (line '
                      f"{self.links[first].line}) is the root already (links without a "
                      f"parent: {others}); a URDF has one root link")
        children = {}
        for joint in self.joints.values():
            children.setdefault(joint.parent, []).append(joint)
        order, queue = [], [roots[0]]
        while queue:
            link = queue.pop(0)
            for joint in children.get(link, []):
                order.append(joint)
                queue.append(joint.child)
        return roots[0], order, children

    def mimics(self):
        """A <mimic> naming its own joint, or mimics that lead round in a cycle, is a
        SceneError naming the joints; a chain ending at a joint that mimics none is kept (its
        relations compose, physics/coupling.py)."""
        for joint in self.joints.values():
            if joint.mimic == joint.name:
                self.fail(joint.line, f'joint "{joint.name}"', "<mimic> names the joint itself; "
                          "a joint cannot follow itself")
            chain = [joint]
            while chain[-1].mimic in self.joints and self.joints[chain[-1].mimic] not in chain:
                chain.append(self.joints[chain[-1].mimic])
            lead = self.joints.get(chain[-1].mimic)
            if lead is chain[0]:
                names = " -> ".join(f'"{j.name}"' for j in [*chain, chain[0]])
                self.fail(joint.line, f'joint "{joint.name}"', f"the <mimic> joints form a cycle "
                          f"({names}); a chain of mimics must end at a joint that mimics none")

    def build(self):
        root, order, children = self.tree()
        self.mimics()
        self.children = children
        # link poses at the zero configuration
        pose = {root: (np.zeros(3), np.eye(3))}
        for joint in order:
            p, R = pose[joint.parent]
            pose[joint.child] = (p + R @ joint.pos, R @ joint.rot)
        self.pose = pose
        if self.fixed_base is None:
            self.fixed_base = self.stands_on_root(root, order)
        owner = self.owners(root, order)
        groups = {}
        for link in self.links:
            if owner[link] != WORLD:
                groups.setdefault(owner[link], []).append(link)
        lightest = min((lk.mass for lk in self.links.values() if lk.mass > 0), default=1.0)
        self.massless = []
        self.world_parts = []       # (shape, centre, axes) of every part at the initial pose
        bodies, kinds = [], {}
        for name, members in groups.items():
            body = self.body(name, members, root, lightest)
            if body is None:          # a massless, shapeless link welded to the world
                for link in members:
                    owner[link] = WORLD
                continue
            kinds[name] = body.get("kind", "dynamic")
            bodies.append(body)
        if self.massless:
            self.notes.add(f"massless links given {MASSLESS_SHARE * lightest:g} kg",
                           ", ".join(self.massless))
        joints = []
        if self.fixed_base and owner[root] != WORLD and kinds.get(owner[root]) == "dynamic":
            names = set(self.joints)
            name = f"{owner[root]}_to_world"
            while name in names:
                name += "_"
            joints.append({"name": name, "type": "fixed", "body_a": WORLD,
                           "body_b": owner[root],
                           "anchor": [float(x) for x in self.pose[owner[root]][0]]})
        for joint in order:
            a, b = owner[joint.parent], owner[joint.child]
            if a == b or (kinds.get(a, "static") != "dynamic"
                          and kinds.get(b, "static") != "dynamic"):
                continue      # merged, or welding the world to a static body
            spec = self.joint(joint, a, b)
            if spec is not None:
                joints.append(spec)
        moving = {j["name"] for j in joints if j["type"] in ("revolute", "prismatic")}
        for spec in joints:
            if "mimic" in spec and spec["mimic"]["joint"] not in moving:
                self.notes.add("mimic joints whose leader is not a moving joint (driven on "
                               "their own)", f'"{spec["name"]}" (mimics '
                               f'"{spec["mimic"]["joint"]}")')
                del spec["mimic"]
        return bodies, joints

    def stands_on_root(self, root, order):
        """Whether the robot stands on its root link (and the links welded to it) at the
        initial pose (read_urdf's fixed_base None; see the module). It does unless a part
        of a link that moves against the root comes within BASE_CONTACT_M of the lowest
        point of the collision geometry; where the root (with the links welded to it) has
        no geometry, those low parts must also lie on two branches or more (legs, wheels),
        else the robot hangs from a mounting frame (a pendulum, an arm on a bare base).
        True without collision geometry."""
        rigid, branch = {root}, {}
        for joint in order:    # (breadth first: a parent is placed before its children)
            locked = joint.lower is not None and joint.lower == joint.upper
            if joint.parent in rigid and (joint.type == "fixed" or locked):
                rigid.add(joint.child)
            else:   # the branch off the root's group that the link is on
                branch[joint.child] = branch.get(joint.parent, joint.child)
        lowest = {}
        for name, link in self.links.items():
            p, R = self.pose[name]
            zs = [_lowest_z(shape, p + R @ pos, R @ rot) for shape, pos, rot in link.parts]
            lowest[name] = min(zs, default=math.inf)
        bottom = min(lowest.values(), default=math.inf)
        if not math.isfinite(bottom):
            return True   # nothing to stand on
        low = {branch[name] for name, z in lowest.items()
               if name not in rigid and z <= bottom + BASE_CONTACT_M}
        bare = not any(math.isfinite(lowest[name]) for name in rigid)
        return len(low) < (2 if bare else 1)

    def owners(self, root, order):
        """The body each link belongs to: itself, the body it is welded into, or WORLD."""
        owner = {root: WORLD if root == WORLD else root}
        if root == WORLD:
            dropped = self.links[root]
            if dropped.mass > 0 or dropped.parts:
                self.notes.add('the root link "world" is the fixed world (its inertial and '
                               'collision are ignored)', root)
        self.welded_to_world = set()
        for joint in order:
            child = self.links[joint.child]
            leaf = not self.children.get(joint.child)
            locked = joint.lower is not None and joint.lower == joint.upper
            if locked:
                self.notes.add("joints locked by lower = upper (welded at q = 0)",
                               f'"{joint.name}"')
            welded = joint.type == "fixed" or locked
            parent_owner = owner[joint.parent]
            massless_leaf = child.mass == 0 and leaf and not (parent_owner == WORLD
                                                              and child.parts)
            if welded and (massless_leaf or (self.merge_fixed and parent_owner != WORLD)):
                owner[joint.child] = parent_owner
            else:
                owner[joint.child] = joint.child
                if welded and parent_owner == WORLD:
                    self.welded_to_world.add(joint.child)
        return owner

    def body(self, name, members, root, lightest):
        """The scene body of a link and the links welded into it (all in `name`'s frame)."""
        p0, R0 = self.pose[name]
        mass, first, second, parts, visuals = 0.0, np.zeros(3), np.zeros((3, 3)), [], []
        for link_name in members:
            link = self.links[link_name]
            p, R = self.pose[link_name]
            Rl = R0.T @ R                       # this link's axes in the body link's frame
            pl = R0.T @ (p - p0)
            for shape, pos, rot in link.parts:
                parts.append((shape, pl + Rl @ pos, Rl @ rot))
                self.world_parts.append((shape, p + R @ pos, R @ rot))
            for shape, pos, rot, rgba in link.visuals:
                visuals.append((shape, pl + Rl @ pos, Rl @ rot, rgba))
            if link.mass > 0:
                c = pl + Rl @ link.com
                mass += link.mass
                with np.errstate(all="ignore"):   # (overflow: not finite, said below)
                    first += link.mass * c
                    # inertia about the body link's origin: I_c + m (|c|^2 E - c c^T)
                    second += Rl @ link.inertia @ Rl.T + link.mass * (c @ c * np.eye(3)
                                                                       - np.outer(c, c))
        shape = None
        planes = [part for part in parts if part[0]["type"] == "plane"]
        if planes and (len(parts) > 1 or mass > 0.0 or not (
                (name == root and self.fixed_base) or name in self.welded_to_world)):
            self.fail(self.links[name].line, f"link {quoted(name)}", "a <plane> is fixed "
                      "ground: only a massless link fixed to the world may have one, alone")
        if planes:   # (PyBullet's plane_implicit.urdf) a static plane at the part's pose
            [(_, pos, rot)] = planes
            body = {"name": name, "kind": "static", "shape": {"type": "plane"},
                    "pos": _floats(p0 + R0 @ pos), "quat": _floats(_matrix_quat(R0 @ rot))}
            if visuals:
                body["visuals"] = _visuals(visuals, pos, rot)
            return body
        if parts:
            shape = {"type": "compound", "parts": [
                {"shape": s, "pos": _floats(pos), "quat": _floats(_matrix_quat(rot))}
                for s, pos, rot in parts]}
        body = {"name": name}
        if visuals:
            body["visuals"] = _visuals(visuals, np.zeros(3), np.eye(3))
        if not self.self_collision:
            body.update(group=ROBOT_GROUP, mask=ALL_GROUPS & ~ROBOT_GROUP)
        if mass == 0.0:
            if (name == root and self.fixed_base) or name in self.welded_to_world:
                if shape is None:
                    if visuals:
                        self.notes.add("links welded to the fixed world with visuals but no "
                                       "collision geometry (not drawn)", f'"{name}"')
                    return None
                return {**body, "kind": "static", "shape": shape, "pos": _floats(p0),
                        "quat": _floats(_matrix_quat(R0))}
            self.massless.append(f'"{name}"')
            mass = MASSLESS_SHARE * lightest
            if shape is not None:               # uniform density over its geometry
                return {**body, "shape": shape, "mass": mass, "pos": _floats(p0),
                        "quat": _floats(_matrix_quat(R0))}
            return {**body, "mass": mass, "inertia": [0.4 * mass * 0.05**2] * 3,
                    "pos": _floats(p0), "quat": _floats(_matrix_quat(R0))}  # link frame
        with np.errstate(all="ignore"):   # (overflow: not finite, said below)
            com = first / mass
            tensor = second - mass * (com @ com * np.eye(3) - np.outer(com, com))
        from ..physics.shape import principal_axes

        try:
            if not (np.isfinite(tensor).all() and np.isfinite(com).all()):
                raise ValueError("not finite")
            Rp, moments = principal_axes(tensor)
        except ValueError:
            self.fail(self.links[name].line, f"link {quoted(name)}", "its mass properties "
                      "overflow (a position, mass or inertia too large, its merged links' "
                      "included)")
        top = max(float(np.max(moments)), 0.0)
        floor = max(MOMENT_FLOOR * top, mass * GYRATION_FLOOR_M**2) if top > 0 else \
            0.4 * mass * 0.01**2
        if np.any(moments < floor):
            self.notes.add("principal moments raised to a floor (zero or tiny in the file)",
                           f'"{name}"')
            moments = np.maximum(moments, floor)
        body.update(mass=mass, inertia=_floats(moments))
        if shape is not None:
            shape["frame"] = {"pos": _floats(com), "quat": _floats(_matrix_quat(Rp))}
            body.update(shape=shape, pos=_floats(p0), quat=_floats(_matrix_quat(R0)))
        else:
            body.update(pos=_floats(p0 + R0 @ com), quat=_floats(_matrix_quat(R0 @ Rp)))
            if visuals:      # posed in the body frame (com, Rp), not the link's
                body["visuals"] = _visuals(visuals, com, Rp)
        return body

    def joint(self, joint, a, b):
        """The scene joint of a URDF joint between bodies a (parent) and b (child), or None."""
        p, R = self.pose[joint.child]
        spec = {"name": joint.name, "body_a": a, "body_b": b, "anchor": _floats(p)}
        if joint.type in ("floating", "planar"):
            self.notes.add(f"{joint.type} joints (the child is left free)", f'"{joint.name}"')
            return None
        locked = joint.lower is not None and joint.lower == joint.upper
        if joint.type == "fixed" or locked:
            return {**spec, "type": "fixed"}
        if joint.type == "spherical":
            if joint.friction > 0:
                spec["friction"] = joint.friction
            if joint.damping > 0:
                spec["damping"] = joint.damping
            return {**spec, "type": "spherical"}
        spec["type"] = "prismatic" if joint.type == "prismatic" else "revolute"
        spec["axis"] = _floats(R @ joint.axis)
        if joint.lower is not None:
            spec["limits"] = [joint.lower, joint.upper]
        if joint.friction > 0:
            spec["friction"] = joint.friction
        if joint.damping > 0:
            spec["damping"] = joint.damping
        if joint.mimic is not None:   # (kept if its leader is a moving joint: build)
            spec["mimic"] = {"joint": joint.mimic, "multiplier": joint.multiplier,
                             "offset": joint.offset}
        elif self.motors:
            if joint.effort > 0 and joint.velocity > 0:
                target = 0.0
                if joint.lower is not None:
                    target = min(max(0.0, joint.lower), joint.upper)
                spec["motor"] = motor_spec(joint.effort, joint.velocity, target)
            else:
                self.notes.add("no motor (effort or velocity limit missing or 0)",
                               f'"{joint.name}"')
        return spec


def _decompose_meshes(body):
    """Mark the collision meshes of a body dict (its compound's parts) to be decomposed."""
    shape = body.get("shape") or {}
    for part in shape.get("parts", ()) if shape.get("type") == "compound" else ():
        if part["shape"].get("type") == "mesh":
            part["shape"] = {**part["shape"], "decompose": True}


def _visuals(visuals, c, Rp):
    """Scene visual entries of (shape, pos, R, rgba) link-frame visuals, posed in the frame
    (c, Rp) of the link frame."""
    out = []
    for shape, pos, rot, rgba in visuals:
        entry = {"shape": shape, "pos": _floats(Rp.T @ (pos - c)),
                 "quat": _floats(_matrix_quat(Rp.T @ rot))}
        if rgba is not None:
            entry["rgba"] = rgba
        out.append(entry)
    return out


@functools.lru_cache(maxsize=32)
def _mesh_vertices(file, _mtime_ns, _size, scale):
    """A mesh file's vertices, scaled (a robot's links share meshes, and its base and ground
    read them again: once per version of the file)."""
    import trimesh

    from ..physics.shape import readable_mesh_file

    readable_mesh_file(file)
    mesh = trimesh.load(file, force="mesh", process=False)
    vertices = np.asarray(mesh.vertices, dtype=float) * np.asarray(scale)
    vertices.flags.writeable = False
    return vertices


def _lift(bodies, joints, dz):
    """Move a read robot up by dz: every body's position and every joint's anchor."""
    for item in (*bodies, *joints):
        for key in ("pos", "anchor"):
            if key in item:
                item[key][2] += dz


def _lowest_z(shape, c, A):
    """The lowest world z of a part (shape dict) centred at c with axes A (3, 3)."""
    kind = shape["type"]
    if kind == "box":
        return float(c[2] - np.abs(A[2]) @ np.array(shape["half_extents"]))
    if kind == "sphere":
        return float(c[2] - shape["radius"])
    if kind in ("cylinder", "capsule"):
        uz = abs(float(A[2, 2]))
        across = shape["radius"] * (math.sqrt(max(1.0 - uz * uz, 0.0))
                                    if kind == "cylinder" else 1.0)
        return float(c[2] - uz * shape["half_length"] - across)
    if "vertices" in shape:
        vertices = np.asarray(shape["vertices"])
    else:
        scale = shape.get("scale", 1.0)   # one number, or one per axis
        scale = tuple(scale) if isinstance(scale, (list, tuple)) else (float(scale),) * 3
        try:
            stat = os.stat(shape["file"])
            vertices = _mesh_vertices(shape["file"], stat.st_mtime_ns, stat.st_size, scale)
        except Exception:  # noqa: BLE001 -- build_world reports an unreadable mesh
            return math.inf
    if len(vertices) == 0:
        return math.inf
    return float(np.min(c[2] + vertices @ A[2]))


def motor_spec(effort, velocity, target=0.0):
    """A DC motor (MotorSpec fields) of stall torque `effort` and no-load speed `velocity`
    at SUPPLY_V, under a position PD holding `target`; see the module for the sizing."""
    torque_constant = SUPPLY_V / MOTOR_SPEED
    gear_ratio = MOTOR_SPEED / velocity
    resistance = gear_ratio * torque_constant * SUPPLY_V / effort
    return {"resistance": resistance, "torque_constant": torque_constant,
            "gear_ratio": gear_ratio, "voltage_limit": SUPPLY_V, "torque_limit": effort,
            "controller": {"mode": "position", "kp": SUPPLY_V / (velocity * LOOP_TAU),
                           "kd": 0.0, "target": target}}


def _matrix_quat(R):
    from ..physics.transforms import matrix_quat

    return matrix_quat(R)


def _floats(values):
    return [float(v) for v in values]


def _valid_moments(moments):
    """The nearest principal moments (sorted as given by eigh) that a body can have: none
    negative, the largest at most the sum of the other two (moved along the normal of that
    face of the cone, which keeps the order)."""
    m = np.maximum(np.asarray(moments, dtype=float), 0.0)
    excess = m[2] - m[0] - m[1]
    if excess > 0.0:
        t = excess / 3.0
        m = np.array([m[0] + t, m[1] + t, m[2] - t])
    return m


def _rounding(text):
    """The rounding error of a number written as `text`: half a unit in the last digit
    written ("0.00000009": 5e-9; "1.25e-3": 5e-6). A zero ("0", "0.0") is taken as exact:
    files write the products of inertia that vanish so."""
    mantissa, _, exponent = (text or "0").strip().lower().partition("e")
    if not mantissa.strip("+-0."):
        return 0.0
    digits = len(mantissa.partition(".")[2])
    try:
        shift = int(exponent) if exponent else 0
    except ValueError:
        shift = 0
    return 0.5 * 10.0 ** (shift - digits)


def _round(values):
    return "(" + ", ".join(f"{v:.3g}" for v in values) + ")"

