"""The ledger: one Markdown file per belief plus ``INDEX.md`` (seed 000 step 4).

Each file has frontmatter ``name``, ``description``, ``metadata.type`` (seed 000) and
habitus's own ``metadata`` keys (``id``, ``status``, ``scope``, ``confidence``,
``sessions``); the body holds the rule, **Why** / **How to apply** for feedback and project
beliefs, and the evidence with session, line and redacted excerpt. ``INDEX.md`` lists
``- [Title](file.md) — hook`` lines inside habitus markers, so a user's own lines there are
kept. A file in the ledger folder that habitus did not write (no ``metadata.id``) is never
touched. Files are written only when their content changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.render.block import Region, find_region
from habitus.render.files import atomic_write, write_if_changed

INDEX_BEGIN = "<!-- BEGIN habitus index (auto-managed · do not edit between these markers) -->"
INDEX_END = "<!-- END habitus index -->"
_ID_LINE = re.compile(r"^\s+id:\s*([0-9a-f]{16})\s*$", re.M)

#: Statuses that get a ledger file; ``rejected`` beliefs are moved to ``archive/``.
RENDERED = ("proposed", "approved", "superseded", "revoked")
_HEADINGS = {
    "approved": "Active",
    "proposed": "Proposed (run `habitus approve ID` to activate)",
    "superseded": "Superseded",
    "revoked": "Revoked",
}


@dataclass
class LedgerWrite:
    """What rendering the ledger did: files written (changed), unchanged, archived."""

    directory: Path
    written: list[Path] = field(default_factory=list)
    unchanged: int = 0
    archived: list[Path] = field(default_factory=list)


def _yaml_str(value: str) -> str:
    # JSON strings are valid YAML scalars and escape everything that needs it.
    return json.dumps(value, ensure_ascii=False)


def _date(ts: str | None) -> str:
    return (ts or "")[:10] or "unknown date"


def why_text(belief: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]) -> str:
    """The **Why** line: the stored one, or an honest summary of the evidence."""
    if belief.get("why"):
        return str(belief["why"])
    sessions = len({(e["agent"], e["session_id"]) for e in evidence})
    dates = sorted(_date(e.get("timestamp")) for e in evidence)
    span = dates[0] if dates and dates[0] == dates[-1] else (f"{dates[0]} to {dates[-1]}" if dates else "")
    said = "stated it explicitly" if belief.get("explicit") else "asked for it"
    plural = "session" if sessions == 1 else "sessions"
    return f"You {said} in {sessions} {plural} ({span})."


def how_text(belief: Mapping[str, Any]) -> str:
    """The **How to apply** line: the stored one, or a rule derived from the belief's scope."""
    if belief.get("how_to_apply"):
        return str(belief["how_to_apply"])
    scope = str(belief.get("scope") or "global")
    where = "in every project" if scope == "global" else f"in {scope.split(':', 1)[-1]}"
    return f"Apply it {where} without being asked again; if a task seems to need an exception, ask first."


def render_belief(belief: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]], *, superseded_by: str | None = None) -> str:
    """The Markdown text of one belief's ledger file."""
    text = " ".join(str(belief["text"]).split())
    lines = [
        "---",
        f"name: {belief['slug']}",
        f"description: {_yaml_str(text)}",
        "metadata:",
        f"  type: {belief['type']}",
        f"  id: {belief['id']}",
        f"  status: {belief['status']}",
        f"  scope: {_yaml_str(str(belief['scope']))}",
        f"  confidence: {belief['confidence']}",
        f"  sessions: {belief['sessions']}",
        f"  explicit: {'true' if belief['explicit'] else 'false'}",
        f"  extractor: {belief['extractor']}",
        f"  created: {_date(belief['created_at'])}",
        "---",
        "",
        text,
        "",
    ]
    if belief["type"] in ("feedback", "project", "user"):
        lines += [f"**Why:** {why_text(belief, evidence)}", "", f"**How to apply:** {how_text(belief)}", ""]
    if belief["status"] == "superseded" and superseded_by:
        lines += [f"Superseded by [[{superseded_by}]] on {_date(belief['updated_at'])}.", ""]
    if belief["status"] in ("approved", "rejected", "revoked") and belief.get("decided_by"):
        lines += [f"Decision: {belief['status']} by {belief['decided_by']} on {_date(belief['decided_at'])}.", ""]
    lines.append("## Evidence")
    lines.append("")
    for e in evidence:
        where = f"{e['agent']} · session {str(e['session_id'])[:8]} · `{e['path']}` line {e['line']}"
        lines.append(f"- {_date(e.get('timestamp'))} · {where}: “{e['excerpt']}”")
    lines.append("")
    return "\n".join(lines)


def _owned_id(path: Path) -> str | None:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    found = _ID_LINE.search(head.split("\n---", 1)[0])
    return found.group(1) if found else None


def _remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files of ledger writes a killed run left (``.<name>.md.<random>.tmp``,
    see :func:`atomic_write`): the ledger is written under the distill lock, so none of them
    belongs to a write in progress."""
    for folder in (directory, directory / "archive"):
        for path in folder.glob(".*.md.*.tmp"):
            path.unlink(missing_ok=True)


def render_ledger(
    directory: Path,
    beliefs: Sequence[Mapping[str, Any]],
    evidence: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    backup_dir: Path,
) -> LedgerWrite:
    """Write one file per belief with a status in :data:`RENDERED` and the ``INDEX.md`` block.

    Raises :class:`habitus.errors.MarkerError` when ``INDEX.md`` has broken markers (nothing
    is written then) and ``OSError`` on write failures.
    """
    result = LedgerWrite(directory)
    index_path = directory / "INDEX.md"
    index_data = index_path.read_bytes() if index_path.exists() else b""
    _index_region(index_data, str(index_path))  # refuse early on broken markers
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(directory)
    slugs = {b["id"]: b["slug"] for b in beliefs}
    for belief in beliefs:
        path = directory / f"{belief['slug']}.md"
        owner = _owned_id(path) if path.exists() else belief["id"]
        if owner != belief["id"]:
            continue  # a file of the user's (or another belief's) with this name: leave it
        if belief["status"] not in RENDERED:
            if path.exists():
                # Archived with its final status and decision, then removed from the ledger.
                archive = directory / "archive"
                content = render_belief(belief, evidence.get(belief["id"], [])).encode("utf-8")
                write_if_changed(archive / path.name, content)
                path.unlink()
                result.archived.append(archive / path.name)
            continue
        stale = directory / "archive" / path.name
        if stale.exists() and _owned_id(stale) == belief["id"]:
            stale.unlink()  # back from rejected: the archived copy is history no longer
        content = render_belief(
            belief, evidence.get(belief["id"], []), superseded_by=slugs.get(belief.get("superseded_by") or "")
        ).encode("utf-8")
        written, _ = write_if_changed(path, content)
        if written:
            result.written.append(path)
        else:
            result.unchanged += 1
    index_block = render_index(beliefs)
    new_index = _splice_index(index_data, index_block)
    if new_index != index_data:
        write_if_changed(index_path, new_index, backup_dir=backup_dir if index_data else None)
        result.written.append(index_path)
    return result


def render_index(beliefs: Sequence[Mapping[str, Any]]) -> str:
    """The managed part of ``INDEX.md``: ``- [Title](file.md) — hook`` grouped by status."""
    lines = [INDEX_BEGIN, "# habitus ledger", ""]
    for status in ("approved", "proposed", "superseded", "revoked"):
        group = [b for b in beliefs if b["status"] == status]
        if not group:
            continue
        lines += [f"## {_HEADINGS[status]}", ""]
        for b in group:
            title = " ".join(str(b["text"]).split())
            hook = f"{b['type']}, {b['scope']}, {b['sessions']} session{'s' if b['sessions'] != 1 else ''}, id {b['id'][:8]}"
            lines.append(f"- [{title}]({b['slug']}.md) — {hook}")
        lines.append("")
    lines.append(INDEX_END)
    return "\n".join(lines)


def _index_region(data: bytes, name: str) -> Region | None:
    return find_region(data, name=name, begin=b"<!-- BEGIN habitus index", end=INDEX_END.encode())


def _splice_index(data: bytes, block: str) -> bytes:
    encoded = block.encode("utf-8")
    region = _index_region(data, "INDEX.md")
    if region is None:
        if not data:
            return encoded + b"\n"
        sep = b"\n" if data.endswith(b"\n") else b"\n\n"
        return data + sep + encoded + b"\n"
    return data[: region.start] + encoded + data[region.end :]


__all__ = ["LedgerWrite", "atomic_write", "render_belief", "render_index", "render_ledger"]
