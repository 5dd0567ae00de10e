"""``habitus inspect``: every kept and dropped turn of one transcript, with the reason.

The agent is taken from the path (a Codex ``rollout-*`` file, a Droid session) or sniffed
from the first lines; text is redacted before it is returned, like everything habitus shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from habitus.errors import SourceError
from habitus.model import ReadStats, Turn
from habitus.redact import redact
from habitus.sources import SOURCES
from habitus.sources.base import LineStream, TranscriptFile

#: Dropped turns' text is cut to this many characters in ``inspect`` output.
DROPPED_TEXT_CHARS = 500


def sniff_agent(path: Path) -> str:
    """Guess which agent wrote ``path`` from its name and first lines (FORMATS.md 6.8: the
    first line is not always a message, so up to 20 lines are looked at)."""
    name = path.name
    if name.startswith("rollout-"):
        return "codex"
    try:
        with open(path, "rb") as fh:
            head = [fh.readline(65536) for _ in range(20)]
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    blob = b"".join(head)
    if b'"session_meta"' in blob or (b'"payload"' in blob and b'"response_item"' in blob):
        return "codex"
    if b'"session_start"' in blob:
        return "droid"
    return "claude"


def inspect_path(path: Path, *, agent: str | None = None) -> tuple[list[Turn], ReadStats, str]:
    """Read all of ``path`` and return ``(turns, stats, agent)``: every line yields at least
    one turn; text is redacted, and dropped turns' text is cut to ``DROPPED_TEXT_CHARS``.

    Raises :class:`SourceError` when the file cannot be read or the agent is unknown, and
    :class:`ConfigError` for a bad config (``redact_emails`` is honoured).
    """
    if not path.exists():
        raise SourceError(f"{path}: no such file")
    if not path.is_file():
        raise SourceError(f"{path}: not a regular file")
    agent = agent or sniff_agent(path)
    source = SOURCES.get(agent)
    if source is None:
        raise SourceError(f"no reader for agent {agent!r} (known: {', '.join(SOURCES)})")
    st = path.stat()
    stem = path.name.split(".")[0]
    hint = stem[-36:] if len(stem) >= 36 else stem
    file = TranscriptFile(agent, path, path.name, st.st_size, st.st_mtime, st.st_ino, hint, path.parent.name)
    from habitus.config import load_config

    emails = load_config().redact_emails
    stats = ReadStats()
    turns: list[Turn] = []
    try:
        for turn in source.read(LineStream(path, stats, final=True), file, stats, everything=True):
            text = turn.text if turn.kept else turn.text[:DROPPED_TEXT_CHARS]
            turn.text = redact(text, pii=emails).text
            turns.append(turn)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    turns.sort(key=lambda t: t.line)  # split assistant messages are yielded when complete
    return turns, stats, agent


def turn_row(turn: Turn) -> dict[str, Any]:
    """The ``inspect --json`` shape of a turn: ``{line, uuid, role, kind, kept, reason, text}``
    plus ``id``, ``session_id``, ``timestamp`` and ``merged_lines`` (the other lines of an
    assistant message split over several lines)."""
    return {
        "line": turn.line,
        "uuid": turn.uuid,
        "role": turn.role,
        "kind": turn.kind,
        "kept": turn.kept,
        "reason": turn.reason,
        "text": turn.text,
        "id": turn.id,
        "session_id": turn.session_id,
        "timestamp": turn.timestamp,
        "merged_lines": list(turn.merged_lines),
    }
