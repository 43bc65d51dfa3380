"""What the audit's quasi-identifier rule drops on notes that point at no training patient.

    python benchmarks/quasi_identifier_drops.py                  # MEDDOCAN sample + English
    python benchmarks/quasi_identifier_drops.py --meddocan ../shared/data/meddocan

The rule (``site_agent/audit/quasi_identifiers.py``) drops a synthetic note holding two gold
details of one real note, or one detail found in a single real note. Here the "synthetic"
notes are other patients' notes, so every note it flags is a chance collision: the rule's cost
(notes lost) where it protects nobody. Rows:

- MEDDOCAN, real = the train split (500 notes), synthetic = the dev split (250 other
  patients) as written;
- the same dev skeletons with every identifier replaced by the template filler's surrogates
  (``site_agent/generate/fill.py``, as template mode ships them, with the generator's rewording
  left out);
- English sparse-PHI notes (``benchmarks/sparse_corpus.py``): real and synthetic are two
  independent draws of 400 notes from the demo generator.

Columns: notes, notes flagged (share), flagged for a rare detail, for details together, and
the searched, common and rare surfaces of the real side. Default settings throughout.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from sparse_corpus import english_sparse  # noqa: E402

from protocol import Corpus  # noqa: E402
from shared.corpus_io import read_corpus  # noqa: E402
from shared.cpu_features import cpu_features  # noqa: E402
from site_agent.audit.context import AuditContext  # noqa: E402
from site_agent.audit.measure import measure_corpus  # noqa: E402
from site_agent.audit.policy import AuditPolicy, QuasiIdentifierSettings  # noqa: E402
from site_agent.audit.source import CorpusSource  # noqa: E402
from site_agent.generate.fill import fill_templates, shape_pool  # noqa: E402
from site_agent.generate.placeholders import insert_placeholders, read_template  # noqa: E402
from site_agent.pseudonymise.settings import PseudonymiseSettings  # noqa: E402

SETTINGS = {
    "default": QuasiIdentifierSettings(),
    "rare on (1 note)": QuasiIdentifierSettings(rare_max_notes=1),
    "all labels, rare on": QuasiIdentifierSettings(labels="all", rare_max_notes=1),
}


def flagged(real: Corpus, synthetic: Corpus, settings: QuasiIdentifierSettings) -> dict[str, float]:
    policy = AuditPolicy(measures=("quasi_identifiers",), quasi_identifiers=settings)
    result = measure_corpus(AuditContext(real, policy), CorpusSource(synthetic)).results[
        "quasi_identifiers"
    ]
    figures = result.figures(result.flagged | True)
    return {"notes": len(synthetic), **figures}


def template_fill(train: Corpus, skeletons: Corpus, locale: str) -> Corpus:
    allowed = frozenset(train.labels)  # a skeleton with a label train lacks is left out
    read = [(d.id, read_template(insert_placeholders(d), allowed)) for d in skeletons.documents]
    templates = [(doc_id, template) for doc_id, template in read if template.problem is None]
    surrogates = PseudonymiseSettings(locale=locale)
    notes = fill_templates(templates, shape_pool(train), surrogates, seed=0)
    return Corpus(documents=tuple(note.document for note in notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--meddocan", type=Path, default=REPO.parent / "shared/data/meddocan")
    args = parser.parse_args()
    print(f"CPU: {cpu_features().summary()}")
    rows: list[tuple[str, Corpus, Corpus]] = []
    if (args.meddocan / "train.jsonl").is_file():
        train = read_corpus(args.meddocan / "train.jsonl")
        dev = read_corpus(args.meddocan / "dev.jsonl")
        rows.append(("MEDDOCAN dev as written", train, dev))
        rows.append(("MEDDOCAN dev, template-filled", train, template_fill(train, dev, "es_ES")))
    rows.append(
        (
            "English sparse (demo generator)",
            english_sparse(400, seed=1),
            english_sparse(400, seed=2),
        )
    )
    print(
        "\n| corpus | settings | real notes | notes | flagged | rare | together "
        "| surfaces searched | common | rare surfaces | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, real, synthetic in rows:
        for setting, settings in SETTINGS.items():
            start = time.perf_counter()
            f = flagged(real, synthetic, settings)
            seconds = time.perf_counter() - start
            share = f["documents"] / max(f["notes"], 1)
            print(
                f"| {name} | {setting} | {len(real)} | {f['notes']} | {f['documents']} "
                f"({share:.1%}) | {f['documents_rare']} | {f['documents_together']} | "
                f"{f['surfaces_searched']} | {f['common_surfaces']} | {f['rare_surfaces']} | "
                f"{seconds:.1f} |"
            )


if __name__ == "__main__":
    main()
