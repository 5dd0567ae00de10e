"""OpenAI Codex CLI / Desktop rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Formats: FORMATS.md section 2. Every line is either the current envelope
``{"timestamp", "type", "payload"}`` (2.2) or, in legacy files, a bare ``SessionMeta`` first
line followed by bare ``ResponseItem`` lines; the shape is detected per line.

Human text comes from ONE channel (FORMATS.md 2.4, 6.3):

* ``event_msg`` / ``user_message`` (``payload.message``) is the typed prompt. A file that has
  any such event uses only this channel: its user-role ``response_item`` messages are copies
  and are dropped as ``duplicate_channel``.
* Only a file without any ``user_message`` event (legacy files) falls back to user-role
  ``response_item`` messages, classified per ``input_text`` item. Whether a file has events
  is decided once per read: on the first user item met before any event, the file is scanned
  for ``"type":"user_message"`` bytes (stopping at the first hit). A per-turn fallback is not
  used: in the 0.104 Desktop sample, injected context items sit in turns of their own, and
  only the file-level rule keeps them out.

In both channels the injected fragments of FORMATS.md 2.5 (AGENTS.md, ``<environment_context>``,
``<skill>``, ``<user_shell_command>``, ``<turn_aborted>``, ``<subagent_notification>``,
``<additional_context>``, legacy ``<user_instructions>``) are stripped from the start of the
text (case-insensitive start marker, matching end marker), as is the IDE preamble
``# Context from my IDE setup: … ## My request for Codex:`` (``USER_MESSAGE_BEGIN`` in
``openai/codex`` ``protocol.rs``). ``<user_shell_command>`` becomes a ``bash`` event and
``turn_aborted`` an ``interrupt`` event (not kept). Developer messages, instructions,
``compacted`` lines (whose ``replacement_history`` repeats earlier prompts), assistant-channel
duplicates, tool calls and bookkeeping are dropped with a reason; unknown types are
``unknown_type``.

Turn ids of human text and events are content addresses anchored on the turn: the last
``"turn_id"`` seen before the line (newer versions), else the line's timestamp. Forks copy
earlier lines into a new file with new envelope timestamps but the original turn ids, so a
copied prompt keeps its id; see :func:`_content_id`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

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

AGENT = "codex"

#: ``rollout-2025-11-20T10-00-00-<uuid>.jsonl`` (or ``.jsonl.zst``): the uuid is the session.
_ROLLOUT_NAME = re.compile(r"^rollout-.*\.jsonl(?:\.zst)?$")
_UUID_TAIL = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(?:\.zst)?$"
)
#: Folder depth below ``sessions/`` searched for rollouts (``YYYY/MM/DD``; early versions
#: wrote them directly into ``sessions/``).
_MAX_DEPTH = 3

#: Byte checks of the pre-filter. Quotes inside JSON strings are escaped, so these match only
#: the structure of a line, never text quoted inside a prompt or a tool output.
_USER_MESSAGE = b'"user_message"'
#: Byte needles of the lines whose last occurrence before a human line the fast path needs:
#: turn ids, turn context (cwd) and session meta (line 1 is always looked at: legacy files
#: start bare).
_SESSION_META_NEEDLE = b'"session_meta"'
_CONTEXT_NEEDLES = (b'"turn_id"', b'"turn_context"', _SESSION_META_NEEDLE)
_USER_MESSAGE_EVENT = re.compile(rb'"type"\s*:\s*"user_message"')
_ROLE_USER = re.compile(rb'"role"\s*:\s*"user"')
_ROLE_ASSISTANT = re.compile(rb'"role"\s*:\s*"assistant"')
_SESSION_META = re.compile(rb'"type"\s*:\s*"session_meta"')
_TURN_CONTEXT = re.compile(rb'"type"\s*:\s*"turn_context"')
_TURN_ID = re.compile(rb'"turn_id"\s*:\s*"([^"\\]{1,200})"')
_CWD = re.compile(rb'"cwd"\s*:\s*"((?:[^"\\]|\\.)*)"')
#: The ``cwd`` of a ``turn_context`` line (``turn_id`` may precede it), for the backward scan.
_CONTEXT_CWD = re.compile(
    rb'"type"\s*:\s*"turn_context"\s*,\s*"payload"\s*:\s*\{'
    rb'(?:"turn_id"\s*:\s*"[^"\\]*"\s*,\s*)?"cwd"\s*:\s*"((?:[^"\\]|\\.)*)"'
)
_ID = re.compile(rb'"(?:id|session_id|sessionId)"\s*:\s*"([^"\\]{1,200})"')
_TYPE_KEY = re.compile(rb'"type"\s*:')
#: Keys after which a line may hold kilobytes of instructions: raw-byte field lookups stop
#: there, so ``base_instructions`` lines are never parsed in the fast path.
_BIG_KEYS = (
    b'"base_instructions"',
    b'"instructions"',
    b'"user_instructions"',
    b'"developer_instructions"',
)

#: Envelope kinds (FORMATS.md 2.2) other than the four handled in code, and their reason.
_ROLLOUT_REASONS = {
    "compacted": "compaction_summary",
    "world_state": "bookkeeping",
    "inter_agent_communication": "inter_agent",
    "inter_agent_communication_metadata": "inter_agent",
    "security_risk_score": "bookkeeping",
    "realtime_item": "bookkeeping",
}
_ENVELOPE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", *_ROLLOUT_REASONS}
)

#: ``response_item`` payload types other than ``message`` (FORMATS.md 2.3).
_ITEM_REASONS = {
    "reasoning": "reasoning",
    "function_call": "tool_use",
    "custom_tool_call": "tool_use",
    "local_shell_call": "tool_use",
    "web_search_call": "tool_use",
    "tool_search_call": "tool_use",
    "image_generation_call": "tool_use",
    "function_call_output": "tool_output",
    "custom_tool_call_output": "tool_output",
    "local_shell_call_output": "tool_output",
    "tool_search_output": "tool_output",
    "ghost_snapshot": "bookkeeping",
    "compaction": "compaction_summary",
    "compaction_summary": "compaction_summary",
    "other": "bookkeeping",
}
_ITEM_TYPES = frozenset({"message", *_ITEM_REASONS})

#: ``event_msg`` payload types other than ``user_message`` / ``turn_aborted`` (FORMATS.md 2.4).
_EVENT_REASONS = {
    "agent_message": "duplicate_channel",
    "agent_reasoning": "duplicate_channel",
    "agent_reasoning_raw_content": "duplicate_channel",
    "token_count": "bookkeeping",
    "task_started": "bookkeeping",
    "task_complete": "bookkeeping",
    "turn_started": "bookkeeping",
    "turn_complete": "bookkeeping",
    "context_compacted": "bookkeeping",
    "entered_review_mode": "bookkeeping",
    "exited_review_mode": "bookkeeping",
    "undo_started": "bookkeeping",
    "undo_completed": "bookkeeping",
    "thread_rolled_back": "bookkeeping",
    "plan_update": "bookkeeping",
    "turn_diff": "bookkeeping",
    "item_started": "bookkeeping",
    "item_completed": "bookkeeping",
    "error": "bookkeeping",
    "warning": "bookkeeping",
    "stream_error": "bookkeeping",
    "background_event": "bookkeeping",
    "deprecation_notice": "bookkeeping",
    "session_configured": "bookkeeping",
    "exec_command_begin": "tool_use",
    "exec_command_end": "tool_output",
    "exec_approval_request": "tool_use",
    "apply_patch_approval_request": "tool_use",
    "patch_apply_begin": "tool_use",
    "patch_apply_end": "tool_output",
    "mcp_tool_call_begin": "tool_use",
    "mcp_tool_call_end": "tool_output",
    "web_search_begin": "tool_use",
    "web_search_end": "tool_output",
    "view_image_tool_call": "tool_use",
}

#: Injected fragments (FORMATS.md 2.5, from ``contextual_user_message.rs``): lower-case start
#: marker, accepted end markers, and the kind reported. ``<user_shell_command_output>`` is the
#: second half of the older two-part shell record.
_FRAGMENTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("# agents.md instructions for", ("</instructions>",), "agents_md"),
    ("<environment_context>", ("</environment_context>",), "environment_context"),
    ("<skill>", ("</skill>",), "skill"),
    ("<user_shell_command>", ("</user_shell_command>",), "bash"),
    ("<user_shell_command_output>", ("</user_shell_command_output>",), "bash_output"),
    ("<turn_aborted>", ("</turn_aborted>",), "interrupt"),
    ("<subagent_notification>", ("</subagent_notification>",), "subagent_notification"),
    ("<additional_context>", ("</additional_context>",), "additional_context"),
    ("<user_instructions>", ("</user_instructions>",), "agents_md"),
)
#: The VS Code extension's preamble; the typed prompt follows the request marker.
_IDE_START = "# context from my ide setup:"
_IDE_REQUEST = "## my request for codex:"
_SHELL_COMMAND = re.compile(r"<command>\s*(.*?)\s*</command>", re.S | re.I)
_SHELL_INNER = re.compile(r"<user_shell_command>\s*(.*?)\s*</user_shell_command>", re.S | re.I)

#: ``user_message.kind`` values of injected context in versions that sent it as events.
_MESSAGE_KINDS = {"user_instructions": "agents_md", "environment_context": "environment_context"}

#: Markers compare ASCII case-insensitively, like Codex; ``str.lower`` could change lengths.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_SCAN_CHUNK = 1024 * 1024
_BACKSCAN_LIMIT = 8 * 1024 * 1024


def split_injected(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Strip the injected fragments at the start of ``text`` (FORMATS.md 2.5).

    Returns ``(rest, blocks)``: the text left after the fragments (stripped) and the removed
    fragments as ``(kind, block text)``. A fragment is a case-insensitive start marker plus
    its end marker: the whole text when the text ends with that end marker (Codex's own rule),
    else up to the first end marker. A start marker without any end marker is not a fragment.
    """
    blocks: list[tuple[str, str]] = []
    rest = text.strip()
    while rest:
        lowered = rest.translate(_ASCII_LOWER)
        if lowered.startswith(_IDE_START):
            at = lowered.find(_IDE_REQUEST)
            if at < 0:
                blocks.append(("ide_context", rest))
                return "", blocks
            cut = at + len(_IDE_REQUEST)
            blocks.append(("ide_context", rest[:cut]))
            rest = rest[cut:].strip()
            continue
        for start, ends, kind in _FRAGMENTS:
            if not lowered.startswith(start):
                continue
            whole = next((end for end in ends if lowered.endswith(end)), None)
            if whole is not None:
                blocks.append((kind, rest))
                return "", blocks
            found = [(lowered.find(end), end) for end in ends]
            hits = [(at, end) for at, end in found if at >= 0]
            if not hits:
                return rest, blocks
            at, end = min(hits)
            cut = at + len(end)
            blocks.append((kind, rest[:cut]))
            rest = rest[cut:].strip()
            break
        else:
            return rest, blocks
    return rest, blocks


def classify_text(text: str) -> tuple[str, str, str | None]:
    """Classify one user text (a ``user_message`` or one ``input_text`` item) as
    ``(kind, text, reason)``: ``human`` with the injected prefix removed, a ``bash`` event
    (text = the command) or ``interrupt`` event, or a dropped kind such as ``agents_md`` or
    ``environment_context`` (text unchanged)."""
    rest, blocks = split_injected(text)
    if rest:
        return "human", rest, None
    if not blocks:
        return "empty", text, "empty"
    for kind, block in blocks:
        if kind == "bash":
            found = _SHELL_COMMAND.search(block) or _SHELL_INNER.search(block)
            return "bash", (found.group(1).strip() if found else block), "event: shell command"
    kind = blocks[0][0]
    if kind == "interrupt":
        return "interrupt", text.strip(), "event: interrupted"
    return kind, text, kind


class CodexSource:
    """Reader for Codex rollout files (see module docstring)."""

    agent = AGENT

    def discover(self, home: Path) -> Iterator[TranscriptFile | Skipped]:
        """Yield every ``rollout-*.jsonl`` / ``.jsonl.zst`` under ``home/sessions`` (up to
        ``YYYY/MM/DD``, FORMATS.md 2.1) and directly under ``home/archived_sessions``.

        ``rel`` is relative to ``home``; ``session_hint`` is the uuid ending the file name;
        ``project`` is ``None`` (Codex keeps the project in ``cwd``). Folders are streamed
        with ``os.scandir``, symlinks are not followed, unreadable folders and files are
        yielded as :class:`Skipped` (``unreadable``), other files are ignored.
        """
        yield from self._walk(home, home / "sessions", _MAX_DEPTH)
        yield from self._walk(home, home / "archived_sessions", 0)

    def _walk(self, home: Path, folder: Path, depth: int) -> Iterator[TranscriptFile | Skipped]:
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
                    if depth > 0:
                        yield from self._walk(home, Path(entry.path), depth - 1)
                    continue
                if not _ROLLOUT_NAME.match(entry.name):
                    continue
                path = entry.path  # a str: a Path is built only when the file is read
                rel = _rel(home, path)
                try:
                    st = entry.stat()  # a symlinked file is followed; folders never are
                except OSError:
                    yield Skipped(AGENT, Path(path), rel, "unreadable")
                    continue
                if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block a read
                    yield Skipped(AGENT, Path(path), rel, "not_a_regular_file")
                    continue
                if not os.access(path, os.R_OK):
                    yield Skipped(AGENT, Path(path), rel, "unreadable")
                    continue
                found = _UUID_TAIL.search(entry.name)
                yield TranscriptFile(
                    AGENT,
                    path,
                    rel,
                    st.st_size,
                    st.st_mtime,
                    st.st_ino,
                    found.group(1) if found else None,
                    None,
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

        Each turn carries the session id (``session_meta`` payload ``id`` / ``session_id`` /
        ``thread.sessionId``, legacy bare ``id``, else ``file.session_hint``) and the current
        ``cwd`` (``session_meta``, updated by ``turn_context``). When the stream starts past
        byte 0 the file's first line is re-read to recover them. With ``context`` true,
        assistant ``output_text`` is yielded too (kind ``assistant``); with ``everything``
        true every line yields at least one turn.
        """
        yield from _Reader(stream, file, stats, everything, context).run()


class _Reader:
    """State of one read: session, cwd, current turn id, human-text channel."""

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
        self.meta_seen = False
        self.turn_id: str | None = None
        self.turn_id_seen = False
        self.context_seen = False
        self.cwd_recovered = False
        self.pending_context: bytes | None = None
        self.recovered: tuple[str | None, str | None] | None = None
        #: ``events`` (user_message is the channel), ``items`` (fallback) or unknown.
        self.channel: str | None = None

    def run(self) -> Iterator[Turn]:
        if self.stream.start_offset > 0:
            self._load_first_line()
        everything = self.everything
        context: list[bytes] = []
        if everything:
            lines = iter(self.stream)
        else:
            # Only lines that can matter are handed to Python at all (see LineStream.select):
            # the human channel is decided first, so only its lines are searched for; turn
            # ids, turn contexts and session metas are context (the last one before each
            # wanted line is all that counts). _wanted then decides as for every line.
            self.channel = "events" if _has_user_message_event(self.stream.path) else "items"
            needles: tuple[bytes, ...] = (_USER_MESSAGE,) if self.channel == "events" else (b'"user"',)
            needles += (b'"assistant"',) if self.want_assistant else ()
            context = list(_CONTEXT_NEEDLES)
            lines = self.stream.select(needles, first=True, context=context)
        for line_no, start, raw in lines:
            if self.meta_seen and _SESSION_META_NEEDLE in context:
                context.remove(_SESSION_META_NEEDLE)  # found: no backward search for it
            if b'"turn_id"' in raw:
                found = _last(_TURN_ID, raw)
                if found is not None:
                    self.turn_id = found.group(1).decode("utf-8", "replace")
                    self.turn_id_seen = True
            if not everything and not self._wanted(line_no, raw):
                continue
            obj = decode_line(raw, self.stats)
            if obj is None:
                if everything:
                    yield self._turn(line_no, start, raw, None, "broken", "broken_line", "")
                continue
            yield from self._line(line_no, start, raw, obj)

    # -- fast path -------------------------------------------------------------------------

    def _wanted(self, line_no: int, raw: bytes) -> bool:
        """Whether a line must be parsed when only human text (and context) is wanted. Lines
        carrying only session fields or ``cwd`` are consumed here without parsing."""
        if not self.meta_seen and (line_no == 1 or b'"session_meta"' in raw):
            if self._meta_from_raw(raw, line_no):
                return False
            if _SESSION_META.search(raw):
                return True  # fields not found before the instructions: parse it
        if _USER_MESSAGE in raw:
            return True
        if b'"user"' in raw and _ROLE_USER.search(raw):
            return self.channel != "events"
        if self.want_assistant and b'"assistant"' in raw and _ROLE_ASSISTANT.search(raw):
            return True
        if b'"turn_context"' in raw and _TURN_CONTEXT.search(raw):
            self.pending_context = raw
        return False

    def _meta_from_raw(self, raw: bytes, line_no: int) -> bool:
        """Read session id and cwd from a session-meta line's bytes, before any instructions
        key, without parsing it. ``False`` when the line is not one or the fields are not
        found there (the line is then parsed)."""
        head = _head(raw)
        if not _SESSION_META.search(head):
            if line_no != 1 or _TYPE_KEY.search(head):
                return False
        found = _ID.search(head)
        if found is None:
            return False
        self.meta_seen = True
        self.session = found.group(1).decode("utf-8", "replace")
        cwd = _raw_string(_CWD.search(head))
        if cwd is not None:
            self.cwd = cwd
        return True

    def _load_first_line(self) -> None:
        """Recover session id and cwd from the file's first line when reading from an offset."""
        try:
            with open_binary(self.stream.path) as fh:
                raw = fh.readline(MAX_LINE_BYTES)
        except OSError:
            return
        raw = raw.rstrip(b"\r\n")
        if not raw or self._meta_from_raw(raw, 1):
            return
        obj = decode_line(raw, ReadStats())
        if obj is not None and obj.get("type") in ("session_meta", None):
            self._meta_from_obj(obj)

    def _before_offset(self) -> tuple[str | None, str | None]:
        """``(turn_id, cwd)`` in force at the stream's start offset (scanned once)."""
        if self.recovered is None:
            self.recovered = _scan_before(self.stream.path, self.stream.start_offset)
        return self.recovered

    def _current_cwd(self) -> str | None:
        """The cwd in force: the last ``turn_context`` (parsed lazily from its bytes), else the
        one recovered from before the start offset, else the session's."""
        if (
            not self.context_seen
            and self.pending_context is None
            and not self.cwd_recovered
            and self.stream.start_offset > 0
        ):
            self.cwd_recovered = True
            cwd = self._before_offset()[1]
            if cwd is not None:
                self.cwd = cwd
        if self.pending_context is not None:
            self.context_seen = True
            raw, self.pending_context = self.pending_context, None
            cwd = _raw_string(_CWD.search(_head(raw)))
            if cwd is None:
                obj = decode_line(raw, ReadStats())
                payload = obj.get("payload") if obj else None
                value = payload.get("cwd") if isinstance(payload, dict) else None
                cwd = value if isinstance(value, str) else None
            if cwd is not None:
                self.cwd = cwd
        return self.cwd

    # -- line dispatch ---------------------------------------------------------------------

    def _line(self, line_no: int, start: int, raw: bytes, obj: dict[str, Any]) -> Iterator[Turn]:
        kind = obj.get("type")
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if "payload" in obj or kind in _ENVELOPE_TYPES:
            payload = obj.get("payload")
            if not isinstance(payload, dict):
                yield from self._drop(line_no, start, raw, ts, "malformed", "")
                return
            if kind == "session_meta":
                yield from self._session_meta(line_no, start, raw, ts, payload)
            elif kind == "turn_context":
                value = payload.get("cwd")
                self.context_seen = True
                self.pending_context = None
                if isinstance(value, str):
                    self.cwd = value
                yield from self._drop(line_no, start, raw, ts, "bookkeeping", "")
            elif kind == "response_item":
                yield from self._item(line_no, start, raw, ts, payload, bare=False)
            elif kind == "event_msg":
                yield from self._event(line_no, start, raw, ts, payload)
            elif isinstance(kind, str) and kind in _ROLLOUT_REASONS:
                yield from self._drop(
                    line_no, start, raw, ts, _ROLLOUT_REASONS[kind], _payload_text(payload)
                )
            else:
                yield from self._drop(line_no, start, raw, ts, "unknown_type", "")
            return
        if isinstance(kind, str) and kind in _ITEM_TYPES:
            yield from self._item(line_no, start, raw, ts, obj, bare=True)
        elif "record_type" in obj:
            yield from self._drop(line_no, start, raw, ts, "bookkeeping", "")
        elif kind is None and "id" in obj and (line_no == 1 or "instructions" in obj):
            yield from self._session_meta(line_no, start, raw, ts, obj)
        else:
            yield from self._drop(line_no, start, raw, ts, "unknown_type", "")

    def _session_meta(
        self, line_no: int, start: int, raw: bytes, ts: str | None, payload: dict[str, Any]
    ) -> Iterator[Turn]:
        if not self.meta_seen:
            self._meta_from_obj(payload)
        text = _instructions(payload)
        yield from self._drop(
            line_no, start, raw, ts, "instructions" if text else "bookkeeping", text
        )

    def _meta_from_obj(self, payload: dict[str, Any]) -> None:
        """Take session id and cwd from a session-meta payload (or a parsed first line)."""
        if isinstance(payload.get("payload"), dict):
            payload = payload["payload"]
        session = None
        thread = payload.get("thread")
        for value in (
            payload.get("id"),
            payload.get("session_id"),
            thread.get("sessionId") if isinstance(thread, dict) else None,
        ):
            if isinstance(value, str) and value:
                session = value
                break
        if session is None:
            return
        self.meta_seen = True
        self.session = session
        cwd = payload.get("cwd")
        if isinstance(cwd, str):
            self.cwd = cwd

    def _item(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        ts: str | None,
        item: dict[str, Any],
        *,
        bare: bool,
    ) -> Iterator[Turn]:
        itype = item.get("type")
        if itype != "message":
            reason = _ITEM_REASONS.get(itype) if isinstance(itype, str) else None
            yield from self._drop(
                line_no, start, raw, ts, reason or "unknown_type", _payload_text(item)
            )
            return
        role = item.get("role")
        if role == "user":
            yield from self._user_item(line_no, start, raw, ts, item, bare=bare)
        elif role == "assistant":
            if not self.want_assistant:
                return
            text = _content_text(item.get("content"))
            kind = "assistant" if text else "empty"
            self.stats.dropped[kind] += 1
            if not text and not self.everything:
                return  # only assistant text is context
            turn = self._turn(
                line_no, start, raw, ts, kind, "assistant text" if text else "empty", text
            )
            turn.role = "assistant"
            yield turn
        elif role == "developer":
            yield from self._drop(
                line_no, start, raw, ts, "developer", _content_text(item.get("content"))
            )
        elif role == "system":
            yield from self._drop(
                line_no, start, raw, ts, "system", _content_text(item.get("content"))
            )
        else:
            yield from self._drop(line_no, start, raw, ts, "unknown_type", "")

    def _user_item(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        ts: str | None,
        item: dict[str, Any],
        *,
        bare: bool,
    ) -> Iterator[Turn]:
        if self.channel is None:
            if bare or not _has_user_message_event(self.stream.path):
                self.channel = "items"
            else:
                self.channel = "events"
        content = item.get("content")
        if isinstance(content, str):
            content = [{"type": "input_text", "text": content}]
        if not isinstance(content, list) or not content:
            yield from self._drop(line_no, start, raw, ts, "empty", "", role="user")
            return
        for index, part in enumerate(content):
            reason: str | None
            if not isinstance(part, dict):
                kind, text, reason = "unknown_block", "", "unknown_block"
            else:
                ptype = part.get("type")
                value = part.get("text")
                if ptype in ("input_text", "text", "output_text") and isinstance(value, str):
                    kind, text, reason = classify_text(value)
                elif ptype in ("input_image", "image", "local_image"):
                    kind, text, reason = "image", "", "image"
                else:
                    kind, text, reason = "unknown_block", "", "unknown_block"
            if self.channel == "events" and kind in ("human", "interrupt"):
                # The user_message / turn_aborted event is the copy that counts.
                kind = reason = "duplicate_channel"
            yield from self._emit(line_no, start, raw, ts, kind, text, reason, index)

    def _event(
        self, line_no: int, start: int, raw: bytes, ts: str | None, payload: dict[str, Any]
    ) -> Iterator[Turn]:
        etype = payload.get("type")
        reason: str | None
        if etype == "user_message":
            self.channel = "events"
            message = payload.get("message")
            text = message if isinstance(message, str) else ""
            injected = _MESSAGE_KINDS.get(str(payload.get("kind")))
            if injected is not None:
                kind, reason = injected, injected
            else:
                kind, text, reason = classify_text(text)
                if kind == "empty" and (payload.get("images") or payload.get("local_images")):
                    kind = reason = "image"
            yield from self._emit(line_no, start, raw, ts, kind, text, reason, 0)
        elif etype == "turn_aborted":
            why = payload.get("reason")
            text = why if isinstance(why, str) and why else "interrupted"
            yield from self._emit(
                line_no, start, raw, ts, "interrupt", text, "event: interrupted", 0
            )
        else:
            drop = _EVENT_REASONS.get(etype) if isinstance(etype, str) else None
            yield from self._drop(
                line_no, start, raw, ts, drop or "unknown_type", _payload_text(payload)
            )

    # -- turns -----------------------------------------------------------------------------

    def _emit(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        ts: str | None,
        kind: str,
        text: str,
        reason: str | None,
        index: int,
    ) -> Iterator[Turn]:
        kept = kind == "human"
        if kept:
            self.stats.human_turns += 1
        else:
            self.stats.dropped[kind] += 1
        if not kept and not self.everything:
            return
        content_id = self._content_id(line_no, ts, kind, text) if kind in ("human", "bash", "interrupt") else None
        turn = self._turn(line_no, start, raw, ts, kind, reason, text, index=index, ident=content_id)
        turn.role = "user"
        turn.kept = kept
        yield turn

    def _drop(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        ts: str | None,
        reason: str,
        text: str,
        *,
        role: str = "system",
    ) -> Iterator[Turn]:
        self.stats.dropped[reason] += 1
        if self.everything:
            turn = self._turn(line_no, start, raw, ts, reason, reason, text)
            turn.role = "tool" if reason == "tool_output" else role
            yield turn

    def _content_id(self, line_no: int, ts: str | None, kind: str, text: str) -> str:
        """The id of human text and events: equal for the same message re-logged in another
        file (fork copies keep turn ids but get new timestamps), different otherwise.

        Anchor: the last ``turn_id`` before this line, recovered from the bytes before the
        stream's start offset when this read has not met one yet; else the line timestamp;
        else the session and line number (legacy items have no timestamp).
        """
        if not self.turn_id_seen and self.stream.start_offset > 0:
            self.turn_id = self._before_offset()[0]
        if self.turn_id is not None:
            return stable_id(AGENT, "turn", self.turn_id, kind, text)
        if ts is not None:
            return stable_id(AGENT, "ts", ts, kind, text)
        return stable_id(AGENT, "line", self._session(), line_no, kind, text)

    def _session(self) -> str:
        return self.session or self.file.session_hint or self.file.rel

    def _turn(
        self,
        line_no: int,
        start: int,
        raw: bytes,
        ts: str | None,
        kind: str,
        reason: str | None,
        text: str,
        *,
        index: int = 0,
        ident: str | None = None,
    ) -> Turn:
        """A turn for this line; its id is ``ident`` (a content address) or, by default, the
        file, line and block index."""
        return Turn(
            id=ident or stable_id(AGENT, self.file.rel, line_no, index),
            agent=AGENT,
            session_id=self._session(),
            path=self.file.rel,
            line=line_no,
            start=start,
            end=start + len(raw),
            uuid=None,
            timestamp=ts,
            cwd=self._current_cwd(),
            role="system",
            kind=kind,
            text=text,
            kept=False,
            reason=reason,
        )


def _head(raw: bytes) -> bytes:
    """The bytes of a line before its first (possibly huge) instructions key."""
    cut = len(raw)
    for key in _BIG_KEYS:
        at = raw.find(key, 0, cut)
        if at >= 0:
            cut = at
    return raw[:cut]


def _raw_string(found: re.Match[bytes] | None) -> str | None:
    """Decode the JSON string literal captured by ``found`` (escapes included)."""
    if found is None:
        return None
    try:
        value = orjson.loads(b'"' + found.group(1) + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _has_user_message_event(path: Path) -> bool:
    """Whether the file holds any ``user_message`` event, scanning its bytes in chunks and
    stopping at the first hit (also sees a last line still being written)."""
    overlap = b""
    size = 64 * 1024  # the first prompt is usually near the start: a small first read
    try:
        with open_binary(path) as fh:
            while True:
                chunk = fh.read(size)
                size = _SCAN_CHUNK
                if not chunk:
                    return False
                data = overlap + chunk
                if _USER_MESSAGE in data and _USER_MESSAGE_EVENT.search(data):
                    return True
                overlap = data[-64:]
    except OSError:
        return False


def _scan_before(path: Path, offset: int) -> tuple[str | None, str | None]:
    """The last ``"turn_id"`` value and the last ``turn_context`` cwd in the file's bytes
    before ``offset``, searched backwards in 1 MB chunks up to 8 MB. ``None`` for what is not
    found (and for compressed files, which cannot seek and do not grow)."""
    turn_id: str | None = None
    cwd: str | None = None
    if path.suffix == ".zst":
        return turn_id, cwd
    try:
        with open(path, "rb") as fh:
            pos = offset
            later = b""
            while pos > 0 and offset - pos < _BACKSCAN_LIMIT and (turn_id is None or cwd is None):
                low = max(0, pos - _SCAN_CHUNK)
                fh.seek(low)
                data = fh.read(pos - low) + later
                if turn_id is None:
                    found = _last(_TURN_ID, data)
                    if found is not None:
                        turn_id = found.group(1).decode("utf-8", "replace")
                if cwd is None:
                    cwd = _raw_string(_last(_CONTEXT_CWD, data))
                later = data[:4096]
                pos = low
    except OSError:
        pass
    return turn_id, cwd


def _last(pattern: re.Pattern[bytes], data: bytes) -> re.Match[bytes] | None:
    """The last match of ``pattern`` in ``data``."""
    last = None
    for last in pattern.finditer(data):  # noqa: B007 - keeps the last one
        pass
    return last


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [p.get("text") for p in content if isinstance(p, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def _instructions(payload: dict[str, Any]) -> str:
    value = payload.get("instructions")
    if isinstance(value, str) and value:
        return value
    base = payload.get("base_instructions")
    if isinstance(base, dict) and isinstance(base.get("text"), str):
        return base["text"]
    return base if isinstance(base, str) else ""


def _payload_text(payload: dict[str, Any]) -> str:
    """A readable text for a dropped payload (for ``inspect``), or ``""``."""
    for key in ("message", "text", "output", "arguments", "input"):
        value = payload.get(key)
        if isinstance(value, str):
            return value
    summary = payload.get("summary")
    if isinstance(summary, list):
        return _content_text(summary)
    return _content_text(payload.get("content"))


def read_path(path: Path, stats: ReadStats, *, everything: bool = True) -> Iterator[Turn]:
    """Read one Codex rollout by path (for ``inspect`` and tests), all of it."""
    st = path.stat()
    found = _UUID_TAIL.search(path.name)
    file = TranscriptFile(
        AGENT,
        path,
        path.name,
        st.st_size,
        st.st_mtime,
        st.st_ino,
        found.group(1) if found else None,
        None,
    )
    yield from CodexSource().read(LineStream(path, stats), file, stats, everything=everything)
