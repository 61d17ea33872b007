"""``pegasus jobs``: the sessions handed to the memory service and not learned yet,
through the running service, else read from the jobs folder (see :mod:`pegasus.jobs`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from pegasus.errors import NotFoundError

jobs = typer.Typer(help="Sessions waiting to be learned: list, retry, drop.",
                   invoke_without_command=True)  # fmt: skip
JobId = Annotated[str, typer.Argument(help="The job's id (pegasus jobs lists them).")]


def _kept(job_id: str) -> Any:
    from pegasus.paths import file_name, jobs_dir

    if file_name(job_id, "") != job_id:  # never a path outside the folder
        raise NotFoundError(f"no job {job_id!r}: a job id is letters, digits, - and _")
    path = jobs_dir() / f"{job_id}.json"
    if not path.exists():
        raise NotFoundError(f"no job {job_id!r} in {path.parent}")
    return path


AsJson = Annotated[bool, typer.Option("--json", help="One JSON list.")]


@jobs.callback()
def jobs_without_command(ctx: typer.Context, as_json: AsJson = False) -> None:
    """Lists the jobs (as ``pegasus jobs list``) when no command is given."""
    if ctx.invoked_subcommand is None:
        _list(ctx.obj.user, as_json)


@jobs.command("list")
def list_jobs(ctx: typer.Context, as_json: AsJson = False) -> None:
    """Every job not learned yet (and, from a running service, those learned lately):
    its state, and why it waits or failed."""
    _list(ctx.obj.user, as_json)


def _list(user: str | None, as_json: bool) -> None:
    from pegasus.client import call, kept_jobs, service_url

    url = service_url()
    answer = call(url, "/jobs", query={"user": user} if user else None) if url else None
    if answer is None:
        found = [job for job in kept_jobs() if user is None or job["user"] == user]
        where = "no memory service runs: jobs run when `pegasus serve` starts"
    else:
        keys = ("id", "user", "conversation_id", "state", "tries", "next_try")
        found = [{key: job[key] for key in keys} | {"why": job["waiting_for"] or job["error"]}
                 for job in answer]  # fmt: skip
        where = f"from the memory service at {url}"
    if as_json:
        typer.echo(json.dumps(found, ensure_ascii=False))
        return
    typer.echo(f"{len(found)} jobs ({where})")
    for job in found:
        why = f": {job['why']}" if job["why"] else ""
        if job.get("next_try"):  # the service tries it again by itself
            why += f" (tried {job['tries']} times; next try at {job['next_try'][:19]}Z)"
        typer.echo(f"  {job['id']}  {job['state']}  {job['user']}/{job['conversation_id']}{why}")


def _owner(ctx: typer.Context) -> dict[str, str] | None:
    """The owner whose job it is: --user, else the service's default owner."""
    return {"user": ctx.obj.user} if ctx.obj.user else None


@jobs.command()
def retry(ctx: typer.Context, job_id: JobId) -> None:
    """Run a waiting or failed job again now (without a service: at its next start)."""
    from pegasus.client import call, queue_ingest, service_url

    url = service_url()
    answer = call(url, f"/jobs/{job_id}/retry", {}, query=_owner(ctx)) if url else None
    if answer is not None:
        typer.echo(f"job {job_id} is {answer['state']}")
        return
    path = _kept(job_id)
    spec = json.loads(path.read_text(encoding="utf-8"))
    spec.pop("status", None)
    queue_ingest(spec, path.parent)
    typer.echo(f"job {job_id} runs when `pegasus serve` starts")


@jobs.command()
def drop(
    ctx: typer.Context,
    job_id: JobId,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask first.")] = False,
) -> None:
    """Remove a job: its session is never learned."""
    from pegasus.client import call, service_url

    if not yes:
        typer.confirm(f"drop job {job_id}? its session will not be learned", abort=True)
    url = service_url()
    if url is not None and call(url, f"/jobs/{job_id}", query=_owner(ctx), method="DELETE"):
        typer.echo(f"dropped job {job_id}")
        return
    _kept(job_id).unlink()
    typer.echo(f"dropped job {job_id}")


def register(app: typer.Typer) -> None:
    app.add_typer(jobs, name="jobs")
