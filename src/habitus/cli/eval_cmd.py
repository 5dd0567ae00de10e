"""``habitus eval``: score an extractor on a labelled corpus (``bench/make_eval.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from habitus.cli._common import echo_json


@click.command("eval")
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--extractor", type=click.Choice(["rules", "llm"]), default="rules", show_default=True, help="The extractor to score.")
@click.option("--model", help="The llm model for --extractor llm (e.g. gpt-4o-mini, claude-cli).")
@click.option("--max-calls", type=click.IntRange(min=0), help="Cap on LLM calls for this run [config max_calls_per_day].")
@click.option("--min-precision", type=click.FloatRange(0, 1), help="Exit 1 when precision is below this.")
@click.option("--min-recall", type=click.FloatRange(0, 1), help="Exit 1 when recall is below this.")
@click.option("--json", "as_json", is_flag=True, help="Print every metric and diagnosis as JSON.")
def eval_command(corpus: Path, extractor: str, model: str | None, max_calls: int | None, min_precision: float | None, min_recall: float | None, as_json: bool) -> None:
    """Run the real pipeline on CORPUS (a folder with home/ and gold.json) in a scratch
    habitus home and print precision, recall, F1, duplicates, false memories by trap kind
    and whether changed preferences were superseded. Your own transcripts and habitus
    state are never read or written."""
    from habitus.evaluate import evaluate

    result = evaluate(corpus, extractor=extractor, model=model, max_calls=max_calls)
    if as_json:
        echo_json(result)
    else:
        print_result(result)
    failed = []
    if min_precision is not None and result["precision"] < min_precision:
        failed.append(f"precision {result['precision']:.3f} < {min_precision}")
    if min_recall is not None and result["recall"] < min_recall:
        failed.append(f"recall {result['recall']:.3f} < {min_recall}")
    if failed:
        click.echo(f"habitus: eval below threshold: {'; '.join(failed)}", err=True)
        raise click.exceptions.Exit(1)


def print_result(r: dict[str, Any]) -> None:
    """Print an evaluation result for a person."""
    run = r["run"]
    click.echo(f"habitus eval {r['corpus']} (extractor {r['extractor']}{', model ' + r['model'] if r['model'] else ''}, seed {r['seed']})")
    for warning in run["warnings"]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    click.echo(f"  sessions:      {run['files_read']} read, {run['human_turns']} human turns, {run['candidates_found']} candidates")
    click.echo(f"  gold habits:   {r['habits']} planted, {r['expected']} expected to qualify" + (f" ({r['unreadable_statements']} statements in unreadable formats)" if r["unreadable_statements"] else ""))
    click.echo(f"  beliefs:       {r['beliefs']} ({r['qualified']} qualified), {r['matched']} habits matched, {r['duplicates']} duplicates")
    click.echo(f"  precision:     {r['precision']:.3f}")
    click.echo(f"  recall:        {r['recall']:.3f}")
    click.echo(f"  F1:            {r['f1']:.3f}")
    sup = r["supersession"]
    click.echo(f"  supersession:  {sup['handled']} of {sup['expected']} changed preferences handled")
    fm = r["false_memories"]
    click.echo("  false memories: " + (", ".join(f"{k} {v}" for k, v in fm.items()) if fm else "none"))
    tc = r["trap_candidates"]
    click.echo("  trap candidates (any status): " + (", ".join(f"{k} {v}" for k, v in tc.items()) if tc else "none"))
    click.echo(f"  type / scope agreement: {r['type_agreement']:.2f} / {r['scope_agreement']:.2f}")
    if r["extractor"] == "llm":
        click.echo(f"  llm:           {run['llm_calls']} call(s), {run['llm_input_chars']:,} input characters")
    for item in r["missed"]:
        click.echo(f"  missed:    {item['id']}: {item['rule']}")
    for item in r["unmatched"]:
        where = ", ".join(f"{e['file'].rsplit('/', 1)[-1][:12]}:{e['line']}" + (f" [{e['trap']}]" if e["trap"] else "") for e in item["evidence"][:3])
        click.echo(f"  unmatched: {item['text']} ({item['status']}; {where})")


COMMANDS = [eval_command]
