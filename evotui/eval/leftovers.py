"""What a candidate may have left behind in its worker, checked after every evaluation:
processes (children, or anything else in the worker's session) and replaced harness code
(the functions and constants the checks run on, ``torch``'s own names, by identity). A
worker found either way is not reused.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def harness_code() -> dict[str, int]:
    """What the checks run on, by identity: every name of the harness modules in this
    process (functions, classes, constants such as the op allowlist) and the classes' own
    attributes. A candidate that rebound one — through an escape the static rules missed —
    turned a check off."""
    from triton.runtime import autotuner, jit

    import evotui.eval.ab_phase as ab_phase
    import evotui.eval.failures as failures
    import evotui.eval.op_policy as op_policy
    import evotui.eval.perturb as perturb
    import evotui.eval.timed_phase as timed_phase
    import evotui.eval.timing as timing
    import evotui.eval.timing_stats as timing_stats
    import evotui.eval.wall_timing as wall_timing
    from evotui.dialects import base
    from evotui.dialects.triton import checked_texts, launch_arguments, launch_hooks

    code: dict[str, int] = {}
    runner = sys.modules["evotui.eval.candidate_runner"]
    for module in (base, op_policy, launch_hooks, launch_arguments, checked_texts, perturb, timing,
                   timing_stats, wall_timing, timed_phase, ab_phase, failures, runner,
                   sys.modules[__name__]):
        for name, value in vars(module).items():
            code[f"{module.__name__}.{name}"] = id(value)
            if isinstance(value, type) and value.__module__ == module.__name__:
                code.update({f"{module.__name__}.{name}.{k}": id(v) for k, v in vars(value).items()})
    # triton's own classes that run the kernels: a method replaced through
    # `self.K = type(kernel)` (`self.K.rewrite = ...`) would run the candidate's Python with
    # the policy suspended. (Not triton.language itself: the interpreter leaves its own
    # patches there.)
    classes: list[type] = [jit.JITFunction, autotuner.Autotuner, autotuner.Heuristics]
    if hasattr(jit, "JITCallable"):  # where `parse` (the launch hooks' text check) lives
        classes.append(jit.JITCallable)
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if interpreter is not None:
        classes += [interpreter.InterpretedFunction, interpreter.GridExecutor,
                    interpreter.FunctionRewriter, interpreter.ASTTransformer]
    try:  # rebuilt by the interpreter with the policy suspended (a `base` property,
        # a new name on the class; `validate_block_shape` replaced in its module)
        import triton.tools.tensor_descriptor as descriptors

        classes.append(descriptors.TensorDescriptor)
        code.update({f"{descriptors.__name__}.{k}": id(v) for k, v in vars(descriptors).items()})
        code["TensorDescriptor (its names)"] = hash(tuple(sorted(vars(descriptors.TensorDescriptor))))
    except ImportError:  # pragma: no cover - triton without TMA descriptors
        pass
    for cls in classes:
        code.update({f"{cls.__name__}.{k}": id(v) for k, v in vars(cls).items()})
    if interpreter is not None:  # the helpers its argument copies call
        code.update({f"interpreter.{k}": id(v) for k, v in vars(interpreter).items()
                     if k.startswith("_") and callable(v)})
    # what the harness itself calls on tensors and torch (`value.detach()` while dumping
    # outputs, outside the op policy): patched through `self.T = torch.Tensor` it would
    # compute unwatched
    import _thread
    import threading

    import torch
    import torch._tensor_str
    import torch.utils._python_dispatch

    for owner in (torch, torch.nn.functional, torch._tensor_str, torch.UntypedStorage,
                  torch.utils._python_dispatch, threading.Thread, _thread):
        code.update({f"{owner.__name__}.{k}": id(v) for k, v in list(vars(owner).items())
                     # flags torch itself sets while a dispatch mode is on (`_is_in_...`)
                     if not (owner is torch.utils._python_dispatch and k.startswith("_is_in_"))})
    # torch.Tensor as attribute lookup resolves it, through its bases: a name set on
    # torch.Tensor that shadows a method of torch._C.TensorBase is new in Tensor's own
    # dict but replaces what `tensor.size()` runs
    resolved: dict[str, object] = {}
    for cls in reversed(torch.Tensor.__mro__):
        resolved.update(vars(cls))
    code.update({f"Tensor.{k}": id(v) for k, v in resolved.items()})
    return code


def replaced(before: dict[str, int], now: dict[str, int]) -> list[str]:
    """Names there before that are bound to another object now (names torch adds as it
    lazily imports its parts are new, not replaced)."""
    return [k for k, v in before.items() if now.get(k) != v]


def child_processes() -> list[int]:
    """Processes the candidate left behind: this process's children (in a sandbox, the
    first process of its PID namespace, which inherits every orphan in it), and anything
    else in its session. Through /proc/self: a PID namespace's own numbers are not those of
    the /proc it sees."""
    pid = os.getpid()
    found: set[int] = set()
    task_dir = Path("/proc/self/task")
    if not task_dir.is_dir():
        return []
    for tid in task_dir.iterdir():
        try:
            text = (tid / "children").read_text().split()
        except OSError:
            continue
        found.update(int(c) for c in text)
    if os.getsid(0) == pid:  # the pool starts each worker as the leader of its own session
        found.update(_session_members(pid))
    return sorted(found)


def _session_members(sid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == sid:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # state, ppid, pgrp, session, ...
        if len(fields) > 3 and fields[3] == str(sid) and fields[0] != "Z":
            members.append(int(entry.name))
    return members
