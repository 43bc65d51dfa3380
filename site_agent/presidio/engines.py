"""Presidio engines around an exported encoder: the analyzer finds PHI, the anonymizer hides it.

The encoder runs as Presidio's own ``HuggingFaceNerRecognizer`` (the token-classification
pipeline, sub-words aggregated to the first sub-token of each word, as the encoder was trained)
with the label mapping of ``entities``. The analyzer's NLP engine is Presidio's ``no_op``
engine: the recognizer tokenises for itself, so no spaCy model is downloaded or loaded.
Presidio's predefined pattern recognizers (e-mail, phone, URL...) can be added beside it.

The folder is loaded through ``shared/safe_models.py`` as every other model: Presidio's
recognizer would hand the folder to transformers' ``pipeline``, which runs code a folder names
in ``auto_map`` once a prompt is answered "y". Here the recognizer's pipeline is built from a
model and tokenizer loaded with ``trust_remote_code=False`` after the folder is checked, so a
folder with code is refused with a named error and nothing is asked or run.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from shared.errors import ConfigError, ModelUnavailableError
from shared.limits import LimitExceeded, parse_json
from shared.safe_models import CONFIG_LIMITS, check_model_source, from_pretrained
from site_agent.presidio.entities import presidio_entity

INSTALL_FIX = 'fix: pip install -e ".[presidio]" (presidio-analyzer and presidio-anonymizer)'
RECOGNIZER_NAME = "DeidSynthEncoderRecognizer"


def require_presidio() -> None:
    """Raise a ConfigError naming the extra when Presidio is not installed."""
    try:
        import presidio_analyzer  # noqa: F401
        import presidio_anonymizer  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"Presidio is not installed ({exc.name}); {INSTALL_FIX}") from exc


def encoder_labels(model_dir: Path) -> tuple[str, ...]:
    """The entity labels an encoder folder tags (its ``config.json`` ``id2label``, B-/I- cut)."""
    check_model_source(Path(model_dir))  # UnsafeModel: code, auto_map, an unknown model type
    config = Path(model_dir) / "config.json"
    try:
        id2label = parse_json(config.read_bytes(), CONFIG_LIMITS, str(config))["id2label"]
    except (OSError, ValueError, KeyError, TypeError, LimitExceeded) as exc:
        raise ModelUnavailableError(
            f"{config}: not a token-classification model folder (no readable id2label); fix: "
            "give the encoder folder of an export bundle (encoder/) or of a trained annotator"
        ) from exc
    tags = {str(tag) for tag in id2label.values()}
    return tuple(sorted({t[2:] if t[:2] in ("B-", "I-") else t for t in tags} - {"O"}))


@cache
def safe_recognizer_class() -> type:
    """Presidio's ``HuggingFaceNerRecognizer`` whose pipeline is built from a model and a
    tokenizer loaded through ``shared.safe_models`` (never from the bare folder name)."""
    from presidio_analyzer.predefined_recognizers.ner import HuggingFaceNerRecognizer

    class SafeHuggingFaceNerRecognizer(HuggingFaceNerRecognizer):
        def load(self) -> None:
            if self.ner_pipeline is not None:
                return
            from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

            model = from_pretrained(AutoModelForTokenClassification, str(self.model_name))
            tokenizer = from_pretrained(AutoTokenizer, str(self.tokenizer_name))
            self.ner_pipeline = pipeline(  # type: ignore[assignment]
                "token-classification",
                model=model,
                tokenizer=tokenizer,
                aggregation_strategy=self.aggregation_strategy,
                device=self.device if self.device >= 0 else -1,
            )

    return SafeHuggingFaceNerRecognizer


def encoder_recognizer(
    model_dir: Path, language: str = "en", threshold: float = 0.3, device: str = "cpu"
) -> Any:
    """Presidio's ``HuggingFaceNerRecognizer`` over the encoder folder, labels mapped, the
    model loaded without remote code (:func:`safe_recognizer_class`)."""
    require_presidio()
    labels = encoder_labels(model_dir)
    mapping = {label: presidio_entity(label) for label in labels}
    return safe_recognizer_class()(
        name=RECOGNIZER_NAME,
        model_name=str(model_dir),
        supported_language=language,
        label_mapping=mapping,
        aggregation_strategy="first",
        threshold=threshold,
        device=device,
    )


def analyzer_engine(
    model_dir: Path,
    language: str = "en",
    *,
    builtin_recognizers: bool = False,
    threshold: float = 0.3,
) -> Any:
    """An ``AnalyzerEngine`` whose recognizer is the encoder (no spaCy model is loaded).

    ``builtin_recognizers`` adds Presidio's predefined recognizers for ``language`` (pattern
    recognizers such as e-mail and phone; those that need an NLP engine's entities find none).
    """
    require_presidio()
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider
    from presidio_analyzer.recognizer_registry import RecognizerRegistry

    nlp_engine = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "no_op",
            "models": [{"lang_code": language, "model_name": "no_op"}],
        }
    ).create_engine()
    registry = RecognizerRegistry(supported_languages=[language])
    if builtin_recognizers:
        registry.load_predefined_recognizers(languages=[language], nlp_engine=nlp_engine)
    registry.add_recognizer(encoder_recognizer(model_dir, language, threshold))
    return AnalyzerEngine(nlp_engine=nlp_engine, registry=registry, supported_languages=[language])


def anonymise(text: str, analyzer: Any, language: str = "en") -> str:
    """``text`` with every PHI span the analyzer finds replaced by ``<ENTITY>`` (Presidio's
    default ``replace`` operator)."""
    from presidio_anonymizer import AnonymizerEngine

    results = analyzer.analyze(text=text, language=language)
    return str(AnonymizerEngine().anonymize(text=text, analyzer_results=results).text)
