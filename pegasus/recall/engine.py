"""Recall for one message: units -> seeds -> two-hop spread over one subgraph pull ->
budget -> block. Never writes to the graph; the caller logs ``used_edges``."""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import TypeVar

import numpy as np

from pegasus.embed import Embedder
from pegasus.model import NAME_KEYS, NODE_KEY, Edge, EmbeddingKey, utcnow
from pegasus.recall import activation as act
from pegasus.recall import explain
from pegasus.recall.cues import claims_meant, claims_worded, fused
from pegasus.recall.explain import RecallResult, Trace
from pegasus.recall.inject import build_block
from pegasus.recall.keys import node_key_id, node_key_texts
from pegasus.recall.ordinary import Ordinariness
from pegasus.recall.presets import DEFAULT, RecallSettings
from pegasus.recall.rank import edge_scores, past_claims, past_label
from pegasus.recall.seeds import (
    Hit,
    Seeds,
    accept,
    centred_scores,
    collect,
    csls,
    seed_activation,
)
from pegasus.recall.when import window
from pegasus.stores import Store
from pegasus.text import content_words, phrases, possessive_phrases
from pegasus.time.decay import RULE, DecayRule, edge_state


def is_live(edge: Edge) -> bool:
    """Live as of the last daily pass (what a live-only subgraph pull returns)."""
    return not (edge.dormant or edge.expired or edge.superseded_by)


def current(edges: list[Edge], now: datetime, rule: DecayRule = RULE) -> list[Edge]:
    """The edges live at ``now`` under ``rule``, each with its strength and state as
    of ``now`` (what was stored is as of the last daily pass)."""
    live: list[Edge] = []
    for edge in edges:
        state = edge_state(edge, now, rule)
        if state.live:
            live.append(edge.model_copy(update=state.stored()))
    return live


# A recall's claim cues (the message embedded whole and searched among the claim
# keys; its telling words searched in the claims' text) need nothing the seeds find,
# so each search runs on a thread of its own beside the seeding, on another core
# where one is free (docs/recall.md, "Speed").
BESIDE = ThreadPoolExecutor(max_workers=16, thread_name_prefix="pegasus-cues")
T = TypeVar("T")

FIRST_PERSON = re.compile(r"\b(my|mine|our)\b", re.IGNORECASE)
# A possessive unit ("Trevor's boss") must beat the bare name by this much on a key.
POSSESSIVE_MARGIN = 0.15


class Recaller:
    """Recall over one store with one embedder; reuse it across messages."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: RecallSettings = DEFAULT,
        ordinariness: Ordinariness | None = None,
        rule: DecayRule = RULE,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.ordinariness = ordinariness or Ordinariness(embedder)
        self.rule = rule

    # --- seeding ----------------------------------------------------------------
    def units(self, message: str, owner: str | None = None) -> list[str]:
        units = content_words(message)
        if self.settings.use_phrases:
            units += phrases(message)
        if self.settings.use_possessives and owner:
            units += possessive_phrases(message, owner)
        return units

    def match(self, user: str, units: list[str], owner: str | None = None) -> list[Hit]:
        """Score every unit against its nearest keys; keep the accepted hits."""
        if not units:
            return []
        mean_list = self.store.key_mean(user)
        if mean_list is None:
            return []
        mean = np.asarray(mean_list, np.float32)
        vectors = self.embedder.embed_batch(units + ([owner] if owner else []))
        owner_vector = vectors[-1] if owner else None
        vectors = vectors[: len(units)]
        weight = self.settings.ordinariness_weight
        r_units = self.ordinariness.of(vectors, mean) if weight else np.zeros(len(units))
        hits: list[Hit] = []
        nearest = self.store.search_keys_many(
            user, vectors.tolist(), self.settings.candidates, NAME_KEYS
        )
        exact = self.named_exactly(user, units, vectors)
        for unit, vector, r_unit, found in zip(units, vectors, r_units, nearest, strict=True):
            seen = {key.id for key, _ in found}
            found = found + [(k, 0.0) for k in exact.get(unit.casefold(), []) if k.id not in seen]
            if not found:
                continue
            keys = [key for key, _ in found]
            matrix = np.asarray([key.vector for key in keys], np.float32)
            cos = centred_scores(vector, matrix, mean)
            r_keys = (
                self.ordinariness.of_keys([key.id for key in keys], matrix, mean)
                if weight
                else np.zeros(len(keys))
            )
            scores = csls(cos, float(r_unit), r_keys, weight)
            if owner_vector is not None and unit.startswith(f"{owner}'s "):
                # The user's name must not carry the match: the words after it must.
                by_name = centred_scores(owner_vector, matrix, mean)
                scores = np.where(cos - by_name >= POSSESSIVE_MARGIN, scores, -1.0)
            accepted = accept(list(zip(keys, scores.tolist(), strict=True)), self.settings)
            hits += [Hit(unit, key, score) for key, score in accepted]
        return hits

    def named_exactly(
        self, user: str, units: list[str], vectors: np.ndarray
    ) -> dict[str, list[EmbeddingKey]]:
        """Folded unit -> the name keys whose text it is, found through the store's
        name lookup: an approximate vector index may miss an exact name among many
        look-alikes, this never does. They are scored like any other candidate; a
        key's vector is its unit's when the texts are the same."""
        wanted = {unit.casefold() for unit in units}
        pairs = [
            (node.id, text)
            for node in self.store.find_nodes_named(user, units)
            for text in node_key_texts(node)
            if text.casefold() in wanted
        ]
        if not pairs:
            return {}
        embedded = dict(zip(units, vectors, strict=True))
        other = sorted({text for _, text in pairs} - embedded.keys())
        if other:
            embedded |= dict(zip(other, self.embedder.embed_batch(other), strict=True))
        exact: dict[str, list[EmbeddingKey]] = {}
        for ref, text in pairs:
            key = EmbeddingKey.model_construct(
                id=node_key_id(ref, text), text=text, ref=ref, kind=NODE_KEY, vector=embedded[text]
            )
            exact.setdefault(text.casefold(), []).append(key)
        return exact

    # --- the whole read path -------------------------------------------------------
    def recall(self, user: str, message: str, now: datetime | None = None) -> RecallResult:
        return self.trace(user, message, now).result

    def why_not(self, user: str, message: str, name: str, now: datetime | None = None) -> str:
        """Which step kept the entity called ``name`` out of the block for ``message``."""
        found = self.store.find_nodes(user, name) or self.store.get_nodes(user, [name])
        if not found:
            return f"nothing in memory is called {name!r}"
        node = found[0]

        def no_cue() -> str:
            keys = explain.keys_of(self.store.list_keys(user, with_vectors=True), node.id)
            units = self.units(message) or [message]
            vectors = self.embedder.embed_batch([*units, message])
            return explain.best_cue(keys, units, vectors, self.settings)

        return explain.why_not(self.trace(user, message, now), node, self.settings, no_cue)

    def _beside(self, user: str, looked: object, work: Callable[[], T]) -> Future[T]:
        """``work`` started on a thread of ``BESIDE``, sharing the recall's look at the
        owner's state (``Store.reading``): one round trip to Neo4j, not one a thread,
        and the recall's context (a request's store deadline)."""

        def joined() -> T:
            with self.store.reading(user, looked):
                return work()

        return BESIDE.submit(contextvars.copy_context().run, joined)

    def _reached(
        self, user: str, message: str, now: datetime, trace: Trace,
        meant: Future[list[tuple[EmbeddingKey, float]]],
        worded: Future[list[tuple[EmbeddingKey, list[str]]]],
    ) -> list[Edge]:  # fmt: skip
        """The current claims the message reached by their own cue (``trace.cues``);
        the history it asks about (claims no longer current that its cue reached) goes
        to ``trace.past``, to be shown as past and never spread from."""
        cues = trace.cues = fused(meant.result(), worded.result())
        found = self.store.get_edges(user, list(cues)) if cues else []
        trace.past = past_claims(
            found, cues, now, self.rule, self.settings, message,
            lambda ids: self.store.get_nodes(user, ids),
        )  # fmt: skip
        return current([edge for edge in found if is_live(edge)], now, self.rule)

    def trace(self, user: str, message: str, now: datetime | None = None) -> Trace:
        # One look at the owner's state for all of a recall's reads: a round trip
        # each to Neo4j was a tenth of a recall.
        with self.store.reading(user) as looked:
            return self._trace(user, message, now, looked)

    def _trace(self, user: str, message: str, now: datetime | None, looked: object) -> Trace:
        """The steps of one recall: claim cues started beside, seeds, the two-hop pull,
        relation anchors, spread and lift, firing, the block."""
        now = now or utcnow()
        trace = Trace(RecallResult(message=message))
        # The model needs nothing from the store: it embeds the message while the
        # owner's state is read (a round trip to Neo4j). Submitted before the search
        # that waits on it, so that search never waits on a queued task.
        whole = BESIDE.submit(self.embedder.embed, message) if self.settings.claim_cues else None
        trace.self_id = self.store.get_self(user)  # the recall's look at the owner
        owner = None
        if self.settings.use_possessives and trace.self_id:
            found = self.store.get_nodes(user, [trace.self_id])
            owner = found[0].name if found else None
        # Started once the owner was looked at: the threads share that look.
        cues_beside = self._cues_beside(user, message, looked, whole) if whole else None
        seeds = self._seeded(user, message, owner, trace)
        cued = self._reached(user, message, now, trace, *cues_beside) if cues_beside else []
        seed_nodes = dict(seeds.nodes)
        if seeds.relations and not self.settings.relation_needs_anchor:
            # The baseline: a relation hit seeds both ends of every edge carrying it.
            for edge in current(
                self.store.edges_with_relation(user, seeds.relations), now, self.rule
            ):
                for end in (edge.source, edge.target):
                    seed_nodes[end] = max(seed_nodes.get(end, 0.0), 1.0)
        if not seed_nodes and not cued and not trace.past:
            return trace
        blocked = frozenset([trace.self_id] if self.settings.block_self and trace.self_id else [])
        edges = self._pulled(user, seed_nodes, blocked, now)
        if seeds.relations and self.settings.relation_needs_anchor:
            edges = self._anchored(user, message, seeds, edges, seed_nodes, trace.self_id, now)
        self._spread(seed_nodes, edges, cued, blocked, trace)
        shown = [*cued, *trace.past.values()]  # claims the block may show for their own cue
        fired = self._fired(user, shown, blocked, trace)
        self._rendered(message, now, edges, shown, fired, trace)
        return trace

    def _cues_beside(
        self, user: str, message: str, looked: object, whole: Future[np.ndarray]
    ) -> tuple[Future[list[tuple[EmbeddingKey, float]]], Future[list]]:
        """The claim cues' two searches started on threads beside the seeding: by
        meaning (``whole``, the message's vector to come), and by words."""
        store, settings = self.store, self.settings
        worded = self._beside(user, looked, lambda: claims_worded(store, user, message, settings))
        meant = self._beside(
            user, looked, lambda: claims_meant(store, user, whole.result(), message, settings)
        )
        return meant, worded

    def _seeded(self, user: str, message: str, owner: str | None, trace: Trace) -> Seeds:
        """The nodes and relations the message's words name (``trace.seeds``);
        ``owner`` is the user's own name, for "Trevor's boss"."""
        seeds = trace.seeds = collect(
            self.match(user, self.units(message, owner), owner), self.settings
        )
        trace.result.seeds = [
            {"unit": h.unit, "key": h.key.text, "kind": h.key.kind, "ref": h.key.ref,
             "score": round(h.score, 4)}
            for h in seeds.hits
        ]  # fmt: skip
        return seeds

    def _pulled(
        self, user: str, seed_nodes: dict[str, float], blocked: frozenset[str], now: datetime
    ) -> list[Edge]:
        """The current edges up to two hops from the seeds, not through the user's own
        node. Edges only: most nodes two hops out can never fire, so they are fetched
        after spreading, and only those that still might."""
        if not seed_nodes:
            return []
        graph = self.store.subgraph(
            user, list(seed_nodes), hops=self.settings.hops, live_only=True,
            stop_at=list(blocked), with_nodes=False,
        )  # fmt: skip
        return current(graph.edges, now, self.rule)

    def _anchored(
        self, user: str, message: str, seeds: Seeds, edges: list[Edge],
        seed_nodes: dict[str, float], self_id: str | None, now: datetime,
    ) -> list[Edge]:  # fmt: skip
        """Two cues: a relation word counts only on an edge at a node the message
        already named, and then lights the other end (in ``seed_nodes``). "My" names
        the user: "my sister" is whoever the user's HAS_SISTER claim points at, so the
        user's edges of those relations join ``edges`` (returned)."""
        anchors = set(seeds.nodes)
        if self_id and FIRST_PERSON.search(message):
            anchors.add(self_id)
            known = {edge.id for edge in edges}
            related = self.store.edges_with_relation(user, list(seeds.relations))
            mine = [edge for edge in current(related, now, self.rule)
                    if self_id in (edge.source, edge.target) and edge.id not in known]  # fmt: skip
            edges = edges + mine
        for edge in edges:
            score = seeds.relations.get(edge.relation)
            if score is None:
                continue
            for end, other in ((edge.source, edge.target), (edge.target, edge.source)):
                if end in anchors and other != self_id:
                    value = seed_activation(score, self.settings)
                    seed_nodes[other] = max(seed_nodes.get(other, 0.0), value)
        return edges

    def _spread(
        self, seed_nodes: dict[str, float], edges: list[Edge], cued: list[Edge],
        blocked: frozenset[str], trace: Trace,
    ) -> None:  # fmt: skip
        """Activation spread from the seeds (``trace.state``); a claim the message
        reached lights its ends as much as it was reached. They do not spread: the
        claim itself is what was asked about."""
        settings, cues = self.settings, trace.cues
        state = trace.state = act.spread(
            seed_nodes, edges, settings.hops, settings.spread_factor, blocked
        )
        for edge in sorted(cued, key=lambda e: cues[e.id].score):
            for end in (edge.source, edge.target):
                if act.lift(state, end, cues[edge.id].score):
                    trace.lifted[end] = edge.id

    def _fired(
        self, user: str, shown: list[Edge], blocked: frozenset[str], trace: Trace
    ) -> list[act.Activation]:
        """The nodes that fire, read with every node the block may name (``trace.nodes``),
        the ends of ``shown`` (claims shown for their own cue) among them."""
        settings, state, self_id = self.settings, trace.state, trace.self_id
        floor = settings.fire_threshold - settings.co_episode_bonus
        hopeful = [node_id for node_id, a in state.items() if a.score >= floor]
        hopeful += [self_id] if self_id else []  # claims to the user are shown beside fired nodes
        hopeful += [end for edge in shown for end in (edge.source, edge.target)]
        nodes = trace.nodes = {n.id: n for n in self.store.get_nodes(user, hopeful)}
        act.co_episode_bonus(
            state,
            {node_id: node.conversations for node_id, node in nodes.items()},
            settings.fire_threshold,
            settings.co_episode_bonus,
            exempt=blocked,
        )
        return act.select_firing(
            {k: v for k, v in state.items() if k in nodes},
            settings.fire_threshold,
            settings.max_fired,
            settings.forward_share,
        )

    def _rendered(
        self, message: str, now: datetime, edges: list[Edge], shown: list[Edge],
        fired: list[act.Activation], trace: Trace,
    ) -> None:  # fmt: skip
        """The block within its budget, and what explains it, into ``trace.result``."""
        settings, result, self_id = self.settings, trace.result, trace.self_id
        known = {edge.id for edge in edges}
        edges = edges + [edge for edge in shown if edge.id not in known]
        scores = (
            edge_scores(edges, trace.state, trace.cues, self_id, settings, window(message, now))
            if settings.claim_cues
            else None
        )
        trace.edges, trace.scores = edges, scores
        past = {edge_id: past_label(edge, now, self.rule) for edge_id, edge in trace.past.items()}
        block = build_block(fired, trace.nodes, edges, settings, self_id, scores, past)
        result.fired = [explain.fired(a, trace) for a in fired]
        result.memory, result.context, result.text = block.memory, block.context, block.text
        result.used_edges = block.used_edges
        result.shown = explain.shown(block.used_edges, trace)
