"""What several commands print or parse, in one place."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.table import Table

from pegasus.errors import ValidationError

if TYPE_CHECKING:
    from pegasus.results import Claim
    from pegasus.stores import Stats
    from pegasus.write.pipeline import IngestReport


def parse_when(value: str | None) -> datetime | None:
    """An ISO date or date-time from an option (naive ones are UTC)."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(f"--now {value!r} is not an ISO date or date-time") from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def summary_lines(report: IngestReport) -> list[str]:
    if report.unchanged:
        return [f"{report.conversation_id}: already ingested ({report.turns} turns), nothing new"]
    counts = [
        (len(report.created), "entities created"),
        (len(report.merged), "merged into known ones"),
        (len(report.relations_added), "relations added"),
        (len(report.reinforced), "reinforced"),
        (len(report.superseded), "superseded"),
        (len(report.flagged), "merges flagged for review"),
        (len(report.dropped), "notes"),
    ]
    lines = [
        f"{report.conversation_id}: {report.new_turns} new turns",
        "  " + ", ".join(f"{count} {label}" for count, label in counts),
    ]
    if report.cost.calls:
        lines.append(f"  cost: {report.cost.line()}")
    lines += [f"  merged {form!r} into {node}" for form, node in report.merged]
    lines += [f"  flagged: {line}" for line in report.flagged]
    lines += [f"  note: {line}" for line in report.dropped]
    return lines


def stats_table(stats: Stats) -> Table:
    table = Table(title="memory", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in (
        ("nodes", stats.nodes),
        ("edges", stats.edges),
        ("conversations", stats.conversations),
        ("dormant edges", stats.dormant),
        ("superseded edges", stats.superseded),
        ("expired edges", stats.expired),
        ("model calls", stats.cost.calls),
        ("prompt tokens", stats.cost.prompt_tokens),
        ("completion tokens", stats.cost.completion_tokens),
        ("model seconds", f"{stats.cost.seconds:.1f}"),
    ):
        table.add_row(label, str(value))
    for kind, count in sorted(stats.nodes_by_kind.items()):
        table.add_row(f"  {kind}", str(count))
    top = sorted(stats.edges_by_relation.items(), key=lambda item: (-item[1], item[0]))
    for relation, count in top[:15]:
        table.add_row(f"  {relation}", str(count))
    return table


def claim_line(claim: Claim) -> str:
    """A claim in two lines: the relation with strength, state and dates, then its words."""
    edge = claim.edge
    state = [] if claim.state == "live" else [claim.state]
    if edge.superseded_by:
        state = [f"superseded by {edge.superseded_by}"]
    return (
        f"{claim.source_name} -[{edge.relation}]-> {claim.target_name}  strength "
        f"{claim.strength:.1f}, {edge.stability.value}, heard {edge.created_at:%Y-%m-%d}, "
        f"last {edge.touched_at:%Y-%m-%d}"
        + (f"  ({'; '.join(state)})" if state else "")
        + f'\n    "{edge.snippet}"'
    )
