"""Public corpora (LongMemEval, LoCoMo): streaming loaders, hedge mining, statement sets.

Mining has three steps: a cheap offline prefilter (``prefilter``, cue lexicon ``cues.vN.toml``),
stage-2 extraction (offline rules ``rules.vN.toml`` or an LLM) and outcome linking (``outcomes``).
Statement sets (``statements``) feed the evidence-type classifier's validation (``classify``).
Where the corpus files live (``home``: ``AMG_CORPORA``) and where they come from (``public``).
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "OFFLINE_MINER": ("extract", None),
    "Extractor": ("extract", None),
    "RuleExtractor": ("extract", None),
    "detect_format": ("loaders", None),
    "iter_conversations": ("loaders", None),
    "load_corpus": ("loaders", None),
    "mine_hedges": ("mining", None),
    "mined_statements": ("mining", None),
    "plan_mine_hedges": ("mining", None),
    "source_key": ("mining", None),
    "sources": ("mining", None),
    "summary": ("mining", None),
    "corpora_dir": ("home", None),
    "corpus_file": ("home", None),
    "PUBLIC": ("public", None),
    "fetch_corpus": ("public", "fetch"),
    "CORPORA": ("model", None),
    "LICENSES": ("model", None),
    "Candidate": ("model", None),
    "ContextTurn": ("model", None),
    "Conversation": ("model", None),
    "CorpusSession": ("model", None),
    "CorpusTurn": ("model", None),
    "Extraction": ("model", None),
    "MinedStatement": ("model", None),
    "MinePlan": ("model", None),
    "MineSummary": ("model", None),
    "OutcomeLink": ("model", None),
    "at_risk_measurable": ("outcomes", None),
    "link_outcome": ("outcomes", None),
    "load_lexicon": ("prefilter", None),
    "scan_conversation": ("prefilter", None),
    "scan_turn": ("prefilter", None),
    "split_sentences": ("prefilter", "sentence_spans"),  # the shared splitter, agentmemgate.text
    "SetInfo": ("statements", None),
    "Statement": ("statements", None),
    "import_statements": ("statements", None),
    "list_sets": ("statements", None),
    "load_set": ("statements", None),
    "sample_statements": ("statements", None),
    "save_set": ("statements", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "CORPORA",
    "LICENSES",
    "OFFLINE_MINER",
    "PUBLIC",
    "Candidate",
    "ContextTurn",
    "Conversation",
    "CorpusSession",
    "CorpusTurn",
    "Extraction",
    "Extractor",
    "MinePlan",
    "MineSummary",
    "MinedStatement",
    "OutcomeLink",
    "RuleExtractor",
    "SetInfo",
    "Statement",
    "at_risk_measurable",
    "corpora_dir",
    "corpus_file",
    "detect_format",
    "fetch_corpus",
    "import_statements",
    "iter_conversations",
    "link_outcome",
    "list_sets",
    "load_corpus",
    "load_lexicon",
    "load_set",
    "mine_hedges",
    "mined_statements",
    "plan_mine_hedges",
    "sample_statements",
    "save_set",
    "scan_conversation",
    "scan_turn",
    "source_key",
    "sources",
    "split_sentences",
    "summary",
]
