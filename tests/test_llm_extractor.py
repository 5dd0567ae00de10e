"""The LLM extractor: chunking, validation (reject, never repair), the daily cap and dry runs.

Extractor logic is tested against a fake backend with a queue of answers; the edge is tested
for real: an OpenAI-compatible HTTP server on 127.0.0.1 inside the test, configured as an
``llm`` model through ``extra-openai-models.yaml`` in ``LLM_USER_PATH``, and ``habitus
distill --extractor llm`` run as a subprocess. No network anywhere.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, age, run_cli, run_json

from habitus.errors import LLMError
from habitus.extract import TurnView
from habitus.extract.llm import (
    CHUNK_CHARS,
    SCHEMA,
    SYSTEM_PROMPT,
    LLMExtractor,
    backend_for,
    build_prompt,
    chunk_turns,
    parse_answer,
)
from habitus.model import ReadStats
from habitus.store import Store

sys.path.insert(0, str(REPO / "examples"))
from generate import Session, slug  # noqa: E402

TAGGED = re.compile(r"^\[t:([^\]]+)\] (user|assistant): ")
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class FakeBackend:
    """A backend with a queue of answers; records every prompt it was sent."""

    model_id = "fake-model"

    def __init__(self, answers: list[str | Exception | Callable[[str], str]]) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def complete(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        assert system == SYSTEM_PROMPT and schema == SCHEMA
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer(prompt) if callable(answer) else answer


def view(tid: str, text: str, *, role: str = "user", session: str = "s1", second: int = 0, project: str | None = None) -> TurnView:
    return TurnView(
        id=tid,
        session_id=session,
        role=role,
        kind="human" if role == "user" else "assistant",
        text=text,
        timestamp=f"2026-11-20T10:{second // 60:02d}:{second % 60:02d}Z",
        project=project,
    )


def candidate(text: str, evidence: list[str], **extra: str) -> dict[str, Any]:
    item: dict[str, Any] = {"text": text, "type": "feedback", "scope": "global", "why": "They said so.", "how_to_apply": "In every session.", "evidence": evidence}
    item.update(extra)
    return item


# ----------------------------------------------------------------------------- chunking


def test_chunks_pack_about_24k_chars_tag_every_line_and_split_only_oversized_turns() -> None:
    turns: list[TurnView] = []
    second = 0
    for s in range(6):
        for n in range(12):
            second += 1
            turns.append(view(f"a{s}-{n}", f"Assistant reply {n}. " * 40 + "Should I continue?", role="assistant", session=f"s{s}", second=second))
            second += 1
            body = "\n".join(f"line {k} of request {n} in session {s}: please refactor the parser module" for k in range(n % 5 + 1))
            turns.append(view(f"h{s}-{n}", body * 8, session=f"s{s}", second=second))
    giant = "x" * 30_000 + "\nalways use uv"
    turns.append(view("giant", giant, session="s9", second=9999))
    chunks = chunk_turns(turns)
    assert len(chunks) > 2
    humans = {t.id: t for t in turns if t.role == "user"}
    seen: dict[str, list[int]] = {}
    for n, chunk in enumerate(chunks):
        assert len(chunk.text) <= CHUNK_CHARS
        for line in chunk.text.splitlines():
            found = TAGGED.match(line)
            assert found, line[:80]
            tid, role = found.groups()
            assert tid in chunk.ids
            assert (role == "user") == (tid in humans)
            if role == "user":
                seen.setdefault(tid, [])
                if n not in seen[tid]:
                    seen[tid].append(n)
        assert chunk.human <= set(humans) and chunk.human <= chunk.ids
    assert set(seen) == set(humans)
    assert all(len(where) == 1 for tid, where in seen.items() if tid != "giant")
    assert len(seen["giant"]) >= 2  # longer than a chunk: cut, every piece tagged
    # chunks are filled: all but the giant's pieces and the last hold more than half a chunk
    full = [c for c in chunks if "giant" not in c.ids][:-1]
    assert all(len(c.text) > CHUNK_CHARS // 2 for c in full)


def test_context_is_the_assistant_message_just_before_each_human_turn_cut_short() -> None:
    turns = [
        view("h0", "hello", second=1),
        view("a1", "first answer", role="assistant", second=2),
        view("a2", "word " * 500 + "Shall I use npm?", role="assistant", second=3),
        view("h1", "no, use pnpm", second=4),
        view("a3", "stray context in another session", role="assistant", session="s2", second=5),
    ]
    (chunk,) = chunk_turns(turns)
    lines = chunk.text.splitlines()
    assert lines[0] == "[t:h0] user: hello"
    assert lines[1].startswith("[t:a2] assistant: …") and lines[1].endswith("Shall I use npm?")
    assert len(lines[1]) < 360
    assert lines[2] == "[t:h1] user: no, use pnpm"
    assert "a1" not in chunk.ids and "a3" not in chunk.ids
    assert chunk.human == {"h0", "h1"}


# ----------------------------------------------------------------------------- validation


def test_answers_are_validated_and_rejected_by_reason_never_repaired() -> None:
    turns = [
        view("a1", "Done with pip.", role="assistant", second=1),
        view("h1", "no, always use uv for Python dependencies, not pip", second=2, project="/code/api"),
        view("h2", "make this button red", second=3),
    ]
    (chunk,) = chunk_turns(turns)
    by_id = {t.id: t for t in turns}
    answer = json.dumps(
        {
            "candidates": [
                candidate("Use uv instead of pip for Python dependencies.", ["[t:h1]"]),
                candidate("Make buttons red.", ["zzzz"]),
                candidate("Use pip.", ["a1"]),
                candidate("Use the token " + SECRET + " for pushes.", ["h1"]),
                candidate("", ["h1"]),
                candidate("x" * 600, ["h1"]),
                candidate("Be nice.", ["h1"], type="habit"),
                candidate("Be nice.", ["h1"], scope="team"),
                candidate("Be nice.", []),
                {"text": "no fields"},
                "just a string",
            ]
        }
    )
    accepted, rejected = parse_answer(answer, chunk, by_id)
    assert rejected == {
        "evidence_outside_chunk": 1,
        "non_human_evidence": 1,
        "secret": 1,
        "empty_field": 1,
        "oversized_field": 1,
        "unknown_type": 1,
        "unknown_scope": 1,
        "no_evidence": 1,
        "malformed_candidate": 2,
    }
    (cand,) = accepted
    assert cand.evidence == ["h1"] and cand.extractor == "llm" and cand.explicit
    assert cand.key == "use:uv" and cand.contradicts == ["use:pip"]  # the rule extractor's key: LLM and rule candidates merge
    for bad in ("{not json", '{"items": []}', "[]", "Sure! Here you go: {}"):
        assert parse_answer(bad, chunk, by_id) == ([], {"malformed_json": 1})
    fenced = "```json\n" + json.dumps({"candidates": []}) + "\n```"
    assert parse_answer(fenced, chunk, by_id) == ([], {})


def test_extract_calls_once_per_chunk_and_survives_malformed_output() -> None:
    turns = [view(f"h{n}", f"request {n}: " + "details " * 400, second=n, session=f"s{n % 3}") for n in range(24)]
    turns.append(view("rule", "From now on, never push directly to main.", second=99, session="s0"))
    chunks = chunk_turns(turns)
    assert len(chunks) >= 3
    good = json.dumps({"candidates": [candidate("Never push directly to main.", ["rule"])]})
    backend = FakeBackend([lambda prompt: good if "[t:rule]" in prompt else "{oops"] * len(chunks))
    result = LLMExtractor(model="fake", backend=backend).extract(turns)
    assert result.calls == len(chunks) == len(backend.prompts)
    assert result.input_chars == sum(len(SYSTEM_PROMPT) + len(build_prompt(c)) for c in chunks)
    assert result.rejected == {"malformed_json": len(chunks) - 1}
    assert [c.text for c in result.candidates] == ["Never push directly to main."]
    assert all("<transcript>" in p and "untrusted" in p for p in backend.prompts)


def test_a_failing_call_stops_the_run_with_a_note() -> None:
    turns = [view(f"h{n}", "words " * 3000, second=n) for n in range(3)]
    backend = FakeBackend([LLMError("boom")])
    result = LLMExtractor(model="fake", backend=backend).extract(turns)
    assert result.calls == 1 and result.rejected == {"call_failed": 1}
    assert "failed" in result.notes[0] and "boom" in result.notes[0]


def test_daily_cap_counts_store_events_and_stops_loudly(tmp_path: Path) -> None:
    from habitus.config import Config

    turns = [view(f"h{n}", "words " * 3000, second=n) for n in range(4)]
    assert len(chunk_turns(turns)) == 4
    with Store.open(tmp_path / "cap.db") as store:
        store.add_event("llm_call", actor="earlier", detail={"chars": 1})
        backend = FakeBackend([json.dumps({"candidates": []})] * 4)
        result = LLMExtractor(config=Config(max_calls_per_day=3), model="fake", store=store, backend=backend).extract(turns)
        assert result.calls == 2 and len(backend.prompts) == 2
        assert store.count_events("llm_call", "2000-01-01") == 3
        assert any(n.startswith("LLM DAILY CAP HIT") for n in result.notes)
        assert result.rejected == {} and "2 of 4 chunk(s) were not sent" in result.notes[0]
        detail = store.last_event("llm_call")
        assert detail is not None and detail["actor"] == "fake-model" and detail["detail"]["chars"] > 0


def test_dry_run_counts_without_a_backend_or_the_llm_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llm", None)  # `import llm` would fail
    turns = [view(f"h{n}", "words " * 3000, second=n) for n in range(3)]
    extractor = LLMExtractor(model="no-such-model")
    result = extractor.extract(turns, dry_run=True)
    chunks = chunk_turns(turns)
    assert result.calls == len(chunks) == 3
    assert result.input_chars == sum(len(SYSTEM_PROMPT) + len(build_prompt(c)) for c in chunks)
    assert result.candidates == []
    with pytest.raises(LLMError, match=r"pip install 'habitus\[llm\]'"):
        extractor.extract(turns)


def test_backend_names() -> None:
    assert type(backend_for("claude-cli")).__name__ == "ClaudeCLIBackend"
    assert type(backend_for("claude-cli:sonnet")).__name__ == "ClaudeCLIBackend"
    assert type(backend_for("gpt-4o-mini")).__name__ == "LLMLibraryBackend"
    with pytest.raises(LLMError, match="needs a model"):
        backend_for("")


# ----------------------------------------------------------------------------- the edge: HTTP


class ChatServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint on 127.0.0.1 answering with
    ``script(request body, user message)``; every request body is recorded."""

    def __init__(self, script: Callable[[dict[str, Any], str], str]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.auth.append(self.headers.get("Authorization"))
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
                if isinstance(user, list):
                    user = "".join(part.get("text", "") for part in user)
                content = outer.script(body, user)
                if body.get("stream"):
                    self._stream(body, content)
                    return
                payload = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }
                self._send(json.dumps(payload).encode(), "application/json")

            def _stream(self, body: dict[str, Any], content: str) -> None:
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"], "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]}
                done = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                data = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode()
                self._send(data, "text/event-stream")

            def _send(self, data: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def tagged(user: str) -> list[tuple[str, str, str]]:
    """(id, role, text) of every tagged line of a request."""
    return [(m.group(1), m.group(2), m.group(3)) for m in re.finditer(r"^\[t:([^\]]+)\] (user|assistant): (.*)$", user, re.M)]


FILLER = "The import job reads the CSV export, validates each row against the schema and writes the result to the staging table. "


def write_corpus(home: Path) -> dict[str, Path]:
    """Three Claude sessions, each with a ~15,000-character human turn (so each becomes its own
    chunk) whose marker word tells the scripted server what to answer."""
    cwd = "/home/dev/code/import-job"
    folder = home / ".claude" / "projects" / slug(cwd)
    paths = {}
    for n, marker in enumerate(("ALPHA", "BRAVO", "CHARLIE")):
        s = Session(f"llm-{marker}", cwd, f"2026-11-2{n}T09:00")
        s.user(f"{marker} spec follows. " + FILLER * 130)
        s.say("I read the spec. Shall I start with the validator?")
        if marker == "ALPHA":
            s.user("Always use uv for Python dependencies.")
        if marker == "BRAVO":
            s.user("From now on, run the tests before you commit.")
            s.say("Understood, I will run them first.")
        paths[marker] = s.write(folder)
        age(paths[marker], 3600 + n)
    return paths


def human_ids(path: Path) -> dict[str, str]:
    from habitus.sources.claude_code import read_path

    return {t.text: t.id for t in read_path(path, ReadStats(), everything=False) if t.is_human}


@pytest.fixture
def llm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[dict[str, Any], str], str]], ChatServer]]:
    """Start a scripted server and register it as the llm model ``habitus-test``."""
    servers: list[ChatServer] = []
    for name in ("OPENAI_API_KEY", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    llm_dir = tmp_path / "llm"
    llm_dir.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(llm_dir))

    def start(script: Callable[[dict[str, Any], str], str]) -> ChatServer:
        server = ChatServer(script).__enter__()
        servers.append(server)
        (llm_dir / "extra-openai-models.yaml").write_text(
            "- model_id: habitus-test\n"
            "  model_name: habitus-test-model\n"
            f"  api_base: \"http://127.0.0.1:{server.port}/v1\"\n"
            "  api_key_name: habitus-test\n"
            "  supports_schema: true\n",
            encoding="utf-8",
        )
        (llm_dir / "keys.json").write_text(json.dumps({"habitus-test": "test-key-123"}), encoding="utf-8")
        return server

    yield start
    for server in servers:
        server.__exit__()


def test_distill_with_a_real_openai_compatible_server(isolated_home: Path, llm_env: Callable[..., ChatServer]) -> None:
    paths = write_corpus(isolated_home)
    alpha = human_ids(paths["ALPHA"])
    outside = alpha["Always use uv for Python dependencies."]

    def script(body: dict[str, Any], user: str) -> str:
        assert body["model"] == "habitus-test-model"
        assert body["response_format"]["type"] == "json_schema"  # the schema went through llm
        assert "untrusted data" in body["messages"][0]["content"]
        lines = tagged(user)
        if "ALPHA spec" in user:
            return '{"candidates": [ {"text": "Use uv."'  # malformed: the whole chunk is rejected
        if "CHARLIE spec" in user:
            return json.dumps({"candidates": []})
        rule = next(tid for tid, role, text in lines if role == "user" and "run the tests" in text)
        assistant = next(tid for tid, role, _ in lines if role == "assistant")
        return json.dumps(
            {
                "candidates": [
                    candidate("Run the tests before committing.", [rule], why="Stated as a standing rule.", how_to_apply="Before every commit."),
                    candidate("Validate rows before writing.", [assistant]),
                    candidate("Use uv for Python dependencies.", [outside]),
                    candidate(f"Authenticate with {SECRET}.", [rule]),
                ]
            }
        )

    server = llm_env(script)
    report = run_json("distill", "--extractor", "llm", "--model", "habitus-test")
    assert len(server.requests) == 3 and report["llm_calls"] == 3
    assert server.auth == ["Bearer test-key-123"] * 3  # the key llm keeps for this model
    assert report["llm_input_chars"] > 3 * 15_000
    rejected = report["candidates_rejected"]
    assert rejected == {"malformed_json": 1, "non_human_evidence": 1, "evidence_outside_chunk": 1, "secret": 1}
    items = run_json("candidates", "--status", "all")
    (item,) = items
    assert item["text"] == "Run the tests before committing." and item["status"] == "approved" and item["explicit"]
    assert item["evidence"][0]["excerpt"] == "From now on, run the tests before you commit."
    ledger = (isolated_home.parent / "habitus" / "ledger" / f"{item['slug']}.md").read_text(encoding="utf-8")
    assert "**Why:** Stated as a standing rule." in ledger and "**How to apply:** Before every commit." in ledger
    # the secret reached no file habitus wrote
    for path in Path(isolated_home.parent / "habitus").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()


def test_dry_run_sends_nothing_and_counts(isolated_home: Path, llm_env: Callable[..., ChatServer]) -> None:
    write_corpus(isolated_home)
    server = llm_env(lambda body, user: pytest.fail("a dry run sent a request"))
    report = run_json("distill", "--dry-run", "--extractor", "llm", "--model", "habitus-test")
    assert server.requests == []
    assert report["llm_calls"] == 3 and report["llm_input_chars"] > 3 * 15_000
    out = run_cli("distill", "--dry-run", "--extractor", "llm", "--model", "model-that-does-not-exist").stdout
    assert "3 call(s)" in out and "(would send)" in out
    assert server.requests == []


def test_daily_cap_stops_calls_and_status_reports_it(isolated_home: Path, tmp_path: Path, llm_env: Callable[..., ChatServer]) -> None:
    write_corpus(isolated_home)
    (tmp_path / "config.toml").write_text('extractor = "llm"\nmodel = "habitus-test"\nmax_calls_per_day = 2\n', encoding="utf-8")
    server = llm_env(lambda body, user: json.dumps({"candidates": []}))
    report = run_json("distill")
    assert len(server.requests) == 2 and report["llm_calls"] == 2
    assert any(w.startswith("LLM DAILY CAP HIT") for w in report["warnings"])
    status = run_json("status")
    assert status["llm"]["calls_today"] == 2 and status["llm"]["cap_hit"] is True
    assert "LLM DAILY CAP HIT" in run_cli("status").stdout
    dry = run_json("distill", "--dry-run")
    assert dry["llm_calls"] == 0 and len(server.requests) == 2
    # The turns of the chunk that was not sent wait; with room under the cap (a new day, or a
    # higher cap) the next run sends them, although no transcript changed.
    (tmp_path / "config.toml").write_text('extractor = "llm"\nmodel = "habitus-test"\nmax_calls_per_day = 10\n', encoding="utf-8")
    again = run_json("distill")
    assert again["bytes_read"] == 0 and again["llm_calls"] == 1 and len(server.requests) == 3
    last = run_json("distill")
    assert last["llm_calls"] == 0 and len(server.requests) == 3


def test_unknown_model_is_a_clean_error(isolated_home: Path, llm_env: Callable[..., ChatServer]) -> None:
    write_corpus(isolated_home)
    server = llm_env(lambda body, user: "{}")
    proc = run_cli("distill", "--extractor", "llm", "--model", "no-such-model", check=False)
    assert proc.returncode == 1 and "unknown llm model 'no-such-model'" in proc.stderr
    assert server.requests == []
