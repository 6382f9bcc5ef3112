"""Natural evaluation sets: selection from LongMemEval and LoCoMo, streaming, what an item keeps,
the value-free field and its refusal, storage and the CLI's one-line errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora.model import LICENSES
from agentmemgate.corpora.natural import (
    build_natural_set,
    iter_selected,
    list_natural_sets,
    load_items,
    locomo_reason,
    natural_set,
    plan_natural_set,
)
from agentmemgate.corpora.natural_fields import derive_field, refusal
from agentmemgate.errors import BadInput, CorpusError
from agentmemgate.run_context import run_context

from .paths import FIXTURES, LOCOMO, LONGMEMEVAL

NAT_LME = FIXTURES / "natural_longmemeval.json"
NAT_LOCOMO = FIXTURES / "natural_locomo.json"
runner = CliRunner()


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


# -- selection ----------------------------------------------------------------------------------
def test_longmemeval_keeps_knowledge_update_questions_only():
    items = list(iter_selected(NAT_LME, "longmemeval"))
    # 001be529 (single-session-user) is in the file and is passed over
    assert [i.item_id for i in items] == ["07741c45", "18bc8abd", "031748ae"]


def test_longmemeval_item_contents():
    item = next(iter_selected(NAT_LME))
    assert item.corpus == "longmemeval"
    assert item.question == "Where do I currently keep my old sneakers?"
    assert item.gold_answer == "in a shoe rack in my closet"
    assert item.question_date == "2023-06-07T04:15"  # as the source dates it (before its sessions)
    assert [s.date for s in item.sessions] == ["2023-05-20T12:36", "2023-05-26T13:05"]
    assert [s.session_id for s in item.sessions] == ["answer_7e9ad7b4_1", "answer_7e9ad7b4_2"]
    assert item.turns() == 24 and item.sessions[0].turns[0].role == "user"
    assert item.sessions[0].turns[1].role == "assistant"
    # evidence: the turns marked has_answer, as refs that name the turn
    assert item.evidence == ["07741c45/answer_7e9ad7b4_1/2", "07741c45/answer_7e9ad7b4_2/0"]
    first = item.sessions[0].turns[2]
    assert first.ref == item.evidence[0] and "under my bed" in first.text
    assert item.license == LICENSES["longmemeval"]
    # the cluster: the evidence sessions, shared by the oracle and _s forms of a question
    assert item.conversation_id == "answer_7e9ad7b4_1+answer_7e9ad7b4_2"


def test_locomo_rule_selects_the_change_question_and_says_why_others_are_not():
    items = list(iter_selected(NAT_LOCOMO, "locomo"))
    assert [i.question for i in items] == ["Which city was John in before traveling to Chicago?"]
    item = items[0]
    assert item.item_id == "conv-43/qa-3" and item.conversation_id == "conv-43"
    assert item.gold_answer == "Seattle" and item.evidence == ["D3:19", "D5:2", "D6:1", "D6:3"]
    assert item.subject == "John"
    assert {t.role for s in item.sessions for t in s.turns if t.speaker == "John"} == {"user"}
    assert {t.role for s in item.sessions for t in s.turns if t.speaker == "Tim"} == {"assistant"}
    assert [s.date[:10] for s in item.sessions] == ["2023-07-16", "2023-08-09", "2023-08-11"]
    assert item.question_date == item.sessions[-1].date
    assert item.license == LICENSES["locomo"]
    raw = json.loads(NAT_LOCOMO.read_text())[0]
    dates = {3: "a", 5: "b", 6: "c"}
    reasons = [locomo_reason(qa, dates) for qa in raw["qa"]]
    assert reasons == [
        "answer is a list or empty",  # "early August, 2023" (a when-question too)
        "asks when / how long / how many times",
        "answer is a list or empty",
        None,
        "evidence not in two sessions with different dates",
        "adversarial (category 5)",
    ]


def test_locomo_rule_needs_different_dates():
    qa = {
        "question": "Which city was John in before Chicago?",
        "answer": "Seattle",
        "evidence": ["D3:19", "D5:2"],
        "category": 2,
    }
    assert (
        locomo_reason(qa, {3: "2023-07-16", 5: "2023-07-16"})
        == "evidence not in two sessions with different dates"
    )
    assert locomo_reason(qa, {3: "2023-07-16", 5: "2023-08-09"}) is None
    assert (
        locomo_reason({**qa, "question": "Which city did John like?"}, {3: "x", 5: "y"})
        == "question names no change"
    )


# -- streaming ----------------------------------------------------------------------------------
def test_selection_streams_the_file(tmp_path):
    """Items come out before the file has been read to its end: a file cut off after its first
    instances yields those, then fails with one line naming where."""
    text = NAT_LME.read_text()
    items = json.loads(text)
    cut = tmp_path / "longmemeval_oracle_cut.json"
    whole = [items[0], items[1]] * 6  # about 110 KB: more than one read of the parser's buffer
    cut.write_text("[" + ", ".join(json.dumps(x) for x in whole) + ', {"question_id": ')
    seen, read = [], []
    with pytest.raises(CorpusError, match=r"malformed JSON after item 12"):
        for item in iter_selected(cut, on_bytes=read.append):
            seen.append(item.item_id)
    assert seen == ["07741c45", "18bc8abd"] * 6
    # the bytes read when the first item was done: far from the end of the file
    assert read == sorted(read) and read[0] < cut.stat().st_size


# -- fields -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, subject, attribute",
    [
        ("Where do I currently keep my old sneakers?", None, "place_of_keep_old_sneakers"),
        ("What brand of BBQ sauce am I currently obsessed with?", None, "brand_bbq_sauce_obsessed"),
        (
            "How many new postcards have I added to my collection since I started collecting again?",
            None,
            "number_of_new_postcards_added_collection",
        ),
        ("How long have I had my cat, Luna?", None, "duration_of_cat_luna"),
        ("Which city was John in before traveling to Chicago?", "John", "city"),
        ("What is Caroline's relationship status?", "Caroline", "relationship_status"),
    ],
)
def test_field_rule(question, subject, attribute):
    f = derive_field(question, subject)
    assert f.attribute == attribute
    words = attribute.replace("_", " ")
    assert f.description == f"The user's {words}"
    assert f.probe_question == f"What is the user's current {words}?"


def test_field_refused_when_it_names_the_answer():
    f = derive_field("How many engineers do I lead now?")
    assert (
        refusal(f, "You lead 5 engineers")
        == "the field contains word(s) of the gold answer: engineers, lead"
    )
    pet = derive_field("Which pet did Jolene adopt first - Susie or Seraphim?", "Jolene")
    assert refusal(pet, "Susie") == "the field contains the answer 'Susie'"
    assert refusal(derive_field("Where do I keep my sneakers?"), "under my bed") is None
    assert derive_field("What is it?") is None
    assert refusal(None, "x") == "the rule leaves no word of the question to name an attribute"


def test_refused_item_keeps_no_field():
    item = [i for i in iter_selected(NAT_LME) if i.item_id == "031748ae"][0]
    assert item.field is None
    assert item.field_refused.startswith("the field contains word(s) of the gold answer")
    fielded = [i for i in iter_selected(NAT_LME) if i.field is not None]
    for i in fielded:  # what is kept is value-free
        assert i.field.leaked_values([i.gold_answer]) == []


# -- storage ------------------------------------------------------------------------------------
def test_build_stores_the_set_and_its_items(ws):
    info = build_natural_set(ws, NAT_LME, "longmemeval", "tiny", progress=False)
    assert (info.items, info.fielded, info.refused) == (3, 2, 1)
    assert info.conversations_read == 4 and info.variant == "" and info.corpus == "longmemeval"
    assert info.rule == "longmemeval-knowledge-update.v1" and info.field_rule == "natural-field.v1"
    assert info.license == LICENSES["longmemeval"]
    assert len(info.source_sha256) == 64 and info.source_path.endswith("natural_longmemeval.json")
    assert info.refusals == {"shares a word with the gold answer": 1}
    loaded = [i for i, _ in load_items(ws, "tiny")]
    assert loaded == list(iter_selected(NAT_LME))
    # a rebuild replaces the set; --limit keeps the first N selected
    build_natural_set(ws, NAT_LME, "auto", "tiny", limit=1, progress=False)
    assert [i.item_id for i, _ in load_items(ws, "tiny")] == ["07741c45"]
    assert [s.name for s in list_natural_sets(ws)] == ["tiny"]


def test_default_names(ws, tmp_path):
    oracle = tmp_path / "longmemeval_oracle.json"
    oracle.write_bytes(NAT_LME.read_bytes())
    assert build_natural_set(ws, oracle, progress=False).name == "longmemeval-oracle-ku"
    assert build_natural_set(ws, NAT_LOCOMO, progress=False).name == "locomo-change"


def test_unknown_set(ws):
    build_natural_set(ws, NAT_LOCOMO, name="loc", progress=False)
    with pytest.raises(BadInput, match=r"No natural set 'nope' .* sets: loc \(build one"):
        natural_set(ws, "nope")


# -- CLI: output and one-line errors ------------------------------------------------------------
def test_cli_build_list_show(tmp_path):
    w = tmp_path / "ws"
    r = cli(
        "natural",
        "build",
        "--corpus",
        "locomo",
        NAT_LOCOMO,
        "--name",
        "loc",
        "--workspace",
        w,
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    assert "Natural set 'loc': 1 question from natural_locomo.json" in r.output
    assert "Fields (natural-field.v1): 1 value-free, 0 refused" in r.output
    assert "License: CC BY-NC 4.0" in r.output
    assert "run: amg eval run --natural loc" in r.output
    r = cli("natural", "list", "--workspace", w)
    assert r.exit_code == 0 and "Natural set 'loc'" in r.output
    r = cli("natural", "show", "loc", "--workspace", w)
    assert "conv-43/qa-3\t3 sessions, 11 turns\tWhich city was John in" in r.output
    assert "gold: Seattle\tfield: city" in r.output
    r = cli("natural", "show", "loc", "--json", "--workspace", w)
    d = json.loads(r.output.splitlines()[0])
    assert d["license"] == LICENSES["locomo"] and d["gold_answer"] == "Seattle"
    assert d["evidence"] == ["D3:19", "D5:2", "D6:1", "D6:3"] and len(d["sha256"]) == 64


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--corpus", "longmemeval", NAT_LOCOMO],
            "Error: natural_locomo.json: looks like a locomo file, not longmemeval",
        ),
        (
            ["--corpus", "locomo", FIXTURES / "nope.json"],
            f"Error: No such file: '{FIXTURES / 'nope.json'}'",
        ),
        (
            ["--corpus", "longmemeval", LONGMEMEVAL],
            "Error: longmemeval_sample.json: 3 LongMemEval instances but no knowledge-update question; "
            "nothing to build",
        ),
        (
            ["--corpus", "locomo", LOCOMO],
            "Error: locomo_sample.json: 2 LoCoMo samples but no QA item that locomo-change.v1 selects",
        ),
        (
            ["--corpus", "fb", NAT_LOCOMO],
            "Error: Unknown corpus 'fb'; choose one of: auto, longmemeval, locomo",
        ),
        (["--name", "a b", NAT_LOCOMO], "Error: --name 'a b': a set name is letters"),
    ],
)
def test_cli_build_errors(tmp_path, args, message):
    r = cli("natural", "build", *args, "--workspace", tmp_path / "ws", "--no-progress")
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "ws").exists()  # a rejected build leaves no workspace behind


def test_cli_missing_file_says_so(tmp_path):
    r = cli("natural", "build", tmp_path / "gone.json", "--workspace", tmp_path / "ws")
    assert r.exit_code == 1 and "No such file: " in r.output and "gone.json" in r.output


def test_cli_show_unknown_set(tmp_path):
    w = tmp_path / "ws"
    cli("natural", "build", NAT_LOCOMO, "--name", "loc", "--workspace", w, "--no-progress")
    r = cli("natural", "show", "nope", "--workspace", w)
    assert r.exit_code == 1 and r.output.startswith("Error: No natural set 'nope'")


# -- an LLM fielder -----------------------------------------------------------------------------
def test_llm_fielder_names_the_field_from_the_question_only(ws):
    from agentmemgate.llm import get_model

    model = get_model("scripted:fielder")

    def answer(request):
        if "sneakers" in request.prompt:
            return {"attribute": "Sneaker storage place"}  # normalized to snake_case
        if "BBQ" in request.prompt:
            return {"attribute": "bbq_sauce_kansas_city_masterpiece"}  # names the answer
        return {"attribute": "snake_case_name"}  # the template echoed back (SmolLM2 does)

    model.respond_with(answer)
    info = build_natural_set(
        ws, NAT_LME, "longmemeval", "llm", fielder="scripted:fielder", progress=False
    )
    assert info.field_rule == "llm:natural_field.v1@scripted:fielder"
    items = {i.item_id: i for i, _ in load_items(ws, "llm")}
    assert items["07741c45"].field.attribute == "sneaker_storage_place"
    assert items["07741c45"].field.description == "The user's sneaker storage place"
    assert items["18bc8abd"].field is None
    assert (
        items["18bc8abd"].field_refused == "the field contains the answer 'Kansas City Masterpiece'"
    )
    assert items["031748ae"].field_refused == "the fielder named no usable attribute"
    assert (info.fielded, info.refused) == (1, 2)
    assert info.refusals == {"contains the answer": 1, "fielder named nothing": 1}
    prompts = [r.prompt for r in model.history]
    assert len(prompts) == 3
    for item, prompt in zip(items.values(), prompts):  # the question only: no answer, no sessions
        assert item.question in prompt and item.gold_answer not in prompt
        assert item.sessions[0].turns[0].text[:40] not in prompt


def test_llm_fielder_failure_refuses_that_field(ws):
    from agentmemgate.llm import get_model

    get_model("scripted:broken").respond_with(lambda r: "not json at all")
    info = build_natural_set(
        ws, NAT_LOCOMO, "locomo", "llm", fielder="scripted:broken", progress=False
    )
    item = next(i for i, _ in load_items(ws, "llm"))
    assert item.field is None and item.field_refused.startswith("the fielder call failed")
    assert info.refusals == {"fielder call failed": 1}


def test_cli_build_dry_run_counts_the_fielder_calls_and_stores_nothing(tmp_path):
    from agentmemgate.llm import get_model

    w = tmp_path / "ws"
    r = cli(
        "natural",
        "build",
        NAT_LME,
        "--fielder",
        "scripted:planned",
        "--price",
        "1,2",
        "--dry-run",
        "--workspace",
        w,
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == (
        "dry run: natural set 'longmemeval-ku': 3 questions selected from "
        "4 LongMemEval instances; 3 fielder calls (scripted:planned)"
    )
    assert lines[1].startswith("scripted:planned: 3 planned calls; estimated cost at most $")
    assert get_model("scripted:planned").history == []
    assert not w.exists()  # nothing stored, no workspace left behind
    r = cli("natural", "build", NAT_LME, "--dry-run", "--workspace", w, "--no-progress")
    assert r.exit_code == 0 and "no model calls (offline rule)" in r.output.splitlines()[0]


def test_the_plan_counts_what_a_build_would_select_and_stores_nothing(ws):
    """``plan_natural_set`` takes ``build_natural_set``'s arguments and returns what ``--dry-run``
    prints; once the set is built, the same plan counts no fielder call (all cached)."""
    from agentmemgate.llm import get_model

    model = get_model("scripted:plans").respond_with(lambda r: {"attribute": "home_city"})
    how = dict(corpus="longmemeval", name="lme", fielder="scripted:plans", progress=False)
    with run_context(dry_run=True) as run:
        plan = plan_natural_set(ws, NAT_LME, **how)
    assert (plan.name, plan.items, plan.conversations_read, plan.field_calls) == ("lme", 3, 4, 3)
    assert [m.planned.calls for m in run.models] == [3] and model.history == []
    assert list_natural_sets(ws) == []
    assert build_natural_set(ws, NAT_LME, **how).items == len(model.history) == 3
    with run_context(dry_run=True) as run:
        assert plan_natural_set(ws, NAT_LME, **how).field_calls == 0
    assert [m.planned.calls for m in run.models] == [0]
