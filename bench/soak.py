"""One simulated year of a heavy user, per store, checked against an independent model.

    python -m bench.soak [--days 365] [--stores sqlite neo4j] [--seed 7]

The clock is a datetime the soak advances; every call gets it as ``now``. Each
simulated day: one to three conversations go through the real write path, their
extraction answered by a scripted OpenAI-compatible server (tool calls drawn from
the seed: a pool of named people, places and things, a fixed relation vocabulary
with every stability and both cardinalities; some claims repeat earlier ones, some
contradict one_to_one ones); three to ten recalls name things from the pool under
a conversation id, which is then closed; the daily decay pass runs. Every 30 days
one entity or one conversation is forgotten; every 45 days ``pegasus ingest`` runs
in a child process that is killed (SIGKILL) while it waits for the model, and the
same ingest is then rerun in process, resuming from the journal.

Alongside, a model of what the memory should hold: per claim its strength0,
touched_at, stability, expiry, citations, superseded or forgotten, kept from what
ingest reported and what recall returned, with the one rule
(:func:`pegasus.time.decay.reinforced_edge`, :func:`~pegasus.time.decay.edge_state`).
At the end the store is checked against it. Recall latency, a fixed set of probe
recalls and the process's resident memory are kept per simulated month.

Each store runs in a fresh process; a failure is a row with its error. Results go
to bench/results/soak.json and soak.md as each store finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from bench.stores import add_store_options, bench_store
from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import ScriptedServer, Step
from pegasus.memory import Memory
from pegasus.model import Cardinality, Edge, Kind, Stability, edge_id, node_id
from pegasus.time.decay import RULE, edge_state, reinforced_edge
from pegasus.write.pipeline import IngestReport
from pegasus.write.transcript import parse_transcript

RESULTS = Path(__file__).parent / "results"
START = datetime(2026, 1, 1, tzinfo=UTC)
SELF = "User"  # how the transcripts' extraction names the user
SELF_ID = node_id(Kind.PERSON, SELF)
FORGET_EVERY = 30  # days
KILL_EVERY = 45  # days
RELATIVE = 1e-6  # tolerance of the strength check
EXAMPLES = 5  # failing items kept per check
CHILD_TIMEOUT_S = 240
MONTHLY = ("recall", "recall_cpu", "ingest", "decay", "load")  # samples kept per month

# --- the world ------------------------------------------------------------------------
# Names share no word and no nickname form within a kind, so the merge rules decide
# every sighting without asking the model.
POOL: dict[Kind, tuple[str, ...]] = {
    Kind.PERSON: (
        "Ana Pereira", "Bruno Okafor", "Chloe Lindqvist", "Dmitri Volkov", "Esther Nakamura",
        "Farid Haddad", "Greta Sorensen", "Hiro Tanaka", "Ines Moreau", "Jonas Becker",
        "Keiko Arai", "Lars Holm", "Maya Rosenberg", "Nikolai Petrov", "Olivia Brandt",
        "Pablo Ortega", "Quentin Dufour", "Rosa Bianchi", "Samir Khoury", "Tessa Whitlock",
        "Umar Siddiqui", "Vera Kowalski",
    ),
    Kind.PLACE: (
        "Lisbon", "Kyoto", "Oslo", "Marrakesh", "Reykjavik", "Valparaiso", "Tbilisi",
        "Ljubljana", "Hobart", "Zanzibar",
    ),
    Kind.ORG: (
        "Acme Robotics", "Bluefin Bank", "Cobalt Labs", "Driftwood Press", "Evergreen Clinic",
        "Foxglove Theatre", "Granite Climbing Gym", "Harbor Rowing Club",
    ),
    Kind.THING: (
        "Vespa", "Stratocaster", "Leica", "Kindle", "Peloton", "Subaru Outback", "Canoe",
        "Telescope", "Espresso Machine", "Sourdough Starter",
    ),
    Kind.TOPIC: ("Astronomy", "Beekeeping", "Chess", "Pottery", "Mandarin", "Jazz Piano"),
    Kind.EVENT: (
        "Berlin Marathon", "Tax Deadline", "Piano Recital", "Hackathon", "Book Launch",
        "Family Reunion",
    ),
}  # fmt: skip
KIND_OF = {name: kind for kind, names in POOL.items() for name in names}


@dataclass(frozen=True)
class Label:
    name: str
    stability: Stability
    cardinality: Cardinality
    target: Kind
    phrase: str  # "<source> <phrase> <target>."
    expires: tuple[int, int] | None = None  # days ahead an expiry is set
    always_expires: bool = True


S, C = Stability, Cardinality
VOCABULARY = (
    Label("BORN_IN", S.IMMUTABLE, C.ONE_TO_ONE, Kind.PLACE, "was born in"),
    Label("HAS_SIBLING", S.IMMUTABLE, C.ONE_TO_MANY, Kind.PERSON, "is a sibling of"),
    Label("WORKS_AT", S.STABLE, C.ONE_TO_ONE, Kind.ORG, "works at"),
    Label("LIVES_IN", S.STABLE, C.ONE_TO_ONE, Kind.PLACE, "lives in"),
    Label("FRIENDS_WITH", S.STABLE, C.ONE_TO_MANY, Kind.PERSON, "is friends with"),
    Label("OWNS", S.STABLE, C.ONE_TO_MANY, Kind.THING, "owns a"),
    Label("INTERESTED_IN", S.MUTABLE, C.ONE_TO_MANY, Kind.TOPIC, "is into"),
    Label("DRIVES", S.MUTABLE, C.ONE_TO_ONE, Kind.THING, "gets around on the"),
    Label("MEMBER_OF", S.MUTABLE, C.ONE_TO_MANY, Kind.ORG, "is a member of"),
    Label("TRAVELLING_TO", S.TIME_BOUND, C.ONE_TO_ONE, Kind.PLACE, "is travelling to",
          (3, 21)),
    Label("PREPARING_FOR", S.TIME_BOUND, C.ONE_TO_MANY, Kind.EVENT, "is preparing for",
          (5, 40)),
    Label("BORROWED", S.EPHEMERAL, C.ONE_TO_MANY, Kind.THING, "borrowed the", (2, 10),
          always_expires=False),
    Label("WORRIED_ABOUT", S.EPHEMERAL, C.ONE_TO_ONE, Kind.EVENT, "is worried about the"),
)  # fmt: skip
LABELS = {label.name: label for label in VOCABULARY}
CONTRADICTABLE = tuple(
    label.name
    for label in VOCABULARY
    if label.cardinality == C.ONE_TO_ONE and label.stability != S.IMMUTABLE
)
FINISH = ("finish", {"summary": "soak conversation", "importance": 0.5, "tags": []})
MARK = re.compile(r"\[soak (c\d+-\d+)\]")
RECALLS = (
    "What do you remember about {a}?",
    "I'm having dinner with {a} near {b} on Friday.",
    "Any news about {a}? {b} asked me yesterday.",
    "Remind me how {a} and {b} are connected.",
    "Should I bring up {a} when I see {b}?",
)
# The same messages at every month's end, without a conversation id (the graph is
# not touched), each the fastest of PROBE_RUNS: a latency figure that other load on
# the machine hardly moves.
PROBES = tuple(
    template.format(a=a, b=b)
    for template, (a, b) in zip(
        RECALLS * 2,
        [("Ana Pereira", "Lisbon"), ("Acme Robotics", "Hiro Tanaka"), ("Kyoto", "Chess"),
         ("Vespa", "Rosa Bianchi"), ("Tax Deadline", "Jonas Becker"), ("Oslo", "Leica"),
         ("Pottery", "Samir Khoury"), ("Book Launch", "Cobalt Labs"),
         ("Greta Sorensen", "Canoe"), ("Hobart", "Beekeeping")],
        strict=True,
    )
)  # fmt: skip
PROBE_RUNS = 3


def node_of(name: str) -> str:
    return SELF_ID if name == SELF else node_id(KIND_OF[name], name)


@dataclass(frozen=True)
class Said:
    """One claim of a script: names as the extraction writes them."""

    source: str
    label: str
    target: str
    expires_at: datetime | None = None

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.source, self.label, self.target)

    @property
    def id(self) -> str:
        return edge_id(node_of(self.source), self.label, node_of(self.target))

    def snippet(self) -> str:
        who = "I" if self.source == SELF else self.source
        return f"{who} {LABELS[self.label].phrase} {self.target}."


@dataclass
class Script:
    """One conversation: its transcript and the extraction's tool calls."""

    id: str
    at: datetime
    claims: list[Said]
    entities: list[str]  # every end but the user, then any standalone one
    standalone: list[str]

    def transcript(self) -> dict[str, Any]:
        turns: list[dict[str, str]] = []
        lines = [said.snippet() for said in self.claims] + [
            f"I keep thinking about {name}." for name in self.standalone
        ]
        for index, line in enumerate(lines):
            text = f"[soak {self.id}] {line}" if index == 0 else line
            turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
        when = self.at.isoformat()
        return {"id": self.id, "started_at": when, "ended_at": when, "turns": turns}

    def rounds(self) -> list[Step]:
        """Entities, then relations, then finish: three replies, so a run can be
        killed with some of them journaled."""
        entities = [("add_entity", {"name": n, "kind": KIND_OF[n].value}) for n in self.entities]
        relations = []
        for said in self.claims:
            label = LABELS[said.label]
            args = {"source": said.source, "relation": said.label, "target": said.target,
                    "snippet": said.snippet(), "stability": label.stability.value,
                    "cardinality": label.cardinality.value}  # fmt: skip
            if said.expires_at is not None:
                args["expires_at"] = said.expires_at.isoformat()
            relations.append(("add_relation", args))
        return [Step(tool_calls=entities), Step(tool_calls=relations), Step(tool_calls=[FINISH])]


class World:
    """What the simulated user says, drawn from the seed alone (never from what a
    store answered), so that both stores live the same year."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.gone: set[str] = set()  # entities forgotten: never mentioned again
        self.said: dict[tuple[str, str, str], Said] = {}  # every claim said, in order
        self.current: dict[tuple[str, str], str] = {}  # one_to_one (source, label) -> target
        self.conversations: list[tuple[str, datetime]] = []
        self.forgotten_conversations: set[str] = set()

    def names(self, kind: Kind) -> list[str]:
        return [name for name in POOL[kind] if name not in self.gone]

    def _fresh(self, first: bool) -> Said | None:
        label = self.rng.choice(VOCABULARY)
        people = self.names(Kind.PERSON)
        source = SELF if first or self.rng.random() < 0.5 or not people else self.rng.choice(people)
        targets = [n for n in self.names(label.target) if n != source]
        if not targets:
            return None
        said = Said(source, label.name, self.rng.choice(targets))
        held = self.current.get((source, label.name))
        if held is not None and held != said.target:
            return None  # a new claim, not a contradiction: those are drawn on purpose
        return said

    def _contradiction(self) -> Said | None:
        rivals = [key for key in self.current if key[1] in CONTRADICTABLE]
        if not rivals:
            return None
        source, label = self.rng.choice(rivals)
        targets = [n for n in self.names(LABELS[label].target)
                   if n not in (source, self.current[(source, label)])]  # fmt: skip
        return Said(source, label, self.rng.choice(targets)) if targets else None

    def conversation(self, cid: str, at: datetime) -> Script:
        rng = self.rng
        wanted = rng.randint(2, 6)
        claims: list[Said] = []
        singles: set[tuple[str, str]] = set()
        for _ in range(40):
            if len(claims) == wanted:
                break
            roll = rng.random()
            if not self.said:
                said = self._fresh(first=not claims)
            elif roll < 0.30:
                said = rng.choice(list(self.said.values()))
            elif roll < 0.45:
                said = self._contradiction()
            else:
                said = self._fresh(first=False)
            if said is None or {said.source, said.target} & self.gone:
                continue
            label = LABELS[said.label]
            if said.triple in {c.triple for c in claims}:
                continue
            if label.cardinality == C.ONE_TO_ONE:
                if (said.source, said.label) in singles:
                    continue  # two rival claims in one breath: not what a user says
                singles.add((said.source, said.label))
            expires = None
            if label.expires and (label.always_expires or rng.random() < 0.5):
                expires = at + timedelta(days=rng.randint(*label.expires))
            claims.append(Said(said.source, said.label, said.target, expires))
        for said in claims:
            self.said.setdefault(said.triple, said)
            if LABELS[said.label].cardinality == C.ONE_TO_ONE:
                self.current[(said.source, said.label)] = said.target
        ends = list(dict.fromkeys(n for c in claims for n in (c.source, c.target) if n != SELF))
        standalone: list[str] = []
        if rng.random() < 0.1:
            others = [n for n in KIND_OF if n not in self.gone and n not in ends]
            standalone = [rng.choice(others)]
        self.conversations.append((cid, at))
        return Script(cid, at, claims, ends + standalone, standalone)

    def message(self) -> str:
        names = [n for n in KIND_OF if n not in self.gone]
        a, b = self.rng.sample(names, 2)
        return self.rng.choice(RECALLS).format(a=a, b=b)

    def forget_entity(self) -> str | None:
        """An entity the user asks to forget, among those said in a claim."""
        said = sorted({n for t in self.said for n in (t[0], t[2]) if n != SELF} - self.gone)
        if not said:
            return None
        name = self.rng.choice(said)
        self.gone.add(name)
        for triple in [t for t in self.said if name in (t[0], t[2])]:
            del self.said[triple]
        for key in [k for k, target in self.current.items() if name in (k[0], target)]:
            del self.current[key]
        return name

    def forget_conversation(self, before: datetime) -> str | None:
        old = [c for c, at in self.conversations
               if at < before and c not in self.forgotten_conversations]  # fmt: skip
        if not old:
            return None
        cid = self.rng.choice(old)
        self.forgotten_conversations.add(cid)
        return cid


# --- the scripted model --------------------------------------------------------------------
class Scripts:
    """The responder: each conversation's rounds, found by the mark in its first user
    turn; the n-th reply of a conversation is its n-th round. It can kill a child
    process when that process asks for a given round (it dies waiting for it)."""

    def __init__(self) -> None:
        self.rounds: dict[str, list[Step]] = {}
        self.served: Counter[str] = Counter()
        self.reviews = 0
        self.unknown = 0
        self.kill_at: tuple[str, int] | None = None
        self.child: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Step:
        messages = body.get("messages", [])
        if "tools" not in body:  # a merge review (none expected): keep apart
            with self.lock:
                self.reviews += 1
            return Step(content='{"candidates": []}')
        text = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        found = MARK.search(text)
        if found is None:
            with self.lock:
                self.unknown += 1
            return Step(tool_calls=[FINISH])
        cid = found.group(1)
        done = sum(1 for m in messages if m.get("role") == "assistant")
        with self.lock:
            self.served[cid] += 1
            child = self.child
            if self.kill_at == (cid, done) and child is not None and child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
        rounds = self.rounds.get(cid, [])
        return rounds[done] if done < len(rounds) else Step(tool_calls=[FINISH])


# The CLI as its console script runs it.
CHILD = "import sys\nfrom pegasus.cli.app import main\nsys.argv[0] = 'pegasus'\nmain()\n"


# --- the model of what should be there ------------------------------------------------------
@dataclass
class Claim:
    id: str
    source: str
    target: str
    relation: str
    strength0: float
    touched_at: datetime
    expires_at: datetime | None
    conversations: list[str]
    superseded: bool = False
    forgotten: bool = False

    @property
    def label(self) -> Label:
        return LABELS[self.relation]

    def edge(self) -> Edge:
        return Edge(
            id=self.id, source=self.source, target=self.target, relation=self.relation,
            strength=self.strength0, strength0=self.strength0, touched_at=self.touched_at,
            stability=self.label.stability, cardinality=self.label.cardinality,
            expires_at=self.expires_at, snippet="(model)",
            superseded_by="(model)" if self.superseded else None,
        )  # fmt: skip

    def reinforce(self, at: datetime) -> None:
        raised = reinforced_edge(self.edge(), at, RULE)
        self.strength0, self.touched_at = raised.strength0, raised.touched_at


@dataclass
class Model:
    claims: dict[str, Claim] = field(default_factory=dict)
    nodes: dict[str, bool] = field(default_factory=dict)  # id -> created standalone
    conversations: set[str] = field(default_factory=set)
    # report and plan disagreements with the model's own expectation, by kind
    mismatches: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def mismatch(self, kind: str, detail: str) -> None:
        self.mismatches[kind] += 1
        self.examples.setdefault(kind, [])
        if len(self.examples[kind]) < EXAMPLES:
            self.examples[kind].append(detail)

    def live(self, claim_id: str) -> Claim | None:
        claim = self.claims.get(claim_id)
        return claim if claim is not None and not claim.forgotten else None

    def rivals(self, claim: Claim) -> set[str]:
        """What a one_to_one claim heard now supersedes, by the model's account."""
        if claim.label.cardinality != C.ONE_TO_ONE:
            return set()
        return {
            c.id
            for c in self.claims.values()
            if not c.forgotten and not c.superseded and c.id != claim.id
            and c.source == claim.source and c.relation == claim.relation
        }  # fmt: skip

    def ingested(
        self, script: Script, report: IngestReport, used: list[str], now: datetime
    ) -> None:
        """Book one ingest from its report: claims created, heard again (reinforced as
        of the conversation's date), superseded; then the edges recall used in it,
        reinforced by the close that ends the ingest."""
        at = script.at
        by_id = {said.id: said for said in script.claims}
        reinforced = list(report.reinforced)
        closed = [eid for eid in used if self.live(eid)]
        heard = reinforced[: len(reinforced) - len(closed)] if closed else reinforced
        if closed and set(reinforced[len(heard) :]) != set(closed):
            self.mismatch("ingest closed other edges than recall used",
                          f"{script.id}: {reinforced[len(heard):]} vs {closed}")  # fmt: skip
        expected_superseded: set[str] = set()
        for eid in report.relations_added:
            said = by_id.get(eid)
            if said is None:
                self.mismatch("claim created that the script did not say", f"{script.id}: {eid}")
                continue
            if self.live(eid):
                self.mismatch("claim created again while stored", f"{script.id}: {eid}")
            self.claims[eid] = claim = Claim(
                eid, node_of(said.source), node_of(said.target), said.label, RULE.cap, at,
                said.expires_at, [script.id],
            )  # fmt: skip
            expected_superseded |= self.rivals(claim)
            self.counts["claims created"] += 1
        for eid in heard:
            said, claim = by_id.get(eid), self.live(eid)
            if said is None or claim is None:
                self.mismatch("claim heard again that the model lacks", f"{script.id}: {eid}")
                continue
            claim.reinforce(max(at, claim.touched_at))
            if said.expires_at is not None or (claim.expires_at and claim.expires_at <= at):
                claim.expires_at = said.expires_at
            claim.conversations.append(script.id)
            if claim.superseded:
                self.counts["superseded claims revived by a repeat"] += 1
            claim.superseded = False
            expected_superseded |= self.rivals(claim)
            self.counts["claims heard again"] += 1
        missing = set(by_id) - set(report.relations_added) - set(heard)
        for eid in sorted(missing):
            self.mismatch("claim said but not reported", f"{script.id}: {eid}")
        for eid in report.superseded:
            claim = self.live(eid)
            if claim is None:
                self.mismatch("superseded a claim the model lacks", f"{script.id}: {eid}")
                continue
            claim.superseded = True
            self.counts["claims superseded"] += 1
        if expected_superseded != set(report.superseded):
            self.mismatch("supersession differs from the model",
                          f"{script.id}: {sorted(report.superseded)} vs "
                          f"{sorted(expected_superseded)}")  # fmt: skip
        ends = {node_of(n) for said in script.claims for n in (said.source, said.target)}
        for nid in report.created:
            self.nodes[nid] = nid not in ends
        self.conversations.add(script.id)
        self.closed(script.id, closed, now, len(closed))

    def closed(self, cid: str, used: list[str], now: datetime, count: int) -> None:
        """A close reinforced ``count`` edges; the model expects those recall used."""
        live = [eid for eid in used if self.live(eid)]
        if count != len(live):
            self.mismatch("close reinforced another count", f"{cid}: {count} vs {len(live)}")
        for eid in live:
            self.claims[eid].reinforce(now)
        self.counts["reinforced by a close"] += len(live)

    def forgot(self, plan: Any, expected_edges: set[str], what: str) -> None:
        if set(plan.edges) != expected_edges:
            self.mismatch("forget plan differs from the model",
                          f"{what}: {sorted(plan.edges)} vs {sorted(expected_edges)}")  # fmt: skip
        for eid in plan.edges:
            if eid in self.claims:
                self.claims[eid].forgotten = True
        for edge in plan.edges_changed:
            claim = self.live(edge.id)
            if claim is not None:
                claim.superseded = edge.superseded_by is not None
                claim.conversations = list(edge.conversations)
        for nid in plan.nodes:
            self.nodes.pop(nid, None)
        if plan.conversation:
            self.conversations.discard(plan.conversation)
            for claim in self.claims.values():
                if plan.conversation in claim.conversations:
                    claim.conversations.remove(plan.conversation)
        self.counts["claims forgotten"] += len(plan.edges)
        self.counts["nodes forgotten"] += len(plan.nodes)


# --- the simulation -----------------------------------------------------------------------------
def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return round(int(status.split("VmRSS:")[1].split()[0]) / 1024, 1)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1) if values else 0.0


class Soak:
    def __init__(self, memory: Memory, url: str, scripts: Scripts, server: ScriptedServer,
                 seed: int, tmp: Path) -> None:  # fmt: skip
        self.memory, self.url, self.scripts, self.tmp = memory, url, scripts, tmp
        self.server, self.base_url = server, server.base_url
        self.llm = LLM(LLMConfig(server.base_url, "scripted", retries=0, timeout=60.0))
        self.world = World(random.Random(seed))
        self.model = Model()
        self.pending: dict[str, list[str]] = {}  # conversation id -> edges recall used
        self.months: list[dict[str, Any]] = []
        self._month: dict[str, list[float]] = {key: [] for key in MONTHLY}
        self.kills: list[dict[str, Any]] = []
        self.forgets: list[str] = []
        self.last_decay: datetime = START

    # -- one day ----------------------------------------------------------------------------
    def day(self, index: int) -> None:
        rng = self.world.rng
        clock = START + timedelta(days=index, hours=8)

        def tick() -> datetime:
            nonlocal clock
            clock += timedelta(minutes=rng.randint(3, 25))
            return clock

        conversations = rng.randint(1, 3)
        recalls = rng.randint(3, 10)
        share = [recalls // conversations + (i < recalls % conversations)
                 for i in range(conversations)]  # fmt: skip
        for number in range(conversations):
            cid = f"c{index:03d}-{number}"
            kill = number == 0 and index % KILL_EVERY == KILL_EVERY - 1
            recall_first = rng.random() < 0.5
            if recall_first:
                for _ in range(share[number]):
                    self.recall(cid, tick())
            script = self.world.conversation(cid, tick())
            self.ingest(script, kill, rng)
            if not recall_first:
                for _ in range(share[number]):
                    self.recall(cid, tick())
            self.close(cid, tick())
        if index % FORGET_EVERY == FORGET_EVERY - 1:
            self.forget(index, START + timedelta(days=index, hours=22))
        now = START + timedelta(days=index, hours=23, minutes=30)
        start = time.perf_counter()
        self.memory.decay(now)
        self._month["decay"].append((time.perf_counter() - start) * 1000)
        self.last_decay = now
        self._month["load"].append(os.getloadavg()[0])
        self.server.requests.clear()  # the server keeps every request body: not ours to count
        if (now + timedelta(days=1)).month != now.month:
            self.month_done(now)

    def recall(self, cid: str, now: datetime) -> None:
        message = self.world.message()
        start, cpu = time.perf_counter(), time.process_time()
        result = self.memory.recall(message, conversation_id=cid, now=now)
        self._month["recall"].append((time.perf_counter() - start) * 1000)
        self._month["recall_cpu"].append((time.process_time() - cpu) * 1000)
        used = self.pending.setdefault(cid, [])
        used += [eid for eid in result.used_edges if eid not in used]
        self.model.counts["recalls"] += 1
        self.model.counts["recalls that injected"] += bool(result.used_edges)

    def close(self, cid: str, now: datetime) -> None:
        count = self.memory.close_conversation(cid, now)
        self.model.closed(cid, self.pending.pop(cid, []), now, count)

    def ingest(self, script: Script, kill: bool, rng: random.Random) -> None:
        self.scripts.rounds[script.id] = script.rounds()
        transcript = script.transcript()
        report = None
        start = time.perf_counter()
        if kill:
            report = self.killed_ingest(script, transcript, rng.randint(1, 2))
        if report is None:
            report = self.memory.ingest(parse_transcript(transcript), now=script.at, llm=self.llm)
        self._month["ingest"].append((time.perf_counter() - start) * 1000)
        self.model.ingested(script, report, self.pending.pop(script.id, []), script.at)
        self.model.counts["conversations ingested"] += 1

    def killed_ingest(self, script: Script, transcript: dict, round_: int) -> IngestReport | None:
        """``pegasus ingest`` in a child process, killed when it asks for reply
        ``round_``; then the same ingest in process, which must resume from the
        journal (ask only for the replies not journaled). Returns the report of
        whichever run completed it."""
        path = self.tmp / f"{script.id}.json"
        path.write_text(json.dumps(transcript))
        env = os.environ | {"PEGASUS_LLM_BASE_URL": self.base_url, "PEGASUS_LLM_MODEL": "scripted",
                            "PEGASUS_LLM_RETRIES": "0"}  # fmt: skip
        command = [sys.executable, "-c", CHILD, "--store", self.url, "--user", self.memory.user,
                   "ingest", str(path), "--now", script.at.isoformat(), "--json"]  # fmt: skip
        scripts = self.scripts
        start = time.perf_counter()
        with scripts.lock:
            scripts.kill_at = (script.id, round_)
            scripts.child = child = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        try:
            out, err = child.communicate(timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
        finally:
            with scripts.lock:
                scripts.kill_at, scripts.child = None, None
        entry: dict[str, Any] = {"conversation": script.id, "killed_at_reply": round_,
                                 "child_s": round(time.perf_counter() - start, 1),
                                 "exit": child.returncode}  # fmt: skip
        self.kills.append(entry)
        if child.returncode == 0:  # it finished before the kill: its report stands
            entry["resumed"] = False
            entry["note"] = "the child finished before it was killed"
            return IngestReport.model_validate_json(out[out.index("{") :])
        if child.returncode != -signal.SIGKILL:
            raise RuntimeError(f"pegasus ingest exited {child.returncode}: {err[-2000:]}")
        record = self.memory.store.get_conversation(self.memory.user, script.id)
        entry["journal_lines"] = len(record.journal) if record else 0
        before = scripts.served[script.id]
        report = self.memory.ingest(parse_transcript(transcript), now=script.at, llm=self.llm)
        entry["rerun_requests"] = scripts.served[script.id] - before
        entry["resumed"] = (
            entry["journal_lines"] > 0
            and entry["rerun_requests"] == len(scripts.rounds[script.id]) - round_
        )
        return report

    def forget(self, index: int, now: datetime) -> None:
        memory, model = self.memory, self.model
        if (index // FORGET_EVERY) % 2 == 0:
            name = self.world.forget_entity()
            if name is None or node_of(name) not in model.nodes:
                return
            nid = node_of(name)
            expected = {c.id for c in model.claims.values()
                        if not c.forgotten and nid in (c.source, c.target)}  # fmt: skip
            plan = memory.plan_forget(node=nid)
            memory.forget(plan)
            model.forgot(plan, expected, f"entity {name}")
            self.forgets.append(f"day {index + 1}: entity {name} ({len(plan.edges)} claims)")
        else:
            cid = self.world.forget_conversation(now - timedelta(days=14))
            if cid is None or cid not in model.conversations:
                return
            expected = {c.id for c in model.claims.values()
                        if not c.forgotten and c.conversations == [cid]}  # fmt: skip
            plan = memory.plan_forget(conversation=cid)
            memory.forget(plan)
            model.forgot(plan, expected, f"conversation {cid}")
            self.forgets.append(f"day {index + 1}: conversation {cid} ({len(plan.edges)} claims)")

    def probe(self, now: datetime) -> float:
        """Median over PROBES of each message's fastest recall, in ms."""
        best = []
        for message in PROBES:
            runs = []
            for _ in range(PROBE_RUNS):
                start = time.perf_counter()
                self.memory.recall(message, now=now)
                runs.append((time.perf_counter() - start) * 1000)
            best.append(min(runs))
        return round(sorted(best)[len(best) // 2], 1)

    def month_done(self, now: datetime) -> None:
        recall, ingest, decay, load = (
            self._month[k] for k in ("recall", "ingest", "decay", "load")
        )
        stats = self.memory.stats()
        self.months.append({
            "month": now.strftime("%Y-%m"),
            "recalls": len(recall),
            "recall_p50_ms": percentile(recall, 0.5),
            "recall_p95_ms": percentile(recall, 0.95),
            "recall_cpu_p50_ms": percentile(self._month["recall_cpu"], 0.5),
            "probe_ms": self.probe(now),
            "ingest_p50_ms": percentile(ingest, 0.5),
            "decay_p50_ms": percentile(decay, 0.5),
            "rss_mb": rss_mb(),
            "load_avg": round(sum(load) / len(load), 2) if load else None,
            "nodes": stats.nodes,
            "edges": stats.edges,
            "dormant": stats.dormant,
            "expired": stats.expired,
            "superseded": stats.superseded,
        })  # fmt: skip
        self._month = {key: [] for key in MONTHLY}
        print(f"  {self.memory.store.__class__.__name__} {json.dumps(self.months[-1])}",
              flush=True)  # fmt: skip


# --- the end: the store against the model -------------------------------------------------
def check(memory: Memory, model: Model, end: datetime) -> dict[str, dict[str, Any]]:
    """Each check: passed or not, how many items it looked at, how many failed, examples."""
    graph = memory.export()
    stored = {edge.id: edge for edge in graph.edges}
    node_ids = {node.id for node in graph.nodes}
    out: dict[str, dict[str, Any]] = {}

    def verdict(name: str, checked: int, failures: list[str]) -> None:
        out[name] = {"passed": not failures, "checked": checked, "failed": len(failures),
                     "examples": failures[:EXAMPLES]}  # fmt: skip

    strength, flags, superseded, unknown = [], [], [], []
    for edge in graph.edges:
        claim = model.claims.get(edge.id)
        if claim is None or claim.forgotten:
            unknown.append(edge.id)
            continue
        expected = edge_state(claim.edge(), end, RULE)
        if abs(edge.strength - expected.strength) > RELATIVE * max(abs(expected.strength), 1e-300):
            strength.append(f"{edge.id}: stored {edge.strength!r}, model {expected.strength!r} "
                            f"(stored strength0 {edge.strength0!r} touched {edge.touched_at}; "
                            f"model {claim.strength0!r} {claim.touched_at})")  # fmt: skip
        if (edge.dormant, edge.expired) != (expected.dormant, expected.expired):
            flags.append(f"{edge.id}: stored dormant={edge.dormant} expired={edge.expired}, "
                         f"rule {expected.dormant} {expected.expired} "
                         f"(expires {edge.expires_at} vs model {claim.expires_at})")  # fmt: skip
        if (edge.superseded_by is not None) != claim.superseded:
            superseded.append(f"{edge.id}: stored superseded_by={edge.superseded_by!r}, "
                              f"model superseded={claim.superseded}")  # fmt: skip
    verdict("strength as of the end equals the model's", len(graph.edges), strength)
    verdict("dormant and expired flags follow the rule", len(graph.edges), flags)
    verdict("superseded as the model says", len(graph.edges), superseded)
    verdict("every stored claim is one the model has", len(graph.edges), unknown)

    triples = Counter((e.source, e.relation, e.target) for e in graph.edges)
    ids = Counter(e.id for e in graph.edges)
    duplicates = [f"{t} x{n}" for t, n in triples.items() if n > 1]
    duplicates += [f"id {i} x{n}" for i, n in ids.items() if n > 1]
    verdict("no duplicated claims", len(graph.edges), duplicates)

    loose = [f"{e.id}: end missing" for e in graph.edges
             if e.source not in node_ids or e.target not in node_ids]  # fmt: skip
    verdict("every edge's ends are nodes", len(graph.edges), loose)

    ends = {n for e in graph.edges for n in (e.source, e.target)}
    bare = node_ids - ends
    model_ends = {n for c in model.claims.values() if not c.forgotten for n in (c.source, c.target)}
    unexplained = [f"{n}: no edges, created with edges and none forgotten" for n in sorted(bare)
                   if n not in model.nodes or (not model.nodes[n] and n in model_ends)]  # fmt: skip
    verdict("no node without edges unless standalone or left by a forget", len(node_ids),
            unexplained)  # fmt: skip
    out["no node without edges unless standalone or left by a forget"] |= {
        "bare nodes": len(bare),
        "created standalone": sum(1 for n in bare if model.nodes.get(n)),
    }

    keys = memory.store.list_keys(memory.user)
    dangling = [f"{k.id}" for k in keys if k.kind == "node" and k.ref not in node_ids]
    verdict("no embedding key points at a missing node", len(keys), dangling)
    keyed = {k.ref for k in keys if k.kind == "node"}
    verdict("every node has a key", len(node_ids), sorted(node_ids - keyed))

    forgotten = [eid for eid, c in model.claims.items() if c.forgotten and eid in stored]
    verdict("no forgotten claim is stored", sum(c.forgotten for c in model.claims.values()),
            forgotten)  # fmt: skip
    live = [eid for eid, c in model.claims.items() if not c.forgotten]
    verdict("every claim the model has is stored", len(live),
            [eid for eid in live if eid not in stored])  # fmt: skip
    nodes = [f"stored, not in the model: {n}" for n in sorted(node_ids - model.nodes.keys())]
    nodes += [f"in the model, not stored: {n}" for n in sorted(model.nodes.keys() - node_ids)]
    verdict("nodes are the model's", len(node_ids), nodes)
    records = {c.id for c in graph.conversations}
    verdict("conversation records are the model's", len(records),
            sorted(records ^ model.conversations))  # fmt: skip
    verdict("ingest, close and forget reports agree with the model",
            sum(model.counts[k] for k in ("conversations ingested", "recalls")),
            [f"{kind}: {n} ({'; '.join(model.examples[kind])})"
             for kind, n in model.mismatches.items()])  # fmt: skip
    return out


def soak(kind: str, days: int, seed: int, neo4j: str) -> dict[str, Any]:
    """One store's year, in its own process. Never raises: a failure is in the row."""
    row: dict[str, Any] = {"store": kind, "days": days, "seed": seed}
    started = time.perf_counter()
    run: Soak | None = None
    day = -1
    try:
        scripts = Scripts()
        with (
            ScriptedServer(scripts) as server,
            bench_store(kind, neo4j) as (store, user, url),
            tempfile.TemporaryDirectory() as tmp,
        ):
            memory = Memory.open(store, user=user)
            memory.embedder.embed("load the model before the clock starts")
            run = Soak(memory, url, scripts, server, seed, Path(tmp))
            for day in range(days):
                run.day(day)
            if run._month["recall"]:
                run.month_done(run.last_decay)
            stats = memory.stats()
            row["sizes"] = {"nodes": stats.nodes, "edges": stats.edges,
                            "conversations": stats.conversations, "keys": stats.keys,
                            "dormant": stats.dormant, "expired": stats.expired,
                            "superseded": stats.superseded}  # fmt: skip
            start = time.perf_counter()
            row["checks"] = check(memory, run.model, run.last_decay)
            row["check_s"] = round(time.perf_counter() - start, 1)
            row["passed"] = all(c["passed"] for c in row["checks"].values())
            row["model_reviews"] = scripts.reviews
            row["unknown_requests"] = scripts.unknown
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["failed_on_day"] = day + 1
        row["traceback"] = traceback.format_exc()[-3000:]
    if run is not None:
        row["counts"] = dict(run.model.counts)
        row["months"] = run.months
        row["kills"] = run.kills
        row["kills_resumed"] = sum(bool(k.get("resumed")) for k in run.kills)
        row["forgets"] = run.forgets
        row |= drift(run.months)
    row["peak_rss_mb"] = round(int(Path("/proc/self/status").read_text()
                                   .split("VmHWM:")[1].split()[0]) / 1024, 1)  # fmt: skip
    row["wall_s"] = round(time.perf_counter() - started, 1)
    return row


def drift(months: list[dict[str, Any]]) -> dict[str, Any]:
    if not months:
        return {}
    first, last = months[0], months[-1]

    def ratio(key: str) -> float | None:
        return round(last[key] / first[key], 2) if first[key] else None

    keys = ("recall_p50_ms", "recall_p95_ms", "recall_cpu_p50_ms", "probe_ms", "rss_mb",
            "ingest_p50_ms", "decay_p50_ms")  # fmt: skip
    return {"drift": {k: {"first": first[k], "last": last[k], "ratio": ratio(k)} for k in keys}}


def run_one(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        job = pool.submit(soak, kind, args.days, args.seed, args.neo4j)
        try:
            return job.result()
        except Exception as exc:  # the child itself died (out of memory, killed)
            return {"store": kind, "days": args.days, "error": f"{type(exc).__name__}: {exc}"}


# --- reporting -----------------------------------------------------------------------------------
NAMES = {"sqlite": "SQLite", "neo4j": "Neo4j"}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| store | days | conversations | recalls | nodes | edges | records | "
            "recall p50 ms first → last | recall p95 ms first → last | "
            "probe recall ms first → last | RSS MB first → last | checks | kills resumed | "
            "wall s |")  # fmt: skip
    lines = [head, "|" + "---|" * 14]
    for row in rows:
        if "error" in row and "sizes" not in row:
            day = row.get("failed_on_day")
            when = f"failed on day {day}" if day else "failed before the first day"
            error = " ".join(row["error"].split()).replace("|", "/")[:200]
            lines.append(f"| {NAMES.get(row['store'], row['store'])} | {row.get('days')} | "
                         f"{when}: {error} |"
                         + " |" * 10 + f" {row.get('wall_s', '')} |")  # fmt: skip
            continue
        counts, sizes, d = row.get("counts", {}), row["sizes"], row.get("drift", {})

        def span(key: str, d: dict = d) -> str:
            f = d.get(key, {})
            return f"{f.get('first')} → {f.get('last')} (×{f.get('ratio')})" if f else ""

        checks = row.get("checks", {})
        passed = sum(c["passed"] for c in checks.values())
        lines.append(
            f"| {NAMES.get(row['store'], row['store'])} | {row['days']} "
            f"| {counts.get('conversations ingested', 0):,} | {counts.get('recalls', 0):,} "
            f"| {sizes['nodes']:,} | {sizes['edges']:,} | {sizes['conversations']:,} "
            f"| {span('recall_p50_ms')} | {span('recall_p95_ms')} | {span('probe_ms')} "
            f"| {span('rss_mb')} "
            f"| {passed}/{len(checks)} | {row.get('kills_resumed', 0)}/{len(row.get('kills', []))} "
            f"| {row['wall_s']:,} |"
        )
    return "\n".join(lines)


def checks_table(rows: list[dict[str, Any]]) -> str:
    rows = [row for row in rows if row.get("checks")]
    if not rows:
        return ""
    names = list(rows[0]["checks"])
    lines = ["| check | " + " | ".join(NAMES.get(r["store"], r["store"]) for r in rows) + " |",
             "|---|" + "---|" * len(rows)]  # fmt: skip
    for name in names:
        cells = []
        for row in rows:
            c = row["checks"].get(name)
            state = "" if c is None else "pass" if c["passed"] else "FAIL"
            cells.append(f"{state} ({c['failed']}/{c['checked']})" if c else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def months_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| store | month | recalls | recall p50 ms | recall p95 ms | recall CPU p50 ms | "
             "probe ms | ingest p50 ms | decay ms | RSS MB | load | nodes | edges | dormant | "
             "expired | superseded |", "|" + "---|" * 16]  # fmt: skip
    for row in rows:
        for m in row.get("months", []):
            lines.append(
                f"| {NAMES.get(row['store'], row['store'])} | {m['month']} | {m['recalls']} "
                f"| {m['recall_p50_ms']} | {m['recall_p95_ms']} | {m['recall_cpu_p50_ms']} "
                f"| {m['probe_ms']} "
                f"| {m['ingest_p50_ms']} | {m['decay_p50_ms']} | {m['rss_mb']} | {m['load_avg']} "
                f"| {m['nodes']} | {m['edges']} | {m['dormant']} | {m['expired']} "
                f"| {m['superseded']} |"
            )
    return "\n".join(lines)


def markdown(run: dict[str, Any]) -> str:
    rows = run["rows"]
    parts = [f"Run of {run['date']} on {run['machine']}; `python -m bench.soak "
             f"--days {run['days']} --seed {run['seed']}`.", "", table(rows), "",
             checks_table(rows), "", months_table(rows)]  # fmt: skip
    return "\n".join(parts).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    add_store_options(parser)
    args = parser.parse_args()
    run: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}",
        "days": args.days,
        "seed": args.seed,
        "rows": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for kind in args.stores:
        print(f"{kind}: {args.days} simulated days", flush=True)
        row = run_one(kind, args)
        run["rows"].append(row)
        args.out.write_text(json.dumps(run, indent=1, default=str) + "\n")
        args.out.with_suffix(".md").write_text(markdown(run))
        if "error" in row:
            print(f"{kind} failed: {row['error']}", flush=True)
    print(table(run["rows"]))
    print()
    print(checks_table(run["rows"]))


if __name__ == "__main__":
    main()
