"""The memory service: one long-lived process holding the store, the embedding model
and the recall reference, answering a JSON HTTP API (by default on 127.0.0.1).

Every call names its user. Only this machine's clients get in (:mod:`pegasus.guard`).
Errors are the Pegasus error tree mapped to HTTP statuses (``PegasusError.http_status``)
with one line of JSON, ``{"error": "..."}``, whatever went wrong. A request waits on the
store for ``PEGASUS_REQUEST_DEADLINE`` at most: a store that cannot be reached is a 503
at once for as long as it lasts, and the next call after it comes back succeeds.
Ingest answers at once with a job (:mod:`pegasus.jobs`); the edges a recall used are
noted after it answers (:mod:`pegasus.write.used`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator, BaseModel, Field
from starlette.exceptions import HTTPException

from pegasus.client import store_key
from pegasus.errors import NotFoundError, PegasusError, ValidationError
from pegasus.guard import Guard, check_exposure
from pegasus.integrations.hook_endpoint import prompt_router
from pegasus.integrations.hooks import PROMPT_PATH
from pegasus.interchange import dump_graph
from pegasus.jobs import IngestQueue, Job
from pegasus.llm import LLM
from pegasus.memory import Memory, Pegasus
from pegasus.model import no_lone_surrogates
from pegasus.paths import DEFAULT_HOST
from pegasus.recall.engine import RecallResult
from pegasus.recall.presets import PRESETS
from pegasus.results import Description
from pegasus.stores import Stats, within
from pegasus.write.forget import Forgetting

Text = Annotated[str, AfterValidator(no_lone_surrogates)]


class RecallRequest(BaseModel):
    user: Text | None = None  # the service's own default owner when left out
    message: Text
    conversation_id: Text | None = None  # the edges used are noted, reinforced on close
    now: datetime | None = None
    preset: str = "default"


class IngestRequest(BaseModel):
    user: Text
    transcript: Any = Field(description="[{role, content}] or {id, started_at, turns}")
    conversation_id: Text | None = None
    now: datetime | None = None


class CloseRequest(BaseModel):
    user: Text | None = None
    conversation_id: Text
    now: datetime | None = None


class ForgetRequest(BaseModel):
    user: Text
    node: Text | None = None
    edge: Text | None = None
    conversation: Text | None = None


class Closed(BaseModel):
    reinforced: int


def create_app(
    core: Pegasus,
    token: str | None = None,
    llm: LLM | None = None,
    jobs_folder: Path | None = None,
    host: str = DEFAULT_HOST,
) -> FastAPI:
    """The API over ``core``, behind :class:`pegasus.guard.Guard` for ``host``: with
    ``token``, requests without ``Authorization: Bearer <token>`` are refused; ``llm``
    replaces the configured model (tests, the demo). With ``jobs_folder``, ingest
    jobs are kept there until done, and those left by an earlier run are resumed now."""
    settings = core.settings
    check_exposure(host, token)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        app.state.ingests.stopping.set()  # the queue's thread ends with the app

    app = FastAPI(title="Pegasus memory", summary="Long-term memory for LLM assistants.",
                  lifespan=lifespan)  # fmt: skip
    core.warm()
    app.state.ingests = ingests = IngestQueue(core, jobs_folder, llm)
    ingests.resume()

    @app.exception_handler(PegasusError)
    def pegasus_error(_: Request, exc: PegasusError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.http_status)

    @app.exception_handler(HTTPException)
    def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    def unexpected(_: Request, exc: Exception) -> JSONResponse:
        first = (str(exc).splitlines() or [""])[0]
        return JSONResponse({"error": f"{type(exc).__name__}: {first}"}, status_code=500)

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

    # What a recall body can hold: the longest message, each character as a JSON escape.
    recall_bytes = 12 * settings.max_message_chars + 2**16
    app.add_middleware(
        Guard, host=host, token=token, max_body=int(settings.max_body_mb * 2**20),
        allowed_hosts=settings.allowed_hosts,
        limits={"/recall": recall_bytes, PROMPT_PATH: recall_bytes},
    )  # fmt: skip
    app.add_middleware(Deadline, seconds=settings.request_deadline)
    held = store_key(settings.store_url())

    def memory_of(user: str | None) -> Memory:
        return core.for_user(settings.user if user is None else user)

    def owned_job(user: str | None, job_id: str) -> Job:
        """The job, if it is ``user``'s (the default owner's when left out)."""
        owner = memory_of(user).user
        job = ingests.get(job_id)
        if job is None or job.user != owner:
            raise NotFoundError(f"no job {job_id!r} for user {owner!r} (--user names another)")
        return job

    app.include_router(prompt_router(memory_of))

    @app.get("/health")
    def health() -> dict[str, Any]:
        """The store answers (else 503), and the sessions not learned yet, with why."""
        core.store.get_self(core.settings.user)
        return {"ok": True, "store": type(core.store).__name__, "store_key": held,
                "jobs": ingests.counts(), "not_learned": ingests.problems()}  # fmt: skip

    @app.post("/recall", response_model=RecallResult)
    def recall(body: RecallRequest) -> Response:
        if body.preset not in PRESETS:
            raise ValidationError(f"unknown preset {body.preset!r}: one of {', '.join(PRESETS)}")
        memory = memory_of(body.user)
        result = memory.recall(body.message, body.conversation_id, body.now, PRESETS[body.preset])
        # Serialised once, here: returned as a model, it would be validated again first.
        return Response(result.model_dump_json(), media_type="application/json")

    @app.post("/ingest", status_code=202)
    def ingest(body: IngestRequest) -> Job:
        user = core.for_user(body.user).user  # an invalid owner is refused here
        return ingests.submit(user, body.transcript, body.conversation_id, body.now)

    @app.get("/jobs")
    def jobs(user: str | None = None) -> list[Job]:
        """Every owner's jobs, or ``user``'s."""
        return ingests.listed(None if user is None else memory_of(user).user)

    @app.get("/jobs/{job_id}")
    def job_status(job_id: str, user: str | None = None) -> Job:
        return owned_job(user, job_id)

    @app.post("/jobs/{job_id}/retry")
    def job_retry(job_id: str, user: str | None = None) -> Job:
        return ingests.retry(owned_job(user, job_id).id)

    @app.delete("/jobs/{job_id}")
    def job_drop(job_id: str, user: str | None = None) -> Job:
        return ingests.drop(owned_job(user, job_id).id)

    @app.post("/close")
    def close(body: CloseRequest) -> Closed:
        count = memory_of(body.user).close_conversation(body.conversation_id, body.now)
        return Closed(reinforced=count)

    @app.post("/forget")
    def forget(body: ForgetRequest) -> Forgetting:
        memory = core.for_user(body.user)
        plan = memory.plan_forget(body.node, body.edge, body.conversation)
        memory.forget(plan)
        return plan

    @app.get("/show")
    def show(user: str, name: str) -> list[Description]:
        return core.for_user(user).describe(name)

    @app.get("/stats")
    def stats(user: str) -> Stats:
        return core.for_user(user).stats()

    @app.get("/export")
    def export(user: str) -> Response:
        text = dump_graph(core.for_user(user).export())
        return Response(text, media_type="application/json")

    return app


class Deadline:
    """ASGI middleware: the store calls a request makes wait ``seconds`` at most
    (:func:`pegasus.stores.within`); the work it hands to threads inherits it."""

    def __init__(self, app: Any, seconds: float) -> None:
        self.app, self.seconds = app, seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        with within(self.seconds):
            await self.app(scope, receive, send)
