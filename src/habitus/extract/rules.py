"""The rule extractor: offline, deterministic, English and Chinese (some Japanese / Korean).

It finds standing statements in human turns and nothing else:

* explicit standing statements: "always", "never", "from now on", "remember", "every time",
  "by default"; 以后, 今后, 总是, 永远, 每次, 记住, 默认, 一律, 不要再 …  (seed 000 step 3:
  one explicit statement qualifies);
* corrections: "no, use X", "not X, Y", "use X instead of Y", "stop doing X", "don't X";
* stated preferences: "I prefer …", "I like it when …", "please keep …";
* tool-rejection reasons (FORMATS.md 1.4: typed by the human, a strong signal).

A sentence must be addressed to the agent as a rule: it starts (after lead-ins such as "ok,",
"no,", "please", "from now on") with an imperative or "you should / I want you to". Task
instructions about a particular thing ("make this button red", "don't change that file") and
descriptions ("it always crashes") are not rules. Text inside code blocks, quotes, pasted logs
and error messages, and hypotheticals or questions ("what if we always …?") are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from habitus.extract import Candidate, ExtractResult, TurnView

# ----------------------------------------------------------------------------- cleaning
_FENCE = re.compile(r"(```|~~~).*?(\1|\Z)", re.S)
_QUOTED = re.compile(r"\"[^\"\n]{3,}\"|“[^”\n]{3,}”|「[^」\n]{2,}」|『[^』\n]{2,}』|‘[^’\n]{3,}’")
_LOG_LINE = re.compile(
    r"""^\s*(?:
        at\s+\S+\(|File\s+"|Traceback\b|\[\d|\d{4}-\d\d-\d\d[ T]\d|\w*(?:Error|Exception|Warning)\b[:(]|
        \$\s|>>>\s|npm\s+(?:ERR|WARN)|E\s{2,}|error(?:\[\w+\])?:|warning:|fatal:|FAILED\b|PASSED\b|
        \d+\s*\|\s|[-+]{3}\s|@@\s|\#\s*\d|[│├└┌─]+
    )""",
    re.X | re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])")
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|[a-z][.)])\s+", re.I)
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_PLACEHOLDER = re.compile(r"\[(?:Image|Pasted text)[^\]]*\]|\[REDACTED:[^\]]+\]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _symbol_ratio(line: str) -> float:
    chars = [c for c in line if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if not (c.isalnum() or c in ",.'!?;:-()`\"/")) / len(chars)


def clean_text(text: str) -> str:
    """Remove what is not the human's own prose: fenced code, quotations, pasted log / error /
    diff / code lines, and ``[Image #1]`` style placeholders. Returns the remaining text."""
    text = _FENCE.sub("\n", text)
    text = _PLACEHOLDER.sub(" ", text)
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            kept.append("")
            continue
        if line.startswith(("    ", "\t")) or _LOG_LINE.match(line) or _symbol_ratio(stripped) > 0.3:
            kept.append("")
            continue
        if stripped.startswith(">"):
            kept.append("")
            continue
        kept.append(line)
    text = "\n".join(kept)
    text = _QUOTED.sub(" QUOTE ", text)
    return _INLINE_CODE.sub(r"\1", text)


def sentences(text: str) -> Iterator[str]:
    """The sentences of cleaned ``text``: split on blank lines, line breaks and end punctuation."""
    for line in clean_text(text).splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


# ----------------------------------------------------------------------------- patterns
_EXPLICIT_EN = re.compile(
    r"\b(?:always|never|from now on|going forward|in (?:the )?future|every ?time|each time|"
    r"by default|remember(?: to| that)?|don'?t ever|do not ever|at all times|without exception)\b",
    re.I,
)
_EXPLICIT_CJK = re.compile(
    r"以后|今后|往后|之后都|从现在开始|从今以后|总是|永远|始终|每次|每一次|记住|默认|一律|务必|不要再|别再|"
    r"いつも|常に|今後|必ず|覚えて|항상|앞으로|절대|기억해"
)
_NEGATED_EXPLICIT = re.compile(r"\b(?:not|isn'?t|aren'?t|doesn'?t|don'?t|won'?t)\s+always\b|\balmost always\b", re.I)
_HYPOTHETICAL = re.compile(
    r"\b(?:what if|what about|suppose|imagine|if we|if you|would it|would you|could we|should we|"
    r"do you think|is it|are you|did you|have you|why do|why does|why did|whether)\b|如果|假如|要是|是否|吗[？?]?$",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?:says?|said|tells?|told|writes?|wrote|according to|the (?:docs?|readme|guide|spec|article|post))\b"
    r"[^.]{0,40}\b(?:always|never|to)\b",
    re.I,
)
_LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|no+|nope|nah|wrong|hmm+|yes|yeah|well|also|and|but|so|hey|btw|fyi|actually|"
    r"again|sorry|please|pls|plz|thanks?|from now on|going forward|in (?:the )?future|"
    r"for (?:all|every) (?:future )?(?:sessions?|projects?|tasks?)|remember(?: to| that| this)?|"
    r"(?:in|for|on) (?:this|the|our) (?:repo(?:sitory)?|project|codebase|code base|monorepo|workspace)|"
    r"note that|just|and also|one more thing|important(?:ly)?|as a rule|in general|generally|"
    r"(?:i|we) said|like i said)\b\s*[,.:;!—–-]*\s*)+",
    re.I,
)
_IMPERATIVE = re.compile(
    r"^(?:always|never|don'?t|do not|dont|avoid|stop|quit|use|prefer|keep|write|run|add|put|make sure|"
    r"ensure|reply|respond|answer|commit|test|format|name|call|check|ask|follow|stick (?:to|with)|"
    r"default to|switch to|go with|remove|delete|include|document|lint|type|prefix|start|end|wrap|"
    r"mention|explain|show|list|skip|leave|create|open|push|pull|rebase|merge|squash|sign|pin|"
    r"install|manage|indent|sort|read|update|mark|respect|favor|favour|prioriti[sz]e|limit|"
    r"cite|link|log|print|return|handle|raise|throw|catch|compile|build|deploy|be|speak|talk|"
    r"communicate|summari[sz]e|comment|translate|reference|refer|let'?s always|let'?s never|"
    r"only|no more|no)\b",
    re.I,
)
_YOU_SHOULD = re.compile(
    r"^(?:you|we)\s+(?:should|must|need to|have to|always|never|shall)\b\s*|"
    r"^i\s+(?:want|need|'d like|would like)\s+you\s+to\s+|^i\s+(?:always\s+)?(?:want|expect)\s+",
    re.I,
)
_PREFER = re.compile(
    r"^i\s*(?:'d|would)?\s*(?:really\s+)?(?:prefer|like it when|like it if|like when|love it when|want)\s+(.+)$",
    re.I,
)
_DEICTIC = re.compile(
    r"\b(?:this|that|these|those|here|there|above|below|it|its|them|the same)\b|这个|那个|这里|那里|上面|下面|它",
    re.I,
)
_TASK_SPECIFIC = re.compile(
    r"[\w/-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|md|json|yaml|yml|toml|html|css|c|h|cpp|sh)\b|"
    r"\bline \d+|\blines? \d+\s*(?:-|to)\s*\d+|#\d+\b",
    re.I,
)
_PROJECT_SCOPE = re.compile(
    r"\b(?:in|for|on) (?:this|the|our) (?:repo(?:sitory)?|project|codebase|code base|monorepo|workspace)\b|"
    r"这个项目|本项目|这个仓库|本仓库|该项目",
    re.I,
)
_LANGUAGE_PREF = re.compile(
    r"\b(?:reply|respond|answer|write|talk|speak|communicate)\b.*\b(?:in|using)\s+"
    r"(english|chinese|mandarin|japanese|korean|german|french|spanish|portuguese|russian|italian)\b|"
    r"(?:用|使用)(中文|英文|英语|日语|日文|韩语)(?:回复|回答|交流|沟通|和我说|跟我说)",
    re.I,
)
_CORRECTION_START = re.compile(r"^(?:no+|nope|nah|wrong|not like that|that'?s wrong)\b", re.I)
_INSTEAD = re.compile(
    r"(?:^|\b)(?:use\s+)?(?P<new>[\w.@/+#-]+(?:\s+[\w.@/+#-]+)?)\s*,?\s+(?:instead of|rather than|over)\s+(?P<old>[\w.@/+#-]+)",
    re.I,
)
_NOT_X_Y = re.compile(r"\b(?:use\s+)?(?P<new>[\w.@/+#-]+),?\s+not\s+(?P<old>[\w.@/+#-]+)\b", re.I)
_NOT_X_COMMA_Y = re.compile(r"^not\s+(?P<old>[\w.@/+#-]+)\s*[,;]\s*(?:use\s+)?(?P<new>[\w.@/+#-]+)", re.I)
_USE_TARGET = re.compile(
    r"\b(?:use|using|prefer|with|via|through|default to|switch to|stick (?:to|with)|go with)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?P<t>[\w.@/+#-]+)",
    re.I,
)
_ZH_USE = re.compile(r"(?:用|使用|采用|改用|换成)\s*(?P<t>[A-Za-z][\w.@/+#-]*)")
_ZH_NOT_USE = re.compile(r"(?:不要|别|不许|禁止|不准)(?:再)?(?:用|使用)\s*(?P<t>[A-Za-z][\w.@/+#-]*)")
_ZH_INSTEAD = re.compile(
    r"(?:用|使用)\s*(?P<new>[A-Za-z][\w.@/+#-]*)\s*(?:而不是|而非|不要用|别用|代替|替代)\s*(?P<old>[A-Za-z][\w.@/+#-]*)"
)
_ZH_RULE = re.compile(
    r"^(?:以后|今后|往后|从现在开始|从今以后|记住|默认|一律|务必|总是|永远|始终|每次|不要|别|请|不许|禁止|"
    r"一定要|必须|我(?:更)?(?:喜欢|希望你|想要你|要你)|要)"
)
_ZH_QUESTION = re.compile(r"[？?]$|吗$|呢$")

_STOP = frozenset(
    """a an the to of for in on at by with and or but is are be been being it its this that these
    those i me my we our you your he she they them their please always never dont don't do not
    no yes ok okay from now on going forward future every time each whenever by default remember
    make sure should must need have has had will would could can just also again really very
    any all some more most only when if then than so as into onto over under about after before
    instead rather use using prefer stop avoid let's lets keep""".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9.+#_/-]*")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> frozenset[str]:
    """Content words of ``text`` (lowercase, stemmed, stopwords removed) plus CJK bigrams:
    the signature used to group paraphrases."""
    lowered = text.lower().replace("n't", " not").replace("’", "'")
    words = {w.strip(".-/") for w in _WORD.findall(lowered)}
    words = {_stem(w) for w in words if w and w not in _STOP and len(w) > 1}
    cjk = "".join(c for c in lowered if _CJK.match(c))
    bigrams = {cjk[i : i + 2] for i in range(len(cjk) - 1)}
    return frozenset(words | bigrams)


def _clean_target(token: str) -> str:
    return token.strip(".,;:!?()[]{}'\"`").lower()


_GENERIC_TARGETS = frozenset(
    "it this that them these those one ones something anything everything same thing things way "
    "code file files function functions method tests test and or a an the my our your".split()
)


@dataclass(slots=True)
class Statement:
    """One rule found in one sentence of one turn."""

    text: str
    key: str
    type: str
    explicit: bool
    scope: str
    contradicts: list[str]
    terms: frozenset[str]


def _capitalise(text: str) -> str:
    text = text.strip().rstrip(",;:—–- ")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!。！":
        text += "." if not _CJK.search(text[-1]) else "。"
    return text


def _rule_text(body: str, explicit_word: str | None) -> str:
    """The imperative line for a rule whose clause is ``body``."""
    lowered = body.lower()
    if explicit_word in ("always", "never") and not lowered.startswith(("always", "never")):
        if not lowered.startswith(("don't", "do not", "dont", "avoid", "stop")):
            body = f"{explicit_word} {body}"
    return _capitalise(body)


def analyse_sentence(sentence: str, *, rejection: bool = False) -> Statement | None:
    """Return the standing rule stated by one sentence, or ``None``.

    ``rejection`` marks a tool-rejection reason: the whole reason is a correction of what the
    agent was doing, so an imperative there counts as a correction even without "no,".
    """
    raw = sentence.strip()
    if len(raw) < 4 or len(raw) > 400 or "QUOTE" in raw:
        return None
    if _CJK.search(raw) and not re.search(r"[A-Za-z]{4,}\s+[A-Za-z]{4,}\s+[A-Za-z]{3,}", raw):
        return _analyse_cjk(raw, rejection=rejection)
    lowered = raw.lower()
    if _HYPOTHETICAL.search(lowered) or _REPORTED.search(lowered):
        return None
    if raw.endswith("?") and not re.match(r"^(?:can|could|will|would) you (?:please )?(?:always|never)\b", lowered):
        return None
    explicit_match = _EXPLICIT_EN.search(raw)
    if _NEGATED_EXPLICIT.search(raw):
        explicit_match = None
    explicit_word = explicit_match.group(0).lower() if explicit_match else None
    correction = bool(_CORRECTION_START.match(lowered)) or rejection or bool(_NOT_X_COMMA_Y.match(raw))
    if re.match(r"^(?:please|pls)\s+(?:keep|use|avoid|don'?t|do not|stop|prefer|stick)\b", lowered):
        correction = True

    body = _LEAD_IN.sub("", raw).strip()
    body = re.sub(r"^(?:can|could|will|would) you (?:please )?", "", body, flags=re.I)
    preferred = _PREFER.match(body)
    preference = False
    if preferred:
        body = preferred.group(1)
        preference = True
        body = re.sub(r"^(?:you|to)\s+", "", body, flags=re.I)
    else:
        you = _YOU_SHOULD.match(body)
        if you:
            body = body[you.end() :]
            body = re.sub(r"^(?:to\s+)", "", body, flags=re.I)
    body = body.strip().rstrip(".!。")
    if not body:
        return None
    instead = _INSTEAD.search(body) or _NOT_X_COMMA_Y.match(body) or _NOT_X_Y.search(body)
    imperative = bool(_IMPERATIVE.match(body)) or preference or (instead is not None and correction)
    if not imperative:
        return None
    if body.lower() in ("no", "don't", "stop", "no more"):
        return None
    if not explicit_match and not correction and not preference and not instead and not _LANGUAGE_PREF.search(raw):
        # A bare imperative ("use the helper") is a task instruction, unless it negates
        # ("don't …", "stop …", "avoid …"), which is how people correct agents.
        if not re.match(r"^(?:don'?t|do not|dont|avoid|stop|quit|no more|never)\b", body, re.I):
            return None
    if (_DEICTIC.search(body) or _TASK_SPECIFIC.search(body)) and not _PROJECT_SCOPE.search(body):
        # "don't change this file", "use that helper": about the task at hand, not a habit.
        if not explicit_match or _DEICTIC.match(body) or re.search(r"\b(?:this|that|these|those|it)\b", body, re.I):
            return None
    if len(terms(body)) == 0:
        return None

    scope = "project" if _PROJECT_SCOPE.search(raw) else "global"
    kind = "feedback"
    language = _LANGUAGE_PREF.search(raw)
    if language:
        kind = "user"
        name = (language.group(1) or language.group(2) or "").lower()
        return Statement(
            text=_capitalise(f"Reply in {_LANGUAGE_NAMES.get(name, name.title())}"),
            key=f"language:{_LANGUAGE_NAMES.get(name, name).lower()}",
            type="user",
            explicit=bool(explicit_match),
            scope="global",
            contradicts=[],
            terms=frozenset({"language", _LANGUAGE_NAMES.get(name, name).lower()}),
        )
    if re.search(r"https?://", body):
        kind = "reference"
    if scope == "project":
        kind = "project"
    contradicts: list[str] = []
    negative = bool(re.match(r"^(?:don'?t|do not|dont|never|avoid|stop|quit|no more|no)\b", body, re.I))
    if instead:
        new = _clean_target(instead.group("new").split()[-1] if instead.re is _INSTEAD else instead.group("new"))
        old = _clean_target(instead.group("old"))
        if new in _GENERIC_TARGETS or old in _GENERIC_TARGETS or new == old:
            return None
        key = f"use:{new}"
        contradicts = [f"use:{old}"]
        text = body
        if instead.re is _NOT_X_COMMA_Y or not re.match(r"^(?:use|prefer|always|never)\b", text, re.I):
            text = f"use {new} instead of {old}"
        return Statement(_rule_text(text, explicit_word), key, kind, bool(explicit_match), scope, contradicts, terms(body))
    target = _USE_TARGET.search(body)
    if target and not negative:
        name = _clean_target(target.group("t"))
        if name and name not in _GENERIC_TARGETS and not name.isdigit():
            key = f"use:{name}"
            return Statement(_rule_text(body, explicit_word), key, kind, bool(explicit_match), scope, [], terms(body))
    if negative:
        used = re.match(r"^(?:don'?t|do not|dont|never|avoid|stop|quit)\s+(?:ever\s+)?(?:use|using|with)\s+(?:the\s+)?([\w.@/+#-]+)", body, re.I)
        if used:
            name = _clean_target(used.group(1))
            if name and name not in _GENERIC_TARGETS:
                return Statement(_rule_text(body, explicit_word), f"avoid:{name}", kind, bool(explicit_match), scope, [f"use:{name}"], terms(body))
        signature = sorted(terms(body))[:8]
        return Statement(_rule_text(body, explicit_word), "never:" + " ".join(signature), kind, bool(explicit_match), scope, [], terms(body))
    signature = sorted(terms(body))[:8]
    return Statement(_rule_text(body, explicit_word), "do:" + " ".join(signature), kind, bool(explicit_match), scope, [], terms(body))


_LANGUAGE_NAMES = {
    "中文": "Chinese",
    "chinese": "Chinese",
    "mandarin": "Chinese",
    "英文": "English",
    "英语": "English",
    "english": "English",
    "日语": "Japanese",
    "日文": "Japanese",
    "japanese": "Japanese",
    "韩语": "Korean",
    "korean": "Korean",
    "german": "German",
    "french": "French",
    "spanish": "Spanish",
    "portuguese": "Portuguese",
    "russian": "Russian",
    "italian": "Italian",
}


def _analyse_cjk(raw: str, *, rejection: bool) -> Statement | None:
    text = raw.strip().rstrip("。.!！")
    if _ZH_QUESTION.search(raw) or re.search(r"如果|假如|要是|比如说|他说|文档说", text):
        return None
    explicit = bool(_EXPLICIT_CJK.search(text))
    body = re.sub(r"^(?:好的|好|嗯|不对|不是|不(?=[，,])|对了|另外|还有|请|麻烦|记住|记得)[，,、：:\s]*", "", text)
    language = _LANGUAGE_PREF.search(raw)
    if language:
        name = _LANGUAGE_NAMES.get(language.group(2) or "", "Chinese")
        return Statement(f"Reply in {name}.", f"language:{name.lower()}", "user", explicit, "global", [], frozenset({"language", name.lower()}))
    if not (explicit or _ZH_RULE.match(body) or rejection or _ZH_INSTEAD.search(body) or _ZH_NOT_USE.search(body)):
        return None
    if re.search(r"这个(?:文件|函数|按钮|变量|方法|类|页面)|那个|这里|上面|下面", body) and not re.search(r"这个项目|这个仓库", body):
        return None
    if not explicit and not rejection and not re.match(r"^(?:不要|别|不许|禁止|我(?:更)?喜欢|我希望你)", body) and not _ZH_INSTEAD.search(body):
        if not re.match(r"^(?:不对|不是|不)", text):
            return None
    scope = "project" if _PROJECT_SCOPE.search(raw) else "global"
    kind = "project" if scope == "project" else "feedback"
    instead = _ZH_INSTEAD.search(body)
    if instead:
        new, old = instead.group("new").lower(), instead.group("old").lower()
        return Statement(_capitalise(body), f"use:{new}", kind, explicit, scope, [f"use:{old}"], terms(body))
    not_use = _ZH_NOT_USE.search(body)
    if not_use:
        name = not_use.group("t").lower()
        return Statement(_capitalise(body), f"avoid:{name}", kind, explicit, scope, [f"use:{name}"], terms(body))
    use = _ZH_USE.search(body)
    if use:
        return Statement(_capitalise(body), f"use:{use.group('t').lower()}", kind, explicit, scope, [], terms(body))
    signature = sorted(terms(body))[:10]
    if not signature:
        return None
    negative = bool(re.match(r"^(?:以后|今后)?(?:都)?(?:不要|别|不许|禁止|不准)", body))
    prefix = "never:" if negative else "do:"
    return Statement(_capitalise(body), prefix + " ".join(signature), kind, explicit, scope, [], terms(body))


class RuleExtractor:
    """The default extractor (see module docstring). Deterministic and offline."""

    name = "rules"
    wants_context = False

    def extract(self, turns: Sequence[TurnView], *, dry_run: bool = False) -> ExtractResult:
        """One candidate per rule sentence of each human turn; grouping across turns and
        sessions happens in :mod:`habitus.beliefs`."""
        result = ExtractResult()
        for turn in turns:
            if turn.role != "user" or turn.kind not in ("human", "rejection"):
                continue
            seen: set[str] = set()
            for sentence in sentences(turn.text):
                statement = analyse_sentence(sentence, rejection=turn.kind == "rejection")
                if statement is None or statement.key in seen:
                    continue
                seen.add(statement.key)
                result.candidates.append(
                    Candidate(
                        text=statement.text,
                        type=statement.type,
                        key=statement.key,
                        evidence=[turn.id],
                        explicit=statement.explicit,
                        scope=statement.scope,
                        contradicts=statement.contradicts,
                        extractor=self.name,
                        terms=statement.terms,
                    )
                )
        return result
