"""Training examples for causal-LM adaptation: every document, cut into ``max_length`` windows,
and (``[adapt] packing``) the windows packed into rows of at most ``max_length`` tokens."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from protocol import Corpus, Document


def training_texts(train: Corpus, render: Callable[[Document], str]) -> list[str]:
    """The (pseudonymised) training notes as the generation mode renders them (``render``):
    unchanged, tagged, or with placeholders; only this text reaches the generator."""
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


def document_windows(
    texts: Sequence[str], tokenizer: Any, max_length: int
) -> tuple[list[list[int]], list[int]]:
    """:func:`tokenise_documents` with the index of the text each window came from."""
    windows: list[list[int]] = []
    sources: list[int] = []
    for index, text in enumerate(texts):
        found = tokenise_documents([text], tokenizer, max_length)
        windows.extend(found)
        sources.extend([index] * len(found))
    return windows, sources


def phi_bearing(
    windows: Sequence[list[int]],
    sources: Sequence[int],
    phi_documents: Sequence[bool],
    marker_ids: Collection[int] = (),
) -> list[bool]:
    """Which windows hold PHI: a window with one of the mode's marker tokens (placeholders,
    tags) when there are markers, else every window of a note with PHI (``annotate``: the
    surrogates are plain text)."""
    if marker_ids:
        markers = frozenset(marker_ids)
        return [any(t in markers for t in w) for w in windows]
    return [bool(phi_documents[s]) if s < len(phi_documents) else False for s in sources]


def repeat_phi_windows(
    windows: Sequence[list[int]], holds_phi: Sequence[bool], repeat: int
) -> list[list[int]]:
    """Every window once and each PHI-bearing one ``repeat - 1`` times more (the annotator's
    sparse recipe down-samples PHI-free chunks instead; a generator must still see all the
    text, so here the rare windows are repeated). Deterministic, so resumes replay it."""
    extra = [list(w) for w, phi in zip(windows, holds_phi, strict=True) if phi]
    return [list(w) for w in windows] + extra * (repeat - 1)


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


def pack_windows(windows: Sequence[list[int]], max_length: int) -> list[list[list[int]]]:
    """Windows grouped into rows of at most ``max_length`` tokens: first-fit, longest first.

    A window is never split or shared between rows, so a row holds whole windows only; the
    grouping depends on the window lengths alone (deterministic, so resumes replay it).
    """
    rows: list[list[list[int]]] = []
    room: list[int] = []
    for index in sorted(range(len(windows)), key=lambda i: (-len(windows[i]), i)):
        window = windows[index]
        row = next((r for r, free in enumerate(room) if free >= len(window)), None)
        if row is None:
            rows.append([])
            room.append(max_length)
            row = len(rows) - 1
        rows[row].append(window)
        room[row] -= len(window)
    return rows


def collate_packed(rows: Sequence[list[list[int]]], pad_id: int) -> dict[str, Any]:
    """Packed batch: each window restarts its positions at 0 and is not a target from the
    window before it; no attention mask, so transformers builds a block-diagonal causal mask
    from the position ids (no token attends across windows). Trailing padding is a block of
    its own and carries no labels."""
    import torch

    lengths = [sum(len(w) for w in row) for row in rows]
    width = max(lengths)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        cursor = 0
        for window in row:
            end = cursor + len(window)
            input_ids[r, cursor:end] = torch.tensor(window)
            labels[r, cursor + 1 : end] = input_ids[r, cursor + 1 : end]
            positions[r, cursor:end] = torch.arange(len(window))
            cursor = end
        positions[r, cursor:] = torch.arange(width - cursor)
    return {"input_ids": input_ids, "position_ids": positions, "labels": labels}


def epoch_order(n_examples: int, seed: int, epoch: int) -> list[int]:
    """The shuffle of one epoch; a function of (seed, epoch) only, so resumes replay it."""
    import torch

    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n_examples, generator=generator).tolist()
