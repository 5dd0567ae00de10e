"""Incremental reading: per file, the consumed byte offset, line count, size, mtime, inode and
a fingerprint of the consumed prefix (seed 002 "Idempotency", seed 004 "byte-offset index").

* unchanged file (same size, mtime and inode): one ``stat``, no read;
* grown file whose consumed prefix still matches: read from the stored offset;
* rewritten or truncated file (fingerprint mismatch, smaller size): re-read from the start and
  say so; content-addressed turn ids keep a re-read from counting anything twice;
* only complete lines are consumed: a last line without a newline waits for the next run.

The fingerprint is SHA-256 over the consumed size and the first and last 64 KiB of the
consumed prefix, so checking a grown file reads at most 128 KiB of what was already read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from habitus.model import ReadStats, Turn, stable_id
from habitus.sources.base import LineStream, Source, TranscriptFile

_WINDOW = 64 * 1024


def file_id(agent: str, rel: str) -> str:
    """The store id of a transcript file: a content address of agent and relative path."""
    return stable_id("file", agent, rel)


def fingerprint(file: TranscriptFile, offset: int) -> str:
    """SHA-256 hex of ``offset`` and the first and last 64 KiB before ``offset``.

    Compressed (``.zst``) files are fingerprinted by their compressed size only: they are
    archives, rewritten whole when they change. Raises ``OSError`` when unreadable."""
    digest = hashlib.sha256(str(offset).encode())
    if file.path.suffix == ".zst":
        return digest.hexdigest()
    with open(file.path, "rb") as fh:
        digest.update(fh.read(min(_WINDOW, offset)))
        if offset > _WINDOW:
            tail_start = max(_WINDOW, offset - _WINDOW)
            fh.seek(tail_start)
            digest.update(fh.read(offset - tail_start))
    return digest.hexdigest()


@dataclass
class FilePlan:
    """How to read one file this run: ``status`` is ``new``, ``grown``, ``rewritten``,
    ``touched`` (metadata changed, content did not) or ``unchanged``; reading starts at byte
    ``offset`` after ``line`` lines."""

    file: TranscriptFile
    status: str
    offset: int
    line: int
    state: dict[str, Any] | None


def plan(file: TranscriptFile, state: Mapping[str, Any] | None) -> FilePlan:
    """Decide how to read ``file`` given its stored ``state`` (``None`` if never read)."""
    if state is None:
        return FilePlan(file, "new", 0, 0, None)
    state = dict(state)
    if state["size"] == file.size and state["mtime"] == file.mtime and state["inode"] == file.inode:
        return FilePlan(file, "unchanged", state["offset"], state["lines"], state)
    offset = int(state["offset"])
    if file.size < offset:
        return FilePlan(file, "rewritten", 0, 0, state)
    try:
        same = fingerprint(file, offset) == state["fingerprint"]
    except OSError:
        same = False
    if not same or file.path.suffix == ".zst":
        return FilePlan(file, "rewritten", 0, 0, state)
    if file.size == offset:
        return FilePlan(file, "touched", offset, state["lines"], state)
    return FilePlan(file, "grown", offset, state["lines"], state)


class IncrementalRead:
    """Reads the unread part of one file with ``source``; after iterating, :meth:`new_state`
    gives the row to store. ``stats`` accumulates counts (bytes are bytes)."""

    def __init__(self, source: Source, file_plan: FilePlan, stats: ReadStats, *, context: bool = False) -> None:
        self.source = source
        self.plan = file_plan
        self.stats = stats
        self.context = context
        self.stream = LineStream(file_plan.file.path, stats, offset=file_plan.offset, line=file_plan.line)

    def turns(self) -> Iterator[Turn]:
        """Turns of the complete lines after the stored offset (nothing when unchanged)."""
        if self.plan.status in ("unchanged", "touched"):
            return iter(())
        self.stats.files += 1
        return self.source.read(self.stream, self.plan.file, self.stats, context=self.context)

    def new_state(self, *, now: str, session_id: str | None) -> dict[str, Any] | None:
        """The ``files`` row after this read, or ``None`` when nothing changed."""
        file = self.plan.file
        if self.plan.status == "unchanged":
            return None
        offset, lines = self.stream.offset, self.stream.line
        old = self.plan.state or {}
        return {
            "id": file_id(file.agent, file.rel),
            "agent": file.agent,
            "path": file.rel,
            "session_id": session_id or old.get("session_id") or file.session_hint,
            "project": file.project,
            "size": max(file.size, offset),
            "mtime": file.mtime,
            "inode": file.inode,
            "offset": offset,
            "lines": lines,
            "fingerprint": fingerprint(file, offset) if offset else hashlib.sha256(b"0").hexdigest(),
            "first_read": old.get("first_read") or now,
            "last_read": now,
            "rereads": int(old.get("rereads") or 0) + (1 if self.plan.status == "rewritten" else 0),
        }
