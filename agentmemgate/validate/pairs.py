"""Equivalence value pairs: build them from the splits, judge with one family, re-judge with another.

The paper's fixed equivalence judge compares a stored or answered value with the labeled value; it
was validated by a judge of another family on pairs sampled to over-represent borderline cases.
Pairs come from the arcs' own values:

- ``surface``: the value with different case or a leading article (should be equivalent);
- ``answer``: the value inside a short answer ("I believe it's X") (should be equivalent);
- ``plan_worded``: the value worded as a plan ("thinking about switching to X"): a plan is not a
  current value, so not equivalent (the paper does not count answers worded as plans);
- ``truncated``: a long value cut to its first words (genuinely ambiguous: no construction label);
- ``near_miss``: the most similar other value of the same field in the splits (not equivalent);
- ``plan_vs_current``: an arc's plan value against its current value (not equivalent).

A pair is *borderline* where string rules and meaning can part ways: answers, plan-worded values
and truncations always; near misses and plan-vs-current pairs when the values share a word
("Ghost 14" / "Ghost 15"); surface variants never. ``expected`` is the construction label, or None.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..hashing import sha256_parts
from ..llm.ref import ModelRef
from ..llm.servers import normalize_family
from ..llm.usage_log import by_model_lines, calls_behind
from ..schema import Arc, normalize_text
from ..stats import Proportion, cohen_kappa, wilson
from ..workspace import Workspace, now
from ._drive import ask_all
from .judges import EquivalenceQuestion, EquivalenceVerdict, Judge, JudgeInfo, check_families
from .store import VerdictRow, answered, arcs_with_sha, load_verdicts, save_verdicts

KINDS = ("surface", "answer", "plan_worded", "truncated", "near_miss", "plan_vs_current")
_ANSWERS = ("I believe it's {v}", "{v}, as far as I know", "Currently {v}.")
_PLANS = ("thinking about switching to {v}", "might go with {v}", "planning to change to {v}")


class EquivalencePair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    field: str
    description: str
    reference: str
    candidate: str
    kind: str
    borderline: bool
    expected: str | None  # construction label: equivalent / not_equivalent / None (ambiguous)
    arc_id: str
    split: str


_ALWAYS_BORDERLINE = {"answer", "plan_worded", "truncated"}


def is_borderline(a: str, b: str, kind: str = "") -> bool:
    """Where string rules and meaning can part ways: answers wrapped in words, plans worded as
    values, truncations, and different values that share a word ('Ghost 14' / 'Ghost 15')."""
    if kind == "surface":
        return False
    if kind in _ALWAYS_BORDERLINE:
        return True
    na, nb = normalize_text(a), normalize_text(b)
    return na != nb and bool(set(na.split()) & set(nb.split()))


def _pair(
    arc: Arc, reference: str, candidate: str, kind: str, expected: str | None
) -> EquivalencePair:
    f = arc.spec.field
    pid = (
        "eq-" + hashlib.sha256(f"{f.attribute}\0{reference}\0{candidate}".encode()).hexdigest()[:12]
    )
    return EquivalencePair(
        id=pid,
        field=f.attribute,
        description=f.description,
        reference=reference,
        candidate=candidate,
        kind=kind,
        borderline=is_borderline(reference, candidate, kind),
        expected=expected,
        arc_id=arc.id,
        split=arc.spec.split,
    )


def _jaccard(a: str, b: str) -> float:
    x, y = set(normalize_text(a).split()), set(normalize_text(b).split())
    return len(x & y) / len(x | y) if x | y else 0.0


def build_pairs(arcs: Iterable[Arc]) -> list[EquivalencePair]:
    """Every candidate pair the splits give (deduplicated by field, reference and candidate)."""
    arcs = list(arcs)
    by_field: dict[str, set[str]] = defaultdict(set)
    for a in arcs:
        by_field[a.spec.field.attribute].update(a.spec.label_values)
    out: dict[str, EquivalencePair] = {}

    def add(p: EquivalencePair) -> None:
        if normalize_text(p.reference) and p.reference != p.candidate:
            out.setdefault(p.id, p)

    for a in arcs:
        s = a.spec
        h = int(hashlib.sha256(a.id.encode()).hexdigest()[:8], 16)
        for v in (s.initial_value, s.plan_value):
            add(_pair(a, v, v.lower() if v != v.lower() else v.title(), "surface", "equivalent"))
            add(_pair(a, v, f"the {v}", "surface", "equivalent"))
            add(_pair(a, v, _ANSWERS[h % len(_ANSWERS)].format(v=v), "answer", "equivalent"))
            words = v.split()
            if len(words) >= 3:
                add(_pair(a, v, " ".join(words[: max(1, len(words) // 2)]), "truncated", None))
            others = sorted(
                by_field[s.field.attribute] - set(s.label_values),  # other arcs' values
                key=lambda o: (-_jaccard(v, o), o),
            )
            if others:
                add(_pair(a, v, others[0], "near_miss", "not_equivalent"))
        add(
            _pair(
                a,
                s.plan_value,
                _PLANS[h % len(_PLANS)].format(v=s.plan_value),
                "plan_worded",
                "not_equivalent",
            )
        )
        add(_pair(a, s.initial_value, s.plan_value, "plan_vs_current", "not_equivalent"))
    return list(out.values())


def default_borderline_share(pairs: list[EquivalencePair]) -> float:
    """Over-sampling by default: halfway between the population's borderline share and 1."""
    return (1 + sum(p.borderline for p in pairs) / len(pairs)) / 2 if pairs else 0.5


def sample_pairs(
    pairs: list[EquivalencePair], n: int, borderline_share: float | None, seed: int
) -> list[EquivalencePair]:
    """``n`` pairs, ``borderline_share`` of them borderline where possible, kinds interleaved."""
    if n < 1:
        raise BadInput(f"--n must be a positive whole number, got {n}")
    if borderline_share is None:
        borderline_share = default_borderline_share(pairs)
    if not 0.0 <= borderline_share <= 1.0:
        raise BadInput(f"--borderline-share must be between 0 and 1, got {borderline_share}")
    rng = random.Random(f"amg-pairs:{seed}")

    def interleave(group: list[EquivalencePair]) -> list[EquivalencePair]:
        by_kind: dict[str, list[EquivalencePair]] = defaultdict(list)
        for p in sorted(group, key=lambda p: p.id):
            by_kind[p.kind].append(p)
        for v in by_kind.values():
            rng.shuffle(v)
        order, lists = [], [by_kind[k] for k in KINDS if by_kind.get(k)]
        while any(lists):
            for lst in lists:
                if lst:
                    order.append(lst.pop())
        return order

    border = interleave([p for p in pairs if p.borderline])
    clear = interleave([p for p in pairs if not p.borderline])
    want_b = min(len(border), round(n * borderline_share))
    want_c = min(len(clear), n - want_b)
    want_b = min(len(border), n - want_c)
    return border[:want_b] + clear[:want_c]


# -- storing and judging ---------------------------------------------------------------------
def save_pairs(ws: Workspace, pair_set: str, pairs: list[EquivalencePair]) -> None:
    """Replace the pair set (its old verdicts stay keyed to pair ids no longer in it)."""
    with ws.db.conn:
        ws.db["equivalence_pairs"].delete_where("pair_set = ?", [pair_set])
        ws.db["equivalence_pairs"].insert_all(
            [
                {
                    **p.model_dump(),
                    "pair_set": pair_set,
                    "position": i,
                    "borderline": int(p.borderline),
                }
                for i, p in enumerate(pairs)
            ],
            pk=("pair_set", "id"),
        )


def load_pairs(ws: Workspace, pair_set: str) -> list[EquivalencePair]:
    rows = ws.db["equivalence_pairs"].rows_where("pair_set = ?", [pair_set], order_by="position")
    return [
        EquivalencePair(
            **{
                k: (bool(v) if k == "borderline" else v)
                for k, v in r.items()
                if k not in ("pair_set", "position")
            }
        )
        for r in rows
    ]


def pair_sets(ws: Workspace) -> list[str]:
    return [
        r[0]
        for r in ws.db.execute(
            "select pair_set from equivalence_pairs group by pair_set order by min(rowid)"
        ).fetchall()
    ]


def position_seed(pair_id: str, judge: str, seed: int = 0) -> int:
    return int(
        hashlib.sha256(f"amg-positions:{seed}:{judge}:{pair_id}".encode()).hexdigest()[:8], 16
    )


def question(
    p: EquivalencePair, judge: str, seed: int = 0
) -> tuple[EquivalenceQuestion, list[str]]:
    """The pair as the judge sees it, values in a seeded order; returns the order too."""
    order = ["reference", "candidate"]
    random.Random(position_seed(p.id, judge, seed)).shuffle(order)
    first, second = (getattr(p, k) for k in order)
    return EquivalenceQuestion(
        field=p.field, description=p.description, first=first, second=second
    ), order


def _pair_todo(
    ws: Workspace, pair_set: str, pairs: list[EquivalencePair], judge: Judge, seed: int
) -> list[tuple]:
    stored = answered(ws, "equivalence", judge.spec)
    todo = []
    for p in pairs:
        q, order = question(p, judge.spec, seed)
        item_sha = sha256_parts(p.field, p.description, p.reference, p.candidate)
        input_sha = sha256_parts(
            item_sha, judge.family, judge.rubric_sha256.get("equivalence", ""), ",".join(order)
        )
        if stored.get((p.id, pair_set)) != input_sha:
            todo.append((p, q, order, item_sha, input_sha))
    return todo


def judge_pairs(
    ws: Workspace,
    pair_set: str,
    pairs: list[EquivalencePair],
    judge: Judge,
    *,
    seed: int = 0,
    show_progress: bool = True,
) -> tuple[int, int, int]:
    """Judge every pair not yet answered by ``judge``: (judged now, already stored, failures)."""
    todo = _pair_todo(ws, pair_set, pairs, judge, seed)
    rows: list[VerdictRow] = []
    failed = 0
    try:
        for (p, q, order, item_sha, input_sha), answer, error in ask_all(
            judge, todo, lambda t: t[1], f"equivalence ({judge.spec})", show_progress
        ):
            base = dict(
                task="equivalence",
                item_id=p.id,
                criterion=pair_set,
                judge=judge.spec,
                family=judge.family,
                heuristic=judge.heuristic,
                split=p.split,
                factor=p.kind,
                intended=p.expected or "",
                options=order,
                option_seed=position_seed(p.id, judge.spec, seed),
                rubric=judge.rubric_ref("equivalence"),
                rubric_sha256=judge.rubric_sha256.get("equivalence", ""),
                item_sha256=item_sha,
                input_sha256=input_sha,
            )
            if isinstance(answer, EquivalenceVerdict):
                rows.append(
                    VerdictRow(
                        **base,
                        verdict="equivalent" if answer.equivalent else "not_equivalent",
                        confidence=answer.confidence,
                        rationale=answer.rationale,
                        strategy=answer.strategy or "",
                    )
                )
            else:
                failed += 1
                rows.append(VerdictRow(**base, status="failed", error=error))
            if len(rows) >= 25 and not judge.heuristic:
                save_verdicts(ws, rows)
                rows = []
    finally:
        save_verdicts(ws, rows)
    return len(todo), len(pairs) - len(todo), failed


# -- report ----------------------------------------------------------------------------------
class PairJudge(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: JudgeInfo
    equivalent_rate: Proportion
    matches_construction: Proportion  # on pairs with a construction label
    failures: int


class PairAgreement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judges: list[str]
    overall: Proportion
    kappa: float | None
    by_kind: dict[str, Proportion]
    borderline: Proportion
    not_borderline: Proportion


class Disagreement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pair_id: str
    kind: str
    borderline: bool
    field: str
    reference: str
    candidate: str
    verdicts: dict[str, str]
    stricter: str  # the judge that said not_equivalent


class EquivalenceReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pair_set: str
    pairs: int
    borderline: int
    population: int | None  # candidate pairs the splits gave, before sampling
    population_borderline: int | None
    by_kind: dict[str, int]
    judges: list[JudgeInfo]
    notes: list[str]
    per_judge: dict[str, PairJudge]
    agreement: PairAgreement | None
    disagreements: list[Disagreement]
    # the judge's and re-judge's calls, tokens and cost from the call log (``llm.usage_log``)
    model_calls: dict | None = None


def equivalence_report(ws: Workspace, pair_set: str = "default") -> EquivalenceReport:
    pairs = load_pairs(ws, pair_set)
    if not pairs:
        known = ", ".join(pair_sets(ws)) or "none; run `amg validate equivalence-pairs`"
        raise BadInput(f"No equivalence pair set {pair_set!r} in the workspace; sets: {known}")
    run = _latest_pairs_run(ws, pair_set)
    ids = {p.id: p for p in pairs}
    rows = [
        r
        for r in load_verdicts(ws, ["equivalence"])
        if r.criterion == pair_set and r.item_id in ids
    ]
    specs = [j["spec"] for j in run["judges"]] if run else []
    specs = [s for s in specs if any(r.judge == s for r in rows)] or list(
        dict.fromkeys(r.judge for r in rows)
    )
    infos = {r.judge: JudgeInfo(spec=r.judge, family=r.family, heuristic=r.heuristic) for r in rows}
    per: dict[str, PairJudge] = {}
    labels: dict[str, dict[str, str]] = {}
    for s in specs:
        mine = [r for r in rows if r.judge == s]
        ok = [r for r in mine if r.ok]
        labels[s] = {r.item_id: r.verdict for r in ok}
        known = [r for r in ok if r.intended]
        per[s] = PairJudge(
            judge=infos[s],
            equivalent_rate=wilson(sum(r.verdict == "equivalent" for r in ok), len(ok)),
            matches_construction=wilson(sum(r.verdict == r.intended for r in known), len(known)),
            failures=sum(not r.ok for r in mine),
        )
    agreement, disagreements = None, []
    if len(specs) >= 2:
        a, b = specs[0], specs[1]
        common = [i for i in ids if i in labels[a] and i in labels[b]]

        def agree(sel):
            return wilson(sum(labels[a][i] == labels[b][i] for i in sel), len(sel))

        agreement = PairAgreement(
            judges=[a, b],
            overall=agree(common),
            kappa=cohen_kappa([labels[a][i] for i in common], [labels[b][i] for i in common]),
            by_kind={
                k: agree([i for i in common if ids[i].kind == k])
                for k in KINDS
                if any(ids[i].kind == k for i in common)
            },
            borderline=agree([i for i in common if ids[i].borderline]),
            not_borderline=agree([i for i in common if not ids[i].borderline]),
        )
        for i in common:
            if labels[a][i] != labels[b][i]:
                p = ids[i]
                disagreements.append(
                    Disagreement(
                        pair_id=i,
                        kind=p.kind,
                        borderline=p.borderline,
                        field=p.field,
                        reference=p.reference,
                        candidate=p.candidate,
                        verdicts={a: labels[a][i], b: labels[b][i]},
                        stricter=a if labels[a][i] == "not_equivalent" else b,
                    )
                )
    notes = []
    if any(infos[s].heuristic for s in specs):
        notes.append(
            "`offline` is normalized-string equivalence (case, punctuation, leading articles, "
            "word order): a heuristic judge of family offline-heuristic, not a language model."
        )
    if len(specs) < 2:
        notes.append(
            "Only one judge family has judged these pairs; re-judge with another family "
            "(--rejudge provider:model) to measure agreement."
        )
    elif normalize_family(infos[specs[0]].family) == normalize_family(infos[specs[1]].family):
        notes.append("Both judges are of the same family (allowed with --allow-same-family).")
    kinds: dict[str, int] = defaultdict(int)
    for p in pairs:
        kinds[p.kind] += 1
    params = json.loads(run["params"] or "{}") if run else {}
    return EquivalenceReport(
        pair_set=pair_set,
        pairs=len(pairs),
        borderline=sum(p.borderline for p in pairs),
        population=params.get("population"),
        population_borderline=params.get("population_borderline"),
        by_kind={k: kinds[k] for k in KINDS if kinds.get(k)},
        judges=[infos[s] for s in specs],
        notes=notes,
        per_judge=per,
        agreement=agreement,
        disagreements=disagreements,
        model_calls=calls_behind(ws, ("amg validate equivalence-pairs",), ("judge.equivalence",)),
    )


def _latest_pairs_run(ws: Workspace, pair_set: str) -> dict | None:
    for r in ws.db["validation_runs"].rows_where("kind = 'equivalence'", order_by="id desc"):
        if json.loads(r["params"] or "{}").get("pair_set") == pair_set:
            r["judges"] = json.loads(r["judges"])
            return r
    return None


def report_markdown(r: EquivalenceReport, max_rows: int = 60) -> str:
    pop = (
        f" sampled from {r.population} candidate pairs "
        f"({100 * r.population_borderline / r.population:.0f}% borderline)"
        if r.population
        else ""
    )
    out = [
        f"# Equivalence judge validation (pair set `{r.pair_set}`)",
        "",
        f"{r.pairs} pairs, {r.borderline} borderline ({100 * r.borderline / r.pairs:.0f}%),{pop}; "
        "by kind: " + ", ".join(f"{k} {n}" for k, n in r.by_kind.items()),
        "",
    ]
    out += [f"- {n}" for n in r.notes] + ([""] if r.notes else [])
    if r.model_calls:
        out += ["Judge model calls in this workspace (call log, `amg validate equivalence-pairs`):"]
        out += [f"- {line}" for line in by_model_lines(r.model_calls)] + [""]
    out += [
        "| judge | family | kind | says equivalent | matches construction label | failures |",
        "|---|---|---|---|---|---|",
    ]
    for s, p in r.per_judge.items():
        out.append(
            f"| `{s}` | {p.judge.family} | {'heuristic' if p.judge.heuristic else 'LLM'} | "
            f"{p.equivalent_rate.fmt()} | {p.matches_construction.fmt()} | {p.failures} |"
        )
    if r.agreement:
        a = r.agreement
        k = "undefined" if a.kappa is None else f"{a.kappa:.2f}"
        out += [
            "",
            f"Agreement {' vs '.join(a.judges)}: {a.overall.fmt()}, Cohen's kappa {k}",
            "",
            f"- borderline pairs: {a.borderline.fmt()}",
            f"- other pairs: {a.not_borderline.fmt()}",
        ]
        out += [f"- {kind}: {p.fmt()}" for kind, p in a.by_kind.items()]
        if r.disagreements:
            stricter = defaultdict(int)
            for d in r.disagreements:
                stricter[d.stricter] += 1
            out += [
                "",
                f"{len(r.disagreements)} disagreements; the stricter judge (not equivalent): "
                + ", ".join(f"{s} {n}" for s, n in stricter.items()),
                "",
            ]
            out += [
                f"- `{d.pair_id}` ({d.kind}{', borderline' if d.borderline else ''}) {d.field}: "
                f"{d.reference!r} vs {d.candidate!r}: "
                + ", ".join(f"{s} {v}" for s, v in d.verdicts.items())
                for d in r.disagreements[:max_rows]
            ]
    return "\n".join(out).rstrip() + "\n"


def _judges_and_pairs(
    ws: Workspace,
    splits: list[str],
    judge: str | ModelRef,
    rejudge: str | ModelRef | None,
    *,
    n: int,
    borderline_share: float | None,
    seed: int,
    allow_same_family: bool,
    concurrency: int,
) -> tuple[list[Judge], list[EquivalencePair], list[EquivalencePair]]:
    """The judges (the first, then a re-judge of another family), the pair population built
    from ``splits`` and the sample of it to judge. ``judge`` and ``rejudge``: specs or
    ``ModelRef``s (a base URL, for an ``openai:`` judge, and the model options, which an offline
    judge does without)."""
    from .judges import get_judge

    first_ref = ModelRef.parse(judge)
    second_ref = ModelRef.parse(rejudge) if rejudge is not None else None
    judge, base_url = first_ref.spec, first_ref.base_url
    rejudge = second_ref.spec if second_ref else None
    rejudge_base_url = second_ref.base_url if second_ref else None

    for option, url, spec in (
        ("--base-url", base_url, judge),
        ("--rejudge-base-url", rejudge_base_url, rejudge),
    ):
        if url and not (spec or "").startswith("openai:"):
            raise BadInput(
                f"{option} {url} is for an openai: judge (an OpenAI-compatible server); "
                f"the {'re-judge' if option.startswith('--re') else 'judge'} is {spec or 'not set'}"
            )

    first = get_judge(
        first_ref.replace(options=first_ref.model_options()), workspace=ws, concurrency=concurrency
    )
    judges = [first]
    if rejudge and second_ref is not None:
        second = get_judge(
            second_ref.replace(options=second_ref.model_options()),
            workspace=ws,
            concurrency=concurrency,
        )
        check_families(
            [second], {first.family}, allow_same_family, what=f"the first judge {first.spec}"
        )
        judges.append(second)
    arcs = [a for a, _ in arcs_with_sha(ws, splits)]
    if not arcs:
        raise BadInput(f"No arcs in split(s) {', '.join(splits)}; run `amg build` first")
    population = build_pairs(arcs)
    return judges, population, sample_pairs(population, n, borderline_share, seed)


def plan_equivalence_pairs(
    ws: Workspace,
    splits: list[str],
    judge: str | ModelRef = "offline",
    rejudge: str | ModelRef | None = None,
    *,
    n: int = 150,
    borderline_share: float | None = None,
    seed: int = 0,
    pair_set: str = "default",
    allow_same_family: bool = False,
    concurrency: int = 4,
) -> dict[str, int]:
    """What ``run_equivalence_pairs`` with the same arguments would ask: the calls per judge
    spec (counted on the judges' models, ``model.planned``); nothing is sent or stored."""
    judges, _, pairs = _judges_and_pairs(
        ws,
        splits,
        judge,
        rejudge,
        n=n,
        borderline_share=borderline_share,
        seed=seed,
        allow_same_family=allow_same_family,
        concurrency=concurrency,
    )
    return {
        j.spec: (
            0
            if j.heuristic
            else sum(j.would_call(t[1]) for t in _pair_todo(ws, pair_set, pairs, j, seed))
        )
        for j in judges
    }


def run_equivalence_pairs(
    ws: Workspace,
    splits: list[str],
    judge: str | ModelRef = "offline",
    rejudge: str | ModelRef | None = None,
    *,
    n: int = 150,
    borderline_share: float | None = None,
    seed: int = 0,
    pair_set: str = "default",
    allow_same_family: bool = False,
    concurrency: int = 4,
    show_progress: bool = True,
) -> EquivalenceReport:
    """Build and sample pairs from ``splits``, judge them, re-judge with another family, report.
    The calls it would make, counted without sending: ``plan_equivalence_pairs``."""
    from .store import start_validation_run

    judges, population, pairs = _judges_and_pairs(
        ws,
        splits,
        judge,
        rejudge,
        n=n,
        borderline_share=borderline_share,
        seed=seed,
        allow_same_family=allow_same_family,
        concurrency=concurrency,
    )
    if [p.id for p in load_pairs(ws, pair_set)] != [p.id for p in pairs]:
        save_pairs(ws, pair_set, pairs)
    start_validation_run(
        ws,
        "equivalence",
        splits,
        ["equivalence"],
        [j.info.model_dump() for j in judges],
        allow_same_family,
        [],
        {
            "pair_set": pair_set,
            "n": n,
            "seed": seed,
            "borderline_share": borderline_share,
            "at": now(),
            "population": len(population),
            "population_borderline": sum(p.borderline for p in population),
        },
    )
    for j in judges:
        judge_pairs(ws, pair_set, pairs, j, seed=seed, show_progress=show_progress)
    return equivalence_report(ws, pair_set)
