"""The classifier report says which statements a classifier failed on, and names a classifier
that produced nothing, instead of leaving them out silently."""

from __future__ import annotations

import json

import pytest

from agentmemgate.classify import classifier_report, classify_set
from agentmemgate.corpora import import_statements
from agentmemgate.errors import BadInput
from agentmemgate.llm import get_model

ROWS = {
    "s1": ("I might move to Seattle.", "speculation"),
    "s2": ("I moved to Denver.", "completed_event"),
    "s3": ("I love jazz.", "other"),
    "s4": ("I'm thinking about a dog.", "speculation"),
}


@pytest.fixture
def gold(ws, tmp_path):
    f = tmp_path / "g.jsonl"
    f.write_text(
        "\n".join(json.dumps({"id": k, "text": t, "reference": r}) for k, (t, r) in ROWS.items())
    )
    import_statements(ws, "g", f)
    return "g"


def test_failed_statements_and_empty_classifiers_are_reported(ws, gold):
    half = get_model("scripted:half")
    half.respond_with(
        lambda r: "speculative" if ("Seattle" in r.prompt or "Denver" in r.prompt) else "no idea"
    )
    r = classify_set(ws, gold, "scripted:half", method="votes", samples=3)
    assert (r.new, r.errors) == (2, 2) and r.error_kinds == {"invalid_output": 2}
    get_model("scripted:mute").respond_with(lambda r: "hmm")
    assert classify_set(ws, gold, "scripted:mute", method="votes", samples=1).new == 0
    rep = classifier_report(ws, gold, resamples=20, plots=False)
    text = "\n".join(rep.lines())
    c = rep.classifiers[0]
    assert c.missing == 2 and c.n == 2
    assert "No distribution for 2 statement(s) with a reference label" in text
    assert c.valid_votes == {"min": 3, "median": 3, "max": 3, "samples": 3}
    assert "Valid votes behind each probability: min 3, median 3, max 3 of 3" in text
    assert rep.empty == ["scripted:mute|evidence_type.v1|votes:k=1"]
    assert "scripted:mute|evidence_type.v1|votes:k=1: produced no distribution" in text
    with pytest.raises(BadInput, match="produced no distribution on set 'g': every call failed"):
        classifier_report(
            ws, gold, classifiers=["scripted:mute|evidence_type.v1|votes:k=1"], plots=False
        )
