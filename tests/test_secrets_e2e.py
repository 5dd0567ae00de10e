"""End to end: a secret of every supported format, planted in human turns (including explicit
rules that become beliefs), never reaches any file habitus writes: the store (the SQLite file
itself), the ledger, the CLAUDE.md block, backups; nor a report or candidates output."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from conftest import age, run_cli
from test_redact_properties import FORMATS

SESSION = "5ec7e700-0000-4000-8000-000000000001"


def _line(n: int, text: str, session: str = SESSION) -> bytes:
    return json.dumps(
        {"type": "user", "uuid": f"5ec7e700-0000-4000-8000-{n:012d}", "sessionId": session, "timestamp": f"2026-11-20T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z", "cwd": "/home/dev/app", "message": {"role": "user", "content": text}},
        ensure_ascii=False,
    ).encode() + b"\n"


def test_no_planted_secret_reaches_any_written_file(isolated_home: Path) -> None:
    rng = random.Random(20261129)
    planted: list[tuple[str, str]] = []
    lines = []
    for n, (name, build) in enumerate(sorted(FORMATS.items())):
        text, secret = build(rng)
        planted.append((name, secret))
        # Plain prompt, an explicit rule (a belief) and a correction: every path to storage.
        lines.append(_line(3 * n, f"here is what I have: {text}"))
        lines.append(_line(3 * n + 1, f"Always use {text} for the staging deploys."))
        lines.append(_line(3 * n + 2, f"No, use {text} instead of the old one."))
    folder = isolated_home / ".claude" / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(lines))
    age(path, 3600)
    (isolated_home / ".claude" / "CLAUDE.md").write_text("# mine\n", encoding="utf-8")
    Path(os.environ["HABITUS_CONFIG"]).write_text("redact_emails = true\n", encoding="utf-8")  # e-mail is opt-in

    outputs = [
        run_cli("distill", "--json", "--verbose", "--days", "100000").stdout,
        run_cli("candidates", "--status", "all", "--json").stdout,
        run_cli("status", "--json").stdout,
        run_cli("inspect", str(path), "--json").stdout,
        run_cli("distill", "--dry-run", "--json").stdout,
    ]
    written = [p for p in Path(os.environ["HABITUS_HOME"]).rglob("*") if p.is_file()]
    written.append(isolated_home / ".claude" / "CLAUDE.md")
    assert any(p.name == "habitus.db" for p in written)
    blobs = [p.read_bytes() for p in written] + [o.encode() for o in outputs]
    leaks = [
        (name, p)
        for name, secret in planted
        for p, blob in zip([*written, *["<output>"] * len(outputs)], blobs, strict=True)
        if secret.encode() in blob or secret[:12].encode() in blob
    ]
    assert leaks == []
    report = json.loads(outputs[0])
    assert sum(report["redactions"].values()) >= len(planted) * 3


def test_block_is_checked_again_before_it_is_written(isolated_home: Path) -> None:
    """Fail closed: an approved belief whose text matches a secret rule (say, a rule added
    after it was stored) never reaches CLAUDE.md."""
    import sqlite3

    from conftest import install_examples

    from habitus.pipeline import DistillOptions, distill

    install_examples(isolated_home)
    distill(DistillOptions(days=100000, sessions=100))
    token = "ghp_" + "Zq3" * 12
    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE beliefs SET text = ?, updated_at = '2099-01-01T00:00:00.000Z' WHERE status = 'approved' AND text LIKE '%push%'",
            (f"Never push with {token}.",),
        )
    report = distill(DistillOptions(days=100000, sessions=100))
    block = (isolated_home / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")
    assert token[:12] not in block and "push" not in block
    assert any("still match a secret rule" in w for w in report.warnings)
