"""LoCoMo evidence recall: does the injected block hold the turn that answers?

    python -m bench.locomo [--data PATH] [--samples conv-42 ...] [--workdir DIR]

Each conversation goes through the real write path (recorded extractions unless
``PEGASUS_LLM_*`` is set), then every question of categories 1-4 is recalled as of
the end of the conversation. Beside Pegasus, at the same token budget per question:
BM25, dense and fused retrieval over the raw turns, BM25 over the graph's claims,
and the writeup's baseline preset. Writes bench/results/locomo.{json,md,png}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench.locomo import answers
from bench.locomo.baselines import Ranker
from bench.locomo.data import CATEGORIES, DEFAULT_DATA, Conversation, load
from bench.locomo.replay import RECORDED, ingest
from pegasus.config import Settings
from pegasus.memory import Memory
from pegasus.recall.inject import tokens
from pegasus.recall.keys import relation_phrase
from pegasus.recall.presets import BASELINE, DEFAULT, RecallSettings

RESULTS = Path(__file__).resolve().parents[1] / "results"
RAW = ("bm25", "dense", "fused")
METHODS = ("pegasus", "writeup", *RAW, "claims-bm25")


def recorded_samples(root: Path = RECORDED) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("session_*.json")))


class Turns:
    """Which turn each stored claim's snippet was said in (cached per claim)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._by_edge: dict[str, str | None] = {}

    def of(self, edges) -> set[str]:
        found = set()
        for edge in edges:
            if edge.id not in self._by_edge:
                self._by_edge[edge.id] = self.conversation.locate(edge.snippet, edge.conversations)
            if self._by_edge[edge.id]:
                found.add(self._by_edge[edge.id])
        return found


def _recall(memory: Memory, turns: Turns, question: str, now, settings: RecallSettings) -> dict:
    started = time.perf_counter()
    result = memory.recall(question, now=now, settings=settings)
    ms = (time.perf_counter() - started) * 1000
    said = turns.of(memory.store.get_edges(memory.user, result.used_edges))
    return {"turns": said, "tokens": tokens(result.text) if result.text else 0, "ms": ms,
            "text": result.text}  # fmt: skip


def evaluate(
    conversation: Conversation, memory: Memory, judge=None, settings: RecallSettings = DEFAULT
) -> list[dict]:
    """One row per question: which methods brought back its evidence."""
    now = conversation.ends_at + timedelta(days=1)
    turns = Turns(conversation)
    said = conversation.turns
    raw = Ranker([f"{t.speaker}: {t.text}" for t in said], memory.embedder)
    graph = memory.export()
    names = {node.id: node.name for node in graph.nodes}
    claims = [e for e in graph.edges if e.source in names and e.target in names]
    claim_texts = [
        f"{names[e.source]} {relation_phrase(e.relation)} {names[e.target]}: {e.snippet}"
        for e in claims
    ]
    by_claims = Ranker(claim_texts, memory.embedder)
    claim_turns = [turns.of([e]) for e in claims]
    held = set().union(*claim_turns) if claim_turns else set()

    rows = []
    found = [_recall(memory, turns, q.text, now, settings) for q in conversation.questions]
    budgets = [f["tokens"] for f in found if f["tokens"]]
    fallback = round(statistics.mean(budgets)) if budgets else 200
    for question, pegasus in zip(conversation.questions, found, strict=True):
        budget = pegasus["tokens"] or fallback
        writeup = _recall(memory, turns, question.text, now, BASELINE)
        covered = {"pegasus": pegasus["turns"], "writeup": writeup["turns"]}
        for method, rank in zip(RAW, (raw.by_words, raw.by_meaning, raw.fused), strict=True):
            covered[method] = {said[i].dia_id for i in raw.within(rank(question.text), budget)}
        covered["claims-bm25"] = set().union(
            set(),
            *(claim_turns[i] for i in by_claims.within(by_claims.by_words(question.text), budget)),
        )
        evidence = set(question.evidence)
        row = {
            "sample": conversation.sample, "question": question.text,
            "category": question.category, "evidence": sorted(evidence),
            "ceiling": bool(evidence & held), "budget": budget,
            "tokens": pegasus["tokens"], "ms": round(pegasus["ms"], 2),
            "writeup_tokens": writeup["tokens"],
            "hit": {m: bool(evidence & covered[m]) for m in METHODS},
            "full": {m: evidence <= covered[m] for m in METHODS},
        }  # fmt: skip
        if judge is not None:
            row["correct"] = judge(question, pegasus["text"])
        rows.append(row)
    return rows


def _share(rows: list[dict], test) -> float:
    return round(sum(1 for r in rows if test(r)) / len(rows), 3) if rows else 0.0


def summarise(rows: list[dict]) -> dict:
    groups = {"overall": rows}
    groups |= {
        f"{c} {name}": [r for r in rows if r["category"] == c] for c, name in CATEGORIES.items()
    }
    table = {}
    for group, members in groups.items():
        if not members:
            continue
        ms = sorted(r["ms"] for r in members)
        entry = {
            "questions": len(members),
            "ceiling": _share(members, lambda r: r["ceiling"]),
            "hit": {m: _share(members, lambda r, m=m: r["hit"][m]) for m in METHODS},
            "full": {m: _share(members, lambda r, m=m: r["full"][m]) for m in METHODS},
            "tokens_mean": round(statistics.mean(r["tokens"] for r in members), 1),
            "writeup_tokens_mean": round(statistics.mean(r["writeup_tokens"] for r in members), 1),
            "empty_blocks": sum(1 for r in members if not r["tokens"]),
            "ms_p50": round(ms[len(ms) // 2], 1),
            "ms_p95": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 1),
        }
        if "correct" in members[0]:
            entry["answer_accuracy"] = _share(members, lambda r: r["correct"])
        table[group] = entry
    return table


def markdown(summary: dict, samples: list[str], source: str) -> str:
    head = ["group", "n", "ceiling", *[f"hit {m}" for m in METHODS], "full pegasus",
            "full bm25", "tokens", "empty", "ms p50", "ms p95"]  # fmt: skip
    lines = [
        f"LoCoMo evidence recall, conversations {', '.join(samples)} ({source}).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for group, e in summary.items():
        cells = [group, e["questions"], e["ceiling"], *[e["hit"][m] for m in METHODS],
                 e["full"]["pegasus"], e["full"]["bm25"], e["tokens_mean"], e["empty_blocks"],
                 e["ms_p50"], e["ms_p95"]]  # fmt: skip
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(summary)
    width = 0.8 / (len(METHODS) + 1)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for i, method in enumerate(("ceiling", *METHODS)):
        values = [
            summary[g]["ceiling"] if method == "ceiling" else summary[g]["hit"][method]
            for g in groups
        ]
        ax.bar([x + i * width for x in range(len(groups))], values, width, label=method)
    ax.set_xticks([x + 0.4 for x in range(len(groups))], groups)
    ax.set_ylabel("evidence turn in the block")
    ax.set_ylim(0, 1)
    ax.legend(ncol=4, fontsize=8)
    ax.set_title("LoCoMo: questions whose answering turn was brought back")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--samples", nargs="*", help="sample ids (default: those recorded)")
    parser.add_argument("--recorded", type=Path, default=RECORDED)
    parser.add_argument("--workdir", type=Path, help="keep the stores here (reruns reuse them)")
    parser.add_argument("--out", type=Path, default=RESULTS / "locomo")
    args = parser.parse_args(argv)

    settings = Settings()
    live = bool(settings.llm_base_url)
    samples = args.samples or recorded_samples(args.recorded)
    conversations = load(args.data, samples)
    judge = answers.judge(settings) if live else None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="pegasus-locomo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for conversation in conversations:
        print(f"{conversation.sample}: {len(conversation.sessions)} sessions, "
              f"{len(conversation.questions)} questions")  # fmt: skip
        with Memory.open(
            f"sqlite:///{workdir / conversation.sample}.db", user=conversation.owner
        ) as memory:
            ingest(memory, conversation, live, args.recorded)
            rows += evaluate(conversation, memory, judge)
    summary = summarise(rows)
    source = "live model" if live else "recorded extractions"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(
        json.dumps(
            {"samples": samples, "source": source, "summary": summary, "questions": rows}, indent=1
        )
        + "\n"  # fmt: skip
    )
    table = markdown(summary, samples, source)
    args.out.with_suffix(".md").write_text(table)
    plot(summary, args.out.with_suffix(".png"))
    print(table)
    return summary


if __name__ == "__main__":
    main()
