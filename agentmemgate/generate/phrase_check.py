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
from .banks import DATE_SLOTS, phrase_bank
from .slots import KNOWN_SLOTS, domain_slots, slots_for

# A plan turn must carry the plan value (the structural check ``plan_value_in_plan_turn``).
PLAN_VALUE_SLOTS = frozenset({"plan", "switch_plan", "switching_plan", "switched_plan"})
MIN_PHRASINGS = 8  # so that no single sentence identifies a level (or repeats past the limit)
SHORT_SENTENCE = 6  # words: a short acknowledgement ("Glad it went smoothly.") may be slot-free
PHRASE_FILES = ("plan", "outcome", "replies", "chat")
_SLOT = re.compile(r"\{(\w+)\}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def unknown_slots(template: str, known=KNOWN_SLOTS) -> list[str]:
    return [s for s in _SLOT.findall(template) if s[:1].lower() + s[1:] not in known]


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

    varied = domain_slots(design)

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
                        and not {v[:1].lower() + v[1:] for v in _SLOT.findall(x)} & varied
                    ),
                    None,
                )
                if bare is not None:
                    out.append(
                        Problem(
                            origin(name),
                            f"{key}#{i + 1}",
                            f"the sentence {bare!r} has no slot that differs between "
                            f"domains ({', '.join(sorted(varied))}): it would repeat "
                            "word for word across the dataset",
                        )
                    )
        file = "opener" if key in ("session_opener", "question_opener") else name
        known = slots_for(file, design)
        for i, t in enumerate(node):
            if bad := unknown_slots(t, known):
                out.append(
                    Problem(
                        origin(name),
                        f"{key}#{i + 1}",
                        f"unknown slot {{{bad[0]}}}; {name}.toml "
                        f"{'openers' if file == 'opener' else 'phrasings'} may use: "
                        f"{', '.join(sorted(known))} (a slot of your own: declare a catalog key "
                        "under [catalog_keys] in design.toml; the docs' reference lists every "
                        "slot by file)",
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


# Slots by which a turn names the new value, or the change itself.
VALUE_SLOTS = frozenset(
    {
        "plan",
        "switch_plan",
        "switching_plan",
        "switched_plan",
        "current_plan",
        "doing_plan",
        "you_plan",
        "you_current_plan",
        "you_switching_plan",
        "you_change_plan",
    }
)
CHANGE_SLOTS = frozenset({"change"})
_CHANGE_WORD = re.compile(r"\b(switch|switched|switching|move|moved|moving|change|changed)\b", re.I)


def _named(t: str) -> tuple[bool, bool]:
    """Whether a phrasing names the new value, and whether it names the change."""
    used = {v[:1].lower() + v[1:] for v in _SLOT.findall(t)}
    literal = _CHANGE_WORD.sub("", _SLOT.sub("", t)) != _SLOT.sub("", t)
    return bool(used & VALUE_SLOTS), bool(used & (VALUE_SLOTS | CHANGE_SLOTS)) or literal


def default_problems(design: Design) -> list[Problem]:
    """Defaults a level would inherit that undo its definition: a confirmation that never names
    the new value (or the change) answered by a reply that names it, and an open plan whose day
    slipped answered by a reply that says there is still time. Each asks for the level's own
    list, naming the file and key."""
    from ..validate.consistency import builtin_rules

    try:
        bank = phrase_bank(design)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []  # ``phrase_problems`` names it
    out: list[Problem] = []
    replies, outcomes = bank.get("replies", {}), bank.get("outcome", {})
    folder = design.files.phrases.rstrip("/")
    if f"{folder}/replies.toml" not in design.source.files:
        return []  # ``phrase_problems`` names it
    origin = design.source.files[f"{folder}/replies.toml"].origin
    used = used_levels(design)
    conf_f = design.by_role("confirmation_wording")
    for name in sorted(used["confirmation"]):
        lv = conf_f.level(name)  # type: ignore[union-attr]
        table = outcomes.get(lv.phrase_key, {})
        said = [t for v in table.values() if isinstance(v, list) for t in v if isinstance(t, str)]
        if not said:
            continue
        value = any(_named(t)[0] for t in said)
        change = any(_named(t)[1] for t in said)
        key = lv.reply or "came_true"
        bad = []
        for i, t in enumerate(replies.get(key, [])):
            names_value, names_change = _named(t)
            if (names_value and not value) or (names_change and not change):
                bad.append((i, t, "the new value" if names_value and not value else "the change"))
        unsaid = f"confirmations at level {lv.name!r} never do, so the reply would say what the level leaves unsaid"
        if bad and not lv.reply:  # an inherited default: the level needs its own list
            i, t, what = bad[0]
            out.append(
                Problem(
                    origin,
                    key,
                    f"{len(bad)} of its {len(replies.get(key, []))} replies name {what} (e.g. "
                    f"{t!r}), but {unsaid}: give the level a reply list of its own, reply = "
                    f"{lv.name!r} on the level in design.toml and a list {lv.name!r} in "
                    "replies.toml",
                )
            )
        elif bad:
            out += [
                Problem(origin, f"{key}#{i + 1}", f"names {what} ({t!r}), but {unsaid}")
                for i, t, what in bad
            ]
    plan_f, out_f = design.by_role("plan_wording"), design.by_role("outcome")
    dated_groups = {
        plan_f.level(w).group  # type: ignore[union-attr]
        for w in used["plan"]
        if any(
            slot in t
            for t in bank.get("plan", {}).get(plan_f.level(w).phrase_key, ())  # type: ignore[union-attr]
            for slot in DATE_SLOTS
        )
    } - {None}
    matcher = builtin_rules().matcher
    for name in sorted(used["outcome"]):
        lv = out_f.level(name)  # type: ignore[union-attr]
        if (lv.kind or lv.name) != "open":
            continue
        for group in sorted(dated_groups):
            key = (lv.reply or lv.phrase_key).format(group=group)
            own = f"{key}_passed"
            check = own if own in replies else key
            for i, t in enumerate(replies.get(check, [])):
                hit = matcher.first("still_ahead", t.lower().replace("\u2019", "'"))
                if hit is not None:
                    out.append(
                        Problem(
                            origin,
                            f"{check}#{i + 1}",
                            f"says the plan's day is still ahead ('{hit.group(0)}'), but it also "
                            f"answers an open {group} plan whose scheduled day has slipped: "
                            + (
                                f"remove it from {check!r}"
                                if check == own
                                else f"give those a list of their own, {own!r} in replies.toml"
                            ),
                        )
                    )
    return out
