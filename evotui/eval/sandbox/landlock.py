"""Landlock, through its three system calls: which paths a process may read, write or run.

Rules name directory trees (or single files); everything else on the filesystem is refused
by the kernel for the process and its children, whatever their uid. ABI 4 adds TCP bind and
connect (refused wholesale here), ABI 6 scopes abstract unix sockets and signals to the
sandbox, so a candidate cannot signal the worker that forked it.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on x86_64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | TRUNCATE | REFER
         | READ)
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # rights a file rule may hold


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: object) -> int:
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
    return int(result)


def set_no_new_privs() -> None:
    """No exec may gain privileges again (setuid bits, file capabilities): Landlock's
    precondition for an unprivileged process."""
    if _libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        err = ctypes.get_errno()
        raise LandlockError(err, f"no_new_privs: {os.strerror(err)}")


def abi_version() -> int:
    """The Landlock ABI the running kernel offers; 0 when it has none (or it is disabled)."""
    try:
        return _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (LandlockError, AttributeError):
        return 0


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Grant:
    path: str
    access: int


@dataclass(frozen=True)
class Restriction:
    """What Landlock enforced: the ABI and which kinds of access it governs."""

    abi: int
    network: bool  # TCP bind/connect refused by Landlock itself (ABI >= 4)
    scoped: bool  # signals and abstract unix sockets kept inside (ABI >= 6)


def restrict(grants: list[Grant]) -> Restriction:
    """Confine this thread (and what it forks) to ``grants``. Needs no_new_privs set first.
    Paths that do not exist are skipped; rights a kernel does not know are dropped."""
    abi = abi_version()
    if abi < 1:
        raise LandlockError(0, "Landlock is not available in this kernel")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    try:
        for grant in grants:
            try:
                fd = os.open(grant.path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                access = grant.access & handled
                if not os.path.isdir(grant.path):
                    access &= FILE_ONLY
                rule = _PathBeneathAttr(access, fd)
                _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                         ctypes.byref(rule), ctypes.c_uint32(0))
            finally:
                os.close(fd)
        _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return Restriction(abi=abi, network=abi >= 4, scoped=abi >= 6)
