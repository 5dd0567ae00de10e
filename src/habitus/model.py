"""The records that flow through the pipeline: turns read from transcripts, and read stats.

One turn model serves every agent (Claude Code, Codex, Droid, prompt histories).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

#: Turn kinds whose text the human typed and the extractors may use as evidence.
HUMAN_KINDS = frozenset({"human", "rejection"})


def stable_id(*parts: object) -> str:
    """A 16-hex-character content address of ``parts`` (SHA-256, NUL-separated)."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def file_id(agent: str, rel: str) -> str:
    """The store id of a transcript file: a content address of agent and relative path."""
    return stable_id("file", agent, rel)


@dataclass(slots=True)
class Turn:
    """One unit read from a transcript: a content block, a merged assistant message, or a
    dropped line.

    ``id`` is stable and content-addressed: the same message re-logged in another file
    (resumed or forked session, history copy) gets the same id, so first-seen wins and a
    repeat never counts twice. ``line`` is the file's 1-based line number; ``start`` /
    ``end`` are the byte range ``[start, end)`` of that line (of the last merged line for
    ``end``). ``kind`` is ``human`` (typed prose) or ``rejection`` (a tool-rejection reason,
    also typed) for kept human text; anything else (``assistant``, ``meta``, ``tool_output``,
    ``command`` …) is context or dropped, with ``reason`` saying why. An assistant message
    split over several lines (FORMATS.md 1.5) is one turn: ``line`` is its first line,
    ``merged_lines`` the others, ``end_line`` the last.
    """

    id: str
    agent: str
    session_id: str
    path: str
    line: int
    start: int
    end: int
    uuid: str | None
    timestamp: str | None
    cwd: str | None
    role: str
    kind: str
    text: str
    kept: bool = False
    reason: str | None = None
    end_line: int | None = None
    merged_lines: tuple[int, ...] = ()
    language: str | None = None
    #: :func:`habitus.sources.history.prompt_key` of the redacted text, when the reader
    #: already took it (the pipeline takes it otherwise).
    text_key: str | None = None

    @property
    def is_human(self) -> bool:
        """True when the text was typed by the human and may be evidence."""
        return self.kept and self.kind in HUMAN_KINDS

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict of every field."""
        return {name: getattr(self, name) for name in self.__slots__}  # type: ignore[attr-defined]


@dataclass
class ReadStats:
    """What reading one or more files did. ``dropped`` counts turns by drop reason;
    ``bad_lines`` counts lines skipped as unreadable, by reason; bytes are bytes."""

    files: int = 0
    bytes_read: int = 0
    lines: int = 0
    turns: int = 0
    human_turns: int = 0
    duplicates: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    bad_lines: Counter[str] = field(default_factory=Counter)

    def add(self, other: ReadStats) -> None:
        """Add ``other``'s counts into this one."""
        self.files += other.files
        self.bytes_read += other.bytes_read
        self.lines += other.lines
        self.turns += other.turns
        self.human_turns += other.human_turns
        self.duplicates += other.duplicates
        self.dropped.update(other.dropped)
        self.bad_lines.update(other.bad_lines)
