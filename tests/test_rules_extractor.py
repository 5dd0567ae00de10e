"""The rule extractor: which sentences are standing rules (English, Chinese, a little
Japanese and Korean), which are tasks, quotes, code, logs, hypotheticals or descriptions; and
paraphrases across sessions becoming one belief through the real BeliefMerger and store."""

from __future__ import annotations

from pathlib import Path

import pytest

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
