"""Review of held merges by the language model, and the fixed banding of its answer
(SPEC 3.4): above 0.90 merge, 0.70 to 0.90 merge and flag, below 0.70 separate."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pydantic

from pegasus.model import Edge, Node
from pegasus.prompts.review import ReviewAnswer, system_prompt
from pegasus.write.clean import Entity

MERGE_ABOVE = 0.90
FLAG_FROM = 0.70
NEIGHBOURS_SHOWN = 15  # edges per candidate in the prompt
EXCERPT_CHARS = 1_500  # of the conversation around the entity


@dataclass(frozen=True)
class Verdict:
    target: str | None  # the node to merge into, or None to keep separate
    confidence: float = 0.0
    flagged: bool = False
    reason: str = ""


def band(scores: Mapping[str, float]) -> tuple[str | None, float, bool]:
    """The best qualifying candidate: (node id or None, its confidence, flagged)."""
    if not scores:
        return None, 0.0, False
    best, confidence = max(scores.items(), key=lambda item: (item[1], item[0]))
    if confidence > MERGE_ABOVE:
        return best, confidence, False
    if confidence >= FLAG_FROM:
        return best, confidence, True
    return None, confidence, False


def parse_answer(text: str, candidate_ids: Sequence[str]) -> Verdict | None:
    """The verdict in a review answer, or None when the answer is unusable."""
    try:
        answer = ReviewAnswer.model_validate(json.loads(_json_part(text)))
    except (json.JSONDecodeError, pydantic.ValidationError, TypeError):
        return None
    scores = {c.id: c.confidence for c in answer.candidates if c.id in candidate_ids}
    reasons = {c.id: c.reason for c in answer.candidates}
    target, confidence, flagged = band(scores)
    return Verdict(target, confidence, flagged, reasons.get(target or "", ""))


def _json_part(text: str) -> str:
    """Models wrap JSON in prose or code fences now and then: take the outer object."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text


def _line(edge: Edge, names: Mapping[str, str]) -> str:
    source, target = names.get(edge.source, edge.source), names.get(edge.target, edge.target)
    return f'{source} -{edge.relation}-> {target}: "{edge.snippet[:160]}"'


def review_messages(
    entity: Entity,
    excerpt: str,
    candidates: Sequence[Node],
    neighbourhoods: Mapping[str, Sequence[Edge]],
    names: Mapping[str, str],
) -> list[dict[str, str]]:
    parts = [
        f"New entity: {entity.name} ({entity.kind.value})",
        f"Aliases: {', '.join(entity.aliases) or 'none'}",
        f"Properties: {json.dumps(entity.properties, ensure_ascii=False)}",
        f"From the conversation:\n{excerpt[:EXCERPT_CHARS]}",
        "Candidates:",
    ]
    for node in candidates:
        edges = list(neighbourhoods.get(node.id, ()))[:NEIGHBOURS_SHOWN]
        lines = "\n".join(f"  {_line(edge, names)}" for edge in edges) or "  (no relations)"
        parts.append(
            f"- id: {node.id}\n  name: {node.name}; aliases: {', '.join(node.aliases) or 'none'}\n"
            f"  properties: {json.dumps(node.properties, ensure_ascii=False)}\n{lines}"
        )
    return [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": "\n".join(parts)},
    ]
