"""Which structured-output strategy a model asks in, and moving on when its server refuses one.

``structured`` implements the strategies; this module names them (so the CLI can offer
``--structured-output`` without importing pydantic) and keeps, per model, the one in use: forced
by ``--structured-output``, else the one remembered for the server in the workspace, else the
first the provider supports. A server that refuses it moves every later call to the next one,
remembered for that server.
"""

from __future__ import annotations

import threading
from typing import Any

from ._errors import CallFailed, FatalProviderError

STRATEGIES = ("json_schema", "json_object", "tools", "prompt")
CHOICES = ("auto",) + STRATEGIES


class StrategyChoice:
    """The structured-output strategy of one model (``model.structured``), shared by its threads."""

    def __init__(self, model: Any):
        self.model = model
        forced = model.options.structured_output
        if forced != "auto" and forced not in model.strategies:
            from ..errors import BadInput

            raise BadInput(
                f"--structured-output {forced} is not available for {model.provider} "
                f"models; choose auto or one of: {', '.join(model.strategies)}"
            )
        self._current: str | None = None
        self._lock = threading.Lock()

    def current(self) -> str:
        """The strategy the next structured call uses: forced, remembered for this server, or first."""
        model = self.model
        if model.options.structured_output != "auto":
            return model.options.structured_output
        with self._lock:
            if self._current is None:
                store = model._store
                known = store.strategy(model.endpoint, model.name) if store else None
                self._current = known if known in model.strategies else model.strategies[0]
            return self._current

    def refused(self, strategy: str, error: CallFailed) -> str:
        """Move on from a strategy the server refused; returns the note for the call log."""
        model = self.model
        if model.options.structured_output != "auto":
            raise FatalProviderError(
                f"{model.label} does not accept --structured-output {strategy} "
                f"({error.field} refused): use --structured-output auto"
            )
        with self._lock:
            if self._current == strategy:  # other threads may have moved it already
                i = model.strategies.index(strategy)
                if i + 1 >= len(model.strategies):
                    raise FatalProviderError(
                        f"{model.label} refused every structured-output strategy; last: {error}"
                    )
                self._current = model.strategies[i + 1]
                if model._store is not None:
                    model._store.remember(
                        model.endpoint,
                        model.name,
                        self._current,
                        f"{strategy} refused ({error.field})",
                    )
                moved = True
            else:
                moved = False
            now_using = self._current
        if moved:
            model.say(
                f"{model.label} refused structured output by {strategy} ({error.field}); "
                f"using {now_using} from now on (remembered for this server in the workspace)"
            )
        return f"{strategy} refused ({error.field}): moved to {now_using}"
