"""Turn a parsed packed model into a transformers ``BertModel`` config and state dict.

multilingual-e5-small is a BERT encoder (absolute positions from 0, erf GELU, post-norm) with an
XLM-R vocabulary; the engine's forward pass in ``e5.c`` is exactly that, so every packed tensor
has one home in ``BertModel`` and nothing is approximated. The packed file has no pooler: the
checkpoint is saved without one, which is what mean pooling and token classification use.
"""

from __future__ import annotations

import numpy as np
import torch
from transformers import BertConfig, BertModel

from shared.errors import ConfigError
from site_agent.models.e5_convert.packed_format import PackedModel

_LAYER_TENSORS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_TENSORS = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


def bert_config(packed: PackedModel) -> BertConfig:
    """The ``BertConfig`` the packed header describes (ids of specials from its vocabulary)."""
    h, v = packed.header, packed.vocab
    return BertConfig(
        vocab_size=h.vocab,
        hidden_size=h.hidden,
        num_hidden_layers=h.layers,
        num_attention_heads=h.heads,
        intermediate_size=h.ffn,
        hidden_act="gelu",
        max_position_embeddings=h.max_positions,
        type_vocab_size=h.type_vocab,
        layer_norm_eps=h.layer_norm_eps,
        pad_token_id=v.pad,
        bos_token_id=v.bos,
        eos_token_id=v.eos,
        architectures=["BertModel"],
    )


def packed_to_hf_names(layers: int) -> dict[str, str]:
    """Packed tensor name -> ``BertModel`` state-dict key, for every tensor the engine reads."""
    names = dict(_EMBEDDING_TENSORS)
    for layer in range(layers):
        for short, module in _LAYER_TENSORS.items():
            for suffix, param in (("w", "weight"), ("b", "bias")):
                names[f"l{layer}.{short}.{suffix}"] = f"encoder.layer.{layer}.{module}.{param}"
    return names


def _expected_shapes(config: BertConfig) -> dict[str, tuple[int, ...]]:
    """Key -> shape of a pooler-less ``BertModel`` built on the meta device (no memory)."""
    with torch.device("meta"):
        model = BertModel(config, add_pooling_layer=False)
    return {key: tuple(t.shape) for key, t in model.state_dict().items()}


def hf_state_dict(packed: PackedModel, config: BertConfig) -> dict[str, torch.Tensor]:
    """Dequantised float32 tensors under ``BertModel`` names; fails if any key is unmatched."""
    expected = _expected_shapes(config)
    names = packed_to_hf_names(config.num_hidden_layers)
    unmapped = sorted(set(packed.tensors) - set(names))
    unfilled = sorted(set(expected) - set(names.values()))
    if unmapped or unfilled:
        raise ConfigError(
            f"{packed.source}: packed tensors and BertModel parameters do not pair up",
            problems=[f"packed tensor with no BertModel home: {n}" for n in unmapped]
            + [f"BertModel parameter with no packed tensor: {n}" for n in unfilled],
        )
    state: dict[str, torch.Tensor] = {}
    for packed_name, key in names.items():
        values = packed.array(packed_name, expected[key])
        if not np.isfinite(values).all():
            raise ConfigError(f"{packed.source}: tensor {packed_name!r} has non-finite values")
        state[key] = torch.from_numpy(values)
    return state
