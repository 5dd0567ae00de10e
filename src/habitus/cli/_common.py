"""Small helpers shared by the commands: JSON output, number formatting, agent option."""

from __future__ import annotations

import json
from typing import Any

import click

AGENT_CHOICES = ("claude", "codex", "droid", "all")


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, not ASCII-escaped)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def agents_option(value: str | None) -> list[str] | None:
    """``--agent`` value to a list of agents (``None`` = the config's, ``all`` = every one)."""
    if value is None or value == "all":
        return None if value is None else ["claude", "codex", "droid"]
    return [value]


def counts(mapping: dict[str, int]) -> str:
    """``a 3, b 1`` sorted by count, or ``none``."""
    if not mapping:
        return "none"
    items = sorted(mapping.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v:,}" for k, v in items)


def size(nbytes: int) -> str:
    """Bytes as a short human string (B, KB, MB, GB; 1 KB = 1000 bytes)."""
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{nbytes} B"
