"""Stable reason codes for a candidate's verdict. Scripts match on these strings: never rename."""

from __future__ import annotations

ACCEPTED = "accepted"

# Before any candidate code runs (static checks, in the parent)
SYNTAX_ERROR = "syntax_error"
FORBIDDEN_IMPORT = "forbidden_import"
FORBIDDEN_CALL = "forbidden_call"
FORBIDDEN_ATTRIBUTE = "forbidden_attribute"
FORBIDDEN_CONSTRUCT = "forbidden_construct"
BAD_INTERFACE = "bad_interface"
COMPILE_ERROR = "compile_error"  # CUDA C candidates: NVRTC's log is the message
NEEDS_GPU = "needs_gpu"  # a dialect with no CPU evaluation (CUDA C) on a CPU-only pool
# the text reads differently to different readers: a coding cookie, bytes that are not UTF-8,
# a line break Python does not count; or, at launch, Triton read other text than was checked
AMBIGUOUS_SOURCE = "ambiguous_source"

# Running the candidate (worker)
LOAD_ERROR = "load_error"
RUNTIME_ERROR = "runtime_error"
CRASHED = "crashed"
TIMEOUT = "timeout"
OUTPUT_FLOOD = "output_flood"
CUDA_ERROR = "cuda_error"
TORCH_FALLBACK = "torch_fallback"
NO_KERNEL = "no_kernel"
KERNELS_NOT_USED = "kernels_not_used"
THREADS_SPAWNED = "threads_spawned"
SUBPROCESS_SPAWNED = "subprocess_spawned"
TIMER_TAMPERED = "timer_tampered"
UNSYNCED_WORK = "unsynced_work"
TAMPERED = "tampered"

# Judging the outputs (judge process)
NOT_A_TENSOR = "not_a_tensor"
SHAPE_MISMATCH = "shape_mismatch"
DTYPE_MISMATCH = "dtype_mismatch"
DEVICE_MISMATCH = "device_mismatch"
NAN_INF = "nan_inf"
UNWRITTEN_OUTPUT = "unwritten_output"
MISMATCH = "mismatch"
MODIFIED_INPUTS = "modified_inputs"
STALE_OUTPUT = "stale_output"
CACHED_RESULTS = "cached_results"  # fast on values it has seen, slow on new ones
BELOW_ROOFLINE = "below_roofline"
OUT_OF_BOUNDS = "out_of_bounds"  # a guard band around an output or scratch buffer changed
SANITIZER_ERROR = "sanitizer_error"  # compute-sanitizer found a memory error (new bests)

# The harness itself
HARNESS_ERROR = "harness_error"
SANDBOX_UNAVAILABLE = "sandbox_unavailable"  # this kernel cannot confine candidates

DESCRIPTIONS: dict[str, str] = {
    ACCEPTED: "correct on fresh inputs and every check passed",
    SYNTAX_ERROR: "the candidate does not parse",
    FORBIDDEN_IMPORT: "imports a module candidates may not use",
    FORBIDDEN_CALL: "calls a function candidates may not use",
    FORBIDDEN_ATTRIBUTE: "touches an attribute candidates may not use",
    FORBIDDEN_CONSTRUCT: "uses a construct candidates may not use",
    BAD_INTERFACE: "does not define ModelNew with Model's interface",
    COMPILE_ERROR: "the device code does not compile",
    NEEDS_GPU: "this dialect runs only on a GPU and the evaluator has none",
    AMBIGUOUS_SOURCE: "its text reads differently to Python, the rules and Triton",
    LOAD_ERROR: "raised while importing or constructing ModelNew",
    RUNTIME_ERROR: "raised while running forward",
    CRASHED: "the worker process died",
    TIMEOUT: "did not finish within the time limit",
    OUTPUT_FLOOD: "printed more output than allowed",
    CUDA_ERROR: "left the CUDA context broken",
    TORCH_FALLBACK: "computes with torch instead of its own kernels",
    NO_KERNEL: "no kernel of the candidate ran",
    KERNELS_NOT_USED: "output does not depend on the candidate's kernels",
    THREADS_SPAWNED: "started threads",
    SUBPROCESS_SPAWNED: "started processes",
    TIMER_TAMPERED: "the timing functions or figures were tampered with",
    UNSYNCED_WORK: "work escapes the timed region (side streams or deferred work)",
    TAMPERED: "the worker's report does not answer the request: the harness was tampered with",
    NOT_A_TENSOR: "output is not a plain torch.Tensor",
    SHAPE_MISMATCH: "output shape differs from the reference",
    DTYPE_MISMATCH: "output dtype differs from the reference",
    DEVICE_MISMATCH: "output is on the wrong device",
    NAN_INF: "output holds NaN or Inf",
    UNWRITTEN_OUTPUT: "output holds memory the candidate never wrote",
    MISMATCH: "output differs from the reference beyond tolerance",
    MODIFIED_INPUTS: "modified its inputs",
    STALE_OUTPUT: "outputs produced while timing were wrong (cached or replayed results)",
    CACHED_RESULTS: "fast only on input values it has seen before (results cached across calls)",
    BELOW_ROOFLINE: "timed faster than the hardware can move the data",
    OUT_OF_BOUNDS: "wrote outside its buffers",
    SANITIZER_ERROR: "compute-sanitizer found a memory error",
    HARNESS_ERROR: "the evaluation harness failed (not the candidate's fault)",
    SANDBOX_UNAVAILABLE: "the operating system cannot confine candidates here (see `evotui doctor`)",
}
