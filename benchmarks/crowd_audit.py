"""An open audit under a crowd's load: people arriving at one study link in real headless browsers.

Fifty people (``--people``) arrive over a few minutes (``--arrive-over`` seconds), at most ten
browsers at once (``--browsers``, one Chromium each), at an open audit with gold and attention
items mixed in. Each labels their queue with the keyboard as a person would: reads the item for
a while (``--read-seconds``; by default from the audit's too-fast mark to three times it, since a
quicker label is flagged as unread), then a number and Enter. Careful people give the right
label (they read the statement, or the attention item's instruction), careless ones
(``--careless``) answer "other" to everything and are screened out by the attention check.

It checks, and exits non-zero if any fails:
- no label lost, duplicated or misattributed: each person's rows in the workspace are exactly
  the labels their browser submitted, on the items their browser showed;
- every item ends with exactly K labels from people not screened out;
- gold and attention items are indistinguishable: the page's structure (every element's test id
  and key, text left out) is the same for every kind of item, and no websocket frame names an
  item id, a check or a reference label's source;
- every finisher was shown the completion code, every screened-out person the screen-out code.

It reports seconds per label (from pressing Enter to the next item, or the end page, being drawn;
median and p95) and the time assignment adds (choosing and storing the next item, as the server
timed it; p50 and p95), with the cores and the load average seen. Needs Debian's chromium.

    .venv/bin/python benchmarks/crowd_audit.py [--people 50] [--browsers 10] [--read-seconds 2-6]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

from agentmemgate.annotate_app.agreement import FAST_SECONDS

CHROMIUM = "/usr/bin/chromium"
CHOICES = ["speculation", "completed_event", "explicit_correction", "other", "cant_tell"]
SHOWN = {c: c.replace("_", " ") for c in CHOICES} | {"cant_tell": "can't tell"}
WORDS = [
    "Seattle", "a new bike", "the night shift", "Denver", "a puppy", "the cello", "Lisbon",
    "a smaller flat", "the climbing gym", "Spanish lessons", "a standing desk", "the 7:40 train",
]  # fmt: skip
TEMPLATES = {
    "speculation": "I might look into {w} at some point, not sure yet",
    "completed_event": "Last week I finally got {w}",
    "explicit_correction": "Sorry, I said the wrong thing before: it is {w}, not the other one",
    "other": "I like talking about {w} with friends",
}

STATE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning"
      || document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')) return "";
  const t = document.body.innerText;
  if (t.includes("Your code:") || t.includes("all the labels it needs")
      || t.includes("labeled. Thank you!")) return "end";
  const h = [...document.querySelectorAll("h3")].map(e => e.innerText)
            .find(x => /^Item \\d+ of \\d+/.test(x));
  if (h && document.querySelector(".st-key-amg-target")) return h;
  return "";
}"""
CHANGED_JS = f"""last => {{
  const state = ({STATE_JS})();
  return state === "end" || (state !== "" && state !== last);
}}"""
NOTE_JS = """() => {
  const n = document.getElementById("amg-key-note");
  const note = (n && !n.hidden) ? n.textContent : "";
  if (n) n.hidden = true;
  const f = [...document.querySelectorAll('[data-testid="stAlertContentError"]')]
            .map(e => e.innerText).join(" ");
  return (note + " " + f).trim();
}"""
SHAPE_JS = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid], [data-testid="stSidebar"] [data-testid]')]
  .map(e => e.getAttribute("data-testid") + ((e.className || "").toString()
            .match(/st-key-[\\w-]+/) || [""])[0]).join("|")"""


def source(n: int, tmp: Path) -> tuple[Path, dict[str, str]]:
    """``n`` statements with unique text and a reference label each; text -> label."""
    rows, truth = [], {}
    for i in range(n):
        label = list(TEMPLATES)[i % 4]
        text = f"({i:03d}) " + TEMPLATES[label].format(w=WORDS[i % len(WORDS)])
        rows.append({"id": f"bench-{i:03d}", "text": text, "reference": label})
        truth[text] = label
    p = tmp / "items.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p, truth


def browser_command(tmp: Path, nice: int) -> str:
    """Chromium, or a wrapper that starts it at a lower CPU priority than the server."""
    if not nice:
        return CHROMIUM
    wrapper = tmp / "chromium-niced"
    wrapper.write_text(f'#!/bin/sh\nexec nice -n {nice} "{CHROMIUM}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(ws: Path, port: int) -> subprocess.Popen:
    code = "import sys; from agentmemgate.cli import main; sys.argv[0] = 'amg'; sys.exit(main())"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "annotate", "--workspace", str(ws), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "AMG_WORKSPACE": ""},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1):
                return proc
        except OSError:
            time.sleep(0.3)
    raise SystemExit("amg annotate did not come up")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def answer(text: str, truth: dict[str, str], careful: bool) -> str:
    if not careful:
        return "other"
    m = re.search(r'choose "([^"]+)"', text)
    if m:
        return next(c for c, shown in SHOWN.items() if shown == m[1])
    return truth[text]


async def person(browser, i: int, url: str, truth: dict, careful: bool, out: dict, args) -> None:
    """``browser``: a Chromium (the person gets a context of their own) or, with
    ``--shared-cache``, the one context every person opens a tab in."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    ctx = None if args.shared_cache else await browser.new_context()
    page = await (ctx or browser).new_page()
    frames: list[bytes] = []
    page.on(
        "websocket",
        lambda w: w.on(
            "framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())
        ),
    )
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    me = {
        "pid": f"BENCH{i:03d}",
        "careful": careful,
        "labels": [],
        "shapes": [],
        "secs": [],
        "again": [],
        "at": [],  # when each label's Enter was pressed
        "arrived": time.perf_counter(),
    }
    await page.goto(url)
    state, last = "", ""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        state = await page.evaluate(STATE_JS)
        if state == "end" or (state and state != last):
            break
        await asyncio.sleep(0.05)
    rng = random.Random(i)
    while state and state != "end":
        target = await page.locator(".st-key-amg-target").inner_text()
        text = [line for line in target.splitlines() if line.strip()][-1].strip()
        label = answer(text, truth, careful)
        me["shapes"].append((text, await page.evaluate(SHAPE_JS)))
        low, high = args.read_seconds if careful else (x / 4 for x in args.read_seconds)
        if high > 0:  # reading the item before choosing, as a person does
            await asyncio.sleep(rng.uniform(low, high))
        await page.keyboard.press(str(CHOICES.index(label) + 1))
        await page.keyboard.press("Enter")
        started, last = time.perf_counter(), state
        pressed = started
        me["labels"].append((text, label))
        while True:
            try:  # the page is watched in the browser (every 50 ms), not polled from here
                await page.wait_for_function(CHANGED_JS, arg=last, polling=50, timeout=1000)
                state = await page.evaluate(STATE_JS)
                if state == "end" or (state and state != last):
                    break
            except PlaywrightTimeout:
                pass
            note = await page.evaluate(NOTE_JS)
            if ("again" in note or "press" in note.lower()) and time.perf_counter() - pressed > 5:
                # the page asks for the key again: a person reads it and presses again (once
                # per note; the key note is hidden once read)
                me["again"].append(note)
                await page.keyboard.press(str(CHOICES.index(label) + 1))
                await page.keyboard.press("Enter")
                pressed = time.perf_counter()
            if time.perf_counter() - started > 120:
                body = " ".join((await page.inner_text("body")).split())[:400]
                if os.environ.get("AMG_BENCH_DUMP"):
                    Path(os.environ["AMG_BENCH_DUMP"], f"{me['pid']}.html").write_text(
                        await page.content()
                    )
                    await page.screenshot(path=f"{os.environ['AMG_BENCH_DUMP']}/{me['pid']}.png")
                    Path(os.environ["AMG_BENCH_DUMP"], f"{me['pid']}.errors").write_text(
                        "\n".join(errors)
                    )
                raise SystemExit(f"{me['pid']}: no next page within 120 s after {last!r}: {body}")
        me["secs"].append(time.perf_counter() - started)
        me["at"].append(started)
    body = await page.inner_text("body")
    code = re.search(r"Your code: (\S+)", body)
    me["shown_code"] = code[1] if code else None
    me["full"] = "all the labels it needs" in body
    me["frames"] = frames
    out[me["pid"]] = me
    await (ctx or page).close()


async def crowd(urls: list[str], truth: dict, args, careless: set[int]) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {}
    queue: asyncio.Queue = asyncio.Queue()
    for i in range(len(urls)):
        queue.put_nowait(i)
    t0 = time.monotonic()
    wrapper_dir = Path(tempfile.mkdtemp(prefix="amg-chromium-")) if args.browser_nice else None
    command = browser_command(wrapper_dir, args.browser_nice) if wrapper_dir else CHROMIUM

    async def launch(pw):
        return await pw.chromium.launch(
            executable_path=command,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )

    async def worker(pw, shared) -> None:
        browser = shared or await launch(pw)
        try:
            while not queue.empty():
                i = queue.get_nowait()
                wait = t0 + i * args.arrive_over / len(urls) - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await person(browser, i, urls[i], truth, i not in careless, out, args)
        finally:
            if not shared:
                await browser.close()

    async with async_playwright() as pw:
        shared = await launch(pw) if args.one_chromium or args.shared_cache else None
        tabs = await shared.new_context() if args.shared_cache else None
        await asyncio.gather(*(worker(pw, tabs or shared) for _ in range(args.browsers)))
        if shared:
            await shared.close()
    if wrapper_dir is not None:
        shutil.rmtree(wrapper_dir, ignore_errors=True)
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def check(
    ws_path: Path, people: dict, k: int, codes: tuple[str, str], names: dict[str, str]
) -> list[str]:
    """What failed (empty: every check passed). ``names``: platform id or bench id -> the
    workspace's name of that person (fixed rosters: the annotator names)."""
    from agentmemgate.workspace import Workspace

    ws = Workspace(ws_path, create=False)
    db = ws.db
    fails = []
    item_of = {}  # shown text -> item id
    for item, payload in db.execute("select item_id, payload from audit_items").fetchall():
        d = json.loads(payload)
        item_of[d["turns"][d["target"]]["text"]] = item
    kinds = dict(db.execute("select item_id, kind from audit_checks").fetchall())
    parts = {
        pid: (name, status, code)
        for pid, name, status, code in db.execute(
            "select platform_id, name, status, code from audit_participants"
        ).fetchall()
    }
    parts.update({pid: (name, "fixed", None) for pid, name in names.items()})
    for pid, me in people.items():
        if pid not in parts:
            if not me["full"]:
                fails.append(f"{pid}: not in the workspace but not told the study is full")
            continue
        name, status, code = parts[pid]
        rows = db.execute(
            "select item_id, label from audit_labels where annotator = ? order by id", [name]
        ).fetchall()
        sent = [(item_of[t], lab) for t, lab in me["labels"]]
        if rows != sent:
            fails.append(f"{pid}: {len(rows)} labels stored, {len(sent)} submitted, or they differ")
        if status == "done" and me["shown_code"] != codes[0]:
            fails.append(f"{pid}: done but shown {me['shown_code']!r}")
        if status == "screened_out" and me["shown_code"] != codes[1]:
            fails.append(f"{pid}: screened out but shown {me['shown_code']!r}")
        if status == "working":
            fails.append(f"{pid}: still working at the end")
        if status == "fixed" and not me["labels"]:
            fails.append(f"{pid}: labeled nothing")
    per_item = Counter(
        item
        for (item,) in db.execute(
            "select distinct l.item_id || char(0) || l.annotator from audit_labels l where "
            "l.annotator not in (select name from audit_participants where status = "
            "'screened_out')"
        ).fetchall()
    )
    counted = Counter(key.split("\0")[0] for key in per_item)
    regular = [i for (i,) in db.execute("select item_id from audit_items") if i not in kinds]
    off = [i for i in regular if counted.get(i, 0) != k]
    if off:
        fails.append(
            f"{len(off)} items do not have exactly {k} labels, e.g. {off[0]}: {counted.get(off[0], 0)}"
        )
    # indistinguishable: the page's structure per kind of item (a person's first item has the
    # instructions open, so it is compared with other first items)
    shapes: dict[tuple[bool, str], set[str]] = defaultdict(set)
    for me in people.values():
        for n, (text, shape) in enumerate(me["shapes"]):
            kind = kinds.get(item_of.get(text, ""), "item")
            shapes[(n == 0, kind)].add(shape)
    for first in (True, False):
        seen = {kind: s for (f, kind), s in shapes.items() if f == first}
        union = set().union(*seen.values()) if seen else set()
        if len(union) > 1:
            fails.append(
                f"{'first' if first else 'later'} items: {len(union)} page structures ("
                + ", ".join(f"{k}: {len(v)}" for k, v in seen.items())
                + ")"
            )
    words = [b"gold", b"attention", b"audit_checks", b"bench-"]
    for pid, me in people.items():
        for f in me["frames"]:
            hit = [w for w in words if w in f]
            if hit:
                fails.append(f"{pid}: a websocket frame names {hit[0].decode()!r}")
                break
    return fails


def library_run(ws_path: Path, urls: list[str], truth: dict, careless: set[int], threads: int):
    """The same people through the library, ``threads`` at once, no browser: what assignment and
    labeling cost on the server alone. Returns seconds per label (record, then the next queue)."""
    import threading

    from agentmemgate.annotate_app import annotator_queue, queues, record_label
    from agentmemgate.workspace import Workspace

    todo = list(range(len(urls)))
    lock = threading.Lock()
    secs: list[float] = []
    item_text: dict[str, str] = {}

    def worker() -> None:
        ws = Workspace(ws_path, create=False)
        for item, payload in ws.db.execute("select item_id, payload from audit_items"):
            d = json.loads(payload)
            item_text[item] = d["turns"][d["target"]]["text"]
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            study = urls[i].split("study=")[1].split("&")[0]
            a = queues.arrive(ws, study, {"PROLIFIC_PID": f"BENCH{i:03d}"})
            if a.token is None:
                continue
            q = annotator_queue(ws, a.token)
            while cur := [x for x in q if x.own_label is None]:
                label = answer(item_text[cur[0].display.id], truth, i not in careless)
                t = time.perf_counter()
                record_label(ws, a.token, cur[0].display.id, label)
                q = annotator_queue(ws, a.token)
                queues.study_state(ws, a.token)
                with lock:
                    secs.append(time.perf_counter() - t)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return secs


def _span(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    try:
        a, b = float(low), float(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not LOW-HIGH seconds: {text!r}") from None
    if not 0 <= a <= b:
        raise argparse.ArgumentTypeError(f"not 0 <= LOW <= HIGH: {text!r}")
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--people", type=int, default=50)
    ap.add_argument("--browsers", type=int, default=10)
    ap.add_argument("--careless", type=int, default=10)
    ap.add_argument("--items", type=int, default=120)
    ap.add_argument("--overlap", type=int, default=3)
    ap.add_argument("--per-person", type=int, default=10)
    ap.add_argument("--arrive-over", type=float, default=120.0, help="seconds")
    ap.add_argument(
        "--read-seconds",
        type=_span,
        default=(FAST_SECONDS, 3 * FAST_SECONDS),
        metavar="LOW-HIGH",
        help="how long a careful person reads an item before the keys, drawn uniformly (default: "
        "from the audit's too-fast mark to three times it); careless people take a quarter. "
        "0-0: keys as fast as the page allows (a stress test, no person labels so fast)",
    )
    ap.add_argument(
        "--one-chromium",
        action="store_true",
        help="one Chromium whose --browsers contexts (separate sessions and renderer processes) "
        "are the people at once, instead of a Chromium each: less of the rig's own load",
    )
    ap.add_argument(
        "--shared-cache",
        action="store_true",
        help="one Chromium and one browser context, each person a tab in it: the people's "
        "browsers share one HTTP cache and compiled-script cache, so an arrival's first page "
        "does not parse the app's scripts afresh on the rig's cores (in a real study each "
        "person's browser does that on their own computer); the server sees a session per tab "
        "as before",
    )
    ap.add_argument(
        "--browser-nice",
        type=int,
        default=0,
        metavar="N",
        help="run the browsers at nice N (1-19): in a real study each person's browser has its "
        "own computer, here they share the server's cores; a lower priority keeps the rig's "
        "browsers from taking the server's CPU, though they still contend with each other",
    )
    ap.add_argument("--keep", help="keep the workspace in this folder")
    ap.add_argument(
        "--library",
        action="store_true",
        help="no browser: the same people through the library, --browsers threads at once "
        "(what assignment costs on the server alone)",
    )
    ap.add_argument(
        "--fixed",
        action="store_true",
        help="the same people as a fixed roster (personal links, no checks): the baseline",
    )
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium)")
    from agentmemgate.annotate_app import create_audit
    from agentmemgate.annotate_app.study import StudyOptions
    from agentmemgate.workspace import Workspace

    tmp = Path(tempfile.mkdtemp(prefix="amg-crowd-"))
    n_items = args.items
    if args.fixed:  # as many items as gives each person about --per-person of them
        n_items = -(-args.people * args.per_person // args.overlap)
    src, truth = source(n_items, tmp)
    port = free_port()
    codes = ("BENCH-DONE", "BENCH-OUT")
    ws = Workspace(tmp / "ws")
    base = f"http://127.0.0.1:{port}"
    careless: set[int] = set()
    names: dict[str, str] = {}
    if args.fixed:
        people_names = [f"b{i:03d}" for i in range(args.people)]
        made = create_audit(
            ws, "fixed", "evidence_type", str(src), annotators=people_names,
            overlap=args.overlap, base_url=base,
        )  # fmt: skip
        urls = [made.links[n] for n in people_names]
        names = {f"BENCH{i:03d}": n for i, n in enumerate(people_names)}
    else:
        made = create_audit(
            ws,
            "crowd",
            "evidence_type",
            str(src),
            base_url=base,
            study=StudyOptions(
                overlap=args.overlap,
                per_person=args.per_person,
                gold=2,
                attention=1,
                min_gold_accuracy=0.5,
                max_attention_failures=0,
                completion_code=codes[0],
                screenout_code=codes[1],
            ),
        )
        urls = [
            f"{made.study_link}&PROLIFIC_PID=BENCH{i:03d}&STUDY_ID=bench&SESSION_ID=s{i}"
            for i in range(args.people)
        ]
        every = max(1, args.people // max(1, args.careless)) if args.careless else 0
        careless = set(range(0, args.people, every)[: args.careless]) if every else set()
    ws.db.conn.close()
    load_before = os.getloadavg()
    if args.library:
        started = time.monotonic()
        secs = library_run(tmp / "ws", urls, truth, careless, args.browsers)
        wall = time.monotonic() - started
        ws = Workspace(tmp / "ws", create=False)
        assign = [r[0] for r in ws.db.execute("select assign_ms from audit_assignments") if r[0]]
        print(
            f"library, no browser: {args.people} people, {args.browsers} threads at once, "
            f"cores: {os.cpu_count()}, wall {wall:.1f} s, load average before "
            f"{load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}"
        )
        print(
            f"label then next item: median {1000 * statistics.median(secs):.1f} ms, p95 "
            f"{1000 * pct(secs, 0.95):.1f} ms (n={len(secs)})"
        )
        print(
            f"assignment: p50 {pct(assign, 0.5):.1f} ms, p95 {pct(assign, 0.95):.1f} ms, "
            f"max {max(assign):.1f} ms (n={len(assign)})"
        )
        shutil.rmtree(tmp, ignore_errors=True)
        return
    proc = serve(tmp / "ws", port)
    started = time.monotonic()
    try:
        people = asyncio.run(crowd(urls, truth, args, careless))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # a stalled person ends the run: nothing left
        raise
    finally:
        stop(proc)
    wall = time.monotonic() - started
    load_after = os.getloadavg()
    fails = check(tmp / "ws", people, args.overlap, codes, names)

    ws = Workspace(tmp / "ws", create=False)
    assign = [r[0] for r in ws.db.execute("select assign_ms from audit_assignments") if r[0]]
    status = Counter(
        s for (s,) in ws.db.execute("select status from audit_participants").fetchall()
    )
    secs = [s for me in people.values() for s in me["secs"]]
    n_labels = sum(len(me["labels"]) for me in people.values())
    print(
        f"{'fixed roster' if args.fixed else 'open audit'}: {len(people)} people "
        f"({len(careless)} careless), browsers at once: {args.browsers}, "
        f"cores: {os.cpu_count()}, arrivals over {args.arrive_over:.0f} s, wall {wall:.0f} s"
    )
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")
    print(
        "participants: "
        + ", ".join(f"{k} {v}" for k, v in sorted(status.items()))
        + f"; told the study is full: {sum(me['full'] for me in people.values())}"
    )
    again = [n for me in people.values() for n in me["again"]]
    print(f"labels submitted: {n_labels}; keys pressed again when the page asked: {len(again)}")
    for note, n in Counter(" ".join(a.split()) for a in again).most_common(3):
        print(f"  {n}x {note}")
    print(
        f"seconds per label: median {statistics.median(secs):.2f}, p95 {pct(secs, 0.95):.2f}, "
        f"max {max(secs):.2f} (n={len(secs)}; goal p95 < 1 s)"
    )
    arrivals = [me["arrived"] for me in people.values()]
    near = [
        s
        for me in people.values()
        for s, at in zip(me["secs"], me["at"])
        if any(at - 3 <= a <= at + s for a in arrivals)
    ]
    calm = [
        s
        for me in people.values()
        for s, at in zip(me["secs"], me["at"])
        if not any(at - 3 <= a <= at + s for a in arrivals)
    ]
    for what, xs in (("with someone arriving then", near), ("with no one arriving", calm)):
        if xs:
            print(
                f"  ... {what} (from 3 s before the key to the next item): median "
                f"{statistics.median(xs):.2f}, p95 {pct(xs, 0.95):.2f} (n={len(xs)})"
            )
    if assign:
        print(
            f"assignment: p50 {pct(assign, 0.5):.1f} ms, p95 {pct(assign, 0.95):.1f} ms, "
            f"max {max(assign):.1f} ms (n={len(assign)}; goal p95 < 50 ms)"
        )
    print("checks: " + ("all passed" if not fails else f"{len(fails)} FAILED"))
    for f in fails[:20]:
        print("  " + f)
    if args.keep:
        shutil.copytree(tmp / "ws", args.keep, dirs_exist_ok=True)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
