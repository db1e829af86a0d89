"""Render the gallery: one headless screenshot per scene and docs/gallery.md listing them.

    PYGLET_HEADLESS=1 .venv/bin/python docs/gallery.py     # about a minute once compiled

Each scene is simulated for the frames given below (1/60 s each, its behaviour included) and
drawn through EGL at 480 x 360 into docs/gallery/NAME.png.
"""
import sys
import warnings
from pathlib import Path

from sharnir.render import render_scene_png
from sharnir.scenes import SCENE_DIR, read_scene

DOCS = Path(__file__).resolve().parent
FIXTURES = DOCS.parent / "tests" / "fixtures"
# (name, scene file, frames simulated first, what the picture shows)
SCENES = [
    ("door", SCENE_DIR / "door.toml", 30, "paper 000's door, braked by hinge friction"),
    ("door_push", SCENE_DIR / "door_push.toml", 100, "a mobile robot's arm pushes the door "
     "open (paper 000's MF-4)"),
    ("biped", SCENE_DIR / "biped.toml", 36 * 60, "paper 002's biped turning the valve with "
     "both hands"),
    ("joints", SCENE_DIR / "joints.toml", 60, "one joint of each kind, with friction"),
    ("chain", SCENE_DIR / "chain.toml", 60, "a 50-link chain with joint friction"),
    ("ellipsoid_tube", SCENE_DIR / "ellipsoid_tube.toml", 240, "1000 ellipsoids poured "
     "through a tilted tube (paper 001)"),
    ("granular_pile", SCENE_DIR / "granular_pile.toml", 180, "a granular pile (paper 004)"),
    ("pyramid", SCENE_DIR / "pyramid.toml", 60, "a 210-box pyramid"),
    ("stack", SCENE_DIR / "stack.toml", 60, "a stack of ten boxes"),
    ("shapes", SCENE_DIR / "shapes.toml", 90, "every primitive, a hull and compounds"),
    ("spinning_top", SCENE_DIR / "spinning_top.toml", 60, "a spinning top on the floor"),
    ("humanoid (MJCF)", FIXTURES / "mjcf" / "humanoid.xml", 40, "MuJoCo's humanoid.xml, "
     "opened directly, falling under zero control, in its material's colour"),
    ("KUKA iiwa (URDF)", FIXTURES / "urdf" / "kuka_iiwa" / "model.urdf", 30, "a 7-joint arm's "
     "URDF with STL meshes (drawn with their triangles, colliding as their hulls), opened "
     "directly, held by its motors"),
    ("r2d2 (URDF)", FIXTURES / "urdf" / "r2d2" / "r2d2.urdf", 30, "PyBullet's r2d2 URDF, "
     "opened directly, drawn by its <visual> shapes and colours"),
]


def main():
    out = DOCS / "gallery"
    out.mkdir(exist_ok=True)
    rows = []
    for name, path, frames, what in SCENES:
        if not path.exists():
            print(f"skip {name}: {path} is missing", file=sys.stderr)
            continue
        png = out / (name.split(" (")[0].lower().replace(" ", "_") + ".png")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            description = read_scene(path).description or what
            render_scene_png(path, png, frames=frames, width=480, height=360)
        rel = path.relative_to(DOCS.parent).as_posix()
        rows.append(f"### {name}\n\n`sharnir {rel}` — {what}. *{description}*\n\n"
                    f"![{name}](gallery/{png.name})\n")
        print(f"wrote {png}")
    text = ("# Gallery\n\nOne picture per scene, rendered headless by `docs/gallery.py` after "
            "the seconds of simulation that show what the scene is for.\n\n" + "\n".join(rows))
    (DOCS / "gallery.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
