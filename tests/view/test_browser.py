"""One real browser against a running `amg view`: every page loads without error text, a deep
link opens its arc and system, the side-by-side trace marks the first differing turn, a filter
returns the arcs the report counted, and hostile arc text does not execute. Needs Debian's
chromium and playwright (skips without them)."""

from __future__ import annotations

import pytest

# The audit app's browser test starts its server and chromium the same way.
from annotate_app.test_browser import (
    _amg,
    _browser_or_skip,
    _free_port,
    _launch,
    _stop,
    _wait_healthy,
)

from agentmemgate.view.app import TITLES

from .conftest import HOSTILE, HOSTILE_RATIONALE

WAIT_MS = 30000  # generous: the app and chromium share the machine with the rest of the suite
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


@pytest.fixture(scope="module")
def browser_page(viewed, tmp_path_factory):
    """(page, base URL, workspace) with `amg view` serving the evaluated workspace."""
    import os
    import subprocess

    sync_api = _browser_or_skip()
    path, _, _ = viewed
    port = _free_port()
    proc = subprocess.Popen(
        _amg() + ["view", "--workspace", str(path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its note of where it serves goes to a temp dir
        env={**os.environ, "AMG_WORKSPACE": "", "TMPDIR": str(tmp_path_factory.mktemp("notes"))},
    )
    try:
        _wait_healthy(port, proc)
        with sync_api.sync_playwright() as pw:
            browser = _launch(pw)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            yield page, f"http://127.0.0.1:{port}", path, sync_api
            assert dialogs == []
            browser.close()
    finally:
        _stop(proc)


def _open(page, url: str, text: str, sync_api) -> None:
    """Go to ``url`` and wait until ``text`` shows and the page has finished running."""
    page.goto(url)
    try:
        page.get_by_text(text).first.wait_for(timeout=WAIT_MS)
    except Exception:
        shown = " ".join(page.inner_text("body").split())[:600]
        raise AssertionError(f"{text!r} did not appear; the page showed: {shown}") from None
    sync_api.expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(
        0, timeout=WAIT_MS
    )


def test_every_page_loads_without_error_text(browser_page):
    page, base, _, sync_api = browser_page
    for name, title in TITLES.items():
        _open(page, f"{base}/{name}", title, sync_api)
        assert page.locator(ERRORS).count() == 0, name
        assert "Traceback" not in page.inner_text("body"), name


def test_a_deep_link_and_the_side_by_side_trace(browser_page):
    from agentmemgate.view.data import Reader

    from .test_pages import _gated_vs_ungated

    page, base, path, sync_api = browser_page
    arc, t = _gated_vs_ungated(path)
    _open(page, f"{base}/trace?arc={arc}&system=literal-ungated", "literal-ungated: ", sync_api)
    sync_api.expect(page.get_by_label("Arc id")).to_have_value(arc)
    sync_api.expect(page.get_by_role("combobox", name="System")).to_have_value("literal-ungated")

    label = [f"s{si} t{ti}" for si, ti, _ in Reader(path).dialog(arc).turns()][t]
    _open(
        page,
        f"{base}/trace?arc={arc}&system=literal-gated&compare=literal-ungated",
        "First difference",
        sync_api,
    )
    sync_api.expect(page.locator("body")).to_contain_text(f"First difference: turn {label}")
    marked = page.locator(".st-key-amg-first-diff")
    sync_api.expect(marked).to_have_count(1)
    sync_api.expect(marked).to_contain_text("First turn where the systems differ")
    sync_api.expect(marked).to_contain_text("staged")


def test_a_filter_returns_the_arcs_the_report_counted(browser_page):
    from agentmemgate.evaluate import compute_report
    from agentmemgate.view.data import Reader

    page, base, path, sync_api = browser_page
    k = compute_report(Reader(path)).to_json()["systems"]["literal-ungated"]["core"][
        "end_contamination"
    ]["k"]
    _open(
        page,
        f"{base}/arcs?split=core&system=literal-ungated&measure=end_contamination&value=yes",
        " match",
        sync_api,
    )
    sync_api.expect(page.locator("body")).to_contain_text(f"{k} arc{'s' if k != 1 else ''} match")


def test_hostile_arc_text_does_not_execute(browser_page):
    page, base, path, sync_api = browser_page
    arc = _hostile_arc(path)
    _open(page, f"{base}/arcs?arc={arc}", "initial turn", sync_api)
    sync_api.expect(page.locator("body")).to_contain_text(HOSTILE)
    page.get_by_text("realism", exact=False).first.click()  # open a verdict's rationale
    sync_api.expect(page.locator("body")).to_contain_text(HOSTILE_RATIONALE)
    assert page.evaluate("() => window.amgPwned") is None
    assert page.locator('img[src="x"], img[src="y"], a[href^="javascript"]').count() == 0
    assert page.locator("strong", has_text="not bold").count() == 0
    assert page.locator("b", has_text="not bold either").count() == 0


def _hostile_arc(path) -> str:
    import sqlite3

    db = sqlite3.connect(path / "workspace.db")
    (arc,) = db.execute("select id from arcs where instr(json, 'amgPwned') > 0").fetchone()
    return arc
