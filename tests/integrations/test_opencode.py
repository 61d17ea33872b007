"""opencode itself (the ``opencode-ai`` npm package), run headless with the plugin and
a custom OpenAI-compatible provider served by the scripted server: a first session
tells a fact and ends; the second session's request to the model carries the fact in
its system prompt. ``make test`` installs opencode and builds the plugin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pegasus.llm.scripted import Step, sequence
from pegasus.memory import Pegasus
from tests.integrations.conftest import running_service, wait_for
from tests.write.conftest import FINISH, calls, entity, llm_for, relation

PACKAGE = Path(__file__).resolve().parents[2] / "integrations" / "opencode"
TOLD = "My sister Ana moved to Porto in May."
EXTRACTION = [
    calls(entity("Ana"), entity("Porto", "PLACE"), relation("Ana", "LIVES_IN", "Porto", TOLD)),
    calls(FINISH),
]


def opencode() -> tuple[Path, Path]:
    binary, plugin = PACKAGE / "node_modules" / ".bin" / "opencode", PACKAGE / "dist" / "index.js"
    if binary.exists() and plugin.exists():
        return binary, plugin
    message = "opencode or the built plugin is missing (make test runs npm install and the build)"
    if os.environ.get("PEGASUS_REQUIRE_OPENCODE") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def system_prompts(requests: list[dict]) -> list[str]:
    return [
        message["content"] if isinstance(message["content"], str) else json.dumps(message)
        for request in requests
        for message in request.get("messages", [])
        if message.get("role") == "system"
    ]


def test_opencode_remembers_across_sessions(tmp_path, serve) -> None:
    binary, plugin = opencode()
    model = serve(lambda body: Step(content="Noted."))
    extraction = serve(sequence(EXTRACTION))
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PEGASUS_", "OPENAI_"))}
    homes = {"DATA": "data", "CONFIG": "config", "CACHE": "cache", "STATE": "state"}
    env |= {f"XDG_{kind}_HOME": str(home / folder) for kind, folder in homes.items()}
    env |= {"HOME": str(home), "PWD": str(project)}  # opencode takes its directory from PWD

    def run(message: str) -> None:
        done = subprocess.run([str(binary), "run", message], cwd=project, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Noted." in done.stdout

    core = Pegasus(f"sqlite:///{tmp_path / 'memory.db'}")
    with core, running_service(core, llm_for(extraction)) as url:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": model.base_url, "apiKey": "none"},
                "models": {"m": {"name": "m"}},
            }},
            "model": "scripted/m",
            "plugin": [[str(plugin), {"url": url, "user": "ana"}]],
        }  # fmt: skip
        (project / "opencode.json").write_text(json.dumps(config))

        run(TOLD)
        memory = core.for_user("ana")
        assert wait_for(lambda: memory.find("Ana"), 60), "the first session never landed"
        first = len(model.requests)
        assert not any("Porto" in p for p in system_prompts(model.requests[:first]))

        run("Should I visit my sister Ana this winter?")
        later = system_prompts(model.requests[first:])
        assert any("[MEMORY]" in p and "Porto" in p for p in later), later[-1][-2000:]
