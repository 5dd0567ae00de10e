"""The redaction engine: find secrets in text and replace them with placeholders.

Rules live in ``rules.toml`` next to this module (our own data file; every rule names the
public vendor document its format comes from). Each rule is a google-re2 regular
expression, so matching is linear in the input: no rule can backtrack catastrophically.
A rule runs only when one of its keywords occurs in the ASCII-lowercased text; the keyword
scan is one pass of a pyahocorasick automaton over all keywords of all rules.

Everything is matched on UTF-8 bytes (``str`` input is encoded once with
``surrogatepass`` and decoded the same way, so lone surrogates survive unchanged), and the
keyword gate lowercases ASCII letters only. Unicode case-folding tricks (for example a
Kelvin sign instead of ``K``) are therefore not treated as keywords; ``redact`` and
``find_secrets`` share that gate, so they always agree.

Only the span of a rule's ``secret`` group is replaced, with ``[REDACTED:<rule-id>]`` or,
with a tag key, ``[REDACTED:<rule-id>:<8 hex>]`` where the hex is the start of
HMAC-SHA256(tag_key, secret bytes). Overlapping spans merge into one placeholder named
after the earliest rule in the file. Placeholders never match: candidate spans that touch
one are dropped and placeholder text is blanked for the keyword gate. After a pass that
replaced something the output is scanned again until nothing matches (a fixed point), so
``redact(redact(x).text).text == redact(x).text`` and ``find_secrets`` of any output is
``[]``.

Matching costs: the keyword pass is ~20 ns per byte (pyahocorasick), a rule's RE2 scan
~0.2-4 ns per byte, plus a few microseconds per candidate match for the Python checks.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import hmac
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ahocorasick
import orjson
import re2

from habitus.errors import ConfigError

__all__ = [
    "Redacted",
    "Rule",
    "find_secrets",
    "load_rules",
    "redact",
    "redact_bytes",
    "redact_many",
    "rules",
]

#: Placeholder written in place of a secret; also what candidate spans must not touch.
PLACEHOLDER_PREFIX = b"[REDACTED:"
_RULE_ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
#: Keywords are printable characters, any script (never NUL: ``redact_many`` joins texts
#: with NUL bytes).
_KEYWORD_CHARS = re.compile(r"[^\x00-\x1f\x7f]+\Z")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NAME_BYTES = _WORD_BYTES | frozenset(b".-")
_BEFORE = 64  # bytes of context a rule's ``before`` pattern sees
_RESCAN = 256  # bytes: a rejected match up to this long is searched again from inside
_MAX_PASSES = 4  # redaction passes until the output is a fixed point (see ``_settle``)
_RE2_MAX_MEM = 64 << 20
_MAX_VALUE = 4096  # characters; longer assignment values are not treated as passwords
_NAME_TAIL = 200  # characters of an assignment name that the name classifier looks at


@dataclass(frozen=True)
class Redacted:
    """The result of :func:`redact`.

    ``text`` is the redacted text (``str``); ``counts`` maps a rule id to the number of
    spans replaced under that id (merged overlapping spans count once, for the rule that
    names the placeholder). ``changed`` is true when anything was replaced.
    """

    text: str
    counts: dict[str, int]

    @property
    def changed(self) -> bool:
        """True when at least one span was replaced."""
        return bool(self.counts)


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled rule from a rules file.

    ``regex`` is a google-re2 pattern compiled for bytes; ``secret_groups`` are the
    (index, name) pairs of its groups whose names start with ``secret`` (the first one that
    took part in a match is the span to replace; none means the whole match).
    ``name_groups`` likewise for groups starting with ``name`` (the assignment check reads
    them). ``word_start`` rejects a match preceded by a letter, digit or ``_`` (a leading
    ``\\b`` done in Python, because RE2 skips ahead to a literal prefix only without one);
    ``before``, if set, must match the ``_BEFORE`` bytes preceding the match (a lookbehind).
    Lengths are in characters, ``entropy`` in Shannon bits per character.
    """

    id: str
    description: str
    order: int
    pattern: str
    regex: Any
    keywords: tuple[str, ...]
    entropy: float | None
    min_length: int
    max_length: int | None
    require: frozenset[str]
    allowlist: tuple[Any, ...]
    stopwords: tuple[str, ...]
    check: str | None
    pii: bool
    word_start: bool
    before: Any
    secret_groups: tuple[tuple[int, str], ...]
    name_groups: tuple[int, ...]
    op_group: int | None


@dataclass(frozen=True, slots=True)
class _Filters:
    """Word lists from the ``[filters]`` table of the rules file (all lowercase)."""

    placeholder_values: frozenset[str]
    placeholder_substrings: tuple[str, ...]
    code_words: frozenset[str]
    strong_names: frozenset[str]
    medium_names: frozenset[str]
    key_prefixes: frozenset[str]
    key_blocklist: frozenset[str]
    token_blocklist: frozenset[str]
    transparent_suffixes: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Keywords:
    """An Aho-Corasick automaton over keywords; values are indexes into the tuples."""

    automaton: Any
    words: tuple[bytes, ...]
    rules: tuple[tuple[int, ...], ...]  # rule indexes per keyword


@dataclass(frozen=True, slots=True)
class _RuleSet:
    rules: tuple[Rule, ...]
    plain: _Keywords  # keywords of the rules that always run
    with_pii: _Keywords  # ... plus those of pii rules
    filters: _Filters

    def keywords(self, pii: bool) -> _Keywords:
        return self.with_pii if pii else self.plain


# --------------------------------------------------------------------------- loading


def _join_regex(text: str) -> str:
    """A rule's regex as written in TOML: each line stripped, lines concatenated.

    This lets long patterns span lines; a space that matters at a line edge is written
    ``\\x20`` or ``[ ]``.
    """
    return "".join(line.strip() for line in text.splitlines())


def _compile(pattern: str, where: str) -> Any:
    options = re2.Options()
    options.max_mem = _RE2_MAX_MEM
    try:
        return re2.compile(pattern.encode("utf-8"), options)
    except re2.error as exc:
        raise ConfigError(f"{where}: regex does not compile under RE2: {exc}") from exc


def _words(table: dict[str, Any], key: str) -> frozenset[str]:
    return frozenset(str(w).lower() for w in table.get(key, []))


def load_rules(text: str, source: str = "rules.toml") -> tuple[tuple[Rule, ...], _Filters]:
    """Parse and compile a rules file given as TOML ``text``.

    Returns the rules in file order and the value/name word lists. Raises
    :class:`~habitus.errors.ConfigError` when the TOML is invalid, a rule lacks ``id``,
    ``regex`` or ``keywords``, an id is duplicated or malformed, a keyword is not
    lowercase and printable, a ``check`` or ``require`` value is unknown, or a regex
    (``regex``, ``before``, ``allowlist``) does not compile under RE2.
    """
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc
    return rules_from_data(data, source)


def rules_from_data(data: Mapping[str, Any], source: str = "rules.toml") -> tuple[tuple[Rule, ...], _Filters]:
    """:func:`load_rules` for a rules file already parsed (the TOML's tables as dicts);
    raises :class:`~habitus.errors.ConfigError` likewise."""
    ftable = data.get("filters", {})
    filters = _Filters(
        placeholder_values=_words(ftable, "placeholder_values"),
        placeholder_substrings=tuple(sorted(_words(ftable, "placeholder_substrings"))),
        code_words=_words(ftable, "code_words"),
        strong_names=_words(ftable, "strong_names"),
        medium_names=_words(ftable, "medium_names"),
        key_prefixes=_words(ftable, "key_prefixes"),
        key_blocklist=_words(ftable, "key_blocklist"),
        token_blocklist=_words(ftable, "token_blocklist"),
        transparent_suffixes=_words(ftable, "transparent_suffixes"),
    )
    compiled: list[Rule] = []
    seen: set[str] = set()
    for order, raw in enumerate(data.get("rule", [])):
        rid = raw.get("id")
        where = f"{source}: rule {rid or order}"
        if not isinstance(rid, str) or not _RULE_ID.match(rid):
            raise ConfigError(f"{where}: id must match [a-z0-9][a-z0-9-]*")
        if rid in seen:
            raise ConfigError(f"{where}: duplicate id")
        seen.add(rid)
        if "regex" not in raw or not raw.get("keywords"):
            raise ConfigError(f"{where}: needs regex and at least one keyword")
        keywords = tuple(raw["keywords"])
        for kw in keywords:
            if kw != kw.lower() or not _KEYWORD_CHARS.match(kw):
                raise ConfigError(f"{where}: bad keyword {kw!r}")
        check = raw.get("check")
        if check is not None and check not in _CHECKS:
            raise ConfigError(f"{where}: unknown check {check!r}")
        require = frozenset(raw.get("require", []))
        if not require <= {"digit", "lower", "upper"}:
            raise ConfigError(f"{where}: require takes digit, lower, upper")
        pattern = _join_regex(raw["regex"])
        regex = _compile(pattern, where)
        groups = sorted((idx, name.decode()) for name, idx in regex.groupindex.items())
        compiled.append(
            Rule(
                id=rid,
                description=str(raw.get("description", "")),
                order=order,
                pattern=pattern,
                regex=regex,
                keywords=keywords,
                entropy=raw.get("entropy"),
                min_length=int(raw.get("min_length", 1)),
                max_length=raw.get("max_length"),
                require=require,
                allowlist=tuple(_compile(a, where) for a in raw.get("allowlist", [])),
                stopwords=tuple(s.lower() for s in raw.get("stopwords", [])),
                check=check,
                pii=bool(raw.get("pii", False)),
                word_start=bool(raw.get("word_start", False)),
                before=_compile(_join_regex(raw["before"]), where) if "before" in raw else None,
                secret_groups=tuple((i, n) for i, n in groups if n.startswith("secret")),
                name_groups=tuple(i for i, n in groups if n.startswith("name")),
                op_group=next((i for i, n in groups if n == "op"), None),
            )
        )
    if not compiled:
        raise ConfigError(f"{source}: no rules")
    return tuple(compiled), filters


#: The packaged rules parsed to JSON, with the SHA-256 of the ``rules.toml`` they came from:
#: ``tomllib`` takes about 20 ms for the rules file, ``orjson`` well under one. Rewritten by
#: :func:`write_rules_json` (``make rules``); used only while it matches the TOML.
RULES_JSON = "rules.json"


def _package_folder() -> Any:
    """Where the packaged rules files are: this module's folder when they are files there (any
    normal install; ``importlib.resources`` alone costs about 15 ms to import), else the
    package's resources (a zipped install)."""
    here = Path(__file__).parent
    if (here / "rules.toml").is_file():
        return here
    from importlib import resources

    return resources.files("habitus.redact")


def _packaged_rules_data(folder: Path | None = None) -> dict[str, Any]:
    """The packaged rules file's tables (or those of ``folder``'s ``rules.toml``): from
    ``rules.json`` when it was made from that very ``rules.toml``, else parsed from the
    TOML (always right, only slower)."""
    package: Any = folder or _package_folder()
    raw = package.joinpath("rules.toml").read_bytes()
    try:
        cached = orjson.loads(package.joinpath(RULES_JSON).read_bytes())
        if cached.get("toml_sha256") == hashlib.sha256(raw).hexdigest():
            return dict(cached["rules"])
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        pass
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"rules.toml: invalid TOML: {exc}") from exc


def write_rules_json(folder: Path | None = None) -> Path:
    """Write ``rules.json`` (the parsed ``rules.toml`` and its SHA-256) beside the TOML, or
    into ``folder``; returns its path. Run after editing the rules (``make rules``)."""
    import tomllib

    package = Path(str(_package_folder()))
    raw = (package / "rules.toml").read_bytes()
    target = (folder or package) / RULES_JSON
    payload = {"toml_sha256": hashlib.sha256(raw).hexdigest(), "rules": tomllib.loads(raw.decode("utf-8"))}
    target.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return target


@functools.cache
def _ruleset() -> _RuleSet:
    """The packaged rules, compiled once per process (lazily, on first use)."""
    compiled, filters = rules_from_data(_packaged_rules_data())
    return _RuleSet(
        compiled,
        _build_keywords(compiled, pii=False),
        _build_keywords(compiled, pii=True),
        filters,
    )


def _build_keywords(compiled: tuple[Rule, ...], pii: bool) -> _Keywords:
    by_keyword: dict[str, set[int]] = {}
    for i, rule in enumerate(compiled):
        if rule.pii and not pii:
            continue
        for kw in rule.keywords:
            by_keyword.setdefault(kw, set()).add(i)
    automaton = ahocorasick.Automaton()
    items = sorted(by_keyword.items())
    for n, (kw, _) in enumerate(items):
        # The automaton runs over the text's UTF-8 bytes read as latin-1 (see _lowered): a
        # non-ASCII keyword (密码) is looked for as its UTF-8 bytes, the same way.
        automaton.add_word(kw.encode("utf-8").decode("latin-1"), n)
    automaton.make_automaton()
    return _Keywords(
        automaton,
        tuple(kw.encode("utf-8") for kw, _ in items),
        tuple(tuple(sorted(idxs)) for _, idxs in items),
    )


def rules() -> tuple[Rule, ...]:
    """The packaged rules in file order (compiled on first call)."""
    return _ruleset().rules


# --------------------------------------------------------------------------- matching

Spans = list[tuple[int, int]]  # per group (0 = whole match) byte offsets; (-1, -1) if unset


# google-re2's low-level matcher (``_Regexp._regexp.Match``) returns every group's span in
# one call; the public API builds a Python match object per hit instead. Both give the
# same spans, so the public API is the fallback if the private one ever goes away.
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)


def _low_level(regex: Any) -> Any:
    if _UNANCHORED is None:
        return None
    return getattr(getattr(regex, "_regexp", None), "Match", None)


def _match_from(regex: Any, data: bytes, pos: int) -> Spans | None:
    """The leftmost match of ``regex`` in ``data`` at or after byte ``pos``, as group spans."""
    match = _low_level(regex)
    if match is None:
        m = regex.search(data, pos)
        return None if m is None else [m.span(i) for i in range(regex.groups + 1)]
    spans = match(_UNANCHORED, data, pos, len(data))
    return None if spans[0][0] < 0 else spans


def _found(regex: Any, data: bytes) -> bool:
    """Whether ``regex`` matches anywhere in ``data`` (bytes), without building a match."""
    match = _low_level(regex)
    if match is None:
        return regex.search(data) is not None
    return match(_UNANCHORED, data, 0, len(data))[0][0] >= 0


# --------------------------------------------------------------------------- checks
#
# The checks below run on one candidate at a time, on bounded strings (a value of at most
# _MAX_VALUE characters, a name of at most _NAME_TAIL), so they use the standard ``re``
# module with patterns that have no ambiguous nested repetition.


def _entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character (0.0 for the empty string)."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_TEMPLATE = re.compile(r"\$\{|\$\(|\{\{|\}\}|#\{|<%|%>|&lt;|&gt;|&#")
_ENV_REF = re.compile(r"\$[A-Z_][A-Z0-9_]{2,}(?![a-z])")
_MASK = re.compile(r"[xX*#•.\-_=/+: ]+")
_NUMERIC = re.compile(r"[0-9.,:+\- ]+")
_UUID_SHAPE = re.compile(
    r"[0-9A-Za-z]{8}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{12}"
)
_HEX_UUID = re.compile(r"[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}")
_SELECTOR = re.compile(r"[#.][a-z]+(?:[-_][a-z]+)+")
_SNAKE = re.compile(r"_*(?:[a-z][a-z0-9]*(?:_+[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+)_*")
_PATHLIKE = re.compile(r"(?:~?/|\.{1,2}/|[A-Za-z]:\\)[^\s]*|[a-z][a-z0-9+.\-]*://\S*")
_CODE_CALL = re.compile(r"[A-Za-z_$][\w.$]*[\[(]")  # name( or name[: a call or an index
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_PATH = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+\.?")
_WORDLIKE = re.compile(r"[a-z]+(?:[-_. ][a-z]+)*|[A-Z]+(?:[-_. ][A-Z]+)*")
_CAMEL = re.compile(r"_*[a-z]*(?:[A-Z]+[a-z]{2,}[0-9]*)+[A-Z]*")  # fooBar, _RSAPrivateKey
_SLUG = re.compile(r"[a-z]+[0-9]*(?:[-_.][a-z]+[0-9]*)+")  # types-pywin32, my_token_v2
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+|[0-9]+")
_LINE_PREFIX = re.compile(r"(?:(?:export|set|setx|env|rem set|#|//|;|-)[ \t]*)?", re.I)
_COMPARISONS = frozenset({"==", "!=", "===", "!=="})
_CLI_FLAG = re.compile(r"--?[A-Za-z][A-Za-z0-9-]*=?")
_ALNUM_ONLY = re.compile(r"[^a-z0-9]")

_NONE, _MEDIUM, _STRONG = 0, 1, 2


@functools.lru_cache(maxsize=8192)
def _plausible(value: str, strength: int) -> bool:
    """Whether ``value`` (a candidate secret, ``str``) can be a literal credential.

    Rejects variable references and templates (``${X}``, ``$X``, ``{{x}}``, ``<x>``,
    ``%s``, ``#{x}``), concatenations, masks (``xxxx``, ``***``), placeholders from the
    rules file, booleans/null, numbers, fake UUIDs and paths/URLs. ``strength`` 2
    (password-like name) accepts short values (4+ characters); 1 needs 8+ characters, no
    spaces, entropy of at least 3 bits/char and something that is not a plain word or a
    code identifier. Cheap tests run first (this is on the per-match path) and results
    are cached: values repeat, across lines and in the verifying rescan.
    """
    f = _ruleset().filters
    if value[:1].isspace():
        return False  # " --username=" + user: a fragment of a larger string
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'`":
        v = v[1:-1].strip()
    n = len(v)
    if n < (4 if strength >= _STRONG else 8) or n > _MAX_VALUE or v[0] in "$%{<[(\\@.+:":
        return False
    if _CLI_FLAG.fullmatch(v):
        return False
    if strength >= _STRONG:
        if v.count(" ") > 1 or v.endswith(":"):
            return False
    elif " " in v:
        return False
    low = v.lower()
    if low in f.placeholder_values or low in f.code_words or len(set(v)) == 1:
        return False
    if _TEMPLATE.search(v):
        return False
    if next(_placeholder_words().iter(low), None) is not None:
        return False
    if _MASK.fullmatch(v) or _NUMERIC.fullmatch(v):
        return False
    if _ENV_REF.search(v) or _SELECTOR.fullmatch(v) or _PATHLIKE.fullmatch(v):
        return False
    if "-" in v and any(not _HEX_UUID.fullmatch(m.group()) for m in _UUID_SHAPE.finditer(v)):
        return False
    if strength >= _STRONG:
        return True
    return (
        _entropy(v) >= 3.0
        and not _WORDLIKE.fullmatch(v)
        and not _CAMEL.fullmatch(v)
        and not _SNAKE.fullmatch(v)
        and not (_SLUG.fullmatch(v) and not _HEX_UUID.fullmatch(v))
        and not _code_path(v)
    )


@functools.cache
def _placeholder_words() -> Any:
    """An Aho-Corasick automaton over the ``placeholder_substrings`` filter list."""
    automaton = ahocorasick.Automaton()
    for word in _ruleset().filters.placeholder_substrings:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton


def _code_path(v: str) -> bool:
    """``a.b.c`` / ``a->b`` / ``A::b`` attribute paths with no random-looking segment."""
    return _IDENT_PATH.fullmatch(v) is not None and not any(
        len(seg) >= 16 and _random_word(seg) and seg.count("_") < 2
        for seg in re.split(r"\.|::|->", v)
    )


def _token_like(v: str) -> bool:
    """Long (16+) or mixed-case-with-digits: how a generated token differs from a word."""
    mixed = any(c.isupper() for c in v) and any(c.islower() for c in v)
    return len(v) >= 16 or (mixed and any(c.isdigit() for c in v))


def _random_word(v: str) -> bool:
    """An identifier-shaped value that looks generated: letters and digits, not snake_case."""
    return (
        len(v) >= 8
        and any(c.isdigit() for c in v)
        and any(c.isalpha() for c in v)
        and not _SNAKE.fullmatch(v)
        and _entropy(v) >= 3.0
    )


def _code_follows(data: bytes, e: int) -> bool:
    """True when the byte after an unquoted value makes it a call or an index."""
    return data[e : e + 1] in (b"(", b"[", b"{")


@functools.lru_cache(maxsize=8192)
def _name_strength(name: str) -> int:
    """How password-like an assignment name is: 2 strong, 1 medium (token, api key), 0 no.

    The name (e.g. ``DB_PASSWORD``, ``clientSecret``, ``config.facebook.key``) is split
    into lowercase words at separators and camelCase; trailing qualifiers that do not
    change meaning (``value``, ``b64``, digits...) are dropped, and the last word decides.
    ``password_label`` or ``token_type`` are 0; ``key`` needs a qualifier (``api_key``,
    ``LINKEDIN_KEY``) that is not on the key blocklist (``sort_key``, ``cache_key``).
    """
    f = _ruleset().filters
    parts = [p.lower() for p in _NAME_PARTS.findall(name[-_NAME_TAIL:])]
    while parts and (parts[-1].isdigit() or parts[-1] in f.transparent_suffixes):
        parts.pop()
    if not parts:
        return _NONE
    last = parts[-1]
    prev = parts[-2] if len(parts) > 1 else ""
    if last in f.strong_names or last.endswith(("password", "passwd", "secret", "passphrase")):
        return _STRONG
    if last == "key":
        if prev in ("secret", "secrets"):
            return _STRONG
        if not prev or prev in f.key_blocklist:
            return _NONE
        return _MEDIUM
    if last.endswith("key") and last[:-3] in f.key_prefixes:
        return _STRONG if last == "secretkey" else _MEDIUM
    if last == "token":
        return _NONE if prev in f.token_blocklist else _MEDIUM
    if last in f.medium_names or (last.endswith("token") and len(last) > 5):
        return _MEDIUM
    return _NONE


_NAME_MAX = 80  # bytes an assignment name may reach back before its secret word


def _name_head(data: bytes, pos: int) -> tuple[int, bool]:
    """Walk back from ``pos`` over name bytes ``[A-Za-z0-9_.-]`` to the start of the name.

    Returns (start, quoted): ``quoted`` when the name is in quotes (``"x"``, ``\\"x\\"``).
    Returns start -1 when the name runs on for more than ``_NAME_MAX`` bytes, follows a
    ``/`` or ``\\`` (a path or an escape, not a name) or follows a placeholder.
    """
    window = data[max(0, pos - _NAME_MAX - 1) : pos]
    run = len(window) - len(window.rstrip(_NAME_CHARS))
    if run > _NAME_MAX:
        return -1, False
    start = pos - run
    if _after_placeholder(data, start) or data[max(0, start - 2) : start] == b"::":
        return -1, False  # left context gone, or a namespace path (Test2::Event::Pass)
    before = data[start - 1 : start]
    quoted = before in (b'"', b"'")
    if quoted and data[max(0, start - 40) : start - 1].rstrip(b" \t").endswith(b"?"):
        return -1, False  # cond ? "pass" : "fail"
    edge = start - 1 - (1 if quoted else 0)
    if quoted and data[edge : edge + 1] == b"\\":
        edge -= 1  # an escaped quote: \"name\"
    if edge >= 0 and data[edge : edge + 1] in (b"/", b"\\"):
        return -1, False
    return start, quoted


_NAME_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"


def _line_start_assignment(data: bytes, start: int) -> bool:
    """True when the assignment starts its line, unindented (``export``/``#`` allowed)."""
    line_start = data.rfind(b"\n", 0, start) + 1
    prefix = data[line_start:start].decode("utf-8", "replace")
    return len(prefix) < 40 and _LINE_PREFIX.fullmatch(prefix) is not None


def _check_value(
    rule: Rule, spans: Spans, data: bytes, s: int, e: int, secret: str, group: str
) -> bool:
    """Value filters only (URL passwords, headers, flags, netrc...); see :func:`_plausible`.

    A value followed by ``(`` / ``[`` or shaped like an attribute path is code. Groups
    whose name ends in ``_medium`` use the token-like (strength 1) thresholds.
    """
    if _code_follows(data, e) or _code_path(secret) or _CODE_CALL.match(secret):
        return False
    strength = _MEDIUM if group.endswith("_medium") else _STRONG
    return _plausible(secret, strength)


def _check_assignment(
    rule: Rule, spans: Spans, data: bytes, s: int, e: int, secret: str, group: str
) -> bool:
    """``name <op> value`` assignments: the name must be secret-like, the value plausible.

    The name is walked back from the secret word (``_name_head``) and classified
    (``_name_strength``). A comma as the operator (``env('API_TOKEN', 'value')``) needs a
    quoted name and a quoted, generated-looking value; a comparison (``==``) needs a quoted
    value; unquoted values go through :func:`_plain_value_ok`.
    """
    name_start, name_end = spans[0][0], spans[0][0]
    for gi in rule.name_groups:
        if spans[gi][0] >= 0:
            name_start, name_end = spans[gi]
            break
    name_start, quoted = _name_head(data, name_start)
    if name_start < 0:
        return False
    name = data[max(name_start, name_end - _NAME_TAIL) : name_end].decode("utf-8", "replace")
    strength = _name_strength(name)
    if strength == _NONE:
        return False
    op = "="
    if rule.op_group is not None:
        os_, oe = spans[rule.op_group]
        op = data[os_:oe].decode("latin-1")
    quoted_value = group != "secret_uq"
    if op in _COMPARISONS and not quoted_value:
        return False  # password == other_variable
    if op == ",":
        v = secret.strip("\"'` ")
        if not quoted or not quoted_value or not (_random_word(v) and _token_like(v)):
            return False  # a list of strings, not env('NAME', 'default')
        strength = _MEDIUM
    value = secret.strip()
    if len(value) < (4 if strength >= _STRONG else 8):
        return False
    if op == ":" and data[name_start - 1 : name_start] == b"@":
        return False  # "@secret: description" in a doc comment
    low = value.lower()
    name_low = name.lower()
    if low == name_low or (len(name_low) > 8 and name_low in low):
        return False
    value_key = _ALNUM_ONLY.sub("", low)
    if len(value_key) >= 4 and _ALNUM_ONLY.sub("", name_low).endswith(value_key):
        return False  # CHALLENGE_PASSWORD: "challengePassword", self.token = token
    if strength == _MEDIUM and len(name_low) >= 4 and name_low in low:
        return False
    if not quoted_value and not _plain_value_ok(
        data, e, value, low, name, name_low, op, name_start, quoted
    ):
        return False
    return _plausible(value, strength)


def _plain_value_ok(
    data: bytes,
    e: int,
    value: str,
    low: str,
    name: str,
    name_low: str,
    op: str,
    name_start: int,
    quoted: bool,
) -> bool:
    """Whether an unquoted assignment value is a literal rather than code.

    Rejected: calls and indexes, keywords and type names, attribute paths, annotations
    (``api_key: str | None = None``), prose after the value, a value that repeats the
    name (``self.token = token``) and identifier-shaped words in code. A bare word counts
    in env/ini style (UPPER_CASE name, or the line starts with the assignment) or as a
    plain lowercase YAML value (a password name, a colon, one lowercase word), but not inside a string literal
    (``"passwd:uid"``), where only a generated-looking value counts.
    """
    f = _ruleset().filters
    if _code_follows(data, e) or low in f.code_words or _code_path(value):
        return False
    core = value.lstrip("!~-")
    if core != value and (_code_path(core) or _IDENT.fullmatch(core)):
        return False  # !this.flag, -offset
    rest = data[e : e + 40].lstrip(b" \t")
    if rest[:1] == b"|" or (rest[:1] == b"=" and rest[:2] != b"=="):
        return False  # a type annotation, maybe with a default
    if value.isalpha() and rest[:1].isalpha() and data[e : e + 1] in (b" ", b"\t"):
        return False  # prose: "password: The password for ..."
    if not _IDENT.fullmatch(value) or _random_word(value):
        return True
    if quoted and data[e : e + 1] in (b'"', b"'"):
        return False  # "name:word" inside one string literal
    if _CAMEL.fullmatch(value):
        return False  # a class or type name
    if _line_start_assignment(data, name_start):
        return True
    if op in ("=", ":") and name.upper() == name and any(c.isalpha() for c in name):
        return True
    return op == ":" and value.isalpha() and value.islower()


_SCHEME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def _check_url(
    rule: Rule, spans: Spans, data: bytes, s: int, e: int, secret: str, group: str
) -> bool:
    """A match starting at ``://``: a URL scheme (``https``, ``git+ssh``...) must precede it.

    The scheme is 2-32 characters, starts with a letter and does not follow a letter,
    digit or ``_``; then the value filters of :func:`_check_value` apply.
    """
    ms = spans[0][0]
    j = ms
    while j > 0 and ms - j < 32 and data[j - 1] in _SCHEME_BYTES:
        j -= 1
    if ms - j < 2 or not data[j : j + 1].isalpha() or (j and data[j - 1] in _WORD_BYTES):
        return False
    if _after_placeholder(data, j):
        return False
    return _check_value(rule, spans, data, s, e, secret, group)


_CheckFn = Callable[[Rule, Spans, bytes, int, int, str, str], bool]
_CHECKS: dict[str, _CheckFn] = {
    "value": _check_value,
    "url": _check_url,
    "assignment": _check_assignment,
}


def _accept(rule: Rule, spans: Spans, data: bytes, s: int, e: int, group: str) -> bool:
    """Whether the candidate secret ``data[s:e]`` passes ``rule``'s filters and check."""
    secret = data[s:e].decode("utf-8", "replace")
    n = len(secret)
    if n < rule.min_length or (rule.max_length is not None and n > rule.max_length):
        return False
    if rule.require:
        if "digit" in rule.require and not any(c.isdigit() for c in secret):
            return False
        if "lower" in rule.require and not any(c.islower() for c in secret):
            return False
        if "upper" in rule.require and not any(c.isupper() for c in secret):
            return False
    if rule.entropy is not None and _entropy(secret) < rule.entropy:
        return False
    if rule.stopwords:
        low = secret.lower()
        if any(w in low for w in rule.stopwords):
            return False
    if rule.allowlist and any(a.search(data[s:e]) for a in rule.allowlist):
        return False
    if rule.check is not None:
        return _CHECKS[rule.check](rule, spans, data, s, e, secret, group)
    return True


# --------------------------------------------------------------------------- scanning


def _lowered(data: bytes, held: list[tuple[int, int]]) -> str:
    """``data`` ASCII-lowercased as a latin-1 ``str`` for the automaton, placeholders blanked.

    ``held`` are the placeholder spans of ``data``. Blanking them (same length, NUL bytes)
    keeps placeholder text such as ``vault-unseal-key`` from counting as a keyword on a
    second pass, which keeps redaction idempotent.
    """
    low = data.lower()
    if held:
        buf = bytearray(low)
        for s, e in held:
            buf[s:e] = bytes(e - s)
        low = bytes(buf)
    return low.decode("latin-1")


_PLACEHOLDER_BODY = re.compile(rb"[a-z0-9][a-z0-9-]*(?::[0-9a-f]{8})?")


def _placeholder_spans(data: bytes) -> list[tuple[int, int]]:
    """Byte spans of the placeholders ``[REDACTED:<id>]`` / ``[REDACTED:<id>:<tag>]`` in order."""
    spans: list[tuple[int, int]] = []
    body = len(PLACEHOLDER_PREFIX)
    pos = data.find(PLACEHOLDER_PREFIX)
    while pos >= 0:
        close = data.find(b"]", pos + body, pos + body + 80)
        if close >= 0 and _PLACEHOLDER_BODY.fullmatch(data, pos + body, close):
            spans.append((pos, close + 1))
            pos = data.find(PLACEHOLDER_PREFIX, close + 1)
        else:
            pos = data.find(PLACEHOLDER_PREFIX, pos + 1)
    return spans


def _after_placeholder(data: bytes, pos: int) -> bool:
    """True when ``data[:pos]`` ends with a placeholder (its left context is gone)."""
    return (
        pos > 0
        and data[pos - 1] == 0x5D
        and data.rfind(PLACEHOLDER_PREFIX, max(0, pos - 64), pos) >= 0
    )


def _held(data: bytes) -> list[tuple[int, int]]:
    return _placeholder_spans(data) if PLACEHOLDER_PREFIX in data else []


def _rules_for(data: bytes, pii: bool, held: list[tuple[int, int]]) -> set[int]:
    """Indexes of the rules whose keywords occur in ``data`` (ASCII-lowercased)."""
    kws = _ruleset().keywords(pii)
    todo: set[int] = set()
    for k in {k for _, k in kws.automaton.iter(_lowered(data, held))}:
        todo.update(kws.rules[k])
    return todo


def _scan(
    data: bytes, todo: Iterable[int], held: list[tuple[int, int]]
) -> list[tuple[int, int, int, int]]:
    """Accepted spans of the rules ``todo`` in ``data``: (start, end, rule, match start).

    After an accepted match the search goes on at the end of its secret; after a rejected
    one it goes on one byte after its start, so that a rejected match (say ``TOKEN=``
    followed by a long value) cannot hide a valid one inside it. Rejected matches longer
    than ``_RESCAN`` bytes are skipped whole instead, which keeps the scan linear.
    """
    rs = _ruleset()
    found: list[tuple[int, int, int, int]] = []
    end = len(data)
    starts = [ps for ps, _ in held]
    for i in sorted(todo):
        rule = rs.rules[i]
        pos = 0
        while pos <= end:
            spans = _match_from(rule.regex, data, pos)
            if spans is None:
                break
            ms, me = spans[0]
            s, e, group = ms, me, ""
            for gi, gname in rule.secret_groups:
                if spans[gi][0] >= 0:
                    s, e = spans[gi]
                    group = gname
                    break
            if group == "secret_uq" and _in_query(data, ms):
                # An unquoted value of a URL query parameter ends at the next "&" (which an
                # unquoted value elsewhere may hold): the next parameter is not secret.
                amp = data.find(b"&", s, e)
                if amp > s:
                    e = amp
            ok = (
                e > s
                and not (held and _touches(held, starts, s, e))
                and not (
                    rule.word_start
                    and ms
                    and (data[ms - 1] in _WORD_BYTES or _after_placeholder(data, ms))
                )
                and (rule.before is None or _found(rule.before, data[max(0, ms - _BEFORE) : ms]))
                and _accept(rule, spans, data, s, e, group)
            )
            if ok:
                found.append((s, e, i, ms))
                nxt = e
            elif me - ms <= _RESCAN:
                nxt = ms + 1
            else:
                nxt = me
            pos = max(nxt, ms + 1)
    return found


def _in_query(data: bytes, start: int) -> bool:
    """Whether the parameter name around ``start`` follows a URL query's ``?`` or ``&``."""
    at = start
    while at > 0 and at > start - 64 and data[at - 1] in _NAME_BYTES:
        at -= 1
    return at > 0 and data[at - 1] in b"?&"


def _touches(held: list[tuple[int, int]], starts: list[int], s: int, e: int) -> bool:
    """Whether the span [s, e) overlaps one of the sorted, disjoint placeholder spans."""
    k = bisect.bisect_left(starts, e) - 1
    return k >= 0 and held[k][1] > s


def _candidates(data: bytes, pii: bool) -> list[tuple[int, int, int, int]]:
    """Accepted secret spans in ``data``: (start, end, rule order, match start), bytes."""
    held = _held(data)
    return _scan(data, _rules_for(data, pii, held), held)


def _merge(found: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int]]:
    """Merge overlapping spans; a merged span keeps the earliest rule (lowest order)."""
    merged: list[tuple[int, int, int]] = []
    for s, e, i, _ in sorted(found):
        if merged and s < merged[-1][1]:
            ms, me, mi = merged[-1]
            merged[-1] = (ms, max(me, e), min(mi, i))
        else:
            merged.append((s, e, i))
    return merged


def _placeholder(rule_id: str, secret: bytes, tag_key: bytes | None) -> bytes:
    if tag_key is None:
        return b"[REDACTED:" + rule_id.encode() + b"]"
    tag = hmac.new(tag_key, secret, hashlib.sha256).hexdigest()[:8]
    return b"[REDACTED:" + rule_id.encode() + b":" + tag.encode() + b"]"


def _render(
    data: bytes, found: list[tuple[int, int, int, int]], tag_key: bytes | None
) -> tuple[bytes, dict[str, int]]:
    """``data`` with the (merged) ``found`` spans replaced, and counts by rule id."""
    if not found:
        return data, {}
    rs = _ruleset()
    out: list[bytes] = []
    counts: Counter[str] = Counter()
    pos = 0
    for s, e, i in _merge(found):
        rid = rs.rules[i].id
        out.append(data[pos:s])
        out.append(_placeholder(rid, data[s:e], tag_key))
        counts[rid] += 1
        pos = e
    out.append(data[pos:])
    return b"".join(out), dict(counts)


def _settle(
    data: bytes, found: list[tuple[int, int, int, int]], tag_key: bytes | None, pii: bool
) -> tuple[bytes, dict[str, int]]:
    """Replace ``found`` in ``data``, then rescan until nothing more matches.

    A replacement can change what surrounds another candidate (a name that ran into a
    token, a scheme glued to one), so the output is scanned again while the last pass
    changed something: the result is a fixed point, which is what makes ``redact``
    idempotent. In practice the second pass finds nothing; ``_MAX_PASSES`` bounds it.
    """
    out, counts = _render(data, found, tag_key)
    if not counts:
        return data, {}
    total = Counter(counts)
    for _ in range(_MAX_PASSES - 1):
        found = _candidates(out, pii)
        if not found:
            break
        out, counts = _render(out, found, tag_key)
        total.update(counts)
    return out, dict(total)


def redact_bytes(
    data: bytes, *, tag_key: bytes | None = None, pii: bool = False
) -> tuple[bytes, dict[str, int]]:
    """Redact UTF-8 ``data`` (bytes in, bytes out; invalid UTF-8 is left as it is).

    Returns the redacted bytes and counts by rule id. When nothing matched, the very same
    ``data`` object is returned. Offsets inside are byte offsets; rule thresholds
    (lengths, entropy) are measured on the decoded characters.
    """
    return _settle(data, _candidates(data, pii), tag_key, pii)


def redact_many(
    items: Sequence[bytes], *, tag_key: bytes | None = None, pii: bool = False
) -> list[tuple[bytes, dict[str, int]]]:
    """:func:`redact_bytes` of each item, with one keyword pass over all of them.

    The items are joined with NUL bytes (no keyword contains one) for a single
    Aho-Corasick pass, and every keyword hit is mapped back to its item, so each item is
    judged exactly as ``redact_bytes`` would judge it alone. Returns one (bytes, counts)
    pair per item, in order; unchanged items are returned as the same objects.
    """
    kws = _ruleset().keywords(pii)
    starts: list[int] = []
    pos = 0
    for item in items:
        starts.append(pos)
        pos += len(item) + 1
    joined_bytes = b"\0".join(items)
    joined = _lowered(joined_bytes, _held(joined_bytes))
    hits: dict[int, set[int]] = {}
    for end, k in kws.automaton.iter(joined):
        hits.setdefault(bisect.bisect_right(starts, end) - 1, set()).add(k)
    results: list[tuple[bytes, dict[str, int]]] = [(item, {}) for item in items]
    for idx, ks in hits.items():
        todo: set[int] = set()
        for k in ks:
            todo.update(kws.rules[k])
        found = _scan(items[idx], todo, _held(items[idx]))
        if found:
            results[idx] = _settle(items[idx], found, tag_key, pii)
    return results


def redact(text: str, *, tag_key: bytes | None = None, pii: bool = False) -> Redacted:
    """Replace every secret in ``text`` by a placeholder; see the module docstring.

    ``text`` is any ``str`` (lone surrogates pass through). ``tag_key`` (bytes) adds a
    per-secret HMAC tag to placeholders so equal secrets get equal placeholders within a
    run; ``pii=True`` also redacts email addresses (rule id ``email``). Never raises for
    any input text; raises :class:`~habitus.errors.ConfigError` only if the packaged
    rules file is broken.
    """
    data = text.encode("utf-8", "surrogatepass")
    out, counts = redact_bytes(data, tag_key=tag_key, pii=pii)
    if not counts:
        return Redacted(text, {})
    return Redacted(out.decode("utf-8", "surrogatepass"), counts)


def find_secrets(text: str) -> list[str]:
    """Rule ids (sorted, unique) that still match in ``text``; ``[]`` when clean.

    The fail-closed check before anything is stored, rendered or sent: it is non-empty
    exactly when ``redact(text)`` (without ``pii``) would change the text, and it is
    always empty for the output of ``redact``. Email addresses are not reported.
    """
    found = _candidates(text.encode("utf-8", "surrogatepass"), False)
    rs = _ruleset()
    return sorted({rs.rules[i].id for _, _, i, _ in found})
