"""``habitus redact [FILE|-]``: redact secrets from text or a JSONL transcript."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import click

from habitus.cli._common import counts
from habitus.errors import HabitusError


@click.command(name="redact")
@click.argument("source", default="-", type=click.Path(allow_dash=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(allow_dash=True, path_type=Path), default=None, help="Write here (atomically) instead of standard output.")
@click.option("--report", is_flag=True, help="Print counts by rule on standard error (never the secrets).")
@click.option("--json", "as_json", is_flag=True, help="With --report: print the counts as JSON on standard error.")
@click.option("--jsonl/--text", "jsonl", default=None, help="Treat the input as JSONL or plain text [default: detect].")
def redact(source: Path, output: Path | None, report: bool, as_json: bool, jsonl: bool | None) -> None:
    """Redact secrets from FILE (or standard input) and print the result.

    JSONL lines are decoded and every string redacted; a changed string is written back in
    place, so the rest of its line (and every unchanged line) stays byte for byte. With
    -o the file is replaced atomically and keeps its permissions. Streams: memory grows
    with the longest line, not with the file.
    """
    from habitus.redact.jsonl import redact_stream
    from habitus.render.files import file_mode

    stdin = str(source) == "-"
    try:
        in_fh = sys.stdin.buffer if stdin else open(source, "rb")  # noqa: SIM115
    except OSError as exc:
        raise HabitusError(f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        if output is not None and str(output) != "-":
            if output.is_dir():
                raise HabitusError(f"{output} is a folder; give a file name to write to")
            output.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
            try:
                with os.fdopen(fd, "wb") as out_fh:
                    found = redact_stream(in_fh, out_fh, jsonl=jsonl)
                os.chmod(tmp, file_mode(output))  # mkstemp's file is 0600
                os.replace(tmp, output)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        else:
            found = redact_stream(in_fh, sys.stdout.buffer, jsonl=jsonl)
            sys.stdout.buffer.flush()
    finally:
        if not stdin:
            in_fh.close()
    if report:
        if as_json:
            click.echo(json.dumps({"redactions": found, "total": sum(found.values())}), err=True)
        else:
            click.echo(f"redacted {sum(found.values())} secret(s): {counts(found)}", err=True)


COMMANDS = [redact]
