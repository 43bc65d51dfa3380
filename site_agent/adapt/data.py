"""Training examples for causal-LM adaptation: every document, cut into ``max_length`` windows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol import Corpus


def training_texts(train: Corpus, mode: str) -> list[str]:
    """The (pseudonymised) training notes as the generation ``mode`` renders them: unchanged,
    tagged, or with placeholders; only this text reaches the generator."""
    from site_agent.generate.modes import mode_for

    render = mode_for(mode).render
    return [render(doc) for doc in train.documents]


def tokenise_documents(texts: Sequence[str], tokenizer: Any, max_length: int) -> list[list[int]]:
    """Token windows covering each document in full (BOS/EOS added), none longer than max_length.

    Long notes are split rather than truncated so the adapter sees all the text; a window
    never spans two documents.
    """
    windows: list[list[int]] = []
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    for text in texts:
        if not text.strip():
            continue
        ids = bos + tokenizer(text, add_special_tokens=False)["input_ids"] + eos
        windows.extend(ids[i : i + max_length] for i in range(0, len(ids), max_length))
    return [w for w in windows if len(w) > 1]


def collate(windows: Sequence[list[int]], pad_id: int) -> dict[str, Any]:
    """Right-padded batch; padding is masked out of attention and of the loss."""
    import torch

    width = max(len(w) for w in windows)
    input_ids = torch.full((len(windows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(windows), width), dtype=torch.long)
    for row, window in enumerate(windows):
        input_ids[row, : len(window)] = torch.tensor(window)
        attention[row, : len(window)] = 1
    labels = input_ids.masked_fill(attention == 0, -100)
    return {"input_ids": input_ids, "attention_mask": attention, "labels": labels}


def epoch_order(n_examples: int, seed: int, epoch: int) -> list[int]:
    """The shuffle of one epoch; a function of (seed, epoch) only, so resumes replay it."""
    import torch

    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n_examples, generator=generator).tolist()
