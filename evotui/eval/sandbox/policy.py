"""What a sandboxed candidate may touch: the paths it reads, the one folder it writes, the
programs it may run (the GPU compiler's, nothing on the CPU), its environment and limits."""

from __future__ import annotations

import glob
import os
import resource
import shutil
import site
import sys
from dataclasses import dataclass, field
from pathlib import Path

import evotui.eval.sandbox.landlock as ll

# the few files of /etc that a dynamic loader, libc and Python read; never the rest of /etc
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
        "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/alternatives",
        "/etc/gai.conf", "/etc/host.conf", "/etc/hosts")
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/proc", "/sys")
_DEVICES_READ = ("/dev/zero", "/dev/random", "/dev/urandom")
_DEVICES_WRITE = ("/dev/null", "/dev/full")
_GPU_SHARED = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-caps")
# the only variables a candidate's process starts with (besides those set for it below)
_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME",
             "CUDA_PATH", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH", "TRITON_INTERPRET",
             "CUDA_VISIBLE_DEVICES", "EVOTUI_CUDA_ARCH", "EVOTUI_CUDA_INCLUDE", "PYTHONPATH",
             "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")
MiB = 1 << 20


def scrubbed_environment(base: dict[str, str]) -> dict[str, str]:
    """The environment a candidate worker starts with: none of the user's variables."""
    return {k: v for k, v in base.items() if k in _ENV_KEPT}


@dataclass(frozen=True)
class Limits:
    cpu_s: int  # CPU seconds, over all threads
    file_bytes: int  # the largest file it may write
    open_files: int = 4096
    address_bytes: int | None = None  # None on a GPU: CUDA reserves terabytes of address space

    def apply(self) -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_s, self.cpu_s + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        n = self.open_files if hard == resource.RLIM_INFINITY else min(self.open_files, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
        if self.address_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (self.address_bytes, self.address_bytes))


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def _python_dirs() -> list[str]:
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.update(site.getsitepackages())
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        dirs.add(site.getusersitepackages())
    import evotui

    dirs.add(str(Path(evotui.__file__).resolve().parent))
    # pure-Python packages found through PYTHONPATH or an editable install's finder
    for name in ("triton", "torch", "numpy"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.add(str(Path(module.__file__).resolve().parent))
    # and the import path's other folders (wheels unpacked with --target), not the current
    # folder; Confinement.grants drops any that holds a protected path
    cwd = os.getcwd()
    dirs.update(p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) != cwd)
    return sorted(dirs)


def gpu_device_node(visible: str) -> str | None:
    """The /dev/nvidiaN of physical GPU ``visible``, from the driver's own listing in PCI-bus
    order (CUDA's order too, for GPUs of one model)."""
    root = Path("/proc/driver/nvidia/gpus")
    entries = []
    for info in sorted(root.glob("*/information")) if root.is_dir() else []:
        fields = dict(line.split(":", 1) for line in info.read_text().splitlines() if ":" in line)
        minor = fields.get("Device Minor", "").strip()
        if minor.isdigit():
            entries.append((info.parent.name, minor))
    try:
        index = int(visible)
    except ValueError:
        return None
    if not entries:  # no listing: a single device node is unambiguous
        nodes = sorted(p for p in Path("/dev").glob("nvidia[0-9]*"))
        return str(nodes[0]) if len(nodes) == 1 else None
    return f"/dev/nvidia{entries[index][1]}" if index < len(entries) else None


def compiler_programs() -> list[str]:
    """What Triton runs to build a GPU kernel and its launcher: ptxas, a C compiler and the
    programs gcc itself runs. Not a shell (the worker finds libcuda before the fork)."""
    found: list[str] = []
    for name in ("cc", "gcc", "as", "ld", "ld.bfd"):
        path = shutil.which(name, path="/usr/bin:/bin")
        if path:
            found.append(os.path.realpath(path))
    found += ["/usr/lib/gcc", "/usr/libexec/gcc"]
    # the dynamic loader: the kernel opens it for execution to start any of the above
    for pattern in ("/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*/ld-linux*.so*"):
        found += sorted({os.path.realpath(p) for p in glob.glob(pattern)})
    triton = sys.modules.get("triton")
    if triton is not None and triton.__file__:
        found.append(str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin"))
    if os.environ.get("TRITON_PTXAS_PATH"):
        found.append(os.environ["TRITON_PTXAS_PATH"])
    return found


@dataclass(frozen=True)
class Confinement:
    """One candidate's sandbox: ``scratch`` is the only folder it writes."""

    scratch: str
    gpu: str | None  # the physical GPU it was given ("3"), None on the CPU
    protected: tuple[str, ...] = ()  # never granted, nor any folder holding one
    limits: Limits = field(default_factory=lambda: Limits(cpu_s=3600, file_bytes=16 << 30))

    def grants(self) -> list[ll.Grant]:
        protected = [Path(p).resolve() for p in self.protected if p]
        reads = [*_SYSTEM, *_ETC, *_python_dirs()]
        grants = [ll.Grant(p, ll.READ) for p in reads
                  if not any(_contains(Path(p).resolve(), q) for q in protected)]
        grants += [ll.Grant(p, ll.READ_FILE) for p in _DEVICES_READ]
        grants += [ll.Grant(p, ll.READ_FILE | ll.WRITE_FILE) for p in _DEVICES_WRITE]
        grants.append(ll.Grant(self.scratch, ll.WRITE))
        # its own /proc/<pid> (opened here, in the candidate's process): the CUDA driver
        # writes there as it starts (names of its threads)
        grants.append(ll.Grant("/proc/self", ll.READ | ll.WRITE_FILE | ll.TRUNCATE))
        if self.gpu is not None:
            node = gpu_device_node(self.gpu)
            for p in [*_GPU_SHARED, *([node] if node else [])]:
                grants.append(ll.Grant(p, ll.READ | ll.WRITE_FILE | ll.IOCTL_DEV))
            grants += [ll.Grant(p, ll.READ | ll.EXECUTE) for p in compiler_programs()]
        return grants

    def environment(self) -> dict[str, str]:
        env = scrubbed_environment(dict(os.environ))
        env.update(HOME=self.scratch, TMPDIR=self.scratch, XDG_CACHE_HOME=self.scratch,
                   TRITON_CACHE_DIR=os.path.join(self.scratch, ".triton"),
                   PATH=env.get("PATH", "/usr/bin:/bin"))
        return env


def default_limits(timeout_s: float, gpu: bool) -> Limits:
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = 16 << 30
    return Limits(cpu_s=int(max(60.0, timeout_s) * 4) + 30,  # every thread's CPU time counts
                  file_bytes=min(memory, 64 << 30),
                  address_bytes=None if gpu else max(4 << 30, int(memory * 0.75)))
