"""The data model: nodes (entities), edges (claims, the memories themselves) and
conversation records. Pure data and validation; nothing here touches a store."""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Self

import pydantic
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from pegasus.errors import ValidationError

DEFAULT_USER = "default"
MAX_STRENGTH = 100.0

# Uppercase, verb first, 1 to 4 words joined by "_" (e.g. HAS_BOSS). The same
# check guards the one piece of text ever interpolated into Cypher.
RELATION_PATTERN = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){0,3}$")


class Kind(StrEnum):
    PERSON = "PERSON"
    ORG = "ORG"
    PLACE = "PLACE"
    EVENT = "EVENT"
    THING = "THING"
    TOPIC = "TOPIC"
    PREFERENCE = "PREFERENCE"
    OTHER = "OTHER"


class Stability(StrEnum):
    IMMUTABLE = "immutable"
    STABLE = "stable"
    MUTABLE = "mutable"
    TIME_BOUND = "time_bound"
    EPHEMERAL = "ephemeral"


TEMPORARY = frozenset({Stability.TIME_BOUND, Stability.EPHEMERAL})


class Cardinality(StrEnum):
    ONE_TO_ONE = "one_to_one"
    ONE_TO_MANY = "one_to_many"


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime | None) -> datetime | None:
    """Naive timestamps are taken as UTC so that every comparison is well defined."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC) if value is not None else None


# Control characters (category Cc) other than tab and newline.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# Halves of a UTF-16 pair with no other half (JSON can carry them): not text, and no
# store can encode them.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def no_lone_surrogates(value: str) -> str:
    """``value`` if it is text: a request field or a message with a lone surrogate
    is refused (a transcript's words have them replaced, see :func:`clean_text`)."""
    found = LONE_SURROGATE.search(value)
    if found:
        raise ValidationError(f"not text: a lone surrogate (U+{ord(found.group()):04X}) at "
                              f"character {found.start() + 1}")  # fmt: skip
    return value


def clean_text(value: str) -> str:
    # NFC keeps visually equal names equal; stray control characters never belong in a name.
    text = LONE_SURROGATE.sub("\ufffd", value)
    return CONTROL.sub("", unicodedata.normalize("NFC", text)).strip()


# Invisible marks that make one visible name two: zero-width space, word joiner, byte
# order mark, direction marks, embeddings and isolates. (The zero-width joiner and
# non-joiner stay: some scripts and emoji need them.)
INVISIBLE = re.compile("[\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def clean_name(value: str) -> str:
    """A name as stored: compatibility forms folded (full-width 'Ｊｏｓｈ' is 'Josh'),
    invisible marks removed, then as :func:`clean_text`."""
    return clean_text(INVISIBLE.sub("", unicodedata.normalize("NFKC", value)))


def name_key(name: str) -> str:
    """What two names must share to be the same name: case and spacing aside."""
    return " ".join(clean_name(name).casefold().split())


def _non_empty(value: str) -> str:
    value = clean_text(value)
    if not value:
        raise ValueError("must not be empty")
    return value


def check_relation(label: str) -> str:
    """Return the label if it is a valid relation label, else raise ValidationError."""
    if not isinstance(label, str) or not RELATION_PATTERN.fullmatch(label):
        raise ValidationError(
            f"relation {label!r} must be 1 to 4 upper-case words joined by '_' "
            "(for example HAS_BOSS)"
        )
    return label


def _flat_properties(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("must be an object of string values")
    flat: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError("property names must be non-empty strings")
        if isinstance(item, dict | list | tuple | set):
            raise ValueError(f"property {key!r} must be a plain value, not a nested structure")
        if item is None:
            continue
        flat[clean_text(key)] = LONE_SURROGATE.sub(
            "\ufffd", item if isinstance(item, str) else str(item)
        )
    return flat


def _unique_texts(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        text = clean_text(value)
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


# Names and ids are indexed (Neo4j refuses index entries of a few kB, SQLite does not):
# one limit on both stores, checked before anything is written.
MAX_NAME_CHARS = 200
MAX_ID_CHARS = 400


def _at_most(limit: int) -> AfterValidator:
    def check(value: str) -> str:
        if len(value) > limit:
            raise ValueError(f"at most {limit} characters, not {len(value):,}")
        return value

    return AfterValidator(check)


Text = Annotated[str, AfterValidator(_non_empty)]


def _name(value: str) -> str:
    return _non_empty(clean_name(value))


Name = Annotated[str, AfterValidator(_name), _at_most(MAX_NAME_CHARS)]
Id = Annotated[str, AfterValidator(_non_empty), _at_most(MAX_ID_CHARS)]
Properties = Annotated[dict[str, str], Field(default_factory=dict)]
Score = Annotated[float, Field(ge=0.0, le=1.0)]
Strength = Annotated[float, Field(ge=0.0, le=MAX_STRENGTH)]


def describe(where: str, exc: pydantic.ValidationError) -> str:
    """pydantic's first problem as one line: ``<where> field <loc>: <why>``."""
    first = exc.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{where}{' field ' + loc if loc else ''}: {message}"


def _invalid(model: type[BaseModel], exc: pydantic.ValidationError) -> ValidationError:
    message = describe(model.__name__, exc)
    if (more := exc.error_count() - 1) > 0:
        message += f" (and {more} more {'problem' if more == 1 else 'problems'})"
    return ValidationError(message)


@contextmanager
def _translated(model: type[BaseModel]) -> Iterator[None]:
    try:
        yield
    except pydantic.ValidationError as exc:
        raise _invalid(model, exc) from exc


class _Record(BaseModel):
    """Base of the records: every way of building or validating one raises
    :class:`pegasus.ValidationError` (pydantic's error is its ``__cause__``);
    ``model_construct`` stays unchecked, for data a store already checked."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False)

    def __init__(self, /, **data: Any) -> None:
        with _translated(type(self)):
            self.__pydantic_validator__.validate_python(data, self_instance=self)

    # Marked as pydantic's own __init__ so that model_validate and nested fields keep
    # validating in pydantic-core instead of calling back into Python.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        with _translated(cls):
            return super().model_validate(obj, **options)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Self:
        with _translated(cls):
            return super().model_validate_json(json_data, **options)

    @classmethod
    def model_validate_strings(cls, obj: Any, **options: Any) -> Self:
        with _translated(cls):
            return super().model_validate_strings(obj, **options)

    def __setattr__(self, name: str, value: Any) -> None:
        with _translated(type(self)):  # validate_assignment
            super().__setattr__(name, value)

    def evolve(self, **changes: Any) -> Self:
        """A validated copy with ``changes`` applied (``model_copy`` skips validation)."""
        return self.model_validate({**self.model_dump(), **changes})

    @field_validator("*", mode="after")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        return aware(value) if isinstance(value, datetime) else value


class Node(_Record):
    """An entity (person, place, thing...). Memories attach to it; it never decays."""

    id: Id
    name: Name
    kind: Kind
    aliases: list[str] = Field(default_factory=list)
    properties: Properties
    confidence: Score = 1.0
    conversations: list[str] = Field(default_factory=list)
    provisional: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in Kind.__members__:
            raise ValueError(f"kind {value!r} is not one of {', '.join(Kind)}")
        return value

    @field_validator("properties", mode="before")
    @classmethod
    def _props(cls, value: Any) -> dict[str, str]:
        return _flat_properties(value)

    @field_validator("conversations", mode="after")
    @classmethod
    def _dedupe(cls, value: list[str]) -> list[str]:
        return _unique_texts(value)

    @field_validator("aliases", mode="after")
    @classmethod
    def _aliases(cls, value: list[str]) -> list[str]:
        value = _unique_texts([clean_name(alias) for alias in value])
        for alias in value:
            if len(alias) > MAX_NAME_CHARS:
                raise ValueError(f"alias {alias[:30]!r}...: at most {MAX_NAME_CHARS} characters")
        return value

    @model_validator(mode="after")
    def _alias_is_not_name(self) -> Node:
        name = self.name.casefold()
        if any(alias.casefold() == name for alias in self.aliases):
            object.__setattr__(self, "aliases", [a for a in self.aliases if a.casefold() != name])
        return self

    @property
    def names(self) -> list[str]:
        """The name first, then every alias."""
        return [self.name, *self.aliases]


class Edge(_Record):
    """A claim between two nodes, carrying the user's own words: the memory itself."""

    id: Id
    source: Id
    target: Id
    relation: str
    strength: Strength = MAX_STRENGTH
    strength0: Strength = MAX_STRENGTH
    touched_at: datetime = Field(default_factory=utcnow)
    confidence: Score = 1.0
    stability: Stability = Stability.STABLE
    cardinality: Cardinality = Cardinality.ONE_TO_MANY
    expires_at: datetime | None = None
    snippet: Text
    evidence: str = ""
    properties: Properties
    conversations: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    dormant: bool = False
    expired: bool = False
    created_at: datetime = Field(default_factory=utcnow)

    @field_validator("relation", mode="after")
    @classmethod
    def _relation(cls, value: str) -> str:
        return check_relation(value)

    @field_validator("properties", mode="before")
    @classmethod
    def _props(cls, value: Any) -> dict[str, str]:
        return _flat_properties(value)

    @field_validator("conversations", mode="after")
    @classmethod
    def _dedupe(cls, value: list[str]) -> list[str]:
        return _unique_texts(value)

    @model_validator(mode="after")
    def _rules(self) -> Edge:
        if self.source == self.target:
            raise ValueError(f"a relation cannot link {self.source!r} to itself")
        if self.expires_at is not None and self.stability not in TEMPORARY:
            raise ValueError(
                f"expires_at is only allowed on time_bound or ephemeral relations, "
                f"not {self.stability.value}"
            )
        return self

    @property
    def live(self) -> bool:
        """Shown in recall: not superseded, not dormant, not expired."""
        return self.superseded_by is None and not self.dormant and not self.expired


class Usage(BaseModel):
    """What the model cost: completions asked for, tokens as the endpoint counted
    them (``usage``; 0 where it reports none), and seconds waited."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return self._each(other, operator.add)

    def __sub__(self, other: Usage) -> Usage:
        return self._each(other, operator.sub)

    def _each(self, other: Usage, op: Callable[[Any, Any], Any]) -> Usage:
        return Usage(**{key: op(getattr(self, key), getattr(other, key))
                        for key in Usage.model_fields})  # fmt: skip

    def line(self) -> str:
        return (f"{self.calls} model calls, {self.prompt_tokens:,} prompt and "
                f"{self.completion_tokens:,} completion tokens, {self.seconds:.1f} s")  # fmt: skip


class Conversation(_Record):
    """What Pegasus keeps of a conversation: when, what about, and ingestion state."""

    id: Id
    started_at: datetime | None = None
    ended_at: datetime | None = None
    summary: str = ""
    importance: Score = 0.5
    tags: list[str] = Field(default_factory=list)
    # Ingestion state: how many turns are committed, and the hash of that prefix,
    # so a rerun skips them and a grown transcript is ingested for its new turns only.
    turns_ingested: int = Field(default=0, ge=0)
    content_hash: str = ""
    # The extraction under way: the turn it runs to, and every model reply, tool
    # result and review answer so far (JSON lines), so a rerun resumes it.
    pending_until: int = Field(default=0, ge=0)
    journal: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what cleaning dropped or repaired
    flagged_merges: list[str] = Field(default_factory=list)  # merges worth a human look
    # Edges that recall injected since the last close: reinforced once on close.
    used_edges: list[str] = Field(default_factory=list)
    closed_at: datetime | None = None
    # What learning it cost: model calls, tokens as the endpoint counted them, seconds.
    model_calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    model_seconds: float = Field(default=0.0, ge=0)


NODE_KEY, RELATION_KEY, CLAIM_KEY = "node", "relation", "claim"
NAME_KEYS = (NODE_KEY, RELATION_KEY)  # what a word of a message is matched against


class EmbeddingKey(_Record):
    """One searchable text: a node's name or alias, a relation label as a phrase, or
    a claim (its line and snippet: what recall finds by meaning and by words)."""

    id: Text  # "node|<node id>|<name>", "claim|<edge id>": both bounded
    text: Text
    ref: Id  # the node id, the relation label, or the edge id
    kind: str = Field(pattern=r"^(node|relation|claim)$")
    vector: Sequence[float]  # a list, or a read-only numpy row from a store's search


def slug(text: str) -> str:
    """A stable, readable id fragment: 'Nova AI' -> 'nova_ai'."""
    # Accents fold away, letters of other scripts stay: '王伟' keeps its own id.
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return re.sub(r"[\W_]+", "_", folded).strip("_") or "x"


def node_id(kind: Kind | str, name: str) -> str:
    return f"{Kind(kind).value}::{slug(name)}"


def edge_id(source: str, relation: str, target: str) -> str:
    return f"{source}::{relation}::{target}"
