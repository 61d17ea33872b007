"""The markdown tables and PNG plots of a suite run.

    python -m bench.report [bench/results/suite.json]

For ``NAME.json`` writes ``NAME.md`` and the plots ``NAME-latency.png``,
``NAME-quality.png`` and ``NAME-cost.png`` beside it, and puts the tables into
docs/benchmarks.md between its ``NAME`` markers (``suite`` for ``make bench``,
``suite-full`` for ``make bench-full``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from bench.import_edges import RESULTS  # noqa: E402

DOCS = Path(__file__).parent.parent / "docs" / "benchmarks.md"
STORES = {"sqlite": "SQLite", "neo4j": "Neo4j"}
COLORS = {"sqlite": "tab:blue", "neo4j": "tab:orange"}
PRESET_STYLE = {"default": "-", "baseline": ":"}

SPEED = [
    ("keys", "keys", "{:,}"),
    ("recall p50 ms", "latency.p50_ms", "{}"),
    ("recall p95 ms", "latency.p95_ms", "{}"),
    ("cold start s", "cold_start_s", "{}"),
    ("commit batch s", "commit.total_s", "{}"),
    ("reinforce 100 ms", "reinforce_ms", "{}"),
    ("decay edges/s", "decay_edges_per_s", "{:,}"),
    ("import s", "import_s", "{}"),
    ("embed keys s", "keys_s", "{}"),
    ("recall process MB", "recall_process_mb", "{:,}"),
    ("bench process MB", "peak_rss_mb", "{:,}"),
    ("server peak MB", "server_peak_mb", "{:,}"),
    ("disk MB", "disk_mb", "{}"),
]
QUALITY = [
    ("by name", "found_name"),
    ("by alias", "found_alias"),
    ("by paraphrase", "found_paraphrase"),
    ("relevant lines", "relevant_lines"),
    ("negatives quiet", "negatives_quiet"),
    ("tokens per block", "tokens_per_block"),
    ("ms per recall", "recall_ms"),
    ("probes run", "probes"),
]


def field(row: dict, path: str) -> object:
    value: object = row
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def cell(value: object, fmt: str) -> str:
    return "" if value is None else fmt.format(value)


def tables(run: dict) -> str:
    rows = run["rows"]
    lines = [f"Run of {run['date']} on {run['machine']}.", ""]
    lines += ["| store | edges | " + " | ".join(name for name, _, _ in SPEED) + " |"]
    lines += ["|---" * (len(SPEED) + 2) + "|"]
    for row in rows:
        head = f"| {STORES[row['store']]} | {row['edges']:,} |"
        if "error" in row:
            lines.append(f"{head} unavailable: {row['error']} |" + " |" * (len(SPEED) - 1))
            continue
        lines.append(f"{head} " + " | ".join(cell(field(row, p), f) for _, p, f in SPEED) + " |")
    lines += ["", "| store | edges | recall | " + " | ".join(n for n, _ in QUALITY) + " |"]
    lines += ["|---" * (len(QUALITY) + 3) + "|"]
    for row in rows:
        for preset, figures in row.get("quality", {}).items():
            values = " | ".join(cell(figures.get(key), "{}") for _, key in QUALITY)
            lines.append(f"| {STORES[row['store']]} | {row['edges']:,} | {preset} | {values} |")
    return "\n".join(lines) + "\n"


def series(rows: list[dict], store: str, path: str) -> tuple[list[int], list[float]]:
    points = [(r["edges"], field(r, path)) for r in rows if r["store"] == store]
    points = [(x, y) for x, y in points if y is not None]
    return [x for x, _ in points], [y for _, y in points]


def plot(rows: list[dict], panels: list[tuple[str, list[tuple[str, str, str]], str]], out: Path):
    """One panel per (title, [(label, field path, line style)], y axis: log,
    share (0 to 1) or linear)."""
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, lines, y_axis) in zip(axes[0], panels, strict=True):
        for store in STORES:
            for label, path, style in lines:
                xs, ys = series(rows, store, path)
                if xs:
                    name = f"{STORES[store]} {label}".strip()
                    ax.plot(xs, ys, style, marker="o", color=COLORS[store], label=name)
        ax.set_xscale("log")
        if y_axis == "log":
            ax.set_yscale("log")
        elif y_axis == "share":
            ax.set_ylim(-0.03, 1.03)
        else:
            ax.set_ylim(bottom=0)
        ax.set_title(title)
        ax.set_xlabel("edges")
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


def plots(rows: list[dict], prefix: Path) -> None:
    rows = [r for r in rows if "error" not in r]
    plot(rows, [
        ("recall latency, ms", [("p50", "latency.p50_ms", "-"), ("p95", "latency.p95_ms", "--")],
         "log"),
        ("cold start of pegasus recall, s", [("", "cold_start_s", "-")], "linear"),
    ], Path(f"{prefix}-latency.png"))  # fmt: skip
    quality_panels = []
    for title, key in QUALITY[:3] + QUALITY[4:5]:
        lines = [(p, f"quality.{p}.{key}", style) for p, style in PRESET_STYLE.items()]
        quality_panels.append((title, lines, "share"))
    plot(rows, quality_panels, Path(f"{prefix}-quality.png"))
    plot(rows, [
        ("commit one batch, s", [("", "commit.total_s", "-")], "linear"),
        ("decay pass, edges/s", [("", "decay_edges_per_s", "-")], "log"),
        ("peak memory, MB", [("pegasus recall", "recall_process_mb", "-"),
                             ("bench process", "peak_rss_mb", ":")], "linear"),
    ], Path(f"{prefix}-cost.png"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, nargs="?", default=RESULTS / "suite.json")
    args = parser.parse_args()
    run = json.loads(args.results.read_text())
    text = tables(run)
    prefix = args.results.with_suffix("")
    prefix.with_suffix(".md").write_text(text)
    plots(run["rows"], prefix)
    name = re.escape(prefix.name)
    markers = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if DOCS.exists() and markers.search(DOCS.read_text()):
        DOCS.write_text(markers.sub(lambda m: m[1] + text + m[2], DOCS.read_text()))
    print(text)


if __name__ == "__main__":
    main()
