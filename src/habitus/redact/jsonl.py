"""Redaction of transcript JSONL lines and of whole byte streams (JSONL or plain text).

Both work on bytes and stream: a JSONL stream is handled one line at a time, a plain-text
stream in chunks of about 1 MiB cut at line boundaries, so no file is ever loaded whole.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

import orjson

from habitus.redact.engine import _candidates, _settle, redact_bytes, redact_many

__all__ = ["redact_jsonl_line", "redact_stream"]

_CHUNK = 1 << 20  # bytes of plain text scanned at once (plus the carried tail)
_TAIL = 64 << 10  # bytes kept back for the next chunk, so secrets spanning lines stay whole
_HARD_LIMIT = 16 << 20  # a carried match never makes the buffer grow past this
_MIN_STRING = 6  # characters; no rule can match a shorter string


def _split_ending(line: bytes) -> tuple[bytes, bytes]:
    if line.endswith(b"\r\n"):
        return line[:-2], b"\r\n"
    if line.endswith(b"\n"):
        return line[:-1], b"\n"
    return line, b""


def _strings(root: dict[str, Any] | list[Any]) -> tuple[list[tuple[Any, Any]], list[bytes]]:
    """Every string value inside ``root`` (keys excluded) that is long enough to hold a secret.

    Returns their places as (container, key or index) and their UTF-8 bytes, in step.
    """
    places: list[tuple[Any, Any]] = []
    datas: list[bytes] = []
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            if isinstance(item, str):
                if len(item) >= _MIN_STRING:
                    places.append((node, key))
                    datas.append(item.encode("utf-8", "surrogatepass"))
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return places, datas


def redact_jsonl_line(
    line: bytes, *, tag_key: bytes | None = None, pii: bool = False
) -> tuple[bytes, dict[str, int]]:
    """Redact one JSONL line (bytes, with or without its ``\\n`` / ``\\r\\n`` ending).

    Every string value of the decoded JSON is redacted exactly as :func:`redact` would
    redact it alone (object keys are not redacted); one keyword pass covers all values of
    the line. A changed value is written back in place (its JSON text as orjson writes it,
    found once in the line), so the rest of the line stays byte for byte, integers beyond
    64 bits and duplicate keys included; a line where that is not possible is re-encoded
    (compact orjson, same line ending). An unchanged line is returned as the input object
    itself. A line that is not valid JSON (or that orjson rejects, e.g. lone surrogates)
    is redacted as plain UTF-8 text. Returns the output line and counts by rule id; never
    raises for any input bytes.
    """
    body, ending = _split_ending(line)
    if not body.strip():
        return line, {}
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        out, counts = redact_bytes(body, tag_key=tag_key, pii=pii)
        return (out + ending if counts else line), counts
    if isinstance(obj, str):
        data = obj.encode("utf-8", "surrogatepass")
        out, counts = redact_bytes(data, tag_key=tag_key, pii=pii)
        if not counts:
            return line, {}
        return orjson.dumps(out.decode("utf-8", "surrogatepass")) + ending, counts
    if not isinstance(obj, (dict, list)):
        return line, {}
    places, datas = _strings(obj)
    total: Counter[str] = Counter()
    changes: list[tuple[str, str]] = []  # (old value, new value)
    for (node, key), (out, counts) in zip(
        places, redact_many(datas, tag_key=tag_key, pii=pii), strict=True
    ):
        if counts:
            new = out.decode("utf-8", "surrogatepass")
            changes.append((node[key], new))
            node[key] = new
            total.update(counts)
    if not total:
        return line, {}
    spliced = _splice(body, changes, obj)
    return (spliced if spliced is not None else orjson.dumps(obj)) + ending, dict(total)


def _splice(body: bytes, changes: list[tuple[str, str]], expected: Any) -> bytes | None:
    """``body`` with each changed string value replaced in place, everything else (numbers
    beyond 64 bits, duplicate keys, spacing, key order) byte for byte. ``None`` when a
    value's JSON text is not found exactly once as orjson writes it (another escaping), or
    the result does not decode to ``expected`` (the redacted object): the caller then
    re-encodes the whole line."""
    out = body
    for old, new in changes:
        literal = orjson.dumps(old)
        if out.count(literal) != 1:
            return None
        out = out.replace(literal, orjson.dumps(new), 1)
    try:
        return out if orjson.loads(out) == expected else None
    except orjson.JSONDecodeError:
        return None


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def _text_chunks(
    lines: Iterable[bytes], tag_key: bytes | None, pii: bool, counts: Counter[str]
) -> Iterator[bytes]:
    """Redacted output of a plain-text byte stream, chunk by chunk.

    Lines are gathered until about ``_CHUNK + _TAIL`` bytes; the chunk is scanned whole,
    output up to a cut point and the rest carried into the next chunk. The cut sits on a
    line boundary about ``_TAIL`` bytes before the end and is moved back to the start of
    the line of any match that spans it, so a secret is always judged with its line and
    the lines before it (a multi-line private key included).
    """
    buf = bytearray()

    def flush(final: bool) -> bytes:
        data = bytes(buf)
        found = _candidates(data, pii)
        cut = len(data)
        if not final and len(data) < _HARD_LIMIT:
            cut = data.rfind(b"\n", 0, len(data) - _TAIL) + 1
            if cut == 0:  # one huge line: cut inside it, on a UTF-8 character boundary
                cut = len(data) - _TAIL
                while cut > 0 and data[cut] & 0xC0 == 0x80:
                    cut -= 1
            moved = True
            while moved and cut > 0:
                moved = False
                for s, e, _, ms in found:
                    start = min(s, ms)
                    if start < cut < e or (start < cut and e == len(data)):
                        cut = data.rfind(b"\n", 0, start) + 1
                        moved = True
            if cut == 0:
                cut = len(data)
        keep = [c for c in found if c[1] <= cut]
        out, got = _settle(data[:cut], keep, tag_key, pii)
        counts.update(got)
        del buf[:cut]
        return out

    for line in lines:
        buf += line
        if len(buf) >= _CHUNK + _TAIL:
            yield flush(final=False)
    if buf:
        yield flush(final=True)


def redact_stream(
    src: BinaryIO,
    dst: BinaryIO,
    *,
    jsonl: bool | None = None,
    tag_key: bytes | None = None,
    pii: bool = False,
) -> dict[str, int]:
    """Redact a byte stream from ``src`` into ``dst``; return counts by rule id.

    ``jsonl=None`` auto-detects: the stream is JSONL if its first non-empty line parses as
    a JSON object. JSONL is redacted line by line with :func:`redact_jsonl_line` (unchanged
    lines are copied byte for byte, unparsable lines are redacted as text); plain text is
    redacted in ~1 MiB chunks (see ``_text_chunks``), bytes outside secrets untouched.
    Memory stays bounded by one line (JSONL) or about 1 MiB plus the longest line (text);
    context-dependent rules see at least the 64 KiB before a chunk cut. ``tag_key`` and
    ``pii`` are as for :func:`habitus.redact.redact`. Errors from reading or writing the
    streams (``OSError``) propagate; nothing else is raised for any input bytes.
    """
    counts: Counter[str] = Counter()
    lines: Iterator[bytes] = iter(src)
    head: list[bytes] = []
    if jsonl is None:
        jsonl = False
        for line in lines:
            head.append(line)
            if line.strip():
                jsonl = _is_json_object(line)
                break
    stream = itertools.chain(head, lines)
    if jsonl:
        for line in stream:
            out, got = redact_jsonl_line(line, tag_key=tag_key, pii=pii)
            counts.update(got)
            dst.write(out)
    else:
        for chunk in _text_chunks(stream, tag_key, pii, counts):
            dst.write(chunk)
    return dict(counts)
