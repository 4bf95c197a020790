"""What compute-sanitizer runs: ``python -m evotui.dialects.cuda.sanitize_run TASK CANDIDATE``.

One call of a CUDA candidate at the task's smallest check shape (the first ``check_shapes``
entry, else the benchmark shape), then a device synchronisation. Exit 0 when the call
finished; 3 when the candidate could not be built (the sanitizer's verdict is then moot);
4 when the call raised (a CUDA error: the tool's log says which access).
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m evotui.dialects.cuda.sanitize_run TASK CANDIDATE", file=sys.stderr)
        return 2
    import torch

    from evotui.dialects.base import CandidateError
    from evotui.dialects.cuda import CudaBackend
    from evotui.task.model import load_module, make_init_inputs, make_inputs, read_meta

    task = load_module(Path(argv[0]), "evotui_task")
    meta = read_meta(task, default_name="task")
    shape = dict(meta.check_shapes[0]) if meta.check_shapes else {}
    torch.cuda.set_device(0)
    backend = CudaBackend()
    recorder = backend.launch_recorder()
    try:
        cls = backend.model_class(Path(argv[1]).read_text(), task, recorder)
        torch.manual_seed(1234)
        model = cls(*make_init_inputs(task, shape)).to("cuda")
    except CandidateError as e:
        print(f"sanitize_run: cannot build the candidate ({e.reason}): {e.message}", file=sys.stderr)
        return 3
    inputs = [v.to("cuda") if isinstance(v, torch.Tensor) else v
              for v in make_inputs(task, shape, 4321, "cuda")]
    try:
        model(*inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - the tool's log names the faulting access
        print(f"sanitize_run: the call failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 4
    print(f"sanitize_run: ok, {recorder.total} launches ({dict(recorder.launches)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
