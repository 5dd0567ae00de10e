"""The user's language: detect the language of each human turn, and propose a ``user``
belief ("Reply in Chinese.") when most of a user's turns are in one language other than
English (issue "Extraction that finds real habits"). Detection uses lingua, a well-kept
detector, restricted to common languages so it loads fast; script checks short-circuit it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from habitus.extract import Candidate

_HAN = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]", re.U)

_WORD = re.compile(r"[a-z']+")
#: ``str.translate`` table deleting the ASCII letters (what ``_LETTER`` matches in ASCII).
_NOT_ASCII_LETTERS = str.maketrans("", "", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: Very common English function words: a text where a quarter of the words are these is
#: English without asking the detector (they are rare in the other supported languages).
_ENGLISH = frozenset(
    "the a an and or but to of in on at for with is are was were be it this that these those "
    "i you we they he she my your our can could should would will do does did not don't it's "
    "i'm let's please what how why when if so just also from now always never before after "
    "all have has there then than which only sure into about every".split()
)
#: Function words of the Latin-script languages the detector knows (NAMES), English's above
#: included: a text with fewer than PROSE_WORDS of them is code, a log, a command or a
#: placeholder, not prose whose language says anything about the user.
_FUNCTION_WORDS = _ENGLISH | frozenset(
    # German
    "der die das und ist nicht ein eine einen mit für auf ich wir sie es du bitte immer auch noch "
    "wenn dann aber oder sind hat haben kann muss soll zu dem den von dass wie keine kein nur jetzt alle "
    # French
    "le la les un une des du et est pas ne je tu nous vous il elle que qui pour dans sur avec mais "
    "ou ce cette sont toujours jamais aussi plus merci c'est j'ai au aux en y "
    # Spanish
    "el los las es una del al con por para pero como más muy siempre nunca también este esta yo hay "
    "está son no sí lo se "
    # Portuguese
    "o os um uma de da dos das e é em na nas com não você eu ele ela isso muito mas mais obrigado "
    # Italian
    "gli di della che è non per sono questo questa anche mai più molto grazie perché ma io ci si ho ha".split()
)
PROSE_WORDS = 2
#: Function words of the other languages only: English text with pasted paths, URLs or
#: code (which dilute its share of function words) has none of them.
_OTHER_FUNCTION_WORDS = _FUNCTION_WORDS - _ENGLISH
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NOT_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2000-\u206f]")

#: ISO 639-1 code -> English name used in the belief text.
NAMES = {
    "en": "English",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "pt": "Portuguese",
    "ru": "Russian",
    "it": "Italian",
}

#: Share of a user's classified turns, and the least number of them, needed for the belief.
MIN_SHARE = 0.6
MIN_TURNS = 3


@lru_cache(maxsize=1)
def _detector() -> Any:
    from lingua import Language, LanguageDetectorBuilder

    languages = [getattr(Language, n.upper()) for n in NAMES.values()]
    return LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()


def detect(text: str) -> str | None:
    """ISO 639-1 code of ``text``'s language, or ``None`` when it cannot tell: fewer than 12
    letters (or 3 CJK characters), or Latin-script text with fewer than ``PROSE_WORDS``
    function words (code, logs, commands: no prose). Plain English is recognised by its
    function words; the statistical detector (``lingua``, whose models take about 0.1 s to
    load in each process) is asked only about the rest."""
    if text.isascii():  # no CJK script; letters counted without a regex
        letters = len(text) - len(text.translate(_NOT_ASCII_LETTERS))
    else:
        kana, hangul, han = len(_KANA.findall(text)), len(_HANGUL.findall(text)), len(_HAN.findall(text))
        if kana >= 3:
            return "ja"
        if hangul >= 3:
            return "ko"
        letters = len(_LETTER.findall(text))
        if han >= 3 and han >= 0.3 * letters:
            return "zh"
    if letters < 12:
        return None
    low = text.lower()
    words = _WORD.findall(low)
    english = sum(w in _ENGLISH for w in words)
    if len(words) >= 4 and english >= 0.25 * len(words):
        return "en"  # plainly English: no need for the statistical detector
    if text.isascii() or not _NOT_LATIN.search(text):
        latin = words if text.isascii() else _LATIN_WORD.findall(low)
        other = sum(w in _OTHER_FUNCTION_WORDS for w in latin)
        if english + other < PROSE_WORDS:
            return None  # not prose: nothing to learn about the user's language
        if english >= 3 and not other:
            return "en"  # English prose around a pasted path, URL or log line
    found = _detector().detect_language_of(text)
    if found is None:
        return None
    code = found.iso_code_639_1.name.lower()
    return code if code in NAMES else None


def language_candidate(turns: Sequence[Mapping[str, Any]], *, min_sessions: int) -> Candidate | None:
    """A ``user`` belief about the reply language, or ``None``.

    ``turns`` are stored human turns with ``id``, ``agent``, ``session_id`` and ``language``.
    Proposed when at least ``MIN_SHARE`` of classified turns (and ``MIN_TURNS``) are in one
    non-English language, across at least ``min_sessions`` distinct sessions. Evidence is
    one turn per session, at most 20. :func:`language_candidate_from_counts` gives the same
    answer from counts, loading turns only for the majority language.
    """
    counted = [t for t in turns if t.get("language")]
    counts = Counter(t["language"] for t in counted)
    return language_candidate_from_counts(counts, lambda code: [t for t in counted if t["language"] == code], min_sessions=min_sessions)


def language_candidate_from_counts(
    counts: Mapping[str, int],
    turns_in: Callable[[str], Iterable[Mapping[str, Any]]],
    *,
    min_sessions: int,
) -> Candidate | None:
    """:func:`language_candidate` from ``counts`` (classified human turns by language code)
    and ``turns_in(code)``, the turns of one language (``id``, ``agent``, ``session_id``) in
    store order, called only when that language is the non-English majority: a store of
    any size is then summed by the database, not loaded."""
    total = sum(counts.values())
    if total < MIN_TURNS:
        return None
    code, n = max(counts.items(), key=lambda item: item[1])
    if code == "en" or n / total < MIN_SHARE:
        return None  # MIN_SHARE is over a half: the majority is unique when it qualifies
    per_session: dict[tuple[str, str], str] = {}
    for t in turns_in(code):
        per_session.setdefault((t.get("agent", ""), t["session_id"]), t["id"])
    if len(per_session) < min_sessions:
        return None
    name = NAMES[code]
    return Candidate(
        text=f"Reply in {name}.",
        type="user",
        key=f"language:{name.lower()}",
        evidence=list(per_session.values())[:20],
        explicit=False,
        why=f"Most of your messages ({n} of {total}) are written in {name}.",
        how_to_apply=f"Answer in {name} unless asked otherwise; keep code, identifiers and commands as they are.",
        extractor="language",
        terms=frozenset({"language", name.lower()}),
    )
