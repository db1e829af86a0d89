"""Feeding pyglet's window events to Dear ImGui (imgui-bundle's native OpenGL 3 renderer).

`ImGuiLayer` owns the ImGui and ImPlot contexts and the renderer; it takes pyglet events
(`on_mouse_motion`, `on_key_press`, ...) and tells whether ImGui wants them, so that the
3D view only gets what the panel did not use.  A frame is `new_frame(...)`, the widgets,
then `render()` into whichever framebuffer is bound.
"""
from imgui_bundle import imgui, implot
from pyglet.window import key, mouse

_KEYS = {
    key.TAB: imgui.Key.tab, key.LEFT: imgui.Key.left_arrow, key.RIGHT: imgui.Key.right_arrow,
    key.UP: imgui.Key.up_arrow, key.DOWN: imgui.Key.down_arrow,
    key.PAGEUP: imgui.Key.page_up, key.PAGEDOWN: imgui.Key.page_down,
    key.HOME: imgui.Key.home, key.END: imgui.Key.end, key.INSERT: imgui.Key.insert,
    key.DELETE: imgui.Key.delete, key.BACKSPACE: imgui.Key.backspace,
    key.SPACE: imgui.Key.space, key.ENTER: imgui.Key.enter, key.NUM_ENTER: imgui.Key.keypad_enter,
    key.ESCAPE: imgui.Key.escape, key.A: imgui.Key.a, key.C: imgui.Key.c, key.V: imgui.Key.v,
    key.X: imgui.Key.x, key.Y: imgui.Key.y, key.Z: imgui.Key.z,
    key.LCTRL: imgui.Key.left_ctrl, key.RCTRL: imgui.Key.right_ctrl,
    key.LSHIFT: imgui.Key.left_shift, key.RSHIFT: imgui.Key.right_shift,
    key.LALT: imgui.Key.left_alt, key.RALT: imgui.Key.right_alt,
}
_BUTTONS = {mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2}
# ImGui's modifier keys: (its mod key, pyglet's modifier bit, the keys that hold it down)
_MODIFIERS = (
    (imgui.Key.mod_ctrl, key.MOD_CTRL, (key.LCTRL, key.RCTRL)),
    (imgui.Key.mod_shift, key.MOD_SHIFT, (key.LSHIFT, key.RSHIFT)),
    (imgui.Key.mod_alt, key.MOD_ALT, (key.LALT, key.RALT)),
)


class ImGuiLayer:
    def __init__(self, ini_file=""):
        self.context = imgui.create_context()
        self.plot_context = implot.create_context()
        io = imgui.get_io()
        io.set_ini_filename(ini_file)  # "" = no imgui.ini written anywhere
        imgui.style_colors_dark()
        imgui.backends.opengl3_init("#version 330")
        self.height = 1

    # ---- input ------------------------------------------------------------------------------
    @property
    def wants_mouse(self):
        return imgui.get_io().want_capture_mouse

    @property
    def wants_keyboard(self):
        return imgui.get_io().want_capture_keyboard

    def on_mouse_motion(self, x, y, dx=0, dy=0):
        imgui.get_io().add_mouse_pos_event(x, self.height - y)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.on_mouse_motion(x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        self._button(x, y, button, modifiers, True)

    def on_mouse_release(self, x, y, button, modifiers):
        self._button(x, y, button, modifiers, False)

    def _button(self, x, y, button, modifiers, down):
        # the click carries the modifiers held with it (Ctrl+click types a slider's value)
        self._modifiers(modifiers)
        self.on_mouse_motion(x, y)
        if button in _BUTTONS:
            imgui.get_io().add_mouse_button_event(_BUTTONS[button], down)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.on_mouse_motion(x, y)
        imgui.get_io().add_mouse_wheel_event(scroll_x, scroll_y)

    def on_text(self, text):
        io = imgui.get_io()
        for ch in text:
            io.add_input_character(ord(ch))

    def on_key_press(self, symbol, modifiers):
        self._key(symbol, modifiers, True)

    def on_key_release(self, symbol, modifiers):
        self._key(symbol, modifiers, False)

    def _key(self, symbol, modifiers, down):
        self._modifiers(modifiers, symbol, down)
        if symbol in _KEYS:
            imgui.get_io().add_key_event(_KEYS[symbol], down)

    @staticmethod
    def _modifiers(modifiers, symbol=None, down=False):
        """Tell ImGui which modifiers are held.  Pressing Ctrl itself comes with the
        modifiers as they were before it (X11 does that), so the key's own state counts."""
        io = imgui.get_io()
        for mod_key, bit, keys in _MODIFIERS:
            io.add_key_event(mod_key, down if symbol in keys else bool(modifiers & bit))

    # ---- frames -----------------------------------------------------------------------------
    def new_frame(self, size, framebuffer_size, delta_time):
        io = imgui.get_io()
        self.height = size[1]
        io.display_size = imgui.ImVec2(*size)
        io.display_framebuffer_scale = imgui.ImVec2(framebuffer_size[0] / max(size[0], 1),
                                                    framebuffer_size[1] / max(size[1], 1))
        io.delta_time = max(delta_time, 1e-4)
        imgui.backends.opengl3_new_frame()
        imgui.new_frame()

    def render(self):
        imgui.render()
        imgui.backends.opengl3_render_draw_data(imgui.get_draw_data())

    def shutdown(self):
        imgui.backends.opengl3_shutdown()
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)
