"""Redaction: secrets (and optionally email addresses) out of transcript text.

``redact`` replaces secrets with ``[REDACTED:<rule-id>]`` placeholders, ``find_secrets`` is
the fail-closed check that nothing is left, and ``redact_jsonl_line`` / ``redact_stream``
apply the same rules to transcript JSONL and plain-text streams. Rules are data:
``rules.toml`` in this package.
"""

from habitus.redact.engine import Redacted, find_secrets, redact
from habitus.redact.jsonl import redact_jsonl_line, redact_stream

__all__ = ["Redacted", "find_secrets", "redact", "redact_jsonl_line", "redact_stream"]
