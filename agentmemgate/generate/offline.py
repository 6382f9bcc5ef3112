"""The offline template renderer: a deterministic grammar over the catalog and phrase banks.

Like CheckList's templates, it is a real generator, not a fake model. Every level has its own
phrase list (``phrases/*.toml``); small talk comes as question-answer pairs from the domain's
catalog file (and ``phrases/chat.toml`` for off-topic chat), so every assistant turn answers the
turn before it; replies to the plan and its outcome fit their level (``phrases/replies.toml``);
dates, weekdays and references back ("last time") are computed from the session dates, so they
are true. The same seed always gives the same bytes. Outputs say they were made by it.

Data banks are dealt, not drawn: arc k of a domain (``ArcSpec.domain_index``) takes the k-th
run of that domain's exchanges, and the off-topic exchanges go round all arcs in turn, so no
exchange repeats in a default build while the catalog has enough of them.

Structure (paper Sections 5, 6.1, A.7): core and controlled arcs state the plan, talk about
something else, and resolve it in a later session (a pending window). Held-out arcs end the
plan's session with the plan and open the next session with the outcome (or, for open arcs,
the still-pending mention): no user turn in between, yet a probe after the plan's session sees
the plan before its outcome. Completed-change controls report the change in a later session than
the initial statement; that one turn is both plan and outcome turn. Correction arcs (the
corrections split) are written by ``_CorrectionWriter`` from ``correction_phrases.toml``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import zlib
from functools import cache

from .. import __version__
from ..design import Design, Domain, load_domains, paper_design, second_person
from ..schema import Arc, ArcSpec, Provenance, Session, Turn, TurnRef
from .banks import DATE_SLOTS, bank_sha256, correction_bank, level_phrasings, phrase_bank
from .inputs import domain_place
from .renderer import Renderer, register_renderer

KIND = "offline template renderer (deterministic grammar, no LLM)"
EXCHANGES_PER_ARC = 5  # the initial question and up to four small-talk exchanges
GENERAL_EVERY = 3  # one arc in three gets an off-topic exchange


# -- dealing the data banks ------------------------------------------------------------------
@cache
def _stream(fillings: tuple[int, ...], key: str) -> tuple[tuple[int, int], ...]:
    """Every (exchange, filling) once, exchanges in a seeded order, fillings advancing per lap
    (``fillings[i]`` is how many fillings exchange i has)."""
    order = list(range(len(fillings)))
    random.Random(key).shuffle(order)
    return tuple((e, f) for f in range(max(fillings)) for e in order if f < fillings[e])


def domain_exchanges(domain: Domain, spec: ArcSpec) -> list[tuple[str, str]]:
    stream = _stream(
        tuple(e.fillings for e in domain.exchanges),
        f"amg-exchanges:{spec.plan_seed}:{domain.attribute}",
    )
    start = spec.domain_index * EXCHANGES_PER_ARC
    picks = [stream[(start + j) % len(stream)] for j in range(EXCHANGES_PER_ARC)]
    return [domain.exchanges[e].fill(f) for e, f in picks]


def general_exchange(
    domain: Domain, spec: ArcSpec, design: Design | None = None
) -> tuple[str, str] | None:
    """The off-topic exchange of every third arc (by its place in the build), or None; a keyed
    design's planner gives each arc its place in the stream (``ArcSpec.off_topic``)."""
    design = design or paper_design()
    if spec.off_topic is not None:
        if spec.off_topic < 0:
            return None
        talk = tuple(phrase_bank(design)["chat"]["exchanges"])
        stream = _stream(tuple(e.fillings for e in talk), f"amg-small-talk:{spec.plan_seed}")
        e, f = stream[spec.off_topic % len(stream)]
        return talk[e].fill(f)
    ordinal, stride = domain_place(design, domain.attribute)
    serial = spec.domain_index * stride + ordinal + spec.plan_seed
    if serial % GENERAL_EVERY:
        return None
    talk = tuple(phrase_bank(design)["chat"]["exchanges"])
    stream = _stream(tuple(e.fillings for e in talk), f"amg-small-talk:{spec.plan_seed}")
    e, f = stream[(serial // GENERAL_EVERY) % len(stream)]
    return talk[e].fill(f)


def _rotate(items: list[str], spec: ArcSpec, salt: int) -> str:
    return items[(spec.domain_index + spec.plan_seed + salt) % len(items)]


# -- slots -----------------------------------------------------------------------------------
class _Slots(dict):
    """``{slot}`` values; ``{Slot}`` is the same value with a capital first letter."""

    def __missing__(self, key: str) -> str:
        low = key[:1].lower() + key[1:]
        if key[:1].isupper() and low in self:
            v = self[low]
            return v[:1].upper() + v[1:]
        raise KeyError(key)


def _week(d: dt.date) -> tuple[int, int]:
    iso = d.isocalendar()
    return iso[0], iso[1]


def _ahead(start: dt.date, day: dt.date) -> tuple[str, str]:
    """A future day said on ``start``: (adverbial, noun phrase)."""
    k = (day - start).days
    if k == 1:
        return "tomorrow", "tomorrow"
    if k <= 6:
        adverb = f"this {day:%A}" if _week(day) == _week(start) else f"on {day:%A}"
        return adverb, f"{day:%A}"
    return f"on {day:%A}, {day:%B} {day.day}", f"{day:%A}, {day:%B} {day.day}"


def _gap(days: int) -> str:
    if days <= 1:
        return "a day"
    if days <= 4:
        return "a few days"
    if days <= 9:
        return "about a week"
    if days <= 16:
        return "about two weeks"
    if days <= 24:
        return "about three weeks"
    return "about a month"


_NUMBERS = {
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "eleven",
    12: "twelve",
    13: "thirteen",
}


def _back(day: dt.date, now: dt.date) -> str:
    """A past day said on ``now``, in words that the day makes true."""
    k = (now - day).days
    if k <= 0:
        return "today"
    if k == 1:
        return "yesterday"
    if k <= 6:
        return f"on {day:%A}"
    if k <= 13:
        prev = now - dt.timedelta(days=7)
        return "last week" if _week(day) == _week(prev) else f"{_NUMBERS[k]} days ago"
    if k <= 18:
        return "a couple of weeks ago"
    if k <= 35:
        return "a few weeks ago"
    return "over a month ago"


def _asof(when: str) -> str:
    return when[3:] if when.startswith("on ") else when


def _between(rng: random.Random, after: dt.date, until: dt.date) -> dt.date:
    """A day in (after, until]; ``until`` itself when they are a day apart or less."""
    span = (until - after).days
    return until if span <= 1 else after + dt.timedelta(days=rng.randint(1, span))


def _spec_key(spec: ArcSpec) -> str:
    return spec.model_dump_json(exclude={"id"})


def offline_record(design: Design, spec: ArcSpec) -> dict | None:
    """The arc the offline renderer makes of ``spec``, as its record without the id and the
    toolkit version (what a keyed id digests), or None when the design's phrase lists cannot
    render it. The arc is kept with the design, so rendering it again costs nothing."""
    ok = getattr(design, "_renders_offline", None)
    if ok is None:
        from .phrase_check import phrase_problems

        ok = design._renders_offline = not phrase_problems(design)
    if not ok:
        return None
    arc = OfflineRenderer(design=design).render(spec)
    record = arc.export_record()
    record.pop("id")
    record["provenance"].pop("toolkit_version", None)
    return record


class OfflineRenderer(Renderer):
    name = "offline"
    family = "offline-template"
    kind = KIND

    def __init__(self, spec: str = "offline", design: Design | None = None, **_options):
        self.design = design or paper_design()
        self.prompt_sha256 = bank_sha256(self.design)
        self.correction_sha256 = bank_sha256(self.design, corrections=True)

    def inputs_sha256(self, spec: ArcSpec, read: list | None = None) -> str:
        """The provenance hash of an arc: with keyed ids, the phrasings and exchanges its turns
        were made from (``read``), so an edit that leaves them as they were (another level's
        list, a comment, a new domain) leaves the hash, and the exported bytes, as they were;
        with the paper's sequential ids, the whole phrase bank and catalog, as the toolkit
        always has."""
        if self.design.ids == "keyed" and read is not None:
            return hashlib.sha256(json.dumps(read, ensure_ascii=False).encode()).hexdigest()
        return self.correction_sha256 if spec.correction is not None else self.prompt_sha256

    def render(self, spec: ArcSpec) -> Arc:
        cache = getattr(self.design, "_offline_arcs", None)
        if cache is None:
            cache = self.design._offline_arcs = {}
        key = _spec_key(spec)
        arc = cache.get(key)
        if arc is None:
            writer = _CorrectionWriter if spec.correction is not None else _ArcWriter
            arc = cache[key] = writer(spec, self.design).write(self)
        out = arc.model_copy(deep=True)
        out.spec.id = spec.id
        return out


class _ArcWriter:
    """Renders one arc: lays out the sessions, then fills each turn from the banks."""

    def __init__(self, spec: ArcSpec, design: Design):
        self.spec, self.design = spec, design
        self.rng = random.Random(spec.seed)
        domains = load_domains(design)
        self.domain = domains[spec.domain]
        bank = phrase_bank(design)
        self.chat_bank, self.plans, self.outcomes, self.replies = (
            bank["chat"],
            bank["plan"],
            bank["outcome"],
            bank["replies"],
        )
        self.exchanges = domain_exchanges(self.domain, spec)
        self.general = general_exchange(self.domain, spec, design)
        self.ordinal = domain_place(design, spec.domain)[0]
        self.wording = (
            design.by_role("plan_wording").level(spec.plan_wording)
            if spec.outcome != "correction"
            else None
        )  # type: ignore[union-attr]
        self.sessions = [Session(date=d, turns=[]) for d in spec.session_dates]
        self.slots = self._base_slots()
        self.read: list = []  # every phrasing and exchange the arc's turns were made from

    # -- helpers ---------------------------------------------------------------------------
    def deal(self, items: list, salt: str):
        """The item for this arc: arcs of one domain go round the list in turn (by their place
        among the domain's arcs), each domain from its own start, which also depends on the list
        and the seed."""
        start = zlib.crc32(f"{salt}:{self.spec.plan_seed}".encode()) + self.ordinal
        item = items[(self.spec.domain_index + start) % len(items)]
        self.read.append(item)
        return item

    def choose(self, items: list[str]) -> str:
        """A phrasing drawn with the arc's random stream (openers, the first turn's frame)."""
        item = self.rng.choice(items)
        self.read.append(item)
        return item

    def pick(self, items: list[str], salt: str) -> str:
        return self.deal(items, salt).format_map(self.slots)

    def say(self, s: int, role: str, text: str) -> TurnRef:
        turns = self.sessions[s].turns
        turns.append(Turn(role=role, text=text))  # type: ignore[arg-type]
        return TurnRef(session=s, turn=len(turns) - 1)

    def greet(self, s: int, text: str, question: bool = False) -> str:
        """Prefix the first turn of a later session with a greeting (its weekday is true)."""
        if s == 0 or self.sessions[s].turns:
            return text
        openers = self.chat_bank["session_opener"] + (
            self.chat_bank["question_opener"] if question else []
        )
        weekday = f"{self.spec.session_dates[s]:%A}"
        return f"{self.choose(openers).format(weekday=weekday)} {text}"

    def _base_slots(self) -> _Slots:
        sp, d = self.spec, self.domain
        current_i = _rotate(d.current, sp, 7).format(value=sp.initial_value)
        current_p = _rotate(d.current, sp, 8).format(value=sp.plan_value)
        stay = d.stay.format(value=sp.initial_value)
        switching = d.switching.format(value=sp.plan_value)
        own = {}
        for i, (key, ck) in enumerate(sorted(self.design.catalog_keys.items())):
            item = _rotate(d.extra[key], sp, 11 + zlib.crc32(key.encode()) % 97)
            own[ck.slot or key] = item
            own[f"you_{ck.slot or key}"] = second_person(item)
        return _Slots(
            own,
            initial=sp.initial_value,
            plan=sp.plan_value,
            noun=d.noun,
            change=d.change,
            stay_initial=stay,
            switch_plan=d.switch.format(value=sp.plan_value),
            switching_plan=switching,
            switched_plan=d.switched.format(value=sp.plan_value),
            current_initial=current_i,
            current_plan=current_p,
            doing_plan=_rotate(d.doing, sp, 9).format(value=sp.plan_value),
            oblique_thing=d.oblique_thing,
            reason=_rotate(d.reasons, sp, 5),
            reason_done=_rotate(d.reasons_done, sp, 6),
            you_initial=second_person(sp.initial_value),
            you_plan=second_person(sp.plan_value),
            you_current_initial=second_person(current_i),
            you_current_plan=second_person(current_p),
            you_stay_initial=second_person(stay),
            you_switching_plan=second_person(switching),
            you_change_plan=f"{d.change} to {second_person(sp.plan_value)}",
            weigh=_rotate(d.weigh, sp, 0),
            step=_rotate(d.steps, sp, 1),
            settle=_rotate(d.settle, sp, 2),
            tip=_rotate(d.tips, sp, 3),
            stay_tip=_rotate(d.stay_tips, sp, 4),
        )

    # -- layout ----------------------------------------------------------------------------
    def layout(self) -> list[list[str]]:
        """Which turns each session holds: 'chat', 'initial', 'plan', 'outcome'."""
        rng, sp = self.rng, self.spec
        n = len(sp.session_dates)
        plan: list[list[str]] = [[] for _ in range(n)]
        plan[0] += (["chat"] if rng.random() < 0.35 else []) + ["initial"]
        if sp.outcome == "control":
            if rng.random() < 0.5:
                plan[0].append("chat")
            plan[1] += (["chat"] if rng.random() < 0.35 else []) + ["plan"]
            for s in range(2, n):
                plan[s].append("chat")
        elif sp.pending_window:
            if rng.random() < 0.5:
                plan[0].append("chat")
            plan[0].append("plan")
            after = rng.random() < (0.6 if n == 2 else 0.4)
            if after:
                plan[0].append("chat")
            for s in range(1, n - 1):
                plan[s].append("chat")
            if (n == 2 and not after) or rng.random() < 0.4:
                plan[-1].append("chat")  # at least one user turn between plan and outcome
            plan[-1].append("outcome")
        else:
            # Held-out: the plan ends its session; the outcome opens the next one.
            p = 0 if n == 2 else rng.choice((0, 1))
            if p == 1 and rng.random() < 0.5:
                plan[0].append("chat")
            if rng.random() < (0.4 if p == 0 else 0.5):
                plan[p].append("chat")
            plan[p].append("plan")
            plan[p + 1].append("outcome")
            if rng.random() < 0.5:
                plan[p + 1].append("chat")
            for s in range(p + 2, n):
                plan[s].append("chat")
        return plan

    # -- turns -----------------------------------------------------------------------------
    def _dates(self, plan_s: int, outcome_s: int | None) -> None:
        """Date slots: scheduled day, change day, when the plan was mentioned."""
        sp, rng, sl = self.spec, self.rng, self.slots
        dates = sp.session_dates
        p_day = dates[plan_s]
        if sp.outcome == "control":
            prev, now = dates[plan_s - 1], p_day
            when = _back(_between(rng, prev, now), now)
            sl.update(done_when=when, done_asof=_asof(when))
            return
        o_day = dates[outcome_s] if outcome_s is not None else p_day + dt.timedelta(days=14)
        self.o_day = o_day
        if any(slot in self.plan_template() for slot in DATE_SLOTS):
            if sp.outcome == "came_true":
                sched = (
                    _between(rng, p_day, o_day - dt.timedelta(days=1))
                    if (o_day - p_day).days > 1
                    else o_day
                )
            else:
                sched = p_day + dt.timedelta(days=rng.randint(1, 28))
            on_date, date_np = _ahead(p_day, sched)
            sl.update(
                on_date=on_date,
                date_np=date_np,
                sched_abs=f"{sched:%B} {sched.day}",
                gap=_gap((sched - p_day).days),
            )
            self.sched = sched
        else:
            self.sched = None
        if outcome_s is None:
            return
        start = self.sched if self.sched and self.sched <= o_day else p_day
        done = _between(rng, start, o_day) if start < o_day else o_day
        when = _back(done, o_day)
        if outcome_s == plan_s + 1 and rng.random() < 0.6:
            mentioned = rng.choice(("last time", "last time we talked", "when we last talked"))
        else:
            mentioned = _back(p_day, o_day)
            mentioned = "a while back" if mentioned == "over a month ago" else mentioned
        sl.update(done_when=when, done_asof=_asof(when), mentioned=mentioned)

    def plan_template(self) -> str:
        """The plan phrasing dealt to this arc. Whether it names a day (a date slot) decides
        whether the plan has one: a level may mix dated and undated phrasings, and a later
        turn may cite only a day the plan gave."""
        key = self.wording.phrase_key
        return self.deal(self.plans[key], key)

    def plan_text(self) -> str:
        sp = self.spec
        template = self.plan_template()
        text = template.format_map(self.slots)
        if sp.outcome == "control":
            if "{reason_done}" not in template:
                text += " " + self.pick(self.plans["motivation_done"], "motivation_done")
        elif "{reason}" not in template:
            text += " " + self.pick(self.plans["motivation"], "motivation")
        return text

    def outcome_level(self):
        """The outcome factor's level this arc ends at: its cell's, or the first of its kind."""
        sp, f = self.spec, self.design.by_role("outcome")
        if f is not None and sp.factor == f.name:
            return f.level(sp.level)
        return next(
            (lv for lv in (f.levels if f else ()) if (lv.kind or lv.name) == sp.outcome), None
        )

    def outcome_text(self) -> tuple[str, str]:
        sp, design = self.spec, self.design
        group = self.wording.group
        replies = self.replies
        if sp.outcome == "came_true":
            conf = design.by_role("confirmation_wording").level(sp.confirmation_wording)  # type: ignore[union-attr]
            key = conf.phrase_key
            text = self.pick(level_phrasings(key, group, design), f"{key}:{group}")
            reply = conf.reply or "came_true"
            return text, self.pick(replies[reply], reply)
        out = self.outcome_level()
        key = out.phrase_key if out else sp.outcome
        reply = (out.reply if out and out.reply else key).format(group=group)
        if sp.outcome == "abandoned":
            return (
                self.pick(level_phrasings(key, group, design), f"{key}:{group}"),
                self.pick(replies[reply], f"reply:{reply}"),
            )
        options = level_phrasings(key, group, design)
        slipped = False
        if self.sched is not None:
            passed = "scheduled_passed" if self.sched < self.o_day else "scheduled_ahead"
            options += self.outcomes[key][passed]
            slipped = passed == "scheduled_passed"
        template = self.deal(options, f"{key}:{group}:{len(options)}")
        if slipped and template in self.outcomes[key]["scheduled_passed"]:
            # A day that slipped gets a reply of its own where the design gives one (a reply
            # that says there is still time would contradict the user).
            reply = f"{reply}_passed" if f"{reply}_passed" in replies else reply
        return template.format_map(self.slots), self.pick(replies[reply], reply)

    def chat(self, s: int) -> tuple[str, str]:
        if self.general is not None and (s > 0 or self.use_general_first):
            q, a = self.general
            self.general = None
        elif self.exchanges:
            q, a = self.exchanges.pop(0)
        else:  # more small talk than dealt: an off-topic exchange drawn at random
            ex = self.rng.choice(self.chat_bank["exchanges"])
            q, a = ex.fill(self.rng.randrange(ex.fillings))
        self.read.append([q, a])
        return self.greet(s, q, question=True), a

    # -- the arc ---------------------------------------------------------------------------
    def write(self, renderer: OfflineRenderer) -> Arc:
        sp = self.spec
        plan = self.layout()
        plan_s = next(s for s, items in enumerate(plan) if "plan" in items)
        outcome_s = next((s for s, items in enumerate(plan) if "outcome" in items), None)
        # The off-topic exchange goes to a later session when there is one with chat.
        self.use_general_first = not any("chat" in items for items in plan[1:])
        self._dates(plan_s, outcome_s)
        refs: dict[str, TurnRef] = {}
        q0, a0 = self.exchanges.pop(0)  # the initial turn's question
        self.read.append([q0, a0])
        replies = self.replies
        for s, items in enumerate(plan):
            for item in items:
                if item == "chat":
                    self.exchange(s, *self.chat(s))
                elif item == "initial":
                    text = self.choose(self.chat_bank["initial"]).format_map(
                        _Slots(self.slots, q=q0)
                    )
                    ack = (
                        self.pick(replies["after_initial"], "ack") + " "
                        if self.rng.random() < 0.5
                        else ""
                    )
                    refs["initial"] = self.exchange(s, text, ack + a0)
                elif item == "plan":
                    key = self.wording.reply or self.wording.name
                    text = self.greet(s, self.plan_text())
                    refs["plan"] = self.exchange(s, text, self.pick(replies[key], f"reply:{key}"))
                else:
                    text, reply = self.outcome_text()
                    refs["outcome"] = self.exchange(s, self.greet(s, text), reply)
        plan_ref = refs["plan"]
        outcome: TurnRef | None = plan_ref if sp.outcome == "control" else None
        pending: TurnRef | None = None
        if "outcome" in refs:
            if sp.outcome == "open":
                pending = refs["outcome"]
            else:
                outcome = refs["outcome"]
        return Arc(
            spec=sp,
            sessions=self.sessions,
            initial_turn=refs["initial"],
            plan_turn=plan_ref,
            outcome_turn=outcome,
            pending_turn=pending,
            expected_value_after_session=sp.expected_timeline(
                outcome.session if outcome else None, plan_ref.session
            ),
            provenance=Provenance(
                generator=renderer.name,
                generator_kind=renderer.kind,
                prompt_sha256=renderer.inputs_sha256(sp, self.read),
                seed=sp.plan_seed,
                toolkit_version=__version__,
            ),
        )

    def exchange(self, s: int, user: str, assistant: str) -> TurnRef:
        ref = self.say(s, "user", user)
        self.say(s, "assistant", assistant)
        return ref


class _CorrectionWriter(_ArcWriter):
    """A correction arc (the corrections split). The user states the value as a fact (the
    initial turn); for a corrected change, a later session reports a completed change (the plan
    turn, as in a completed-change control); then, in the same session as the corrected statement
    after at least one other exchange, or in a later session, the correction turn says that
    statement was wrong and gives the right value (``correction_phrases.toml``)."""

    def __init__(self, spec: ArcSpec, design: Design):
        super().__init__(spec, design)
        c, d = spec.correction, self.domain
        assert c is not None
        self.bank = correction_bank(design)
        self.control = design.by_role("plan_wording").level(  # type: ignore[union-attr]
            design.by_role("plan_wording").control_level
        )  # type: ignore[union-attr]
        current_r = _rotate(d.current, spec, 10).format(value=c.value)
        self.slots.update(
            wrong=c.wrong_value,
            right=c.value,
            current_right=current_r,
            you_current_right=second_person(current_r),
            switched_wrong=d.switched.format(value=c.wrong_value),
            switched_right=d.switched.format(value=c.value),
        )

    def layout(self) -> list[list[str]]:
        rng, c = self.rng, self.spec.correction
        n = len(self.spec.session_dates)
        plan: list[list[str]] = [[] for _ in range(n)]
        plan[0] += (["chat"] if rng.random() < 0.35 else []) + ["initial"]
        if c.target == "initial":
            said, where = 0, (0 if c.timing == "same" else rng.randrange(1, n))
        else:
            if rng.random() < 0.5:
                plan[0].append("chat")
            plan[1] += (["chat"] if rng.random() < 0.35 else []) + ["plan"]
            said, where = 1, (1 if c.timing == "same" else 2)
        if where == said:  # at least one other exchange between the statement and its correction
            plan[where] += ["chat"] * (1 + (rng.random() < 0.3))
        elif rng.random() < 0.4:
            plan[where].append("chat")
        plan[where].append("correction")
        if rng.random() < 0.35:
            plan[where].append("chat")
        for items in plan:
            if not items:
                items.append("chat")
        self.said_session = said
        return plan

    def said_when(self, s: int) -> str:
        if s == self.said_session:
            return self.deal(self.bank["said_when_same"], "said_when_same")
        if s == self.said_session + 1:
            return self.deal(self.bank["said_when_later"], "said_when_later")
        dates = self.spec.session_dates
        return f"when we talked {_back(dates[self.said_session], dates[s])}"

    def write(self, renderer: OfflineRenderer) -> Arc:
        sp, c = self.spec, self.spec.correction
        plan = self.layout()
        self.use_general_first = not any("chat" in items for items in plan[1:])
        refs: dict[str, TurnRef] = {}
        q0, a0 = self.exchanges.pop(0)
        self.read.append([q0, a0])
        replies = self.replies
        for s, items in enumerate(plan):
            for item in items:
                if item == "chat":
                    self.exchange(s, *self.chat(s))
                elif item == "initial":
                    text = self.choose(self.chat_bank["initial"]).format_map(
                        _Slots(self.slots, q=q0)
                    )
                    ack = (
                        self.pick(replies["after_initial"], "ack") + " "
                        if self.rng.random() < 0.5
                        else ""
                    )
                    refs["initial"] = self.exchange(s, text, ack + a0)
                elif item == "plan":  # the reported completed change that will be corrected
                    prev, now = sp.session_dates[s - 1], sp.session_dates[s]
                    when = _back(_between(self.rng, prev, now), now)
                    self.slots.update(done_when=when, done_asof=_asof(when))
                    key = self.control.phrase_key
                    template = self.deal(self.plans[key], key)
                    text = template.format_map(self.slots)
                    if "{reason_done}" not in template:
                        text += " " + self.pick(self.plans["motivation_done"], "motivation_done")
                    reply = self.control.reply or self.control.name
                    refs["plan"] = self.exchange(
                        s, self.greet(s, text), self.pick(replies[reply], f"reply:{reply}")
                    )
                else:
                    self.slots["said_when"] = self.said_when(s)
                    key = f"{c.target}_{c.marker}"
                    text = self.greet(s, self.pick(self.bank[key], key))
                    refs["correction"] = self.exchange(
                        s, text, self.pick(self.bank["reply"], "correction_reply")
                    )
        corr = refs["correction"]
        plan_ref = refs.get("plan", corr)
        return Arc(
            spec=sp,
            sessions=self.sessions,
            initial_turn=refs["initial"],
            plan_turn=plan_ref,
            outcome_turn=corr,
            correction_turn=corr,
            expected_value_after_session=sp.expected_timeline(corr.session, plan_ref.session),
            provenance=Provenance(
                generator=renderer.name,
                generator_kind=renderer.kind,
                prompt_sha256=renderer.inputs_sha256(sp, self.read),
                seed=sp.plan_seed,
                toolkit_version=__version__,
            ),
        )


register_renderer(
    "offline", lambda ref, **options: OfflineRenderer(ref.spec, **options), builtin=True
)
