"""Extraction: the tools the model writes with, their argument models, the prompt."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pegasus.model import MAX_NAME_CHARS, Kind, clean_name, clean_text
from pegasus.prompts import prompt_text


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be text")
    return clean_text(value)


def _name(value: Any) -> str:
    return clean_name(_text(value))


def _flat(value: Any) -> dict[str, str]:
    """Properties as a flat map of text; nested values are kept as JSON text."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ValueError("must be an object of name -> value")
    flat: dict[str, str] = {}
    for key, item in value.items():
        if item is None or not str(key).strip():
            continue
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        flat[clean_text(str(key))] = clean_text(text)
    return flat


class _Args(BaseModel):
    # Models add fields of their own; those are ignored rather than refused.
    model_config = ConfigDict(extra="ignore")


class AddEntity(_Args):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: str
    aliases: list[Annotated[str, Field(max_length=MAX_NAME_CHARS)]] = Field(default_factory=list)
    properties: dict[str, str] = Field(default_factory=dict)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    same_as: str | None = None  # the model's guess at a known entity: only ever a review

    _name = field_validator("name", mode="before")(_name)
    _props = field_validator("properties", mode="before")(_flat)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> str:
        kind = _text(value).upper()
        if kind not in Kind.__members__:
            raise ValueError(f"kind {value!r} is not one of {', '.join(Kind)}")
        return kind

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases(cls, value: Any) -> list[str]:
        if value in (None, ""):
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            raise ValueError("must be a list of names")
        return [clean_name(str(v)) for v in value if str(v).strip()]


class AddRelation(_Args):
    source: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    relation: str = Field(min_length=1)
    target: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    snippet: str = Field(min_length=1)
    stability: str = "stable"
    cardinality: str = "one_to_many"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    evidence: str = ""
    properties: dict[str, str] = Field(default_factory=dict)
    expires_at: str | None = None

    _names = field_validator("source", "target", mode="before")(_name)
    _texts = field_validator(
        "relation", "snippet", "stability", "cardinality", "evidence", mode="before"
    )(_text)  # fmt: skip
    _props = field_validator("properties", mode="before")(_flat)


class Finish(_Args):
    summary: str = ""
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)


ARGUMENTS: dict[str, type[_Args]] = {
    "add_entity": AddEntity,
    "add_relation": AddRelation,
    "finish": Finish,
}

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_SCORE = {"type": "number", "minimum": 0, "maximum": 1}


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool(
        "add_entity",
        "Record an entity (or add aliases and properties to one recorded before).",
        {
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": [k.value for k in Kind]},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "properties": _STRING_MAP,
            "confidence": _SCORE,
            "same_as": {
                "type": "string",
                "description": "A known entity this may be under another name.",
            },
        },
        ["name", "kind"],
    ),
    _tool(
        "add_relation",
        "Record a claim linking two entities, with the user's own words as the snippet.",
        {
            "source": {"type": "string", "description": "Entity name, or User for the user."},
            "relation": {"type": "string", "description": "UPPER_CASE, verb first, 1-4 words."},
            "target": {"type": "string"},
            "stability": {
                "type": "string",
                "enum": ["immutable", "stable", "mutable", "time_bound", "ephemeral"],
            },
            "cardinality": {"type": "string", "enum": ["one_to_one", "one_to_many"]},
            "confidence": _SCORE,
            "snippet": {"type": "string", "description": "The user's verbatim words."},
            "evidence": {"type": "string"},
            "properties": _STRING_MAP,
            "expires_at": {"type": "string", "description": "ISO date; temporary claims only."},
        },
        ["source", "relation", "target", "snippet"],
    ),
    _tool(
        "finish",
        "Call once everything worth keeping is recorded.",
        {
            "summary": {"type": "string"},
            "importance": _SCORE,
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        [],
    ),
]


def system_prompt(json_fallback: bool = False) -> str:
    text = prompt_text("extract")
    return text + "\n\n" + prompt_text("extract_json") if json_fallback else text
