"""Tiny models for tests; they live in ``site_agent.models.tiny`` so the demo can use them too."""

from site_agent.models.tiny import SAMPLE_TEXT, tiny_causal_lm, tiny_encoder, tiny_tokenizer

__all__ = ["SAMPLE_TEXT", "tiny_causal_lm", "tiny_encoder", "tiny_tokenizer"]
