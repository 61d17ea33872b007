"""Recall quality on the sample memory: which probe messages fire what, for each
preset (the writeup's baseline and the project's default), with the real model.

    python -m bench.recall_probes

Prints a markdown table (used in docs/recall.md) and writes
bench/results/recall_probes.json.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from bench.import_edges import RESULTS
from pegasus.embed import default_embedder
from pegasus.interchange import parse_graph
from pegasus.memory import Memory
from pegasus.recall.presets import PRESETS
from pegasus.stores import Changes
from pegasus.stores.sqlite import SQLiteStore

GRAPH = "pegasus/data/graph.json"
NOW = datetime(2026, 9, 20, 9, 0, tzinfo=UTC)
FOLLOW_UP_1 = (
    "I just spoke to joshua. He did encourage me to take the CFO role instead of taking the "
    "job at a big bank which I clearly didnt like!"
)
FOLLOW_UP_2 = (
    "I've also spoken to my wife, and we decided that the pay hike isn't worth the misery. "
    "I'd rather live a little and take risks now, rather than chase a paycheck only to wake up "
    "one day too old to enjoy the fruits of my labor."
)
# message -> node ids that must fire (empty: nothing may fire)
PROBES: list[tuple[str, set[str]]] = [
    (FOLLOW_UP_1, {"PERSON::joshua", "THING::nova_ai_cfo_offer", "THING::large_bank_career_path"}),
    (FOLLOW_UP_2, {"THING::large_bank_career_path"}),
    ("My boss wants to talk tomorrow", {"PERSON::joshua"}),
    ("I'm tired of all the red tape everywhere", {"PREFERENCE::low_bureaucracy_work_environments"}),
    ("Should I take the bank offer?", {"THING::large_bank_career_path"}),
    ("Any news from NovaAI?", {"ORG::nova_ai"}),
    ("my clients are demanding", {"THING::ai_startups_trevor_s_consulting_clients"}),
    ("Can you recommend a good pasta recipe?", set()),
    ("What's the weather like today?", set()),
    ("What is the capital of France?", set()),
    ("I am learning to play guitar", set()),
    ("Is it worth taking a big risk at my age?", set()),
    ("Any tips for a job interview?", set()),
    ("My wife wants a holiday in June", set()),
    ("I was considering what they offered; do you understand?", set()),
]


def main() -> None:
    store = SQLiteStore(":memory:")
    memory = Memory.open(store, user="probe", embedder=default_embedder())
    memory.import_graph(parse_graph(Path(GRAPH).read_text(encoding="utf-8")))
    store.apply("probe", Changes(self_id="PERSON::trevor"))
    rows = []
    for message, expected in PROBES:
        row = {"message": message, "expected": sorted(expected)}
        for name, preset in PRESETS.items():
            result = memory.recall(message, now=NOW, settings=preset)
            fired = {f.id for f in result.fired}
            ok = expected <= fired if expected else not fired
            row[name] = {"ok": ok, "fired": sorted(fired), "tokens": len(result.text) // 4}
        rows.append(row)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recall_probes.json").write_text(json.dumps(rows, indent=1) + "\n")
    names = list(PRESETS)
    print("| message | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for row in rows:
        cells = []
        for name in names:
            got = row[name]
            mark = "ok" if got["ok"] else "MISS"
            cells.append(f"{mark}: {len(got['fired'])} fired, ~{got['tokens']} tokens")
        print(f"| {row['message'][:60]} | " + " | ".join(cells) + " |")
    for name in names:
        passed = sum(row[name]["ok"] for row in rows)
        print(f"\n{name}: {passed}/{len(rows)} probes")


if __name__ == "__main__":
    main()
