"""The light part of ``distill``: its options and report, checking them, and the no-op fast
path. The CLI imports this first: a re-run with nothing to do must not pay for importing the
pipeline, SQLAlchemy or the extractors (the scan benchmark's re-run target).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from habitus.config import AGENTS, EXTRACTORS, Config, load_config
from habitus.errors import HabitusError
from habitus.paths import agent_home, claude_home
from habitus.render.block import current_block, entry_count
from habitus.render.stamp import render_stamp
from habitus.sources.discover import select
from habitus.store import default_db_path

#: Prompt history file names, by agent (read by the pipeline; FORMATS.md 1.10 and 2.1).
HISTORY_NAMES = {"claude": "history.jsonl", "codex": "history.jsonl"}

#: The environment variable that relocates each agent's folder.
HOME_VARS = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "droid": "FACTORY_HOME"}


@dataclass
class DistillOptions:
    """Per-run overrides of the config (``None`` means: use the config value)."""

    days: int | None = None
    sessions: int | None = None
    agents: Sequence[str] | None = None
    extractor: str | None = None
    model: str | None = None
    dry_run: bool = False
    verbose: bool = False


@dataclass
class Report:
    """What a run did; every field is JSON-ready (``habitus distill --json``). Character
    counts are characters, byte counts bytes."""

    dry_run: bool
    agents: list[str]
    extractor: str
    files_selected: int = 0
    files_read: dict[str, int] = field(default_factory=dict)
    rewritten: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_files: list[dict[str, str]] = field(default_factory=list)
    bytes_read: int = 0
    lines_read: int = 0
    bad_lines: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    human_turns: int = 0
    new_human_turns: int = 0
    duplicate_turns: int = 0
    excluded_turns: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    candidates_found: int = 0
    candidates_rejected: dict[str, int] = field(default_factory=dict)
    beliefs_new: int = 0
    beliefs_updated: int = 0
    beliefs_qualified: int = 0
    beliefs_approved: int = 0
    beliefs_superseded: int = 0
    conflicts: int = 0
    llm_calls: int = 0
    llm_input_chars: int = 0
    block: dict[str, Any] = field(default_factory=dict)
    ledger: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data."""
        return asdict(self)


def prepare(options: DistillOptions, config: Config | None = None) -> tuple[Config, Report]:
    """Load the config (unless given), check the agents and the extractor, and start the
    report (with a warning when no agent folder exists). Raises :class:`HabitusError` for an
    unknown agent or extractor and :class:`habitus.errors.ConfigError` for a bad config."""
    config = config or load_config()
    agents = list(options.agents or config.agents)
    for agent in agents:
        if agent not in AGENTS:
            raise HabitusError(f"unknown agent {agent!r} (known: {', '.join(AGENTS)})")
    extractor_name = options.extractor or config.extractor
    if extractor_name not in EXTRACTORS:
        raise HabitusError(f"unknown extractor {extractor_name!r} (known: {', '.join(EXTRACTORS)})")
    report = Report(dry_run=options.dry_run, agents=[a for a in agents if agent_home(a).is_dir()], extractor=extractor_name)
    if not report.agents:
        looked = ", ".join(f"{agent_home(a)} ({HOME_VARS[a]})" for a in agents)
        report.warnings.append(f"no agent folder found; looked for {looked}")
    return config, report


def quick_distill(options: DistillOptions) -> Report | None:
    """The report of a run that has nothing to do, or ``None`` when the pipeline must run."""
    import time

    started = time.monotonic()
    config, report = prepare(options)
    if not nothing_to_do(config, options, report):
        return None
    report.seconds = round(time.monotonic() - started, 3)
    return report


#: The selection the no-op check just made and found work in, with its arguments: the run
#: that follows takes it (once) instead of walking the folders again.
_CHECKED: list[tuple[tuple[Any, ...], Any]] = []


def _selection_key(config: Config, options: DistillOptions, agents: Sequence[str]) -> tuple[Any, ...]:
    return (tuple(agents), options.days or config.window_days, config.quiet_minutes, tuple(config.exclude_projects), options.verbose)


def selection_for(config: Config, options: DistillOptions, agents: Sequence[str], *, fresh: bool = False) -> Any:
    """Every transcript in the window (newest first). The ``--sessions`` cap is applied after
    planning, to the files that need reading, so unchanged files never use it up and a
    backlog drains over later runs. Unless ``fresh``, the selection the no-op check made for
    the same arguments is taken (once) if there is one."""
    key = _selection_key(config, options, agents)
    if not fresh:
        while _CHECKED:
            checked_key, selection = _CHECKED.pop()
            if checked_key == key:
                return selection
    return select(
        agents,
        days=options.days or config.window_days,
        sessions=10**9,
        quiet_minutes=config.quiet_minutes,
        exclude=config.exclude_projects,
        keep_names=options.verbose,
    )


def nothing_to_do(config: Config, options: DistillOptions, report: Report) -> bool:
    """The no-op fast path: when every selected transcript and prompt history is unchanged
    (one ``stat`` each) and the render stamp matches, fill ``report`` and return ``True``
    without importing SQLAlchemy, reading a transcript byte or writing anything. Any doubt
    (no store, another schema revision, an error) returns ``False``: the normal path runs."""

    from habitus.store.readonly import Peek

    peek = Peek.at_head(default_db_path())
    if peek is None:
        return False
    try:
        selection = selection_for(config, options, report.agents, fresh=True)
        histories = {agent: f"history:{name}" for agent, name in HISTORY_NAMES.items() if agent in selection.homes}
        stats = peek.file_stats([*(f.rel for f in selection.files), *histories.values()])
        for file in selection.files:
            if stats.get((file.agent, file.rel)) != (file.size, file.mtime, file.inode):  # plan() says "unchanged"
                _CHECKED[:] = [(_selection_key(config, options, report.agents), selection)]  # for the run that follows
                return False
        for agent, rel in histories.items():
            path = selection.homes[agent] / HISTORY_NAMES[agent]
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            if stats.get((agent, rel)) != (st.st_size, st.st_mtime, st.st_ino):
                return False
        if peek.get_state("render_stamp") != render_stamp(config, peek.beliefs_stamp()):
            return False
        if peek.get_state(f"deferred_turns:{report.extractor}") not in (None, "[]"):
            return False  # turns wait for the extractor (an earlier LLM cap or failure)
    except (sqlite3.Error, OSError):
        return False
    finally:
        peek.close()
    report.files_selected = len(selection.files)
    report.files_read = {"unchanged": len(selection.files)} if selection.files else {}
    report.skipped = dict(selection.skipped_counts)
    report.skipped_files = [{"agent": s.agent, "path": s.rel, "reason": s.reason} for s in selection.skipped]
    target = claude_home() / "CLAUDE.md"
    try:
        current = current_block(target.read_bytes(), name=str(target)) if target.exists() else None
    except HabitusError:
        return False
    chars = len(current) if current else 0
    report.block = {"path": str(target), "before": chars, "after": chars, "limit": config.max_block_chars, "entries": entry_count(current), "written": False, "reason": "nothing changed"}
    report.ledger = {"path": str(config.ledger_dir()), "written": 0}
    return True
