"""bf16 arithmetic in Triton's CPU interpreter, computed the way a GPU computes it.

The interpreter keeps a bf16 value as its raw 16-bit pattern (a numpy ``uint16``) and, in
triton 3.9, applies numpy's operators to those patterns directly: ``a + b`` adds two
integers, ``-a`` negates an unsigned integer, ``a < b`` compares patterns (every negative
number is "larger" than every positive one), ``tl.sum`` adds the integers. Honest bf16
kernels then produce garbage (NaN, Inf, huge values) on the CPU although they are right on
a GPU. (fp16 is fine: numpy has a float16; bf16 ``/`` is fine: Triton divides in fp32.)

What a GPU does, and what this module makes the interpreter do:

- elementwise bf16 ops (``+ - * / %``, ``-x``, ``tl.fma``, ``tl.minimum``/``tl.maximum``,
  ``tl.clamp``, scalar operands): widen to fp32 (exact), compute, round the result to bf16
  to nearest even. For ``+ - * /`` that equals the correctly rounded bf16 op (fp32 carries
  more than twice bf16's precision, so the double rounding is harmless);
- comparisons (hence ``tl.where``) compare the real values (``-0.0 == 0.0``, NaN unordered);
- ``tl.sum`` / ``tl.cumsum`` / ``tl.cumprod`` of bf16: Triton does not widen bf16 for these
  (``_pick_sum_dtype`` widens only small integers), so the GPU adds in bf16, rounding after
  each add. Modelled as a pairwise tree (sum) or in order (scans) of rounded fp32 adds.
  ``tl.max``/``tl.min`` widen bf16 to fp32 themselves; their index variants (``argmax``,
  ``return_indices=True``) compare the real values here;
- casts between bf16 and anything but fp32 (ints, bool, fp64) go through fp32.

Each group is probed on a few values first and patched only if this interpreter gets it
wrong, so a triton that fixes it is left alone.
"""

from __future__ import annotations

import numpy as np

_ELEMENTWISE = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem",
                "create_precise_divf", "create_fneg", "create_fma", "create_clampf",
                "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf")
_COMPARE = tuple(f"create_fcmp{kind}{op}" for kind in "OU"
                 for op in ("LT", "GT", "LE", "GE", "EQ", "NE"))
# probe operands: on the raw patterns every op above gets at least one element wrong
_PROBE = ((-1.5, 2.0, -0.0, 1.0), (2.0, -1.5, 0.0, 3.0), (0.5, 0.25, -4.0, 1.0))


def to_f32(bits) -> np.ndarray:
    """bf16 bit patterns -> their values as fp32 (exact)."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_bf16(values) -> np.ndarray:
    """fp32 values -> bf16 bit patterns, rounded to nearest even; a NaN stays a quiet NaN."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet_nan = (bits >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(np.isnan(values), quiet_nan, rounded).astype(np.uint16)


def apply_bf16_fixes() -> list[str]:
    """Patch the interpreter's bf16 ops that compute on raw patterns; returns what was patched."""
    with np.errstate(all="ignore"):  # the probes divide by zero on purpose
        return _apply()


def _apply() -> list[str]:
    import triton.language as tl
    from triton.runtime import interpreter as interp

    builder_cls = interp.__dict__.get("InterpreterBuilder")
    handle_cls = interp.__dict__.get("TensorHandle")
    if builder_cls is None or handle_cls is None:
        return []
    bf16, f32 = tl.bfloat16, tl.float32
    builder = interp.__dict__.get("interpreter_builder") or builder_cls()

    def is_bf16(h) -> bool:
        return isinstance(h, handle_cls) and h.dtype.scalar == bf16

    def widen(h):
        return handle_cls(to_f32(h.data), f32) if is_bf16(h) else h

    def bf16_handle(values):
        return handle_cls(to_bf16(values), bf16)

    def bf16_tensor(values):
        data = to_bf16(values)
        return tl.core.tensor(handle_cls(data, bf16), tl.block_type(bf16, list(data.shape)))

    def same_values(got, want_f32) -> bool:
        got = np.asarray(got)
        return got.dtype == np.uint16 and np.array_equal(
            to_f32(got), to_f32(to_bf16(want_f32)), equal_nan=True)

    patched = []

    # elementwise ops and comparisons: compute in fp32
    def in_fp32(method, compare: bool):
        def patched_op(self, *args):
            if not any(is_bf16(a) for a in args):
                return method(self, *args)
            out = method(self, *map(widen, args))
            return handle_cls(out.data, tl.int1) if compare else bf16_handle(out.data)

        patched_op.evotui_bf16 = True
        return patched_op

    def broken(name: str, compare: bool) -> bool:
        method = getattr(builder_cls, name)
        arity = {"create_fneg": 1, "create_fma": 3, "create_clampf": 3}.get(name, 2)
        extra = (interp._ir.PROPAGATE_NAN.NONE,) if name == "create_clampf" else ()
        wide = [handle_cls(np.array(v, dtype=np.float32), f32) for v in _PROBE[:arity]]
        narrow = [bf16_handle(h.data) for h in wide]
        try:
            want = method(builder, *wide, *extra).data
        except Exception:
            return False  # not even fp32 works: nothing to model it on
        try:
            got = method(builder, *narrow, *extra).data
        except Exception:
            return True
        return not (np.array_equal(got, want) if compare else same_values(got, want))

    fixed = []
    for names, compare in ((_ELEMENTWISE, False), (_COMPARE, True)):
        for name in names:
            method = builder_cls.__dict__.get(name)
            if method is None or getattr(method, "evotui_bf16", False) or not broken(name, compare):
                continue
            setattr(builder_cls, name, in_fp32(method, compare))
            fixed.append(name.removeprefix("create_"))
    if fixed:
        patched.append("bf16 " + ", ".join(fixed) + " compute in fp32")

    # casts between bf16 and types other than fp32 go through fp32
    cast_impl = builder_cls.__dict__.get("cast_impl")
    if cast_impl is not None and not getattr(cast_impl, "evotui_bf16", False):
        def cast_via_f32(self, src, dst_type):
            src_ty, dst_ty = src.dtype.scalar, dst_type.scalar
            if src_ty != dst_ty and bf16 in (src_ty, dst_ty) and f32 not in (src_ty, dst_ty):
                return cast_impl(self, cast_impl(self, src, f32), dst_type)
            return cast_impl(self, src, dst_type)

        cast_via_f32.evotui_bf16 = True
        ints = handle_cls(np.array([3, -2], dtype=np.int32), tl.int32)
        f64 = handle_cls(np.array([3.0, -2.0]), tl.float64)
        threes = bf16_handle([3.0, -2.0])
        try:
            ok = (same_values(cast_impl(builder, ints, bf16).data, [3.0, -2.0])
                  and same_values(cast_impl(builder, f64, bf16).data, [3.0, -2.0])
                  and np.array_equal(cast_impl(builder, threes, tl.int32).data, [3, -2])
                  and np.array_equal(cast_impl(builder, threes, tl.float64).data, [3.0, -2.0]))
        except Exception:
            ok = False
        if not ok:
            builder_cls.cast_impl = cast_via_f32
            patched.append("casts between bf16 and ints/fp64 go through fp32")

    # reductions and scans
    reduce_cls, scan_cls = interp.__dict__.get("ReduceOps"), interp.__dict__.get("ScanOps")
    values = np.array([1.0, 2.0, -1.5, 0.25], dtype=np.float32)
    if reduce_cls is not None and hasattr(reduce_cls, "sum"):
        patched += _fix_reductions(reduce_cls, bf16, values, bf16_tensor, same_values)
    if scan_cls is not None and hasattr(scan_cls, "cumsum"):
        patched += _fix_scans(scan_cls, bf16, values, bf16_tensor, same_values)
    return patched


def _tree_sum(x: np.ndarray, axis) -> np.ndarray:
    """Sum fp32 copies of bf16 values along axis, pairwise, rounding each add to bf16."""
    x = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    while len(x) > 1:
        half = len(x) // 2
        pairs = to_f32(to_bf16(x[:half] + x[half:2 * half]))
        x = np.concatenate([pairs, x[2 * half:]])
    return to_bf16(x[0])


def _scan(x: np.ndarray, axis, op) -> np.ndarray:
    """Running op of fp32 copies of bf16 values along axis, rounding each step to bf16."""
    x = np.moveaxis(x, axis, 0).copy()
    for i in range(1, len(x)):
        x[i] = to_f32(to_bf16(op(x[i - 1], x[i])))
    return to_bf16(np.moveaxis(x, 0, axis))


def _fix_reductions(reduce_cls, bf16, values, bf16_tensor, same_values) -> list[str]:
    import triton.language as tl

    patched = []
    total, min_max = reduce_cls.sum, reduce_cls.min_max
    try:
        sum_ok = same_values(total(reduce_cls(0, None, False), bf16_tensor(values)).handle.data,
                             [1.75])
    except Exception:
        sum_ok = False
    if not sum_ok and not getattr(total, "evotui_bf16", False):
        def bf16_sum(self, input):
            if input.dtype.scalar != bf16:
                return total(self, input)
            x = to_f32(input.handle.data)
            shape = np.shape(np.sum(x, axis=self.axis, keepdims=self.keep_dims))
            return self.to_tensor(np.reshape(_tree_sum(x, self.axis), shape), input.dtype)

        bf16_sum.evotui_bf16 = True
        reduce_cls.sum = bf16_sum
        patched.append("tl.sum of bf16 adds in bf16 as the GPU does")
    try:
        val, idx = min_max(reduce_cls(0, None, False), bf16_tensor(values), np.nanmax, np.nanargmax)
        minmax_ok = same_values(val.handle.data, [2.0]) and int(idx.handle.data.item()) == 1
    except Exception:
        minmax_ok = False
    if not minmax_ok and not getattr(min_max, "evotui_bf16", False):
        def bf16_min_max(self, input, val_reduce_op, idx_reduce_op=None):
            arg = input[0] if isinstance(input, tuple) else input
            if arg.dtype.scalar != bf16:
                return min_max(self, input, val_reduce_op, idx_reduce_op)
            x = to_f32(arg.handle.data)
            kw = {"axis": self.axis, "keepdims": self.keep_dims}
            val = idx = None
            if val_reduce_op:
                val = self.to_tensor(to_bf16(val_reduce_op(x, **kw)), arg.dtype)
            if idx_reduce_op:
                idx = self.to_tensor(idx_reduce_op(x, **kw), tl.int32)
            if val is None and idx is None:
                raise ValueError("val_reduce_op and idx_reduce_op are both None")
            return (val, idx) if val is not None and idx is not None else (val if idx is None else idx)

        bf16_min_max.evotui_bf16 = True
        reduce_cls.min_max = bf16_min_max
        patched.append("bf16 argmin/argmax compare values")
    return patched


def _fix_scans(scan_cls, bf16, values, bf16_tensor, same_values) -> list[str]:
    patched = []
    for name, op, want in (("cumsum", np.add, np.cumsum(values)),
                           ("cumprod", np.multiply, np.cumprod(values))):
        original = getattr(scan_cls, name, None)
        if original is None or getattr(original, "evotui_bf16", False):
            continue
        try:
            ok = same_values(original(scan_cls(0, None, False), bf16_tensor(values))[0].handle.data,
                             want)
        except Exception:
            ok = False
        if ok:
            continue

        def bf16_scan(self, input, original=original, op=op):
            if input.dtype.scalar != bf16:
                return original(self, input)
            return [self.to_tensor(_scan(to_f32(input.handle.data), self.axis, op), input.dtype)]

        bf16_scan.evotui_bf16 = True
        setattr(scan_cls, name, bf16_scan)
        patched.append(f"tl.{name} of bf16 rounds each step to bf16")
    return patched
