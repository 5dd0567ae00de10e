"""Benchmark: how fast habitus reads a heavy user's transcript folders (not a test).

Builds a synthetic corpus by cloning the real samples in ../shared/transcripts (Claude Code
sessions and Codex rollouts, each clone with fresh session ids and uuids), including one big
single session file, then times in one run:

  (a) baseline: ``orjson.loads`` of every line of every file (what any parser must at least do)
  (r) discovery and the readers alone, in the first scan's process pool (the pre-filter's
      own speed: no redaction, extraction or store)
  (b) ``habitus distill --dry-run`` first scan (nothing written)
  (b') ``habitus distill`` first scan (state written, so (c) and (d) can be incremental)
  (c) the same ``distill`` re-run over unchanged files
  (d) ``distill`` after appending to 1 % of the files
  (v) ``habitus --version`` (process start-up, subtracted from (c)); (c) and (v) are the
      medians of 11 alternating runs

(a), (r), (b) and (b') run in 5 rounds back to back; their times are medians and their
ratios the medians of each round's own ratio to (a). habitus's bytecode is compiled first,
as an installed copy's is.

It prints MB/s, each time as a ratio to (a) measured in the same run, and each command's peak
RSS (from ``wait4``, the largest over the rounds). ``--mb 100,500`` runs two corpus sizes to show memory does not grow with
the corpus. ``--markdown`` prints a table for BENCHMARKS.md.

    .venv/bin/python bench/scan.py --mb 500
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "transcripts"
#: Runs of (c) and (v) whose medians are reported.
REPEATS = 11

#: Rounds of the first-scan rows (a), (r), (b), (b'): medians of per-round ratios are shown.
FIRST_ROUNDS = 5
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _samples() -> tuple[list[Path], list[Path]]:
    claude = [p for p in (SHARED / "claude").rglob("*.jsonl") if "subagents" not in p.parts and not p.name.startswith("cc-v2.0.37")]
    codex = sorted((SHARED / "codex").glob("rollout-*.jsonl"))
    return sorted(claude), codex


def _clone(data: bytes, salt: str) -> bytes:
    """Replace every uuid in ``data`` with a fresh, deterministic one for this clone."""

    def fresh(match: re.Match[bytes]) -> bytes:
        digest = hashlib.sha1(match.group(0) + salt.encode()).hexdigest()
        return str(uuid.UUID(digest[:32])).encode()

    return _UUID.sub(fresh, data)


def build_corpus(root: Path, megabytes: int) -> tuple[Path, int, int]:
    """Write about ``megabytes`` MB of transcripts under ``root/home``; returns (home, files, bytes)."""
    home = root / "home"
    if home.exists():
        shutil.rmtree(home)
    claude, codex = _samples()
    blobs = [(p, p.read_bytes()) for p in claude + codex]
    target = megabytes * 1_000_000
    written = files = 0
    hour_ago = time.time() - 3600
    big_target = target // 5  # one big single session file: a fifth of the corpus
    big_path = home / ".claude" / "projects" / "-home-dev-big" / f"{uuid.uuid4()}.jsonl"
    big_path.parent.mkdir(parents=True, exist_ok=True)
    with open(big_path, "wb") as big:
        i = 0
        while written < big_target:
            path, data = blobs[i % len(claude)]
            chunk = _clone(data, f"big{i}")
            if not chunk.endswith(b"\n"):
                chunk += b"\n"
            big.write(chunk)
            written += len(chunk)
            i += 1
    files += 1
    i = 0
    while written < target:
        path, data = blobs[i % len(blobs)]
        salt = f"c{i}"
        chunk = _clone(data, salt)
        if not chunk.endswith(b"\n"):
            chunk += b"\n"
        if path in codex:
            day = 1 + i % 28
            sid = uuid.UUID(hashlib.sha1(salt.encode()).hexdigest()[:32])
            dest = home / ".codex" / "sessions" / "2026" / "11" / f"{day:02d}" / f"rollout-2026-11-{day:02d}T10-00-00-{sid}.jsonl"
        else:
            sid = uuid.UUID(hashlib.sha1(salt.encode()).hexdigest()[:32])
            dest = home / ".claude" / "projects" / f"-home-dev-p{i % 50}" / f"{sid}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(chunk)
        written += len(chunk)
        files += 1
        i += 1
    for p in home.rglob("*.jsonl"):
        os.utime(p, (hour_ago, hour_ago))
    return home, files, written


def baseline(home: Path) -> float:
    """Seconds to ``orjson.loads`` every line of every file (bad lines ignored)."""
    start = time.perf_counter()
    for path in home.rglob("*.jsonl"):
        with open(path, "rb", buffering=1 << 20) as fh:
            for line in fh:
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass
    return time.perf_counter() - start


#: (r): discovery and the readers with their byte pre-filter, in the same process pool as a
#: first scan, and nothing else (no redaction, extraction or store).
READ_ONLY = """
from habitus.quick import DistillOptions, prepare, selection_for
from habitus.sources.incremental import plan, read_files
options = DistillOptions(days=100000, sessions=10**7)
config, report = prepare(options)
selection = selection_for(config, options, report.agents)
print(sum(len(r.human) for r in read_files([plan(f, None) for f in selection.files])))
"""


#: With ``--steps``: the readers plus what the workers add (redaction, the rule analysis),
#: then the same with the store opened in the main process meanwhile, as a first scan does.
READ_ANALYSE = """
from habitus.quick import DistillOptions, prepare, selection_for
from habitus.sources.incremental import plan, read_files
options = DistillOptions(days=100000, sessions=10**7)
config, report = prepare(options)
selection = selection_for(config, options, report.agents)
reading = read_files([plan(f, None) for f in selection.files], redact_emails=False, analyse=True)
if STORE:
    from habitus.store import Store
    store = Store.open(in_memory_if_missing=True)
print(sum(len(r.human) for r in reading))
"""


def run(args: list[str], env: dict[str, str], *, code: str | None = None) -> tuple[float, int, str]:
    """Run a habitus command (or Python ``code``); return (seconds, peak RSS in KiB, stdout)."""
    start = time.perf_counter()
    command = [sys.executable, "-c", code] if code is not None else [sys.executable, "-m", "habitus", *args]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"habitus {' '.join(args)} failed ({proc.returncode}):\n{err.decode()}")
    return elapsed, usage.ru_maxrss, out.decode()


def append_one_percent(home: Path) -> int:
    """Append one copy of a real user line to 1 % of the files; returns bytes appended."""
    files = sorted(home.rglob("*.jsonl"))
    step = max(1, len(files) // max(1, len(files) // 100))
    added = 0
    hour_ago = time.time() - 3600
    for path in files[::step]:
        line = orjson.dumps({"type": "user", "uuid": str(uuid.uuid4()), "sessionId": path.stem[-36:], "timestamp": "2026-11-28T10:00:00.000Z", "cwd": "/home/dev/p", "message": {"role": "user", "content": "From now on, always run the linter before committing."}}) + b"\n"
        if "codex" in path.parts[-6:][0] or ".codex" in path.parts:
            line = orjson.dumps({"timestamp": "2026-11-28T10:00:00.000Z", "type": "event_msg", "payload": {"type": "user_message", "message": "From now on, always run the linter before committing.", "images": []}}) + b"\n"
        with open(path, "ab") as fh:
            fh.write(line)
        os.utime(path, (hour_ago, hour_ago))
        added += len(line)
    return added


def measure(megabytes: int, workdir: Path, *, steps: bool = False) -> dict[str, Any]:
    root = workdir / f"corpus-{megabytes}mb"
    root.mkdir(parents=True, exist_ok=True)
    home, files, size = build_corpus(root, megabytes)
    env = dict(os.environ)
    state = root / "habitus"
    if state.exists():
        shutil.rmtree(state)
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), CODEX_HOME=str(home / ".codex"), FACTORY_HOME=str(home / ".factory"), HABITUS_HOME=str(state), HABITUS_CONFIG=str(root / "none.toml"))
    common = ["--days", "100000", "--sessions", "10000000", "--json"]
    # The first-scan rows take a second or two each: they run in FIRST_ROUNDS rounds of
    # (a), (r), (b), (b') back to back, and each ratio is the median of the rounds' own
    # ratios, so a slow spell of the VM weighs on both sides of a ratio or on none.
    rounds: dict[str, list[float]] = {"a": [], "r": [], "r+a": [], "r+a+s": [], "b": [], "b'": []}
    read_rss = dry_rss = first_rss = 0
    for _ in range(FIRST_ROUNDS):
        rounds["a"].append(baseline(home))
        seconds, rss, _ = run([], env, code=READ_ONLY)
        rounds["r"].append(seconds)
        read_rss = max(read_rss, rss)
        if steps:
            rounds["r+a"].append(run([], env, code="STORE = False\n" + READ_ANALYSE)[0])
            rounds["r+a+s"].append(run([], env, code="STORE = True\n" + READ_ANALYSE)[0])
        shutil.rmtree(state, ignore_errors=True)
        seconds, rss, _ = run(["distill", "--dry-run", *common], env)
        rounds["b"].append(seconds)
        dry_rss = max(dry_rss, rss)
        shutil.rmtree(state, ignore_errors=True)
        seconds, rss, out = run(["distill", *common], env)
        rounds["b'"].append(seconds)
        first_rss = max(first_rss, rss)
    report = orjson.loads(out)  # the last first scan's state stays for (c) and (d)
    base = statistics.median(rounds["a"])
    read_only, dry, first = (statistics.median(rounds[k]) for k in ("r", "b", "b'"))
    ratio = {k: statistics.median(x / a for x, a in zip(rounds[k], rounds["a"], strict=True)) for k in rounds if rounds[k]}
    # (c) and (v) take a tenth of a second: alternate them REPEATS times and keep medians,
    # so one hiccup of the VM does not decide the figure.
    versions, agains = [], []
    for _ in range(REPEATS):
        version, version_rss, _ = run(["--version"], env)
        again, again_rss, out2 = run(["distill", *common], env)
        assert orjson.loads(out2)["bytes_read"] == 0, "re-run read bytes"
        versions.append(version)
        agains.append(again)
    version, again = statistics.median(versions), statistics.median(agains)
    added = append_one_percent(home)
    grown, grown_rss, out3 = run(["distill", *common], env)
    appended_read = orjson.loads(out3)["bytes_read"]
    mb = size / 1e6
    return {
        "mb": mb,
        "files": files,
        "baseline_s": base,
        "baseline_range_s": (min(rounds["a"]), max(rounds["a"])),
        "read_ratio": ratio["r"],
        "dry_ratio": ratio["b"],
        "first_ratio": ratio["b'"],
        "first_ratios": tuple(x / a for x, a in zip(rounds["b'"], rounds["a"], strict=True)),
        "steps": {k: (statistics.median(rounds[k]), ratio[k]) for k in ("r+a", "r+a+s") if rounds[k]},
        "read_s": read_only,
        "read_rss_mb": read_rss / 1024,
        "version_s": version,
        "dry_s": dry,
        "first_s": first,
        "rerun_s": again,
        "append_s": grown,
        "appended_bytes": added,
        "append_bytes_read": appended_read,
        "human_turns": report["human_turns"],
        "dry_rss_mb": dry_rss / 1024,
        "first_rss_mb": first_rss / 1024,
        "rerun_rss_mb": again_rss / 1024,
        "append_rss_mb": grown_rss / 1024,
        "version_rss_mb": version_rss / 1024,
    }


def show(r: dict[str, Any], markdown: bool) -> None:
    base = r["baseline_s"]
    rows = [
        ("(a) baseline: orjson.loads every line", base, r["mb"] / base, 1.0, None),
        ("(r) readers only (pre-filter, pool; no redaction, extraction, store)", r["read_s"], r["mb"] / r["read_s"], r["read_ratio"], r["read_rss_mb"]),
        *(
            (f"({key}) {label}", secs, r["mb"] / secs, ratio, None)
            for key, label in (("r+a", "readers + redaction and rule analysis in the workers"), ("r+a+s", "the same + opening the store meanwhile"))
            if key in r["steps"]
            for secs, ratio in [r["steps"][key]]
        ),
        ("(b) distill --dry-run, first scan", r["dry_s"], r["mb"] / r["dry_s"], r["dry_ratio"], r["dry_rss_mb"]),
        ("(b') distill, first scan (writes state)", r["first_s"], r["mb"] / r["first_s"], r["first_ratio"], r["first_rss_mb"]),
        ("(c) re-run, unchanged", r["rerun_s"], None, r["rerun_s"] / base, r["rerun_rss_mb"]),
        ("(c - v) re-run minus start-up", r["rerun_s"] - r["version_s"], None, (r["rerun_s"] - r["version_s"]) / base, None),
        ("(d) after appending to 1 % of files", r["append_s"], None, r["append_s"] / base, r["append_rss_mb"]),
        ("(v) habitus --version", r["version_s"], None, r["version_s"] / base, r["version_rss_mb"]),
    ]
    print(f"\ncorpus: {r['mb']:.0f} MB in {int(r['files'])} files, {int(r['human_turns'])} human turns; appended {int(r['appended_bytes'])} bytes, re-read {int(r['append_bytes_read'])}")
    low, high = r["baseline_range_s"]
    print(f"(a) took {low:.2f}-{high:.2f} s over {FIRST_ROUNDS} rounds; (b') / (a) per round: {', '.join(f'{x:.3f}' for x in r['first_ratios'])}")
    if markdown:
        print("\n| step | seconds | MB/s | ratio to (a) | peak RSS MB |\n|---|---|---|---|---|")
        for name, secs, rate, ratio, rss in rows:
            print(f"| {name} | {secs:.2f} | {'' if rate is None else f'{rate:.0f}'} | {ratio:.3f} | {'' if rss is None else f'{rss:.0f}'} |")
    else:
        for name, secs, rate, ratio, rss in rows:
            print(f"{name[:44]:<44} {secs:8.2f} s  {'' if rate is None else f'{rate:7.0f} MB/s':>12}  ratio {ratio:6.3f}  {'' if rss is None else f'RSS {rss:5.0f} MB'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", default="500", help="corpus size(s) in MB, comma-separated (default 500)")
    parser.add_argument("--workdir", type=Path, default=REPO / "bench" / "out", help="where corpora are written")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--keep", action="store_true", help="keep the corpora afterwards")
    parser.add_argument("--steps", action="store_true", help="also time the readers with redaction and analysis (r+a), and with the store opened meanwhile (r+a+s)")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"needs the real samples in {SHARED}", file=sys.stderr)
        return 2
    # An installed habitus runs from compiled bytecode (pip compiles it; an editable install
    # writes it on first use). Compile it now, so no run below pays for compiling our source
    # (PYTHONDONTWRITEBYTECODE, set on some machines, would otherwise make every run do it).
    import habitus

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(habitus.__file__).parent)], check=True)
    for size in [int(x) for x in args.mb.split(",")]:
        result = measure(size, args.workdir, steps=args.steps)
        show(result, args.markdown)
        if not args.keep:
            shutil.rmtree(args.workdir / f"corpus-{size}mb", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
