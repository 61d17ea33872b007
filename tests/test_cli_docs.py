"""Every command has help text and appears in the README; every code name the docs
quote exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from pegasus.cli.app import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_command_has_help_and_docs() -> None:
    names = []
    for command in app.registered_commands:
        name = command.name or command.callback.__name__
        names.append(name)
        assert (command.callback.__doc__ or "").strip(), f"{name} has no help text"
        assert f"pegasus {name}" in README, f"README does not mention 'pegasus {name}'"
    assert {"import", "export", "recall", "close", "decay", "scheduler", "stats", "demo"} <= set(
        names
    )


ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Files named in the docs that live on the user's machine, not in this repository.
USERS_FILES = {"settings.json", "settings.local.json", "hooks.json", "config.toml"}
# Names of other programs that the docs quote (SQLite's, pydantic's, Neo4j's).
OTHERS_NAMES = {"data_version", "model_dump_json", "post_connect_cmd"}
CODE_FOLDERS = ("pegasus", "cypher", "bench", "tests", "scripts", "integrations/opencode/src")


def code_files() -> list[Path]:
    return [path for folder in CODE_FOLDERS for path in (ROOT / folder).rglob("*")
            if path.is_file() and "node_modules" not in path.parts]  # fmt: skip


def code_words(files: list[Path]) -> set[str]:
    """Every word of the code: a name the docs quote must be one of them."""
    words = set(re.findall(r"\w+", (ROOT / "Makefile").read_text(encoding="utf-8")))
    for path in files:
        if path.suffix in (".py", ".cypher", ".ts", ".sh") and "results" not in path.parts:
            words |= set(re.findall(r"\w+", path.read_text(encoding="utf-8")))
    return words


def test_every_code_name_the_docs_mention_exists() -> None:
    """A file, a ``pegasus.`` name, a ``Class.attribute`` or a snake_case name the
    README or docs/ quote is in the code: docs that name what is gone mislead."""
    files = code_files()
    words, missing = code_words(files), []
    # A file is named by its path, or by its name within the folder the text is about.
    known = {path.relative_to(ROOT).as_posix() for path in files} | {path.name for path in files}
    known |= {"README.md", *(f"docs/{doc.name}" for doc in DOCS)}
    for doc in DOCS:
        for code in re.findall(r"`([^`\n]+)`", doc.read_text(encoding="utf-8")):
            if re.fullmatch(r"[\w.-]+(/[\w.-]+)*\.(py|cypher|sql|ts|mjs|json|sh|md)", code):
                ours = code in known or f"pegasus/{code}" in known
                elsewhere = code.startswith("../")  # data read where it lies (LoCoMo)
                if not ours and not elsewhere and Path(code).name not in USERS_FILES:
                    missing.append(f"{doc.name}: file {code}")
            elif re.fullmatch(r"pegasus(\.\w+)+", code):
                if not _resolves(code):
                    missing.append(f"{doc.name}: {code}")
            else:
                for name in re.findall(r"\b[a-z]+(?:_[a-z0-9]+)+\b|\b[A-Z]\w+\.\w+\b", code):
                    last = name.rsplit(".", 1)[-1]
                    if last not in words and last not in OTHERS_NAMES:
                        missing.append(f"{doc.name}: {name} (in `{code}`)")
    assert missing == []


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False
