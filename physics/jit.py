"""How the physics kernels are compiled (the options every njit in physics/ takes), in one place.

KERNEL: nopython, without the GIL, cached on disk, and without numba's reference counting
(its runtime, NRT). The kernels take named tuples of about 40 arrays each; with reference
counting, each call from one kernel to another increments and decrements the count of every
array it is handed (atomic operations) wherever numba's pruning pass cannot prove the pair
redundant (an early return or a raise path is enough). Measured on the biped (117 arrays in
model, state and work): a call to the drag stage that does nothing cost 0.78 us with counting
and 0.004 us without; such calls were over half of a step outside the velocity solve.

Without counting a kernel must not allocate an array (np.empty, copy(), a returned array):
every array lives in the model, state, work and contact tuples that Python owns for the
whole call. The one kernel that needs scratch (EPA's polytope) is ALLOCATING, which keeps
the counting for itself; it frees what it allocates before it returns.

KERNEL has no CPython wrapper (and no C-callable one): the code numba generates to unbox
every argument from Python objects, per kernel. A kernel that takes the tuples unboxes ~180
arrays in it, so the wrappers were about half of the first compile (the door: 114 s with them,
60 s without, side by side). Such a kernel can only be called from another kernel: called from
Python it crashes the interpreter. ENTRY keeps the wrapper, for the few kernels Python calls
(step_many, and those the tests call directly); tests/test_physics_kernels.py finds every
kernel that Python code names and checks that it is an ENTRY.

STAGE: a stage of the step that takes the whole tuples and runs long loops (the velocity and
position solves), inlined into the step at numba's IR level. numba passes a tuple by value,
one argument per field (about 1,500 fields on the biped: each array's data pointer, shape,
strides...), and a call copies them all on the stack. Measured with perf on the biped, the
copies before the two solves' calls took over half the step's own time and varied 44-68 us a
step with unrelated edits to the step; inlined, the step took 42 us.
"""
from numba import njit

ENTRY = dict(nogil=True, cache=True, _nrt=False)   # called from Python
KERNEL = dict(ENTRY, no_cpython_wrapper=True, no_cfunc_wrapper=True)   # only from kernels
# small helpers inlined at numba's IR level: never compiled on their own, so nothing to cache
# (numba's cache set-up per function was a tenth of importing physics/)
INLINE = dict(KERNEL, inline="always", cache=False)
STAGE = INLINE                               # (see above: the tuples passed by value)
ALLOCATING = dict(KERNEL, _nrt=True)   # (explicit: callees inherit it)
# a loop over units that threads run at once (numba.prange; partition.py): only the loop, its
# body a KERNEL call (numba compiles a parallel function's loops apart, slowly)
PARALLEL = dict(KERNEL, parallel=True)


@njit(**INLINE)
def copy_rows(dst, src):
    """dst[:] = src for 2-D arrays of one shape, without the temporary numba makes (it must
    allocate to guard against overlap, and KERNEL does not allocate)."""
    for i in range(dst.shape[0]):
        for q in range(dst.shape[1]):
            dst[i, q] = src[i, q]
