"""How many threads a step may use: the `threads` setting.

* n > 0: n threads (at most NUMBA_NUM_THREADS, numba's pool, which defaults to the
  machine's cores);
* 0, the default: every core, while that is faster than one. The results are the same bits
  for any count (partition.py), so the count may change between any two kernel calls: a
  World measures its steps' time on each count (`Choice`) and keeps the faster. It matters
  where the cores are shared: a thread that waits for a core another process holds stalls
  every parallel loop of the step (each ends at a barrier), and a step on two busy cores
  measured up to 5x slower than on one.

numba keeps the count per calling thread (numba.set_num_threads), so it is set in the thread
that steps, before each kernel call (physics/guard.py). With one thread no parallel region is
entered at all, which is what keeps a process forked after others used threads (the sweep's
pool workers: app/sweep.py) safe from GNU OpenMP, which aborts a forked child that launches
one."""
import os

import numba

# An idle thread of numba's OpenMP pool spins SPIN_COUNT times before it sleeps (GNU OpenMP
# reads this when it loads, which numba does when a step first uses threads; a user's own
# GOMP_SPINCOUNT or OMP_WAIT_POLICY is kept). Each parallel loop of a step ends at a barrier,
# and the next starts a few us later: a short spin catches it, a long one holds a core that
# the thread it waits for needs when the cores are shared. Measured on the pyramid on 2
# threads (2 cores; seconds for 200 steps, against 0.25 on one thread), while another process
# kept one core busy: 34-74 spinning as libgomp does by default (300,000), 5.5 at 10,000,
# 0.87 at 1,000, 0.48 at 200, 0.40 never spinning (passive). On the quiet machine (400 steps;
# 0.50-0.67 on one thread): 0.42-0.53 by default, 0.42-0.64 at 2,000, 0.53-0.71 at 300,
# 0.76-1.18 passive. Where threads lose, the setting 0 runs on one (Choice).
SPIN_COUNT = 2000
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)

# numba's threading layer is started here, when Sharnir is imported, not when a step first
# asks for threads. A kernel that calls a parallel one (step_many calls the contact phases)
# holds the parallel code's calls into that layer; numba starts the layer when such a kernel
# is loaded from its cache only if the process that compiled it compiled a parallel callee too
# (numba's reload_init, numba issue #8578). A step_many compiled in a process that loaded all
# its parallel callees from the cache carries no such note, and loaded before the layer was
# started, its calls went to address 0: a segmentation fault (seen in CI: every `sharnir run`
# child of the test suite; tests/test_physics_threads.py builds that case). Starting the layer
# loads GNU OpenMP and sets its thread count; no thread starts and no parallel region is
# entered, so a process forked afterwards is as safe as before.
numba.get_num_threads()

_CAP = [0]   # a process-wide cap (0: none): the sweep's pool workers take one thread each


def available():
    """The most threads a step can use in this process."""
    n = int(numba.config.NUMBA_NUM_THREADS)
    return min(n, _CAP[0]) if _CAP[0] > 0 else n


def cap(n):
    """Let no step of this process use more than n threads (0: no cap)."""
    _CAP[0] = int(n)


def count(requested):
    """The threads a step runs on for a setting of n > 0 (0: all available)."""
    return max(1, available() if requested <= 0 else min(int(requested), available()))


def use(n):
    """Set the calling thread's count for the kernels it calls next."""
    if numba.get_num_threads() != n:
        numba.set_num_threads(n)


class Choice:
    """For the setting 0: the count a World's next kernel call runs on, one thread or all,
    whichever its calls measured faster per step (a running mean), the other tried again for
    one call after PROBE_S seconds of stepping, twice as long after each try it loses (at
    most PROBE_MAX_S: a try on busy cores may take several times as long)."""

    PROBE_S = 2.0       # s of stepping between two tries of the count not in use ...
    PROBE_MAX_S = 32.0  # ... doubled after each lost try, up to this
    WEIGHT = 0.25       # of a new measurement in the running mean

    def __init__(self):
        self.per_step = {}     # count -> running mean of the seconds a step took
        self.current = None    # the count in use
        self.since_probe = 0.0
        self.probing = None    # the count being tried: its mean starts afresh
        self.calls = 0
        self.wait = self.PROBE_S

    def pick(self, requested):
        if requested > 0:
            return count(requested)
        most = count(0)
        if most == 1:
            return 1
        if self.current not in (1, most):
            self.current = most
        other = 1 if self.current == most else most
        if other not in self.per_step or self.since_probe >= self.wait:
            self.since_probe = 0.0
            self.probing = other
            return other
        return self.current

    def record(self, n, seconds, steps):
        """A call ran `steps` steps on n threads in `seconds`."""
        self.calls += 1
        if steps <= 0 or self.calls == 1:   # (the first call may have loaded the kernels)
            return
        each = seconds / steps
        tried = n == self.probing
        old = None if tried else self.per_step.get(n)
        self.probing = None
        self.per_step[n] = each if old is None else old + self.WEIGHT * (each - old)
        self.since_probe += seconds
        if len(self.per_step) > 1:
            best = min(self.per_step, key=self.per_step.get)
            if tried:   # a lost try waits twice as long for the next
                self.wait = (self.PROBE_S if best == n
                             else min(2.0 * self.wait, self.PROBE_MAX_S))
            self.current = best
