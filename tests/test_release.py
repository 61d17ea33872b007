"""A release a stranger can install: the wheel holds every package and every file it
reads (Cypher statements, prompts, sample data, the view page), and installed into a
fresh virtual environment it runs ``pegasus demo`` from a folder outside the
repository, importing nothing from the checkout.

The wheel is built from a copy of the files git knows of (tracked, or new and not
ignored), so nothing left in this checkout's build/ can slip into it. To stay offline
and fast, the fresh environment installs only the wheel and borrows the heavy
dependencies (torch and the rest) from this environment's site-packages through a
path file, added after the install; a path file line adds the folder to sys.path but
runs none of the path files inside it, so the checkout's editable install of Pegasus
stays inert there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = "Scripts" if os.name == "nt" else "bin"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Variables that would let the user's own settings, caches or paths reach the release.
HOST_PREFIXES = ("PEGASUS_", "OPENAI_", "NEO4J_", "PYTHON", "VIRTUAL_ENV", "HF_", "XDG_")


def run(*command: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=600, **options
    )


def checked(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (
        f"{done.args} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    )
    return done.stdout


def source_files() -> list[Path]:
    """The repository's files as a clone with the current changes would hold them."""
    listed = checked(
        run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    )
    paths = (Path(name) for name in listed.split("\0") if name)
    return sorted(path for path in paths if (ROOT / path).is_file())


def under(files: list[Path], folder: str) -> list[Path]:
    return [path for path in files if path.parts[0] == folder]


@pytest.fixture(scope="module")
def files() -> list[Path]:
    return source_files()


@pytest.fixture(scope="module")
def wheel(files: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("release-build")
    source = build / "source"
    for path in files:
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    checked(
        run(
            sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "--no-index", "--no-cache-dir", "--quiet", "--wheel-dir", build / "dist", source,
        )
    )  # fmt: skip
    built = list((build / "dist").glob("*.whl"))
    assert len(built) == 1, built
    return built[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel, and nothing of the checkout."""
    venv = tmp_path_factory.mktemp("release-venv") / "venv"
    checked(run(sys.executable, "-m", "venv", "--without-pip", venv))
    python = venv / BIN / "python"
    checked(
        run(
            sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
            "--no-index", "--no-cache-dir", "--quiet", wheel,
        )
    )  # fmt: skip
    # Only now the dependencies: with this environment's Pegasus visible, pip would
    # have taken the wheel's version as installed already.
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(checked(run(python, "-c", purelib)).strip())
    assert site.resolve().is_relative_to(venv.resolve()), site
    borrowed = dict.fromkeys(sysconfig.get_path(name) for name in ("purelib", "platlib"))
    (site / "borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")
    return venv


@pytest.fixture(scope="module")
def outside(
    tmp_path_factory: pytest.TempPathFactory, _isolated_dirs: Path
) -> tuple[Path, dict[str, str]]:
    """A working folder away from the repository, and an environment whose home,
    config, data and cache folders are all inside it."""
    folder = tmp_path_factory.mktemp("stranger")
    env = {key: value for key, value in os.environ.items() if not key.startswith(HOST_PREFIXES)}
    env |= {
        "HOME": str(folder / "home"),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_DATA_HOME": str(folder / "data"),
        "XDG_CACHE_HOME": str(folder / "cache"),
        "COLUMNS": "200",
    }
    (folder / "work").mkdir()
    # The recall reference (everyday words, embedded) takes a first run some 20 s on
    # two cores; one this test session already built (in conftest's data folder) is
    # the same file, named by a digest of the words and the model.
    built = sorted((_isolated_dirs / "data" / "pegasus" / "cache").glob("reference-*.npy"))
    if built:
        (folder / "data" / "pegasus" / "cache").mkdir(parents=True)
        for path in built:
            shutil.copy2(path, folder / "data" / "pegasus" / "cache" / path.name)
    return folder / "work", env


def in_venv(venv: Path, outside: tuple[Path, dict[str, str]], *command: str) -> str:
    """Run a command of the fresh environment from the outside folder: its output."""
    work, env = outside
    env = env | {"PATH": f"{venv / BIN}{os.pathsep}{env.get('PATH', '')}"}
    return checked(run(venv / BIN / command[0], *command[1:], cwd=work, env=env))


def test_pyproject_names_every_package() -> None:
    declared = PYPROJECT["tool"]["setuptools"]["packages"]
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "pegasus").rglob("__init__.py")
    }
    assert sorted(found | {"pegasus.cypher"}) == sorted(declared)
    # A folder of modules without __init__.py would be left out of the wheel silently.
    folders = {path.parent for path in (ROOT / "pegasus").rglob("*.py")}
    assert all((folder / "__init__.py").is_file() for folder in folders), folders


def test_the_wheel_holds_every_package_and_data_file(wheel: Path, files: list[Path]) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    pegasus = [path.as_posix() for path in under(files, "pegasus")]
    cypher = [path for path in under(files, "cypher") if path.suffix in (".cypher", ".py")]
    expected = pegasus + ["pegasus/" + path.as_posix() for path in cypher]
    for kind in ("data", "prompts"):  # every file there is read at run time
        assert any(path.startswith(f"pegasus/{kind}/") and not path.endswith(".py")
                   for path in pegasus), kind  # fmt: skip
    assert len([path for path in cypher if path.suffix == ".cypher"]) > 30
    assert sorted(set(expected) - names) == []
    packages = {name.rsplit("/", 1)[0] for name in names if name.endswith("/__init__.py")}
    for package in PYPROJECT["tool"]["setuptools"]["packages"]:
        assert package.replace(".", "/") in packages, package
    dist_info = f"pegasus_memory-{PYPROJECT['project']['version']}.dist-info"
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "pegasus = pegasus.cli.app:main" in entry_points


def test_the_installed_package_is_the_wheel_and_reads_its_files(
    venv: Path, outside: tuple[Path, dict[str, str]], files: list[Path]
) -> None:
    probe = """
import importlib.metadata, json
from importlib import resources
import pegasus
from pegasus.prompts import prompt_text
from pegasus.stores.neo4j import cypher
print(json.dumps({
    "module": pegasus.__file__,
    "dist": str(importlib.metadata.distribution("pegasus-memory").locate_file("pegasus")),
    "cypher": {
        path.name: path.read_text(encoding="utf-8")
        for path in resources.files("pegasus.cypher").rglob("*.cypher")
    },
    "statement": cypher("schema"),
    "data": sorted(path.name for path in resources.files("pegasus.data").iterdir()),
    "prompt": prompt_text("extract"),
}))
"""
    found = json.loads(in_venv(venv, outside, "python", "-c", probe))
    site = venv.resolve()
    for where in (found["module"], found["dist"]):
        assert Path(where).resolve().is_relative_to(site), where
        assert not Path(where).resolve().is_relative_to(ROOT), where
    statements = [path for path in under(files, "cypher") if path.suffix == ".cypher"]
    assert sorted(found["cypher"]) == sorted(path.name for path in statements)
    for path in statements:
        assert found["cypher"][path.name] == (ROOT / path).read_text(encoding="utf-8")
    assert found["statement"] == (ROOT / "cypher/schema.cypher").read_text(encoding="utf-8")
    data = sorted(path.name for path in under(files, "pegasus") if path.parent.name == "data")
    assert set(data) <= set(found["data"])
    assert found["prompt"] == (ROOT / "pegasus/prompts/extract.md").read_text(encoding="utf-8")


def test_pegasus_demo_runs_from_the_wheel_outside_the_repository(
    venv: Path, outside: tuple[Path, dict[str, str]]
) -> None:
    version = PYPROJECT["project"]["version"]
    assert in_venv(venv, outside, "pegasus", "--version").strip() == f"pegasus {version}"
    usage = in_venv(venv, outside, "pegasus", "--help")
    assert "demo" in usage and "doctor" in usage
    out = in_venv(venv, outside, "pegasus", "demo")
    assert "recorded model answers" in out
    assert "16 entities created" in out and "21 relations added" in out
    assert "[MEMORY]" in out and "-[REPORTS_TO]->" in out  # recall injected the memory
    assert "memories that were used got +15" in out
    assert "+180 days" in out and "(dormant)" in out


def test_pegasus_doctor_passes_from_the_wheel(
    venv: Path, outside: tuple[Path, dict[str, str]]
) -> None:
    report = json.loads(in_venv(venv, outside, "pegasus", "doctor", "--json"))
    statuses = {check["name"]: check["status"] for check in report["checks"]}
    assert statuses == {
        "config": "ok", "store": "ok", "embedding": "ok", "llm": "warning", "neo4j": "ok",
        "jobs": "ok",
    }  # fmt: skip
    store = report["checks"][1]["details"]["url"]
    assert store.startswith(f"sqlite:///{outside[1]['XDG_DATA_HOME']}/"), store
