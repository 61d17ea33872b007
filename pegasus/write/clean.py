"""Cleaning: the deterministic pass between what the model proposed and merge.

Every rule repairs what it can and drops what it cannot, with a note saying which
item and why (SPEC 3.2). Pure functions: the caller says which names the memory
already knows."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pegasus.model import (
    RELATION_PATTERN,
    TEMPORARY,
    Cardinality,
    Kind,
    Stability,
    aware,
    name_key,
)
from pegasus.prompts.extract import AddEntity, AddRelation

# How the user may appear before the memory knows their name.
PLACEHOLDERS = frozenset(
    {"user", "the user", "me", "i", "myself", "self", "the speaker", "speaker", "narrator"}
)
PROVISIONAL_CONFIDENCE = 0.3
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
LABEL_JUNK = re.compile(r"[^A-Za-z0-9 _\-.]")


def is_placeholder(name: str) -> bool:
    return name.strip().casefold() in PLACEHOLDERS


@dataclass
class Entity:
    name: str
    kind: Kind
    aliases: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    confidence: float = 0.8
    provisional: bool = False
    same_as: str | None = None

    @property
    def names(self) -> list[str]:
        return [self.name, *self.aliases]


@dataclass
class Relation:
    source: str
    relation: str
    target: str
    snippet: str
    stability: Stability = Stability.STABLE
    cardinality: Cardinality = Cardinality.ONE_TO_MANY
    confidence: float = 0.8
    evidence: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    expires_at: datetime | None = None


@dataclass
class Batch:
    """A checked batch: entities (one per name and kind), relations, and notes."""

    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def entity_named(self, name: str) -> Entity | None:
        folded = name_key(name)
        for entity in self.entities:
            if any(name_key(n) == folded for n in entity.names):
                return entity
        return None


def relation_label(raw: str) -> str | None:
    """'works at', 'worksAt', 'Works-At' -> 'WORKS_AT'; None when no repair makes it valid.
    Only spacing and case are repaired: a label with other characters (brackets,
    quotes, slashes) is not a relation someone said, and is dropped whole."""
    if LABEL_JUNK.search(raw.strip()):
        return None
    words = re.split(r"[^A-Za-z0-9]+", CAMEL.sub("_", raw.strip()))
    label = "_".join(w.upper() for w in words if w)
    return label if RELATION_PATTERN.fullmatch(label) else None


def fix_name_case(name: str, kind: Kind) -> str:
    """People and places written all in lower case get capitals ('joshua' -> 'Joshua')."""
    if kind in (Kind.PERSON, Kind.PLACE) and name == name.lower() and name != name.upper():
        return " ".join(word[:1].upper() + word[1:] for word in name.split(" "))
    return name


def parse_expiry(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        return aware(datetime.fromisoformat(raw.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


def clean_entity(args: AddEntity) -> tuple[Entity, list[str]]:
    kind = Kind(args.kind)
    name = fix_name_case(args.name, kind)
    notes = [f"entity {args.name!r}: name written as {name!r}"] if name != args.name else []
    aliases = [a for a in dict.fromkeys(args.aliases) if a and name_key(a) != name_key(name)]
    entity = Entity(
        name, kind, aliases, dict(args.properties), args.confidence, False, args.same_as
    )
    return entity, notes


def clean_relation(args: AddRelation) -> tuple[Relation | None, list[str]]:
    """One relation on its own: labels, enums, expiry, self-links. Ends are checked
    against the whole batch by :func:`clean_batch`."""
    what = f"relation {args.source} -{args.relation}-> {args.target}"
    notes: list[str] = []
    label = relation_label(args.relation)
    if label is None:
        return None, [f"{what}: dropped, label is not 1 to 4 words (e.g. WORKS_AT)"]
    if name_key(args.source) == name_key(args.target) or (
        is_placeholder(args.source) and is_placeholder(args.target)
    ):
        return None, [f"{what}: dropped, an entity cannot relate to itself"]
    try:
        stability = Stability(args.stability.strip().lower())
    except ValueError:
        stability = Stability.STABLE
        notes.append(f"{what}: unknown stability {args.stability!r}, taken as stable")
    try:
        cardinality = Cardinality(args.cardinality.strip().lower())
    except ValueError:
        cardinality = Cardinality.ONE_TO_MANY
        notes.append(f"{what}: unknown cardinality {args.cardinality!r}, taken as one_to_many")
    expires = parse_expiry(args.expires_at)
    if args.expires_at and expires is None:
        notes.append(f"{what}: expiry {args.expires_at!r} is not a date, removed")
    if expires is not None and stability not in TEMPORARY:
        notes.append(f"{what}: expiry removed from a {stability.value} relation")
        expires = None
    relation = Relation(
        source=args.source,
        relation=label,
        target=args.target,
        snippet=args.snippet,
        stability=stability,
        cardinality=cardinality,
        confidence=args.confidence,
        evidence=args.evidence,
        properties=dict(args.properties),
        expires_at=expires.astimezone(UTC) if expires else None,
    )
    return relation, notes


def _absorb(into: Entity, other: Entity) -> None:
    """A second add_entity with the same name and kind adds to the first."""
    known = {name_key(n) for n in into.names}
    into.aliases += [a for a in other.aliases if name_key(a) not in known]
    into.properties.update(other.properties)
    into.confidence = max(into.confidence, other.confidence)
    into.same_as = into.same_as or other.same_as


def clean_batch(
    entities: Sequence[AddEntity],
    relations: Sequence[AddRelation],
    known: Callable[[str], bool],
) -> Batch:
    """The whole batch: entities combined by name and kind, relations checked, and a
    relation with one end nobody knows given a provisional node for that end.
    ``known(name)`` says whether the memory already holds an entity by that name."""
    batch = Batch()
    for args in entities:
        entity, notes = clean_entity(args)
        batch.notes += notes
        same = next(
            (
                e
                for e in batch.entities
                if e.kind == entity.kind and name_key(e.name) == name_key(entity.name)
            ),
            None,
        )
        if same:
            _absorb(same, entity)
        else:
            batch.entities.append(entity)

    def resolvable(name: str) -> bool:
        return is_placeholder(name) or batch.entity_named(name) is not None or known(name)

    for args in relations:
        relation, notes = clean_relation(args)
        batch.notes += notes
        if relation is None:
            continue
        ends = [(relation.source, resolvable(relation.source)),
                (relation.target, resolvable(relation.target))]  # fmt: skip
        unknown = [name for name, ok in ends if not ok]
        what = f"relation {relation.source} -{relation.relation}-> {relation.target}"
        if len(unknown) == 2:
            batch.notes.append(f"{what}: dropped, neither end is a known entity")
            continue
        if unknown:
            batch.entities.append(
                Entity(unknown[0], Kind.OTHER, confidence=PROVISIONAL_CONFIDENCE, provisional=True)
            )
            batch.notes.append(f"{what}: {unknown[0]!r} was never described, kept as provisional")
        batch.relations.append(relation)
    return batch
