"""The NER tests' pattern corpora and tiny encoder, for the ``site-agent annotate`` CLI test."""

from tests.ner.conftest import encoder_dir, pattern_corpora

__all__ = ["encoder_dir", "pattern_corpora"]
