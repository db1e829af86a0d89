"""The window's controls: the keyboard shortcuts the app acts on and the help text (F1).

`HELP` lists every control, mouse included, as (control, what it does) rows; the F1
overlay shows it as is, so it stays the one description of the controls.  Escape is no
shortcut: ImGui takes it to leave a text field or close a dialog, and the window to close
this help; it never quits (Ctrl+Q or the window's close button do).  Tab hides the panel
only while no text field has the keyboard: in a field, ImGui has it.
"""
from pyglet.window import key

# Keyboard shortcuts: pyglet key symbol -> action name (methods of the App: action_<name>).
SHORTCUTS = {
    key.SPACE: "toggle_pause",
    key.RIGHT: "step",
    key.LEFT: "step_back",
    key.BACKSPACE: "reset",
    key.F: "frame",
    key.G: "focus",
    key.J: "toggle_joints",
    key.C: "toggle_centres",
    key.H: "toggle_shadows",
    key.K: "toggle_contacts",
    key.S: "cycle_shape_view",
    key.TAB: "toggle_panel",
    key.T: "track",
    # + and - on any keyboard: the = key is + with Shift on many layouts, and pyglet names
    # a key by its unshifted symbol
    key.PLUS: "faster",
    key.EQUAL: "faster",
    key.NUM_ADD: "faster",
    key.MINUS: "slower",
    key.NUM_SUBTRACT: "slower",
    key.F1: "toggle_help",
    key.F9: "toggle_recording",
    key.F12: "screenshot",
}

# Ctrl + key shortcuts; they act even while a panel text field has the keyboard.
CTRL_SHORTCUTS = {
    key.Q: "quit",
}

# Keys that act even while a panel text field has the keyboard.
ALWAYS_ACTIVE = frozenset({key.F1, key.F9, key.F12})

HELP = (
    ("Space", "pause / resume the simulation"),
    ("Right arrow", "pause and advance one step"),
    ("Left arrow", "pause and go back one frame (1/60 s) on the timeline: the states of about "
                   "the last minute are kept; Play or Right arrow go on from there"),
    ("Backspace", "reset the scene (reads the file again; live edits are dropped)"),
    ("F", "frame the whole scene, with the room hanging parts swing through"),
    ("G", "focus the camera on the selected body (the last one grabbed or double-clicked: "
          "its centre of mass)"),
    ("T", "the camera follows the selected body (T again: it stays)"),
    ("J", "show / hide joint anchors (blue: friction holds, orange: sliding) and axes"),
    ("C", "show / hide the centres of mass"),
    ("H", "show / hide the shadows on the ground"),
    ("K", "show / hide contact points (green: sticking, red: sliding) and contact forces"),
    ("S", "cycle how bodies with visuals are drawn: by their visuals; by their collision "
          "shapes instead (what contacts see: a URDF's <collision>, an MJCF's colliding "
          "geoms); by their visuals with the collision shapes over them in see-through "
          "magenta (also where the visuals hide them)"),
    ("Tab", "hide / show the panel (the view takes the whole window); not while typing in "
            "a text field, where Tab is the field's"),
    ("+ / -", "run the simulation faster / slower: x1/32, x1/16 ... x1 ... x4, doubling or "
              "halving (also the keypad's + and -); the panel's speed slider sets any value "
              "between"),
    ("F1", "show / hide this help"),
    ("F9", "start / stop recording the 3D view to a video (MP4, in the current folder; "
           "needs PyAV: pip install 'sharnir[video]')"),
    ("F12", "save a screenshot (PNG, with the panel) in the current folder"),
    ("Escape", "leave a text field, close a dialog or this help (never quits)"),
    ("Ctrl+Q / close button", "stop the simulation and quit"),
    ("Left drag on a body", "pull it toward the cursor with a spring (in the view plane); "
                            "while paused a free body follows the cursor directly, a "
                            "jointed one is pulled at the next step"),
    ("Ctrl + left drag on a body", "turn it about the view axis (drag right: clockwise)"),
    ("Left drag elsewhere", "orbit the camera around its target"),
    ("Double-click", "select the body under the cursor (its name and numbers in the panel, a "
                     "dot at its centre of mass); on nothing: clear the selection"),
    ("Right or middle drag", "pan the camera"),
    ("Mouse wheel", "zoom in / out (over the panel: scroll it)"),
    ("Panel sliders", "drag, or Ctrl+click to type a value; out-of-range values are clamped"),
    ("Joints: tick box", "plot the joint (its colour) in the plot at the panel's bottom: "
                         "angle, velocity or friction over the last 10 s of simulated time"),
)
