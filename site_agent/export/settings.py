"""``[export]``: what the signed bundle carries besides the audited synthetic corpus."""

from __future__ import annotations

from pydantic import Field

from protocol.base import ProtocolModel


class ExportSettings(ProtocolModel):
    """What the signed bundle carries besides the audited synthetic corpus."""

    include_synthetic_encoder: bool = Field(
        True, description="the encoder trained on the synthetic corpus (train-synthetic)"
    )
    include_site_report: bool = Field(
        True, description="site_report.json: gold vs synthetic scores on the test split"
    )
    min_spans: int = Field(
        1, ge=0, description="refuse a synthetic corpus with fewer machine-annotated PII spans"
    )
    min_pii_document_share: float = Field(
        0.05, ge=0, le=1, description="refuse when a smaller share of its documents holds PII"
    )
    min_synthetic_token_f1: float = Field(
        0.05,
        ge=0,
        le=1,
        description="refuse when the encoder trained on the synthetic corpus scores a lower "
        "token F1 on the site's test split (site_report.json)",
    )
    accept_degenerate: str = Field(
        "",
        description="export anyway what the three checks above refuse; this reason is "
        "recorded, with what was found, in the signed manifest (quality_override)",
    )
    require_approval: bool = Field(
        False,
        description="the signed bundle waits in the export stage's folder until a reviewer "
        "approves it (`site-agent review`, then `site-agent approve BUNDLE --by NAME`), which "
        "records who approved what and when in the signed manifest and puts it in the outbox",
    )
