"""JSONL line redaction and stream redaction (JSONL and plain text)."""

from __future__ import annotations

import io
import json
import string
from pathlib import Path

import orjson
import pytest

from habitus.redact import jsonl as jsonl_module
from habitus.redact import redact, redact_jsonl_line, redact_stream

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"

ALNUM = string.ascii_letters + string.digits


def token(prefix: str, n: int, shift: int = 0) -> str:
    return prefix + "".join(ALNUM[(i * 11 + shift) % len(ALNUM)] for i in range(n))


GH = token("gh" + "p_", 36)
GH2 = token("gh" + "p_", 36, shift=5)
PW = token("", 14, shift=3)


def test_unchanged_lines_are_byte_identical():
    lines = [
        b'{"type":"user","message":{"content":"hello there"}}\n',
        b'{ "spaced" : [1, 2.50, true, null] ,"u":"caf\\u00e9 \\u001b[31m"}\r\n',
        b'{"password":"x"}',  # key named password, value too short to be a secret
        b'{"text":"max_tokens: 4096 and input_tokens"}\n',
        b"\n",
        b"   \n",
    ]
    for line in lines:
        out, counts = redact_jsonl_line(line)
        assert out == line
        assert counts == {}


def test_changed_line_parses_and_secret_is_gone():
    record = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": f"use {GH} for the api"}]},
        "n": 3,
        "keep": "hello",
    }
    line = json.dumps(record).encode() + b"\n"
    out, counts = redact_jsonl_line(line)
    assert counts == {"github-token": 1}
    assert out.endswith(b"\n") and not out.endswith(b"\n\n")
    parsed = orjson.loads(out)
    assert parsed["message"]["content"][0]["text"] == "use [REDACTED:github-token] for the api"
    assert parsed["n"] == 3 and parsed["keep"] == "hello" and parsed["type"] == "assistant"
    assert GH.encode() not in out


def test_line_endings_are_kept():
    body = json.dumps({"t": GH}).encode()
    assert redact_jsonl_line(body + b"\r\n")[0].endswith(b"\r\n")
    assert not redact_jsonl_line(body)[0].endswith(b"\n")


def test_values_are_redacted_but_keys_are_not():
    line = json.dumps({GH: "value", "v": GH2}).encode()
    out, counts = redact_jsonl_line(line)
    parsed = orjson.loads(out)
    assert GH in parsed
    assert parsed["v"] == "[REDACTED:github-token]"
    assert counts == {"github-token": 1}


def test_counts_by_rule_across_values():
    record = {
        "a": f"DB_PASSWORD={PW}",
        "b": [GH, {"c": f"postgres://app:{PW}@db/x"}],
        "d": f"export OPENAI_API_KEY={token('sk-' + 'proj-', 60)}",
    }
    out, counts = redact_jsonl_line(json.dumps(record).encode())
    assert counts == {
        "secret-assignment": 1,
        "github-token": 1,
        "db-connection-string": 1,
        "openai-api-key": 1,
    }
    parsed = orjson.loads(out)
    assert parsed["b"][1]["c"] == "postgres://app:[REDACTED:db-connection-string]@db/x"


def test_each_value_is_redacted_as_redact_would():
    values = [f"token: {GH}", "plain words", f"machine h login u password {PW}", "x" * 5]
    out, _ = redact_jsonl_line(json.dumps(values).encode())
    assert orjson.loads(out) == [redact(v).text for v in values]


def test_top_level_string_line():
    out, counts = redact_jsonl_line(json.dumps(f"see {GH}").encode() + b"\n")
    assert orjson.loads(out) == "see [REDACTED:github-token]"
    assert counts == {"github-token": 1}


def test_broken_line_is_redacted_as_text():
    line = b'{"text": "unterminated ' + GH.encode() + b"\n"
    out, counts = redact_jsonl_line(line)
    assert out == b'{"text": "unterminated [REDACTED:github-token]\n'
    assert counts == {"github-token": 1}
    surrogate = b'{"t": "\\ud800 ' + GH.encode() + b'"}'
    out, counts = redact_jsonl_line(surrogate)
    assert GH.encode() not in out and counts == {"github-token": 1}


def test_tag_key_in_jsonl():
    line = json.dumps({"a": GH, "b": f"again {GH}"}).encode()
    out, _ = redact_jsonl_line(line, tag_key=b"k")
    parsed = orjson.loads(out)
    tag = parsed["a"]
    assert tag.startswith("[REDACTED:github-token:") and parsed["b"] == f"again {tag}"


def test_pii_in_jsonl():
    line = json.dumps({"t": "mail jane.doe@example.org"}).encode()
    assert redact_jsonl_line(line)[0] == line
    assert b"[REDACTED:email]" in redact_jsonl_line(line, pii=True)[0]


def test_stream_autodetects_jsonl():
    src = io.BytesIO(
        b"\n"
        + json.dumps({"t": "hi"}).encode()
        + b"\n"
        + json.dumps({"t": GH}).encode()
        + b"\n"
        + b"not json "
        + GH2.encode()
        + b"\n"
    )
    dst = io.BytesIO()
    counts = redact_stream(src, dst)
    lines = dst.getvalue().split(b"\n")
    assert lines[0] == b"" and lines[1] == json.dumps({"t": "hi"}).encode()
    assert orjson.loads(lines[2]) == {"t": "[REDACTED:github-token]"}
    assert lines[3] == b"not json [REDACTED:github-token]"
    assert counts == {"github-token": 2}


def test_stream_plain_text_keeps_bytes_and_multiline_keys():
    body = "\n".join(token("", 64, shift=i) for i in range(5))
    text = (
        "first line\n"
        f"key follows\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
        f"password = '{PW}'\n"
    ).encode() + b"bad utf8 \xff\xfe kept\r\n"
    dst = io.BytesIO()
    counts = redact_stream(io.BytesIO(text), dst)
    out = dst.getvalue()
    assert counts == {"private-key": 1, "secret-assignment": 1}
    assert out.startswith(b"first line\nkey follows\n[REDACTED:private-key]\n")
    assert b"bad utf8 \xff\xfe kept\r\n" in out
    assert PW.encode() not in out


def test_stream_forced_modes():
    line = json.dumps({"t": GH}).encode() + b"\n"
    dst = io.BytesIO()
    redact_stream(io.BytesIO(line), dst, jsonl=False)
    assert dst.getvalue() == redact(line.decode()).text.encode()
    dst = io.BytesIO()
    redact_stream(io.BytesIO(b"plain " + GH.encode() + b"\n"), dst, jsonl=True)
    assert dst.getvalue() == b"plain [REDACTED:github-token]\n"


def test_stream_chunks_match_whole_text(monkeypatch):
    monkeypatch.setattr(jsonl_module, "_CHUNK", 700)
    monkeypatch.setattr(jsonl_module, "_TAIL", 400)
    body = "\n".join(token("", 64, shift=i) for i in range(6))
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    parts = []
    for i in range(40):
        parts.append(f"line {i} of ordinary prose about the build")
        if i % 7 == 3:
            parts.append(pem)
        if i % 5 == 1:
            parts.append(f"export API_TOKEN={token('', 24, shift=i)}")
            parts.append(token("gh" + "p_", 36, shift=i))
    text = "\n".join(parts) + "\n"
    dst = io.BytesIO()
    counts = redact_stream(io.BytesIO(text.encode()), dst, jsonl=False)
    whole = redact(text)
    assert dst.getvalue().decode() == whole.text
    assert counts == whole.counts


def test_stream_without_newlines(monkeypatch):
    monkeypatch.setattr(jsonl_module, "_CHUNK", 500)
    monkeypatch.setattr(jsonl_module, "_TAIL", 200)
    text = ("word " * 300 + GH + " " + "word " * 300).encode()
    dst = io.BytesIO()
    assert redact_stream(io.BytesIO(text), dst, jsonl=False) == {"github-token": 1}
    assert dst.getvalue() == redact(text.decode()).text.encode()


@pytest.mark.skipif(not TRANSCRIPTS.exists(), reason=f"no shared transcripts at {TRANSCRIPTS}")
def test_real_transcripts_stream_line_for_line():
    for path in sorted(TRANSCRIPTS.glob("*/*.jsonl")):
        data = path.read_bytes()
        dst = io.BytesIO()
        redact_stream(io.BytesIO(data), dst)
        out_lines = dst.getvalue().splitlines(keepends=True)
        in_lines = data.splitlines(keepends=True)
        assert len(out_lines) == len(in_lines), path
        for a, b in zip(in_lines, out_lines, strict=True):
            if a != b:
                orjson.loads(b)


def test_a_redacted_value_is_written_back_in_place_keeping_the_rest_byte_for_byte() -> None:
    """Only the changed string is rewritten: integers beyond 64 bits, duplicate keys,
    spacing and number spelling stay as they were (a re-encoded line would turn the integer
    into a float and drop a duplicate key)."""
    secret = "sk-ant-api03-" + "A" * 93
    line = b'{"a": 123456789012345678901234567890, "a": 1, "k": "key ' + secret.encode() + b'", "n": 1.50}\n'
    out, counts = redact_jsonl_line(line)
    assert counts == {"anthropic-api-key": 1}
    assert out == line.replace(secret.encode(), b"[REDACTED:anthropic-api-key]")


@pytest.mark.parametrize(
    "line",
    [
        # the secret escaped otherwise than orjson writes it: found only by decoding
        '{"k": "\\u0073k-ant-api03-' + "A" * 93 + '"}\n',
        # another string holds the secret's JSON text after an escaped quote
        '{"x": "q\\"sk-ant-api03-' + "A" * 93 + '\\"", "k": "\\u0073k-ant-api03-' + "A" * 93 + '"}\n',
    ],
)
def test_a_value_that_cannot_be_found_as_written_is_redacted_by_re_encoding(line: str) -> None:
    out, counts = redact_jsonl_line(line.encode())
    assert counts and b"AAAAAAAA" not in out
    decoded = orjson.loads(out)
    assert decoded["k"] == "[REDACTED:anthropic-api-key]"
    if "x" in decoded:
        assert decoded["x"].startswith('q"') and decoded["x"].endswith('"')
