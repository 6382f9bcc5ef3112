"""What an evaluation report holds: the models ``report`` computes and ``_report_md`` renders.

``report`` documents the JSON layout (``EvalReport.to_json``). An ``EvalReport`` answers
look-ups (``stat``, and ``pooled`` / ``pooled_over`` for several levels or splits together), so
rendering reads numbers and never counts.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, PrivateAttr

from ..design import Design, paper_design
from .aggregate import Difference, Stat, proportion
from .explain import Explanation
from .summary import SummaryRow


class SystemMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: str  # "component" (run by the protocol) | "answers" (scored from uploaded answers) |
    # "product" (an answering system -- product, baseline or plug-in -- run by `amg eval run`)
    description: str
    gated: bool = False
    ungated_twin: str | None = None
    components: dict[str, str] = {}
    offline: bool = True
    oracle: bool = False
    model: str = ""
    arcs_scored: int = 0
    failures: int = 0
    provenance: dict = {}  # products: product, library and version, configuration, prompt hash


class ReportMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generated_at: str
    judge: dict
    splits: list[str]
    arcs: dict[str, int]
    systems: dict[str, SystemMeta]
    bootstrap: dict[str, int]
    notes: list[str]
    # what `amg eval run` / `amg eval answers` spent, from the call log (``llm.cost.usage_rows``)
    model_calls: dict | None = None
    natural: dict[str, dict] = {}  # natural set -> its corpus, rule, license and counts


class CorrectionPair(BaseModel):
    """A gated system and its ungated twin on the arcs with an explicit correction."""

    model_config = ConfigDict(extra="forbid")
    system: str
    ungated_twin: str
    same_end: Stat  # arcs where both end with the same value, of those both were scored on
    runs: int  # 2 per arc: the gated run and the ungated run
    differing_arcs: list[str]  # up to 10, for `amg eval show`


class CorrectionsControl(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pairs: list[CorrectionPair]
    pooled: Stat | None  # every pair's arcs together (k and n summed)
    # per system: correction arcs whose wrong value ends marked never valid in the store
    never_valid: dict[str, Stat] = {}


class EvalReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    systems: dict[str, dict[str, dict]]
    differences: list[Difference]
    meta: ReportMeta
    corrections_control: CorrectionsControl = CorrectionsControl(pairs=[], pooled=None)
    summary: list[SummaryRow] = []  # one row per system, pooled over the reported splits
    explanations: list[Explanation] = []  # why a surprising result is so, from the traces
    repeats: dict[str, dict] = {}  # `--repeat`: per system its runs and each measure's spread
    _design: Design | None = PrivateAttr(default=None)

    @property
    def design(self) -> Design:
        """The design whose splits, factors and levels the tables follow (the workspace's)."""
        return self._design or paper_design()

    def stat(self, system: str, split: str, measure: str, level: str | None = None) -> Stat | None:
        block = self.systems.get(system, {}).get(split)
        if block is None:
            return None
        if level is not None:
            block = block.get("by_level", {}).get(level, {})
        s = block.get(measure)
        return Stat.model_validate(s) if isinstance(s, dict) else s

    def pooled(self, system: str, split: str, measure: str, levels: list[str]) -> Stat | None:
        """``measure`` over several levels of one split together (k and n summed)."""
        k = n = 0
        for lv in levels:
            if (s := self.stat(system, split, measure, lv)) is not None:
                k, n = k + s.k, n + s.n
        return proportion([True] * k + [False] * (n - k)) if n else None

    def pooled_over(self, system: str, splits: list[str], measure: str, levels) -> Stat | None:
        """``pooled`` over several splits (k and n summed)."""
        k = n = 0
        for split in splits:
            if (s := self.pooled(system, split, measure, list(levels))) is not None:
                k, n = k + s.k, n + s.n
        return proportion([True] * k + [False] * (n - k)) if n else None

    def to_json(self) -> dict:
        c = self.corrections_control
        return {
            "summary": [row.model_dump() for row in self.summary],
            "explanations": [e.model_dump() for e in self.explanations],
            "systems": {
                n: {sp: _dump_block(b) for sp, b in splits.items()}
                for n, splits in self.systems.items()
            },
            "differences": [d.model_dump() for d in self.differences],
            # absent when no correction arc was scored (a measure that does not apply)
            **({"corrections_control": c.model_dump()} if c.pairs or c.never_valid else {}),
            "meta": self.meta.model_dump(),
            **({"repeats": self.repeats} if self.repeats else {}),
        }


def _dump_block(block: dict) -> dict:
    out: dict = {}
    for k, v in block.items():
        if k == "by_level":
            out[k] = {lv: {m: s.model_dump() for m, s in ms.items()} for lv, ms in v.items()}
        else:
            out[k] = v.model_dump()
    return out


def split_order(design: Design, names) -> list[str]:
    """``names`` in the design's split order (any other name after them, sorted)."""
    rank = {s: i for i, s in enumerate(design.split_names)}
    return sorted(names, key=lambda s: (rank.get(s, len(rank)), s))
