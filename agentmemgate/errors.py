"""The toolkit's error hierarchy.

Every error a user can cause is an ``AmgError``; the CLI prints its message on one line and exits
non-zero. Messages say what was wrong and how to fix it.
"""


class AmgError(Exception):
    """Base class: a problem the user can fix; printed as one line by the CLI."""


class BadInput(AmgError):
    """A command-line value or input file is not acceptable."""


class UnknownLevel(BadInput):
    """A split, factor or level name is not one the toolkit knows."""


class CorpusError(BadInput):
    """A corpus file is malformed or of an unknown kind."""


class ModelSpecError(BadInput):
    """A model spec is not of the form provider:model, or names no registered provider."""


class MissingApiKey(AmgError):
    """The chosen provider needs an API key that is not set."""


class ProviderError(AmgError):
    """A model provider failed in a way retries cannot fix (auth, quota, refusal)."""


class WorkspaceError(AmgError):
    """The workspace database or an output folder cannot be used."""


class SameFamilyJudge(AmgError):
    """A judge from the generator's model family was requested without --allow-same-family."""
