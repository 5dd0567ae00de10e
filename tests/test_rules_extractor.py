"""The rule extractor: which sentences are standing rules (English, Chinese, a little
Japanese and Korean), which are tasks, quotes, code, logs, hypotheticals or descriptions; and
paraphrases across sessions becoming one belief through the real BeliefMerger and store."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from habitus.beliefs import BeliefMerger
from habitus.extract import TurnView
from habitus.extract.rules import RuleExtractor, is_explicit, rule_key, same_rule, terms
from habitus.store import Store


def extract(text: str, *, kind: str = "human", role: str = "user", project: str | None = None) -> list[tuple[str, bool]]:
    turn = TurnView(id="t1", session_id="s1", role=role, kind=kind, text=text, project=project)
    return [(c.key, c.explicit) for c in RuleExtractor().extract([turn]).candidates]


def one(text: str, **kw: str) -> tuple[str, bool]:
    found = extract(text, **kw)
    assert len(found) == 1, (text, found)
    return found[0]


# (sentence, expected key or key prefix, explicit)
RULES = [
    ("Always use pnpm.", "use:pnpm", True),
    ("never commit directly to master", "never:", True),
    ("From now on, write tests with pytest.", "use:pytest", True),
    ("Remember that we deploy with Helm.", "use:helm", True),
    ("no, use poetry not pip", "use:poetry", False),
    ("Use httpx instead of requests.", "use:httpx", False),
    ("not black, ruff", "use:ruff", False),
    ("I prefer tabs over spaces.", "use:tabs", False),
    ("stop adding `# type: ignore` comments", "never:", False),
    ("Don't use emojis in commit messages.", "never:", False),
    ("I like it when you show the diff before committing.", "do:", False),
    ("Please keep functions under 50 lines.", "do:", False),
    ("Going forward, answer in Chinese.", "language:chinese", True),
    ("reply in English please", "language:english", False),
    ("You should always run the linter before pushing.", "do:", True),
    ("I want you to always ask before installing new dependencies.", "do:", True),
    ("every time you change the schema, write a migration", "do:", True),
    ("By default, target Python 3.12.", "do:", True),
    ("we never use ORMs here", "never:", True),
    ("Commit messages must follow Conventional Commits.", "do:", False),
    ("Avoid global state.", "never:", False),
    ("ok thanks. btw, never run `git push --force` on shared branches", "never:", True),
    ("Check https://wiki.example.com/style before you name things, every time.", "ref:wiki.example.com/style", True),
    ("Write docstrings for every public function.", "do:", False),
    ("以后都用 pnpm", "use:pnpm", True),
    ("不要用 npm，用 pnpm", "use:pnpm", False),
    ("用 httpx，不要用 requests", "use:httpx", False),
    ("记住：每次提交前先运行 lint", "do:", True),
    ("请用中文回答", "language:chinese", False),
    ("默认使用 TypeScript", "use:typescript", True),
    ("别再用 print 调试了", "never:", True),
    ("以后回复尽量简短", "do:", True),
    ("いつも日本語のコメントを書かないでください", "", True),
    ("항상 테스트를 먼저 실행해 주세요", "", True),
    ("これからは日本語で返信してください", "language:japanese", True),
    ("앞으로 한국어로 답해 주세요", "language:korean", True),
]


@pytest.mark.parametrize(("text", "key", "explicit"), RULES)
def test_standing_rules(text: str, key: str, explicit: bool) -> None:
    found_key, found_explicit = one(text)
    assert found_key.startswith(key), (text, found_key)
    assert found_explicit == explicit, text


NOT_RULES = [
    # tasks, even imperative or said twice
    "make this button red",
    "rename foo to bar",
    "Use the helper in utils.py for this.",
    "use the existing date helper instead of writing a new one",
    "Add a migration for the new column.",
    "can you add a retry here?",
    "please fix all the lint errors in api/routes.py",
    "no, the other one",
    "thanks, looks good",
    "I want to build a chess game where pieces have cooldowns.",
    "Make a red overlay on the king when any king is in check.",
    # limited in time
    "for now, skip the tests",
    "don't run the migrations this time",
    "just for this PR, don't bump the version",
    # questions and hypotheticals
    "what if we always used docker?",
    "should we use pnpm instead?",
    "I wonder if we should never deploy on Fridays.",
    "would it make sense to always squash merge?",
    # descriptions and specs of the code, not of the agent
    "it always crashes on startup",
    "the tests never pass on CI",
    "make sure the modal always closes on escape",
    "the cache should never be stale",
    "parse_date should always return a datetime",
    # quotes and reported speech
    'my colleague said "always use tabs" - is that right?',
    "The README says to always run make setup first.",
    "the style guide says 'never use var', does that apply here?",
    # code, logs, errors
    "why does this fail?\n```python\n# always close the file\nf = open(p)\n```",
    "Traceback (most recent call last):\n  File \"a.py\", line 1\nRuntimeError: never call init twice",
    "npm WARN deprecated: always use the new API\nnpm ERR! code ERESOLVE",
    "what's wrong here:\n\n    # never retry\n    retry(0)\n",
    # Chinese
    "这个按钮改成红色",
    "如果以后都用 docker 会怎样？",
    "它总是报错",
    "这次先不要跑测试",
    "同事说“以后都不要写注释”，你觉得呢？",
    "让侧边栏在手机上也总是显示",
    "帮我把这个函数拆成两个",
]


@pytest.mark.parametrize("text", NOT_RULES)
def test_not_rules(text: str) -> None:
    assert extract(text) == []


def test_assistant_text_and_injected_spans_are_ignored() -> None:
    assert extract("I'll always use tabs from now on.", role="assistant", kind="assistant") == []
    assert extract("<system-reminder>Always respond in JSON.</system-reminder>\nlooks good, commit it") == []


def test_rejection_reasons_are_corrections() -> None:
    assert one("use bun", kind="rejection") == ("use:bun", False)
    assert one("don't delete the fixtures folder, ask first", kind="rejection")[0].startswith("never:")
    assert extract("use bun") == []  # the same words as a bare prompt are a task


def test_project_scope_is_keyed_per_project() -> None:
    key, explicit = one("In this repo, always indent with 2 spaces.", project="/code/a")
    assert key.endswith("@/code/a") and explicit
    assert one("这个项目缩进一律用 tab", project="/code/c") == ("use:tabs@/code/c", True)
    turn = TurnView(id="t", session_id="s", role="user", kind="human", text="In this project, never use match statements.", project="/code/b")
    (cand,) = RuleExtractor().extract([turn]).candidates
    assert cand.scope == "project" and cand.type == "project" and cand.key.endswith("@/code/b")


def test_quoted_examples_do_not_hide_the_rule_and_stay_in_its_text() -> None:
    turn = TurnView(id="t", session_id="s", role="user", kind="human", text="Always write commit messages in the imperative mood, like 'Add cart tests'.")
    (cand,) = RuleExtractor().extract([turn]).candidates
    assert "'Add cart tests'" in cand.text and cand.explicit


def test_a_rule_continued_in_the_next_sentence_is_one_candidate() -> None:
    turn = TurnView(id="t", session_id="s", role="user", kind="human", text="Don't put API keys in the code; use environment variables.")
    (cand,) = RuleExtractor().extract([turn]).candidates
    assert "environment" in cand.terms and cand.key.startswith("never:")


def test_is_explicit_and_rule_key_for_llm_candidates() -> None:
    assert is_explicit("from now on use uv") and is_explicit("以后都用 uv")
    assert not is_explicit('he said "always use tabs"') and not is_explicit("it doesn't always work")
    assert rule_key("Use uv instead of pip for Python dependencies.")[:2] == ("use:uv", ["use:pip"])
    assert rule_key("Run the tests before committing.")[0].startswith("do:")
    assert rule_key("In this repo, indent with tabs.", project="/p", scope="project")[0] == "use:tabs@/p"


def test_same_rule_tells_paraphrases_from_neighbours() -> None:
    assert same_rule(terms("never push directly to main"), terms("don't push straight to main, open a PR"))
    assert same_rule(terms("always run the test suite before committing"), terms("please run the tests before each commit"))
    assert same_rule(terms("以后函数名别用拼音"), terms("变量名不要用拼音"))
    assert not same_rule(terms("don't use emojis in commit messages"), terms("write commit messages in the imperative mood"))
    assert not same_rule(terms("never push to main"), terms("never force push"))


# ----------------------------------------------------------------------------- grouping


def turn_row(tid: str, session: str, line: int, text: str, when: str) -> dict[str, object]:
    return {
        "id": tid, "agent": "claude", "session_id": session, "file_id": None, "path": f"projects/p/{session}.jsonl",
        "line": line, "byte_start": 0, "byte_end": 1, "uuid": None, "timestamp": when, "cwd": "/code/p",
        "project": "/code/p", "kind": "human", "text": text, "text_key": tid, "language": "en", "run_id": "r",
    }


def test_paraphrases_across_sessions_become_one_belief(tmp_path: Path) -> None:
    said = [
        ("u1", "s1", "no, use uv not pip"),
        ("u2", "s2", "always manage deps with uv"),
        ("u3", "s3", "Use uv instead of pip for Python packages."),
        ("p1", "s1", "Never push directly to main."),
        ("p2", "s2", "don't push straight to main, open a PR"),
        ("p3", "s4", "please stop pushing to main directly"),
        ("t1", "s3", "make the health check return the git sha"),
        ("t2", "s3", "make the health check return the git sha"),
        ("n1", "s1", "Always use npm for the frontend."),
        ("n2", "s5", "From now on, use pnpm instead of npm."),
    ]
    rows = [turn_row(tid, sess, n + 1, text, f"2026-11-{10 + n:02d}T10:00:00.000Z") for n, (tid, sess, text) in enumerate(said)]
    views = [TurnView(id=r["id"], session_id=r["session_id"], role="user", kind="human", text=r["text"], timestamp=r["timestamp"], project=r["project"]) for r in rows]  # type: ignore[arg-type]
    candidates = RuleExtractor().extract(views).candidates
    with Store.open(tmp_path / "habitus.db") as store:
        store.add_turns(rows)
        merger = BeliefMerger(store, min_occurrences=2, auto_approve="explicit")
        merger.merge(candidates, store.turns_by_ids(r["id"] for r in rows))
        beliefs = {b["key"]: b for b in store.beliefs()}
        evidence = store.evidence_for(beliefs[k]["id"] for k in beliefs)
    uv = beliefs["use:uv"]
    assert uv["sessions"] == 3 and uv["explicit"] and uv["status"] == "approved"
    assert {e["turn_id"] for e in evidence[uv["id"]]} == {"u1", "u2", "u3"}
    push = [b for b in beliefs.values() if "push" in b["text"].lower()]
    assert len(push) == 1 and push[0]["sessions"] == 3 and push[0]["status"] == "approved"
    assert {e["turn_id"] for e in evidence[push[0]["id"]]} == {"p1", "p2", "p3"}
    assert not [b for b in beliefs.values() if "health" in b["text"]]  # a task said twice is no habit
    assert beliefs["use:npm"]["status"] == "superseded" and beliefs["use:npm"]["superseded_by"] == beliefs["use:pnpm"]["id"]
    assert beliefs["use:pnpm"]["status"] == "approved"
    assert len(beliefs) == 4


def test_paraphrases_in_later_runs_join_the_existing_belief(tmp_path: Path) -> None:
    runs = [
        [("r1", "s1", "Please don't push straight to main, open a PR."), ("x1", "s1", "Never use emojis in commit messages.")],
        [("r2", "s2", "stop pushing to main directly")],
        [("r3", "s3", "Write commit messages in the imperative mood, always.")],
    ]
    with Store.open(tmp_path / "habitus.db") as store:
        for n, run in enumerate(runs):
            rows = [turn_row(tid, sess, 1, text, f"2026-11-1{n}T10:00:00.000Z") for tid, sess, text in run]
            store.add_turns(rows)
            views = [TurnView(id=str(r["id"]), session_id=str(r["session_id"]), role="user", kind="human", text=str(r["text"])) for r in rows]
            merger = BeliefMerger(store, min_occurrences=2, auto_approve="explicit")
            merger.merge(RuleExtractor().extract(views).candidates, store.turns_by_ids(r["id"] for r in rows))
        beliefs = store.beliefs()
        evidence = store.evidence_for(b["id"] for b in beliefs)
    by_turns = sorted(sorted(e["turn_id"] for e in evidence[b["id"]]) for b in beliefs)
    assert by_turns == [["r1", "r2"], ["r3"], ["x1"]]  # the imperative mood is not the emoji rule
    push = next(b for b in beliefs if "r1" in {e["turn_id"] for e in evidence[b["id"]]})
    assert push["sessions"] == 2 and push["status"] == "proposed"


def test_candidates_with_markers_or_cut_out_secrets_are_rejected() -> None:
    from habitus.extract import Candidate
    from habitus.extract.validate import validate

    roles = {"t1": "human"}
    bad_marker = Candidate("Always end HTML files with <!-- END habitus --> as the last line.", "feedback", "k1", ["t1"], True)
    bad_secret = Candidate("Always export OPENAI_API_KEY=[REDACTED:openai-api-key] before tests.", "feedback", "k2", ["t1"], True)
    good = Candidate("Always run the tests before committing.", "feedback", "k3", ["t1"], True)
    accepted, rejected = validate([bad_marker, bad_secret, good], roles)
    assert accepted == [good]
    assert rejected == {"marker_text": 1, "redacted_text": 1}


def test_rule_text_keeps_dotfile_names_and_drops_trailing_from_now_on() -> None:
    from habitus.extract import TurnView
    from habitus.extract.rules import RuleExtractor

    turns = [
        TurnView("a", "s", "user", "human", "Remember: never commit .env files."),
        TurnView("b", "s", "user", "human", "Always run the linter before committing, from now on."),
    ]
    texts = [c.text for c in RuleExtractor().extract(turns).candidates]
    assert texts == ["Never commit .env files.", "Always run the linter before committing."]


# ---------------------------------------------------------------------------- the prefilter
#
# ``may_state_rule`` (and the word tests beside it) let ``analyse_sentence`` skip most
# sentences, and some patterns, before the costly work. They must never change a result:
# checked against the full analysis (``PREFILTER`` off) on every sentence we have, and on
# rule-shaped sentences built from every word in the extractor's patterns.


def _all_sentences(shared_dir: Path | None) -> list[str]:



    texts = [t for t, *_ in RULES] + [t for t, *_ in NOT_RULES]
    if shared_dir is not None:
        from habitus.model import ReadStats
        from habitus.sources.claude_code import read_path as read_claude
        from habitus.sources.codex import read_path as read_codex

        for path in (shared_dir / "transcripts" / "claude").rglob("*.jsonl"):
            texts += [t.text for t in read_claude(path, ReadStats()) if t.kept]
        for path in (shared_dir / "transcripts" / "codex").glob("*.jsonl"):
            texts += [t.text for t in read_codex(path, ReadStats()) if t.kept]
    return texts


def _analyse_all(texts: list[str]) -> list[tuple[str, bool, object]]:
    from habitus.extract import rules

    out = []
    for text in texts:
        quotes: list[str] = []
        for sentence in rules._split(rules._clean(text, quotes)):
            for rejection in (False, True):
                out.append((sentence, rejection, rules.analyse_sentence(sentence, rejection=rejection, quotes=quotes)))
    return out


def test_prefilter_changes_no_result_on_any_known_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import subprocess
    import sys

    from conftest import REPO, SHARED

    from habitus.extract import rules

    texts = _all_sentences(SHARED if SHARED.is_dir() else None)
    for seed in (1, 2):  # the evaluation corpora: every planted habit and trap
        out = tmp_path / f"eval{seed}"
        subprocess.run([sys.executable, str(REPO / "bench" / "make_eval.py"), "--out", str(out), "--seed", str(seed)], check=True, capture_output=True)
        for path in out.rglob("*.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                texts += [s for s in _strings(json.loads(line)) if 3 <= len(s) <= 2000]
    filtered = _analyse_all(texts)
    skipped = sum(1 for sentence, rejection, _ in filtered if not rejection and sentence.isascii() and not rules.may_state_rule(sentence.lower()))
    monkeypatch.setattr(rules, "PREFILTER", False)  # the full analysis
    full = _analyse_all(texts)
    assert len(full) == len(filtered) > 2000
    assert skipped > len(filtered) // 10  # the test exercises the prefilter, not only the slow path
    for (sentence, rejection, got), (_, _, want) in zip(filtered, full, strict=True):
        assert got == want, (sentence, rejection)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


_FILLER = (
    "use run make the this a tests lint code file pnpm npm uv pip git docker ruff pytest commit push "
    "branch main master pr write add fix check it them you're i'm let's ok yes thanks great it's "
    "short reply answer in english chinese to for with of on and but so then tabs spaces readme "
    "docs i you it . , ; : ! ? QUOTE0 https://example.com/x"
).split()
_TOOLS = "pnpm npm uv pip poetry ruff black pytest yarn httpx requests docker podman make just".split()
_VERBS = "use run write prefer keep add commit test format answer reply".split()


def _vocabulary() -> list[str]:
    """Every word written in the rule extractor's patterns (and its inline ``re`` calls),
    plus fillers: independent of the prefilter's own list."""
    import re

    from habitus.extract import rules

    source = Path(rules.__file__).read_text(encoding="utf-8")
    words = set(re.findall(r"[a-z]{2,}", source.split("# ============================================================================ analysis")[0].split("_TOOL_ALIASES")[0]))
    for value in vars(rules).values():
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            words.update(re.findall(r"[a-z]{2,}", value.pattern))
    for inline in re.findall(r"\bre\.(?:search|match|sub)\(\s*r\"([^\"]+)\"", source):
        words.update(re.findall(r"[a-z]{2,}", inline))
    words.update(_FILLER)
    return sorted(words | {"have to", "go with", "like it", "from now on", "would like", "code base", "i'd like", "no"})


_TEMPLATES = (
    "{w} {v} {t}", "{v} {t} {w} {t2}", "{v} {t} {w}", "{w}, {v} {t}", "{p} {w} {v} {t}", "{p} {w} {t}",
    "{t}, {w} {t2}", "{t} {w} {t2}", "{w} {t}", "{p} {v} {w} {t}", "{w} with {t}", "{v} {w} the tests",
    "the readme {w} always {v} {t}", "he {w} we should always {v} {t}", "always {v} {t} {w} this repo",
)


def test_the_prefilter_only_skips_sentences_that_are_no_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every word the analysis might rely on (the prefilter's own list, tools, verbs,
    pronouns, fillers), in rule-shaped sentences ("use pnpm over npm", "we use pytest",
    "uv, not pip"): whenever the prefilter says no, the full analysis says no too. If a word
    the analysis relies on were missing from the list, some of these would be rules that the
    prefilter drops (checked by removing words from the list)."""
    from habitus.extract import rules

    monkeypatch.setattr(rules, "PREFILTER", False)  # the full analysis
    checked = 0
    for w in _vocabulary():
        for template in _TEMPLATES:
            for v, t, t2, p in (("use", "pnpm", "npm", "we"), ("run", "pytest", "unittest", "you"), ("prefer", "uv", "pip", "i")):
                sentence = template.format(w=w, v=v, t=t, t2=t2, p=p)
                for variant in (sentence, sentence.capitalize() + "."):
                    if variant.isascii() and not rules.may_state_rule(variant.lower()):
                        checked += 1
                        assert rules.analyse_sentence(variant) is None, variant
    assert checked > 1000


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_language_detection_takes_the_same_decision_on_ascii_text_without_its_regexes(text: str) -> None:
    """ASCII text skips the CJK and letter regexes; the letter count (and so the decision)
    must be what the regexes give."""
    from habitus.extract import language

    letters = len(language._LETTER.findall(text))
    assert len(text) - len(text.translate(language._NOT_ASCII_LETTERS)) == letters
    if letters < 12:
        assert language.detect(text) is None


_TAIL_PARTS = ["please", "Please", "PLS", "thanks", "thank", "thank you", "Thank You", "ok", "OK", "okay", "xok", "_ok", "use uv", ",", ".", "!", ";", ":", " ", "\t", "\n", "\u00a0", "é", "1ok", "tks"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_TAIL_PARTS), max_size=8))
def test_strip_trailing_is_the_regex_it_replaces(parts: list[str]) -> None:
    import re

    from habitus.extract.rules import strip_trailing

    trailing = re.compile(r"[\s,;:.!]*(?:\b(?:please|pls|thanks?|thank you|ok)\b)?[\s,;:.!]*$", re.I)  # the pattern it replaces
    text = "".join(parts)
    assert strip_trailing(text) == trailing.sub("", text)


def _reference_clusters(general: list, weight: dict) -> list[list]:
    """The clustering as first written: every rule against every member of every cluster."""
    from habitus.extract.rules import same_rule, similarity

    clusters: list[list] = []
    for cand in general:
        scope = cand.key.partition("@")[2]
        best, best_score = None, 0.0
        for cluster in clusters:
            if cluster[0].key.partition("@")[2] != scope:
                continue
            matches = [similarity(cand.terms, other.terms, weight) for other in cluster if same_rule(cand.terms, other.terms, weight)]
            if 2 * len(matches) < len(cluster):
                continue
            score = max(matches)
            if score > best_score:
                best, best_score = cluster, score
        if best is None:
            clusters.append([cand])
        else:
            best.append(cand)
    return clusters


_TERMS = "commit test lint run push branch 提交".split()


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.frozensets(st.sampled_from(_TERMS), min_size=1, max_size=5), st.sampled_from(["do:", "never:"]), st.sampled_from(["", "@/p"])), max_size=40))
def test_rule_clusters_are_those_of_comparing_every_member(specs: list) -> None:
    """The indexed clustering (term sets counted once per cluster, clusters sharing no term
    skipped) forms exactly the clusters of the plain all-pairs version."""
    from habitus.extract import Candidate
    from habitus.extract.rules import cluster_rules, term_weights

    general = [Candidate(text=f"r{i}", type="feedback", key=f"{prefix}{i}{scope}", evidence=[f"t{i}"], terms=terms) for i, (terms, prefix, scope) in enumerate(specs)]
    weight = term_weights([c.terms for c in general])
    got = [[c.key for c in cluster] for cluster in cluster_rules(general, weight)]
    want = [[c.key for c in cluster] for cluster in _reference_clusters(general, weight)]
    assert got == want


def test_merge_stores_evidence_once_and_reopens_a_rejected_belief_only_for_new_explicit_evidence(tmp_path: Path) -> None:
    """Evidence is stored in one insert per merge: a turn given twice for one belief is one
    row; a rejected belief goes back to ``proposed`` when an explicit statement brings
    evidence it did not have, and stays rejected when the same turns come again."""
    from habitus.beliefs import set_status
    from habitus.extract import Candidate

    rows = [turn_row(t, s, 1, "Always use uv for Python packages.", f"2026-11-1{n}T10:00:00.000Z") for n, (t, s) in enumerate([("a", "s1"), ("b", "s2"), ("c", "s3")])]
    rows_by_id = {r["id"]: r for r in rows}

    def cand(*evidence: str, explicit: bool = False) -> Candidate:
        return Candidate(text="Use uv for Python packages.", type="user", key="use:uv", evidence=list(evidence), explicit=explicit)

    with Store.open(tmp_path / "habitus.db") as store:
        store.add_turns(rows)
        merger = BeliefMerger(store, min_occurrences=2, auto_approve="off")
        merger.merge([cand("a", "b"), cand("b")], rows_by_id)
        belief = store.beliefs()[0]
        assert [e["turn_id"] for e in store.evidence_for([belief["id"]])[belief["id"]]] == ["a", "b"]
        assert belief["sessions"] == 2 and belief["status"] == "proposed"
        set_status(store, belief, "rejected", actor="user")
        BeliefMerger(store, min_occurrences=2, auto_approve="off").merge([cand("a", explicit=True)], rows_by_id)
        assert store.beliefs()[0]["status"] == "rejected"  # nothing new: the user's no stands
        BeliefMerger(store, min_occurrences=2, auto_approve="off").merge([cand("c", explicit=True)], rows_by_id)
        again = store.beliefs()[0]
        assert again["status"] == "proposed" and again["sessions"] == 3
