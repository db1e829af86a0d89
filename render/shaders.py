"""GLSL 3.30 core shaders: lit instanced solids (and their shadows on the ground, and the
translucent one-colour collision overlay) and unlit coloured lines."""

# Per instance: a model matrix (four columns) and a colour.  Normals go through the
# inverse transpose because shapes are scaled unevenly (boxes, ellipsoids, cylinders).
SOLID_VERTEX = """
#version 330
in vec3 in_position;
in vec3 in_normal;
in vec4 in_model0;
in vec4 in_model1;
in vec4 in_model2;
in vec4 in_model3;
in vec3 in_colour;
uniform mat4 u_view_projection;
uniform mat4 u_flatten;  // identity, or the projection onto the ground along the light
out vec3 v_normal;
out vec3 v_colour;
out vec3 v_world;
void main() {
    mat4 model = mat4(in_model0, in_model1, in_model2, in_model3);
    vec4 world = u_flatten * model * vec4(in_position, 1.0);
    v_world = world.xyz;
    v_normal = transpose(inverse(mat3(model))) * in_normal;
    v_colour = in_colour;
    gl_Position = u_view_projection * world;
}
"""

# Lambert from one directional light plus an ambient term that is brighter from above
# (sky) than from below (ground), so faces turned away from the light keep their shape.
SOLID_FRAGMENT = """
#version 330
in vec3 v_normal;
in vec3 v_colour;
in vec3 v_world;
uniform vec3 u_light_dir;
uniform vec3 u_eye;
uniform float u_shadow;  // > 0: draw a flat translucent shadow of this opacity
uniform vec4 u_tint;     // a > 0: every instance lit in this one colour and opacity
out vec4 f_colour;
void main() {
    if (u_shadow > 0.0) {
        f_colour = vec4(0.0, 0.0, 0.0, u_shadow);
        return;
    }
    vec3 n = normalize(v_normal);
    if (dot(n, u_eye - v_world) < 0.0) n = -n;  // inside faces seen through open ends
    float diffuse = max(dot(n, u_light_dir), 0.0);
    float ambient = mix(0.18, 0.38, 0.5 + 0.5 * n.z);
    vec3 colour = u_tint.a > 0.0 ? u_tint.rgb : v_colour;
    f_colour = vec4(colour * (ambient + 0.72 * diffuse), u_tint.a > 0.0 ? u_tint.a : 1.0);
}
"""

LINE_VERTEX = """
#version 330
in vec3 in_position;
in vec3 in_colour;
uniform mat4 u_view_projection;
out vec3 v_colour;
void main() {
    v_colour = in_colour;
    gl_Position = u_view_projection * vec4(in_position, 1.0);
}
"""

LINE_FRAGMENT = """
#version 330
in vec3 v_colour;
out vec4 f_colour;
void main() {
    f_colour = vec4(v_colour, 1.0);
}
"""

# A full-window quad at the far plane: drawn with the depth test always passing and colour
# writes off, it resets the depth buffer alone (a plain clear would also clear the colour).
FAR_VERTEX = """
#version 330
in vec2 in_position;
void main() {
    gl_Position = vec4(in_position, 1.0, 1.0);
}
"""

FAR_FRAGMENT = """
#version 330
out vec4 f_colour;
void main() {
    f_colour = vec4(0.0);
}
"""
