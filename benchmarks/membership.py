"""Time the membership attack: N membership canaries against M synthetic notes.

    python benchmarks/membership.py            # 100 x 1,000 and 1,000 x 10,000 (seconds)
    python benchmarks/membership.py --full     # adds the goal size, 1,000 x 100,000 notes

The synthetic corpus is made as the audit sees it, a stream of hashed words (notes of
``--words`` words from a Zipfian 20,000-word vocabulary); tokenising text into that stream
is the audit's shared first step and is timed in ``benchmarks/audit_scale.py``. The canary
secrets are drawn from the same vocabulary and a tenth of the members are written into
synthetic notes, so the index has hits to count. Columns: building the index of every secret
n-gram occurrence (canaries and the exposure candidates), then the figures twice (before and
after filtering: both attacks, AUC and TPR with bootstrap intervals, exposure), and the
process's peak RSS.

Measured on the shared 2-core development box (load ~5 from other jobs, ``nice -n 15``) with
``--full``: 1,000 canaries x 100,000 notes (40 M words) in 11.5 s (index 10.8 s, figures
before and after 0.7 s), peak RSS 1.8 GB; 1,000 x 10,000 in 1.4 s.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protocol.audit import MembershipCanary, MembershipCanarySet  # noqa: E402
from site_agent.audit.membership import membership_result  # noqa: E402
from site_agent.audit.policy import MembershipSettings  # noqa: E402
from site_agent.privacy.tokens import TokenStream, word_hash  # noqa: E402

VOCABULARY = 20_000
SECRET_WORDS = 5


def vocabulary() -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzáéíóúñ"))
    rng = np.random.default_rng(0)
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(letters, size=rng.integers(4, 12))))
    return sorted(words)


def canary_set(words: list[str], count: int, rng: np.random.Generator) -> MembershipCanarySet:
    canaries = []
    for i in range(count):
        secret = " ".join(rng.choice(words, SECRET_WORDS, replace=False))
        canaries.append(
            MembershipCanary(
                id=f"c{i}", member=i % 2 == 0, identifier=f"Name {i}", secret=secret, text=secret
            )
        )
    return MembershipCanarySet(
        tool_version="bench",
        seed=0,
        secret_words=SECRET_WORDS,
        vocabulary=tuple(words),
        source_corpus_sha256="-",
        planted_corpus_sha256="-",
        canaries=tuple(canaries),
    )


def synthetic_stream(
    hashes: np.ndarray, notes: int, words: int, leaks: list[np.ndarray], rng: np.random.Generator
) -> TokenStream:
    ranks = np.arange(1, len(hashes) + 1)
    zipf = (1 / ranks) / (1 / ranks).sum()
    tokens = hashes[rng.choice(len(hashes), size=notes * words, p=zipf)]
    for i, leak in enumerate(leaks):  # a leaked secret inside note i
        start = i * words + 7
        tokens[start : start + len(leak)] = leak
    return TokenStream(
        hashes=tokens, doc_offsets=np.arange(0, notes * words + 1, words, dtype=np.int64)
    )


def measure(count: int, notes: int, words: int) -> list[str]:
    rng = np.random.default_rng(count + notes)
    vocab = vocabulary()
    hashes = np.array([word_hash(w) for w in vocab], dtype=np.uint64)
    record = canary_set(vocab, count, rng)
    index_of = {w: i for i, w in enumerate(vocab)}
    members = [c for c in record.canaries if c.member]
    leaks = [hashes[[index_of[w] for w in c.secret.split()]] for c in members[::10]]
    stream = synthetic_stream(hashes, notes, words, leaks, rng)
    started = time.perf_counter()
    result = membership_result(stream, record, MembershipSettings())
    indexed = time.perf_counter()
    kept = rng.random(notes) > 0.05
    before = result.figures(np.ones(notes, dtype=bool))
    result.figures(kept)
    done = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    return [
        f"{count:,}",
        f"{notes:,}",
        f"{notes * words / 1e6:.1f} M",
        f"{indexed - started:.1f}",
        f"{done - indexed:.1f}",
        f"{done - started:.1f}",
        f"{before['auc']:.3f}",
        f"{rss:.2f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add 1,000 canaries x 100,000 notes")
    parser.add_argument("--words", type=int, default=400, help="words per synthetic note")
    args = parser.parse_args()
    sizes = [(100, 1_000), (1_000, 10_000)] + ([(1_000, 100_000)] if args.full else [])
    header = ["canaries", "notes", "words", "index s", "figures s", "total s", "AUC", "RSS GB"]
    rows = [measure(count, notes, args.words) for count, notes in sizes]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
