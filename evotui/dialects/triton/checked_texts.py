"""The kernels a launch may run are the checked ``@triton.jit`` defs of the candidate files,
and the text Triton parses for each is the text the static rules checked: not another
encoding of the file, not another ``def`` found by a guess. ``CheckedTexts`` holds those
defs (``approve``) and hooks where Triton parses a kernel's text, on the GPU
(``JITFunction.parse``) and under the interpreter (``FunctionRewriter.rewrite_ast``). Part
of the launch hooks (launch_hooks.LaunchRecorder).
"""

from __future__ import annotations

import types
from typing import Any

from evotui.core import reasons
from evotui.dialects.triton.launch_arguments import KernelArgumentError


class KernelSourceMismatch(KernelArgumentError):
    """Triton read, for a kernel of the candidate's file, other text than the static rules
    checked (another encoding of the file, another ``def`` found by a guess)."""

    reason = reasons.AMBIGUOUS_SOURCE


def same_text(read: str | None, checked: str) -> bool:
    """``read`` (what Triton took for a kernel's source) is the checked def's text, maybe with
    comment or blank lines after it (``inspect`` ends a block after the comments indented as
    its body)."""
    if read == checked:
        return True
    if type(read) is not str or not read.startswith(checked) or not checked.endswith("\n"):
        return False
    return all(not line.strip() or line.lstrip().startswith("#")
               for line in read[len(checked):].splitlines())


# the checked texts the hooks on Triton's classes ask (the last installed recorder's)
_TEXT_CHECKER: list[CheckedTexts] = []


class CheckedTexts:
    def __init__(self) -> None:
        # file -> the functions the static rules checked as kernels, by first line, with
        # their checked text; None: not checked (no candidate loaded through the worker)
        self.kernels: dict[str, dict[int, Any]] | None = None

    def approve(self, filename: str, source: str) -> None:
        """The kernels of a candidate file: its ``@triton.jit`` defs, by first line, and the
        text of each as checked (``source`` must be the very string the static rules parsed
        and the module is compiled from; raises SyntaxError for a file that does not parse)."""
        from evotui.dialects.triton.kernel_defs import kernel_texts

        self.kernels = {**(self.kernels or {}), filename: kernel_texts(source)}

    def checked(self, fn: Any) -> Any:
        """The checked def (``kernel_defs.KernelText``) that ``fn`` was compiled from."""
        code = fn.__code__ if type(fn) is types.FunctionType else None
        checked = None if code is None or self.kernels is None else \
            self.kernels.get(code.co_filename, {}).get(code.co_firstlineno)
        if checked is None:
            raise KernelArgumentError("the kernel launched runs a function that is not one of "
                                      "the file's @triton.jit defs")
        return checked

    def ours(self, fn: Any) -> bool:
        """``fn`` comes from a candidate file (not Triton's own library, say)."""
        return (self.kernels is not None and type(fn) is types.FunctionType
                and fn.__code__.co_filename in self.kernels)

    def confirm(self, fn: Any, read: str | None) -> None:
        """``read``, the text Triton parses for the kernel ``fn``, must be the text of the
        checked def ``fn`` was compiled from: else KernelSourceMismatch."""
        checked = self.checked(fn)
        if not same_text(read, checked.text):
            raise KernelSourceMismatch(
                f"line {checked.def_line}: the source Triton read for the kernel "
                f"`{fn.__name__}` is not the text that was checked (the file read in another "
                "encoding, or another def taken for it)")

    def interpreter_text(self, fn: Any) -> str | None:
        """What the interpreter parses for ``fn`` (``rewrite_ast`` below): the lines
        ``inspect`` gives for it, from the checked def's own ``def`` line (never a line found
        by searching), dedented; None where ``inspect`` finds none, or another block."""
        import inspect
        import textwrap

        checked = self.checked(fn)
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            return None
        if start != fn.__code__.co_firstlineno or not start <= checked.def_line < start + len(lines):
            return None
        return textwrap.dedent("".join(lines[checked.def_line - start:]))

    def hook_gpu_parse(self, jit: Any) -> None:
        """Where Triton parses a kernel's text for the GPU (``JITFunction.parse``: the
        kernel's own, each function it calls, the cache key), that text must be the checked
        def's, for every function of a candidate file."""
        _TEXT_CHECKER[:] = [self]
        owner = next(c for c in jit.JITFunction.__mro__ if "parse" in vars(c))
        original = vars(owner)["parse"]
        if getattr(original, "evotui_checked", False):
            return

        def parse(fn_self: Any) -> Any:
            state = vars(fn_self)
            fn = state.get("fn")
            texts = _TEXT_CHECKER[0]
            if texts.ours(fn):
                texts.confirm(fn, state["_src"] if "_src" in state else state.get("src"))
            return original(fn_self)

        parse.evotui_checked = True  # type: ignore[attr-defined]
        owner.parse = parse

    def hook_interpreter_rewrite(self) -> None:
        """The interpreter rewrites a candidate's kernel from the checked def's text:
        Triton's ``rewrite_ast`` took the *last* line starting with ``def `` in what
        ``inspect`` gave (a string in the body held another kernel), and ran the plain
        Python function where ``inspect`` found no source. Here the text is confirmed to be
        the checked def's or the launch fails; Triton's own functions are rewritten as
        before."""
        from triton.runtime import interpreter

        _TEXT_CHECKER[:] = [self]
        rewriter = getattr(interpreter, "FunctionRewriter", None)
        original = getattr(rewriter, "rewrite_ast", None)
        if original is None or getattr(original, "evotui_checked", False):
            return

        def rewrite_ast(rw: Any) -> Any:
            fn = rw.fn
            texts = _TEXT_CHECKER[0]
            if not texts.ours(fn):
                return original(rw)
            text = texts.interpreter_text(fn)
            texts.confirm(fn, text)
            rw.filename, rw.def_file_lineno = fn.__code__.co_filename, texts.checked(fn).def_line
            return rw._compile_and_exec(rw._transform_ast(text))

        rewrite_ast.evotui_checked = True  # type: ignore[attr-defined]
        rewriter.rewrite_ast = rewrite_ast
