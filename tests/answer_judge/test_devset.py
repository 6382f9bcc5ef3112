"""The answer-judge dev set: the loader, the labelled set itself, the figures' arithmetic (a
hand-written fake judge), pinned offline rules, a scripted model judge, and the script end to end."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from agentmemgate.answer_judge import (
    ANSWER_CUES_PATH,
    AnswerJudge,
    AnswerQuestion,
    AnswerVerdict,
    get_answer_judge,
)
from agentmemgate.answer_judge.devset import (
    ANSWER_FILES,
    DEVSET,
    HELDOUT2,
    PARTS,
    ROLES,
    first_try_valid,
    load_answer_set,
    measure,
    split_part,
)
from agentmemgate.design.catalog import load_catalog
from agentmemgate.errors import BadInput
from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.llm import CallFailed

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "devsets" / "answers" / "measure.py"


def line(**over) -> str:
    rec = {
        "id": "x1",
        "part": "dev",
        "shape": "s",
        "field": "home_city",
        "question": "Which city does the user live in?",
        "values": {"initial": "Boston", "plan": "Seattle"},
        "answer": "Boston.",
        "asserts": ["initial"],
        "note": "",
    }
    rec.update(over)
    return json.dumps(rec)


def write(tmp_path, *lines: str) -> Path:
    p = tmp_path / "answers.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


# -- the loader -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "answers.jsonl:2: not JSON"),
        (line(id="x2", asserts=["current"]), "answers.jsonl:2: asserts.0"),
        (line(id="x2", asserts=["plan", "plan"]), "a role is listed twice"),
        (line(id="x2", part="test"), "answers.jsonl:2: part"),
        (
            line(id="x2", field="favourite_colour"),
            "answers.jsonl:2: unknown field 'favourite_colour'",
        ),
        (line(id="x1"), "answers.jsonl:2: duplicate id 'x1' (first on answers.jsonl:1)"),
        (
            line(id="x2", values={"initial": "Boston", "plan": "boston"}),
            "initial and plan are the same",
        ),
        (line(id="x2", values={"initial": "Boston"}), "answers.jsonl:2: values.plan"),
        (json.dumps({**json.loads(line(id="x2")), "label": "plan"}), "answers.jsonl:2: label"),
    ],
)
def test_loader_refuses_a_malformed_line(tmp_path, bad, message):
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        load_answer_set(write(tmp_path, line(), bad))
    assert "\n" not in str(e.value)


def test_loader_refuses_a_missing_or_empty_file(tmp_path):
    with pytest.raises(BadInput, match="No answer set at"):
        load_answer_set(tmp_path / "nope.jsonl")
    with pytest.raises(BadInput, match="no answers"):
        load_answer_set(write(tmp_path, ""))


# -- the labelled set -----------------------------------------------------------------------
def test_the_labelled_set_is_well_formed_and_split_by_the_documented_rule():
    s = load_answer_set(DEVSET)
    assert len(s.items) >= 150
    ids = [it.id for it in s.items]
    assert ids == [f"a{i:03d}" for i in range(1, len(ids) + 1)]  # opaque and sequential
    by_shape: dict[str, list] = defaultdict(list)
    for it in s.items:
        assert set(it.asserts) <= set(ROLES)
        assert it.field in load_catalog()
        by_shape[it.shape].append(it)
    assert len(by_shape) >= 20
    for shape, items in by_shape.items():
        assert {it.part for it in items} == {"dev", "heldout"}, shape
        for it in items:
            assert it.part == split_part(it.id, [x.id for x in items]), it.id
    # every kind of label occurs in both parts
    for part in ("dev", "heldout"):
        labels = {tuple(it.asserts) for it in s.items if it.part == part}
        assert {(), ("initial",), ("plan",), ("other",), ("initial", "plan")} <= labels


# the shapes of answers.jsonl (its README table); held-out 2 must cover every one of them
README_SHAPES = {
    "mem0_list",
    "mem0_list_ts",
    "mem0_json",
    "mem0_history",
    "graphiti_facts",
    "graphiti_json",
    "prose_from_memories",
    "plan_second_clause",
    "plan_parenthetical",
    "wish",
    "offer_not_taken",
    "pending_order",
    "future_start",
    "dropped_declined",
    "replaced",
    "after_leaving",
    "old_service",
    "either_or",
    "no_answer",
    "hedged_current",
    "plan_as_done",
    "came_true_confirmed",
    "negation",
    "question_back",
    "multi_memory_list",
    "long_answer",
    "third_value",
    "short_answer",
    "contradiction",
}


def test_the_readme_shapes_are_the_shapes_of_the_first_file():
    assert {it.shape for it in load_answer_set(DEVSET).items} == README_SHAPES


def test_held_out_2_is_well_formed_and_covers_every_shape():
    s = load_answer_set(HELDOUT2)
    ids = [it.id for it in s.items]
    assert len(ids) >= 120
    assert ids == [f"h{i:03d}" for i in range(1, len(ids) + 1)]  # opaque and sequential
    assert {it.part for it in s.items} == {"heldout2"}
    per_shape: dict[str, int] = defaultdict(int)
    for it in s.items:
        assert it.field in load_catalog()
        per_shape[it.shape] += 1
    assert README_SHAPES <= set(per_shape)
    assert all(per_shape[sh] >= 3 for sh in README_SHAPES), dict(per_shape)
    labels = {tuple(it.asserts) for it in s.items}
    assert {(), ("initial",), ("plan",), ("other",), ("initial", "plan")} <= labels


def test_the_default_set_is_both_files_and_a_part_keeps_its_file_sha():
    both = load_answer_set()
    assert [f.path for f in both.files] == [str(p) for p in ANSWER_FILES]
    assert {it.part for it in both.items} == set(PARTS)
    first = load_answer_set(DEVSET)
    assert both.part_sha256("dev") == both.part_sha256("heldout") == first.sha256
    assert both.part_sha256("heldout2") == load_answer_set(HELDOUT2).sha256
    assert both.sha256 not in (first.sha256, both.part_sha256("heldout2"))
    assert len(both.items) == sum(len(load_answer_set(p).items) for p in ANSWER_FILES)


def test_an_id_repeated_in_a_second_file_is_refused(tmp_path):
    a = write(tmp_path, line(id="x1"))
    b = tmp_path / "more.jsonl"
    b.write_text(line(id="x1", part="heldout2") + "\n", encoding="utf-8")
    with pytest.raises(
        BadInput, match=r"more.jsonl:1: duplicate id 'x1' \(first on answers.jsonl:1\)"
    ):
        load_answer_set([a, b])


def test_a_part_with_no_answers_is_refused_before_judging(tmp_path):
    p = write(tmp_path, line(id="x1"), line(id="x2", part="heldout"))
    judge = FakeJudge()
    with pytest.raises(BadInput, match="no answers in part 'heldout2'"):
        measure(load_answer_set(p), judge, get_value_judge("offline"), parts=["heldout2"])
    with pytest.raises(BadInput, match="unknown part 'test'"):
        measure(load_answer_set(p), judge, get_value_judge("offline"), parts=["test"])
    assert judge.seen == []


# -- the arithmetic, with a hand-written judge ----------------------------------------------
class FakeJudge(AnswerJudge):
    """Asserts what the answer text says after 'SAY:', fails on 'FAIL'."""

    spec, family, rubric, rubric_sha256 = "fake", "fake-family", "fake.v1", "0" * 64

    def __init__(self) -> None:
        self.seen: list[AnswerQuestion] = []

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        self.seen.append(q)
        if "FAIL" in q.answer:
            raise CallFailed("no valid verdict", kind="invalid_output")
        said = q.answer.split("SAY:", 1)[1].strip()
        return AnswerVerdict(
            asserted=[x.strip() for x in said.split("|") if x.strip()], rationale="r"
        )


def test_measure_computes_the_figures(tmp_path):
    rows = [  # (part, shape, label, what the fake judge asserts)
        ("dev", "a", ["initial"], "boston"),  # right (equivalence maps case)
        ("dev", "a", ["initial"], "Seattle"),  # false plan, missed initial
        ("dev", "a", [], "Seattle | Boston"),  # false plan, false initial
        ("dev", "b", ["plan"], "Seattle"),  # right
        ("dev", "b", ["initial", "plan"], "Boston"),  # missed plan
        ("dev", "b", ["other"], "Portland"),  # right: a third value is other
        ("dev", "b", [], "FAIL"),  # judge failure
        ("heldout", "a", [], ""),  # right
        ("heldout", "b", ["plan"], "Denver"),  # false other, missed plan
        ("heldout2", "a", ["plan"], "Seattle"),  # right
    ]
    p = write(
        tmp_path,
        *[
            line(id=f"x{i}", part=part, shape=shape, asserts=label, answer=f"SAY: {said}")
            for i, (part, shape, label, said) in enumerate(rows)
        ],
    )
    judge = FakeJudge()
    r = measure(load_answer_set(p), judge, get_value_judge("offline"))
    dev, held, held2 = r.parts  # default: every part the set has
    assert (dev.part, dev.n, held.part, held.n) == ("dev", 7, "heldout", 2)
    assert (held2.part, held2.n, held2.exact.k) == ("heldout2", 1, 1)
    assert (dev.exact.k, dev.exact.n) == (3, 7)  # the failure counts wrong
    assert (dev.failures.k, dev.failures.n) == (1, 7)
    assert (dev.false_plan.k, dev.false_plan.n) == (2, 4)  # judged labels lacking plan: 4
    assert (dev.false_initial.k, dev.false_initial.n) == (1, 3)  # lacking initial: 3 judged
    assert (dev.false_other.k, dev.false_other.n) == (0, 5)
    assert (dev.missed.k, dev.missed.n) == (2, 6)  # labelled roles of judged items
    assert round(dev.exact.ci_low, 3) == 0.158 and round(dev.exact.ci_high, 3) == 0.750  # Wilson
    a, b = dev.shapes
    assert (a.shape, a.exact.k, a.exact.n, a.false_plan.k, a.false_plan.n) == ("a", 1, 3, 2, 3)
    assert (b.shape, b.exact.k, b.exact.n, b.failures.k, b.missed.k, b.missed.n) == (
        "b",
        2,
        4,
        1,
        1,
        4,
    )
    assert (held.exact.k, held.false_other.k, held.false_other.n, held.missed.k) == (1, 1, 2, 1)
    failed = next(i for i in r.items if i.judged is None)
    assert failed.error == "no valid verdict" and not failed.correct
    # the judge sees what amg eval shows it: catalog description, the item's question, the values
    q = judge.seen[0]
    assert (q.field, q.description) == ("home_city", "The user's current home city.")
    assert q.probe_question == "Which city does the user live in?"
    assert q.candidates == ("Boston", "Seattle")
    # one part only
    only = measure(load_answer_set(p), FakeJudge(), get_value_judge("offline"), parts=["heldout"])
    assert [x.part for x in only.parts] == ["heldout"] and len(only.items) == 2


def test_an_empty_pool_is_undefined_not_zero(tmp_path):
    p = write(tmp_path, line(asserts=["plan"], answer="SAY: Seattle"))
    part = measure(
        load_answer_set(p), FakeJudge(), get_value_judge("offline"), parts=["dev"]
    ).parts[0]
    assert part.false_plan.n == 0 and part.false_plan.value is None
    assert part.false_plan.fmt() == "undefined (n=0)"


# -- offline rules by name ------------------------------------------------------------------
def test_offline_names_the_newest_rules_and_v1_can_be_pinned():
    newest, v1 = get_answer_judge("offline"), get_answer_judge("offline:answer_cues.v1")
    assert newest.spec == "offline" and v1.spec == "offline:answer_cues.v1"
    assert v1.rubric == "answer_cues.v1"
    assert v1.rubric_sha256 == hashlib.sha256(ANSWER_CUES_PATH.read_bytes()).hexdigest()
    assert get_value_judge("offline:answer_cues.v1").judge.spec == "offline"
    s = load_answer_set(DEVSET)
    eq = get_value_judge("offline")
    a = measure(s, v1, eq, parts=["dev"])
    b = measure(s, get_answer_judge("offline:answer_cues.v1"), eq, parts=["dev"])
    assert [i.judged for i in a.items] == [i.judged for i in b.items]
    with pytest.raises(BadInput, match="No offline answer rules version 99"):
        get_answer_judge("offline:answer_cues.v99")
    with pytest.raises(BadInput, match="Unknown offline answer judge 'offline:cues'"):
        get_answer_judge("offline:cues")


# -- a model judge through the LLM layer (scripted) -----------------------------------------
def test_a_model_judge_is_cached_and_its_garbage_is_a_counted_failure(tmp_path):
    from llm.scripted import reset_scripts

    from agentmemgate.llm import get_model
    from agentmemgate.workspace import Workspace

    reset_scripts()
    ws = Workspace(tmp_path / "ws")
    p = write(
        tmp_path,
        line(id="x1", answer="You live in Boston."),
        line(id="x2", answer="GARBAGE", asserts=[]),
    )

    def respond(req):
        if "GARBAGE" in req.prompt:
            return "not json at all"
        if req.purpose == "eval.answer":
            assert "Seattle" not in req.prompt  # the rubric never shows the labelled values
            return {"asserted": ["Boston"], "rationale": "Boston is stated as current."}
        same = req.prompt.count("Boston") >= 2  # Boston against Boston (never Seattle)
        return {
            "verdict": "equivalent" if same else "not_equivalent",
            "confidence": 0.9,
            "rationale": "The two values name the same city." if same else "Different cities.",
        }

    model = get_model("scripted:devset", workspace=ws).respond_with(respond)
    r = measure(
        load_answer_set(p),
        get_answer_judge("scripted:devset", workspace=ws),
        get_value_judge("scripted:devset", workspace=ws),
    )
    part = r.parts[0]
    assert (part.exact.k, part.exact.n, part.failures.k) == (1, 2, 1)
    assert not r.heuristic and r.judge == "scripted:devset"
    asked = len(model.history)
    again = measure(
        load_answer_set(p),
        get_answer_judge("scripted:devset", workspace=ws),
        get_value_judge("scripted:devset", workspace=ws),
    )
    # the valid verdicts come from the cache; only the failed one is asked again
    assert again.parts[0].exact.k == 1
    assert len(model.history) > asked
    # the call log says which verdicts were valid at the first try (x1 yes, x2 never)
    first = first_try_valid(ws, "devset")
    assert (first.k, first.n) == (1, 2)
    assert all("GARBAGE" in q.prompt for q in model.history[asked:])
    reset_scripts()


def test_a_model_verdict_that_copies_the_example_or_invents_a_value_is_asked_again(tmp_path):
    """What SmolLM2-135M did on the dev set: asserted ["<value>", "1.0"] with rationale
    "<one sentence>". Such a verdict is invalid, sent back with its problem, never stored."""
    from llm.scripted import reset_scripts

    from agentmemgate.answer_judge import AnswerQuestion
    from agentmemgate.llm import CallFailed, get_model
    from agentmemgate.workspace import Workspace

    reset_scripts()
    ws = Workspace(tmp_path / "ws")
    model = get_model("scripted:smol", workspace=ws)
    q = AnswerQuestion(
        field="home_city",
        description="The city the user lives in.",
        probe_question="Where does the user live?",
        answer="You live in Boston and might move to Seattle.",
    )
    judge = get_answer_judge("scripted:smol", workspace=ws)
    model.enqueue(
        {"asserted": ["<value>", "1.0"], "rationale": "<one sentence>"},
        {"asserted": ["Portland"], "rationale": "The user lives in Portland."},
        {"asserted": ["Boston"], "rationale": "Boston is where the user lives now."},
    )
    v = judge.ask(q)
    assert v.asserted == ["Boston"]
    asks = [r.prompt for r in model.history]
    assert len(asks) == 3 and "copies the format example" in asks[1]
    assert "'Portland' is not in the answer" in asks[2]
    assert all(r.max_tokens == 400 for r in model.history)
    model.enqueue({"asserted": ["I don't know"], "rationale": "The answer names no city at all."})
    assert judge.ask(q.model_copy(update={"answer": "I don't know where you live."})).asserted == []
    model.enqueue(*[{"asserted": ["Denver"], "rationale": "The user lives in Denver."}] * 3)
    with pytest.raises(CallFailed, match="not in the answer"):
        judge.ask(q.model_copy(update={"answer": "You live in Austin."}))
    reset_scripts()


# -- the script -----------------------------------------------------------------------------
def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.mark.slow
def test_the_script_measures_the_real_set_with_the_offline_rules():
    p = run("--part", "both", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    newest = get_answer_judge("offline").rubric  # the newest rules
    assert out["judge"] == "offline" and out["rubric"] == newest
    want = measure(load_answer_set(DEVSET), get_answer_judge("offline"), get_value_judge("offline"))
    assert [x["exact"] for x in out["parts"]] == [x.exact.model_dump() for x in want.parts]
    assert sum(x["n"] for x in out["parts"]) == len(load_answer_set(DEVSET).items)
    text = run("--judge", "offline:answer_cues.v1", "--show-errors")
    assert text.returncode == 0, text.stderr
    assert "dev: " in text.stdout and "false plan assertion" in text.stdout
    assert "heldout:" not in text.stdout and "judged wrong" in text.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--judge", "offline:answer_cues.v99"], "No offline answer rules version 99"),
        (["--answers", "/no/such/answers.jsonl"], "No answer set at"),
        (["--judge", "offline", "--base-url", "http://127.0.0.1:1/v1"], "are for a model judge"),
    ],
)
def test_the_script_gives_a_one_line_error(args, message):
    p = run(*args)
    assert p.returncode == 1
    assert p.stderr.startswith("Error: ") and message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


@pytest.mark.slow
def test_the_script_chooses_parts_and_files(tmp_path):
    """On hand-written lines (not the labelled set): --part both is dev and heldout, all adds
    heldout2; several --answers files are read together; a part a file lacks is an Error."""
    a = write(
        tmp_path,
        line(id="x1", answer="You live in Boston."),
        line(id="x2", part="heldout", answer="You live in Boston."),
    )
    b = tmp_path / "h2.jsonl"
    b.write_text(
        line(id="y1", part="heldout2", answer="You live in Boston.") + "\n", encoding="utf-8"
    )
    parts = lambda *args: [x["part"] for x in json.loads(run(*args, "--json").stdout)["parts"]]
    assert parts("--answers", str(a), str(b), "--part", "both") == ["dev", "heldout"]
    assert parts("--answers", str(a), str(b), "--part", "all") == ["dev", "heldout", "heldout2"]
    assert parts("--answers", str(a), str(b), "--part", "heldout2") == ["heldout2"]
    p = run("--answers", str(a), "--part", "heldout2")
    assert p.returncode == 1 and p.stderr.startswith("Error: no answers in part 'heldout2'")


def test_the_script_names_a_malformed_line(tmp_path):
    p = run("--answers", str(write(tmp_path, line(), "{oops")))
    assert (
        p.returncode == 1
        and p.stderr.strip()
        == "Error: answers.jsonl:2: not JSON (Expecting property name enclosed in double quotes)"
    )


def test_recorded_held_out_accuracy_matches_the_rules_as_they_are():
    """The figures eval reports quote for the offline answer rules are re-measured here, so a
    change to a rule file without re-recording (`measure.py --part both --record`) fails."""
    from agentmemgate.answer_judge import get_answer_judge
    from agentmemgate.answer_judge.accuracy import load_measured
    from agentmemgate.answer_judge.devset import load_answer_set, measure
    from agentmemgate.evaluate.judges import get_value_judge

    answers = load_answer_set()
    offline = [m for m in load_measured() if m.judge == "offline"]
    assert {m.rubric for m in offline} >= {"answer_cues.v1"}
    for m in offline:
        judge = get_answer_judge(f"offline:{m.rubric}")
        assert judge.rubric_sha256 == m.rubric_sha256, m.rubric
        assert answers.part_sha256(m.part) == m.answers_sha256
        part = next(
            p for p in measure(answers, judge, get_value_judge("offline"), parts=[m.part]).parts
        )
        assert (part.exact, part.false_plan, part.missed) == (m.exact, m.false_plan, m.missed)


def test_reports_quote_the_answer_judges_measured_accuracy(tmp_path):
    from agentmemgate.answer_judge.accuracy import accuracy_line

    line = accuracy_line("offline", "answer_cues.v1")
    assert "held-out part heldout2" in line and "/142 = " in line and "false exposures" in line
    assert accuracy_line("offline:answer_cues.v1", "answer_cues.v1").endswith(line.split(")", 1)[1])
    assert "fit" not in line  # v1 was written before the set existed
    v2 = accuracy_line("offline", "answer_cues.v2")  # the part written blind to v2, not a fit
    assert "heldout2" in v2 and "/142 = " in v2 and "tuned on these answers too" not in v2
    for rules in ("answer_cues.v9", "answer_cues.v10"):  # the newest set, written blind to both
        line = accuracy_line("offline", rules)
        assert "held-out part heldout12" in line and "/60 = " in line and "fit" not in line
    unknown = accuracy_line("openai:gpt-x", "answer_assertion.v1")
    assert (
        "not measured" in unknown and "measure.py --judge openai:gpt-x --part heldout12" in unknown
    )
