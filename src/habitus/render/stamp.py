"""The render stamp: a digest of everything a render depends on and produces, so a re-run can
tell without opening the store through SQLAlchemy that rendering would change nothing.

It covers the habitus version and the redaction rules (new rules re-check what is rendered),
the config keys that shape the output, the beliefs (count and newest change), the bytes of
``CLAUDE.md``, and the ledger folder (names, sizes, modification times of its Markdown
files). Any change to one of them, by habitus or by hand, makes the next run render.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from habitus.config import Config
from habitus.paths import claude_home

#: Config keys whose value changes what a render writes.
RENDER_KEYS = ("max_block_chars", "max_entry_chars", "language", "write_global_claude_md", "memory_dir")


def render_stamp(config: Config, beliefs_stamp: str) -> str:
    """SHA-256 hex over the render inputs and outputs (see module docstring)."""
    from habitus import __version__

    digest = hashlib.sha256(__version__.encode())
    for rules in sorted((Path(__file__).parents[1] / "redact").glob("*.toml")):
        digest.update(rules.read_bytes())
    digest.update(json.dumps({k: getattr(config, k) for k in RENDER_KEYS}, sort_keys=True).encode())
    digest.update(beliefs_stamp.encode())
    try:
        digest.update((claude_home() / "CLAUDE.md").read_bytes())
    except OSError:
        digest.update(b"\x00missing")
    ledger = config.ledger_dir()
    try:
        with os.scandir(ledger) as entries:
            listing = sorted(
                (e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries if e.name.endswith(".md") and e.is_file()
            )
    except OSError:
        listing = []
    digest.update(json.dumps(listing).encode())
    return digest.hexdigest()
