"""Four doubles at once: SIMD lanes for the contact sweep (contact_solver._sweep_lanes).

A value of four lanes is a numba UniTuple(float64, 4) (a mask: UniTuple(boolean, 4)); each
operation below is one LLVM vector instruction on <4 x double> (AVX2's ymm registers on the
x86-64-v3 the kernels are compiled for: physics/cache.py), and LLVM folds the tuple <-> vector
conversions between them away. numba itself never vectorises the sweep: its SLP vectoriser is
off by default, and four interleaved copies of the scalar code ran 0.72-0.90x as fast as the
scalar sweep (measured on the pyramid's rows); these operations, 1.84-2.05x as fast.

Every operation is the IEEE operation of the scalar code, lane by lane, in the same order
(no fused multiply-add: the kernels compile without "contract", tests/
test_physics_determinism.py), so lane l of a result is, to the bit, what the scalar code
computes for lane l's operands:

    vadd vsub vmul vdiv     a op b
    vsqrt                   sqrt(a)
    vgt, vne                a > b (ordered), a != b (unordered: true for a NaN)
    vand, vor               mask and, or
    vsel(m, a, b), msel     m ? a : b, for values and for masks
    vany(m)                 m[0] or m[1] or m[2] or m[3]
    vmax(a, b), vmin(a, b)  numba's max(a, b) / min(a, b) of two floats: b if b > a (b < a)
                            else a
    vload(x, i, k)          x[i, k, 0:4] of a 3-D float64 array, one (unaligned) load
    vstore(x, i, k, a)      x[i, k, 0:4] = a
    splat(c)                (c, c, c, c)
"""
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import INLINE

LANES = 4
V4 = types.UniTuple(types.float64, LANES)
M4 = types.UniTuple(types.boolean, LANES)
_I32 = ir.IntType(32)
_F64 = ir.DoubleType()
_BIT = ir.IntType(1)


def _vector(builder, tup, element):
    vec = ir.Constant(ir.VectorType(element, LANES), ir.Undefined)
    for i in range(LANES):
        vec = builder.insert_element(vec, builder.extract_value(tup, i), ir.Constant(_I32, i))
    return vec


def _tuple(context, builder, vec, ty):
    out = cgutils.get_null_value(context.get_value_type(ty))
    for i in range(LANES):
        out = builder.insert_value(out, builder.extract_element(vec, ir.Constant(_I32, i)), i)
    return out


def _binary(name, operand, element, result, emit):
    """The operation `name` on two values of type `operand` (UniTuples of `element`):
    emit(builder, x, y) on their vectors gives the value of type `result`."""
    def typer(typingctx, a, b):
        if a != operand or b != operand:
            return None

        def codegen(context, builder, sig, args):
            x, y = (_vector(builder, t, element) for t in args)
            return _tuple(context, builder, emit(builder, x, y), result)
        return result(operand, operand), codegen
    typer.__name__ = name
    return intrinsic(typer)


vadd = _binary("vadd", V4, _F64, V4, lambda builder, x, y: builder.fadd(x, y))
vsub = _binary("vsub", V4, _F64, V4, lambda builder, x, y: builder.fsub(x, y))
vmul = _binary("vmul", V4, _F64, V4, lambda builder, x, y: builder.fmul(x, y))
vdiv = _binary("vdiv", V4, _F64, V4, lambda builder, x, y: builder.fdiv(x, y))
vgt = _binary("vgt", V4, _F64, M4, lambda builder, x, y: builder.fcmp_ordered(">", x, y))
vne = _binary("vne", V4, _F64, M4, lambda builder, x, y: builder.fcmp_unordered("!=", x, y))
vand = _binary("vand", M4, _BIT, M4, lambda builder, x, y: builder.and_(x, y))
vor = _binary("vor", M4, _BIT, M4, lambda builder, x, y: builder.or_(x, y))


@intrinsic
def vsel(typingctx, m, a, b):
    if m != M4 or a != V4 or b != V4:
        return None

    def codegen(context, builder, sig, args):
        c = _vector(builder, args[0], _BIT)
        x, y = (_vector(builder, t, _F64) for t in args[1:])
        return _tuple(context, builder, builder.select(c, x, y), V4)
    return V4(M4, V4, V4), codegen


@intrinsic
def msel(typingctx, m, a, b):
    if m != M4 or a != M4 or b != M4:
        return None

    def codegen(context, builder, sig, args):
        c, x, y = (_vector(builder, t, _BIT) for t in args)
        return _tuple(context, builder, builder.select(c, x, y), M4)
    return M4(M4, M4, M4), codegen


@intrinsic
def vsqrt(typingctx, a):
    if a != V4:
        return None

    def codegen(context, builder, sig, args):
        x = _vector(builder, args[0], _F64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(x.type, [x.type]),
                                            "llvm.sqrt.v4f64")
        return _tuple(context, builder, builder.call(fn, [x]), V4)
    return V4(V4), codegen


def _lane_pointer(context, builder, aryty, ary, i, k):
    array = context.make_array(aryty)(context, builder, ary)
    zero = context.get_constant(types.intp, 0)
    ptr = cgutils.get_item_pointer(context, builder, aryty, array, [i, k, zero])
    return builder.bitcast(ptr, ir.PointerType(ir.VectorType(_F64, LANES)))


def _lane_array(x):
    return (isinstance(x, types.Array) and x.ndim == 3 and x.dtype == types.float64
            and x.layout == "C")


@intrinsic
def vload(typingctx, x, i, k):
    if not _lane_array(x):
        return None

    def codegen(context, builder, sig, args):
        ptr = _lane_pointer(context, builder, sig.args[0], args[0], args[1], args[2])
        return _tuple(context, builder, builder.load(ptr, align=8), V4)
    return V4(x, i, k), codegen


@intrinsic
def vstore(typingctx, x, i, k, a):
    if not _lane_array(x) or a != V4:
        return None

    def codegen(context, builder, sig, args):
        ptr = _lane_pointer(context, builder, sig.args[0], args[0], args[1], args[2])
        builder.store(_vector(builder, args[3], _F64), ptr, align=8)
        return context.get_dummy_value()
    return types.none(x, i, k, a), codegen


@njit(**INLINE)
def vmax(a, b):
    return vsel(vgt(b, a), b, a)


@njit(**INLINE)
def vmin(a, b):
    return vsel(vgt(a, b), b, a)


@njit(**INLINE)
def splat(c):
    return (c, c, c, c)


@njit(**INLINE)
def vany(m):
    """Whether any lane of mask m is true (a branch on it skips work that no lane needs)."""
    return m[0] | m[1] | m[2] | m[3]
