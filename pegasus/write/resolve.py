"""Entity resolution: which stored node each entity of a cleaned batch lands on.

The pool is every stored node the batch may mean (same name, alias or nickname
form, or a name that embeds near it); the merge rules decide, the model reviews
the undecided cases, and the user's own node is found or made. One
:class:`Resolution` carries the outcome to commit planning."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pegasus.embed import Embedder
from pegasus.errors import LLMError
from pegasus.llm import LLM
from pegasus.model import NODE_KEY, Kind, Node, node_id
from pegasus.stores import Store
from pegasus.text import fold, nickname_forms
from pegasus.write.clean import Batch, Entity, is_placeholder
from pegasus.write.extract import Journal
from pegasus.write.merge import Action, decide
from pegasus.write.review import Verdict, parse_answer, review_messages
from pegasus.write.transcript import Transcript

NEAREST_NAMES = 10  # stored names fetched per entity by embedding, for the merge rules
USER_PLACEHOLDER = "User"


@dataclass
class Resolution:
    pool: dict[str, Node]  # the stored nodes the batch may touch, by id
    self_id: str | None  # the user's own node, if known or made by this batch
    pairs: list[tuple[Entity, str]]  # each entity with the node id it lands on
    by_name: dict[str, str]  # folded name -> node id, for relation ends
    flagged: list[str] = field(default_factory=list)  # merges worth a human look
    notes: list[str] = field(default_factory=list)

    def node_for(self, name: str) -> str | None:
        """The node a relation end names (placeholders such as "User" are the user)."""
        return self.self_id if is_placeholder(name) else self.by_name.get(fold(name))


def stored_self(store: Store, user: str) -> Node | None:
    """The node that stands for the user, once one does."""
    self_id = store.get_self(user)
    found = store.get_nodes(user, [self_id]) if self_id else []
    return found[0] if found else None


class Resolver:
    def __init__(
        self,
        store: Store,
        user: str,
        embedder: Embedder,
        llm: LLM | None,
        progress: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.store, self.user, self.embedder = store, user, embedder
        self.llm, self.progress = llm, progress

    def resolve(self, journal: Journal, batch: Batch, transcript: Transcript) -> Resolution:
        pool = self._merge_pool(batch.entities)
        self_id, pairs = self._self_node_for(batch, pool)
        ids, flagged, notes = self._targets(journal, batch, pool, transcript)
        resolution = Resolution(pool, self_id, pairs, self._names_to_ids(batch, ids, pool),
                                flagged, notes)  # fmt: skip
        if self_id is None and batch.relations:
            # No self node yet: the first relation's source is the user.
            resolution.self_id = resolution.node_for(batch.relations[0].source)
        self_id = resolution.self_id
        resolution.pairs += [
            (entity, self_id if is_placeholder(entity.name) else ids[index])
            for index, entity in enumerate(batch.entities)
            if self_id or not is_placeholder(entity.name)
        ]
        return resolution

    def _self_node_for(
        self, batch: Batch, pool: dict[str, Node]
    ) -> tuple[str | None, list[tuple[Entity, str]]]:
        """The self node's id, if it is known yet, and a placeholder "User" entity to
        create when the first write's first relation starts from a placeholder."""
        self_node = stored_self(self.store, self.user)
        if self_node:
            pool.setdefault(self_node.id, self_node)
            return self_node.id, []
        first = batch.relations[0].source if batch.relations else None
        placeholder_first = (
            is_placeholder(first) if first else any(is_placeholder(e.name) for e in batch.entities)
        )
        if not placeholder_first:
            return None, []  # fixed below, from the first relation's source
        self_id = node_id(Kind.PERSON, USER_PLACEHOLDER)
        pool |= {n.id: n for n in self.store.get_nodes(self.user, [self_id])}
        return self_id, [(Entity(USER_PLACEHOLDER, Kind.PERSON, confidence=1.0), self_id)]

    def _merge_pool(self, entities: list[Entity]) -> dict[str, Node]:
        """The stored nodes the merge rules compare against: those with an entity's
        name, alias or nickname form, and those whose names embed nearest to it."""
        names = {name for e in entities for name in e.names}
        names |= {
            form for e in entities if e.kind == Kind.PERSON for form in nickname_forms(e.name)
        }
        pool = (
            {node.id: node for node in self.store.find_nodes_named(self.user, names)}
            if names
            else {}
        )
        if entities:
            vectors = self.embedder.embed_batch([e.name for e in entities])
            nearest = self.store.search_keys_many(
                self.user, vectors.tolist(), NEAREST_NAMES, (NODE_KEY,)
            )
            refs = {key.ref for found in nearest for key, _ in found if key.kind == "node"}
            missing = refs - pool.keys()
            pool |= {node.id: node for node in self.store.get_nodes(self.user, missing)}
        return pool

    def _targets(
        self, journal: Journal, batch: Batch, pool: dict[str, Node], transcript: Transcript
    ) -> tuple[list[str], list[str], list[str]]:
        """The node id each batch entity lands on, the flagged-merge lines, and notes."""
        ids: list[str] = []
        flagged: list[str] = []
        notes: list[str] = []
        taken: dict[str, str] = {}  # new node id -> folded name that claimed it
        for entity in batch.entities:
            if is_placeholder(entity.name):
                ids.append("")
                continue
            decision = decide(entity.name, entity.kind, pool.values(), hints=[entity.same_as or ""])
            target = decision.target
            if decision.action == Action.REVIEW:
                verdict = self._review(journal, entity, decision.candidates, pool, transcript)
                target = verdict.target
                if target is None and verdict.reason:
                    notes.append(verdict.reason)
                if verdict.flagged and target:
                    flagged.append(
                        f"{entity.name!r} ({entity.kind.value}) merged into {target} "
                        f"{pool[target].name!r} at {verdict.confidence:.2f} in "
                        f"{transcript.id}: {verdict.reason}".rstrip(": ")
                    )
            if target is None:
                target = self._fresh_id(entity, pool, taken)
                taken[target] = fold(entity.name)
            ids.append(target)
        return ids, flagged, notes

    def _fresh_id(self, entity: Entity, pool: dict[str, Node], taken: dict[str, str]) -> str:
        """The readable id for a new node, numbered when another node holds it."""
        base = node_id(entity.kind, entity.name)
        for number in itertools.count(1):
            candidate = base if number == 1 else f"{base}_{number}"
            if taken.get(candidate) == fold(entity.name):
                return candidate  # the same name said twice in this batch
            if candidate in taken or candidate in pool:
                continue
            if not self.store.get_nodes(self.user, [candidate]):
                return candidate
        raise AssertionError("unreachable")

    def _review(
        self,
        journal: Journal,
        entity: Entity,
        candidates: Iterable[str],
        pool: dict[str, Node],
        transcript: Transcript,
    ) -> Verdict:
        candidates = [c for c in candidates if c in pool]
        key = f"{entity.kind.value}|{fold(entity.name)}"
        recorded = [e for e in journal.of("review") if e["entity"] == key]
        if recorded:
            answer = recorded[0]["answer"]
        elif self.llm is None:
            return Verdict(None, reason=f"{entity.name!r} kept separate: no model to review it")
        else:
            self.progress(f"reviewing {entity.name!r}")
            excerpt = "\n".join(
                t.content
                for t in transcript.turns
                if t.role == "user" and fold(entity.name) in fold(t.content)
            ) or "\n".join(t.content for t in transcript.turns if t.role == "user")
            neighbourhoods = self.store.edges_touching(self.user, candidates)
            around = {
                c: [e for e in neighbourhoods if c in (e.source, e.target)] for c in candidates
            }
            ends = {e.source for e in neighbourhoods} | {e.target for e in neighbourhoods}
            names = {n.id: n.name for n in self.store.get_nodes(self.user, ends)}
            messages = review_messages(
                entity, excerpt, [pool[c] for c in candidates], around, names
            )
            try:
                answer = self.llm.chat(messages, json_mode=True).content
            except LLMError as exc:
                answer = f"(no answer: {exc})"
            journal.append({"t": "review", "entity": key, "answer": answer})
        verdict = parse_answer(answer, candidates)
        if verdict is None:
            return Verdict(
                None, reason=f"review of {entity.name!r}: unusable answer, kept separate"
            )
        return verdict

    def _names_to_ids(self, batch: Batch, ids: list[str], pool: dict[str, Node]) -> dict[str, str]:
        """How relation ends find their nodes: the batch's own names first, then any
        stored node by that name."""
        by_name: dict[str, str] = {}
        for node in pool.values():
            for name in node.names:
                by_name.setdefault(fold(name), node.id)
        ends = {fold(n) for r in batch.relations for n in (r.source, r.target)} - by_name.keys()
        for node in self.store.find_nodes_named(self.user, ends) if ends else []:
            for name in node.names:
                by_name.setdefault(fold(name), node.id)
        for entity, target in zip(batch.entities, ids, strict=True):
            if target:
                for name in entity.names:
                    by_name[fold(name)] = target
        return by_name
