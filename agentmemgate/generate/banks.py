"""A design's phrase banks as the offline renderer reads them: its phrase files parsed once per
design (``plan``, ``outcome``, ``replies``, ``chat``, and the correction phrases), and the lists one
level's turns are drawn from."""

from __future__ import annotations

import tomllib

from ..design import Design, Exchange, load_domains, paper_design
from ..design.bundle import sha256_files_of

# Slots by which a plan phrasing names the scheduled day: a level whose phrasings use them gets
# one (the paper's scheduled_with_date), and its open plans a still-ahead or passed mention.
DATE_SLOTS = ("{on_date}", "{On_date}", "{date_np}", "{Date_np}")


def phrase_bank(design: Design | None = None) -> dict[str, dict]:
    """Each phrase file of the design by name: ``plan``, ``outcome``, ``replies``, ``chat``."""
    design = design or paper_design()
    cached = getattr(design, "_phrases", None)
    if cached is None:
        cached = {}
        for rel, f in design.source.folder(design.files.phrases):
            data = tomllib.loads(f.text())
            if "exchanges" in data:
                data["exchanges"] = [Exchange(**e) for e in data["exchanges"]]
            cached[rel.rsplit("/", 1)[-1].removesuffix(".toml")] = data
        design._phrases = cached
    return cached


def correction_bank(design: Design | None = None) -> dict:
    design = design or paper_design()
    cached = getattr(design, "_correction_phrases", None)
    if cached is None:
        rel = design.files.correction_phrases
        cached = (
            tomllib.loads(design.source.files[rel].text()) if rel in design.source.files else {}
        )
        design._correction_phrases = cached
    return cached


def level_phrasings(key: str, group: str | None = None, design: Design | None = None) -> list[str]:
    """The phrasings open to one arc under phrase-bank ``key``: a plan level's list, or an
    outcome list's 'any' phrasings plus those of the plan's group (``hedged``, ``committed``)."""
    bank = phrase_bank(design)
    if key in bank["plan"]:
        return list(bank["plan"][key])
    entry = bank["outcome"][key]
    return list(entry["any"]) + (list(entry.get(group, [])) if group else [])


def bank_sha256(design: Design | None = None, corrections: bool = False) -> str:
    """The offline renderer's 'prompt': the design's phrase banks and the catalog files of its
    domains, hashed for provenance (``corrections``: with the correction phrases, which only
    correction arcs use)."""
    design = design or paper_design()
    src = design.source
    files = [f for _, f in src.folder(design.files.phrases)]
    if corrections and design.files.correction_phrases in src.files:
        files.append(src.files[design.files.correction_phrases])
    return sha256_files_of(files + [src.catalog[d] for d in load_domains(design)])


def scheduled(design: Design, wording: str) -> bool:
    """Whether plans at ``wording`` name a scheduled day (their phrasings use a date slot)."""
    lv = design.by_role("plan_wording").level(wording)  # type: ignore[union-attr]
    return any(
        slot in t for t in phrase_bank(design)["plan"].get(lv.phrase_key, ()) for slot in DATE_SLOTS
    )
