"""LLM-proposed domain files (``amg catalog propose``): a model writes, the catalog check decides.

Template catalogs bound how far a design scales (a cell can hold no more arcs than the catalog
has domain-value pairs), so a model may propose new domain files. The prompt (rubric
``catalog_domain``) holds the catalog's guide (``catalog/README.md``) and one domain file as the
example. The TOML in the reply is checked with ``validate.catalog.catalog_problems`` together
with the built-in catalog, the ``--catalog`` folders and the files already in the output folder,
and written to ``OUT/NAME.toml`` only when it passes. A file that fails is asked again with its
problems (rubric ``catalog_domain_fix``), up to ``max_attempts``; then it is a failure with its
reasons, and its last reply is kept as ``OUT/rejected/NAME.toml`` with the problems at the end
(outside the folder ``--catalog OUT`` reads). Every attempt is its own cached call, so a re-run
repeats no finished call; proposals are checked one after another, so two in one run cannot
share a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from .. import rubrics
from ..atomic import write_text_atomic
from ..design.bundle import CATALOG_DIR, NamedFile, catalog_files_in
from ..errors import BadInput, MissingApiKey
from ..llm import CallFailed, Deferred, Model, get_model
from ..llm.ref import ModelRef
from ..outputs import can_create, writable
from ..validate.catalog import NAME, catalog_files, catalog_problems

RUBRIC, FIX_RUBRIC, NAMES_RUBRIC = "catalog_domain", "catalog_domain_fix", "catalog_attributes"
EXAMPLE = "meal_kit_service"  # the shortest domain file: the example every prompt shows
MAX_TOKENS = 4096  # a domain file is about 2,000 tokens
NAMES_MAX_TOKENS = 512
SHOWN_PROBLEMS = 30  # problems sent back to the model and printed per failure (all are kept)
PURPOSE = "catalog.propose"
REJECTED = "rejected"
T = TypeVar("T")
_FENCE = re.compile(r"```[ \t]*(?:toml|TOML)?[ \t]*\n(.*?)(?:```|\Z)", re.S)


class Proposal(BaseModel):
    """What became of one attribute: ``written`` to ``path``, ``kept`` (``path`` already holds
    another version, left alone), or ``failed`` with its ``reasons``."""

    model_config = ConfigDict(extra="forbid")
    attribute: str
    status: Literal["written", "kept", "failed"]
    attempts: int = 0
    path: str | None = None
    rejected: str | None = None  # the last rejected reply, kept for review
    reasons: list[str] = []


class ProposeSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    rubric: str
    out: str
    max_attempts: int
    proposals: list[Proposal] = []
    naming_failure: str | None = None  # --count: why fewer attributes than asked were named

    @property
    def failures(self) -> int:
        return sum(p.status == "failed" for p in self.proposals) + bool(self.naming_failure)

    def lines(self) -> list[str]:
        out = []
        if self.naming_failure:
            out.append(f"failed: {self.naming_failure}")
        for p in self.proposals:
            if p.status == "written":
                out.append(f"wrote {p.path} (attempt {p.attempts} of {self.max_attempts})")
            elif p.status == "kept":
                out.append(
                    f"kept {p.path}: it differs from the proposal (an edited copy?); "
                    "remove it to write the proposal"
                )
            else:
                kept = f"; last reply in {p.rejected}" if p.rejected else ""
                out.append(
                    f"failed {p.attribute} after {p.attempts} "
                    f"attempt{'s' if p.attempts != 1 else ''}{kept}:"
                )
                shown = p.reasons[:SHOWN_PROBLEMS]
                out += [f"  {p.attribute}: {r}" for r in shown]
                if len(p.reasons) > len(shown):
                    out.append(
                        f"  {p.attribute}: ... and {len(p.reasons) - len(shown)} more "
                        f"(all of them in {p.rejected})"
                    )
        if not self.proposals:
            return out
        written = sum(p.status == "written" for p in self.proposals)
        failed = sum(p.status == "failed" for p in self.proposals)
        out.append(
            f"{written} written, {failed} failed ({self.model}, rubric {self.rubric})"
            + (
                f"; review them, then `amg catalog check {self.out}` and build with "
                f"--catalog {self.out}"
                if written
                else ""
            )
        )
        return out


class ProposePlan(BaseModel):
    """What ``--dry-run`` counted: first calls only (a re-ask follows a failed check)."""

    model_config = ConfigDict(extra="forbid")
    model: str
    max_attempts: int
    calls: dict[str, int] = {}  # attribute -> calls to make (0: every attempt is cached)
    naming_call: bool = False  # --count: the call that names the attributes
    unnamed: int = 0  # --count: domain calls for attributes not named yet

    def lines(self) -> list[str]:
        n = sum(self.calls.values()) + self.naming_call + self.unnamed
        out = [f"dry run: {n} model call{'s' if n != 1 else ''} to {self.model}"]
        if self.naming_call:
            out.append("  1 call naming the new attributes")
        for name, k in self.calls.items():
            out.append(f"  {name}: " + ("1 call" if k else "no call (answered from the cache)"))
        if self.unnamed:
            out.append(f"  {self.unnamed} domain calls, one per attribute the first call names")
        if self.max_attempts > 1:
            out.append(
                f"  a proposal that fails the catalog check is asked again: up to "
                f"{self.max_attempts - 1} more call{'s' if self.max_attempts > 2 else ''} "
                "each, not counted"
            )
        return out


def check_request(
    model: str | None,
    attributes: Sequence[str] = (),
    count: int | None = None,
    theme: str | None = None,
    out: Path | None = None,
    catalogs: Sequence[Path] = (),
    max_attempts: int = 3,
) -> dict[str, NamedFile]:
    """Refuse what cannot run before anything is made (one line each); the domain files the
    proposals must not clash with (built in and ``catalogs``)."""
    if ModelRef.parse(model).offline:
        raise BadInput(
            "catalog propose needs a model: pass --model provider:model (e.g. "
            "openai:gpt-4o-mini, or openai:NAME --model-base-url URL for a local server)"
        )
    if bool(attributes) == (count is not None):
        raise BadInput(
            "name what to propose: --attribute NAME (repeatable), or --count N with "
            "--theme TEXT, not both"
        )
    if count is not None and not (theme or "").strip():
        raise BadInput("--count needs --theme TEXT (what the new domains are about)")
    if theme is not None and count is None:
        raise BadInput("--theme goes with --count N")
    if count is not None and count < 1:
        raise BadInput(f"--count must be a positive whole number, got {count}")
    if max_attempts < 1:
        raise BadInput(f"--max-attempts must be at least 1, got {max_attempts}")
    if out is None:
        raise BadInput("--out DIR is needed: the folder the proposed domain files are written to")
    can_create(Path(out))
    taken = catalog_files(catalogs)
    seen: set[str] = set()
    for name in attributes:
        if not NAME.fullmatch(name):
            raise BadInput(
                f"--attribute {name!r} must be a snake_case name (e.g. preferred_airline)"
            )
        if name in taken:
            raise BadInput(
                f"--attribute {name}: already a domain ({taken[name].origin}); name a new attribute"
            )
        if name in seen:
            raise BadInput(f"--attribute {name} is given twice")
        seen.add(name)
    return taken


def extract_toml(reply: str) -> str:
    """The TOML in a reply: its first fenced block, else the whole reply."""
    m = _FENCE.search(reply)
    text = m.group(1) if m else reply
    return text.strip() + "\n" if text.strip() else ""


@dataclass
class _Attempts:
    """How asking for one file ended: ``planned`` (a plan: the next call is not cached), else
    ``passed`` at ``attempt`` or not, with the last ``problems`` and reply ``text``."""

    attempt: int
    problems: list[str]
    text: str
    passed: bool = False
    planned: bool = False


class Proposer:
    """Asks ``model`` for domain files and checks them (``propose``), or counts the calls that
    would take (``plan``); one instance per command run."""

    def __init__(
        self,
        model: Model,
        out: Path,
        taken: dict[str, NamedFile],
        max_attempts: int = 3,
    ):
        self.model, self.out, self.taken = model, Path(out), taken
        self.max_attempts = max_attempts
        self.rubric = rubrics.load(RUBRIC)
        self.fix = rubrics.load(FIX_RUBRIC)
        self.names_rubric = rubrics.load(NAMES_RUBRIC)
        self.domains = ", ".join(sorted(taken))
        self.guide = (CATALOG_DIR / "README.md").read_text(encoding="utf-8").strip()
        self.example = taken.get(EXAMPLE) or next(iter(taken.values()))

    # -- prompts ----------------------------------------------------------------------------------
    def prompt(self, attribute: str) -> str:
        return self.rubric.render(
            attribute=attribute,
            rules=self.guide,
            domains=self.domains,
            example_name=self.example.name.removesuffix(".toml"),
            example=self.example.text().strip(),
        )

    def reask(self, attribute: str, problems: list[str], reply: str) -> str:
        shown = problems[:SHOWN_PROBLEMS]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more")
        return self.prompt(attribute) + self.fix.render(
            problems="\n".join(f"- {p}" for p in shown), reply=reply.strip() or "(empty)"
        )

    def _ask(self, prompt: str, seed_key: str, max_tokens: int, schema=None, planning=False):
        """The reply; ``planning``: None instead when the call would be made (counted on the
        model's planned tally), the cached reply when it would not."""
        if planning and self.model.plan(
            prompt, schema=schema, seed_key=seed_key, max_tokens=max_tokens
        ):
            return None
        return self.model.complete(
            prompt,
            schema=schema,
            temperature=0.0,
            purpose=PURPOSE,
            seed_key=seed_key,
            max_tokens=max_tokens,
        )

    # -- one attribute -----------------------------------------------------------------------------
    def problems(self, attribute: str, text: str) -> list[str]:
        """The catalog check of ``text`` as ``attribute``'s file, beside the catalog and the
        other files already in the output folder (its own problems only, as ``key: message``)."""
        origin = f"{attribute}.toml"
        files = dict(self.taken)
        if self.out.is_dir():
            files.update(
                {
                    k: v
                    for k, v in catalog_files_in(self.out, str(self.out)).items()
                    if k != attribute
                }
            )
        files[attribute] = NamedFile(origin, text.encode("utf-8"))
        return [
            f"{p.key + ': ' if p.key else ''}{p.message}"
            for p in catalog_problems(files)
            if p.file == origin
        ]

    def propose(self, attribute: str) -> Proposal:
        """Ask, check, re-ask; write what passes."""
        done = self._attempts(attribute)
        if done.passed:
            return self._write(attribute, done.text, done.attempt)
        return self._failed(attribute, done.attempt, done.problems, done.text)

    def plan(self, attribute: str) -> int:
        """1 when ``propose`` would call the model (its first attempt the cache cannot answer,
        counted on the model's planned tally; re-asks after it are not foreseen), 0 when every
        attempt it would make is answered from the cache."""
        return int(self._attempts(attribute, planning=True).planned)

    def _attempts(self, attribute: str, planning: bool = False) -> _Attempts:
        prompt = self.prompt(attribute)
        problems: list[str] = []
        text = ""
        for attempt in range(1, self.max_attempts + 1):
            seed_key = f"domain:{attribute}" + (f":attempt{attempt}" if attempt > 1 else "")
            try:
                resp = self._ask(prompt, seed_key, MAX_TOKENS, planning=planning)
            except CallFailed as e:
                return _Attempts(attempt, [f"the model call failed: {e}"], text)
            if resp is None:
                return _Attempts(attempt, problems, text, planned=True)
            text = extract_toml(resp.text)
            problems = self.problems(attribute, text) if text else ["the reply is empty"]
            if (
                problems
                and problems[0].startswith("TOML syntax error")
                and not _FENCE.search(resp.text)
            ):
                problems[0] = (
                    f"no ```toml block in the reply, and the whole reply read as TOML "
                    f"gives: {problems[0]}"
                )
            if not problems:
                return _Attempts(attempt, problems, text, passed=True)
            prompt = self.reask(attribute, problems, text or resp.text)
        return _Attempts(self.max_attempts, problems, text)

    def _write(self, attribute: str, text: str, attempt: int) -> Proposal:
        path = writable(self.out) / f"{attribute}.toml"
        header = (
            f"# {attribute}: proposed by {self.model.display} (rubric {self.rubric.ref}); "
            "passed `amg catalog check`. Review it before use.\n"
        )
        body = header + text
        status: Literal["written", "kept"] = "written"
        if not path.exists() or path.read_text(encoding="utf-8") == body:
            write_text_atomic(path, body)
        else:
            status = "kept"
        (self.out / REJECTED / f"{attribute}.toml").unlink(missing_ok=True)
        return Proposal(attribute=attribute, status=status, attempts=attempt, path=str(path))

    def _failed(self, attribute: str, attempts: int, reasons: list[str], text: str) -> Proposal:
        rejected = None
        if text.strip():
            folder = writable(self.out / REJECTED)
            notes = "".join(f"# {r}\n" for r in reasons)
            rejected = write_text_atomic(
                folder / f"{attribute}.toml",
                f"{text.rstrip()}\n\n# Rejected by the catalog check after {attempts} attempt"
                f"{'s' if attempts != 1 else ''} ({self.model.display}):\n{notes}",
            )
        return Proposal(
            attribute=attribute,
            status="failed",
            attempts=attempts,
            rejected=str(rejected) if rejected else None,
            reasons=reasons,
        )

    # -- --count --theme ---------------------------------------------------------------------------
    def name_attributes(
        self, count: int, theme: str, planning: bool = False
    ) -> tuple[list[str] | None, str | None]:
        """Up to ``count`` new attribute names on ``theme``, and why fewer than ``count``, if
        so. ``planning``: None for the names when the naming call would be made (counted on the
        model's planned tally)."""
        base = self.names_rubric.render(count=str(count), theme=theme.strip(), domains=self.domains)
        prompt, names, problems = base, [], []
        for attempt in range(1, self.max_attempts + 1):
            seed_key = "names" + (f":attempt{attempt}" if attempt > 1 else "")
            try:
                resp = self._ask(
                    prompt, seed_key, NAMES_MAX_TOKENS, schema=AttributeNames, planning=planning
                )
            except CallFailed as e:
                problems = [f"the model call failed: {e}"]
                break
            if resp is None:
                return None, None
            names, problems = usable_names(resp.parsed.attributes, set(self.taken), count)
            if len(names) >= count:
                return names[:count], None
            prompt = (
                f"{base}\n\nYOUR PREVIOUS ANSWER WAS NOT ACCEPTED: "
                f"{'; '.join(problems)}; {len(names)} usable of the {count} asked. Answer "
                f"again with {count} usable names.\n"
            )
        why = (
            f"asked {self.model.display} for {count} new attributes on {theme.strip()!r}, "
            f"got {len(names)} usable" + (f": {'; '.join(problems)}" if problems else "")
        )
        return names[:count], why


class AttributeNames(BaseModel):
    model_config = ConfigDict(extra="ignore")
    attributes: list[str]


def usable_names(raw: list[str], taken: set[str], count: int) -> tuple[list[str], list[str]]:
    """The proposed names that can be new domains, and why the others cannot."""
    names, problems = [], []
    for r in raw:
        name = re.sub(r"[^a-z0-9]+", "_", str(r).lower()).strip("_")
        if not NAME.fullmatch(name) or name == "snake_case_name":
            problems.append(f"{r!r} is not a snake_case name")
        elif name in taken:
            problems.append(f"{name} is already a domain")
        elif name in names:
            problems.append(f"{name} is named twice")
        else:
            names.append(name)
    if not raw:
        problems.append("the list is empty")
    return names, problems


def _proposer(
    ws,
    model: str | ModelRef,
    out: Path,
    attributes: Sequence[str],
    count: int | None,
    theme: str | None,
    catalogs: Sequence[Path],
    max_attempts: int,
    chosen: Model | None,
) -> Proposer:
    """The request checked and the model made (one line for what cannot run)."""
    ref = ModelRef.parse(model)
    taken = check_request(ref.spec, attributes, count, theme, out, catalogs, max_attempts)
    try:
        m = chosen or get_model(ref, workspace=ws)
    except MissingApiKey as e:
        raise BadInput(
            f"No API key for {ref.spec}: set {e.env_var} (catalog propose needs a model)"
        ) from None
    return Proposer(m, Path(out), taken, max_attempts=max_attempts)


def _each(names: Sequence[str], fn: Callable[[str], T]) -> dict[str, T]:
    """``fn`` of each name; under ``--batch`` every name whose call is deferred is skipped for
    this pass, and ``Deferred`` is raised once all of them have been tried."""
    results: dict[str, T] = {}
    deferred = False
    for name in names:
        try:
            results[name] = fn(name)
        except Deferred:
            deferred = True
    if deferred:
        raise Deferred()
    return results


def propose_domains(
    ws,
    model: str | ModelRef,
    *,
    out: Path,
    attributes: Sequence[str] = (),
    count: int | None = None,
    theme: str | None = None,
    catalogs: Sequence[Path] = (),
    max_attempts: int = 3,
    chosen: Model | None = None,
    echo: Callable[[str], None] | None = None,
) -> ProposeSummary:
    """Propose a domain file for each of ``attributes`` (or ``count`` new ones on ``theme``,
    named by the model first), check each, write those that pass to ``out``. ``model``: a spec
    or a ``ModelRef`` (its base URL and options, ``timeout``, ``max_tokens`` ..., go to the model).
    What it would ask, counted without sending or writing: ``plan_proposals``.

    Under ``--batch`` (``llm.batch.run_batched``) every attribute's next call goes into one
    batch: an attribute whose call is deferred is skipped for this pass, and ``Deferred`` is
    raised once all of them have been tried."""
    p = _proposer(ws, model, out, attributes, count, theme, catalogs, max_attempts, chosen)
    names, naming_failure = list(attributes), None
    if count is not None:
        found, naming_failure = p.name_attributes(count, theme or "")
        names = found or []
        if echo and names:
            echo(f"attributes named by {p.model.display}: {', '.join(names)}")
    results = _each(names, p.propose)
    return ProposeSummary(
        model=p.model.display,
        rubric=p.rubric.ref,
        out=str(out),
        max_attempts=max_attempts,
        naming_failure=naming_failure,
        proposals=list(results.values()),
    )


def plan_proposals(
    ws,
    model: str | ModelRef,
    *,
    out: Path,
    attributes: Sequence[str] = (),
    count: int | None = None,
    theme: str | None = None,
    catalogs: Sequence[Path] = (),
    max_attempts: int = 3,
    chosen: Model | None = None,
    echo: Callable[[str], None] | None = None,
) -> ProposePlan:
    """What ``propose_domains`` with the same arguments would ask (``amg catalog propose
    --dry-run``): each attribute's first call counted on the model's planned tally (``model.
    planned``; cached ones not counted, a re-ask after a failed check not foreseen). With
    ``count``, an uncached naming call is counted with ``count`` domain calls whose prompts
    depend on its answer. Nothing is sent or written (``out`` is read: the files there are part
    of the check). Run it inside ``run_context(dry_run=True)`` so that no API key is needed."""
    p = _proposer(ws, model, out, attributes, count, theme, catalogs, max_attempts, chosen)
    m, names = p.model, list(attributes)
    if count is not None:
        found, _ = p.name_attributes(count, theme or "", planning=True)
        if found is None:  # the naming call is not cached
            m.plan_unknown(count)
            return ProposePlan(
                model=m.display, max_attempts=max_attempts, naming_call=True, unnamed=count
            )
        names = found
        if echo and names:
            echo(f"attributes named by {m.display}: {', '.join(names)}")
    return ProposePlan(model=m.display, max_attempts=max_attempts, calls=_each(names, p.plan))
