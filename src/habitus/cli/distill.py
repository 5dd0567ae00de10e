"""``habitus distill``: the main job."""

from __future__ import annotations

import sys
from typing import Any

import click

from habitus.cli._common import AGENT_CHOICES, agents_option, counts, echo_json, size


@click.command()
@click.option("--days", type=click.IntRange(min=1), help="Read transcripts modified in the last N days [config window_days, default 14].")
@click.option("--sessions", type=click.IntRange(min=1), help="Read at most N sessions, newest first [config max_sessions, default 20].")
@click.option("--agent", type=click.Choice(AGENT_CHOICES), help="Which agent's transcripts to read [default: all that exist].")
@click.option("--extractor", type=click.Choice(["rules", "llm"]), help="How to find habits [config extractor, default rules].")
@click.option("--model", help="The llm model for --extractor llm [config model].")
@click.option("--dry-run", is_flag=True, help="Do everything but write: no store, ledger or CLAUDE.md changes.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Name every skipped file.")
def distill(days: int | None, sessions: int | None, agent: str | None, extractor: str | None, model: str | None, dry_run: bool, as_json: bool, verbose: bool) -> None:
    """Read recent transcripts, find stable habits, update the ledger and the CLAUDE.md block.

    Re-running over unchanged files reads nothing and changes nothing.
    """
    from habitus.quick import DistillOptions, quick_distill

    options = DistillOptions(days=days, sessions=sessions, agents=agents_option(agent), extractor=extractor, model=model, dry_run=dry_run, verbose=verbose)
    quick = quick_distill(options)  # nothing to do: answered without importing the pipeline
    if quick is not None:
        if as_json:
            echo_json(quick.as_dict())
        else:
            print_report(quick.as_dict(), verbose=verbose)
        return
    from habitus.pipeline import distill as run

    progress = None
    bar: Any = None
    if not as_json and sys.stderr.isatty():
        from rich.progress import Progress

        # No refresh thread: the scan may fork worker processes, and forking while a thread
        # holds a lock can deadlock the child. The bar is refreshed on each event instead.
        bar = Progress(transient=True, auto_refresh=False)
        task_ids: dict[str, Any] = {}

        def progress(event: str, data: dict[str, Any]) -> None:
            if event == "scan":
                bar.start()
                task_ids["scan"] = bar.add_task("reading transcripts", total=data["total"] or 1)
            elif event == "file":
                bar.update(task_ids["scan"], completed=data["index"], refresh=True)
            elif event == "extract":
                bar.stop()

    try:
        report = run(options, progress=progress, checked=True)
    finally:
        if bar is not None:
            bar.stop()
    if as_json:
        echo_json(report.as_dict())
        return
    print_report(report.as_dict(), verbose=verbose)


def print_report(r: dict[str, Any], *, verbose: bool = False) -> None:
    """Print a distill report for a person."""
    title = "habitus distill" + (" (dry run: nothing written)" if r["dry_run"] else "")
    for warning in r["warnings"]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    click.echo(title)
    read = r["files_read"]
    scanned = sum(read.values())
    click.echo(f"  agents:      {', '.join(r['agents']) or 'none found'}")
    sessions = scanned - read.get("history", 0)
    parts = [f"{read.get(k, 0)} {k}" for k in ("new", "grown", "rewritten", "touched", "unchanged") if read.get(k)]
    click.echo(f"  sessions:    {sessions} scanned" + (f" ({', '.join(parts)})" if parts else ""))
    if read.get("history"):
        click.echo(f"  histories:   {read['history']} prompt history file(s) read")
    if r["rewritten"]:
        click.echo(f"  re-read:     {len(r['rewritten'])} rewritten or truncated file(s): {', '.join(r['rewritten'][:5])}")
    skipped = sum(r["skipped"].values())
    click.echo(f"  skipped:     {skipped} file(s)" + (f" ({counts(r['skipped'])})" if skipped else ""))
    if r["skipped"].get("quiet_window"):
        click.echo("               quiet_window: changed in the last few minutes (still being written?); read on a later run (config: quiet_minutes)")
    if verbose:
        for item in r["skipped_files"]:
            click.echo(f"                - {item['reason']}: {item['agent']}:{item['path']}")
    bad = sum(r["bad_lines"].values())
    click.echo(f"  read:        {size(r['bytes_read'])}, {r['lines_read']:,} lines; bad lines: {bad}" + (f" ({counts(r['bad_lines'])})" if bad else ""))
    click.echo(
        f"  turns:       {r['human_turns']:,} human ({r['new_human_turns']:,} new, {r['duplicate_turns']:,} repeats)"
        + (f", {r['excluded_turns']:,} in excluded projects" if r["excluded_turns"] else "")
    )
    if verbose:
        click.echo(f"  dropped:     {counts(r['dropped'])}")
    if r["redactions"]:
        click.echo(f"  redacted:    {sum(r['redactions'].values())} secret(s) ({counts(r['redactions'])})")
    rejected = sum(r["candidates_rejected"].values())
    click.echo(
        f"  candidates:  {r['candidates_found']} found, {rejected} rejected"
        + (f" ({counts(r['candidates_rejected'])})" if rejected else "")
    )
    click.echo(
        f"  beliefs:     {r['beliefs_new']} new, {r['beliefs_updated']} updated, {r['beliefs_qualified']} qualified, "
        f"{r['beliefs_approved']} auto-approved, {r['beliefs_superseded']} superseded"
    )
    if r["extractor"] == "llm":
        click.echo(f"  llm:         {r['llm_calls']} call(s), {r['llm_input_chars']:,} input characters" + (" (would send)" if r["dry_run"] else ""))
    block = r["block"]
    if block:
        state = "written" if block.get("written") else (block.get("reason") or ("refused" if block.get("refused") else "unchanged"))
        entries = block.get("entries", 0)
        click.echo(
            f"  block:       {block['before']:,} → {block['after']:,} / {block['limit']:,} characters, "
            f"{entries} entr{'y' if entries == 1 else 'ies'} ({state}) {block['path']}"
        )
        if block.get("backup"):
            click.echo(f"  backup:      {block['backup']}")
    if r["ledger"]:
        click.echo(f"  ledger:      {r['ledger']['path']} ({r['ledger']['written']} file(s) written)")


COMMANDS = [distill]
