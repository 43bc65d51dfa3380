"""The adapted generator as a plain transformers folder: base weights with the LoRA adapter
folded in (for engines that cannot apply an adapter themselves, and vLLM's merge mode)."""

from __future__ import annotations

from pathlib import Path


def merge_adapter(model: str | Path, adapter: Path, out_dir: Path) -> Path:
    """Fold ``adapter`` into ``model``'s weights; save weights and tokenizer in ``out_dir``."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = AutoModelForCausalLM.from_pretrained(model, dtype="auto")
    PeftModel.from_pretrained(base, adapter).merge_and_unload().save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(model).save_pretrained(out_dir)
    return out_dir
