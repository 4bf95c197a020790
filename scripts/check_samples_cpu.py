"""Check every sample kernel's seed against its task on the CPU with the Triton interpreter.

For each folder under sample_kernels/ that holds a task and a seed, and for each of the task's
``cpu_shapes``: build Model and ModelNew from the same torch seed, check that they hold the
same parameters, run both on the same inputs and compare with the task's atol/rtol. Prints one
line per sample and shape; exits 1 if anything fails.

Triton's interpreter is not faithful for bf16 (as of triton 3.9): an fp32 -> bf16 cast
truncates instead of rounding to nearest even as the GPU does, and ``tl.dot`` on bf16 operands
multiplies their raw uint16 bit patterns. Unless ``--raw-interpreter`` is given, this script
patches those two spots (see ``patch_interpreter_bf16``) so that the CPU result matches what the
same kernel computes on a GPU.

Each shape is checked with the seed's default tunables and again with every tunable at its
smallest (and, on the CPU, largest) choice in ``TUNABLES``, so multi-block paths run too.

With ``--cuda`` (on a GPU machine) the interpreter is not used: the benchmark shape and the
``check_shapes`` run on the GPU against the GPU reference, and the benchmark shape is timed.

    python scripts/check_samples_cpu.py [sample_name ...] [--cuda]
"""

from __future__ import annotations

import os
import sys

if "--cuda" not in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"  # must be set before triton is imported

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes  # noqa: E402
from evotui.task.model import (  # noqa: E402
    TaskError,
    load_module,
    make_init_inputs,
    make_inputs,
    read_meta,
    roofline_of,
    shape_overrides,
)

DEFAULT_TOL = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (1e-2, 1e-2),
               torch.float16: (1e-2, 1e-2)}
INPUT_SEED = 1234
MODEL_SEED = 42


def load_spec_module(path: str | Path):
    """Import a seed as a real module (Triton's @jit reads the kernels' source from the file)."""
    spec = importlib.util.spec_from_file_location("evotui_seed_mod", path)
    if spec is None or spec.loader is None:
        raise TaskError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clone(x):
    return x.clone() if isinstance(x, torch.Tensor) else x


def _to(x, device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


def tunable_variants(seed_mod, cuda: bool) -> list[tuple[str, dict]]:
    tunables = seed_mod.__dict__.get("TUNABLES", {})
    variants = [("default", {})]
    if tunables:
        variants.append(("min", {k: min(v) for k, v in tunables.items()}))
        if not cuda:
            variants.append(("max", {k: max(v) for k, v in tunables.items()}))
    return variants


def check_shape(task_mod, seed_mod, meta, shape, device, time_it=False) -> tuple[bool, str]:
    init = make_init_inputs(task_mod, shape)
    with shape_overrides(task_mod, shape):
        torch.manual_seed(MODEL_SEED)
        ref_model = task_mod.Model(*init).to(device)
    torch.manual_seed(MODEL_SEED)
    new_model = seed_mod.ModelNew(*init).to(device)

    ref_params = dict(ref_model.named_parameters())
    new_params = dict(new_model.named_parameters())
    if sorted(ref_params) != sorted(new_params):
        return False, f"parameter names differ: {sorted(ref_params)} vs {sorted(new_params)}"
    for name, p in ref_params.items():
        if p.shape != new_params[name].shape or not torch.equal(p, new_params[name]):
            return False, f"parameter {name} differs between Model and ModelNew"

    inputs = [_to(x, device) for x in make_inputs(task_mod, shape, INPUT_SEED)]
    pristine = [_clone(x) for x in inputs]
    with torch.no_grad():
        ref = ref_model(*[_clone(x) for x in inputs])
        out = new_model(*inputs)
    for x, p in zip(inputs, pristine, strict=True):
        if isinstance(x, torch.Tensor) and not torch.equal(x, p):
            return False, "ModelNew mutated its inputs"
    if not isinstance(out, torch.Tensor):
        return False, f"output is {type(out).__name__}, not a tensor"
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return False, f"output {tuple(out.shape)} {out.dtype} != reference {tuple(ref.shape)} {ref.dtype}"
    if not torch.isfinite(out.float()).all():
        return False, "output has NaN or Inf"
    atol, rtol = DEFAULT_TOL.get(ref.dtype, (1e-4, 1e-4))
    atol = meta.atol if meta.atol is not None else atol
    rtol = meta.rtol if meta.rtol is not None else rtol
    diff = (out.float() - ref.float()).abs().max().item() if out.numel() else 0.0
    if not torch.allclose(out.float(), ref.float(), atol=atol, rtol=rtol):
        return False, f"mismatch: max |diff| {diff:.3g} (atol {atol:g}, rtol {rtol:g})"
    msg = f"max |diff| {diff:.3g} (atol {atol:g}, rtol {rtol:g})"
    if time_it:
        from triton.testing import do_bench

        with torch.no_grad():
            t_new = do_bench(lambda: new_model(*inputs), warmup=50, rep=300)
            t_ref = do_bench(lambda: ref_model(*inputs), warmup=50, rep=300)
        roof = roofline_of(task_mod, inputs, [out])
        msg += (f"; seed {t_new * 1e3:.1f} us ({roof['bytes'] / t_new / 1e9:.2f} TB/s, "
                f"{roof['flops'] / t_new / 1e9:.0f} TFLOP/s), torch {t_ref * 1e3:.1f} us "
                f"({roof['bytes'] / t_ref / 1e9:.2f} TB/s, {roof['flops'] / t_ref / 1e9:.0f} "
                "TFLOP/s)")
    return True, msg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="sample folders to check (default: all)")
    ap.add_argument("--root", default=str(ROOT / "sample_kernels"))
    ap.add_argument("--raw-interpreter", action="store_true",
                    help="do not patch the interpreter's bf16 casts and bf16 tl.dot")
    ap.add_argument("--cuda", action="store_true",
                    help="run the benchmark and check shapes on the GPU (no interpreter)")
    args = ap.parse_args()
    device = torch.device("cuda" if args.cuda else "cpu")
    if not args.cuda and not args.raw_interpreter:
        patched = apply_interpreter_fixes()
        print(f"interpreter patches: {', '.join(patched) or 'none applied'}")

    folders = sorted(p for p in Path(args.root).iterdir()
                     if p.is_dir() and (p / "task.py").is_file() and (p / "seed.py").is_file())
    if args.names:
        folders = [p for p in folders if p.name in args.names]
        missing = set(args.names) - {p.name for p in folders}
        if missing:
            print(f"unknown samples: {sorted(missing)}")
            return 2
    failures = 0
    for folder in folders:
        try:
            task_mod = load_module(folder / "task.py", f"task_{folder.name}")
            seed_mod = load_spec_module(folder / "seed.py")
            meta = read_meta(task_mod, default_name=folder.name)
        except Exception as e:  # noqa: BLE001 - report and go on to the next sample
            print(f"FAIL {folder.name}: cannot load: {type(e).__name__}: {e}")
            failures += 1
            continue
        if not meta.cpu_shapes:
            print(f"FAIL {folder.name}: no cpu_shapes")
            failures += 1
            continue
        shapes = [{}, *meta.check_shapes] if args.cuda else list(meta.cpu_shapes)
        defaults = {k: seed_mod.__dict__[k] for k in seed_mod.__dict__.get("TUNABLES", {})}
        for shape in shapes:
            for label, values in tunable_variants(seed_mod, args.cuda):
                seed_mod.__dict__.update(defaults)
                seed_mod.__dict__.update(values)
                t0 = time.perf_counter()
                try:
                    ok, msg = check_shape(task_mod, seed_mod, meta, dict(shape), device,
                                          time_it=args.cuda and not shape and label == "default")
                except Exception as e:  # noqa: BLE001
                    ok, msg = False, f"{type(e).__name__}: {e}"
                    traceback.print_exc()
                dt = time.perf_counter() - t0
                print(f"{'ok  ' if ok else 'FAIL'} {folder.name} {shape or 'benchmark'} "
                      f"[{label}]: {msg} [{dt:.1f}s]", flush=True)
                failures += not ok
            seed_mod.__dict__.update(defaults)
    print(f"{len(folders)} samples, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
