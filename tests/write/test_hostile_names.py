"""Hostile names and labels through import and through the write path, on both
stores: stored as data or refused with a clear message, never executed; spellings of
one visible name end as one entity."""

from __future__ import annotations

import json
import unicodedata

import pytest

from pegasus.errors import ValidationError
from pegasus.memory import Memory
from pegasus.model import MAX_NAME_CHARS, name_key
from tests.write.conftest import FINISH, calls, chat, entity, ingest_steps, relation

HOSTILE = [
    'O\'Brien "The Rock"',
    "`Backtick` Name",
    "x'}) DETACH DELETE n //",
    "Robert'); DROP TABLE nodes;--",
    "a%_*?",
    "עברית name",
    "王伟",
]


def graph_file(tmp_path, names: list[str]) -> str:
    nodes = [{"id": f"PERSON::n{i}", "label": name, "kind": "PERSON"}
             for i, name in enumerate(names)]  # fmt: skip
    edges = [{"id": f"e{i}", "from": "PERSON::n0", "to": f"PERSON::n{i}", "relation": "KNOWS",
              "snippet": f"I know {name}"} for i, name in enumerate(names) if i]  # fmt: skip
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"nodes": nodes, "edges": edges}, ensure_ascii=False))
    return str(path)


def test_hostile_names_import_as_data(memory: Memory, tmp_path) -> None:
    memory.import_file(graph_file(tmp_path, HOSTILE), index=False)
    graph = memory.export()
    assert sorted(n.name for n in graph.nodes) == sorted(HOSTILE)
    assert len(graph.edges) == len(HOSTILE) - 1
    for name in HOSTILE:
        assert [n.name for n in memory.find(name)] == [name]


def test_an_overlong_name_is_refused_whole(memory: Memory, tmp_path) -> None:
    with pytest.raises(ValidationError, match=f"at most {MAX_NAME_CHARS} characters"):
        memory.import_file(graph_file(tmp_path, ["Ann", "x" * 10_000]), index=False)
    assert memory.export().nodes == []


def test_look_alike_spellings_are_one_name() -> None:
    josh = name_key("Josh")
    for other in ["ＪＯＳＨ", "Jo\u200bsh", "\u200fJosh\u200e", " josh ", "Jo\ufeffsh"]:
        assert name_key(other) == josh, other
    assert name_key(unicodedata.normalize("NFD", "José")) == name_key("José")
    assert name_key("Jo\u200dsh") != josh  # a joiner is meaningful in some scripts


def test_hostile_names_through_the_write_path(memory: Memory, serve) -> None:
    steps = [
        calls(
            entity("Josh"), entity("ＪＯＳＨ"), entity("Jo\u200bsh"),
            entity(unicodedata.normalize("NFD", "José")), entity("José"),
            *[entity(name) for name in HOSTILE[:4]],
            entity("y" * 10_000),
            relation("me", "KNOWS", "Josh", "I know Josh"),
            relation("me", "KNOWS", HOSTILE[2], "I know them"),
            relation("me", "WORKS_AT]->() DELETE r //", "Josh", "I work with Josh"),
            FINISH,
        )
    ]  # fmt: skip
    report = ingest_steps(memory, serve, steps, chat("I know Josh and José", *HOSTILE[:4]))
    names = sorted(n.name for n in memory.export().nodes)
    assert names.count("Josh") == 1 and "ＪＯＳＨ" not in names and "Jo\u200bsh" not in names
    assert names.count("José") == 1
    assert set(HOSTILE[:4]) <= set(names)
    assert not any(len(name) > MAX_NAME_CHARS for name in names)
    relations = {e.relation for e in memory.export().edges}
    assert relations == {"KNOWS"}  # the hostile label was dropped, not rewritten
    assert any("label is not" in note for note in report.dropped)
