"""Labelled evaluation: run the real pipeline on a corpus with known habits and score it.

A corpus is a folder laid out as a scratch home plus a gold file (``bench/make_eval.py``
writes one)::

    DIR/home/.claude/projects/<slug>/<session>.jsonl     Claude Code transcripts
    DIR/home/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl  Codex rollouts
    DIR/gold.json                                        what was planted (format habitus-eval/1)

:func:`evaluate` runs discover → read → redact → extract → validate → believe with
:func:`habitus.pipeline.distill` in a temporary ``HABITUS_HOME``, with ``HOME`` and every agent
home pointed into ``DIR/home`` for the duration (restored afterwards; the real home is never
read or written, nor is ``DIR`` changed), then scores the resulting beliefs with :func:`score`.

Matching is by evidence, never by wording. Each gold habit lists the (file, line) of every
statement (files relative to ``DIR/home``), plus ``supporting`` lines that are acceptable
evidence too (the Codex ``response_item`` copy of a prompt; every Chinese line for a
statistical "Reply in Chinese."). A belief *matches* a habit when all of its evidence lines
are among that habit's lines; a belief whose evidence touches a trap line (one that is not
also a line of the habit it matches) is a *false memory* of that trap's kind. Definitions
(all over *qualified* beliefs: status proposed, approved or superseded):

* ``precision`` = distinct gold habits matched / qualified beliefs (a duplicate lowers it);
* ``recall`` = expected habits matched / expected habits, where a habit is *expected* when
  one of its readable statements is explicit or its statements span ``min_occurrences``
  distinct sessions (statements in a format no reader handles are not counted);
* ``duplicates`` = beliefs beyond the first matched to the same habit;
* ``false_memories`` = qualified beliefs by trap kind; ``trap_candidates`` = the same over
  every belief, observed ones included (a candidate was extracted from the trap);
* ``supersession``: for each changed preference, handled when every belief matched to the
  old habit is superseded and one matched to the new habit is live (proposed or approved).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError, NotFoundError

FORMAT = "habitus-eval/1"
#: Where each agent's files live inside the corpus home (evidence paths are relative to these).
AGENT_DIRS = {"claude": ".claude", "codex": ".codex", "droid": ".factory"}
QUALIFIED = ("proposed", "approved", "superseded")
LIVE = ("proposed", "approved")
#: Environment variables pointed into the corpus (or the scratch state) for the duration.
_ENV_KEYS = ("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "FACTORY_HOME", "FACTORY_DIR", "HABITUS_HOME", "HABITUS_CONFIG", "LLM_USER_PATH")


def load_gold(corpus_dir: Path) -> dict[str, Any]:
    """Read ``corpus_dir/gold.json``. Raises :class:`NotFoundError` when it or ``home/`` is
    missing and :class:`HabitusError` when it is not a ``habitus-eval/1`` document."""
    path = corpus_dir / "gold.json"
    if not path.is_file() or not (corpus_dir / "home").is_dir():
        raise NotFoundError(f"{corpus_dir} is not an evaluation corpus (needs gold.json and home/)")
    try:
        gold = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HabitusError(f"{path}: cannot read gold file: {exc}") from exc
    if not isinstance(gold, dict) or gold.get("format") != FORMAT:
        raise HabitusError(f"{path}: not a {FORMAT} gold file")
    for key in ("habits", "traps"):
        if not isinstance(gold.get(key), list):
            raise HabitusError(f"{path}: {key!r} must be a list")
    return gold


@contextmanager
def isolated_environment(home: Path, state: Path, *, llm_dir: str | None = None) -> Iterator[None]:
    """Point ``HOME`` and the agent homes at ``home`` and ``HABITUS_HOME`` at ``state`` (with
    no config file) for the duration; restore every variable afterwards. ``llm_dir`` keeps
    the user's ``llm`` settings and keys reachable (``LLM_USER_PATH``) although ``HOME`` moved."""
    saved = {key: os.environ.get(key) for key in _ENV_KEYS}
    values = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "FACTORY_HOME": str(home / ".factory"),
        "HABITUS_HOME": str(state / "habitus"),
        "HABITUS_CONFIG": str(state / "config.toml"),
    }
    try:
        os.environ.pop("FACTORY_DIR", None)
        os.environ.update(values)
        if llm_dir:
            os.environ["LLM_USER_PATH"] = llm_dir
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _llm_user_dir() -> str:
    """The ``llm`` library's settings folder as it is now (before ``HOME`` moves)."""
    if os.environ.get("LLM_USER_PATH"):
        return os.environ["LLM_USER_PATH"]
    import click

    return click.get_app_dir("io.datasette.llm")


def evaluate(
    corpus_dir: str | Path,
    *,
    extractor: str = "rules",
    model: str | None = None,
    max_calls: int | None = None,
) -> dict[str, Any]:
    """Run the real pipeline on the corpus in ``corpus_dir`` and return the scores.

    ``extractor`` is an :data:`habitus.extract.EXTRACTORS` name; ``model`` the model for the
    LLM extractor; ``max_calls`` its call cap (default: the user's ``max_calls_per_day``).
    The returned dict holds ``precision``, ``recall``, ``f1``, ``duplicates``,
    ``false_memories`` and ``trap_candidates`` (by trap kind), ``supersession``, the lists
    ``missed`` and ``unmatched`` for diagnosis, and ``run`` (counts from the distill report).
    Raises :class:`NotFoundError` / :class:`HabitusError` for a bad corpus, and whatever
    :func:`habitus.pipeline.distill` raises.
    """
    from habitus.config import load_config
    from habitus.pipeline import DistillOptions, distill
    from habitus.sources import SOURCES
    from habitus.store import Store

    corpus = Path(corpus_dir).expanduser().resolve()
    gold = load_gold(corpus)
    user_config = load_config()
    cap = max_calls if max_calls is not None else user_config.max_calls_per_day
    llm_dir = _llm_user_dir() if extractor == "llm" else None
    with ExitStack() as stack:
        state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="habitus-eval-")))
        if extractor == "llm" and (model or "").startswith("claude-cli"):
            from habitus.extract.claude_cli import agent_environment
            from habitus.paths import own_runs_dir

            # The claude CLI keeps the user's real home, credentials and runs folder.
            keep = {k: os.environ.get(k) for k in ("HOME", "CLAUDE_CONFIG_DIR")}
            stack.enter_context(agent_environment(cwd=own_runs_dir(), env=keep))
        stack.enter_context(isolated_environment(corpus / "home", state, llm_dir=llm_dir))
        config = replace(
            user_config.__class__(),
            window_days=36500,
            max_sessions=1_000_000,
            quiet_minutes=0,
            write_global_claude_md=False,
            extractor=extractor,
            model=model or "",
            max_calls_per_day=cap,
        )
        report = distill(DistillOptions(days=36500, sessions=1_000_000, extractor=extractor, model=model), config=config)
        with Store.open() as store:
            beliefs = store.beliefs()
            evidence = store.evidence_for(b["id"] for b in beliefs)
    result = score(gold, beliefs, evidence, readable=tuple(SOURCES), min_occurrences=config.min_occurrences)
    result.update(corpus=str(corpus), extractor=extractor, model=model, seed=gold.get("seed"))
    result["run"] = {
        "files_read": sum(report.files_read.values()),
        "skipped": report.skipped,
        "human_turns": report.human_turns,
        "candidates_found": report.candidates_found,
        "candidates_rejected": report.candidates_rejected,
        "llm_calls": report.llm_calls,
        "llm_input_chars": report.llm_input_chars,
        "warnings": report.warnings,
        "seconds": report.seconds,
    }
    return result


def _ratio(num: int, den: int, empty: float) -> float:
    return round(num / den, 4) if den else empty


def score(
    gold: Mapping[str, Any],
    beliefs: Sequence[Mapping[str, Any]],
    evidence: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    readable: Sequence[str] = tuple(AGENT_DIRS),
    min_occurrences: int = 2,
) -> dict[str, Any]:
    """Score ``beliefs`` (store rows) with their ``evidence`` rows (by belief id) against
    ``gold`` (see the module docstring for every definition). ``readable`` names the agents
    whose transcripts habitus can read. Pure: reads nothing, writes nothing."""
    min_occ = int(gold.get("min_occurrences", min_occurrences))
    habits = {h["id"]: h for h in gold["habits"]}
    lines: dict[tuple[str, int], set[str]] = {}
    statement_lines: dict[str, set[tuple[str, int]]] = {}
    for hid, habit in habits.items():
        stated = {(s["file"], int(s["line"])) for s in habit.get("statements", [])}
        statement_lines[hid] = stated
        for ref in [*habit.get("statements", []), *habit.get("supporting", [])]:
            lines.setdefault((ref["file"], int(ref["line"])), set()).add(hid)
    traps: dict[tuple[str, int], str] = {(t["file"], int(t["line"])): t["kind"] for t in gold["traps"]}

    expected: set[str] = set()
    unreadable = 0
    for hid, habit in habits.items():
        usable = [s for s in habit.get("statements", []) if s.get("agent", "claude") in readable]
        unreadable += len(habit.get("statements", [])) - len(usable)
        sessions = {(s.get("agent"), s.get("session")) for s in usable}
        if any(s.get("explicit") for s in usable) or len(sessions) >= min_occ:
            expected.add(hid)

    matched_by_habit: dict[str, list[str]] = {}
    false_memories: Counter[str] = Counter()
    trap_candidates: Counter[str] = Counter()
    unmatched: list[dict[str, Any]] = []
    matches: dict[str, str] = {}
    qualified = [b for b in beliefs if b["status"] in QUALIFIED]
    agreement: Counter[str] = Counter()
    for belief in beliefs:
        rows = evidence.get(belief["id"], [])
        refs = [(f"{AGENT_DIRS.get(e['agent'], '.' + e['agent'])}/{e['path']}", int(e["line"])) for e in rows]
        habit_id = _match(refs, lines, statement_lines, belief.get("key", ""), habits) if refs else None
        # a trap line that is also a line of the matched habit (a Chinese task line supporting
        # "Reply in Chinese.") is not a false memory
        kinds = {traps[r] for r in refs if r in traps and (habit_id is None or habit_id not in lines.get(r, set()))}
        for kind in kinds:
            trap_candidates[kind] += 1
        is_qualified = belief["status"] in QUALIFIED
        if is_qualified:
            for kind in kinds:
                false_memories[kind] += 1
        if habit_id is None:
            if is_qualified:
                unmatched.append({
                    "text": belief["text"],
                    "key": belief.get("key"),
                    "status": belief["status"],
                    "evidence": [{"file": f, "line": n, "trap": traps.get((f, n))} for f, n in refs],
                })
            continue
        matches[belief["id"]] = habit_id
        if is_qualified:
            matched_by_habit.setdefault(habit_id, []).append(belief["id"])
            habit = habits[habit_id]
            agreement["type"] += belief["type"] == habit.get("type")
            want_project = habit.get("scope") == "project"
            agreement["scope"] += want_project == str(belief.get("scope", "")).startswith("project")

    tp = len(matched_by_habit)
    hits = expected & set(matched_by_habit)
    precision = _ratio(tp, len(qualified), 1.0)
    recall = _ratio(len(hits), len(expected), 1.0)
    f1 = round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0
    by_id = {b["id"]: b for b in beliefs}
    supersession = []
    for change in gold.get("changes", []):
        old = [by_id[b] for b in matched_by_habit.get(change["old"], [])]
        new = [by_id[b] for b in matched_by_habit.get(change["new"], [])]
        handled = bool(old) and all(b["status"] == "superseded" for b in old) and any(b["status"] in LIVE for b in new)
        supersession.append({
            "old": change["old"],
            "new": change["new"],
            "old_status": [b["status"] for b in old],
            "new_status": [b["status"] for b in new],
            "handled": handled,
        })
    missed = [
        {"id": hid, "rule": habits[hid].get("rule"), "statements": [s.get("text", "") for s in habits[hid].get("statements", [])]}
        for hid in sorted(expected - hits)
    ]
    return {
        "habits": len(habits),
        "expected": len(expected),
        "unreadable_statements": unreadable,
        "beliefs": len(beliefs),
        "qualified": len(qualified),
        "matched": tp,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "duplicates": sum(len(v) - 1 for v in matched_by_habit.values()),
        "false_memories": dict(sorted(false_memories.items())),
        "trap_candidates": dict(sorted(trap_candidates.items())),
        "supersession": {
            "expected": len(supersession),
            "handled": sum(1 for s in supersession if s["handled"]),
            "changes": supersession,
        },
        "type_agreement": _ratio(agreement["type"], sum(len(v) for v in matched_by_habit.values()), 1.0),
        "scope_agreement": _ratio(agreement["scope"], sum(len(v) for v in matched_by_habit.values()), 1.0),
        "missed": missed,
        "unmatched": unmatched,
    }


def _match(
    refs: Sequence[tuple[str, int]],
    lines: Mapping[tuple[str, int], set[str]],
    statement_lines: Mapping[str, set[tuple[str, int]]],
    key: str,
    habits: Mapping[str, Mapping[str, Any]],
) -> str | None:
    """The habit all of ``refs`` belong to, or ``None``. When several do (supporting lines
    overlap), a ``user`` habit wins for a language key, then the habit whose statements hold
    most of the evidence, then the smallest id."""
    common: set[str] | None = None
    for ref in refs:
        owners = lines.get(ref, set())
        common = set(owners) if common is None else common & owners
        if not common:
            return None
    if not common:
        return None

    def rank(hid: str) -> tuple[int, int, str]:
        stated = sum(1 for r in refs if r in statement_lines.get(hid, set()))
        language = int(key.startswith("language:") and habits[hid].get("type") == "user")
        return (-language, -stated, hid)

    return sorted(common, key=rank)[0]
