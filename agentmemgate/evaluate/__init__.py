"""The paper's evaluation protocol: run memory systems on the splits, score them, report.

- ``protocol``: feed one arc to a fresh system (reads before each user turn, snapshots per session)
- ``measures``: per-arc measures from a trace and the arc's ``truth``
- ``answer_scoring``: black-box scoring from a system's answers after each session
- ``answering_protocol``: the protocol for answering systems (products, baselines, plug-ins)
- ``judges``: the equivalence judge (reused from validate) and the keys scores are stored under
- the answer judge (what a free-text answer asserts) is its own room, ``agentmemgate.answer_judge``;
  its names are re-exported here
- ``run``: ``amg eval run`` (stored as each finishes, resumable); ``answers_run``: ``amg eval
  answers``; both read ``arcs`` (the arcs with the sha256 of their text) and go through
  ``_drive`` (the failure policy, the loop, the tally)
- ``store``: the evaluation tables; ``counted``: the score that counts (which run, which judge,
  which arcs), read by the report, ``show`` and the viewer alike
- ``aggregate`` / ``report``: Wilson intervals, cluster-bootstrap differences, the report's numbers
  (``report_models``); ``_report_md`` and ``_plots`` render them as Tables 2-7 and Figures 2-3
- ``show``: the trace viewer; ``card``: the Evaluation section of the dataset card

Importing this package registers the card section with ``agentmemgate.exports`` and the
``answers:SYSTEM`` audit source with ``agentmemgate.annotate_app`` (``audit_source``); the CLI
imports it (``cli._app.load_rooms``) for the commands that write cards or create audits.
"""

from . import audit_source as _audit_source  # noqa: F401  (registers the answers:SYSTEM audit source)
from . import card as _card  # noqa: F401  (registers the Evaluation card section)

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "Difference": ("aggregate", None),
    "Stat": ("aggregate", None),
    "read_answers": ("answer_scoring", None),
    "score_answers": ("answer_scoring", None),
    "AnswerJudge": ("..answer_judge", None),
    "AnswerVerdict": ("..answer_judge", None),
    "ValueJudge": ("judges", None),
    "get_answer_judge": ("..answer_judge", None),
    "get_value_judge": ("judges", None),
    "MEASURES": ("measures", None),
    "ArcScore": ("measures", None),
    "score_trace": ("measures", None),
    "new_system": ("protocol", None),
    "run_arc": ("protocol", None),
    "EvalReport": ("report_models", None),
    "compute_report": ("report", None),
    "report_markdown": ("_report_md", None),
    "save_eval_report": ("report", None),
    "write_report": ("report", None),
    "AnswersSummary": ("answers_run", None),
    "EvalPlan": ("run", None),
    "EvalOptions": ("options", None),
    "EvalSummary": ("run", None),
    "plan_answers": ("answers_run", None),
    "run_answers": ("answers_run", None),
    "plan_eval": ("run", None),
    "run_eval": ("run", None),
    "show_arc": ("show", None),
    "DEFAULT_SYSTEMS": ("systems", None),
    "SystemLine": ("systems", None),
    "SystemSpec": ("systems", None),
    "answering_spec": ("systems", None),
    "available_systems": ("systems", None),
    "resolve_system": ("systems", None),
    "system_spec": ("systems", None),
    "Trace": ("trace", None),
    "TurnTrace": ("trace", None),
    "Correction": ("truth", None),
    "Truth": ("truth", None),
    "truth_of": ("truth", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DEFAULT_SYSTEMS",
    "MEASURES",
    "SystemLine",
    "answering_spec",
    "available_systems",
    "AnswerJudge",
    "AnswerVerdict",
    "AnswersSummary",
    "ArcScore",
    "Correction",
    "Difference",
    "EvalPlan",
    "EvalReport",
    "EvalOptions",
    "EvalSummary",
    "Stat",
    "SystemSpec",
    "Trace",
    "Truth",
    "TurnTrace",
    "ValueJudge",
    "compute_report",
    "get_answer_judge",
    "get_value_judge",
    "new_system",
    "plan_eval",
    "read_answers",
    "report_markdown",
    "resolve_system",
    "plan_answers",
    "run_answers",
    "run_arc",
    "run_eval",
    "save_eval_report",
    "score_answers",
    "score_trace",
    "show_arc",
    "system_spec",
    "truth_of",
    "write_report",
]
