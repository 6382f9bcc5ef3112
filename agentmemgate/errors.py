"""The toolkit's error hierarchy.

Every error a user can cause is an ``AmgError``; the CLI prints its message on one line and exits
non-zero. Messages say what was wrong and how to fix it. One model call that failed after its
retries (``llm.CallFailed``) is not one: a run records it against its item and goes on.
"""


class AmgError(Exception):
    """Base class: a problem the user can fix; printed as one line by the CLI."""


class BadInput(AmgError):
    """A command-line value or input file is not acceptable."""


def unreadable(
    path, error: BaseException | None = None, cls: type["BadInput"] | None = None
) -> "BadInput":
    """The one wording of a file that cannot be read: "No such file: 'PATH'", "'PATH' is a
    folder, not a file", or "Cannot read 'PATH': REASON" (``error``: the OSError or decode error
    met, None when a check found the file missing)."""
    from pathlib import Path

    cls = cls or BadInput
    shown = repr(str(path))
    if isinstance(error, FileNotFoundError) or (error is None and not Path(path).exists()):
        return cls(f"No such file: {shown}")
    if isinstance(error, IsADirectoryError) or (error is None and Path(path).is_dir()):
        return cls(f"{shown} is a folder, not a file")
    reason = getattr(error, "strerror", None) or getattr(error, "reason", None) or error
    return cls(f"Cannot read {shown}: {reason}")


class UnknownLevel(BadInput):
    """A split, factor or level name is not one the toolkit knows."""


class CorpusError(BadInput):
    """A corpus file is malformed or of an unknown kind."""


class ModelSpecError(BadInput):
    """A model spec is not of the form provider:model, or names no registered provider."""


class MissingApiKey(AmgError):
    """The chosen provider needs an API key that is not set."""

    def __init__(self, env_var: str, spec: str = "", offline_flag: str = ""):
        self.env_var, self.spec = env_var, spec
        who = f" for {spec}" if spec else ""
        hint = f" or pass {offline_flag} offline" if offline_flag else " or use the offline backend"
        super().__init__(f"No API key{who}: set {env_var}{hint}")

    def for_flag(self, flag: str, spec: str = "") -> "MissingApiKey":
        """The same error worded for the command-line option that chose the model."""
        return MissingApiKey(self.env_var, spec, flag)


class MissingExtra(BadInput):
    """An optional product library is not installed; the message names the pip extra."""


class ProviderError(AmgError):
    """A model provider failed in a way retries cannot fix (auth, quota, a feature it lacks)."""


class WorkspaceError(AmgError):
    """The workspace database or an output folder cannot be used."""


class SameFamilyJudge(AmgError):
    """A judge from the generator's model family was requested without --allow-same-family."""


class DownloadError(AmgError):
    """A public corpus could not be fetched, or what arrived is not the published file."""
