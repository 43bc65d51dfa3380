"""Generation over a restricted output layer (``vocabulary.json`` beside the adapter).

The restricted model scores ``len(vocabulary)`` tokens, so ``generate`` picks rows of the
restricted layer, not token ids, and feeds them back as the next input. The model therefore
runs in a row space: row ``i < len(vocabulary)`` is kept id ``vocabulary.ids[i]``, and a prompt
token outside the set (the input side is the full embedding) gets a row after them, which the
output layer can never score. The input embedding looks rows up through that table; sampled
rows are mapped back to ids before decoding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from site_agent.adapt.output_vocabulary import OutputVocabulary


class MappedEmbedding(torch.nn.Module):
    """The model's own input embedding, looked up through ``table`` (row -> token id)."""

    def __init__(self, embedding: torch.nn.Module, table: torch.Tensor) -> None:
        super().__init__()
        self.embedding = embedding
        self.register_buffer("table", table, persistent=False)

    @property
    def weight(self) -> Any:
        return self.embedding.weight

    table: torch.Tensor

    def forward(self, rows: torch.Tensor) -> Any:
        return self.embedding(self.table[rows])


class RestrictedIds:
    """The row space of one restricted generator: encode prompts, decode samples."""

    def __init__(self, model: Any, vocabulary: OutputVocabulary) -> None:
        self.vocabulary = vocabulary
        self.ids: list[int] = list(vocabulary.ids)
        self.rows = vocabulary.index_of()
        device = model.get_input_embeddings().weight.device
        self.embedding = MappedEmbedding(
            model.get_input_embeddings(), torch.tensor(self.ids, device=device)
        )
        model.set_input_embeddings(self.embedding)

    def _grow(self, ids: Iterable[int]) -> None:
        new = sorted({i for i in ids if i not in self.rows})
        for token in new:
            self.rows[token] = len(self.ids)
            self.ids.append(token)
        if new:
            self.embedding.table = torch.tensor(self.ids, device=self.embedding.table.device)

    def encode(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Prompt ids -> rows (ids outside the set get input-only rows)."""
        self._grow(input_ids.flatten().tolist())
        lookup = self.rows
        rows = [lookup[i] for i in input_ids.flatten().tolist()]
        return torch.tensor(rows, dtype=torch.long, device=input_ids.device).view_as(input_ids)

    def decode(self, rows: torch.Tensor) -> torch.Tensor:
        """Rows -> token ids."""
        return self.embedding.table.to(rows.device)[rows]

    def kept_rows(self, ids: int | Iterable[int] | None) -> list[int]:
        """The output rows of those of ``ids`` (eos, pad) the restricted layer keeps."""
        if ids is None:
            return []
        wanted = [ids] if isinstance(ids, int) else list(ids)
        index = self.vocabulary.index_of()
        return [index[i] for i in wanted if i in index]
