"""``habitus config``: every key, its default and its current value."""

from __future__ import annotations

import json

import click

from habitus.cli._common import echo_json


@click.command(name="config")
@click.option("--json", "as_json", is_flag=True, help="Print the keys as JSON.")
def config(as_json: bool) -> None:
    """Show every config key with its default, current value and meaning."""
    from habitus.config import config_keys, load_config
    from habitus.paths import config_path

    current = load_config()
    rows = [{"key": k, "default": d, "value": getattr(current, k), "help": h} for k, d, h in config_keys()]
    if as_json:
        echo_json({"path": str(config_path()), "keys": rows})
        return
    click.echo(f"# {config_path()}")
    for row in rows:
        mark = "" if row["value"] == row["default"] else f"   (default {json.dumps(row['default'], ensure_ascii=False)})"
        click.echo(f"{row['key']} = {json.dumps(row['value'], ensure_ascii=False)}{mark}\n    {row['help']}")


COMMANDS = [config]
