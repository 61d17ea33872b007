"""Many writers on one embedded file at once (two ingests, an import, a decay pass,
a forget and recalls that note what they used), each with a connection of its own as
separate processes would have: no "database is locked" reaches anyone, and each
owner's memory ends as the same operations run one after another leave it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Pegasus
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import RECORDING

NOW = datetime(2026, 9, 20, 9, 0, tzinfo=UTC)
OWNERS = ("ingest-1", "ingest-2", "import", "decay", "forget", "recall")


def prepare(url: str) -> None:
    with Pegasus(url) as core:
        for owner in ("decay", "forget", "recall"):
            core.for_user(owner).import_file(SEED_GRAPH)


def operations(url: str, base_url: str) -> list[Callable[[], object]]:
    """Each operation opens its own core: its own connection to the file."""

    def on(owner: str, work: Callable) -> Callable[[], object]:
        def run() -> object:
            with Pegasus(url) as core:
                return work(core.for_user(owner))

        return run

    llm = LLM(LLMConfig(base_url, "scripted-model", timeout=30.0))
    return [
        on("ingest-1", lambda m: m.ingest(SEED_CONVERSATION, llm=llm, now=NOW)),
        on("ingest-2", lambda m: m.ingest(SEED_CONVERSATION, llm=llm, now=NOW)),
        on("import", lambda m: m.import_file(SEED_GRAPH)),
        on("decay", lambda m: m.decay(NOW)),
        on("forget", lambda m: m.forget(m.plan_forget(node="Joshua"))),
        *[on("recall", lambda m, i=i: m.recall(f"How is Joshua doing {i}?", "c", NOW))
          for i in range(6)],
    ]  # fmt: skip


def memories(url: str) -> dict[str, tuple]:
    with Pegasus(url) as core:
        out = {}
        for owner in OWNERS:
            graph = core.store.export(owner)
            out[owner] = (
                # An imported node without dates is dated when it is read in.
                sorted(n.model_dump_json(exclude={"created_at", "updated_at"})
                       for n in graph.nodes),
                sorted(e.model_dump_json() for e in graph.edges),
                # Seconds waiting on the model differ from run to run.
                sorted(c.model_copy(update={"used_edges": sorted(c.used_edges),
                                            "model_seconds": 0.0}).model_dump_json()
                       for c in graph.conversations),
                graph.self_id,
                sorted(k.id for k in core.store.list_keys(owner)),
            )  # fmt: skip
        return out


def test_writers_at_once_equal_writers_in_turn(tmp_path: Path, serve) -> None:
    server = serve(by_round(recorded_rounds(RECORDING)))
    together, in_turn = (f"sqlite:///{tmp_path / name}.db" for name in ("together", "in-turn"))
    for url in (together, in_turn):
        prepare(url)

    failures: list[BaseException] = []

    def guarded(operation: Callable[[], object]) -> None:
        try:
            operation()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=guarded, args=(op,))
               for op in operations(together, server.base_url)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    for operation in operations(in_turn, server.base_url):
        operation()
    assert memories(together) == memories(in_turn)
