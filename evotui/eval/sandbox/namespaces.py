"""Namespaces of its own for a candidate: a user namespace (so no privilege is needed), an
empty network namespace (no interface but a loopback that is down) and a PID namespace
(when its first process exits, the kernel kills every process left in it)."""

from __future__ import annotations

import ctypes
import os

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
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
    """Move this (single-threaded) process into new user and network namespaces, and make its
    next child the first process of a new PID namespace."""
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID) != 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"unshare: {os.strerror(err)}")
    inside_uid = uid or UNPRIVILEGED_UID
    inside_gid = gid or UNPRIVILEGED_UID
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {uid} 1")
    _write("/proc/self/gid_map", f"{inside_gid} {gid} 1")


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
