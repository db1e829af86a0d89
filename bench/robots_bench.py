"""Robots: steps per second of the biped and door_push, the cost of a Python controller hook,
and one IK solve.

    .venv/bin/python bench/robots_bench.py           # ~1 min
    .venv/bin/python bench/robots_bench.py --quick

* biped (dt 1/240, 20 iterations, contacts and 13 motors): standing, stepped by the kernel
  alone (its behaviour removed), and with its valve_turn behaviour (a Python hook before
  every step, IK at 60 Hz) over the turn;
* door_push: the whole 3 s;
* the hook's own cost: the door stepped with an empty hook against without one;
* ArmIK.solve on the biped's 3-joint arm (converged from a moved target).
Each figure is the best of `runs` (world.run's wall time, after a warm-up). Writes the
`## Robots` section of bench/results.md (bench/run.py keeps it). Issue 11's reference: MuJoCo
steps its 16-body humanoid at about 25,000-55,000 steps/s on this machine class.
"""
import argparse
import time

import numpy as np
from run import machine, write_section

from sharnir.physics.ik import ArmIK, joint_chain
from sharnir.scenes.loader import load_scene

SECTION = "## Robots"


def steps_per_s(make, steps, runs, warm=10):
    best = 0.0
    for _ in range(runs):
        world = make()
        world.run(warm)
        rec = world.run(steps)
        best = max(best, steps / rec.wall_s)
    return best


def biped_standing():
    w = load_scene("biped")
    w.set_hook(None)
    return w


def biped_turning():
    w = load_scene("biped")
    hook = w.hook
    hook.stand = 0.2      # the same timeline, without the 30 s of standing first
    return w


def door_hooked(hook):
    def make():
        w = load_scene("door")
        w.set_hook(hook)
        return w
    return make


def ik_solve_us(runs):
    w = load_scene("biped")
    w.step(1)
    ik = ArmIK(w, joint_chain(w, "torso", "left_forearm"), "left_forearm", point=(0.165, 0, 0))
    p, _ = ik.end_pose()
    best = np.inf
    for _ in range(runs):
        t0 = time.perf_counter()
        for k in range(100):
            ik.solve(p + np.array([0.05, 0.02 * (k % 3), 0.05]), iterations=20, tol=1e-5)
        best = min(best, (time.perf_counter() - t0) / 100)
    return best * 1e6, ik.iterations


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 1 if args.quick else 3
    n = 480 if args.quick else 2400
    rows = [
        ("biped standing, kernel only", steps_per_s(biped_standing, n, runs)),
        ("biped turning the valve, with its hook", steps_per_s(biped_turning, 2400, runs)),
        ("door_push (3 s)", steps_per_s(lambda: load_scene("door_push"), 720, runs)),
        ("door, no hook", steps_per_s(door_hooked(None), n, runs)),
        ("door, an empty hook every step", steps_per_s(door_hooked(lambda w: None), n, runs)),
    ]
    us, iters = ik_solve_us(runs)
    m = machine()
    no_hook, hooked = rows[3][1], rows[4][1]
    text = [SECTION, "",
            f"Machine: {m['cpu']}, {m['cpus']} CPUs; commit {m['commit']}; {m['date_utc']}. "
            "Best of %d runs, world.run wall time after a warm-up." % runs, "",
            "| what | steps/s |", "|---|---|"]
    text += [f"| {name} | {rate:,.0f} |" for name, rate in rows]
    text += ["",
             f"A Python hook costs {1e6 * (1 / hooked - 1 / no_hook):.1f} us per step on its own "
             "(one kernel call per step instead of one per batch, plus the call), before "
             "whatever the hook does.",
             f"ArmIK.solve, 3-joint arm: {us:.0f} us per solve ({iters} iterations on the last).",
             "MuJoCo steps its 16-body humanoid at about 25,000-55,000 steps/s on this machine "
             "class (issue 11)."]
    out = "\n".join(text) + "\n"
    write_section(SECTION, out)
    print(out)


if __name__ == "__main__":
    main()
