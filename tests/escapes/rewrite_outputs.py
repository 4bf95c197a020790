"""ESCAPE: plants its own bytes in the memfds made ready for its outputs, and (KEEP) keeps
them mapped to rewrite them after they are handed over."""
import mmap
import os

KEEP = {keep}
kept = []


def escape():
    for name in os.listdir("/proc/self/fd"):
        try:
            if "evotui-output" not in os.readlink("/proc/self/fd/" + name):
                continue
            fd = int(name)
            size = os.fstat(fd).st_size
            os.pwrite(fd, bytes(size), 0)  # zeros: no softmax row sums to zero
            if KEEP:
                kept.append(mmap.mmap(fd, size, flags=mmap.MAP_SHARED))
        except (OSError, ValueError):
            pass
