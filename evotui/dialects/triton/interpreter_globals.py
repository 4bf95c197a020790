"""Triton's CPU interpreter runs a kernel by executing its rewritten source in the module's
own globals, after copying its own globals into them where the module lacks a name
(`FunctionRewriter._compile_and_exec`): after the first launch a candidate's module held
`np`, `inspect`, `time`, and a class body or a later top-level line read them by bare name
(numpy computed the answer; `inspect` ran a shell). Here the
rewritten kernel runs in a copy of the module's globals instead: the kernel sees the same
names as before, and the module gains none. In that copy, names bound to Triton builtins
(`triton_cast = tl.cast`) call them as the interpreter does (`_builtin_aliases`).
"""

from __future__ import annotations

from typing import Any

_applied = False


def _builtin_aliases(module_globals: dict[str, Any]) -> dict[str, Any]:
    """A module-level name bound to a Triton builtin (`triton_cast = tl.cast`, `from
    triton.language import cast`) holds the builtin as imported, which needs the compiler's
    `_semantic` argument: on a GPU the kernel calls it, here it raised "Did you forget to add
    @triton.jit ?". The interpreter binds `tl.cast` itself only on the modules (`_patch_lang`);
    a kernel's copy of the globals binds these names the same way."""
    from triton.language import core
    from triton.runtime import interpreter

    semantic = interpreter.interpreter_semantic

    def bound(member: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs.pop("_semantic", None)
            return member(*args, **kwargs, _semantic=semantic)

        return call

    return {name: bound(value) for name, value in module_globals.items()
            if not name.startswith("__") and core.is_builtin(value)}


def isolate_kernel_globals() -> bool:
    """Patch the interpreter (once per process); False when this Triton has no such step."""
    global _applied
    if _applied:
        return True
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - a triton without the interpreter
        return False
    rewriter = getattr(interpreter, "FunctionRewriter", None)
    if rewriter is None or not hasattr(rewriter, "_compile_and_exec"):
        return False

    def compile_and_exec(self: Any, transformed_ast: Any) -> Any:
        code = compile(transformed_ast, filename=self.filename, mode="exec")
        namespace = dict(self.kwargs)
        # the module's names win, as in Triton's own version; the interpreter's fill the gaps
        scope = {**vars(interpreter), **self.fn.__globals__, **_builtin_aliases(self.fn.__globals__)}
        exec(code, scope, namespace)
        return namespace[self.fn.__name__]

    rewriter._compile_and_exec = compile_and_exec
    _applied = True
    return True
