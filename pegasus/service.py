"""The memory service: one long-lived process holding the store, the embedding model
and the recall reference, answering a JSON HTTP API (by default on 127.0.0.1).

Every call names its user. Errors are the Pegasus error tree mapped to HTTP statuses
(``PegasusError.http_status``) with one line of JSON, ``{"error": "..."}``: a store
that cannot be reached is a 503 for as long as it lasts, and the next call after it
comes back succeeds. Ingest answers at once with a job (:mod:`pegasus.jobs`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from pegasus.client import store_key
from pegasus.errors import AuthError, NotFoundError, PegasusError, ValidationError
from pegasus.integrations.hooks import PROMPT_PATH, as_context, prompt_of
from pegasus.interchange import dump_graph
from pegasus.jobs import IngestQueue, Job
from pegasus.llm import LLM
from pegasus.memory import Memory, Pegasus
from pegasus.recall.engine import RecallResult
from pegasus.recall.presets import PRESETS
from pegasus.recall_workers import RecallWorkers
from pegasus.results import Description
from pegasus.stores import Stats
from pegasus.write.forget import Forgetting


class RecallRequest(BaseModel):
    user: str | None = None  # the service's own default owner when left out
    message: str
    conversation_id: str | None = None  # the edges used are noted, reinforced on close
    now: datetime | None = None
    preset: str = "default"


class IngestRequest(BaseModel):
    user: str
    transcript: Any = Field(description="[{role, content}] or {id, started_at, turns}")
    conversation_id: str | None = None
    now: datetime | None = None


class CloseRequest(BaseModel):
    user: str | None = None
    conversation_id: str
    now: datetime | None = None


class ForgetRequest(BaseModel):
    user: str
    node: str | None = None
    edge: str | None = None
    conversation: str | None = None


class Closed(BaseModel):
    reinforced: int


def create_app(
    core: Pegasus,
    token: str | None = None,
    llm: LLM | None = None,
    jobs_folder: Path | None = None,
    workers: RecallWorkers | None = None,
) -> FastAPI:
    """The API over ``core``. With ``token``, requests without ``Authorization: Bearer
    <token>`` are refused; ``llm`` replaces the configured model (tests, the demo).
    With ``jobs_folder``, ingest jobs are kept there until done, and those left by an
    earlier run are resumed now. With ``workers``, they answer the recalls."""
    app = FastAPI(title="Pegasus memory", summary="Long-term memory for LLM assistants.")
    if workers is None:
        core.warm()
    else:  # they recall; the service still embeds what it is told
        core.embedder.embed("warm up")
    app.state.ingests = ingests = IngestQueue(core, jobs_folder, llm)
    ingests.resume()

    def authorised(authorization: str | None = Header(default=None)) -> None:
        if token is not None and authorization != f"Bearer {token}":
            raise AuthError("a bearer token is required (PEGASUS_TOKEN)")

    @app.exception_handler(PegasusError)
    def pegasus_error(_: Request, exc: PegasusError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.http_status)

    @app.exception_handler(RequestValidationError)
    def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        if first.get("type") == "json_invalid":
            why = first.get("ctx", {}).get("error", "")
            message = f"the body is not valid JSON: {why}".rstrip(": ")
            return JSONResponse({"error": message}, status_code=400)
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
        message = str(first.get("msg", "bad request")).removeprefix("Value error, ")
        return JSONResponse({"error": f"{where or 'body'}: {message}"}, status_code=400)

    guarded = [Depends(authorised)]
    held = store_key(core.settings.store_url())

    def memory_of(user: str | None) -> Memory:
        return core.for_user(core.settings.user if user is None else user)

    def recalled(
        memory: Memory, message: str, conversation_id: str | None = None,
        now: datetime | None = None, preset: str = "default",
    ) -> RecallResult:  # fmt: skip
        settings = PRESETS[preset]
        if workers is None:
            return memory.recall(message, conversation_id, now, settings)
        return workers.recall(memory.user, message, conversation_id, now, settings)

    @app.get("/health", dependencies=guarded)
    def health() -> dict[str, Any]:
        """The store answers (else 503), and the sessions not learned yet, with why."""
        core.store.get_self(core.settings.user)
        return {"ok": True, "store": type(core.store).__name__, "store_key": held,
                "jobs": ingests.counts(), "not_learned": ingests.problems()}  # fmt: skip

    @app.post("/recall", dependencies=guarded, response_model=RecallResult)
    def recall(body: RecallRequest) -> Response:
        if body.preset not in PRESETS:
            raise ValidationError(f"unknown preset {body.preset!r}: one of {', '.join(PRESETS)}")
        memory = memory_of(body.user)
        result = recalled(memory, body.message, body.conversation_id, body.now, body.preset)
        # Serialised once, here: returned as a model, it would be validated again first.
        return Response(result.model_dump_json(), media_type="application/json")

    @app.post(PROMPT_PATH, dependencies=guarded)
    def prompt_posted(payload: dict[str, Any], user: str | None = None) -> dict[str, Any]:
        """Claude Code's UserPromptSubmit hook posted as it comes (an HTTP hook): the
        recall block as the context it adds, or nothing to add."""
        prompt = prompt_of(payload)
        if prompt is None:
            return {}
        session = payload.get("session_id")
        result = recalled(memory_of(user), prompt, session if isinstance(session, str) else None)
        return as_context(result.text) if result.text else {}

    @app.post("/ingest", status_code=202, dependencies=guarded)
    def ingest(body: IngestRequest) -> Job:
        user = core.for_user(body.user).user  # an invalid owner is refused here
        return ingests.submit(user, body.transcript, body.conversation_id, body.now)

    @app.get("/jobs", dependencies=guarded)
    def jobs(user: str | None = None) -> list[Job]:
        return ingests.listed(user)

    @app.get("/jobs/{job_id}", dependencies=guarded)
    def job_status(job_id: str) -> Job:
        job = ingests.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}")
        return job

    @app.post("/jobs/{job_id}/retry", dependencies=guarded)
    def job_retry(job_id: str) -> Job:
        return ingests.retry(job_id)

    @app.delete("/jobs/{job_id}", dependencies=guarded)
    def job_drop(job_id: str) -> Job:
        return ingests.drop(job_id)

    @app.post("/close", dependencies=guarded)
    def close(body: CloseRequest) -> Closed:
        count = memory_of(body.user).close_conversation(body.conversation_id, body.now)
        return Closed(reinforced=count)

    @app.post("/forget", dependencies=guarded)
    def forget(body: ForgetRequest) -> Forgetting:
        memory = core.for_user(body.user)
        plan = memory.plan_forget(body.node, body.edge, body.conversation)
        memory.forget(plan)
        return plan

    @app.get("/show", dependencies=guarded)
    def show(user: str, name: str) -> list[Description]:
        return core.for_user(user).describe(name)

    @app.get("/stats", dependencies=guarded)
    def stats(user: str) -> Stats:
        return core.for_user(user).stats()

    @app.get("/export", dependencies=guarded)
    def export(user: str) -> Response:
        text = dump_graph(core.for_user(user).export())
        return Response(text, media_type="application/json")

    return app
