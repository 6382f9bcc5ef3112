"""``amg eval run --system mem0`` in a process of its own (test_mem0 kills it with -9).

Usage: python _mem0_worker.py WORKSPACE MOCK_URL
"""

from __future__ import annotations

import sys

from agentmemgate.evaluate import EvalOptions, run_eval
from agentmemgate.llm import ModelRef
from agentmemgate.workspace import Workspace


def main(ws_path: str, url: str) -> None:
    s = run_eval(
        Workspace(ws_path),
        ["core"],
        ["mem0"],
        EvalOptions(model=ModelRef.parse("openai:mock-model", base_url=url), concurrency=1),
        show_progress=False,
    )
    print(s.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
