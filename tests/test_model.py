"""The data model's rules, each with the message a user sees."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pegasus.errors import ValidationError
from pegasus.model import Edge, Node, check_relation, edge_id, node_id, slug


def edge(**changes: object) -> Edge:
    fields: dict[str, object] = {
        "id": "e", "source": "PERSON::a", "target": "ORG::b", "relation": "WORKS_AT",
        "snippet": "I work at B",
    }  # fmt: skip
    fields.update(changes)
    return Edge(**fields)


@pytest.mark.parametrize("label", ["HAS_BOSS", "IS", "WORKS_AT", "LACKS_KNOWLEDGE_OF_X", "OWNS_2"])
def test_good_relation_labels(label: str) -> None:
    assert check_relation(label) == label


@pytest.mark.parametrize(
    "label",
    ["works_at", "Works_At", "HAS BOSS", "A_B_C_D_E", "_X", "X_", "X__Y", "", "2X", "RELÉ",
     "X;DROP", "X`) DETACH DELETE n //"],
)  # fmt: skip
def test_bad_relation_labels(label: str) -> None:
    with pytest.raises(ValidationError, match="upper-case words"):
        check_relation(label)
    with pytest.raises(ValidationError, match="relation"):
        edge(relation=label)


def test_self_relation_is_refused() -> None:
    with pytest.raises(ValidationError, match="itself"):
        edge(target="PERSON::a")


def test_expiry_only_on_temporary_claims() -> None:
    when = datetime(2027, 1, 1, tzinfo=UTC)
    assert edge(stability="time_bound", expires_at=when).expires_at == when
    assert edge(stability="ephemeral", expires_at=when).expires_at == when
    with pytest.raises(ValidationError, match="only allowed on time_bound"):
        edge(stability="mutable", expires_at=when)


@pytest.mark.parametrize(
    ("field", "value"),
    [("strength", 100.5), ("strength", -1), ("strength0", 101), ("confidence", 1.2),
     ("confidence", -0.01), ("snippet", ""), ("snippet", " \n "), ("stability", "sometimes"),
     ("cardinality", "many_to_many")],
)  # fmt: skip
def test_edge_ranges(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        edge(**{field: value})


def test_node_rules() -> None:
    with pytest.raises(ValidationError, match="kind 'ROBOT' is not one of"):
        Node(id="x", name="X", kind="ROBOT")
    with pytest.raises(ValidationError, match="name"):
        Node(id="x", name="  ", kind="PERSON")
    with pytest.raises(ValidationError, match="nested"):
        Node(id="x", name="X", kind="PERSON", properties={"a": {"b": 1}})
    node = Node(id="x", name="Bill", kind="PERSON", aliases=["bill", "Will", "will", " "],
                properties={"age": 41, "gone": None})  # fmt: skip
    assert node.aliases == ["Will"]
    assert node.properties == {"age": "41"}


def test_text_is_normalised() -> None:
    decomposed = "Zoe\u0308"  # e + combining diaeresis
    node = Node(id="x", name=f" {decomposed}\x00 ", kind="PERSON")
    assert node.name == "Zo\u00eb"


def test_naive_times_are_utc() -> None:
    naive = datetime(2026, 1, 1, 12, 0)
    assert edge(touched_at=naive).touched_at == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_ids() -> None:
    assert slug("Nova AI") == "nova_ai"
    assert slug("Zoë Ångström") == "zoe_angstrom"
    assert slug("王伟") == "王伟"
    assert slug("!!!") == "x"
    assert node_id("PERSON", "Joshua") == "PERSON::joshua"
    assert edge_id("PERSON::a", "KNOWS", "PERSON::b") == "PERSON::a::KNOWS::PERSON::b"
