"""The paper's evaluation protocol: run memory systems on the splits, score them, report.

- ``protocol``: feed one arc to a fresh system (reads before each user turn, snapshots per session)
- ``measures``: per-arc measures from a trace and the arc's ``truth``
- ``answers``: black-box scoring from a system's answers after each session
- ``answering``: the protocol for answering systems (products, baselines, plug-ins)
- ``judges``: the equivalence judge (reused from validate) and the answer judge
- ``run``: ``amg eval run`` / ``amg eval answers`` (stored as each finishes, resumable)
- ``aggregate`` / ``report``: Wilson intervals, cluster-bootstrap differences, Tables 2-7, figures
- ``show``: the trace viewer; ``card``: the Evaluation section of the dataset card

Importing this package registers the card section with ``agentmemgate.exports``.
"""

from .aggregate import Difference, Stat
from .answers import read_answers, score_answers
from .judges import AnswerJudge, AnswerVerdict, ValueJudge, get_answer_judge, get_value_judge
from .measures import MEASURES, ArcScore, score_trace
from .protocol import new_system, run_arc
from .report import EvalReport, compute_report, report_markdown, save_eval_report, write_report
from .run import AnswersSummary, EvalSummary, run_answers, run_eval
from .show import show_arc
from .systems import (DEFAULT_SYSTEMS, SystemLine, SystemSpec, answering_spec, available_systems,
                      resolve_system, system_spec)
from .trace import Trace, TurnTrace
from .truth import Correction, Truth, truth_of
from . import card as _card

_card.register()

__all__ = [
    "DEFAULT_SYSTEMS", "MEASURES", "SystemLine", "answering_spec", "available_systems", "AnswerJudge", "AnswerVerdict", "AnswersSummary", "ArcScore",
    "Correction", "Difference", "EvalReport", "EvalSummary", "Stat", "SystemSpec", "Trace",
    "Truth", "TurnTrace", "ValueJudge", "compute_report", "get_answer_judge", "get_value_judge",
    "new_system", "read_answers", "report_markdown", "resolve_system", "run_answers", "run_arc",
    "run_eval", "save_eval_report", "score_answers", "score_trace", "show_arc", "system_spec",
    "truth_of", "write_report",
]
