"""``amg eval run --system graphiti`` against a mock server, killed with -9 by test_graphiti.

Usage: python _graphiti_worker.py WORKSPACE MOCK_URL; prints the run summary as JSON.
"""

from __future__ import annotations

import json
import sys

from agentmemgate.evaluate import EvalOptions, run_eval
from agentmemgate.llm import ModelRef
from agentmemgate.workspace import Workspace


def main() -> None:
    ws, url = Workspace(sys.argv[1], create=False), sys.argv[2]
    s = run_eval(
        ws,
        ["core"],
        ["graphiti"],
        EvalOptions(
            model=ModelRef.parse("openai:mock-model", base_url=url),
            judge="offline",
            embedder="openai:mock-embedder",
            concurrency=1,
        ),
        show_progress=False,
    )
    print(json.dumps({"ran_now": s.ran_now, "already_done": s.already_done, "failed": s.failed}))


if __name__ == "__main__":
    main()
