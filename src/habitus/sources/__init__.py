"""Transcript readers, one module per agent format, listed in one dict.

Each reader satisfies :class:`habitus.sources.base.Source`. See FORMATS.md for the formats.
"""

from __future__ import annotations

from habitus.sources.base import LineStream, Skipped, Source, TranscriptFile
from habitus.sources.claude_code import ClaudeCodeSource

#: Every known reader, by agent name (``--agent`` values).
SOURCES: dict[str, Source] = {
    "claude": ClaudeCodeSource(),
}

__all__ = ["SOURCES", "LineStream", "Skipped", "Source", "TranscriptFile"]
