"""MEDDOCAN as a multi-site study: split by source journal, own label schemes, one federation.

    deid-studies meddocan-sites [--data DIR] [--out runs/meddocan-sites]
    make meddocan-sites     # the measured study in the README: --max-cases 120

1. sites     the 1,000 MEDDOCAN cases (train + dev + test) grouped by ``source`` (the journal
             the case was published in) and the journals dealt to three sites, largest first,
             each to the site with the fewest cases so far;
2. schemes   ``hospital-full`` keeps the 22 MEDDOCAN labels; ``hospital-coarse`` annotates in
             PER/ORG/LOC/TIME/ID/MISC; ``hospital-partial`` does not annotate ages (its guideline
             omits EDAD_SUJETO_ASISTENCIA; the ages stay in its notes). Each site's
             ``label-mapping.toml`` maps its labels onto the shared coarse scheme;
3. pipelines every site runs ``site-agent synthesize`` on the defaults (site.toml beside it),
             ``--jobs`` at a time;
4. rounds    ``coordinator demo --sites OUT``: SuperLink with TLS and SuperNode authentication on
             127.0.0.1, each site joining with ``site-agent join``; per-site synthetic, exported,
             pooled and FedAvg models (FedAvg starting from the exported encoders) scored at every
             site next to the site's gold-trained baseline; report in ``OUT/report/report.html``.

Every site runs on the product's defaults (template mode, recipes derived from its corpus and
the machine). ``--max-cases N`` keeps N cases per site, drawn at random from all its journals,
and ``--adapt-steps S`` shortens the LoRA run (a smaller, faster study, no longer on defaults).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from protocol import Corpus, Document
from shared.label_mapping import apply_mapping, load_label_mapping
from shared.signing import generate_signing_key
from shared.supernode_keys import create_supernode_auth_key
from site_agent.config import default_models
from site_agent.demo.sites import (
    CA_FILE,
    FEDERATION_TOML,
    LABEL_MAPPING,
    SITE_CONFIG,
    plan_jobs,
    run_site_pipelines,
)
from site_agent.models.cache import model_dir
from site_agent.site_setup import key_paths

ENCODER = default_models("es")["annotator"]
OMITTED = "EDAD_SUJETO_ASISTENCIA"
SITES = ("hospital-full", "hospital-coarse", "hospital-partial")

# Each site runs what a hospital gets: the product's defaults (the language's default models,
# the template mode, the generator and annotator recipes derived from its corpus and this
# machine). The study sets only its evaluation design (a 70/10/20 split of each site's cases,
# journals already dealt whole to sites), the gold annotator's gate, and the cores a site may
# use while the others run; ``--adapt-steps`` shortens the LoRA run for a quick, non-default
# study and is then written into every site.toml.
SITE_SETTINGS = """\
[split]
validation_fraction = 0.1
test_fraction = 0.2
group_by_source = false

[annotator]
min_validation_recall = {min_recall}

[annotator.training]
num_threads = {threads}

[adapt]
{adapt_steps}cpu_threads = {threads}

[generation]
cpu_threads = {threads}
"""

# The coordinator trains its per-site and pooled models with the site annotator's recipe: at
# least 300 optimiser steps (the demo's dense notes need none; these sparse ones predict only
# "O" after 4 epochs of 10 steps).
STUDY_SETTINGS = """\
[settings]
fedavg-rounds = 3
fedavg-start = "exported"
train-epochs = 4
train-min-steps = 300
local-epochs = 1
learning-rate = 1e-4
batch-size = 8
bootstrap = 500
reply-timeout = 3600.0
"""


def read_cases(data: Path) -> list[dict[str, object]]:
    rows = []
    for split in ("train", "dev", "test"):
        lines = (data / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


def deal_journals(cases: list[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    """Whole journals to sites, largest journal first, each to the smallest site so far."""
    journals: dict[str, list[dict[str, object]]] = {}
    for case in cases:
        journals.setdefault(str(case["source"]), []).append(case)
    sites: dict[str, list[dict[str, object]]] = {site: [] for site in SITES}
    for _, members in sorted(journals.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        smallest = min(SITES, key=lambda site: (len(sites[site]), SITES.index(site)))
        sites[smallest] += members
    return sites


def sample_cases(cases: list[dict[str, object]], n: int | None) -> list[dict[str, object]]:
    """``n`` of a site's cases drawn at random (seed 0) from all its journals, in their order."""
    if not n or n >= len(cases):
        return cases
    keep = set(random.Random(0).sample(range(len(cases)), n))
    return [case for i, case in enumerate(cases) if i in keep]


def site_corpus(site: str, cases: list[dict[str, object]]) -> tuple[Corpus, str]:
    """The site's corpus in its own label scheme, and its mapping onto the shared scheme."""
    full = Corpus(documents=tuple(Document.model_validate(case) for case in cases))
    coarse = load_label_mapping("meddocan_coarse")
    if site == "hospital-coarse":
        mapping = {label: label for label in coarse.coarse_labels}
        return apply_mapping(full, coarse), mapping_toml(coarse.coarse_labels, mapping)
    if site == "hospital-partial":
        documents = tuple(
            d.model_copy(update={"spans": tuple(s for s in d.spans if s.label != OMITTED)})
            for d in full.documents
        )
        mapping = {k: v for k, v in coarse.mapping.items() if k != OMITTED}
        return Corpus(documents=documents), mapping_toml(coarse.coarse_labels, mapping)
    return full, mapping_toml(coarse.coarse_labels, dict(coarse.mapping))


def mapping_toml(coarse: tuple[str, ...], mapping: dict[str, str]) -> str:
    lines = ['name = "meddocan_coarse"', f"coarse_labels = {json.dumps(list(coarse))}", ""]
    lines += ["[mapping]", *(f'{k} = "{v}"' for k, v in sorted(mapping.items()))]
    return "\n".join(lines) + "\n"


def write_site(
    out: Path, site: str, corpus: Corpus, mapping: str, args: argparse.Namespace
) -> Path:
    from shared.corpus_io import write_corpus

    folder = (out / site).resolve()
    write_corpus(corpus, folder / "corpus.jsonl")
    (folder / LABEL_MAPPING).write_text(mapping, encoding="utf-8")
    private, public = key_paths(folder / "keys", site)
    if not private.exists():
        generate_signing_key(private, public)
    if not (folder / "keys" / "supernode.key").exists():
        create_supernode_auth_key(folder / "keys" / "supernode.key")
    steps = "" if args.adapt_steps is None else f"max_steps = {args.adapt_steps}\n"
    settings = SITE_SETTINGS.format(
        threads=args.threads, adapt_steps=steps, min_recall=args.min_validation_recall
    )
    config = folder / SITE_CONFIG
    config.write_text(
        f'site_id = "{site}"\nlanguage = "es"\ndevice = "cpu"\n'
        f'work_dir = "{folder / "work"}"\nsigning_key = "{private}"\n\n'
        f'[corpus]\npath = "{folder / "corpus.jsonl"}"\n\n{settings}\n'
        f'[federation]\nsite-id = "{site}"\nwork-dir = "work"\n'
        f'auth-private-key = "keys/supernode.key"\nroot-certificates = "../{CA_FILE}"\n'
        "runtime-port = 0\n",
        encoding="utf-8",
    )
    return config


def price_sites(configs: list[Path]) -> list[str]:
    """Each site's pre-flight on this machine and what is left of it in its work dir, then
    the sum: the pipelines share the cores, so their hours add up whatever ``--jobs`` is."""
    from site_agent.config import load_site_config
    from site_agent.stages.left_to_run import left_to_run
    from site_agent.stages.preflight import run_preflight

    lines, total = [], 0.0
    for path in configs:
        config = load_site_config(path)
        plan = run_preflight(config)
        if plan is None:
            lines.append(f"{config.site_id}: not priced (its corpus cannot be read yet)")
            continue
        left = left_to_run(plan, config).hours
        total += left
        lines.append(
            f"{config.site_id}: pre-flight about {plan.hours:.1f} h on this machine, "
            f"{left:.1f} h of it left to run ({plan.generation.notes} notes to generate)"
        )
    lines.append(f"site pipelines: about {total:.1f} h left in all, then the rounds")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="deid-studies meddocan-sites", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=Path("../shared/data/meddocan"))
    parser.add_argument("--out", type=Path, default=Path("runs/meddocan-sites"))
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--max-cases", type=int, default=None, help="cases per site (all)")
    parser.add_argument(
        "--adapt-steps", type=int, default=None, help="LoRA optimiser steps (default: the recipe's)"
    )
    parser.add_argument(
        "--min-validation-recall", type=float, default=0.3, help="gold annotator's gate"
    )
    parser.add_argument("--skip-pipelines", action="store_true", help="reuse finished site runs")
    parser.add_argument(
        "--federation-timeout", type=float, default=4 * 3600.0, help="seconds for the rounds"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    jobs, args.threads = plan_jobs(len(SITES), args.jobs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / FEDERATION_TOML).write_text(
        f'base-model = "{model_dir(ENCODER)}"\n\n{STUDY_SETTINGS}', encoding="utf-8"
    )
    configs = []
    for site, cases in deal_journals(read_cases(args.data)).items():
        cases = sample_cases(cases, args.max_cases)
        corpus, mapping = site_corpus(site, cases)
        configs.append(write_site(args.out, site, corpus, mapping, args))
        journals = sorted({str(c["source"]) for c in cases})
        labels = len(corpus.labels)
        print(f"{site}: {len(cases)} cases, {len(journals)} journal(s), {labels} labels")
    if not args.skip_pipelines:
        for line in price_sites(configs):
            print(line)
        run_site_pipelines(configs, jobs)
    report = args.out / "report"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coordinator",
            "demo",
            "--sites",
            str(args.out),
            "--out",
            str(report),
            "--timeout",
            str(args.federation_timeout),
        ],
        check=True,
    )
    print(f"study done in {(time.monotonic() - started) / 60:.1f} min: {report / 'report.html'}")


if __name__ == "__main__":
    main()
