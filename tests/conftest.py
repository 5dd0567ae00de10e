"""Shared fixtures: every test runs with HOME and every agent/habitus folder in tmp_path, so no
test can read or write the developer's real files. ``shared`` is ../shared (skipped if absent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples" / "claude"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, FACTORY_HOME, HABITUS_HOME and
    HABITUS_CONFIG at folders under tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("FACTORY_HOME", str(home / ".factory"))
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "habitus"))
    monkeypatch.setenv("HABITUS_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.delenv("HABITUS_DEBUG", raising=False)
    monkeypatch.delenv("FACTORY_DIR", raising=False)
    return home


@pytest.fixture
def shared() -> Path:
    """The shared folder with real transcripts and secrets (skip when absent)."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not present (it holds the real sample transcripts)")
    return SHARED


def age(path: Path, seconds: float) -> None:
    """Set a file's mtime to ``seconds`` ago (out of the quiet window)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def install_claude_files(home: Path, sources: list[Path], *, project: str = "-home-dev-proj") -> list[Path]:
    """Copy transcripts into ``home/.claude/projects/<project>/`` keeping their names, aged 1 hour."""
    folder = home / ".claude" / "projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for src in sources:
        dst = folder / src.name
        dst.write_bytes(src.read_bytes())
        age(dst, 3600)
        out.append(dst)
    return out


def install_examples(home: Path) -> None:
    """Copy the bundled example transcripts into ``home/.claude`` (aged 1 hour)."""
    for src in EXAMPLES.rglob("*.jsonl"):
        dst = home / ".claude" / src.relative_to(EXAMPLES)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
        age(dst, 3600)


def run_cli(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m habitus ARGS`` as a real subprocess with the test's environment."""
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "habitus", *args], capture_output=True, text=True, env=env, input=input, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"habitus {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def run_json(*args: str) -> object:
    """Run a ``--json`` command and decode its output."""
    return json.loads(run_cli(*args, "--json").stdout)
