"""The rule extractor: offline, deterministic, English and Chinese (some Japanese / Korean).

It finds standing statements in human turns and nothing else:

* explicit standing statements: "always", "never", "from now on", "remember", "every time",
  "by default"; 以后, 今后, 总是, 永远, 每次, 记住, 默认, 一律, 不要再 … (seed 000 step 3:
  one explicit statement qualifies a belief);
* corrections: "no, use X", "not X, Y", "use X instead of Y", "stop doing X", "don't X", and
  every tool-rejection reason (FORMATS.md 1.4: typed by the human, a strong signal);
* stated preferences and conventions: "I prefer …", "I like it when …", "please keep …",
  "we use X here", "commit messages should …";
* the reply language ("reply in Chinese", 用中文回复).

How a sentence is judged, in order: text inside code fences, indented code, pasted log /
error / diff lines and block quotes is dropped, and multi-word quotations are masked (their
words are data, not the user's rule); a sentence is dropped when it is a question (other than
a request "can you always …?"), a hypothetical ("what if we always …", "should we …"),
reported speech ("the docs say never …"), or limited in time ("for now", "this time", "in
this PR"). What is left must be addressed to the agent as a rule: an imperative, "you
should …", "I want you to …", a preference, a team convention, or a generic subject with a
modal ("commit messages should …"). A bare imperative ("use the helper", "make this button
red") is a task, not a habit, unless it corrects the agent (a rejection reason, "no, …",
"don't …", "stop …"), names a tool choice ("use X instead of Y"), or is generic ("… all
function signatures", "… before each commit"). Anything about one particular thing ("this
file", "that helper", ``foo.py``, ``parse_date``) is a task. A statement whose subject is
the code rather than the agent ("make the sidebar always visible", "the retry should always
back off", 它总是失败) is a spec or a description, not a habit.

Grouping keys: ``use:<tool>`` (tool choices, with ``contradicts`` naming the replaced tool),
``avoid:<tool>``, ``language:<name>``, ``ref:<url>`` (references), and for other rules
``do:`` / ``never:`` plus a term signature; within one run, ``do`` / ``never`` statements whose
terms overlap (weighted by how rare each term is among the run's statements) share one key,
so paraphrases become one belief. Project-scoped rules ("in this repo …") are keyed per
project (``…@<project>``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from habitus.extract import Candidate, ExtractResult, TurnView

# ============================================================================ lexicons

#: Developer tools, package managers, libraries and languages whose choice is a habit
#: ("use uv", "pnpm, not npm"). A tool named here is keyed ``use:<tool>`` when chosen.
TOOLS = frozenset(
    """
    uv pip pipx poetry pdm hatch conda mamba pyenv virtualenv venv ruff black isort flake8 pylint
    mypy pyright pytest unittest nose tox nox httpx requests aiohttp urllib3 pathlib os.path
    pydantic attrs dataclasses fastapi flask django sqlalchemy alembic celery numpy pandas polars
    orjson ujson loguru structlog click typer argparse rich jinja2 f-strings sphinx mkdocs ipython
    jupyter npm pnpm yarn bun deno node npx vite webpack esbuild rollup parcel turbopack jest vitest
    mocha jasmine cypress playwright puppeteer eslint prettier biome tsc typescript javascript react
    vue svelte angular next.js nuxt tailwind redux zustand axios lodash moment dayjs date-fns zod
    yup express fastify nestjs prisma drizzle sequelize typeorm go gofmt golangci-lint cargo rustfmt
    clippy rust make cmake bazel ninja just gradle maven sbt rg grep ag ack fd find sed awk jq yq
    curl wget httpie bash zsh fish tmux vim neovim emacs git gh svn docker podman compose kubectl
    helm terraform opentofu pulumi ansible nix brew apt kubernetes minikube postgres mysql sqlite
    redis mongodb psql python java kotlin swift ruby rails php composer dotnet nuget pnpx bunx
    tabs spaces autopep8 yapf pipenv setuptools flit maturin bundler rbenv nvm fnm volta
    """.split()
)
#: Tool names that are also common English words: chosen only after "use", "with", "prefer"
#: and the like, or in a replacement ("make, not just"), never after "always" / "only".
AMBIGUOUS_TOOLS = frozenset("make just find go black rich click express fish node spaces tabs compose apt sed ag ack task sh".split())
#: Tools whose subcommand is the choice ("use git mv", "use docker compose"): keyed with it.
SUBCOMMAND_TOOLS = frozenset("git gh docker podman kubectl cargo go".split())
_SUBCOMMAND = re.compile(
    r"\b(?P<tool>git|gh|docker|podman|kubectl|cargo|go)\s+(?!(?:for|to|instead|rather|over|not|and|or|when|with|in|on|"
    r"please|only|always|here|commands?|repos?|repository|branch(?:es)?|the|a|an)\b)(?P<sub>[a-z][a-z-]{1,15})\b",
    re.I,
)
_TOOL_ALIASES = {
    "ripgrep": "rg",
    "postgresql": "postgres",
    "nextjs": "next.js",
    "python3": "python",
    "tailwindcss": "tailwind",
    "docker-compose": "compose",
    "golang": "go",
    "yarnpkg": "yarn",
    "tab": "tabs",
}

#: Term normalisation: abbreviations and spelling variants map to one term.
_SYNONYMS = {
    "pr": "pr", "prs": "pr", "pull": "pr", "request": "pr", "requests": "pr", "mr": "pr",
    "repo": "repository", "repos": "repository", "codebase": "repository", "project": "repository",
    "deps": "dependency", "dependencies": "dependency", "dependency": "dependency", "packages": "dependency", "package": "dependency",
    "env": "environment", "vars": "variable", "var": "variable", "variables": "variable",
    "msg": "message", "msgs": "message", "messages": "message",
    "tests": "test", "testing": "test", "tested": "test", "suite": "test",
    "commits": "commit", "committing": "commit", "committed": "commit",
    "pushing": "push", "pushes": "push", "pushed": "push", "force-push": "force push", "force-pushing": "force push",
    "master": "main", "emoji": "emoji", "emojis": "emoji", "emoticons": "emoji",
    "annotate": "type hint", "annotations": "type hint", "annotated": "type hint", "type-annotated": "type hint",
    "hints": "hint", "typed": "type",
    "summarize": "summary", "summarise": "summary", "recap": "summary", "summaries": "summary",
    "concise": "short", "brief": "short", "shorter": "short", "terse": "short",
    "answers": "answer", "replies": "answer", "reply": "answer", "responses": "answer", "response": "answer",
    "lockfile": "lockfile", "lockfiles": "lockfile", "lock": "lockfile",
    "credentials": "secret", "secrets": "secret", "keys": "secret", "key": "secret", "api": "api", "hardcode": "hardcode",
    "delete": "delete", "deleting": "delete", "deleted": "delete", "remove": "delete", "removing": "delete",
    "files": "file", "directly": "direct", "straight": "direct",
    "regression": "regression", "bugs": "bug", "fix": "fix", "fixes": "fix", "fixing": "fix",
    "comments": "comment", "commenting": "comment", "functions": "function", "signatures": "signature",
    "timestamps": "timestamp", "datetimes": "datetime",
}
_STOP = frozenset(
    """a an the to of for in on at by with and or but is are be been being it its this that these
    those i me my we our you your he she they them their please always never dont don't do not
    no yes ok okay from now on going forward future every time each whenever by default remember
    make sure should must need needs have has had will would could can just also again really very
    any all some more most only when if then than so as into onto over under about after before
    instead rather use using prefer stop avoid let's lets keep ever want like it's i'm i'd there
    here what why how which who whom first one thing things way something anything everything
    sure thanks thank quote new""".split()
)

#: Chinese (and a few Japanese / Korean) words mapped to the English terms above, so a rule
#: stated in Chinese groups with its English paraphrase.
_ZH_GLOSSARY = (
    ("推送", "push"), ("推到", "push"), ("直接", "direct"), ("push", "push"), ("提交信息", "commit message"), ("提交", "commit"),
    ("测试", "test"), ("注释", "comment"), ("删除", "delete"), ("删", "delete"), ("文件", "file"),
    ("分支", "branch"), ("依赖", "dependency"), ("环境变量", "environment variable"), ("变量", "variable"),
    ("函数", "function"), ("密钥", "secret"), ("凭证", "secret"), ("代码", "code"), ("表情", "emoji"),
    ("类型注解", "type hint"), ("类型", "type"), ("总结", "summary"), ("回答", "answer"), ("回复", "answer"),
    ("简短", "short"), ("简洁", "short"), ("格式化", "format"), ("缩进", "indent"), ("拼音", "pinyin"),
    ("英文", "english"), ("中文", "chinese"), ("命名", "name"), ("变量名", "name"), ("函数名", "name"),
    ("问我", "ask"), ("先问", "ask"), ("强推", "force push"), ("强制推送", "force push"), ("锁文件", "lockfile"),
    ("时间戳", "timestamp"), ("时区", "timezone"), ("文档", "doc"), ("搜索", "search"), ("镜像", "image"),
    ("容器", "container"), ("小而", "small"), ("自动提交", "commit"), ("改动", "change"), ("检查", "review"),
)

# ============================================================================ cleaning

_FENCE = re.compile(r"(```|~~~).*?(\1|\Z)", re.S)
_QUOTED = re.compile(
    r"\"[^\"\n]{3,}\"|“[^”\n]{2,}”|「[^」\n]{2,}」|『[^』\n]{2,}』|‘[^’\n]{3,}’|"
    r"(?<![\w'])'(?=[^'\n]*\s)[^'\n]{3,80}'(?![\w'])"
)
_QUOTE_TOKEN = re.compile(r"QUOTE\d+")
#: A whole injected element (``<system-reminder>…</system-reminder>``, ``<ide_selection>…``).
_INJECTED = re.compile(r"<([a-z][a-z0-9]*[_-][a-z0-9_-]+)\b[^>]*>.*?</\1>", re.S | re.I)
_LOG_LINE = re.compile(
    r"""^\s*(?:
        at\s+\S+\(|File\s+"|Traceback\b|\[\d|\d{4}-\d\d-\d\d[ T]\d|\w*(?:Error|Exception|Warning)\b[:(]|
        \$\s|>>>\s|npm\s+(?:ERR|WARN)|E\s{2,}|(?:error|warning|warn|info|debug|fatal|hint|note|tip)(?:\[\w+\])?:|
        FAILED\b|PASSED\b|ERROR\b|WARN(?:ING)?\b|INFO\b|DEBUG\b|\d+\s*\|\s|[-+]{3}\s|@@\s|\#\s*\d|[│├└┌─]+
    )""",
    re.X | re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；;])\s*|;\s*")
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|[a-z][.)])\s+", re.I)
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_PLACEHOLDER = re.compile(r"\[(?:Image|Pasted text)[^\]]*\]|\[REDACTED:[^\]]+\]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


_SPACE = re.compile(r"\s")
#: A character that is neither a letter/digit nor prose punctuation (``_`` counts as a symbol).
_SYMBOL = re.compile(r"[^\w\s,.'!?;:()`\"/“”‘’，。！？；：、（）-]|_")


def _symbol_ratio(line: str) -> float:
    """Share of non-space characters that are code-like symbols (regex counts: this runs on
    every line of every human turn)."""
    visible = len(line) - len(_SPACE.findall(line))
    if not visible:
        return 0.0
    return len(_SYMBOL.findall(line)) / visible


def _mask_quotes(text: str, quotes: list[str]) -> str:
    def repl(match: re.Match[str]) -> str:
        quotes.append(match.group(0))
        return f" QUOTE{len(quotes) - 1} "

    return _QUOTED.sub(repl, text)


def _clean(text: str, quotes: list[str]) -> str:
    text = _FENCE.sub("\n", text)
    text = _INJECTED.sub("\n", text)
    text = _PLACEHOLDER.sub(" ", text)
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            kept.append("")
            continue
        if line.startswith(("    ", "\t")) or _LOG_LINE.match(line) or _symbol_ratio(stripped) > 0.3 or stripped.startswith(">"):
            kept.append("")
            continue
        kept.append(line)
    text = _mask_quotes("\n".join(kept), quotes)
    return _INLINE_CODE.sub(r"\1", text)


def clean_text(text: str) -> str:
    """Remove what is not the human's own prose: fenced code, indented code, pasted log /
    error / diff lines, block quotes and ``[Image #1]`` style placeholders; multi-word
    quotations become ``QUOTE<n>`` tokens. Returns the remaining text."""
    return _clean(text, [])


_ZH_CLAUSE = re.compile(r"[，,]\s*(?=(?:另外|还有|而且|顺便|对了|补充一下)[，,：:\s])")


def _split(text: str) -> Iterator[str]:
    text = _ZH_CLAUSE.sub("\n", text)
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


def sentences(text: str) -> Iterator[str]:
    """The sentences of cleaned ``text``: split on line breaks, end punctuation and ``;``."""
    yield from _split(clean_text(text))


# ============================================================================ terms

_WORD = re.compile(r"[a-z0-9][a-z0-9.+#_/-]*")


def _stem(word: str) -> str:
    if word in _SYNONYMS or word in TOOLS:
        return word
    if word == "fully":
        return "full"
    for suffix in ("ing", "edly", "ed", "ly", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # committ -> commit, runn -> run
            if suffix == "es" and not stem.endswith(("sh", "ch", "x", "s", "z")):
                stem = word[:-1]  # messages -> message
            return stem
    return word


def terms(text: str) -> frozenset[str]:
    """Content terms of ``text``: lowercase, stemmed, synonyms unified, stopwords removed,
    Chinese words mapped through a small glossary plus CJK bigrams. The signature used to
    group paraphrases."""
    lowered = _QUOTE_TOKEN.sub(" ", text).lower().replace("n't", " not").replace("’", "'")
    out: set[str] = set()
    words: list[str] = []
    for raw in _WORD.findall(lowered):
        word = raw.strip(".-/")
        words.append(word)
        if "-" in word and word not in TOOLS and word not in _SYNONYMS:
            words.extend(word.split("-"))
            words.remove(word)
    for word in words:
        if not word or word in _STOP or len(word) < 2:
            continue
        word = _TOOL_ALIASES.get(word, word)
        mapped = _SYNONYMS.get(word)
        if mapped:
            out.update(mapped.split())
            continue
        stem = _stem(word)
        mapped = _SYNONYMS.get(stem)
        out.update(mapped.split() if mapped else [stem])
    if _CJK.search(lowered):
        rest = lowered
        for zh, en in _ZH_GLOSSARY:
            if zh in lowered:
                out.update(en.split())
                rest = rest.replace(zh, " ")
        for run in _CJK_RUN.findall(_ZH_FUNCTION.sub(" ", rest)):
            out.update(run[i : i + 2] for i in range(len(run) - 1))
    out -= _STOP
    return frozenset(out)


_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")
#: Chinese function and directive words: not content, so no bigram spans them.
_ZH_FUNCTION = re.compile(
    r"以后|今后|往后|从现在开始|从今以后|记住|记得|默认|一律|务必|总是|永远|始终|每次|每一次|一定|尽量|"
    r"不要|不用|不许|禁止|别|请|都|要|用|使用|的|了|吧|呢|我|你|先|再|就|也|在|和|把|给|是|不|一下|之前|之后|前|后"
)
#: Verbs that carry little of a rule's meaning ("put", "add", "make" …): they weigh less.
_LIGHT = frozenset("put add make write keep get have let take give set create include do go".split())


def term_weights(documents: Sequence[frozenset[str]]) -> dict[str, float]:
    """Term weights from how many of ``documents`` hold each term: rare terms weigh more,
    flattened (square root of the inverse document frequency) so one rare modifier does not
    outweigh the shared nouns of two paraphrases."""
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(doc)
    n = max(len(documents), 1)
    return {t: math.sqrt(math.log(1 + n / c)) for t, c in df.items()}


def similarity(a: frozenset[str], b: frozenset[str], weight: Mapping[str, float] | None = None) -> float:
    """How much of two term sets is shared, in [0, 1]: the weight of the shared terms over
    the weight of the larger set, so words one rule has and the other lacks count against
    both. ``weight`` maps a term to its weight (rare terms weigh more; a term without one
    weighs 1); CJK bigrams and light verbs ("put", "make" …) weigh half."""
    if not a or not b:
        return 0.0

    def w(t: str) -> float:
        base = weight.get(t, 1.0) if weight else 1.0
        return base * 0.5 if _CJK.match(t) or t in _LIGHT else base

    # math.fsum: exact sums, the same in any order (a set's order changes with the hash seed,
    # and a tie between two candidates must not be decided by float rounding).
    shared = math.fsum(w(t) for t in a & b)
    return shared / max(math.fsum(w(t) for t in a), math.fsum(w(t) for t in b))


#: Share of both rules' weight their common terms must hold (see :func:`same_rule`).
SAME_RULE_OVERLAP = 0.5


def same_rule(a: frozenset[str], b: frozenset[str], weight: Mapping[str, float] | None = None) -> bool:
    """Whether two rules' term sets say the same thing: at least two shared terms that are not
    CJK bigrams (English words, or the glossary terms of Chinese text, so a Chinese and an
    English paraphrase can meet), holding at least :data:`SAME_RULE_OVERLAP` of each side's
    weight (:func:`similarity`). Two rules on commit messages, one about emojis and one about
    the imperative mood, share "commit" and "message" but not enough of either.

    Polarity is ignored: "don't commit until the tests pass" and "run the tests before
    committing" are one rule (a contradiction in the same words is rare, and a newer explicit
    statement still supersedes through its key)."""
    shared = [t for t in a & b if not _CJK.match(t)]
    if len(shared) < 2:
        return False
    return similarity(a, b, weight) >= SAME_RULE_OVERLAP


# ============================================================================ patterns

_EXPLICIT_EN = re.compile(
    r"\b(?:always|never|from now on|going forward|from here on|in (?:the )?future|every ?time|each time|any ?time you|"
    r"by default|remember(?: to| that)?|don'?t ever|do not ever|at all times|without exception|as a rule|"
    r"for all future|(?:no|not|don'?t|never)\b[^.]{0,40}\bever)\b"
)
_EXPLICIT_CJK = re.compile(
    r"以后|今后|往后|之后都|从现在开始|从今以后|总是|永远|始终|每次|每一次|记住|记得|默认|一律|务必|不要再|别再|"
    r"いつも|常に|今後|これから|必ず|覚えて|絶対|항상|앞으로|절대|기억해|언제나"
)
_NEGATED_EXPLICIT = re.compile(r"\b(?:not|isn'?t|aren'?t|doesn'?t|don'?t|won'?t|wasn'?t)\s+always\b|\balmost (?:always|never)\b")
_HYPOTHETICAL = re.compile(
    r"\b(?:what if|what about|how about|suppose|supposing|imagine|i wonder|wondering|would it|would that|"
    r"should we|shall we|could we|do you think|maybe we|perhaps we|not sure|is it|are you|did you|have you|"
    r"why do|why does|why did|why is|whether|hypothetically|in theory|would be (?:nice|better|cool))\b"
)
_REPORTED = re.compile(
    r"\b(?:says|said|tells|told (?:me|us|him|her|them)|wrote|writes that|keeps? saying|recommends|suggests|mentioned|"
    r"claims|according to)\b|\b(?:docs?|documentation|readme|guide|style ?guide|wiki|spec|manual|article|post|template)"
    r"\s+(?:say|says|said|states?|mentions?|recommends?|suggests?)\b"
)
_TEMPORARY = re.compile(
    r"\b(?:for now|right now|this time|just this once|for the moment|at the moment|temporarily|today|tonight|"
    r"this week|until (?:we|i|the|it)|in this (?:pr|pull request|commit|branch|ticket|task|change|session|run)|"
    r"for this (?:pr|pull request|commit|branch|ticket|task|change|test|run|file|one|session|feature|bug)|"
    r"just for this)\b"
)
_LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|no+(?=\s*[,.!:;—–-])|nope|nah|wrong|hmm+|yes|yeah|yep|well|also|and|but|so|hey|btw|fyi|actually|"
    r"again|sorry|please|pls|plz|thanks?(?: you)?|cool|great|nice|good|perfect|looks good|that works|"
    r"from now on|going forward|from here on|in (?:the )?future|for (?:all|every) (?:future )?(?:sessions?|projects?|tasks?)|"
    r"remember(?: to| that| this)?|(?:in|for|on|across) (?:this|the|our|all) (?:repo(?:sitory)?s?|projects?|codebases?|code base|monorepo|workspace)|"
    r"note that|just|and also|one more thing|important(?:ly)?|as a rule|in general|generally|by default|"
    r"(?:i|we) said|like i said|as i said)\b[\s,.:;!—–-]*)+",
    re.I,
)
#: Set phrases that look like rules and are not ("never mind", "no worries").
_NOT_A_RULE = re.compile(
    r"^(?:never ?mind|no worries|no problem|no thanks|not now|no idea|not sure|no rush|never heard|no need,|"
    r"don'?t worry|don'?t mind|don'?t bother|(?:always|never)\s+(?:seen|been|had|done|gone|heard|got|gotten|thought|knew|\w+ed)\b)"
)
_CORRECTION_START = re.compile(r"^(?:no+|nope|nah|wrong|not like that|that'?s (?:wrong|not right)|again)\b")
_REQUEST = re.compile(r"^(?:can|could|would|will) you (?:please |pls )?", re.I)
_VERBS = (
    "use|keep|write|run|add|put|make|ensure|reply|respond|answer|commit|test|format|name|call|check|ask|follow|"
    "stick (?:to|with)|default to|switch to|go with|remove|delete|include|document|lint|type|prefix|start|end|wrap|"
    "mention|explain|show|list|skip|leave|create|open|push|pull|rebase|merge|squash|sign|pin|install|manage|indent|"
    "sort|read|update|mark|respect|favou?r|prioriti[sz]e|limit|cite|link|log|print|return|handle|raise|throw|catch|"
    "compile|build|deploy|be|speak|talk|communicate|summari[sz]e|comment|translate|reference|refer|annotate|"
    "store|split|target|store|consult|verify|confirm|store|search|prefer|choose|pick|store|let'?s always|let'?s never"
)
_IMPERATIVE = re.compile(rf"^(?:{_VERBS})\b", re.I)
#: "…, so always …": the rule is the clause after "so" (its reason is the one before).
_SO_RULE = re.compile(r"[,;]\s*so\s+(?=(?:always|never|please|don'?t|do not|avoid|" + _VERBS + r")\b)", re.I)
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,;:.])(?=\s|$)")
_PLEASE = re.compile(r"\bplease\b")
_NEGATIVE = re.compile(
    r"^(?:never|don'?t|do not|dont|avoid|stop|quit|no more|no need to|no longer|refrain from|please don'?t)\b", re.I
)
_YOU_SHOULD = re.compile(
    r"^(?:you|we)\s+(?:should|must|need to|have to|shall|are to|ought to)\s+(?:(?:always|never|not)\s+)?|"
    r"^(?:you|we)\s+(?=(?:always|never)\s+(?!(?:had|was|were|did|got|seen|been|knew|thought|\w+ed)\b))|"
    r"^i\s+(?:want|need|'d like|would like|expect)\s+you\s+to\s+|"
    r"^make sure (?:that )?you\s+(?=always\b|never\b)|^remember to\s+",
    re.I,
)
_PREFER = re.compile(
    r"^i\s*(?:'d|would)?\s*(?:really\s+|generally\s+|much\s+)?"
    r"(?:prefer|like it when|like it if|like when|love it when|'d rather|rather|expect|always want|always expect)\s+(?P<rest>.+)$|"
    r"^i\s+want\s+(?P<rest2>(?!to\b).+)$",
    re.I,
)
_CONVENTION = re.compile(
    r"^we\s+(?P<neg>(?:always|never|don'?t|do not|usually|only)\s+)?"
    r"(?P<verb>use|prefer|write|keep|run|follow|stick to|go with|avoid|name|indent|target|deploy|format|lint|test|manage)\b",
    re.I,
)
_GENERIC_SUBJECT = re.compile(
    r"^(?P<np>(?:all|every|each|any|new|our)\s+[\w -]{1,40}?|(?:[a-z][\w-]*\s+){0,3}[a-z][\w-]*s)\s+"
    r"(?:should|must|need to|needs to|have to|has to|are to|ought to|always need|always have to|need|needs)\b",
    re.I,
)
_SPEC = re.compile(
    r"^(?:make|let|have|get|ensure|make sure|keep)\s+(?:that\s+)?(?:the|this|that|these|those|my|our|its|it|[a-z]+[A-Z_]\w*|\w+_\w+)\b",
)
_SPEC_I = re.compile(r"^(?:make sure|ensure)\s+(?:that\s+)?(?:the|this|that|these|those|it)\b", re.I)
_DEICTIC = re.compile(
    r"\b(?:this|these|those|it|its|them|here|above|below|the same|the other|the one|there)\b|"
    r"(?:^|\b(?:use|change|fix|keep|remove|delete|revert|undo|do|try|in|on|at|from|to|for|with|of|like)\s+)that\b|\bthat$|"
    r"这个|那个|这里|那里|上面|下面|它",
    re.I,
)
_TASK_SPECIFIC = re.compile(
    r"[\w/-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|md|json|yaml|yml|toml|html|css|c|h|cpp|sh|sql|txt|lock)\b|"
    r"\bline \d+|\blines? \d+\s*(?:-|to)\s*\d+|#\d+\b|(?<![\w.])/[a-z][\w/{}-]*|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b"
)
_GENERIC_OBJECT = re.compile(
    r"\b(?:all|every|each|any|whenever|every ?time|each time)\b(?!\s+(?:the|this|that|these|those|of (?:the|these|this)))|"
    r"(?<!the )(?<!this )(?<!a )\bnew\s+[a-z]+s\b",
    re.I,
)
#: A subordinate clause ("when any king is in check"): its quantifiers say nothing about
#: whether the instruction itself is standing.
_SUBORDINATE = re.compile(r"\b(?:when|if|even though|although|though|because|since|while|unless|until)\b.*$", re.I)
_PROJECT_SCOPE = re.compile(
    r"\b(?:in|for|on|across) (?:this|the|our) (?:repo(?:sitory)?|project|codebase|code base|monorepo|workspace)\b|"
    r"这个项目|本项目|这个仓库|本仓库|该项目|这个代码库",
    re.I,
)
_SCOPE_PHRASE = re.compile(
    r"\s*\b(?:in|for|on|across) (?:this|the|our) (?:repo(?:sitory)?|project|codebase|code base|monorepo|workspace)\b:?",
    re.I,
)
_LANGUAGE_PREF = re.compile(
    r"\b(?:reply|respond|answer|write|talk|speak|communicate)\b.*\b(?:in|using)\s+"
    r"(english|chinese|mandarin|japanese|korean|german|french|spanish|portuguese|russian|italian)\b|"
    r"(?:用|使用)(中文|英文|英语|日语|日文|韩语)(?:来)?(?:回复|回答|交流|沟通|和我说|跟我说|跟我交流)|"
    r"(?:回复|回答)(?:请|都|一律|尽量)?(?:用|使用)(中文|英文|英语|日语|日文|韩语)|"
    r"(日本語|英語|中国語|韓国語)で(?:返信|回答|答え|話し|書い)|(한국어|영어|중국어|일본어)로\s*(?:답|대답|응답|말|작성)",
    re.I,
)


def _language_name(match: re.Match[str]) -> str:
    """The English name of the language a :data:`_LANGUAGE_PREF` match asks for."""
    word = next(g for g in match.groups() if g)
    return _LANGUAGE_NAMES.get(word.lower(), word.title())
_URL = re.compile(r"https?://[^\s)\]>'\"，。]+")
_REASON = re.compile(
    r"(?:,|\s[-–—])\s*(?:it|that|this|because|since|as|so that|otherwise|which|we|they|it'?s|that'?s)\b.*$|\s+because\b.*$",
    re.I,
)
_CONDITION = re.compile(
    r"^(?P<cond>(?:every ?time|each time|whenever|any ?time|when|before|after|if|once|"
    r"(?:for|on|in|with|after|before) (?:every|each|any|all)\b)[^,]{1,60}),\s*(?P<main>.+)$",
    re.I,
)
#: The words :func:`strip_trailing` drops at the end of a rule, longest first.
_TRAILING_WORDS = ("thank you", "thanks", "please", "thank", "pls", "ok")


def _rstrip_punctuation(text: str) -> str:
    end = len(text)
    while end and (text[end - 1] in ",;:.!" or text[end - 1].isspace()):
        end -= 1
    return text[:end]


def strip_trailing(text: str) -> str:
    r"""What ``re.sub(r"[\s,;:.!]*(?:\b(?:please|pls|thanks?|thank you|ok)\b)?[\s,;:.!]*$",
    "", text, flags=re.I)`` gives, without that regex, which tries every position of the
    text (it was the costliest pattern of the analysis): trailing punctuation and spaces, one
    trailing "please" / "thanks" / "ok" (a whole word, any case), and the punctuation
    before it, are dropped. A test checks both give the same on random texts."""
    text = _rstrip_punctuation(text)
    low = text[-9:].lower()
    for word in _TRAILING_WORDS:
        if low.endswith(word):
            before = len(text) - len(word)
            if before == 0 or not (text[before - 1].isalnum() or text[before - 1] == "_"):
                return _rstrip_punctuation(text[:before])
            break
    return text
_TRAIL_EXPLICIT = re.compile(
    r"[\s,;:—–-]+(?:always|ever|every time|please|from now on|going forward|in (?:the )?future)[\s.!]*$", re.I
)

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
    "日本語": "Japanese",
    "英語": "English",
    "中国語": "Chinese",
    "韓国語": "Korean",
    "한국어": "Korean",
    "영어": "English",
    "중국어": "Chinese",
    "일본어": "Japanese",
    "german": "German",
    "french": "French",
    "spanish": "Spanish",
    "portuguese": "Portuguese",
    "russian": "Russian",
    "italian": "Italian",
}

_INSTEAD = re.compile(
    r"\b(?:use|prefer|choose|write|go with|switch to)\s+(?:the\s+)?(?P<new>[\w.@/+#-]+)\s*,?\s+(?:instead of|rather than|over)\s+(?P<old>[\w.@/+#-]+)",
    re.I,
)
_ZH_POSITIVE = re.compile(r"(?:用|使用|采用|改用|换成|换用|选|选用|喜欢用|都用|一律用|默认用|统一用)\s*(?P<tool>[A-Za-z][\w.+#-]*)")
_ZH_NEGATIVE = re.compile(r"(?:不要用|不要再用|别用|别再用|不用|不许用|禁止用|不准用|不喜欢|而不是|而非|不要|别)\s*(?P<tool>[A-Za-z][\w.+#-]*)")
_ZH_DIRECTIVE = re.compile(
    r"不要|别|不许|禁止|不准|一定要|务必|必须|请|^要|都用|一律|统一|尽量|记住|记得|默认|以后|今后|往后|从现在开始|从今以后|"
    r"先.{0,12}(?:再|给我|让我)|我(?:更)?喜欢|我希望|我想要|我要你|要(?:小|用|写|加|先|跑)|"
    r"ください|しないで|しないこと|するな|使って|使わないで|ようにして|주세요|하세요|하지 마|마세요|해줘|해 줘"
)
_ZH_TEMPORAL = re.compile(r"这次|这一次|暂时|先不|先别|目前|今天|刚才|现在先")
_ZH_SPEC = re.compile(r"^(?:让|使|使得|保证|确保|保持)(?!我)")
_ZH_DESCRIPTION = re.compile(r"^(?:它|这(?!个项目|个仓库|个代码库|个项目里)|那|测试|ci|CI|页面|程序|服务)|都会|总会|老是|从来|从没|会崩溃|失败了|挂了|报错了")
_ZH_QUESTION = re.compile(r"[？?]$|吗$|呢$|要不要|是不是|能不能|怎么样|如何")
_ZH_HYPOTHETICAL = re.compile(r"如果|假如|要是|比如说|他说|她说|文档说|同事说|有人说|据说")
_ZH_LEAD = re.compile(r"^(?:好的|好|嗯|对了|另外|还有|可以|谢谢|不对|不是|对|记住|记得|请|麻烦|然后|而且)[，,、：:\s。]*")


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
    why: str = ""
    negative: bool = False


# ============================================================================ helpers


def _is_tool(token: str) -> str | None:
    word = token.strip(".,;:!?()[]{}'\"`").lower()
    word = _TOOL_ALIASES.get(word, word)
    return word if word in TOOLS else None


_TOKEN = re.compile(r"[A-Za-z][\w.+#-]*")
_NEG_CONTEXT = re.compile(
    r"\b(?:not|never|no|avoid|avoiding|instead of|rather than|over|than|without|don'?t use|do not use|never use|"
    r"stop using|quit using|no more|don'?t|do not)\s+(?:the\s+|using\s+|use\s+)?$",
    re.I,
)
_POS_CONTEXT = re.compile(
    r"\b(?:use|using|prefer|with|via|through|switch(?:ed)? to|stick (?:to|with)|go with|default to|choose|pick|"
    r"want|always|only|favou?r|manage [\w ]{1,30}? with|install [\w ]{1,30}? with)\s+(?:the\s+|a\s+|an\s+)?$|"
    r"\bnot\s+[\w.+#-]+\s*[,;:]?\s*[-–—]?\s*$",
    re.I,
)
_STRONG_POS_CONTEXT = re.compile(r"\b(?:use|using|prefer|with|via|switch(?:ed)? to|stick (?:to|with)|go with|default to)\s+(?:the\s+)?$", re.I)
_AFTER_LEADING = re.compile(r"\s*(?:,|\bnot\b|\bover\b|\binstead\b|\brather\b|\bfor\b|\bonly\b|\bplease\b|$)", re.I)


def tool_choice(body: str) -> tuple[list[str], list[str]]:
    """Tools chosen and tools rejected in an English rule ``body``: ``(positive, negative)``,
    each in order of mention (``"use uv, not pip"`` → ``(["uv"], ["pip"])``). A tool counts
    when the words before it choose it ("use", "prefer", "switch to", "always" …) or reject
    it ("not", "never", "instead of", "over" …), or when it opens the sentence ("uv, not pip")."""
    positive: list[str] = []
    negative: list[str] = []
    stripped = body.strip()
    for match in _TOKEN.finditer(stripped):
        tool = _is_tool(match.group(0))
        if not tool:
            continue
        before = stripped[max(0, match.start() - 40) : match.start()]
        if _NEG_CONTEXT.search(before):
            if tool not in negative:
                negative.append(tool)
        elif tool in AMBIGUOUS_TOOLS and not (_STRONG_POS_CONTEXT.search(before) or (match.start() == 0 and _AFTER_LEADING.match(stripped, match.end()))):
            continue
        elif _POS_CONTEXT.search(before) or (match.start() == 0 and _AFTER_LEADING.match(stripped, match.end())):
            if tool not in positive:
                positive.append(tool)
    return [t for t in positive if t not in negative], negative


def _zh_tool_choice(text: str) -> tuple[list[str], list[str]]:
    negative: list[str] = []
    for match in _ZH_NEGATIVE.finditer(text):
        tool = _is_tool(match.group("tool"))
        if tool and tool not in negative:
            negative.append(tool)
    positive: list[str] = []
    for match in _ZH_POSITIVE.finditer(text):
        tool = _is_tool(match.group("tool"))
        if tool and tool not in positive and tool not in negative:
            positive.append(tool)
    return positive, negative


def _explicit_word(text: str) -> str | None:
    text = text.lower()  # the patterns are lower-case (faster than re.I)
    if _NEGATED_EXPLICIT.search(text):
        return None
    found = _EXPLICIT_EN.search(text)
    return found.group(0).lower() if found else None


def is_explicit(text: str) -> bool:
    """Whether ``text`` states a rule explicitly ("always", "never", "from now on",
    "remember", "every time", "by default", 以后, 记住, 一律 …), outside quotations."""
    cleaned = clean_text(text)
    return bool(_explicit_word(cleaned) or _EXPLICIT_CJK.search(cleaned))


def _capitalise(text: str) -> str:
    text = text.strip().rstrip(",;:—–- ")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!。！":
        text += "。" if _CJK.search(text[-1]) else "."
    return text


def _restore(text: str, quotes: Sequence[str]) -> str:
    return _QUOTE_TOKEN.sub(lambda m: quotes[int(m.group(0)[5:])] if int(m.group(0)[5:]) < len(quotes) else "", text)


def _signature(prefix: str, found: frozenset[str]) -> str:
    words = sorted(t for t in found if not _CJK.match(t))[:8] or sorted(found)[:8]
    return prefix + " ".join(words)


def _url_key(url: str) -> str:
    url = re.sub(r"^https?://(?:www\.)?", "", url.lower()).rstrip("/.,")
    return "ref:" + url


def _tool_text(positive: list[str], negative: list[str], purpose: str) -> str:
    if positive:
        text = f"Use {positive[0]}"
        if purpose:
            text += f" for {purpose}"
        if negative:
            text += f" instead of {negative[0]}"
        return text + "."
    text = f"Don't use {negative[0]}"
    return text + (f" for {purpose}." if purpose else ".")


_PURPOSE = re.compile(r"\bfor\s+((?:[A-Za-z][\w.-]*\s*){1,5})", re.I)


def _purpose(body: str, tools: Sequence[str]) -> str:
    found = _PURPOSE.search(body)
    if not found:
        return ""
    words = found.group(1).strip().split()
    keep: list[str] = []
    for word in words:
        low = word.lower().strip(".,")
        if low in ("not", "instead", "rather", "over", "please", "again", "and", "but", "it", "this", "that", "than", "now", "every", "any") or _is_tool(low) in tools:
            break
        keep.append(word.strip(".,"))
    text = " ".join(keep)
    return "" if _DEICTIC.search(text) or not keep else text


# ============================================================================ analysis


#: Words of which every English sentence :func:`analyse_sentence` accepts holds at least one
#: (or one of :data:`_RULE_PHRASES`), unless it is a tool-rejection reason. Derived from the
#: patterns above, path by path: a rule must pass the "strong" test (explicit words,
#: corrections, the preference / convention / "you should" / negative / generic forms, a tool
#: chosen over another, before / after / whenever, quantifiers, project scope, instead /
#: again), or ask for a reply language. Tool names alone never make a rule: a chosen tool
#: counts only beside a rejected one (``over``, ``than``, ``without`` …) or one of these
#: words. ``tests/test_rules_extractor.py`` checks the claim against every sentence of the
#: evaluation corpora and the real transcripts, and on random rule-shaped sentences.
_RULE_WORDS = frozenset(
    """
    always never ever every everytime each any anytime all whenever before after default
    remember please future forward times exception rule no nope nah wrong not again instead
    prefer favour favor stick stay switch new repo repos repository project projects codebase
    monorepo workspace should must need needs ought shall want love rather expect we don dont
    avoid avoiding stop quit refrain over than without
    """.split()
) | frozenset(_LANGUAGE_NAMES)
_RULE_PHRASES = re.compile(
    r"\bfrom\s+(?:now|here)\b|\b(?:have|has|are)\s+to\b|\bgo\s+with\b|\bcode\s+base\b|"
    r"\blike\s+(?:it|when)\b|\bd\s+like\b|\bwould\s+like\b|\bno+\b"
)
_ASCII_WORD = re.compile(r"[a-z]+")
#: Whether :func:`analyse_sentence` uses the word tests below to skip patterns (the tests
#: switch it off to compare with the full analysis).
PREFILTER = True


def may_state_rule(low: str) -> bool:
    """Cheap test (about 3 µs) on a lower-cased ASCII sentence: ``False`` means
    :func:`analyse_sentence` finds no rule in it (see :data:`_RULE_WORDS`)."""
    return _may_state_rule(low, frozenset(_ASCII_WORD.findall(low)))


def _may_state_rule(low: str, words: frozenset[str]) -> bool:
    return not _RULE_WORDS.isdisjoint(words) or _RULE_PHRASES.search(low) is not None


#: Words one of which every match of a pattern needs (ASCII text): without them the pattern
#: is not run. _REPORTED: its verbs; _PROJECT_SCOPE and _SCOPE_PHRASE: their nouns;
#: _LANGUAGE_PREF (English part): the language names.
_REPORTED_WORDS = frozenset(
    "says said say tells told wrote writes keep keeps recommends recommend suggests suggest "
    "mentioned mention mentions claims according state states".split()
)
_SCOPE_WORDS = frozenset("repo repository project codebase code monorepo workspace".split())
_LANGUAGE_WORDS = frozenset(k for k in _LANGUAGE_NAMES if k.isascii())


def _needs(words: frozenset[str] | None, needed: frozenset[str]) -> bool:
    """Whether a pattern needing one of ``needed`` can match (always, for non-ASCII text)."""
    return words is None or not needed.isdisjoint(words)




def analyse_sentence(
    sentence: str,
    *,
    rejection: bool = False,
    project: str | None = None,
    quotes: Sequence[str] = (),
    depth: int = 0,
) -> Statement | None:
    """Return the standing rule stated by one sentence, or ``None``.

    ``rejection`` marks a tool-rejection reason: the whole reason corrects what the agent was
    doing, so an imperative there is a correction even without "no,". ``project`` (the
    turn's project key) scopes the grouping key of a rule that says "in this repo".
    ``quotes`` are the texts behind ``QUOTE<n>`` tokens, restored in the rule text.
    """
    raw = sentence.strip()
    if len(raw) < 3 or len(raw) > 400:
        return None
    cjk_chars = len(_CJK.findall(raw))
    if cjk_chars >= 2 and cjk_chars >= len(re.findall(r"[A-Za-z][\w.-]*", raw)):
        return _analyse_cjk(raw, rejection=rejection, project=project)
    text = raw.replace("’", "'").replace("‘", "'")
    low = text.lower()
    # The words of an ASCII sentence let whole patterns be skipped when a word each of their
    # matches needs is absent (``None``: not ASCII, every pattern runs).
    words = frozenset(_ASCII_WORD.findall(low)) if PREFILTER and text.isascii() else None
    if not rejection and words is not None and not _may_state_rule(low, words):
        return None  # none of the words every accepted rule holds: skip the costly patterns
    if _HYPOTHETICAL.search(low) or (_needs(words, _REPORTED_WORDS) and _REPORTED.search(low)) or _TEMPORARY.search(low):
        return None
    if _NOT_A_RULE.match(_LEAD_IN.sub("", low)):
        return None
    request = _REQUEST.match(low)
    if text.rstrip().endswith("?") and not request:
        return None
    explicit_word = _explicit_word(low)
    correction = rejection or bool(_CORRECTION_START.match(low))
    scoped = _needs(words, _SCOPE_WORDS)
    scope = "project" if scoped and _PROJECT_SCOPE.search(text) else "global"

    language = _LANGUAGE_PREF.search(text) if _needs(words, _LANGUAGE_WORDS) else None
    if language and (explicit_word or correction or request or re.match(r"^(?:please\s+)?(?:reply|respond|answer|talk|speak|communicate|write to me)\b", _LEAD_IN.sub("", text), re.I)):
        name = _language_name(language)
        return Statement(_capitalise(f"Reply in {name}"), f"language:{name.lower()}", "user", bool(explicit_word), "global", [], frozenset({"language", name.lower()}))

    lead = _LEAD_IN.match(text)
    lead_text = lead.group(0).lower() if lead else ""
    body = text[lead.end():] if lead else text
    if "please" in lead_text and _PLEASE.search(lead_text):
        correction = correction or bool(re.match(r"\s*(?:don'?t|do not|stop|never|avoid|keep|stick|switch)\b", body, re.I))
    if request:
        body = _REQUEST.sub("", body).rstrip(" ?")
    # Space before sentence punctuation only: "commit .env files" keeps its space.
    body = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _SCOPE_PHRASE.sub(" ", body) if scoped else body).strip(" ,")
    body = _LEAD_IN.sub("", body).strip()
    trailing_explicit = bool(_TRAIL_EXPLICIT.search(body))
    body = _TRAIL_EXPLICIT.sub("", body)
    body = strip_trailing(body).strip()
    cond = ""
    conditional = _CONDITION.match(body)
    if conditional and not re.match(r"^if (?:we|you)\s+(?:always|never)\b", conditional.group("cond"), re.I):
        cond, body = conditional.group("cond"), conditional.group("main").strip()
        body = _LEAD_IN.sub("", body).strip()
    why = ""
    so = _SO_RULE.search(body)
    if so:
        why, body = body[: so.start()].strip(), body[so.end():].strip()  # "we target 3.9, so never use match"
    reason = _REASON.search(body)
    if reason and reason.start() > 0:
        why = why or body[reason.start():].lstrip(" ,-–—").strip()
        body = body[: reason.start()].strip()
    body = body.strip().rstrip(".!。")
    if not body or len(body) < 3:
        return None

    # What kind of statement is it?
    form: str | None = None
    negative = False
    rest = body
    preferred = _PREFER.match(rest)
    convention = _CONVENTION.match(rest)
    you = _YOU_SHOULD.match(rest)
    if _SPEC.match(rest) or _SPEC_I.match(rest):
        return None  # "make the sidebar always visible", "ensure the cache is never stale"
    if preferred:
        form, rest = "preference", preferred.group("rest") or preferred.group("rest2")
        rest = re.sub(r"^(?:you\s+to|you|to|it when you|when you)\s+", "", rest, flags=re.I)
    elif convention:
        form = "convention"
        negative = bool(convention.group("neg") and re.match(r"never|don|do not", convention.group("neg"), re.I)) or convention.group("verb").lower() == "avoid"
        rest = rest[convention.start("verb"):]
    elif you:
        form = "you"
        negative = bool(re.search(r"\b(?:never|not)\s*$", you.group(0), re.I))
        rest = rest[you.end():]
    elif _NEGATIVE.match(rest):
        form, negative = "negative", True
    elif re.match(r"^(?:always|never)\b", rest, re.I):
        form = "imperative"
        negative = rest.lower().startswith("never")
    elif _GENERIC_SUBJECT.match(rest) and not re.match(r"^(?:the|this|that|these|those|my|it)\b", rest, re.I):
        form = "generic"
    elif _IMPERATIVE.match(rest):
        form = "imperative"
    elif re.match(r"^no\s+[a-z]", rest, re.I) and len(rest.split()) <= 9:
        form, negative = "negative", True
    else:
        positive, negative_tools = tool_choice(rest)
        pronoun = re.match(r"^(?:we|i|you|it|they|he|she|this|that|these|those|the|my|our|there)\b", rest, re.I)
        if positive and not pronoun and (negative_tools or explicit_word or correction or trailing_explicit) and len(rest.split()) <= 12:
            form = "fragment"
        elif (
            (explicit_word or trailing_explicit)
            and len(rest.split()) <= 8
            and not re.match(r"^(?:the|this|that|these|those|my|it|i|we|you|he|she|they)\b", rest, re.I)
            and not re.search(r"\b(?:is|are|was|were|will be|has|have|had)\b", rest, re.I)
        ):
            form = "fragment"
        elif scope == "project" and len(rest.split()) <= 6 and not re.match(r"^(?:the|this|that|it)\b", rest, re.I):
            form = "fragment"
    if form is None and _URL.search(rest) and (explicit_word or trailing_explicit):
        form = "fragment"  # "remember: the API reference is https://…"
    if form is None:
        tail = re.search(r"[,;:]\s*(?:so|and|but|then|thus|hence)\s+(?P<tail>.{3,})$", body, re.I)
        if tail and depth < 2:
            # "we switched to pnpm, so always use pnpm instead of npm": the rule is the last clause
            return analyse_sentence(tail.group("tail"), rejection=rejection, project=project, quotes=quotes, depth=depth + 1)
        return None
    if re.match(r"^(?:never|don'?t|do not|dont|avoid|stop|quit|no more|no need to|no longer|no)\b", rest, re.I):
        negative = True

    positive_tools, negative_tools = tool_choice(rest if form != "negative" else body)
    if form == "negative" and not positive_tools and not negative_tools:
        used = re.match(r"^(?:please\s+)?(?:never|don'?t|do not|dont|avoid|stop|quit|no more)\s+(?:ever\s+)?(?:use|using)?\s*(?:the\s+)?(?P<tool>[\w.+#-]+)", body, re.I)
        if used and _is_tool(used.group("tool")):
            negative_tools = [_is_tool(used.group("tool")) or ""]
    instead = _INSTEAD.search(rest)
    url = _URL.search(raw)
    explicit = bool(explicit_word) or trailing_explicit

    # Is it a standing rule rather than a task?
    strong = bool(
        explicit
        or correction
        or form in ("preference", "convention", "generic", "you", "negative", "fragment")
        or (positive_tools and (negative_tools or re.search(r"\b(?:stick|default|switch|go with|prefer)\b", rest, re.I)))
        or re.match(r"^(?:prefer|favou?r|default to|stick (?:to|with)|stay away from)\b", rest, re.I)
        or (positive_tools and re.search(r",\s*not\s+\w", rest))
        or re.search(r"\b(?:before|after|whenever) (?:you |we )?(?:\w+ing|commit|push|merge|deploy|release|open|start|finish)\b", rest, re.I)
        or (cond and re.match(r"^(?:every ?time|each time|whenever|any ?time)\b", cond, re.I))
        or _GENERIC_OBJECT.search(_SUBORDINATE.sub(" ", rest))
        or scope == "project"
        or re.search(r"\binstead\s*$|\binstead of (?!\w+ing\b)|\bagain\b", rest, re.I)
    )
    if not strong:
        return None
    checked = rest if form != "convention" else re.sub(r"\bhere\b", " ", rest)
    complement = re.search(
        r",\s*(?:and\s+|then\s+|just\s+)?(?!(?:the|a|an|this|that|these|those|it|its|we|you|i|they|he|she|so|but|or|"
        r"because|since|as|which|who|not|no|please|thanks|ok)\b)(?=[a-z]+\b)",
        checked,
    )
    if complement and form in ("negative", "imperative", "you", "convention", "preference"):
        checked = checked[: complement.start()]  # "don't touch the lockfile, regenerate it": the pronoun is inside the rule
    if url:
        checked = _URL.sub(" ", checked)
    if _DEICTIC.search(checked) and not url:
        return None
    if _TASK_SPECIFIC.search(_URL.sub(" ", checked)):
        return None
    found = terms(body + (" " + cond if cond else ""))
    if not found and not positive_tools and not negative_tools:
        return None

    kind = "project" if scope == "project" else "feedback"
    suffix = f"@{project}" if scope == "project" and project else ""
    shown = body
    if cond:
        cond_text = cond[0].lower() + cond[1:]
        shown = f"{shown} {cond_text}" if not re.match(r"^(?:if|when|once)\b", cond, re.I) else f"{cond_text}, {shown}"
    if form == "you":
        shown = rest + (shown[len(body):] if shown.startswith(body) else "")
        if negative and not re.match(r"^(?:never|don'?t|do not|avoid|stop|no)\b", shown, re.I):
            shown = f"never {shown}"
    if explicit_word in ("always", "never") and not re.match(r"^(?:always|never|don'?t|do not|avoid|stop|no)\b", shown, re.I) and form in ("imperative", "you"):
        shown = f"{explicit_word} {shown}"
    shown = _restore(shown, quotes)

    if url and (explicit or form in ("preference", "you", "imperative", "negative", "generic")):
        return Statement(_capitalise(_restore(body, quotes) + (f" {cond}" if cond and not re.match(r"^(?:if|when)", cond, re.I) else "")), _url_key(url.group(0)) + suffix, "reference", explicit, scope, [], found | {url.group(0).lower()}, why)
    if positive_tools or negative_tools:
        positive_tools = [t for t in positive_tools if t not in negative_tools]
        if positive_tools:
            key = f"use:{positive_tools[0]}"
            contradicts = [f"use:{t}{suffix}" for t in negative_tools]
        else:
            key = f"avoid:{negative_tools[0]}"
            contradicts = [f"use:{negative_tools[0]}{suffix}"]
        purpose = _purpose(body, positive_tools + negative_tools)
        sub = _SUBCOMMAND.search(rest) if positive_tools and positive_tools[0] in SUBCOMMAND_TOOLS else None
        if sub and sub.group("tool").lower() == positive_tools[0]:
            key = f"use:{positive_tools[0]} {sub.group('sub').lower()}"
        text = _tool_text(positive_tools, negative_tools, purpose)
        if form in ("imperative", "negative", "you", "preference", "generic") and all(t in shown.lower() for t in positive_tools[:1] + negative_tools[:1]):
            text = _capitalise(shown)
        return Statement(text, key + suffix, kind, explicit, scope, contradicts, found | set(positive_tools), why, negative=not positive_tools)
    if instead:
        new, old = instead.group("new").lower().strip(".,"), instead.group("old").lower().strip(".,")
        if new not in _STOP and old not in _STOP and new != old and not old.endswith("ing") and not new.endswith("ing"):
            return Statement(_capitalise(shown), f"use:{new}{suffix}", kind, explicit, scope, [f"use:{old}{suffix}"], found, why)
    prefix = "never:" if negative else "do:"
    return Statement(_capitalise(shown), _signature(prefix, found) + suffix, kind, explicit, scope, [], found, why, negative=negative)


def _analyse_cjk(raw: str, *, rejection: bool, project: str | None) -> Statement | None:
    text = raw.strip().rstrip("。.!！")
    if _ZH_QUESTION.search(raw) or _ZH_HYPOTHETICAL.search(text) or _ZH_TEMPORAL.search(text):
        return None
    explicit = bool(_EXPLICIT_CJK.search(text))
    body = text
    for _ in range(3):
        body = _ZH_LEAD.sub("", body)
    language = _LANGUAGE_PREF.search(raw)
    if language:
        name = _language_name(language)
        return Statement(f"Reply in {name}.", f"language:{name.lower()}", "user", explicit, "global", [], frozenset({"language", name.lower()}))
    if _ZH_SPEC.match(body) or _ZH_DESCRIPTION.search(body):
        return None
    if re.search(r"这个(?:文件|函数|按钮|变量|方法|类|页面|接口|模块|报错|问题)|那个|这里|上面|下面|刚才", body) and not _PROJECT_SCOPE.search(body):
        return None
    directive = bool(_ZH_DIRECTIVE.search(text))
    positive, negative = _zh_tool_choice(body)
    if not (directive or rejection or (positive and negative)):
        return None
    scope = "project" if _PROJECT_SCOPE.search(raw) else "global"
    kind = "project" if scope == "project" else "feedback"
    suffix = f"@{project}" if scope == "project" and project else ""
    found = terms(body)
    if positive or negative:
        positive = [t for t in positive if t not in negative]
        if positive:
            key, contradicts = f"use:{positive[0]}", [f"use:{t}{suffix}" for t in negative]
        else:
            key, contradicts = f"avoid:{negative[0]}", [f"use:{negative[0]}{suffix}"]
        return Statement(_capitalise(body), key + suffix, kind, explicit, scope, contradicts, found | set(positive), negative=not positive)
    if not found:
        return None
    negative_rule = bool(re.match(r"^(?:以后|今后|永远|总是|一律|每次|始终)?(?:都)?(?:不要|别|不许|禁止|不准|绝不)", body))
    prefix = "never:" if negative_rule else "do:"
    return Statement(_capitalise(body), _signature(prefix, found) + suffix, kind, explicit, scope, [], found, negative=negative_rule)


def rule_key(text: str, *, project: str | None = None, scope: str = "global") -> tuple[str, list[str], frozenset[str]]:
    """The grouping key, the keys it contradicts and the terms of a rule already known to be
    one (an LLM candidate's text), derived as for the user's own statements so both kinds of
    candidate merge: ``("use:uv", ["use:pip"], terms)`` for "Use uv instead of pip."."""
    suffix = f"@{project}" if scope == "project" and project else ""
    quotes: list[str] = []
    cleaned = _clean(text, quotes)
    for sentence in _split(cleaned):
        statement = analyse_sentence(sentence, rejection=True, project=project, quotes=quotes)
        if statement is not None:
            key = statement.key if statement.key.endswith(suffix) else statement.key + suffix
            return key, statement.contradicts, statement.terms
    found = terms(cleaned)
    if _CJK.search(cleaned):
        positive, negative = _zh_tool_choice(cleaned)
    else:
        positive, negative = tool_choice(cleaned)
    if positive:
        return f"use:{positive[0]}{suffix}", [f"use:{t}{suffix}" for t in negative if t != positive[0]], found
    negative_rule = bool(re.match(r"^\s*(?:never|don'?t|do not|avoid|stop|no)\b|^(?:不要|别|禁止)", cleaned, re.I))
    return _signature("never:" if negative_rule else "do:", found) + suffix, [], found


# ============================================================================ grouping


def cluster_rules(general: Sequence[Candidate], weight: Mapping[str, float]) -> list[list[Candidate]]:
    """The clusters :func:`group` forms, in order: a rule joins the cluster (of its scope)
    with the most similar member among those it is :func:`same_rule` as at least half of the
    members of, else starts one.

    Each cluster keeps how many members hold each distinct term set (a rule repeated in many
    sessions is one set), and an index from terms to clusters skips the clusters that share
    no term with the rule (``same_rule`` needs two shared terms): the same result as
    comparing with every member, without the quadratic cost on a long first scan."""
    clusters: list[list[Candidate]] = []
    term_sets: list[Counter[frozenset[str]]] = []
    by_term: dict[str, set[int]] = {}
    for cand in general:
        scope = cand.key.partition("@")[2]
        terms = cand.terms
        best, best_score = -1, 0.0
        nearby = set().union(*(by_term.get(t, ()) for t in terms)) if terms else set()
        for index in sorted(nearby):
            cluster = clusters[index]
            if cluster[0].key.partition("@")[2] != scope:
                continue
            matched, score = 0, 0.0
            for other, count in term_sets[index].items():
                if same_rule(terms, other, weight):
                    matched += count
                    score = max(score, similarity(terms, other, weight))
            if 2 * matched < len(cluster):
                continue  # it must be a paraphrase of most of the cluster, not of one member
            if score > best_score:
                best, best_score = index, score
        if best < 0:
            best = len(clusters)
            clusters.append([])
            term_sets.append(Counter())
        clusters[best].append(cand)
        term_sets[best][terms] += 1
        for t in terms:
            by_term.setdefault(t, set()).add(best)
    return clusters


def group(candidates: Sequence[Candidate]) -> None:
    """Give paraphrases among ``candidates`` one key, in place.

    ``do`` / ``never`` rules are clustered in order: a rule joins the cluster (of its scope)
    with the most similar member, provided it is :func:`same_rule` as at least half of that
    cluster's members (terms weighted by rarity among these candidates), so one loose match
    cannot chain two different rules together; every member takes the key of the first.
    ``avoid:X`` takes the key of the one ``use:Y`` that replaces X among the same candidates
    ("use Y instead of X"), when there is exactly one, and contradicts ``use:X``."""
    general = [c for c in candidates if c.key.split(":", 1)[0] in ("do", "never")]
    for cluster in cluster_rules(general, term_weights([c.terms for c in general])):
        for cand in cluster[1:]:
            cand.key = cluster[0].key
    replaced: dict[str, set[str]] = {}
    for cand in candidates:
        if cand.key.startswith("use:"):
            for old in cand.contradicts:
                replaced.setdefault(old.replace("use:", "avoid:", 1), set()).add(cand.key)
    for cand in candidates:
        targets = replaced.get(cand.key)
        if targets and len(targets) == 1:
            old_use = cand.key.replace("avoid:", "use:", 1)
            cand.key = next(iter(targets))
            cand.contradicts = sorted(set(cand.contradicts) | {old_use})


class RuleExtractor:
    """The default extractor (see module docstring). Deterministic and offline."""

    name = "rules"
    wants_context = False

    def extract(
        self,
        turns: Sequence[TurnView],
        *,
        dry_run: bool = False,
        analysed: Mapping[str, Sequence[Candidate]] | None = None,
    ) -> ExtractResult:
        """One candidate per rule of each human turn (a rule continued in the next sentence,
        "Don't push to main. Open a PR instead.", is one), then paraphrases in the run share
        a key (:func:`group`); merging across sessions happens in :mod:`habitus.beliefs`.

        ``analysed`` holds :meth:`analyse` results already computed for some turns (by the
        reading workers), by turn id; the other turns are analysed here."""
        result = ExtractResult()
        for turn in turns:
            if turn.role != "user" or turn.kind not in ("human", "rejection"):
                continue
            found = analysed.get(turn.id) if analysed is not None else None
            result.candidates.extend(found if found is not None else self.analyse(turn))
        group(result.candidates)
        return result

    def analyse(self, turn: TurnView) -> list[Candidate]:
        """The candidates of one human turn, before grouping: a pure function of the turn
        (text, kind, project, id), so it can run in any process."""
        candidates: list[Candidate] = []
        seen: dict[str, Candidate] = {}
        previous: Candidate | None = None
        quotes: list[str] = []
        cleaned = _clean(turn.text, quotes)
        for sentence in _split(cleaned):
            statement = analyse_sentence(sentence, rejection=turn.kind == "rejection", project=turn.project, quotes=quotes)
            if statement is None:
                if previous is not None and self._complement(previous, sentence):
                    restored = _capitalise(_restore(sentence, quotes))
                    previous.text = previous.text.rstrip(".。") + "; " + restored[0].lower() + restored[1:]
                    previous.terms = previous.terms | terms(sentence)
                previous = None
                continue
            if previous is not None and self._continues(previous, statement, sentence):
                previous.text = previous.text.rstrip(".。") + "; " + statement.text[0].lower() + statement.text[1:]
                previous.terms = previous.terms | statement.terms
                previous.explicit = previous.explicit or statement.explicit
                continue
            if statement.key in seen:
                previous = seen[statement.key]
                continue
            cand = Candidate(
                text=statement.text,
                type=statement.type,
                key=statement.key,
                evidence=[turn.id],
                explicit=statement.explicit,
                scope=statement.scope,
                why=statement.why[:500],
                contradicts=statement.contradicts,
                extractor=self.name,
                terms=statement.terms,
            )
            seen[statement.key] = cand
            candidates.append(cand)
            previous = cand
        return candidates

    @staticmethod
    def _complement(previous: Candidate, sentence: str) -> bool:
        """Whether a sentence that is no rule by itself completes a negative rule just before
        it ("Don't put API keys in the code; use environment variables.")."""
        body = _LEAD_IN.sub("", sentence.strip()).strip()
        return (
            previous.key.startswith("never:")
            and bool(_IMPERATIVE.match(body))
            and not _DEICTIC.search(body)
            and not _TASK_SPECIFIC.search(body)
            and len(body.split()) <= 12
        )

    @staticmethod
    def _continues(previous: Candidate, statement: Statement, sentence: str) -> bool:
        """Whether ``statement`` completes the rule before it in the same turn: a positive
        clause after a negative one ("Don't push to main. Open a PR instead."), or a short
        fragment ("PRs only.")."""
        if not previous.key.startswith("never:") or not statement.key.startswith("do:") or statement.explicit:
            return False
        return bool(re.search(r"\binstead\b|\bonly\b", sentence, re.I)) or len(sentence.split()) <= 4
