"""Embedding keys: every node's name and aliases, and every distinct relation label
as a phrase. Kept in step with the graph by :func:`sync_keys`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pegasus.embed import Embedder
from pegasus.interchange import Graph
from pegasus.model import EmbeddingKey, Node
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


def expected_keys(
    nodes: Iterable[Node], relations: Iterable[str]
) -> dict[str, tuple[str, str, str]]:
    """key id -> (text, ref, kind) for a set of nodes and relation labels."""
    keys: dict[str, tuple[str, str, str]] = {}
    for node in nodes:
        for text in node_key_texts(node):
            keys[node_key_id(node.id, text)] = (text, node.id, "node")
    for label in relations:
        keys[relation_key_id(label)] = (relation_phrase(label), label, "relation")
    return keys


def missing_keys(
    store: Store, user: str, embedder: Embedder, graph: Graph
) -> tuple[list[EmbeddingKey], list[str]]:
    """What the stored keys lack for ``graph`` (embedded here) and which stored keys
    name nothing in it. Texts already embedded are never embedded again."""
    wanted = expected_keys(graph.nodes, {edge.relation for edge in graph.edges})
    have = {key.id for key in store.list_keys(user)}
    missing = [key_id for key_id in wanted if key_id not in have]
    vectors = embedder.embed_batch([wanted[key_id][0] for key_id in missing]) if missing else []
    keys = [
        EmbeddingKey(id=key_id, text=wanted[key_id][0], ref=wanted[key_id][1],
                     kind=wanted[key_id][2], vector=vector.tolist())
        for key_id, vector in zip(missing, vectors, strict=True)
    ]  # fmt: skip
    return keys, [key_id for key_id in have if key_id not in wanted]


def sync_keys(store: Store, user: str, embedder: Embedder) -> tuple[int, int]:
    """Make the stored keys match the graph: embed what is missing, drop what is
    stale, in one write. Returns (added, removed)."""
    added, stale = missing_keys(store, user, embedder, store.export(user))
    store.apply(user, Changes(keys=added, delete_keys=stale))
    return len(added), len(stale)


def key_changes(
    before: Sequence[Node | None], after: Sequence[Node], relations: Iterable[str]
) -> list[EmbeddingKey]:
    """The keys a write adds (vectors still empty): names and aliases each node
    gained, and the given relation labels. Writes never remove a name, so nothing
    is deleted here; deleting a node drops its keys in the store."""
    old = expected_keys([node for node in before if node is not None], [])
    new = expected_keys(after, relations)
    return [
        EmbeddingKey(id=key_id, text=text, ref=ref, kind=kind, vector=[])
        for key_id, (text, ref, kind) in new.items()
        if key_id not in old or kind == "relation"
    ]
