"""One real browser against a running `amg annotate`: keyboard labeling lands in the database,
hostile conversation text shows literally, a long conversation fits a 1280x800 laptop screen, and
the link's token leaves the address bar. Needs Debian's chromium (skips without it).

Set AMG_SCREENSHOTS=DIR to keep the screenshots the layout test takes (one per item shown)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
HOSTILE = "I might move to <b>Seattle</b> **soon** <img src=x onerror=alert(1)>"


WAIT_MS = 30000  # generous: the app and chromium share 2 cores with the rest of the suite


def _wait_text(page, text: str) -> None:
    """Wait for ``text``; on a timeout, fail with what the page showed (its flash message, if any)."""
    try:
        page.get_by_text(text).wait_for(timeout=WAIT_MS)
    except Exception:
        shown = " ".join(page.inner_text("body").split())[:600]
        raise AssertionError(
            f"{text!r} did not appear within {WAIT_MS / 1000:.0f} s; the page showed: {shown}"
        ) from None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _amg() -> list[str]:
    exe = Path(sys.executable).with_name("amg")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from agentmemgate.cli import main; main()"]


def _wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 20) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"amg annotate exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("amg annotate did not come up")


def _browser_or_skip():
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api")


def _launch(pw):
    return pw.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    )


def _serve(ws, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        _amg() + ["annotate", "--workspace", str(ws.path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "AMG_WORKSPACE": ""},
    )
    _wait_healthy(port, proc)
    return proc


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_keyboard_labeling_in_a_real_browser(ws, tmp_path):
    sync_api = _browser_or_skip()
    from agentmemgate.annotate_app import create_audit

    src = tmp_path / "one.jsonl"
    src.write_text(
        json.dumps(
            {
                "id": "ID-spec-1",
                "text": HOSTILE,
                "date": "2024-03-01",
                "reference": "other",
                "context": [{"speaker": "assistant", "text": "<i>hello</i> __there__"}],
            }
        )
        + "\n"
    )
    port = _free_port()
    made = create_audit(
        ws,
        "browser",
        "evidence_type",
        str(src),
        annotators=["ana"],
        base_url=f"http://127.0.0.1:{port}",
    )
    proc = subprocess.Popen(
        _amg() + ["annotate", "--workspace", str(ws.path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "AMG_WORKSPACE": ""},
    )
    try:
        _wait_healthy(port, proc)
        with sync_api.sync_playwright() as pw:
            browser = _launch(pw)
            page = browser.new_page()
            frames: list[bytes] = []  # everything the server pushes to the page
            page.on(
                "websocket",
                lambda w: w.on(
                    "framereceived",
                    lambda f: frames.append(f if isinstance(f, bytes) else f.encode()),
                ),
            )
            sent: list[bytes] = []  # everything the page sends (each a run request)
            page.on(
                "websocket",
                lambda w: w.on(
                    "framesent", lambda f: sent.append(f if isinstance(f, bytes) else f.encode())
                ),
            )
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(made.links["ana"])
            _wait_text(page, "Item 1 of 1")

            # Hostile text is shown literally: no <b>/<i> elements, markdown not applied.
            # (expect waits: Streamlit may still be drawing the turns below the item header.)
            sync_api.expect(page.locator("body")).to_contain_text("<b>Seattle</b> **soon**")
            sync_api.expect(page.locator("body")).to_contain_text("<i>hello</i> __there__")
            assert page.locator("b", has_text="Seattle").count() == 0
            assert page.locator("strong", has_text="soon").count() == 0
            assert page.locator("i", has_text="hello").count() == 0

            button = page.get_by_role("button")

            def live(text: str) -> None:
                """Wait for the rerun to settle (stale elements gone) and the button enabled."""
                sync_api.expect(button.filter(has_text=text)).to_have_count(1)
                sync_api.expect(button.filter(has_text=text)).to_be_enabled()

            live("other")
            n_sent = len(sent)
            page.keyboard.press("4")  # 4 = other: chosen in the page, nothing sent yet
            _wait_text(page, "Your choice: other")
            assert len(sent) == n_sent
            live("Submit")
            page.keyboard.press("Enter")  # the choice and the submit: one run
            _wait_text(page, "1 item is labeled")
            assert len(sent) == n_sent + 1
            live("Back")
            page.keyboard.press("b")  # back to the item, the saved label shown
            _wait_text(page, "Your choice: other (saved)")
            live("Submit")
            page.keyboard.press("1")  # a new choice by key, submitted with the mouse
            _wait_text(page, "Your choice: speculation")
            page.locator(".st-key-submit button").click()
            _wait_text(page, "1 item is labeled")
            live("Back")
            page.keyboard.press("b")
            _wait_text(page, "Your choice: speculation (saved)")
            live("Submit")
            page.keyboard.press("4")  # a choice by key, then another by click, then Enter at once:
            button.filter(has_text="completed event").click()  # the click's choice is saved
            page.keyboard.press("Enter")
            _wait_text(page, "1 item is labeled")
            live("Back")
            page.keyboard.press("b")
            _wait_text(page, "Your choice: completed event (saved)")
            live("Submit")
            # A number key the page could not apply yet (a busy page: an element still stale),
            # then a click on another label: the click overtakes the key, which is dropped.
            page.evaluate(
                "() => { const d = document.createElement('div'); d.id = 'amg-test-busy';"
                " d.setAttribute('data-stale', 'true'); document.body.appendChild(d); }"
            )
            page.keyboard.press("4")
            button.filter(has_text="speculation").click()
            _wait_text(page, "Key 4 was not applied: a click came after it.")
            page.evaluate("() => document.getElementById('amg-test-busy').remove()")
            _wait_text(page, "Your choice: speculation")
            page.keyboard.press("Enter")
            _wait_text(page, "1 item is labeled")
            assert dialogs == []
            assert frames and not any(b"ID-spec-1" in f for f in frames)  # the id names the level
            browser.close()
        rows = ws.db.execute(
            "select annotator, item_id, label, active_seconds from audit_labels"
        ).fetchall()
        assert [(a, i, lab) for a, i, lab, _ in rows] == [
            ("ana", "ID-spec-1", "other"),
            ("ana", "ID-spec-1", "speculation"),
            ("ana", "ID-spec-1", "completed_event"),
            ("ana", "ID-spec-1", "speculation"),
        ]
        assert rows[0][3] is not None and rows[0][3] >= 0

        # SIGTERM to `amg annotate` alone (not its group) must stop the server, not orphan it.
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
        with pytest.raises(OSError):
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                pass
    finally:
        _stop(proc)


# -- a long conversation on a laptop screen ----------------------------------------------------
VIEWPORT = {"width": 1280, "height": 800}

_SETTLED = """() => {  /* the page script has placed the highlighted turn inside the screen */
  const t = document.querySelector(".st-key-amg-target");
  if (!t) return false;
  const r = t.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
}"""


def _box(page, locator) -> dict:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def _assert_in_view(page, locator, what: str) -> None:
    b = _box(page, locator)
    assert b["x"] >= 0 and b["y"] >= 0, (what, b)
    assert (
        b["x"] + b["width"] <= VIEWPORT["width"] and b["y"] + b["height"] <= VIEWPORT["height"]
    ), (what, b)


def _assert_decision_in_view(page, n_choices: int) -> None:
    """The choices, Submit and the highlighted turn are on screen, the turn within its panel."""
    for i in range(1, n_choices + 1):
        _assert_in_view(page, page.locator(f".st-key-choice_{i}"), f"choice {i}")
    _assert_in_view(page, page.locator(".st-key-submit"), "Submit")
    target = page.locator(".st-key-amg-target")
    _assert_in_view(page, target, "highlighted turn")
    t, panel = _box(page, target), _box(page, page.locator(".st-key-amg-chat"))
    assert panel["y"] - 1 <= t["y"] and t["y"] + t["height"] <= panel["y"] + panel["height"] + 1


def _shot(page, tmp_path, name: str) -> None:
    page.screenshot(path=str(tmp_path / f"{name}.png"))
    keep = os.environ.get("AMG_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / f"{name}.png", Path(keep) / f"{name}.png")


def test_a_long_conversation_fits_a_laptop_screen_and_the_token_leaves_the_address(ws, tmp_path):
    sync_api = _browser_or_skip()
    from agentmemgate.annotate_app import create_audit

    from .conftest import make_long_arc

    arcs = [
        make_long_arc(i, lvl)
        for i, lvl in enumerate(["weakly_hedged", "strongly_hedged", "confident_no_date"])
    ]
    ws.save_specs([a.spec for a in arcs])
    for a in arcs:
        ws.save_arc(a)
    port = _free_port()
    made = create_audit(
        ws,
        "long",
        "difficulty:hedge_strength",
        "arcs",
        annotators=["ana"],
        base_url=f"http://127.0.0.1:{port}",
    )
    link = made.links["ana"]
    token = link.split("token=", 1)[1]
    proc = _serve(ws, port)
    try:
        with sync_api.sync_playwright() as pw:
            browser = _launch(pw)
            page = browser.new_page(viewport=VIEWPORT)
            frames: list[bytes] = []
            page.on(
                "websocket",
                lambda w: w.on(
                    "framereceived",
                    lambda f: frames.append(f if isinstance(f, bytes) else f.encode()),
                ),
            )
            expect = sync_api.expect
            page.goto(link)
            _wait_text(page, "Item 1 of 3")

            # Signed in: the token is gone from the address bar.
            expect(page).not_to_have_url(re.compile("token="))

            # First item: instructions open, and still the choices and the highlighted turn show.
            instructions = page.get_by_text("Read the whole conversation.")
            expect(instructions).to_be_visible()
            page.wait_for_function(_SETTLED, timeout=WAIT_MS)
            _assert_decision_in_view(page, 6)
            _assert_in_view(page, instructions, "instructions")
            _shot(page, tmp_path, "item-1-instructions-open")

            # Sessions are separated by dated rules.
            expect(page.locator(".amg-session")).to_have_text(
                [
                    "Session of Mon 1 Jan 2024",
                    "Session of Tue 9 Jan 2024 · 8 days later",
                    "Session of Fri 2 Feb 2024 · 24 days later",
                ]
            )

            # A fast "2, Enter" is not lost; the next item starts with the instructions closed.
            expect(page.get_by_role("button", name="weakly hedged")).to_be_enabled()
            page.keyboard.press("2")
            page.keyboard.press("Enter")
            _wait_text(page, "Item 2 of 3")
            expect(instructions).to_be_hidden()
            page.wait_for_function(_SETTLED, timeout=WAIT_MS)
            _assert_decision_in_view(page, 6)
            _shot(page, tmp_path, "item-2")

            page.keyboard.press("1")
            page.keyboard.press("Enter")
            _wait_text(page, "Item 3 of 3")
            page.wait_for_function(_SETTLED, timeout=WAIT_MS)
            _assert_decision_in_view(page, 6)
            _shot(page, tmp_path, "item-3")

            page.keyboard.press("b")  # back: the saved label shown, the turn in view again
            _wait_text(page, "Your choice: strongly hedged (saved)")
            page.wait_for_function(_SETTLED, timeout=WAIT_MS)
            _assert_decision_in_view(page, 6)
            _shot(page, tmp_path, "item-2-back")

            # A reload signs out and says how to come back; the link resumes where work stopped.
            page.reload()
            expect(page.get_by_text("Signed out after a reload?")).to_be_visible(timeout=15000)
            _shot(page, tmp_path, "after-reload")
            page.goto(link)
            _wait_text(page, "Item 3 of 3")
            expect(page).not_to_have_url(re.compile("token="))
            # No entry of the tab's history keeps the token.
            while page.url != "about:blank":
                assert token not in page.url
                page.go_back()
            browser.close()
        assert frames and not any(a.id.encode() in f for a in arcs for f in frames)
        rows = ws.db.execute("select label from audit_labels order by id").fetchall()
        assert [r[0] for r in rows] == ["weakly_hedged", "strongly_hedged"]
    finally:
        _stop(proc)


# -- keys pressed before the page is ready ----------------------------------------------------
def test_a_key_pressed_as_a_page_appears_is_kept_and_one_with_no_button_is_refused(ws, tmp_path):
    """Streamlit binds a button's key only once the button is drawn, and a page's text can show
    before its buttons do: B pressed the moment "All 3 items are labeled" appears must still go
    back. A key the drawn page has no enabled button for says so on the page."""
    sync_api = _browser_or_skip()
    from agentmemgate.annotate_app import annotator_queue, create_audit, record_label

    from .conftest import token_of

    src = tmp_path / "three.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"ID-{i}", "text": f"Statement {i}", "reference": "other"}) + "\n"
            for i in range(3)
        )
    )
    port = _free_port()
    made = create_audit(
        ws,
        "keys",
        "evidence_type",
        str(src),
        annotators=["ana"],
        base_url=f"http://127.0.0.1:{port}",
    )
    token = token_of(made.links["ana"])
    for item in annotator_queue(ws, token):
        record_label(ws, token, item.display.id, "other")
    proc = _serve(ws, port)
    try:
        with sync_api.sync_playwright() as pw:
            browser = _launch(pw)
            page = browser.new_page()
            expect = sync_api.expect
            went_back = 0
            for _ in range(5):  # each time the page first appears, in a new session
                page.goto(made.links["ana"])
                _wait_text(page, "All 3 items are labeled")
                page.keyboard.press("b")  # at once: its button may not be drawn yet
                try:
                    page.get_by_text("Item 3 of 3").wait_for(timeout=WAIT_MS)
                    went_back += 1
                except sync_api.TimeoutError:
                    pass
            assert went_back == 5, f"B went back {went_back} of 5 times"
            note = page.locator("#amg-key-note")
            page.keyboard.press("7")  # five choices: no button for 7
            expect(note).to_have_text(
                "Key 7 did nothing: this page has no button for it.", timeout=WAIT_MS
            )
            for n in (2, 1):
                expect(page.get_by_role("button", name="Back")).to_be_enabled()
                page.keyboard.press("b")
                _wait_text(page, f"Item {n} of 3")
            expect(page.get_by_role("button", name="Back")).to_be_disabled()
            page.keyboard.press("b")  # the first item: nothing to go back to
            expect(note).to_have_text(
                "Key B did nothing: ◀ Back is not available here.", timeout=WAIT_MS
            )
            expect(note).to_be_hidden(timeout=WAIT_MS)  # the note goes away by itself
            assert page.get_by_text("Item 1 of 3").is_visible()
            browser.close()
        assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 3  # no re-logs
    finally:
        _stop(proc)


# -- an open audit in a real browser -----------------------------------------------------------
def test_an_open_audit_in_a_real_browser_sends_nothing_that_tells_a_check(ws, tmp_path):
    """A study link opened with a platform id: a gold, an attention and a regular item labeled
    with the keyboard; no websocket frame names an item id or a check, and the last page shows
    the completion code."""
    sync_api = _browser_or_skip()
    from agentmemgate.annotate_app import create_audit
    from agentmemgate.annotate_app.study import StudyOptions

    src = tmp_path / "s.jsonl"
    labels = ["speculation", "other", "completed_event"]
    src.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"item-{labels[i % 3]}-{i}",
                    "text": f"Statement {i}",
                    "reference": labels[i % 3],
                }
            )
            + "\n"
            for i in range(4)
        )
    )
    port = _free_port()
    made = create_audit(
        ws,
        "open",
        "evidence_type",
        str(src),
        base_url=f"http://127.0.0.1:{port}",
        study=StudyOptions(overlap=1, per_person=1, gold=1, attention=1, completion_code="OK-77"),
    )
    ids = [i for (i,) in ws.db.execute("select item_id from audit_items")]
    proc = _serve(ws, port)
    try:
        with sync_api.sync_playwright() as pw:
            browser = _launch(pw)
            page = browser.new_page()
            frames: list[bytes] = []
            page.on(
                "websocket",
                lambda w: w.on(
                    "framereceived",
                    lambda f: frames.append(f if isinstance(f, bytes) else f.encode()),
                ),
            )
            page.goto(made.study_link + "&PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x1")
            for n in (1, 2, 3):
                _wait_text(page, f"Item {n} of 3")
                sync_api.expect(page.get_by_role("button", name="other")).to_be_enabled()
                page.keyboard.press("4")
                _wait_text(page, "Your choice: other")
                page.keyboard.press("Enter")
            _wait_text(page, "Your code: OK-77")
            browser.close()
        assert frames
        for f in frames:  # ids name the reference label here: none may reach the page
            assert not [i for i in ids if i.encode() in f]
            assert b"gold" not in f and b"attention" not in f.lower()
        assert ws.db.execute("select status, code from audit_participants").fetchone() == (
            "done",
            "OK-77",
        )
    finally:
        _stop(proc)
