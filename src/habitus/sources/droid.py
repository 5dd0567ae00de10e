"""Factory Droid sessions: ``$FACTORY_HOME/sessions/<slug>/<uuid>.jsonl``.

Format: FORMATS.md section 3, provisional (no real sample exists; third-party parsers agree
on it). The first line is ``{"type":"session_start","id","title","sessionTitle"?,"owner",
"cwd","version"?}``; then ``{"type":"message","id","timestamp","parentId"?,"message":{"role",
"content":[blocks]}}`` lines with Anthropic-style blocks (``text``, ``tool_use``,
``tool_result``, ``thinking``) and ``{"type":"todo_state",…}`` lines. The ``<uuid>.settings.json``
beside each transcript is not a transcript and is ignored.

Human text: user-role ``text`` blocks (or string content), classified with the Claude Code
rules (:func:`habitus.sources.claude_code.classify_text`), so ``<system-reminder>`` and the
other injected markers are dropped; ``tool_result`` blocks go through
:func:`habitus.sources.claude_code.rejection_reason`. Subagent sessions, whose title starts
with ``# Task Tool Invocation``, hold only agent-written prompts: the reader drops every turn
of such a file with reason ``sidechain``. Discovery does not open files to find them (it would
cost one open per file per run); the reader learns it from the first line, re-reading that
line when it starts from an offset.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from habitus.model import ReadStats, Turn, stable_id
from habitus.sources.base import (
    MAX_LINE_BYTES,
    LineStream,
    Skipped,
    TranscriptFile,
    decode_line,
    open_binary,
)
from habitus.sources.base import relative_posix as _rel
from habitus.sources.claude_code import block_role, classify_block
from habitus.sources.history import epoch_to_iso

AGENT = "droid"

#: Title prefix of a subagent (Task tool) session (FORMATS.md 3, [3p]).
SUBAGENT_TITLE = "# Task Tool Invocation"

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

#: Line types that never hold human text, and their reason.
_LINE_REASONS = {
    "session_start": "bookkeeping",
    "todo_state": "bookkeeping",
}

#: Byte checks of the pre-filter (quotes inside JSON strings are escaped, so these only match
#: the structure of a line).
_ROLE_USER = re.compile(rb'"role"\s*:\s*"user"')
_ROLE_ASSISTANT = re.compile(rb'"role"\s*:\s*"assistant"')


class DroidSource:
    """Reader for Factory Droid session transcripts (see module docstring)."""

    agent = AGENT

    def discover(self, home: Path) -> Iterator[TranscriptFile | Skipped]:
        """Yield every ``*.jsonl`` under ``home/sessions/<slug>/`` (``project`` = slug) and
        directly under ``home/sessions`` (``project`` = ``None``). ``home`` is the Factory
        folder (``~/.factory``, or ``FACTORY_HOME`` resolved by the caller). File names are
        not required to be UUIDs (the format is provisional); ``session_hint`` is the stem.
        ``*.settings.json`` and other files are ignored; symlinks are not followed;
        unreadable folders and files are yielded as :class:`Skipped` (``unreadable``)."""
        yield from self._folder(home, home / "sessions", None, descend=True)

    def _folder(
        self, home: Path, folder: Path, slug: str | None, *, descend: bool
    ) -> Iterator[TranscriptFile | Skipped]:
        try:
            entries = os.scandir(folder)
        except FileNotFoundError:
            return
        except OSError:
            yield Skipped(AGENT, folder, _rel(home, folder), "unreadable")
            return
        with entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if descend:
                        yield from self._folder(home, Path(entry.path), entry.name, descend=False)
                    continue
                if not entry.name.endswith(".jsonl"):
                    continue
                path = Path(entry.path)
                rel = _rel(home, path)
                try:
                    st = entry.stat()  # a symlinked file is followed; folders never are
                except OSError:
                    yield Skipped(AGENT, path, rel, "unreadable")
                    continue
                if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block a read
                    yield Skipped(AGENT, path, rel, "not_a_regular_file")
                    continue
                if not os.access(path, os.R_OK):
                    yield Skipped(AGENT, path, rel, "unreadable")
                    continue
                stem = entry.name[: -len(".jsonl")]
                yield TranscriptFile(
                    AGENT, path, rel, st.st_size, st.st_mtime, st.st_ino, stem, slug
                )

    def read(
        self,
        stream: LineStream,
        file: TranscriptFile,
        stats: ReadStats,
        *,
        everything: bool = False,
        context: bool = False,
    ) -> Iterator[Turn]:
        """Yield turns from ``stream`` (see :meth:`habitus.sources.base.Source.read`).

        Session id and ``cwd`` come from ``session_start`` (the file's first line, re-read when
        the stream starts past it), else ``file.session_hint``. With ``context`` true,
        assistant text is yielded too (kind ``assistant``, one turn per message line); with
        ``everything`` true every line yields at least one turn.
        """
        yield from _Reader(stream, file, stats, everything, context).run()


class _Reader:
    """State of one read: session fields from ``session_start`` and the subagent flag."""

    def __init__(
        self,
        stream: LineStream,
        file: TranscriptFile,
        stats: ReadStats,
        everything: bool,
        context: bool,
    ) -> None:
        self.stream = stream
        self.file = file
        self.stats = stats
        self.everything = everything
        self.want_assistant = everything or context
        self.session: str | None = None
        self.cwd: str | None = None
        self.started = False
        self.sidechain = False

    def run(self) -> Iterator[Turn]:
        if self.stream.start_offset > 0:
            self._load_first_line()
        for line_no, start, raw in self.stream:
            if not self.everything and not self._wanted(raw):
                continue
            obj = decode_line(raw, self.stats)
            if obj is None:
                if self.everything:
                    yield self._turn(line_no, start, raw, {}, "broken", "broken_line")
                continue
            yield from self._line(line_no, start, raw, obj)

    def _wanted(self, raw: bytes) -> bool:
        if not self.started and b'"session_start"' in raw:
            return True
        if self.sidechain:
            return False
        if b'"user"' in raw and _ROLE_USER.search(raw):
            return True
        return self.want_assistant and b'"assistant"' in raw and bool(_ROLE_ASSISTANT.search(raw))

    def _load_first_line(self) -> None:
        try:
            with open_binary(self.stream.path) as fh:
                raw = fh.readline(MAX_LINE_BYTES)
        except OSError:
            return
        obj = decode_line(raw.rstrip(b"\r\n"), ReadStats()) if raw.strip() else None
        if obj is not None and obj.get("type") == "session_start":
            self._start(obj)

    def _start(self, obj: dict[str, Any]) -> None:
        if self.started:
            return
        self.started = True
        session = obj.get("id")
        if isinstance(session, str) and session:
            self.session = session
        cwd = obj.get("cwd")
        if isinstance(cwd, str):
            self.cwd = cwd
        for key in ("title", "sessionTitle"):
            title = obj.get(key)
            if isinstance(title, str) and title.lstrip().startswith(SUBAGENT_TITLE):
                self.sidechain = True

    def _line(self, line_no: int, start: int, raw: bytes, obj: dict[str, Any]) -> Iterator[Turn]:
        kind = obj.get("type")
        if kind == "session_start":
            self._start(obj)
        if kind == "message":
            message = obj.get("message")
            if not isinstance(message, dict):
                yield from self._drop(line_no, start, raw, obj, "malformed")
                return
            role = message.get("role")
            if role == "user":
                yield from self._user(line_no, start, raw, obj, message.get("content"))
            elif role == "assistant":
                yield from self._assistant(line_no, start, raw, obj, message.get("content"))
            else:
                yield from self._drop(line_no, start, raw, obj, "system")
            return
        reason = _LINE_REASONS.get(kind) if isinstance(kind, str) else None
        yield from self._drop(line_no, start, raw, obj, reason or "unknown_type")

    def _user(
        self, line_no: int, start: int, raw: bytes, obj: dict[str, Any], content: Any
    ) -> Iterator[Turn]:
        blocks: list[Any]
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            blocks = []
        if not blocks:
            yield from self._drop(line_no, start, raw, obj, "empty")
            return
        for index, block in enumerate(blocks):
            kind, text, reason = classify_block(block)
            role = block_role(kind)
            if self.sidechain:
                kind = reason = "sidechain"
            kept = kind in ("human", "rejection")
            if kept:
                self.stats.human_turns += 1
            else:
                self.stats.dropped[kind] += 1
            if not kept and not self.everything:
                continue
            turn = self._turn(line_no, start, raw, obj, kind, reason, index=index, text=text)
            turn.role = role
            turn.kept = kept
            yield turn

    def _assistant(
        self, line_no: int, start: int, raw: bytes, obj: dict[str, Any], content: Any
    ) -> Iterator[Turn]:
        if not self.want_assistant:
            return
        texts: list[str] = []
        kinds: list[str] = []
        if isinstance(content, str):
            texts, kinds = [content], ["text"]
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kinds.append(str(block.get("type")))
                    if block.get("type") == "text" and isinstance(block.get("text"), str):
                        texts.append(block["text"])
        text = "\n".join(texts)
        if self.sidechain:
            kind, reason = "sidechain", "sidechain"
        elif text:
            kind, reason = "assistant", "assistant text"
        else:
            kind = kinds[0] if kinds else "empty"
            reason = f"assistant {'/'.join(kinds) or 'empty'}"
        self.stats.dropped[kind] += 1
        if kind != "assistant" and not self.everything:
            return  # only assistant text is context
        turn = self._turn(line_no, start, raw, obj, kind, reason, text=text)
        turn.role = "assistant"
        yield turn

    def _drop(
        self, line_no: int, start: int, raw: bytes, obj: dict[str, Any], reason: str
    ) -> Iterator[Turn]:
        self.stats.dropped[reason] += 1
        if self.everything:
            yield self._turn(line_no, start, raw, obj, reason, reason, text=_line_text(obj))

    def _turn(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        obj: dict[str, Any],
        kind: str,
        reason: str | None,
        *,
        index: int = 0,
        text: str = "",
    ) -> Turn:
        session = self.session or self.file.session_hint or self.file.rel
        uuid = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("id") else None
        if uuid is not None and obj.get("type") == "message":
            # Message ids are UUIDs in every parser we know of; scope anything else to the
            # session so short ids ("1", "2") cannot collide across sessions.
            ident = (
                stable_id(AGENT, uuid, index)
                if _UUID.match(uuid)
                else stable_id(AGENT, session, uuid, index)
            )
        else:
            uuid = None
            ident = stable_id(AGENT, self.file.rel, line_no, index)
        ts = obj.get("timestamp")
        timestamp = ts if isinstance(ts, str) else epoch_to_iso(ts, milliseconds=True)
        return Turn(
            id=ident,
            agent=AGENT,
            session_id=session,
            path=self.file.rel,
            line=line_no,
            start=start,
            end=start + len(raw),
            uuid=uuid,
            timestamp=timestamp,
            cwd=self.cwd,
            role="system",
            kind=kind,
            text=text,
            kept=False,
            reason=reason,
        )


def _line_text(obj: dict[str, Any]) -> str:
    for key in ("title", "sessionTitle"):
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return ""


def read_path(path: Path, stats: ReadStats, *, everything: bool = True) -> Iterator[Turn]:
    """Read one Droid session by path (for ``inspect`` and tests), all of it."""
    st = path.stat()
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
    file = TranscriptFile(AGENT, path, path.name, st.st_size, st.st_mtime, st.st_ino, stem, None)
    yield from DroidSource().read(LineStream(path, stats), file, stats, everything=everything)
