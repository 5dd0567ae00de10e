"""Discovery: which transcripts a run reads, and why every other one is skipped.

Rules from seed 002 ("Discovery and the quiet window") and DESIGN.md step 1: files modified
within ``--days`` (default 14) only, at most ``--sessions`` (default 20) newest first, files
modified in the last ``quiet_minutes`` (default 5) are still being written and wait for the next
run, subagent / sidechain files are skipped, ``exclude_projects`` patterns are honoured, and
habitus's own headless runs are never read back. Everything left out is counted by reason.
"""

from __future__ import annotations

import fnmatch
import heapq
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from habitus.paths import agent_home, own_runs_dir
from habitus.sources import SOURCES
from habitus.sources.base import Skipped, TranscriptFile

_SLUG = re.compile(r"[^A-Za-z0-9*?]")


def claude_slug(path: str) -> str:
    """Claude Code's project-folder name for a directory: every character that is not
    ``[A-Za-z0-9]`` becomes ``-`` (FORMATS.md 1.1). Glob characters are kept."""
    return _SLUG.sub("-", path)


@dataclass
class Selection:
    """The files a run reads (newest first) and the files it skipped. ``skipped_counts``
    counts by reason; ``skipped`` names them only when discovery was asked to keep names."""

    files: list[TranscriptFile] = field(default_factory=list)
    skipped_counts: Counter[str] = field(default_factory=Counter)
    skipped: list[Skipped] = field(default_factory=list)
    homes: dict[str, Path] = field(default_factory=dict)


def project_excluded(patterns: Iterable[str], *, project: str | None = None, cwd: str | None = None) -> bool:
    """Whether a project folder name or a working directory matches an ``exclude_projects``
    glob. A pattern is matched against the cwd as written (``~`` expanded) and, in Claude's
    slug form, against the project folder name."""
    for pattern in patterns:
        expanded = str(Path(pattern).expanduser()) if pattern.startswith("~") else pattern
        if cwd and (fnmatch.fnmatchcase(cwd, expanded) or fnmatch.fnmatchcase(cwd.rstrip("/"), expanded.rstrip("/"))):
            return True
        if project and (fnmatch.fnmatchcase(project, pattern) or fnmatch.fnmatchcase(project, claude_slug(expanded))):
            return True
    return False


def select(
    agents: Iterable[str],
    *,
    days: int,
    sessions: int,
    quiet_minutes: int,
    exclude: Iterable[str] = (),
    keep_names: bool = False,
    now: float | None = None,
) -> Selection:
    """Discover transcripts of ``agents`` (whose home folder exists) and pick this run's files.

    Holds at most ``sessions`` selected records at once (a heap), so a folder of 100,000 files
    costs memory only for the names it reports when ``keep_names`` is true.
    """
    now = time.time() if now is None else now
    oldest = now - days * 86400
    quiet = now - quiet_minutes * 60
    exclude = list(exclude)
    own = claude_slug(str(own_runs_dir()))
    sel = Selection()
    heap: list[tuple[float, str, TranscriptFile]] = []

    def skip(item: Skipped) -> None:
        sel.skipped_counts[item.reason] += 1
        if keep_names:
            sel.skipped.append(item)

    for agent in agents:
        source = SOURCES.get(agent)
        home = agent_home(agent)
        if source is None or not home.is_dir():
            continue
        sel.homes[agent] = home
        for found in source.discover(home):
            if isinstance(found, Skipped):
                skip(found)
                continue
            if agent == "claude" and found.project == own:
                skip(Skipped(agent, found.path, found.rel, "habitus_own_run"))
                continue
            if exclude and project_excluded(exclude, project=found.project):
                skip(Skipped(agent, found.path, found.rel, "excluded_project"))
                continue
            if found.mtime < oldest:
                skip(Skipped(agent, found.path, found.rel, "outside_window"))
                continue
            if found.mtime > quiet:
                skip(Skipped(agent, found.path, found.rel, "quiet_window"))
                continue
            entry = (found.mtime, found.rel, found)
            if len(heap) < sessions:
                heapq.heappush(heap, entry)
            else:
                dropped = heapq.heappushpop(heap, entry)[2]
                skip(Skipped(dropped.agent, dropped.path, dropped.rel, "over_session_cap"))
    sel.files = [item[2] for item in sorted(heap, key=lambda e: (e[0], e[1]), reverse=True)]
    return sel
