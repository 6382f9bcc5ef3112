"""amg validate / amg report validation / amg build --judge / amg export --drop-failing, end to end."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import get_model

runner = CliRunner()


def scripted(name: str, natural="pass"):
    """A scripted judge: first listed level, realism 'natural' = natural(prompt) or a fixed verdict,
    substring equivalence."""

    def respond(req):
        if req.purpose == "judge.recovery":
            opts = req.prompt.split("Options (in no particular order):")[1]
            return {"level": re.findall(r"^- (\w+): ", opts, re.M)[0], "rationale": "First listed."}
        if req.purpose == "judge.realism":
            verdict = natural(req.prompt) if callable(natural) else natural
            return {
                "natural": {"verdict": verdict, "rationale": "Scripted answer."},
                "motivated": {"verdict": "pass", "rationale": "Scripted answer."},
                "consistent": {"verdict": "pass", "rationale": "Every turn fits the timeline."},
            }
        a, b = re.search(r"Value 1: (.*)\nValue 2: (.*)\n", req.prompt).groups()
        same = a.lower() in b.lower() or b.lower() in a.lower()
        return {
            "verdict": "equivalent" if same else "not_equivalent",
            "confidence": 0.8,
            "rationale": "Scripted answer.",
        }

    get_model(f"scripted:{name}").respond_with(respond)
    return f"scripted:{name}"


def run(*args, ws=None):
    extra = ["--workspace", str(ws.path)] if ws is not None else []
    return runner.invoke(app, list(args) + extra)


def one_line_error(result, needle):
    assert result.exit_code != 0
    assert needle in result.output, result.output
    assert "Traceback" not in result.output
    assert len([l for l in result.output.splitlines() if l.strip()]) == 1


def test_default_build_runs_the_offline_judges_and_the_card_reports_them(small_build):
    root, summary = small_build
    assert [j.spec for j in summary.judging.judges] == ["offline"]
    card = (root / "out" / "controlled" / "README.md").read_text()
    section = card[card.index("## Validation by judges") :]
    assert (
        "offline-template" in section and "offline-heuristic" in section and "heuristic" in section
    )
    assert re.search(
        r"Blind level recovery, hedge_strength: \d+/10 = [\d.]+% \[[\d.]+, [\d.]+\]", section
    )
    assert "Blind level recovery, confirmation_wording" in section
    assert "Realism, natural" not in section  # a lexicon cannot judge naturalness, and says so
    for check in (
        "qa_relevance",
        "time_references",
        "repetition",
        "frame_consistency",
        "tense_agreement",
    ):
        assert f"Realism, {check}: " in section, check
    assert "Naturalness (does this read as real chat?) was not judged" in section
    assert "amg audit create NAME --task realism --from arcs:SPLIT" in section
    diversity = card[card.index("## Measured diversity") :]
    assert re.search(r"Assistant turns distinct: \d+/\d+ = [\d.]+%", diversity)
    assert "User small-talk turns distinct" in diversity and "more than 8 times" in diversity
    assert "## Validation by judges" in (root / "out" / "README.md").read_text()


def test_validate_stores_verdicts_resumes_and_reports(tiny, tmp_path):
    first = run("validate", "--no-progress", ws=tiny)
    assert first.exit_code == 0, first.output
    assert "structural checks: 16/16 arcs pass" in first.output
    assert "asked now 32: 32 answered, 0 judge failures; already stored 0" in first.output
    assert re.search(r"blind level recovery \(offline\): \d+/16", first.output)
    again = run("validate", "--no-progress", ws=tiny)
    assert "asked now 0: 0 answered, 0 judge failures; already stored 32" in again.output
    rep = run("report", "validation", "--json", "--out", str(tmp_path / "rep"), ws=tiny)
    data = json.loads(rep.stdout)
    assert data["judges"] == [{"spec": "offline", "family": "offline-heuristic", "heuristic": True}]
    assert data["recovery"]["overall"]["n"] == 16
    assert set(data["recovery"]["by_factor"]) == {
        "outcome",
        "hedge_strength",
        "confirmation_wording",
    }
    assert "natural" not in data["realism"]  # the offline judge does not claim to judge it
    assert data["realism"]["qa_relevance"]["n"] == data["realism"]["motivated"]["n"] == 16
    assert any("Naturalness" in n and "amg audit create" in n for n in data["notes"])
    assert sorted(p.name for p in (tmp_path / "rep").glob("*.png")) == [
        "confusion-offline-confirmation_wording.png",
        "confusion-offline-hedge_strength.png",
        "confusion-offline-outcome.png",
    ]
    md = run("report", "validation", ws=tiny)
    assert md.exit_code == 0 and "# Validation report" in md.stdout
    assert (tiny.path / "reports" / "validation" / "validation.md").exists()
    folder = tiny.path / "reports" / "validation"
    page = run("report", "validation", "--html", ws=tiny)
    assert page.exit_code == 0 and page.stdout == md.stdout
    assert page.stderr.strip() == (
        f"wrote {folder / 'validation.md'}, {folder / 'validation.json'}, "
        f"{folder / 'validation.html'} and 3 PNG(s)"
    )
    assert "<h1>Validation report</h1>" in (folder / "validation.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["validate", "--checks", "structure,bogus"], "Unknown check 'bogus'"),
        (["validate", "--judge", "nope"], "provider:model"),
        (
            ["validate", "--judge", "anthropic:claude-x"],
            "No API key for judge anthropic:claude-x: set ANTHROPIC_API_KEY or pass --judge offline",
        ),
        (["validate", "--split", "nope"], "Unknown split 'nope'"),
        (
            ["report", "validation", "--judge", "openai:nope"],
            "No stored verdicts from judge 'openai:nope'",
        ),
        (["validate", "equivalence-pairs", "--n", "0"], "--n must be a positive"),
        (["validate", "equivalence-pairs", "--rejudge", "offline"], "same family"),
        (["report", "equivalence", "--name", "nope"], "No equivalence pair set 'nope'"),
        (
            ["validate", "--base-url", "http://127.0.0.1:9/v1"],
            "--judge-base-url http://127.0.0.1:9/v1 is for openai: judges",
        ),
        (
            ["validate", "equivalence-pairs", "--rejudge-base-url", "http://127.0.0.1:9/v1"],
            "the re-judge is not set",
        ),
    ],
)
def test_bad_input_is_one_line(tiny, args, needle):
    one_line_error(run(*args, ws=tiny), needle)


def _as_generated_by(ws, generator: str) -> None:
    for arc in list(ws.arcs()):
        arc.provenance.generator = generator
        ws.save_arc(arc)


def test_same_family_judge_is_refused_unless_allowed_and_reported(tiny):
    _as_generated_by(tiny, "scripted:writer")
    judge = scripted("same")
    refused = run("validate", "--judge", judge, "--no-progress", ws=tiny)
    one_line_error(refused, "same family as the generator (scripted)")
    assert tiny.db["judge_verdicts"].count == 0  # refused before any call
    ok = run("validate", "--judge", judge, "--allow-same-family", "--no-progress", ws=tiny)
    assert ok.exit_code == 0, ok.output
    assert "same-family judging allowed for: scripted:same" in ok.output
    data = json.loads(run("report", "validation", "--json", ws=tiny).stdout)
    assert data["same_family_judges"] == ["scripted:same"]
    assert any("--allow-same-family" in n for n in data["notes"])


def test_several_judges_in_one_run_give_a_block_each_and_agreement(tiny):
    judge = scripted("second")
    r = run(
        "validate",
        "--judge",
        "offline",
        "--judge",
        judge,
        "--checks",
        "recovery,realism",
        "--no-progress",
        ws=tiny,
    )
    assert r.exit_code == 0, r.output
    data = json.loads(run("report", "validation", "--json", ws=tiny).stdout)
    assert [j["spec"] for j in data["judges"]] == ["offline", "scripted:second"]
    assert set(data["by_judge"]) == {"offline", "scripted:second"}
    assert data["by_judge"]["scripted:second"]["realism"]["natural"]["value"] == 1.0
    scopes = {(a["task"], a["scope"]) for a in data["agreement"]}
    # Only the criterion both judges answer is compared: the offline judge gives no "natural".
    assert {("recovery", "all"), ("realism", "motivated")} <= scopes
    assert ("realism", "natural") not in scopes
    assert not any("Naturalness" in n for n in data["notes"])  # the LLM judge judged it
    for a in data["agreement"]:
        assert a["judges"] == ["offline", "scripted:second"] and "kappa" in a
        assert a["agreement"]["n"] > 0
    # the scripted judge saw every arc once per task; nothing is asked again on a re-run
    calls = tiny.db["llm_calls"].count
    run(
        "validate",
        "--judge",
        "offline",
        "--judge",
        judge,
        "--checks",
        "recovery,realism",
        "--no-progress",
        ws=tiny,
    )
    assert tiny.db["llm_calls"].count == calls == 32


def test_export_drop_failing_removes_flagged_arcs_and_says_why(tiny, tmp_path):
    three_sessions = lambda prompt: "fail" if "Session 3 (" in prompt else "pass"
    judge = scripted("strict", natural=three_sessions)
    assert (
        run("validate", "--judge", judge, "--checks", "realism", "--no-progress", ws=tiny).exit_code
        == 0
    )
    kept = run("export", "--out", str(tmp_path / "all"), ws=tiny)
    assert "core 3, heldout 4, controlled 9" in kept.output
    dropped = run("export", "--drop-failing", "--out", str(tmp_path / "drop"), ws=tiny)
    assert dropped.exit_code == 0, dropped.output
    n_failing = sum(len(a.sessions) == 3 for a in tiny.arcs())
    kept_now = sum(int(n) for n in re.findall(r"\w+ (\d+)", dropped.output.split(":", 1)[1]))
    assert 0 < n_failing < 16 and kept_now == 16 - n_failing
    card = (tmp_path / "drop" / "README.md").read_text()
    assert (
        f"{n_failing} arc(s) were dropped from this export for failing validation (--drop-failing)"
        in card
    )
    assert "realism.natural (scripted:strict): Scripted answer." in card
    assert "dropped" not in (tmp_path / "all" / "README.md").read_text()


def test_build_with_an_llm_judge_and_drop_failing(tmp_path):
    judge = scripted(
        "builder", natural=lambda prompt: "fail" if "Session 3 (" in prompt else "pass"
    )
    r = runner.invoke(
        app,
        [
            "build",
            "--split",
            "controlled",
            "--n-per-cell",
            "1",
            "--judge",
            judge,
            "--drop-failing",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "judges: scripted:builder (scripted)" in r.output
    from agentmemgate.validate.card import failing_arcs
    from agentmemgate.workspace import Workspace

    failing = failing_arcs(Workspace(tmp_path / "ws"), ["controlled"])
    assert 0 < len(failing) < 9 and f"dropped {len(failing)} failing arc(s)" in r.output
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Judge `scripted:builder` (family scripted, LLM)" in card
    assert "were dropped from this export for failing validation (--drop-failing)" in card
    for arc_id, reasons in failing.items():
        assert f"- `{arc_id}`: {'; '.join(reasons)}" in card


def test_equivalence_pairs_judge_rejudge_and_audit_source(tiny):
    rejudge = scripted("eq")
    r = run(
        "validate", "equivalence-pairs", "--n", "30", "--rejudge", rejudge, "--no-progress", ws=tiny
    )
    assert r.exit_code == 0, r.output
    assert "Agreement offline vs scripted:eq:" in r.output
    assert "normalized-string equivalence" in r.output and "heuristic" in r.output
    data = json.loads(run("report", "equivalence", "--json", ws=tiny).stdout)
    assert data["pairs"] == 30
    assert [(x["model"], x["calls"]) for x in data["model_calls"]["rows"]] == [("scripted:eq", 30)]
    assert "- scripted:eq: 30 calls" in run("report", "equivalence", ws=tiny).stdout
    assert (
        data["borderline"] / 30 > data["population_borderline"] / data["population"]
    )  # over-sampled
    ag = data["agreement"]
    assert ag["overall"]["n"] == 30 and 0 <= ag["overall"]["value"] <= 1
    assert (
        ag["borderline"]["n"] == data["borderline"]
        and ag["not_borderline"]["n"] == 30 - data["borderline"]
    )
    assert [j["family"] for j in data["judges"]] == ["offline-heuristic", "scripted"]
    for d in data["disagreements"]:
        assert d["stricter"] == next(k for k, v in d["verdicts"].items() if v == "not_equivalent")

    from agentmemgate.annotate_app.sources import load_source

    items = load_source(tiny, "equivalence:default", "equivalence")
    assert len(items) == 30
    assert {i.reference.source for i in items} == {"judge"}
    assert {i.reference.label for i in items} <= {"equivalent", "not_equivalent"}
    assert all(
        i.display.kind == "pair" and "judge" not in i.display.model_dump_json() for i in items
    )


def test_a_stopped_run_keeps_finished_verdicts_and_resumes_without_repeating_calls(tiny):
    from agentmemgate.llm import FatalProviderError
    from agentmemgate.validate import judge_arcs
    from agentmemgate.validate.judges import get_judge

    spec = scripted("flaky")
    model = get_model(spec)
    healthy = model.script.responder
    answered = []

    def quota_after_five(req):
        if len(answered) == 5:
            raise FatalProviderError("scripted:flaky quota or credit exhausted (HTTP 402)")
        answered.append(req)
        return healthy(req)

    model.respond_with(quota_after_five)
    judge = get_judge(spec, workspace=tiny, concurrency=1)
    with pytest.raises(FatalProviderError):
        judge_arcs(tiny, ["controlled"], [judge], ["recovery"], show_progress=False)
    assert tiny.db["judge_verdicts"].count == 5  # finished work is kept
    model.respond_with(healthy)
    before = len(model.history)
    s = judge_arcs(
        tiny, ["controlled"], [get_judge(spec, workspace=tiny)], ["recovery"], show_progress=False
    )
    assert (s.already_done, s.judged_now) == (5, 4)
    assert len(model.history) - before == 4  # no finished call is asked again


@pytest.fixture
def local_server():
    """A stdlib OpenAI-compatible server on 127.0.0.1 (what vLLM/Ollama users point --base-url at):
    recovery -> the first listed level, realism -> pass, equivalence -> substring rule."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            prompt = body["messages"][-1]["content"]
            if "Options (in no particular order):" in prompt:
                answer = {
                    "level": re.findall(
                        r"^- (\w+): ", prompt.split("Options (in no particular order):")[1], re.M
                    )[0],
                    "rationale": "First listed.",
                }
            elif "Value 1:" in prompt:
                a, b = re.search(r"Value 1: (.*)\nValue 2: (.*)\n", prompt).groups()
                same = a.lower() in b.lower() or b.lower() in a.lower()
                answer = {
                    "verdict": "equivalent" if same else "not_equivalent",
                    "confidence": 0.6,
                    "rationale": "A substring.",
                }
            else:
                ok = {"verdict": "pass", "rationale": "Reads fine."}
                answer = {
                    "natural": ok,
                    "motivated": ok,
                    "consistent": {"verdict": "pass", "rationale": "Every turn fits the timeline."},
                }
            payload = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 1,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": json.dumps(answer)},
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def test_validate_and_equivalence_pairs_against_a_local_server_via_base_url(
    tiny, local_server, monkeypatch
):
    url, seen = local_server
    secret = "sk-test-LOCALSERVER-DONOTLEAK-123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    family = (
        f"openai-compatible:localhost:{url.split(':')[-1].split('/')[0]}"  # 127.0.0.1 is localhost
    )
    r = run(
        "validate",
        "--judge",
        "openai:local",
        "--base-url",
        url,
        "--checks",
        "recovery,realism",
        "--no-progress",
        ws=tiny,
    )
    assert r.exit_code == 0, r.output
    assert f"openai:local ({family})" in r.output
    assert "asked now 32: 32 answered, 0 judge failures; already stored 0" in r.output
    assert len(seen) == 32 and {s["path"] for s in seen} == {"/v1/chat/completions"}
    assert {s["auth"] for s in seen} == {f"Bearer {secret}"}  # sent to the server, stored nowhere
    data = json.loads(run("report", "validation", "--json", ws=tiny).stdout)
    assert data["judges"] == [{"spec": "openai:local", "family": family, "heuristic": False}]
    assert data["realism"]["natural"]["value"] == 1.0 and data["recovery"]["overall"]["n"] == 16
    again = run(
        "validate",
        "--judge",
        "openai:local",
        "--base-url",
        url,
        "--checks",
        "recovery,realism",
        "--no-progress",
        ws=tiny,
    )
    assert (
        "asked now 0: 0 answered, 0 judge failures; already stored 32" in again.output
        and len(seen) == 32
    )

    pairs = run(
        "validate",
        "equivalence-pairs",
        "--n",
        "8",
        "--rejudge",
        "openai:local",
        "--rejudge-base-url",
        url,
        "--no-progress",
        "--json",
        ws=tiny,
    )
    assert pairs.exit_code == 0, pairs.output
    rep = json.loads(pairs.stdout)
    assert [j["family"] for j in rep["judges"]] == ["offline-heuristic", family]
    assert rep["agreement"]["overall"]["n"] == 8 and len(seen) == 40
    files = [p for p in tiny.path.rglob("*") if p.is_file()]  # database, WAL, reports
    assert not [p for p in files if secret.encode() in p.read_bytes()]
    assert secret not in r.output + again.output + pairs.output


def test_validate_exits_2_when_judge_calls_fail(tmp_path):
    from llm.scripted import ScriptedModel, reset_scripts
    from typer.testing import CliRunner

    from agentmemgate.cli import app
    from agentmemgate.pipeline import build

    build(tmp_path / "ws", tmp_path / "out", split="core", n_per_cell=1, show_progress=False)
    reset_scripts()
    ScriptedModel("garbage-judge").respond_with(lambda request: "not json at all")
    result = CliRunner().invoke(
        app,
        [
            "validate",
            "--split",
            "core",
            "--judge",
            "scripted:garbage-judge",
            "--checks",
            "recovery",
            "--no-progress",
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    reset_scripts()
    assert result.exit_code == 2, result.output
    assert "3 judge failures" in result.output
