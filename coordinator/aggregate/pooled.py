"""One NER model per site (its own synthetic corpus) and one pooled model (their union).

Every corpus is harmonised into the shared label space first (``shared.label_mapping``), so
every model tags in the same labels and can be scored at every site.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.trainer import NerSettings, train_annotator
from protocol import Corpus
from protocol.rounds import TrainedModel
from shared.contained import contained_path
from shared.provenance import make_provenance


def pool(corpora: dict[str, Corpus], labels: tuple[str, ...]) -> Corpus:
    """The union of harmonised corpora; document ids are prefixed with the site id."""
    documents = [
        doc.model_copy(update={"id": f"{site}/{doc.id}"})
        for site, corpus in sorted(corpora.items())
        for doc in corpus.documents
    ]
    return Corpus(
        documents=tuple(documents),
        labels=labels,
        provenance=make_provenance(parents=tuple(sorted(corpora))),
    )


def train_site_and_pooled(
    corpora: dict[str, Corpus],
    base_model: Path,
    settings: NerSettings,
    out_root: Path,
    on_failure: Callable[[str, Exception], None] | None = None,
) -> list[BuiltModel]:
    """One model per site corpus plus one on their union (all corpora already harmonised).

    A corpus whose training raises is left out of the union too; ``on_failure(site, error)``
    records it (without it, the error propagates)."""
    built = []
    for site, corpus in sorted(corpora.items()):
        try:
            model_dir = train_annotator(
                corpus, None, base_model, settings, contained_path(out_root, f"site-{site}")
            )
        except Exception as exc:
            if on_failure is None:
                raise
            on_failure(site, exc)
            continue
        info = TrainedModel(
            name=f"site:{site}", kind="site", trained_on=(site,), n_training_documents=len(corpus)
        )
        built.append(BuiltModel(info, model_dir))
    trained = {site: corpora[site] for m in built for site in m.info.trained_on}
    if len(trained) > 1:
        labels = next(iter(trained.values())).labels
        union = pool(trained, labels)
        model_dir = train_annotator(union, None, base_model, settings, out_root / "pooled")
        info = TrainedModel(
            name="pooled",
            kind="pooled",
            trained_on=tuple(sorted(trained)),
            n_training_documents=len(union),
        )
        built.append(BuiltModel(info, model_dir))
    return built
