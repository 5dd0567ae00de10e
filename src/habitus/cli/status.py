"""``habitus status``."""

from __future__ import annotations

import click

from habitus.cli._common import counts, echo_json


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(as_json: bool) -> None:
    """Show where habitus reads and writes, what it knows, and the block's budget."""
    from habitus.status import status as get_status

    s = get_status()
    if as_json:
        echo_json(s)
        return
    if s["llm"]["cap_hit"]:
        click.secho(
            f"LLM DAILY CAP HIT: {s['llm']['calls_today']} of max_calls_per_day={s['llm']['max_calls_per_day']} calls used today; "
            "unattended extraction is paused until tomorrow.",
            fg="red",
            bold=True,
        )
    p = s["paths"]
    click.echo(f"store:    {p['store']}")
    click.echo(f"config:   {p['config']}" + ("" if p["config_exists"] else " (not present: defaults)"))
    click.echo(f"ledger:   {p['ledger']}")
    for agent, info in s["agents"].items():
        click.echo(f"{agent + ':':<9} {info['home']}" + ("" if info["exists"] else " (not found)"))
    click.echo(f"beliefs:  {counts(s['beliefs'])}")
    click.echo(f"tracked:  {s['files']:,} transcript file(s), {s['turns']:,} human turn(s)")
    last = s["last_run"]
    click.echo(f"last run: {last['at']} ({last['new_human_turns']} new turns, {last['beliefs_new']} new beliefs)" if last else "last run: never")
    b = s["block"]
    if "error" in b:
        click.secho(f"block:    {b['error']}", fg="red")
    else:
        click.echo(f"block:    {b['chars']:,} / {b['limit']:,} characters in {b['path']}")
    click.echo(f"llm:      extractor {s['llm']['extractor']}, {s['llm']['calls_today']} / {s['llm']['max_calls_per_day']} calls today")


COMMANDS = [status]
