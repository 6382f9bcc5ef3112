"""The public corpora: where each file comes from (its public home, pinned version, sha256 and
license), and fetching it into the corpora folder (``home.corpora_dir()``).

Each corpus is one published file, pinned to a git commit or a Hugging Face revision. A download
is verified against its sha256 before it takes the file's name. LongMemEval also gets the
61-question subset of the oracle file that the hedge dev sets are labelled on, cut from the
verified file and checked against its own sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput, DownloadError
from ..hashing import sha256_file
from ..suggest import did_you_mean
from .home import corpora_dir
from .model import CORPORA, LICENSES

LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"


class PublicFile(BaseModel):
    """A corpus file as its authors publish it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    corpus: str
    name: str  # the file name in CORPORA_DIR/CORPUS/
    url: str  # the download, pinned to ``version``
    home: str  # the page that publishes it
    version: str
    sha256: str
    size: int
    license: str


class CutFile(BaseModel):
    """A file made here from a public one: the listed instances, in this order."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    corpus: str
    name: str
    source: str  # the PublicFile it is cut from
    ids: tuple[str, ...]
    sha256: str
    what: str


PUBLIC: dict[str, PublicFile] = {
    "longmemeval": PublicFile(
        corpus="longmemeval",
        name="longmemeval_oracle.json",
        url=(
            "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/"
            f"{LONGMEMEVAL_REVISION}/longmemeval_oracle.json"
        ),
        home="https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned",
        version=f"revision {LONGMEMEVAL_REVISION}",
        sha256="821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c",
        size=15_388_478,
        license=LICENSES["longmemeval"],
    ),
    "locomo": PublicFile(
        corpus="locomo",
        name="locomo10.json",
        url=f"https://raw.githubusercontent.com/snap-research/locomo/{LOCOMO_COMMIT}/data/locomo10.json",
        home="https://github.com/snap-research/locomo",
        version=f"commit {LOCOMO_COMMIT}",
        sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
        size=2_805_274,
        license=LICENSES["locomo"],
    ),
}

# Within each stratum (question type, and abstention for ids ending in "_abs"), the first
# question ids in sorted order: 8 per type, 3 per abstention stratum, plus two more.
LONGMEMEVAL_SUBSET_IDS = (
    "01493427",
    "031748ae",
    "06db6396",
    "07741c44",
    "07741c45",
    "08e075c7",
    "0977f2af",
    "0ddfec37",
    "6a1eabeb",
    "031748ae_abs",
    "0ddfec37_abs",
    "2133c1b5_abs",
    "00ca467f",
    "0100672e",
    "078150f1",
    "099778bb",
    "09ba9854",
    "0a995998",
    "0ea62687",
    "10d9b85a",
    "09ba9854_abs",
    "2311e44b_abs",
    "60bf93ed_abs",
    "0e5e2d1a",
    "1568498a",
    "16c90bf4",
    "18dcd5a5",
    "1903aded",
    "1b9b7252",
    "1d4da289",
    "1de5cff2",
    "06878be2",
    "06f04340",
    "07b6f563",
    "09d032c9",
    "0a34ad58",
    "0edc2aef",
    "195a1a1b",
    "1a1907b4",
    "001be529",
    "0862e8bf",
    "118b2229",
    "15745da0",
    "19b5f2b3",
    "1e043500",
    "1faac195",
    "21436231",
    "0862e8bf_abs",
    "15745da0_abs",
    "19b5f2b3_abs",
    "08f4fc43",
    "0bb5a684",
    "0bc8ad92",
    "0bc8ad93",
    "0db4c65d",
    "2a1811e2",
    "2c63a862",
    "2ebe6c90",
    "982b5123_abs",
    "c8090214_abs",
    "gpt4_70e84552_abs",
)
CUTS: dict[str, tuple[CutFile, ...]] = {
    "longmemeval": (
        CutFile(
            corpus="longmemeval",
            name="longmemeval_oracle_subset.json",
            source="longmemeval_oracle.json",
            ids=LONGMEMEVAL_SUBSET_IDS,
            sha256="592c74b9494af7f4dfb6bc6aa075d2ee9f62247dc909cd726ee59d7aff0827b8",
            what="the 61 questions the hedge dev sets are labelled on",
        ),
    ),
}
# Key order of the cut file (the published file's own order may differ; the content may not).
_INSTANCE_KEYS = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_dates",
    "haystack_session_ids",
    "haystack_sessions",
    "answer_session_ids",
)
_TURN_KEYS = ("role", "content", "has_answer")

State = Literal["verified", "missing", "differs"]


class FileState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    corpus: str
    name: str
    path: Path
    state: State
    made: Literal["downloaded", "cut", "present"] = "present"


class FetchReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    corpus: str
    source: PublicFile
    url: str
    files: list[FileState]


def published_sha256(name: str) -> str | None:
    """The published sha256 of a corpus file of this name (or of a file cut from one), if known."""
    for corpus in CORPORA:
        if PUBLIC[corpus].name == name:
            return PUBLIC[corpus].sha256
        for cut in CUTS.get(corpus, ()):
            if cut.name == name:
                return cut.sha256
    return None


def public_file(corpus: str) -> PublicFile:
    if corpus not in PUBLIC:
        raise BadInput(
            f"Unknown corpus {corpus!r} (known: {', '.join(CORPORA)})"
            f"{did_you_mean(corpus, CORPORA)}"
        )
    return PUBLIC[corpus]


def _state(path: Path, sha256: str) -> State:
    if not path.is_file():
        return "missing"
    return "verified" if sha256_file(path) == sha256 else "differs"


def status(folder: str | Path | None = None) -> list[FileState]:
    """Each known file in the corpora folder: verified (the published bytes), missing or differs."""
    root = Path(folder) if folder else corpora_dir()
    out = []
    for corpus in CORPORA:
        spec = PUBLIC[corpus]
        for name, sha in [
            (spec.name, spec.sha256),
            *((c.name, c.sha256) for c in CUTS.get(corpus, ())),
        ]:
            path = root / corpus / name
            out.append(FileState(corpus=corpus, name=name, path=path, state=_state(path, sha)))
    return out


def _refuse_different(path: Path, sha256: str) -> None:
    got = sha256_file(path)
    raise DownloadError(
        f"{path} exists and differs from the published file (sha256 {got[:12]}..., "
        f"expected {sha256[:12]}...): move it away, then fetch again"
    )


def _mismatch(path: Path, got: str, expected: str, kept: Path) -> DownloadError:
    return DownloadError(
        f"{path.name}: sha256 {got[:12]}... is not the published {expected[:12]}...; "
        f"nothing installed, the bytes are kept as {kept}"
    )


def fetch(
    corpus: str, to: str | Path | None = None, url: str | None = None, progress: bool = True
) -> FetchReport:
    """Download ``corpus`` into ``TO/CORPUS/`` (default: the corpora folder), verify it, and cut
    the files made from it. A file already there with the published bytes is kept as it is."""
    from ._download import download

    spec = public_file(corpus)
    folder = (Path(to).expanduser() if to else corpora_dir()) / corpus
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DownloadError(f"Cannot create {folder}: {e.strerror or e}") from None
    dest = folder / spec.name
    source_url = url or spec.url
    if dest.exists():
        if sha256_file(dest) != spec.sha256:
            _refuse_different(dest, spec.sha256)
        files = [FileState(corpus=corpus, name=spec.name, path=dest, state="verified")]
    else:
        part = dest.with_name(dest.name + ".part")
        download(source_url, part, spec.size, spec.name, progress)
        got = sha256_file(part)
        if got != spec.sha256:
            kept = dest.with_name(dest.name + ".mismatch")
            os.replace(part, kept)
            raise _mismatch(dest, got, spec.sha256, kept)
        os.replace(part, dest)
        files = [
            FileState(corpus=corpus, name=spec.name, path=dest, state="verified", made="downloaded")
        ]
    for cut in CUTS.get(corpus, ()):
        files.append(_cut(cut, folder))
    return FetchReport(corpus=corpus, source=spec, url=source_url, files=files)


def _ordered(d: dict, keys: tuple[str, ...]) -> dict:
    return {**{k: d[k] for k in keys if k in d}, **{k: v for k, v in d.items() if k not in keys}}


def cut_text(source: Path, cut: CutFile) -> str:
    """The cut file's text: its instances of ``source``, in the cut's order and key order."""
    try:
        data = json.loads(source.read_bytes())
        by_id = {row["question_id"]: row for row in data}
    except (ValueError, TypeError, KeyError) as e:
        raise DownloadError(f"{source.name}: not a LongMemEval file ({e})") from None
    absent = [i for i in cut.ids if i not in by_id]
    if absent:
        raise DownloadError(
            f"{source.name} lacks {len(absent)} of the questions of {cut.name} (first: {absent[0]})"
        )
    rows = []
    for qid in cut.ids:
        row = _ordered(by_id[qid], _INSTANCE_KEYS)
        row["haystack_sessions"] = [
            [_ordered(t, _TURN_KEYS) for t in s] for s in row.get("haystack_sessions", [])
        ]
        rows.append(row)
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _cut(cut: CutFile, folder: Path) -> FileState:
    from ..atomic import write_atomic

    path = folder / cut.name
    if path.exists():
        if sha256_file(path) != cut.sha256:
            _refuse_different(path, cut.sha256)
        return FileState(corpus=cut.corpus, name=cut.name, path=path, state="verified")
    data = cut_text(folder / cut.source, cut).encode("utf-8")
    got = hashlib.sha256(data).hexdigest()
    if got != cut.sha256:
        kept = path.with_name(path.name + ".mismatch")
        write_atomic(kept, lambda tmp: tmp.write_bytes(data))
        raise _mismatch(path, got, cut.sha256, kept)
    write_atomic(path, lambda tmp: tmp.write_bytes(data))
    return FileState(corpus=cut.corpus, name=cut.name, path=path, state="verified", made="cut")
