"""Measure the redaction engine: recall, false positives, false redactions/MB, speed, worst cases.

Run from the repository root::

    .venv/bin/python bench/redact.py              # table
    .venv/bin/python bench/redact.py --markdown   # section for BENCHMARKS.md
    .venv/bin/python bench/redact.py --show-misses --show-fp
    .venv/bin/python bench/redact.py --extra-corpus /usr/include   # more clean code

Data is read from ``../shared`` relative to the repository root (never copied into the
repo): ``secrets/secrets.jsonl`` (labelled samples) and ``transcripts/{claude,codex}``.
Parts whose data is missing are skipped with a message. The clean-code corpus is the
running interpreter's standard library (``sysconfig.get_paths()["stdlib"]``).

Recall definition (strict where possible): a secret sample is recalled when ``redact``
changed it AND no 8-character run of its secret portion survives (portions shorter than 8
characters must not survive at all). The portion is computed from the sample's kind by
``secret_portions`` below, independently of the engine's rules; when it finds none, the
sample falls back to "recalled = redact(text).changed" and is counted as such in the
report. A non-secret is flagged when ``redact`` changes it.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import sysconfig
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SECRETS = SHARED / "secrets" / "secrets.jsonl"
TRANSCRIPTS = SHARED / "transcripts"
sys.path.insert(0, str(ROOT / "src"))

from habitus.redact import redact, redact_jsonl_line  # noqa: E402

MB = 1_000_000
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{8})?\]")

# ----------------------------------------------------------------------------- recall


def family(kind: str) -> str:
    """The kind family used in reports: ``vendor-token:github`` -> ``vendor-token``."""
    return kind.split(":", 1)[0]


_URL_PW = re.compile(r"://[^\s:/@'\"]*:([^\s'\"/]+)@")
_KV_PW = re.compile(r"(?i)\b(?:password|pwd)\s*=\s*([^;&\"'\s\\]+)")
_NETRC = re.compile(r"(?i)\bpassword\s+(\S+)")
_HEADER = re.compile(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=\-]+)")
_B64_RUN = re.compile(r"([A-Za-z0-9+/=]{16,})")
_JWT = re.compile(r"(eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)")
_WEBHOOK = re.compile(r"/(?:services|webhook|webhookb2)/([^\s'\"`\]\)]+)")
_CLI_PW = re.compile(r"(?i)(?:\s-p|-password)\s+([^\s\"']+)")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'")
_XML_VALUE = re.compile(r"(?i)key=\"[^\"]*pass[^\"]*\"\s+value=\"([^\"]+)\"")
_ASSIGN = re.compile(
    r"(?i)\b(?:\w*pass\w*|\w*pwd|\w*secret\w*|\w*token\w*|\w+_key|\w+key)[\"']?\s*"
    r"(?:=>|:=|==|!=|=|:)\s*(\\?[\"'`])?([^\"'`\s;,\\]+)"
)
_PROSE = re.compile(r"(?i)\bis\s+[\"']([^\"']+)[\"']")
_TOKEN = re.compile(r"[^\s\"'`,;(){}\[\]<>|&?:=@/\\]+")
_DOMAIN_END = re.compile(r"\.(?:com|net|org|io|cloud|dev|co|ai|gov)$")
_ID_BEFORE = re.compile(r"(?i)(?:client[_-]?id|_id|\bid)[\"']?\s*[:=,]\s*[\"']?$")

Span = tuple[int, int]


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _groups(rx: re.Pattern[str], text: str, group: int = 1) -> list[Span]:
    return [m.span(group) for m in rx.finditer(text) if m.group(group)]


def _best_token(text: str) -> list[Span]:
    """The most secret-looking token: longest x entropy among tokens with a digit.

    Tokens that are public identifiers (a client id, ``xxx_id = ...``) or host names are
    skipped; a short ``word.`` prefix (``secrets.``) is cut off.
    """
    best: Span | None = None
    score = 0.0
    for m in _TOKEN.finditer(text):
        s, e = m.span()
        tok = m.group()
        cut = re.match(r"[A-Za-z_]{2,12}\.", tok)
        if cut and len(tok) - cut.end() >= 16:
            s += cut.end()
        while e > s and text[e - 1] == ".":
            e -= 1
        tok = text[s:e]
        if len(tok) < 12 or _DOMAIN_END.search(tok) or not re.search(r"[0-9]", tok):
            continue
        if "client-id" in tok or "client_id" in tok or _ID_BEFORE.search(text[max(0, s - 40) : s]):
            continue
        sc = len(tok) * _entropy(tok)
        if sc > score:
            best, score = (s, e), sc
    return [best] if best else []


def _assignments(text: str) -> list[Span]:
    spans = []
    for m in _ASSIGN.finditer(text):
        value = m.group(2)
        quoted = m.group(1) is not None
        after = text[m.end(2) : m.end(2) + 1]
        if value.lower() in ("true", "false", "none", "null") or value.isdigit():
            continue
        if not quoted and ("." in value or after in ("(", "[")):
            continue
        spans.append(m.span(2))
    return spans


def secret_portions(text: str, kind: str) -> list[Span]:
    """Spans (start, end) of the secret part(s) of a labelled sample, from its kind.

    Computed from the kind's structure, not from our rules. Returns ``[]`` when no portion
    can be isolated; callers then fall back to "changed".
    """
    fam = family(kind)
    if fam in ("db-connection-string", "credentialed-url"):
        return _groups(_URL_PW, text) + _groups(_KV_PW, text) or _assignments(text)
    if fam == "netrc-credentials":
        return _groups(_NETRC, text)
    if fam in ("basic-auth-header", "bearer-token"):
        return _groups(_HEADER, text)
    if fam == "private-key":
        return _groups(_B64_RUN, text)
    if fam == "jwt":
        return _groups(_JWT, text)
    if fam == "webhook-url":
        return _groups(_WEBHOOK, text)
    if fam == "password-cli-arg":
        return _groups(_CLI_PW, text)
    if fam == "password-in-code":
        quoted = [m.span(1) if m.group(1) else m.span(2) for m in _QUOTED.finditer(text)]
        return quoted[-1:]
    if fam == "secret-assignment":
        return (
            _groups(_XML_VALUE, text)
            or _assignments(text)
            or _groups(_PROSE, text)
            or _best_token(text)
        )
    if fam in ("vendor-token", "private-key-base64"):
        return _best_token(text)
    return []


def _leaks(text: str, spans: list[Span], output: str) -> bool:
    """Whether any 8-char run of a secret span (the whole span if shorter) survives.

    A run counts as surviving only if the output holds more copies of it than the input
    holds outside the secret spans (a user name that shares 8 letters with the password
    is not a leak).
    """
    outside = list(text)
    for s, e in spans:
        outside[s:e] = ["\x00"] * (e - s)
    rest = "".join(outside)
    for s, e in spans:
        portion = text[s:e]
        runs = (
            [portion] if len(portion) < 8 else [portion[i : i + 8] for i in range(len(portion) - 7)]
        )
        if any(output.count(r) > rest.count(r) for r in runs):
            return True
    return False


@dataclass
class Score:
    """Recall / false-positive tallies, overall and per kind family."""

    total: Counter[str] = field(default_factory=Counter)
    hit: Counter[str] = field(default_factory=Counter)
    loose: Counter[str] = field(default_factory=Counter)  # scored as "changed" only
    misses: list[tuple[str, str, str]] = field(default_factory=list)
    negatives: int = 0
    flagged: list[tuple[str, str]] = field(default_factory=list)

    @property
    def positives(self) -> int:
        return sum(self.total.values())

    @property
    def recalled(self) -> int:
        return sum(self.hit.values())


def score_samples(rows: list[dict[str, object]]) -> Score:
    """Score ``redact`` on labelled rows ``{"text", "secret", "kind"}`` (see module doc)."""
    sc = Score()
    for row in rows:
        text = str(row["text"])
        kind = str(row["kind"])
        out = redact(text)
        if not row["secret"]:
            sc.negatives += 1
            if out.changed:
                sc.flagged.append((text, out.text))
            continue
        fam = family(kind)
        sc.total[fam] += 1
        spans = [(s, e) for s, e in secret_portions(text, kind) if e > s]
        if not spans:
            sc.loose[fam] += 1
        stripped = _PLACEHOLDER.sub("\x00", out.text)
        ok = out.changed and not _leaks(text, spans, stripped)
        if ok:
            sc.hit[fam] += 1
        else:
            sc.misses.append((kind, text, out.text))
    return sc


def load_samples(path: Path = SECRETS) -> list[dict[str, object]]:
    """The labelled samples (one JSON object per line)."""
    with path.open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


# ----------------------------------------------------------------------------- clean code


def stdlib_corpus(cap: int = 20 * MB) -> list[tuple[str, str]]:
    """(relative path, text) of the stdlib's ``*.py`` files, sorted, up to ``cap`` bytes."""
    base = Path(sysconfig.get_paths()["stdlib"])
    files: list[tuple[str, str]] = []
    size = 0
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).as_posix()
        if "site-packages" in rel:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if size + len(data) > cap:
            break
        size += len(data)
        files.append((rel, data.decode("utf-8", "surrogateescape")))
    return files


SOURCE_EXTS = (
    ".py",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".json",
    ".h",
    ".hpp",
    ".c",
    ".pm",
    ".pl",
    ".rb",
)


def code_corpus(base: Path, cap: int = 20 * MB) -> list[tuple[str, str]]:
    """(relative path, text) of source files under ``base``, sorted, up to ``cap`` bytes."""
    files: list[tuple[str, str]] = []
    size = 0
    for path in sorted(p for p in base.rglob("*") if p.suffix in SOURCE_EXTS):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if size + len(data) > cap:
            break
        size += len(data)
        files.append((path.relative_to(base).as_posix(), data.decode("utf-8", "surrogateescape")))
    return files


def false_redactions(files: list[tuple[str, str]]) -> tuple[int, int, Counter[str], list[str]]:
    """Total bytes, total redactions, redactions by rule, and example contexts."""
    size = 0
    total = 0
    by_rule: Counter[str] = Counter()
    examples: list[str] = []
    for rel, text in files:
        size += len(text.encode("utf-8", "surrogateescape"))
        out = redact(text)
        if not out.changed:
            continue
        total += sum(out.counts.values())
        by_rule.update(out.counts)
        for m in _PLACEHOLDER.finditer(out.text):
            line_start = out.text.rfind("\n", 0, m.start()) + 1
            line_end = out.text.find("\n", m.end())
            examples.append(f"{rel}: {out.text[line_start:line_end].strip()[:160]}")
    return size, total, by_rule, examples


# ----------------------------------------------------------------------------- speed


def transcript_lines(target: int = 50 * MB) -> list[bytes]:
    """Lines of the shared Claude Code and Codex transcripts, repeated to ~``target`` bytes."""
    base: list[bytes] = []
    for sub in ("claude", "codex"):
        for path in sorted((TRANSCRIPTS / sub).glob("*.jsonl")):
            base.extend(line for line in path.read_bytes().splitlines(keepends=True) if line)
    if not base:
        return []
    size = sum(map(len, base))
    return base * max(1, round(target / size))


def throughput(lines: list[bytes], rounds: int = 5) -> dict[str, float]:
    """MB/s of redact_jsonl_line, plain redact() and the orjson.loads baseline (one core).

    The three are timed in turn within each round, so they see the same machine noise;
    each figure is the best of ``rounds``.
    """
    size = sum(map(len, lines)) / MB
    texts = [line.decode("utf-8", "surrogateescape") for line in lines]

    def jsonl() -> None:
        for line in lines:
            redact_jsonl_line(line)

    def plain() -> None:
        for text in texts:
            redact(text)

    def baseline() -> None:
        for line in lines:
            orjson.loads(line)

    best = {"baseline": math.inf, "jsonl": math.inf, "plain": math.inf}
    for _ in range(rounds):
        for name, fn in (("baseline", baseline), ("jsonl", jsonl), ("plain", plain)):
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return {"mb": size, **{name: size / secs for name, secs in best.items()}}


def worst_cases() -> list[tuple[str, str, int, float]]:
    """(group, name, bytes, seconds) for adversarial inputs.

    ``required`` and ``own`` inputs must each finish within 1 s (they test that no rule
    backtracks or rescans: time must stay linear). ``dense`` inputs make every 10-22 bytes
    a full candidate match; they measure the per-candidate cost (checks plus the verifying
    rescan) and are reported, not budgeted.
    """
    b64 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw"
    cases = [
        ("required", "1 MB of spaces", " " * MB),
        ("required", "4 MB base64, no newline", (b64 * (4 * MB // len(b64) + 1))[: 4 * MB]),
        ("required", "2 MB hex, no newline", "0123456789abcdef" * (2 * MB // 16)),
        ("required", "1 MB of 'key='", "key=" * (MB // 4)),
        (
            "own",
            "1 MB of '-----BEGIN PRIVATE KEY-----'",
            "-----BEGIN PRIVATE KEY-----" * (MB // 27),
        ),
        ("own", "1 MB of 'a@b.' (pii=True)", "a@b." * (MB // 4)),
        ("own", "1 MB of 'key= a' lines", "key= a\n" * (MB // 7)),
        ("own", "1 MB of '://a:b@'", "://a:b@" * (MB // 7)),
        ("own", "1 MB of 'eyJabcdefghij.'", "eyJabcdefghij." * (MB // 14)),
        ("dense", "1 MB of 'password=\"'", 'password="' * (MB // 10)),
        ("dense", "1 MB of 'Authorization: Bearer '", "Authorization: Bearer " * (MB // 22)),
    ]
    out = []
    for group, name, text in cases:
        t0 = time.perf_counter()
        redact(text, pii="pii" in name)
        out.append((group, name, len(text), time.perf_counter() - t0))
    return out


# ----------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    """Run all measurements and print a table (or markdown with ``--markdown``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", action="store_true", help="print a BENCHMARKS.md section")
    ap.add_argument("--show-misses", action="store_true", help="list missed secret samples")
    ap.add_argument(
        "--show-fp", action="store_true", help="list flagged non-secrets and stdlib hits"
    )
    ap.add_argument("--skip-speed", action="store_true", help="skip throughput measurement")
    ap.add_argument(
        "--extra-corpus",
        action="append",
        default=[],
        metavar="DIR",
        help="also count redactions/MB on source files under DIR (repeatable)",
    )
    args = ap.parse_args(argv)
    lines_out: list[str] = []
    emit = lines_out.append

    if SECRETS.exists():
        sc = score_samples(load_samples())
        emit("Recall on ../shared/secrets/secrets.jsonl (strict: no 8-char run of the secret left)")
        emit("")
        emit("| family | secrets | recalled | recall | scored as 'changed' only |")
        emit("|---|---:|---:|---:|---:|")
        for fam in sorted(sc.total, key=lambda f: (-sc.total[f], f)):
            emit(
                f"| {fam} | {sc.total[fam]} | {sc.hit[fam]} | "
                f"{sc.hit[fam] / sc.total[fam]:.0%} | {sc.loose[fam]} |"
            )
        emit(
            f"| **all** | **{sc.positives}** | **{sc.recalled}** | "
            f"**{sc.recalled / sc.positives:.1%}** | {sum(sc.loose.values())} |"
        )
        emit("")
        emit(f"Non-secrets flagged: {len(sc.flagged)} of {sc.negatives}")
        emit("")
        if args.show_misses:
            for kind, text, out in sc.misses:
                print(f"MISS {kind}: {text[:300]!r}\n  -> {out[:300]!r}", file=sys.stderr)
        if args.show_fp:
            for text, out in sc.flagged:
                print(f"FP: {text[:200]!r}\n  -> {out[:200]!r}", file=sys.stderr)
    else:
        emit(f"(skipped recall: {SECRETS} not found)")
        emit("")

    files = stdlib_corpus()
    t0 = time.perf_counter()
    size, total, by_rule, examples = false_redactions(files)
    elapsed = time.perf_counter() - t0
    emit(
        f"False redactions on clean code: stdlib {sys.version.split()[0]} *.py, "
        f"{len(files)} files, {size / MB:.1f} MB"
    )
    emit("")
    emit(
        f"- redactions: {total} ({total / (size / MB):.2f} per MB); "
        f"by rule: {dict(by_rule.most_common()) or '{}'}"
    )
    emit(f"- plain redact() over the corpus: {size / MB / elapsed:.1f} MB/s")
    emit("")
    if args.show_fp:
        for ex in examples:
            print("STDLIB", ex, file=sys.stderr)
    if args.extra_corpus:
        emit("| extra corpus (source files, up to 20 MB) | MB | redactions | per MB | by rule |")
        emit("|---|---:|---:|---:|---|")
        for extra in args.extra_corpus:
            size, total, by_rule, examples = false_redactions(code_corpus(Path(extra)))
            mb = max(size / MB, 1e-9)
            emit(f"| {extra} | {size / MB:.1f} | {total} | {total / mb:.2f} | {dict(by_rule)} |")
            if args.show_fp:
                for ex in examples:
                    print("EXTRA", ex, file=sys.stderr)
        emit("")

    if args.skip_speed:
        pass
    elif lines := transcript_lines():
        tp = throughput(lines)
        emit(
            f"Throughput on transcript JSONL ({tp['mb']:.1f} MB: ../shared/transcripts/"
            "{claude,codex}/*.jsonl repeated; one core, best of 5 interleaved rounds)"
        )
        emit("")
        emit("| what | MB/s | x orjson.loads baseline |")
        emit("|---|---:|---:|")
        emit(f"| orjson.loads every line (baseline) | {tp['baseline']:.1f} | 1.00 |")
        emit(
            f"| redact_jsonl_line every line | {tp['jsonl']:.1f} | "
            f"{tp['jsonl'] / tp['baseline']:.2f} |"
        )
        emit(
            f"| redact() on every line as text | {tp['plain']:.1f} | "
            f"{tp['plain'] / tp['baseline']:.2f} |"
        )
        emit("")
    else:
        emit(f"(skipped throughput: no transcripts under {TRANSCRIPTS})")
        emit("")

    emit("Worst cases: plain redact() on one string; 'required' and 'own' must each take < 1 s")
    emit("")
    emit("| group | input | seconds | MB/s |")
    emit("|---|---|---:|---:|")
    for group, name, size, secs in worst_cases():
        flag = " (over 1 s!)" if group != "dense" and secs >= 1.0 else ""
        emit(f"| {group} | {name} | {secs:.3f}{flag} | {size / MB / secs:.1f} |")
    emit("")
    text = "\n".join(lines_out)
    if args.markdown:
        print("## Redaction\n")
        cmd = " ".join([".venv/bin/python bench/redact.py", *(argv or sys.argv[1:])])
        print(f"Command (from the repo root): `{cmd}`\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = [
    "Score",
    "false_redactions",
    "family",
    "load_samples",
    "score_samples",
    "secret_portions",
    "code_corpus",
    "stdlib_corpus",
    "throughput",
    "transcript_lines",
    "worst_cases",
]
