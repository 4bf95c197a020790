"""Namespaces of its own for a candidate: a user namespace (so no privilege is needed), an
empty network namespace (no interface but a loopback that is down) and a mount namespace,
where the folders that hold other programs' unix sockets are empty.

Not a PID namespace: the CUDA driver fails to start in one whose /proc is the host's (seen on
an H200), and a container may refuse to mount another /proc. Nothing outlives a candidate
because its process group is killed whole, and the seccomp filter keeps every process it
starts in that group."""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 1 << 14, 1 << 18
SOCKET_FOLDERS = ("/run", "/var/run", "/tmp", "/var/tmp")
_SYS_CAPSET = 126
_CAP_VERSION_3 = 0x20080522
UNPRIVILEGED_UID = 1000  # who a worker started as root is inside the namespace

_libc = ctypes.CDLL(None, use_errno=True)


class NamespaceError(OSError):
    pass


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter() -> None:
    """Move this (single-threaded) process into new user, network and mount namespaces."""
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"unshare: {os.strerror(err)}")
    inside_uid = uid or UNPRIVILEGED_UID
    inside_gid = gid or UNPRIVILEGED_UID
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {uid} 1")
    _write("/proc/self/gid_map", f"{inside_gid} {gid} 1")


def _mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    def enc(value: str | None) -> bytes | None:
        return value.encode() if value is not None else None

    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), None) != 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"mount {target}: {os.strerror(err)}")


def hide_socket_folders(keep: list[str]) -> list[str]:
    """An empty tmpfs over each folder where unix sockets of other programs live (a socket
    is reached by its path, which Landlock does not govern). The paths of ``keep`` inside one
    (a checkout or a virtual environment under /tmp) are bound back at their own path, so
    only they show through. Mounts stay in this namespace. Returns the folders hidden."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    hidden: list[str] = []
    kept = sorted({os.path.realpath(p) for p in keep if os.path.exists(p)})
    for folder in SOCKET_FOLDERS:
        real = os.path.realpath(folder)
        if not os.path.isdir(real) or real in hidden:
            continue
        if any(real == k or real.startswith(k + os.sep) for k in kept):
            continue  # the folder lies inside a kept one: nothing to hide it from
        inside = [k for k in kept if k.startswith(real + os.sep)]
        outermost = [k for k in inside if not any(k.startswith(o + os.sep) for o in inside)]
        fds = [(k, os.open(k, os.O_PATH | os.O_CLOEXEC)) for k in outermost]
        try:
            _mount("tmpfs", real, "tmpfs", _MS_NOSUID | _MS_NODEV)
            for path, fd in fds:
                if os.path.isdir(f"/proc/self/fd/{fd}"):
                    os.makedirs(path, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    open(path, "a").close()
                _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        finally:
            for _, fd in fds:
                os.close(fd)
        hidden.append(real)
    return hidden


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """The creator of a user namespace holds every capability in it: give them all up."""
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _libc.syscall.restype = ctypes.c_long
    if _libc.syscall(ctypes.c_long(_SYS_CAPSET), ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"capset: {os.strerror(err)}")


def set_parent_death_signal(signal: int) -> None:
    _libc.prctl(1, signal, 0, 0, 0)  # PR_SET_PDEATHSIG
