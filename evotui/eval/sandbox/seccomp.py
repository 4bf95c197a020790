"""A seccomp filter: the system calls a kernel evaluation never needs return an error.

Landlock and the namespaces contain files, network and processes; this closes what they do
not cover: debugging other processes, new namespaces or mounts, kernel modules and keyrings,
io_uring (which bypasses the other filters), network sockets, leaving the process group, and
clearing the parent-death signal that ties the sandbox's life to the worker's.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_PR_SET_PDEATHSIG = 1
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16

# x86_64 numbers, grouped by what they would let a candidate do
DENIED: dict[str, tuple[int, ...]] = {
    "other processes' memory": (101, 310, 311),  # ptrace, process_vm_readv/writev
    "namespaces and mounts": (165, 166, 155, 161, 272, 308),  # mount umount2 pivot_root chroot unshare setns
    "kernel interfaces": (321, 298, 250, 248, 249, 246, 320, 169, 175, 313, 176, 323, 300,
                          303, 304, 167, 168, 163, 164, 227, 170, 171, 172, 173, 179, 135),
    "io_uring": (425, 426, 427),
    "leaving the process group": (112, 109),  # setsid, setpgid: the group is killed whole
}
_SOCKET = 41
# socket() of these families only: the CUDA driver opens a unix socket as it starts. The
# network namespace has no interface but a loopback that is down, and the mount namespace
# hides the folders where other programs' unix sockets live (isolated.hide_sockets).
ALLOWED_SOCKET_DOMAINS: tuple[int, ...] = (1,)  # AF_UNIX
_CLONE = 56
_CLONE3 = 435
_PRCTL = 157
_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET


class SeccompUnavailable(OSError):
    pass


def supported() -> bool:
    return platform.machine() == "x86_64"


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> list[bytes]:
    eperm = _RET_ERRNO | errno.EPERM
    out = [_insn(_LD_W_ABS, _OFF_ARCH),
           _insn(_JEQ_K, _AUDIT_ARCH_X86_64, 1, 0),
           _insn(_RET_K, _RET_KILL_PROCESS),
           _insn(_LD_W_ABS, _OFF_NR),
           _insn(_JGE_K, _X32_BIT, 0, 1),
           _insn(_RET_K, eperm)]
    for number in sorted({n for group in DENIED.values() for n in group}):
        out += [_insn(_JEQ_K, number, 0, 1), _insn(_RET_K, eperm)]
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc use clone
    out += [_insn(_JEQ_K, _CLONE3, 0, 1), _insn(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    # socket() of another family
    out += [_insn(_JEQ_K, _SOCKET, 0, 2 + len(ALLOWED_SOCKET_DOMAINS)),
            _insn(_LD_W_ABS, _OFF_ARG0)]
    for k, domain in enumerate(ALLOWED_SOCKET_DOMAINS):
        out.append(_insn(_JEQ_K, domain, len(ALLOWED_SOCKET_DOMAINS) - k, 0))
    out += [_insn(_RET_K, _RET_ERRNO | errno.EACCES), _insn(_LD_W_ABS, _OFF_NR)]
    # clone with a namespace flag, and prctl(PR_SET_PDEATHSIG, ...)
    out += [_insn(_JEQ_K, _CLONE, 0, 3),
            _insn(_LD_W_ABS, _OFF_ARG0),
            _insn(_JSET_K, _NAMESPACE_FLAGS, 0, 1),
            _insn(_RET_K, eperm)]
    out += [_insn(_LD_W_ABS, _OFF_NR),
            _insn(_JEQ_K, _PRCTL, 0, 3),
            _insn(_LD_W_ABS, _OFF_ARG0),
            _insn(_JEQ_K, _PR_SET_PDEATHSIG, 0, 1),
            _insn(_RET_K, eperm)]
    out.append(_insn(_RET_K, _RET_ALLOW))
    return out


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> int:
    """Install the filter on this thread (inherited by what it forks); the number of
    system calls it refuses. Sets no_new_privs, which the filter requires."""
    if not supported():
        raise SeccompUnavailable(0, f"the seccomp filter knows x86_64 only, not {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise SeccompUnavailable(err, f"no_new_privs: {errno.errorcode.get(err, err)}")
    code = b"".join(program())
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.addressof(buf))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise SeccompUnavailable(err, f"seccomp filter: {errno.errorcode.get(err, err)}")
    return sum(len(g) for g in DENIED.values()) + 4
