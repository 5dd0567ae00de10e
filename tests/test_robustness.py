"""Hostile input: every bad line is skipped and counted, nothing crashes, nothing good is
lost (FORMATS.md section 6). Covers each reader, the line streamer and a whole distill."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from habitus.config import Config
from habitus.model import ReadStats
from habitus.pipeline import DistillOptions, distill
from habitus.sources import SOURCES
from habitus.sources.base import MAX_LINE_BYTES, LineStream, TranscriptFile
from habitus.sources.discover import select

GOOD = {
    "claude": lambda n: json.dumps({"type": "user", "uuid": f"u-{n}", "sessionId": "s", "timestamp": "2026-11-01T00:00:00.000Z", "message": {"role": "user", "content": f"good prompt number {n}"}}),
    "codex": lambda n: json.dumps({"timestamp": f"2026-11-01T00:00:{n % 60:02d}.000Z", "type": "event_msg", "payload": {"type": "user_message", "message": f"good prompt number {n}", "images": []}}),
    "droid": lambda n: json.dumps({"type": "message", "id": f"m{n}", "timestamp": "2026-11-01T00:00:00.000Z", "message": {"role": "user", "content": [{"type": "text", "text": f"good prompt number {n}"}]}}),
}
HEAD = {
    "claude": None,
    "codex": json.dumps({"timestamp": "2026-11-01T00:00:00.000Z", "type": "session_meta", "payload": {"id": "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "cwd": "/w"}}),
    "droid": json.dumps({"type": "session_start", "id": "d1", "title": "t", "cwd": "/w"}),
}

#: Bad lines made from a good line of the agent (so they pass its byte pre-filter and must be
#: parsed), with the reason each must be counted under.
BAD_LINES = [
    (lambda good: good[:-5], "invalid_json"),  # a partial write
    (lambda good: good + good, "two_objects"),
    (lambda good: good[:-2] + b"\x00\x00" + good[-2:], "nul_bytes"),
    (lambda good: b"[" + good + b"]", "not_an_object"),
    (lambda good: b"\xff\xfe" + good, "invalid_json"),  # invalid UTF-8 before the object
]


def _read(agent: str, path: Path, stats: ReadStats, everything: bool = False) -> list:
    st_ = path.stat()
    file = TranscriptFile(agent, path, path.name, st_.st_size, st_.st_mtime, st_.st_ino, "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
    return list(SOURCES[agent].read(LineStream(path, stats), file, stats, everything=everything))


@pytest.mark.parametrize("agent", sorted(GOOD))
@pytest.mark.parametrize("everything", [False, True])
def test_bad_lines_are_counted_and_good_ones_kept(tmp_path: Path, agent: str, everything: bool) -> None:
    lines = [HEAD[agent].encode()] if HEAD[agent] else []
    for n, (make_bad, _) in enumerate(BAD_LINES):
        lines.append(GOOD[agent](n).encode())
        lines.append(make_bad(GOOD[agent](1000 + n).encode()))
    lines.append(b"   ")  # blank: counted when every line is parsed
    lines.append(GOOD[agent](99).encode())
    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    stats = ReadStats()
    turns = _read(agent, path, stats, everything)
    assert [t.text for t in turns if t.kept] == [f"good prompt number {n}" for n in [*range(len(BAD_LINES)), 99]]
    expected: dict[str, int] = {}
    for _, reason in BAD_LINES:
        expected[reason] = expected.get(reason, 0) + 1
    if everything:
        expected["blank"] = 1  # the pre-filter skips a blank line unparsed: it holds no text
    assert {k: v for k, v in stats.bad_lines.items() if v} == expected
    assert stats.lines == len(lines)


def test_lone_surrogates_and_invalid_utf8_are_repaired(tmp_path: Path) -> None:
    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.write_bytes(
        b'{"type":"user","uuid":"a","message":{"content":"emoji cut \\ud83d here"}}\n'
        b'{"type":"user","uuid":"b","message":{"content":"latin1 \xe9t\xe9 here"}}\n'
    )
    stats = ReadStats()
    turns = [t for t in _read("claude", path, stats) if t.kept]
    assert [t.text for t in turns] == ["emoji cut \ufffd here", "latin1 \ufffdt\ufffd here"]
    for turn in turns:
        turn.text.encode("utf-8")  # no lone surrogate survives
    assert stats.bad_lines == {"repaired_surrogates": 1, "repaired_utf8": 1}


def test_line_over_10_mb_is_skipped_without_losing_the_next(tmp_path: Path) -> None:
    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    huge = b'{"type":"user","message":{"content":"' + b"x" * (MAX_LINE_BYTES + 10) + b'"}}'
    good = GOOD["claude"](1).encode()
    path.write_bytes(good + b"\n" + huge + b"\n" + good.replace(b"u-1", b"u-2") + b"\n")
    stats = ReadStats()
    turns = [t for t in _read("claude", path, stats) if t.kept]
    assert [t.line for t in turns] == [1, 3]
    assert stats.bad_lines == {"line_too_long": 1}
    assert stats.bytes_read == path.stat().st_size


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.lists(st.binary(max_size=300), max_size=12), agent=st.sampled_from(sorted(GOOD)))
def test_fuzz_random_bytes_never_crash(tmp_path: Path, junk: list[bytes], agent: str) -> None:
    path = tmp_path / f"{agent}-fuzz.jsonl"
    parts = [HEAD[agent].encode()] if HEAD[agent] else []
    for n, blob in enumerate(junk):
        parts.append(GOOD[agent](n).encode())
        parts.append(blob.replace(b"\n", b" "))
    path.write_bytes(b"\n".join(parts) + b"\n")
    for everything in (False, True):
        stats = ReadStats()
        turns = _read(agent, path, stats, everything)
        kept = [t.text for t in turns if t.kept]
        for n in range(len(junk)):
            assert f"good prompt number {n}" in kept
        assert stats.lines == path.read_bytes().count(b"\n")


def test_folder_of_100000_files_and_hostile_entries(isolated_home: Path) -> None:
    projects = isolated_home / ".claude" / "projects"
    crowd = projects / "-crowd"
    crowd.mkdir(parents=True)
    for i in range(100_000):
        (crowd / f"{i:08x}-0000-4000-8000-000000000000.jsonl").touch()
    os.utime(crowd, None)
    (projects / "-loop").symlink_to(projects, target_is_directory=True)  # a symlink loop
    (crowd / "aaaaaaaa-0000-4000-8000-000000000000.jsonl.broken").symlink_to("/nonexistent")
    (crowd / "bbbbbbbb-0000-4000-8000-000000000000.jsonl").symlink_to("/nonexistent/target")
    old = 1_600_000_000
    for path in list(crowd.iterdir())[:5]:
        if path.is_file():
            os.utime(path, (old, old))
    selection = select(["claude"], days=100000, sessions=20, quiet_minutes=0)
    assert len(selection.files) == 20
    assert selection.skipped_counts["over_session_cap"] >= 99_975
    assert selection.skipped_counts["unreadable"] == 1
    report = distill(DistillOptions(days=100000, sessions=50), config=Config(quiet_minutes=0))
    assert report.files_read == {"new": 50} and report.bad_lines == {}


def _fast_and_full(agent: str, path: Path) -> tuple[list, list, ReadStats, ReadStats]:
    full_stats, fast_stats = ReadStats(), ReadStats()
    full = [(t.line, t.start, t.text, t.id, t.session_id, t.cwd) for t in _read(agent, path, full_stats, everything=True) if t.kept]
    fast = [(t.line, t.start, t.text, t.id, t.session_id, t.cwd) for t in _read(agent, path, fast_stats) if t.kept]
    return full, fast, full_stats, fast_stats


@pytest.mark.parametrize("block", [7, 64, 4096, 4 * 1024 * 1024])
def test_select_matches_a_full_read_on_every_real_file(shared: Path, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block search yields the same human turns (line numbers, byte offsets, ids, which
    hang on the last turn id before them, sessions and working directories) as a line-by-line
    read, whatever the block size (7 bytes forces every line across blocks)."""
    import habitus.sources.base as base

    monkeypatch.setattr(base, "_SELECT_BLOCK", block)
    files = [("claude", p) for p in (shared / "transcripts" / "claude").rglob("*.jsonl") if p.stat().st_size < 600_000 or block > 4096]
    files += [("codex", p) for p in (shared / "transcripts" / "codex").glob("*.jsonl") if p.stat().st_size < 600_000 or block > 4096]
    for agent, path in files:
        full, fast, full_stats, fast_stats = _fast_and_full(agent, path)
        assert fast == full, path.name
        assert fast_stats.lines == full_stats.lines and fast_stats.bytes_read == full_stats.bytes_read, path.name


def test_select_handles_long_lines_crlf_and_partial_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import habitus.sources.base as base

    monkeypatch.setattr(base, "_SELECT_BLOCK", 16)
    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    good = GOOD["claude"]
    long_line = b'{"type":"user","message":{"content":"' + b"y" * 400 + b'"}}'
    data = good(1).encode() + b"\r\n" + long_line + b"\n" + b'{"type":"assistant"}\n' + good(2).encode() + b"\n" + good(3).encode()[:20]
    path.write_bytes(data)
    stats = ReadStats()
    st_ = path.stat()
    file = TranscriptFile("claude", path, path.name, st_.st_size, st_.st_mtime, st_.st_ino, "s")
    stream = LineStream(path, stats, max_line=300)
    kept = [(t.line, t.text) for t in SOURCES["claude"].read(stream, file, stats) if t.kept]
    assert kept == [(1, "good prompt number 1"), (4, "good prompt number 2")]
    assert stats.bad_lines == {"line_too_long": 1}
    assert stream.line == 4 and stream.offset == len(data) - 20  # the partial tail waits


@pytest.mark.parametrize("block", [5, 64, 4 * 1024 * 1024])
def test_select_with_accept_is_a_filtered_full_read(tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines ``accept`` refuses are passed over as if they held no needle; the others keep
    their line numbers and offsets (computed here by a plain line-by-line read), over-long
    lines are counted whatever ``accept`` would say, and context lines stay those before
    each yielded line."""
    import random

    import habitus.sources.base as base

    monkeypatch.setattr(base, "_SELECT_BLOCK", block)
    rng = random.Random(block)
    lines = []
    for i in range(400):
        kind = rng.choice([b"hit keep", b"hit drop", b"ctx", b"plain", b"hit keep " + b"z" * 90])
        lines.append(b"%d %s %s" % (i, kind, b"x" * rng.randrange(0, 30)))
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    def accept(buf: bytes, start: int, stop: int) -> bool:
        return buf.find(b"drop", start, stop) < 0

    stats = ReadStats()
    got = list(LineStream(path, stats, max_line=80).select((b"hit",), context=[b"ctx"], accept=accept))
    expected, last_ctx, offset = [], None, 0
    for number, raw in enumerate(lines, 1):
        if len(raw) > 80:
            pass
        elif b"ctx" in raw:
            last_ctx = (number, offset, raw)
        elif b"hit" in raw and b"drop" not in raw:
            if last_ctx is not None:
                expected.append(last_ctx)
                last_ctx = None
            expected.append((number, offset, raw))
        offset += len(raw) + 1
    got_hits = [g for g in got if b"hit" in g[2]]
    assert got_hits == [e for e in expected if b"hit" in e[2]]
    assert [g for g in got if b"ctx" in g[2] and g in expected] == [e for e in expected if b"ctx" in e[2]]
    assert stats.bad_lines == {"line_too_long": sum(len(raw) > 80 for raw in lines)}
    assert stats.lines == len(lines) and stats.bytes_read == path.stat().st_size


def test_a_fifo_named_like_a_transcript_never_blocks(isolated_home: Path) -> None:
    folder = isolated_home / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "cccccccc-0000-4000-8000-000000000000.jsonl")
    os.mkfifo(isolated_home / ".claude" / "history.jsonl")
    report = distill(DistillOptions(days=100000, sessions=50), config=Config(quiet_minutes=0))
    assert report.skipped == {"not_a_regular_file": 1} and report.files_read == {}


def test_inspect_shows_a_last_line_without_newline_that_distill_waits_for(tmp_path: Path) -> None:
    from habitus.sources.inspect import inspect_path

    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.write_bytes(GOOD["claude"](1).encode() + b"\n" + GOOD["claude"](2).encode())
    turns, stats, _ = inspect_path(path)
    assert [(t.line, t.kept) for t in turns] == [(1, True), (2, True)]
    assert stats.lines == 1 and stats.bytes_read == len(GOOD["claude"](1)) + 1


def test_codex_and_droid_report_fifos_and_follow_symlinked_files(isolated_home: Path, shared: Path) -> None:
    day = isolated_home / ".codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    os.mkfifo(day / "rollout-2026-11-20T10-00-00-0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl")
    real = shared / "transcripts" / "codex" / "rollout-v0.135-exec-redacted.jsonl"
    (day / "rollout-2026-11-20T11-00-00-0199aaaa-bbbb-cccc-dddd-ffffffffffff.jsonl").symlink_to(real)
    droid = isolated_home / ".factory" / "sessions" / "-w"
    droid.mkdir(parents=True)
    os.mkfifo(droid / "d1.jsonl")
    selection = select(["codex", "droid"], days=100000, sessions=20, quiet_minutes=0)
    assert selection.skipped_counts == {"not_a_regular_file": 2}
    assert [f.size for f in selection.files] == [real.stat().st_size]


def test_ctrl_c_during_a_parallel_first_scan_stops_cleanly(isolated_home: Path, shared: Path) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while the process pool
    reads a 100 MB first scan: exit code 130 (or death by SIGINT, which shells also report as
    130, when the signal lands while Python exits) within seconds, with no hang on the pool's
    pipes and no process left behind; the store holds all of the run or none of it (an
    interrupted run is rolled back), and a new run then works (no half-made store)."""
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    folder = isolated_home / ".claude" / "projects" / "-home-dev-big"
    folder.mkdir(parents=True)
    sample = (shared / "transcripts" / "claude" / "cc-v2.0.42-queue-ops-ide-selection.jsonl").read_bytes()
    count = 200  # about 100 MB: above the pool's threshold
    for i in range(count):
        path = folder / f"0199aaaa-bbbb-cccc-dddd-{i:012d}.jsonl"
        path.write_bytes(sample)
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    interrupted = 0
    for delay in (0.25, 0.4, 0.55, 0.7):
        if db.exists():
            db.unlink()
        proc = subprocess.Popen(
            [sys.executable, "-m", "habitus", "distill", "--days", "100000", "--sessions", "1000"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"distill hung after Ctrl-C at {delay} s") from None
        with pytest.raises(ProcessLookupError):  # no worker left in the process group
            os.killpg(proc.pid, 0)
        stored = 0
        if db.exists():
            with sqlite3.connect(db) as conn:
                stored = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        assert stored in (0, count), (delay, stored)
        if proc.returncode == 0:
            assert stored == count
            continue
        assert proc.returncode in (130, -signal.SIGINT), (delay, err)
        assert proc.returncode != 130 or b"interrupted" in err
        interrupted += stored == 0
    assert interrupted >= 2
    done = subprocess.run([sys.executable, "-m", "habitus", "distill", "--days", "100000", "--sessions", "1000", "--json"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_file_unreadable_when_read_is_skipped_and_read_once_it_can_be(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript that cannot be opened when its turn comes (its permissions changed after
    discovery, an I/O error) is reported as skipped, nothing of it is stored, its read state
    is not saved: the next run reads it whole."""
    import sqlite3

    import habitus.sources.base as base

    folder = isolated_home / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    locked = folder / "0199aaaa-bbbb-cccc-dddd-000000000001.jsonl"
    other = folder / "0199aaaa-bbbb-cccc-dddd-000000000002.jsonl"
    locked.write_text(GOOD["claude"](1) + "\n")
    other.write_text(GOOD["claude"](2) + "\n")
    for path in (locked, other):
        os.utime(path, (time.time() - 3600,) * 2)
    real_open = base.open_binary

    def refuse(path: Path):  # type: ignore[no-untyped-def]
        if Path(path).name == locked.name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path)

    monkeypatch.setattr(base, "open_binary", refuse)
    first = distill(DistillOptions(days=100000, sessions=50), config=Config(quiet_minutes=0))
    assert first.skipped.get("unreadable") == 1 and first.files_read == {"new": 1}
    assert first.bad_lines == {"unreadable_file": 1} and first.new_human_turns == 1
    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    assert [r[0] for r in sqlite3.connect(db).execute("SELECT path FROM files")] == [f"projects/-w/{other.name}"]
    monkeypatch.setattr(base, "open_binary", real_open)
    second = distill(DistillOptions(days=100000, sessions=50), config=Config(quiet_minutes=0))
    assert second.files_read == {"new": 1, "unchanged": 1} and second.new_human_turns == 1


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_byte_order_mark_does_not_cost_the_first_line(tmp_path: Path, agent: str) -> None:
    """An editor may save a transcript with a UTF-8 byte order mark: the first line is still
    read (and the repair counted), by the pre-filtered read and the full one alike."""
    path = tmp_path / "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD[agent](1).encode() + b"\n" + GOOD[agent](2).encode() + b"\n")
    full, fast, full_stats, fast_stats = _fast_and_full(agent, path)
    assert [t[2] for t in fast] == [t[2] for t in full] == ["good prompt number 1", "good prompt number 2"]
    assert fast_stats.bad_lines["repaired_bom"] == full_stats.bad_lines["repaired_bom"] == 1
