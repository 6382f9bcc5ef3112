"""Reading a design: every problem at once, one line each, naming the file and the key."""

from __future__ import annotations

import pytest

from agentmemgate.design import DesignError, load_design, read_design
from agentmemgate.design_checks import check_design
from agentmemgate.errors import BadInput


def _lines(folder) -> list[str]:
    return [str(p) for p in check_design(folder)[1]]


def test_a_fresh_copy_of_the_paper_design_has_no_problems(design_dir):
    design, problems = check_design(design_dir)
    assert problems == []
    assert design.name == "my_design" and design.ids == "keyed"
    paper = load_design("paper")
    assert {s: design.arcs_in(s) for s in design.splits} == {
        s: paper.arcs_in(s) for s in paper.splits
    }


def test_every_mistake_of_one_file_is_reported_in_one_run(design_dir, edit_design):
    edit_design(
        design_dir,
        'definition = "The user is torn or undecided between keeping the current value and the new one."\n',
        "",
    )
    edit_design(
        design_dir,
        '{ factor = "outcome", level = "came_true", n = 20 }',
        '{ factor = "outcome", level = "came_tru", n = 20 }',
    )
    edit_design(
        design_dir,
        '{ factor = "outcome", level = "abandoned", n = 20 }',
        '{ factor = "outcome", level = "abandoned", nn = 20 }',
    )
    edit_design(design_dir, '"yoga_studio",', '"yoga_studo",')
    lines = _lines(design_dir)
    origin = str(design_dir / "design.toml")
    assert lines == [
        f"{origin}: factors.hedge_strength.levels#1.definition: missing key",
        f"{origin}: splits.core.cells#2.n: missing key",
        f"{origin}: splits.core.cells#2.nn: unknown key (known keys: factor, level, outcome, n)",
        f"{origin}: splits.core.cells#1.level: unknown level 'came_tru' of factor 'outcome'; choose "
        "one of: came_true, abandoned, open, completed_change; did you mean 'came_true'?",
        f"{origin}: domains: unknown domain 'yoga_studo' (no yoga_studo.toml in the catalog: 30 "
        "built-in or --catalog files); did you mean 'yoga_studio'?",
    ]
    with pytest.raises(DesignError, match=r"missing key \(and 4 more"):
        load_design(design_dir)


def test_a_toml_syntax_error_names_its_line(design_dir, edit_design):
    edit_design(design_dir, "ordered = true", "ordered = tru")
    (line,) = _lines(design_dir)
    assert line.startswith(
        f"{design_dir / 'design.toml'}: TOML syntax error: Invalid value (at line "
    )


def test_a_new_level_without_its_phrase_lists_is_named(design_dir, edit_design):
    edit_design(
        design_dir,
        '[[factors.hedge_strength.levels]]\nname = "completed_change"',
        '[[factors.hedge_strength.levels]]\nname = "conditional"\ngroup = "hedged"\n'
        'definition = "The user plans the change only if a condition is met."\n\n'
        '[[factors.hedge_strength.levels]]\nname = "completed_change"',
    )
    lines = _lines(design_dir)
    phrases = design_dir / "phrases"
    assert (
        f"{phrases / 'plan.toml'}: conditional: missing or empty list of phrasings (plan turns at level 'conditional')"
        in lines
    )
    assert (
        f"{phrases / 'replies.toml'}: conditional: missing or empty list of phrasings (the assistant's reply to a plan at level 'conditional')"
        in lines
    )


@pytest.mark.slow
def test_cells_the_catalog_cannot_fill_name_their_split(design_dir, edit_design):
    edit_design(
        design_dir,
        '{ factor = "outcome", level = "came_true", n = 20 }',
        '{ factor = "outcome", level = "came_true", n = 5000 }',
    )
    (line,) = _lines(design_dir)
    assert line.startswith(f"{design_dir / 'design.toml'}: splits.core: Catalog has too few values")


def test_unknown_designs_and_folders_without_one_are_one_line_errors(tmp_path):
    with pytest.raises(BadInput, match="No design 'papr'.*did you mean 'paper'"):
        read_design("papr")
    with pytest.raises(BadInput, match="the folder has no design.toml"):
        read_design(tmp_path)
