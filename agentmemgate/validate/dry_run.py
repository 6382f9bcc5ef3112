"""What the judges of a build would cost: ``amg build --dry-run`` counts their model calls too.

Counted like the generator's calls: first attempts only (re-asks after an invalid reply come
extra), and a question already answered in the workspace or in the LLM cache is not counted. Arcs
not rendered yet cannot be looked up, so each counts one call per LLM judge and task.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..workspace import Workspace
from .judges import REALISM_CRITERIA, Judge
from .judging import JUDGE_TASKS, _items
from .store import answered, arcs_with_sha, generator_families_of


class JudgeCalls(BaseModel):
    model_config = ConfigDict(extra="forbid")
    total: int
    by_judge: dict[str, int]  # LLM judge spec -> calls
    heuristic: list[str]  # judges that make no model calls (the offline heuristic judges)


def planned_judge_calls(ws: Workspace, judges: list[Judge], rendered_ids: list[str], n_new: int,
                        tasks: tuple[str, ...] = JUDGE_TASKS, seed: int = 0) -> JudgeCalls:
    """Calls ``judge_arcs`` would make on ``rendered_ids`` plus ``n_new`` arcs still to render."""
    wanted = set(rendered_ids)
    splits = [s for (s,) in ws.db.execute("select distinct split from arcs").fetchall()]
    arcs = [(a, sha) for a, sha in arcs_with_sha(ws, splits) if a.id in wanted]
    by_generator = generator_families_of(ws, [a.provenance.generator for a, _ in arcs])
    families = {a.id: by_generator[a.provenance.generator] for a, _ in arcs}
    by_judge: dict[str, int] = {}
    for judge in judges:
        if judge.heuristic:
            continue
        n = 0
        for task in tasks:
            stored = answered(ws, task, judge.spec)
            for it in _items(task, judge, arcs, families, seed):
                keys = [(it.arc.id, c) for c in (("",) if task == "recovery" else REALISM_CRITERIA)]
                if any(stored.get(k) != it.input_sha for k in keys) and judge.would_call(it.question):
                    n += 1
            n += n_new
        by_judge[judge.spec] = n
    return JudgeCalls(total=sum(by_judge.values()), by_judge=by_judge,
                      heuristic=[j.spec for j in judges if j.heuristic])
