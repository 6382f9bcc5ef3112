"""The offline template renderer: a deterministic grammar over the catalog and phrase banks.

Like CheckList's templates, it is a real generator, not a fake model: every level has its own
phrase list (``phrases/*.toml``), arcs differ by domain, values, phrasing, small talk and dates,
and the same seed always gives the same bytes. Outputs say they were made by it.
"""

from __future__ import annotations

import datetime as dt
import random
import tomllib
from functools import lru_cache
from pathlib import Path

from .. import __version__
from ..rubrics import sha256_files
from ..schema import Arc, ArcSpec, Provenance, Session, Turn, TurnRef
from .catalog import CATALOG_PATH, Domain, load_catalog
from .renderer import Renderer, register_renderer

PHRASE_DIR = Path(__file__).with_name("phrases")
KIND = "offline template renderer (deterministic grammar, no LLM)"


@lru_cache(maxsize=None)
def phrase_bank() -> dict[str, list[str]]:
    bank: dict[str, list[str]] = {}
    for path in sorted(PHRASE_DIR.glob("*.toml")):
        with open(path, "rb") as f:
            bank.update(tomllib.load(f))
    return bank


def bank_sha256() -> str:
    """The offline renderer's 'prompt': its phrase banks and catalog, hashed for provenance."""
    return sha256_files(sorted(PHRASE_DIR.glob("*.toml")) + [CATALOG_PATH])


class _Conversation:
    """Accumulates dated sessions of alternating turns and hands back turn references."""

    def __init__(self, dates: list[dt.date]):
        self.sessions = [Session(date=d, turns=[]) for d in dates]

    def say(self, session: int, role: str, text: str) -> TurnRef:
        turns = self.sessions[session].turns
        turns.append(Turn(role=role, text=text))  # type: ignore[arg-type]
        return TurnRef(session=session, turn=len(turns) - 1)

    def exchange(self, session: int, user: str, assistant: str) -> TurnRef:
        ref = self.say(session, "user", user)
        self.say(session, "assistant", assistant)
        return ref


def _shuffled(items: list, rng: random.Random) -> list:
    out = list(items)
    rng.shuffle(out)
    return out


class OfflineRenderer(Renderer):
    name = "offline"
    family = "offline-template"
    kind = KIND

    def __init__(self, spec: str = "offline", **_options):
        self.prompt_sha256 = bank_sha256()

    def render(self, spec: ArcSpec) -> Arc:
        rng = random.Random(spec.seed)
        domain = load_catalog()[spec.domain]
        bank = phrase_bank()
        slots = _slots(spec, domain, rng)

        def phrase(key: str) -> str:
            return rng.choice(bank[key]).format_map(slots)

        domain_chat = list(zip(_shuffled(domain.user_chat, rng), _shuffled(domain.assistant_chat, rng)))
        other_chat = [tuple(pair) for pair in _shuffled(bank["small_talk"], rng)]

        def small_talk() -> tuple[str, str]:
            """The domain's own lines first, then off-topic pairs: no turn repeats within an arc."""
            pool = domain_chat or other_chat
            return pool.pop()

        def plan_turn(level: str) -> str:
            template = rng.choice(bank[level])
            text = template.format_map(slots)
            if "{reason}" not in template:
                text += " " + rng.choice(bank["motivation"]).format_map(slots)
            return text

        def opener(text: str) -> str:
            return f"{rng.choice(bank['session_opener'])} {text}"

        def chat_session(s: int) -> None:
            user, assistant = small_talk()
            conv.exchange(s, opener(user), assistant)

        conv = _Conversation(spec.session_dates)
        last = len(spec.session_dates) - 1
        slots["user_chat"], slots["assistant_chat"] = small_talk()
        if rng.random() < 0.5:
            # Sometimes the conversation opens on something else, so the initial statement is not
            # always the first turn (an annotator could otherwise tell it apart by position).
            conv.exchange(0, *other_chat.pop())
        initial = conv.exchange(0, phrase("initial"), phrase("after_initial"))
        plan: TurnRef
        outcome: TurnRef | None = None
        pending: TurnRef | None = None
        outcome_key = {"came_true": spec.confirmation_wording, "abandoned": "abandoned",
                       "open": "pending"}.get(spec.outcome)
        reply_key = f"after_{'pending' if spec.outcome == 'open' else spec.outcome}"

        if spec.outcome == "control":
            # The change already happened: reported in the next session, then small talk.
            plan = outcome = conv.exchange(1, opener(plan_turn(spec.plan_wording)), phrase("after_control"))
            for s in range(2, last + 1):
                chat_session(s)
        elif spec.pending_window:
            # Plan in session 0, then at least one more user turn, outcome in the last session.
            for _ in range(rng.choice((0, 1))):
                conv.exchange(0, *small_talk())
            plan = conv.exchange(0, plan_turn(spec.plan_wording), phrase("after_plan"))
            conv.exchange(0, *small_talk())
            for s in range(1, last):
                chat_session(s)
            if rng.random() < 0.5:
                chat_session(last)
                ref = conv.exchange(last, phrase(outcome_key), phrase(reply_key))
            else:
                ref = conv.exchange(last, opener(phrase(outcome_key)), phrase(reply_key))
            outcome, pending = (None, ref) if spec.outcome == "open" else (ref, None)
        else:
            # Held-out: shorter sessions; the outcome is the very next user turn after the plan.
            plan = conv.exchange(1, opener(plan_turn(spec.plan_wording)), phrase("after_plan"))
            ref = conv.exchange(1, phrase(outcome_key), phrase(reply_key))
            outcome, pending = (None, ref) if spec.outcome == "open" else (ref, None)
            for s in range(2, last + 1):
                chat_session(s)

        resolved_session = outcome.session if outcome else None
        return Arc(
            spec=spec,
            sessions=conv.sessions,
            initial_turn=initial,
            plan_turn=plan,
            outcome_turn=outcome,
            pending_turn=pending,
            expected_value_after_session=spec.expected_timeline(resolved_session, plan.session),
            provenance=Provenance(
                generator=self.name, generator_kind=self.kind, prompt_sha256=self.prompt_sha256,
                seed=spec.plan_seed, toolkit_version=__version__),
        )


def _slots(spec: ArcSpec, domain: Domain, rng: random.Random) -> dict[str, str]:
    plan_date = spec.session_dates[0 if spec.pending_window else 1]
    when = plan_date + dt.timedelta(days=rng.randrange(5, 30))
    return {
        "initial": spec.initial_value,
        "plan": spec.plan_value,
        "noun": domain.noun,
        "stay_initial": domain.stay.format(value=spec.initial_value),
        "switch_plan": domain.switch.format(value=spec.plan_value),
        "switching_plan": domain.switching.format(value=spec.plan_value),
        "switched_plan": domain.switched.format(value=spec.plan_value),
        "current_initial": rng.choice(domain.current).format(value=spec.initial_value),
        "current_plan": rng.choice(domain.current).format(value=spec.plan_value),
        "doing_plan": rng.choice(domain.doing).format(value=spec.plan_value),
        "oblique_thing": domain.oblique_thing,
        "reason": rng.choice(domain.reasons),
        "date": f"{when:%A}, {when:%B} {when.day}",
    }


register_renderer("offline", OfflineRenderer)
