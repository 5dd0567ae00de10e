"""Where habitus and the agents keep their files.

Every location honours an environment override, so every command works with ``HOME``
pointed at a scratch folder (DESIGN.md, "Where the user's files are").
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

APP_NAME = "habitus"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def home() -> Path:
    """The user's home directory, read from ``HOME`` first so tests can redirect it."""
    env = _env_path("HOME")
    return env if env is not None else Path.home()


def user_dir(create: bool = False) -> Path:
    """habitus's own state folder: ``$HABITUS_HOME``, else the platform's user data dir.

    Under pytest (``PYTEST_CURRENT_TEST`` set) the real default is refused with
    ``RuntimeError`` so a test can never write into the developer's real data dir.
    """
    env = _env_path("HABITUS_HOME")
    if env is None:
        if os.environ.get("PYTEST_CURRENT_TEST"):
            raise RuntimeError("tests must set HABITUS_HOME; refusing the real user data dir")
        import platformdirs  # here: with HABITUS_HOME set it is not needed

        env = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    if create:
        env.mkdir(parents=True, exist_ok=True)
    return env


def config_path() -> Path:
    """The config file: ``$HABITUS_CONFIG``, else ``config.toml`` in the platform config dir."""
    env = _env_path("HABITUS_CONFIG")
    if env is not None:
        return env
    if os.environ.get("HABITUS_HOME"):
        # A relocated habitus keeps its config beside its state unless told otherwise.
        candidate = Path(os.environ["HABITUS_HOME"]).expanduser() / "config.toml"
        if candidate.exists():
            return candidate
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def claude_home() -> Path:
    """Claude Code's folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (FORMATS.md 1.1)."""
    return _env_path("CLAUDE_CONFIG_DIR") or home() / ".claude"


def codex_home() -> Path:
    """Codex's folder: ``$CODEX_HOME``, else ``~/.codex`` (FORMATS.md 2.1)."""
    return _env_path("CODEX_HOME") or home() / ".codex"


def factory_home() -> Path:
    """Factory Droid's folder: ``$FACTORY_HOME`` (or ``$FACTORY_DIR``), else ``~/.factory`` (FORMATS.md 3)."""
    return _env_path("FACTORY_HOME") or _env_path("FACTORY_DIR") or home() / ".factory"


def agent_home(agent: str) -> Path:
    """The home folder of ``agent`` (``claude``, ``codex`` or ``droid``); ``KeyError`` otherwise."""
    return {"claude": claude_home, "codex": codex_home, "droid": factory_home}[agent]()


def own_runs_dir() -> Path:
    """The working directory of habitus's own headless agent runs (the ``claude`` CLI
    backend). Discovery skips the transcripts those runs leave, so they are never read back."""
    return user_dir() / "agent-runs"


@functools.lru_cache(maxsize=4096)
def project_key(cwd: str | None) -> str | None:
    """The project a working directory belongs to: the git common dir's parent when the
    folder (or a parent) is a git checkout, so worktrees share one key; else ``cwd`` itself.
    Only reads files (``.git``, ``commondir``); never runs git."""
    if not cwd:
        return None
    path = Path(cwd)
    for folder in (path, *path.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return str(folder)
            if dot_git.is_file():
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
                if line.startswith("gitdir:"):
                    gitdir = (folder / line[7:].strip()).resolve()
                    common = gitdir / "commondir"
                    if common.is_file():
                        common_dir = (gitdir / common.read_text().strip()).resolve()
                        return str(common_dir.parent if common_dir.name == ".git" else common_dir)
                    return str(folder)
        except OSError:
            break
    return cwd
