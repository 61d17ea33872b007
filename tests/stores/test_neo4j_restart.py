"""Neo4j stopped under Pegasus and started again: each call made while it is away
fails with one clear line, nothing is half-written, and the same process carries on
once it is back. The test runs a Neo4j of its own through the project's launcher."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from pegasus.errors import StoreError
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Pegasus
from pegasus.stores.neo4j import Neo4jStore
from pegasus.write.transcript import parse_transcript
from tests.cli_helpers import run_cli
from tests.conftest import SEED_CONVERSATION
from tests.test_serve import free_port
from tests.test_service_faults import NOW, QUESTION, graph_of
from tests.write.conftest import RECORDING, llm_for

LAUNCHER = Path(__file__).resolve().parents[2] / "neo4j-launcher"


class OwnNeo4j:
    """A Neo4j started and stopped by the test, its database kept between starts."""

    def __init__(self, home: Path) -> None:
        self.home, self.bolt, self.http = home, free_port(), free_port()
        self.uri = f"bolt://127.0.0.1:{self.bolt}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        classpath = (LAUNCHER / "target" / "classpath.txt").read_text().strip()
        self.process = subprocess.Popen(
            ["java", "-Xmx512m", "-cp", f"{LAUNCHER / 'target' / 'classes'}:{classpath}",
             "pegasus.launcher.Launcher", str(self.home), str(self.bolt), str(self.http)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                Neo4jStore(self.uri).close()
                return
            except StoreError:
                assert self.process.poll() is None, "the launcher exited"
                time.sleep(1)
        raise AssertionError("the launcher did not answer within 180 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=120)


def built_launcher() -> None:
    """The launcher as scripts/neo4j-up.sh builds it; without Java and Maven this
    test cannot run, and that is a failure, not a skip."""
    if (LAUNCHER / "target" / "classpath.txt").exists() and shutil.which("java"):
        return
    if not (shutil.which("java") and shutil.which("mvn")):
        pytest.fail("this test runs Neo4j itself: it needs Java 17 and Maven", pytrace=False)
    subprocess.run(
        ["mvn", "-B", "-q", "package", "dependency:build-classpath",
         "-Dmdep.outputFile=target/classpath.txt"],
        cwd=LAUNCHER, check=True,
    )  # fmt: skip


@pytest.fixture
def neo4j_server(tmp_path):
    built_launcher()
    server = OwnNeo4j(tmp_path / "neo4j")
    server.start()
    yield server
    server.stop()


def one_line(error: StoreError, uri: str) -> None:
    text = str(error)
    assert "\n" not in text and uri in text, text


@pytest.mark.neo4j
def test_a_neo4j_that_stops_and_starts_again(neo4j_server, tmp_path, monkeypatch, serve, capsys):
    monkeypatch.setenv("PEGASUS_NEO4J_RETRY_SECONDS", "2")  # give up soon while it is away
    transcript = parse_transcript(json.loads(SEED_CONVERSATION.read_text()))
    now = datetime.fromisoformat(NOW)
    rounds = recorded_rounds(RECORDING)
    replay = by_round(rounds)

    def stop_on_the_second_request(body):
        if len(llm.requests) == 2:  # the first batch is written; the second is under way
            neo4j_server.stop()
        return replay(body)

    llm = serve(stop_on_the_second_request)
    with Pegasus(neo4j_server.uri) as core:
        memory = core.for_user("u")
        with pytest.raises(StoreError) as stopped:
            memory.ingest(transcript, now=now, llm=llm_for(llm, timeout=60))
        one_line(stopped.value, neo4j_server.uri)
        with pytest.raises(StoreError) as stopped:
            memory.recall(QUESTION, now=now)
        one_line(stopped.value, neo4j_server.uri)
        with pytest.raises(StoreError) as stopped:
            core.decay(now)
        one_line(stopped.value, neo4j_server.uri)
        result = run_cli(capsys, "--local", "--store", neo4j_server.uri, "stats")
        assert result.code == StoreError.exit_code and len(result.err.strip().splitlines()) == 1

        neo4j_server.start()
        # The same process, nothing restarted: what was written is whole batches of
        # an uninterrupted run's graph, and the ingest resumes from there.
        with Pegasus(f"sqlite:///{tmp_path / 'whole.db'}") as whole:
            whole.for_user("u").ingest(transcript, now=now, llm=llm_for(serve(by_round(rounds))))
            expected = graph_of(whole.store, "u")
        nodes, edges = graph_of(core.store, "u")
        assert nodes <= expected[0] and edges <= expected[1]
        memory.ingest(transcript, now=now, llm=llm_for(serve(by_round(rounds))))
        assert graph_of(core.store, "u") == expected
        assert "PERSON::joshua" in {f.id for f in memory.recall(QUESTION, now=now).fired}
        assert core.decay(now).edges == len(expected[1])
