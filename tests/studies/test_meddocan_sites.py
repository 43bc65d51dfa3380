"""The MEDDOCAN multi-site study (studies/meddocan_sites.py): journals dealt whole to
three sites, each site's label scheme, and mapping files that bring every scheme onto the
shared coarse one."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from protocol import Document, Span
from shared.label_mapping import LabelMapping, apply_mapping, load_label_mapping


@pytest.fixture(scope="module")
def study() -> ModuleType:
    from studies import meddocan_sites

    return meddocan_sites


def _case(i: int, source: str, labels: tuple[str, ...] = ()) -> dict[str, object]:
    text = " ".join(f"w{j}" for j in range(len(labels) + 1))
    spans = [{"start": 3 * j, "end": 3 * j + 2, "label": label} for j, label in enumerate(labels)]
    return {"id": f"c{i}", "text": text, "spans": spans, "source": source}


def test_journals_go_whole_to_the_smallest_site_largest_first(study: ModuleType) -> None:
    sizes = {"A": 5, "B": 4, "C": 3, "D": 2, "E": 1}
    cases = [_case(i, j) for j, n in sizes.items() for i in range(n)]
    sites = study.deal_journals(cases)
    journals = {site: sorted({c["source"] for c in members}) for site, members in sites.items()}
    # A -> full, B -> coarse, C -> partial, D -> partial (3 < 4), E -> coarse (4 < 5)
    assert journals == {
        "hospital-full": ["A"],
        "hospital-coarse": ["B", "E"],
        "hospital-partial": ["C", "D"],
    }


def test_a_sample_draws_from_all_journals_and_is_repeatable(study: ModuleType) -> None:
    cases = [_case(i, "A" if i < 50 else "B") for i in range(100)]
    first = study.sample_cases(cases, 20)
    assert first == study.sample_cases(cases, 20)
    assert len(first) == 20 and {c["source"] for c in first} == {"A", "B"}
    assert study.sample_cases(cases, None) == cases


NAME, AGE, DATE = "NOMBRE_SUJETO_ASISTENCIA", "EDAD_SUJETO_ASISTENCIA", "FECHAS"


def _mapping(text: str, tmp_path: Path, site: str) -> LabelMapping:
    path = tmp_path / f"{site}.toml"
    path.write_text(text, encoding="utf-8")
    tomllib.loads(text)  # valid TOML
    return load_label_mapping(path)


@pytest.mark.parametrize(
    ("site", "labels", "coarse"),
    [
        ("hospital-full", {NAME, AGE, DATE}, {"PER", "MISC", "TIME"}),
        ("hospital-coarse", {"PER", "MISC", "TIME"}, {"PER", "MISC", "TIME"}),
        ("hospital-partial", {NAME, DATE}, {"PER", "TIME"}),  # ages are not annotated there
    ],
)
def test_each_site_annotates_in_its_scheme_and_maps_onto_the_coarse_one(
    study: ModuleType, site: str, labels: set[str], coarse: set[str], tmp_path: Path
) -> None:
    cases = [_case(0, "A", (NAME, AGE, DATE)), _case(1, "A", (NAME,))]
    corpus, mapping_text = study.site_corpus(site, cases)
    used = {s.label for d in corpus.documents for s in d.spans}
    assert used == labels
    mapping = _mapping(mapping_text, tmp_path, site)
    shared = apply_mapping(corpus, mapping)  # every label the site uses has an entry
    assert {s.label for d in shared.documents for s in d.spans} == coarse
    assert (AGE in mapping.mapping) == (site == "hospital-full")
    if site == "hospital-partial":  # the age's text stays in the note, unlabelled
        assert corpus.documents[0].text == cases[0]["text"]
        assert len(corpus.documents[0].spans) == 2


def test_meddocan_is_dealt_to_three_sites_of_similar_size(
    study: ModuleType, meddocan_dir: Path
) -> None:
    sites = study.deal_journals(study.read_cases(meddocan_dir))
    sizes = {site: len(members) for site, members in sites.items()}
    assert sum(sizes.values()) == 1000
    assert max(sizes.values()) - min(sizes.values()) <= max(
        Counter(str(c["source"]) for c in study.read_cases(meddocan_dir)).values()
    )
    owners: dict[str, set[str]] = {}
    for site, members in sites.items():
        for case in members:
            owners.setdefault(str(case["source"]), set()).add(site)
    assert all(len(sites_of) == 1 for sites_of in owners.values())
    for site, members in sites.items():
        corpus, _ = study.site_corpus(site, members[:50])
        assert all(isinstance(d, Document) for d in corpus.documents)
        assert all(isinstance(s, Span) for d in corpus.documents for s in d.spans)


@pytest.mark.parametrize("adapt_steps", [None, 8])
def test_each_site_runs_on_the_product_defaults(
    study: ModuleType, tmp_path: Path, adapt_steps: int | None
) -> None:
    """The written site.toml sets the study's split, gate and cores, and nothing of the
    recipes: the site config it loads into equals the defaults there (template mode, recipe
    budgets), unless ``--adapt-steps`` asks for a shorter LoRA run."""
    import argparse

    from site_agent.config import build_site_config, load_site_config

    args = argparse.Namespace(threads=1, adapt_steps=adapt_steps, min_validation_recall=0.3)
    cases = [_case(i, "J1", (NAME,)) for i in range(4)]
    corpus, mapping = study.site_corpus("hospital-full", cases)
    config = load_site_config(study.write_site(tmp_path, "hospital-full", corpus, mapping, args))
    default = build_site_config(
        {"site_id": "hospital-full", "language": "es", "corpus": {"path": "c"}}
    )
    assert config.generation.mode == "template"
    assert config.generation.model_dump(exclude={"cpu_threads"}) == default.generation.model_dump(
        exclude={"cpu_threads"}
    )
    assert config.annotator.base_model == default.annotator.base_model
    assert config.adapt.base_model == default.adapt.base_model
    training = config.annotator.training.model_dump(exclude={"num_threads"})
    assert training == default.annotator.training.model_dump(exclude={"num_threads"})
    assert config.adapt.max_steps == adapt_steps
    adapt = config.adapt.model_dump(exclude={"cpu_threads", "max_steps"})
    assert adapt == default.adapt.model_dump(exclude={"cpu_threads", "max_steps"})


def test_the_study_prices_its_site_pipelines_before_running_them(
    study: ModuleType, tmp_path: Path
) -> None:
    """Every site's pre-flight hours and what is left of them, and their sum, as the pipeline
    would price each site (nothing has run: all of it is left)."""
    import argparse

    from site_agent.config import load_site_config
    from site_agent.stages.preflight import run_preflight

    args = argparse.Namespace(threads=1, adapt_steps=None, min_validation_recall=0.3)
    text = "Paciente Ana Ruiz ingresa por dolor toracico en Madrid. " * 6
    configs = []
    for site in ("hospital-full", "hospital-partial"):
        cases = [
            {"id": f"c{i}", "text": text, "spans": [{"start": 9, "end": 17, "label": NAME}],
             "source": "J1"}
            for i in range(30)
        ]  # fmt: skip
        corpus, mapping = study.site_corpus(site, cases)
        configs.append(study.write_site(tmp_path, site, corpus, mapping, args))
    lines = study.price_sites(configs)
    hours = []
    for config, line in zip(configs, lines, strict=False):
        plan = run_preflight(load_site_config(config))
        assert plan is not None and plan.hours > 0
        hours.append(plan.hours)
        assert line.startswith(f"{config.parent.name}: pre-flight about {plan.hours:.1f} h")
        assert f"{plan.hours:.1f} h of it left to run" in line
    assert lines[-1] == f"site pipelines: about {sum(hours):.1f} h left in all, then the rounds"
