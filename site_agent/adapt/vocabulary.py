"""Whole-token tags and placeholders: the generation mode's markers added to the generator's
vocabulary, so ``<FECHAS>`` is one token wherever it stands instead of five pieces that
merge differently with their neighbours. The new embedding rows (input, and output when
the model does not tie them) are trained with the adapter (PEFT trainable tokens)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from site_agent.adapt.output_vocabulary import OutputVocabulary

TOKEN_ROWS = "trainable_tokens_delta"
"""What PEFT names the trainable rows of an embedding (input or output) in a parameter name."""


def add_tokens(tokenizer: Any, model: Any, tokens: Sequence[str]) -> list[int]:
    """Add ``tokens`` as whole (non-special, so decoded) tokens; resize the embeddings; return
    their ids. New rows start from the model's own initialisation (seeded): starting them at
    the mean of the pieces they replace made SmolLM2 write broken placeholders (``{{`` as
    text) in template mode after a short adaptation."""
    from tokenizers import AddedToken

    tokenizer.add_tokens([AddedToken(t, normalized=False) for t in tokens])
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return [int(tokenizer.convert_tokens_to_ids(t)) for t in tokens]


def trainable_rows(
    model: Any, ids: list[int], vocabulary: OutputVocabulary | None = None
) -> dict[str, list[int]]:
    """PEFT ``trainable_token_indices``: the new rows of the input embeddings, and of the
    output layer when it is not tied to them (a restricted output layer never is: its rows
    are the new tokens' places in ``vocabulary``)."""
    names = {id(module): name.rsplit(".", 1)[-1] for name, module in model.named_modules()}
    rows = {names[id(model.get_input_embeddings())]: ids}
    output = model.get_output_embeddings()
    if output is not None and output.weight is not model.get_input_embeddings().weight:
        rows[names[id(output)]] = vocabulary.to_restricted(ids) if vocabulary else ids
    return rows
