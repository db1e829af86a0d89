"""The scene renderer: instanced, lit primitive shapes, joint anchors and a ground grid.

`Renderer.draw` takes plain arrays (the fields of an app snapshot): body positions,
quaternions and shapes, and optionally joint anchor points with their stick/slip flags.
Each mesh (box, sphere, cylinder) is drawn with one instanced call per frame; so is each
convex hull, from a vertex buffer made the first time its Hull object is drawn (flat-shaded,
face normals) and released once a frame no longer draws it (a scene reload).

A body with visuals is drawn one of three ways (SHAPE_VIEWS, what the app's S key cycles):
by its visuals, by its collision shape instead, or by its visuals with its collision shape
laid over them as a translucent overlay in one colour (OVERLAY_COLOUR).
"""
import math

import numpy as np

from . import meshes
from .instances import (
    MESHES,
    DrawTable,
    hull_mesh,
    planes_seen_from_above,
    point_instances,
    scene_bounds,
)
from .shaders import (
    FAR_FRAGMENT,
    FAR_VERTEX,
    LINE_FRAGMENT,
    LINE_VERTEX,
    SOLID_FRAGMENT,
    SOLID_VERTEX,
)

BACKGROUND = (0.13, 0.14, 0.17)
# Towards the light: from above, in front and to the left of the default view.
LIGHT_DIR = np.array([0.35, -0.55, 0.76]) / np.linalg.norm([0.35, -0.55, 0.76])
SHADOW_ALPHA = 0.38                # opacity of the bodies' shadows on the ground z = 0
AXIS_COLOUR = (0.95, 0.95, 0.3)    # joint axes
AXIS_LENGTH = 4.0                  # an axis line is this many anchor radii long each way
COM_COLOUR = (0.9, 0.9, 0.95)      # centre-of-mass markers
CONTACT_STICK = (0.3, 0.9, 0.4)    # contact points whose friction holds
CONTACT_SLIDE = (1.0, 0.3, 0.3)    # contact points that slide
FORCE_COLOUR = (0.95, 0.6, 0.95)   # contact force lines
STICK_COLOUR = (0.2, 0.45, 0.95)   # joint anchors whose friction holds
SLIP_COLOUR = (1.0, 0.55, 0.1)     # joint anchors that slide
ANCHOR_SIZE = 0.012                # anchor dot radius as a fraction of half the view height
ANCHOR_MAX = 2.5                   # ... but at most this many times the thinnest body's half-width
GRID_MARGIN = 1.25                 # the grid reaches this far beyond the framed bodies
# How bodies with visuals are drawn (draw's collision_shapes): by their visuals, by their
# collision shapes instead, or by their visuals with the collision shapes over them.
VISUALS, COLLISION, OVERLAY = "visuals", "collision", "overlay"
SHAPE_VIEWS = (VISUALS, COLLISION, OVERLAY)   # in the order the S key cycles through them
OVERLAY_COLOUR = (1.0, 0.2, 0.9)   # the collision overlay: saturated magenta, unlike the
OVERLAY_ALPHA = 0.4                # bodies' pastel palette; this opaque
INSTANCE_LAYOUT = "4f 4f 4f 4f 3f/i"  # a mat4 arrives as four column vec4s
INSTANCE_ATTRIBUTES = ("in_model0", "in_model1", "in_model2", "in_model3", "in_colour")


def shape_view(collision_shapes):
    """The view (one of SHAPE_VIEWS) that draw's `collision_shapes` asks for: a name, or
    False / True (VISUALS / COLLISION, as before there was an overlay)."""
    if collision_shapes is False or collision_shapes is True:
        return COLLISION if collision_shapes else VISUALS
    if collision_shapes not in SHAPE_VIEWS:
        raise ValueError(f"collision_shapes must be one of {SHAPE_VIEWS} or a bool, "
                         f"not {collision_shapes!r}")
    return collision_shapes


def _overlay_table(body_shapes, body_visuals):
    """The DrawTable of the collision shapes of the bodies that have visuals (a body without
    them is already drawn by its collision shape: overlaid on itself it would z-fight)."""
    visuals = list(body_visuals) + [()] * (len(body_shapes) - len(body_visuals))
    return DrawTable([shape if visual else None for shape, visual in zip(body_shapes, visuals)])


class _InstancedMesh:
    """One mesh and a growable per-instance buffer drawn with it in a single call."""

    def __init__(self, ctx, program, vertices):
        self.ctx, self.program = ctx, program
        self.vertices = ctx.buffer(vertices.tobytes())
        self.capacity = 0
        self.instances = self.vao = None

    def draw(self, rows):
        if len(rows) == 0:
            return
        if len(rows) > self.capacity:
            self._grow(len(rows))
        self.instances.write(rows.tobytes())
        self.vao.render(instances=len(rows))

    def _grow(self, count):
        self.release_instances()
        self.capacity = max(count, 2 * self.capacity, 16)
        self.instances = self.ctx.buffer(reserve=self.capacity * 19 * 4, dynamic=True)
        self.vao = self.ctx.vertex_array(self.program, [
            (self.vertices, "3f 3f", "in_position", "in_normal"),
            (self.instances, INSTANCE_LAYOUT, *INSTANCE_ATTRIBUTES),
        ])

    def release_instances(self):
        for obj in (self.vao, self.instances):
            if obj is not None:
                obj.release()

    def release(self):
        self.release_instances()
        self.vertices.release()


class Renderer:
    """Draws into whichever framebuffer is in use; owns its GL programs and buffers."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.solid = ctx.program(vertex_shader=SOLID_VERTEX, fragment_shader=SOLID_FRAGMENT)
        self.line = ctx.program(vertex_shader=LINE_VERTEX, fragment_shader=LINE_FRAGMENT)
        self.far = ctx.program(vertex_shader=FAR_VERTEX, fragment_shader=FAR_FRAGMENT)
        self.far_vbo = ctx.buffer(np.array([-1, -1, 1, -1, -1, 1, 1, 1], "f4").tobytes())
        self.far_vao = ctx.vertex_array(self.far, [(self.far_vbo, "2f", "in_position")])
        self.meshes = {name: _InstancedMesh(ctx, self.solid, getattr(meshes, name)())
                       for name in MESHES}
        self.meshes["plane"] = _InstancedMesh(ctx, self.solid, meshes.box())
        self.hull_meshes = {}    # Hull object -> its _InstancedMesh
        self.anchors = _InstancedMesh(ctx, self.solid, meshes.sphere(rings=8, segments=16))
        self.solid["u_flatten"].write(np.eye(4, dtype="f4").tobytes())
        self.solid["u_shadow"].value = 0.0
        self.solid["u_tint"].value = (0.0, 0.0, 0.0, 0.0)
        self.axes_vbo = self.axes_vao = None
        self.axes_capacity = 0
        self.grid_vbo = self.grid_vao = None
        self.grid_extent = None
        self._table = self._table_shapes = None  # the DrawTable of the shapes drawn last
        self._collision_table = None             # ... and of their collision shapes alone
        self._overlay_table = None               # ... of those of the bodies with visuals
        self.fit_grid((np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 1.0])))

    def fit_grid(self, bounds):
        """Size the ground grid (centred on the origin, where its axes cross) to cover bounds;
        bounds that are not finite keep the grid as it is."""
        lo, hi = (np.asarray(b, dtype=float) for b in bounds)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return
        half = GRID_MARGIN * max(float(np.max(np.abs(lo[:2]))), float(np.max(np.abs(hi[:2]))),
                                 0.5)
        spacing = meshes.nice_spacing(half)
        if self.grid_extent == (half, spacing):
            return
        if self.grid_vao is not None:
            self.grid_vao.release()
            self.grid_vbo.release()
        self.grid_extent = (half, spacing)
        self.grid_vbo = self.ctx.buffer(meshes.grid(half, spacing).tobytes())
        self.grid_vao = self.ctx.vertex_array(
            self.line, [(self.grid_vbo, "3f 3f", "in_position", "in_colour")])

    @staticmethod
    def bounds(body_pos, body_quat, body_shapes, joint_anchors=()):
        """What `OrbitCamera.frame` and `fit_grid` should cover for these bodies."""
        return scene_bounds(body_pos, body_quat, body_shapes, joint_anchors)

    def draw(self, camera, aspect, body_pos, body_quat, body_shapes, joint_anchors=None,
             joint_sliding=None, joint_axes=None, centres=None, shadows=True,
             contact_points=None, contact_sliding=None, contact_forces=None, force_scale=0.0,
             body_visuals=None, collision_shapes=False, highlight=None):
        """Clear and draw one picture.

        joint_anchors (njoint, 3) are drawn as dots, orange where joint_sliding (njoint,) is
        true and blue where the joint sticks, with their joint_axes (njoint, 3) as short lines
        through them; centres (k, 3) (centres of mass) as small white dots; both on top of the
        bodies.  With `shadows`, every body casts a flat shadow on the ground z = 0 along the
        light (a projection of its mesh, blended over the grid).  contact_points (k, 3) are
        drawn as dots (green: friction holds, red: sliding per contact_sliding) and, when
        force_scale > 0, contact_forces (k, 3) as lines of force_scale metres per newton.
        body_visuals (World.body_visuals): per body, shapes drawn instead of its collision
        shape; with body_shapes, worked out once per world (DrawTable). collision_shapes,
        one of SHAPE_VIEWS (False and True are VISUALS and COLLISION): VISUALS draws the
        visuals; COLLISION every body by its collision shape (in its body colour) and no
        visuals: what the contacts see, as MuJoCo's collision group shows it; OVERLAY the
        visuals, then the collision shapes of the bodies that have visuals over them (see
        `_draw_overlay`). A body without visuals is drawn once, by its collision shape, in
        every view. `highlight`: a body's index (the selected one), drawn brightened.
        """
        view = shape_view(collision_shapes)
        ctx = self.ctx
        ctx.clear(*BACKGROUND, 1.0, depth=1.0)
        ctx.enable(ctx.DEPTH_TEST)
        view_projection = camera.view_projection(aspect).T.astype("f4").tobytes()
        self.line["u_view_projection"].write(view_projection)
        self.grid_vao.render(ctx.LINES)

        self.solid["u_view_projection"].write(view_projection)
        self.solid["u_light_dir"].value = tuple(LIGHT_DIR)
        self.solid["u_eye"].value = tuple(camera.eye)
        if self._table_shapes is not body_shapes:  # a new world: what it draws, once
            self._table = DrawTable(body_shapes, body_visuals)
            self._collision_table = self._overlay_table = None
            self._table_shapes = body_shapes
        table, overlay = self._table, None
        has_visuals = body_visuals is not None and any(body_visuals)
        if view == COLLISION and has_visuals:
            if self._collision_table is None:        # made at the first frame that shows it
                self._collision_table = DrawTable(body_shapes)
            table = self._collision_table
        elif view == OVERLAY and has_visuals:
            if self._overlay_table is None:
                self._overlay_table = _overlay_table(body_shapes, body_visuals)
            overlay = self._overlay_table.instances(body_pos, body_quat)
        instances = table.instances(body_pos, body_quat, highlight)
        self._sync_hull_meshes(instances, overlay or {})
        self.meshes["plane"].draw(planes_seen_from_above(instances.pop("plane"), camera.eye))
        if shadows:
            self._draw_shadows(instances)
        for name, rows in instances.items():
            self._mesh(name).draw(rows)
        if overlay:
            self._draw_overlay(overlay)
        # The same size on screen however far the camera is, yet not hiding thin links.
        radius = ANCHOR_SIZE * camera.distance * math.tan(camera.fov_y / 2.0)
        if table.thinnest is not None:
            radius = min(radius, ANCHOR_MAX * table.thinnest)
        contacts = contact_points is not None and len(contact_points)
        overlays = (joint_anchors is not None and len(joint_anchors)) or (
            centres is not None and len(centres)) or contacts
        if not overlays:
            return
        ctx.disable(ctx.DEPTH_TEST)  # overlays show through the bodies, as in MuJoCo
        if joint_anchors is not None and len(joint_anchors):
            sliding = np.zeros(len(joint_anchors), bool)
            if joint_sliding is not None and len(joint_sliding) == len(joint_anchors):
                sliding = np.asarray(joint_sliding) > 0.5   # (flags of other joints: none)
            if joint_axes is not None:
                self._draw_axes(joint_anchors, joint_axes, AXIS_LENGTH * radius)
            colours = np.where(sliding[:, None], SLIP_COLOUR, STICK_COLOUR)
            self.anchors.draw(point_instances(joint_anchors, radius, colours))
        if centres is not None and len(centres):
            self.anchors.draw(point_instances(centres, 0.6 * radius, COM_COLOUR))
        if contacts:
            points = np.asarray(contact_points, dtype=float).reshape(-1, 3)
            sliding = (np.zeros(len(points), bool) if contact_sliding is None
                       else np.asarray(contact_sliding, bool))
            if force_scale > 0.0 and contact_forces is not None:
                forces = np.asarray(contact_forces, dtype=float).reshape(-1, 3)
                self._draw_lines(points, points + force_scale * forces, FORCE_COLOUR)
            colours = np.where(sliding[:, None], CONTACT_SLIDE, CONTACT_STICK)
            self.anchors.draw(point_instances(points, 0.5 * radius, colours))
        ctx.enable(ctx.DEPTH_TEST)

    def _draw_shadows(self, instances):
        """Planar projected shadows (Blinn 1988): every vertex x goes to the ground along the
        light, x - (x_z / l_z) l, lifted a hair above the grid; drawn translucent, without
        writing depth, so the bodies drawn next cover them."""
        ctx = self.ctx
        lx, ly, lz = LIGHT_DIR
        flatten = np.array([[1.0, 0.0, -lx / lz, 0.0], [0.0, 1.0, -ly / lz, 0.0],
                            [0.0, 0.0, 0.0, 1e-3], [0.0, 0.0, 0.0, 1.0]])
        self.solid["u_flatten"].write(flatten.T.astype("f4").tobytes())
        self.solid["u_shadow"].value = SHADOW_ALPHA
        ctx.enable(ctx.BLEND)
        ctx.blend_func = ctx.SRC_ALPHA, ctx.ONE_MINUS_SRC_ALPHA
        target = ctx.fbo   # (the depth mask is the framebuffer's: moderngl's Context has none)
        target.depth_mask = False
        try:
            for name, rows in instances.items():
                self._mesh(name).draw(rows)
        finally:
            target.depth_mask = True
            ctx.disable(ctx.BLEND)
            self.solid["u_flatten"].write(np.eye(4, dtype="f4").tobytes())
            self.solid["u_shadow"].value = 0.0

    def _draw_overlay(self, instances):
        """The collision overlay, one translucent layer over the picture: the collision shapes'
        nearest surface in OVERLAY_COLOUR at OVERLAY_ALPHA, seen through the visuals (a
        collision shape inside or behind its visual mesh shows), each pixel tinted once.

        The depth buffer is reset to the far plane (a full-window quad; colour kept by the
        blend ZERO, ONE), the shapes' depth drawn alone (same blend), then their colour where
        a fragment is that nearest depth (<=). Without the reset the visuals would hide the
        collision shapes inside them; without the depth pass, overlapping pieces (a capsule's
        cylinder and end spheres, a shape's back faces) would tint twice."""
        ctx = self.ctx
        # a plane is the ground, drawn as it is: a tinted 100 m slab would cover everything
        pieces = [(key, rows) for key, rows in instances.items() if key != "plane"]
        ctx.enable(ctx.BLEND)
        try:
            ctx.blend_func = ctx.ZERO, ctx.ONE
            ctx.depth_func = "1"
            self.far_vao.render(ctx.TRIANGLE_STRIP)
            ctx.depth_func = "<"
            for key, rows in pieces:
                self._mesh(key).draw(rows)
            ctx.depth_func = "<="
            ctx.blend_func = ctx.SRC_ALPHA, ctx.ONE_MINUS_SRC_ALPHA
            self.solid["u_tint"].value = (*OVERLAY_COLOUR, OVERLAY_ALPHA)
            for key, rows in pieces:
                self._mesh(key).draw(rows)
        finally:
            ctx.depth_func = "<"
            ctx.disable(ctx.BLEND)
            self.solid["u_tint"].value = (0.0, 0.0, 0.0, 0.0)

    def _mesh(self, key):
        """The instanced mesh of a mesh name or of a Hull object."""
        return self.meshes[key] if isinstance(key, str) else self.hull_meshes[key]

    def _sync_hull_meshes(self, *instances):
        """Make a vertex buffer for each Hull drawn now (a key of any of the `instances`
        dicts); release those no longer drawn."""
        drawn = {key for rows in instances for key in rows if not isinstance(key, str)}
        for hull in drawn:
            if hull not in self.hull_meshes:
                self.hull_meshes[hull] = _InstancedMesh(self.ctx, self.solid, hull_mesh(hull))
        for hull in [h for h in self.hull_meshes if h not in drawn]:
            self.hull_meshes.pop(hull).release()

    def _draw_axes(self, anchors, axes, half_length):
        anchors = np.asarray(anchors, dtype=float).reshape(-1, 3)
        axes = np.asarray(axes, dtype=float).reshape(-1, 3)
        self._draw_lines(anchors - half_length * axes, anchors + half_length * axes,
                         AXIS_COLOUR)

    def _draw_lines(self, starts, ends, colour):
        """Segments starts[i] -> ends[i] (k, 3) in one colour, with the line program."""
        verts = np.empty((2 * len(starts), 6), dtype="f4")
        verts[0::2, :3] = starts
        verts[1::2, :3] = ends
        verts[:, 3:] = colour
        if len(verts) > self.axes_capacity:
            for obj in (self.axes_vao, self.axes_vbo):
                if obj is not None:
                    obj.release()
            self.axes_capacity = max(len(verts), 2 * self.axes_capacity, 16)
            self.axes_vbo = self.ctx.buffer(reserve=self.axes_capacity * 24, dynamic=True)
            self.axes_vao = self.ctx.vertex_array(
                self.line, [(self.axes_vbo, "3f 3f", "in_position", "in_colour")])
        self.axes_vbo.write(verts.tobytes())
        self.axes_vao.render(self.ctx.LINES, vertices=len(verts))

    def release(self):
        for mesh in (*self.meshes.values(), *self.hull_meshes.values(), self.anchors):
            mesh.release()
        self.hull_meshes = {}
        for obj in (self.axes_vao, self.axes_vbo, self.grid_vao, self.grid_vbo, self.far_vao,
                    self.far_vbo, self.solid, self.line, self.far):
            if obj is None:
                continue
            obj.release()
