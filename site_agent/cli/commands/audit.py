"""``site-agent audit``: the privacy audit that gates export, and canary planting.

site-agent audit --real TRAIN --synthetic SYNTH [--policy P] --out DIR
    [--membership-canaries pseudonymise/membership_canaries.private.json]
site-agent audit --real TRAIN --plant-canaries K --out DIR
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.markup import escape

from protocol.audit import AUDIT_JSON, AuditReport, CanarySet, MembershipCanarySet
from shared.atomic import atomic_write_text, written_together
from shared.corpus_io import read_corpus, write_corpus
from shared.corpus_io.sidecar import file_sidecar
from shared.errors import QualityGateError, UsageError
from shared.text_files import read_text
from shared.validation_messages import validation_lines
from site_agent.audit.settings import DEFAULT_CHUNK_DOCUMENTS

CANARIES_JSON = "canaries.json"


def read_extra_surfaces(path: Path) -> list[str | tuple[str, str]]:
    """One surface per line, or ``LABEL<TAB>surface``; blank lines are skipped."""
    if not path.exists():
        raise UsageError(f"{path}: no such file; fix: check the --extra-pii path")
    out: list[str | tuple[str, str]] = []
    for line in read_text(path, what="--extra-pii file", error=UsageError).splitlines():
        if not line.strip():
            continue
        label, tab, surface = line.partition("\t")
        out.append((label, surface) if tab else line)
    return out


def plant(real: Path, count: int, out: Path, seed: int, locale: str, fmt: str | None) -> None:
    from site_agent.canaries.identifiers import plant_canaries

    planted, record = plant_canaries(read_corpus(real, fmt), count, seed=seed, locale=locale)
    target = out / f"{real.stem}.canaries.jsonl"
    write_corpus(planted, target, "jsonl")
    atomic_write_text(out / CANARIES_JSON, record.model_dump_json(indent=2) + "\n")
    Console().print(
        f"planted {len(record.canaries)} canaries: train on [bold]{escape(str(target))}[/], "
        f"then audit with --real {escape(str(target))} "
        f"--canaries {escape(str(out / CANARIES_JSON))}"
    )


def summarise(report: AuditReport, out: Path) -> None:
    console = Console()
    for rule in report.rules:
        mark = "[green]pass[/]" if rule.passed else "[bold red]FAIL[/]"
        console.print(f"  {mark} {escape(f'{rule.name}: {rule.explanation}')}", highlight=False)
    console.print(
        f"kept {report.n_kept_documents}/{report.n_input_documents} documents; "
        f"dropped {report.dropped_by_reason}; report: {out / 'audit.md'}",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    def audit(
        real: Annotated[Path, typer.Option(help="The real training corpus (gold PII spans).")],
        out: Annotated[Path, typer.Option(help="Folder for audit.json, audit.md and the corpus.")],
        synthetic: Annotated[
            Path | None, typer.Option(help="The synthetic corpus to audit.")
        ] = None,
        policy: Annotated[Path | None, typer.Option(help="Audit policy (TOML or JSON).")] = None,
        tokenizer: Annotated[
            Path | None, typer.Option(help="Generator's tokenizer folder (token n-grams).")
        ] = None,
        extra_pii: Annotated[
            Path | None,
            typer.Option(help="Extra PII strings, one per line (e.g. originals and surrogates)."),
        ] = None,
        canaries: Annotated[
            Path | None, typer.Option(help="canaries.json written by --plant-canaries.")
        ] = None,
        membership_canaries: Annotated[
            Path | None,
            typer.Option(
                help="membership_canaries.private.json of the pseudonymise stage: attack them "
                "from the synthetic corpus alone."
            ),
        ] = None,
        plant_canaries: Annotated[
            int | None,
            typer.Option(help="Write a copy of --real with K planted canaries, and stop."),
        ] = None,
        seed: Annotated[int, typer.Option(help="Seed for canary planting.")] = 0,
        locale: Annotated[str, typer.Option(help="Faker locale for canaries.")] = "es_ES",
        fmt: Annotated[str | None, typer.Option("--format", help="Corpus format.")] = None,
        chunk_documents: Annotated[
            int,
            typer.Option(
                min=1,
                help="Synthetic notes measured at a time (memory, not results, depends on it; "
                "a JSONL corpus is never read whole).",
            ),
        ] = DEFAULT_CHUNK_DOCUMENTS,
    ) -> None:
        """Measure privacy leakage, drop risky documents, write the verdict that gates export."""
        if plant_canaries is not None:
            plant(real, plant_canaries, out, seed, locale, fmt)
            return
        if synthetic is None:
            raise UsageError("--synthetic is required (unless --plant-canaries is given)")
        from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
        from site_agent.audit.policy import load_policy
        from site_agent.audit.report import AUDIT_MD

        audited = out / AUDITED_CORPUS  # never left without its audit.json (a full disk)
        with written_together(audited, file_sidecar(audited), out / AUDIT_JSON, out / AUDIT_MD):
            report = run_audit(
                read_corpus(real, fmt),
                synthetic,
                load_policy(policy),
                out,
                extra_pii_surfaces=read_extra_surfaces(extra_pii) if extra_pii else (),
                canaries=_read_canaries(canaries) if canaries else None,
                membership_canaries=_read_membership(membership_canaries)
                if membership_canaries
                else None,
                tokenizer=tokenizer,
                chunk_documents=chunk_documents,
                synthetic_format=fmt,
            )
        summarise(report, out)
        if not report.passed:
            raise QualityGateError(
                f"the audit failed rule(s) {', '.join(report.failed_rules)}; the export stage "
                f"will refuse {out / report.audited_corpus_file}; see {out / 'audit.md'}"
            )


RecordT = TypeVar("RecordT", bound=BaseModel)


def _read_record(path: Path, model: type[RecordT], what: str, fix: str, hint: str = "") -> RecordT:
    """A site-private JSON record the command was pointed at, or a usage error naming it."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file; {fix}")
    try:
        return model.model_validate_json(read_text(path, what=what, error=UsageError))
    except ValidationError as exc:
        raise UsageError(
            f"{path}: not a {what}{hint}; {fix}", problems=validation_lines(exc)
        ) from None


def _read_canaries(path: Path) -> CanarySet:
    fix = "fix: pass the canaries.json of --plant-canaries"
    return _read_record(path, CanarySet, "canaries file", fix)


def _read_membership(path: Path) -> MembershipCanarySet:
    fix = "fix: pass the membership_canaries.private.json of the pseudonymise stage"
    hint = " (an empty file means none were planted)"
    return _read_record(path, MembershipCanarySet, "membership canaries file", fix, hint)
