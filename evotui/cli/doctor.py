"""``evotui doctor``: what works here (GPU, Triton, cuda-python, compute-sanitizer, Dask,
Ollama, models) and the exact command that fixes what does not.

Exit 0 when a run can start (torch and Triton work: on a GPU or on the CPU interpreter, with
or without a model); 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import asdict, dataclass

import click

from evotui import config

TORCH_CUDA = "pip install torch --index-url https://download.pytorch.org/whl/cu128"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    required: bool = False


def check_torch_and_gpu() -> list[Check]:
    try:
        import torch
    except ImportError as e:
        return [Check("torch", False, str(e), "pip install torch", required=True)]
    out = [Check("torch", True, f"torch {torch.__version__}", required=True)]
    if torch.version.cuda is None:
        out.append(Check("GPU", False, "this torch build has no CUDA (CPU only); runs use "
                         "--device cpu (Triton interpreter, no kernel timings)", TORCH_CUDA))
    elif not torch.cuda.is_available():
        out.append(Check("GPU", False, f"torch {torch.__version__} (CUDA {torch.version.cuda}) "
                         "sees no GPU", "nvidia-smi  # check the driver and CUDA_VISIBLE_DEVICES"))
    else:
        names = [f"cuda:{i} {torch.cuda.get_device_name(i)} (sm_"
                 f"{''.join(map(str, torch.cuda.get_device_capability(i)))})"
                 for i in range(torch.cuda.device_count())]
        out.append(Check("GPU", True, ", ".join(names)))
    return out


def check_triton() -> list[Check]:
    try:
        import triton
    except ImportError as e:
        return [Check("Triton", False, str(e), "pip install triton", required=True)]
    out = [Check("Triton", True, f"triton {triton.__version__}", required=True)]
    try:
        import triton.runtime.interpreter  # noqa: F401
    except ImportError as e:
        out.append(Check("Triton interpreter", False, f"cannot import it: {e}",
                         "pip install --upgrade triton"))
    else:
        out.append(Check("Triton interpreter", True, "available (--device cpu)"))
    return out


def check_nvrtc() -> Check:
    fix = "pip install cuda-python nvidia-cuda-nvrtc"
    try:
        try:
            from cuda.bindings import nvrtc
        except ImportError:
            from cuda import nvrtc  # type: ignore[no-redef]  # cuda-python < 12.6
    except ImportError as e:
        return Check("cuda-python / NVRTC", False, f"not importable ({e}); needed by the CUDA C "
                     "backend only", fix)
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as e:  # the bindings import, but libnvrtc does not load
        return Check("cuda-python / NVRTC", False, f"bindings import, NVRTC does not load: {e}", fix)
    if int(err) != 0:
        return Check("cuda-python / NVRTC", False, f"nvrtcVersion failed: {err}", fix)
    return Check("cuda-python / NVRTC", True, f"NVRTC {major}.{minor}")


async def check_ollama(host: str | None, model: str, embed_model: str) -> list[Check]:
    try:
        from evotui.llm import DEFAULT_HOST, has_model, probe
    except ImportError as e:
        return [Check("Ollama client", False, str(e), "pip install ollama")]
    host = host or os.environ.get("OLLAMA_HOST") or None
    shown = host or DEFAULT_HOST
    status = await probe(host)
    if status.bad_address:
        return [Check("Ollama server", False, f"{status.error}; runs use the parameter mutator",
                      "point OLLAMA_HOST or --ollama-host at an address such as "
                      f"{DEFAULT_HOST}")]
    if not status.reachable:
        return [Check("Ollama server", False, f"nothing answers at {shown}; runs use the "
                      "parameter mutator (--ollama-host or OLLAMA_HOST point elsewhere)",
                      "ollama serve"),
                Check(f"model {model}", False, "unknown (no server)", f"ollama pull {model}")]
    if status.error is not None:
        return [Check("Ollama server", False, f"{shown}: {status.error}", "ollama serve")]
    out = [Check("Ollama server", True, f"{shown}, {len(status.models)} model(s): "
                 + (", ".join(status.models[:6]) or "none"))]
    out.append(Check(f"model {model}", has_model(status, model),
                     "present" if has_model(status, model) else "not pulled (mutations need it)",
                     None if has_model(status, model) else f"ollama pull {model}"))
    has_embed = has_model(status, embed_model)
    out.append(Check(f"embedding model {embed_model}", has_embed,
                     "present" if has_embed else "not pulled (optional: advice retrieval then "
                     "uses BM25 only)", None if has_embed else f"ollama pull {embed_model}"))
    return out


def check_home() -> Check:
    try:
        home = config.home()
        probe_file = home / ".doctor"
        probe_file.write_text("ok")
        probe_file.unlink()
    except Exception as e:
        return Check("data directory", False, f"not writable: {e}",
                     "export EVOTUI_HOME=/a/writable/folder", required=True)
    return Check("data directory", True, f"{home} (EVOTUI_HOME overrides it)")


def check_sanitizer() -> Check:
    from evotui.dialects.cuda import sanitizer

    exe = sanitizer.find()
    if exe is None:
        return Check("compute-sanitizer", False, "not found: CUDA C candidates are checked with "
                     "guard bands only", "install the CUDA toolkit, or put compute-sanitizer on PATH")
    return Check("compute-sanitizer", True, f"{exe} (memcheck on each new CUDA C best)")


def check_dask() -> Check:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return Check("Dask (optional)", True, f"distributed {version('distributed')} "
                     "(run --scheduler tcp://HOST:8786)")
    except PackageNotFoundError:
        return Check("Dask (optional)", False, "not installed; needed only to evaluate on a "
                     "Dask cluster (run --scheduler)", 'pip install "evotui[dask]"')


SANDBOX_PARTS = {
    "namespaces": ("user, network and mount namespaces: no network, no host sockets",
                   "sysctl -w kernel.unprivileged_userns_clone=1  # or user.max_user_namespaces > 0; "
                   "in a container: allow unshare (e.g. docker --security-opt seccomp=unconfined)"),
    "landlock": ("Landlock: reads only the system and Python, writes only its scratch folder",
                 "boot Linux >= 5.13 with landlock in lsm= (e.g. lsm=landlock,lockdown,yama,apparmor)"),
    "seccomp": ("seccomp: no ptrace, mounts, network sockets, io_uring or new namespaces",
                "seccomp filters need x86_64 and CONFIG_SECCOMP_FILTER"),
    "confined run": ("a confined process ran (limits, scrubbed environment, no capabilities)",
                     "see the message: a part above works alone but not together"),
}


def check_sandbox() -> list[Check]:
    """Each part of the operating system's containment of candidates, tried in a throwaway
    process; runs and bench refuse to evaluate without them (unless --no-sandbox)."""
    from evotui.eval.sandbox import probe

    isolation = probe()
    out = []
    for part, why in isolation.problems.items():
        what, fix = SANDBOX_PARTS[part]
        if part == "landlock" and why is None:
            what += f" (ABI {isolation.landlock_abi})"
        out.append(Check(f"sandbox: {part}", why is None, what if why is None else f"{why}",
                         None if why is None else f"{fix}  (or evaluate unconfined: --no-sandbox)",
                         required=True))
    return out


def run_checks(host: str | None, model: str, embed_model: str) -> list[Check]:
    checks = check_torch_and_gpu() + check_triton() + check_sandbox() + [
        check_nvrtc(), check_sanitizer(), check_dask()]
    checks += asyncio.run(check_ollama(host, model, embed_model))
    checks.append(check_home())
    return checks


@click.command("doctor")
@click.option("--ollama-host", default=None, metavar="URL",
              help="Ollama server to check (default: $OLLAMA_HOST, else http://127.0.0.1:11434).")
@click.option("--model", default=config.DEFAULT_MODEL, show_default=True,
              help="The model runs will ask for.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def doctor(ollama_host: str | None, model: str, as_json: bool) -> None:
    """What works here, and the exact command that fixes what does not."""
    checks = run_checks(ollama_host, model, config.DEFAULT_EMBED_MODEL)
    ready = all(c.ok for c in checks if c.required)
    if as_json:
        print(json.dumps({"ready": ready, "checks": [asdict(c) for c in checks]}))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(show_header=False, box=None, pad_edge=False)
        for c in checks:
            mark = "[green]ok[/]" if c.ok else "[red]missing[/]" if c.required else "[yellow]missing[/]"
            fix = f"\n  [dim]fix:[/] [bold]{c.fix}[/]" if c.fix else ""
            table.add_row(mark, f"[bold]{c.name}[/]", f"{c.detail}{fix}")
        console = Console()
        console.print(table)
        console.print("[green]ready to run[/]" if ready else "[red]not ready: fix the lines above[/]")
    sys.exit(0 if ready else 1)
