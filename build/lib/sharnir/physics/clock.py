"""A monotonic wall clock readable inside nopython kernels (for the solver's time budget).

numba has no `time` module; a ctypes call would pin a process-specific address and defeat
caching. This intrinsic declares libc's `clock_gettime` by name, so the compiled kernel links
against it by symbol and stays cacheable.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_CLOCK_MONOTONIC = 1


@intrinsic
def monotonic_seconds(typingctx):
    sig = types.float64()

    def codegen(context, builder, signature, args):
        i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        timespec = ir.LiteralStructType([i64, i64])
        fn = builder.module.globals.get("clock_gettime")
        if fn is None:
            fn = ir.Function(builder.module, ir.FunctionType(i32, [i32, timespec.as_pointer()]),
                             "clock_gettime")
        ts = builder.alloca(timespec)
        builder.call(fn, [ir.Constant(i32, _CLOCK_MONOTONIC), ts])
        zero = ir.Constant(i32, 0)
        sec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 0)]))
        nsec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 1)]))
        return builder.fadd(builder.sitofp(sec, f64),
                            builder.fmul(builder.sitofp(nsec, f64), ir.Constant(f64, 1e-9)))

    return sig, codegen
