"""End to end: a scratch HOME holding the real Claude transcripts and our examples;
`habitus distill` then `habitus candidates --json` (real subprocesses)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import age, install_examples, run_cli, run_json

_MARKERS = ("<command-", "<local-command-", "<bash-", "<ide_", "Caveat: The messages below", "[Request interrupted", "This session is being continued")


def install_real_claude(home: Path, shared: Path) -> None:
    root = shared / "transcripts" / "claude"
    target = home / ".claude"
    shutil.copytree(root / "projects", target / "projects")
    for src in root.glob("cc-*.jsonl"):
        first = next(json.loads(x) for x in src.read_bytes().splitlines() if b'"sessionId"' in x)
        name = f"agent-{first['agentId']}.jsonl" if first.get("isSidechain") else f"{first['sessionId']}.jsonl"
        folder = target / "projects" / f"-Users-user-{src.stem.replace('.', '-')}"
        folder.mkdir(parents=True)
        shutil.copyfile(src, folder / name)
    for path in target.rglob("*"):
        if path.is_file():
            os.chmod(path, 0o644)
            age(path, 3600)


@pytest.fixture
def scratch(isolated_home: Path, shared: Path) -> Path:
    install_real_claude(isolated_home, shared)
    install_examples(isolated_home)
    return isolated_home


def human_blocks(line: dict) -> list[str]:
    """Independent reading of FORMATS.md 1.4: the human-typed texts of one user line."""
    content = line["message"]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out = []
    for block in blocks:
        if block.get("type") == "text" and not block["text"].lstrip().startswith(_MARKERS):
            out.append(block["text"])
        elif block.get("type") == "tool_result" and "reason for the rejection:" in str(block.get("content")):
            out.append(str(block["content"]).split("reason for the rejection:", 1)[1])
    return out


def test_distill_then_candidates_cite_only_human_turns(scratch: Path) -> None:
    report = run_json("distill", "--sessions", "100", "--days", "100000")
    assert report["files_read"] == {"new": 14}
    assert report["skipped"] == {"subagent": 9}
    assert report["bad_lines"] == {}
    items = run_json("candidates", "--status", "all")
    assert items, "the examples plant habits"
    claude = scratch / ".claude"
    for item in items:
        assert item["evidence"], item
        for ev in item["evidence"]:
            path = claude / ev["path"]
            lines = path.read_bytes().split(b"\n")
            line = json.loads(lines[ev["line"] - 1])
            assert line["type"] == "user"
            assert not (line.get("isMeta") or line.get("isSidechain") or line.get("isCompactSummary"))
            assert line["uuid"] == ev["uuid"]
            texts = [" ".join(t.split()) for t in human_blocks(line)]
            excerpt = ev["excerpt"].rstrip("…")
            if "[REDACTED:" not in excerpt:
                assert any(excerpt in t for t in texts), (excerpt, texts)


def test_distill_learns_the_planted_habits_and_no_traps(scratch: Path) -> None:
    run_cli("distill", "--sessions", "100", "--days", "100000")
    items = {i["text"]: i for i in run_json("candidates", "--status", "all")}
    by_status: dict[str, set[str]] = {}
    for text, item in items.items():
        by_status.setdefault(item["status"], set()).add(text)
    approved = " ".join(by_status.get("approved", ()))
    assert "uv" in approved and "push directly to main" in approved and "imperative mood" in approved
    assert "测试" in approved
    uv = next(i for t, i in items.items() if "uv" in t)
    assert uv["sessions"] == 2 and uv["explicit"]
    pnpm = next(i for t, i in items.items() if "pnpm" in t)
    # two example sessions plus the real 2.0.42 transcript, whose line 77 rejects a tool use with "use pnpm"
    assert pnpm["status"] == "proposed" and pnpm["sessions"] == 3 and not pnpm["explicit"]
    joined = " ".join(items).lower()
    for trap in ("yarn", "json", "poetry", "tabs", "migrate", "retry", "e2e", "red", "git sha", "红色"):
        assert trap not in joined, trap
    block = (scratch / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")
    assert block.startswith("<!-- BEGIN habitus (auto-managed · do not edit this block by hand) -->\n- Habit ledger lives in")
    assert "pnpm" not in block  # proposed, not approved
    ledger = Path(os.environ["HABITUS_HOME"]) / "ledger"
    index = (ledger / "INDEX.md").read_text(encoding="utf-8")
    for item in items.values():
        if item["status"] in ("approved", "proposed"):
            text = (ledger / f"{item['slug']}.md").read_text(encoding="utf-8")
            assert text.startswith(f"---\nname: {item['slug']}\ndescription: ")
            assert f"  type: {item['type']}\n" in text and "## Evidence" in text
            assert f"]({item['slug']}.md) — " in index


def test_pasted_secret_reaches_no_file(scratch: Path) -> None:
    run_cli("distill", "--sessions", "100", "--days", "100000")
    secret = "sk-proj-Dm9xQ2V7kL3pR8sT1uW4yZ6aB0cE5fG7hJ9kM2nP4qR6sT8vW0xY3zA5bC7dE9fGhIjKlMnOp"
    written = list(Path(os.environ["HABITUS_HOME"]).rglob("*")) + [scratch / ".claude" / "CLAUDE.md"]
    for path in written:
        if path.is_file():
            assert secret[:12].encode() not in path.read_bytes(), path


def test_approve_and_reject_rerender_the_block(scratch: Path) -> None:
    run_cli("distill", "--sessions", "100", "--days", "100000")
    items = run_json("candidates")
    pnpm = next(i for i in items if "pnpm" in i["text"])
    out = run_cli("approve", pnpm["id"][:8]).stdout
    assert f"{pnpm['id'][:8]} approved" in out
    assert "pnpm" in (scratch / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")
    run_cli("reject", pnpm["slug"])
    assert "pnpm" not in (scratch / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")
    again = run_cli("approve", "ffffffffffff", check=False)
    assert again.returncode == 1 and "no belief" in again.stderr
    revoke = run_cli("revoke", pnpm["id"], check=False)
    assert revoke.returncode == 1 and "cannot become revoked" in revoke.stderr


def test_inspect_json_marks_human_turns(shared: Path) -> None:
    path = shared / "transcripts" / "claude" / "cc-v2.0.42-queue-ops-ide-selection.jsonl"
    rows = run_json("inspect", str(path))
    kept = [(r["line"], r["kind"]) for r in rows if r["kept"]]
    assert kept == [(47, "human"), (59, "human"), (64, "human"), (77, "rejection"), (99, "human"), (169, "human")]
    assert all(r["reason"] for r in rows if not r["kept"])
    covered = {r["line"] for r in rows} | {n for r in rows for n in r["merged_lines"]}
    assert covered == set(range(1, 212))
    assert all(set(r) >= {"line", "uuid", "role", "kind", "kept", "reason", "text"} for r in rows)


def test_broken_claude_md_is_refused_but_nothing_lost(scratch: Path) -> None:
    target = scratch / ".claude" / "CLAUDE.md"
    target.write_text("mine\n<!-- BEGIN habitus (auto-managed · do not edit this block by hand) -->\n- x\n", encoding="utf-8")
    before = target.read_bytes()
    report = run_json("distill", "--sessions", "100", "--days", "100000")
    assert target.read_bytes() == before
    assert report["block"]["refused"] and any("markers are broken" in w for w in report["warnings"])
    assert report["new_human_turns"] > 0  # the store still learned; the block waits for a fix
    status = run_cli("status").stdout
    assert "markers are broken" in status


def test_beliefs_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Two runs over the same transcripts in processes with different hash seeds (so sets
    iterate in other orders) store the same beliefs with the same evidence: ties between
    paraphrases are not decided by float rounding."""
    import json
    import os
    import random
    import sqlite3
    import subprocess
    import sys
    import time
    import uuid

    rng = random.Random(7)
    words = "ruff pytest docker nginx postgres redis react vue tailwind poetry uv pip npm pnpm yarn bun cargo black mypy eslint prettier jest vitest".split()
    templates = ["always use {a} instead of {b}", "no, use {a} not {b}", "from now on, prefer {a} for {b}", "don't touch the {a} config in {b}", "I prefer {a} over {b}", "stop using {a} in {b}", "never run {a} on {b}"]
    home = tmp_path / "home"
    old = time.time() - 7200
    for s in range(40):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        folder = home / ".claude" / "projects" / f"-proj-{s % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for i in range(12):
            text = rng.choice(templates).format(a=rng.choice(words), b=rng.choice(words))
            lines.append(json.dumps({"type": "user", "sessionId": sid, "uuid": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": f"2026-11-{1 + s % 20:02d}T10:{i:02d}:00.000Z", "cwd": f"/proj/{s % 5}", "message": {"role": "user", "content": text}}))
        path = folder / f"{sid}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (old, old))

    def beliefs(seed: str) -> list[tuple[object, ...]]:
        state = tmp_path / f"state-{seed}"
        env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"), "FACTORY_HOME": str(home / ".factory"), "HABITUS_HOME": str(state), "HABITUS_CONFIG": str(tmp_path / "none.toml"), "PYTHONHASHSEED": seed}
        env.pop("PYTEST_CURRENT_TEST", None)
        subprocess.run([sys.executable, "-m", "habitus", "distill", "--days", "100000", "--json"], env=env, check=True, capture_output=True)
        conn = sqlite3.connect(state / "habitus.db")
        rows = conn.execute("SELECT b.key, b.text, b.status, b.sessions, e.turn_id FROM beliefs b LEFT JOIN evidence e ON e.belief_id = b.id ORDER BY b.key, e.turn_id").fetchall()
        conn.close()
        return rows

    first = beliefs("1")
    assert len({r[0] for r in first}) > 5
    for seed in ("2", "3"):
        assert beliefs(seed) == first, seed
