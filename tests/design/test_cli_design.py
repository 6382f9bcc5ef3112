"""``amg design show / check / init`` as a user types them."""

from __future__ import annotations

from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import load_design, paper_design

runner = CliRunner()


def test_show_prints_every_cell_with_its_count():
    res = runner.invoke(app, ["design", "show"])
    assert res.exit_code == 0, res.output
    d = paper_design()
    for name in d.splits:
        assert f"split {name} ({d.splits[name].title}): {d.arcs_in(name)} arcs" in res.output
        for cell in d.splits[name].cells:
            assert cell.key in res.output
    total = sum(d.arcs_in(s) for s in d.splits)
    assert (
        f"total: {total} arcs in {len(d.splits)} splits (groups: paper = core, heldout, controlled)"
        in res.output
    )


def test_show_with_n_per_cell_scales_controls_by_their_own_count():
    res = runner.invoke(app, ["design", "show", "--n-per-cell", "2"])
    d = paper_design()
    assert f"split heldout (held-out): {d.arcs_in('heldout', 2)} arcs" in res.output
    controls = [n for c, n in d.cell_counts("heldout", 2) if d.outcome_of(c) == "control"]
    plans = [n for c, n in d.cell_counts("heldout", 2) if d.outcome_of(c) != "control"]
    assert plans == [2, 2, 2] and controls == [1]  # 15 controls against 44 per plan cell


def test_init_writes_a_copy_that_checks_clean(tmp_path):
    folder = tmp_path / "My Design"
    res = runner.invoke(app, ["design", "init", str(folder), "--from", "paper"])
    assert res.exit_code == 0, res.output
    assert (folder / "design.toml").is_file() and (folder / "phrases" / "plan.toml").is_file()
    assert load_design(folder).name == "my_design"
    res = runner.invoke(app, ["design", "check", str(folder)])
    assert res.exit_code == 0, res.output
    d = load_design(folder)
    assert res.output.strip() == (
        f"design my_design: {len(d.splits)} splits, "
        f"{sum(len(s.cells) for s in d.splits.values())} cells, "
        f"{sum(d.arcs_in(s) for s in d.splits)} arcs; no problems"
    )
    again = runner.invoke(app, ["design", "init", str(folder)])
    assert (
        again.exit_code == 1
        and "exists already" in again.output
        and "Traceback" not in again.output
    )


def test_init_refuses_an_unknown_source(tmp_path):
    res = runner.invoke(app, ["design", "init", str(tmp_path / "d"), "--from", "papr"])
    assert res.exit_code == 1
    assert res.output.startswith(
        "Error: Unknown built-in design 'papr'; choose one of: paper; did you mean 'paper'?"
    )
    assert not (tmp_path / "d").exists()


def test_check_lists_every_problem_and_exits_1(design_dir, edit_design):
    edit_design(
        design_dir,
        '{ factor = "outcome", level = "came_true", n = 20 }',
        '{ factor = "outcom", level = "came_true", n = 20 }',
    )
    edit_design(design_dir, '"yoga_studio",', '"yoga",')
    res = runner.invoke(app, ["design", "check", str(design_dir)])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 3 and lines[-1] == f"Error: 2 problems in {design_dir}"
    assert (
        "splits.core.cells#1.factor: unknown factor 'outcom'" in lines[0]
        and "did you mean 'outcome'?" in lines[0]
    )


def test_check_of_a_missing_folder_is_one_line(tmp_path):
    res = runner.invoke(app, ["design", "check", str(tmp_path / "nope")])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1


def test_build_checks_the_domain_files_a_user_passes_and_says_when_the_design_does_not_use_them(
    tmp_path,
):
    from airline_domain import airline_domain

    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir(), bad.mkdir()
    (good / "preferred_airline.toml").write_text(airline_domain())
    (bad / "preferred_airline.toml").write_text(
        airline_domain().replace("switched = ", "switchd = ")
    )
    res = runner.invoke(
        app,
        [
            "build",
            "--catalog",
            str(bad),
            "--split",
            "core",
            "--workspace",
            str(tmp_path / "ws-bad"),
            "--out",
            str(tmp_path / "out-bad"),
        ],
    )
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert (
        res.output.strip()
        .splitlines()[-1]
        .startswith(f"Error: Catalog problem: {bad / 'preferred_airline.toml'}: ")
    )
    assert not (tmp_path / "ws-bad").exists()
    res = runner.invoke(
        app,
        [
            "build",
            "--catalog",
            str(good),
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        "note: design 'paper' does not draw from preferred_airline (checked, not used)"
        in res.output
    )


def test_build_refuses_a_design_whose_phrase_file_is_broken_before_making_anything(
    tmp_path, design_dir
):
    with open(design_dir / "phrases" / "plan.toml", "a") as f:
        f.write("strongly_hedged = [\n")
    res = runner.invoke(
        app,
        [
            "build",
            "--design",
            str(design_dir),
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.strip() == (
        f"Error: Design problem: {design_dir / 'phrases' / 'plan.toml'}: TOML "
        f"syntax error: Invalid value (at end of document): see amg design "
        f"check {design_dir}"
    )
    assert not (tmp_path / "ws").exists()


def test_show_json_has_the_counts_a_scale_gives():
    d = paper_design()
    res = runner.invoke(app, ["design", "show", "--json", "--n-per-cell", "3"])
    assert res.exit_code == 0, res.output
    shown = __import__("json").loads(res.output)
    assert shown["arcs"] == sum(d.arcs_in(s, 3) for s in d.splits)
    assert [c["n"] for c in shown["splits"]["heldout"]["cells"]] == [
        n for _, n in d.cell_counts("heldout", 3)
    ]
    assert shown["source"]["sha256"] == d.source.sha256 and shown["design"]["name"] == "paper"


def test_a_mistyped_workspace_is_named_when_the_paper_design_does_not_know_a_name(tmp_path):
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "a",
            "--task",
            "difficulty:distance",
            "--from",
            "arcs:distance",
            "--workspace",
            str(tmp_path / "ws-typo"),
        ],
    )
    assert res.exit_code == 1
    assert "Unknown factor 'distance' in design 'paper'" in res.output
    assert f"there is no workspace at '{tmp_path / 'ws-typo'}' yet" in res.output
