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
