"""``habitus inspect PATH``: what habitus keeps and drops in one transcript, and why."""

from __future__ import annotations

from pathlib import Path

import click

from habitus.cli._common import counts, echo_json


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--agent", type=click.Choice(["claude", "codex", "droid"]), help="The transcript's agent [default: sniffed].")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of {line, uuid, role, kind, kept, reason, text}.")
@click.option("--kept", "only_kept", is_flag=True, help="Show only kept human turns.")
def inspect(path: Path, agent: str | None, as_json: bool, only_kept: bool) -> None:
    """Show every kept and dropped turn of one transcript (text redacted)."""
    from habitus.sources.inspect import inspect_path, turn_row

    turns, stats, found = inspect_path(path, agent=agent)
    rows = [turn_row(t) for t in turns if t.kept or not only_kept]
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        mark = "KEEP" if row["kept"] else "drop"
        text = " ".join(str(row["text"]).split())
        if len(text) > 100:
            text = text[:99] + "…"
        reason = "" if row["kept"] else f" ({row['reason']})"
        click.echo(f"{row['line']:>6} {mark} {row['kind']:<18}{reason} {text}")
    human = sum(1 for t in turns if t.kept)
    partial = any(t.line > stats.lines for t in turns)
    tail = " + 1 line without a final newline (distill waits until it is complete)" if partial else ""
    click.echo(
        f"\n{path.name}: {found}, {stats.lines:,} lines{tail}, {human} human turn(s); "
        f"dropped: {counts(dict(stats.dropped))}; bad lines: {counts(dict(stats.bad_lines))}"
    )


COMMANDS = [inspect]
