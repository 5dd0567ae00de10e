"""The belief pipeline: merge validated candidates into beliefs, count distinct sessions,
score confidence, handle contradictions and supersession, apply the approval policy.

Rules and their sources:

* exact duplicates merge by key, paraphrases by weighted term overlap (seed 002, "Belief
  pipeline"; :func:`habitus.extract.rules.same_rule`, also across runs);
* a belief qualifies with ``min_occurrences`` distinct sessions, or once when explicit
  (seed 000 step 3); below that it stays ``observed`` and waits for more evidence;
* confidence follows seed 003's table: 1-2 sessions 0.1-0.2, 3-4 sessions 0.3-0.5,
  5+ sessions 0.5-1.0; an explicit statement is a decision (0.7 fixed, seed 003);
* contradictions: a newer explicit statement or direct correction ("use X instead of Y")
  supersedes the older belief; otherwise both stay and a conflict event is recorded
  (DESIGN.md "believe"); nothing is deleted;
* lifecycle: observed → proposed → approved / rejected → superseded / revoked (DESIGN.md
  "review"); a rejected or revoked belief is not re-proposed without new explicit evidence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from habitus.extract import Candidate
from habitus.extract.rules import same_rule, similarity, term_weights, terms
from habitus.model import stable_id
from habitus.store import Store, now_iso

#: Statuses whose beliefs are live (may be superseded by a newer contradicting one).
LIVE = ("observed", "proposed", "approved")
STATUSES = ("observed", "proposed", "approved", "rejected", "superseded", "revoked")


@dataclass
class MergeResult:
    """What merging did: belief ids created, updated (new evidence), newly qualified,
    approved automatically, superseded, and conflicts recorded."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    qualified: list[str] = field(default_factory=list)
    approved: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: int = 0


def confidence(sessions: int, explicit: bool) -> float:
    """Confidence in [0, 1] from distinct sessions and explicitness (seed 003 table)."""
    if sessions <= 0:
        base = 0.0
    elif sessions <= 2:
        base = 0.1 * sessions
    elif sessions <= 4:
        base = 0.3 + 0.1 * (sessions - 3) * 2  # 3 -> 0.3, 4 -> 0.5
    else:
        base = min(1.0, 0.5 + 0.1 * (sessions - 5) + 0.1)
    if explicit:
        base = max(base, 0.7) + (0.05 * (sessions - 1) if sessions > 1 else 0.0)
    return round(min(base, 1.0), 2)


def slugify(text: str, ident: str) -> str:
    """A kebab-case file name from the rule text (ASCII words, at most 6); falls back to
    ``belief-<id>`` for text without ASCII words (e.g. Chinese)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = [w for w in re.findall(r"[a-z0-9]+", ascii_text) if w not in ("the", "a", "an")]
    slug = "-".join(words[:6])[:60].strip("-")
    return slug if len(slug) >= 3 else f"belief-{ident[:8]}"


def _polarity(key: str) -> str:
    return key.split(":", 1)[0]


def _opposites(key: str) -> list[str]:
    kind, _, rest = key.partition(":")
    if kind == "use":
        return [f"avoid:{rest}"]
    if kind == "avoid":
        return [f"use:{rest}"]
    return []


def _richer(new: str, old: str) -> bool:
    """Whether ``new`` says more than ``old`` about the same rule: it names what to use
    instead, and ``old`` did not (``Use pnpm.`` → ``Use pnpm instead of npm.``)."""
    marker = " instead of "
    return marker in new.lower() and marker not in old.lower()


class BeliefMerger:
    """Merges candidates into the store for one run (see module docstring).

    ``turns`` maps every evidence turn id to its stored row (``session_id``, ``timestamp``,
    ``path``, ``line``, ``uuid``, ``agent``, ``text``, ``project``).
    """

    def __init__(self, store: Store, *, min_occurrences: int, auto_approve: str) -> None:
        self.store = store
        self.min_occurrences = min_occurrences
        self.auto_approve = auto_approve
        self.now = now_iso()
        self._live = {b["id"]: b for b in store.beliefs(STATUSES)}
        self._terms = {bid: terms(b["text"]) for bid, b in self._live.items()}
        self._before = set(self._live)  # beliefs from earlier runs: this run's own are grouped by key
        #: Evidence rows waiting to be stored in one insert, by id (the first copy of a turn
        #: given as evidence twice for one belief wins, as when stored one by one).
        self._pending: dict[str, dict[str, Any]] = {}

    def merge(self, candidates: Sequence[Candidate], turns: Mapping[str, Mapping[str, Any]]) -> MergeResult:
        """Merge ``candidates`` (oldest evidence first) and apply the approval policy."""
        result = MergeResult()
        touched: set[str] = set()

        def first_time(c: Candidate) -> str:
            return min((turns[t].get("timestamp") or "" for t in c.evidence if t in turns), default="")

        for cand in sorted(candidates, key=first_time):
            cand.text = " ".join(cand.text.split())  # one line, single spaces
            belief = self._find(cand)
            if belief is None:
                belief = self._create(cand, turns)
                result.new.append(belief["id"])
            elif belief["id"] not in result.new and belief["id"] not in result.updated:
                result.updated.append(belief["id"])
            reopen = belief["status"] in ("rejected", "revoked") and cand.explicit
            added = self._add_evidence(belief, cand, turns, count=reopen)
            if cand.explicit and not belief["explicit"]:
                belief["explicit"] = True
                belief["text"] = cand.text
                self.store.update_belief(belief["id"], explicit=True, text=cand.text)
            elif cand.explicit == bool(belief["explicit"]) and _richer(cand.text, belief["text"]):
                belief["text"] = cand.text
                self.store.update_belief(belief["id"], text=cand.text)
            if cand.why and not belief["why"]:
                self.store.update_belief(belief["id"], why=cand.why, how_to_apply=cand.how_to_apply)
            if reopen and added:
                self._set_status(belief, "proposed", actor="habitus", reason="new explicit evidence")
            touched.add(belief["id"])
            self._contradictions(belief, cand, first_time(cand), result)
        self._store_evidence()
        for bid in sorted(touched):
            self._refresh(bid, result)
        if not result.updated:
            return result
        result.updated = [b for b in result.updated if b not in result.new]
        return result

    # ------------------------------------------------------------------ helpers
    def _find(self, cand: Candidate) -> dict[str, Any] | None:
        for belief in self._live.values():
            if belief["key"] == cand.key:
                return belief
        if _polarity(cand.key) in ("do", "never"):
            # A paraphrase of a rule learned in an earlier run (the extractor already gave one
            # key to the paraphrases of this run): the rule extractor's similarity, weighted by
            # how rare each term is among the beliefs of the same scope.
            scope = cand.key.partition("@")[2]
            cand_terms = cand.terms or terms(cand.text)
            pool = {
                bid: self._terms[bid]
                for bid, belief in self._live.items()
                if bid in self._before and _polarity(belief["key"]) in ("do", "never") and belief["key"].partition("@")[2] == scope
            }
            weight = term_weights([*pool.values(), cand_terms])
            best, best_score = None, 0.0
            for bid, found in pool.items():
                if same_rule(cand_terms, found, weight):
                    score = similarity(cand_terms, found, weight)
                    if score > best_score:
                        best, best_score = self._live[bid], score
            return best
        return None

    def _create(self, cand: Candidate, turns: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        ident = stable_id("belief", cand.key)
        slug = slugify(cand.text, ident)
        if self.store.slug_taken(slug):
            slug = f"{slug}-{ident[:6]}"
        scope = "global"
        if cand.scope.startswith("project"):
            projects = sorted({str(turns[t]["project"]) for t in cand.evidence if t in turns and turns[t].get("project")})
            scope = f"project:{projects[0]}" if projects else "project"
        row = {
            "id": ident,
            "key": cand.key,
            "slug": slug,
            "text": cand.text,
            "type": cand.type,
            "scope": scope,
            "status": "observed",
            "confidence": 0.0,
            "explicit": cand.explicit,
            "sessions": 0,
            "why": cand.why,
            "how_to_apply": cand.how_to_apply,
            "extractor": cand.extractor,
            "created_at": self.now,
            "updated_at": self.now,
            "decided_by": None,
            "decided_at": None,
            "supersedes": None,
            "superseded_by": None,
        }
        self.store.insert_belief(row)
        self._live[ident] = row
        self._terms[ident] = cand.terms or terms(cand.text)
        return row

    def _add_evidence(self, belief: Mapping[str, Any], cand: Candidate, turns: Mapping[str, Mapping[str, Any]], *, count: bool = False) -> int:
        """Queue ``cand``'s evidence for ``belief`` (stored by :meth:`_store_evidence`, in one
        insert for the whole merge). With ``count``, store it now and return how many rows
        were new (else 0)."""
        rows = []
        for tid in cand.evidence:
            turn = turns.get(tid)
            if turn is None:
                continue
            rows.append(
                {
                    "id": stable_id("evidence", belief["id"], tid),
                    "belief_id": belief["id"],
                    "turn_id": tid,
                    "agent": turn["agent"],
                    "session_id": turn["session_id"],
                    "path": turn["path"],
                    "line": turn["line"],
                    "uuid": turn.get("uuid"),
                    "timestamp": turn.get("timestamp"),
                    "excerpt": excerpt(turn["text"]),
                    "explicit": cand.explicit,
                    "created_at": self.now,
                }
            )
        if count:
            self._store_evidence()
            return self.store.add_evidence(rows)
        for row in rows:
            self._pending.setdefault(row["id"], row)
        return 0

    def _store_evidence(self) -> None:
        """Store the queued evidence rows that are not stored yet."""
        if self._pending:
            self.store.add_evidence(list(self._pending.values()))
            self._pending = {}

    def _contradictions(self, belief: dict[str, Any], cand: Candidate, when: str, result: MergeResult) -> None:
        keys = list(dict.fromkeys([*cand.contradicts, *_opposites(cand.key)]))
        for key in keys:
            for other in list(self._live.values()):
                if other["key"] != key or other["id"] == belief["id"] or other["status"] not in LIVE:
                    continue
                self._store_evidence()  # the other belief's evidence may be queued
                other_latest = max(
                    (e.get("timestamp") or "" for e in self.store.evidence_for([other["id"]]).get(other["id"], [])),
                    default="",
                )
                if when < other_latest:
                    continue  # the other one is newer; this older statement does not win
                if cand.explicit or key in cand.contradicts:
                    self._set_status(other, "superseded", actor="habitus", reason=f"superseded by {belief['id']}")
                    self.store.update_belief(other["id"], superseded_by=belief["id"])
                    self.store.update_belief(belief["id"], supersedes=other["id"])
                    belief["supersedes"] = other["id"]
                    result.superseded.append(other["id"])
                else:
                    self.store.add_event("conflict", belief_id=belief["id"], actor="habitus", detail={"with": other["id"]})
                    result.conflicts += 1

    def _refresh(self, bid: str, result: MergeResult) -> None:
        belief = self._live[bid]
        rows = self.store.evidence_for([bid]).get(bid, [])
        sessions = len({(e["agent"], e["session_id"]) for e in rows})
        explicit = bool(belief["explicit"]) or any(e["explicit"] for e in rows)
        values: dict[str, Any] = {
            "sessions": sessions,
            "confidence": confidence(sessions, explicit),
            "explicit": explicit,
        }
        changed = {k: v for k, v in values.items() if belief.get(k) != v}
        if changed:
            changed["updated_at"] = self.now
            self.store.update_belief(bid, **changed)
            belief.update(changed)
        if belief["status"] == "observed" and (explicit or sessions >= self.min_occurrences):
            self._set_status(belief, "proposed", actor="habitus", reason="qualified")
            result.qualified.append(bid)
        if belief["status"] == "proposed":
            policy = self.auto_approve
            if policy == "all" or (policy == "explicit" and explicit):
                self._set_status(belief, "approved", actor=f"auto:{policy}", reason="auto_approve policy")
                result.approved.append(bid)

    def _set_status(self, belief: dict[str, Any], status: str, *, actor: str, reason: str) -> None:
        set_status(self.store, belief, status, actor=actor, reason=reason)


def set_status(store: Store, belief: dict[str, Any], status: str, *, actor: str, reason: str = "") -> None:
    """Change a belief's status and record who did it, when and why, as an event."""
    at = now_iso()
    values: dict[str, Any] = {"status": status, "updated_at": at}
    if status in ("approved", "rejected", "revoked"):
        values.update(decided_by=actor, decided_at=at)
    store.update_belief(belief["id"], **values)
    store.add_event(status, belief_id=belief["id"], actor=actor, detail={"from": belief["status"], "reason": reason})
    belief.update(values)


def excerpt(text: str, limit: int = 240) -> str:
    """A one-line excerpt of (already redacted) ``text``, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
