"""Prompt histories: ``~/.claude/history.jsonl`` and ``~/.codex/history.jsonl``.

These files hold one line per prompt the human submitted, and nothing else: no replies, no
tool output, no injected context (FORMATS.md 1.10 and 2.1). They are read by functions, not
:class:`~habitus.sources.base.Source` readers, because they are one file per agent rather
than one file per session.

The same prompt usually also appears in a transcript. The pipeline recognises the pair with
:func:`prompt_key`: a history turn and a transcript turn are the same prompt when they have
the same ``agent``, the same ``prompt_key(text)`` and timestamps within 10 minutes of each
other; only one of them is kept. Turn ids alone cannot do this, because the history file
has its own timestamps (epoch numbers, not the transcript's ISO strings).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.model import ReadStats, Turn, stable_id
from habitus.sources.base import LineStream, decode_line

#: ``Turn.path`` of every history turn (the file name, not the full path).
HISTORY_PATH = "history.jsonl"

#: A slash command: ``/name`` (letters, digits, ``_ - : .``) alone or followed by arguments.
#: A path such as ``/Users/me/x.py is broken`` is prose, not a command.
_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w:.-]*(?:\s|$)")


def prompt_key(text: str) -> str:
    """A normalised hash of a prompt: whitespace runs collapsed to one space, stripped,
    casefolded, then SHA-256, first 16 hex characters.

    Used to match a prompt in a history file with the same prompt in a transcript: the
    pipeline treats two turns as one when ``agent`` and ``prompt_key`` are equal and their
    timestamps are within 10 minutes.
    """
    normal = " ".join(text.split()).casefold()
    return hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def epoch_to_iso(value: Any, *, milliseconds: bool) -> str | None:
    """Convert an epoch number (``milliseconds`` or seconds) to ISO-8601 UTC with
    milliseconds and ``Z``, the form Claude and Codex transcripts use
    (``2026-06-05T04:58:20.653Z``). Digit strings are accepted; anything else, booleans and
    out-of-range values give ``None`` (FORMATS.md 6.13)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value) if value.strip() else None
        except ValueError:
            return None
    if not isinstance(value, int | float):
        return None
    try:
        if milliseconds:
            millis = value if isinstance(value, int) else round(value)
        else:
            millis = round(value * 1000)
        seconds, rest = divmod(millis, 1000)
        moment = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rest:03d}Z"


def read_claude_history(
    path: Path, stats: ReadStats, *, offset: int = 0, line: int = 0
) -> Iterator[Turn]:
    """Yield one turn per line of Claude Code's ``history.jsonl`` (FORMATS.md 1.10).

    Line shape: ``{"display", "pastedContents", "timestamp" (epoch ms), "project",
    "sessionId"?}``. ``display`` is the text; pasted text stays a placeholder (it was pasted,
    not typed). Slash commands (``/clear``) become kind ``command`` (not kept); other text
    kind ``human`` (kept). ``cwd`` is ``project``; ``session_id`` is ``sessionId`` or ``""``.

    Reading starts at byte ``offset`` (``line`` lines already read). The offset to resume
    from next time is ``offset`` plus the growth of ``stats.bytes_read`` during iteration,
    and the line count grows with ``stats.lines`` (a partial last line is left unread).
    """
    for line_no, start, raw in LineStream(path, stats, offset=offset, line=line):
        obj = decode_line(raw, stats)
        if obj is None:
            continue
        text = obj.get("display")
        session = obj.get("sessionId")
        project = obj.get("project")
        yield _history_turn(
            "claude",
            line_no,
            start,
            raw,
            stats,
            text=text if isinstance(text, str) else "",
            session=session if isinstance(session, str) else "",
            timestamp=epoch_to_iso(obj.get("timestamp"), milliseconds=True),
            cwd=project if isinstance(project, str) else None,
        )


def read_codex_history(
    path: Path, stats: ReadStats, *, offset: int = 0, line: int = 0
) -> Iterator[Turn]:
    """Yield one turn per line of Codex's ``history.jsonl`` (FORMATS.md 2.1).

    Line shape: ``{"session_id" or "conversation_id", "ts" (epoch seconds), "text"}``.
    Same rules, offsets and kinds as :func:`read_claude_history`; ``cwd`` is ``None`` (Codex
    does not record it here).
    """
    for line_no, start, raw in LineStream(path, stats, offset=offset, line=line):
        obj = decode_line(raw, stats)
        if obj is None:
            continue
        text = obj.get("text")
        session = obj.get("session_id")
        if not isinstance(session, str):
            session = obj.get("conversation_id")
        yield _history_turn(
            "codex",
            line_no,
            start,
            raw,
            stats,
            text=text if isinstance(text, str) else "",
            session=session if isinstance(session, str) else "",
            timestamp=epoch_to_iso(obj.get("ts"), milliseconds=False),
            cwd=None,
        )


def _history_turn(
    agent: str,
    line_no: int,
    start: int,
    raw: bytes,
    stats: ReadStats,
    *,
    text: str,
    session: str,
    timestamp: str | None,
    cwd: str | None,
) -> Turn:
    stripped = text.strip()
    if not stripped:
        kind, reason = "empty", "empty"
    elif _SLASH_COMMAND.match(stripped):
        kind, reason = "command", "event: slash command"
    else:
        kind, reason = "human", None
    kept = kind == "human"
    if kept:
        stats.human_turns += 1
    else:
        stats.dropped[kind] += 1
    return Turn(
        id=stable_id(agent, "history", session, timestamp, stripped),
        agent=agent,
        session_id=session,
        path=HISTORY_PATH,
        line=line_no,
        start=start,
        end=start + len(raw),
        uuid=None,
        timestamp=timestamp,
        cwd=cwd,
        role="user",
        kind=kind,
        text=stripped,
        kept=kept,
        reason=reason,
    )
