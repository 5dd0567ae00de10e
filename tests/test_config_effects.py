"""Config keys change what a run does: write_global_claude_md, exclude_projects,
auto_approve, min_occurrences, memory_dir."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import install_examples

from habitus.pipeline import DistillOptions, distill
from habitus.review import list_candidates

OPTS = DistillOptions(days=100000, sessions=100)


def _config(text: str) -> None:
    Path(os.environ["HABITUS_CONFIG"]).write_text(text, encoding="utf-8")


def test_write_global_claude_md_false_keeps_claude_md_untouched(isolated_home: Path) -> None:
    install_examples(isolated_home)
    _config("write_global_claude_md = false\n")
    report = distill(OPTS)
    assert not (isolated_home / ".claude" / "CLAUDE.md").exists()
    assert report.block["reason"] == "write_global_claude_md = false"
    assert (Path(os.environ["HABITUS_HOME"]) / "ledger" / "INDEX.md").exists()


def test_exclude_projects_by_folder_and_cwd(isolated_home: Path) -> None:
    install_examples(isolated_home)
    _config('exclude_projects = ["/home/dev/code/shop-web", "-home-dev-code-notes-*"]\n')
    report = distill(DistillOptions(days=100000, sessions=100, verbose=True))
    assert report.skipped["excluded_project"] == 3  # two shop-web sessions (by slug) and notes-cli
    texts = " ".join(i["text"] for i in list_candidates(["all"]))
    assert "pnpm" not in texts and "测试" not in texts and "uv" in texts


def test_auto_approve_none_and_all(isolated_home: Path) -> None:
    install_examples(isolated_home)
    _config('auto_approve = "none"\n')
    distill(OPTS)
    assert {i["status"] for i in list_candidates()} == {"proposed"}
    assert not (isolated_home / ".claude" / "CLAUDE.md").exists()


def test_auto_approve_all_and_memory_dir(isolated_home: Path, tmp_path: Path) -> None:
    install_examples(isolated_home)
    ledger = tmp_path / "my-ledger"
    _config(f'auto_approve = "all"\nmemory_dir = "{ledger}"\n')
    distill(OPTS)
    items = list_candidates()
    assert items and {i["status"] for i in items} == {"approved"}
    assert (ledger / "INDEX.md").exists() and len(list(ledger.glob("*.md"))) == len(items) + 1
    assert f"`{ledger}`" in (isolated_home / ".claude" / "CLAUDE.md").read_text(encoding="utf-8")


def test_min_occurrences_three_holds_back_a_two_session_habit(isolated_home: Path) -> None:
    install_examples(isolated_home)
    _config("min_occurrences = 3\n")
    distill(OPTS)
    pnpm = next(i for i in list_candidates(["all"]) if "pnpm" in i["text"])
    assert pnpm["sessions"] == 2 and pnpm["status"] == "observed"
