"""Extractors: from redacted human turns to candidate beliefs with evidence turn ids.

Each extractor satisfies :class:`Extractor` and is listed in :data:`EXTRACTORS`; the rule
extractor (offline, the default) and the LLM extractor (``habitus[llm]``) return the same
:class:`Candidate` shape, and :func:`habitus.extract.validate.validate` checks both the same
way (reject, never repair; seed 001 "Quality gate").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

#: Belief types (DESIGN.md "Belief types", seed 000 step 3).
TYPES = ("user", "feedback", "project", "reference")


@dataclass(slots=True)
class TurnView:
    """What an extractor sees of a turn: already redacted. ``role`` is ``user`` for human
    turns (``kind`` ``human`` or ``rejection``) and ``assistant`` for context."""

    id: str
    session_id: str
    role: str
    kind: str
    text: str
    cwd: str | None = None
    timestamp: str | None = None
    agent: str = "claude"
    project: str | None = None


@dataclass(slots=True)
class Candidate:
    """A proposed belief. ``text`` is one imperative line; ``key`` groups paraphrases (equal
    keys are one belief); ``evidence`` lists turn ids; ``contradicts`` lists keys of beliefs
    this one replaces when it is newer and explicit (``use X instead of Y``)."""

    text: str
    type: str
    key: str
    evidence: list[str]
    explicit: bool = False
    scope: str = "global"
    why: str = ""
    how_to_apply: str = ""
    contradicts: list[str] = field(default_factory=list)
    extractor: str = "rules"
    terms: frozenset[str] = frozenset()


@dataclass
class ExtractResult:
    """Candidates found, and candidates rejected by reason (counts only, never text).
    ``deferred`` lists human turn ids the extractor could not look at this run (the LLM
    daily cap, a failed call): the pipeline hands them over again on the next run."""

    candidates: list[Candidate] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    input_chars: int = 0
    notes: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)


class Extractor(Protocol):
    """Turns in, candidates out. ``turns`` are new human turns and (when ``wants_context``)
    assistant turns, in transcript order per session, all redacted."""

    name: str
    wants_context: bool

    def extract(self, turns: Sequence[TurnView], *, dry_run: bool = False) -> ExtractResult:
        """Return candidates whose evidence ids are ids of ``turns``."""
        ...


def _rules(**_: Any) -> Extractor:
    from habitus.extract.rules import RuleExtractor

    return RuleExtractor()


def _llm(**options: Any) -> Extractor:
    from habitus.extract.llm import LLMExtractor

    return LLMExtractor(**options)


#: Extractors by ``--extractor`` name; each factory takes keyword options.
EXTRACTORS: dict[str, Callable[..., Extractor]] = {"rules": _rules, "llm": _llm}
