"""``distill``: the main job, one direction through the pipeline of DESIGN.md:

discover → read → redact → extract → validate → believe → review → render

One run is one store transaction: an interrupted run leaves the store as it was, and
``--dry-run`` rolls everything back (and uses an in-memory store when none exists yet), so it
changes nothing on disk. A run that finds nothing new writes nothing at all.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.config import Config
from habitus.errors import HabitusError
from habitus.extract import EXTRACTORS, Candidate, TurnView
from habitus.model import ReadStats, Turn
from habitus.paths import agent_home, claude_home, home, project_key, user_dir
from habitus.quick import (
    HISTORY_NAMES,
    DistillOptions,
    Report,
    nothing_to_do,
    prepare,
    selection_for,
)
from habitus.render.block import Entry, build_block, current_block, entry_count, write_block
from habitus.render.stamp import render_stamp
from habitus.sources.base import TranscriptFile
from habitus.sources.discover import project_excluded
from habitus.sources.history import (
    HISTORY_PATH,
    prompt_key,
    read_claude_history,
    read_codex_history,
)
from habitus.sources.incremental import FilePlan, FileResult, file_id, fingerprint, plan, read_files
from habitus.store import now_iso

if TYPE_CHECKING:  # pragma: no cover
    from habitus.sources.incremental import Reading
    from habitus.store import Store

Progress = Callable[[str, dict[str, Any]], None]


def _display_path(path: Path) -> str:
    try:
        return "~/" + path.resolve().relative_to(home().resolve()).as_posix()
    except ValueError:
        return str(path)


def distill(
    options: DistillOptions | None = None,
    *,
    config: Config | None = None,
    progress: Progress | None = None,
    checked: bool = False,
) -> Report:
    """Run the whole pipeline once and return its :class:`Report`. ``checked`` says the
    caller already ran the no-op check (:func:`habitus.quick.quick_distill`) and found
    work, so discovery is not done twice.

    Reading starts before the store is opened (the file states come from a read-only peek
    at the store), so opening it (importing SQLAlchemy) overlaps with the reading workers.

    Raises :class:`habitus.errors.ConfigError` for a bad config, :class:`MarkerError` when
    ``CLAUDE.md`` or ``INDEX.md`` has broken markers (after the store is updated: nothing is
    lost, the block is simply not written), :class:`StoreError` and :class:`LLMError`.
    """
    started = time.monotonic()
    options = options or DistillOptions()
    config, report = prepare(options, config)
    notify = progress or (lambda _event, _data: None)
    if not checked and nothing_to_do(config, options, report):
        report.seconds = round(time.monotonic() - started, 3)
        return report
    locks: list[Any] = []
    collecting = gc.isenabled()

    def lock_store() -> None:
        """Take the distill lock (not for a dry run, which writes nothing), once."""
        if options.dry_run or locks:
            return
        from filelock import FileLock, Timeout

        lock = FileLock(str(user_dir(create=True) / "distill.lock"))
        try:
            lock.acquire(timeout=LOCK_WAIT_SECONDS)
        except Timeout as exc:
            raise HabitusError(f"another habitus distill is running (waited {LOCK_WAIT_SECONDS:g} s for it to finish); try again later") from exc
        locks.append(lock)

    try:
        extractor = EXTRACTORS[report.extractor](config=config, model=options.model or config.model, store=None)
        store: Store | None = None
        try:
            homes, plans, reading, store = _start_reading(config, options, report, extractor, notify, lock_store)
            try:
                # The lock is taken once the workers read (importing filelock and any wait
                # overlap with reading), before anything is written. A run that finished
                # between the peek at the file states and this lock makes this one re-read
                # what it consumed: the turns are known by id and stored once, and file
                # states are upserted (see Store.save_file_states).
                lock_store()
                if store is None:
                    store = _open_store(options)  # meanwhile, the workers read
                if getattr(extractor, "store", False) is None:
                    setattr(extractor, "store", store)  # noqa: B010 - the LLM extractor counts its calls in the store
                _run(store, config, options, extractor, report, notify, homes, plans, reading)
            finally:
                reading.close()
            if options.dry_run:
                store.rollback()
            else:
                store.commit()
        finally:
            if store is not None:
                with _no_interrupts():  # a second Ctrl-C must not break the rollback
                    store.close()
    finally:
        if collecting:
            gc.enable()  # paused while reading (see _run)
        for lock in locks:
            with _no_interrupts():
                lock.release()
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _open_store(options: DistillOptions) -> Store:
    from habitus.store import Store

    return Store.open(in_memory_if_missing=True) if options.dry_run else Store.open()


def _peek_states(ids: Sequence[str]) -> dict[str, dict[str, Any]] | None:
    """The stored states of files ``ids``, read with the standard library's ``sqlite3`` (no
    SQLAlchemy): ``{}`` when there is no store yet, ``None`` when the store must be opened
    (migrated) first or cannot be peeked at."""
    import sqlite3

    from habitus.store import default_db_path
    from habitus.store.readonly import Peek

    db = default_db_path()
    if not db.is_file():
        return {}
    peek = Peek.at_head(db)
    if peek is None:
        return None
    try:
        return peek.file_states(ids)
    except sqlite3.Error:
        return None
    finally:
        peek.close()


def _start_reading(
    config: Config,
    options: DistillOptions,
    report: Report,
    extractor: Any,
    notify: Progress,
    lock_store: Callable[[], None] = lambda: None,
) -> tuple[dict[str, Path], list[FilePlan], Reading, Store | None]:
    """Discover, plan and start reading: returns the agents' home folders, the plans, the
    running :class:`Reading` and the store when it had to be opened first (to migrate it,
    after ``lock_store()``); else ``None``, and the caller opens it while the workers read.
    The ``--sessions`` cap is applied here."""
    selection = selection_for(config, options, report.agents)
    report.skipped = dict(selection.skipped_counts)
    report.skipped_files = [{"agent": s.agent, "path": s.rel, "reason": s.reason} for s in selection.skipped]
    notify("scan", {"total": len(selection.files)})
    ids = [file_id(f.agent, f.rel) for f in selection.files]
    store = None
    states = _peek_states(ids)
    if states is None:
        lock_store()
        store = _open_store(options)
        states = store.file_states(ids)
    cap = options.sessions or config.max_sessions
    plans: list[FilePlan] = []
    for file, ident in zip(selection.files, ids, strict=True):  # newest first
        file_plan = plan(file, states.get(ident))
        if file_plan.status in ("new", "grown", "rewritten"):
            if cap <= 0:
                report.skipped["over_session_cap"] = report.skipped.get("over_session_cap", 0) + 1
                if options.verbose:
                    report.skipped_files.append({"agent": file.agent, "path": file.rel, "reason": "over_session_cap"})
                continue
            cap -= 1
        plans.append(file_plan)
    report.files_selected = len(plans)
    reading = read_files(
        plans,
        context=extractor.wants_context,
        redact_emails=config.redact_emails,
        analyse=getattr(extractor, "name", None) == "rules",
    )
    return selection.homes, plans, reading, store


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Ignore SIGINT while the store is closed and the lock released (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: How long a distill waits for another one to release the store's lock (seconds).
LOCK_WAIT_SECONDS = 10.0

#: Files whose human turns are admitted together while reading goes on.
ADMIT_EVERY = 50

#: Two copies of one prompt (a transcript and a prompt history, or a re-log) are one turn when
#: their normalised text matches and their timestamps are this close (seconds).
SAME_PROMPT_SECONDS = 600

#: Turns per session whose language is detected in one run.
LANGUAGE_SAMPLES = 5

#: Prompt histories read besides transcripts, by agent (FORMATS.md 1.10 and 2.1).
HISTORIES = {agent: (HISTORY_NAMES[agent], reader) for agent, reader in (("claude", read_claude_history), ("codex", read_codex_history))}


def _epoch(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _Admission:
    """Decides which human turns of a run are new: not seen before by id, not the same prompt
    (text and time) as a stored or earlier turn, not in an excluded project; redacts and
    builds their store rows and extractor views."""

    def __init__(self, store: Store, config: Config, run_id: str, stats: ReadStats) -> None:
        self.store = store
        self.config = config
        self.run_id = run_id
        self.stats = stats
        self.rows: list[dict[str, Any]] = []
        self.admitted = 0  # rows written by flush()
        self.views: list[TurnView] = []
        self.roles: dict[str, str] = {}
        self.redactions: Counter[str] = Counter()
        self.excluded = 0
        self._seen: set[str] = set()
        self._detected: dict[str, int] = {}
        #: (agent, prompt key) -> timestamps (epoch seconds) of its transcript turns [0] and
        #: prompt-history turns [1] seen so far.
        self._times: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        self._keys: dict[str, str] = {}
        self._looked_up: set[str] = set()  # prompt keys whose stored turns are in _times
        #: A store without turns when the run began (a first scan): every turn this run
        #: stores is also in _seen and _times, so the store is never asked about turns.
        self._fresh = not store.has_turns()

    def _same_prompt(self, turn: Turn, key: str) -> bool:
        """Whether ``turn`` is a prompt already held by the other kind of source: a history
        entry whose transcript turn is stored, or the reverse. Two turns of one kind are
        told apart by their ids (a user may type the same words twice)."""
        from_history = turn.path == HISTORY_PATH
        bucket = self._times.get((turn.agent, key))
        if bucket is None:
            bucket = self._times[(turn.agent, key)] = ([], [])
            for row in () if self._fresh else self.store.turns_with_key(turn.agent, key):
                self._remember(bucket, row["path"] == HISTORY_PATH, _epoch(row["timestamp"]))
        when = _epoch(turn.timestamp)
        hit = when is not None and any(abs(other - when) <= SAME_PROMPT_SECONDS for other in bucket[not from_history])
        self._remember(bucket, from_history, when)
        return hit

    @staticmethod
    def _remember(bucket: tuple[list[float], list[float]], from_history: bool, when: float | None) -> None:
        if when is not None:
            bucket[from_history].append(when)

    def _key(self, turn: Turn) -> str:
        if turn.text_key is not None:
            return turn.text_key  # taken by the reader, from the redacted text
        key = self._keys.get(turn.id)
        if key is None:
            key = self._keys[turn.id] = prompt_key(turn.text)
        return key

    def _language(self, session: str, text: str) -> str | None:
        from habitus.extract.language import detect

        """The language of a turn, detected for at most ``LANGUAGE_SAMPLES`` turns per
        session per run (the user's language is a majority over sessions; detecting every
        turn of a long session adds cost, not information)."""
        done = self._detected.get(session, 0)
        if done >= LANGUAGE_SAMPLES:
            return None
        found = detect(text[:400])
        if found is not None:
            self._detected[session] = done + 1
        return found

    def flush(self) -> None:
        """Add the rows admitted so far to the store (this run's transaction) and let them
        go, so a run holds no more than a chunk of turns' rows at once."""
        if self.rows:
            self.store.add_turns(self.rows)
            self.admitted += len(self.rows)
            self.rows = []
        self._keys.clear()

    def prune(self, analysed: dict[str, list[Candidate]]) -> None:
        """Forget the views (and roles) of human turns whose analysis, done by the reading
        workers, found no candidate, and those empty analyses: the extractor only collects
        candidates from them. Call only when every analysed turn has been admitted."""
        kept = []
        for view in self.views:
            if view.role == "user" and analysed.get(view.id) == []:
                self.roles.pop(view.id, None)
            else:
                kept.append(view)
        self.views = kept
        for ident in [k for k, found in analysed.items() if not found]:
            del analysed[ident]

    def context(self, turn: Turn) -> None:
        """Keep an assistant turn (already redacted by the reader) as context for extractors
        that want it."""
        if turn.text:
            self.views.append(_view(turn, turn.text, None))
            self.roles[turn.id] = "assistant"

    def admit_all(self, batches: Sequence[tuple[Sequence[Turn], str]], *, redacted: bool = False) -> None:
        """:meth:`admit` for many files' human turns, ids looked up in one query. May be
        called several times (files as they are read): the store is not written meanwhile,
        so the result is that of one call with every file in the same order."""
        ids = {t.id for turns, _ in batches for t in turns}
        known = self.store.known_turns(ids) if ids and not self._fresh else set()
        keys = {self._key(t) for turns, _ in batches for t in turns} - self._looked_up
        self._looked_up |= keys
        for key in keys:
            for agent in ("claude", "codex", "droid"):
                self._times.setdefault((agent, key), ([], []))
        for row in () if self._fresh else self.store.turns_with_keys(keys):
            bucket = self._times.setdefault((row["agent"], row["text_key"]), ([], []))
            self._remember(bucket, row["path"] == HISTORY_PATH, _epoch(row["timestamp"]))
        for turns, file_key in batches:
            self.admit(turns, file_key, known=known, redacted=redacted)

    def admit(self, turns: Sequence[Turn], file_key: str, *, known: set[str] | None = None, redacted: bool = False) -> None:
        """Store-ready rows for the new human turns among ``turns`` (one file's worth);
        ``redacted`` says their text was already redacted (and languages detected) by the
        reader, else it is done here."""
        from habitus.redact import redact

        if known is None:
            fresh = [t for t in turns if t.id not in self._seen]
            known = self.store.known_turns(t.id for t in fresh) if fresh and not self._fresh else set()
        for turn in turns:
            if turn.id in known or turn.id in self._seen:
                self.stats.duplicates += 1
                continue
            self._seen.add(turn.id)
            if self.config.exclude_projects and project_excluded(self.config.exclude_projects, cwd=turn.cwd):
                self.excluded += 1
                continue
            if not redacted:
                cleaned = redact(turn.text, pii=self.config.redact_emails)
                turn.text = cleaned.text
            key = self._key(turn) if redacted else prompt_key(turn.text)  # of the redacted text
            if self._same_prompt(turn, key):
                self.stats.duplicates += 1
                continue
            if not redacted:
                self.redactions.update(cleaned.counts)
                turn.language = self._language(turn.session_id, turn.text)
            project = project_key(turn.cwd)
            session = turn.session_id or f"history:{project or ''}:{(turn.timestamp or '')[:10]}"
            self.rows.append(
                {
                    "id": turn.id,
                    "agent": turn.agent,
                    "session_id": session,
                    "file_id": file_key,
                    "path": turn.path,
                    "line": turn.line,
                    "byte_start": turn.start,
                    "byte_end": turn.end,
                    "uuid": turn.uuid,
                    "timestamp": turn.timestamp,
                    "cwd": turn.cwd,
                    "project": project,
                    "kind": turn.kind,
                    "text": turn.text,
                    "text_key": key,
                    "language": turn.language,
                    "run_id": self.run_id,
                }
            )
            view = _view(turn, turn.text, project)
            view.session_id = session
            self.views.append(view)
            self.roles[turn.id] = "human"


def _run(
    store: Store,
    config: Config,
    options: DistillOptions,
    extractor: Any,
    report: Report,
    notify: Progress,
    homes: dict[str, Path],
    plans: list[FilePlan],
    reading: Reading,
) -> None:
    from habitus.beliefs import BeliefMerger
    from habitus.extract.language import language_candidate_from_counts
    from habitus.extract.validate import validate

    days = options.days or config.window_days
    stats = ReadStats()
    read_counts: Counter[str] = Counter()
    now = now_iso()
    admission = _Admission(store, config, now, stats)
    changed = False
    states = {p.state["id"]: p.state for p in plans if p.state is not None}
    new_states: list[dict[str, Any]] = []
    analysed: dict[str, list[Candidate]] = {}
    position = {(p.file.agent, p.file.rel): i for i, p in enumerate(plans)}
    arrived: list[tuple[int, FileResult]] = []
    # Reading and admission make tens of thousands of objects and no reference cycles: the
    # cyclic garbage collector would scan them again and again (a quarter of a long first
    # scan's CPU), so it waits until admission is done (distill() turns it back on on error).
    collecting = gc.isenabled()
    gc.disable()
    for index, result in enumerate(reading):
        file = result.plan.file
        if result.unreadable:  # skipped with its reason; its state stays as it was
            report.skipped["unreadable"] = report.skipped.get("unreadable", 0) + 1
            report.skipped_files.append({"agent": file.agent, "path": file.rel, "reason": "unreadable"})
        else:
            read_counts[result.plan.status] += 1
        stats.add(result.stats)
        admission.redactions.update(result.redactions)
        state = result.new_state(now=now)
        if state is not None and state != result.plan.state:
            new_states.append(state)
        arrived.append((position[(file.agent, file.rel)], result))
        notify("file", {"index": index + 1, "total": len(plans), "path": file.rel, "status": result.plan.status})
    # Admitted in plan order (newest first), as when one process reads: which copy of a
    # turn logged in several files is kept, and the order extraction sees, must not depend
    # on which reading worker finished first.
    arrived.sort(key=lambda item: item[0])
    human: list[tuple[list[Turn], str]] = []
    for _, result in arrived:
        file = result.plan.file
        if result.plan.status == "rewritten":
            report.rewritten.append(f"{file.agent}:{file.rel}")
        for turn in result.assistant:
            admission.context(turn)
        human.append((result.human, file_id(file.agent, file.rel)))
        if result.candidates is not None:
            for ident, found in result.candidates.items():
                analysed.setdefault(ident, found)  # the copy admission keeps: the first
        if len(human) >= ADMIT_EVERY:
            admission.admit_all(human, redacted=True)
            human = []
            admission.flush()
            admission.prune(analysed)
    del arrived
    if collecting:
        gc.enable()
    admission.admit_all(human, redacted=True)
    admission.prune(analysed)
    store.save_file_states(new_states, states)
    changed = bool(new_states)

    changed = _read_histories(store, homes, days, admission, stats, read_counts, now) or changed
    report.files_read = dict(read_counts)
    report.bytes_read = stats.bytes_read
    report.lines_read = stats.lines
    report.bad_lines = dict(stats.bad_lines)
    report.dropped = dict(stats.dropped)
    report.human_turns = stats.human_turns
    report.duplicate_turns = stats.duplicates
    admission.flush()
    report.new_human_turns = admission.admitted
    report.excluded_turns = admission.excluded
    report.redactions = dict(admission.redactions)
    changed = changed or bool(admission.admitted)

    # extract → validate → believe
    notify("extract", {"turns": admission.admitted})
    deferred_key = f"deferred_turns:{getattr(extractor, 'name', 'rules')}"
    waiting = json.loads(store.get_state(deferred_key) or "[]")
    if waiting:  # turns an earlier run could not send (LLM daily cap, failed call)
        for row in store.turns_by_ids(waiting).values():
            view = TurnView(row["id"], row["session_id"], "user", row["kind"], row["text"], row["cwd"], row["timestamp"], row["agent"], row["project"])
            admission.views.insert(0, view)
            admission.roles[row["id"]] = "human"
    if analysed:
        result = extractor.extract(admission.views, dry_run=options.dry_run, analysed=analysed)
    else:
        result = extractor.extract(admission.views, dry_run=options.dry_run)
    if waiting or result.deferred:
        store.set_state(deferred_key, json.dumps(sorted(set(result.deferred))))
        changed = True
    report.llm_calls, report.llm_input_chars = result.calls, result.input_chars
    report.warnings.extend(result.notes)
    candidates: list[Candidate] = list(result.candidates)
    rejected = Counter(result.rejected)
    roles = admission.roles
    if admission.admitted:
        lang = language_candidate_from_counts(store.language_counts(), store.turns_in_language, min_sessions=config.min_occurrences)
        if lang is not None:
            candidates.append(lang)
            for tid in lang.evidence:
                roles.setdefault(tid, "human")
    accepted, invalid = validate(candidates, roles)
    rejected.update(invalid)
    report.candidates_found = len(candidates)
    report.candidates_rejected = dict(rejected)
    evidence_ids = {tid for c in accepted for tid in c.evidence}
    turn_rows = store.turns_by_ids(evidence_ids)
    merger = BeliefMerger(store, min_occurrences=config.min_occurrences, auto_approve=config.auto_approve)
    merged = merger.merge(accepted, turn_rows)
    report.beliefs_new = len(merged.new)
    report.beliefs_updated = len(merged.updated)
    report.beliefs_qualified = len(merged.qualified)
    report.beliefs_approved = len(merged.approved)
    report.beliefs_superseded = len(merged.superseded)
    report.conflicts = merged.conflicts
    changed = changed or bool(merged.new or merged.updated or merged.qualified)

    # render
    notify("render", {})
    render(store, config, report, dry_run=options.dry_run)
    if changed and not options.dry_run:
        store.add_event("run", actor="distill", detail={k: v for k, v in report.as_dict().items() if k != "skipped_files"})


def _read_histories(
    store: Store,
    homes: dict[str, Path],
    days: int,
    admission: _Admission,
    stats: ReadStats,
    read_counts: Counter[str],
    now: str,
) -> bool:
    """Read the unread part of each agent's prompt history; its prompts inside the window
    become human turns unless a transcript already holds the same prompt. Returns whether
    any read state changed."""
    changed = False
    oldest = time.time() - days * 86400
    for agent, agent_dir in homes.items():
        if agent not in HISTORIES:
            continue
        name, reader_fn = HISTORIES[agent]
        path = agent_dir / name
        try:
            st = path.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read
            continue
        rel = f"{name}"
        file = TranscriptFile(agent, path, rel, st.st_size, st.st_mtime, st.st_ino, None, None)
        key = file_id(agent, f"history:{rel}")
        file_plan = plan(file, store.file_state(key))
        if file_plan.status in ("unchanged", "touched"):
            if file_plan.status == "touched":
                state = dict(file_plan.state or {})
                state.update(mtime=st.st_mtime, inode=st.st_ino, last_read=now)
                store.save_file_state(state)
                changed = True
            continue
        local = ReadStats()
        offset, line = file_plan.offset, file_plan.line
        turns = [
            t
            for t in reader_fn(path, local, offset=offset, line=line)
            if t.is_human and (_epoch(t.timestamp) or 0) >= oldest
        ]
        read_counts["history"] += 1
        stats.add(local)
        admission.admit(turns, key)
        new_offset, new_line = offset + local.bytes_read, line + local.lines
        state = {
            "id": key,
            "agent": agent,
            "path": f"history:{rel}",
            "session_id": None,
            "project": None,
            "size": max(st.st_size, new_offset),
            "mtime": st.st_mtime,
            "inode": st.st_ino,
            "offset": new_offset,
            "lines": new_line,
            "fingerprint": fingerprint(file, new_offset),
            "first_read": (file_plan.state or {}).get("first_read") or now,
            "last_read": now,
            "rereads": int((file_plan.state or {}).get("rereads") or 0) + (file_plan.status == "rewritten"),
        }
        store.save_file_state(state)
        changed = True
    return changed


def _view(turn: Turn, text: str, project: str | None) -> TurnView:
    return TurnView(
        id=turn.id,
        session_id=turn.session_id,
        role="user" if turn.is_human else turn.role,
        kind=turn.kind,
        text=text,
        cwd=turn.cwd,
        timestamp=turn.timestamp,
        agent=turn.agent,
        project=project,
    )


def block_entries(store: Store, withheld: list[str] | None = None) -> list[Entry]:
    """Approved global beliefs as block entries, most important first: the user's language,
    then by confidence and distinct sessions. A belief whose text still matches a secret rule
    is withheld (fail-closed; its id goes to ``withheld``), never repaired."""
    from habitus.redact import find_secrets

    rows = []
    for belief in store.beliefs(["approved"]):
        if belief["scope"] != "global":
            continue
        if find_secrets(belief["text"]) or "<!-- BEGIN habitus" in belief["text"] or "<!-- END habitus" in belief["text"]:
            if withheld is not None:
                withheld.append(belief["id"])
            continue
        rows.append(belief)
    rows.sort(key=lambda b: (b["type"] != "user", -b["confidence"], -b["sessions"], b["created_at"], b["id"]))
    return [Entry(b["id"], b["text"], b["slug"]) for b in rows]


def render(store: Store, config: Config, report: Report, *, dry_run: bool) -> None:
    """Render the ledger and the ``CLAUDE.md`` block; with ``dry_run`` only measure what the
    block would become. Fills ``report.block`` and ``report.ledger``, and keeps the render
    stamp (see :mod:`habitus.render.stamp`) so an unchanged re-run can skip all of this."""
    _render(store, config, report, dry_run=dry_run)
    if not dry_run and not report.block.get("refused"):
        store.set_state("render_stamp", render_stamp(config, store.beliefs_stamp()))


def _render(store: Store, config: Config, report: Report, *, dry_run: bool) -> None:
    ledger_dir = config.ledger_dir()
    backups = user_dir() / "backups"
    language = config.language if config.language != "auto" else "en"
    withheld: list[str] = []
    entries = block_entries(store, withheld)
    if withheld:
        report.warnings.append(f"{len(withheld)} approved belief(s) still match a secret rule (or hold habitus's markers) and were left out of the block")
    built = build_block(
        entries,
        ledger_display=_display_path(ledger_dir),
        max_block_chars=config.max_block_chars,
        max_entry_chars=config.max_entry_chars,
        language=language,
    )
    target = claude_home() / "CLAUDE.md"
    before_data = target.read_bytes() if target.exists() else b""
    try:
        before = current_block(before_data, name=str(target))
    except HabitusError as exc:
        before = None
        report.warnings.append(str(exc))
        report.block = {"path": str(target), "written": False, "refused": True}
    report.block.setdefault("path", str(target))
    report.block.update(
        before=len(before) if before else 0,
        after=built.chars,
        limit=config.max_block_chars,
        entries=len(built.included),
        omitted=len(built.omitted),
        shortened=len(built.shortened),
    )
    if built.omitted:
        report.warnings.append(
            f"{len(built.omitted)} approved belief(s) did not fit in max_block_chars={config.max_block_chars}; "
            "they stay in the ledger"
        )
    if dry_run:
        report.block["written"] = False
        report.block["reason"] = "dry run"
        if not entries and before is None:
            report.block["after"] = 0  # nothing would be written
        return
    beliefs = store.beliefs()
    from habitus.render.ledger import render_ledger

    ledger = render_ledger(ledger_dir, beliefs, store.evidence_for(b["id"] for b in beliefs), backup_dir=backups)
    report.ledger = {"path": str(ledger_dir), "written": len(ledger.written), "unchanged": ledger.unchanged, "archived": len(ledger.archived)}
    if report.block.get("refused"):
        return
    if not config.write_global_claude_md:
        report.block.update(written=False, after=report.block["before"], reason="write_global_claude_md = false")
        if before is not None:
            report.warnings.append(f"{target} still holds a habitus block, no longer updated (write_global_claude_md = false); remove it by hand if you want it gone")
        return
    if not entries and before is None:
        report.block.update(written=False, after=0, reason="no approved beliefs yet")
        return
    if not entries and entry_count(before) and not store.status_counts():
        # A new or lost store must not wipe what an earlier store approved.
        report.block.update(written=False, after=report.block["before"], reason="the store has no beliefs; the existing block is left as it is")
        report.warnings.append(f"{target} holds a habitus block but this store has no beliefs (new or lost HABITUS_HOME?); the block was left as it is")
        return
    from habitus.redact import find_secrets

    leaked = find_secrets(built.text)
    if leaked:  # the second, fail-closed check on what is about to be written
        report.block.update(written=False, reason="refused: the block matches secret rule(s) " + ", ".join(sorted(set(leaked))))
        report.warnings.append(str(report.block["reason"]))
        return
    outcome = write_block(target, built.text, backup_dir=backups)
    report.block.update(written=outcome.written, backup=str(outcome.backup) if outcome.backup else None)
    if outcome.written:
        store.add_event("render", actor="distill", detail={"path": str(target), "chars": built.chars})


def environment_summary() -> dict[str, str]:
    """Where habitus looks and writes, for ``habitus status``."""
    return {
        "habitus_home": str(user_dir()),
        "claude": str(agent_home("claude")),
        "codex": str(agent_home("codex")),
        "droid": str(agent_home("droid")),
        "config": os.environ.get("HABITUS_CONFIG", ""),
    }
