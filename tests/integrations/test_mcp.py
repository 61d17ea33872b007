"""``pegasus mcp`` driven by the MCP SDK's own client over stdio: the tools it lists,
recall with its reasons, remember through the write path, forget. Once on the store
named, once through a running memory service."""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters

from pegasus.llm.scripted import sequence
from pegasus.memory import Pegasus
from tests.conftest import SEED_GRAPH
from tests.integrations.conftest import running_service, wait_for
from tests.write.conftest import FINISH, calls, entity, llm_for, relation

QUESTION = "My boss Joshua wants to talk about the Nova AI offer"
STATEMENT = "My sister Ana moved to Porto in May."
EXTRACTION = [
    calls(entity("Ana"), entity("Porto", "PLACE"),
          relation("Ana", "LIVES_IN", "Porto", STATEMENT)),
    calls(FINISH),
]  # fmt: skip


async def session(arguments: list[str], env: dict[str, str], steps) -> dict:
    """Lists the tools, then calls each of ``steps`` ((tool, arguments)) in turn."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from pegasus.cli.app import main; main()", *arguments, "mcp"],
        env=env,
    )
    seen: dict = {}
    async with Client(server, read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool.description for tool in listed.tools}
        for name, args in steps:
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content
            seen.setdefault(name, []).append(result.structured_content)
    return seen


def environment(tmp_path, **extra: str) -> dict[str, str]:
    import os

    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PEGASUS_", "NEO4J_"))}
    return keep | {"XDG_DATA_HOME": str(tmp_path / "data")} | extra


def memory_file(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with Pegasus(url) as core:
        core.for_user("default").import_file(SEED_GRAPH)
    return url


STEPS = [
    ("recall", {"message": QUESTION, "conversation_id": "c1"}),
    ("remember", {"statement": STATEMENT}),
    ("show", {"name": "Ana"}),
    ("forget", {"name": "Ana"}),
    ("stats", {}),
]


def check(seen: dict) -> None:
    assert set(seen["tools"]) == {"recall", "remember", "forget", "show", "stats"}
    assert "before answering" in seen["tools"]["recall"]
    assert "asks to forget" in seen["tools"]["forget"]
    (found,) = seen["recall"]
    assert "[MEMORY]" in found["block"] and "Joshua" in found["block"]
    joshua = next(m for m in found["memories"] if m["name"] == "Joshua")
    assert "joshua" in joshua["why"].casefold()
    assert found["claims"] and all(c["claim"] and c["said"] for c in found["claims"])
    (shown,) = seen["show"]
    shown = shown["result"] if isinstance(shown, dict) and "result" in shown else shown
    assert any("Porto" in json.dumps(d) for d in shown)
    (forgotten,) = seen["forget"]
    assert forgotten["nodes"] == ["PERSON::ana"]
    (stats,) = seen["stats"]
    assert stats["edges"] == 21  # the sample's claims: Ana's came and went


def test_mcp_over_stdio_on_the_named_store(tmp_path, serve) -> None:
    llm = serve(sequence(EXTRACTION))
    env = environment(tmp_path, PEGASUS_LLM_BASE_URL=llm.base_url,
                      PEGASUS_LLM_MODEL="scripted", PEGASUS_LLM_API_KEY="none")  # fmt: skip
    seen = asyncio.run(session(["--store", memory_file(tmp_path)], env, STEPS))
    check(seen)
    assert seen["remember"][0]["state"] == "done"


def test_mcp_asks_the_running_service(tmp_path, serve) -> None:
    url = memory_file(tmp_path)
    with Pegasus(url) as core, running_service(core, llm_for(serve(sequence(EXTRACTION)))) as at:
        env = environment(tmp_path, PEGASUS_URL=at)  # no model settings: only the service
        steps = [*STEPS[:2], ("stats", {})]
        seen = asyncio.run(session([], env, steps))
        job = seen["remember"][0]
        assert job["state"] in ("queued", "running", "done") and job["id"]
        landed = wait_for(lambda: core.for_user("default").find("Ana"))
        assert landed, "the remembered statement never landed"
    (found,) = seen["recall"]
    assert "Joshua" in found["block"]


def test_a_tool_error_says_why_in_one_line_without_a_traceback(tmp_path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from pegasus.cli.app import main; main()",
              "--store", memory_file(tmp_path), "mcp"],
        env=environment(tmp_path),
    )  # fmt: skip

    async def call() -> list:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with (
                stdio_client(server, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return [await client.call_tool("show", {"name": "Nobody Known"}),
                        await client.call_tool("remember", {})]  # fmt: skip

    unknown, neither = asyncio.run(call())
    assert unknown.is_error and neither.is_error
    said = "Error executing tool show: no entity named 'Nobody Known' for user 'default'"
    assert unknown.content[0].text == said
    assert neither.content[0].text.endswith("give either statement or transcript")
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
