"""Recall quality on a generated memory: planted facts found by name, alias and
paraphrase, share of injected lines that name the planted entity, negatives that
fire nothing, tokens per block; for every preset (the writeup's baseline and the
project's default) on the same graph and probes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from datetime import datetime

from bench.generator import Dataset, Probe
from pegasus.memory import Memory
from pegasus.recall.presets import PRESETS

BUDGET_S = 300.0  # per preset: the baseline spends seconds a message on large graphs


def interleaved(probes: list[Probe]) -> list[Probe]:
    """Probes taken in turn from each kind, so a run cut short by its budget still
    covers names, aliases, paraphrases and negatives alike."""
    by_how: dict[str, list[Probe]] = {}
    for probe in probes:
        by_how.setdefault(probe.how, []).append(probe)
    queues = list(by_how.values())
    return [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]


def quality(
    memory: Memory,
    data: Dataset,
    now: datetime,
    budget_s: float = BUDGET_S,
    presets: Sequence[str] = tuple(PRESETS),
) -> dict[str, dict[str, float]]:
    names = {node.id: node.name for node in data.graph.nodes}
    probes = interleaved(data.probes)
    out = {}
    for preset_name in presets:
        preset = PRESETS[preset_name]
        found: dict[str, list[bool]] = {}
        relevant, tokens, quiet, timings = [], [], [], []
        for probe in probes:
            if sum(timings) > budget_s:
                break
            start = time.perf_counter()
            result = memory.recall(probe.message, now=now, settings=preset)
            timings.append(time.perf_counter() - start)
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
            "recall_ms": round(statistics.mean(timings) * 1000),
            "probes": f"{len(timings)}/{len(probes)}",
        }
    return out
