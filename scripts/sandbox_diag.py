"""Which part of the sandbox stops CUDA (or anything else) from starting: each step alone
and all together, each in a fresh fork. python scripts/sandbox_diag.py [--gpu 0]"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402,F401 - imported before the forks, as the worker does

from evotui.eval.sandbox import landlock, namespaces, seccomp  # noqa: E402
from evotui.eval.sandbox.isolated import run_isolated  # noqa: E402
from evotui.eval.sandbox.policy import Confinement, default_limits  # noqa: E402


def cuda_works(_: object) -> dict:

    try:
        x = torch.ones(4, device="cuda")
        return {"ok": True, "sum": float(x.sum()), "devices": torch.cuda.device_count()}
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:300]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", default=os.environ.get("CUDA_VISIBLE_DEVICES") or "0")
    args = parser.parse_args()
    print("device nodes:", sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/nvidia-caps/*")))
    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        print(info, [line for line in Path(info).read_text().splitlines() if "Minor" in line or "Bus" in line])
    scratch = tempfile.mkdtemp(prefix="evotui-diag-")
    conf = Confinement(scratch=scratch, gpu=args.gpu, limits=default_limits(60, True))
    print("grants:", [(g.path, hex(g.access)) for g in conf.grants() if "/dev" in g.path or "bin" in g.path])

    def step(name: str, fn) -> None:
        def body(_: object) -> dict:
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                return {"ok": False, "error": f"step failed: {e}"}
            return cuda_works(None)
        outcome = run_isolated(lambda: None, body, None, 120)
        print(f"{name:28s}", outcome.answer, outcome.exit_status)

    step("nothing", lambda: None)
    step("namespaces", namespaces.enter)
    step("limits", conf.limits.apply)
    step("drop capabilities", namespaces.drop_capabilities)
    step("seccomp", seccomp.install)
    step("landlock", lambda: (landlock.set_no_new_privs(), landlock.restrict(conf.grants())))

    def everything_but(skip: str):
        def fn() -> None:
            namespaces.enter()
            if skip != "limits":
                conf.limits.apply()
            os.environ.clear()
            os.environ.update(conf.environment())
            if skip != "capabilities":
                namespaces.drop_capabilities()
            if skip != "seccomp":
                seccomp.install()
            landlock.set_no_new_privs()
            if skip != "landlock":
                landlock.restrict(conf.grants())
        return fn

    for skip in ("nothing", "limits", "capabilities", "seccomp", "landlock"):
        step(f"all but {skip}", everything_but(skip))

    for domain in (1, 16, 2, 10):  # AF_UNIX, AF_NETLINK, AF_INET, AF_INET6
        def one_domain(domain: int = domain) -> None:
            seccomp.ALLOWED_SOCKET_DOMAINS = (domain,)
            seccomp.install()
        step(f"seccomp, sockets of domain {domain}", one_domain)

    from evotui.eval.sandbox import landlock as ll
    everything = ll.WRITE | ll.EXECUTE | ll.IOCTL_DEV | ll.MAKE_CHAR | ll.MAKE_SOCK | ll.MAKE_FIFO
    for extra in ("/proc", "/proc/self", "/proc/driver", "/proc/sys"):
        def wider(extra: str = extra) -> None:
            landlock.set_no_new_privs()
            landlock.restrict(conf.grants() + [ll.Grant(extra, everything)])
        step(f"landlock + {extra}", wider)


if __name__ == "__main__":
    main()
