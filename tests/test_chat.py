"""``pegasus chat`` against the scripted OpenAI-compatible server: two conversations,
the second recalls what the first stored."""

from __future__ import annotations

import io

from pegasus.llm.scripted import Step
from tests.cli_helpers import run_cli
from tests.write.conftest import FINISH, calls, entity, relation

SISTER = calls(
    entity("Maya", properties={"job": "architect"}),
    entity("Lisbon", kind="PLACE"),
    relation("User", "HAS_SISTER", "Maya", "My sister Maya is an architect in Lisbon."),
    relation("Maya", "LIVES_IN", "Lisbon", "My sister Maya is an architect in Lisbon."),
    FINISH,
)


def chat(capsys, monkeypatch, store: str, lines: list[str]):
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    return run_cli(capsys, "--store", store, "chat")


def test_the_second_chat_remembers_the_first(capsys, monkeypatch, tmp_path, serve) -> None:
    def respond(body: dict) -> Step:
        if "tools" in body:  # extraction at the end of a chat
            said = " ".join(m["content"] or "" for m in body["messages"] if m["role"] == "user")
            return SISTER if "architect in Lisbon" in said else calls(FINISH)
        return Step(content="That sounds lovely, tell me more!")

    server = serve(respond)
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted-chat")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("COLUMNS", "200")
    store = f"sqlite:///{tmp_path / 'm.db'}"

    first = chat(capsys, monkeypatch, store, ["My sister Maya is an architect in Lisbon.", "/exit"])
    assert first.code == 0, first.err
    assert "That sounds lovely, tell me more!" in first.out  # streamed back
    assert "3 entities created" in first.out and "2 relations added" in first.out  # with "User"

    second = chat(
        capsys, monkeypatch, store, ["I'm flying to Lisbon next week.", "/memory", "/why"]
    )
    assert second.code == 0, second.err
    chats = [r for r in server.requests if r.get("stream")]
    system = chats[-1]["messages"][0]["content"]
    assert '"Maya" -[LIVES_IN]-> "Lisbon"' in system and "architect" in system
    assert '"Maya" -[LIVES_IN]-> "Lisbon"' in second.out  # /memory
    assert "Lisbon (PLACE)" in second.out and "'lisbon'" in second.out  # /why: the seed word
    # Maya was reached through the claim that holds the message's words.
    assert "Maya (PERSON)" in second.out and "Maya -LIVES_IN-> Lisbon" in second.out
    # The chat before remembered nothing yet: no memory in its system prompt.
    assert "What you remember" not in chats[0]["messages"][0]["content"]


def test_a_broken_memory_does_not_stop_the_chat(capsys, monkeypatch, tmp_path, serve) -> None:
    server = serve(lambda body: calls(FINISH) if "tools" in body else Step(content="Hi!"))
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted-chat")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("COLUMNS", "300")
    unreachable = "bolt://127.0.0.1:9"  # nothing listens there
    result = chat(capsys, monkeypatch, unreachable, ["Hello", "Again"])
    assert result.code == 0, result.err
    assert result.out.count("Hi!") == 2
    assert result.out.count("memory unavailable") == 1
    (kept,) = (tmp_path / "data" / "pegasus" / "chats").iterdir()
    assert "Again" in kept.read_text() and str(kept) in result.out.replace("\n", "")
