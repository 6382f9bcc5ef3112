"""The answers:SYSTEM audit source: blind answer_assertion audits of a black-box system's answers."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from agentmemgate.annotate_app import agreement_report, annotator_queue, create_audit
from agentmemgate.annotate_app.agreement import save_agreement_report
from agentmemgate.answer_judge import AnswerVerdict, get_answer_judge
from agentmemgate.cli import app
from agentmemgate.errors import BadInput
from agentmemgate.evaluate.audit_source import options_seed, reference_of
from agentmemgate.workspace import Workspace

from .answer_ws import answers_workspace

NEWEST = get_answer_judge("offline").rubric  # the newest offline answer rules

runner = CliRunner()


@pytest.fixture
def aws(small_build, tmp_path):
    return answers_workspace(small_build, tmp_path / "aws")


def items_of(ws, audit):
    """item id -> (payload, strata, reference label)."""
    rows = ws.db.execute(
        "select i.item_id, i.payload, s.strata, r.label from audit_items i "
        "join audit_item_strata s using (audit, item_id) "
        "left join audit_references r using (audit, item_id) where i.audit = ?",
        [audit],
    ).fetchall()
    return {i: (json.loads(p), json.loads(s), lab) for i, p, s, lab in rows}


def test_one_item_per_judged_answer_with_the_judge_recorded(aws):
    n_answers = aws.db.execute("select count(*) from eval_answers where name = 'mem0'").fetchone()[
        0
    ]
    made = create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"])
    assert made.n_items == made.n_references == n_answers and made.notes == []
    params = json.loads(aws.db.execute("select params from audits where name = 'a'").fetchone()[0])
    assert params["stratify_by"] == "verdict"  # the default stratum of this task
    j = params["reference_judge"]
    assert (j["spec"], j["answer_rubric"], j["heuristic"]) == ("offline", NEWEST, True)
    assert params["answers"]["stored"] == n_answers and params["system"] == "mem0"
    arcs = {a.id: a for a in aws.arcs("core")}
    for iid, (payload, strata, _) in items_of(aws, "a").items():
        assert iid.startswith("ans-") and strata["arc_id"] not in iid
        arc = arcs[strata["arc_id"]]
        stored = aws.db.execute(
            "select answer from eval_answers where name = 'mem0' and arc_id = ? "
            "and after_session = ?",
            [arc.id, int(strata["after_session"])],
        ).fetchone()[0]
        assert payload["kind"] == "answer"
        assert payload["answer"] == {"question": arc.spec.field.probe_question, "text": stored}
        assert {payload["pair"]["a"], payload["pair"]["b"]} == {
            arc.spec.initial_value,
            arc.spec.plan_value,
        }
        assert (payload["pair"]["a_name"], payload["pair"]["b_name"]) == ("Value A", "Value B")
        plan_letter = "a" if payload["pair"]["a"] == arc.spec.plan_value else "b"
        assert strata["plan_option"] == f"value_{plan_letter}"


def test_references_map_the_verdict_onto_the_options(aws):
    create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"])
    seen = Counter()
    for payload, strata, label in items_of(aws, "a").values():
        text = payload["answer"]["text"]
        plan = strata["plan_option"]
        initial = "value_b" if plan == "value_a" else "value_a"
        if text.startswith("Both "):
            want = "both"
        elif text == "I don't know.":
            want = "neither"
        elif text.startswith(("You go to ", "Still ")):  # "Still X, but thinking about Y": X only
            want = initial
        else:  # "{plan}."
            want = plan
        assert label == want, (text, strata)
        assert strata["reference"] == label
        cls = {initial: "initial", plan: "plan"}.get(label, label)
        assert strata["verdict"] == cls
        seen[cls] += 1
    assert set(seen) == {"initial", "plan", "both", "neither"}


def test_reference_of_counts_other_values_as_neither():
    same = lambda x, ref: x.lower() == ref.lower()
    v = lambda *xs: AnswerVerdict(asserted=list(xs), rationale="r")
    assert reference_of(v("boston"), "Boston", "Seattle", same) == ("initial", [])
    assert reference_of(v("Seattle"), "Boston", "Seattle", same) == ("plan", [])
    assert reference_of(v("Boston", "Seattle"), "Boston", "Seattle", same) == ("both", [])
    assert reference_of(v(), "Boston", "Seattle", same) == ("neither", [])
    assert reference_of(v("Denver"), "Boston", "Seattle", same) == ("neither", ["Denver"])
    assert reference_of(v("Seattle", "Denver"), "Boston", "Seattle", same) == ("plan", ["Denver"])


def test_a_value_neither_option_is_recorded_beside_the_reference(aws):
    # An LLM answer judge may name a value that is neither labelled value.
    (arc_id,) = aws.db.execute(
        "select arc_id from eval_answers where name = 'mem0' and "
        "after_session = 0 order by arc_id limit 1"
    ).fetchone()
    aws.db.execute(
        "update eval_answers set verdict = ? where name = 'mem0' and arc_id = ? and "
        "after_session = 0",
        [AnswerVerdict(asserted=["Planet Fitness"], rationale="r").model_dump_json(), arc_id],
    )
    aws.db.conn.commit()
    made = create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"])
    assert any(
        "1 verdict(s) assert a value that is neither labelled value" in n for n in made.notes
    )
    (hit,) = [
        (s, lab)
        for _, s, lab in items_of(aws, "a").values()
        if s["arc_id"] == arc_id and s["after_session"] == "0"
    ]
    assert hit[1] == "neither" and hit[0]["verdict"] == "neither"
    assert (
        "'Planet Fitness' match neither labelled value; the reference is neither"
        in hit[0]["reference_note"]
    )


def test_option_order_is_recorded_and_stable_for_a_seed(aws):
    for name, seed in (("s0", 0), ("s0b", 0), ("s1", 1)):
        create_audit(aws, name, "answer_assertion", "answers:mem0", annotators=["ana"], seed=seed)
    s0, s0b, s1 = (items_of(aws, n) for n in ("s0", "s0b", "s1"))
    assert s0.keys() == s1.keys()  # ids do not depend on the seed
    assert {i: v[0] for i, v in s0.items()} == {i: v[0] for i, v in s0b.items()}
    flipped = [i for i in s0 if s0[i][0]["pair"]["a"] != s1[i][0]["pair"]["a"]]
    assert flipped and len(flipped) < len(s0)
    import random

    for seed, items in ((0, s0), (1, s1)):
        for i, (payload, strata, _) in items.items():
            plan_first = random.Random(options_seed(seed, i)).random() < 0.5
            assert strata["plan_option"] == ("value_a" if plan_first else "value_b")
    letters = Counter(s["plan_option"] for _, s, _ in s0.values())
    assert set(letters) == {"value_a", "value_b"}  # the plan value is not always first


def test_sample_is_stratified_by_the_verdict_class(aws):
    create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"], sample_n=8)
    classes = Counter(s["verdict"] for _, s, _ in items_of(aws, "a").values())
    assert classes == {"initial": 2, "plan": 2, "both": 2, "neither": 2}
    create_audit(
        aws,
        "b",
        "answer_assertion",
        "answers:mem0",
        annotators=["ana"],
        sample_n=3,
        stratify_by="outcome",
    )  # --stratify-by still works
    assert {s["outcome"] for _, s, _ in items_of(aws, "b").values()} == {
        "came_true",
        "abandoned",
        "open",
    }


def test_unjudged_answers_are_skipped_with_a_count_or_refused(aws):
    aws.db.execute(
        "update eval_answers set verdict = null where rowid in "
        "(select rowid from eval_answers order by arc_id, after_session limit 3)"
    )
    aws.db.conn.commit()
    made = create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"])
    assert "Skipped 3 answer(s) not judged yet." in made.notes
    aws.db.execute("update eval_answers set verdict = null")
    aws.db.conn.commit()
    with pytest.raises(BadInput, match=r"None of the \d+ stored answers of 'mem0' is judged yet"):
        create_audit(aws, "b", "answer_assertion", "answers:mem0")


@pytest.mark.parametrize(
    "source, needle",
    [
        (
            "answers:nobody",
            "Error: No stored answers for system 'nobody'; systems with answers: mem0",
        ),
        ("answers", "Error: Use --from answers:SYSTEM; systems with answers: mem0"),
    ],
)
def test_unknown_system_is_one_line_listing_systems(aws, source, needle):
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "x",
            "--task",
            "answer_assertion",
            "--from",
            source,
            "--workspace",
            str(aws.path),
        ],
    )
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.strip().splitlines() == [needle]


def test_a_workspace_with_no_answers_says_how_to_store_some(tmp_path):
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "x",
            "--task",
            "answer_assertion",
            "--from",
            "answers:mem0",
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    assert res.exit_code == 1
    assert res.output.strip() == (
        "Error: No stored answers for system 'mem0'; systems with "
        "answers: none (store some with `amg eval answers FILE --name "
        "SYSTEM`)"
    )
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "x",
            "--task",
            "evidence_type",
            "--from",
            "answers:mem0",
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    assert "Source 'answers' has no evidence_type items; it serves: answer_assertion" in res.output


def test_import_labels_and_the_agreement_report(aws, tmp_path):
    """One item per verdict class; ana agrees with the judge, ben flips the plan decision twice."""
    w = str(aws.path)
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "aa",
            "--task",
            "answer_assertion",
            "--from",
            "answers:mem0",
            "--sample",
            "4",
            "--annotators",
            "ana,ben",
            "--workspace",
            w,
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Audit 'aa': 4 answer_assertion items, 4 with a reference label" in res.output
    items = items_of(Workspace(w), "aa")
    by_class = {s["verdict"]: (i, s) for i, (_, s, _) in items.items()}
    assert set(by_class) == {"initial", "plan", "both", "neither"}
    rows = []
    for cls, (iid, s) in by_class.items():
        ref = items[iid][2]
        rows.append(f"{iid},ana,{ref}")
        ben = {"plan": "neither", "neither": s["plan_option"]}.get(cls, ref)
        rows.append(f"{iid},ben,{ben}")
    f = tmp_path / "labels.csv"
    f.write_text("item_id,annotator,label\n" + "\n".join(rows) + "\n")
    res = runner.invoke(app, ["audit", "import", "aa", str(f), "--workspace", w])
    assert res.exit_code == 0, res.output
    assert "Updated answer_assertion audit 'aa': 8 labels by ana, ben for 4 items." in res.output

    r = agreement_report(Workspace(w), "aa", resamples=50)
    assert (r.percent_agreement.k, r.percent_agreement.n) == (2, 4)
    v = r.vs_reference
    assert (v.agreement.k, v.agreement.n) == (6, 8) and v.sources == {"judge": 4}
    pa = v.plan_asserted
    assert (pa.agreement.k, pa.agreement.n) == (6, 8)
    assert (pa.judge_yes_human_no.k, pa.judge_yes_human_no.n) == (1, 4)  # ben on the plan item
    assert (pa.judge_no_human_yes.k, pa.judge_no_human_yes.n) == (1, 4)  # ben on the neither item
    assert pa.confusion.labels == ["yes", "no", "cant_tell"]
    assert pa.confusion.matrix == [[3, 1, 0], [1, 3, 0], [0, 0, 0]]
    assert round(pa.judge_yes_human_no.ci_low, 3) == 0.046  # Wilson 1/4
    assert v.per_annotator["ana"].plan_asserted.agreement.value == 1.0
    assert (r.plan_asserted_human.k, r.plan_asserted_human.n) == (2, 4)
    assert r.reference_name.startswith(f"the answer judge offline ({NEWEST}; heuristic rules)")
    assert r.labels == ["value_a", "value_b", "both", "neither", "cant_tell"]

    res = runner.invoke(app, ["report", "agreement", "aa", "--resamples", "50", "--workspace", w])
    assert res.exit_code == 0, res.output
    md = res.stdout
    assert f"Reference: the answer judge offline ({NEWEST}; heuristic rules)" in md
    assert (
        "Judge says plan asserted, human says not (the judge's false plan assertions, which "
        "inflate exposure): 1 of the 4 judge-yes observations a human decided: "
        "1/4 = 25.0% [4.6, 69.9]" in md
    )
    assert "Percent agreement on plan asserted or not (all pairs): 2/4 = 50.0%" in md
    assert "| value A | value B | both | neither |" in md.replace("can't tell |", "")
    folder = aws.path / "reports" / "agreement-aa"
    assert (folder / "confusion_plan.png").stat().st_size > 0
    obj = json.loads((folder / "report.json").read_text())
    assert obj["vs_reference"]["plan_asserted"]["judge_yes_human_no"]["k"] == 1


def test_other_tasks_reports_have_no_plan_block(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("item_id,annotator,label\nx,ana,yes\nx,ben,no\n")
    ws = Workspace(tmp_path / "ws")
    from agentmemgate.annotate_app import import_labels

    import_labels(ws, "r", f)
    report, _ = save_agreement_report(ws, "r", resamples=0)
    obj = json.loads(report.model_dump_json())
    assert "plan_asserted_human" not in obj and "reference_name" not in obj


def test_queue_payload_hides_the_verdict_and_the_arc(aws):
    made = create_audit(aws, "a", "answer_assertion", "answers:mem0", annotators=["ana"])
    token = made.links["ana"].split("token=")[1]
    dumped = json.dumps([q.model_dump() for q in annotator_queue(aws, token)])
    secrets = {
        "plan_option",
        "verdict",
        "judge",
        "rationale",
        "reference",
        "framed",
        "stated as current",
        "came_true",
        "abandoned",
        "after_session",
        "arc_id",
    }
    for arc_id, raw in aws.db.execute("select arc_id, verdict from eval_answers").fetchall():
        secrets.add(arc_id)
        secrets.add(json.loads(raw)["rationale"])
    for s in secrets:
        assert s not in dumped, s


def test_an_llm_judges_verdicts_are_mapped_with_its_equivalence_judge(ws, tmp_path):
    """The stored judge is a model: its asserted values are worded as the answer words them, so
    the options are matched by the same model's equivalence verdicts, not by string equality."""
    from agentmemgate.evaluate import run_answers
    from agentmemgate.llm import get_model

    from .test_measures import OPEN

    asked = []

    def respond(req):
        if "Value 1:" in req.prompt:
            v1 = req.prompt.split("Value 1: ")[1].split("\n")[0].strip().lower()
            v2 = req.prompt.split("Value 2: ")[1].split("\n")[0].strip().lower()
            asked.append((v1, v2))
            same = v1 in v2 or v2 in v1
            return {
                "verdict": "equivalent" if same else "not_equivalent",
                "confidence": 0.9,
                "rationale": "compared the two values",
            }
        answer = req.prompt.split("<<<\n")[1].split("\n>>>")[0]
        return {"asserted": [answer.rstrip(".")], "rationale": "read the answer"}

    get_model("scripted:audit-judge").respond_with(respond)
    ws.save_specs([OPEN.spec])
    ws.save_arc(OPEN)
    p = tmp_path / "a.jsonl"
    p.write_text(
        "\n".join(
            json.dumps({"arc_id": OPEN.id, "after_session": i, "answer": a})
            for i, a in enumerate(["the Deezer app.", "Spotify."])
        )
        + "\n"
    )
    s = run_answers(ws, p, "product", judge="scripted:audit-judge", show_progress=False)
    assert s.failed == 0, s.failure_examples
    asked.clear()
    made = create_audit(ws, "a", "answer_assertion", "answers:product", annotators=["ana"])
    got = {s["after_session"]: (lab, s) for _, s, lab in items_of(ws, "a").values()}
    assert got["0"][0] == got["0"][1]["plan_option"] and got["0"][1]["verdict"] == "plan"
    assert got["1"][0] == "neither" and "'Spotify' match neither" in got["1"][1]["reference_note"]
    # "the Deezer app" is not "Deezer" as a string: the model's verdict (from the LLM cache
    # where the eval already asked that pair) made it the plan value; only new pairs were asked.
    assert ("deezer", "the deezer app") not in asked and ("the deezer app", "deezer") not in asked
    assert asked and all("the deezer app" in pair or "spotify" in pair for pair in asked)
    j = json.loads(ws.db.execute("select params from audits").fetchone()[0])["reference_judge"]
    assert (j["spec"], j["answer_rubric"], j["heuristic"]) == (
        "scripted:audit-judge",
        "answer_assertion.v2",
        False,
    )
    assert made.n_references == 2
    r = agreement_report(ws, "a", resamples=0)
    assert r.reference_name.startswith(
        "the answer judge scripted:audit-judge (answer_assertion.v2; a model)"
    )


def test_an_unreachable_llm_judge_is_one_line(aws, monkeypatch):
    """Stored verdicts of a model judge whose values need its equivalence verdicts, no key set."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    aws.db.execute("update eval_judges set spec = 'openai:gpt-4o-mini'")
    aws.db.execute(
        "update eval_answers set verdict = ?",
        [AnswerVerdict(asserted=["the place"], rationale="r").model_dump_json()],
    )
    aws.db.conn.commit()
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "x",
            "--task",
            "answer_assertion",
            "--from",
            "answers:mem0",
            "--workspace",
            str(aws.path),
        ],
    )
    assert res.exit_code == 1 and "Traceback" not in res.output
    [line] = res.output.strip().splitlines()
    assert line.startswith("Error: These answers were judged by openai:gpt-4o-mini; matching")
    assert "OPENAI_API_KEY" in line and "sk-" not in line


def test_a_failed_judge_call_that_reaches_the_command_is_one_line(ws, tmp_path):
    """Mapping a model judge's asserted values onto the options asks its equivalence verdicts; a
    call that fails there belongs to no item of a run, and the command stops with one line."""
    from agentmemgate.evaluate import run_answers
    from agentmemgate.llm import CallFailed, get_model

    from .test_measures import OPEN

    def respond(req):
        if "Value 1:" in req.prompt:
            return {
                "verdict": "not_equivalent",
                "confidence": 0.9,
                "rationale": "compared the two values",
            }
        answer = req.prompt.split("<<<\n")[1].split("\n>>>")[0]
        return {"asserted": [answer.rstrip(".")], "rationale": "read the answer"}

    judge = get_model("scripted:audit-judge-down").respond_with(respond)
    ws.save_specs([OPEN.spec])
    ws.save_arc(OPEN)
    p = tmp_path / "a.jsonl"
    p.write_text(
        "\n".join(
            json.dumps({"arc_id": OPEN.id, "after_session": i, "answer": a})
            for i, a in enumerate(["the Deezer app.", "Spotify."])
        )
        + "\n"
    )
    assert (
        run_answers(ws, p, "product", judge="scripted:audit-judge-down", show_progress=False).failed
        == 0
    )
    judge.respond_with(
        lambda req: CallFailed("scripted server error (HTTP 503)", kind="server_error")
    )
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "x",
            "--task",
            "answer_assertion",
            "--from",
            "answers:product",
            "--workspace",
            str(ws.path),
        ],
    )
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.strip().splitlines() == ["Error: scripted server error (HTTP 503)"]


def test_imported_answer_labels_without_the_plan_mapping_have_no_collapse(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("item_id,annotator,label\nx,ana,value_a\nx,ben,both\n")
    from agentmemgate.annotate_app import import_labels

    ws = Workspace(tmp_path / "ws")
    assert import_labels(ws, "imp", f).task == "answer_assertion"  # inferred from the labels
    r = agreement_report(ws, "imp", resamples=0)
    assert r.plan_asserted_human is None and r.vs_reference is None
    assert (r.percent_agreement.k, r.percent_agreement.n) == (0, 1)
