"""What the judges of a build would cost: ``amg build --dry-run`` counts their model calls too.

Counted like the generator's calls: first attempts only (re-asks after an invalid reply come
extra), and a question already answered in the workspace or in the LLM cache is not counted. Arcs
not rendered yet cannot be looked up, so each counts one call per LLM judge and task.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..design.stored import workspace_design
from ..workspace import Workspace
from .judges import REALISM_CRITERIA, Judge
from .judging import JUDGE_TASKS, _items
from .store import answered, arcs_with_sha, generator_families_of


class JudgeCalls(BaseModel):
    model_config = ConfigDict(extra="forbid")
    total: int
    by_judge: dict[str, int]  # LLM judge spec -> calls
    heuristic: list[str]  # judges that make no model calls (the offline heuristic judges)

    def lines(self) -> list[str]:
        from ..llm.model import display_spec

        return [
            f"dry run: {self.total} judge calls",
            *(f"  judge {display_spec(spec)}: {n}" for spec, n in self.by_judge.items()),
            *(
                f"  judge {display_spec(spec)}: 0 (heuristic, no model calls)"
                for spec in self.heuristic
            ),
        ]


def planned_judge_calls(
    ws: Workspace,
    judges: list[Judge],
    rendered_ids: list[str],
    n_new: int,
    tasks: tuple[str, ...] = JUDGE_TASKS,
    seed: int = 0,
) -> JudgeCalls:
    """Calls ``judge_arcs`` would make on ``rendered_ids`` plus ``n_new`` arcs still to render."""
    wanted = set(rendered_ids)
    splits = [s for (s,) in ws.db.execute("select distinct split from arcs").fetchall()]
    arcs = [(a, sha) for a, sha in arcs_with_sha(ws, splits) if a.id in wanted]
    by_generator = generator_families_of(ws, [a.provenance.generator for a, _ in arcs])
    families = {a.id: by_generator[a.provenance.generator] for a, _ in arcs}
    design = workspace_design(ws)
    by_judge: dict[str, int] = {}
    for judge in judges:
        if judge.heuristic:
            continue
        n = 0
        for task in tasks:
            stored = answered(ws, task, judge.spec)
            for it in _items(task, judge, arcs, families, seed, design=design):
                keys = [(it.arc.id, c) for c in (("",) if task == "recovery" else REALISM_CRITERIA)]
                if any(stored.get(k) != it.input_sha for k in keys) and judge.would_call(
                    it.question
                ):
                    n += 1
            n += n_new
            judge.model.plan_unknown(n_new)
        by_judge[judge.spec] = n
    return JudgeCalls(
        total=sum(by_judge.values()),
        by_judge=by_judge,
        heuristic=[j.spec for j in judges if j.heuristic],
    )


def plan_validation(
    ws: Workspace,
    splits: list[str],
    judges,
    checks,
    *,
    allow_same_family: bool = False,
    seed: int = 0,
) -> JudgeCalls:
    """``amg validate --dry-run``: the judge calls ``run_validation`` would make (nothing sent,
    nothing stored); the judges' models hold the token and cost estimates (``model.planned``).
    ``judges``: specs or references, as ``run_validation`` takes them."""
    from .judges import check_families
    from .judging import parse_checks, resolve_judges
    from .report import generator_families

    names = parse_checks(checks)
    tasks = tuple(t for t in JUDGE_TASKS if t in names)
    judge_objs = resolve_judges(ws, judges)
    check_families(judge_objs, generator_families(ws, splits), allow_same_family)
    return planned_judge_calls(
        ws, judge_objs, sorted(ws.arc_ids(splits=splits)), 0, tasks=tasks, seed=seed
    )
