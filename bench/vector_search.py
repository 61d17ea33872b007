"""Key search at 10k, 100k and 1M keys: the store's search (faiss's 8-bit index,
then the best candidates scored in full) against scoring every key.

    python -m bench.vector_search --source sqlite:///memory.db [--sizes 10000 100000 1000000]

The keys are the ``--source`` memory's (bench/generator.py's graph with its keys):
a size below the memory's takes that many of its keys at random, a size above it
adds copies of the keys moved by a little noise (crowds of look-alikes,
the hard case for an index). The messages are bench/recall_latency.py's, searched as
recall does: each content word and phrase among the name keys, the whole message
among the claim keys. Timed one message at a time, one thread. Results go to
bench/results/vector_search.json.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import messages, percentile
from pegasus.embed import default_embedder
from pegasus.model import CLAIM_KEY, NAME_KEYS, EmbeddingKey
from pegasus.paths import sqlite_file
from pegasus.stores.vectors import KeyVectors
from pegasus.text import content_words, phrases

LIMIT = 20  # what recall asks for (RecallSettings.candidates)


def keys_of(source: str, size: int, seed: int = 3) -> tuple[list[EmbeddingKey], np.ndarray]:
    db = sqlite3.connect(sqlite_file(source))
    rows = db.execute("SELECT id, kind, vector FROM keys ORDER BY rowid").fetchall()
    keys = [EmbeddingKey.model_construct(id=i, text=i, ref=i, kind=k, vector=[])
            for i, k, _ in rows]  # fmt: skip
    vectors = np.vstack([np.frombuffer(v, np.float32) for _, _, v in rows])
    rng = np.random.default_rng(seed)
    if size <= len(keys):
        kept = np.sort(rng.choice(len(keys), size, replace=False))
        return [keys[i] for i in kept], vectors[kept]
    more = size - len(keys)
    picked = rng.integers(0, len(keys), more)
    noisy = vectors[picked] + 0.05 * rng.standard_normal((more, vectors.shape[1]), np.float32)
    copies = [EmbeddingKey.model_construct(id=f"{keys[i].id}~{n}", text="", ref=keys[i].ref,
                                           kind=keys[i].kind, vector=[])
              for n, i in enumerate(picked)]  # fmt: skip
    return keys + copies, np.vstack([vectors, noisy])


def measure(copy: KeyVectors, asked: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Each message's search timed, and the share of the nearest keys (by scoring
    every key) it found."""
    started = time.perf_counter()
    for kinds in (NAME_KEYS, (CLAIM_KEY,)):
        copy.only(kinds)
    index_s = time.perf_counter() - started
    took, shares = [], []
    for units, whole in asked:
        started = time.perf_counter()
        found = copy.nearest(units, LIMIT, NAME_KEYS) + copy.nearest(whole, LIMIT, (CLAIM_KEY,))
        took.append((time.perf_counter() - started) * 1000)
        wanted = [(NAME_KEYS, query) for query in units] + [((CLAIM_KEY,), whole[0])]
        for (kinds, query), got in zip(wanted, found, strict=True):
            part = copy.only(kinds)
            scores = part.matrix.T @ (query / np.linalg.norm(query))
            best = {part.keys[i].id for i in np.argsort(-scores)[:LIMIT]}
            shares.append(len(best & {key.id for key, _ in got}) / len(best))
    return {"index_s": round(index_s, 2), "p50_ms": round(statistics.median(took), 2),
            "p95_ms": round(percentile(took, 0.95), 2),
            "found_share": round(statistics.mean(shares), 4),
            "found_share_min": round(min(shares), 4)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="a memory of the generated graph")
    parser.add_argument("--edges", type=int, default=100_000, help="the source's graph")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS / "vector_search.json")
    args = parser.parse_args()
    threadpool_limits(1, user_api="blas")
    embedder = default_embedder()
    asked = [(embedder.embed_batch(content_words(m) + phrases(m)), embedder.embed_batch([m]))
             for m in messages(generate(args.edges).graph, args.messages)]  # fmt: skip
    rows = []
    for size in args.sizes:
        keys, vectors = keys_of(args.source, size)
        rows.append({"keys": len(keys), **measure(KeyVectors.of(keys, vectors, 1), asked)})
        print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"limit": LIMIT, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
