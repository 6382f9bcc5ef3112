"""What the offline renderer needs of a design's phrase banks, as one-line problems.

The renderer fills a level's turns from the lists its phrase files hold under the level's key;
a level added to a design without its lists would fail in the middle of a build, so
``amg design check`` (and ``amg build``) reads the design's cells, works out which lists the
renderer will reach, and names every one that is missing or empty, and every ``{slot}`` it
cannot fill.
"""

from __future__ import annotations

import re
import tomllib

from ..design import Design, Problem
from .banks import DATE_SLOTS

# Slots the renderer fills for every arc (``_ArcWriter._base_slots``, the date slots and the
# chat slots); ``{Slot}`` is the same value with a capital first letter.
KNOWN_SLOTS = frozenset(
    {
        "initial",
        "plan",
        "noun",
        "change",
        "stay_initial",
        "switch_plan",
        "switching_plan",
        "switched_plan",
        "current_initial",
        "current_plan",
        "doing_plan",
        "oblique_thing",
        "reason",
        "reason_done",
        "you_initial",
        "you_plan",
        "you_current_initial",
        "you_current_plan",
        "you_stay_initial",
        "you_switching_plan",
        "you_change_plan",
        "weigh",
        "step",
        "settle",
        "tip",
        "stay_tip",
        "on_date",
        "date_np",
        "done_when",
        "done_asof",
        "mentioned",
        "sched_abs",
        "gap",
        "q",
        "weekday",
    }
)
# A plan turn must carry the plan value (the structural check ``plan_value_in_plan_turn``).
PLAN_VALUE_SLOTS = frozenset({"plan", "switch_plan", "switching_plan", "switched_plan"})
# Slots whose text differs between domains (or arcs): an assistant sentence without one would
# repeat word for word across the dataset ({change} alone does not: most domains say "switch").
DOMAIN_SLOTS = frozenset(
    {
        "noun",
        "weigh",
        "step",
        "settle",
        "tip",
        "stay_tip",
        "gap",
        "sched_abs",
        "you_initial",
        "you_plan",
        "you_current_initial",
        "you_current_plan",
        "you_switching_plan",
        "you_stay_initial",
        "you_change_plan",
    }
)
MIN_PHRASINGS = 8  # so that no single sentence identifies a level (or repeats past the limit)
SHORT_SENTENCE = 6  # words: a short acknowledgement ("Glad it went smoothly.") may be slot-free
PHRASE_FILES = ("plan", "outcome", "replies", "chat")
_SLOT = re.compile(r"\{(\w+)\}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def unknown_slots(template: str) -> list[str]:
    return [s for s in _SLOT.findall(template) if s[:1].lower() + s[1:] not in KNOWN_SLOTS]


def used_levels(design: Design) -> dict[str, set[str]]:
    """The levels a build of ``design`` renders, by role: plan wordings (controls included),
    confirmation wordings, outcome levels (abandoned and open), and the plan groups."""
    plan_f, conf_f = design.by_role("plan_wording"), design.by_role("confirmation_wording")
    out_f = design.by_role("outcome")
    used: dict[str, set[str]] = {
        "plan": set(),
        "confirmation": set(),
        "outcome": set(),
        "groups": set(),
        "corrections": set(),
    }
    for split in design.splits.values():
        for cell in split.cells:
            role = design.factors[cell.factor].role
            outcome = design.outcome_of(cell)
            if outcome == "correction":
                used["corrections"].add(cell.level)
                if cell.level.startswith("change_") and plan_f and plan_f.control_level:
                    used["plan"].add(plan_f.control_level)
                continue
            if outcome == "control":
                if plan_f and plan_f.control_level:
                    used["plan"].add(plan_f.control_level)
                continue
            wordings = (
                [cell.level] if role == "plan_wording" else list(plan_f.drawn if plan_f else ())
            )
            used["plan"].update(wordings)
            if plan_f:
                used["groups"].update(
                    plan_f.level(w).group for w in wordings if plan_f.level(w).group
                )
            if outcome == "came_true":
                used["confirmation"].update(
                    [cell.level]
                    if role == "confirmation_wording"
                    else (conf_f.drawn if conf_f else ())
                )
            elif out_f is not None:
                own = (
                    [cell.level]
                    if role == "outcome"
                    else [
                        next(
                            (lv.name for lv in out_f.levels if (lv.kind or lv.name) == outcome),
                            outcome,
                        )
                    ]
                )
                used["outcome"].update(own)
    return used


def phrase_problems(design: Design) -> list[Problem]:
    """Every phrase list the offline renderer would reach for ``design`` and cannot use."""
    src, folder = design.source, design.files.phrases.rstrip("/")
    out: list[Problem] = []
    banks: dict[str, dict] = {}
    for name in PHRASE_FILES:
        rel = f"{folder}/{name}.toml"
        f = src.files.get(rel)
        if f is None:
            out.append(
                Problem(
                    f"{design.source.design.origin}",
                    "files.phrases",
                    f"no {name}.toml in {folder!r} (the offline renderer's {name} phrases)",
                )
            )
            continue
        try:
            banks[name] = tomllib.loads(f.text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            out.append(Problem(f.origin, "", f"TOML syntax error: {e}"))
    if len(banks) < len(PHRASE_FILES):
        return out

    def origin(name: str) -> str:
        return src.files[f"{folder}/{name}.toml"].origin

    def need(name: str, key: str, why: str, plan_turn: bool = False, least: int = 1) -> list[str]:
        """The list at ``key`` of phrase file ``name`` (``a.b`` for a nested table), or a problem."""
        node = banks[name]
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, list) or not node or not all(isinstance(t, str) for t in node):
            out.append(Problem(origin(name), key, f"missing or empty list of phrasings ({why})"))
            return []
        if len(node) < least:
            out.append(
                Problem(
                    origin(name),
                    key,
                    f"has {len(node)} phrasing{'s' if len(node) > 1 else ''}; "
                    f"at least {least} ({why}), so that no single "
                    "sentence marks the level or repeats across arcs",
                )
            )
        if name == "replies":
            for i, t in enumerate(node):
                bare = next(
                    (
                        x
                        for x in _SENTENCE.split(t)
                        if len(x.split()) > SHORT_SENTENCE
                        and not {v[:1].lower() + v[1:] for v in _SLOT.findall(x)} & DOMAIN_SLOTS
                    ),
                    None,
                )
                if bare is not None:
                    out.append(
                        Problem(
                            origin(name),
                            f"{key}#{i + 1}",
                            f"the sentence {bare!r} has no slot that differs between "
                            f"domains ({', '.join(sorted(DOMAIN_SLOTS))}): it would repeat "
                            "word for word across the dataset",
                        )
                    )
        for i, t in enumerate(node):
            if bad := unknown_slots(t):
                out.append(
                    Problem(
                        origin(name),
                        f"{key}#{i + 1}",
                        f"unknown slot {{{bad[0]}}}; the renderer fills: "
                        f"{', '.join(sorted(KNOWN_SLOTS))}",
                    )
                )
            if (
                plan_turn
                and not {s[:1].lower() + s[1:] for s in _SLOT.findall(t)} & PLAN_VALUE_SLOTS
            ):
                out.append(
                    Problem(
                        origin(name),
                        f"{key}#{i + 1}",
                        "a plan turn must name the plan value ({plan}, {switch_plan}, "
                        "{switching_plan} or {switched_plan})",
                    )
                )
        return node

    used = used_levels(design)
    plan_f, conf_f, out_f = (
        design.by_role(r) for r in ("plan_wording", "confirmation_wording", "outcome")
    )
    for name in ("initial", "session_opener", "question_opener"):
        need("chat", name, "the first user turn and session openers")
    out += _small_talk_problems(banks["chat"], origin("chat"))
    need("replies", "after_initial", "the assistant's acknowledgement of the current value")
    for lv_name in sorted(used["plan"]):
        lv = plan_f.level(lv_name)  # type: ignore[union-attr]
        need(
            "plan",
            lv.phrase_key,
            f"plan turns at level {lv.name!r}",
            plan_turn=not lv.control,
            least=MIN_PHRASINGS,
        )
        need(
            "replies",
            lv.reply or lv.name,
            f"the assistant's reply to a plan at level {lv.name!r}",
            least=MIN_PHRASINGS,
        )
        if lv.control:
            need("plan", "motivation_done", "why a completed change was made")
    if used["groups"]:
        need("plan", "motivation", "why the user plans a change")
    for lv_name in sorted(used["confirmation"]):
        lv = conf_f.level(lv_name)  # type: ignore[union-attr]
        need("outcome", f"{lv.phrase_key}.any", f"confirmations at level {lv.name!r}")
        need(
            "replies", lv.reply or "came_true", f"the reply to a confirmation at level {lv.name!r}"
        )
    dated = any(
        slot in t
        for w in used["plan"]
        for t in banks["plan"].get(plan_f.level(w).phrase_key, ())
        for slot in DATE_SLOTS
    )  # type: ignore[union-attr]
    for lv_name in sorted(used["outcome"]):
        lv = out_f.level(lv_name)  # type: ignore[union-attr]
        need("outcome", f"{lv.phrase_key}.any", f"outcome turns at level {lv.name!r}")
        for group in sorted(used["groups"]):
            need(
                "replies",
                (lv.reply or lv.phrase_key).format(group=group),
                f"the reply to an outcome at level {lv.name!r} after a {group} plan",
            )
        if dated and (lv.kind or lv.name) == "open":
            for when in ("scheduled_ahead", "scheduled_passed"):
                need(
                    "outcome",
                    f"{lv.phrase_key}.{when}",
                    "an open plan whose scheduled day is " + when.split("_")[1],
                )
    if used["corrections"]:
        out += _correction_problems(design, used["corrections"])
    return out


def _small_talk_problems(chat: dict, origin: str) -> list[Problem]:
    """The off-topic exchanges follow the catalog's small-talk rules (a question and its answer,
    no hedge, plan or outcome word): a judge must never meet a level cue in small talk."""
    from pydantic import ValidationError

    from ..design import Exchange
    from ..validate.catalog import small_talk_problems

    out = []
    raw = chat.get("exchanges")
    if not isinstance(raw, list) or not raw:
        return [Problem(origin, "exchanges", "missing or empty list of small-talk exchanges")]
    for i, e in enumerate(raw):
        key = f"exchanges#{i + 1}"
        try:
            ex = Exchange(**e) if isinstance(e, dict) else None
        except (TypeError, ValidationError) as err:
            ex, why = None, str(err).splitlines()[-1].strip()
        else:
            why = "an exchange is a table with q, a and slots"
        if ex is None:
            out.append(Problem(origin, key, why))
            continue
        for f in range(ex.fillings):
            for problem in small_talk_problems(*ex.fill(f)):
                out.append(Problem(origin, key, problem))
    return out


def _correction_problems(design: Design, levels: set[str]) -> list[Problem]:
    rel = design.files.correction_phrases
    f = design.source.files.get(rel) if rel else None
    if f is None:
        return [
            Problem(
                design.source.design.origin,
                "files.correction_phrases",
                "correction cells need a correction_phrases file beside the design",
            )
        ]
    try:
        bank = tomllib.loads(f.text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        return [Problem(f.origin, "", f"TOML syntax error: {e}")]
    keys = {"said_when_same", "said_when_later", "reply"}
    keys |= {f"{lv.split('_')[0]}_{lv.split('_')[2]}" for lv in levels}
    return [
        Problem(f.origin, k, "missing or empty list of phrasings (correction turns)")
        for k in sorted(keys)
        if not (isinstance(bank.get(k), list) and bank[k])
    ]
