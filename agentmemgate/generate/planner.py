"""The seeded planner: one ``ArcSpec`` per conversation, in the cells a design declares.

The planner decides everything a renderer must realize (field, values, levels, dates, structure),
so LLM generators and the offline renderer produce the same benchmark from the same design and
seed. Two id schemes (``Design.ids``):

- ``sequential`` (the paper's): one random stream per split, drawn in plan order, as the toolkit
  always has; the paper's design keeps the ids and arcs it has always had. Any other design
  salts its id stream with a digest of everything its plan depends on, so an edit to it re-deals
  every id (an id never keeps its name while its spec changes).
- ``keyed``: each arc is drawn from its own key (seed, split, cell, domain, lap): a cell takes
  the domains whose keyed scores rank highest, each arc's values, dates and wordings come from
  streams of that key, and its id is a digest of its spec. Adding a cell or a domain leaves the
  other arcs as they were, except where the draw must change: the arc a new domain displaces,
  and small talk, which is dealt in build order so that no exchange repeats.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import random
from collections import Counter

from ..design import Cell, Design, Domain, paper_design
from ..errors import BadInput
from ..schema import ArcSpec, CorrectionSpec, FieldSpec
from .inputs import prompt_inputs, rendering_inputs


def resolve_splits(split: str, design: Design | None = None) -> list[str]:
    """``all``, a group of the design (the paper's ``paper``) or one split name, validated."""
    return (design or paper_design()).resolve_splits(split)


def plan_split(
    split: str, seed: int = 0, n_per_cell: int | None = None, design: Design | None = None
) -> list[ArcSpec]:
    """All specs of one split; the same (design, split, seed, n_per_cell) always gives the same
    specs. They are copies, nested fields included: a caller may change them (a renderer puts the
    spec into its arc, and tests edit arcs) without changing what the next call returns."""
    return [
        s.model_copy(deep=True) for s in _planned(design or paper_design(), split, seed, n_per_cell)
    ]


def check_plan(
    split: str, seed: int = 0, n_per_cell: int | None = None, design: Design | None = None
) -> None:
    """Refuse, as ``plan_split`` would, a split the catalog cannot fill (no copies made)."""
    _planned(design or paper_design(), split, seed, n_per_cell)


def _planned(design: Design, split: str, seed: int, n_per_cell: int | None) -> tuple[ArcSpec, ...]:
    if n_per_cell is not None and n_per_cell < 1:
        raise BadInput(f"--n-per-cell must be a positive whole number, got {n_per_cell}")
    design.split(split)
    try:
        return _plan_build(_Key(design), seed, n_per_cell)[split]
    except _Exhausted as e:
        if n_per_cell is None:
            raise BadInput(
                f"Catalog has too few values for attribute {e.attribute!r} to keep "
                f"(attribute, initial, plan) triples unique in split {e.split!r}"
            ) from None
        best = largest_n_per_cell(split, seed, below=n_per_cell, design=design)
        raise BadInput(
            f"--n-per-cell {n_per_cell} is more than the catalog can fill for split "
            f"{split!r}: the largest value that works there is {best} (each arc needs an "
            "unused attribute, initial and plan value)"
        ) from None


def largest_n_per_cell(split: str, seed: int, below: int, design: Design | None = None) -> int:
    """The largest ``n_per_cell`` under ``below`` that the catalog can fill (0 if none)."""
    key = _Key(design or paper_design())
    lo, hi = 0, below  # plan(lo) works (0 trivially), plan(hi) fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _plan_build(key, seed, mid)
            lo = mid
        except _Exhausted:
            hi = mid
    return lo


class _Exhausted(Exception):
    def __init__(self, attribute: str, split: str):
        self.attribute, self.split = attribute, split


class _Key:
    """A design as a cache key: equal when the files it was read from are equal."""

    def __init__(self, design: Design):
        self.design = design
        self.digest = design_digest(design)

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Key) and other.digest == self.digest


def design_digest(design: Design) -> str:
    """sha256 of everything a design was read from (its file, the files it names, its domains)."""
    cached = getattr(design, "_digest", None)
    if cached:
        return cached
    src = design.source
    h = hashlib.sha256(src.design.data)
    for rel, f in sorted(src.files.items()):
        h.update(b"\0" + rel.encode() + b"\0" + f.data)
    for name in design_domain_names(design):
        h.update(b"\0" + name.encode() + b"\0" + src.catalog[name].data)
    design._digest = h.hexdigest()  # type: ignore[attr-defined]
    return design._digest  # type: ignore[attr-defined]


def design_domain_names(design: Design) -> list[str]:
    """The domains the design draws from: its list, or every catalog domain (sorted)."""
    return sorted(design.source.catalog) if design.domains == "all" else list(design.domains)


@functools.lru_cache(maxsize=16)
def _plan_build(key: _Key, seed: int, n_per_cell: int | None) -> dict[str, tuple[ArcSpec, ...]]:
    """Every split's specs, planned in split order (each arc knows its place among its domain's
    arcs across the whole build: ``ArcSpec.domain_index``)."""
    design = key.design
    if design.ids == "keyed":
        return _Keyed(design, seed, n_per_cell).plan()
    seen: Counter = Counter()
    salt = _sequential_salt(design)
    return {
        name: tuple(_plan_sequential(design, name, seed, n_per_cell, seen, salt))
        for name in design.splits
    }


# -- what every arc is made of --------------------------------------------------------------------
def _value_pairs(domain: Domain, long: bool) -> tuple[tuple[str, str], ...]:
    """Every (initial, plan) pair of distinct values that the field text does not give away."""
    f = domain.field()
    return _pairs(
        tuple(domain.long_values if long else domain.values),
        f.attribute,
        f.description,
        f.probe_question,
    )


@functools.lru_cache(maxsize=256)
def _pairs(
    pool: tuple[str, ...], attribute: str, description: str, probe_question: str
) -> tuple[tuple[str, str], ...]:
    field = FieldSpec(attribute=attribute, description=description, probe_question=probe_question)
    return tuple((a, b) for a in pool for b in pool if a != b and not field.leaked_values([a, b]))


def _wordings(
    design: Design, cell: Cell, outcome: str, pick_plan, pick_conf
) -> tuple[str, str | None]:
    """The plan turn's wording and, for a plan that came true, the confirmation's: the cell's
    own level where its factor decides it, a control for a control, else drawn."""
    role = design.factors[cell.factor].role
    plan_f, conf_f = design.by_role("plan_wording"), design.by_role("confirmation_wording")
    if outcome == "control":
        wording = plan_f.control_level  # type: ignore[union-attr]
    elif role == "plan_wording":
        wording = cell.level
    else:
        wording = pick_plan(plan_f.drawn)  # type: ignore[union-attr]
    confirmation = None
    if outcome == "came_true":
        confirmation = cell.level if role == "confirmation_wording" else pick_conf(conf_f.drawn)  # type: ignore[union-attr]
    return wording, confirmation


def _dates(rng: random.Random, n_sessions: int, st) -> list[dt.date]:
    start = st.first_date + dt.timedelta(days=rng.randrange(0, st.first_date_span_days))
    dates = [start]
    for _ in range(n_sessions - 1):
        dates.append(
            dates[-1] + dt.timedelta(days=rng.randrange(st.gap_days[0], st.gap_days[1] + 1))
        )
    return dates


def _correction_values(cell: Cell, domain: Domain, first: str, second: str, rng: random.Random):
    """Corrected initial value: the user states ``first`` and later corrects it to ``second``
    (initial_value, plan_value = the corrected value). Corrected change: the user states
    ``first``, later reports a completed change to ``second``, and later still corrects the
    change to a third value (initial_value, plan_value = the reported change's value)."""
    target, timing, marker = cell.level.split("_")
    if target == "initial":
        return target, timing, marker, (first, second, first, second)
    field = domain.field()
    thirds = [v for v in domain.values if v not in (first, second) and not field.leaked_values([v])]
    return target, timing, marker, (first, second, second, rng.choice(thirds))


def _correction_spec(
    design: Design,
    split: str,
    cell: Cell,
    arc_id: str,
    domain: Domain,
    draw_sessions,
    draw_dates,
    draw_values,
    draw_seed,
    seed: int,
    first: str,
    second: str,
) -> ArcSpec:
    target, timing, marker, (initial, plan, wrong, value) = _correction_values(
        cell, domain, first, second, draw_values
    )
    st = design.structure_of(split, cell)
    if target == "initial":
        n_sessions = draw_sessions(st.sessions)
        wording = "correction"
    else:
        # the change is reported in session 1; a later correction needs a session after it
        n_sessions = 3 if timing == "later" else draw_sessions(st.sessions)
        wording = design.by_role("plan_wording").control_level  # type: ignore[union-attr]
    return ArcSpec(
        id=arc_id,
        split=split,
        factor=cell.factor,
        level=cell.level,
        outcome="correction",
        field=domain.field(),
        domain=domain.attribute,
        initial_value=initial,
        plan_value=plan,
        plan_wording=wording,
        session_dates=_dates(draw_dates, n_sessions, st),
        pending_window=False,
        seed=draw_seed.randrange(2**31),
        plan_seed=seed,
        correction=CorrectionSpec(
            target=target,
            timing=timing,
            marker=marker,  # type: ignore[arg-type]
            wrong_value=wrong,
            value=value,
        ),
    )


# -- sequential (the paper's) ---------------------------------------------------------------------
class _ArcIds:
    """Opaque arc ids: ``arc-`` and 12 hex digits drawn from the plan seed and the split.

    Nothing of the split, factor, level or outcome is in an id, so data handed to a model or a
    memory system under test does not carry its answers; the same seed gives the same ids.
    Never parse an id: read the record's fields.
    """

    def __init__(self, seed: int, split: str, salt: str = ""):
        self._rng = random.Random(f"amg-ids:{seed}:{split}{salt}")
        self._seen: set[str] = set()

    def next(self) -> str:
        while True:
            arc_id = f"arc-{self._rng.getrandbits(48):012x}"
            if arc_id not in self._seen:
                self._seen.add(arc_id)
                return arc_id


def _sequential_salt(design: Design) -> str:
    """'' for the paper's design read from its own files (its ids are the paper's), else a
    digest of everything the design was read from: any edit re-deals every id, so an id never
    keeps its name while its arc changes."""
    digest = design_digest(design)
    return "" if digest == design_digest(paper_design()) else f":{digest[:16]}"


def _plan_sequential(
    design: Design, split: str, seed: int, n_per_cell: int | None, seen: Counter, salt: str
) -> list[ArcSpec]:
    from ..design.catalog import load_domains

    catalog = load_domains(design)
    domains = sorted(catalog.values(), key=lambda d: d.attribute)
    rng = random.Random(f"amg:{seed}:{split}")
    ids = _ArcIds(seed, split, salt)
    used: set[tuple[str, str, str]] = set()
    specs: list[ArcSpec] = []
    domain_cycle: list[Domain] = []
    for cell, n in design.cell_counts(split, n_per_cell):
        for _ in range(n):
            if not domain_cycle:  # spread arcs evenly over domains, in a seeded order
                domain_cycle = domains[:]
                rng.shuffle(domain_cycle)
            domain = domain_cycle.pop()
            spec = _sequential_spec(design, split, cell, ids.next(), domain, rng, used, seed)
            spec.domain_index = seen[domain.attribute]
            seen[domain.attribute] += 1
            specs.append(spec)
    return specs


def _sequential_spec(
    design: Design,
    split: str,
    cell: Cell,
    arc_id: str,
    domain: Domain,
    rng: random.Random,
    used: set[tuple[str, str, str]],
    seed: int,
) -> ArcSpec:
    st = design.structure_of(split, cell)
    pairs = [
        (a, b)
        for a, b in _value_pairs(domain, st.values == "long")
        if (domain.attribute, a, b) not in used
    ]
    if not pairs:
        raise _Exhausted(domain.attribute, split)
    initial, plan = rng.choice(pairs)
    used.add((domain.attribute, initial, plan))
    outcome = design.outcome_of(cell)
    if outcome == "correction":
        return _correction_spec(
            design, split, cell, arc_id, domain, rng.choice, rng, rng, rng, seed, initial, plan
        )
    n_sessions = rng.choice(st.sessions)
    dates = _dates(rng, n_sessions, st)
    wording, confirmation = _wordings(design, cell, outcome, rng.choice, rng.choice)
    return ArcSpec(
        id=arc_id,
        split=split,
        factor=cell.factor,
        level=cell.level,
        outcome=outcome,
        field=domain.field(),
        domain=domain.attribute,
        initial_value=initial,
        plan_value=plan,
        plan_wording=wording,
        confirmation_wording=confirmation,
        session_dates=dates,
        pending_window=st.pending_window,
        seed=rng.randrange(2**31),
        plan_seed=seed,
    )


# -- keyed ----------------------------------------------------------------------------------------
def _h(*parts) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def keyed_id(spec: ArcSpec, design: Design) -> str:
    """``arc-`` and 12 hex digits of the arc's content: its record as the offline renderer makes
    it (ground truth, turns, turn references, the phrasings it was made from; not the toolkit
    version) and what an LLM generator's prompt reads besides the spec. An edit that leaves an
    arc's content as it was leaves its id; any change of content is a new id. A design whose
    phrase lists cannot render the arc offline (one built only with an LLM generator) names it
    by its spec and everything its rendering would read."""
    from .offline import offline_record

    record = offline_record(design, spec)
    if record is None:
        body = spec.model_dump_json(exclude={"id"}) + rendering_inputs(design, spec)
    else:
        body = json.dumps(record, sort_keys=True, ensure_ascii=False)
    body += prompt_inputs(design, spec)
    return f"arc-{hashlib.sha256(f'amg-keyed-id:{body}'.encode()).hexdigest()[:12]}"


class _Deals:
    """A keyed design's small talk, dealt so that it repeats as little as the banks allow while
    an arc's share depends on no arc placed after it.

    Each domain's exchanges and the off-topic exchanges are streams (``offline._stream``): a
    domain deals blocks of ``EXCHANGES_PER_ARC`` entries, the off-topic stream single entries.
    Arcs are placed in the design's order; each takes, among the blocks not dealt in the current
    lap, one whose exchanges have been dealt least, the first such from a start its own key gives
    (then a new lap starts). So a cell appended at the end of a split, or a new split, moves no
    earlier arc's small talk, and a removed arc can move only later arcs of its own stream."""

    def __init__(self, design: Design, catalog: dict[str, Domain], seed: int):
        from .banks import phrase_bank
        from .offline import EXCHANGES_PER_ARC, GENERAL_EVERY, _stream

        self.seed, self.every, self.catalog = seed, GENERAL_EVERY, catalog
        self.width = EXCHANGES_PER_ARC
        self.group = {s: g for g, members in design.groups.items() for s in members}
        self.fillings = {
            name: _stream(tuple(e.fillings for e in d.exchanges), f"amg-exchanges:{seed}:{name}")
            for name, d in catalog.items()
        }
        talk = phrase_bank(design)["chat"].get("exchanges") or []
        self.talk = (
            _stream(tuple(e.fillings for e in talk), f"amg-small-talk:{seed}") if talk else ()
        )
        self.streams: dict[tuple[str, str], _Stream] = {}

    def _stream(self, split: str, name: str) -> _Stream:
        """A stream's state within the set of splits judged together (the design's group, or the
        split alone): small talk repeats as little as possible where a judge counts repeats, and a
        split outside the group deals its own."""
        key = (self.group.get(split, f"split:{split}"), name)
        if key not in self.streams:
            entries = self.talk if name == "" else self.fillings[name]
            self.streams[key] = _Stream(entries, 1 if name == "" else self.width)
        return self.streams[key]

    def claim(self, split: str, domain: str, key: str) -> int:
        """The arc's deal index (``ArcSpec.domain_index``)."""
        return self._stream(split, domain).claim(_h("amg-keyed-block", self.seed, key))

    def off_topic(self, split: str, key: str) -> int:
        """The arc's place in the off-topic stream (``ArcSpec.off_topic``), -1 for none: one arc
        in ``GENERAL_EVERY`` gets one, by its key."""
        if not self.talk or _h("amg-keyed-off-topic", self.seed, key) % self.every:
            return -1
        return self._stream(split, "").claim(_h("amg-keyed-off-topic-place", self.seed, key))


class _Stream:
    """One stream's deal state: blocks dealt in this lap and how often each exchange was dealt."""

    def __init__(self, entries: tuple[tuple[int, int], ...], width: int):
        self.width = width
        self.blocks = max(1, len(entries) // width)
        self.exchanges = [
            {entries[(b * width + j) % len(entries)][0] for j in range(width)}
            for b in range(self.blocks)
        ]
        self.dealt: Counter = Counter()
        self.taken: set[int] = set()
        self.lap = 0

    def _load(self, block: int) -> int:
        return max(self.dealt[e] for e in self.exchanges[block])

    def claim(self, start: int) -> int:
        if len(self.taken) >= self.blocks:
            self.taken.clear()
            self.lap += 1
        start %= self.blocks
        free = [(start + k) % self.blocks for k in range(self.blocks)]
        free = [b for b in free if b not in self.taken]
        # The first lap deals every entry once: the first free block from the arc's start. A
        # later lap deals again exchanges dealt least, so none is dealt twice more than another.
        b = free[0] if self.lap == 0 else min(free, key=self._load)
        self.taken.add(b)
        self.dealt.update(self.exchanges[b])
        return self.lap * self.blocks + b


class _Keyed:
    """The keyed plan of a whole design (see the module docstring)."""

    def __init__(self, design: Design, seed: int, n_per_cell: int | None):
        from ..design.catalog import load_domains

        self.design, self.seed, self.n_per_cell = design, seed, n_per_cell
        self.catalog = load_domains(design)
        self.names = design_domain_names(design)

    def plan(self) -> dict[str, tuple[ArcSpec, ...]]:
        out = {}
        deals = _Deals(self.design, self.catalog, self.seed)
        for split in self.design.splits:
            used: set[tuple[str, str, str]] = set()
            specs = []
            for cell, n in self.design.cell_counts(split, self.n_per_cell):
                laps = -(-n // len(self.names))
                outcome = self.design.outcome_of(cell)
                base = f"{self.seed}:{split}:{cell.factor}:{cell.level}:{outcome}"
                ranked = sorted(
                    (lap, _h("amg-keyed-cell", base, d, lap), d)
                    for lap in range(laps)
                    for d in self.names
                )[:n]
                for lap, _, d in ranked:
                    spec = self._spec(
                        split, cell, outcome, f"{base}:{d}:{lap}", self.catalog[d], used
                    )
                    spec.domain_index = deals.claim(split, d, f"{base}:{d}:{lap}")
                    spec.off_topic = deals.off_topic(split, f"{base}:{d}:{lap}")
                    spec.id = keyed_id(spec, self.design)
                    specs.append(spec)
            out[split] = tuple(specs)
        return out

    def _spec(
        self,
        split: str,
        cell: Cell,
        outcome: str,
        key: str,
        domain: Domain,
        used: set[tuple[str, str, str]],
    ) -> ArcSpec:
        design, seed = self.design, self.seed

        def rng(what: str) -> random.Random:
            return random.Random(f"amg-keyed:{key}:{what}")

        st = design.structure_of(split, cell)
        pairs = [
            p
            for p in _value_pairs(domain, st.values == "long")
            if (domain.attribute, *p) not in used
        ]
        if not pairs:
            raise _Exhausted(domain.attribute, split)
        initial, plan = min(pairs, key=lambda p: _h("amg-keyed-pair", key, *p))
        used.add((domain.attribute, initial, plan))
        if outcome == "correction":
            return _correction_spec(
                design,
                split,
                cell,
                "pending",
                domain,
                rng("sessions").choice,
                rng("dates"),
                rng("values"),
                rng("seed"),
                seed,
                initial,
                plan,
            )
        dates = _dates(rng("dates"), rng("sessions").choice(st.sessions), st)
        wording, confirmation = _wordings(
            design, cell, outcome, rng("plan_wording").choice, rng("confirmation_wording").choice
        )
        return ArcSpec(
            id="pending",
            split=split,
            factor=cell.factor,
            level=cell.level,
            outcome=outcome,
            field=domain.field(),
            domain=domain.attribute,
            initial_value=initial,
            plan_value=plan,
            plan_wording=wording,
            confirmation_wording=confirmation,
            session_dates=dates,
            pending_window=st.pending_window,
            seed=rng("seed").randrange(2**31),
            plan_seed=seed,
        )
