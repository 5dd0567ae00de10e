"""Transcript readers, one module per agent format, listed in one dict.

Each reader satisfies :class:`habitus.sources.base.Source`. See FORMATS.md for the formats.
"""

from __future__ import annotations

from habitus.sources.base import LineStream, Skipped, Source, TranscriptFile
from habitus.sources.claude_code import ClaudeCodeSource
from habitus.sources.codex import CodexSource
from habitus.sources.droid import DroidSource

#: Every known reader, by agent name (``--agent`` values).
SOURCES: dict[str, Source] = {
    "claude": ClaudeCodeSource(),
    "codex": CodexSource(),
    "droid": DroidSource(),
}

__all__ = ["SOURCES", "LineStream", "Skipped", "Source", "TranscriptFile"]
