"""Fixes for Triton's CPU interpreter (seen in triton 3.9): bf16, comparisons, libdevice,
float arguments, `and`/`or`, and a hole. (Where the interpreter finds a kernel's source is
the launch hooks' business: ``LaunchRecorder`` gives it the checked text.)

- fp32 -> bf16 casts truncate instead of rounding to nearest even as the GPU does;
- bf16 ``tl.dot`` multiplies the raw 16-bit patterns as integers;
- bf16 ``+ - *``, negation, comparisons, min/max, ``tl.sum`` and casts to and from ints
  work on the raw 16-bit patterns too (``interpreter_bf16``);
- a pointer is a host address: loads and stores are bounded to the launch's tensors
  (``interpreter_bounds``);
- comparisons are typed as their operands, so a block mask ``&`` a scalar comparison
  (``(cols < n) & (row < n_rows)``) came out as int32, which loads and stores refuse ("mask
  has unsupported dtype"); on a GPU it is a boolean mask. Comparisons now give int1;
- libdevice's functions are stubs that return None (``interpreter_libdevice``);
- a float argument reaches the kernel as a Python float, so ``eps.to(tl.float32)`` fails
  ("'float' object has no attribute 'to'"); on a GPU it is an fp32 scalar. Now it is one;
- ``and`` / ``or`` between blocks ran as Python's, which takes a block as true:
  ``row_mask and col_mask`` gave ``col_mask`` (FlagGems' ``mean_dim`` then read past its
  rows); on a GPU they are ``logical_and`` / ``logical_or``. Now they are here too.

Without them honest bf16 candidates fail on the CPU. Applied by the worker when it runs
under the interpreter; a no-op where the interpreter lacks the patched hooks.
"""

from __future__ import annotations

from evotui.dialects.triton.interpreter_bf16 import to_bf16


def apply_interpreter_fixes() -> list[str]:
    """Make the Triton interpreter round fp32 -> bf16 to nearest even, and compute bf16 tl.dot
    and bf16 arithmetic in fp32 as a GPU does.

    Returns what was patched (empty if this triton's interpreter lacks the expected hooks)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as interp

    patched = []
    convert = interp.__dict__.get("_convert_float")
    builder = interp.__dict__.get("InterpreterBuilder")
    if convert is not None and not getattr(convert, "evotui_patched", False):
        rtz = interp._ir.ROUNDING_MODE.RTZ

        def convert_float(input, input_dtype, output_dtype, rounding_mode):
            if input_dtype == tl.float32 and output_dtype == tl.bfloat16 and rounding_mode != rtz:
                # numpy, not torch: kernels run with the op policy watching (launch_hooks)
                return to_bf16(np.ascontiguousarray(input).view(np.float32))
            return convert(input, input_dtype, output_dtype, rounding_mode)

        convert_float.evotui_patched = True
        interp._convert_float = convert_float
        patched.append("fp32->bf16 casts round to nearest even")
    if builder is not None and not getattr(builder.create_dot, "evotui_patched", False):
        create_dot = builder.create_dot

        def as_f32(h):
            if h.dtype.scalar == tl.bfloat16:
                data = (h.data.astype(np.uint32) << 16).view(np.float32)
                return interp.TensorHandle(data, tl.float32)
            return h

        def patched_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
            return create_dot(self, as_f32(a), as_f32(b), d, input_precision,
                              max_num_imprecise_acc)

        patched_dot.evotui_patched = True
        builder.create_dot = patched_dot
        patched.append("bf16 tl.dot computes in fp32")
    from evotui.dialects.triton.interpreter_bf16 import apply_bf16_fixes

    patched += apply_bf16_fixes()
    from evotui.dialects.triton.interpreter_bounds import apply_bounds

    if apply_bounds():
        patched.append("kernels touch only their launch's tensors")
    if builder is not None and _comparisons_give_int1(builder, interp):
        patched.append("comparisons give int1")
    from evotui.dialects.triton.interpreter_libdevice import apply_libdevice

    patched += [f"{name} computes in numpy" for name in apply_libdevice()]
    if _floats_as_fp32(interp):
        patched.append("float arguments are fp32 scalars")
    if _logical_bool_ops(interp):
        patched.append("and/or between blocks are logical_and/logical_or")
    return patched


def _floats_as_fp32(interp: object) -> bool:
    """A kernel's float argument as the fp32 scalar a GPU launch makes of it (Triton types
    every Python float argument "fp32"), not a Python float: `eps.to(tl.float32)` works,
    and `x_bf16 * eps` promotes to fp32 as on a GPU."""
    import numpy as np
    import triton.language as tl

    convert = interp.__dict__.get("_implicit_cvt")
    handle = interp.__dict__.get("TensorHandle")
    if convert is None or handle is None:
        return False
    if getattr(convert, "evotui_patched", False):
        return True

    def implicit_cvt(arg):
        if type(arg) is float:
            return tl.tensor(handle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return convert(arg)

    implicit_cvt.evotui_patched = True
    interp._implicit_cvt = implicit_cvt
    return True


LOGICAL = "_evotui_logical"  # the name the rewritten kernels call (no candidate binds it)


def _logical_bool_ops(interp: object) -> bool:
    """`a and b` / `a or b` in a kernel as Triton's compiler reads them: a constexpr operand
    short-circuits as in Python; between tensors (blocks or scalars) they are
    `logical_and` / `logical_or`, both sides evaluated. The interpreter's AST rewrite gains a
    `visit_BoolOp` that keeps Python's evaluation order and calls `_evotui_logical` where the
    left operand is a tensor."""
    import ast
    import copy

    import triton.language as tl

    rewriter = interp.__dict__.get("FunctionRewriter")
    transformer = getattr(rewriter, "ast_transformer", None)
    if rewriter is None or transformer is None:
        return False
    if getattr(transformer, "evotui_patched", False):
        return True

    def dynamic(value):
        return isinstance(value, tl.tensor)

    def logical(op, lhs, rhs):
        if dynamic(rhs):
            return getattr(lhs, "logical_and" if op == "and" else "logical_or")(rhs)
        keep_rhs = not bool(rhs) if op == "and" else bool(rhs)
        return rhs if keep_rhs else lhs

    logical.dynamic = dynamic
    setattr(interp, LOGICAL, logical)
    counter = iter(range(1 << 62))

    class BoolOpTransformer(type(transformer)):
        evotui_patched = True

        def visit_BoolOp(self, node):
            node = self.generic_visit(node)
            op = "and" if isinstance(node.op, ast.And) else "or"
            result = node.values[0]
            for value in node.values[1:]:
                temp = f"{LOGICAL}_{next(counter)}"
                load = ast.Name(id=temp, ctx=ast.Load())
                helper = ast.Name(id=LOGICAL, ctx=ast.Load())
                # (logical(op, t, b) if logical.dynamic(t := a) else (t and b))
                result = ast.IfExp(
                    test=ast.Call(func=ast.Attribute(value=helper, attr="dynamic", ctx=ast.Load()),
                                  args=[ast.NamedExpr(target=ast.Name(id=temp, ctx=ast.Store()),
                                                      value=result)], keywords=[]),
                    body=ast.Call(func=ast.Name(id=LOGICAL, ctx=ast.Load()),
                                  args=[ast.Constant(op), load, value], keywords=[]),
                    orelse=ast.BoolOp(op=node.op, values=[ast.Name(id=temp, ctx=ast.Load()),
                                                          copy.deepcopy(value)]))
            return ast.copy_location(result, node)

    rewriter.ast_transformer = BoolOpTransformer()
    return True


def _comparisons_give_int1(builder: type, interp: object) -> bool:
    """The interpreter's comparisons keep their operands' type on a boolean array
    (``binary_op`` types a result as its left operand): ``cols < n`` is an "int32" handle
    holding bools, ``(cols < n) & (row < n_rows)`` then comes out as int32 data, and loads
    and stores refuse it as a mask ("mask has unsupported dtype"). A comparison is int1."""
    import numpy as np
    import triton.language as tl

    names = [n for n in dir(builder) if n.startswith(("create_icmp", "create_fcmp"))]
    for name in names:
        compare = getattr(builder, name)
        if getattr(compare, "evotui_int1", False):
            continue

        def as_int1(self, lhs, rhs, compare=compare):
            out = compare(self, lhs, rhs)
            return interp.TensorHandle(np.asarray(out.data, dtype=np.bool_), tl.int1)

        as_int1.evotui_int1 = True
        setattr(builder, name, as_int1)
    return bool(names)
