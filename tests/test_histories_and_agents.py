"""Prompt histories and several agents in one run: a prompt present in a transcript and in a
history is one turn; a history prompt whose transcript is gone still counts; Codex and
Claude turns are read together; --agent narrows the run."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from conftest import age, install_examples, run_json

from habitus.pipeline import DistillOptions, distill

OPTS = DistillOptions(days=100000, sessions=100)


def _stored_turns() -> list[tuple[str, str, str]]:
    import os

    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    with sqlite3.connect(db) as conn:
        return list(conn.execute("select agent, path, text from turns order by agent, path, line"))


def _ms(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def test_history_prompts_join_transcripts_without_double_counting(isolated_home: Path) -> None:
    install_examples(isolated_home)
    transcript = next((isolated_home / ".claude" / "projects" / "-home-dev-code-shop-web").glob("97a4*.jsonl"))
    line = next(json.loads(x) for x in transcript.read_bytes().splitlines() if b"No, use pnpm instead of npm." in x and b'"type":"user"' in x)
    history = isolated_home / ".claude" / "history.jsonl"
    entries = [
        # the same prompt as the transcript line, logged 2 seconds later: one turn, not two
        {"display": "No, use pnpm  instead of npm.", "pastedContents": {}, "timestamp": _ms(line["timestamp"]) + 2000, "project": "/home/dev/code/shop-web", "sessionId": line["sessionId"]},
        # a prompt whose transcript was deleted (Claude keeps 30 days of transcripts)
        {"display": "Always answer with the shell command first, then the explanation.", "pastedContents": {}, "timestamp": _ms("2026-11-26T09:00:00.000Z"), "project": "/home/dev/code/old"},
        {"display": "/clear", "pastedContents": {}, "timestamp": _ms("2026-11-26T09:01:00.000Z"), "project": "/home/dev/code/old"},
        {"display": "ancient prompt outside the window", "pastedContents": {}, "timestamp": 1000, "project": "/x"},
    ]
    history.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    report = distill(DistillOptions(days=30, sessions=100))
    turns = _stored_turns()
    pnpm = [t for t in turns if "pnpm instead of npm" in t[2]]
    assert len(pnpm) == 1 and pnpm[0][1].endswith(".jsonl") and pnpm[0][1] != "history.jsonl"
    assert [t for t in turns if t[1] == "history.jsonl"] == [("claude", "history.jsonl", "Always answer with the shell command first, then the explanation.")]
    assert report.files_read["history"] == 1
    items = run_json("candidates")
    assert any("shell command first" in i["text"] and i["status"] == "approved" for i in items)
    again = distill(DistillOptions(days=30, sessions=100))
    assert again.bytes_read == 0 and "history" not in again.files_read


def install_codex(home: Path, shared: Path) -> list[Path]:
    out = []
    for i, src in enumerate(sorted((shared / "transcripts" / "codex").glob("rollout-*.jsonl"))):
        folder = home / ".codex" / "sessions" / "2026" / "11" / f"{20 + i:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        dst = folder / f"rollout-2026-11-{20 + i:02d}T10-00-00-0000000{i}-aaaa-bbbb-cccc-dddddddddddd.jsonl"
        shutil.copyfile(src, dst)
        age(dst, 3600)
        out.append(dst)
    return out


def test_codex_and_claude_in_one_run(isolated_home: Path, shared: Path) -> None:
    install_examples(isolated_home)
    install_codex(isolated_home, shared)
    report = distill(OPTS)
    assert sorted(report.agents) == ["claude", "codex"]
    turns = _stored_turns()
    codex = [t for t in turns if t[0] == "codex"]
    # 53 prompts in the 0.60.1 sample, 5 in the 0.104 one, 1 in the 0.135 one (reader tests pin them)
    assert len(codex) == 59
    assert not [t for t in codex if "<environment_context>" in t[2] or "AGENTS.md instructions" in t[2]]
    assert len({t[2] for t in codex if t[2] != "[REDACTED_PROMPT]" and not t[2].startswith("[REDACTED_TEXT")}) == len([t for t in codex if t[2] != "[REDACTED_PROMPT]" and not t[2].startswith("[REDACTED_TEXT")])


def test_agent_option_narrows_the_run(isolated_home: Path, shared: Path) -> None:
    install_examples(isolated_home)
    install_codex(isolated_home, shared)
    only_codex = run_json("distill", "--agent", "codex", "--days", "100000", "--sessions", "100")
    assert only_codex["agents"] == ["codex"] and only_codex["files_read"] == {"new": 3}
    rows = run_json("inspect", str(next((isolated_home / ".codex").rglob("rollout-*.jsonl"))))
    assert rows and all("kept" in r for r in rows)
