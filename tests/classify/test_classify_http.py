"""The LLM classifier through the real OpenAI SDK over an httpx MockTransport: logprobs, the
fallback to votes when a server rejects them, and two compatible servers as two families."""

from __future__ import annotations

import json
import math
import re

import pytest
from llm.llm_fakes import OPENAI_KEY, FakeApi, openai_error, openai_ok
from typer.testing import CliRunner

from agentmemgate.classify import classifier_report, classify_set, label_statements, stored
from agentmemgate.classify.model_classifier import ModelClassifier
from agentmemgate.cli import app
from agentmemgate.corpora import import_statements
from agentmemgate.errors import BadInput, SameFamilyJudge
from agentmemgate.llm import ModelRef, get_model

ROWS = {
    "s0": ("I might move to Seattle next year.", "speculation"),
    "s1": ("I moved to Denver last month.", "completed_event"),
    "s2": ("I love jazz.", "other"),
    "s3": ("I'm thinking about adopting a dog.", "speculation"),
}
# what the fake model puts on each class token (the rest goes to an unmapped token "The")
MASS = {
    "I might move to Seattle next year.": {"spec": 0.7, "other": 0.1, "completed": 0.1},
    "I moved to Denver last month.": {"completed": 0.8, "spec": 0.05, "other": 0.1},
    "I love jazz.": {"other": 0.6, "completed": 0.2, "spec": 0.1, "explicit": 0.05},
    "I'm thinking about adopting a dog.": {"spec": 0.5, "Spec": 0.1, "other": 0.3},
}


def _statement(body: dict) -> str:
    return re.search(
        r"Statement \([^)]*\):\n(.*?)\n\nAnswer", body["messages"][-1]["content"], re.S
    ).group(1)


def _logprob_reply(request):
    body = json.loads(request.content)
    mass = dict(MASS[_statement(body)])
    mass["The"] = 1 - sum(mass.values()) - 1e-9
    top = sorted(mass.items(), key=lambda kv: -kv[1])
    items = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in top]
    return openai_ok(top[0][0], logprobs=[{**items[0], "top_logprobs": items}])


@pytest.fixture
def gold(ws, tmp_path):
    f = tmp_path / "gold.jsonl"
    f.write_text(
        "\n".join(json.dumps({"id": k, "text": t, "reference": r}) for k, (t, r) in ROWS.items())
    )
    import_statements(ws, "gold", f)
    return "gold"


def _classifier(ws, api, monkeypatch, base_url=None, name="gpt-test", **kw):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    model = get_model(
        f"openai:{name}", workspace=ws, base_url=base_url, http_client=api.client(), max_retries=0
    )
    return ModelClassifier(f"openai:{name}", workspace=ws, model=model, progress=False, **kw)


def test_probabilities_from_token_logprobs(ws, gold, monkeypatch):
    api = FakeApi(_logprob_reply)
    r = classify_set(ws, gold, classifier=_classifier(ws, api, monkeypatch), runs=2, concurrency=1)
    assert (r.new, r.errors) == (8, 0)
    bodies = api.bodies()
    assert all(
        b["logprobs"] is True and b["top_logprobs"] == 20 and b["temperature"] == 0.0
        for b in bodies
    )
    assert len({b.get("seed") for b in bodies}) == 2  # run 1 asks for another sample than run 0
    rows = {(x.statement_id, x.run): x for x in stored(ws, gold)}
    d = rows[("s3", 0)]  # 'spec' and 'Spec' both start "speculative"; 'The' is unmapped
    assert d.probs["speculation"] == pytest.approx(0.6 / 0.9)
    assert d.probs["other"] == pytest.approx(0.3 / 0.9) and d.probs["explicit_correction"] == 0
    assert d.p_commit == pytest.approx(0.3 / 0.9) and d.predicted == "speculation"
    assert d.method == "logprobs(top=20); mapped mass 0.900 of 1.000"
    assert rows[("s2", 0)].probs["explicit_correction"] == pytest.approx(0.05 / 0.95)
    rep = classifier_report(ws, gold, resamples=50, plots=False)
    c = rep.classifiers[0]
    # the per-statement mapped mass differs; the report names the method once
    assert c.methods == ["logprobs(top=20)"] and c.auroc.value == 1.0
    assert "method logprobs(top=20); 2 runs" in "\n".join(rep.lines())


def test_a_server_that_rejects_logprobs_gets_votes(ws, gold, monkeypatch):
    def reply(request):
        body = json.loads(request.content)
        if body.get("logprobs"):
            return openai_error(400, "logprobs are not supported", etype="invalid_request_error")
        words = {"I might move to Seattle next year.": ["speculative", "speculative", "other"]}
        options = words.get(_statement(body), ["other", "completed_event", "other"])
        return openai_ok(options[body["seed"] % 3])

    api = FakeApi(reply)
    clf = _classifier(ws, api, monkeypatch, base_url="http://127.0.0.1:9/v1", samples=3)
    r = classify_set(ws, gold, classifier=clf, concurrency=1)
    assert r.errors == 0
    bodies = api.bodies()
    assert bodies[0]["logprobs"] is True and not any(b.get("logprobs") for b in bodies[1:])
    assert len(bodies) == 1 + 4 * 3  # one refused logprob request, then three votes each
    assert all(b["temperature"] == 1.0 for b in bodies[1:])
    assert len({b["seed"] for b in bodies[1:4]}) == 3
    methods = {x.method.split(";")[0] for x in stored(ws, gold)}
    assert methods == {"votes(k=3)"}
    for x in stored(ws, gold):
        assert sum(x.probs.values()) == pytest.approx(1) and all(
            v * 3 == round(v * 3) for v in x.probs.values()
        )


def test_two_compatible_servers_count_as_two_families(ws, gold, monkeypatch):
    api = FakeApi(
        lambda request: openai_ok(
            "speculative"
            if "might" in request.content.decode() or "thinking" in request.content.decode()
            else "other"
        )
    )
    a = _classifier(
        ws,
        api,
        monkeypatch,
        base_url="http://127.0.0.1:8001/v1",
        name="a",
        method="votes",
        samples=1,
    )
    b = _classifier(
        ws,
        api,
        monkeypatch,
        base_url="http://127.0.0.1:8002/v1",
        name="b",
        method="votes",
        samples=1,
    )
    assert (a.family, b.family) == (
        "openai-compatible:localhost:8001",
        "openai-compatible:localhost:8002",
    )
    s = label_statements(
        ws,
        gold,
        ["openai:a"],
        votes=3,
        relabel="openai:b",
        replace=True,
        classifiers={"openai:a": a, "openai:b": b},
    )
    assert (s.agreed, s.disputed, s.ties) == (4, 0, 0)
    same = _classifier(
        ws,
        api,
        monkeypatch,
        base_url="http://127.0.0.1:8001/v1",
        name="c",
        method="votes",
        samples=1,
    )
    with pytest.raises(SameFamilyJudge):
        label_statements(
            ws,
            gold,
            ["openai:a"],
            relabel="openai:c",
            replace=True,
            classifiers={"openai:a": a, "openai:c": same},
        )


def test_base_urls_go_to_openai_specs_only(ws, gold):
    with pytest.raises(BadInput, match="--relabel-base-url http://x is for an openai: relabeler"):
        label_statements(
            ws, gold, ["offline"], relabel=ModelRef.parse("anthropic:claude-x", "http://x")
        )
    with pytest.raises(BadInput, match="--voters-base-url http://x is for openai: voters"):
        label_statements(ws, gold, ModelRef.each(["offline"], "http://x"))
    r = CliRunner().invoke(
        app,
        ["classify", "--statements", gold, "--base-url", "http://x", "--workspace", str(ws.path)],
    )
    assert r.exit_code == 1 and "is for an openai: classifier" in r.output
    r = CliRunner().invoke(
        app,
        [
            "statements",
            "label",
            gold,
            "--voters",
            "offline",
            "--relabel",
            "anthropic:claude-x",
            "--relabel-base-url",
            "http://x",
            "--workspace",
            str(ws.path),
        ],
    )
    assert r.exit_code == 1 and r.output.startswith(
        "Error: --relabel-base-url http://x is for an openai:"
    )


def test_a_server_that_ignores_logprobs_gets_votes_and_it_is_said_once(
    ws, gold, monkeypatch, capsys
):
    def reply(request):
        body = json.loads(request.content)
        assert body["max_tokens"] <= 16  # a class name's budget, never the context limit
        return openai_ok("other")  # no logprobs in the reply, whatever was asked

    api = FakeApi(reply)
    clf = _classifier(ws, api, monkeypatch, base_url="http://127.0.0.1:9/v1", samples=3)
    r = classify_set(ws, gold, classifier=clf, concurrency=2)
    assert r.errors == 0
    err = capsys.readouterr().err
    assert err.count("returned no token logprobs: classifying by votes (k=3)") == 1
    assert all(x.valid_votes == 3 for x in stored(ws, gold))


def test_a_reply_echoing_the_rubric_is_no_logprob_answer(ws, gold, monkeypatch):
    def reply(request):
        lp = [
            {
                "token": "-",
                "logprob": -0.1,
                "bytes": None,
                "top_logprobs": [{"token": "-", "logprob": -0.1, "bytes": None}],
            },
            {
                "token": " spec",
                "logprob": -0.2,
                "bytes": None,
                "top_logprobs": [{"token": " spec", "logprob": -0.2, "bytes": None}],
            },
        ]
        return openai_ok("- speculative: asserts a possible", logprobs=lp)

    api = FakeApi(reply)
    r = classify_set(
        ws, gold, classifier=_classifier(ws, api, monkeypatch, method="logprobs"), concurrency=1
    )
    assert r.errors == 4 and r.new == 0 and "list item" in r.first_error
    assert "NOT ACCEPTED" in api.bodies()[1]["messages"][-1]["content"]
