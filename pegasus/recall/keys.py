"""Embedding keys: every node's name and aliases, every distinct relation label as a
phrase, and every claim as its line and snippet ("Evan visited Rockies: We all
hiked the trails last week"), which recall finds by meaning and by words. Kept in
step with the graph by the write path, forget, import and :func:`sync_keys`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from pegasus.embed import Embedder
from pegasus.interchange import Graph
from pegasus.model import CLAIM_KEY, NODE_KEY, RELATION_KEY, Edge, EmbeddingKey, Node
from pegasus.stores import Changes, Store

PAREN = re.compile(r"^(?P<head>[^()]+?)\s*\((?P<inner>[^()]+)\)\s*$")


def relation_phrase(label: str) -> str:
    """WORKS_AT -> 'works at'."""
    return label.replace("_", " ").lower()


def node_key_texts(node: Node) -> list[str]:
    """Name and aliases; a text like 'Joshua (Trevor's boss at Deloitte)' also keys
    its two parts, so a description in brackets can be matched on its own."""
    texts: list[str] = []
    for text in node.names:
        texts.append(text)
        match = PAREN.match(text)
        if match:
            texts += [match["head"], match["inner"]]
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def node_key_id(node_id: str, text: str) -> str:
    return f"node|{node_id}|{text.casefold()}"


def relation_key_id(label: str) -> str:
    return f"relation|{label}"


def claim_key_id(edge_id: str) -> str:
    return f"claim|{edge_id}"


def claim_text(edge: Edge, names: Mapping[str, str]) -> str:
    """What a claim is searched by: its line in words, then the words it rests on."""
    line = f"{names[edge.source]} {relation_phrase(edge.relation)} {names[edge.target]}"
    return f"{line}: {' '.join(edge.snippet.split())}"


def expected_keys(
    nodes: Iterable[Node], relations: Iterable[str], edges: Iterable[Edge] = ()
) -> dict[str, tuple[str, str, str]]:
    """key id -> (text, ref, kind) for a set of nodes, relation labels and claims
    (a claim's ends must be among ``nodes``)."""
    keys: dict[str, tuple[str, str, str]] = {}
    names: dict[str, str] = {}
    for node in nodes:
        names[node.id] = node.name
        for text in node_key_texts(node):
            keys[node_key_id(node.id, text)] = (text, node.id, NODE_KEY)
    for label in relations:
        keys[relation_key_id(label)] = (relation_phrase(label), label, RELATION_KEY)
    for edge in edges:
        if edge.source in names and edge.target in names:
            keys[claim_key_id(edge.id)] = (claim_text(edge, names), edge.id, CLAIM_KEY)
    return keys


def _missing(store: Store, user: str, graph: Graph) -> tuple[list[str], list[str], dict]:
    """Key ids ``graph`` lacks (new, or a claim whose text changed), stored key ids
    that name nothing in it, and the wanted keys by id."""
    inside = {node.id for node in graph.nodes}
    outside = {end for edge in graph.edges for end in (edge.source, edge.target)} - inside
    nodes = [*graph.nodes, *(store.get_nodes(user, outside) if outside else [])]
    wanted = expected_keys(nodes, {edge.relation for edge in graph.edges}, graph.edges)
    # Nodes outside the graph only name its claims' ends: their own keys are not asked for.
    wanted = {key_id: value for key_id, value in wanted.items()
              if value[2] != NODE_KEY or value[1] in inside}  # fmt: skip
    have = {key.id: key.text for key in store.list_keys(user)}
    # A claim whose snippet was replaced is embedded again.
    missing = [key_id for key_id in wanted if have.get(key_id) != wanted[key_id][0]]
    return missing, [key_id for key_id in have if key_id not in wanted], wanted


def _embedded(
    embedder: Embedder, ids: list[str], wanted: dict, known: Mapping[str, Any] | None = None
) -> list[EmbeddingKey]:
    """The keys ``ids`` with their vectors: taken from ``known`` (text -> vector, of
    this embedder's model) where it has the text, else embedded."""
    known = known or {}
    texts = [wanted[key_id][0] for key_id in ids if wanted[key_id][0] not in known]
    fresh = dict(zip(texts, embedder.embed_batch(texts), strict=True)) if texts else {}
    return [
        EmbeddingKey(id=key_id, text=text, ref=wanted[key_id][1], kind=wanted[key_id][2],
                     vector=np.asarray(known[text] if text in known else fresh[text]).tolist())
        for key_id in ids
        for text in (wanted[key_id][0],)
    ]  # fmt: skip


def missing_keys(
    store: Store,
    user: str,
    embedder: Embedder,
    graph: Graph,
    known: Mapping[str, Any] | None = None,
) -> tuple[list[EmbeddingKey], list[str]]:
    """What the stored keys lack for ``graph`` (embedded here, unless ``known`` holds
    the text's vector) and which stored keys name nothing in it."""
    missing, stale, wanted = _missing(store, user, graph)
    return _embedded(embedder, missing, wanted, known), stale


SYNC_BATCH = 5_000  # keys per write: a reindex of a large memory stays within a
# server's transaction memory (Neo4j's default refuses ~140k keys with vectors at once)


def sync_keys(store: Store, user: str, embedder: Embedder) -> tuple[int, int]:
    """Make the stored keys match the graph: embed what is missing, drop what is
    stale, written in batches (keys are derived from the graph, so a reindex cut
    short leaves nothing wrong, only keys still to add). Returns (added, removed)."""
    missing, stale, wanted = _missing(store, user, store.export(user))
    for start in range(0, max(len(missing), 1), SYNC_BATCH):
        keys = _embedded(embedder, missing[start : start + SYNC_BATCH], wanted)
        store.apply(user, Changes(keys=keys, delete_keys=stale if start == 0 else []))
    return len(missing), len(stale)


def key_changes(
    before: Sequence[Node | None],
    after: Sequence[Node],
    relations: Iterable[str],
    edges: Iterable[Edge] = (),
    ends: Iterable[Node] = (),
) -> list[EmbeddingKey]:
    """The keys a write adds (vectors still empty): names and aliases each node
    gained, the given relation labels, and the written claims (``ends`` names the
    claims' ends that are not among ``after``). Writes never remove a name, so
    nothing is deleted here; deleting a node drops its keys in the store."""
    old = expected_keys([node for node in before if node is not None], [])
    new = expected_keys(after, relations)
    named = {node.id: node for node in ends} | {node.id: node for node in after}
    claims = expected_keys(named.values(), [], edges)
    new |= {key_id: value for key_id, value in claims.items() if value[2] == CLAIM_KEY}
    return [
        EmbeddingKey(id=key_id, text=text, ref=ref, kind=kind, vector=[])
        for key_id, (text, ref, kind) in new.items()
        if key_id not in old or kind != NODE_KEY
    ]
