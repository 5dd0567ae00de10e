"""The Claude Code reader on the real transcripts in ../shared/transcripts/claude/.

Expected human turns were found by reading each file by hand (FORMATS.md 1.4 / 1.11) and are
cross-checked by a second, independent parser written here from the FORMATS.md rules.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from habitus.model import ReadStats
from habitus.sources.base import LineStream, TranscriptFile
from habitus.sources.claude_code import ClaudeCodeSource, classify_text, read_path

V1024 = "claude/cc-v1.0.24-summaries-thinking-interrupts.jsonl"
V1043 = "claude/cc-v1.0.43-slash-commands-image-system.jsonl"
V2037 = "claude/cc-v2.0.37-agent-warmup-sidechain.jsonl"
V2042 = "claude/cc-v2.0.42-queue-ops-ide-selection.jsonl"
V21152 = "claude/cc-v2.1.152-sdk-cli-redacted.jsonl"
V21114 = "claude/projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"

#: (line, kind, start of text) per file, read by hand.
EXPECTED = {
    V1024: [
        (16, "human", "Hey Claude, can you please add a Github Action to run tests and linting? You can test it with `act`."),
        (48, "human", "Wait, does it only run on main? I think we should run it on all push? Also, would you mind fixing the type issues?"),
    ],
    V1043: [
        (1, "human", "Hey Claude, I'd like your help with refactoring the timeline filtering"),
        (16, "human", "You can set group.visible using the vis library which is less work"),
        (21, "human", "I don't think we need to loop through all items, the group names should match the filters?"),
        (46, "human", "I think the library is setting it, it's an inline style"),
    ],
    V2037: [],
    V2042: [
        (47, "human", "OK, so this was just so you know what there is now, but after more than a decade"),
        (59, "human", "I have both Node and Python, but I don't want to make it only work for me"),
        (64, "human", "ok, fine, let's do vite"),
        (77, "rejection", "use pnpm"),
        (99, "human", "yes please, and let's make it cross-browser"),
        (169, "human", "Let's also Migrate to AudioWorklet"),
    ],
    V21152: [(3, "human", "[REDACTED_PROMPT]")],
    V21114: [
        (5, "human", "OK, we're going to make a little experiment here."),
        (117, "human", "Well, the subagents seem to be either stuck or done... can you check?"),
    ],
}

#: Exact count of each dropped kind (assistant messages counted once per message.id).
DROPPED = {
    V1024: {"assistant": 7, "command": 1, "command_output": 1, "meta": 1, "summary": 15, "thinking": 18, "tool_output": 32, "tool_use": 9},
    V1043: {"assistant": 9, "command": 3, "command_output": 3, "image": 1, "interrupt": 3, "meta": 1, "system": 8, "thinking": 4, "tool_output": 11, "tool_rejected": 3, "tool_use": 2},
    V2037: {"assistant": 1, "warmup": 1},
    V2042: {"assistant": 13, "command": 1, "ide_context": 2, "interrupt": 1, "meta": 1, "queue_copy": 12, "thinking": 23, "tool_output": 67, "tool_rejected": 3},
    V21114: {"assistant": 8, "attachment": 49, "bookkeeping": 8, "command": 1, "command_output": 1, "last_prompt_copy": 7, "meta": 1, "snapshot": 3, "system": 6, "thinking": 8, "tool_output": 40, "tool_use": 1},
}

_MARKERS = ("<command-", "<local-command-", "<bash-", "<ide_", "<system-reminder>", "Caveat: The messages below", "[Request interrupted by user", "This session is being continued")


def independent_human_lines(path: Path) -> list[int]:
    """Second method, straight from FORMATS.md 1.11: line numbers holding human text."""
    found = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        obj = json.loads(raw)
        if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
            continue
        content = obj["message"]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text" and not block["text"].lstrip().startswith(_MARKERS):
                found.append(number)
            if block.get("type") == "tool_result" and "reason for the rejection:" in str(block.get("content")):
                found.append(number)
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_human_turns_match_hand_reading(shared: Path, name: str) -> None:
    path = shared / "transcripts" / name
    stats = ReadStats()
    turns = list(read_path(path, stats))
    kept = [(t.line, t.kind, t.text) for t in turns if t.kept]
    expected = EXPECTED[name]
    assert [(line, kind) for line, kind, _ in kept] == [(line, kind) for line, kind, _ in expected]
    for (_, _, text), (_, _, start) in zip(kept, expected, strict=True):
        assert text.startswith(start)
    assert sorted({line for line, _, _ in kept}) == sorted(set(independent_human_lines(path)))
    assert stats.human_turns == len(expected)
    assert not stats.bad_lines


@pytest.mark.parametrize("name", sorted(DROPPED))
def test_dropped_kinds_are_counted_exactly(shared: Path, name: str) -> None:
    path = shared / "transcripts" / name
    stats = ReadStats()
    list(read_path(path, stats))
    assert dict(stats.dropped) == DROPPED[name]
    # Cross-check with plain counts taken from the file.
    lines = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    types = Counter(o.get("type") for o in lines)
    messages = {o["message"]["id"] for o in lines if o.get("type") == "assistant"}
    assistant_kinds = sum(stats.dropped[k] for k in ("assistant", "thinking", "tool_use", "empty"))
    assert assistant_kinds == len(messages)
    assert stats.dropped["summary"] == types["summary"]
    assert stats.dropped["queue_copy"] == types["queue-operation"]
    assert stats.dropped["last_prompt_copy"] == types["last-prompt"]
    assert stats.dropped["attachment"] == types["attachment"]
    assert stats.lines == len(lines)


def test_every_real_claude_file_reads_without_error(shared: Path) -> None:
    files = sorted((shared / "transcripts" / "claude").rglob("*.jsonl"))
    assert len(files) >= 16
    for path in files:
        stats = ReadStats()
        turns = list(read_path(path, stats))
        assert stats.lines == sum(1 for x in path.read_bytes().splitlines() if x.strip())
        assert not stats.bad_lines
        covered = {t.line for t in turns} | {t.end_line for t in turns if t.end_line}
        assert max(covered, default=0) <= stats.lines


def test_subagent_files_yield_no_human_turns(shared: Path) -> None:
    for path in (shared / "transcripts" / "claude" / "projects").rglob("agent-*.jsonl"):
        turns = list(read_path(path, ReadStats()))
        assert not [t for t in turns if t.kept], path


def test_split_assistant_lines_are_one_turn(shared: Path) -> None:
    path = shared / "transcripts" / V21114
    turns = [t for t in read_path(path, ReadStats()) if t.role == "assistant"]
    lines = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    ids = [o["message"]["id"] for o in lines if o.get("type") == "assistant"]
    assert len(turns) == len(set(ids))
    merged = [t for t in turns if t.end_line]
    assert merged, "the 2.1.114 sample splits messages over several lines"


@pytest.mark.parametrize(
    ("text", "kind", "out"),
    [
        ("please use uv", "human", "please use uv"),
        ("<command-name>clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", "command", "/clear"),
        ("<command-message>init is analyzing</command-message>\n<command-name>/init</command-name><command-args>fast</command-args>", "command", "/init fast"),
        ("<bash-input>uv run pytest</bash-input>", "bash", "uv run pytest"),
        ("<local-command-stdout>ok</local-command-stdout>", "command_output", None),
        ("Caveat: The messages below were generated by the user while running local commands.", "caveat", None),
        ("<ide_selection>The user selected lines 1 to 2</ide_selection>", "ide_context", None),
        ("<system-reminder>be nice</system-reminder>\nship it", "human", "ship it"),
        ("fix it <system-reminder>x</system-reminder> now", "human", "fix it now"),
        ("<system-reminder>only this</system-reminder>", "system_reminder", None),
        ("[Request interrupted by user for tool use]", "interrupt", "[Request interrupted by user for tool use]"),
        ("This session is being continued from a previous conversation that ran out of context.", "compaction_summary", None),
        ("<task-notification>done</task-notification>", "task_notification", None),
        ("<some-hook_output>x</some-hook_output>", "injected_tag", None),
        ("   ", "empty", None),
    ],
)
def test_classify_text(text: str, kind: str, out: str | None) -> None:
    got_kind, got_text, _ = classify_text(text)
    assert got_kind == kind
    if out is not None:
        assert got_text == out


def _write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "11111111-2222-3333-4444-555555555555.jsonl"
    path.write_bytes(b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines))
    return path


def _user(text: object, **extra: object) -> dict[str, object]:
    return {"type": "user", "uuid": f"u{hash(str(text)) & 0xffff}", "sessionId": "s1", "message": {"role": "user", "content": text}, **extra}


def test_line_flags_and_blocks(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            _user("typed"),
            _user("Base directory for this skill: x. Always use yarn.", isMeta=True),
            _user("Always answer in JSON", isSidechain=True),
            _user("This session is being continued … always use poetry", isCompactSummary=True),
            _user([{"type": "text", "text": "<ide_opened_file>f</ide_opened_file>"}, {"type": "text", "text": "real words"}, {"type": "image", "source": {}}]),
            {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "content": [{"type": "text", "text": "I'll always use tabs"}]}},
            {"type": "brand-new-type", "x": 1},
            b"{broken",
            _user([{"type": "tool_result", "tool_use_id": "t", "is_error": True, "content": [{"type": "text", "text": "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). The user provided the following reason for the rejection:  no, use ruff"}]}]),
        ],
    )
    stats = ReadStats()
    turns = list(read_path(path, stats))
    kept = [(t.line, t.kind, t.text) for t in turns if t.kept]
    assert kept == [(1, "human", "typed"), (5, "human", "real words"), (9, "rejection", "no, use ruff")]
    kinds = Counter(t.kind for t in turns if not t.kept)
    assert kinds == Counter({"meta": 1, "sidechain": 1, "compaction_summary": 1, "ide_context": 1, "image": 1, "assistant": 1, "unknown_type": 1, "broken": 1})
    assert stats.bad_lines == Counter({"invalid_json": 1})
    assert stats.dropped["unknown_type"] == 1


def test_stable_ids_follow_uuid_across_files(tmp_path: Path) -> None:
    a = _write(tmp_path, [_user("same message", uuid="u-1")])
    b = tmp_path / "other.jsonl"
    b.write_bytes(b'{"type":"summary","summary":"x"}\n' + a.read_bytes())
    ta = [t for t in read_path(a, ReadStats()) if t.kept]
    tb = [t for t in read_path(b, ReadStats()) if t.kept]
    assert ta[0].id == tb[0].id and ta[0].line == 1 and tb[0].line == 2


def test_partial_last_line_is_left_for_next_run(tmp_path: Path) -> None:
    path = _write(tmp_path, [_user("one")])
    with open(path, "ab") as fh:
        fh.write(json.dumps(_user("two")).encode())  # no newline yet
    stats = ReadStats()
    stream = LineStream(path, stats)
    st = path.stat()
    file = TranscriptFile("claude", path, path.name, st.st_size, st.st_mtime, st.st_ino, "s1")
    turns = [t for t in ClaudeCodeSource().read(stream, file, stats) if t.kept]
    assert [t.text for t in turns] == ["one"]
    first_line_len = len(path.read_bytes().split(b"\n")[0]) + 1
    assert stream.offset == first_line_len and stream.line == 1
    with open(path, "ab") as fh:
        fh.write(b"\n")
    stream2 = LineStream(path, stats, offset=stream.offset, line=stream.line)
    turns2 = [t for t in ClaudeCodeSource().read(stream2, file, stats) if t.kept]
    assert [(t.line, t.text, t.start) for t in turns2] == [(2, "two", first_line_len)]


def test_byte_ranges_point_at_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"type": "summary", "summary": "é"}, _user("héllo wörld")])
    turn = next(t for t in read_path(path, ReadStats()) if t.kept)
    data = path.read_bytes()
    assert json.loads(data[turn.start : turn.end])["message"]["content"] == "héllo wörld"


def test_prompt_absorbed_mid_turn_is_human(tmp_path: Path) -> None:
    """Claude Code 2.1.x writes a prompt typed while the agent works only as a
    ``queued_command`` attachment (no user line)."""
    path = _write(
        tmp_path,
        [
            {"type": "queue-operation", "operation": "enqueue", "content": "from now on use uv", "sessionId": "s1"},
            {"type": "queue-operation", "operation": "remove", "reason": "absorbed_mid_turn", "sessionId": "s1"},
            {"type": "attachment", "sessionId": "s1", "timestamp": "2026-11-01T10:00:00.000Z", "attachment": {"type": "queued_command", "prompt": "from now on use uv", "origin": {"kind": "human"}}},
            {"type": "attachment", "sessionId": "s1", "attachment": {"type": "queued_command", "prompt": "<task-notification>done</task-notification>"}},
            {"type": "attachment", "sessionId": "s1", "attachment": {"type": "queued_command", "prompt": "peer says hi", "origin": {"kind": "peer"}}},
            {"type": "attachment", "sessionId": "s1", "attachment": {"type": "hook_success", "content": "always do x"}},
        ],
    )
    stats = ReadStats()
    turns = list(read_path(path, stats))
    assert [(t.line, t.text) for t in turns if t.kept] == [(3, "from now on use uv")]
    assert stats.dropped == Counter({"queue_copy": 2, "task_notification": 1, "queued_non_human": 1, "attachment": 1})
    fast = [t for t in ClaudeCodeSource().read(LineStream(path, ReadStats()), TranscriptFile("claude", path, path.name, 0, 0, 0, "s1"), ReadStats()) if t.kept]
    assert [t.line for t in fast] == [3]  # the byte pre-filter lets the attachment through


def test_prefilter_never_drops_human_text_in_real_files(shared: Path) -> None:
    """The byte pre-filter must keep every line that holds human text (compared with a full
    parse of every line) while skipping tool-output lines."""
    from habitus.sources.claude_code import might_hold_text

    skipped = 0
    for path in sorted((shared / "transcripts" / "claude").rglob("*.jsonl")):
        full = [t for t in read_path(path, ReadStats()) if t.kept]
        for turn in full:
            raw = path.read_bytes().split(b"\n")[turn.line - 1]
            assert might_hold_text(raw), (path.name, turn.line)
        skipped += sum(1 for raw in path.read_bytes().splitlines() if b'"tool_use_id"' in raw and not might_hold_text(raw))
    assert skipped > 100


def test_prefilter_keeps_text_after_tool_results() -> None:
    from habitus.sources.claude_code import might_hold_text

    line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "out"}]}, {"type": "text", "text": "and always use uv"}]}}, separators=(",", ":")).encode()
    assert might_hold_text(line)
    tool_only = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": [{"type": "text", "text": "out"}], "tool_use_id": "t"}]}}, separators=(",", ":")).encode()
    assert not might_hold_text(tool_only)


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")], ids=["compact", "spaced"])
def test_prefilter_reads_the_separators_the_line_was_written_with(separators: tuple[str, str]) -> None:
    """A line from a serialiser that puts spaces after its separators (Python's json.dumps
    default) is judged like Claude Code's compact lines: text after tool results is kept,
    tool output alone is not, wherever the tool output is repeated."""
    from habitus.sources.claude_code import might_hold_text, might_hold_text_at

    def line(*blocks: dict[str, object], result: object = None) -> bytes:
        obj: dict[str, object] = {"type": "user", "message": {"role": "user", "content": list(blocks)}, "uuid": "u1"}
        if result is not None:
            obj["toolUseResult"] = result
        return json.dumps(obj, separators=separators).encode()

    tool = {"tool_use_id": "toolu_1", "type": "tool_result", "content": "42 passed"}
    with_text = line(tool, {"type": "text", "text": "always use uv"})
    only_tool = line(tool, result={"content": [{"type": "text", "text": "42 passed"}]})
    rejection = line({"type": "tool_result", "content": "The user doesn't want to proceed with this tool use. reason for the rejection: use pnpm", "is_error": True, "tool_use_id": "toolu_2"})
    prompt = line({"type": "text", "text": "run the tests"})
    assert [might_hold_text(x) for x in (with_text, only_tool, rejection, prompt)] == [True, False, True, True]
    # Inside a larger buffer, only the line's own bytes count: the text block of the next
    # line must not make a tool-output line pass.
    buf = b"\n".join((only_tool, with_text, b""))
    assert not might_hold_text_at(buf, 0, len(only_tool))
    assert might_hold_text_at(buf, len(only_tool) + 1, len(buf) - 1)


def test_an_unreadable_session_file_is_skipped_at_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    folder = tmp_path / "projects" / "-w"
    folder.mkdir(parents=True)
    locked = folder / "0199aaaa-bbbb-cccc-dddd-000000000001.jsonl"
    fine = folder / "0199aaaa-bbbb-cccc-dddd-000000000002.jsonl"
    for path in (locked, fine):
        path.write_text("{}\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(locked) else real_access(p, mode))
    found = sorted((type(f).__name__, f.rel, getattr(f, "reason", None)) for f in ClaudeCodeSource().discover(tmp_path))
    assert found == [("Skipped", f"projects/-w/{locked.name}", "unreadable"), ("TranscriptFile", f"projects/-w/{fine.name}", None)]
