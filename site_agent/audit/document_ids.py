"""The ids of the synthetic notes, held compactly: the audit names notes by id in its report
(dropped notes, highest-risk pairs) but reads a million of them a chunk at a time."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class DocumentIds:
    """Ids appended a chunk at a time, kept as one UTF-8 byte string with offsets (about the
    id's length plus 16 bytes each, instead of a Python string each)."""

    def __init__(self) -> None:
        self._blob = bytearray()
        self._lengths: list[np.ndarray] = []
        self._hashes: list[np.ndarray] = []
        self._offsets: np.ndarray | None = np.zeros(1, dtype=np.int64)

    def extend(self, ids: Iterable[str]) -> None:
        encoded = [i.encode("utf-8", "surrogatepass") for i in ids]
        self._blob += b"".join(encoded)
        self._lengths.append(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
        self._hashes.append(np.fromiter(map(hash, encoded), dtype=np.int64, count=len(encoded)))
        self._offsets = None

    @property
    def offsets(self) -> np.ndarray:
        if self._offsets is None:
            lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
            self._lengths = [lengths]
            self._offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return self._offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:
        offsets = self.offsets
        if not -len(self) <= index < len(self):
            raise IndexError(f"document {index} of {len(self)}")
        index %= len(self)
        return self._blob[offsets[index] : offsets[index + 1]].decode("utf-8", "surrogatepass")

    def duplicates(self) -> dict[str, list[int]]:
        """Every id held more than once, with its positions (0-based)."""
        hashes = np.concatenate(self._hashes) if self._hashes else np.zeros(0, np.int64)
        self._hashes = [hashes]
        _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
        repeated: dict[str, list[int]] = {}
        for position in np.flatnonzero(counts[inverse] > 1).tolist():
            repeated.setdefault(self[position], []).append(position)
        return {i: where for i, where in repeated.items() if len(where) > 1}
