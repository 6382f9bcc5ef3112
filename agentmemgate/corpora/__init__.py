"""Public corpora (LongMemEval, LoCoMo): streaming loaders, hedge mining, statement sets.

Mining has three steps: a cheap offline prefilter (``prefilter``, cue lexicon ``cues.vN.toml``),
stage-2 extraction (offline rules ``rules.vN.toml`` or an LLM) and outcome linking (``outcomes``).
Statement sets (``statements``) feed the evidence-type classifier's validation (``classify``).
"""

from .extract import OFFLINE_MINER, Extractor, RuleExtractor
from .loaders import detect_format, iter_conversations, load_corpus
from .mining import mine_hedges, mined_statements, source_key, sources, summary
from .model import (CORPORA, LICENSES, Candidate, ContextTurn, Conversation, CorpusSession,
                    CorpusTurn, Extraction, MinedStatement, MineSummary, OutcomeLink)
from .outcomes import at_risk_measurable, link_outcome
from .prefilter import load_lexicon, scan_conversation, scan_turn, split_sentences
from .statements import (SetInfo, Statement, import_statements, list_sets, load_set,
                         sample_statements, save_set)

__all__ = [
    "CORPORA", "LICENSES", "OFFLINE_MINER", "Candidate", "ContextTurn", "Conversation",
    "CorpusSession", "CorpusTurn", "Extraction", "Extractor", "MineSummary", "MinedStatement",
    "OutcomeLink", "RuleExtractor", "SetInfo", "Statement", "at_risk_measurable", "detect_format",
    "import_statements", "iter_conversations", "link_outcome", "list_sets", "load_corpus",
    "load_lexicon", "load_set", "mine_hedges", "mined_statements", "sample_statements", "save_set",
    "scan_conversation", "scan_turn", "source_key", "sources", "split_sentences", "summary",
]
