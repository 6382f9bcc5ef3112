"""Classifiers: the offline lexicon, and the LLM classifier's logprob and vote paths."""

from __future__ import annotations

import math

import pytest

from agentmemgate.classify import Distribution, get_classifier, lexicon_classifier
from agentmemgate.classify.model_classifier import (
    ANSWERS,
    distribution_from_logprobs,
    parse_answer,
    token_class,
)
from agentmemgate.corpora import ContextTurn, Statement
from agentmemgate.errors import BadInput, ModelSpecError, ProviderError
from agentmemgate.llm import Model, ModelRef, RawReply, get_model, register_provider

EV = ANSWERS["evidence_type"]
GATE_QUESTION = (
    "The gate question: does this statement license revising the entity\u2019s "
    "canonical current state right now?"
)


class LogprobModel(Model):
    """A test provider that answers with token logprobs (registered like any provider)."""

    provider = "lpfake"
    replies: list[tuple[str, list[dict[str, float]] | None]] = []
    prompts: list[str] = []

    def execute(self, request):
        LogprobModel.prompts.append(request.prompt)
        text, lps = LogprobModel.replies.pop(0)
        return RawReply(text=text, resolved_model=self.name, logprobs=lps)


register_provider(
    "lpfake",
    lambda name, *, workspace=None, base_url=None, **o: LogprobModel(name, workspace=workspace),
)


def st(text, **kw):
    return Statement(id=kw.pop("id", "s1"), text=text, **kw)


def test_lexicon_returns_a_distribution():
    clf = lexicon_classifier()
    assert clf.name == "offline:lexicon.v2" and clf.family == "offline"
    cases = {
        "I'm torn between staying with Ghost 14 and switching to Pegasus 39.": "speculation",
        "I moved to Denver last month.": "completed_event",
        "Actually, I was wrong earlier: I live in Boston, not Cambridge.": "explicit_correction",
        "Can you recommend a hotel in Rome?": "other",
    }
    for text, label in cases.items():
        d = clf.classify(st(text))
        assert d.predicted == label, text
        assert sum(d.probs.values()) == pytest.approx(1.0) and set(d.probs) == {
            "speculation",
            "completed_event",
            "explicit_correction",
            "other",
        }
        assert d.p_commit == pytest.approx(1 - d.probs["speculation"])
        assert d.method == "lexicon"
    assert clf.classify(st("I might move.")) == clf.classify(st("I might move."), run=4)


def test_offline_answers_evidence_type_only():
    with pytest.raises(BadInput, match="evidence_type rubric only"):
        get_classifier("offline", rubric="truth_now")
    with pytest.raises(BadInput, match="Unknown rubric"):
        get_classifier("offline", rubric="vibes")
    with pytest.raises(ModelSpecError):
        get_classifier("nonsense")


def test_a_reference_brings_its_base_url_and_options(ws):
    with pytest.raises(BadInput, match="--classifier-base-url http://x is for an openai: class"):
        get_classifier(ModelRef.parse("anthropic:claude-x", "http://x"))
    clf = get_classifier(ModelRef.parse("scripted:ref", options={"timeout": 7}), workspace=ws)
    assert clf.model.options.timeout == 7


def test_answer_parsing():
    assert parse_answer("Speculative", EV) == "speculation"
    assert parse_answer("speculative\n\nThe user is only considering it.", EV) == "speculation"
    assert parse_answer('{"answer": "other"}', EV) == "other"
    assert parse_answer("Answer: completed_event", EV) == "completed_event"
    assert parse_answer("explicit_corr", EV) == "explicit_correction"  # cut off by the budget
    # an echo of the rubric is no answer, wherever the class names sit in it
    assert parse_answer("- speculative: asserts a possible, planned change", EV) is None
    assert parse_answer("speculative: asserts a possible, planned change", EV) is None
    assert parse_answer("The statement asserts...\nspeculative", EV) is None
    assert parse_answer("speculative or other", EV) is None
    assert parse_answer("", EV) is None
    assert parse_answer("**completed_event**", EV) == "completed_event"
    assert parse_answer("The class is: explicit correction.", EV) == "explicit_correction"
    assert parse_answer("other (a preference)", EV) == "other"
    assert parse_answer("I cannot tell", EV) is None
    assert parse_answer("Yes.", ANSWERS["truth_now"]) == "commit"
    assert (
        token_class("spec", EV) == "speculation"
        and token_class(" completed", EV) == "completed_event"
    )
    assert token_class("ex", EV) == "explicit_correction" and token_class("The", EV) is None
    assert (
        token_class("other.", EV) == "other"
        and token_class("No", ANSWERS["should_store"]) == "hold"
    )


def test_distribution_from_logprobs():
    lps = [
        {"\n": -0.01, "**": -5.0},  # leading whitespace is skipped
        {
            "spec": math.log(0.6),
            "other": math.log(0.2),
            "completed": math.log(0.1),
            "The": math.log(0.05),
        },
    ]
    d = distribution_from_logprobs(lps, EV)
    assert d.probs["speculation"] == pytest.approx(0.6 / 0.9)
    assert d.probs["explicit_correction"] == 0 and d.predicted == "speculation"
    assert d.p_commit == pytest.approx(0.3 / 0.9)
    assert d.method == "logprobs(top=20)" and "mapped mass 0.900" in d.detail
    assert distribution_from_logprobs([{"Hmm": -0.1}], EV) is None


def test_llm_classifier_by_logprobs(ws):
    clf = get_classifier("lpfake:m1", workspace=ws)
    LogprobModel.replies[:] = [("speculative", [{"spec": math.log(0.7), "other": math.log(0.3)}])]
    LogprobModel.prompts.clear()
    s = st(
        "I might move to Seattle.",
        speaker="user",
        context=[ContextTurn(speaker="assistant", text="How is work?")],
    )
    d = clf.classify(s)
    assert d.probs["speculation"] == pytest.approx(0.7) and d.method == "logprobs(top=20)"
    prompt = LogprobModel.prompts[0]
    assert GATE_QUESTION in prompt and "- speculative: asserts a possible" in prompt
    assert "[assistant]: How is work?" in prompt and "I might move to Seattle." in prompt
    assert clf.name == "lpfake:m1|evidence_type.v1|auto:k=5"


def test_llm_classifier_by_votes_with_scripted_model(ws):
    model = get_model("scripted:voter")
    # the fifth vote never names a class: two re-asks carry the problem back, then it fails
    model.enqueue(
        "speculative",
        "Speculative.",
        "other",
        "completed_event",
        "I am not sure",
        "- speculative: asserts a possible change",
        "no idea",
    )
    clf = get_classifier("scripted:voter", workspace=ws, method="votes", samples=5)
    d = clf.classify(st("I might move to Seattle."), run=2)
    assert d.probs == {
        "speculation": 0.5,
        "completed_event": 0.25,
        "explicit_correction": 0.0,
        "other": 0.25,
    }
    assert d.method == "votes(k=5)" and d.detail == "4 of 5 votes valid" and d.valid_votes == 4
    assert [r.seed_key for r in model.history] == [f"run2:vote{i}" for i in (0, 1, 2, 3, 4, 4, 4)]
    assert all(r.temperature == 1.0 for r in model.history)
    assert all(r.max_tokens and r.max_tokens <= 16 for r in model.history)  # a class name's budget
    reask = model.history[5].prompt
    assert "NOT ACCEPTED: the reply 'I am not sure' is not one of: speculative" in reask
    assert "reply is a list item" in model.history[6].prompt


def test_too_few_valid_votes_is_a_failure_not_a_probability(ws):
    from agentmemgate.llm import CallFailed

    model = get_model("scripted:fewvotes")
    model.respond_with(lambda r: "speculative" if r.seed_key.endswith("vote0") else "hmm")
    clf = get_classifier("scripted:fewvotes", workspace=ws, method="votes", samples=5)
    with pytest.raises(CallFailed) as e:
        clf.classify(st("I might move to Seattle."))
    assert e.value.kind == "invalid_output"
    assert "only 1 of 5 votes named a class (at least 3 needed" in str(e.value)


def test_auto_falls_back_to_votes_when_no_logprobs(ws):
    model = get_model("scripted:auto")
    model.respond_with(lambda r: "other")
    clf = get_classifier("scripted:auto", workspace=ws, samples=3)
    d = clf.classify(st("I love jazz."))
    assert d.method == "votes(k=3)" and d.predicted == "other"
    assert len(model.history) == 4  # one logprob attempt, then votes
    clf.classify(st("I love blues.", id="s2"))
    assert len(model.history) == 7  # no further logprob attempts
    forced = get_classifier("scripted:auto", workspace=ws, method="logprobs")
    with pytest.raises(ProviderError, match="returned no token logprobs; use --method votes"):
        forced.classify(st("I love rock."))


def test_auto_falls_back_when_logprobs_are_rejected(ws):
    from agentmemgate.llm import CallFailed

    model = get_model("scripted:nolp")
    model.respond_with(
        lambda r: (
            CallFailed("logprobs not supported", kind="bad_request")
            if r.logprobs
            else "completed_event"
        )
    )
    d = get_classifier("scripted:nolp", workspace=ws, samples=2).classify(st("I moved."))
    assert d.predicted == "completed_event" and d.method == "votes(k=2)"


def test_binary_rubrics(ws):
    model = get_model("scripted:truth")
    model.enqueue("yes", "no", "no")
    clf = get_classifier(
        "scripted:truth", workspace=ws, rubric="truth_now", method="votes", samples=3
    )
    d = clf.classify(st("I might move to Seattle."))
    assert d.probs == pytest.approx({"commit": 1 / 3, "hold": 2 / 3})
    assert d.p_commit == pytest.approx(1 / 3) and d.predicted == "hold" and not d.routed_commit
    assert "is what this statement says about the person true right now?" in model.history[0].prompt
    assert clf.kind == "binary" and clf.name.startswith("scripted:truth|truth_now.v1|votes")


def test_distribution_validation():
    with pytest.raises(ValueError):
        Distribution(probs={"speculation": 0.0}, method="x")


def test_offline_answers_are_memoized_as_copies_and_follow_the_temperature():
    from agentmemgate.classify import get_classifier
    from agentmemgate.corpora.statements import Statement

    clf = get_classifier("offline")
    st = Statement(id="s", text="I might switch to Aldi next month.", date="2024-05-01")
    first = clf.classify(st)
    first.probs["speculation"] = 0.0  # a caller's answer is its own
    again = clf.classify(st)
    assert again.probs["speculation"] > 0.5 and again.predicted == "speculation"
    base = clf.temperature
    try:
        clf.temperature = base * 4
        flatter = clf.classify(st)
    finally:
        clf.temperature = base
    assert flatter.probs["speculation"] < again.probs["speculation"]
    assert clf.classify(st) == again
