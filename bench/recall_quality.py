"""Recall quality on a generated memory: planted facts found by name, alias and
paraphrase, share of injected lines that name the planted entity, negatives that
fire nothing, tokens per block; for every preset (the writeup's baseline and the
project's default) on the same graph and probes."""

from __future__ import annotations

import statistics
from datetime import datetime

from bench.generator import Dataset
from pegasus.memory import Memory
from pegasus.recall.presets import PRESETS


def quality(memory: Memory, data: Dataset, now: datetime) -> dict[str, dict[str, float]]:
    names = {node.id: node.name for node in data.graph.nodes}
    out = {}
    for preset_name, preset in PRESETS.items():
        found: dict[str, list[bool]] = {}
        relevant, tokens, quiet = [], [], []
        for probe in data.probes:
            result = memory.recall(probe.message, now=now, settings=preset)
            fired = {f.id for f in result.fired}
            if probe.expected is None:
                quiet.append(not fired)
                continue
            found.setdefault(probe.how, []).append(probe.expected in fired)
            lines = result.memory + result.context
            if lines:
                name = names[probe.expected]
                relevant.append(sum(name in line for line in lines) / len(lines))
            tokens.append(len(result.text) // 4)
        out[preset_name] = {
            **{f"found_{how}": round(statistics.mean(hits), 3) for how, hits in found.items()},
            "relevant_lines": round(statistics.mean(relevant), 3) if relevant else 0.0,
            "negatives_quiet": round(statistics.mean(quiet), 3),
            "tokens_per_block": round(statistics.mean(tokens), 1),
        }
    return out
