"""Incremental reading: an unchanged re-run reads no transcript bytes and changes nothing on
disk; grown files are read from their offset; rewritten files are re-read and reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import age, install_examples

import habitus.sources.base as base
from habitus.pipeline import DistillOptions, distill

OPTS = DistillOptions(days=100000, sessions=100)


def snapshot(*roots: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
            elif path.is_dir():
                out[str(path) + "/"] = (b"", path.stat().st_mtime_ns)
    return out


def test_second_run_reads_nothing_and_changes_nothing(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_examples(isolated_home)
    first = distill(OPTS)
    assert first.bytes_read > 0 and first.new_human_turns > 0
    before = snapshot(isolated_home, Path(os.environ["HABITUS_HOME"]))

    def no_reads(path: Path):  # type: ignore[no-untyped-def]
        raise AssertionError(f"re-run opened {path}")

    monkeypatch.setattr(base, "open_binary", no_reads)
    second = distill(OPTS)
    assert second.bytes_read == 0 and second.lines_read == 0
    assert second.files_read == {"unchanged": first.files_selected}
    assert second.new_human_turns == 0 and second.beliefs_new == 0
    assert snapshot(isolated_home, Path(os.environ["HABITUS_HOME"])) == before


def _user_line(text: str, n: int, session: str) -> bytes:
    return json.dumps({"type": "user", "uuid": f"00000000-0000-0000-0000-{n:012d}", "sessionId": session, "timestamp": f"2026-11-2{n % 9}T10:00:00.000Z", "cwd": "/w", "message": {"role": "user", "content": text}}).encode() + b"\n"


def test_grown_file_is_read_from_its_offset(isolated_home: Path) -> None:
    folder = isolated_home / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    session = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    path = folder / f"{session}.jsonl"
    path.write_bytes(_user_line("hello there", 1, session))
    age(path, 3600)
    first = distill(OPTS)
    assert first.new_human_turns == 1
    extra = _user_line("Never force-push to shared branches.", 2, session)
    with open(path, "ab") as fh:
        fh.write(extra)
    age(path, 3600)
    second = distill(OPTS)
    assert second.files_read == {"grown": 1}
    assert second.bytes_read == len(extra)  # exactly the appended line, newline included
    assert second.new_human_turns == 1 and second.beliefs_new == 1


def test_rewritten_file_is_reread_and_reported_without_double_counting(isolated_home: Path) -> None:
    folder = isolated_home / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    session = "aaaaaaaa-bbbb-cccc-dddd-ffffffffffff"
    path = folder / f"{session}.jsonl"
    path.write_bytes(_user_line("Always run the linter before committing.", 1, session) + _user_line("ok thanks", 3, session))
    age(path, 3600)
    distill(OPTS)
    # Rewritten with the same first line changed and shorter overall.
    path.write_bytes(_user_line("Always run the linter before committing.", 1, session)[:-30] + b'"}}\n')
    age(path, 3600)
    report = distill(OPTS)
    assert report.files_read == {"rewritten": 1}
    assert report.rewritten == [f"claude:projects/-w/{session}.jsonl"]
    from habitus.review import list_candidates

    items = list_candidates(["all"])
    assert len(items) == 1 and len(items[0]["evidence"]) == 1


def test_dry_run_leaves_nothing_on_disk(isolated_home: Path) -> None:
    install_examples(isolated_home)
    report = distill(DistillOptions(days=100000, sessions=100, dry_run=True))
    assert report.new_human_turns > 0 and report.block["after"] > report.block["before"]
    assert not Path(os.environ["HABITUS_HOME"]).exists()
    assert not (isolated_home / ".claude" / "CLAUDE.md").exists()


def test_quiet_window_and_cap(isolated_home: Path) -> None:
    install_examples(isolated_home)
    newest = sorted(p for p in (isolated_home / ".claude").rglob("*.jsonl") if "subagents" not in p.parts)[0]
    os.utime(newest, None)  # modified just now: still being written
    report = distill(DistillOptions(days=100000, sessions=2, dry_run=True, verbose=True))
    assert report.skipped["quiet_window"] == 1
    assert report.files_selected == 2 and report.skipped["over_session_cap"] == 2
    assert {"agent": "claude", "path": newest.relative_to(isolated_home / ".claude").as_posix(), "reason": "quiet_window"} in report.skipped_files


def test_unchanged_rerun_still_repairs_a_hand_edited_block(isolated_home: Path) -> None:
    install_examples(isolated_home)
    distill(OPTS)
    target = isolated_home / ".claude" / "CLAUDE.md"
    rendered = target.read_text(encoding="utf-8")
    entry = next(line for line in rendered.splitlines() if line.startswith("- ") and "→" in line)
    target.write_text(rendered.replace(entry, "- Push to main whenever."), encoding="utf-8")
    report = distill(OPTS)
    assert report.bytes_read == 0 and report.block["written"]
    assert target.read_text(encoding="utf-8") == rendered


def test_budget_change_rerenders_without_reading(isolated_home: Path, tmp_path: Path) -> None:
    install_examples(isolated_home)
    first = distill(OPTS)
    Path(os.environ["HABITUS_CONFIG"]).write_text("max_block_chars = 400\n", encoding="utf-8")
    report = distill(OPTS)
    assert report.bytes_read == 0
    assert report.block["after"] <= 400 < first.block["after"] and report.block["omitted"] > 0


def test_session_cap_applies_to_files_that_need_reading(isolated_home: Path) -> None:
    """Unchanged files do not use up --sessions: a backlog drains over later runs."""
    install_examples(isolated_home)
    reads = [distill(DistillOptions(days=100000, sessions=2)).files_read.get("new", 0) for _ in range(4)]
    assert reads == [2, 2, 1, 0]


def test_a_new_store_does_not_wipe_an_existing_block(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_examples(isolated_home)
    distill(OPTS)
    target = isolated_home / ".claude" / "CLAUDE.md"
    before = target.read_bytes()
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "another-home"))
    (isolated_home / ".claude" / "projects").rename(tmp_path / "moved")  # nothing to learn here
    report = distill(OPTS)
    assert target.read_bytes() == before and not report.block["written"]
    assert any("no beliefs" in w for w in report.warnings)


def test_the_process_pool_gives_exactly_what_one_process_gives(isolated_home: Path, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first scan in the process pool (workers read, redact, take fingerprints and run the
    rule analysis per turn) stores the same turns, files, beliefs and evidence, and reports
    the same counts, as the same scan in one process."""
    import re
    import shutil
    import sqlite3

    from test_distill_e2e import install_real_claude

    import habitus.sources.incremental as incremental

    install_real_claude(isolated_home, shared)
    install_examples(isolated_home)
    # The same session logged twice (a resumed copy in another project folder, another cwd):
    # which copy is kept must not depend on which worker finishes first.
    source = next((isolated_home / ".claude" / "projects").rglob("*.jsonl"))
    for n, cwd in enumerate(("/work/alpha", "/work/beta")):
        twin = isolated_home / ".claude" / "projects" / f"-work-twin{n}" / source.name
        twin.parent.mkdir(parents=True)
        twin.write_bytes(re.sub(rb'"cwd": ?"[^"]*"', f'"cwd":"{cwd}"'.encode(), source.read_bytes()))
        age(twin, 3600 + n)
    day = isolated_home / ".codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    for src in (shared / "transcripts" / "codex").glob("rollout-*.jsonl"):
        dst = day / f"{src.stem}-0199aaaa-bbbb-cccc-dddd-{abs(hash(src.name)) % 10**12:012d}.jsonl"
        shutil.copyfile(src, dst)
        age(dst, 3600)

    def scan(name: str, min_bytes: int) -> tuple[dict[str, object], dict[str, list[tuple[object, ...]]]]:
        monkeypatch.setenv("HABITUS_HOME", str(tmp_path / name))
        monkeypatch.setattr(incremental, "PARALLEL_MIN_BYTES", min_bytes)
        monkeypatch.setattr(os, "cpu_count", lambda: 2)  # a pool even on a one-core machine
        report = distill(OPTS).as_dict()
        conn = sqlite3.connect(tmp_path / name / "habitus.db")
        tables = {
            "turns": "SELECT id, agent, session_id, path, line, byte_start, byte_end, cwd, project, kind, text, text_key, language FROM turns",
            "files": "SELECT id, path, session_id, offset, lines, size, fingerprint FROM files",
            "beliefs": "SELECT key, slug, text, type, scope, status, confidence, explicit, sessions, why FROM beliefs",
            "evidence": "SELECT b.key, e.turn_id FROM evidence e JOIN beliefs b ON b.id = e.belief_id",
        }
        rows = {name: sorted(conn.execute(sql).fetchall(), key=repr) for name, sql in tables.items()}
        conn.close()
        keep = ("files_read", "bytes_read", "lines_read", "bad_lines", "dropped", "human_turns", "duplicate_turns", "new_human_turns", "redactions", "candidates_found", "candidates_rejected", "beliefs_new")
        return {k: report[k] for k in keep}, rows

    pools: list[int] = []
    real_pool = incremental._read_in_pool
    monkeypatch.setattr(incremental, "_read_in_pool", lambda *a, **k: pools.append(1) or real_pool(*a, **k))
    one_report, one_rows = scan("one", 1 << 60)
    assert pools == []
    pool_report, pool_rows = scan("pool", 0)
    assert pools == [1]
    assert one_rows["turns"] and one_rows["beliefs"] and len(one_rows["files"]) > 10
    assert pool_report == one_report
    assert pool_rows == one_rows


def test_text_memos_give_each_turn_its_own_result_and_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Redaction, language and rule analysis are remembered by text within a process: a
    repeated text is counted (redactions) and named as evidence once per turn, as without
    the memo; the candidates handed out are copies; the memo never outgrows its bound."""
    from habitus.extract import TurnView
    from habitus.extract.rules import RuleExtractor
    from habitus.model import ReadStats, Turn
    from habitus.sources import incremental
    from habitus.sources.base import TranscriptFile
    from habitus.sources.incremental import FilePlan, FileResult, analyse_result, redact_result

    for name in ("_REDACTED", "_LANGUAGES", "_ANALYSED"):
        monkeypatch.setattr(incremental, name, {})  # empty memos, restored afterwards
    text = "Always run the tests with pytest -q before you commit. My key is sk-ant-api03-" + "a" * 90
    file = TranscriptFile("claude", Path("/x/s.jsonl"), "p/s.jsonl", 1, 1.0, 1, "s")

    def result(*ids: str) -> FileResult:
        turns = [Turn(id=i, agent="claude", session_id="s", path="p/s.jsonl", line=n, start=0, end=1, uuid=i, timestamp=None, cwd="/w", role="user", kind="human", text=text) for n, i in enumerate(ids, 1)]
        return FileResult(FilePlan(file, "new", 0, 0, None), turns, [], ReadStats(), 1, 1, "s")

    first, second = result("t1", "t2"), result("t3")
    for r in (first, second):
        redact_result(r)
        analyse_result(r)
    alone = RuleExtractor().analyse(TurnView("t9", "s", "user", "human", first.human[0].text, "/w", None, "claude", "w"))
    assert alone, "the text states a rule"
    assert all("sk-ant" not in t.text for r in (first, second) for t in r.human)
    assert sum(first.redactions.values()) == 2 and sum(second.redactions.values()) == 1
    found = {**first.candidates, **second.candidates}
    assert [c.evidence for c in found["t2"]] == [["t2"]] * len(alone)
    assert [(c.text, c.key) for c in found["t3"]] == [(c.text, c.key) for c in alone]
    found["t2"][0].evidence.append("changed")
    assert found["t3"][0].evidence == ["t3"]
    assert all(c.evidence[0] not in ("changed",) for cands in incremental._ANALYSED.values() for c in cands)

    monkeypatch.setattr(incremental, "MEMO_ENTRIES", 3)
    for n in range(10):
        incremental._remember(incremental._LANGUAGES, f"text {n}", None)
        assert len(incremental._LANGUAGES) <= 3


@pytest.mark.parametrize("block", [7, 5000, 20_000, 4 * 1024 * 1024])
def test_fingerprint_from_the_blocks_read_is_the_one_read_from_disk(tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint taken from the bytes the reader still holds equals the one computed by
    reading the file again, for files shorter and longer than the 16 KiB windows, a partial
    last line, a last block without any newline, and a read that starts at an offset
    (where the start of the file is not held, so the file is read)."""
    import random

    from habitus.model import ReadStats
    from habitus.sources.base import LineStream, TranscriptFile
    from habitus.sources.incremental import fingerprint

    monkeypatch.setattr(base, "_SELECT_BLOCK", block)
    rng = random.Random(block)
    shapes = {
        "tiny": b'{"type":"user"}\n',
        "short": b"".join(b'{"type":"user","n":%d}\n' % i for i in range(300)),
        "long": b"".join(b'{"type":"user","pad":"%s"}\n' % (b"x" * rng.randrange(10, 3000)) for _ in range(200)),
        "partial": b"".join(b'{"type":"user","n":%d}\n' % i for i in range(2000)) + b'{"type":"us',
        "long tail": b'{"type":"user"}\n' * 1500 + b"y" * 60_000,
    }
    for name, data in shapes.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        st_ = path.stat()
        file = TranscriptFile("claude", path, path.name, st_.st_size, st_.st_mtime, st_.st_ino, "s")
        for start in (0, data.find(b"\n") + 1):
            stream = LineStream(path, ReadStats(), offset=start)
            for _ in stream.select((b'"user"',)):
                pass
            assert stream.offset == data.rfind(b"\n") + 1, name
            assert fingerprint(file, stream.offset, stream.held) == fingerprint(file, stream.offset), (name, start)
            if start:
                assert stream.held(0, 10) is None  # the file's start was not read
            elif block >= 16384 and (name != "long tail" or block > 60_000):  # held, not re-read
                assert stream.held(0, min(16384, stream.offset)) is not None, name
                if stream.offset > 16384:
                    assert stream.held(max(16384, stream.offset - 16384), stream.offset) is not None, name


def test_a_second_distill_waits_for_the_lock_then_gives_up_without_writing(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While another process holds the distill lock, a distill (whose workers are already
    reading) gives up with a clear error after the wait, stops its workers and writes
    nothing; once the lock is free it runs."""
    import subprocess
    import sys

    import habitus.pipeline as pipeline
    import habitus.sources.incremental as incremental
    from habitus.errors import HabitusError

    install_examples(isolated_home)
    monkeypatch.setattr(pipeline, "LOCK_WAIT_SECONDS", 0.3)
    monkeypatch.setattr(incremental, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    state = tmp_path / "habitus"
    state.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time; from filelock import FileLock; l = FileLock({str(state / 'distill.lock')!r}); l.acquire(); print('held', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(HabitusError, match="another habitus distill is running"):
            distill(OPTS)
        assert not (state / "habitus.db").exists()
        import multiprocessing
        import time

        deadline = time.monotonic() + 10  # the readers were stopped (reaped a moment later)
        while multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert multiprocessing.active_children() == []
    finally:
        holder.kill()
        holder.wait()
    assert distill(OPTS).new_human_turns > 0


def test_a_run_that_ends_between_the_peek_and_the_lock_costs_a_reread_not_a_crash(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file states are peeked before the lock is taken: when another run stores states
    and turns in between (simulated here by a stale peek), this run reads the files again,
    stores no turn twice and keeps each file's first-read time."""
    import sqlite3

    import habitus.pipeline as pipeline

    install_examples(isolated_home)
    first = distill(OPTS)
    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    before = dict(sqlite3.connect(db).execute("SELECT id, first_read FROM files").fetchall())
    monkeypatch.setattr(pipeline, "_peek_states", lambda ids: {})  # what a run saw before the other one committed
    again = distill(OPTS, checked=True)  # past the no-op check, which the other run's end would have failed
    conn = sqlite3.connect(db)
    assert again.new_human_turns == 0 and again.duplicate_turns >= first.new_human_turns > 0
    assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == first.new_human_turns
    assert dict(conn.execute("SELECT id, first_read FROM files").fetchall()) == before


def test_a_ledger_write_a_killed_run_left_half_done_is_cleaned_up(isolated_home: Path) -> None:
    """The temporary file of an interrupted ledger write (``.<name>.md.<random>.tmp``) is
    removed by the next run that writes the ledger; other files are left alone."""
    install_examples(isolated_home)
    first = distill(OPTS)
    ledger = Path(first.ledger["path"])
    debris = [ledger / ".use-uv.md.k3j9x2.tmp", ledger / "archive" / ".old-rule.md.a1b2c3.tmp"]
    kept = [ledger / ".my-notes.tmp", ledger / "notes.md"]
    for path in (*debris, *kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    session = next((isolated_home / ".claude" / "projects").rglob("*.jsonl"))
    line = json.loads(session.read_text().splitlines()[0])
    with session.open("a") as fh:  # new work, so the next run renders
        fh.write(json.dumps({**line, "uuid": "0199aaaa-0000-4000-8000-00000000abcd", "message": {"role": "user", "content": "From now on, always run ruff before committing."}}) + "\n")
    age(session, 3600)
    distill(OPTS)
    assert [p.exists() for p in debris] == [False, False]
    assert [p.exists() for p in kept] == [True, True]
