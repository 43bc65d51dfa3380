"""End to end on a real (tiny) generator: plant membership canaries in its adaptation text,
overfit it on purpose, sample a synthetic corpus from it, and audit that corpus alone.

The memorising generator writes planted secrets back: the attack's AUC is near 1 and the gate
fails. The same generator adapted on the notes without canaries never saw a member, and the
attack on what it writes is at chance.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from protocol import Corpus, Document
from protocol.audit import AuditReport, MembershipCanarySet
from site_agent.adapt.data import collate, tokenise_documents, training_texts
from site_agent.audit.corpus_audit import run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.canaries.membership import make_membership_canaries
from site_agent.canaries.settings import CanarySettings
from site_agent.generate.modes import mode_for
from tests.site_agent.audit.builders import random_corpus

pytestmark = pytest.mark.slow

TRAIN = random_corpus(21, 8, "note-", words=12)
CANARIES = CanarySettings(
    count=40, seed=5, prefix_words=0, secret_words=4, min_document_frequency=2
)


def overfit_and_sample(texts: Sequence[str], folder: Path, samples: int = 60) -> Corpus:
    """A tiny causal LM trained from scratch on ``texts`` far past memorisation, then sampled
    from its start token (nucleus-free sampling, temperature 1)."""
    import torch

    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide model: more threads only wait on each other
    try:
        return _fit_and_sample(texts, folder, samples)
    finally:
        torch.set_num_threads(threads)


def _fit_and_sample(texts: Sequence[str], folder: Path, samples: int) -> Corpus:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from site_agent.models.tiny import tiny_causal_lm

    path = tiny_causal_lm(folder, texts, hidden=64)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    batch = collate(tokenise_documents(texts, tokenizer, 128), tokenizer.pad_token_id)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(300):
        model(**batch).loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.eval()
    start = torch.full((samples, 1), tokenizer.bos_token_id)
    with torch.no_grad():
        out = model.generate(
            start,
            attention_mask=torch.ones_like(start),
            do_sample=True,
            max_new_tokens=60,
            pad_token_id=tokenizer.pad_token_id,
        )
    texts_out = tokenizer.batch_decode(out, skip_special_tokens=True)
    return Corpus(documents=tuple(Document(id=f"g{i}", text=t) for i, t in enumerate(texts_out)))


@pytest.fixture(scope="module")
def planted() -> tuple[Corpus, MembershipCanarySet]:
    return make_membership_canaries(TRAIN, CANARIES)


@pytest.fixture(scope="module")
def memorising(
    planted: tuple[Corpus, MembershipCanarySet], tmp_path_factory: pytest.TempPathFactory
) -> AuditReport:
    adaptation_text = training_texts(
        planted[0], mode_for("annotate").render
    )  # notes + member canaries
    folder = tmp_path_factory.mktemp("memorising")
    synthetic = overfit_and_sample(adaptation_text, folder / "model")
    return run_audit(
        TRAIN, synthetic, AuditPolicy(), folder / "audit", membership_canaries=planted[1]
    )


@pytest.fixture(scope="module")
def clean(
    planted: tuple[Corpus, MembershipCanarySet], tmp_path_factory: pytest.TempPathFactory
) -> AuditReport:
    folder = tmp_path_factory.mktemp("clean")
    synthetic = overfit_and_sample(
        training_texts(TRAIN, mode_for("annotate").render), folder / "model"
    )
    return run_audit(
        TRAIN, synthetic, AuditPolicy(), folder / "audit", membership_canaries=planted[1]
    )


def test_an_overfit_generator_gives_its_canaries_away_and_the_gate_fails(
    memorising: AuditReport,
) -> None:
    figures = memorising.measures["membership"]["before"]
    assert figures["auc"] > 0.9 and figures["auc_ci_low"] > 0.75
    assert figures["members_reproduced"] >= 5 and figures["non_members_reproduced"] == 0
    assert figures["tpr_at_1pct_fpr"] > 0.3
    assert figures["exposure"]["members_mean"] > figures["exposure"]["non_members_mean"] + 3
    assert {"membership_auc", "membership_secrets_reproduced"} <= set(memorising.failed_rules)
    assert not memorising.passed


def test_a_generator_that_never_saw_the_canaries_leaves_the_attack_at_chance(
    clean: AuditReport,
) -> None:
    for stage in ("before", "after"):
        figures = clean.measures["membership"][stage]
        assert figures["secrets_reproduced"] == 0
        for attack in figures["attacks"].values():
            assert attack["auc_ci_low"] <= 0.5 <= attack["auc_ci_high"]
    rules = {r.name: r for r in clean.rules}
    assert rules["membership_secrets_reproduced"].passed
