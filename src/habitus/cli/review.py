"""``habitus candidates``, ``approve``, ``reject``, ``revoke``."""

from __future__ import annotations

import click

from habitus.cli._common import echo_json


@click.command()
@click.option(
    "--status",
    "statuses",
    multiple=True,
    help="Only beliefs with this status (observed, proposed, approved, rejected, superseded, revoked, all); repeatable. "
    "[default: all but observed]",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def candidates(statuses: tuple[str, ...], as_json: bool) -> None:
    """List beliefs with their evidence (session, file, line, redacted excerpt)."""
    from habitus.review import list_candidates

    items = list_candidates([s for value in statuses for s in value.split(",") if s] or None)
    if as_json:
        echo_json(items)
        return
    if not items:
        click.echo(
            "No candidates with that status. After `habitus distill`, beliefs that still wait for "
            "more sessions are listed by `habitus candidates --status observed`."
        )
        return
    for item in items:
        flag = "explicit" if item["explicit"] else "inferred"
        click.echo(
            f"{item['id'][:8]}  [{item['status']}] {item['text']}\n"
            f"          {item['type']}, {item['scope']}, {flag}, {item['sessions']} session(s), confidence {item['confidence']}"
        )
        for e in item["evidence"][:3]:
            click.echo(f"          - {e['agent']}:{e['path']}:{e['line']}  “{e['excerpt'][:100]}”")
        if len(item["evidence"]) > 3:
            click.echo(f"          … and {len(item['evidence']) - 3} more")


def _decision(status: str, verb: str):  # type: ignore[no-untyped-def]
    @click.command(name=verb)
    @click.argument("ids", nargs=-1, required=True)
    @click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
    def command(ids: tuple[str, ...], as_json: bool) -> None:
        from habitus.review import decide

        outcome = decide(list(ids), status)
        if as_json:
            echo_json({"status": outcome.status, "changed": outcome.changed, "unchanged": outcome.unchanged, "block": outcome.block, "warnings": outcome.warnings})
            return
        for warning in outcome.warnings:
            click.secho(f"warning: {warning}", fg="yellow", err=True)
        for ident in outcome.changed:
            click.echo(f"{ident[:8]} {status}")
        for ident in outcome.unchanged:
            click.echo(f"{ident[:8]} already {status}")
        if outcome.block:
            state = "written" if outcome.block.get("written") else outcome.block.get("reason", "unchanged")
            click.echo(f"block: {outcome.block.get('after', 0):,} / {outcome.block.get('limit', 0):,} characters ({state})")

    command.help = {
        "approved": "Approve beliefs (by id, id prefix or name): they enter the CLAUDE.md block.",
        "rejected": "Reject beliefs: they never enter the block, and are not re-proposed without new explicit evidence.",
        "revoked": "Revoke approved beliefs: they leave the block; the history stays in the ledger.",
    }[status]
    return command


COMMANDS = [candidates, _decision("approved", "approve"), _decision("rejected", "reject"), _decision("revoked", "revoke")]
