"""The habitus configuration: flat TOML keys named as in the seeds, each with a default.

The file is ``$HABITUS_CONFIG``, else ``config.toml`` in the platform config dir
(see :func:`habitus.paths.config_path`). A missing file means all defaults. An unknown key,
a value of the wrong type or outside its allowed set raises :class:`ConfigError` naming the
key; habitus never rewrites the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from habitus.errors import ConfigError
from habitus.paths import config_path, user_dir

AUTO_APPROVE = ("none", "explicit", "all")
AGENTS = ("claude", "codex", "droid")
EXTRACTORS = ("rules", "llm")


@dataclass(frozen=True)
class Config:
    """All settings, with their defaults. Every field is a key of ``config.toml``."""

    window_days: int = 14
    """Read transcripts modified in the last N days (seed 002; seed 000 used 7)."""
    max_sessions: int = 20
    """At most N sessions per run, newest first (seed 002)."""
    quiet_minutes: int = 5
    """Skip files modified in the last N minutes: still being written (seed 002)."""
    min_occurrences: int = 2
    """Distinct sessions a non-explicit belief needs to qualify (seed 000)."""
    max_block_chars: int = 25_000
    """Budget of the managed CLAUDE.md block, in characters, not bytes (seed 000)."""
    max_entry_chars: int = 2_000
    """Budget of one entry of the block, in characters (seed 000)."""
    exclude_projects: list[str] = field(default_factory=list)
    """Glob patterns; a session whose project folder or cwd matches one is skipped."""
    language: str = "auto"
    """Language of the block heading: ``auto`` (the user's own), or ``en`` / ``zh``."""
    write_global_claude_md: bool = True
    """Write approved beliefs into ``$CLAUDE_CONFIG_DIR/CLAUDE.md`` (seed 000)."""
    memory_dir: str = "auto"
    """The ledger folder; ``auto`` means ``$HABITUS_HOME/ledger``."""
    auto_approve: str = "explicit"
    """``none``: every belief waits for ``habitus approve``; ``explicit``: explicit statements
    ("always", "never", "remember", "from now on") are approved automatically; ``all``."""
    agents: list[str] = field(default_factory=lambda: list(AGENTS))
    """Which agents' transcripts to read, of ``claude``, ``codex``, ``droid``."""
    extractor: str = "rules"
    """``rules`` (offline, default) or ``llm`` (needs ``habitus[llm]`` and ``model``)."""
    model: str = ""
    """The ``llm`` model id for the LLM extractor, e.g. ``gpt-4o-mini`` or ``claude-cli``."""
    max_calls_per_day: int = 50
    """Hard cap on LLM extractor calls per day (seed 002)."""
    redact_emails: bool = False
    """Also replace e-mail addresses (personal data, not secrets) with a placeholder."""

    def ledger_dir(self) -> Path:
        """The resolved ledger folder (``memory_dir``, or ``$HABITUS_HOME/ledger``)."""
        if self.memory_dir == "auto":
            return user_dir() / "ledger"
        return Path(self.memory_dir).expanduser()


_DEFAULTS = Config()
_TYPES: dict[str, type] = {f.name: type(getattr(_DEFAULTS, f.name)) for f in fields(Config)}
_CHOICES: dict[str, tuple[str, ...]] = {
    "auto_approve": AUTO_APPROVE,
    "extractor": EXTRACTORS,
    "language": ("auto", "en", "zh"),
}
_MINIMUM: dict[str, int] = {
    "window_days": 1,
    "max_sessions": 1,
    "quiet_minutes": 0,
    "min_occurrences": 1,
    "max_block_chars": 200,
    "max_entry_chars": 20,
    "max_calls_per_day": 0,
}


def config_keys() -> list[tuple[str, Any, str]]:
    """Every key as ``(name, default, description)``, in file order, for docs and ``--help``."""
    import ast
    import inspect

    source = inspect.getsource(Config)
    docs: dict[str, str] = {}
    tree = ast.parse(source)
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr):
            docs[node.target.id] = " ".join(str(nxt.value.value).split())  # type: ignore[attr-defined,union-attr]
    return [(f.name, getattr(_DEFAULTS, f.name), docs.get(f.name, "")) for f in fields(Config)]


def validate(values: dict[str, Any], origin: str = "config") -> Config:
    """Build a :class:`Config` from a flat mapping; raise :class:`ConfigError` naming a bad key."""
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in _TYPES:
            known = ", ".join(sorted(_TYPES))
            raise ConfigError(f"{origin}: unknown key {key!r} (known keys: {known})")
        want = _TYPES[key]
        if want is bool and not isinstance(value, bool):
            raise ConfigError(f"{origin}: {key} must be true or false, not {value!r}")
        if want is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{origin}: {key} must be an integer, not {value!r}")
        if want is str and not isinstance(value, str):
            raise ConfigError(f"{origin}: {key} must be a string, not {value!r}")
        if want is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{origin}: {key} must be a list of strings, not {value!r}")
            value = list(value)
        if key in _MINIMUM and value < _MINIMUM[key]:
            raise ConfigError(f"{origin}: {key} must be at least {_MINIMUM[key]}, not {value}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ConfigError(
                f"{origin}: {key} must be one of {', '.join(_CHOICES[key])}, not {value!r}"
            )
        if key == "memory_dir" and value != "auto" and not Path(value).expanduser().is_absolute():
            raise ConfigError(f"{origin}: memory_dir must be \"auto\" or an absolute path (~ allowed), not {value!r}")
        if key == "agents":
            if not value:
                raise ConfigError(f"{origin}: agents must name at least one of {', '.join(AGENTS)}")
            bad = [a for a in value if a not in AGENTS]
            if bad:
                raise ConfigError(f"{origin}: agents: unknown agent {bad[0]!r} (known: {', '.join(AGENTS)})")
        changes[key] = value
    return replace(_DEFAULTS, **changes)


def load_config(path: Path | None = None) -> Config:
    """Read the config file (``path`` or :func:`config_path`); defaults when it does not exist.

    Raises :class:`ConfigError` for unreadable TOML, nested tables, unknown keys or bad values.
    """
    path = path or config_path()
    if not path.exists():
        return _DEFAULTS
    import tomllib  # here: a run without a config file does not need it

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM is harmless
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    return validate(data, origin=str(path))
