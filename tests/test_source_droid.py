"""Factory Droid reader, on hand-written fixtures (tests/fixtures/droid, see its README: no
real Droid transcript exists, the fixtures follow FORMATS.md section 3)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from habitus.model import ReadStats, Turn
from habitus.sources.base import LineStream, Skipped, TranscriptFile
from habitus.sources.droid import DroidSource, read_path

FIXTURES = Path(__file__).parent / "fixtures" / "droid"
SLUG = "-Users-me-code-app"
MAIN_ID = "7c1e4f0a-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
SUB_ID = "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f"
MAIN = FIXTURES / "sessions" / SLUG / f"{MAIN_ID}.jsonl"
SUB = FIXTURES / "sessions" / SLUG / f"{SUB_ID}.jsonl"

MAIN_HUMAN = [
    (
        2,
        "The login page ignores ?next= and always redirects to /home. Fix it, and use pnpm, not npm.",
    ),
    (8, "Looks good. Add a test for the ?next= case too."),
]


def _read(
    path: Path, *, everything: bool = True, context: bool = False, offset: int = 0, line: int = 0
) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    st = path.stat()
    file = TranscriptFile(
        "droid",
        path,
        f"sessions/{SLUG}/{path.name}",
        st.st_size,
        st.st_mtime,
        st.st_ino,
        path.stem,
        SLUG,
    )
    stream = LineStream(path, stats, offset=offset, line=line)
    return list(
        DroidSource().read(stream, file, stats, everything=everything, context=context)
    ), stats


def test_main_session_human_turns() -> None:
    turns, stats = _read(MAIN)
    assert [(t.line, t.text) for t in turns if t.is_human] == MAIN_HUMAN
    assert stats.human_turns == 2
    assert {t.session_id for t in turns} == {MAIN_ID}
    assert {t.cwd for t in turns} == {"/Users/me/code/app"}
    human = [t for t in turns if t.is_human]
    assert [t.uuid for t in human] == [
        "a0000001-1111-4222-8333-444455550001",
        "a0000007-1111-4222-8333-444455550007",
    ]
    assert human[0].timestamp == "2025-11-20T10:00:05.120Z"
    assert {t.role for t in human} == {"user"}


def test_main_session_dropped_kinds_exact() -> None:
    turns, stats = _read(MAIN)
    assert stats.dropped == Counter(
        {
            "bookkeeping": 2,  # session_start, todo_state
            "system_reminder": 2,  # line 2 block 0, line 9
            "assistant": 2,  # lines 3 and 10
            "tool_use": 1,  # line 5: an assistant message with only a tool_use
            "tool_output": 2,  # lines 4 and 6
            "interrupt": 1,  # line 11
            "unknown_type": 1,  # line 12 (a made-up type)
        }
    )
    assert not stats.bad_lines
    assert {t.line for t in turns} == set(range(1, 13))
    reminder = [t for t in turns if t.line == 2 and t.kind == "system_reminder"]
    assert len(reminder) == 1 and not reminder[0].kept
    # The system reminder appended to a tool result stays tool output, not human text.
    assert [(t.kind, t.role) for t in turns if t.line == 4] == [("tool_output", "tool")]


def test_subagent_session_is_sidechain() -> None:
    turns, stats = _read(SUB)
    assert not any(t.is_human for t in turns)
    assert [(t.line, t.kind) for t in turns] == [
        (1, "bookkeeping"),
        (2, "sidechain"),
        (3, "sidechain"),
    ]
    assert stats.human_turns == 0 and stats.dropped["sidechain"] == 2
    fast, _ = _read(SUB, everything=False, context=True)
    assert fast == []


def test_fast_path_equals_everything_mode() -> None:
    full, _ = _read(MAIN)
    fast, _ = _read(MAIN, everything=False)
    assert [(t.id, t.line, t.text) for t in fast] == [
        (t.id, t.line, t.text) for t in full if t.is_human
    ]
    with_context, _ = _read(MAIN, everything=False, context=True)
    assert [(t.line, t.kind) for t in with_context] == [
        (2, "human"),
        (3, "assistant"),
        (8, "human"),
        (10, "assistant"),
    ]
    assert with_context[1].text == "I'll start with the redirect handler."
    assert with_context[1].role == "assistant"


def test_incremental_read_keeps_session_cwd_and_sidechain() -> None:
    for path, index in ((MAIN, 7), (SUB, 1)):
        lines = path.read_bytes().splitlines(keepends=True)
        offset = sum(len(x) for x in lines[:index])
        turns, _ = _read(path, offset=offset, line=index)
        full, _ = _read(path)
        assert [(t.id, t.line, t.session_id, t.cwd, t.kind) for t in turns] == [
            (t.id, t.line, t.session_id, t.cwd, t.kind) for t in full if t.line > index
        ]


def test_ids_are_stable_across_files(tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(MAIN.read_bytes())
    a, _ = _read(MAIN, everything=False)
    b, _ = _read(copy, everything=False)
    assert [t.id for t in a] == [t.id for t in b]
    assert len({t.id for t in a}) == 2


def test_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = list(DroidSource().discover(FIXTURES))
    assert sorted(
        (f.rel, f.session_hint, f.project) for f in found if isinstance(f, TranscriptFile)
    ) == [
        (f"sessions/{SLUG}/{SUB_ID}.jsonl", SUB_ID, SLUG),
        (f"sessions/{SLUG}/{MAIN_ID}.jsonl", MAIN_ID, SLUG),
    ]
    home = tmp_path / "factory"
    (home / "sessions" / "-a").mkdir(parents=True)
    (home / "sessions" / "-a" / "s1.jsonl").write_text("{}\n")
    (home / "sessions" / "-a" / "s1.settings.json").write_text("{}\n")
    (home / "sessions" / "-a" / "nested").mkdir()
    (home / "sessions" / "-a" / "nested" / "deep.jsonl").write_text("{}\n")
    (home / "sessions" / "flat.jsonl").write_text("{}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.jsonl").write_text("{}\n")
    (home / "sessions" / "-linked").symlink_to(outside, target_is_directory=True)
    locked = home / "sessions" / "-locked"
    locked.mkdir()
    real_scandir = os.scandir

    def fake_scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) == locked:
            raise PermissionError(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    found = list(DroidSource().discover(home))
    assert sorted((f.rel, f.project) for f in found if isinstance(f, TranscriptFile)) == [
        ("sessions/-a/s1.jsonl", "-a"),
        ("sessions/flat.jsonl", None),
    ]
    assert [(s.rel, s.reason) for s in found if isinstance(s, Skipped)] == [
        ("sessions/-locked", "unreadable")
    ]
    assert list(DroidSource().discover(tmp_path / "missing")) == []


def test_read_path_helper() -> None:
    turns = list(read_path(MAIN, ReadStats()))
    assert [(t.line, t.text) for t in turns if t.is_human] == MAIN_HUMAN


def _msg(role: str, content: object, mid: str = "m1") -> bytes:
    return json.dumps(
        {
            "type": "message",
            "id": mid,
            "timestamp": "2025-11-20T10:00:00.000Z",
            "message": {"role": role, "content": content},
        }
    ).encode()


BAD_LINES = [
    b'{"type":"message","id":"x","message":{"role":"user","content":[{"type":"te',
    b"\x00\x00",
    b'{"type":"todo_state"}{"type":"todo_state"}',
    b'{"type":"message","message":{"role":"user","content":"lone \\udc00 surrogate"}}',
    b'{"type":"message","message":{"role":"user","content":"bad \xc3\x28 utf8"}}',
    b'{"type":"message"}',
    b'{"type":"message","message":"not a dict"}',
    b'{"type":"message","message":{"role":"user"}}',
    b'{"type":"message","message":{"role":"user","content":{"a":1}}}',
    b'{"type":"message","message":{"role":"user","content":[1,null,{"type":"image"},{"type":"new"},{"type":"text","text":5}]}}',
    b'{"type":"message","message":{"role":"assistant","content":7}}',
    b'{"type":"message","message":{"role":"robot","content":[]}}',
    b'{"type":"message","id":5,"timestamp":1700000000000,"message":{"role":"user","content":[{"type":"tool_result","content":null}]}}',
    b'{"type":"brand_new"}',
    b'{"no_type":true}',
    b"[1,2]",
    b'"str"',
    b"",
    b'{"type":"session_start","id":["x"],"title":null}',
]


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_lines_never_raise(bad: bytes, tmp_path: Path) -> None:
    start = json.dumps({"type": "session_start", "id": MAIN_ID, "title": "t", "cwd": "/w"}).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(start + b"\n" + bad + b"\n" + _msg("user", "still here") + b"\n")
    for everything in (True, False):
        for context in (True, False):
            turns, _ = _read(path, everything=everything, context=context)
            assert "still here" in [t.text for t in turns if t.is_human]
            assert {t.session_id for t in turns} == {MAIN_ID}
    turns, _ = _read(path)
    assert {t.line for t in turns} == {1, 2, 3}


def test_missing_session_start_falls_back_to_file_name(tmp_path: Path) -> None:
    path = tmp_path / "abc.jsonl"
    path.write_bytes(_msg("user", [{"type": "text", "text": "no header here"}]) + b"\n")
    turns, _ = _read(path)
    assert [(t.text, t.session_id, t.cwd) for t in turns] == [("no header here", "abc", None)]


def test_reads_from_any_line_boundary_agree_with_a_full_read() -> None:
    for path in (MAIN, SUB):
        lines = path.read_bytes().splitlines(keepends=True)
        full, _ = _read(path)
        offset = 0
        for index, line in enumerate(lines[:-1], 1):
            offset += len(line)
            tail, _ = _read(path, offset=offset, line=index)
            assert [(t.id, t.session_id, t.cwd, t.kind) for t in tail] == [
                (t.id, t.session_id, t.cwd, t.kind) for t in full if t.line > index
            ]
