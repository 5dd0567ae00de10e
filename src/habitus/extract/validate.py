"""Validation of candidates from any extractor: reject, never repair (seed 001 "Quality gate",
DESIGN.md "validate").

A candidate is rejected, and counted by reason, when: it cites no evidence; it cites a turn id
that is not a human turn of this run (``unknown_evidence`` / ``non_human_evidence``: no
assistant turn, tool output or injected text is evidence); its text or a field is empty or over
its limit; its type is unknown; it contains habitus's block markers (``marker_text``); its
text had a secret cut out (``redacted_text``); or any field still matches a secret rule
(fail-closed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from habitus.extract import TYPES, Candidate
from habitus.redact import find_secrets

#: Text that would corrupt habitus's own markers in CLAUDE.md / INDEX.md.
_MARKERS = ("<!-- BEGIN habitus", "<!-- END habitus")

#: The longest candidate text accepted, in characters (seed 000: one entry ≤ 2,000). The
#: block's own ``max_entry_chars`` shortens entries when rendering; it never filters learning.
MAX_CANDIDATE_CHARS = 2000


def validate(
    candidates: Sequence[Candidate],
    turn_roles: Mapping[str, str],
    *,
    max_text_chars: int = MAX_CANDIDATE_CHARS,
    max_field_chars: int = 4000,
) -> tuple[list[Candidate], Counter[str]]:
    """Split ``candidates`` into accepted ones and a count of rejections by reason.

    ``turn_roles`` maps each turn id the extractor was shown to ``"human"`` or another role;
    limits are in characters.
    """
    accepted: list[Candidate] = []
    rejected: Counter[str] = Counter()
    for cand in candidates:
        reason = _reason(cand, turn_roles, max_text_chars, max_field_chars)
        if reason:
            rejected[reason] += 1
        else:
            accepted.append(cand)
    return accepted, rejected


def _reason(cand: Candidate, roles: Mapping[str, str], max_text: int, max_field: int) -> str | None:
    if not cand.evidence:
        return "no_evidence"
    for tid in cand.evidence:
        role = roles.get(tid)
        if role is None:
            return "unknown_evidence"
        if role != "human":
            return "non_human_evidence"
    text = cand.text.strip() if isinstance(cand.text, str) else ""
    if not text:
        return "empty_text"
    if len(text) > max_text:
        return "oversized_text"
    if cand.type not in TYPES:
        return "unknown_type"
    if any(marker in value for value in (text, cand.why, cand.how_to_apply) for marker in _MARKERS):
        return "marker_text"  # would break the managed block it is written into
    if "[REDACTED:" in text:
        return "redacted_text"  # a rule about a secret that was cut out says nothing usable
    for value in (cand.why, cand.how_to_apply):
        if not isinstance(value, str) or len(value) > max_field:
            return "oversized_field"
    if _has_secret((cand.text, cand.why, cand.how_to_apply)):
        return "secret"
    return None


def _has_secret(values: Iterable[str]) -> bool:
    return any(find_secrets(v) for v in values if v)
