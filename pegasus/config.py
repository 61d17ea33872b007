"""Settings from the environment and an optional config file, read when asked for."""

from __future__ import annotations

from typing import Any, Literal

import pydantic
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from pegasus.errors import ConfigError
from pegasus.model import DEFAULT_USER
from pegasus.paths import APP_NAME, config_file, data_dir, service_file

__all__ = ["APP_NAME", "Settings", "config_file", "data_dir", "load_settings", "service_file"]


class Settings(BaseSettings):
    """Every setting, with the environment variable that sets it.

    A ``config.env`` file in the user config directory (``KEY=value`` lines) is
    read too; the environment wins over it.
    """

    model_config = SettingsConfigDict(env_file_encoding="utf-8", extra="ignore")

    store: str | None = Field(default=None, validation_alias="PEGASUS_STORE")
    user: str = Field(default=DEFAULT_USER, validation_alias="PEGASUS_USER")
    neo4j_uri: str | None = Field(default=None, validation_alias="NEO4J_URI")
    neo4j_user: str | None = Field(default=None, validation_alias="NEO4J_USER")
    neo4j_password: str | None = Field(default=None, validation_alias="NEO4J_PASSWORD")
    # The database on the server (its default when unset: "neo4j").
    neo4j_database: str | None = Field(default=None, validation_alias="NEO4J_DATABASE")
    # How long a Neo4j operation keeps retrying what may pass (a leader switch, a
    # deadlock, a dropped connection, a restart) before it fails.
    neo4j_retry_seconds: float = Field(
        default=30.0, ge=0, validation_alias="PEGASUS_NEO4J_RETRY_SECONDS"
    )
    # Memory for copies of owners' keys searched exactly (docs/stores.md); an owner
    # larger than this alone is searched through Neo4j's vector index.
    neo4j_held_mb: float = Field(default=1024, ge=0, validation_alias="PEGASUS_NEO4J_HELD_MB")
    llm_base_url: str | None = Field(default=None, validation_alias="PEGASUS_LLM_BASE_URL")
    llm_model: str | None = Field(default=None, validation_alias="PEGASUS_LLM_MODEL")
    llm_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("PEGASUS_LLM_API_KEY", "OPENAI_API_KEY")
    )
    llm_timeout: float = Field(default=120.0, gt=0, validation_alias="PEGASUS_LLM_TIMEOUT")
    llm_retries: int = Field(default=4, ge=0, validation_alias="PEGASUS_LLM_RETRIES")
    # Models without tool calling get the same work as one JSON answer.
    llm_tools: bool = Field(default=True, validation_alias="PEGASUS_LLM_TOOLS")
    embed_model: str = Field(default="all-MiniLM-L6-v2", validation_alias="PEGASUS_EMBED_MODEL")
    embed_runtime: Literal["onnx", "torch"] = Field(
        default="onnx", validation_alias="PEGASUS_EMBED_RUNTIME"
    )
    # The memory service and MCP over HTTP refuse requests without this bearer token
    # when it is set; listening beyond this machine needs one (docs/service.md).
    token: str | None = Field(default=None, validation_alias="PEGASUS_TOKEN")
    # Host names, besides the address it listens on and this machine's own names, that
    # clients reach the service by (a name on the network, with a token).
    allowed_hosts: str = Field(default="", validation_alias="PEGASUS_ALLOWED_HOSTS")
    # Limits on what a request, a recall message and a transcript may hold (413 past them).
    max_body_mb: float = Field(default=32.0, gt=0, validation_alias="PEGASUS_MAX_BODY_MB")
    max_message_chars: int = Field(
        default=100_000, gt=0, validation_alias="PEGASUS_MAX_MESSAGE_CHARS"
    )
    max_transcript_chars: int = Field(
        default=16_000_000, gt=0, validation_alias="PEGASUS_MAX_TRANSCRIPT_CHARS"
    )
    # How long the service's answer to a request may wait on the store (shorter than a
    # hook's patience) before it says 503; ingest jobs keep their own, longer patience.
    request_deadline: float = Field(default=1.0, gt=0, validation_alias="PEGASUS_REQUEST_DEADLINE")

    def store_url(self) -> str:
        """The store to open: PEGASUS_STORE, else NEO4J_URI, else the embedded default."""
        if self.store:
            return self.store
        if self.neo4j_uri:
            return self.neo4j_uri
        return f"sqlite:///{data_dir() / 'memory.db'}"


def _bad_setting(problem: Any) -> str:
    name = ".".join(str(part) for part in problem["loc"])
    return f"{name}={problem.get('input')!r}: {problem['msg']}"


def load_settings(**overrides: object) -> Settings:
    """Read the settings now (never at import time); explicit overrides win.
    A malformed setting raises :class:`ConfigError` naming the variable."""
    path = config_file()
    try:
        settings = Settings(_env_file=path if path.exists() else None)  # type: ignore[call-arg]
    except pydantic.ValidationError as exc:
        problems = "; ".join(_bad_setting(p) for p in exc.errors(include_url=False))
        raise ConfigError(f"{problems} (set in the environment or {path})") from exc
    except (SettingsError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the settings ({path}): {exc}") from exc
    clean = {key: value for key, value in overrides.items() if value is not None}
    return settings.model_copy(update=clean) if clean else settings
