"""Membership canaries: planted only in the generator's adaptation text, half kept out,
reproducible from the site's seed, never in the gold split, the annotator's data or a bundle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from protocol import Corpus
from shared.corpus_io import read_corpus, write_corpus
from site_agent.adapt.data import training_texts
from site_agent.audit.settings import AuditSettings
from site_agent.canaries.membership import (
    is_membership_canary,
    load_membership_canaries,
    make_membership_canaries,
    secret_vocabulary,
)
from site_agent.canaries.settings import CanarySettings
from site_agent.generate.modes import mode_for
from site_agent.pseudonymise.settings import PseudonymiseSettings
from site_agent.stages import pseudonymise as pseudonymise_stage
from tests.site_agent.audit.builders import random_corpus

TRAIN = random_corpus(5, 12, "note-", words=40)
SETTINGS = CanarySettings(count=40, seed=7, prefix_words=6)


def test_members_are_appended_and_non_members_are_nowhere() -> None:
    planted, record = make_membership_canaries(TRAIN, SETTINGS)
    assert len(record.members) == len(record.non_members) == 20
    assert planted.documents[: len(TRAIN)] == TRAIN.documents  # the notes are untouched
    added = planted.documents[len(TRAIN) :]
    assert [d.id for d in added] == [c.id for c in record.members]
    assert all(is_membership_canary(d) for d in added)
    text = "\n".join(
        training_texts(planted, mode_for("annotate").render)
    )  # what the generator learns from
    assert all(c.secret in text and c.text in text for c in record.members)
    assert not any(c.secret in text or c.identifier in text for c in record.non_members)


def test_a_canary_is_an_opening_a_surrogate_name_and_a_secret() -> None:
    planted, record = make_membership_canaries(TRAIN, SETTINGS)
    canary = record.members[0]
    doc = next(d for d in planted.documents if d.id == canary.id)
    assert doc.text.endswith(f"{canary.identifier}: {canary.secret}.")
    assert any(
        d.text.startswith(doc.text.split(canary.identifier)[0].strip()) for d in TRAIN.documents
    )
    names = [doc.surface(s) for s in doc.spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"]
    assert canary.identifier in names  # the surrogate name is annotated like a real one
    vocabulary = set(record.vocabulary)
    assert all(w in vocabulary for w in canary.secret.split())
    assert len(canary.secret.split()) == SETTINGS.secret_words
    assert len({c.secret for c in record.canaries}) == len(record.canaries)


def test_secret_words_never_come_from_gold_spans() -> None:
    vocabulary = set(secret_vocabulary(TRAIN, 1))
    span_words = {w.lower() for d in TRAIN.documents for s in d.spans for w in d.surface(s).split()}
    assert vocabulary and not vocabulary & span_words
    assert all(4 <= len(w) <= 14 and w.isalpha() and w == w.lower() for w in vocabulary)


def test_the_same_seed_makes_the_same_canaries_and_another_seed_others() -> None:
    first, record = make_membership_canaries(TRAIN, SETTINGS)
    again, same = make_membership_canaries(TRAIN, SETTINGS)
    assert first == again and same.canaries == record.canaries
    _, other = make_membership_canaries(TRAIN, SETTINGS.model_copy(update={"seed": 8}))
    assert {c.secret for c in other.canaries}.isdisjoint({c.secret for c in record.canaries})


def test_an_unset_seed_is_drawn_and_recorded_so_the_site_can_make_them_again() -> None:
    unset = SETTINGS.model_copy(update={"seed": None})
    _, first = make_membership_canaries(TRAIN, unset)
    _, second = make_membership_canaries(TRAIN, unset)
    assert first.seed != second.seed
    _, replay = make_membership_canaries(TRAIN, unset.model_copy(update={"seed": first.seed}))
    assert replay.canaries == first.canaries


def test_pseudonymise_stage_plants_only_in_the_generator_text(tmp_path: Path) -> None:
    split = tmp_path / "split.train.jsonl"
    write_corpus(TRAIN, split)
    before = split.read_bytes()
    out = tmp_path / "pseudonymise"
    out.mkdir()
    made = pseudonymise_stage.pseudonymise_training_split(
        split, PseudonymiseSettings(), CanarySettings(identifiers=2, count=10, seed=1), out
    )
    assert split.read_bytes() == before  # the gold split (the annotator's data) is untouched
    generator_text = read_corpus(made.corpus)
    record = load_membership_canaries(made.membership_canaries)
    assert record is not None and record.planted_corpus_sha256
    canary_ids = {d.id for d in generator_text.documents if is_membership_canary(d)}
    assert canary_ids == {c.id for c in record.members}
    gold = read_corpus(split)
    assert not any(c.secret in d.text for c in record.canaries for d in gold.documents)
    assert json.loads(made.canaries.read_text())["canaries"]  # identifier canaries still work


def test_no_canaries_leaves_an_empty_record(tmp_path: Path) -> None:
    split = tmp_path / "train.jsonl"
    write_corpus(TRAIN, split)
    made = pseudonymise_stage.pseudonymise_training_split(
        split, PseudonymiseSettings(), 0, tmp_path
    )
    assert made.membership_canaries.read_text() == ""
    assert load_membership_canaries(made.membership_canaries) is None
    assert len(read_corpus(made.corpus)) == len(TRAIN)


def test_an_integer_canaries_setting_still_means_identifier_canaries() -> None:
    settings = AuditSettings.model_validate({"canaries": 8})
    assert settings.canaries == CanarySettings(identifiers=8)
    table = AuditSettings.model_validate({"canaries": {"count": 1000}})
    assert table.canaries.count == 1000 and table.canaries.identifiers == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"count": 1}, "no group to compare"),
        ({"member_fraction": 1.0}, "less than 1"),
        ({"secret_words": 1}, "greater than or equal to 2"),
        ({"counts": 5}, "Extra inputs"),
    ],
)
def test_bad_canary_settings_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CanarySettings.model_validate(fields)


def test_a_corpus_too_small_for_secrets_is_refused_with_the_fix() -> None:
    tiny = Corpus(documents=TRAIN.documents[:1])
    from shared.errors import UsageError

    with pytest.raises(UsageError, match="min_document_frequency"):
        make_membership_canaries(tiny, CanarySettings(count=4, seed=1))


def test_no_canary_record_secret_or_name_reaches_the_signed_bundle(tmp_path: Path) -> None:
    """A passing audit that used membership canaries, exported with the gate bound to the
    record: the bundle holds neither the record nor any canary's secret or name."""
    from shared.signing import generate_signing_key
    from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
    from site_agent.audit.policy import AuditPolicy
    from site_agent.export.bundle import BundleRequest, build_bundle
    from site_agent.export.gate import AuditBinding
    from site_agent.export.settings import ExportSettings
    from tests.bundles import REAL, synthetic_corpus

    _, record = make_membership_canaries(
        REAL, CanarySettings(count=40, seed=2, min_document_frequency=2)
    )
    private = tmp_path / "membership_canaries.private.json"
    private.write_text(record.model_dump_json())
    synthetic = synthetic_corpus(3)
    write_corpus(REAL, tmp_path / "train.jsonl")
    write_corpus(synthetic, tmp_path / "synthetic.jsonl")
    report = run_audit(
        REAL, synthetic, AuditPolicy(), tmp_path / "audit", membership_canaries=record
    )
    assert report.passed and "membership" in report.measures, report.failed_rules
    generate_signing_key(tmp_path / "k.pem", tmp_path / "k.pub.pem")
    bundle, _ = build_bundle(
        BundleRequest(
            site_id="h1",
            corpus_path=tmp_path / "audit" / AUDITED_CORPUS,
            audit_report_path=tmp_path / "audit" / "audit.json",
            signing_key_path=tmp_path / "k.pem",
            outbox=tmp_path / "outbox",
            config_digest="test",
            base_models={"generator": "tiny"},
            binding=AuditBinding(
                real=tmp_path / "train.jsonl",
                synthetic=tmp_path / "synthetic.jsonl",
                policy={},
                membership_canaries=private,
            ),
            quality=ExportSettings(accept_degenerate="test corpus of three notes"),
        )
    )
    files = [p for p in bundle.rglob("*") if p.is_file()]
    assert files and not [p for p in files if "canar" in p.name]
    shipped = b"".join(p.read_bytes() for p in files)
    for canary in record.canaries:
        assert canary.secret.encode() not in shipped
        assert canary.identifier.encode() not in shipped


def test_planted_canaries_do_not_enlarge_the_synthetic_corpus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The amount is a multiple of the training notes; canary notes are not training notes."""
    from site_agent.generate.modes import SeedNotes
    from site_agent.generate.notes import generate_notes
    from site_agent.generate.settings import GenerationSettings

    class Planned(Exception):
        pass

    sizes: list[int] = []

    def plan(validation: Corpus, n_train: int, *rest: object) -> None:
        sizes.append(n_train)
        raise Planned

    monkeypatch.setattr("site_agent.generate.notes.plan_for_model", plan)
    monkeypatch.setattr("site_agent.models.resolve_model", lambda name, allow_fetch: name)
    planted, record = make_membership_canaries(TRAIN, SETTINGS)
    assert len(planted) == len(TRAIN) + len(record.members)
    with pytest.raises(Planned):
        generate_notes(
            tmp_path,
            TRAIN,
            SeedNotes(planted),
            "generator",
            GenerationSettings(),
            mode_for("annotate"),
            tmp_path,
        )
    assert sizes == [len(TRAIN)]
