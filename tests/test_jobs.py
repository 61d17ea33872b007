"""No session is lost: jobs the service cannot run now wait on disk with their reason,
are tried again by themselves, and can be listed, retried and dropped, through the
service's API and ``pegasus jobs``; a failed job stays until told otherwise."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from fastapi.testclient import TestClient

from pegasus.client import ingest_job, queue_ingest
from pegasus.jobs import NO_MODEL, IngestQueue, pause_before
from pegasus.llm.scripted import Step, sequence
from pegasus.memory import Pegasus
from pegasus.service import create_app
from tests.cli_helpers import run_cli
from tests.integrations.conftest import wait_for
from tests.write.conftest import FINISH, calls, entity, llm_for, relation

TOLD = "My sister Ana moved to Porto in May."
TRANSCRIPT = {"id": "s1", "turns": [{"role": "user", "content": TOLD},
                                    {"role": "assistant", "content": "Noted."}]}  # fmt: skip
EXTRACTION = [
    calls(entity("Ana"), entity("Porto", "PLACE"), relation("Ana", "LIVES_IN", "Porto", TOLD)),
    calls(FINISH),
]


@pytest.fixture
def core(tmp_path):
    with Pegasus(f"sqlite:///{tmp_path / 'memory.db'}") as core:
        yield core


@pytest.fixture
def no_model(monkeypatch):
    for name in ("PEGASUS_LLM_BASE_URL", "PEGASUS_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def state(client: TestClient, job_id: str) -> dict:
    listed = {job["id"]: job for job in client.get("/jobs").json()}
    return client.get(f"/jobs/{job_id}", params={"user": listed[job_id]["user"]}).json()


def settled(client: TestClient, job_id: str, wanted: str) -> dict:
    assert wait_for(lambda: state(client, job_id)["state"] == wanted, 60), state(client, job_id)
    return state(client, job_id)


def test_without_a_model_a_session_waits_on_disk_and_is_learned_once_one_is_set(
    core, tmp_path, no_model, monkeypatch, serve
) -> None:
    folder = tmp_path / "jobs"
    with TestClient(create_app(core, jobs_folder=folder), base_url="http://127.0.0.1") as client:
        accepted = client.post("/ingest", json={"user": "ana", "transcript": TRANSCRIPT})
        assert accepted.status_code == 202
        job = accepted.json()
        assert job["state"] == "waiting" and job["waiting_for"] == NO_MODEL
        kept = json.loads((folder / f"{job['id']}.json").read_text())
        assert kept["status"]["state"] == "waiting" and kept["transcript"] == TRANSCRIPT
        health = client.get("/health").json()
        assert health["jobs"]["waiting"] == 1 and health["not_learned"] == [NO_MODEL]

        # The model is set while the service runs (the config file, or its environment).
        model = serve(sequence(EXTRACTION))
        monkeypatch.setenv("PEGASUS_LLM_BASE_URL", model.base_url)
        monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted")
        retried = client.post(f"/jobs/{job['id']}/retry", params={"user": job["user"]})
        assert retried.status_code == 200 and retried.json()["state"] != "waiting"
        done = settled(client, job["id"], "done")
        assert done["report"]["relations_added"] and done["waiting_for"] is None
    assert core.for_user("ana").find("Ana")
    assert not list(folder.iterdir())


def test_a_model_that_is_down_is_tried_again_until_it_answers(core, tmp_path, serve) -> None:
    answers = [Step(status=503)] * 20  # more than the client's own retries
    model = serve(sequence([*answers, *EXTRACTION]))
    ingests = IngestQueue(core, tmp_path / "jobs", llm_for(model), first_pause=0.2)
    job = ingests.submit("ana", TRANSCRIPT)
    assert wait_for(lambda: job.state == "done", 120), job
    assert job.tries > 1 and job.error is None
    assert core.for_user("ana").find("Ana")


def test_a_busy_store_is_tried_again_while_the_service_runs(
    core, tmp_path, serve, monkeypatch
) -> None:
    """Another process holds the write lock longer than a write waits: the job waits
    with the store's reason, and is learned once the lock is let go, without a restart."""
    monkeypatch.setattr("pegasus.stores.sqlite.store.BUSY_SECONDS", 0.2)
    other = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    ingests = IngestQueue(core, tmp_path / "jobs", llm_for(serve(sequence(EXTRACTION))),
                          first_pause=0.3)  # fmt: skip
    job = ingests.submit("ana", TRANSCRIPT)
    assert wait_for(lambda: job.state == "waiting", 60), job
    assert "busy" in job.waiting_for and job.next_try is not None
    assert ingests.problems() == [job.waiting_for]
    other.execute("ROLLBACK")
    assert wait_for(lambda: job.state == "done", 60), job
    assert job.tries > 1 and core.for_user("ana").find("Ana")


def test_a_model_answering_garbage_never_loses_the_session(core, tmp_path, serve) -> None:
    garbage = Step(raw="<html>not a completion</html>")
    ingests = IngestQueue(core, tmp_path / "jobs", llm_for(serve(lambda body: garbage)),
                          first_pause=60)  # fmt: skip
    job = ingests.submit("ana", TRANSCRIPT)
    assert wait_for(lambda: job.state in ("waiting", "failed", "done"), 60)
    assert job.state == "waiting" and job.waiting_for, job
    assert (tmp_path / "jobs" / f"{job.id}.json").exists()
    assert ingests.problems() == [job.waiting_for]


def test_a_failed_job_is_kept_across_a_restart_until_retried_or_dropped(
    core, tmp_path, serve, monkeypatch
) -> None:
    folder = tmp_path / "jobs"
    ingests = IngestQueue(core, folder, llm_for(serve(sequence(EXTRACTION))))
    broken = RuntimeError("a fault nobody foresaw")

    def fails(*args, **kwargs):
        raise broken

    monkeypatch.setattr(type(core.for_user("ana")), "ingest", fails)
    job = ingests.submit("ana", TRANSCRIPT)
    assert wait_for(lambda: job.state == "failed")
    assert job.error == str(broken)
    monkeypatch.undo()

    # The next start lists it as failed and does not run it by itself.
    again = IngestQueue(core, folder, llm_for(serve(sequence(EXTRACTION))))
    (resumed,) = again.resume()
    assert resumed.id == job.id and resumed.state == "failed" and resumed.error == str(broken)
    time.sleep(1.5)  # a worker tick: a failed job is left alone
    assert not core.for_user("ana").find("Ana")
    again.retry(job.id)
    assert wait_for(lambda: again.get(job.id).state == "done", 60)
    assert core.for_user("ana").find("Ana") and not list(folder.iterdir())


def test_jobs_are_listed_retried_and_dropped_from_the_command_line(
    core, tmp_path, no_model, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from pegasus.paths import jobs_dir

    with TestClient(
        create_app(core, jobs_folder=jobs_dir()), base_url="http://127.0.0.1"
    ) as client:
        job = client.post("/ingest", json={"user": "ana", "transcript": TRANSCRIPT}).json()
    # No service runs now: the command reads the folder.
    listed = run_cli(capsys, "jobs")
    assert listed.code == 0 and "no memory service runs" in listed.out
    assert f"{job['id']}  waiting  ana/s1: {NO_MODEL}" in listed.out
    as_json = json.loads(run_cli(capsys, "jobs", "--json").out)
    assert as_json == [{"id": job["id"], "user": "ana", "conversation_id": "s1",
                        "state": "waiting", "why": NO_MODEL}]  # fmt: skip
    assert json.loads(run_cli(capsys, "--user", "bob", "jobs", "list", "--json").out) == []
    doctor = run_cli(capsys, "doctor", "--json")
    jobs_check = next(c for c in json.loads(doctor.out)["checks"] if c["name"] == "jobs")
    assert jobs_check["status"] == "warning" and NO_MODEL in jobs_check["message"]

    retried = run_cli(capsys, "jobs", "retry", job["id"])
    assert retried.code == 0 and "runs when `pegasus serve` starts" in retried.out
    assert run_cli(capsys, "jobs", "--json").out.count('"state": "queued"') == 1
    assert run_cli(capsys, "jobs", "drop", "nope", "--yes").code == 4
    assert run_cli(capsys, "jobs", "drop", job["id"], "--yes").code == 0
    assert json.loads(run_cli(capsys, "jobs", "--json").out) == []


def test_the_pause_between_tries_grows_and_is_capped() -> None:
    pauses = [pause_before(tries, first=30) for tries in range(1, 12)]
    assert pauses[:3] == [30, 60, 120] and pauses == sorted(pauses) and pauses[-1] == 1800


def test_a_session_left_in_the_folder_while_the_service_runs_is_taken_in(
    core, tmp_path, serve
) -> None:
    """A hook that found the service too slow leaves its file: taken in as it runs."""
    folder = tmp_path / "jobs"
    ingests = IngestQueue(core, folder, llm_for(serve(sequence(EXTRACTION))))
    ingests.resume()
    queue_ingest(ingest_job("ana", TRANSCRIPT, "s1"), folder)
    assert wait_for(lambda: core.for_user("ana").find("Ana"), 60)
    assert wait_for(lambda: not list(folder.iterdir()), 10)


def test_a_job_file_that_cannot_be_written_does_not_stop_the_queue(
    core, tmp_path, monkeypatch, serve
) -> None:
    answers = [Step(raw="not a completion")]
    model = serve(lambda body: answers.pop(0) if len(answers) > 1 else answers[0])
    ingests = IngestQueue(core, tmp_path / "jobs", llm_for(model), first_pause=3600)
    writes = []

    def full_disk(job, folder=None):
        writes.append(job["id"])
        if len(writes) == 2:  # the first job's state once the model failed it
            raise OSError(28, "No space left on device")
        return queue_ingest(job, folder)

    monkeypatch.setattr("pegasus.jobs.queue_ingest", full_disk)
    ingests.submit("ana", {"id": "s0", "turns": [{"role": "user", "content": "Hi there"}]})
    assert wait_for(lambda: len(writes) == 2, 60)
    answers[:] = [*EXTRACTION, EXTRACTION[-1]]
    second = ingests.submit("ana", TRANSCRIPT)
    assert wait_for(lambda: second.state == "done", 60), second
