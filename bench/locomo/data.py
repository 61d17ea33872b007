"""LoCoMo conversations as Pegasus transcripts, their questions, and where a snippet
was said.

Each session is one transcript dated by its session time. Both speakers are people,
so every turn has the role ``user`` and the speaker's ``name``; the memory belongs to
the first speaker of the first session (docs/benchmarks.md says why)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rapidfuzz import fuzz

from pegasus.write.transcript import Transcript, parse_transcript

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "locomo" / "locomo8.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
FUZZY_FLOOR = 85  # rapidfuzz partial ratio at which a snippet counts as said in a turn


@dataclass(frozen=True)
class Said:
    dia_id: str
    speaker: str
    text: str  # what the speaker said (a shared photo's caption is not part of it)


@dataclass(frozen=True)
class Session:
    number: int
    at: datetime
    turns: tuple[Said, ...]
    captions: tuple[str, ...]  # per turn, the shared photo's caption or ""

    def transcript(self, sample: str) -> Transcript:
        turns = [
            {"role": "user", "name": t.speaker,
             "content": t.text + (f" [shares a photo: {c}]" if c else "")}
            for t, c in zip(self.turns, self.captions, strict=True)
        ]  # fmt: skip
        return parse_transcript(
            {"id": f"{sample}-s{self.number:02d}", "started_at": self.at.isoformat(),
             "turns": turns}
        )  # fmt: skip


@dataclass(frozen=True)
class Question:
    text: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample: str
    owner: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Said]:
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def ends_at(self) -> datetime:
        return self.sessions[-1].at

    def locate(self, snippet: str, session_ids: list[str] | None = None) -> str | None:
        """The dia_id of the turn ``snippet`` was copied from: verbatim first, then the
        closest turn by fuzzy match (a corrected typo still counts)."""
        wanted = " ".join(snippet.split()).casefold()
        if not wanted:
            return None
        pool = [
            s for s in self.sessions
            if not session_ids or f"{self.sample}-s{s.number:02d}" in session_ids
        ]  # fmt: skip
        best, best_score = None, 0.0
        for session in pool or self.sessions:
            for turn in session.turns:
                said = " ".join(turn.text.split()).casefold()
                if wanted in said:
                    return turn.dia_id
                score = fuzz.partial_ratio(wanted, said)
                if score > best_score:
                    best, best_score = turn.dia_id, score
        return best if best_score >= FUZZY_FLOOR else None


def _evidence(question: dict) -> tuple[str, ...]:
    # A few entries pack several ids into one string ("D8:6; D9:17").
    ids = [part for item in question.get("evidence", []) for part in re.split(r"[;,\s]+", item)]
    return tuple(dict.fromkeys(i for i in ids if i))


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def parse(item: dict) -> Conversation:
    raw = item["conversation"]
    sessions = []
    number = 1
    while f"session_{number}" in raw:
        turns = raw[f"session_{number}"]
        sessions.append(
            Session(
                number,
                _when(raw[f"session_{number}_date_time"]),
                tuple(Said(t["dia_id"], t["speaker"], t["text"]) for t in turns),
                tuple(t.get("blip_caption", "") or "" for t in turns),
            )
        )
        number += 1
    questions = tuple(
        Question(q["question"], str(q.get("answer", "")), _evidence(q), q["category"])
        for q in item.get("qa", [])
        if q.get("category") in CATEGORIES and _evidence(q)
    )
    owner = sessions[0].turns[0].speaker
    return Conversation(item["sample_id"], owner, tuple(sessions), questions)


def load(path: Path = DEFAULT_DATA, samples: list[str] | None = None) -> list[Conversation]:
    if not path.exists():
        raise SystemExit(
            f"no LoCoMo data at {path}: pass --data PATH to locomo8.json (it is not part of "
            "this repository; see docs/benchmarks.md)"
        )
    items = json.loads(path.read_text(encoding="utf-8"))
    found = [parse(item) for item in items if not samples or item["sample_id"] in samples]
    missing = set(samples or []) - {c.sample for c in found}
    if missing:
        raise SystemExit(f"{path} has no conversation {', '.join(sorted(missing))}")
    return found
