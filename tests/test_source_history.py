"""Prompt histories (~/.claude/history.jsonl, ~/.codex/history.jsonl) on synthetic files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from habitus.model import ReadStats, stable_id
from habitus.sources.history import (
    epoch_to_iso,
    prompt_key,
    read_claude_history,
    read_codex_history,
)


def _write(path: Path, rows: list[object]) -> Path:
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in rows]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


# 1_700_000_000 s is 2023-11-14T22:13:20Z: 19_675 days (2023-11-14) + 80_000 s (22:13:20).
# 31_536_000 s is 365 days: 1971-01-01T00:00:00Z.


def test_claude_history(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "history.jsonl",
        [
            {
                "display": "ok, commit to main",
                "pastedContents": {},
                "timestamp": 1700000000123,
                "project": "/Users/me/app",
                "sessionId": "04b2d7d3-0000-4000-8000-000000000001",
            },
            {
                "display": "/clear",
                "pastedContents": {},
                "timestamp": 1700000000500,
                "project": "/Users/me/app",
            },
            {
                "display": "/upgrade ",
                "pastedContents": {},
                "timestamp": 31536000000,
                "project": "/Users/me/app",
            },
            {
                "display": "/Users/me/app/x.py is broken, look",
                "pastedContents": {},
                "timestamp": 0,
                "project": "/Users/me/app",
            },
            {
                "display": "[Pasted text #1 +12 lines] fix this",
                "pastedContents": {"1": {"content": "..."}},
                "timestamp": 1700000000999,
            },
        ],
    )
    stats = ReadStats()
    turns = list(read_claude_history(path, stats))
    assert [(t.kind, t.kept, t.text, t.timestamp, t.cwd, t.session_id) for t in turns] == [
        (
            "human",
            True,
            "ok, commit to main",
            "2023-11-14T22:13:20.123Z",
            "/Users/me/app",
            "04b2d7d3-0000-4000-8000-000000000001",
        ),
        ("command", False, "/clear", "2023-11-14T22:13:20.500Z", "/Users/me/app", ""),
        ("command", False, "/upgrade", "1971-01-01T00:00:00.000Z", "/Users/me/app", ""),
        (
            "human",
            True,
            "/Users/me/app/x.py is broken, look",
            "1970-01-01T00:00:00.000Z",
            "/Users/me/app",
            "",
        ),
        (
            "human",
            True,
            "[Pasted text #1 +12 lines] fix this",
            "2023-11-14T22:13:20.999Z",
            None,
            "",
        ),
    ]
    first = turns[0]
    assert (first.agent, first.role, first.path, first.uuid, first.line) == (
        "claude",
        "user",
        "history.jsonl",
        None,
        1,
    )
    assert first.id == stable_id("claude", "history", first.session_id, first.timestamp, first.text)
    assert turns[1].reason == "event: slash command"
    assert stats.human_turns == 3 and stats.dropped["command"] == 2
    assert len({t.id for t in turns}) == 5


def test_codex_history_seconds_and_both_id_fields(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "history.jsonl",
        [
            {
                "session_id": "019aad50-a7e6-7422-b7a8-0b384290624f",
                "ts": 1700000000,
                "text": "make the board square",
            },
            {
                "conversation_id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
                "ts": 31536000.25,
                "text": "  undo that  ",
            },
            {"ts": 1700000000, "text": "no id at all"},
        ],
    )
    stats = ReadStats()
    turns = list(read_codex_history(path, stats))
    assert [(t.agent, t.session_id, t.timestamp, t.text, t.cwd, t.kept) for t in turns] == [
        (
            "codex",
            "019aad50-a7e6-7422-b7a8-0b384290624f",
            "2023-11-14T22:13:20.000Z",
            "make the board square",
            None,
            True,
        ),
        (
            "codex",
            "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
            "1971-01-01T00:00:00.250Z",
            "undo that",
            None,
            True,
        ),
        ("codex", "", "2023-11-14T22:13:20.000Z", "no id at all", None, True),
    ]
    assert turns[0].id == stable_id(
        "codex", "history", turns[0].session_id, turns[0].timestamp, turns[0].text
    )


def test_seconds_and_milliseconds_agree() -> None:
    assert epoch_to_iso(1700000000, milliseconds=False) == epoch_to_iso(
        1700000000000, milliseconds=True
    )
    assert epoch_to_iso(1700000000.5, milliseconds=False) == "2023-11-14T22:13:20.500Z"
    assert epoch_to_iso("1700000000123", milliseconds=True) == "2023-11-14T22:13:20.123Z"


@pytest.mark.parametrize(
    "value", [None, True, "soon", "", [], {}, float("nan"), float("inf"), 10**30]
)
def test_bad_timestamps_give_none(value: object) -> None:
    assert epoch_to_iso(value, milliseconds=True) is None
    assert epoch_to_iso(value, milliseconds=False) is None


BAD_LINES = [
    b'{"display":"half a li',
    b"\x00\x00",
    b'{"display":"a"}{"display":"b"}',
    b"[1]",
    b"",
    b'{"display":"bad \xff utf8","timestamp":1}',
    b'{"display":"lone \\ud800","timestamp":1}',
    b'{"display":null,"timestamp":"x","project":5,"sessionId":7}',
    b'{"text":["x"],"ts":{},"session_id":1,"conversation_id":2}',
]


@pytest.mark.parametrize("bad", BAD_LINES)
@pytest.mark.parametrize("reader", [read_claude_history, read_codex_history])
def test_bad_lines_are_counted_never_raised(bad: bytes, reader, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = {"display": "fine", "text": "fine", "timestamp": 1, "ts": 1}
    path = _write(tmp_path / "history.jsonl", [bad, good])
    stats = ReadStats()
    turns = list(reader(path, stats))
    assert [t.text for t in turns if t.is_human][-1] == "fine"
    assert stats.lines == 2
    assert sum(stats.bad_lines.values()) + stats.human_turns + sum(stats.dropped.values()) >= 2


def test_broken_lines_counted_by_reason(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "history.jsonl", [b'{"display":"x', b"\x00", b'{"a":1}{"b":2}', b"[]", b""]
    )
    stats = ReadStats()
    assert list(read_claude_history(path, stats)) == []
    assert stats.bad_lines == {
        "invalid_json": 1,
        "nul_bytes": 1,
        "two_objects": 1,
        "not_an_object": 1,
        "blank": 1,
    }


def test_incremental_reads_and_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    one = json.dumps({"display": "first", "timestamp": 1000}).encode() + b"\n"
    two = json.dumps({"display": "second", "timestamp": 2000}).encode()
    path.write_bytes(one + two)  # the second line is still being written
    stats = ReadStats()
    assert [t.text for t in read_claude_history(path, stats)] == ["first"]
    offset, line = stats.bytes_read, stats.lines
    assert offset == len(one) and line == 1
    with open(path, "ab") as fh:
        fh.write(b"\n")
    later = list(read_claude_history(path, stats, offset=offset, line=line))
    assert [(t.text, t.line, t.start) for t in later] == [("second", 2, len(one))]


def test_prompt_key() -> None:
    key = prompt_key("Fix  the\n bug\tnow ")
    assert key == prompt_key("fix the bug now")
    assert key == hashlib.sha256(b"fix the bug now").hexdigest()[:16]
    assert len(key) == 16 and int(key, 16) >= 0
    assert prompt_key("fix the bug later") != key
    assert prompt_key("STRASSE") == prompt_key("straße")  # casefold, not lower
    assert prompt_key("lone \ud800") == prompt_key("LONE \ud800")
