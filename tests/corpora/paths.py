"""Fixture paths (small cuts committed under tests/fixtures) and the real corpora when present."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
LOCOMO = FIXTURES / "locomo_sample.json"
LONGMEMEVAL = FIXTURES / "longmemeval_sample.json"
REAL = Path("/work/shared/corpora-src")
REAL_LOCOMO = REAL / "locomo" / "locomo10.json"
REAL_LONGMEMEVAL = REAL / "longmemeval" / "longmemeval_oracle_subset.json"

needs_real_locomo = pytest.mark.skipif(not REAL_LOCOMO.is_file(), reason="real LoCoMo file absent")
needs_real_longmemeval = pytest.mark.skipif(not REAL_LONGMEMEVAL.is_file(),
                                            reason="real LongMemEval sample absent")
