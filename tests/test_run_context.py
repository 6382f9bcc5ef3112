"""The run context: one value says whether the code running now is a dry run, a ``--batch`` run,
for which command, and which models it made; a library caller enters it as the CLI does, and
threads see it (a thread pool's items the context they were submitted in, threads started
without a copy the innermost one entered)."""

from __future__ import annotations

import contextvars
import threading

import pytest

from agentmemgate.llm import DryRunCall, get_model, run_concurrent
from agentmemgate.run_context import RunContext, current, run_context


def test_outside_any_context_a_run_is_live_for_no_command_and_keeps_no_models():
    assert current() == RunContext(dry_run=False, batch=False, command="")
    get_model("scripted:kept-nowhere")
    assert current().models == []


def test_an_inner_context_changes_what_it_names_and_shares_the_models():
    with run_context(command="amg eval run", dry_run=True) as outer:
        first = get_model("scripted:first")
        with run_context(batch=True) as inner:
            assert (inner.dry_run, inner.batch, inner.command) == (True, True, "amg eval run")
            assert inner.plans_batch and not outer.plans_batch
        with run_context(dry_run=False):
            second = get_model("scripted:second")
        with run_context(command="amg usage") as command:  # a command's models are its own
            third = get_model("scripted:third")
        assert current() is outer
        assert outer.models == [first, second] and command.models == [third]
    assert current() == RunContext()


def test_a_dry_run_sends_nothing_and_needs_no_api_key(ws):
    with run_context(dry_run=True):
        model = get_model("openai:gpt-4o-mini", workspace=ws)  # no OPENAI_API_KEY set
        with pytest.raises(DryRunCall, match="a dry run sends nothing"):
            model.complete("Is the sky blue?", purpose="test.dry")
    assert ws.db["llm_calls"].count == 0


def test_a_thread_pool_item_sees_the_context_it_was_submitted_in():
    with run_context(command="amg validate"):
        seen = list(run_concurrent(lambda _: current().command, range(3), progress=False))
        later = contextvars.copy_context()
    assert seen == ["amg validate"] * 3
    assert later.run(lambda: current().command) == "amg validate"  # after the block too


def test_a_thread_started_without_a_copy_sees_the_innermost_context_entered():
    seen = []

    def look() -> None:
        seen.append((current().command, current().dry_run))

    with run_context(command="amg build"), run_context(dry_run=True):
        t = threading.Thread(target=look)
        t.start()
        t.join()
    t = threading.Thread(target=look)
    t.start()
    t.join()
    assert seen == [("amg build", True), ("", False)]
