"""Whole-token tags and placeholders: the generation mode's markers added to the generator's
vocabulary, so ``<FECHAS>`` is one token wherever it stands instead of five pieces that
merge differently with their neighbours. The new embedding rows (input, and output when
the model does not tie them) are trained with the adapter (PEFT trainable tokens)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def add_tokens(tokenizer: Any, model: Any, tokens: Sequence[str]) -> list[int]:
    """Add ``tokens`` as whole (non-special, so decoded) tokens; resize the embeddings; return
    their ids. Each new row starts as the mean of the rows of the pieces the token was split
    into before (``<FECHAS>``: ``<``, ``F``, ``ECH``, ``AS``, ``>``), so it starts out meaning
    roughly what its text meant rather than noise."""
    import torch
    from tokenizers import AddedToken

    pieces = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in tokens]
    tokenizer.add_tokens([AddedToken(t, normalized=False) for t in tokens])
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    ids = [int(tokenizer.convert_tokens_to_ids(t)) for t in tokens]
    layers = {
        id(m.weight): m.weight
        for m in (model.get_input_embeddings(), model.get_output_embeddings())
        if m is not None
    }
    with torch.no_grad():
        for weight in layers.values():
            for new, old in zip(ids, pieces, strict=True):
                weight[new] = weight[old].mean(dim=0)
    return ids


def trainable_rows(model: Any, ids: list[int]) -> dict[str, list[int]]:
    """PEFT ``trainable_token_indices``: the new rows of the input embeddings, and of the
    output layer when it is not tied to them."""
    names = {id(module): name.rsplit(".", 1)[-1] for name, module in model.named_modules()}
    rows = {names[id(model.get_input_embeddings())]: ids}
    output = model.get_output_embeddings()
    if output is not None and output.weight is not model.get_input_embeddings().weight:
        rows[names[id(output)]] = ids
    return rows
