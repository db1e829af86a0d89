"""The ``sharnir`` command: run scene files headless and report or save what happened.

``sharnir run SCENE`` loads a scene (`scenes.read_scene`), steps it without a
window, shows a progress bar on stderr and ends with a summary on stdout
(optionally also as one JSON line) and optional CSV / NPZ recordings.  Every
expected failure -- a bad scene, bad option values, a simulation that blows up,
an output that cannot be written -- is one ``sharnir: error:`` message on stderr
and exit status 2, never a traceback.

``sharnir SCENE --screenshot OUT.png [--frames N]`` renders the scene after N
frames headless (EGL, no display needed) into a PNG and exits.  ``sharnir run SCENE --video
OUT.mp4`` also renders the run into a video, and ``sharnir replay RUN.npz --video OUT.mp4``
renders a recording of ``--npz`` (app.film, render.video).

Without a command, ``sharnir`` (or ``sharnir SCENE``) opens the desktop app
(`app.window`) on scenes/door.toml (or SCENE); without a display that is one error
pointing to ``sharnir run`` and ``--screenshot``.
"""

import argparse
import contextlib
import csv
import dataclasses
import json
import math
import os
import secrets
import stat
import sys
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

from ..physics.joint import JOINT_TYPE_INFO
from ..physics.message import shortened
from ..physics.model import STAT_ITERATIONS
from ..scenes import (
    SCENE_DIR,
    SceneError,
    build_world,
    read_scene,
    resolve_scene,
    shipped_scenes,
)
from ..scenes.schema import MAX_DURATION
from .snapshot import JOINT_CHANNELS, REACTION_CHANNELS, csv_columns, csv_header

DEFAULT_SCENE = SCENE_DIR / "door.toml"
REACTION_FIRST = JOINT_CHANNELS.index(REACTION_CHANNELS[0])
ERROR_STATUS = 2
INTERRUPTED_STATUS = 130
PROGRESS_CHUNKS = 50
PROGRESS_LINES = 4  # when stderr is not a terminal (a log file), one line per quarter

CONVENTIONS = """\
conventions:
  SI units (m, kg, s, N, N m), the world frame has z up, quaternions are
  written (w, x, y, z) and angles are radians in scene files, CSV/NPZ/JSON
  outputs and APIs; only the human-readable summary also shows degrees.
"""

RUN_EPILOG = CONVENTIONS + """
outputs:
  --csv   one row per step, these columns in this order:
            t (s);
            for every joint J: J.angle (rad; J.position in m for a prismatic
              joint), J.velocity (rad/s or m/s), J.friction (its friction
              torque or force, N m or N), J.sliding (0 = stuck, 1 = sliding);
            for every joint J with a DC motor: J.voltage (V), J.current (A),
              J.torque (N m; N on a prismatic joint), J.motor_speed (the
              rotor's rad/s: the gear ratio times the joint's rate);
            for every joint J: J.fx, J.fy, J.fz (N), J.tx, J.ty, J.tz (N m):
              the force and torque body A exerts on body B through the joint
              (its rows and its motor), world frame, torque about the anchor;
            for every contact sensor body B (a dynamic body with a shape that
              a joint holds: a foot, a door): B.contact_fx, B.contact_fy,
              B.contact_fz (N), B.contact_tx, B.contact_ty, B.contact_tz
              (N m): the summed contact force on B, world frame, and its
              torque about B's centre of mass
  --npz   arrays t (steps,), body_names, body_pos (steps, nbody, 3),
          body_quat (steps, nbody, 4) (bodies without the fixed world body),
          joint_names, joint_types, and joint_coord, joint_velocity,
          joint_friction, joint_sliding (steps, njoint) each (joint_sliding
          is boolean); motor_joints (nmotor,) and motor_voltage,
          motor_current, motor_torque, motor_speed (steps, nmotor) each;
          joint_reaction (steps, njoint, 6): fx, fy, fz, tx, ty, tz as in
          the CSV; contact_bodies (nsensor,) and contact_force
          (steps, nsensor, 6) as in the CSV; for 'sharnir replay': run_info
          (a JSON text: the scene file, the --set overrides, the asset
          folders, the robot options, dt, --every) and the state the run
          started from, initial_t, initial_body_pos (nbody, 3),
          initial_body_quat (nbody, 4), initial_joint_sliding (njoint,)
  --video the run drawn headless (EGL) into OUT.mp4 (H.264; also .gif, .mkv,
          .mov, .webm), --fps frames a second (default 30), each frame
          --speed simulated seconds after the one before times 1/fps
          (default 1: real time; 0.25: four times slower), --size WxH
          (default 640x480); needs PyAV: pip install 'sharnir[video]'
  --json  the summary as one JSON object on the last line of stdout (a number
          that is not finite is written as null)
  Outputs are written whole or not at all; missing folders are created.

blow-ups:
  A state that is not finite, a body faster than the scene's [world] max_speed
  (default 1e4 m/s) or turning faster than max_angular_speed (1e5 rad/s), a
  joint open by more than max_joint_gap (0.1 m) or max_joint_angle_gap (0.5 rad),
  or a step gaining more energy than max_energy_gain (10) times what its forces,
  motors and drag could supply, stops the run with one error line naming the
  body or joint, the value, the bound, the step and the time (status 2);
  --set world.max_speed=0 (or the other setting) turns that check off.

files:
  A scene reads meshes and included files only from its own folder, Sharnir's
  assets/, each --asset-root DIR (repeatable), $SHARNIR_ASSET_PATH,
  $ROS_PACKAGE_PATH and ROS packages (folders with a package.xml).

examples:
  sharnir run scenes/door.toml --csv out/door.csv
  sharnir run scenes/door.toml --set joints.hinge.friction=35 --json
  sharnir run scenes/chain.toml --duration 2 --iterations 40
  sharnir run door --duration 2 --video door.mp4
"""


COMMANDS = ("run", "convert", "schema", "replay", "sweep")


class CliError(Exception):
    """A failure to report as one ``sharnir: error:`` message with exit status 2."""


def main(argv=None):
    """Entry point of the ``sharnir`` console script; returns the exit status. As the console
    script (argv None), ``sharnir run`` ends the process itself once its outputs are written
    and closed (_fast_exit)."""
    if argv is None:
        status = main(sys.argv[1:])
        if status == 0 and sys.argv[1:2] == ["run"]:   # a run whose files are all closed
            _fast_exit(status)
        return status
    argv = list(argv)
    # A scene (a file or a shipped scene's name) in the command's place is the app invocation
    # (sharnir SCENE ...).
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        args = _app_parser().parse_args(argv)
    else:
        args = _parser().parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        if args.list:
            return _list()
        if args.command is None:
            return _default()
        if getattr(args, "scene", None) is not None:
            args.scene = resolve_scene(args.scene)
        return args.handler(args)
    except (CliError, SceneError) as exc:
        _error(str(exc))
        return ERROR_STATUS
    except KeyboardInterrupt:
        print("\nsharnir: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS


def _fast_exit(status):
    """End the process now, skipping the interpreter's teardown: freeing numba's dispatchers
    and LLVM's code takes 0.3 s of a 1.3 s `sharnir run` on this 2-core class. Only after a
    run, whose files are written whole and closed and which starts nothing an exit handler
    must stop (no threads, pools or Ray)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _parser():
    parser = argparse.ArgumentParser(
        prog="sharnir",
        description="Sharnir: articulated rigid bodies with Coulomb joint friction.",
        epilog=CONVENTIONS + "\nWithout a command, sharnir opens the door scene in the app "
               "window; SCENE is a file\nor a shipped scene's name (sharnir --list)."
               "\n'sharnir SCENE --screenshot OUT.png [--frames N]' renders a PNG headless.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sharnir {_version()}")
    parser.add_argument("--list", action="store_true",
                        help="list the shipped scenes, which can be named without a path")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run a scene headless and report the result",
        description="Run a scene without a window, then print a summary of the final state.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.set_defaults(handler=_run, list=False)
    run.add_argument("scene", metavar="SCENE",
                     help="a scene file (.toml), MuJoCo MJCF model (.xml) or URDF robot "
                          "(.urdf), or a shipped scene's name (sharnir --list)")
    run.add_argument("--duration", type=_positive_seconds, metavar="S",
                     help="simulated seconds (default: the scene's duration, else 5)")
    run.add_argument("--dt", type=float, metavar="S", help="time step in s (default: the scene's)")
    run.add_argument("--iterations", type=int, metavar="N",
                     help="solver velocity iterations per step (default: the scene's)")
    run.add_argument("--budget-ms", type=float, metavar="X",
                     help="wall-clock budget per step in ms, 0 = off (default: the scene's)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                     help="override a scene value by dotted path, e.g. joints.hinge.friction=35 "
                          "(VALUE is TOML; repeatable)")
    run.add_argument("--csv", metavar="OUT.csv",
                     help="write the joint and contact sensor series as CSV (columns below)")
    run.add_argument("--npz", metavar="OUT.npz",
                     help="write the body, joint, motor and contact sensor series as NumPy "
                          ".npz (arrays below)")
    run.add_argument("--every", type=_step_count, default=1, metavar="N",
                     help="write every N-th step to --csv and --npz (steps N, 2N, ...; the "
                          "summary still counts every step; default 1)")
    run.add_argument("--float32", action="store_true",
                     help="write --csv numbers with 7 significant digits and --npz arrays as "
                          "float32 (about half the size)")
    run.add_argument("--keyframe", metavar="NAME",
                     help="start from the scene's keyframe NAME ([[keyframes]], an MJCF "
                          "file's <key>s: joint coordinates and rates, free bodies, motor "
                          "voltages, controllers' set-points)")
    run.add_argument("--state-in", metavar="STATE.npz",
                     help="start from a state saved by --state-out (or World.save_state) of "
                          "the same scene, instead of the scene's initial state")
    run.add_argument("--state-out", metavar="STATE.npz",
                     help="save the final state (everything the next step reads: "
                          "physics/checkpoint.py) to continue from it with --state-in")
    run.add_argument("--json", action="store_true",
                     help="also print the summary as one JSON object on the last line of stdout")
    run.add_argument("--video", metavar="OUT.mp4",
                     help="also render the run into a video (.mp4, .gif, .mkv, .mov, .webm; "
                          "needs PyAV: pip install 'sharnir[video]')")
    _video_options(run)
    _asset_root_option(run)
    _robot_options(run)
    _strict_option(run)
    convert = commands.add_parser(
        "convert",
        help="write a scene (TOML, MJCF .xml or URDF .urdf) as a Sharnir TOML scene",
        description="Read any scene Sharnir opens and write it as a Sharnir TOML scene that "
                    "loads back to the same model.",
        epilog="example:\n  sharnir convert humanoid.xml humanoid.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.set_defaults(handler=_convert, list=False)
    convert.add_argument("scene", metavar="IN", help="scene file or a shipped scene's name")
    convert.add_argument("output", metavar="OUT.toml", help="the TOML file to write")
    convert.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                         dest="sets", help="override a value first, as for run (repeatable)")
    _asset_root_option(convert)
    _robot_options(convert)
    _strict_option(convert)
    replay = commands.add_parser(
        "replay",
        help="render a recording of 'sharnir run --npz' into a video",
        description="Render the body poses recorded by 'sharnir run SCENE --npz RUN.npz' into "
                    "a video,\nthe bodies' shapes read from the scene the recording names.",
        epilog="example:\n  sharnir run door --npz door.npz\n"
               "  sharnir replay door.npz --video door.mp4 --speed 0.5",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.set_defaults(handler=_replay, list=False, scene=None)
    replay.add_argument("recording", metavar="RUN.npz", help="a recording of 'sharnir run --npz'")
    replay.add_argument("--video", metavar="OUT.mp4", required=True,
                        help="the video to write (.mp4, .gif, .mkv, .mov, .webm)")
    replay.add_argument("--scene", metavar="SCENE", dest="replay_scene",
                        help="the scene the recording was made from (default: the one it "
                             "names; needed for a recording of an older sharnir)")
    _video_options(replay)
    _asset_root_option(replay)
    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of scene files (for editors)",
        description="Print the JSON Schema that scene files follow, or write it to OUT.json; "
                    "editors use it to validate and complete scene files (see "
                    "docs/scene-format.md).",
    )
    schema.set_defaults(handler=_schema, list=False, scene=None)
    schema.add_argument("output", metavar="OUT.json", nargs="?",
                        help="write the schema here instead of stdout")
    from .sweep import add_sweep_command  # (nothing heavier than this module)

    add_sweep_command(commands)
    return parser


def _app_parser():
    parser = argparse.ArgumentParser(
        prog="sharnir",
        usage="sharnir SCENE [--screenshot OUT.png [--frames N] [--size WxH]] "
              "[--asset-root DIR ...] [--base fixed|floating] [--height M] [--decompose]",
        description="Open a scene in the app, or with --screenshot render it headless to a PNG.",
        epilog=CONVENTIONS + "\nexample:\n  sharnir scenes/door.toml --screenshot door.png "
                             "--frames 30",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(command="app", handler=_app, list=False)
    parser.add_argument("scene", metavar="SCENE",
                        help="a scene file (.toml), MuJoCo MJCF model (.xml) or URDF robot "
                             "(.urdf), or a shipped scene's name (sharnir --list)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="render headless (no display needed) to this PNG and exit")
    parser.add_argument("--frames", type=_frame_count, metavar="N",
                        help="frames of 1/60 s to simulate before the screenshot (default: 1)")
    parser.add_argument("--size", type=_picture_size, default=(800, 600), metavar="WxH",
                        help="screenshot size in pixels (default: 800x600)")
    _asset_root_option(parser)
    _robot_options(parser)
    return parser


def _robot_options(parser):
    parser.add_argument("--base", choices=("fixed", "floating"),
                        help="a URDF robot's base: fixed where it stands, or floating "
                             "(default: as the file means: fixed for a robot standing on its "
                             "base, an arm; floating for one on legs or wheels)")
    parser.add_argument("--height", type=float, metavar="M",
                        help="a URDF robot's start height: its lowest point this many metres "
                             "above the ground (default 0: standing on it)")
    parser.add_argument("--decompose", action="store_true",
                        help="a URDF robot's collision meshes collide as convex pieces (their "
                             "convex decomposition by CoACD, cached; seconds a mesh the first "
                             "time) instead of their convex hulls")


def _robot(args):
    """The robot options (scenes.loader.robot_options) of --base, --height and --decompose."""
    return {"fixed_base": None if args.base is None else args.base == "fixed",
            "height": args.height, "decompose": True if args.decompose else None}


def _video_options(parser):
    parser.add_argument("--fps", type=_video_fps, metavar="N",
                        help="video frames per second (default 30)")
    parser.add_argument("--size", type=_picture_size, metavar="WxH",
                        help="video size in pixels (default 640x480)")
    parser.add_argument("--speed", type=_video_speed, metavar="X",
                        help="simulated seconds per second of video (default 1; 0.25: "
                             "four times slower)")


def _video_fps(text):
    from ..render.video import MAX_FPS  # (numpy only)

    value = _whole_number(text, 1)
    if value > MAX_FPS:
        raise argparse.ArgumentTypeError(f"must be {MAX_FPS} or less (got {text})")
    return value


def _video_speed(text):
    from .film import SPEED_RANGE

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and SPEED_RANGE[0] <= value <= SPEED_RANGE[1]):
        raise argparse.ArgumentTypeError(f"must be from {SPEED_RANGE[0]:g} to "
                                         f"{SPEED_RANGE[1]:g} (got {text})")
    return value


def _video_settings(args):
    """(fps, (width, height), speed) of --fps, --size and --speed, (None, None, None)
    without --video (the renderer is not even imported: it loads GL, whose teardown costs a
    plain run 0.4 s at exit); CliError when they are given without --video."""
    if getattr(args, "video", None) is None:
        given = [f"--{name}" for name in ("fps", "size", "speed")
                 if getattr(args, name) is not None]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise CliError(f"{' and '.join(given)} only {verb} with --video")
        return None, None, None
    from ..render.video import DEFAULT_FPS
    from .film import DEFAULT_SIZE

    return (args.fps or DEFAULT_FPS, args.size or DEFAULT_SIZE,
            1.0 if args.speed is None else args.speed)


def _strict_option(parser):
    parser.add_argument("--strict", action="store_true",
                        help="refuse a robot file whose inertias Sharnir would repair (with a "
                             "warning) instead of loading it")


def _asset_root_option(parser):
    parser.add_argument("--asset-root", action="append", default=[], metavar="DIR",
                        dest="asset_roots",
                        help="a folder the scene's files (meshes, includes, URDF packages) may "
                             "also come from besides the scene's own (repeatable; also "
                             "$SHARNIR_ASSET_PATH)")


def _whole_number(text, least):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more (got {text})")
    return value


def _frame_count(text):
    return _whole_number(text, 0)


def _step_count(text):
    return _whole_number(text, 1)


def _picture_size(text):
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not WIDTHxHEIGHT: {text!r}") from None
    if min(size) < 1 or max(size) > 16384:
        raise argparse.ArgumentTypeError(f"each side must be 1 to 16384 pixels (got {text})")
    return size


def _version():
    try:
        return metadata.version("sharnir")
    except metadata.PackageNotFoundError:  # a source checkout that was never installed
        return "unknown"


def _decimated(rec, rows, dtype=None):
    """The Recording's per-step series at `rows` (a slice), as `dtype` where given (floats
    only; flags and indices keep theirs)."""
    def cut(a):
        if a is None or a.ndim == 0 or a.shape[0] != len(rec.t):
            return a
        a = a[rows]
        return a.astype(dtype) if dtype is not None and a.dtype.kind == "f" else a

    return dataclasses.replace(rec, t=cut(rec.t), joint=cut(rec.joint), stats=cut(rec.stats),
                               body_pos=cut(rec.body_pos), body_quat=cut(rec.body_quat),
                               motor=cut(rec.motor), contact=cut(rec.contact))


def _positive_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_DURATION):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0 and at most "
                                         f"{MAX_DURATION:g} (got {text})")
    return value


def _list():
    """The shipped scenes, one line each: name and description."""
    scenes = shipped_scenes()
    width = max(map(len, scenes), default=0)
    for name, description in scenes.items():
        print(f"{name:<{width}}  {description}")
    return 0


def _default():
    """No command: the desktop app on the default scene."""
    return _open_window(DEFAULT_SCENE)


def _open_window(scene, asset_roots=(), robot=None):
    read_scene(scene, asset_roots=asset_roots, robot=robot)  # a bad scene file is reported
    from .window import NoDisplayError, run_app  # loads numba, pyglet and imgui

    try:
        return run_app(scene, asset_roots=asset_roots, robot=robot)
    except NoDisplayError as exc:
        raise CliError(str(exc)) from None


_python_show_warning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Sharnir's own warnings (a robot file read with repairs, a mesh, the physics) as one
    line, like its errors; other libraries' as Python shows them."""
    if category.__module__.startswith("sharnir."):
        print(f"sharnir: warning: {' '.join(str(message).split())}", file=sys.stderr)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


def _error(message):
    for line in shortened(message).splitlines() or [""]:
        print(f"sharnir: error: {line}", file=sys.stderr)


# --- sharnir SCENE -----------------------------------------------------------------


def _app(args):
    if args.screenshot is None:
        if args.frames is not None:
            raise CliError("--frames only applies with --screenshot")
        return _open_window(args.scene, args.asset_roots, _robot(args))
    from ..physics import SimulationError  # importing physics loads numba: not for --help
    from ..render import RenderError
    from .screenshot import render_scene_png

    width, height = args.size
    try:
        render_scene_png(args.scene, args.screenshot, frames=1 if args.frames is None
                         else args.frames, width=width, height=height,
                         asset_roots=args.asset_roots, robot=_robot(args))
    except (RenderError, SimulationError) as exc:
        raise CliError(str(exc)) from None
    print(f"sharnir: wrote {args.screenshot} ({width}x{height})", file=sys.stderr)
    return 0


# --- sharnir convert / schema ------------------------------------------------------------


def _convert(args):
    from ..scenes.writer import scene_toml

    spec = read_scene(args.scene, args.sets, args.asset_roots, args.strict, _robot(args))
    out = Path(args.output)
    if out.suffix.lower() != ".toml":
        raise CliError(f"cannot write {args.output}: convert writes TOML scenes (OUT.toml)")
    text = scene_toml(spec, header=f"Converted by `sharnir convert` from {args.scene}.",
                      base=out.resolve().parent)
    with _atomic_output(args.output, text=True) as handle:
        handle.write(text)
    print(f"sharnir: wrote {args.output} ({len(spec.bodies)} bodies, {len(spec.joints)} joints)",
          file=sys.stderr)
    return 0


def _schema(args):
    from ..scenes.reference import schema_json

    text = schema_json()
    if args.output is None:
        sys.stdout.write(text)
        return 0
    with _atomic_output(args.output, text=True) as handle:
        handle.write(text)
    print(f"sharnir: wrote {args.output}", file=sys.stderr)
    return 0


# --- sharnir run ------------------------------------------------------------------------


def _run(args):
    from ..physics import CheckpointError, SimulationError  # (loads numba: not for --help)

    fps, size, speed = _video_settings(args)
    spec = read_scene(args.scene, args.sets, args.asset_roots, args.strict, _robot(args))
    world = build_world(spec, dt=args.dt, iterations=args.iterations, budget_ms=args.budget_ms,
                        source=args.scene)
    if args.keyframe is not None:
        keys = getattr(world, "keyframes", {})
        if args.keyframe not in keys:
            raise CliError(f"{args.scene}: no keyframe {args.keyframe!r} (the scene's: "
                           f"{', '.join(keys) or 'none'})")
        try:
            world.apply_keyframe(**keys[args.keyframe], name=f"keyframe {args.keyframe!r}")
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if args.state_in is not None:
        try:
            world.restore_state(args.state_in)
        except CheckpointError as exc:
            raise CliError(str(exc)) from None
    duration = spec.duration if args.duration is None else args.duration
    steps = round(duration / world.dt)
    if steps < 1:
        raise CliError(f"duration {duration:g} s is shorter than half a time step "
                       f"(dt = {world.dt:g} s)")
    with contextlib.ExitStack() as outputs:
        # Opened before the run so that a bad path fails now, not after a long simulation.
        csv_file = outputs.enter_context(_atomic_output(args.csv, text=True)) if args.csv else None
        npz_file = outputs.enter_context(_atomic_output(args.npz, text=False)) if args.npz else None
        state_file = (outputs.enter_context(_atomic_output(args.state_out, text=False))
                      if args.state_out else None)
        video = outputs.enter_context(_film_output(args, world, size, fps)) if args.video \
            else None
        initial = _initial_arrays(world) if npz_file is not None else {}
        _warm_up(world)
        progress = _Progress(sys.stderr)
        chunk, report = math.ceil(steps / PROGRESS_CHUNKS), progress
        if video is not None:   # the same run, in chunks that stop at every frame's step
            from .film import RunFilm

            film = RunFilm(world, steps, fps, speed, report=progress)
            chunk, report = film.chunk, film.progress
        try:
            rec = world.run(steps, record_bodies=npz_file is not None, chunk=chunk,
                            progress=report)
        except SimulationError as exc:
            progress.abandon()
            raise CliError(str(exc)) from None
        except MemoryError:
            progress.abandon()
            raise CliError(f"not enough memory to record {steps} steps; "
                           "try a shorter --duration") from None
        if csv_file is not None:
            _write_csv(csv_file, world, rec, args.every, args.float32)
        if npz_file is not None:
            _write_npz(npz_file, world, rec, args.every, args.float32,
                       {**initial, "run_info": _run_info(args, world)} if initial else None)
        if video is not None:
            _write_video(video, film.frames, args.video, fps)
        if state_file is not None:
            world.save_state().write(state_file)
    summary = _summary(args.scene, world, rec)
    print(_format_summary(summary))
    if args.json:
        print(json.dumps(_json_ready(summary), allow_nan=False))
    return 0


def _film_output(args, world, size, fps):
    from ..render import RenderError
    from .film import FilmOutput, world_drawing

    try:
        return FilmOutput(args.video, world_drawing(world), size, fps)
    except RenderError as exc:
        raise CliError(str(exc)) from None


def _write_video(video, frames, path, fps):
    from ..render import RenderError

    try:
        width, height = video.write(frames, progress=_Progress(sys.stderr, "frames"))
    except RenderError as exc:
        raise CliError(str(exc)) from None
    print(f"sharnir: wrote {path} ({len(frames)} frames, {width}x{height}, {fps} fps)",
          file=sys.stderr)


def _initial_arrays(world):
    from .film import initial_arrays

    return initial_arrays(world)


def _run_info(args, world):
    from .film import run_info

    return run_info(args, world)


def _replay(args):
    from ..render import RenderError
    from .film import ReplayError, replay_video

    fps, size, speed = _video_settings(args)
    try:
        frames, (width, height) = replay_video(
            args.recording, args.video, scene=args.replay_scene, asset_roots=args.asset_roots,
            fps=fps, size=size, speed=speed, progress=_Progress(sys.stderr, "frames"))
    except (ReplayError, RenderError) as exc:
        raise CliError(str(exc)) from None
    print(f"sharnir: wrote {args.video} ({frames} frames, {width}x{height}, {fps} fps)",
          file=sys.stderr)
    return 0


def _warm_up(world):
    """Compile the kernels (or load them from numba's cache) before any step is timed,
    with their progress on stderr."""
    from ..physics.warmup import ProgressPrinter, compile_step

    report = ProgressPrinter(sys.stderr)
    try:
        compile_step(world, report)
    finally:
        report.close()


class _Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a few lines in a log."""

    WIDTH = 30

    def __init__(self, stream, unit="steps"):
        self.stream = stream
        self.unit = unit
        self.live = stream.isatty()
        self.lines_done = 0
        self.open_bar = False  # a bar is drawn and its line not yet ended

    def __call__(self, done, total):
        if self.live:
            self.open_bar = done < total
            filled = self.WIDTH * done // total
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            end = "\n" if done == total else ""
            self.stream.write(f"\r[{bar}] {100 * done // total:3d}%  {done}/{total} "
                              f"{self.unit}{end}")
        else:
            reached = PROGRESS_LINES * done // total
            if reached > self.lines_done:
                self.lines_done = reached
                self.stream.write(f"{100 * done // total:3d}%  {done}/{total} {self.unit}\n")
        self.stream.flush()

    def abandon(self):
        """End a bar that stopped part-way, so the error starts on a line of its own."""
        if self.open_bar:
            self.stream.write("\n")
            self.stream.flush()


# --- outputs ----------------------------------------------------------------------------


@contextlib.contextmanager
def _atomic_output(path, text):
    """A file object for a temporary file next to ``path`` that replaces ``path`` only when
    the block completes; on any failure the temporary file is removed."""
    if str(path) == "-":   # stdout: streamed
        out = sys.stdout if text else sys.stdout.buffer
        yield out
        out.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise CliError(f"cannot write {path}: it is a folder")
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # a device or pipe (/dev/null, /dev/stdout, a FIFO): written to as it is, never
        # replaced by a regular file of the same name
        try:
            handle = open(target, "w", newline="", encoding="utf-8") if text else \
                open(target, "wb")
        except OSError as exc:
            raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
        with handle:
            yield handle
        return
    # A dot file with a random part: invisible in listings and unique to this run.
    temp = target.parent / f".{target.name}.{secrets.token_hex(4)}.part"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(temp, "x", newline="", encoding="utf-8") if text else open(temp, "xb")
    except (FileExistsError, NotADirectoryError):
        raise CliError(f"cannot write {path}: part of its folder path is a file") from None
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        try:
            with handle:
                yield handle
            os.replace(temp, target)
        except OSError as exc:
            raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _kept(every, n):
    """The recorded rows --every keeps: steps every, 2 every, ... (row = step - 1)."""
    return slice(every - 1, n, every)


def _write_csv(handle, world, rec, every=1, single=False):
    names = world.joint_names
    motored = [int(j) for j in world.motor_state["joint"]]
    header = csv_header(names, [world.joint_coord_name(j) for j in range(len(names))], motored,
                        [world.body_names[i] for i in rec.contact_bodies])
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(header)
    rows = _kept(every, len(rec.t))
    contact = rec.contact[rows] if rec.contact is not None else None
    columns = csv_columns(rec.t[rows], rec.joint[rows], motored, contact)
    columns = [np.char.mod("%.7g", c).tolist() if single else c.tolist() for c in columns]
    writer.writerows(zip(*columns))


def _write_npz(handle, world, rec, every=1, single=False, extra=None):
    rows = _kept(every, len(rec.t))
    rec = _decimated(rec, rows, np.float32 if single else None)
    np.savez(
        handle,
        t=rec.t,
        body_names=np.array(world.body_names[1:], dtype=str),  # without the fixed world body
        body_pos=rec.body_pos[:, 1:],
        body_quat=rec.body_quat[:, 1:],
        joint_names=np.array(world.joint_names, dtype=str),
        joint_types=np.array(world.joint_types, dtype=str),
        joint_coord=rec.joint[:, :, 0],
        joint_velocity=rec.joint[:, :, 1],
        joint_friction=rec.joint[:, :, 2],
        joint_sliding=rec.joint[:, :, 3] > 0.5,
        motor_joints=np.array([world.joint_names[j] for j in world.motor_state["joint"]],
                              dtype=str),
        **{f"motor_{column}": (rec.motor[:, :, k] if rec.motor is not None and rec.motor.size
                               else np.zeros((len(rec.t), 0)))
           for k, column in enumerate(("voltage", "current", "torque", "speed"))},
        joint_reaction=rec.joint[:, :, REACTION_FIRST:REACTION_FIRST + len(REACTION_CHANNELS)],
        contact_bodies=np.array([world.body_names[i] for i in rec.contact_bodies], dtype=str),
        contact_force=rec.contact,
        **(extra or {}),   # what 'sharnir replay' reads (app.film)
    )


# --- summary ----------------------------------------------------------------------------


def _summary(scene, world, rec):
    """The run's numbers as plain JSON-ready values (SI units, radians)."""
    steps = len(rec.t)
    iterations = rec.stats[:, STAT_ITERATIONS]
    final = rec.joint[-1]
    return {
        "scene": str(scene),
        "steps": steps,
        "dt": world.dt,
        "sim_time": float(rec.t[-1]),
        "wall_s": rec.wall_s,
        "steps_per_s": steps / rec.wall_s if rec.wall_s > 0 else None,
        "mean_iterations": float(iterations.mean()),
        "max_iterations": int(iterations.max()),
        "joints": {
            name: {
                "type": world.joint_types[j],
                "coordinate_name": world.joint_coord_name(j),
                "coordinate": float(final[j, 0]),
                "velocity": float(final[j, 1]),
                "friction": float(final[j, 2]),
                "sliding": bool(final[j, 3] > 0.5),
            }
            for j, name in enumerate(world.joint_names)
        },
    }


def _json_ready(value):
    """`value` with every non-finite float as None: JSON has no NaN or infinity, and a
    reader of the last line must always get valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    return value


def _format_summary(s):
    """The summary for people: degrees next to radians, units on every number."""
    speed = f"{s['steps_per_s']:.0f} steps/s" if s["steps_per_s"] else "too fast to time"
    lines = [
        f"scene        {s['scene']}",
        f"steps        {s['steps']} x {s['dt']:g} s = {s['sim_time']:g} s simulated",
        f"wall time    {s['wall_s']:.4g} s stepping ({speed})",
        f"iterations   mean {s['mean_iterations']:.2f}, max {s['max_iterations']} per step",
    ]
    if not s["joints"]:
        return "\n".join(lines)
    rows = [("joint", "type", "final coordinate", "velocity", "friction", "")]
    for name, j in s["joints"].items():
        rows.append((name, j["type"], *_joint_cells(j)))
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines.append("")
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _joint_cells(j):
    if JOINT_TYPE_INFO[j["type"]].dofs == 0:   # no free motion (physics.joint.JOINT_TABLE)
        return "welded", "", "", ""
    state = "sliding" if j["sliding"] else "stuck"
    if j["coordinate_name"] == "position":
        return (f"{j['coordinate']:.6g} m", f"{j['velocity']:.4g} m/s", f"{j['friction']:.4g} N",
                state)
    angle = j["coordinate"]
    return (f"{math.degrees(angle):.3f} deg ({angle:.6g} rad)", f"{j['velocity']:.4g} rad/s",
            f"{j['friction']:.4g} N m", state)


if __name__ == "__main__":
    sys.exit(main())
