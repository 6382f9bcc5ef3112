"""An eval run of the full-context baseline on a slow scripted model, killed with -9 and re-run by
test_answering_resume.

Usage: python _answering_worker.py WORKSPACE REQUEST_LOG DELAY_SECONDS
Each request's prompt hash is appended to REQUEST_LOG before the (slow) answer is sent.
"""

from __future__ import annotations

import hashlib
import sys

from llm.scripted import register

from agentmemgate.evaluate import EvalOptions, run_eval
from agentmemgate.llm import get_model
from agentmemgate.workspace import Workspace


def main(ws_path: str, log_path: str, delay: float) -> None:
    register()  # scripted:NAME, as the suite's conftest registers it
    ws = Workspace(ws_path)
    model = get_model("scripted:resume-fc", workspace=ws)

    def responder(req):
        with open(log_path, "a") as f:
            f.write(hashlib.sha256(req.prompt.encode()).hexdigest() + "\n")
        import time

        time.sleep(delay)
        return "I don't know."

    model.respond_with(responder)
    s = run_eval(
        ws,
        ["core"],
        ["full-context"],
        EvalOptions(model="scripted:resume-fc", concurrency=2),
        show_progress=False,
    )
    print(s.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
