"""Tiny models built from configs, for tests and the offline federation demo.

No hub downloads, seconds to train.

``tiny_tokenizer`` trains a WordPiece (encoder) or byte-level BPE (causal LM) tokenizer on the
test text; ``tiny_encoder`` and ``tiny_causal_lm`` save a randomly initialised 2-layer model
with ``save_pretrained`` so that code under test loads them exactly like a real checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedModel, PreTrainedTokenizerFast

SAMPLE_TEXT = (
    "Paciente de 70 años, varón, ingresa en el Hospital General de Madrid el 12/12/2016. "
    "Médico: Ignacio Navarro Cuéllar. Correo: ignacio@example.org. Teléfono 912 345 678. "
    "The patient John Smith was admitted to St Mary Hospital on 3 March 2020 in Boston."
)


def tiny_tokenizer(
    texts: Iterable[str], kind: str = "encoder", vocab_size: int = 400
) -> PreTrainedTokenizerFast:
    """A fast tokenizer trained on ``texts`` (``kind`` is ``"encoder"`` or ``"causal"``)."""
    corpus = [*texts, SAMPLE_TEXT]
    if kind == "encoder":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok.train_from_iterator(
            corpus, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=special)
        )
        from tokenizers.processors import TemplateProcessing

        tok.post_processor = TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[
                ("[CLS]", tok.token_to_id("[CLS]")),
                ("[SEP]", tok.token_to_id("[SEP]")),
            ],
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
        )
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<pad>"]
    tok.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=special,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<pad>",
    )


def tiny_encoder(
    out_dir: Path,
    texts: Iterable[str] = (),
    hidden: int = 32,
    seed: int = 0,
    vocab_size: int = 400,
) -> Path:
    """Save a 2-layer BERT (random weights from ``seed``) and its tokenizer (at most
    ``vocab_size`` tokens, learnt from ``texts``) to ``out_dir``."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)

    tokenizer = tiny_tokenizer(texts, "encoder", vocab_size=vocab_size)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
    )
    BertModel(config).save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def tiny_causal_lm(
    out_dir: Path, texts: Iterable[str] = (), arch: str = "llama", hidden: int = 32
) -> Path:
    """Save a 2-layer Llama or GPT-2 causal LM (random weights) and its tokenizer."""
    tokenizer = tiny_tokenizer(texts, "causal")
    common = {
        "vocab_size": len(tokenizer),
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    model: PreTrainedModel
    if arch == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        model = LlamaForCausalLM(
            LlamaConfig(
                hidden_size=hidden,
                intermediate_size=hidden * 2,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=2,
                max_position_embeddings=512,
                **common,
            )
        )
    elif arch == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(
            GPT2Config(n_embd=hidden, n_layer=2, n_head=2, n_positions=512, **common)
        )
    else:
        raise ValueError(f"unknown tiny architecture {arch!r}; use 'llama' or 'gpt2'")
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
