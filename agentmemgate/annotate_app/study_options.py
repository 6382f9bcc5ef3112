"""An open audit's options (``amg audit create --open``) and its study link: what ``audits``
freezes into an open audit, and ``study`` reads back."""

from __future__ import annotations

import re
import secrets

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput

CHECK_KINDS = ("gold", "attention", "qualify")


class StudyOptions(BaseModel):
    """How an open audit takes people; frozen into the audit's params (``study``)."""

    model_config = ConfigDict(extra="forbid")
    overlap: int = 3  # K: labels wanted per item, each from a different person
    per_person: int | None = None  # N: regular items per person (None: as many as there are)
    reclaim_after_minutes: float = 30.0
    id_param: str = "PROLIFIC_PID"
    gold: int = 0
    attention: int = 0
    min_gold_accuracy: float | None = None
    max_attention_failures: int | None = None
    qualify: int = 0
    qualify_pass: float = 0.8
    completion_code: str | None = None
    screenout_code: str | None = None
    redirect: str | None = None

    def check(self) -> StudyOptions:
        """One line per problem, naming the option (checked before anything is stored)."""
        if self.overlap < 1:
            raise BadInput(f"--overlap must be at least 1, got {self.overlap}")
        if self.per_person is not None and self.per_person < 1:
            raise BadInput(f"--per-person must be at least 1, got {self.per_person}")
        if self.reclaim_after_minutes <= 0:
            raise BadInput(
                f"--reclaim-after must be above 0 minutes, got {self.reclaim_after_minutes:g}"
            )
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.id_param):
            raise BadInput(
                f"--id-param {self.id_param!r} must be a URL parameter name, e.g. workerId"
            )
        for flag, n in (
            ("--gold", self.gold),
            ("--attention", self.attention),
            ("--qualify", self.qualify),
        ):
            if n < 0:
                raise BadInput(f"{flag} must be 0 or more, got {n}")
        for flag, p in (
            ("--min-gold-accuracy", self.min_gold_accuracy),
            ("--qualify-pass", self.qualify_pass),
        ):
            if p is not None and not 0 <= p <= 1:
                raise BadInput(f"{flag} is a share between 0 and 1, got {p:g}")
        if self.min_gold_accuracy is not None and not self.gold:
            raise BadInput("--min-gold-accuracy needs gold items: add --gold N")
        if self.max_attention_failures is not None:
            if self.max_attention_failures < 0:
                raise BadInput("--max-attention-failures must be 0 or more")
            if not self.attention:
                raise BadInput("--max-attention-failures needs attention checks: add --attention N")
        for flag, code in (
            ("--completion-code", self.completion_code),
            ("--screenout-code", self.screenout_code),
        ):
            if code is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", code):
                raise BadInput(f"{flag} {code!r} must be 1-64 letters, digits, '_' or '-'")
        if self.redirect is not None:
            if "{code}" not in self.redirect:
                raise BadInput(
                    "--redirect must contain {code} where the code goes, e.g. "
                    "https://app.prolific.com/submissions/complete?cc={code}"
                )
            if not re.match(r"^https?://[^\s]+$", self.redirect):
                raise BadInput(f"--redirect {self.redirect!r} must be an http(s) address")
            if self.completion_code is None:
                raise BadInput(
                    "--redirect needs --completion-code: the redirect passes the code, and a "
                    "person who finishes would get neither"
                )
        screens = self.min_gold_accuracy is not None or self.max_attention_failures is not None
        if screens and self.completion_code is not None and self.screenout_code is None:
            raise BadInput(
                "people can be screened out (--min-gold-accuracy or --max-attention-failures): "
                "give --screenout-code too, or they are shown no code and not redirected"
            )
        return self

    @property
    def reclaim_seconds(self) -> float:
        return self.reclaim_after_minutes * 60


def new_study_token() -> str:
    return secrets.token_urlsafe(18)


def study_link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/?study={token}"


def options_of(params: dict) -> StudyOptions | None:
    raw = params.get("study")
    return None if raw is None else StudyOptions.model_validate(raw)
