"""Atomic operations on int64 array elements, for threads that share work inside one parallel
region (contact_solver.py: the sweeps of a solve, claimed unit by unit).

numba has no atomics; these are LLVM's, emitted by numba intrinsics: a load with acquire
order, a fetch-and-add with acquire-release order, and the CPU's spin-wait hint. A thread that
reads a counter with `load_acquire` sees every write made before the `fetch_add` that set it
(the release half), on any CPU; on x86 they compile to plain moves and `lock xadd`.

A wait loop calls `relax` each turn: first the spin-wait hint, then (after WAIT_SPINS turns)
it yields its core: a thread waiting for one that the OS has taken off its core must not keep
that core from it (the cores may be shared with other processes).
"""
import platform
import sys

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import INLINE

WAIT_SPINS = 4000   # reads with the spin-wait hint before a waiting thread yields its core
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


def _pointer(context, builder, signature, args):
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]])


@intrinsic
def load_acquire(typingctx, a, i):
    """a[i] (an int64 array), read with acquire order."""
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_pointer(context, builder, signature, args), "acquire", 8)
    return types.int64(a, i), codegen


@intrinsic
def fetch_add(typingctx, a, i, v):
    """a[i] += v atomically (acquire-release order); returns the value before."""
    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _pointer(context, builder, signature, args), args[2],
                                  "acq_rel")
    return types.int64(a, i, types.int64), codegen


@intrinsic
def _spin_hint(typingctx):
    """x86's `pause` (elsewhere nothing): a spinning read loop that leaves the core's other
    work its share and does not flood the memory system."""
    def codegen(context, builder, signature, args):
        if _X86:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def _yield_core(typingctx):
    def codegen(context, builder, signature, args):
        name = "SwitchToThread" if sys.platform == "win32" else "sched_yield"
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), name)
        builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@njit(**INLINE)
def relax(spins):
    """One turn of a wait loop that has turned `spins` times: the spin-wait hint, or after
    WAIT_SPINS turns the core given up to whatever else waits for it; returns spins + 1."""
    if spins < WAIT_SPINS:
        _spin_hint()
    else:
        _yield_core()
    return spins + 1
