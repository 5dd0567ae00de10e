"""Codex rollout reader: real samples from /work/shared/transcripts/codex and synthetic files.

Expected human turns of the real samples were found by reading the files independently (plain
``json.loads`` of each line, see :func:`_independent_prompts`) and the line numbers are pinned
here after checking them by hand.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
import zstandard

import habitus.sources.codex as codex_module
from habitus.model import ReadStats, Turn
from habitus.sources.base import LineStream, Skipped, TranscriptFile
from habitus.sources.codex import CodexSource, classify_text, read_path, split_injected

SHARED = Path(__file__).resolve().parents[2] / "shared"
SAMPLES = SHARED / "transcripts" / "codex"
needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"real Codex samples not found at {SAMPLES} (../shared absent)"
)

V060 = "rollout-v0.60.1-cli-chess-webapp-truncated.jsonl"
V104 = "rollout-v0.104-desktop-redacted.jsonl"
V135 = "rollout-v0.135-exec-redacted.jsonl"
V063 = "session-meta-v0.63-with-instructions.jsonl"
ALL_ROLLOUTS = [V060, V104, V135]

#: Lines holding an ``event_msg``/``user_message`` in the 0.60.1 sample (53 prompts; the 54th
#: user ``response_item``, line 2, is ``<environment_context>``).
V060_HUMAN_LINES = [
    4, 301, 360, 380, 418, 539, 581, 613, 638, 669, 773, 796, 839, 900, 920, 938, 958, 976,
    996, 1014, 1032, 1059, 1077, 1097, 1115, 1125, 1135, 1145, 1155, 1163, 1239, 1254, 1260,
    1334, 1354, 1372, 1390, 1423, 1486, 1506, 1534, 1542, 1602, 1667, 1690, 1777, 1813, 1851,
    1891, 1957, 2014, 2044, 2102,
]  # fmt: skip
V104_HUMAN = [
    (10, "[REDACTED_MESSAGE len=516 sha=05857781]"),
    (189, "[REDACTED_MESSAGE len=225 sha=f1c9b7b8]"),
    (291, "[REDACTED_MESSAGE len=95 sha=3dd1e74b]"),
    (531, "[REDACTED_MESSAGE len=9 sha=84719d13]"),
    (654, "[REDACTED_MESSAGE len=12 sha=d500d796]"),
]
V135_HUMAN = [(7, "[REDACTED_PROMPT]")]

SESSIONS = {
    V060: ("019aad50-a7e6-7422-b7a8-0b384290624f", "/Users/user/code/rtchess"),
    V104: ("019c8a4c-ed82-79a1-aa28-7738fc5ab61a", "/redacted/path/fa3f7eaace"),
    V135: ("019e9625-802f-7e91-840a-cfe88d14117a", "/tmp/agent-history-real-agent/codex/workspace"),
}


def _read(
    path: Path, *, everything: bool = True, context: bool = False
) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    file = _file(path)
    turns = list(
        CodexSource().read(
            LineStream(path, stats), file, stats, everything=everything, context=context
        )
    )
    return turns, stats


def _file(path: Path, rel: str | None = None) -> TranscriptFile:
    st = path.stat()
    return TranscriptFile(
        "codex", path, rel or path.name, st.st_size, st.st_mtime, st.st_ino, None, None
    )


def _humans(turns: list[Turn]) -> list[tuple[int, str]]:
    return [(t.line, t.text) for t in turns if t.is_human]


def _independent_prompts(path: Path) -> list[tuple[int, str]]:
    """Every user_message event, read with plain json (no habitus code)."""
    found = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            obj = json.loads(line)
            payload = obj.get("payload") or {}
            if obj.get("type") == "event_msg" and payload.get("type") == "user_message":
                found.append((number, payload["message"].strip()))
    return found


# -- real samples -------------------------------------------------------------------------


@needs_samples
def test_v060_human_turns_are_the_user_message_events() -> None:
    turns, stats = _read(SAMPLES / V060)
    humans = _humans(turns)
    assert [line for line, _ in humans] == V060_HUMAN_LINES
    assert humans == _independent_prompts(SAMPLES / V060)
    assert stats.human_turns == 53
    by_line = dict(humans)
    assert by_line[380] == (
        "Let's make sure the board is even and have another go at the piece design "
        "(they look wierd currently)"
    )
    assert by_line[1097] == "undo the last change"
    assert by_line[1059] == "Undo the last change"
    assert by_line[4].startswith("I want to make a chess variant that isn't real time")


@needs_samples
@pytest.mark.parametrize(("name", "expected"), [(V104, V104_HUMAN), (V135, V135_HUMAN)])
def test_redacted_samples_human_turns(name: str, expected: list[tuple[int, str]]) -> None:
    turns, _ = _read(SAMPLES / name)
    assert _humans(turns) == expected
    assert expected == _independent_prompts(SAMPLES / name)


@needs_samples
def test_environment_context_is_not_human() -> None:
    turns, _ = _read(SAMPLES / V060)
    line2 = [t for t in turns if t.line == 2]
    assert [(t.kind, t.kept) for t in line2] == [("environment_context", False)]
    assert line2[0].text.startswith("<environment_context>")
    turns, _ = _read(SAMPLES / V135)
    line4 = [t for t in turns if t.line == 4]
    assert [(t.kind, t.kept) for t in line4] == [("environment_context", False)]
    assert not any("<environment_context>" in t.text for t in turns if t.is_human)


@needs_samples
@pytest.mark.parametrize("name", ALL_ROLLOUTS)
def test_no_prompt_counts_twice(name: str) -> None:
    turns, _ = _read(SAMPLES / name)
    humans = [t for t in turns if t.is_human]
    event_lines = [line for line, _ in _independent_prompts(SAMPLES / name)]
    assert sorted(t.line for t in humans) == event_lines  # each user_message exactly once
    assert len({t.id for t in humans}) == len(humans)
    # The user response_items carrying the same prompts are dropped as duplicates.
    raw_lines = (SAMPLES / name).read_bytes().splitlines()
    assert not any(b'"type":"response_item"' in raw_lines[t.line - 1] for t in humans)
    user_items = [t for t in turns if b'"role":"user"' in raw_lines[t.line - 1]]
    assert user_items and not any(t.kept for t in user_items)
    assert {t.kind for t in user_items} <= {"duplicate_channel", "environment_context"}


@needs_samples
def test_v060_dropped_kinds_exact() -> None:
    turns, stats = _read(SAMPLES / V060)
    assert (
        stats.dropped
        == Counter(
            {
                "bookkeeping": 1058,  # session_meta 1 + turn_context 335 + ghost_snapshot 53 + token_count 669
                "duplicate_channel": 249,  # user items 53 + agent_message 51 + agent_reasoning 145
                "tool_use": 282,  # function_call 117 + custom_tool_call 165
                "tool_output": 282,
                "reasoning": 143,
                "assistant": 51,
                "environment_context": 1,
                "interrupt": 1,
            }
        )
    )
    assert not stats.bad_lines
    interrupt = [t for t in turns if t.kind == "interrupt"]
    assert [(t.line, t.text, t.kept, t.reason) for t in interrupt] == [
        (1258, "interrupted", False, "event: interrupted")
    ]


@needs_samples
def test_v104_dropped_kinds_exact() -> None:
    _, stats = _read(SAMPLES / V104)
    assert (
        stats.dropped
        == Counter(
            {
                "instructions": 1,  # session_meta with base_instructions
                "developer": 10,
                "duplicate_channel": 112,  # user items 10 + agent_message 43 + agent_reasoning 59
                "bookkeeping": 253,  # token_count 162 + task_started 5 + task_complete 5 + turn_context 81
                "reasoning": 69,
                "assistant": 43,
                "tool_use": 105,  # function_call 82 + custom_tool_call 22 + web_search_call 1
                "tool_output": 104,
            }
        )
    )
    assert stats.human_turns == 5


@needs_samples
@pytest.mark.parametrize("name", ALL_ROLLOUTS)
def test_session_id_and_cwd_on_every_turn(name: str) -> None:
    session, cwd = SESSIONS[name]
    for everything in (True, False):
        turns, _ = _read(SAMPLES / name, everything=everything)
        assert turns
        assert {t.session_id for t in turns} == {session}
        assert {t.cwd for t in turns} == {cwd}
        assert {t.agent for t in turns} == {"codex"}


@needs_samples
@pytest.mark.parametrize("name", ALL_ROLLOUTS)
def test_every_line_yields_a_turn_in_everything_mode(name: str) -> None:
    turns, stats = _read(SAMPLES / name)
    assert {t.line for t in turns} == set(range(1, stats.lines + 1))


@needs_samples
@pytest.mark.parametrize("name", ALL_ROLLOUTS)
def test_prefilter_never_drops_human_text(name: str) -> None:
    full, _ = _read(SAMPLES / name, everything=True)
    fast, _ = _read(SAMPLES / name, everything=False)
    assert [(t.id, t.line, t.text) for t in fast] == [
        (t.id, t.line, t.text) for t in full if t.is_human
    ]
    with_context, _ = _read(SAMPLES / name, everything=False, context=True)
    wanted = [t for t in full if t.is_human or t.kind == "assistant"]
    assert [(t.id, t.kind, t.text, t.cwd) for t in with_context] == [
        (t.id, t.kind, t.text, t.cwd) for t in wanted
    ]


@needs_samples
@pytest.mark.parametrize("name", [V060, V135])
def test_fast_path_never_parses_big_lines(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    real = codex_module.decode_line

    def spy(raw: bytes, stats: ReadStats):  # type: ignore[no-untyped-def]
        parsed.append(raw)
        return real(raw, stats)

    monkeypatch.setattr(codex_module, "decode_line", spy)
    turns, _ = _read(SAMPLES / name, everything=False)
    assert turns
    for raw in parsed:
        for needle in (
            b'"function_call_output"',
            b'"custom_tool_call_output"',
            b'"base_instructions"',
            b'"token_count"',
            b'"session_meta"',
        ):
            assert needle not in raw


@needs_samples
def test_session_meta_only_sample(tmp_path: Path) -> None:
    # As shipped the file has no final newline: a line that may still be being written.
    turns, stats = _read(SAMPLES / V063)
    assert turns == [] and stats.lines == 0
    copy = tmp_path / "rollout-2025-11-23T19-24-17-019ab22c-95af-7160-b11d-8f552d0ce721.jsonl"
    copy.write_bytes((SAMPLES / V063).read_bytes() + b"\n")
    turns, stats = _read(copy)
    assert [(t.kind, t.kept) for t in turns] == [("instructions", False)]
    assert turns[0].text.startswith("<!-- Generated by Ruler -->")
    assert turns[0].session_id == "019ab22c-95af-7160-b11d-8f552d0ce721"
    assert turns[0].cwd == "/home/user/projects/temp/codex-session-view"
    assert stats.human_turns == 0


@needs_samples
def test_incremental_read_of_second_half_matches_full_read(tmp_path: Path) -> None:
    data = (SAMPLES / V060).read_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl"
    path.write_bytes(b"".join(lines[:1000]))
    file = _file(path)
    stats = ReadStats()
    first_stream = LineStream(path, stats)
    first = list(CodexSource().read(first_stream, file, stats))
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[1000:]))
    second_stream = LineStream(path, stats, offset=first_stream.offset, line=first_stream.line)
    second = list(CodexSource().read(second_stream, file, stats))
    full, _ = _read(SAMPLES / V060, everything=False)
    assert [(t.id, t.line, t.text) for t in first + second] == [
        (t.id, t.line, t.text) for t in full
    ]
    assert second and {t.session_id for t in second} == {SESSIONS[V060][0]}
    assert {t.cwd for t in second} == {SESSIONS[V060][1]}


# -- synthetic files ----------------------------------------------------------------------


def _line(ts: str, kind: str, payload: object) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def _meta(sid: str, cwd: str, ts: str = "2026-01-10T09:00:00.000Z", **extra: object) -> str:
    payload = {
        "id": sid,
        "timestamp": ts,
        "cwd": cwd,
        "originator": "codex_cli_rs",
        "cli_version": "0.110.0",
        "source": "cli",
        **extra,
    }
    payload["base_instructions"] = {"text": "You are Codex, a coding agent. " * 50}
    return _line(ts, "session_meta", payload)


def _user_item(ts: str, *texts: str) -> str:
    return _line(
        ts,
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": t} for t in texts],
        },
    )


def _user_message(ts: str, text: str, **extra: object) -> str:
    return _line(ts, "event_msg", {"type": "user_message", "message": text, "images": [], **extra})


def _turn_lines(turn_id: str, ts: str, prompt: str, cwd: str) -> list[str]:
    """One turn as 0.104 writes it: task_started, user item, user_message, turn_context, answer."""
    return [
        _line(
            ts,
            "event_msg",
            {"type": "task_started", "turn_id": turn_id, "model_context_window": 258400},
        ),
        _user_item(ts, prompt),
        _user_message(ts, prompt),
        _line(
            ts,
            "turn_context",
            {
                "turn_id": turn_id,
                "cwd": cwd,
                "approval_policy": "on-request",
                "model": "gpt-5.3-codex",
                "summary": "auto",
            },
        ),
        _line(
            ts,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"ls"}',
                "call_id": "c1",
            },
        ),
        _line(
            ts,
            "response_item",
            {"type": "function_call_output", "call_id": "c1", "output": "x" * 5000},
        ),
        _line(
            ts,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"done: {prompt}"}],
            },
        ),
        _line(
            ts,
            "event_msg",
            {"type": "task_complete", "turn_id": turn_id, "last_agent_message": "done"},
        ),
    ]


SID = "019b0000-0000-7000-8000-000000000001"
FORK = "019b0000-0000-7000-8000-000000000002"
TURNS = [
    (
        "019b0000-1111-7000-8000-00000000000a",
        "2026-01-10T09:01:00.000Z",
        "add a --dry-run flag",
        "/repo",
    ),
    (
        "019b0000-1111-7000-8000-00000000000b",
        "2026-01-10T09:05:00.000Z",
        "use pathlib, not os.path",
        "/repo",
    ),
    (
        "019b0000-1111-7000-8000-00000000000c",
        "2026-01-10T09:09:00.000Z",
        "now write the tests",
        "/repo/wt",
    ),
    ("019b0000-1111-7000-8000-00000000000d", "2026-01-10T09:12:00.000Z", "continue", "/repo/wt"),
]


def _session(sid: str = SID) -> list[str]:
    lines = [_meta(sid, "/repo")]
    for turn_id, ts, prompt, cwd in TURNS:
        lines += _turn_lines(turn_id, ts, prompt, cwd)
    return lines


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_synthetic_session_humans_session_and_cwd(tmp_path: Path) -> None:
    path = _write(tmp_path / f"rollout-2026-01-10T09-00-00-{SID}.jsonl", _session())
    turns, stats = _read(path, everything=False)
    assert [(t.text, t.session_id, t.cwd, t.timestamp) for t in turns] == [
        ("add a --dry-run flag", SID, "/repo", "2026-01-10T09:01:00.000Z"),
        ("use pathlib, not os.path", SID, "/repo", "2026-01-10T09:05:00.000Z"),
        ("now write the tests", SID, "/repo", "2026-01-10T09:09:00.000Z"),  # turn_context follows
        ("continue", SID, "/repo/wt", "2026-01-10T09:12:00.000Z"),
    ]
    assert stats.human_turns == 4


def test_fork_copies_keep_their_ids(tmp_path: Path) -> None:
    """A fork (``/fork``, or editing an earlier prompt) writes its own session_meta, then the
    parent's lines as copies. codex-rs stamps the copies with new envelope timestamps but
    their turn ids are the originals, so copied prompts keep their ids."""
    parent_lines = _session()
    parent = _write(tmp_path / f"rollout-2026-01-10T09-00-00-{SID}.jsonl", parent_lines)
    copies = []
    for line in parent_lines[: 1 + 8 * 2]:  # meta + the first two turns
        obj = json.loads(line)
        obj["timestamp"] = "2026-01-11T08:00:00.123Z"
        copies.append(json.dumps(obj, separators=(",", ":")))
    fork_lines = [_meta(FORK, "/repo", "2026-01-11T08:00:00.100Z", forked_from_id=SID), *copies]
    fork_lines += _turn_lines(
        "019b0000-1111-7000-8000-0000000000ff",
        "2026-01-11T08:00:05.000Z",
        "rather use click",
        "/repo",
    )
    fork = _write(tmp_path / f"rollout-2026-01-11T08-00-00-{FORK}.jsonl", fork_lines)

    parent_turns, _ = _read(parent, everything=False)
    fork_turns, _ = _read(fork, everything=False)
    parent_ids = {t.text: t.id for t in parent_turns}
    assert [t.text for t in fork_turns] == [
        "add a --dry-run flag",
        "use pathlib, not os.path",
        "rather use click",
    ]
    for turn in fork_turns[:2]:
        assert turn.id == parent_ids[turn.text]
        assert turn.session_id == FORK  # the file's own (first) session_meta
    assert fork_turns[2].id not in parent_ids.values()


def test_fork_with_original_timestamps_keeps_ids_without_turn_ids(tmp_path: Path) -> None:
    """Older rollouts have no turn ids: ids then rest on the timestamp, so copies that keep
    their original timestamps keep their ids, and a new prompt gets a new one."""

    def old_turn(ts: str, prompt: str) -> list[str]:
        return [
            _user_item(ts, prompt),
            _user_message(ts, prompt),
            _line(ts, "turn_context", {"cwd": "/repo", "model": "gpt-5.1"}),
        ]

    parent_lines = [
        _meta(SID, "/repo"),
        *old_turn("2025-11-01T10:00:00.000Z", "first"),
        *old_turn("2025-11-01T10:05:00.000Z", "second"),
    ]
    parent = _write(tmp_path / "parent.jsonl", parent_lines)
    fork = _write(
        tmp_path / "fork.jsonl",
        [_meta(FORK, "/repo"), *parent_lines, *old_turn("2025-11-02T10:00:00.000Z", "second")],
    )
    parent_turns, _ = _read(parent, everything=False)
    fork_turns, _ = _read(fork, everything=False)
    assert [t.id for t in fork_turns[:2]] == [t.id for t in parent_turns]
    assert fork_turns[2].text == "second" and fork_turns[2].id != parent_turns[1].id


def test_incremental_read_between_task_started_and_user_message(tmp_path: Path) -> None:
    """A read that starts mid-turn recovers the turn id, the session and the last cwd, so ids
    and cwd equal those of a full read."""
    lines = _session()
    path = _write(tmp_path / f"rollout-2026-01-10T09-00-00-{SID}.jsonl", lines)
    full, _ = _read(path, everything=False)
    # Start at the user_message of the 4th turn: its task_started is before the offset, and
    # the 3rd turn's turn_context moved cwd to /repo/wt.
    index = 1 + 8 * 3 + 2
    offset = sum(len(line) + 1 for line in lines[:index])
    stats = ReadStats()
    stream = LineStream(path, stats, offset=offset, line=index)
    tail = list(CodexSource().read(stream, _file(path), stats))
    assert [(t.id, t.line, t.text, t.session_id, t.cwd) for t in tail] == [
        (t.id, t.line, t.text, t.session_id, t.cwd) for t in full[3:]
    ]
    assert tail[0].cwd == "/repo/wt" and tail[0].session_id == SID


def test_compacted_replacement_history_is_not_counted(tmp_path: Path) -> None:
    lines = _session()
    replacement = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "add a --dry-run flag"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "use pathlib, not os.path"}],
        },
    ]
    lines.insert(
        17,
        _line(
            "2026-01-10T09:06:00.000Z",
            "compacted",
            {"message": "", "replacement_history": replacement},
        ),
    )
    lines.insert(18, _line("2026-01-10T09:06:00.001Z", "event_msg", {"type": "context_compacted"}))
    path = _write(tmp_path / "r.jsonl", lines)
    turns, stats = _read(path)
    assert [t.text for t in turns if t.is_human] == [p for _, _, p, _ in TURNS]
    assert stats.dropped["compaction_summary"] == 1
    assert [t.kind for t in turns if t.line == 18] == ["compaction_summary"]


LEGACY_ID = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"


def _legacy_lines() -> list[str]:
    def item(obj: dict[str, object]) -> str:
        return json.dumps(obj, separators=(",", ":"))

    return [
        item(
            {
                "id": LEGACY_ID,
                "timestamp": "2025-05-07T17:24:21.123Z",
                "instructions": "Always run ruff.",
                "git": {"branch": "main"},
            }
        ),
        item({"record_type": "state"}),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<user_instructions>\n\nAlways run ruff.\n\n</user_instructions>",
                    }
                ],
            }
        ),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>/src/app</cwd>\n</environment_context>",
                    }
                ],
            }
        ),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Rename util.py to helpers.py"}],
            }
        ),
        item(
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**Renaming**"}],
                "encrypted_content": "gAAAA",
            }
        ),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["git","mv"]}',
                "call_id": "call_1",
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": '{"output":"","metadata":{"exit_code":0}}',
            }
        ),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Renamed."}],
            }
        ),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<user_shell_command>\n<command>\ngit status\n</command>\n<result>\nExit code: 0\n</result>\n</user_shell_command>",
                    }
                ],
            }
        ),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "thanks, now commit"}],
            }
        ),
    ]


def test_legacy_bare_format(tmp_path: Path) -> None:
    path = _write(tmp_path / f"rollout-2025-05-07T17-24-21-{LEGACY_ID}.jsonl", _legacy_lines())
    turns, stats = _read(path)
    assert _humans(turns) == [(5, "Rename util.py to helpers.py"), (11, "thanks, now commit")]
    assert [(t.line, t.kind) for t in turns if not t.is_human] == [
        (1, "instructions"),
        (2, "bookkeeping"),
        (3, "agents_md"),
        (4, "environment_context"),
        (6, "reasoning"),
        (7, "tool_use"),
        (8, "tool_output"),
        (9, "assistant"),
        (10, "bash"),
    ]
    bash = next(t for t in turns if t.kind == "bash")
    assert (bash.text, bash.kept, bash.reason) == ("git status", False, "event: shell command")
    assert {t.session_id for t in turns} == {LEGACY_ID}
    assert all(t.timestamp is None for t in turns if t.line > 1)
    fast, _ = _read(path, everything=False)
    assert [(t.id, t.text) for t in fast] == [(t.id, t.text) for t in turns if t.is_human]
    assert stats.human_turns == 2


def test_injected_items_next_to_a_real_prompt_fallback_channel(tmp_path: Path) -> None:
    """One user message mixing injected items with the typed one, in a file with no
    user_message events (so the response_item channel is used)."""
    lines = [
        _meta(SID, "/repo"),
        _user_item(
            "2026-01-10T09:01:00.000Z",
            "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nUse uv.\n</INSTRUCTIONS>",
            "<ENVIRONMENT_CONTEXT>\n  <cwd>/repo</cwd>\n</environment_context>",
            "Please fix the flaky test in test_api.py",
            "<skill>\n<name>pdf</name>\n</skill>",
        ),
    ]
    path = _write(tmp_path / "r.jsonl", lines)
    turns, _ = _read(path)
    assert [(t.kind, t.kept) for t in turns if t.line == 2] == [
        ("agents_md", False),
        ("environment_context", False),
        ("human", True),
        ("skill", False),
    ]
    assert _humans(turns) == [(2, "Please fix the flaky test in test_api.py")]
    fast, _ = _read(path, everything=False)
    assert [t.text for t in fast] == ["Please fix the flaky test in test_api.py"]


def test_user_items_are_duplicates_when_events_exist_later(tmp_path: Path) -> None:
    """Injected items in a turn of their own come before any event; the file-level rule
    still drops them, as in the 0.104 Desktop sample (redacted text has no markers)."""
    lines = [
        _meta(SID, "/repo"),
        _user_item("2026-01-10T09:00:01.000Z", "[REDACTED_TEXT len=3019]"),
        _user_item("2026-01-10T09:00:01.000Z", "[REDACTED_TEXT len=110]"),
        _line("2026-01-10T09:00:02.000Z", "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _user_item("2026-01-10T09:00:02.000Z", "[REDACTED_TEXT len=9]"),
        _user_message("2026-01-10T09:00:02.000Z", "[REDACTED_MESSAGE len=9]"),
    ]
    path = _write(tmp_path / "r.jsonl", lines)
    for everything in (True, False):
        turns, stats = _read(path, everything=everything)
        assert _humans(turns) == [(6, "[REDACTED_MESSAGE len=9]")]
    turns, stats = _read(path)
    assert stats.dropped["duplicate_channel"] == 3


def test_user_message_with_injected_prefix(tmp_path: Path) -> None:
    ts = "2026-01-10T09:01:00.000Z"
    lines = [
        _meta(SID, "/repo"),
        _user_message(
            ts,
            "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>\n\nshorter names please",
        ),
        _user_message(
            ts,
            "# Context from my IDE setup:\n\n## Active file: a.py\n\n## My request for Codex:\nextract a function",
        ),
        _user_message(
            ts, "<user_instructions>\nbe terse\n</user_instructions>", kind="user_instructions"
        ),
        _user_message(ts, "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>"),
        _line(ts, "event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        _user_item(ts, "<turn_aborted>\nThe user interrupted.\n</turn_aborted>"),
    ]
    path = _write(tmp_path / "r.jsonl", lines)
    turns, _ = _read(path)
    assert _humans(turns) == [(2, "shorter names please"), (3, "extract a function")]
    kinds = {t.line: t.kind for t in turns}
    assert kinds[4] == "agents_md" and kinds[5] == "environment_context"
    assert kinds[6] == "interrupt" and kinds[7] == "duplicate_channel"


def test_pretty_printed_json_passes_the_prefilter(tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "timestamp": "2026-01-10T09:00:00.000Z",
                "type": "session_meta",
                "payload": {"id": SID, "cwd": "/repo"},
            }
        ),
        json.dumps(
            {
                "timestamp": "2026-01-10T09:01:00.000Z",
                "type": "event_msg",
                "payload": {"type": "user_message", "message": "spaced out"},
            }
        ),
    ]
    path = _write(tmp_path / "r.jsonl", lines)
    turns, _ = _read(path, everything=False)
    assert [(t.text, t.session_id, t.cwd) for t in turns] == [("spaced out", SID, "/repo")]
    legacy = _write(
        tmp_path / "legacy.jsonl",
        [
            json.dumps({"id": LEGACY_ID, "timestamp": "2025-05-07T17:24:21.123Z"}),
            json.dumps(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "spaced legacy"}],
                }
            ),
        ],
    )
    turns, _ = _read(legacy, everything=False)
    assert [(t.text, t.session_id) for t in turns] == [("spaced legacy", LEGACY_ID)]


def test_zst_rollout_discovered_and_read(tmp_path: Path) -> None:
    lines = _session()
    plain = _write(tmp_path / "plain.jsonl", lines)
    day = tmp_path / "home" / "sessions" / "2026" / "01" / "10"
    day.mkdir(parents=True)
    name = f"rollout-2026-01-10T09-00-00-{SID}.jsonl.zst"
    (day / name).write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    found = list(CodexSource().discover(tmp_path / "home"))
    assert len(found) == 1 and isinstance(found[0], TranscriptFile)
    file = found[0]
    assert (file.rel, file.session_hint, file.project) == (f"sessions/2026/01/10/{name}", SID, None)
    stats = ReadStats()
    turns = list(CodexSource().read(LineStream(file.path, stats), file, stats))
    expected, _ = _read(plain, everything=False)
    assert [(t.id, t.text, t.cwd) for t in turns] == [(t.id, t.text, t.cwd) for t in expected]
    assert {t.path for t in turns} == {file.rel}


def test_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "codex"
    day = home / "sessions" / "2025" / "11" / "20"
    day.mkdir(parents=True)
    uid = "019aad50-a7e6-7422-b7a8-0b384290624f"
    (day / f"rollout-2025-11-20T10-00-00-{uid}.jsonl").write_text("{}\n")
    (day / "notes.txt").write_text("x")
    (day / "rollout-broken-name.jsonl").write_text("{}\n")
    (home / "archived_sessions").mkdir()
    (home / "archived_sessions" / f"rollout-2025-10-01T10-00-00-{uid[:-1]}0.jsonl").write_text(
        "{}\n"
    )
    (
        home / "sessions" / "rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"
    ).write_text("{}\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / f"rollout-2025-01-01T00-00-00-{uid}.jsonl").write_text("{}\n")
    (home / "sessions" / "2025" / "link").symlink_to(outside, target_is_directory=True)
    locked = home / "sessions" / "2025" / "12"
    locked.mkdir()
    real_scandir = os.scandir

    def fake_scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) == locked:
            raise PermissionError(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    found = list(CodexSource().discover(home))
    files = sorted((f.rel, f.session_hint) for f in found if isinstance(f, TranscriptFile))
    assert files == [
        (f"archived_sessions/rollout-2025-10-01T10-00-00-{uid[:-1]}0.jsonl", f"{uid[:-1]}0"),
        (
            "sessions/2025/11/20/rollout-2025-11-20T10-00-00-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl",
            uid,
        ),
        ("sessions/2025/11/20/rollout-broken-name.jsonl", None),
        (
            "sessions/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
            "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
        ),
    ]
    skipped = [(s.rel, s.reason) for s in found if isinstance(s, Skipped)]
    assert skipped == [("sessions/2025/12", "unreadable")]
    assert list(CodexSource().discover(tmp_path / "missing")) == []


def test_unreadable_file_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    day = tmp_path / "sessions" / "2025" / "11" / "20"
    day.mkdir(parents=True)
    path = day / f"rollout-2025-11-20T10-00-00-{SID}.jsonl"
    path.write_text("{}\n")
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if Path(p) == path else real_access(p, mode)
    )
    assert [(type(f).__name__, f.rel) for f in CodexSource().discover(tmp_path)] == [
        ("Skipped", f"sessions/2025/11/20/{path.name}")
    ]


# -- split_injected / classify_text -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain prompt", ("human", "plain prompt", None)),
        (
            "  <Environment_Context>x</ENVIRONMENT_CONTEXT>  ",
            (
                "environment_context",
                "  <Environment_Context>x</ENVIRONMENT_CONTEXT>  ",
                "environment_context",
            ),
        ),
        ("<environment_context>x</environment_context>\nreal", ("human", "real", None)),
        ("<skill> unclosed, typed by hand", ("human", "<skill> unclosed, typed by hand", None)),
        (
            "<subagent_notification>{}</subagent_notification>",
            (
                "subagent_notification",
                "<subagent_notification>{}</subagent_notification>",
                "subagent_notification",
            ),
        ),
        (
            "<additional_context>\n<title>Context from my editor</title>\n</additional_context>",
            (
                "additional_context",
                "<additional_context>\n<title>Context from my editor</title>\n</additional_context>",
                "additional_context",
            ),
        ),
        (
            "<user_shell_command>\nls -la\n</user_shell_command>\n<user_shell_command_output>\nx\n</user_shell_command_output>",
            ("bash", "ls -la", "event: shell command"),
        ),
        (
            "<turn_aborted>\nstopped\n</turn_aborted>",
            ("interrupt", "<turn_aborted>\nstopped\n</turn_aborted>", "event: interrupted"),
        ),
        (
            "# Context from my IDE setup:\n\n## Open tabs:\n- a.py",
            ("ide_context", "# Context from my IDE setup:\n\n## Open tabs:\n- a.py", "ide_context"),
        ),
        ("", ("empty", "", "empty")),
    ],
)
def test_classify_text(text: str, expected: tuple[str, str, str | None]) -> None:
    assert classify_text(text) == expected


def test_agents_md_whole_item_rule_beats_an_inner_end_marker() -> None:
    text = "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\nnever write </INSTRUCTIONS> here\n</INSTRUCTIONS>"
    assert split_injected(text) == ("", [("agents_md", text)])


def test_non_ascii_case_does_not_shift_offsets() -> None:
    text = "<environment_context>İİİ</environment_context>\nkeep this"
    assert split_injected(text)[0] == "keep this"


# -- robustness ---------------------------------------------------------------------------

BAD_LINES = [
    b'{"timestamp":"2026-01-10T09:00:00.000Z","type":"event_msg","payload":{"type":"user_mess',
    b"\x00\x00\x00\x00",
    b'{"type":"event_msg","payload":{"type":"token_count"}}{"type":"event_msg"}',
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"lone \\ud83d surrogate"}}',
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"bad \xff\xfe utf8"}}',
    b'{"timestamp":"t","type":"brand_new_kind","payload":{"x":1}}',
    b'{"timestamp":"t","type":"response_item","payload":"not a dict"}',
    b'{"timestamp":"t","type":"response_item"}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"a string"}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[1,null,{"type":"input_image"},{"type":"x"}]}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":{"k":1}}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"martian","content":[]}}',
    b'{"timestamp":"t","type":"response_item","payload":{"type":"brand_new_item"}}',
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":42}}',
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message"}}',
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"brand_new_event"}}',
    b'{"timestamp":"t","type":"session_meta","payload":{"id":7,"cwd":["x"]}}',
    b'{"timestamp":"t","type":"turn_context","payload":{"cwd":null,"turn_id":"'
    + b"x" * 300
    + b'"}}',
    b'{"timestamp":12,"type":"compacted","payload":{"message":null,"replacement_history":"x"}}',
    b"[1,2,3]",
    b'"just a string"',
    b"",
    b"   ",
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b'{"id":"not-line-one","instructions":7}',
    b'{"record_type":"state"}',
]


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_lines_never_raise(bad: bytes, tmp_path: Path) -> None:
    good_meta = _meta(SID, "/repo").encode()
    good = _user_message("2026-01-10T09:05:00.000Z", "still here").encode()
    path = tmp_path / "r.jsonl"
    path.write_bytes(good_meta + b"\n" + bad + b"\n" + good + b"\n")
    for everything in (True, False):
        for context in (True, False):
            turns, stats = _read(path, everything=everything, context=context)
            assert "still here" in [t.text for t in turns if t.is_human]
            assert {t.session_id for t in turns} == {SID}
    turns, stats = _read(path)
    assert {t.line for t in turns} == {1, 2, 3}
    assert sum(stats.dropped.values()) + stats.human_turns + sum(stats.bad_lines.values()) >= 3


def test_lone_surrogate_is_repaired_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(_meta(SID, "/r").encode() + b"\n" + BAD_LINES[3] + b"\n")
    turns, stats = _read(path, everything=False)
    assert [t.text for t in turns] == ["lone \ufffd surrogate"]
    assert stats.bad_lines["repaired_surrogates"] == 1


def test_read_path_helper(tmp_path: Path) -> None:
    path = _write(tmp_path / f"rollout-2026-01-10T09-00-00-{SID}.jsonl", _session())
    stats = ReadStats()
    turns = list(read_path(path, stats))
    assert len([t for t in turns if t.is_human]) == 4


@needs_samples
@pytest.mark.parametrize(("name", "step"), [(V060, 97), (V104, 7), (V135, 1)])
def test_reads_from_any_line_boundary_agree_with_a_full_read(name: str, step: int) -> None:
    """Ids, session, cwd and kinds do not depend on where a read starts."""
    path = SAMPLES / name
    file = _file(path)

    def key(turns: list[Turn]) -> list[tuple[object, ...]]:
        return [(t.id, t.line, t.text, t.session_id, t.cwd, t.kind) for t in turns]

    lines = path.read_bytes().splitlines(keepends=True)
    for everything in (False, True):
        full = key(_read(path, everything=everything, context=True)[0])
        offset = 0
        for index, line in enumerate(lines[:-1], 1):
            offset += len(line)
            if index % step:
                continue
            stats = ReadStats()
            stream = LineStream(path, stats, offset=offset, line=index)
            tail = list(
                CodexSource().read(stream, file, stats, everything=everything, context=True)
            )
            assert key(tail) == [k for k in full if k[1] > index], index
