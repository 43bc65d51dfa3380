"""The parts of a work dir the pipeline writes and deletes in must be its own folders.

A run empties stale stage folders and removes the hidden folders an interrupted export left in
``outbox/``. Were ``outbox`` (or a stage folder) a symbolic link, those deletions would happen
in the link's target, outside the work dir: a ``.git`` folder there would go at every run. So a
run refuses to start while any of them is a link; the work dir itself may be one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from shared.errors import UsageError


class LinkedWorkDirPart(UsageError):
    """A folder the pipeline writes or deletes in is a symbolic link out of the work dir."""


def refuse_linked_parts(work_dir: Path, parts: Iterable[Path]) -> None:
    """Raise :class:`LinkedWorkDirPart` naming the first of ``parts`` that is a link."""
    for part in parts:
        if part.is_symlink():
            raise LinkedWorkDirPart(
                f"{part} is a symbolic link (to {os.readlink(part)}); the pipeline writes and "
                f"deletes inside it, so it must be a folder of the work dir {work_dir}; fix: "
                f"remove the link (rm {part}) and let the run create the folder, or point "
                "work_dir at the disk you wanted instead"
            )
