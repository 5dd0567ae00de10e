"""The command line: every command has help, the README's commands run, errors map to the
documented exit codes (1 expected error, 2 usage)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, install_examples, run_cli, run_json

COMMANDS = ["distill", "candidates", "approve", "reject", "revoke", "inspect", "status", "config", "redact", "eval"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    out = run_cli(command, "--help").stdout
    assert f"Usage: habitus {command}" in out and len(out.splitlines()) > 3


def test_top_level_help_and_version() -> None:
    out = run_cli("--help").stdout
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\b", out, re.M), command
    assert run_cli("--version").stdout.startswith("habitus, version ")


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Using it on your own transcripts", 1)[1].split("```", 2)[1]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip().startswith("habitus ")]


def test_readme_commands_run(isolated_home: Path) -> None:
    install_examples(isolated_home)
    commands = readme_commands()
    assert len(commands) >= 10
    for line in commands:
        args = line.split()[1:]
        if args[0] in ("approve", "reject", "revoke"):
            items = run_json("candidates", "--status", "all")
            target = next(i for i in items if i["status"] == {"approve": "proposed", "reject": "approved", "revoke": "approved"}[args[0]])
            args = [args[0], target["id"][:8]]
        elif args[0] == "inspect":
            args = ["inspect", str(next((isolated_home / ".claude" / "projects").rglob("*.jsonl")))]
        elif args[0] == "eval":
            corpus = isolated_home.parent / "corpus"
            subprocess.run([sys.executable, str(REPO / "bench" / "make_eval.py"), "--out", str(corpus), "--seed", "1"], check=True, capture_output=True)
            args = ["eval", str(corpus)]
        elif args[0] == "redact":
            sample = isolated_home / "note.txt"
            sample.write_text("token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + "\n")
            args = ["redact", str(sample), "--report"]
        proc = run_cli(*args, check=False)
        assert proc.returncode == 0, (line, proc.stderr)


def test_bad_config_is_a_clear_error(isolated_home: Path) -> None:
    Path(os.environ["HABITUS_CONFIG"]).write_text("window_dayz = 3\n")
    proc = run_cli("distill", "--dry-run", check=False)
    assert proc.returncode == 1
    assert "unknown key 'window_dayz'" in proc.stderr and "Traceback" not in proc.stderr


def test_usage_errors_exit_2() -> None:
    proc = run_cli("distill", "--days", "zero", check=False)
    assert proc.returncode == 2
    proc = run_cli("candidates", "--status", "nonsense", check=False)
    assert proc.returncode == 1 and "unknown status" in proc.stderr


def test_inspect_missing_file_is_an_error(tmp_path: Path) -> None:
    proc = run_cli("inspect", str(tmp_path / "nope.jsonl"), check=False)
    assert proc.returncode == 1 and "no such file" in proc.stderr


def test_status_and_config_json(isolated_home: Path) -> None:
    install_examples(isolated_home)
    run_cli("distill")
    status = run_json("status")
    assert status["beliefs"]["approved"] >= 4 and status["files"] == 5 and status["block"]["chars"] > 0
    config = run_json("config")
    assert {row["key"] for row in config["keys"]} >= {"window_days", "auto_approve", "max_block_chars"}


def test_filesystem_errors_and_broken_pipes_are_clean(isolated_home: Path) -> None:
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "CLAUDE.md").mkdir()  # a directory where a file should be
    proc = run_cli("status", check=False)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    home = Path(os.environ["HABITUS_HOME"])
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("not a folder")
    proc = run_cli("distill", check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("habitus: error:") and "Traceback" not in proc.stderr
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("PYTEST_CURRENT_TEST", None)
    piped = subprocess.run(f"{sys.executable} -m habitus --help | head -1", shell=True, capture_output=True, text=True, env=env)
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr


def test_lazy_command_table_names_every_command_exactly() -> None:
    """Commands load lazily from the modules ``LAZY_COMMANDS`` names: each module's commands
    are exactly the names pointing at it, so none is unreachable or listed twice."""
    import importlib

    from habitus.cli import LAZY_COMMANDS

    assert sorted(LAZY_COMMANDS) == sorted(COMMANDS)
    for module_name in set(LAZY_COMMANDS.values()):
        module = importlib.import_module(f"habitus.cli.{module_name}")
        assert sorted(c.name for c in module.COMMANDS) == sorted(n for n, m in LAZY_COMMANDS.items() if m == module_name)


def test_distill_and_version_do_not_load_other_commands() -> None:
    code = "import sys; from habitus.cli import cli; cli.main(['--version'], standalone_mode=False); print(sorted(m for m in sys.modules if m.startswith('habitus.cli.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]"), out


def test_a_misspelt_command_gets_a_suggestion_and_help_works_as_a_command() -> None:
    wrong = run_cli("distil", check=False)
    assert wrong.returncode == 2 and "Did you mean 'distill'?" in wrong.stderr
    assert run_cli("help", "distill").stdout == run_cli("distill", "--help").stdout
    assert run_cli("help").stdout == run_cli("--help").stdout
    unknown = run_cli("help", "nope", check=False)
    assert unknown.returncode == 2 and "No such command 'nope'" in unknown.stderr


def test_the_report_says_why_fresh_files_wait(isolated_home: Path) -> None:
    install_examples(isolated_home)
    fresh = next((isolated_home / ".claude" / "projects").rglob("*.jsonl"))
    os.utime(fresh)  # just written: inside the quiet window
    out = run_cli("distill", "--dry-run").stdout
    assert "quiet_window 1" in out and "read on a later run (config: quiet_minutes)" in out


def test_redact_in_place_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"k": "sk-ant-api03-' + "A" * 93 + '", "n": 123456789012345678901234567890}\n')
    path.chmod(0o640)
    run_cli("redact", str(path), "-o", str(path))
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert path.read_text() == '{"k": "[REDACTED:anthropic-api-key]", "n": 123456789012345678901234567890}\n'
    fresh = tmp_path / "new.jsonl"
    run_cli("redact", str(path), "-o", str(fresh))
    umask = os.umask(0)
    os.umask(umask)
    assert oct(fresh.stat().st_mode & 0o777) == oct(0o666 & ~umask)
