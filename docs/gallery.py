"""Render the gallery: one headless screenshot per scene and docs/gallery.md listing them.

    PYGLET_HEADLESS=1 .venv/bin/python docs/gallery.py     # about a minute once compiled
    PYGLET_HEADLESS=1 .venv/bin/python docs/gallery.py --packages DIR   # the robots too

Each scene is simulated for the frames given below (1/60 s each, its behaviour included) and
drawn through EGL at 480 x 360 into docs/gallery/NAME.png. The robots of ROBOTS come from
public robot description repositories as they ship, checked out under DIR (each by its
repository's name); without --packages their pictures and rows are kept as they are.
"""
import argparse
import sys
import warnings
from pathlib import Path

from sharnir.app.screenshot import render_scene_png
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
    ("fdo_tube", SCENE_DIR / "fdo_tube.toml", 200, "300 bumped and dented ellipsoids "
     "(functionally defined objects) through the tube (paper 001)"),
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
# (name, repository, file in it, frames, what the picture shows): robots as they ship
ROBOTS = [
    ("ANYmal C (ANYbotics, URDF)", "ANYbotics/anymal_c_simple_description", "urdf/anymal.urdf",
     60, "a quadruped opened as it ships: floating, standing on its feet on the ground, its "
     "joints held by their motors"),
    ("TALOS (PAL Robotics, URDF)", "pal-robotics/talos_robot",
     "talos_description/robots/talos_full_v2.xacro.urdf", 20, "a humanoid of 44 joints (the "
     "package's xacro expanded), floating, on its feet a third of a second after opening"),
    ("Franka Panda (MuJoCo Menagerie, MJCF)", "google-deepmind/mujoco_menagerie",
     "franka_emika_panda/scene.xml", 60, "the Menagerie's panda with its scene, compiled by "
     "MuJoCo and simulated by Sharnir"),
]
ROBOTS_HEADING = "## Robots as they ship"


def _render(name, path, frames, what, shown, out):
    """Render one picture; its gallery.md row."""
    png = out / (name.split(" (")[0].lower().replace(" ", "_") + ".png")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        description = read_scene(path).description or what
        render_scene_png(path, png, frames=frames, width=480, height=360)
    print(f"wrote {png}")
    return (f"### {name}\n\n`sharnir {shown}` — {what}. *{description}*\n\n"
            f"![{name}](gallery/{png.name})\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Render docs/gallery.md and its pictures.")
    parser.add_argument("--packages", type=Path, metavar="DIR",
                        help="where the repositories of ROBOTS are checked out, each by its "
                             "name (its part after the slash)")
    parser.add_argument("--robots-only", action="store_true",
                        help="render only the robots (with --packages); keep the scenes' rows")
    args = parser.parse_args(argv)
    out = DOCS / "gallery"
    out.mkdir(exist_ok=True)
    old = (DOCS / "gallery.md").read_text(encoding="utf-8")
    rows = []
    for name, path, frames, what in () if args.robots_only else SCENES:
        if not path.exists():
            print(f"skip {name}: {path} is missing", file=sys.stderr)
            continue
        rows.append(_render(name, path, frames, what, path.relative_to(DOCS.parent).as_posix(),
                            out))
    text = ("# Gallery\n\nOne picture per scene, rendered headless by `docs/gallery.py` after "
            "the seconds of simulation that show what the scene is for.\n\n" + "\n".join(rows))
    if args.robots_only:
        text = old.split(ROBOTS_HEADING)[0].rstrip("\n") + "\n"
    robots = old[old.index(ROBOTS_HEADING):] if ROBOTS_HEADING in old else ""
    if args.packages is not None:
        rows = []
        for name, repo, file, frames, what in ROBOTS:
            path = args.packages / repo.split("/")[1] / file
            if path.exists():
                rows.append(_render(name, path, frames, what, f"{repo}: {file}", out))
            else:
                print(f"skip {name}: {path} is missing", file=sys.stderr)
        robots = (f"{ROBOTS_HEADING}\n\nRobot files from public description packages as they "
                  "ship, opened directly (`docs/gallery.py --packages DIR`; bench/results.md, "
                  "\"Robot files\", has the survey).\n\n" + "\n".join(rows))
    (DOCS / "gallery.md").write_text(text + ("\n" + robots if robots else ""),
                                     encoding="utf-8")


if __name__ == "__main__":
    main()
