"""What every transcript reader shares: the file record, streaming complete lines with byte
offsets, and tolerant JSON decoding that counts every line it cannot use.

Rules from FORMATS.md section 6: parse line by line; skip and count bad lines anywhere (partial
writes, two objects on one line, NUL bytes, lone surrogates, invalid UTF-8, huge lines); a last
line without a newline may still be being written, so it is left for the next run.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from habitus.model import ReadStats, Turn

#: Lines longer than this many bytes are skipped and counted (FORMATS.md 6.6: base64
#: screenshots reach 1 MB; 10 MB is the largest buffer other parsers needed).
MAX_LINE_BYTES = 10 * 1024 * 1024
_CHUNK = 1024 * 1024
#: Block size for :meth:`LineStream.select` (bytes).
_SELECT_BLOCK = 4 * 1024 * 1024
#: Bytes of a file's start that :meth:`LineStream.select` keeps (for fingerprints).
HELD_HEAD = 16 * 1024


class TranscriptFile:
    """A transcript found by discovery. ``rel`` is the path relative to the agent's home,
    with ``/`` separators; ``mtime`` is in seconds since the epoch; ``size`` in bytes.

    ``path`` may be given as a string: discovery does (building a :class:`~pathlib.Path`
    costs more than the ``stat`` of the file, and a re-run with nothing to do never needs
    one); it becomes a ``Path`` when first asked for."""

    __slots__ = ("agent", "_path", "rel", "size", "mtime", "inode", "session_hint", "project")

    def __init__(
        self,
        agent: str,
        path: Path | str,
        rel: str,
        size: int,
        mtime: float,
        inode: int,
        session_hint: str | None = None,
        project: str | None = None,
    ) -> None:
        self.agent = agent
        self._path = path
        self.rel = rel
        self.size = size
        self.mtime = mtime
        self.inode = inode
        self.session_hint = session_hint
        self.project = project

    @property
    def path(self) -> Path:
        """The file's path."""
        path = self._path
        if isinstance(path, str):
            path = self._path = Path(path)
        return path

    def _key(self) -> tuple[Any, ...]:
        return (self.agent, os.fspath(self._path), self.rel, self.size, self.mtime, self.inode, self.session_hint, self.project)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TranscriptFile) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"TranscriptFile(agent={self.agent!r}, path={os.fspath(self._path)!r}, rel={self.rel!r}, size={self.size})"

    def __getstate__(self) -> tuple[Any, ...]:  # for the reading workers
        return self._key()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (self.agent, self._path, self.rel, self.size, self.mtime, self.inode, self.session_hint, self.project) = state


@dataclass(slots=True)
class Skipped:
    """A file discovery left out, with the reason counted in the report."""

    agent: str
    path: Path
    rel: str
    reason: str


def relative_posix(home: Path, path: Path | str) -> str:
    """``path`` relative to the agent's ``home`` with ``/`` separators (``Turn.path``,
    evidence ``path``); the whole path when it is not under ``home``."""
    base, full = os.fspath(home).rstrip(os.sep), os.fspath(path)
    if full.startswith(base + os.sep):  # string work: discovery calls this for every file
        rest = full[len(base) + 1 :]
        return rest if os.sep == "/" else rest.replace(os.sep, "/")
    return Path(full).as_posix()


class Source(Protocol):
    """One agent's transcript format. Implementations live in one module each and are listed
    in :data:`habitus.sources.SOURCES`."""

    agent: str

    def discover(self, home: Path) -> Iterator[TranscriptFile | Skipped]:
        """Yield every transcript under ``home`` (and every file skipped, with a reason)."""
        ...

    def read(
        self,
        stream: LineStream,
        file: TranscriptFile,
        stats: ReadStats,
        *,
        everything: bool = False,
        context: bool = False,
    ) -> Iterator[Turn]:
        """Yield the turns of the complete lines of ``stream``. With ``everything`` false, only
        kept human turns (plus assistant text when ``context`` is true) are yielded, and lines
        that cannot hold them may be skipped unparsed; with it true (``inspect``), every line
        yields at least one turn, dropped ones with a reason."""
        ...


def open_binary(path: Path) -> IO[bytes]:
    """Open a transcript for binary reading; ``.zst`` files are decompressed as a stream."""
    if path.suffix == ".zst":
        import io

        import zstandard

        raw = open(path, "rb")  # noqa: SIM115 - closed through the wrapper
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=_CHUNK)  # type: ignore[arg-type]
    return open(path, "rb", buffering=_CHUNK)  # noqa: SIM115


class LineStream:
    """Complete lines of a file from byte ``offset`` on, as ``(line_no, start, raw)``.

    ``line_no`` is 1-based and continues from ``line`` (the number of lines before
    ``offset``). ``raw`` excludes the newline. After iteration, :attr:`offset` and
    :attr:`line` point just past the last complete line: a trailing partial line is not
    consumed. Lines over ``max_line`` bytes are skipped without being held in memory and
    counted in ``stats.bad_lines['line_too_long']``. Compressed files cannot seek, so the
    prefix is decompressed and discarded. With ``final`` (``habitus inspect``) a trailing
    partial line is yielded too, without being counted as consumed.
    """

    def __init__(
        self,
        path: Path,
        stats: ReadStats,
        *,
        offset: int = 0,
        line: int = 0,
        max_line: int = MAX_LINE_BYTES,
        final: bool = False,
    ) -> None:
        self.final = final
        self.path = path
        self.stats = stats
        self.offset = offset
        self.line = line
        self.max_line = max_line
        self.start_offset = offset
        self._newlines = 0  # set by _matches: lines in the block just searched
        #: File bytes :meth:`select` still holds, as (file offset, bytes): the start of the
        #: file, the last block read and the end of the one before (see :meth:`held`).
        self._head: list[tuple[int, bytes]] = []
        self._recent: list[tuple[int, bytes]] = []

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        stats = self.stats
        first_offset, first_line = self.offset, self.line
        pos, number = self.offset, self.line
        limit = self.max_line + 1
        try:
            with open_binary(self.path) as fh:
                if pos:
                    if self.path.suffix == ".zst":
                        _discard(fh, pos)
                    else:
                        fh.seek(pos)
                readline = fh.readline
                while True:
                    raw = readline(limit)
                    if raw[-1:] != b"\n":
                        if not raw or len(raw) < limit:
                            if raw and self.final:  # inspect: show it, but never consume it
                                yield number + 1, pos, raw
                            break  # end of file, or a partial last line: left for the next run
                        size = _skip_rest(fh, len(raw))
                        if size < 0:
                            break  # an over-long line still being written; retried next run
                        pos += size
                        number += 1
                        self.offset, self.line = pos, number
                        stats.bad_lines["line_too_long"] += 1
                        continue
                    start = pos
                    pos += len(raw)
                    number += 1
                    self.offset, self.line = pos, number
                    yield number, start, raw[:-2] if raw[-2:] == b"\r\n" else raw[:-1]
        finally:
            stats.bytes_read += self.offset - first_offset
            stats.lines += self.line - first_line


    def select(
        self,
        needles: tuple[bytes, ...],
        *,
        first: bool = False,
        context: Sequence[bytes] = (),
        accept: Callable[[bytes, int, int], bool] | None = None,
    ) -> Iterator[tuple[int, int, bytes]]:
        """Like iterating, but yield only the lines that contain one of ``needles`` (and line
        1 when ``first``), in file order. The file is read in large blocks searched in one
        pass (``bytes.find`` for one needle, a google-re2 alternation for several), so a line
        without a needle costs no Python work at all.

        ``context`` needles are for state a reader tracks between the lines it wants (a
        current turn id, a current working directory): of the lines holding a context needle,
        only the last one before each yielded line, and the last one before the end of each
        block, are yielded too (backward searches that stop at the nearest hit). A reader
        that keeps "the last value seen" therefore sees, at every wanted line, exactly the
        value a full read would give. ``context`` is read afresh for every search, so a
        reader may drop a needle it no longer needs (a rare needle costs a backward pass).

        ``accept(buf, start, stop)``, when given, is asked about each line holding a needle
        (``buf[start:stop]``, without the newline) before it is copied out of the block: a
        line it refuses is passed over as if it held no needle.

        ``offset``, ``line`` and the stats end exactly as after a full iteration (over-long
        lines are counted, a partial last line is left for the next run)."""
        stats = self.stats
        first_offset, first_line = self.offset, self.line
        base, number = self.offset, self.line  # file offset and line count where `rest` starts
        limit = self.max_line
        search = needle_search(needles)
        rest = b""  # the start of a line the previous block cut off
        skipping = False  # inside an over-long line whose start was dropped
        try:
            with open_binary(self.path) as fh:
                if base:
                    if self.path.suffix == ".zst":
                        _discard(fh, base)
                    else:
                        fh.seek(base)
                at = base  # file offset of the next block
                compressed = self.path.suffix == ".zst"
                while True:
                    block = fh.read(_SELECT_BLOCK)
                    if not block:
                        break
                    if not compressed:
                        if at == 0:
                            self._head = [(0, block[:HELD_HEAD])]
                        # The block before keeps only its last HELD_HEAD bytes (the window
                        # before a line end near the start of this block).
                        kept = []
                        if self._recent:
                            before_at, before = self._recent[-1]
                            tail = before[-HELD_HEAD:]
                            kept.append((before_at + len(before) - len(tail), tail))
                        self._recent = [*kept, (at, block)]
                    at += len(block)
                    begin = 0  # where this block's unprocessed bytes start
                    if skipping or rest:
                        cut = block.find(b"\n")
                        if cut < 0:
                            if skipping:
                                base += len(block)
                            else:
                                rest += block
                                if len(rest) > limit:
                                    skipping, base, rest = True, base + len(rest), b""
                            continue
                        if skipping:  # the end of an over-long line: count it, drop it
                            base += cut + 1
                            number += 1
                            stats.bad_lines["line_too_long"] += 1
                            skipping = False
                        else:  # the cut line, whole: searched on its own (a small copy)
                            line = rest + block[: cut + 1]
                            yield from self._matches(line, 0, len(line) - 1, base, number, search, context, first and number == 0, accept)
                            base += len(line)
                            number += self._newlines
                            rest = b""
                        self.offset, self.line = base, number
                        begin = cut + 1
                    end = block.rfind(b"\n", begin)
                    if end >= 0:
                        # Search the block in place (no copy): block[i] is at file offset
                        # base + i - begin.
                        yield from self._matches(block, begin, end, base - begin, number, search, context, first and number == 0, accept)
                        number += self._newlines
                        base += end + 1 - begin
                        self.offset, self.line = base, number
                        begin = end + 1
                    rest = block[begin:]
                    if len(rest) > limit:
                        skipping, base, rest = True, base + len(rest), b""
        finally:
            stats.bytes_read += self.offset - first_offset
            stats.lines += self.line - first_line

    def held(self, start: int, stop: int) -> bytes | None:
        """File bytes ``[start, stop)`` if :meth:`select` still holds them in memory (the
        first ``HELD_HEAD`` bytes of the file, the last block it read and the last
        ``HELD_HEAD`` bytes of the one before), else ``None``: lets a caller fingerprint what
        was read without reading it again."""
        if start < 0 or stop < start:
            return None
        parts: list[bytes] = []
        pos = start
        for offset, data in (*self._head, *self._recent):
            if offset <= pos < offset + len(data):
                take = data[pos - offset : stop - offset]
                parts.append(take)
                pos += len(take)
                if pos >= stop:
                    return b"".join(parts)
        return b"" if start == stop else None

    def _matches(
        self,
        buf: bytes,
        begin: int,
        end: int,
        base: int,
        number: int,
        search: Callable[[bytes, int, int], int],
        context: Sequence[bytes],
        first: bool,
        accept: Callable[[bytes, int, int], bool] | None = None,
    ) -> Iterator[tuple[int, int, bytes]]:
        """The wanted lines of ``buf[begin : end + 1]`` (complete lines) in order; ``base +
        i`` is the file offset of ``buf[i]``. Afterwards ``self._newlines`` holds the number
        of lines in that range (counted once)."""
        counted, line = begin, number  # ``line`` lines lie before buf[counted]
        covered = begin  # lines before this offset were already searched for context
        pos = begin
        if first:
            stop = buf.find(b"\n", begin, end + 1)
            yield from self._line_at(buf, begin, stop, base, line)
            covered = pos = stop + 1
        while True:
            at = search(buf, pos, end) if pos < end else -1
            if at < 0:
                start = stop = end + 1
            else:
                start = buf.rfind(b"\n", 0, at) + 1
                stop = buf.find(b"\n", at, end + 1)
                if accept is not None and stop - start <= self.max_line and not accept(buf, start, stop - (buf[stop - 1] == 13)):
                    pos = stop + 1  # refused: as if it held no needle
                    continue
            if context:
                for ctx in sorted(_last_lines(buf, context, covered, start)):
                    line += _newlines(buf, counted, ctx)
                    counted = ctx
                    yield from self._line_at(buf, ctx, buf.find(b"\n", ctx, end + 1), base, line)
            if at < 0:
                break
            line += _newlines(buf, counted, start)
            counted = start
            yield from self._line_at(buf, start, stop, base, line)
            covered = pos = stop + 1
        self._newlines = line - number + _newlines(buf, counted, end + 1)

    def _line_at(self, buf: bytes, start: int, stop: int, base: int, before: int) -> Iterator[tuple[int, int, bytes]]:
        """Yield the line ``buf[start:stop]`` (``before`` lines precede it) unless over-long."""
        if stop - start > self.max_line:
            self.stats.bad_lines["line_too_long"] += 1
            return
        raw = buf[start:stop]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        yield before + 1, base + start, raw


def _newlines(buf: bytes, start: int, end: int) -> int:
    """The number of newlines in ``buf[start:end]``. A loop of ``bytes.find`` (``memchr``)
    runs at several GB/s on transcript lines, where ``bytes.count`` manages under two."""
    count = 0
    find = buf.find
    at = find(b"\n", start, end)
    while at >= 0:
        count += 1
        at = find(b"\n", at + 1, end)
    return count


def _last_lines(buf: bytes, needles: Sequence[bytes], low: int, high: int) -> set[int]:
    """Start offsets of the last line in ``buf[low:high]`` (whole lines) holding each needle."""
    starts = set()
    for needle in needles:
        hit = buf.rfind(needle, low, high)
        if hit >= 0:
            starts.add(buf.rfind(b"\n", 0, hit) + 1)
    return starts


@functools.lru_cache(maxsize=64)
def needle_search(needles: tuple[bytes, ...]) -> Callable[[bytes, int, int], int]:
    """A function ``(buf, pos, endpos) -> index`` of the first needle in ``buf[pos:endpos]``
    (``-1`` when none): ``bytes.find`` for one needle; for several, one pass of a google-re2
    alternation (linear time), instead of a pass per needle."""
    if len(needles) == 1:
        needle = needles[0]
        return lambda buf, pos, endpos: buf.find(needle, pos, endpos)
    import re2

    pattern = re2.compile(b"|".join(re2.escape(n) for n in needles))
    # google-re2's low-level matcher returns spans without building a match object (a few
    # microseconds per call saved); the public API is the fallback if it ever goes away.
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    match = getattr(getattr(pattern, "_regexp", None), "Match", None)
    if anchor is not None and match is not None:
        return lambda buf, pos, endpos: match(anchor, buf, pos, endpos)[0][0]

    def find(buf: bytes, pos: int, endpos: int) -> int:
        found = pattern.search(buf, pos, endpos)
        return -1 if found is None else found.start()

    return find


def _skip_rest(fh: IO[bytes], size: int) -> int:
    """Discard the rest of an over-long line; its total size in bytes, or -1 at end of file."""
    while True:
        more = fh.readline(_CHUNK)
        if not more:
            return -1
        size += len(more)
        if more.endswith(b"\n"):
            return size


def _discard(fh: IO[bytes], count: int) -> None:
    while count > 0:
        got = fh.read(min(count, _CHUNK))
        if not got:
            return
        count -= len(got)


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_BOM = b"\xef\xbb\xbf"


def _clean(value: Any) -> Any:
    """Replace lone surrogates in every string of a decoded JSON value (FORMATS.md 6.5)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def decode_line(raw: bytes, stats: ReadStats) -> dict[str, Any] | None:
    """Decode one JSONL line into a dict, or count why not and return ``None``.

    Reasons counted in ``stats.bad_lines``: ``blank``, ``nul_bytes``, ``two_objects``,
    ``invalid_json``, ``not_an_object``. Lines that decode only after repair (invalid UTF-8
    replaced, lone surrogates replaced, NUL padding around the line removed, a UTF-8 byte
    order mark before it removed) are returned and counted as ``repaired_utf8`` /
    ``repaired_surrogates`` / ``repaired_nul_padding`` / ``repaired_bom``.
    """
    if not raw.strip():
        stats.bad_lines["blank"] += 1
        return None
    if raw.startswith(_BOM):  # a file saved by an editor that writes one: the line is good
        raw = raw[len(_BOM) :]
        stats.bad_lines["repaired_bom"] += 1
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = _slow_decode(raw, stats)
        if value is None:
            return None
    if not isinstance(value, dict):
        stats.bad_lines["not_an_object"] += 1
        return None
    return value


def _slow_decode(raw: bytes, stats: ReadStats) -> Any:
    if b"\x00" in raw:
        # A crash can leave NUL padding before or after a whole line (FORMATS.md 6.4):
        # the line between is still good. NULs inside it make it bad.
        inner = raw.strip(b"\x00")
        if b"\x00" not in inner and inner:
            try:
                value = orjson.loads(inner)
            except orjson.JSONDecodeError:
                pass
            else:
                stats.bad_lines["repaired_nul_padding"] += 1
                return value
        stats.bad_lines["nul_bytes"] += 1
        return None
    text = raw.decode("utf-8", "replace")
    repaired = "repaired_utf8" if "\ufffd" in text and b"\xef\xbf\xbd" not in raw else None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            stats.bad_lines["two_objects"] += 1
        else:
            stats.bad_lines["invalid_json"] += 1
        return None
    except RecursionError:
        stats.bad_lines["invalid_json"] += 1
        return None
    cleaned = _clean(value)
    stats.bad_lines[repaired or "repaired_surrogates"] += 1
    return cleaned
