"""Fixes for Triton's CPU interpreter (seen in triton 3.9): bf16, comparisons, libdevice,
and two holes.

- fp32 -> bf16 casts truncate instead of rounding to nearest even as the GPU does;
- bf16 ``tl.dot`` multiplies the raw 16-bit patterns as integers;
- bf16 ``+ - *``, negation, comparisons, min/max, ``tl.sum`` and casts to and from ints
  work on the raw 16-bit patterns too (``interpreter_bf16``);
- a kernel's source is taken from the last line starting with ``def `` (a string in the
  kernel's body could hold another, unchecked, kernel): now from the def statement itself;
- a pointer is a host address: loads and stores are bounded to the launch's tensors
  (``interpreter_bounds``);
- comparisons are typed as their operands, so a block mask ``&`` a scalar comparison
  (``(cols < n) & (row < n_rows)``) came out as int32, which loads and stores refuse ("mask
  has unsupported dtype"); on a GPU it is a boolean mask. Comparisons now give int1;
- libdevice's functions are stubs that return None (``interpreter_libdevice``).

Without them honest bf16 candidates fail on the CPU. Applied by the worker when it runs
under the interpreter; a no-op where the interpreter lacks the patched hooks.
"""

from __future__ import annotations

from backends.triton_backend.interpreter_bf16 import to_bf16


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
    rewriter = interp.__dict__.get("FunctionRewriter")
    find_def = getattr(rewriter, "_find_def", None)
    if find_def is not None and not getattr(find_def, "evotui_patched", False):
        def own_def(self, lines):
            # the interpreter took the *last* line starting with `def ` (a string in the body
            # could hold another kernel); the def statement itself, as Python parses it
            import ast
            import textwrap

            try:
                tree = ast.parse(textwrap.dedent("".join(lines)))
            except SyntaxError:
                return find_def(self, lines)
            return tree.body[0].lineno if tree.body else find_def(self, lines)

        own_def.evotui_patched = True
        rewriter._find_def = own_def
        patched.append("the interpreter runs a kernel's own def")
    from backends.triton_backend.interpreter_bf16 import apply_bf16_fixes

    patched += apply_bf16_fixes()
    from backends.triton_backend.interpreter_bounds import apply_bounds

    if apply_bounds():
        patched.append("kernels touch only their launch's tensors")
    if builder is not None and _comparisons_give_int1(builder, interp):
        patched.append("comparisons give int1")
    from backends.triton_backend.interpreter_libdevice import apply_libdevice

    patched += [f"{name} computes in numpy" for name in apply_libdevice()]
    return patched


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
