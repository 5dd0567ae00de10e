"""A backend for the LLM extractor that runs the user's own ``claude`` CLI (Claude Code), for
people who have Claude Code but no API key for the ``llm`` library.

Model names: ``claude-cli`` (Claude Code's default model) or ``claude-cli:<model>``
(``claude-cli:sonnet``, ``claude-cli:claude-sonnet-4-5`` …: passed as ``--model``).

Each call runs, as a subprocess::

    claude -p --output-format json --system-prompt SYSTEM --tools "" --max-turns 1 [--model M]

with the prompt on standard input (print mode reads it from stdin), no tools (the transcript
it reads is untrusted data), and the working directory :func:`habitus.paths.own_runs_dir`
(created on demand): Claude Code files the run's own transcript under that folder's project
slug, which discovery skips, so habitus never reads its own runs back. ``--output-format json``
prints one JSON object whose ``result`` string is the model's answer (``is_error`` and
``subtype`` say whether the run failed). Sources: Claude Code CLI reference (``-p/--print``,
``--output-format``, ``--system-prompt``, ``--tools``, ``--max-turns``, ``--model``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from habitus.errors import LLMError
from habitus.paths import own_runs_dir

#: The model-name prefix that selects this backend.
PREFIX = "claude-cli"
#: Seconds one call may take before it is abandoned.
TIMEOUT = 600

_OVERRIDE: ContextVar[tuple[Path, dict[str, str | None]] | None] = ContextVar("habitus_claude_cli_override", default=None)


@contextmanager
def agent_environment(*, cwd: Path, env: Mapping[str, str | None]) -> Iterator[None]:
    """Run the CLI in ``cwd`` with ``env`` laid over the environment for the duration (a
    ``None`` value removes the variable).

    ``habitus eval`` points ``HOME`` and the agent homes at a scratch corpus; the CLI must keep
    the user's real home (its credentials) and the user's real runs folder (so its transcripts
    stay in the folder discovery skips)."""
    token = _OVERRIDE.set((Path(cwd), dict(env)))
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


def is_cli_model(model: str) -> bool:
    """Whether ``model`` names this backend (``claude-cli`` or ``claude-cli:<model>``)."""
    return model == PREFIX or model.startswith(PREFIX + ":")


class ClaudeCLIBackend:
    """Calls the ``claude`` executable found on ``PATH`` (see module docstring).

    ``model`` is the full habitus model name; ``model_id`` is what the call cap records.
    """

    def __init__(self, model: str = PREFIX) -> None:
        if not is_cli_model(model):
            raise LLMError(f"not a claude CLI model name: {model!r} (use claude-cli or claude-cli:<model>)")
        self.model_id = model
        self.cli_model = model.partition(":")[2] or None

    def command(self, system: str) -> list[str]:
        """The argument vector of one call (the executable first)."""
        exe = shutil.which("claude")
        if exe is None:
            raise LLMError("the `claude` CLI is not on PATH: install Claude Code, or choose an `llm` model with --model")
        argv = [exe, "-p", "--output-format", "json", "--system-prompt", system, "--tools", "", "--max-turns", "1"]
        if self.cli_model:
            argv += ["--model", self.cli_model]
        return argv

    def complete(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        """Send ``prompt`` (stdin) with ``system`` and return the model's answer text.

        The CLI has no portable structured-output switch, so ``schema`` is appended to the
        system prompt as JSON. Raises :class:`LLMError` when the CLI is missing, times out,
        exits non-zero, prints something that is not a JSON object, or reports an error.
        """
        full_system = f"{system}\n\nJSON schema of your answer:\n{json.dumps(schema, separators=(',', ':'))}"
        argv = self.command(full_system)
        override = _OVERRIDE.get()
        cwd = override[0] if override else own_runs_dir()
        env = dict(os.environ)
        for name, value in (override[1] if override else {}).items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        try:
            cwd.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(argv, input=prompt, capture_output=True, text=True, cwd=cwd, env=env, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            raise LLMError(f"the claude CLI did not answer within {TIMEOUT} s") from exc
        except OSError as exc:
            raise LLMError(f"cannot run the claude CLI: {exc}") from exc
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise LLMError(f"the claude CLI exited with status {proc.returncode}: {' '.join(detail)[:500]}")
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise LLMError(f"the claude CLI printed no JSON (is it Claude Code with --output-format json?): {proc.stdout[:200]!r}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("result"), str):
            raise LLMError("the claude CLI's JSON output has no `result` string")
        if data.get("is_error") or data.get("subtype") not in (None, "success"):
            raise LLMError(f"the claude CLI reported an error ({data.get('subtype')}): {data['result'][:300]}")
        return data["result"]
