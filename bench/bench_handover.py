"""Where a hand-over's time goes: the parts of writing one output into a sealed memfd, as a
candidate's process does after its last timed call (``evotui.eval.outbox.put_tensor``), and
the fingerprint of one input (``evotui.eval.digest``).

    python bench/bench_handover.py [--mib 256] [--device cuda|cpu] [--repeat 5]

Prints the median seconds of each part: allocating pinned host memory and the copy off the
device into it (a GPU only), the copy straight into a memfd's mapped pages (fresh, or
populated by ``MAP_POPULATE`` first), the write into a fresh memfd, the same write into a
memfd whose pages were allocated before (``posix_fallocate``: what could be done before the
timing starts), and the fingerprint. On a softmax of 8192 x 8192 fp32 (256 MiB out) the hand-over took 0.23 s of a
candidate's time alone with the device; this says which part to shorten.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import time


def _median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="output size in MiB")
    ap.add_argument("--device", default="cuda" if _has_cuda() else "cpu")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import torch

    from evotui.eval.digest import fingerprint
    from evotui.eval.outbox import _host_bytes, _write_all

    nbytes = args.mib << 20
    value = torch.randn(nbytes // 4, device=args.device)
    flat = value.reshape(-1).view(torch.uint8)
    host = _host_bytes(flat)  # (allocates the pinned staging once, as the trials do)

    def write(allocated: bool) -> tuple[float, float]:
        """(seconds allocating, seconds writing) into a new memfd."""
        fd = os.memfd_create("bench", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            start = time.perf_counter()
            if allocated:
                os.posix_fallocate(fd, 0, nbytes)
            middle = time.perf_counter()
            _write_all(fd, host)
            return middle - start, time.perf_counter() - middle
        finally:
            os.close(fd)

    def mapped(populate: bool) -> tuple[float, float]:
        """(seconds sizing and mapping, seconds copying) straight into a new memfd's pages:
        one copy instead of the staging copy and the write."""
        fd = os.memfd_create("bench", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            start = time.perf_counter()
            os.ftruncate(fd, nbytes)
            flags = mmap.MAP_SHARED | (mmap.MAP_POPULATE if populate else 0)
            pages = mmap.mmap(fd, nbytes, flags=flags)
            middle = time.perf_counter()
            target = torch.frombuffer(pages, dtype=torch.uint8)
            target.copy_(flat)
            del target
            pages.close()
            return middle - start, time.perf_counter() - middle
        finally:
            os.close(fd)

    def first_pinned() -> None:
        torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    parts: dict[str, float] = {}
    if args.device != "cpu":
        parts["allocate pinned host memory"] = _median_s(first_pinned, args.repeat)
        parts["copy to pinned host memory"] = _median_s(lambda: _host_bytes(flat), args.repeat)
    for populate in (False, True):
        timed = [mapped(populate) for _ in range(args.repeat)]
        how = "populated" if populate else "fresh"
        parts[f"map a {how} memfd"] = statistics.median(a for a, _ in timed)
        parts[f"copy into a mapped {how} memfd"] = statistics.median(c for _, c in timed)
    parts["write into a fresh memfd"] = statistics.median(
        write(False)[1] for _ in range(args.repeat))
    allocated = [write(True) for _ in range(args.repeat)]
    parts["allocate a memfd (posix_fallocate)"] = statistics.median(a for a, _ in allocated)
    parts["write into an allocated memfd"] = statistics.median(w for _, w in allocated)

    def digest() -> None:
        fingerprint(value, 12345)
        if args.device != "cpu":
            torch.cuda.synchronize()

    parts["fingerprint"] = _median_s(digest, args.repeat)
    where = torch.cuda.get_device_name() if args.device != "cpu" else "host"
    print(f"{args.mib} MiB on {args.device} ({where}), median of {args.repeat}:")
    for part, seconds in parts.items():
        print(f"  {part:<36} {seconds * 1000:8.1f} ms")


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


if __name__ == "__main__":
    main()
