"""The write path's own cost: one extraction batch (30 entities, 50 relations)
committed into graphs of growing size, with the model's answers instant.

    python -m bench.commit_batch --sizes 1000 100000 [--neo4j bolt://127.0.0.1:7687]

For each size: the graph of bench/import_edges.py is imported and its keys embedded
(not timed); then one conversation is ingested through ``Memory.ingest`` against
a scripted OpenAI-compatible server that answers at once, so what is timed is
everything but the model's thinking: the graph slice shown to the model, journaling
every call, cleaning, merge lookups, reviews, key embedding and the one-transaction
write. The batch merges 20 entities (15 by name, 5 by alias), adds 10, re-observes
10 stored claims, supersedes 10 one_to_one claims and adds 30 more. Results go to
bench/results/commit_batch.json.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from bench.import_edges import RESULTS, synthetic_graph
from bench.stores import add_store_options, bench_store
from pegasus.embed import default_embedder
from pegasus.errors import StoreError
from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import ScriptedServer, Step, by_round
from pegasus.memory import Memory
from pegasus.stores import Changes, Store
from pegasus.write.transcript import parse_transcript

NEW_NAMES = ["Ingrid Halvorsen", "Tomasz Wierzba", "Aiko Tanaka", "Rafael Ortega", "Leila Haddad",
             "Bjorn Eklund", "Chidi Okafor", "Marta Sousa", "Dev Patel", "Quinn Adler"]  # fmt: skip


def batch(graph, seed: int = 3) -> tuple[list[Step], str]:
    """The replies of an imagined model, and the user's words they came from."""
    rng = random.Random(seed)
    me = graph.nodes[0]
    others = rng.sample(graph.nodes[1:], 20)
    entities = [("add_entity", {"name": n.name, "kind": n.kind.value}) for n in others[:15]]
    entities += [("add_entity", {"name": n.aliases[0], "kind": n.kind.value}) for n in others[15:]]
    entities += [("add_entity", {"name": name, "kind": "PERSON"}) for name in NEW_NAMES]
    own = [e for e in graph.edges if e.source == me.id]
    names = {n.id: n.name for n in graph.nodes}
    relations = []
    for edge in rng.sample(own, 10):  # heard again
        relations.append((names[edge.source], edge.relation, names[edge.target], "one_to_many"))
    for edge in rng.sample(own, 10):  # a single-valued claim gets a new target
        edge.cardinality = "one_to_one"
        relations.append(("Me", edge.relation, rng.choice(NEW_NAMES), "one_to_one"))
    mentioned = [e[1]["name"] for e in entities]
    while len(relations) < 50:
        a, b = rng.sample(mentioned, 2)
        relations.append((a, rng.choice(["KNOWS", "WORKS_WITH", "MET_AT"]), b, "one_to_many"))
    # Each claim quotes the sentence of the user's that says it, as an extractor
    # following the prompt does.
    said = [f"{s} {r.lower().replace('_', ' ')} {t}." for s, r, t, _ in relations]
    calls = entities + [
        ("add_relation", {"source": s, "relation": r, "target": t, "cardinality": c,
                          "snippet": snippet, "stability": "mutable"})
        for (s, r, t, c), snippet in zip(relations, said, strict=True)
    ]  # fmt: skip
    replies = [Step(tool_calls=calls[i : i + 20]) for i in range(0, len(calls), 20)]
    replies.append(Step(tool_calls=[("finish", {"summary": "bench", "importance": 0.5})]))
    text = "Today I caught up with " + ", ".join(mentioned) + ". " + " ".join(said)
    return replies, text


def review(body: dict) -> Step:
    return Step(content=json.dumps({"candidates": []}))


def commit(memory: Memory, replies: list[Step], text: str) -> dict[str, object]:
    """Ingest one conversation whose model replies are ``replies``; the time of
    each stage of the write path."""
    rounds = by_round(replies)
    reviews = [0]

    def respond(body: dict) -> Step:
        if "tools" in body:
            return rounds(body)
        reviews[0] += 1
        return review(body)

    marks: list[tuple[float, str]] = []
    transcript = parse_transcript(
        {
            "id": "bench",
            "started_at": "2026-10-01T10:00:00+00:00",
            "turns": [{"role": "user", "content": text}],
        }  # fmt: skip
    )
    with ScriptedServer(respond) as server:
        llm = LLM(LLMConfig(server.base_url, "instant"))
        memory.recall("warm up the model and caches")
        t0 = time.perf_counter()

        def mark(step: str) -> None:
            marks.append((time.perf_counter(), step))

        report = memory.ingest(transcript, llm=llm, progress=mark)
        total = time.perf_counter() - t0

    def first(prefix: str) -> float:
        return next((t for t, s in marks if s.startswith(prefix)), t0 + total)

    asked, merging = first("asking"), first("merging")
    embedding, writing = first("embedding"), first("writing")
    return {
        "total_s": round(total, 2),
        "context_s": round(asked - t0, 2),
        "extraction_s": round(merging - asked, 2),
        "merge_and_review_s": round(min(embedding, writing) - merging, 2),
        "embed_keys_s": round(max(0.0, writing - embedding), 2),
        "write_s": round(t0 + total - writing, 2),
        "reviews": reviews[0],
        "created": len(report.created),
        "merged": len(report.merged),
        "relations_added": len(report.relations_added),
        "reinforced": len(report.reinforced),
        "superseded": len(report.superseded),
    }


def measure(store: Store, user: str, edges: int) -> dict[str, object]:
    graph = synthetic_graph(edges)
    replies, text = batch(graph)  # marks some stored claims one_to_one first
    store.apply(user, Changes.of_graph(graph))
    memory = Memory.open(store, user=user, embedder=default_embedder())
    memory.sync_keys()
    return {"edges": edges, **commit(memory, replies, text)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    add_store_options(parser)
    args = parser.parse_args()
    results = []
    for edges in args.sizes:
        for kind in args.stores:
            try:
                with bench_store(kind, args.neo4j) as (store, user, _):
                    results.append({"store": kind, **measure(store, user, edges)})
            except StoreError as exc:  # report, don't hide: the table says why it is missing
                results.append({"store": kind, "edges": edges, "error": str(exc)})
            print(json.dumps(results[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "commit_batch.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
