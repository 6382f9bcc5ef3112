"""An open audit exported and imported into a new audit keeps its meaning: check items are not
imported as items to agree on, and screened-out people's labels are left out unless asked for."""

from __future__ import annotations

import csv

from typer.testing import CliRunner

from agentmemgate.annotate_app import agreement_report, export_audit
from agentmemgate.annotate_app.interop import import_labels
from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

from .test_study import two_careful_one_screened

runner = CliRunner()


def crowd(tmp_path) -> Workspace:
    """An open audit with gold and attention checks, two careful people and one screened out."""
    return two_careful_one_screened(tmp_path, gold=2, attention=1, min_gold_accuracy=1.0)


def summary(rep) -> tuple:
    return (
        rep.n_items,
        rep.n_annotators,
        rep.n_items_multi,
        rep.percent_agreement.value,
        rep.krippendorff_alpha.value,
        rep.fleiss_kappa.value if rep.fleiss_kappa else None,
    )


def test_an_open_audit_exported_and_imported_keeps_its_items_and_agreement(tmp_path):
    ws = crowd(tmp_path)
    original = agreement_report(ws, "crowd", resamples=0)
    assert original.screened_out == 1
    labels, _, _, refs = export_audit(ws, "crowd", tmp_path / "out")
    rows = list(csv.DictReader(labels.open()))
    n_checks = sum(bool(r["check"]) for r in rows)
    screened = [r for r in rows if r["screened_out"] == "True" and not r["check"]]
    assert n_checks and screened  # the file has both to set aside

    res = import_labels(ws, "copy", labels)
    assert res.checks_skipped and sum(res.checks_skipped.values()) == n_checks
    assert res.screened == sorted({r["annotator"] for r in screened})
    assert res.screened_left_out == len(screened) and not res.screening_unmarked
    import_labels(ws, "copy", refs, reference=True)
    copy = agreement_report(ws, "copy", resamples=0)
    assert summary(copy) == summary(original)
    assert copy.n_items == len(original_items(ws, "crowd"))

    everyone = agreement_report(ws, "crowd", resamples=0, include_screened=True)
    import_labels(ws, "all", labels, include_screened=True)
    assert summary(agreement_report(ws, "all", resamples=0)) == summary(everyone)


def original_items(ws, name) -> list[str]:
    """The audit's items to agree on: every item but the checks."""
    return [
        i
        for (i,) in ws.db.execute(
            "select item_id from audit_items where audit = ? and item_id not in "
            "(select item_id from audit_checks where audit = ?)",
            [name, name],
        )
    ]


def test_the_import_says_what_it_set_aside(tmp_path):
    ws = crowd(tmp_path)
    labels = export_audit(ws, "crowd", tmp_path / "out")[0]
    rows = list(csv.DictReader(labels.open()))
    out = runner.invoke(app, ["audit", "import", "copy", str(labels), "--workspace", str(ws.path)])
    assert out.exit_code == 0, out.output
    n_checks = sum(bool(r["check"]) for r in rows)
    assert f"Skipped {n_checks} rows answering check items" in out.output
    assert "1 screened-out person (p0003); --include-screened imports them" in out.output


def test_an_older_export_without_screened_out_still_imports(tmp_path):
    ws = crowd(tmp_path)
    labels = export_audit(ws, "crowd", tmp_path / "out")[0]
    rows = list(csv.DictReader(labels.open()))
    old = tmp_path / "old.csv"
    with old.open("w", newline="") as f:
        cols = [c for c in rows[0] if c != "screened_out"]
        w = csv.DictWriter(f, cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    res = import_labels(ws, "copy", old)
    assert res.screening_unmarked and not res.screened and res.checks_skipped
    assert "does not say who was screened out" in "\n".join(res.lines())
    everyone = agreement_report(ws, "crowd", resamples=0, include_screened=True)
    assert summary(agreement_report(ws, "copy", resamples=0)) == summary(everyone)


def test_importing_the_same_file_twice_adds_nothing_the_second_time(tmp_path):
    ws = crowd(tmp_path)
    labels = export_audit(ws, "crowd", tmp_path / "out")[0]
    first = import_labels(ws, "copy", labels)
    before = agreement_report(ws, "copy")
    again = import_labels(ws, "copy", labels)
    assert again.already == first.n_rows and again.n_rows == 0
    assert "importing a file twice adds nothing" in "\n".join(again.lines())
    assert summary(agreement_report(ws, "copy")) == summary(before)
    n = ws.db.execute("select count(*) from audit_labels where audit = 'copy'").fetchone()[0]
    assert n == first.n_rows


def test_items_nobody_labeled_come_back_with_the_export(tmp_path, statements_file):
    """Label rows name only labeled items; the export's items.csv lists every item, so the audit
    it is imported into has them all and takes their reference labels."""
    from agentmemgate.annotate_app import annotator_queue, create_audit, record_label

    from .conftest import token_of

    ws = Workspace(tmp_path / "ws")
    made = create_audit(ws, "a", "evidence_type", str(statements_file), annotators=["ana"])
    tok = token_of(made.links["ana"])
    queue = annotator_queue(ws, tok)
    record_label(ws, tok, queue[0].display.id, "speculation")
    paths = {p.name: p for p in export_audit(ws, "a", tmp_path / "out")}

    res = import_labels(ws, "copy", paths["labels.csv"])
    assert res.n_items == len(queue) and res.unlabeled == len(queue) - 1
    assert f"Items from items.csv, {len(queue) - 1} of them with no label yet." in res.lines()
    refs = import_labels(ws, "copy", paths["references.csv"], reference=True)
    assert refs.n_items == len(queue)

    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "labels.csv").write_bytes(paths["labels.csv"].read_bytes())
    assert import_labels(ws, "labels-only", alone / "labels.csv").n_items == 1


def test_an_export_before_anyone_labelled_is_refused_by_name(tmp_path, statements_file):
    import pytest

    from agentmemgate.annotate_app import create_audit
    from agentmemgate.errors import BadInput

    ws = Workspace(tmp_path / "ws")
    create_audit(ws, "a", "evidence_type", str(statements_file), annotators=["ana"])
    paths = {p.name: p for p in export_audit(ws, "a", tmp_path / "out")}
    with pytest.raises(BadInput, match="labels.csv: a header and no rows: no labels to import"):
        import_labels(ws, "copy", paths["labels.csv"])


def test_a_csv_of_your_own_imports_once_and_a_typo_or_a_stray_field_is_refused(tmp_path):
    """Rows with no time: importing the file again adds nothing (each row is already the
    person's latest label); a changed label is added. A mistyped label of a known task, or a
    row with more fields than the header, is refused in one line; labels of no known task make
    a custom audit."""
    import pytest

    from agentmemgate.errors import BadInput

    ws = Workspace(tmp_path / "ws")
    f = tmp_path / "mine.csv"
    f.write_text("item_id,annotator,label\ns1,ann,speculation\ns2,ann,other\ns1,bo,other\n")
    assert import_labels(ws, "mine", f).n_rows == 3
    again = import_labels(ws, "mine", f)
    assert (again.n_rows, again.already) == (0, 3)
    f.write_text("item_id,annotator,label\ns1,ann,other\ns2,ann,other\n")
    changed = import_labels(ws, "mine", f)
    assert (changed.n_rows, changed.already) == (1, 1)
    logged = ws.db.execute("select count(*) from audit_labels where audit = 'mine'").fetchone()
    assert logged[0] == 4  # three, then ann's change of s1

    typo = tmp_path / "typo.csv"
    typo.write_text("item_id,annotator,label\ns1,ann,speculation\ns2,ann,completed_evnt\n")
    with pytest.raises(
        BadInput, match=r"^Label\(s\) 'completed_evnt' are not in the evidence_type"
    ):
        import_labels(ws, "typo", typo)
    stray = tmp_path / "stray.csv"
    stray.write_text("item_id,annotator,label\ns1,ann,speculation,extra\n")
    with pytest.raises(BadInput, match="row 2 has 4 fields, the header 3"):
        import_labels(ws, "stray", stray)
    own = tmp_path / "own.csv"
    own.write_text("item_id,annotator,label\ns1,ann,red\ns2,ann,blue\n")
    assert import_labels(ws, "colors", own).task == "custom"
    assert import_labels(ws, "typo", typo, task="custom").task == "custom"  # asked for


def test_people_imported_into_an_open_audit_are_counted_in_the_list(tmp_path):
    """`amg audit list` counts people who came through the study link by status, and says how
    many more came from a file, as `amg audit people` lists them."""
    from agentmemgate.annotate_app import list_audits
    from agentmemgate.annotate_app.people import people_report

    ws = crowd(tmp_path)
    before = {s.name: s for s in list_audits(ws)}["crowd"]
    assert before.study["imported"] == 0 and "imported from a file" not in before.line()
    items = original_items(ws, "crowd")[:2]
    own = tmp_path / "own.csv"
    own.write_text(
        "item_id,annotator,label\n"
        + "".join(f"{i},{who},speculation\n" for i in items for who in ("lab1", "lab2"))
    )
    import_labels(ws, "crowd", own)
    after = {s.name: s for s in list_audits(ws)}["crowd"]
    assert after.study["imported"] == 2 and "2 people imported from a file" in after.line()
    people = {r.name for r in people_report(ws, "crowd").people}
    assert {"lab1", "lab2"} <= people
    assert {k: v for k, v in after.study.items() if k != "imported"} == {
        k: v for k, v in before.study.items() if k != "imported"
    }
