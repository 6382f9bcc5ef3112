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

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "CallFailed": ("_errors", None),
    "DryRunCall": ("_errors", None),
    "FatalProviderError": ("_errors", None),
    "scrub": ("_errors", None),
    "Failed": ("concurrent", None),
    "run_concurrent": ("concurrent", None),
    "Model": ("model", None),
    "ModelOptions": ("model", None),
    "ModelRef": ("ref", None),
    "RawReply": ("request", None),
    "Request": ("request", None),
    "Response": ("model", None),
    "SdkOptions": ("model", None),
    "display_name": ("model", None),
    "display_spec": ("model", None),
    "get_model": ("registry", None),
    "providers": ("registry", None),
    "register_provider": ("registry", None),
    "Usage": ("usage", None),
    "Deferred": ("_batch_state", None),
    "BatchesPending": ("batch", None),
    "independent": ("batch", None),
    "run_batched": ("batch", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BatchesPending",
    "CallFailed",
    "Deferred",
    "DryRunCall",
    "Failed",
    "FatalProviderError",
    "Model",
    "ModelOptions",
    "ModelRef",
    "RawReply",
    "Request",
    "Response",
    "SdkOptions",
    "Usage",
    "display_name",
    "display_spec",
    "get_model",
    "providers",
    "independent",
    "register_provider",
    "run_batched",
    "run_concurrent",
    "scrub",
]
