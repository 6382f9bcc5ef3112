"""``amg eval run --natural SET`` on a tiny hand-checked set: what systems see, task accuracy
(k/n, Wilson), the paired gate-on minus gate-off difference with one bootstrap cluster per
conversation, the report's Section 6.1 paragraph and JSON, resuming, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora.natural import build_natural_set, load_items
from agentmemgate.errors import BadInput
from agentmemgate.evaluate import compute_report, report_markdown, system_spec
from agentmemgate.evaluate.aggregate import paired_difference
from agentmemgate.evaluate.measures import ArcScore
from agentmemgate.evaluate.natural import run_natural
from agentmemgate.memory.system import (
    FieldKey,
    FieldState,
    MemoryEvent,
    MemorySystem,
    StoreSnapshot,
)

from .doubles import info

FIXTURES = Path(__file__).parents[1] / "fixtures"
NAT_LME = FIXTURES / "natural_longmemeval.json"
NAT_LOCOMO = FIXTURES / "natural_locomo.json"
runner = CliRunner()


class KeywordSystem(MemorySystem):
    """Commits ``value`` at a user turn containing ``cue`` (test double; no model, no rules)."""

    def __init__(self, rules: list[tuple[str, str]], system_info, seen: list | None = None):
        self.rules, self.info, self.seen = rules, system_info, seen
        self._calls = 0

    def begin(self, fields):
        self.key, self.current, self.t = FieldKey.of(fields[0]), None, -1
        if self.seen is not None:
            self.seen.append(("begin", fields))

    def process_turn(self, turn, context):
        if self.seen is not None:
            self.seen.append(("turn", turn, len(context)))
        self._calls += 1
        for cue, value in self.rules:
            if cue in turn.text:
                self.current = value
                return [MemoryEvent(kind="committed", t=turn.t, key=self.key, value=value)]
        return []

    def read(self, key):
        return self.current if key == self.key else None

    def snapshot(self, t):
        return StoreSnapshot(t=t, fields=[FieldState(key=self.key, current=self.current)])

    @property
    def calls(self):
        return self._calls


# gated: right on the sneakers and on Seattle; ungated: right on the BBQ sauce only
GATED = [
    ("shoe rack", "in a shoe rack in my closet"),
    ("Sweet Baby Ray", "Sweet Baby Ray's"),
    ("It's Seattle", "Seattle"),
]
UNGATED = [
    ("under my bed", "under my bed"),
    ("Kansas City Master", "Kansas City Masterpiece"),
    ("Chicago", "Chicago"),
]


def specs(seen=None):
    def make(rules, i):
        f = lambda **_: KeywordSystem(rules, i, seen)
        f.info = i
        return system_spec(f, name=i.name, info=i)

    return [
        make(UNGATED, info("kw-ungated", False)),
        make(GATED, info("kw-gated", True, "kw-ungated")),
    ]


@pytest.fixture
def tiny(ws):
    build_natural_set(ws, NAT_LME, "longmemeval", "lme", progress=False)  # 3 items, 2 fielded
    build_natural_set(ws, NAT_LOCOMO, "locomo", "loc", progress=False)  # 1 item
    return ws


def test_figures_by_hand(tiny):
    s = run_natural(tiny, ["lme", "loc"], specs(), show_progress=False)
    assert s.sets == {
        "lme": {"items": 3, "fielded": 2, "refused": 1},
        "loc": {"items": 1, "fielded": 1, "refused": 0},
    }
    assert (s.ran_now, s.failed, s.already_done) == (6, 0, 0)
    r = compute_report(tiny)
    acc = {
        (n, sp): r.stat(n, sp, "task_accuracy")
        for n in ("kw-gated", "kw-ungated")
        for sp in ("natural:lme", "natural:loc")
    }
    assert (acc["kw-gated", "natural:lme"].k, acc["kw-gated", "natural:lme"].n) == (1, 2)
    assert (acc["kw-ungated", "natural:lme"].k, acc["kw-ungated", "natural:lme"].n) == (1, 2)
    assert (acc["kw-gated", "natural:loc"].k, acc["kw-ungated", "natural:loc"].k) == (1, 0)
    # Wilson 1/2: [9.5, 90.5]
    assert round(100 * acc["kw-gated", "natural:lme"].ci_low, 1) == 9.5
    assert round(100 * acc["kw-gated", "natural:lme"].ci_high, 1) == 90.5
    d = {x.split: x for x in r.differences if x.system == "kw-gated"}
    lme, loc = d["natural:lme"], d["natural:loc"]
    assert (lme.kind, lme.baseline, lme.measure) == (
        "gated_minus_ungated",
        "kw-ungated",
        "task_accuracy",
    )
    assert (lme.n, lme.value, lme.n_gained, lme.n_lost, lme.clusters) == (2, 0.0, 1, 1, 2)
    assert lme.ci_low == -1.0 and lme.ci_high == 1.0  # two clusters: +1 or -1 or both
    assert (loc.n, loc.value, loc.ci_low, loc.ci_high, loc.clusters) == (1, 1.0, 1.0, 1.0, 1)
    # arcs' tables are untouched: natural results sit under their own split names only
    assert set(r.systems["kw-gated"]) == {"natural:lme", "natural:loc"}


def test_report_paragraph_and_json(tiny):
    run_natural(tiny, ["lme"], specs(), show_progress=False)
    r = compute_report(tiny)
    md = report_markdown(r)
    assert "## Natural conversations: lme (Section 6.1)" in md
    assert (
        "We also test 3 questions from LongMemEval whose answers depend on a fact that "
        "changes during the conversation (set lme, rule longmemeval-knowledge-update.v1; 3 "
        "conversations). 2 have a value-free field"
    ) in md
    assert (
        "The paired gate-on minus gate-off difference in task accuracy is +0.0 points "
        "[-100.0, +100.0] for the kw-gated style (n=2; 1 up, 1 down; 2 clusters)"
    ) in md
    assert "| kw-gated | 1/2 50.0% [9.5, 90.5] |" in md
    assert "License: MIT (LongMemEval" in md
    assert "offline equivalence judge compares normalized strings" in md
    j = r.to_json()
    assert j["systems"]["kw-gated"]["natural:lme"]["task_accuracy"]["k"] == 1
    assert j["meta"]["natural"]["lme"]["license"].startswith("MIT")
    assert (j["meta"]["natural"]["lme"]["items"], j["meta"]["natural"]["lme"]["refused"]) == (3, 1)
    diff = [x for x in j["differences"] if x["split"] == "natural:lme"][0]
    assert diff["clusters"] == 2 and diff["n"] == 2


def test_systems_see_turns_and_the_field_only(tiny):
    seen: list = []
    run_natural(tiny, ["loc"], specs(seen)[:1], show_progress=False)
    item = next(i for i, _ in load_items(tiny, "loc"))
    (_, fields), *turns = seen
    assert fields == [item.field]
    users = [t.text for s in item.sessions for t in s.turns if t.role == "user"]
    assert [t.text for _, t, _ in turns] == users
    assert [t.date.isoformat() for _, t, _ in turns][0] == "2023-07-16"
    dumped = json.dumps([t.model_dump(mode="json") for _, t, _ in turns])
    for secret in (item.item_id, item.question, "conv-43", "D3:19"):
        assert secret not in dumped


def test_rerun_is_skipped_and_a_rebuilt_item_reruns(tiny):
    run_natural(tiny, ["lme"], specs(), show_progress=False)
    again = run_natural(tiny, ["lme"], specs(), show_progress=False)
    assert (again.ran_now, again.already_done) == (0, 4)
    build_natural_set(tiny, NAT_LME, "longmemeval", "lme", limit=1, progress=False)
    assert run_natural(tiny, ["lme"], specs(), show_progress=False).already_done == 2


def test_cluster_bootstrap_by_hand():
    def score(i, ok):
        return ArcScore(
            arc_id=i,
            split="natural:x",
            factor="natural",
            level="natural",
            outcome="natural",
            values={"task_accuracy": ok},
        )

    a = {"a1": score("a1", True), "a2": score("a2", True), "b1": score("b1", False)}
    b = {"a1": score("a1", False), "a2": score("a2", False), "b1": score("b1", False)}
    d = paired_difference(
        "gated_minus_ungated",
        "g",
        "u",
        "natural:x",
        "task_accuracy",
        a,
        b,
        clusters={"a1": "A", "a2": "A", "b1": "B"},
    )
    # resampled pairs of clusters: AA -> 1, AB/BA -> 2/3, BB -> 0
    assert (d.value, d.n, d.clusters, d.n_gained, d.n_lost) == (2 / 3, 3, 2, 2, 0)
    assert (d.ci_low, d.ci_high) == (0.0, 1.0)


def test_offline_systems_from_the_cli(tmp_path):
    w = tmp_path / "ws"
    runner.invoke(
        app,
        ["natural", "build", str(NAT_LME), "--name", "lme", "--workspace", str(w), "--no-progress"],
    )
    r = runner.invoke(
        app, ["eval", "run", "--natural", "lme", "--workspace", str(w), "--no-progress"]
    )
    assert r.exit_code == 0, r.output
    assert (
        "systems: cautious-ungated, cautious-gated, literal-ungated, literal-gated (offline "
        "rules); judge: offline (heuristic)"
    ) in r.output
    assert "natural set lme: 3 items, 2 with a value-free field" in r.output
    assert "ran now 8, re-scored 0, already stored 0, failed 0" in r.output
    r = runner.invoke(
        app, ["report", "eval", "--workspace", str(w), "--out", str(tmp_path / "rep")]
    )
    assert r.exit_code == 0, r.output
    assert "The components are offline rules, not language models" in r.output
    j = json.loads((tmp_path / "rep" / "eval.json").read_text())
    for name in ("cautious-gated", "literal-gated", "cautious-ungated", "literal-ungated"):
        assert j["systems"][name]["natural:lme"]["task_accuracy"]["n"] == 2
    styles = {d["system"] for d in j["differences"] if d["split"] == "natural:lme"}
    assert styles == {"cautious-gated", "literal-gated"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--natural", "nope"], "Error: No natural set 'nope' in workspace"),
        (["--natural", "lme", "--split", "core"], "Error: --natural runs natural sets, not splits"),
        (["--limit", "2"], "Error: --limit applies to --natural runs only"),
        (
            ["--natural", "lme", "--system", "literal-gated[oracle]"],
            "Error: literal-gated[oracle] is an oracle ablation",
        ),
    ],
)
def test_cli_errors(tmp_path, args, message):
    w = tmp_path / "ws"
    runner.invoke(
        app,
        ["natural", "build", str(NAT_LME), "--name", "lme", "--workspace", str(w), "--no-progress"],
    )
    r = runner.invoke(app, ["eval", "run", *args, "--workspace", str(w), "--no-progress"])
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), r.output


def test_limit_runs_the_first_items(tiny):
    s = run_natural(tiny, ["lme"], specs(), limit=1, show_progress=False)
    assert s.sets["lme"] == {"items": 1, "fielded": 1, "refused": 0} and s.ran_now == 2


def test_no_set_named(tiny):
    with pytest.raises(BadInput, match="--natural needs a set name"):
        run_natural(tiny, [], specs(), show_progress=False)


def test_answering_inputs_hold_the_sessions_and_the_question_only(tiny):
    from agentmemgate.evaluate.natural import answering_inputs

    item = next(i for i, _ in load_items(tiny, "lme"))
    sessions, question, date = answering_inputs(item)
    assert question == "Where do I currently keep my old sneakers?"
    assert [s.date.isoformat() for s in sessions] == ["2023-05-20", "2023-05-26"]
    assert date.isoformat() == "2023-06-07"
    assert [len(s.turns) for s in sessions] == [12, 12] and sessions[0].turns[0].role == "user"
    dumped = json.dumps([s.model_dump(mode="json") for s in sessions])
    for secret in (item.item_id, "answer_7e9ad7b4", "has_answer", item.evidence[0]):
        assert secret not in dumped


def test_show_a_natural_item(tiny):
    from agentmemgate.evaluate import show_arc

    run_natural(tiny, ["loc"], specs(), show_progress=False)
    text = show_arc(tiny, "natural:loc:conv-43/qa-3", "kw-gated")
    assert text.startswith("Natural item conv-43/qa-3 of set loc (locomo; CC BY-NC 4.0")
    assert "Gold answer: 'Seattle'; evidence: D3:19, D5:2, D6:1, D6:3" in text
    assert "[evidence]: It's Seattle, I'm stoked" in text
    assert "committed 'Seattle'" in text
    assert text.rstrip().endswith(
        "task_accuracy (judge offline): yes (end read 'Seattle', gold answer 'Seattle')"
    )
    with pytest.raises(BadInput, match="No item 'nope' in natural set 'loc'"):
        show_arc(tiny, "natural:loc:nope", "kw-gated")
    with pytest.raises(BadInput, match="No natural set 'zzz'"):
        show_arc(tiny, "natural:zzz:x", "kw-gated")


# -- answering systems (products, baselines): asked the question itself -------------------------
class Recorder:
    """An answering system that answers 'in a shoe rack in my closet' if it was told of a shoe
    rack, 'Kansas City Masterpiece' never, and records everything it was given."""

    def __init__(self, log):
        from agentmemgate.memory.system import SystemInfo

        self.info = SystemInfo(name="recorder", description="test answering double", gated=False)
        self.log = log

    def begin(self, namespace):
        self.log.append(("begin", namespace))
        self.text = ""

    def ingest(self, session):
        self.log.append(("ingest", session))
        self.text += " ".join(t.text for t in session.turns)

    def answer(self, question, date):
        from agentmemgate.memory.answering import ProbeAnswer

        self.log.append(("answer", question, date))
        return ProbeAnswer(
            answer="in a shoe rack in my closet" if "shoe rack" in self.text else "I don't know"
        )

    def close(self):
        self.log.append(("close",))

    @property
    def calls(self):
        return 1


def test_answering_system_is_asked_the_question_on_every_item(tiny):
    from agentmemgate.evaluate import answering_spec

    log: list = []
    factory = lambda: Recorder(log)
    factory.info = Recorder([]).info
    spec = answering_spec(factory, name="recorder")
    s = run_natural(tiny, ["lme"], [spec] + specs(), show_progress=False)
    assert s.sets["lme"] == {"items": 3, "fielded": 2, "refused": 1}
    assert s.ran_now == 3 + 4  # the answering system on all 3 items, the two components on 2
    assert "(answering systems run on all)" in "\n".join(s.lines())
    asked = [e for e in log if e[0] == "answer"]
    assert [q for _, q, _ in asked] == [i.question for i, _ in load_items(tiny, "lme")]
    assert asked[0][2].isoformat() == "2023-06-07"  # the question's date
    namespaces = [e[1] for e in log if e[0] == "begin"]
    assert len(set(namespaces)) == 3 and all(n.startswith("amg-") for n in namespaces)
    assert not any("07741c45" in n or "lme" in n for n in namespaces)  # opaque
    r = compute_report(tiny)
    st = r.stat("recorder", "natural:lme", "task_accuracy")
    assert (st.k, st.n) == (1, 3)  # right on the sneakers only (offline judge, exact strings)
    md = report_markdown(r)
    assert (
        "Answering systems (recorder) ingest the sessions and are asked the question itself" in md
    )
    assert "component systems run on those (2 scored)" in md
    again = run_natural(tiny, ["lme"], [spec], show_progress=False)
    assert (again.ran_now, again.already_done) == (0, 3)
