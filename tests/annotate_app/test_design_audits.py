"""Audits follow the workspace's design: a user's design with a new hedge level (``conditional``)
and a new ordered structure factor (``distance``) gets its labels, definitions, splits and
ordinal agreement with no change to the package."""

from __future__ import annotations

import pytest
from extend_design import conditional_design, distance_design
from typer.testing import CliRunner

from agentmemgate.annotate_app import agreement_report, create_audit, get_audit, import_labels
from agentmemgate.cli import app
from agentmemgate.design import load_design, paper_design
from agentmemgate.design.stored import store_design
from agentmemgate.errors import UnknownLevel
from agentmemgate.workspace import Workspace

from .conftest import token_of
from .test_agreement import write_csv
from .test_app import rendered, run


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    """The paper's design extended with data only: a hedge level ``conditional`` (hedged,
    between weakly hedged and confident), and an ordered structure factor ``distance`` in a
    split of its own (``extend_design``)."""
    root = tmp_path_factory.mktemp("designs")
    return {
        "conditional": load_design(conditional_design(root / "conditional")),
        "distance": load_design(distance_design(root / "distance")),
    }


def built(design, path) -> Workspace:
    """A workspace of ``design`` with two offline arcs per cell of the splits that use its
    extension."""
    from agentmemgate.generate.renderer import get_renderer
    from agentmemgate.generate.run import generate

    ws = Workspace(path)
    store_design(ws, design)
    splits = ["core", "controlled"] if design.name == "conditional" else ["distance"]
    generate(
        ws,
        get_renderer("offline", design=design),
        splits,
        n_per_cell=2,
        design=design,
        show_progress=False,
    )
    return ws


@pytest.fixture
def cws(designs, tmp_path):
    return built(designs["conditional"], tmp_path / "cws")


@pytest.fixture
def dws(designs, tmp_path):
    return built(designs["distance"], tmp_path / "dws")


def test_the_extensions_are_in_the_designs(designs):
    hedge = designs["conditional"].levels("hedge_strength")
    assert hedge.index("conditional") == hedge.index("weakly_hedged") + 1
    assert "distance" in designs["distance"].ordered_factors


@pytest.mark.parametrize(
    "name, factor",
    [
        ("conditional", "hedge_strength"),
        ("conditional", "confirmation_wording"),
        ("conditional", "outcome"),
        ("distance", "distance"),
    ],
)
def test_difficulty_labels_are_the_design_levels_with_its_definitions(
    designs, tmp_path, name, factor
):
    design = designs[name]
    ws = built(design, tmp_path / "ws")
    made = create_audit(ws, "d", f"difficulty:{factor}", "arcs", annotators=["ana"])
    ls = get_audit(ws, "d").label_set
    f = design.factor(factor)
    assert ls.labels == f.level_names and ls.choices[-1] == "cant_tell"
    assert ls.ordered is (factor in design.ordered_factors)
    assert {k: v for k, v in ls.definitions.items() if k != "cant_tell"} == {
        lv.name: lv.definition for lv in f.levels
    }
    arcs = [a for a in ws.arcs() if a.spec.factor == factor]
    assert made.n_items == made.n_references == len(arcs)
    refs = dict(ws.db.execute("select item_id, label from audit_references where audit = 'd'"))
    assert refs == {a.id: a.spec.level for a in arcs}


def test_a_distance_page_shows_the_design_words_and_nothing_of_the_arc(dws, designs, monkeypatch):
    made = create_audit(dws, "dist", "difficulty:distance", "arcs:distance", annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(dws.path))
    at = run(token_of(made.links["ana"]))
    assert not at.exception
    levels = designs["distance"].factor("distance").levels
    for i, lv in enumerate(levels, start=1):
        b = at.button(key=f"choice_{i}")
        assert b.label == lv.name.replace("_", " ") and b.help == lv.definition
    assert at.button(key=f"choice_{len(levels) + 1}").label == "can't tell"
    blob = "\n".join(rendered(at))
    assert "Highlighted turn" in blob  # the plan
    for arc in dws.arcs("distance"):
        assert arc.id not in blob
    # the buttons say "one between"; the identifiers of a level or outcome are never sent
    for hidden in ("came_true", *(lv.name for lv in levels if "_" in lv.name)):
        assert hidden not in blob


def test_mistyped_factor_and_split_name_the_design_choices(dws, designs, tmp_path):
    design = designs["distance"]
    with pytest.raises(UnknownLevel) as e:
        create_audit(dws, "x", "difficulty:distanse", "arcs")
    assert str(e.value) == (
        f"Unknown factor 'distanse' in design 'distance'; choose one of: "
        f"{', '.join(design.factors)}; did you mean 'distance'?"
    )
    with pytest.raises(UnknownLevel) as e:
        create_audit(dws, "x", "difficulty:distance", "arcs:distanse")
    assert str(e.value) == (
        f"Unknown split 'distanse' in design 'distance'; choose one of: "
        f"{', '.join(design.splits)}; did you mean 'distance'?"
    )
    assert create_audit(dws, "x", "difficulty:distance", "arcs:distance").n_items == design.arcs_in(
        "distance", 2
    )

    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "y",
            "--task",
            "difficulty:distanse",
            "--from",
            "arcs",
            "--workspace",
            str(dws.path),
        ],
    )
    assert res.exit_code == 1 and "did you mean 'distance'?" in res.output
    assert len(res.output.strip().splitlines()) == 1
    # the paper's design has no distance factor: refused before a workspace is made
    assert "distance" not in paper_design().factors
    fresh = tmp_path / "fresh"
    res = runner.invoke(
        app,
        [
            "audit",
            "create",
            "y",
            "--task",
            "difficulty:distance",
            "--from",
            "arcs",
            "--workspace",
            str(fresh),
        ],
    )
    assert res.exit_code == 1 and "Unknown factor 'distance' in design 'paper'" in res.output
    assert not fresh.exists()


def _labels(ws, tmp_path, name: str, task: str | None, pairs, refs) -> None:
    rows = [
        (f"i{k}", who, lab)
        for k, (a, b) in enumerate(pairs)
        for who, lab in (("ana", a), ("ben", b))
    ]
    import_labels(ws, name, write_csv(tmp_path / f"{name}.csv", rows), task=task)
    import_labels(
        ws,
        name,
        write_csv(
            tmp_path / f"{name}-r.csv", [(f"i{k}", r) for k, r in enumerate(refs)], "item_id,label"
        ),
        reference=True,
    )


def test_agreement_is_ordinal_for_distance_in_the_design_order(dws, designs, tmp_path):
    from sklearn.metrics import cohen_kappa_score

    scale = list(designs["distance"].ordered_factors["distance"])
    adj, one, two = scale
    pairs = [
        (adj, adj),
        (adj, one),
        (one, two),
        (two, adj),
        (one, one),
        (two, two),
        (adj, two),
        (one, "can't tell"),
    ]
    refs = [adj, adj, one, two, two, one, adj, one]
    _labels(dws, tmp_path, "dist", "difficulty:distance", pairs, refs)
    r = agreement_report(dws, "dist", resamples=0)
    assert r.ordered and r.labels == scale + ["cant_tell"]
    assert r.krippendorff_alpha.level == "ordinal"
    (pair,) = r.cohen_kappa_pairs
    on_scale = [(a, b) for a, b in pairs if b in scale]
    assert pair.n_weighted == len(on_scale)
    assert pair.kappa_linear == pytest.approx(
        cohen_kappa_score(*zip(*on_scale), labels=scale, weights="linear")
    )
    # off by one: one step along the design's order (adjacent -> two_between is two steps)
    humans = [h for p in pairs for h in p]
    ref_of = [r_ for r_ in refs for _ in range(2)]
    pos = {lab: i for i, lab in enumerate(scale)}
    close = sum(h in pos and abs(pos[h] - pos[x]) <= 1 for h, x in zip(humans, ref_of))
    assert (r.vs_reference.within_one.k, r.vs_reference.within_one.n) == (close, len(humans))

    # labels imported without a task are recognised as the distance scale
    _labels(dws, tmp_path, "guess", None, pairs[:3], refs[:3])
    assert get_audit(dws, "guess").label_set.factor == "distance"
    assert agreement_report(dws, "guess", resamples=0).ordered


def test_the_new_hedge_level_sits_on_the_scale_where_the_design_puts_it(cws, designs, tmp_path):
    _labels(
        cws,
        tmp_path,
        "hedge",
        "difficulty:hedge_strength",
        [("conditional", "weakly_hedged"), ("conditional", "confident_no_date")],
        ["weakly_hedged", "strongly_hedged"],
    )
    r = agreement_report(cws, "hedge", resamples=0)
    assert r.labels == list(designs["conditional"].levels("hedge_strength")) + ["cant_tell"]
    # ref weakly_hedged: conditional and weakly are within one; ref strongly_hedged: conditional
    # is two steps away, confident_no_date three
    assert (r.vs_reference.within_one.k, r.vs_reference.within_one.n) == (2, 4)


def test_a_factor_the_design_leaves_unordered_is_nominal(dws, tmp_path):
    _labels(
        dws,
        tmp_path,
        "out",
        "difficulty:outcome",
        [("came_true", "open"), ("open", "open")],
        ["came_true", "open"],
    )
    r = agreement_report(dws, "out", resamples=0)
    assert not r.ordered and r.krippendorff_alpha.level == "nominal"
    assert r.vs_reference.within_one is None
