"""The stage machinery: what a stage is (``stage``), the ordered registry (``registry``) and
the runner that calls the stages in order and skips what is already done (``runner``)."""

from site_agent.pipeline.runner import (
    StageRun,
    artifacts_on_disk,
    folder_of,
    preflight,
    run_pipeline,
    settings_digest,
    stage_artifact,
    stage_folder,
)
from site_agent.pipeline.stage import Stage, StageContext, StageOutput, StageRecord, read_record

__all__ = [
    "Stage",
    "StageContext",
    "StageOutput",
    "StageRecord",
    "StageRun",
    "artifacts_on_disk",
    "folder_of",
    "preflight",
    "read_record",
    "run_pipeline",
    "settings_digest",
    "stage_artifact",
    "stage_folder",
]
