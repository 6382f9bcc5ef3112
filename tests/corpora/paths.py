"""Fixture paths (small cuts committed under tests/fixtures) and the real corpora when present.

The real files are found through the corpora setting (``AMG_CORPORA``, else the user's data
folder), then beside this checkout (``../shared/corpora-src``); tests that need them skip otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmemgate.corpora.home import corpus_file, fetch_hint

FIXTURES = Path(__file__).parents[1] / "fixtures"
LOCOMO = FIXTURES / "locomo_sample.json"
LONGMEMEVAL = FIXTURES / "longmemeval_sample.json"
REAL_LOCOMO = corpus_file("locomo", "locomo10.json", checkout=True)
REAL_LONGMEMEVAL = corpus_file("longmemeval", "longmemeval_oracle_subset.json", checkout=True)

needs_real_locomo = pytest.mark.skipif(
    not REAL_LOCOMO.is_file(), reason=f"real LoCoMo file absent: {fetch_hint('locomo')}"
)
needs_real_longmemeval = pytest.mark.skipif(
    not REAL_LONGMEMEVAL.is_file(),
    reason=f"real LongMemEval subset absent: {fetch_hint('longmemeval')}",
)
needs_real_corpora = pytest.mark.skipif(
    not (REAL_LOCOMO.is_file() and REAL_LONGMEMEVAL.is_file()),
    reason="real corpora absent: run `amg corpora fetch locomo` and `amg corpora fetch longmemeval`"
    " or set AMG_CORPORA",
)
