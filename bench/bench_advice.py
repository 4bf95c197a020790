"""Advice library benchmark: retrieval and write latency on a large library.

    python bench/bench_advice.py [--n 10000] [--queries 200] [--adds 50]

Builds a library of N pieces of advice (varied kinds, tags, statuses, counters, template
and sentence advice) in a temporary EVOTUI_HOME, then measures:

- retrieve top-5 (BM25, warm index) for softmax/gemm/rmsnorm/... queries with the parent
  code of the sample kernels;
- the same with 768-d embeddings (an in-process embedder: the cosine part, no server);
- retrieve right after a ``record_outcome`` (index refresh of the counters);
- add one piece of advice (atomic write + fsync + lock) and record one outcome;
- open the library cold and build the index the first time.

Targets: retrieve top-5 among 10,000 ≤ 20 ms; add one ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.memory import AdviceStore  # noqa: E402
from evotui.memory.coldstart import load_pack  # noqa: E402
from evotui.memory.distill import Mutation, TaskInfo, distill_params  # noqa: E402
from evotui.memory.retrieve import Query, Retriever  # noqa: E402
from evotui.memory.text import text_hash  # noqa: E402

KINDS = ["softmax", "gemm", "rmsnorm", "layernorm", "elementwise", "cross_entropy", "reduction",
         "general", "attention", "conv"]
TAGS = ["num_warps", "num_stages", "block-size", "tiling", "vectorized-loads", "coalescing",
        "fusion", "epilogue", "l2-reuse", "persistent-kernel", "masks", "autotune", "bf16",
        "fp32", "fp16", "reduction", "row-wise", "memory-bound", "compute-bound", "tl.dot",
        "online-softmax", "registers", "occupancy", "small-shapes", "split-reduction"]
PARAMS = ["BLOCK_SIZE", "BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "GROUP_M"]
GPUS = ["NVIDIA H200", "NVIDIA H100", "NVIDIA A100", "NVIDIA L40S", None]
VERBS = ["Use", "Prefer", "Try", "Keep", "Switch to", "Avoid", "Hoist", "Fuse", "Split", "Cache"]
THINGS = ["vectorized 128-bit loads", "a persistent grid", "fp32 accumulators", "GROUP_M ordering",
          "an EVEN_N constexpr flag", "tl.multiple_of hints", "one program per row",
          "the online softmax", "tl.exp2", "a two-stage reduction", "larger tiles",
          "num_warps 8", "num_stages 4", "block pointers", "int32 offsets", "a fused epilogue"]
WHEN = ["for wide rows", "when n_cols ≥ 4096", "on bf16 inputs", "for small batches",
        "for large GEMMs", "when the shape is aligned", "in memory-bound kernels",
        "when rows fit in registers", "on Hopper", "for long K loops"]


def synth_library(store: AdviceStore, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    docs = []
    lib = store.library_id
    while len(docs) < n:
        kind = rng.choice(KINDS)
        if rng.random() < 0.4:
            names = rng.sample(PARAMS, rng.randint(1, 2))
            changes = {p: (2 ** rng.randint(2, 8), 2 ** rng.randint(2, 8)) for p in names}
            task = TaskInfo(kind, kind, f"{2 ** rng.randint(8, 14)}x{2 ** rng.randint(8, 14)}",
                            rng.choice(["fp32", "bf16", "fp16"]))
            a = distill_params(Mutation(task, rng.uniform(0.05, 0.4), f"c{rng.randint(0, 999)}",
                                        f"c{rng.randint(0, 999)}", f"run-{rng.randint(0, 99)}",
                                        gpu=rng.choice(GPUS[:4]), backend="triton",
                                        changes=changes))
            doc = a.to_doc()
        else:
            doc = {"text": f"{rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(WHEN)} "
                           f"({kind} #{len(docs)}).",
                   "kind": kind, "tags": rng.sample(TAGS, rng.randint(0, 5))}
            if rng.random() < 0.3:
                doc["arch"] = rng.choice(["sm_90", "sm_80", "sm_89"])
        doc["status"] = rng.choices(["proposed", "accepted", "vetoed", "authored"],
                                    [70, 15, 5, 10])[0]
        shown = rng.randint(0, 30) if rng.random() < 0.5 else 0
        doc["counters"] = {lib: [shown, rng.randint(0, shown)]} if shown else {}
        docs.append(doc)
    store.import_data(docs)


class RandomEmbedder:
    """Implements the Embedder protocol in-process: 768-d vectors from a text hash."""

    model = "bench-768"
    version = 1

    def __init__(self, dim: int = 768) -> None:
        self.dim = dim
        self._memo: dict[str, np.ndarray] = {}

    def cached(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        out = []
        for t in texts:
            key = text_hash(t)
            v = self._memo.get(key)
            if v is None:
                r = np.random.default_rng(int(key, 16) % (2**32)).standard_normal(self.dim)
                v = self._memo[key] = (r / np.linalg.norm(r)).astype(np.float32)
            out.append(v)
        return out

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [v for v in self.cached(texts) if v is not None]


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def queries() -> list[Query]:
    from evotui.task.model import resolve_task

    out = []
    for folder in sorted((ROOT / "sample_kernels").iterdir()):
        try:
            task = resolve_task(folder)
        except Exception:  # a sample that does not load here: skip it
            continue
        src = task.seed_path.read_text() if task.seed_path else ""
        out.append(Query.for_task(task.meta, src, arch="NVIDIA H200"))
    return out or [Query(kind="softmax", tags=("reduction", "row-wise"), name="softmax")]


def row(name: str, ms: list[float], target: float | None = None) -> str:
    ms = sorted(ms)
    med = statistics.median(ms)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    verdict = "" if target is None else ("  ok" if p95 <= target else "  OVER")
    tgt = "" if target is None else f"≤ {target:g}"
    return f"| {name:<44} | {med:8.2f} | {p95:8.2f} | {len(ms):5d} | {tgt:>6} |{verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--adds", type=int, default=50)
    ap.add_argument("--home", type=Path, default=None, help="keep the library here")
    args = ap.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="evotui-bench-"))
    os.environ["EVOTUI_HOME"] = str(home)
    path = home / "advice.json"
    t0 = time.perf_counter()
    store = AdviceStore(path)
    synth_library(store, max(0, args.n - len(load_pack())))
    build_s = time.perf_counter() - t0
    size_mb = path.stat().st_size / 1e6

    t = time.perf_counter()
    cold = AdviceStore(path)
    open_ms = (time.perf_counter() - t) * 1000
    retr = Retriever(cold)
    qs = queries()
    t = time.perf_counter()
    retr.search(qs[0], 5)
    first_ms = (time.perf_counter() - t) * 1000

    def cycling(r: Retriever) -> Callable[[], object]:
        it = itertools.cycle(qs)
        return lambda: r.search(next(it), 5)

    lines = []
    lines.append(row("retrieve top-5, BM25 (warm index)", timed(cycling(retr), args.queries), 20))
    hybrid = Retriever(cold, RandomEmbedder())
    hybrid.search(qs[0], 5)
    lines.append(row("retrieve top-5, BM25 + 768-d cosine (warm)",
                     timed(cycling(hybrid), args.queries), 20))
    some = [a["id"] for a in cold.snapshot().docs[:3]]

    def after_outcome() -> float:
        cold.record_outcome(some, True)
        t = time.perf_counter()
        retr.search(qs[0], 5)
        return (time.perf_counter() - t) * 1000

    lines.append(row("retrieve top-5 right after record_outcome", [after_outcome()
                                                                  for _ in range(20)]))
    rng = random.Random(7)
    lines.append(row("add one piece of advice (lock+fsync+replace)",
                     timed(lambda: cold.new(f"Bench advice {rng.random()}: tile the rows",
                                            kind="softmax", tags=["bench"]), args.adds), 50))
    lines.append(row("record_outcome (3 ids)", timed(lambda: cold.record_outcome(some, False),
                                                     args.adds), 50))

    n_docs = len(cold)
    print(f"advice library: {n_docs} pieces, {size_mb:.1f} MB on disk at {path}")
    print(f"built in {build_s:.1f} s; cold open {open_ms:.0f} ms; first index build "
          f"{first_ms:.0f} ms; python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print(f"| {'operation':<44} | {'median':>8} | {'p95':>8} | {'n':>5} | {'target':>6} |")
    print(f"|{'-' * 46}|{'-' * 10}|{'-' * 10}|{'-' * 7}|{'-' * 8}|")
    for ln in lines:
        print(ln)
    print("\n(milliseconds)")


if __name__ == "__main__":
    main()
