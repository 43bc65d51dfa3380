"""Stage 1, split: the gold corpus becomes train / validation / test files.

``by_source`` holds the deterministic, source-grouping split; ``stage`` the pipeline stage.
"""

from site_agent.split.by_source import split_corpus
from site_agent.split.settings import CorpusSettings, SplitSettings

__all__ = ["CorpusSettings", "SplitSettings", "split_corpus"]
