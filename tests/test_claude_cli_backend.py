"""The ``claude`` CLI backend, against a fake ``claude`` executable placed first on PATH (a
real subprocess): print mode, JSON output, prompt on stdin, working directory in habitus's own
runs folder (whose transcripts discovery skips), failures as :class:`LLMError`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli, run_json

from habitus.errors import LLMError
from habitus.extract.claude_cli import ClaudeCLIBackend
from habitus.paths import own_runs_dir

sys.path.insert(0, str(REPO / "examples"))
from generate import Session, slug  # noqa: E402

FAKE = r'''#!{python}
"""A stand-in for Claude Code's `claude -p --output-format json`."""
import json, os, re, sys, time, uuid
mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
prompt = sys.stdin.read()
with open(os.environ["FAKE_CLAUDE_LOG"], "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": prompt, "home": os.environ.get("HOME"),
                          "claude_config_dir": os.environ.get("CLAUDE_CONFIG_DIR")}}) + "\n")
if mode == "fail":
    sys.stderr.write("Error: Invalid API key. Please run /login\n")
    sys.exit(1)
if mode == "nonjson":
    print("Claude Code v2.1.0 - welcome!")
    sys.exit(0)
if mode == "is_error":
    print(json.dumps({{"type": "result", "subtype": "error_max_turns", "is_error": True, "result": ""}}))
    sys.exit(0)
# Like Claude Code, leave a transcript of this run under the project slug of the cwd.
cwd = os.getcwd()
folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd))
os.makedirs(folder, exist_ok=True)
sid = str(uuid.uuid4())
line = {{"type": "user", "sessionId": sid, "cwd": cwd, "uuid": str(uuid.uuid4()), "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {{"role": "user", "content": "Always use poetry for Python dependencies. " + prompt[:200]}}}}
path = os.path.join(folder, sid + ".jsonl")
with open(path, "w") as fh:
    fh.write(json.dumps(line) + "\n")
old = time.time() - 3600
os.utime(path, (old, old))
if mode == "badresult":
    answer = "Here are the preferences I found: none, really."
else:
    ids = re.findall(r"^\[t:([^\]]+)\] user: .*\balways\b", prompt, re.M | re.I)
    answer = json.dumps({{"candidates": [{{"text": "Always run the linter before pushing.", "type": "feedback", "scope": "global",
                                          "why": "Stated by the user.", "how_to_apply": "Before every push.", "evidence": ids[:1]}}] if ids else []}})
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": sid, "total_cost_usd": 0.0}}))
'''


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a fake ``claude`` first on PATH; return the log file it appends each call to."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "claude"
    exe.write_text(FAKE.format(python=sys.executable), encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "claude-calls.jsonl"
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    return log


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def test_print_mode_json_stdin_and_own_runs_dir(fake_claude: Path) -> None:
    backend = ClaudeCLIBackend("claude-cli:sonnet")
    answer = backend.complete("SYSTEM TEXT", "[t:abc] user: always lint before pushing\n", {"type": "object"})
    assert json.loads(answer)["candidates"][0]["evidence"] == ["abc"]
    (call,) = calls(fake_claude)
    argv = call["argv"]
    assert isinstance(argv, list)
    assert argv[:4] == ["-p", "--output-format", "json", "--system-prompt"]
    assert argv[4].startswith("SYSTEM TEXT") and '"type":"object"' in argv[4]
    assert argv[5:] == ["--tools", "", "--max-turns", "1", "--model", "sonnet"]
    assert call["stdin"] == "[t:abc] user: always lint before pushing\n"
    assert call["cwd"] == str(own_runs_dir()) and own_runs_dir().is_dir()
    assert backend.model_id == "claude-cli:sonnet"
    ClaudeCLIBackend("claude-cli").complete("s", "p", {})
    assert "--model" not in calls(fake_claude)[-1]["argv"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("fail", r"exited with status 1: Error: Invalid API key"),
        ("nonjson", r"printed no JSON"),
        ("is_error", r"reported an error \(error_max_turns\)"),
    ],
)
def test_failures_raise_llm_error(fake_claude: Path, monkeypatch: pytest.MonkeyPatch, mode: str, message: str) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    with pytest.raises(LLMError, match=message):
        ClaudeCLIBackend("claude-cli").complete("s", "p", {})
    assert len(calls(fake_claude)) == 1


def test_missing_cli_and_bad_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LLMError, match="not on PATH"):
        ClaudeCLIBackend("claude-cli").complete("s", "p", {})
    with pytest.raises(LLMError, match="not a claude CLI model"):
        ClaudeCLIBackend("gpt-4o")


def write_session(home: Path) -> None:
    s = Session("cli-backend", "/home/dev/code/site", "2026-11-20T09:00")
    s.user("Fix the header layout on mobile.")
    s.say("Done.")
    s.user("From now on, always run the linter before pushing.")
    path = s.write(home / ".claude" / "projects" / slug("/home/dev/code/site"))
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))


def test_distill_through_the_cli_and_never_reads_its_own_runs(isolated_home: Path, fake_claude: Path) -> None:
    write_session(isolated_home)
    report = run_json("distill", "--extractor", "llm", "--model", "claude-cli")
    assert report["llm_calls"] == 1 and report["candidates_rejected"] == {}
    (item,) = run_json("candidates", "--status", "all")
    assert item["text"] == "Always run the linter before pushing." and item["explicit"]
    assert item["evidence"][0]["excerpt"] == "From now on, always run the linter before pushing."
    # the fake CLI left a transcript (saying "Always use poetry") in habitus's own runs folder
    own = isolated_home / ".claude" / "projects" / slug(str(own_runs_dir()))
    assert len(list(own.glob("*.jsonl"))) == 1
    again = run_json("distill", "--days", "100")
    assert again["skipped"].get("habitus_own_run") == 1
    assert "poetry" not in json.dumps(run_json("candidates", "--status", "all"))


def test_malformed_model_output_is_counted_not_fatal(isolated_home: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(isolated_home)
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "badresult")
    report = run_json("distill", "--extractor", "llm", "--model", "claude-cli")
    assert report["candidates_rejected"] == {"malformed_json": 1}
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "fail")
    write_session_two(isolated_home)
    proc = run_cli("distill", "--extractor", "llm", "--model", "claude-cli", "--json", check=False)
    assert proc.returncode == 0
    failed = json.loads(proc.stdout)
    assert failed["candidates_rejected"] == {"call_failed": 1}
    assert any("Invalid API key" in w for w in failed["warnings"])


def write_session_two(home: Path) -> None:
    s = Session("cli-backend-2", "/home/dev/code/site", "2026-11-21T09:00")
    s.user("Never force push to shared branches.")
    path = s.write(home / ".claude" / "projects" / slug("/home/dev/code/site"))
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))


def test_eval_keeps_the_cli_on_the_users_own_home(isolated_home: Path, tmp_path: Path, fake_claude: Path) -> None:
    corpus = tmp_path / "corpus"
    s = Session("eval-cli", "/home/dev/code/site", "2026-11-20T09:00")
    s.user("From now on, always run the linter before pushing.")
    line = len(s.lines)
    path = s.write(corpus / "home" / ".claude" / "projects" / slug("/home/dev/code/site"))
    rel = path.relative_to(corpus / "home").as_posix()
    gold = {"format": "habitus-eval/1", "habits": [{"id": "lint", "type": "feedback", "statements": [{"file": rel, "line": line, "agent": "claude", "session": "x", "explicit": True}]}], "traps": [], "changes": []}
    (corpus / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    before = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*"))
    result = run_json("eval", str(corpus), "--extractor", "llm", "--model", "claude-cli")
    assert result["precision"] == 1.0 and result["recall"] == 1.0 and result["run"]["llm_calls"] == 1
    (call,) = calls(fake_claude)
    # the CLI ran with the user's home and config dir and in the user's runs folder, not the corpus
    assert call["home"] == str(isolated_home) and call["claude_config_dir"] == str(isolated_home / ".claude")
    assert call["cwd"] == str(own_runs_dir())
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*")) == before
