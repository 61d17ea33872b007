"""One error tree: what callers catch, the exit codes and HTTP statuses it maps to,
and foreign errors translated where they enter."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pydantic
import pytest
import typer

import pegasus
from pegasus.cli import app as app_module
from pegasus.config import load_settings
from pegasus.errors import (
    AuthError,
    ConfigError,
    LLMError,
    LLMRequestError,
    NotFoundError,
    PegasusError,
    StoreError,
    ValidationError,
)
from pegasus.model import Conversation, Edge, EmbeddingKey, Node, check_relation
from pegasus.time.scheduler import parse_clock
from tests.cli_helpers import run_cli

TREE = [
    (PegasusError, 1, 500),
    (ConfigError, 2, 500),
    (ValidationError, 2, 400),
    (AuthError, 2, 401),
    (StoreError, 3, 503),
    (NotFoundError, 4, 404),
    (LLMError, 5, 502),
    (LLMRequestError, 5, 502),
]


@pytest.mark.parametrize(("error", "exit_code", "http_status"), TREE)
def test_every_error_maps_to_one_exit_code_and_status(error, exit_code, http_status) -> None:
    assert issubclass(error, PegasusError)
    assert (error.exit_code, error.http_status) == (exit_code, http_status)
    assert (error("x").exit_code, error("x").http_status) == (exit_code, http_status)


def test_the_tree_is_exported_and_shaped() -> None:
    assert pegasus.ValidationError is ValidationError and pegasus.LLMRequestError is LLMRequestError
    assert issubclass(ValidationError, ValueError)
    assert issubclass(NotFoundError, StoreError) and issubclass(LLMRequestError, LLMError)
    assert not issubclass(ValidationError, pydantic.ValidationError)


def test_check_relation_raises_pegasus_validation_error() -> None:
    with pytest.raises(ValidationError, match="upper-case words") as caught:
        check_relation("works at")
    assert isinstance(caught.value, ValueError)


EDGE = {"id": "e", "source": "PERSON::a", "target": "ORG::b", "relation": "WORKS_AT",
        "snippet": "I work at B"}  # fmt: skip


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Node(id="x", name="X", kind="ROBOT"), r"^Node field kind: kind 'ROBOT' is not"),
        (lambda: Node(id="x", name=" ", kind="PERSON"), r"^Node field name: must not be empty$"),
        (lambda: Edge(**{**EDGE, "relation": "works at"}), r"^Edge field relation: relation"),
        (lambda: Edge(**{**EDGE, "confidence": 2}), r"^Edge field confidence: Input should be"),
        (lambda: Edge(**{**EDGE, "target": "PERSON::a"}), r"^Edge: a relation cannot link"),
        (lambda: Conversation(), r"^Conversation field id: Field required$"),
        (lambda: EmbeddingKey(id="k", text="t", ref="r", kind="x", vector=[0.0]),
         r"^EmbeddingKey field kind: String should match"),
        (lambda: Node.model_validate({"id": "x", "name": "X", "kind": "PERSON", "age": 3}),
         r"^Node field age: Extra inputs are not permitted$"),
        (lambda: Node.model_validate_json('{"id": "x", "name": "X"}'),
         r"^Node field kind: Field required$"),
        (lambda: Edge.model_validate_strings({**EDGE, "strength": "lots"}),
         r"^Edge field strength: Input should be a valid number"),
        (lambda: Node(id="x", name="X", kind="PERSON").evolve(confidence=-1),
         r"^Node field confidence: Input should be greater than or equal to 0$"),
    ],
)  # fmt: skip
def test_invalid_records_raise_one_readable_line(build, message) -> None:
    with pytest.raises(ValidationError, match=message) as caught:
        build()
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)
    # pydantic's own report stays reachable for whoever wants every problem.
    assert isinstance(caught.value.__cause__, pydantic.ValidationError)


def test_several_problems_are_counted() -> None:
    with pytest.raises(ValidationError, match=r"\(and 2 more problems\)$"):
        Edge(**{**EDGE, "relation": "x", "confidence": 2, "strength": -1})


def test_assignment_is_checked_like_construction() -> None:
    node = Node(id="x", name="X", kind="PERSON")
    with pytest.raises(ValidationError, match="^Node field confidence"):
        node.confidence = 7


def test_construct_and_nested_validation_stay_pydantic() -> None:
    # Stores build from checked rows without validation.
    assert Node.model_construct(id="x", name="", kind="PERSON").name == ""

    class Holder(pydantic.BaseModel):
        nodes: list[Node]

    # Inside another model a record's problem is that model's pydantic error.
    with pytest.raises(pydantic.ValidationError, match="kind 'ROBOT'"):
        Holder(nodes=[{"id": "x", "name": "X", "kind": "ROBOT"}])
    assert Holder(nodes=[{"id": "x", "name": "X", "kind": "PERSON"}]).nodes[0].name == "X"


def test_valid_records_still_build() -> None:
    edge = Edge(**EDGE, touched_at=datetime(2026, 1, 1))
    assert edge.touched_at.tzinfo is UTC
    assert Edge.model_validate_json(edge.model_dump_json()) == edge


def test_a_bad_setting_is_a_config_error_naming_the_variable(monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_LLM_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match=r"PEGASUS_LLM_TIMEOUT='soon': Input should be"):
        load_settings()
    monkeypatch.setenv("PEGASUS_LLM_TIMEOUT", "0")
    monkeypatch.setenv("PEGASUS_LLM_RETRIES", "-1")
    with pytest.raises(ConfigError, match="PEGASUS_LLM_TIMEOUT.*; PEGASUS_LLM_RETRIES"):
        load_settings()


def test_scheduler_arguments_are_validation_errors() -> None:
    from pegasus.time.scheduler import run_daily

    with pytest.raises(ValidationError, match="must look like 03:30"):
        parse_clock("3 in the morning")
    with pytest.raises(ValidationError, match="unknown time zone 'Mars/Base'"):
        run_daily(lambda: None, parse_clock("03:00"), timezone="Mars/Base")  # type: ignore[arg-type]


# --- the command line ------------------------------------------------------------


@pytest.mark.parametrize(("error", "exit_code", "_status"), TREE)
def test_cli_maps_each_error_to_its_exit_code(capsys, monkeypatch, error, exit_code, _status):
    fake = typer.Typer()

    @fake.command()
    def fail() -> None:
        raise error("the [bold]thing[/bold] went wrong")

    monkeypatch.setattr(app_module, "app", fake)
    result = run_cli(capsys)
    assert result.code == exit_code
    # One line, the message as written (no markup eaten), no class name.
    assert result.err == "error: the [bold]thing[/bold] went wrong\n"


def test_cli_bad_file_is_a_validation_error(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nodes": [{"id": "x", "label": "X", "kind": "ROBOT"}], "edges": []}))
    store = ["--store", f"sqlite:///{tmp_path / 'm.db'}"]
    result = run_cli(capsys, *store, "import", str(bad))
    assert result.code == 2
    assert result.err.startswith(f"error: {bad}: nodes[0] ('x') field kind: kind 'ROBOT'")
    result = run_cli(capsys, *store, "export", str(tmp_path / "no" / "such" / "dir.json"))
    assert result.code == 1 and result.err.startswith("error: cannot write ")


def test_cli_bad_setting_exits_as_config_error(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PEGASUS_LLM_TIMEOUT", "soon")
    result = run_cli(capsys, "--store", f"sqlite:///{tmp_path / 'm.db'}", "stats")
    assert result.code == ConfigError.exit_code
    assert result.err.startswith("error: PEGASUS_LLM_TIMEOUT='soon'")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bogus"], "Error: No such command 'bogus'."),
        (["recall"], "Error: Missing argument 'message'."),
        (["stats", "--bogus"], "Error: No such option: --bogus"),
    ],
)
def test_usage_errors_print_like_click(capsys, args, message) -> None:
    result = run_cli(capsys, *args)
    assert result.code == 2
    # The program name is whatever runs the tests here; "pegasus" when installed.
    assert result.err.startswith("Usage: ") and "for help." in result.err
    assert result.err.rstrip().endswith(message)
    assert "error:" not in result.err and "UsageError" not in result.err


def test_no_arguments_print_the_help_only(capsys) -> None:
    result = run_cli(capsys)
    assert result.code == 2
    assert "Usage: " in result.out and "Commands" in result.out
    assert result.err == ""


def test_version(capsys) -> None:
    from importlib.metadata import version

    from tests.cli_helpers import run_cli

    result = run_cli(capsys, "--version")
    assert result.code == 0 and result.out.strip() == f"pegasus {version('pegasus-memory')}"
