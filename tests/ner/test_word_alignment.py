"""SentencePiece-style tokenizers are split at word borders, so gold tags survive a round trip.

The oracle: encode gold spans as token labels, decode those labels as if they were predictions,
and compare with the gold spans. With tokens straddling word borders (``▁2001,`` or ``:41``)
this round trip loses spans even though every "prediction" is right.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from ner.backbone import WORD_SPLIT, align_to_words, load_fast_tokenizer
from protocol import Corpus, Document, Span
from shared.ner_tokens import split_words
from site_agent.models.tiny import tiny_tokenizer
from tests.ner.conftest import gold_round_trip

TEXT = "Ingresa el 12/03/2001, CP:41001. Dra. Ana Ruiz, Sevilla."
SPANS = (
    Span(start=11, end=21, label="FECHAS"),
    Span(start=26, end=31, label="TERRITORIO"),
    Span(start=38, end=46, label="NOMBRE"),
    Span(start=48, end=55, label="TERRITORIO"),
)


def metaspace_tokenizer() -> PreTrainedTokenizerFast:
    """A Unigram tokenizer like XLM-R's whose vocabulary prefers pieces across word borders."""
    pieces = ["<pad>", "<unk>", "<s>", "</s>"]
    merged = ["▁12/03/2001,", ":41", "001.", "▁Dra.", "▁Ruiz,", "▁Sevilla."]
    singles = sorted(set("".join(TEXT.split())) | {"▁"})
    words = ["▁Ingresa", "▁el", "▁CP", "▁Ana", "▁12", "03", "2001", "41", "001", "▁Dra", "▁Ruiz"]
    vocab = [(p, 0.0) for p in pieces]
    vocab += [(p, -1.0) for p in merged] + [(p, -2.0) for p in words]
    vocab += [(p, -8.0) for p in singles if p not in dict(vocab)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=1, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<s>"
    )


def crossing_tokens(tokenizer: PreTrainedTokenizerFast, text: str) -> list[str]:
    """Tokens whose characters belong to more than one word of ``shared.ner_tokens``."""
    words = split_words(text)
    offsets = tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
    return [
        text[a:b]
        for a, b in offsets
        if b > a and sum(1 for ws, we in words if ws < b and a < we) > 1
    ]


def round_trip(tokenizer: PreTrainedTokenizerFast, corpus: Corpus) -> list[list[Span]]:
    return [list(d.spans) for d in gold_round_trip(tokenizer, corpus).documents]


def test_metaspace_pieces_straddle_words_and_lose_spans_without_alignment() -> None:
    tokenizer = metaspace_tokenizer()
    crossing = set(crossing_tokens(tokenizer, TEXT))
    assert {"12/03/2001,", ":41", "001.", "Ruiz,", "Sevilla."} <= crossing
    corpus = Corpus(documents=(Document(id="d", text=TEXT, spans=SPANS),))
    assert round_trip(tokenizer, corpus) != [list(SPANS)]


def test_aligned_tokenizer_keeps_every_token_inside_one_word() -> None:
    tokenizer = align_to_words(metaspace_tokenizer())
    assert crossing_tokens(tokenizer, TEXT) == []
    corpus = Corpus(documents=(Document(id="d", text=TEXT, spans=SPANS),))
    assert round_trip(tokenizer, corpus) == [list(SPANS)]
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(TEXT)["input_ids"])
    assert "▁Ingresa" in tokens and "▁Dra" in tokens  # word starts keep their space marker


def test_alignment_is_idempotent_and_saved_with_the_tokenizer(tmp_path: Path) -> None:
    tokenizer = align_to_words(align_to_words(metaspace_tokenizer()))
    state = json.loads(tokenizer.backend_tokenizer.to_str())["pre_tokenizer"]
    assert [s["type"] for s in state["pretokenizers"]] == ["WhitespaceSplit", "Metaspace", "Split"]
    assert state["pretokenizers"][2]["pattern"]["Regex"] == WORD_SPLIT
    tokenizer.save_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{}", "utf-8")
    reloaded = load_fast_tokenizer(tmp_path)
    assert reloaded.backend_tokenizer.to_str() == tokenizer.backend_tokenizer.to_str()
    assert crossing_tokens(reloaded, TEXT) == []


@pytest.mark.parametrize("kind", ["encoder", "causal"])
def test_wordpiece_and_byte_level_tokenizers_are_left_alone(kind: str) -> None:
    tokenizer = tiny_tokenizer([TEXT], kind=kind)
    before = tokenizer.backend_tokenizer.to_str()
    assert align_to_words(tokenizer).backend_tokenizer.to_str() == before


def test_trained_annotators_load_their_tokenizer_as_saved(tmp_path: Path) -> None:
    raw = metaspace_tokenizer()
    raw.save_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{}", "utf-8")
    as_saved = load_fast_tokenizer(tmp_path, align=False)
    assert as_saved.backend_tokenizer.to_str() == raw.backend_tokenizer.to_str()
    assert crossing_tokens(load_fast_tokenizer(tmp_path), TEXT) == []
