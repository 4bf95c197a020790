"""What writing over every SM's shared memory before each timed call costs
(``evotui.eval.shared_scrub``): the same calls timed with and without it, alternating.

    python bench/bench_scrub.py [--rounds 3]

Prints, for each call, the median time the timer reports with and without the scrub and the
difference; and the flush itself with and without the scrub (host-timed, synchronized). The
scrub runs before the start event, so a timed call pays only what the scrub changes for it
(a shared-memory carveout to set again, for instance). "scrub first" is the other order (the
scrub, then the L2 flush's read), which the timer could take if the flush's kernel then paid
that change instead of the timed call (on an H100 a 5 µs graph-timed softmax paid ~1.2 µs in
the timer's order).
"""

from __future__ import annotations

import argparse
import statistics
import time


def scrub_first_timer(device: object) -> object:
    from evotui.eval.timing import CudaTimer

    class ScrubFirst(CudaTimer):
        def flush(self) -> None:
            self.scrub()
            self.flush_buf.sum()

    return ScrubFirst(device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import torch

    from evotui.eval.timing import CudaTimer

    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    timers = {"scrubbed": CudaTimer(device), "plain": CudaTimer(device, scrub_shared=False),
              "scrub first": scrub_first_timer(device)}
    small = torch.randn(256, 1024, device=device)
    big = torch.randn(8192, 8192, device=device)
    a = torch.randn(4096, 4096, device=device, dtype=torch.float16)
    calls = {
        "softmax 256x1024 (graph-timed)": lambda: torch.softmax(small, dim=-1),
        "softmax 8192x8192": lambda: torch.softmax(big, dim=-1),
        "fp16 GEMM 4096": lambda: a @ a,
        "layernorm 8192x8192": lambda: torch.nn.functional.layer_norm(big, (8192,)),
    }
    print(f"{torch.cuda.get_device_name()}, median of {args.rounds} alternating rounds")
    print(f"{'call':<32} {'plain ms':>10} {'scrubbed ms':>12} {'diff %':>8} "
          f"{'scrub first ms':>15} {'diff %':>8}")
    for name, fn in calls.items():
        got: dict[str, list[float]] = {k: [] for k in timers}
        for _ in range(args.rounds):
            for kind, timer in timers.items():
                got[kind].append(timer.time(fn, rep_ms=200).median_ms)
        plain, scrubbed, first = (statistics.median(got[k])
                                  for k in ("plain", "scrubbed", "scrub first"))
        print(f"{name:<32} {plain:10.4f} {scrubbed:12.4f} {100 * (scrubbed - plain) / plain:8.2f} "
              f"{first:15.4f} {100 * (first - plain) / plain:8.2f}")
    for kind, timer in timers.items():
        times = []
        for _ in range(50):
            torch.cuda.synchronize()
            start = time.perf_counter()
            timer.flush()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        print(f"flush ({kind}): {statistics.median(times) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
