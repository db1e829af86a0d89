"""MuJoCo's own humanoid (tests/fixtures/mjcf/humanoid.xml) in MuJoCo and in Sharnir, side by
side in one run: the same file, the same dt (its 5 ms), zero control from its initial pose (it
falls). A curve of speed against one step's solve error for both engines:

* MuJoCo with its default solver (Newton) and its projected Gauss-Seidel (PGS, the class of
  solver Sharnir's sequential impulses belong to) at several tolerances (1e-8 is its default),
  PGS also with a fixed number of iterations (tolerance 0); each on the file's model and on a
  near-hard one: every contact's, joint limit's and tendon limit's solimp dmin, dmax set to
  0.99, 0.999 (the file's width, midpoint, power and solref kept), the constraint model
  closest to Sharnir's hard contacts and limits.
* Sharnir at its default and at several iteration counts; and, where the solver has the
  `articulation` setting, the same for `solver.articulation=tree`.

    .venv/bin/python bench/humanoid_bench.py                  # ~40 s on 2 cores
    .venv/bin/python bench/humanoid_bench.py --quick          # fewer settings, 1 run each
                                                              # (~20 s)
    .venv/bin/python bench/humanoid_bench.py --only-sharnir   # no MuJoCo; prints only

For each: steps per second (best of `runs`, after a warm-up; MuJoCo's mj_step loop in Python,
in a fresh process; Sharnir's world.run, one kernel call), the solver's iterations a step
(mean over the second), how far one step's solve is from converged, and the height of the
torso's frame after 1 s (its origin: Sharnir merges the welded head into the torso, which
moves the merged body's centre).
The solve error: from 8 states along the row's own fall (every 25 steps), one step at the
row's setting and one with a tight solve of the same model, the largest difference of a
body's velocity or angular velocity after it (m/s or rad/s), median over the 8. The tight
solve (the reference): MuJoCo's Newton at tolerance 1e-15, at most 1000 iterations, of the
same model variant; Sharnir's own mode at REFERENCE_ITERATIONS iterations and tolerance 0.
Each row also gives its reference's own residual (largest over the 8 reference steps): for
Sharnir the last iteration's largest impulse change (N s), for MuJoCo Newton's last gradient
norm (its scaled units). Last, how far the bodies are after 1 s from where the engine's
reference run puts them (Sharnir: its 1000-iteration run of the same mode; MuJoCo: the
reference solver over the whole second, same variant); a fall is chaotic: this mixes
convergence with divergence.
Writes the `## MuJoCo's humanoid` section of bench/results.md (bench/run.py keeps it), except
with --only-sharnir, which prints the table only.
"""
import argparse
import copy
import inspect
import subprocess
import sys
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np
from run import machine, write_section

from sharnir.physics.model import STAT_ITERATIONS
from sharnir.scenes.loader import load_scene

SECTION = "## MuJoCo's humanoid"
HUMANOID = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mjcf" / "humanoid.xml"
STEPS = 200   # 1 s at 5 ms
STATE_EVERY = 25   # steps between the states the solve error is measured from
STATES = 8
REFERENCE_ITERATIONS = 10_000   # Sharnir's reference solve (tolerance 0); the setting's cap
REFERENCE_CHECK = 3000   # the reference's own convergence: its change from this many iterations
MUJOCO_REFERENCE = (mujoco.mjtSolver.mjSOL_NEWTON, 1e-15, 1000)   # solver, tolerance, cap
BOUNDS = (1.5e-5, 1e-8)   # the summary's solve-error bounds
NEWTON, PGS = mujoco.mjtSolver.mjSOL_NEWTON, mujoco.mjtSolver.mjSOL_PGS
SOLVER_NAMES = {int(NEWTON): "Newton", int(PGS): "PGS"}

# MuJoCo's settings: (solver, tolerance, iteration cap); tolerance 0 runs the cap
MUJOCO_SETTINGS = [(NEWTON, t, 100) for t in (1e-8, 1e-4, 1e-6, 1e-10)] + \
                  [(PGS, t, 100) for t in (1e-8, 1e-4, 1e-6, 1e-10)] + \
                  [(PGS, 1e-12, 1000)] + [(PGS, 0.0, n) for n in (5, 10, 20, 50, 200, 500)]
MUJOCO_QUICK = [(NEWTON, 1e-8, 100), (NEWTON, 1e-4, 100),
                (PGS, 1e-8, 100), (PGS, 1e-4, 100), (PGS, 1e-10, 100), (PGS, 0.0, 10),
                (PGS, 0.0, 200)]
# Sharnir's iteration counts per articulation mode (None: the scene's default); 1000 is also
# the reference of the body gap at 1 s
SHARNIR_ITERATIONS = {"sweep": (None, 10, 20, 50, 200, 500, 1000),
                      "tree": (None, 1, 2, 5, 10, 20, 1000)}
SHARNIR_QUICK = {"sweep": (None, 20, 50, 200, 1000), "tree": (None, 1, 5, 20, 1000)}
GAP_ITERATIONS = 1000


def _harden(m):
    """Near-hard contacts and limits: solimp dmin, dmax 0.99, 0.999 for every geom (a contact
    mixes its two geoms'), joint limit and tendon limit; width, midpoint, power kept."""
    for solimp in (m.geom_solimp, m.jnt_solimp, m.tendon_solimp_lim):
        solimp[:, 0] = 0.99
        solimp[:, 1] = 0.999


MUJOCO_TIMING = """
import sys, time, mujoco
{harden}
m = mujoco.MjModel.from_xml_path(sys.argv[1])
if int(sys.argv[2]):
    _harden(m)
m.opt.solver, m.opt.tolerance, m.opt.iterations = (int(sys.argv[3]), float(sys.argv[4]),
                                                   int(sys.argv[5]))
best = 0.0
for _ in range(int(sys.argv[6])):
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d)
    mujoco.mj_resetData(m, d)
    t0 = time.perf_counter()
    for _ in range({steps}):
        mujoco.mj_step(m, d)
    best = max(best, {steps} / (time.perf_counter() - t0))
print(best)
"""


def _mujoco_model(hard, setting=None):
    m = mujoco.MjModel.from_xml_path(str(HUMANOID))
    if hard:
        _harden(m)
    if setting is not None:
        m.opt.solver, m.opt.tolerance, m.opt.iterations = setting
    return m


def _niter(d):
    """Iterations of the last solve (the largest over MuJoCo's islands)."""
    return int(d.solver_niter[:max(int(d.nisland), 1)].max())


def _last_gradient(d):
    """Newton's gradient norm after its last iteration (the largest over MuJoCo's islands)."""
    return max((float(d.solver[i * mujoco.mjNSOLVER + int(n) - 1].gradient)
                for i, n in enumerate(d.solver_niter[:max(int(d.nisland), 1)]) if n),
               default=0.0)


def mujoco_reference_pos(hard):
    """Body frame positions after 1 s with the reference solver (the body gap's reference)."""
    m = _mujoco_model(hard, MUJOCO_REFERENCE)
    d = mujoco.MjData(m)
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
    return d.xpos[1:].copy()


def mujoco_run(runs, hard, setting, ref_pos):
    """MuJoCo timed in a process of its own (in this one, with Sharnir's libraries loaded,
    its step loop was measured at 30,000-42,000 steps/s where a fresh process gives ~45,000:
    the fresh process is its best case), the rest measured here."""
    solver, tolerance, cap = setting
    script = MUJOCO_TIMING.format(steps=STEPS, harden=inspect.getsource(_harden))
    out = subprocess.run([sys.executable, "-c", script, str(HUMANOID), str(int(hard)),
                          str(int(solver)), repr(float(tolerance)), str(cap), str(runs)],
                         capture_output=True, text=True, check=True)
    best = float(out.stdout.strip())
    m = _mujoco_model(hard, setting)
    d = mujoco.MjData(m)
    count = 0
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
        count += _niter(d)
    height = float(d.xpos[m.body("torso").id][2])   # the torso frame (its origin)
    gap = float(np.abs(d.xpos[1:] - ref_pos).max())
    err, ref_residual = _mujoco_error(m)
    return dict(rate=best, iters=count / STEPS, err=err, ref=ref_residual, ref_change=None,
                z=height, gap=gap, unstable=_unstable(d))


def _unstable(d):
    """Whether MuJoCo found a non-finite or huge state in the run (it resets the data then:
    the row's numbers are not a solve of the fall)."""
    return any(d.warning[w].number for w in (mujoco.mjtWarning.mjWARN_BADQPOS,
                                             mujoco.mjtWarning.mjWARN_BADQVEL,
                                             mujoco.mjtWarning.mjWARN_BADQACC))


def _mujoco_velocities(m, d):
    out, v = np.zeros((m.nbody - 1, 6)), np.zeros(6)
    for b in range(1, m.nbody):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, v, 0)
        out[b - 1] = v
    return out


def _mujoco_error(m):
    """Median over 8 states along the fall of one step's largest body velocity error; and the
    reference solves' largest final gradient norm."""
    d = mujoco.MjData(m)
    states = []
    for _ in range(STATES):
        for _ in range(STATE_EVERY):
            mujoco.mj_step(m, d)
        states.append((d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy(), d.time))
    keep = (m.opt.solver, m.opt.tolerance, m.opt.iterations)

    def one(st, setting):
        m.opt.solver, m.opt.tolerance, m.opt.iterations = setting
        d2 = mujoco.MjData(m)
        d2.qpos[:], d2.qvel[:], d2.qacc_warmstart[:], d2.time = st
        mujoco.mj_step(m, d2)
        residual = _last_gradient(d2)
        mujoco.mj_forward(m, d2)   # (the velocities of the step's end)
        return _mujoco_velocities(m, d2), residual

    errors, residuals = [], []
    for st in states:
        v, _ = one(st, keep)
        v_ref, residual = one(st, MUJOCO_REFERENCE)
        errors.append(np.abs(v - v_ref).max())
        residuals.append(residual)
    m.opt.solver, m.opt.tolerance, m.opt.iterations = keep
    return float(np.median(errors)), float(max(residuals))


def sharnir_run(runs, mode_sets, iterations):
    best, height, pos, iters = 0.0, None, None, None
    _fresh(mode_sets, iterations).run(1)   # compiled (cached after the first run)
    for _ in range(runs):
        w = _fresh(mode_sets, iterations)
        t0 = time.perf_counter()
        rec = w.run(STEPS)
        best = max(best, STEPS / (time.perf_counter() - t0))
        height = float(w.body_reference_pose("torso")[0][2])   # the MuJoCo torso frame
        pos = np.array(w.body_pos)
        iters = float(rec.stats[:, STAT_ITERATIONS].mean())
    err, ref_residual, ref_iters, ref_change = _sharnir_error(mode_sets, iterations)
    return dict(rate=best, iters=iters, err=err, ref=ref_residual, ref_iters=ref_iters,
                ref_change=ref_change, z=height, pos=pos, unstable=False)


def _sharnir_error(mode_sets, iterations):
    """As _mujoco_error: one step at the setting against one of REFERENCE_ITERATIONS
    iterations at tolerance 0 in the same mode (both with no position sweeps: they do not
    change velocities). Also, of the reference steps: the largest final residual (N s), the
    most iterations (world.solver_stats after the step) and the reference's own change from a
    REFERENCE_CHECK-iteration solve (median and largest over the states; m/s or rad/s): where
    it is not far below the error, the reference has not converged either."""
    w = _fresh(mode_sets, iterations)
    errors, residuals, used, changes = [], [], [], []
    for _ in range(STATES):
        w.run(STATE_EVERY)
        out = []
        for setting in ({}, {"iterations": REFERENCE_CHECK, "tolerance": 0.0},
                        {"iterations": REFERENCE_ITERATIONS, "tolerance": 0.0}):
            t = copy.deepcopy(w)
            t.configure(position_iterations=0, **setting)
            t.step()
            out.append(np.hstack([np.array(t.body_vel), np.array(t.body_angvel)]))
        stats = t.solver_stats   # the reference's
        residuals.append(stats["residual"])
        used.append(stats["iterations"])
        errors.append(np.abs(out[0] - out[2]).max())
        changes.append(np.abs(out[1] - out[2]).max())
    return (float(np.median(errors)), float(max(residuals)), int(max(used)),
            (float(np.median(changes)), float(max(changes))))


def _fresh(mode_sets, iterations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sets = list(mode_sets) + (
            [] if iterations is None else [f"solver.iterations={iterations}"])
        return load_scene(HUMANOID, sets)


def tree_mode():
    """(True, "") if the scene loader takes solver.articulation=tree, else (False, why)."""
    try:
        w = _fresh(["solver.articulation=tree"], None)
    except Exception as e:   # whatever the loader raises for an unknown key
        why = str(e).strip().replace(str(HUMANOID), HUMANOID.name).splitlines()
        return False, f"{type(e).__name__}: {why[0] if why else ''}"
    if w.settings.get("articulation") not in (None, "tree"):
        return False, f"loaded, but the world's articulation is {w.settings['articulation']!r}"
    return True, ""


def _fmt_tol(t):
    return "0" if t == 0 else f"{t:.0e}".replace("e-0", "e-")


def _row(engine, model, solver, setting, r, gap_text):
    change = "" if r["ref_change"] is None else "{:.1e} / {:.1e}".format(*r["ref_change"])
    if r["unstable"]:
        setting += ", **unstable: MuJoCo reset it**"
    return (f"| {engine} | {model} | {solver} | {setting} | {r['rate']:,.0f} | "
            f"{r['iters']:.1f} | {r['err']:.1e} | {r['ref']:.1e} | {change} | {r['z']:.3f} | "
            f"{gap_text} |")


def _fastest(rows, bound):
    ok = [r for r in rows if r["err"] <= bound and not r["unstable"]]
    return max(ok, key=lambda r: r["rate"]) if ok else None


def summary(sharnir, mujoco_rows):
    """For each Sharnir mode and error bound: its fastest setting within the bound beside
    MuJoCo's fastest PGS and Newton setting (each model variant) within it, as ratios."""
    lines = []
    for mode, rows in sharnir.items():
        for bound in BOUNDS:
            best = _fastest(rows, bound)
            head = (f"- Solve error <= {bound:.1e}, Sharnir {mode}: "
                    + ("none" if best is None else
                       f"{best['label']}, {best['rate']:,.0f} steps/s"
                       + (f" (but its reference's own median change, "
                          f"{best['ref_change'][0]:.1e}, is not below a tenth of the bound)"
                          if best["ref_change"][0] > 0.1 * bound else "")))
            parts = []
            for hard in (False, True):
                for solver in (PGS, NEWTON):
                    pick = _fastest([r for r in mujoco_rows
                                     if r["hard"] == hard and r["solver"] == solver], bound)
                    name = (f"MuJoCo {SOLVER_NAMES[int(solver)]}"
                            f" ({'near-hard' if hard else 'file model'})")
                    if not mujoco_rows:
                        continue
                    if pick is None:
                        parts.append(f"{name}: none")
                    elif best is None:
                        parts.append(f"{name}: {pick['label']}, {pick['rate']:,.0f}")
                    else:
                        parts.append(f"{best['rate'] / pick['rate']:.2f}x {name} "
                                     f"({pick['label']}, {pick['rate']:,.0f})")
            lines.append(head + ("; " + "; ".join(parts) if parts else "") + ".")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1 run each, fewer settings")
    parser.add_argument("--only-sharnir", action="store_true",
                        help="skip MuJoCo; print the table, leave bench/results.md as it is")
    args = parser.parse_args()
    start = time.perf_counter()
    runs = 1 if args.quick else 3
    world = _fresh([], None)
    default_iters = world.settings["iterations"]
    default_tol = world.settings["tolerance"]
    extra = sum("." in name for name in world.body_names)   # intermediate bodies

    def note(msg):
        print(f"[{time.perf_counter() - start:6.1f} s] {msg}", file=sys.stderr, flush=True)

    table = []
    mujoco_rows = []
    if not args.only_sharnir:
        m0 = _mujoco_model(False)
        version = mujoco.__version__
        for hard in (False, True):
            ref_pos = mujoco_reference_pos(hard)
            model = "near-hard (solimp 0.99, 0.999)" if hard else "the file's (soft)"
            for setting in (MUJOCO_QUICK if args.quick else MUJOCO_SETTINGS):
                solver, tol, cap = setting
                r = mujoco_run(runs, hard, setting, ref_pos)
                default = (int(solver) == int(m0.opt.solver) and tol == m0.opt.tolerance
                           and cap == m0.opt.iterations)
                r["label"] = (f"{cap} iterations" if tol == 0 else
                              f"tolerance {_fmt_tol(tol)}") + (", its default" if default
                                                               else "")
                r.update(hard=hard, solver=solver)
                mujoco_rows.append(r)
                text = (f"{cap} iterations, tolerance 0" if tol == 0
                        else f"tolerance {_fmt_tol(tol)}, at most {cap} iterations")
                table.append(_row(f"MuJoCo {version}", model, SOLVER_NAMES[int(solver)],
                                  text + (" (its default)" if default else ""), r,
                                  f"{r['gap']:.1e}"))
                note(table[-1])

    modes = {"sweep": []}
    has_tree, why = tree_mode()
    tree_line = ("solver.articulation=tree: available, its rows included" if has_tree else
                 f"solver.articulation=tree: not available ({why}); the tree rows skipped")
    print(tree_line, flush=True)
    if has_tree:
        modes["tree"] = ["solver.articulation=tree"]
        modes["sweep"] = ["solver.articulation=sweep"]
    sharnir = {}
    refs = {}
    for mode, mode_sets in modes.items():
        results = {}
        for iters in (SHARNIR_QUICK if args.quick else SHARNIR_ITERATIONS)[mode]:
            results[iters] = sharnir_run(runs, mode_sets, iters)
            note(f"Sharnir {mode}, {iters or 'default'} iterations: "
                 f"{results[iters]['rate']:,.0f} steps/s, error {results[iters]['err']:.1e}")
        gap_ref = results[GAP_ITERATIONS]["pos"]
        rows = []
        for iters, r in results.items():
            n = default_iters if iters is None else iters
            r["label"] = f"{n} iterations" + (", its default" if iters is None else "")
            rows.append(r)
            gap = "" if iters == GAP_ITERATIONS else f"{np.abs(r['pos'] - gap_ref).max():.1e}"
            table.append(_row("Sharnir", "hard", mode,
                              f"{n} iterations, tolerance {_fmt_tol(default_tol)}"
                              + (" (its default)" if iters is None else ""), r, gap))
        sharnir[mode] = rows
        refs[mode] = (max(r["ref"] for r in rows), max(r["ref_iters"] for r in rows))

    m = machine()
    ref_text = "; ".join(f"{mode}: largest {res:.1e} N s after {it} iterations"
                         for mode, (res, it) in refs.items())
    text = [SECTION, "",
            f"Machine: {m['cpu']}, {m['cpus']} CPUs; commit {m['commit']}"
            + (" + local changes" if m["dirty"] else "") + f"; {m['date_utc']}. "
            f"The same file, dt 5 ms, zero control, {STEPS} steps (1 s) from its initial pose; "
            f"best of {runs} runs, all measured in this run. Solve error: one step's largest "
            "body velocity error against a tight solve of the same step and model (m/s or "
            f"rad/s, median over {STATES} states along the row's fall; "
            "bench/humanoid_bench.py). The tight solve (the reference): MuJoCo's Newton at "
            "tolerance 1e-15, at most 1000 iterations, on the same model variant (its residual "
            "column: Newton's last gradient norm, MuJoCo's scaled units); Sharnir's same mode "
            f"at {REFERENCE_ITERATIONS} iterations, tolerance 0 (its residual column: the last "
            f"iteration's largest impulse change, N s; {ref_text}; and how far the reference's "
            f"velocities are from a {REFERENCE_CHECK}-iteration solve's, m/s or rad/s: where "
            "that is not far below a row's error, the reference has not converged either). "
            "MuJoCo's near-hard model sets every geom's (so every contact's), joint limit's "
            "and tendon limit's solimp "
            "dmin, dmax to 0.99, 0.999, keeping the file's width, midpoint, power and solref "
            "(time constant 0.015 s on the body geoms, MuJoCo's default 0.02 s on the floor and "
            "the limits: at least 2 dt, as MuJoCo asks; solref sets how fast a violation is "
            "corrected, solimp the constraint's softness, its regularisation). The body gap at "
            "1 s is to the engine's reference run: Sharnir's 1000 iterations in the same mode, "
            "MuJoCo's reference solver over the whole second on the same variant.", ""]
    if not has_tree:
        text += [f"Sharnir's `{tree_line}`.", ""]
    text += ["| engine | contacts, limits | solver | setting | steps/s | iterations a step "
             "| solve error a step | reference residual "
             f"| reference's change from {REFERENCE_CHECK} iterations (median / max) "
             "| torso frame height at 1 s (m) | largest body gap at 1 s to the reference run "
             "(m) |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    text += table
    text += ["", "Fastest setting within each solve-error bound (Sharnir's steps/s over "
             "MuJoCo's):", ""]
    text += summary(sharnir, mujoco_rows)
    text += ["", f"Sharnir's bodies include {extra} intermediate bodies for the bodies whose "
             "joints do not compose (scenes/mjcf.py, physics/gimbal.py); its contacts and "
             "limits are hard, MuJoCo's soft in the file's model; MuJoCo's two hamstring "
             "tendons are Sharnir's limited couplings (physics/coupling.py), hard too."]
    out = "\n".join(text) + "\n"
    if not args.only_sharnir:
        write_section(SECTION, out)
    print(out)
    note(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
