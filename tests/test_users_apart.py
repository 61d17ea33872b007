"""Memory owners never see each other's data, whatever their names look like: every
command run as a hostile or look-alike name sees, counts, changes and exports
nothing of the owner beside it, on both stores."""

from __future__ import annotations

import json
import unicodedata
import uuid

import pytest

from pegasus.errors import ValidationError
from pegasus.memory import Pegasus
from pegasus.stores import Store
from tests.cli_helpers import run_cli
from tests.conftest import SEED_GRAPH, neo4j_uri, wipe

HOSTILE = ["a%", "*", "../b", "' OR 1=1 --", "x`}) DETACH DELETE n //", "Z" * 200,
           "ALICE", "Alice ", "ｊｏｓé"]  # fmt: skip


@pytest.fixture
def alice(store: Store, tmp_path) -> tuple[list[str], Store, str]:
    """The store's URL options and an owner named 'Alice…' holding the sample memory."""
    name = f"Alice-{uuid.uuid4().hex[:6]}"
    url = neo4j_uri() if type(store).__name__ == "Neo4jStore" else None
    if url is None:
        url = f"sqlite:///{tmp_path / 'apart.db'}"
        store.close()
    core = Pegasus(url)
    core.for_user(name).import_file(SEED_GRAPH)
    yield ["--store", url], core.store, name
    for owner in [name, *HOSTILE]:
        wipe(core.store, core.for_user(owner).user)
    core.close()


def _snapshot(store: Store, user: str) -> str:
    graph = store.export(user)
    return json.dumps([sorted(n.model_dump_json() for n in graph.nodes),
                       sorted(e.model_dump_json() for e in graph.edges)])  # fmt: skip


@pytest.mark.parametrize("other", HOSTILE)
def test_no_command_reaches_another_owner(capsys, alice, other: str) -> None:
    options, store, name = alice
    other = other.replace("ALICE", name.upper()).replace("Alice ", name + " ")
    before = _snapshot(store, name)
    run = lambda *args: run_cli(capsys, *options, "--user", other, *args)  # noqa: E731
    stats = run("stats")
    assert stats.code == 0, stats.err
    assert "nodes" in stats.out and "Joshua" not in stats.out
    exported = json.loads(run("export").out)
    if other.strip() != name:  # "Alice-… " with a trailing space is Alice herself
        assert exported["nodes"] == [] and exported["edges"] == []
        assert run("recall", "What did Joshua say about the Nova AI offer?").out.strip() == ""
        shown = run("show", "Joshua")
        assert shown.code == 4 and "no entity named" in shown.err
        assert run("forget", "Joshua", "--yes").code == 4
        assert run("decay").code == 0
    assert _snapshot(store, name) == before


def test_owner_names_are_one_spelling_of_one_name(store: Store) -> None:
    core = Pegasus(store)
    nfd = unicodedata.normalize("NFD", "José")
    assert core.for_user(nfd).user == core.for_user("José").user == "José"
    assert core.for_user("Alice").user != core.for_user("alice").user


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "tab\there", "x" * 201, "\ud800"])
def test_unusable_owner_names_are_refused(capsys, tmp_path, bad: str) -> None:
    with pytest.raises(ValidationError, match="user"):
        Pegasus(f"sqlite:///{tmp_path / 'm.db'}").for_user(bad)
    if "\x00" not in bad and "\ud800" not in bad:  # what argv can carry
        result = run_cli(capsys, "--store", f"sqlite:///{tmp_path / 'm.db'}", "--user", bad,
                         "stats")  # fmt: skip
        assert result.code == 2 and "user" in result.err
