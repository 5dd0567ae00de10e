"""Review: list candidates with their evidence, and record decisions (approve, reject,
revoke) with who and when (DESIGN.md step 7, seed 001 "explicit approval").

Only approved beliefs reach the execution layer; every decision re-renders the ledger and the
block so the files agree with the store at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from habitus.beliefs import STATUSES, set_status
from habitus.config import Config, load_config
from habitus.errors import HabitusError
from habitus.store import Store

#: Statuses shown by ``habitus candidates`` when no ``--status`` is given.
DEFAULT_STATUSES = ("proposed", "approved", "rejected", "superseded", "revoked")

#: Allowed decisions: target status -> statuses it may be taken from.
TRANSITIONS = {
    "approved": ("observed", "proposed", "rejected", "revoked"),
    "rejected": ("observed", "proposed", "approved"),
    "revoked": ("approved",),
}


def candidate_dict(belief: dict[str, Any], evidence: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The JSON shape of one candidate (``habitus candidates --json``): ``id``, ``text``,
    ``type``, ``scope``, ``status``, ``confidence``, ``sessions`` (distinct count),
    ``explicit``, ``slug`` and ``evidence``: ``{agent, session_id, path, line, uuid,
    timestamp, excerpt}`` with ``path`` relative to the agent's home and ``line`` 1-based."""
    return {
        "id": belief["id"],
        "text": belief["text"],
        "type": belief["type"],
        "scope": belief["scope"],
        "status": belief["status"],
        "confidence": belief["confidence"],
        "sessions": belief["sessions"],
        "explicit": bool(belief["explicit"]),
        "slug": belief["slug"],
        "supersedes": belief.get("supersedes"),
        "superseded_by": belief.get("superseded_by"),
        "evidence": [
            {
                "agent": e["agent"],
                "session_id": e["session_id"],
                "path": e["path"],
                "line": e["line"],
                "uuid": e["uuid"],
                "timestamp": e["timestamp"],
                "excerpt": e["excerpt"],
            }
            for e in evidence
        ],
    }


def list_candidates(statuses: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Beliefs with the given statuses (default :data:`DEFAULT_STATUSES`; ``["all"]`` for
    every status), strongest first, as :func:`candidate_dict` items. Raises
    :class:`HabitusError` for an unknown status."""
    wanted = list(statuses or DEFAULT_STATUSES)
    if "all" in wanted:
        wanted = list(STATUSES)
    unknown = [s for s in wanted if s not in STATUSES]
    if unknown:
        raise HabitusError(f"unknown status {unknown[0]!r} (known: {', '.join(STATUSES)}, all)")
    with Store.open() as store:
        rows = store.beliefs(wanted)
        evidence = store.evidence_for(r["id"] for r in rows)
        return [candidate_dict(r, evidence.get(r["id"], [])) for r in rows]


@dataclass
class Decision:
    """What :func:`decide` did: ids changed, ids already in that status, and the render."""

    status: str
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    block: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def decide(ids: Sequence[str], status: str, *, actor: str = "user", config: Config | None = None, render: bool = True) -> Decision:
    """Set ``status`` (``approved``, ``rejected`` or ``revoked``) on beliefs named by id,
    id prefix or slug, record the decision, then re-render the ledger and the block.

    All ids are checked before anything changes: an unknown id or a transition that is not
    allowed (e.g. revoking a belief that was never approved) raises :class:`HabitusError`
    and changes nothing.
    """
    if status not in TRANSITIONS:
        raise HabitusError(f"cannot set status {status!r}")
    config = config or load_config()
    outcome = Decision(status)
    from habitus.pipeline import Report
    from habitus.pipeline import render as render_files

    with Store.open() as store:
        targets = list({b["id"]: b for b in (store.belief(i) for i in ids)}.values())  # each once
        for belief in targets:
            if belief["status"] != status and belief["status"] not in TRANSITIONS[status]:
                raise HabitusError(
                    f"belief {belief['id'][:8]} is {belief['status']}; it cannot become {status}"
                )
        for belief in targets:
            if belief["status"] == status:
                outcome.unchanged.append(belief["id"])
                continue
            set_status(store, belief, status, actor=actor, reason="user decision")
            outcome.changed.append(belief["id"])
        store.commit()
        if render and outcome.changed:
            report = Report(dry_run=False, agents=[], extractor="")
            render_files(store, config, report, dry_run=False)
            store.commit()
            outcome.block = report.block
            outcome.warnings = report.warnings
    return outcome
