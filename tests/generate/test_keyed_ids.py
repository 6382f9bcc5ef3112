"""Keyed ids: an extended design keeps the arcs of what it did not change.

An id digests its arc's content, so it changes exactly when the arc does. Measured on the paper
design's keyed copy (506 arcs, seed 0): adding a level's optional phrase lists, a level that is
not drawn with its cell, or a cell appended to a split changes no arc; appending a domain changes
the arcs the new domain takes and those whose small talk moves to make room for them (57)."""

from __future__ import annotations

import re
from pathlib import Path

from agentmemgate.design import CATALOG_DIR, load_design
from agentmemgate.generate.offline import OfflineRenderer
from agentmemgate.generate.planner import plan_split


def _arcs(design) -> dict[str, str]:
    r = OfflineRenderer(design=design)
    return {
        s.id: r.render(s).model_dump_json(exclude={"provenance"})
        for split in design.splits
        for s in plan_split(split, 0, None, design=design)
    }


def _new_domain(folder: Path, edit) -> None:
    """A domain file a user adds: the bank's file with values no other domain has."""
    (folder / "cat").mkdir()
    values = [
        "Alder Federal",
        "Birch Savings",
        "Cobalt Trust",
        "Dune Bank",
        "Ember Credit Union",
        "Fjord Bank",
        "Garnet Savings",
        "Harbor Light Bank",
    ]
    longs = [f"the {v} branch next to the old post office on Main Street" for v in values]
    text = (CATALOG_DIR / "bank.toml").read_text()
    text = re.sub(
        r"(?s)values = \[.*?\]\nlong_values = \[.*?\]",
        f"values = {values!r}\nlong_values = {longs!r}".replace("'", '"'),
        text,
    )
    (folder / "cat" / "credit_union.toml").write_text(text)
    edit(folder, '"web_browser", "yoga_studio",', '"web_browser", "yoga_studio", "credit_union",')
    edit(folder, "[files]\n", '[files]\ncatalog = ["cat"]\n')


def test_appending_a_domain_changes_only_the_arcs_it_takes(design_dir, edit_design):
    before = _arcs(load_design(design_dir))
    _new_domain(design_dir, edit_design)
    design = load_design(design_dir)
    after = _arcs(design)
    kept = set(before) & set(after)
    assert all(before[i] == after[i] for i in kept)  # a kept id is a kept arc
    taken = [a for a in after if '"domain":"credit_union"' in after[a]]
    # the arcs the new domain takes are new; the others that changed moved their small talk to
    # make room (no id changes while its arc stays as it was)
    assert taken and set(taken) <= set(after) - kept
    assert len(set(before) - kept) == len(set(after) - kept) <= len(before) // 5
    assert not {before[i] for i in set(before) - kept} & {after[i] for i in set(after) - kept}


def test_a_levels_optional_lists_change_no_id(design_dir, edit_design):
    """Lists a level not drawn may use (its outcome phrasings) change no arc, so no id."""
    before = _arcs(load_design(design_dir))
    for table in ("verbatim", "paraphrase", "oblique", "abandoned", "pending"):
        edit_design(
            design_dir,
            f"[{table}]\n",
            f'[{table}]\nconditional = ["It came through, so I went ahead with {{switching_plan}}."]\n',
            file="phrases/outcome.toml",
        )
    assert _arcs(load_design(design_dir)) == before


def test_appending_a_cell_keeps_every_other_arc(design_dir, edit_design):
    before = _arcs(load_design(design_dir))
    edit_design(
        design_dir,
        '  { factor = "confirmation_wording", level = "situational", n = 20 },',
        '  { factor = "confirmation_wording", level = "situational", n = 20 },\n'
        '  { factor = "outcome", level = "abandoned", n = 20 },',
    )
    after = _arcs(load_design(design_dir))
    assert set(before) <= set(after) and all(before[i] == after[i] for i in before)
    assert len(after) - len(before) == 20


def test_an_edited_phrase_bank_gives_new_ids(design_dir, edit_design):
    before = _arcs(load_design(design_dir))
    edit_design(
        design_dir, "[[exchanges]]", "[[exchanges]]", file="phrases/chat.toml"
    )  # unchanged: same ids
    assert set(_arcs(load_design(design_dir))) == set(before)
    text = (design_dir / "phrases" / "replies.toml").read_text()
    (design_dir / "phrases" / "replies.toml").write_text(text.replace("Thanks", "Thank you"))
    after = _arcs(load_design(design_dir))
    edited = {i for i, a in after.items() if "Thank you" in a}
    assert edited and not edited & set(before)  # an arc whose text changed has a new id
    assert {i: after[i] for i in set(after) - edited} == {  # the others are as they were
        i: before[i] for i in set(after) - edited
    }


def test_a_workspace_rebuilt_after_an_edit_renders_only_the_new_arcs_and_equals_a_fresh_build(
    tmp_path, design_dir, edit_design
):
    from agentmemgate.pipeline import build

    ws = tmp_path / "ws"
    first = build(
        ws, tmp_path / "out", design=load_design(design_dir), n_per_cell=2, show_progress=False
    )
    edit_design(
        design_dir,
        '  { factor = "confirmation_wording", level = "situational", n = 20 },',
        '  { factor = "confirmation_wording", level = "situational", n = 20 },\n'
        '  { factor = "outcome", level = "abandoned", n = 20 },',
    )
    design = load_design(design_dir)
    again = build(ws, tmp_path / "out", design=design, n_per_cell=2, show_progress=False)
    new_cell = dict(design.cell_counts("controlled", 2))[design.splits["controlled"].cells[-1]]
    assert again.generate.rendered_now == new_cell
    assert again.generate.already_done == first.generate.rendered_now
    build(
        tmp_path / "fresh", tmp_path / "fresh-out", design=design, n_per_cell=2, show_progress=False
    )
    for split in design.splits:
        assert (tmp_path / "out" / split / "data.jsonl").read_bytes() == (
            tmp_path / "fresh-out" / split / "data.jsonl"
        ).read_bytes(), split
