"""Incremental reading: per file, the consumed byte offset, line count, size, mtime, inode and
a fingerprint of the consumed prefix (seed 002 "Idempotency", seed 004 "byte-offset index").

* unchanged file (same size, mtime and inode): one ``stat``, no read;
* grown file whose consumed prefix still matches: read from the stored offset;
* rewritten or truncated file (fingerprint mismatch, smaller size): re-read from the start and
  say so; content-addressed turn ids keep a re-read from counting anything twice;
* only complete lines are consumed: a last line without a newline waits for the next run.

The fingerprint is SHA-256 over the consumed size and the first and last 16 KiB of the
consumed prefix, so checking a grown file reads at most 32 KiB of what was already read.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from habitus.errors import HabitusError
from habitus.model import ReadStats, Turn, file_id
from habitus.sources.base import HELD_HEAD, LineStream, Source, TranscriptFile

_WINDOW = HELD_HEAD  # 16 KiB


def fingerprint(file: TranscriptFile, offset: int, held: Callable[[int, int], bytes | None] | None = None) -> str:
    """SHA-256 hex of ``offset`` and the first and last 16 KiB before ``offset``.

    ``held(start, stop)`` may supply those bytes from memory (the reader's last blocks, see
    :meth:`LineStream.held`); the file is read when it gives ``None``. Compressed
    (``.zst``) files are fingerprinted by their compressed size only: they are archives,
    rewritten whole when they change. Raises ``OSError`` when unreadable."""
    digest = hashlib.sha256(str(offset).encode())
    if file.path.suffix == ".zst":
        return digest.hexdigest()
    if held is not None:
        head = held(0, min(_WINDOW, offset))
        tail_start = max(_WINDOW, offset - _WINDOW)
        tail = held(tail_start, offset) if offset > _WINDOW else b""
        if head is not None and tail is not None:
            digest.update(head)
            digest.update(tail)
            return digest.hexdigest()
    with open(file.path, "rb") as fh:
        digest.update(fh.read(min(_WINDOW, offset)))
        if offset > _WINDOW:
            tail_start = max(_WINDOW, offset - _WINDOW)
            fh.seek(tail_start)
            digest.update(fh.read(offset - tail_start))
    return digest.hexdigest()


@dataclass
class FilePlan:
    """How to read one file this run: ``status`` is ``new``, ``grown``, ``rewritten``,
    ``touched`` (metadata changed, content did not) or ``unchanged``; reading starts at byte
    ``offset`` after ``line`` lines."""

    file: TranscriptFile
    status: str
    offset: int
    line: int
    state: dict[str, Any] | None


def plan(file: TranscriptFile, state: Mapping[str, Any] | None) -> FilePlan:
    """Decide how to read ``file`` given its stored ``state`` (``None`` if never read)."""
    if state is None:
        return FilePlan(file, "new", 0, 0, None)
    state = dict(state)
    if state["size"] == file.size and state["mtime"] == file.mtime and state["inode"] == file.inode:
        return FilePlan(file, "unchanged", state["offset"], state["lines"], state)
    offset = int(state["offset"])
    if file.size < offset:
        return FilePlan(file, "rewritten", 0, 0, state)
    try:
        same = fingerprint(file, offset) == state["fingerprint"]
    except OSError:
        same = False
    if not same or file.path.suffix == ".zst":
        return FilePlan(file, "rewritten", 0, 0, state)
    if file.size == offset:
        return FilePlan(file, "touched", offset, state["lines"], state)
    return FilePlan(file, "grown", offset, state["lines"], state)


class IncrementalRead:
    """Reads the unread part of one file with ``source``; after iterating, ``stream.offset``
    and ``stream.line`` say where the next run starts. ``stats`` accumulates counts (bytes
    are bytes)."""

    def __init__(self, source: Source, file_plan: FilePlan, stats: ReadStats, *, context: bool = False) -> None:
        self.source = source
        self.plan = file_plan
        self.stats = stats
        self.context = context
        self.stream = LineStream(file_plan.file.path, stats, offset=file_plan.offset, line=file_plan.line)

    def turns(self) -> Iterator[Turn]:
        """Turns of the complete lines after the stored offset (nothing when unchanged)."""
        if self.plan.status in ("unchanged", "touched"):
            return iter(())
        self.stats.files += 1
        return self.source.read(self.stream, self.plan.file, self.stats, context=self.context)


@dataclass
class FileResult:
    """What reading one file produced: its human turns and (when asked) assistant turns,
    the counts, and the position after the last complete line."""

    plan: FilePlan
    human: list[Turn]
    assistant: list[Turn]
    stats: ReadStats
    offset: int
    line: int
    session_id: str | None
    redactions: Counter[str] = field(default_factory=Counter)
    redacted: bool = False
    #: Fingerprint of the consumed prefix, taken by the reader (``None``: take it later).
    consumed_fingerprint: str | None = None
    #: Rule-extractor candidates of the human turns, by turn id, when analysed by the reader.
    candidates: dict[str, list[Any]] | None = None
    #: The file could not be opened or read: nothing of it counts, its state is not saved,
    #: and the next run tries again.
    unreadable: bool = False

    def new_state(self, *, now: str) -> dict[str, Any] | None:
        """The ``files`` row after this read, or ``None`` when nothing changed (or the file
        could not be read)."""
        file = self.plan.file
        if self.plan.status == "unchanged" or self.unreadable:
            return None
        old = self.plan.state or {}
        offset = self.offset
        return {
            "id": file_id(file.agent, file.rel),
            "agent": file.agent,
            "path": file.rel,
            "session_id": self.session_id or old.get("session_id") or file.session_hint,
            "project": file.project,
            "size": max(file.size, offset),
            "mtime": file.mtime,
            "inode": file.inode,
            "offset": offset,
            "lines": self.line,
            "fingerprint": self.consumed_fingerprint or (fingerprint(file, offset) if offset else hashlib.sha256(b"0").hexdigest()),
            "first_read": old.get("first_read") or now,
            "last_read": now,
            "rereads": int(old.get("rereads") or 0) + (1 if self.plan.status == "rewritten" else 0),
        }


#: Turns per file whose language is detected: the user's language is a majority over
#: sessions, and detecting every turn of a long session adds cost, not information.
LANGUAGE_SAMPLES = 5


#: Per-process memories of work that depends only on a text (texts up to ``MEMO_CHARS``
#: characters, at most ``MEMO_ENTRIES`` each, emptied when full): the same words come back
#: in many turns ("continue", "commit this", a slash command, a prompt re-logged by a
#: resumed or forked session or by compaction), and each is redacted, sampled for its
#: language and analysed once per process. Reset when a reading worker starts.
MEMO_CHARS = 4_000
MEMO_ENTRIES = 20_000
_REDACTED: dict[tuple[str, bool], tuple[str, dict[str, int], str]] = {}
_LANGUAGES: dict[str, str | None] = {}
_ANALYSED: dict[tuple[str, str, str | None], list[Any]] = {}


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(memo) >= MEMO_ENTRIES:
        memo.clear()
    memo[key] = value
    return value


def redact_result(result: FileResult, *, emails: bool = False) -> None:
    """Redact every kept turn's text in place (the first thing done with text after reading,
    DESIGN.md step 3), count redactions by rule, take each human turn's prompt key, and
    detect the language of up to ``LANGUAGE_SAMPLES`` human turns. Short texts are
    redacted, keyed and sampled once per process (see ``MEMO_CHARS``)."""
    from habitus.extract.language import detect
    from habitus.redact import redact
    from habitus.sources.history import prompt_key

    detected = 0
    for turn in (*result.human, *result.assistant):
        text = turn.text
        done = _REDACTED.get((text, emails)) if len(text) <= MEMO_CHARS else None
        if done is None:
            cleaned = redact(text, pii=emails)
            done = (cleaned.text, dict(cleaned.counts), prompt_key(cleaned.text) if turn.is_human else "")
            if len(text) <= MEMO_CHARS:
                _remember(_REDACTED, (text, emails), done)
        turn.text, counts, key = done
        if turn.is_human:
            turn.text_key = key or prompt_key(turn.text)
        if counts:
            result.redactions.update(counts)
        if turn.is_human and detected < LANGUAGE_SAMPLES:
            sample = turn.text[:400]
            if sample in _LANGUAGES:
                turn.language = _LANGUAGES[sample]
            else:
                turn.language = _remember(_LANGUAGES, sample, detect(sample))
            detected += turn.language is not None
    result.redacted = True


def read_file(
    source: Source,
    file_plan: FilePlan,
    *,
    context: bool = False,
    redact_emails: bool | None = None,
    analyse: bool = False,
) -> FileResult:
    """Read the unread part of one file (nothing when unchanged) and keep what a run needs:
    human turns, and assistant turns when ``context``; with ``redact_emails`` not ``None``
    their text is redacted here (see :func:`redact_result`), and with ``analyse`` too, the
    rule extractor's per-turn analysis runs here as well (see :func:`analyse_result`). The
    fingerprint of what was consumed is taken while the file is at hand. Never raises for
    bad content; an unreadable file gives an empty result with
    ``bad_lines['unreadable_file']`` counted."""
    stats = ReadStats()
    human: list[Turn] = []
    assistant: list[Turn] = []
    session: str | None = None
    reader = IncrementalRead(source, file_plan, stats, context=context)
    unreadable = False
    try:
        for turn in reader.turns():
            session = session or turn.session_id
            if turn.role == "assistant":
                if context and turn.text:
                    assistant.append(turn)
            elif turn.is_human:
                human.append(turn)
    except OSError:
        # Unreadable now (permissions, a vanished file, an I/O error): keep nothing of it, so
        # the next run reads it from where the last good read ended.
        stats = ReadStats(files=1)
        stats.bad_lines["unreadable_file"] += 1
        human, assistant, session, unreadable = [], [], None, True
        reader.stream.offset, reader.stream.line = file_plan.offset, file_plan.line
    result = FileResult(file_plan, human, assistant, stats, reader.stream.offset, reader.stream.line, session, unreadable=unreadable)
    if file_plan.status not in ("unchanged", "touched") and result.offset and not unreadable:
        try:
            result.consumed_fingerprint = fingerprint(file_plan.file, result.offset, reader.stream.held)
        except OSError:
            result.consumed_fingerprint = None  # taken again when the state is saved
    if redact_emails is not None:
        redact_result(result, emails=redact_emails)
        if analyse:
            analyse_result(result)
    return result


def analyse_result(result: FileResult) -> None:
    """Run the rule extractor's per-turn analysis on the (redacted) human turns of
    ``result``, in the reading worker, so extraction uses both cores; the main process then
    only groups and merges. Candidates depend on the turn's text, kind and project, and name
    the turn as evidence: a short text seen before in this process reuses that analysis,
    with the evidence made this turn's (see ``MEMO_CHARS``)."""
    from dataclasses import replace

    from habitus.extract import TurnView
    from habitus.extract.rules import RuleExtractor
    from habitus.paths import project_key

    extractor = RuleExtractor()
    found: dict[str, list[Any]] = {}
    for turn in result.human:
        project = project_key(turn.cwd)
        key = (turn.text, turn.kind, project)
        cached = _ANALYSED.get(key)
        if cached is None:
            view = TurnView(turn.id, turn.session_id, "user", turn.kind, turn.text, turn.cwd, turn.timestamp, turn.agent, project)
            cached = extractor.analyse(view)
            if len(turn.text) > MEMO_CHARS:
                found[turn.id] = cached
                continue
            _remember(_ANALYSED, key, cached)
        # Copies: whoever uses the candidates may change them; the memory must not change.
        found[turn.id] = [replace(c, evidence=[turn.id], contradicts=list(c.contradicts)) for c in cached]
    result.candidates = found


def _read_batch(args: tuple[list[FilePlan], bool, bool | None, bool]) -> list[FileResult]:
    from habitus.sources import SOURCES

    plans, context, redact_emails, analyse = args
    return [read_file(SOURCES[p.file.agent], p, context=context, redact_emails=redact_emails, analyse=analyse) for p in plans]


#: Tasks per worker a parallel scan is split into: whole batches of files (about equal in
#: bytes), not a task per file, so the workers seldom wait for the main process to hand them
#: the next one (it is busy meanwhile, opening the store).
BATCHES_PER_WORKER = 6


def batches(plans: list[FilePlan], count: int) -> list[list[FilePlan]]:
    """``plans`` split into at most ``count`` batches of about equal unread bytes (largest
    first, each to the lightest batch so far), heaviest batch first; no batch is empty."""
    import heapq

    heap: list[tuple[int, int, list[FilePlan]]] = [(0, i, []) for i in range(max(1, count))]
    for p in sorted(plans, key=lambda p: p.file.size - p.offset, reverse=True):
        size, index, batch = heapq.heappop(heap)
        batch.append(p)
        heapq.heappush(heap, (size + max(0, p.file.size - p.offset), index, batch))
    return [batch for _, _, batch in sorted(heap, key=lambda e: (-e[0], e[1])) if batch]


#: A first scan reads in parallel (a process per core, up to 4) when it has at least this many
#: bytes to read: below it, starting the workers costs more than it saves.
PARALLEL_MIN_BYTES = 48 * 1024 * 1024


def read_files(
    plans: list[FilePlan],
    *,
    context: bool = False,
    redact_emails: bool | None = None,
    analyse: bool = False,
    workers: int | None = None,
) -> Reading:
    """Read every planned file, in a process pool when the unread bytes reach
    ``PARALLEL_MIN_BYTES`` and the machine has more than one core, else in this process.

    The pool starts reading before this returns, so the caller can do other work (open the
    store) meanwhile; results then come in completion order (the caller puts them back in
    plan order where order matters), and the workers also redact and, with ``analyse``, run the rule extractor's
    per-turn analysis. :meth:`Reading.close` (or an error while iterating) stops the
    workers. In this process nothing is analysed: the caller extracts from the turns it
    admits."""
    import os

    from habitus.sources import SOURCES

    todo = [p for p in plans if p.status not in ("unchanged", "touched")]
    pending_bytes = sum(max(0, p.file.size - p.offset) for p in todo)
    cores = workers if workers is not None else min(4, os.cpu_count() or 1)
    done = [FileResult(p, [], [], ReadStats(), p.offset, p.line, None) for p in plans if p.status in ("unchanged", "touched")]
    if cores < 2 or pending_bytes < PARALLEL_MIN_BYTES or len(todo) < 2:
        return Reading(_read_here(done, todo, SOURCES, context, redact_emails))
    return _read_in_pool(done, todo, cores, context, redact_emails, analyse)


class Reading(Iterator[FileResult]):
    """The results of :func:`read_files`, an iterator; :meth:`close` stops the workers
    whether or not iteration began (a generator that never started cannot do that)."""

    def __init__(self, results: Iterator[FileResult], pool: Any = None) -> None:
        self._results = results
        self._pool = pool

    def __next__(self) -> FileResult:
        return next(self._results)

    def close(self) -> None:
        """Stop reading: terminate the workers, if any are left."""
        close = getattr(self._results, "close", None)
        if close is not None:
            close()
        if self._pool is not None:
            _stop(self._pool)


def _read_here(done: list[FileResult], todo: list[FilePlan], sources: Mapping[str, Source], context: bool, redact_emails: bool | None) -> Iterator[FileResult]:
    yield from done
    for p in todo:
        yield read_file(sources[p.file.agent], p, context=context, redact_emails=redact_emails)


def _read_in_pool(done: list[FileResult], todo: list[FilePlan], cores: int, context: bool, redact_emails: bool | None, analyse: bool) -> Reading:
    import multiprocessing
    import signal
    from concurrent.futures import ProcessPoolExecutor, as_completed

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork" and redact_emails is not None:
        _warm_up(analyse)  # once here, inherited by every worker, instead of once per worker
    work = batches(todo, cores * BATCHES_PER_WORKER)
    pool = ProcessPoolExecutor(max_workers=cores, mp_context=multiprocessing.get_context(method), initializer=_worker_init)
    try:
        # Workers are forked while submitting: block SIGINT meanwhile so none of them can be
        # hit by Ctrl-C before its initializer ignores it; the main process gets it after.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            futures = [pool.submit(_read_batch, (batch, context, redact_emails, analyse)) for batch in work]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    except BaseException:
        _stop(pool)
        raise
    return Reading(_results(pool, done, futures, as_completed), pool)


def _warm_up(analyse: bool) -> None:
    """Load what every worker needs before forking them: the redaction rules and, with
    ``analyse``, the rule extractor's patterns (about 0.15 s in each worker otherwise)."""
    from habitus.redact import redact

    redact("warm up")
    if analyse:
        from habitus.extract import TurnView
        from habitus.extract.rules import RuleExtractor

        RuleExtractor().analyse(TurnView("", "", "user", "human", "Always run the tests before you commit."))


def _results(pool: Any, done: list[FileResult], futures: list[Any], as_completed: Any) -> Iterator[FileResult]:
    from concurrent.futures.process import BrokenProcessPool

    try:
        yield from done
        for future in as_completed(futures):
            try:
                results = future.result()
            except BrokenProcessPool as exc:
                raise HabitusError("a reading process stopped unexpectedly (killed?); nothing was stored, run distill again") from exc
            yield from results
    except BaseException:
        # Ctrl-C, an error, or the caller closing this iterator: the workers ignore SIGINT,
        # so stop them here instead of waiting for their queue, which can hang on an
        # interrupted pipe.
        _stop(pool)
        raise
    else:
        pool.shutdown(wait=True)


def _stop(pool: Any) -> None:
    """Terminate the pool's workers and let its manager thread end.

    A worker killed while sending a result leaves half a message in the result pipe, and
    the executor's manager thread then waits in ``recv`` for the rest forever, which hangs
    the interpreter's exit (it joins that thread). Once the workers are dead, closing this
    process's copy of the pipe's write end turns that wait into end-of-file: the manager
    sees a broken pool and ends."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)  # gone after shutdown
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5)
    pool.shutdown(wait=False, cancel_futures=True)
    if writer is not None and not any(p.is_alive() for p in processes):
        try:
            writer.close()
        except OSError:
            pass


def _worker_init() -> None:
    """Workers leave Ctrl-C to the main process, which stops them (see :func:`read_files`)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for memo in (_REDACTED, _LANGUAGES, _ANALYSED):
        memo.clear()
    _die_with_parent()


def _die_with_parent() -> None:
    """On Linux, have the kernel end this worker when the main process dies (killed, out of
    memory): else it would wait forever to hand over a result nobody reads."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
