"""One real browser against a running `amg annotate`: keyboard labeling lands in the database,
and hostile conversation text shows literally. Needs Debian's chromium (skips without it)."""

from __future__ import annotations

import json
import os
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


def test_keyboard_labeling_in_a_real_browser(ws, tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    from agentmemgate.annotate_app import create_audit

    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({
        "id": "ID-spec-1", "text": HOSTILE, "date": "2024-03-01", "reference": "other",
        "context": [{"speaker": "assistant", "text": "<i>hello</i> __there__"}]}) + "\n")
    port = _free_port()
    made = create_audit(ws, "browser", "evidence_type", str(src), annotators=["ana"],
                        base_url=f"http://127.0.0.1:{port}")
    proc = subprocess.Popen(_amg() + ["annotate", "--workspace", str(ws.path), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "AMG_WORKSPACE": ""})
    try:
        _wait_healthy(port, proc)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync"])
            page = browser.new_page()
            frames: list[bytes] = []  # everything the server pushes to the page
            page.on("websocket", lambda w: w.on(
                "framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(made.links["ana"])
            page.get_by_text("Item 1 of 1").wait_for(timeout=15000)

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
            page.keyboard.press("4")  # 4 = other
            page.get_by_text("Your choice: other").wait_for(timeout=10000)
            live("Submit")
            page.keyboard.press("Enter")
            page.get_by_text("1 item is labeled").wait_for(timeout=10000)
            live("Back")
            page.keyboard.press("b")  # back to the item, the saved label shown
            page.get_by_text("Your choice: other (saved)").wait_for(timeout=10000)
            assert dialogs == []
            assert frames and not any(b"ID-spec-1" in f for f in frames)  # the id names the level
            browser.close()
        rows = ws.db.execute("select annotator, item_id, label, active_seconds from audit_labels"
                             ).fetchall()
        assert [(a, i, lab) for a, i, lab, _ in rows] == [("ana", "ID-spec-1", "other")]
        assert rows[0][3] is not None and rows[0][3] >= 0

        # SIGTERM to `amg annotate` alone (not its group) must stop the server, not orphan it.
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
        with pytest.raises(OSError):
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                pass
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
