"""Every cheat class that can run on the CPU, with candidates that really cheat, and honest
but unusual candidates that must pass. All go through one shared pool (Triton interpreter)."""

from __future__ import annotations

import pytest

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, SAMPLES
from tests.triton_variants import SOFTMAX_HONEST

SOFTMAX = CANDIDATES / "softmax"


def evaluate(pool, task, name: str, **kw):
    """A candidate of tests/candidates/softmax, or one built from the seed (by its name)."""
    source = SOFTMAX_HONEST[name] if name in SOFTMAX_HONEST else (SOFTMAX / name).read_text()
    return pool.evaluate(EvalRequest(task=task, source=source, name=name, **kw))


@pytest.mark.parametrize("name", ["honest_two_kernels.py", "honest_autotune.py",
                                  "honest_heuristics_hooks.py", "honest_int64_indexing.py",
                                  "honest_output_buffer_reuse.py", "honest_tma_descriptor.py",
                                  "honest_autotune_many_configs.py",
                                  "honest_value_dependent_time.py",
                                  # the seed plus one change (tests/triton_variants.py)
                                  *SOFTMAX_HONEST,
                                  # module constants from math (`tl.constexpr(math.log2(
                                  # math.e))`), read in the kernel as Triton requires
                                  "honest_math_constexpr_online.py",
                                  "honest_strided_exp2.py",
                                  # output: a view of a persistent buffer with a constant after it
                                  "honest_softmax_persistent_buf_const.py",
                                  "honest_mask_and_scalar_row.py"])
def test_honest_unusual_candidates_are_accepted(cpu_pool, softmax_task, name):
    result = evaluate(cpu_pool, softmax_task, name)
    assert result.accepted, (result.reason, result.message)
    assert result.interpreter and result.speedup_eager is None  # never a speedup on the CPU


@pytest.mark.parametrize(("name", "reasons"), [
    ("cheat_torch_fallback.py", {"torch_fallback"}),
    ("cheat_no_kernel.py", {"no_kernel"}),
    ("cheat_shape_cache.py", {"mismatch"}),
    # a hit returns an output the harness let go of (poisoned then: unwritten) or kept
    # (stale); which one depends on whether Python reuses a freed input's id
    ("cheat_identity_cache.py", {"mismatch", "stale_output", "unwritten_output"}),
    # its replayed tensor is poisoned when the harness lets go of it between timed calls
    ("cheat_replay_after_checks.py", {"stale_output", "unwritten_output"}),
    # the first CPU timed call (told apart by the version counter) computed one row
    ("cheat_skip_unchecked_timed_call.py", {"stale_output", "nan_inf", "unwritten_output"}),
    # an interpreted kernel rewrote the op name the policy looked up, in place
    ("cheat_interp_poke_opname.py", {"out_of_bounds"}),
    ("cheat_stale_memory.py", {"unwritten_output"}),  # its allocations are poisoned
    ("cheat_skip_last_row.py", {"unwritten_output"}),
    ("cheat_modify_inputs.py", {"modified_inputs"}),
    ("cheat_parameter_output.py", {"not_a_tensor"}),
    ("cheat_meta_output.py", {"not_a_tensor"}),
    ("cheat_grid_callback.py", {"torch_fallback"}),
    ("cheat_probe_checked_calls.py", {"stale_output"}),
    ("cheat_value_keyed_cache.py", {"stale_output", "cached_results"}),  # hits on repeats
    # an output `list` subclass whose __iter__ computes (unpacked outside the
    # policy), `.item()` element by element, a grid entry whose __index__ computes
    ("cheat_list_subclass_output.py", {"not_a_tensor", "forbidden_construct"}),
    ("cheat_item_host_compute.py", {"torch_fallback"}),
    ("cheat_grid_index.py", {"runtime_error", "forbidden_construct"}),
    ("cheat_downcast.py", {"mismatch"}),
    ("cheat_shape_specialised.py", {"mismatch", "runtime_error", "out_of_bounds"}),
    ("cheat_wrong.py", {"mismatch"}),
    # a kernel object built with one-argument `type()` from an unchecked function
    ("cheat_type_construct.py", {"runtime_error", "forbidden_call"}),
    ("cheat_jit_arg_construct.py", {"runtime_error", "forbidden_call"}),  # the same, as `FN=`
    # torch in the timed calls, told apart by the input's `_version` (the CPU
    # interpreter's timed calls were never watched)
    ("cheat_unwatched_timed_calls.py", {"torch_fallback"}),
    # the inputs read through `str(tensor)` (formatted with dispatch modes off),
    # the softmax computed in Python
    ("cheat_repr_host_compute.py", {"torch_fallback"}),
    # `match` made the skipped `__main__` self-test run (`case __name__:`), read
    # `torch.utils._python_dispatch` by keyword patterns, and rebound a kernel's constant
    ("cheat_match_main.py", {"forbidden_construct"}),
    ("cheat_match_class_getattr.py", {"forbidden_construct"}),
    ("cheat_match_rebind_constant.py", {"forbidden_construct"}),
    # `T = torch` hid `T.package.sys_importer.import_module` from the path rules
    ("cheat_alias_package.py", {"forbidden_construct"}),
    # `tl.extra.modules` is sys.modules; torch run in a joined thread
    ("cheat_extra_modules_thread.py", {"forbidden_attribute"}),
    # torch.Tensor.new_empty (which Triton's argument copy calls with the policy
    # suspended) patched through `self.x = f` / `ctx.x = f` with torch.Tensor as `self`/`ctx`
    # and put back before the outputs were read; TensorDescriptor given a `base` property.
    # `self` is trusted only in a method of the file's own class, called on an instance;
    # `ctx` only in forward/backward of a Function without setup_context or its own apply
    ("cheat_setup_context_new_empty.py", {"forbidden_construct"}),
    ("cheat_apply_override.py", {"forbidden_construct"}),
    ("cheat_own_init_self.py", {"forbidden_construct"}),
    ("cheat_method_self.py", {"forbidden_construct"}),
    ("cheat_desc_base_property.py", {"forbidden_construct"}),
    # a jit function's name bound again to plain Python, which the kernel called
    ("cheat_jit_name_redef.py", {"forbidden_construct"}),
    ("cheat_jit_name_redef_plain.py", {"forbidden_construct"}),
    ("cheat_jit_name_for.py", {"forbidden_construct"}),
    ("cheat_jit_name_class.py", {"forbidden_construct"}),
    # a log file opened on the worker's answer pipe, its keyword built at run time
    ("cheat_forge_answer_log_file_unpacked.py", {"load_error"}),
])
def test_runtime_cheats_are_rejected_with_their_reason(cpu_pool, softmax_task, name, reasons):
    result = evaluate(cpu_pool, softmax_task, name)
    assert not result.accepted
    assert result.reason in reasons, (result.reason, result.message)
    assert result.message


@pytest.mark.parametrize(("name", "reason"), [
    ("cheat_side_stream.py", "forbidden_attribute"),
    ("cheat_thread.py", "forbidden_import"),
    ("cheat_patch_timer.py", "forbidden_construct"),
    ("cheat_slow_baseline.py", "forbidden_construct"),
    ("cheat_try_fallback.py", "forbidden_construct"),
    ("cheat_inspect.py", "forbidden_import"),
    ("cheat_tensor_subclass.py", "forbidden_construct"),
    ("cheat_dynamic_import.py", "forbidden_attribute"),
    # modules re-exported by allowed ones, private chains through
    # `self`, host-side compute, argument objects whose properties Triton runs, the seed
    ("cheat_python_compute.py", "forbidden_attribute"),  # .tolist()
    # a shell, a detached process: the sandbox contains their harm (tests/
    # test_sandbox_escapes.py); the rule stays, since a program started from the candidate's
    # process holds the worker's answer pipe too
    ("cheat_os_system_via_torch.py", "forbidden_attribute"),
    ("cheat_detached_process.py", "forbidden_attribute"),
    # the worker's answer written by the candidate (a file descriptor of its own process)
    ("cheat_forge_answer_os.py", "forbidden_attribute"),
    ("cheat_forge_answer_log_file.py", "forbidden_call"),
    ("cheat_thread_via_torch.py", "forbidden_attribute"),
    ("cheat_read_request_via_stack.py", "forbidden_attribute"),
    ("cheat_policy_suspend_closure.py", "forbidden_attribute"),
    ("cheat_private_via_self.py", "forbidden_attribute"),
    ("cheat_numpy_host_compute.py", "forbidden_attribute"),
    ("cheat_tolist_host_compute.py", "forbidden_attribute"),
    ("cheat_fingerprint_cache.py", "forbidden_attribute"),
    ("cheat_seed_keyed_cache.py", "forbidden_attribute"),
    ("cheat_autotune_key_property.py", "forbidden_construct"),
    ("cheat_arg_property_leaf.py", "forbidden_construct"),
    # a stack walk through a generator's frame, `__exit__` swallowing an
    # exception (a `try` in disguise), `F.torch.library`, Python called from a kernel body
    ("cheat_genframe_suspend.py", "forbidden_attribute"),
    ("cheat_with_exit_tbframe.py", "forbidden_construct"),
    ("cheat_library_override_clone.py", "forbidden_attribute"),
    ("cheat_interp_python_in_kernel.py", "forbidden_call"),
    ("cheat_kernel_method_call.py", "forbidden_construct"),  # a global's method in a kernel
    # code in string annotations, evaluated by get_type_hints/singledispatch
    ("cheat_type_hints_eval.py", "forbidden_construct"),
    ("cheat_singledispatch_eval.py", "forbidden_construct"),
    ("cheat_tensor_subclass_output_raising.py", "forbidden_construct"),  # `T = torch.Tensor`
    # escapes through allowed modules (`enum.bltns.exec`, `global_enum` with
    # `module=`, `functools.update_wrapper(self, torch)`, `torch.package`), classes built at
    # runtime (`type(name, (torch.Tensor,), ...)`, `make_dataclass(bases=...)`)
    ("cheat_enum_bltns.py", "forbidden_attribute"),
    ("cheat_global_enum.py", "forbidden_attribute"),
    ("cheat_update_wrapper.py", "forbidden_attribute"),
    ("cheat_torch_package.py", "forbidden_attribute"),
    ("cheat_type3_dispatch.py", "forbidden_call"),
    ("cheat_make_dataclass_dispatch.py", "forbidden_attribute"),
    # a pre-run hook on the kernel, the interpreter's kernel cache written
    ("cheat_pre_run_hook.py", "forbidden_attribute"),
    ("cheat_rewritten_fn_cache.py", "forbidden_construct"),
    # guards of the wider module constants: `triton.jit(python_fn)` passed as a constexpr
    # (its body is checked as a kernel's: torch there), a constant rebound to an object
    ("cheat_jit_python_constexpr.py", "forbidden_call"),
    ("cheat_rebound_constant.py", "forbidden_construct"),
    # what becomes a kernel (`triton.jit(body)`, a `heuristics` wrapper
    # around an object, a parameter default), names
    # the interpreter puts into the module (`np`), objects bound inside `if`, `Tensor.apply_`,
    # attributes written through `self.k` / `self.K` / `self.lang`, a new `tl.` name
    # (`name = triton.jit(fn)` is how some honest files make kernels: `fn`'s body is checked
    # as a kernel's, and `body` calls torch there)
    ("cheat_jit_call.py", "forbidden_call"),
    ("cheat_heuristics_fake.py", "forbidden_construct"),
    ("cheat_kernel_default.py", "forbidden_call"),
    ("cheat_np_injected.py", "forbidden_construct"),
    ("cheat_nested_module_name.py", "forbidden_call"),
    ("cheat_apply_host.py", "forbidden_attribute"),
    ("cheat_rewrite_attr.py", "forbidden_construct"),
    ("cheat_class_rewrite.py", "forbidden_construct"),
    ("cheat_tl_new_attr.py", "forbidden_attribute"),
    # dunders bound in a class body (`__class__` as a property, `for __hash__ in
    # ...`, `__bool__`, `__str__`) that Triton's launch calls with the policy suspended; a
    # harness mark set by a class; torch as a value in a kernel body; names the interpreter
    # put into the module read where the file bound them only as a parameter (a shell ran);
    # from-imports judged less strictly than attributes (`sys.modules`); TorchScript
    ("cheat_class_property_global.py", "forbidden_construct"),
    ("cheat_autotune_key_eq_loop.py", "forbidden_construct"),
    ("cheat_descriptor_field_bool.py", "forbidden_construct"),
    ("cheat_reinterpret_dtype_object.py", "forbidden_construct"),
    ("cheat_annotation_str.py", "forbidden_construct"),
    ("cheat_watched_flag_grid.py", "forbidden_construct"),
    ("cheat_kernel_torch_value.py", "forbidden_call"),
    ("cheat_np_bound_as_parameter.py", "forbidden_construct"),
    ("cheat_inspect_shell.py", "forbidden_construct"),
    ("cheat_sys_modules.py", "forbidden_import"),
    ("cheat_compilation_unit.py", "forbidden_attribute"),
    # a tensor handed to a constexpr parameter and its methods called in the body;
    # `__doc__` as a property; the interpreter's `np` read by a class body or a top-level
    # line before the file binds it
    ("cheat_constexpr_tensor_method.py", "forbidden_call"),
    ("cheat_grid_doc_property.py", "forbidden_construct"),
    ("cheat_class_body_load_name.py", "forbidden_construct"),
    ("cheat_module_load_name.py", "forbidden_construct"),
    # an autograd Function's `ctx` rebound to torch.Tensor (`ctx.detach = f`), a
    # descriptor rebuilt with `desc.__init__` around an object with a `data_ptr` property
    ("cheat_ctx_rebind_detach.py", "forbidden_construct"),
    ("cheat_descriptor_reinit.py", "forbidden_construct"),
    ("fault_syntax.py", "syntax_error"),
])
def test_static_rules_reject_before_anything_runs(cpu_pool, softmax_task, name, reason):
    result = evaluate(cpu_pool, softmax_task, name)
    assert (result.accepted, result.reason) == (False, reason), result.message
    assert result.wall_s < 1.0  # no worker was involved


@pytest.mark.parametrize(("name", "reason", "words"), [
    # Triton runs `hasattr(arg, "dtype")` with the policy suspended: plain argument types only
    ("cheat_autotune_key_property.py", "runtime_error", "kernel argument #4 is a `Tag`"),
    ("cheat_arg_property_leaf.py", "runtime_error", "kernel argument #4 is a `Tag`"),
    # the same global seed after every input set, and new values before every timed call:
    # its cache answers for values that changed since
    # (or, when a checked call's tensor reuses an old one's address, in a trial already)
    ("cheat_seed_keyed_cache.py", "stale_output|mismatch", "elements beyond tolerance"),
    # Python computes the answer; a kernel writes it: with the launches skipped, still right
    ("cheat_python_compute.py", "kernels_not_used", "do not compute the result"),
    # an eval escape that switched the op policy's recording off: the harness's code changed
    ("cheat_type_hints_eval.py", "timer_tampered", "checks' code were replaced"),
    # the op allowlist widened through `torch.package` / `enum.bltns.exec`: a constant of
    # the harness rebound
    ("cheat_torch_package.py", "timer_tampered", "checks' code were replaced"),
    ("cheat_enum_bltns.py", "timer_tampered", "checks' code were replaced"),
    # a lambda wrapped in tl.constexpr and called by the kernel: what it wraps is checked
    ("cheat_constexpr_callable.py", "runtime_error", "kernel argument `FN` is a `function`"),
    # torch.Tensor.detach patched through `self.T = torch.Tensor` (the harness calls detach)
    ("cheat_patch_tensor_detach.py", "timer_tampered", "Tensor.detach"),
    # a Tensor subclass made with type(): its __torch_dispatch__ never gets to run
    ("cheat_type3_dispatch.py", "runtime_error", "torch.Tensor subclasses are not allowed"),
    # a Tensor subclass output whose __torch_function__ raises: the candidate's failure
    ("cheat_tensor_subclass_output_raising.py", "not_a_tensor", "not a plain torch.Tensor"),
    # a launch runs only the file's checked @triton.jit defs, as Triton built them (not
    # `type(kernel)(body)`, a replaced `rewrite`), with plain defaults; a tuner wraps only
    # kernels; Triton's classes are re-read by identity; the interpreter reads a kernel's own
    # def (the string's kernel never runs). `triton.jit(body)` on a top-level def is one of
    # the file's kernels: its body runs watched under the interpreter
    ("cheat_jit_call.py", "torch_fallback", "aten::_softmax"),
    ("cheat_type_construct.py", "runtime_error", "not one of the file's @triton.jit defs"),
    ("cheat_rewrite_attr.py", "runtime_error", "the kernel object's `rewrite` was replaced"),
    ("cheat_kernel_default.py", "runtime_error", "kernel argument #1 is a `dict`"),
    ("cheat_heuristics_fake.py", "runtime_error", "around something that is not a kernel"),
    # (the class found patched before the first output is read)
    ("cheat_class_rewrite.py", "timer_tampered", "InterpretedFunction.rewrite"),
    ("cheat_find_def_docstring.py", "unwritten_output", "never written"),
    # files mapped in __init__ to rewrite the dumped outputs after the dump
    ("cheat_mmap_dumped_outputs.py", "load_error", "file-backed tensors and storages"),
    ("cheat_repr_host_compute.py", "torch_fallback", "a tensor printed"),
    ("cheat_alias_package.py", "torch_fallback", "the op policy switched off"),
    ("cheat_extra_modules_thread.py", "torch_fallback", "a thread started in forward"),
    # dunders are refused statically; the runtime checks behind them
    ("cheat_list_subclass_output.py", "not_a_tensor", "not a plain torch.Tensor"),
    ("cheat_grid_index.py", "runtime_error", "the launch grid is tuple ['Lazy']"),
    # a callback marked as the harness's own (marks are by identity now), an
    # autotune key / a reinterpret dtype / a descriptor field that is an object whose
    # dunders Triton calls inside the launch
    ("cheat_watched_flag_grid.py", "torch_fallback", "aten::_softmax"),
    ("cheat_autotune_key_eq_loop.py", "runtime_error", "name kernel parameters by strings"),
    ("cheat_reinterpret_dtype_object.py", "runtime_error", "not a dtype"),
    ("cheat_descriptor_field_bool.py", "runtime_error", "`.round_f32_to_tf32`"),
    # what a tuner iterates and hashes while the launch runs (a duck-typed config,
    # a config value whose generated hash reads a property, a dict subclass of heuristics),
    # a tensor as a constexpr, the grid object's attributes read by functools.wraps, and
    # the interpreter's globals (the module no longer gets them)
    ("cheat_duck_config.py", "runtime_error", "not a triton.Config"),
    ("cheat_perf_model_config_hash.py", "runtime_error", "kernel argument `TAG`"),
    ("cheat_heuristics_dict_items.py", "runtime_error", "a plain dict"),
    ("cheat_constexpr_tensor_method.py", "runtime_error", "got a tensor"),
    ("cheat_grid_doc_property.py", "unwritten_output", "never written"),
    ("cheat_class_body_load_name.py", "runtime_error", "name 'np' is not defined"),
    ("cheat_module_load_name.py", "load_error", "name 'np' is not defined"),
    # under the interpreter a launch runs watched but for Triton's own copies: candidate code
    # the launch reaches (a `__class__` property read by `inspect.ismodule`, torch called in
    # a kernel body) is seen without the static rules. An annotation object is no longer
    # printed on the CPU at all (the interpreter is handed the checked def's line and text,
    # and builds no JITFunction to look for it): its `__str__`, the softmax, never runs
    ("cheat_class_property_global.py", "torch_fallback", "aten::_softmax"),
    ("cheat_annotation_str.py", "unwritten_output", "never written"),
    ("cheat_kernel_torch_value.py", "torch_fallback", "aten::_softmax"),
    ("cheat_interp_python_in_kernel.py", "torch_fallback", "aten::_softmax"),
    # a patch of torch.Tensor.detach undone before the request ended (the harness's
    # code is compared before every output is read), a descriptor rebuilt after the launch
    # checked it (its arguments are checked again before Triton copies them back)
    ("cheat_ctx_rebind_detach.py", "timer_tampered", "Tensor.detach"),
    ("cheat_descriptor_reinit.py", "runtime_error", "is a `Probe`"),
    # behind the static rules: the harness's code compared as each launch copies
    # its arguments (a patch put back before the outputs were read ran there)
    ("cheat_setup_context_new_empty.py", "timer_tampered", "Tensor.new_empty"),
    ("cheat_apply_override.py", "timer_tampered", "Tensor.new_empty"),
    ("cheat_own_init_self.py", "timer_tampered", "Tensor.new_empty"),
    ("cheat_method_self.py", "timer_tampered", "Tensor.new_empty"),
    ("cheat_desc_base_property.py", "timer_tampered", "TensorDescriptor (its names)"),
])
def test_cheats_past_the_static_rules_are_still_caught_at_runtime(raw_cpu_pool, softmax_task,
                                                                 name, reason, words):
    result = evaluate(raw_cpu_pool, softmax_task, name)
    assert not result.accepted and result.reason in reason.split("|"), result.message
    assert words in result.message


def test_a_worker_whose_torch_was_patched_is_replaced(raw_cpu_pool, softmax_task):
    """a patch found during a launch ends the request *and* the worker: the next
    candidate (the honest seed) runs in a clean process."""
    cheat = evaluate(raw_cpu_pool, softmax_task, "cheat_desc_module_patch.py")
    assert (cheat.accepted, cheat.reason) == (False, "timer_tampered"), cheat.message
    assert "validate_block_shape" in cheat.message
    seed = raw_cpu_pool.evaluate(EvalRequest(task=softmax_task,
                                             source=(SAMPLES / "softmax" / "seed.py").read_text()))
    assert seed.accepted, seed.message


def test_a_weight_cache_keyed_on_the_version_counter_is_honest(cpu_pool):
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    source = (CANDIDATES / "rmsnorm" / "honest_weight_cache_version.py").read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / "rmsnorm"), source=source))
    assert result.accepted, (result.reason, result.message)


def test_copying_device_values_to_the_host_is_a_torch_fallback():
    """`x.cpu()` in forward, then numpy or Python computing the answer: on a GPU the copy
    itself is the violation (here a meta tensor stands in for a device one)."""
    import torch

    from evotui.eval.op_policy import OpPolicy

    for move, op in ((lambda t: t.cpu(), "_to_copy"), (lambda t: torch.empty(2).copy_(t), "copy_")):
        with OpPolicy() as policy, pytest.raises(NotImplementedError):  # meta holds no values
            move(torch.empty(2, device="meta"))
        assert policy.violations == {f"aten::{op} (device to host)": 1}
    with OpPolicy() as policy:
        torch.empty(2).to("cpu").clone()
    assert not policy.violations


def test_threads_left_running_are_caught_at_runtime(raw_cpu_pool, softmax_task):
    result = evaluate(raw_cpu_pool, softmax_task, "fault_spawn_thread.py")
    # started in forward, it is a violation as it starts; left running, too
    assert result.reason in {"threads_spawned", "torch_fallback"}, result.message
    assert "thread" in result.message


def test_a_log_file_is_refused_however_its_keyword_is_spelt(cpu_pool, softmax_task):
    result = evaluate(cpu_pool, softmax_task, "cheat_forge_answer_log_file_unpacked.py")
    assert (result.accepted, result.reason) == (False, "load_error"), result.message
    assert "a log file can be the worker's answer" in result.message
    assert "forged by the candidate" not in result.message


def test_a_tuner_benchmarks_with_the_drivers_benchmarker_not_the_candidates(monkeypatch):
    """`triton.autotune(do_bench=f)` (however spelt: `**{...}` built at run time) would have
    the tuner call `f` while a launch runs; in a candidate's process tuners ignore it."""
    import functools

    from triton.runtime import autotuner, driver

    from evotui.eval import lockdown

    # Triton's own (a cached_property that returns the candidate's function if it gave one)
    monkeypatch.setattr(autotuner.Autotuner, "do_bench",
                        functools.cached_property(lambda self: self._do_bench))
    drivers = type("Driver", (), {"get_benchmarker": lambda self: "the driver's"})()
    monkeypatch.setattr(type(driver), "active", property(lambda _self: drivers), raising=False)
    lockdown._tuners_benchmark_with_the_driver()
    tuner = object.__new__(autotuner.Autotuner)
    tuner._do_bench = lambda *a, **k: "the candidate's"
    assert tuner.do_bench == "the driver's"


def test_without_the_rules_a_candidate_writes_its_workers_answer(raw_cpu_pool, softmax_task):
    """Why writing a file descriptor is refused by the rules although the sandbox contains
    every file: the candidate's process answers for it over a pipe of its own. With the rules
    off, a forged answer is what the pool hears (if this ever fails, the answer channel no
    longer trusts the candidate's process, and `os`/`open` may be allowed whole)."""
    result = evaluate(raw_cpu_pool, softmax_task, "cheat_forge_answer_os.py")
    assert not result.accepted
    assert result.message == "an answer forged by the candidate", result.message


def test_uninitialised_allocations_in_checked_calls_are_poisoned():
    import torch

    from evotui.eval.op_policy import OpPolicy

    with OpPolicy(poison=True) as policy:
        a = torch.empty(4, 3)
        b = torch.empty_like(a, dtype=torch.bfloat16)
        s = torch.empty_strided((3, 2), (1, 3), dtype=torch.float16)
        z = torch.zeros(5)
        r = torch.ones(2)
        r.resize_(1000)  # keeps its first two elements, the rest is new memory
    assert r[:2].eq(1).all() and torch.isnan(r[2:]).all()
    assert torch.isnan(a).all() and torch.isnan(b.float()).all() and torch.isnan(s.float()).all()
    assert a.view(torch.int32).eq(-1).all() and b.view(torch.int16).eq(-1).all()  # 0xFF bytes
    assert z.eq(0).all() and not policy.violations  # allocation is allowed, zeros stay zeros



@pytest.mark.parametrize(("sample", "name"), [
    ("layernorm", "layernorm_tutorial.py"),  # register_buffer, static_assert, device_print
    ("matmul_bias_relu", "matmul_bias_relu_tutorial_autotune.py"),  # configs from a function
    ("rmsnorm", "rmsnorm_reduce.py"),  # tl.reduce with a jit combine, static_range
    ("row_sum", "row_sum_scan.py"),  # tl.associative_scan, SM count behind x.is_cuda
    ("cross_entropy", "cross_entropy_libdevice.py"),  # seeded dropout at p=0, libdevice.log
    # libdevice functions were stubs returning None under the interpreter
    ("rmsnorm", "rmsnorm_liger_libdevice_rsqrt.py"),  # Liger's autograd.Function, RSTD scratch
    ("add_gelu", "add_gelu_libdevice_erf.py"),  # autotune, an erf GELU helper, cache_modifier
])
def test_honest_tutorial_style_kernels_on_other_tasks_are_accepted(cpu_pool, sample, name):
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    source = (CANDIDATES / "samples" / name).read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / sample), source=source))
    assert result.accepted, (result.reason, result.message)


@pytest.mark.parametrize(("sample", "name"), [
    ("add_gelu", "honest_inv_sqrt2_constexpr.py"),  # tl.constexpr(1.0 / math.sqrt(2.0))
    ("add_gelu", "honest_jit_fn_constexpr.py"),  # a @triton.jit function as a constexpr arg
    ("cross_entropy", "honest_neg_inf_constexpr.py"),  # tl.constexpr(float("-inf"))
    ("row_sum", "honest_version_gate_cumsum.py"),  # triton.__version__, constexpr(CHUNK * 2)
    ("layernorm", "honest_finfo_constexpr.py"),  # tl.constexpr(torch.finfo(torch.float32).tiny)
])
def test_honest_module_constants_and_kernel_arguments_are_accepted(cpu_pool, sample, name):
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    source = (CANDIDATES / sample / name).read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / sample), source=source))
    assert result.accepted, (result.reason, result.message)


@pytest.mark.parametrize(("sample", "path"), [
    # false rejections, each once rejected
    ("softmax", "softmax/honest_softmax_staticmethod.py"),  # @staticmethod over @triton.jit
    ("softmax", "softmax/honest_softmax_dict_copy.py"),  # `DEFAULTS.copy()` (`copy` a module name)
    ("add_gelu", "add_gelu/honest_add_gelu_constexpr_grid.py"),  # grid of tl.constexpr ints
    ("row_sum", "row_sum/honest_row_sum_size_grid.py"),  # `kernel[x.shape[:1]]`: a torch.Size
    ("matmul_bias_relu", "matmul/honest_matmul_pad_k.py"),  # F.pad of K to the tile
    ("layernorm", "layernorm/honest_layernorm_input_arg.py"),  # `forward(self, input)`
    ("layernorm", "layernorm/honest_layernorm_main_selftest.py"),  # an `if __name__` self-test
    ("rmsnorm_fp16", "rmsnorm/honest_rmsnorm_fp16_namedtuple_cfg.py"),  # NamedTuple._replace
    # module constants: a parameter's default, derived from a name a kernel also has as a
    # parameter, chosen by a 0/1 knob (IfExp), or by torch.cuda.is_available()
    ("rmsnorm", "rmsnorm/honest_rmsnorm_kernel_default_global.py"),
    ("add_gelu", "add_gelu/honest_add_gelu_derived_constexpr.py"),
    ("row_sum", "row_sum/honest_row_sum_knob_constexpr.py"),
    ("cross_entropy", "cross_entropy/honest_cross_entropy_is_cuda_constexpr.py"),
    # getattr with a constant name, nn.Linear's reset_parameters, a str
    # enum, collections.abc annotations, a kernel default `2 ** 10`
    ("matmul_bias_relu", "matmul/honest_matmul_getattr_bias.py"),
    ("matmul_bias_relu", "matmul/honest_matmul_reset_parameters.py"),
    ("cross_entropy", "cross_entropy/honest_cross_entropy_str_enum.py"),
    ("layernorm", "layernorm/honest_layernorm_collections_abc.py"),
    ("softmax", "softmax/honest_softmax_default_pow2.py"),
    ("rmsnorm", "rmsnorm/honest_rmsnorm_autograd_function.py"),  # Function.apply, ctx.eps = eps
])
def test_honest_code_as_engineers_write_it_is_accepted(cpu_pool, sample, path):
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    source = (CANDIDATES / path).read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / sample), source=source))
    assert result.accepted, (result.reason, result.message)


@pytest.mark.parametrize(("sample", "name", "reasons"), [
    # a kernel's 64 partial sums added in Python, the output made by `torch.full`
    # (no scalar read after a kernel ran)
    ("cross_entropy", "cheat_host_mean.py", {"torch_fallback"}),
    # a counter kept in the lowest bit of a weight (within tolerance)
    ("rmsnorm", "cheat_state_in_weight.py", {"modified_inputs"}),
])
def test_runtime_cheats_on_other_tasks_are_rejected(cpu_pool, sample, name, reasons):
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    source = (CANDIDATES / sample / name).read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / sample), source=source))
    assert not result.accepted and result.reason in reasons, (result.reason, result.message)


def test_a_scalar_read_after_a_kernel_ran_is_a_torch_fallback():
    """Before the first launch a flag or a size, fine; after it, the host finishing what a
    kernel computed."""
    import torch

    from evotui.eval.op_policy import OpPolicy

    with OpPolicy() as policy:
        torch.ones(2)[0].item()
    assert not policy.violations
    with OpPolicy() as policy:
        policy.enter_kernel()
        policy.exit_kernel()
        torch.ones(2)[0].item()
    assert list(policy.violations) == ["aten::_local_scalar_dense (a value read on the host "
                                       "after a kernel ran)"]


def test_a_parameter_used_as_scratch_is_rejected_with_a_way_out(cpu_pool, softmax_task):
    """A documented trade-off of the weights guard: the message names the parameter
    and the alternative."""
    result = evaluate(cpu_pool, softmax_task, "tradeoff_param_as_scratch.py")
    assert (result.accepted, result.reason) == (False, "modified_inputs"), result.message
    assert "`scratch`" in result.message and "register_buffer" in result.message


def test_a_task_file_changed_during_a_run_is_refused(cpu_pool, tmp_path):
    """The judge computes references only from the text the task had when it was resolved
    (a candidate that rewrote task.py on disk would choose the reference; the sandbox also
    keeps the task file out of its reach)."""
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    (tmp_path / "task.py").write_text((SAMPLES / "softmax" / "task.py").read_text())
    task = resolve_task(tmp_path)
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    assert cpu_pool.evaluate(EvalRequest(task=task, source=seed)).accepted
    with (tmp_path / "task.py").open("a") as f:
        f.write("\nModel.forward = lambda self, x: x * 0  # the reference, chosen\n")
    result = cpu_pool.evaluate(EvalRequest(task=task, source=seed))
    assert (result.accepted, result.reason) == (False, "tampered"), result.message
    assert "changed on disk" in result.message


def test_a_loss_estimated_from_part_of_each_row_is_a_mismatch(cpu_pool, tmp_path):
    """A mean cross-entropy from a quarter of each row's logits (plus a
    bias correction) was within tolerance on randn logits at 16384 x 1024. The task's logits
    are peaked now, as a language model's are, and the estimate misses the hot classes."""
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    text = (SAMPLES / "cross_entropy" / "task.py").read_text()
    small = '"cpu_shapes": [{"batch_size": 16, "num_classes": 512},'
    assert small in text
    (tmp_path / "task.py").write_text(text.replace(
        small, '"cpu_shapes": [{"batch_size": 16384, "num_classes": 1024},'))
    source = (CANDIDATES / "cross_entropy" / "cheat_ce_subsample.py").read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(tmp_path), source=source))
    assert (result.accepted, result.reason) == (False, "mismatch"), result.message


def test_the_worker_runs_the_file_as_the_rules_judged_it():
    """The `if __name__ == "__main__":` block the static rules skip is left out of what the
    worker executes too, so no way of making `__name__` "__main__" runs it."""
    from evotui.eval.candidate_runner import CandidateRunner

    source = "RAN = []\nif __name__ == '__main__':\n    RAN.append(1)\n"
    namespace = {"__name__": "__main__"}
    exec(compile(CandidateRunner._checked_tree(source), "c.py", "exec"), namespace)
    assert namespace["RAN"] == []
