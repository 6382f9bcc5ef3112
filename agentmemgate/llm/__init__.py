"""The LLM layer every model call goes through: providers, cache, call log, retries, concurrency.

    model = get_model("openai:gpt-4o-mini", workspace=ws)
    r = model.complete(prompt, schema=Verdict, purpose="judge.realism", seed_key="vote-1")
    for result in run_concurrent(judge_one, arcs, concurrency=8, description="judging",
                                 usage=model.usage): ...

Provider SDKs are imported only when a model of that provider is created. Structured output
works on any server (``structured``: json_schema, json_object, tools, prompt, remembered per
server); every call states its output budget (``max_tokens``) and invalid replies are re-asked
with the problem sent back; a server that answers one request at a time is detected and the
model's concurrency lowered (``_throttle``). ``run_batched`` sends a command's calls to the
providers' batch APIs instead (``batch``: half the price, answers within 24 hours).
"""

from ._errors import CallFailed, FatalProviderError, scrub
from ._batch_state import Deferred
from .batch import BatchesPending, independent, run_batched
from .concurrent import Failed, run_concurrent
from .model import (Model, ModelOptions, RawReply, Request, Response, SdkOptions, display_name,
                    display_spec)
from .registry import get_model, providers, register_provider
from .scripted import ScriptedModel, reset_scripts
from .usage import Usage

__all__ = [
    "BatchesPending", "CallFailed", "Deferred", "Failed", "FatalProviderError", "Model", "ModelOptions", "RawReply", "Request",
    "Response", "ScriptedModel", "SdkOptions", "Usage", "display_name", "display_spec", "get_model", "providers",
    "independent", "register_provider", "reset_scripts", "run_batched", "run_concurrent", "scrub",
]
