"""The stage machinery, generic over the configuration the stages read: what a stage is
(``stage``) and the one loop that runs stages in order and reuses what is done (``runner``).

It imports no stage: the ordered stage list and the adapters live in :mod:`site_agent.stages`.
"""

from site_agent.pipeline.runner import (
    Placement,
    StageRun,
    WorkDirPlacement,
    artifacts_on_disk,
    can_skip,
    run_stages,
    settings_digest,
    stage_folder,
)
from site_agent.pipeline.stage import (
    STAGE_RECORD,
    Stage,
    StageContext,
    StageOutput,
    StageRecord,
    artifact_path,
    read_record,
)

__all__ = [
    "STAGE_RECORD",
    "Placement",
    "Stage",
    "StageContext",
    "StageOutput",
    "StageRecord",
    "StageRun",
    "WorkDirPlacement",
    "artifact_path",
    "artifacts_on_disk",
    "can_skip",
    "read_record",
    "run_stages",
    "settings_digest",
    "stage_folder",
]
