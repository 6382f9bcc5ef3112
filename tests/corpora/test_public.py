"""``amg corpora fetch`` and ``list`` against a local HTTP server standing in for the public hosts:
a download is verified before it takes its name, an interrupted one resumes, a wrong file, a 404
and an unreachable host are refused in one line. No test here touches the network."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora import public
from agentmemgate.corpora.public import CUTS, PUBLIC, CutFile, PublicFile, cut_text
from agentmemgate.errors import DownloadError
from agentmemgate.hashing import sha256_file

from .paths import REAL_LOCOMO, REAL_LONGMEMEVAL, needs_real_locomo, needs_real_longmemeval

runner = CliRunner()
DATA = json.dumps([{"sample_id": f"conv-{i}", "text": "x" * 5000} for i in range(40)]).encode()


class Host:
    """What the fake host serves, how it misbehaves next, and the Range headers it was sent."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.cut_next: int | None = None  # send only this many bytes of the next body, then hang up
        self.ignore_range = False
        self.ranges: list[str | None] = []


@pytest.fixture
def host():
    state = Host()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            state.ranges.append(self.headers.get("Range"))
            data = state.files.get(self.path)
            if data is None:
                self.send_error(404, "Not Found")
                return
            asked = None if state.ignore_range else self.headers.get("Range")
            start = int(asked.split("=")[1].rstrip("-")) if asked else 0
            if asked and start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if state.cut_next is not None:
                body, state.cut_next = body[: state.cut_next], None
                self.wfile.write(body)
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def serve(monkeypatch, host, corpus="locomo", data=DATA, name="locomo10.json") -> PublicFile:
    """The public file of ``corpus``, as the fake host publishes ``data``."""
    host.files[f"/{name}"] = data
    spec = PUBLIC[corpus].model_copy(
        update={
            "url": f"{host.url}/{name}",
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    )
    monkeypatch.setitem(PUBLIC, corpus, spec)
    return spec


def fetch(*args):
    res = runner.invoke(app, ["corpora", "fetch", *args, "--no-progress"])
    assert "Traceback" not in res.output, res.output
    return res


def one_error_line(res) -> str:
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 1 and len(lines) == 1, res.output
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_fetch_downloads_verifies_and_names_the_file(monkeypatch, host, tmp_path):
    spec = serve(monkeypatch, host)
    res = fetch("locomo", "--to", str(tmp_path))
    assert res.exit_code == 0, res.output
    dest = tmp_path / "locomo" / "locomo10.json"
    assert dest.read_bytes() == DATA
    assert sorted(p.name for p in dest.parent.iterdir()) == ["locomo10.json"]
    assert f"Fetched {dest} ({len(DATA):,} bytes, {spec.version}), sha256 verified" in res.output
    assert "license: CC BY-NC 4.0" in res.output
    again = fetch("locomo", "--to", str(tmp_path))
    assert again.exit_code == 0 and f"Already there: {dest}, sha256 verified" in again.output
    assert len(host.ranges) == 1  # nothing downloaded the second time


def test_fetch_goes_to_the_corpora_setting_by_default(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    monkeypatch.setenv("AMG_CORPORA", str(tmp_path / "corpora"))
    assert fetch("locomo").exit_code == 0
    assert (tmp_path / "corpora" / "locomo" / "locomo10.json").read_bytes() == DATA


def test_url_overrides_the_public_home(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    host.files["/mirror/locomo10.json"] = DATA
    res = fetch("locomo", "--to", str(tmp_path), "--url", f"{host.url}/mirror/locomo10.json")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "locomo" / "locomo10.json").read_bytes() == DATA


def test_an_interrupted_download_resumes_where_it_stopped(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    host.cut_next = 70_000
    first = fetch("locomo", "--to", str(tmp_path))
    line = one_error_line(first)
    assert f"interrupted after 70,000 of {len(DATA):,} bytes" in line
    assert "run the same command again to resume" in line
    folder = tmp_path / "locomo"
    assert not (folder / "locomo10.json").exists()  # never a partial file under the final name
    assert (folder / "locomo10.json.part").read_bytes() == DATA[:70_000]
    second = fetch("locomo", "--to", str(tmp_path))
    assert second.exit_code == 0, second.output
    assert host.ranges == [None, "bytes=70000-"]
    assert (folder / "locomo10.json").read_bytes() == DATA
    assert not (folder / "locomo10.json.part").exists()


def test_a_complete_part_file_is_checked_without_downloading_again(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json.part").write_bytes(DATA)
    assert fetch("locomo", "--to", str(tmp_path)).exit_code == 0
    assert host.ranges == []
    assert (tmp_path / "locomo" / "locomo10.json").read_bytes() == DATA


def test_a_server_that_ignores_the_range_is_read_from_the_start(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json.part").write_bytes(b"garbage")
    host.ignore_range = True
    assert fetch("locomo", "--to", str(tmp_path)).exit_code == 0
    assert host.ranges == ["bytes=7-"]
    assert (tmp_path / "locomo" / "locomo10.json").read_bytes() == DATA


def test_a_file_that_is_not_the_published_one_is_refused(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    host.files["/locomo10.json"] = DATA.replace(b"conv-7", b"conv-X")  # same size, other bytes
    line = one_error_line(fetch("locomo", "--to", str(tmp_path)))
    assert "locomo10.json: sha256" in line and "is not the published" in line
    assert "nothing installed" in line
    folder = tmp_path / "locomo"
    assert sorted(p.name for p in folder.iterdir()) == ["locomo10.json.mismatch"]


def test_a_whole_file_of_another_size_is_refused_not_resumed(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    host.files["/locomo10.json"] = DATA[:-100]
    line = one_error_line(fetch("locomo", "--to", str(tmp_path)))
    assert "is not the published" in line and "interrupted" not in line
    assert sorted(p.name for p in (tmp_path / "locomo").iterdir()) == ["locomo10.json.mismatch"]


def test_a_different_file_already_there_is_left_alone(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    dest = tmp_path / "locomo" / "locomo10.json"
    dest.parent.mkdir()
    dest.write_bytes(b"[]")
    line = one_error_line(fetch("locomo", "--to", str(tmp_path)))
    assert f"{dest} exists and differs from the published file" in line
    assert "move it away, then fetch again" in line
    assert dest.read_bytes() == b"[]" and host.ranges == []


def test_a_missing_file_is_one_line(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    res = fetch("locomo", "--to", str(tmp_path), "--url", f"{host.url}/nosuch.json")
    line = one_error_line(res)
    assert f"Cannot download {host.url}/nosuch.json: HTTP 404" in line
    assert list((tmp_path / "locomo").iterdir()) == []


def test_no_network_is_one_line(monkeypatch, host, tmp_path):
    serve(monkeypatch, host)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = one_error_line(
        fetch("locomo", "--to", str(tmp_path), "--url", f"http://127.0.0.1:{port}/locomo10.json")
    )
    assert f"Cannot reach 127.0.0.1:{port}" in line and "check the network connection" in line
    assert list((tmp_path / "locomo").iterdir()) == []


def test_an_unknown_corpus_is_named():
    line = one_error_line(fetch("locomoo"))
    assert "Unknown corpus 'locomoo'" in line and "did you mean 'locomo'?" in line


def test_progress_is_drawn_while_downloading(monkeypatch, host, tmp_path, capsys):
    spec = serve(monkeypatch, host)
    report = public.fetch("locomo", tmp_path, progress=True)
    assert [f.made for f in report.files] == ["downloaded"] and report.url == spec.url
    assert "locomo10.json" in capsys.readouterr().err


# -- LongMemEval: the oracle file, and the dev sets' subset cut from it -------------------------


def instance(q: str, published_order: bool = True) -> dict:
    """A LongMemEval instance; as published here its keys come in another order than the cut's."""
    turn = {"content": "I might move.", "role": "user", "has_answer": True}
    row = {
        "question_id": q,
        "question_type": "multi-session",
        "question": f"q {q}",
        "answer": "a",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_dates": ["2023/05/20 (Sat) 02:21"],
        "haystack_session_ids": [f"s-{q}"],
        "answer_session_ids": [f"s-{q}"],
        "haystack_sessions": [[turn]],
    }
    if not published_order:
        row["haystack_sessions"] = [
            [{"role": "user", "content": "I might move.", "has_answer": True}]
        ]
        row["answer_session_ids"] = row.pop("answer_session_ids")
    return row


def oracle(ids) -> bytes:
    return json.dumps([instance(q) for q in ids], indent=4).encode()


def serve_longmemeval(monkeypatch, host, extra=("zz-not-in-the-subset",)):
    cut = CUTS["longmemeval"][0]
    data = oracle([*reversed(cut.ids), *extra])
    serve(monkeypatch, host, "longmemeval", data, "longmemeval_oracle.json")
    return cut, data


def test_longmemeval_fetch_also_cuts_the_dev_set_subset(monkeypatch, host, tmp_path):
    cut, data = serve_longmemeval(monkeypatch, host)
    expected = json.dumps([instance(q, published_order=False) for q in cut.ids], indent=2) + "\n"
    monkeypatch.setitem(
        CUTS,
        "longmemeval",
        (cut.model_copy(update={"sha256": hashlib.sha256(expected.encode()).hexdigest()}),),
    )
    res = fetch("longmemeval", "--to", str(tmp_path))
    assert res.exit_code == 0, res.output
    folder = tmp_path / "longmemeval"
    assert (folder / "longmemeval_oracle.json").read_bytes() == data
    subset = folder / "longmemeval_oracle_subset.json"
    assert subset.read_text() == expected  # the subset's order, turns keyed role, content, ...
    assert f"Wrote {subset} (cut from longmemeval_oracle.json), sha256 verified" in res.output
    assert "license: MIT" in res.output


def test_a_cut_that_is_not_the_expected_subset_is_refused(monkeypatch, host, tmp_path):
    serve_longmemeval(monkeypatch, host)
    line = one_error_line(fetch("longmemeval", "--to", str(tmp_path)))
    assert "longmemeval_oracle_subset.json: sha256" in line and "nothing installed" in line
    names = sorted(p.name for p in (tmp_path / "longmemeval").iterdir())
    assert names == ["longmemeval_oracle.json", "longmemeval_oracle_subset.json.mismatch"]


def test_a_source_without_the_subset_questions_is_named(tmp_path):
    path = tmp_path / "longmemeval_oracle.json"
    path.write_bytes(oracle(["only-one"]))
    with pytest.raises(
        DownloadError, match="lacks 61 of the questions of longmemeval_oracle_subset"
    ):
        cut_text(path, CUTS["longmemeval"][0])


@needs_real_longmemeval
def test_the_cut_reproduces_the_subset_the_labels_were_made_on(tmp_path):
    oracle_file = REAL_LONGMEMEVAL.with_name("longmemeval_oracle.json")
    if not oracle_file.is_file():
        pytest.skip("the full LongMemEval oracle file is absent")
    cut = CUTS["longmemeval"][0]
    assert sha256_file(REAL_LONGMEMEVAL) == cut.sha256
    assert hashlib.sha256(cut_text(oracle_file, cut).encode()).hexdigest() == cut.sha256
    # the published file's size, whatever its order and indentation: the content is the same
    rows = json.loads(oracle_file.read_bytes())
    other = tmp_path / "longmemeval_oracle.json"
    other.write_text(json.dumps(list(reversed(rows)), indent=4))
    assert other.stat().st_size == PUBLIC["longmemeval"].size
    assert hashlib.sha256(cut_text(other, cut).encode()).hexdigest() == cut.sha256


@needs_real_locomo
def test_the_registered_checksum_is_the_real_locomo_file():
    assert sha256_file(REAL_LOCOMO) == PUBLIC["locomo"].sha256
    assert REAL_LOCOMO.stat().st_size == PUBLIC["locomo"].size


# -- amg corpora list --------------------------------------------------------------------------


def test_list_says_where_it_looks_and_what_is_there(monkeypatch, tmp_path):
    monkeypatch.setenv("AMG_CORPORA", str(tmp_path))
    dest = tmp_path / "locomo" / "locomo10.json"
    dest.parent.mkdir()
    dest.write_bytes(b"[]")
    res = runner.invoke(app, ["corpora", "list"])
    assert res.exit_code == 0, res.output
    assert f"Corpora folder: {tmp_path} (from AMG_CORPORA)" in res.output
    assert (
        "locomo/locomo10.json: present, but not the published file (sha256 differs)" in res.output
    )
    assert (
        "longmemeval/longmemeval_oracle.json: missing: run `amg corpora fetch longmemeval`"
        in res.output
    )
    monkeypatch.setitem(
        PUBLIC,
        "locomo",
        PUBLIC["locomo"].model_copy(update={"sha256": hashlib.sha256(b"[]").hexdigest()}),
    )
    assert (
        "locomo/locomo10.json: present, sha256 verified"
        in runner.invoke(app, ["corpora", "list"]).output
    )


def test_every_registered_file_names_its_home_version_and_license():
    for corpus, spec in PUBLIC.items():
        assert spec.corpus == corpus and spec.url.startswith("https://")
        assert spec.version.split()[-1] in spec.url  # pinned, not a moving branch
        assert len(spec.sha256) == 64 and spec.size > 0 and spec.license
    assert all(
        isinstance(c, CutFile) and c.source == PUBLIC[c.corpus].name
        for cuts in CUTS.values()
        for c in cuts
    )
