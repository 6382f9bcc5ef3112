"""Objects entry points of test plug-ins load (see test_plugin_contracts)."""

from __future__ import annotations

import re
from pathlib import Path

from agentmemgate.memory.answering import AnsweringSystem, ProbeAnswer
from agentmemgate.memory.system import SystemInfo
from agentmemgate.products import answer_probe

INFO = SystemInfo(
    name="asks-the-model",
    description="answers through the shared answer call",
    gated=False,
    offline=False,
)


class AsksTheModel(AnsweringSystem):
    """An answering plug-in that takes the run's options and uses its model."""

    info = INFO

    def __init__(self, options):
        from agentmemgate.llm import get_model

        self.options = options
        self.model = get_model(options.model, workspace=options.workspace)

    def begin(self, namespace):
        self.ns = namespace

    def ingest(self, session):
        pass

    def answer(self, question, date):
        return ProbeAnswer(answer=answer_probe(self.model, question, date, []))


def make_quiet():
    """A factory function (not a class) whose instances meet the answering contract."""

    class Quiet(AnsweringSystem):
        info = SystemInfo(name="quiet", description="never knows", gated=False)

        def begin(self, namespace):
            pass

        def ingest(self, session):
            pass

        def answer(self, question, date):
            return ProbeAnswer(answer="I don't know.")

    return Quiet()


def not_a_system():
    return 42


def recipe() -> tuple[str, str]:
    text = (
        Path(__file__).resolve().parents[2] / "docs" / "how-to" / "hosted-products.md"
    ).read_text(encoding="utf-8")
    toml = re.search(r"```toml\n# pyproject.toml\n(.*?)```", text, re.S)
    py = re.search(r"```python\n# amg_mem0_platform.py\n(.*?)```", text, re.S)
    assert toml and py, "the hosted recipe's plug-in is missing from the page"
    return toml.group(1), py.group(1)
