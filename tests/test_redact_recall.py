"""Recall and false positives on the shared labelled secret samples.

The samples live outside the repository (``../shared/secrets/secrets.jsonl`` relative to
the repo root); the scoring is the benchmark's own (``bench/redact.py``), so the test and
``BENCHMARKS.md`` report the same numbers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "secrets" / "secrets.jsonl"

pytestmark = pytest.mark.skipif(
    not SAMPLES.exists(), reason=f"labelled samples not found at {SAMPLES}"
)


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "habitus_bench_redact", ROOT / "bench" / "redact.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def score(bench):
    return bench.score_samples(bench.load_samples(SAMPLES))


def test_sample_file_has_the_documented_shape(score):
    assert score.positives == 346
    assert score.negatives == 75


def test_recall_at_least_90_percent(score):
    misses = "\n".join(f"{kind}: {text[:120]!r}" for kind, text, _ in score.misses)
    assert score.recalled / score.positives >= 0.90, misses


def test_at_most_five_non_secrets_flagged(score):
    flagged = "\n".join(repr(text[:120]) for text, _ in score.flagged)
    assert len(score.flagged) <= 5, flagged


def test_every_family_is_mostly_caught(score):
    for family, total in score.total.items():
        assert score.hit[family] / total >= 0.75, family


def test_strict_scoring_counts_leftover_runs(bench):
    value = "hunter2" * 2
    text = f"password = '{value}'"
    spans = bench.secret_portions(text, "secret-assignment")
    assert [text[s:e] for s, e in spans] == [value]
    assert bench._leaks(text, spans, f"password = '{value[:10]}[REDACTED]'")
    assert not bench._leaks(text, spans, "password = '\x00'")
