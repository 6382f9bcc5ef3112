"""A generation run against a slow OpenAI MockTransport, killed and re-run by test_llm_renderer.

Usage: python _llm_resume_worker.py WORKSPACE REQUEST_LOG DELAY_SECONDS
Each request's prompt hash is appended to REQUEST_LOG before the (slow) answer is sent.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time

import httpx2
from reference_drafts import reference_responder

from agentmemgate.generate import generate, get_renderer
from agentmemgate.llm import Request
from agentmemgate.workspace import Workspace

KEY = "sk-test-resume-DONOTLEAK-0123456789"


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()


def main(ws_path: str, log_path: str, delay: float) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][-1]["content"]
        with open(log_path, "a") as f:
            f.write(prompt_hash(prompt) + "\n")
        time.sleep(delay)
        draft = reference_responder(Request(prompt=prompt))
        return httpx2.Response(
            200,
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-test-2025",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(draft)},
                    }
                ],
                "usage": {"prompt_tokens": 900, "completion_tokens": 300, "total_tokens": 1200},
            },
        )

    ws = Workspace(ws_path)
    renderer = get_renderer(
        "openai:gpt-test",
        workspace=ws,
        concurrency=2,
        api_key=KEY,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    summary = generate(ws, renderer, ["core"], n_per_cell=3, show_progress=False)
    print(summary.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
