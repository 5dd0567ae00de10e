"""``habitus eval`` and ``bench/make_eval.py``: metrics computed right on a tiny hand-made
corpus whose answer is known, and the rule extractor's thresholds on generated corpora."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, run_cli, run_json

from habitus.evaluate import score

sys.path.insert(0, str(REPO / "examples"))
from generate import Session, slug  # noqa: E402

MAKE_EVAL = REPO / "bench" / "make_eval.py"
#: Trap kinds that are never human text: not one candidate may come from them.
NEVER_HUMAN = (
    "assistant_promise", "assistant_text", "tool_output", "readme", "injection", "meta",
    "system_reminder", "command_output", "sidechain", "compaction_summary", "agents_md",
)


def said(s: Session, text: str) -> int:
    """Write a human line and return its 1-based line number."""
    s.user(text)
    return len(s.lines)


def tiny_corpus(root: Path) -> dict[str, Any]:
    """Four sessions and a gold file with a known answer (see the test)."""
    cwd = "/home/dev/code/app"
    folder = root / "home" / ".claude" / "projects" / slug(cwd)
    files: dict[str, str] = {}
    lines: dict[str, int] = {}
    plan = [
        ("s1", "2026-11-10T09:00", [("npm", "Always use npm for JavaScript dependencies."), ("uv", "Always use uv for Python dependencies."), ("fridays", "what if we always deployed on Fridays?")]),
        ("s2", "2026-11-12T09:00", [("push", "Never push directly to main."), ("hints", "Always write type hints for new functions.")]),
        ("s3", "2026-11-14T09:00", [("pnpm", "From now on, use pnpm instead of npm."), ("docs", "add a docstring to parse_invoice")]),
        ("s4", "2026-11-15T09:00", [("ruff", "no, use ruff not black")]),
    ]
    for name, start, turns in plan:
        s = Session(f"tiny-{name}", cwd, start)
        for key, text in turns:
            lines[key] = said(s, text)
            files[key] = f".claude/projects/{slug(cwd)}/{s.id}.jsonl"
            s.say("OK.")
        path = s.write(folder)
        old = path.stat().st_mtime - 3600
        os.utime(path, (old, old))

    def ref(key: str, explicit: bool) -> dict[str, Any]:
        return {"file": files[key], "line": lines[key], "session": files[key], "agent": "claude", "explicit": explicit}

    gold = {
        "format": "habitus-eval/1",
        "seed": None,
        "min_occurrences": 2,
        "habits": [
            {"id": "H_npm", "rule": "Use npm.", "type": "feedback", "scope": "global", "statements": [ref("npm", True)]},
            {"id": "H_pnpm", "rule": "Use pnpm instead of npm.", "type": "feedback", "scope": "global", "statements": [ref("pnpm", True)]},
            # two of the user's rules filed under one habit: the second belief is a duplicate
            {"id": "H_uv", "rule": "Use uv.", "type": "feedback", "scope": "global", "statements": [ref("uv", True), ref("hints", True)]},
            # a habit the extractor cannot see (the line is a task): a miss
            {"id": "H_docs", "rule": "Write docstrings.", "type": "feedback", "scope": "global", "statements": [ref("docs", True)]},
            # stated once, not explicitly: not expected to qualify
            {"id": "H_ruff", "rule": "Use ruff.", "type": "feedback", "scope": "global", "statements": [ref("ruff", False)]},
        ],
        "changes": [{"old": "H_npm", "new": "H_pnpm"}],
        "traps": [
            {"kind": "quote", "file": files["push"], "line": lines["push"]},  # declared a trap: a false memory
            {"kind": "hypothetical", "file": files["fridays"], "line": lines["fridays"]},
        ],
    }
    (root / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    return gold


def test_metrics_on_a_hand_made_gold(tmp_path: Path) -> None:
    corpus = tmp_path / "tiny"
    tiny_corpus(corpus)
    result = run_json("eval", str(corpus))
    # qualified beliefs: npm (superseded), pnpm, uv, type hints, push = 5; observed: ruff.
    assert result["qualified"] == 5 and result["beliefs"] == 6
    # habits matched: H_npm, H_pnpm, H_uv (twice) -> 3 distinct; precision 3 / 5
    assert result["matched"] == 3 and result["duplicates"] == 1
    assert result["precision"] == 0.6
    # expected: H_npm, H_pnpm, H_uv, H_docs (explicit); H_ruff is not -> recall 3 / 4
    assert result["expected"] == 4 and result["recall"] == 0.75
    assert result["f1"] == round(2 * 0.6 * 0.75 / 1.35, 4)
    assert result["false_memories"] == {"quote": 1} and result["trap_candidates"] == {"quote": 1}
    assert result["supersession"]["handled"] == 1 and result["supersession"]["changes"][0]["old_status"] == ["superseded"]
    assert [m["id"] for m in result["missed"]] == ["H_docs"]
    (unmatched,) = result["unmatched"]
    assert unmatched["text"] == "Never push directly to main." and unmatched["evidence"][0]["trap"] == "quote"
    # the corpus is untouched and nothing was written outside the scratch state
    assert not (corpus / "home" / ".claude" / "CLAUDE.md").exists()
    assert sorted(p.name for p in corpus.iterdir()) == ["gold.json", "home"]
    text = run_cli("eval", str(corpus)).stdout
    assert "precision:     0.600" in text and "recall:        0.750" in text and "missed:    H_docs" in text


def test_thresholds_exit_non_zero(tmp_path: Path) -> None:
    corpus = tmp_path / "tiny"
    tiny_corpus(corpus)
    proc = run_cli("eval", str(corpus), "--min-precision", "0.9", check=False)
    assert proc.returncode == 1 and "precision 0.600 < 0.9" in proc.stderr
    bad = run_cli("eval", str(tmp_path), check=False)
    assert bad.returncode == 1 and "not an evaluation corpus" in bad.stderr


def test_score_supporting_lines_readers_and_language_ties() -> None:
    gold = {
        "habits": [
            {"id": "zh", "type": "user", "statements": [{"file": "a", "line": 1, "agent": "claude", "session": "s1"}, {"file": "b", "line": 1, "agent": "claude", "session": "s2"}], "supporting": [{"file": "a", "line": 5}]},
            {"id": "pinyin", "type": "feedback", "statements": [{"file": "a", "line": 5, "agent": "claude", "session": "s1", "explicit": True}]},
            {"id": "codex-only", "type": "feedback", "statements": [{"file": "c", "line": 9, "agent": "codex", "session": "s3", "explicit": True}]},
        ],
        "traps": [{"kind": "meta", "file": "a", "line": 7}],
        "changes": [],
    }
    beliefs = [
        {"id": "1", "key": "language:chinese", "status": "proposed", "type": "user", "text": "Reply in Chinese.", "scope": "global"},
        {"id": "2", "key": "never:pinyin", "status": "approved", "type": "feedback", "text": "No pinyin.", "scope": "global"},
        {"id": "3", "key": "do:x", "status": "observed", "type": "feedback", "text": "x", "scope": "global"},
    ]
    ev = {
        "1": [{"agent": "claude", "path": "a", "line": 5}],
        "2": [{"agent": "claude", "path": "a", "line": 5}],
        "3": [{"agent": "claude", "path": "a", "line": 7}],
    }
    # evidence paths are relative to the agent's home: prefix them as a corpus would
    gold_prefixed = json.loads(json.dumps(gold).replace('"file": "', '"file": ".claude/'))
    result = score(gold_prefixed, beliefs, ev, readable=("claude",))
    assert result["expected"] == 2 and result["unreadable_statements"] == 1  # codex-only not readable
    assert result["matched"] == 2 and result["duplicates"] == 0  # line 5 supports zh, states pinyin
    assert result["precision"] == 1.0 and result["recall"] == 1.0
    assert result["false_memories"] == {} and result["trap_candidates"] == {"meta": 1}


def generate(out: Path, seed: int) -> dict[str, Any]:
    subprocess.run([sys.executable, str(MAKE_EVAL), "--out", str(out), "--seed", str(seed)], check=True, capture_output=True, text=True, timeout=120)
    return json.loads((out / "gold.json").read_text(encoding="utf-8"))


def test_generator_is_deterministic_and_covers_every_trap_kind(tmp_path: Path) -> None:
    one, two = generate(tmp_path / "a", 5), generate(tmp_path / "b", 5)
    assert one == two
    files_a = sorted((tmp_path / "a" / "home").rglob("*.jsonl"))
    assert [p.read_bytes() for p in files_a] == [p.read_bytes() for p in sorted((tmp_path / "b" / "home").rglob("*.jsonl"))]
    assert len(one["sessions"]) >= 30 and len(one["habits"]) >= 20
    assert {s["agent"] for s in one["sessions"]} == {"claude", "codex"}
    kinds = {t["kind"] for t in one["traps"]}
    assert set(NEVER_HUMAN) <= kinds
    assert {"one_off_task", "repeated_task", "hypothetical", "quote", "pasted_log", "code_block", "spec_with_always", "description"} <= kinds
    assert one["changes"] and any(s["lang"] == "zh" for h in one["habits"] for s in h["statements"])
    assert any(not h["explicit"] and h["sessions"] >= 2 for h in one["habits"])  # inferred only
    assert any(h["explicit"] and h["sessions"] == 1 for h in one["habits"])  # explicit once


@pytest.mark.parametrize("seed", [1, 2])
def test_rule_extractor_thresholds_on_generated_corpora(tmp_path: Path, seed: int) -> None:
    corpus = tmp_path / f"seed{seed}"
    generate(corpus, seed)
    proc = run_cli("eval", str(corpus), "--json", "--min-precision", "0.9", "--min-recall", "0.8", check=False)
    result = json.loads(proc.stdout)
    assert proc.returncode == 0, (result["precision"], result["recall"], result["missed"], result["unmatched"])
    for kind in NEVER_HUMAN:
        assert kind not in result["trap_candidates"], kind
    assert result["supersession"]["handled"] == result["supersession"]["expected"] == 1
    assert result["run"]["files_read"] >= 30
