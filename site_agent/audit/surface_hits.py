"""The occurrences of known surfaces (PII values, canaries) in a synthetic corpus read a chunk
at a time: what the PII-echo and canary measures both collect."""

from __future__ import annotations

import numpy as np

from site_agent.audit.context import SyntheticChunk
from site_agent.privacy.surfaces import SurfaceMatcher


class SurfaceHits:
    """Every (note, surface) occurrence in the chunks fed to :meth:`add`, notes numbered by
    their place in the whole corpus, and how many notes were fed."""

    def __init__(self, matcher: SurfaceMatcher) -> None:
        self.matcher = matcher
        self._docs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self._keys: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self.n_docs = 0

    def add(self, chunk: SyntheticChunk) -> None:
        docs, keys = self.matcher.match(chunk.documents)
        self._docs.append(chunk.positions[docs])
        self._keys.append(keys)
        self.n_docs += chunk.n_docs

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(note positions, surface indexes), one entry per occurrence."""
        return np.concatenate(self._docs), np.concatenate(self._keys)
