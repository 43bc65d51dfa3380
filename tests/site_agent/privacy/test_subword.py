"""The generator's own tokens: loaded from a folder, PII flags by offsets, identifying n-grams."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from protocol import Document
from shared.errors import ConfigError
from site_agent.audit.policy import FilterSettings
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.privacy.subword import load_tokenizer, token_stream
from tests.site_agent.audit.builders import random_corpus
from tests.tiny_models import tiny_tokenizer

REAL = random_corpus(31, 10, "r", words=40)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tok")
    tiny_tokenizer([d.text for d in REAL.documents], "causal").save_pretrained(path)
    return path


def test_token_pii_flags_follow_offsets(tokenizer_dir: Path) -> None:
    tokenizer = load_tokenizer(tokenizer_dir)
    stream = token_stream(REAL.documents, tokenizer, with_pii=True)
    assert stream.in_pii is not None
    for d, doc in enumerate(REAL.documents[:3]):
        encoding = tokenizer(doc.text, add_special_tokens=False, return_offsets_mapping=True)
        expected = [
            any(s < sp.end and sp.start < e for sp in doc.spans) and e > s
            for s, e in encoding["offset_mapping"]
        ]
        lo, hi = stream.doc_offsets[d], stream.doc_offsets[d + 1]
        assert stream.in_pii[lo:hi].tolist() == expected
        assert len(np.unique(stream.hashes[lo:hi])) == len(set(encoding["input_ids"]))


def test_missing_tokenizer_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load a tokenizer"):
        load_tokenizer(tmp_path / "absent")


def test_token_span_shares_equal_the_reference(tokenizer_dir: Path) -> None:
    from site_agent.audit.ngram_recall import docs_with_sensitive_ngrams
    from site_agent.privacy import reference
    from site_agent.privacy.grams import build_gram_table, identifying_columns

    tokenizer = load_tokenizer(tokenizer_dir)

    def tokens_of(text: str) -> list[tuple[str, int, int]]:
        encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        pairs = zip(encoding["input_ids"], encoding["offset_mapping"], strict=True)
        return [(str(i), s, e) for i, (s, e) in pairs]

    real = REAL.documents
    synth = [Document(id=f"c{d.id}", text=d.text[k:]) for d in real for k in (0, 7)]
    stream = token_stream(real, tokenizer, with_pii=True)
    table = build_gram_table(stream, token_stream(synth, tokenizer), 5)
    for share in (0.3, 0.5, 1.0):
        flagged = docs_with_sensitive_ngrams(table, identifying_columns(table, stream, share))
        wanted = reference.identifying_ngrams(real, 5, share, tokens_of)
        expected = [
            bool(wanted & set(reference.ngrams([w for w, _, _ in tokens_of(d.text)], 5)))
            for d in synth
        ]
        assert flagged.tolist() == expected, share
        # the index the template filler checks its notes against flags the same notes, in
        # tokens (here) or in words (the index without a tokenizer; oracle-tested apart)
        filters = FilterSettings(sensitive_ngram_n=5, sensitive_ngram_min_share=share)
        hits = IdentifyingIndex.build(real, filters, tokenizer).hits(synth) > 0
        words_only = IdentifyingIndex.build(real, filters).hits(synth) > 0
        assert hits.tolist() == [
            e or w for e, w in zip(expected, words_only.tolist(), strict=True)
        ], share
