"""The offline lexicon v2 (cues read in their scope), v1 kept as it was, and which one 'offline' is."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import tomllib
from pathlib import Path

import pytest

from agentmemgate.classify import classify_set, get_classifier, lexicon_classifier, stored
from agentmemgate.classify.natural import LabelledTurn, route
from agentmemgate.corpora import Statement, import_statements
from agentmemgate.errors import BadInput

CLASSIFY = Path(__import__("agentmemgate.classify", fromlist=["x"]).__file__).parent
V1_SHA256 = "739e89fc0f93adac2a9f0c54776c04e3cf99b96e41ae53e963ee35ec43ac0cc7"
DAY = "2024-11-01"  # the statements' date, for calendar dates

# Hand-written, one reading each; none is renderer output (checked below).
CASES = {
    "speculation": [
        "I might move to Tucson next year.",
        "We're thinking about adopting a rescue greyhound.",
        "The plan is to switch to our credit union on Friday, November 15.",
        "I have no idea whether I should join the rowing club.",
        "Honestly, I'd like to sell the hatchback before winter.",
        "I haven't cancelled my gym membership yet.",
        "Still no word on transferring to the Denver office yet.",
        "I'm relocating to Lisbon in two weeks.",
        "Switching to a standing desk is tempting.",
        "Should I upgrade to the family plan?",
        "I've been meaning to switch gyms since the price went up.",
        "Since my rent went up again, I'm considering moving across town.",
        "I gave up on moving to Austin.",
        "I'm not going to switch carriers after all.",
    ],
    "completed_event": [
        "I moved to Tucson last month.",
        "We finally adopted a rescue greyhound on Saturday.",
        "I switched banks last week, because the fees at the old one had just gone up.",
        "I quit my job at the bakery two weeks ago.",
        "I use the library app now.",
        "I've officially joined the rowing club.",
    ],
    "explicit_correction": [
        "Sorry, I misspoke earlier: I live in Tacoma, not Tucson.",
        "Correction: my dentist is Dr. Alvarez, not Dr. Alves.",
        "Scratch that, I bank with the credit union.",
    ],
    "other": [
        "I love hiking on weekends.",
        "Can you recommend a good podcast about gardening?",
        "I usually shop at the farmers market.",
        "Thanks, I'll let you know how it goes!",
        "You'll love the new season.",
        "I just need a minute to think.",
    ],
}


def st(text: str, date: str | None = DAY) -> Statement:
    return Statement(id="s", text=text, date=date)


@pytest.mark.parametrize("label,text", [(lab, t) for lab, ts in CASES.items() for t in ts])
def test_v2_reads_each_hand_written_sentence(label, text):
    d = get_classifier("offline").classify(st(text))
    assert d.predicted == label, (text, d.probs, lexicon_classifier().explain(text, DAY))
    assert d.routed_commit == (label != "speculation")


def test_offline_is_the_newest_version_and_every_version_stays_selectable():
    v2 = get_classifier("offline")
    assert v2.name == "offline:lexicon.v2" and v2.rubric_ref == "evidence_cues.v2"
    assert get_classifier("offline:lexicon") is v2 and get_classifier("offline:lexicon.v2") is v2
    assert (
        v2.sha256 == hashlib.sha256((CLASSIFY / "evidence_cues.v2.toml").read_bytes()).hexdigest()
    )
    v1 = get_classifier("offline:lexicon.v1")
    assert (v1.name, v1.rubric_ref, v1.family, v2.family) == (
        "offline:lexicon.v1",
        "evidence_cues.v1",
        "offline",
        "offline",
    )
    with pytest.raises(BadInput, match=r"No offline lexicon version 9; known: \[1, 2\]"):
        get_classifier("offline:lexicon.v9")
    with pytest.raises(BadInput, match="evidence_type rubric only"):
        get_classifier("offline:lexicon.v1", rubric="truth_now")


def test_v1_is_unchanged():
    """Results stored under offline:lexicon.v1 must stay reproducible: same file, same numbers."""
    assert (
        hashlib.sha256((CLASSIFY / "evidence_cues.v1.toml").read_bytes()).hexdigest() == V1_SHA256
    )
    v1 = get_classifier("offline:lexicon.v1")
    assert v1.sha256 == V1_SHA256
    expected = {
        "The plan is to switch to our credit union on Friday, November 15.": (
            "other",
            {
                "speculation": 0.248967,
                "completed_event": 0.248967,
                "explicit_correction": 0.09159,
                "other": 0.410477,
            },
        ),
        "I just need to find the time.": (
            "completed_event",
            {
                "speculation": 0.174371,
                "completed_event": 0.473991,
                "explicit_correction": 0.064148,
                "other": 0.28749,
            },
        ),
        "I might move to Tucson next year.": (
            "speculation",
            {
                "speculation": 0.869423,
                "completed_event": 0.043286,
                "explicit_correction": 0.015924,
                "other": 0.071367,
            },
        ),
    }
    for text, (label, probs) in expected.items():
        d = v1.classify(st(text))
        assert d.predicted == label
        assert d.probs == pytest.approx(probs, abs=1e-6)


def test_v2_fixes_what_v1_misroutes():
    """The cues v1 counted anywhere ("just", "since", "now", "got", "left") and plans with no
    v1 cue; v2 reads them in scope."""
    v1, v2 = get_classifier("offline:lexicon.v1"), get_classifier("offline")
    for text in (
        "The plan is to switch to our credit union on Friday, November 15.",
        "Since I've been with them for years, I might just leave the credit union.",
        "I've got to decide whether to leave my job now.",
    ):
        assert v1.classify(st(text)).predicted != "speculation", text
        assert v2.classify(st(text)).predicted == "speculation", text
    assert v1.classify(st("I just need a minute to think.")).predicted == "completed_event"


def test_a_calendar_date_is_read_against_the_statement_date():
    clf = get_classifier("offline")
    text = "My move to Denver is on December 3."
    assert clf.classify(st(text, "2024-11-20")).predicted == "speculation"  # still ahead
    assert clf.classify(st(text, "2024-12-10")).routed_commit  # a week past: no plan left
    assert clf.classify(st(text, None)).routed_commit  # no date: the date is neutral
    assert (
        clf.classify(st("I switched to the night shift last Friday.")).predicted
        == "completed_event"
    )
    assert clf.classify(st("I switch to the night shift next Friday.")).predicted == "speculation"


def test_a_reason_clause_does_not_outvote_the_main_clause():
    clf = get_classifier("offline")
    d = clf.classify(
        st(
            "I'm thinking about switching insurers because mine just raised the price "
            "and I've already paid too much."
        )
    )
    assert d.predicted == "speculation"
    ev = clf.explain("I switched insurers because I was thinking about saving money.", DAY)
    assert (
        clf.classify(st("I switched insurers because I was thinking about saving money.")).predicted
        == "completed_event"
    )
    assert any("reason clause" in e.rule for e in ev)


def test_explain_names_the_rule_and_is_deterministic():
    clf = get_classifier("offline")
    text = "The plan is to switch to our credit union on Friday, November 15."
    ev = clf.explain(text, DAY)
    assert [(e.cls, e.rule, e.surface) for e in ev] == [
        ("speculation", "change under intention 'the plan is'", "switch")
    ]
    assert clf.classify(st(text)) == clf.classify(st(text))
    probs = clf.classify(st(text)).probs
    assert 0.5 < probs["speculation"] < 0.99 and sum(probs.values()) == pytest.approx(1.0)


def test_the_data_file_documents_every_weight_and_the_code_reads_no_renderer_file():
    raw = (CLASSIFY / "evidence_cues.v2.toml").read_text()
    data = tomllib.loads(raw)
    header = "\n".join(line for line in raw.splitlines() if line.startswith("#"))
    code = "".join(
        (CLASSIFY / f).read_text() for f in ("scoped.py", "scoped_rules.py", "_scoped_sentence.py")
    )
    for key in data["evidence"]:
        assert re.search(rf"\b{key}\b", header), f"{key} is not explained in the file header"
        assert f'"{key}"' in code or '"bare_{cls}"' in code and key.startswith("bare_"), key
    for cat in data["cues"]:
        assert f'"{cat}"' in code, f"cue list {cat} is never read"
    assert "phrases/" not in raw and "catalog" not in raw.replace("or catalog", "")
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert "generate" not in (node.module or "")


def test_test_sentences_are_not_renderer_output():
    from agentmemgate.generate import get_renderer, plan_split

    renderer = get_renderer("offline")
    rendered = {
        t.text
        for split in ("core", "heldout", "controlled")
        for spec in plan_split(split, 0)
        for s in renderer.render(spec).sessions
        for t in s.turns
    }
    mine = [t for ts in CASES.values() for t in ts]
    assert not [m for m in mine if any(m in r for r in rendered)]


def test_results_are_stored_under_each_versions_name(ws, tmp_path):
    rows = [
        {"id": f"s{i}", "text": t, "reference": lab, "license": "MIT"}
        for i, (lab, t) in enumerate((lab, t) for lab, ts in CASES.items() for t in ts[:2])
    ]
    f = tmp_path / "g.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    import_statements(ws, "g", f)
    assert classify_set(ws, "g", "offline:lexicon.v1").new == len(rows)
    assert classify_set(ws, "g", "offline").new == len(rows)  # v2: its own rows, v1's untouched
    assert classify_set(ws, "g", "offline:lexicon.v2").new == 0
    got = {
        r[0]: (r[1], r[2])
        for r in ws.db.execute(
            "select classifier, rubric, rubric_sha256 from classifications where set_name = 'g' "
            "group by classifier"
        ).fetchall()
    }
    assert got == {
        "offline:lexicon.v1": ("evidence_cues.v1", V1_SHA256),
        "offline:lexicon.v2": ("evidence_cues.v2", get_classifier("offline").sha256),
    }
    assert len(stored(ws, "g", "offline:lexicon.v1")) == len(rows)


def test_natural_routing_figures():
    items = [
        LabelledTurn("locomo", f"c:{i}", lab, st(t, None))
        for i, (lab, t) in enumerate(
            [
                ("spec", "I might move to Tucson next year."),
                ("spec", "Thinking of getting a bike. What do you think?"),
                ("none", "I love hiking on weekends."),
                ("none", "Talk to you soon!"),
                ("borderline", "We're planning a trip to the coast next week."),
            ]
        )
    ]
    r = route(get_classifier("offline"), items, resamples=200)
    assert [g.group for g in r.groups] == ["locomo", "all"]
    g = r.groups[-1]
    assert (g.n_spec, g.n_none, g.n_borderline) == (2, 2, 1)
    assert (g.recall.k, g.recall.n, g.none_held.k, g.precision.n) == (2, 2, 0, 2)
    assert g.auroc.value == 1.0 and g.auroc.n == 4 and g.log_loss is not None
    assert r.held["c:0"] and not r.held["c:2"]
    sentence = route(get_classifier("offline"), items, unit="sentence", resamples=0)
    assert sentence.groups[-1].recall.k == 2 and sentence.groups[-1].auroc.ci_low is None
    empty = route(get_classifier("offline"), items[2:4], resamples=0).groups[-1]
    assert empty.recall.value is None and empty.auroc.value is None  # undefined, not 0
