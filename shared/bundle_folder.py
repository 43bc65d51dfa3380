"""Read a bundle folder into :class:`~shared.bundle_verify.BundleBytes`, never leaving it.

Every regular file below the folder is read, whatever the manifest says, so that a file the
manifest does not list is seen (and rejected by the verifier) and a manifest name can never
make the reader open a file outside the folder. Symbolic links and other non-regular entries
are refused outright: a bundle is plain files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from protocol.export import MANIFEST, SIGNATURE
from shared.bundle_verify import BundleBytes, BundleRejected

MAX_FILES = 512


def _read_regular(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BundleRejected("malformed_bundle", f"{path.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _walk(bundle_dir: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(bundle_dir, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            relative = path.relative_to(bundle_dir).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise BundleRejected(
                    "malformed_bundle", f"{relative} is a symbolic link; a bundle is plain files"
                )
            if stat.S_ISREG(mode):
                found[relative] = path
            elif not stat.S_ISDIR(mode):
                raise BundleRejected("malformed_bundle", f"{relative} is not a regular file")
        if len(found) > MAX_FILES:
            raise BundleRejected("malformed_bundle", f"more than {MAX_FILES} files")
    return found


def read_bundle_folder(bundle_dir: Path) -> BundleBytes:
    """The manifest, signature and every other file of ``bundle_dir`` (no checks of content)."""
    if bundle_dir.is_symlink() or not bundle_dir.is_dir():
        raise BundleRejected("malformed_bundle", f"{bundle_dir} is not a bundle folder")
    files = _walk(bundle_dir)
    for name in (MANIFEST, SIGNATURE):
        if name not in files:
            raise BundleRejected(
                "malformed_bundle",
                f"{bundle_dir / name} is missing; a bundle holds {MANIFEST} and {SIGNATURE} "
                "written by `site-agent synthesize`",
            )
    signature = _read_regular(files.pop(SIGNATURE))  # its length: the verifier checks
    try:
        signature_text = signature.decode("ascii").strip()
    except UnicodeDecodeError as exc:
        raise BundleRejected("bad_signature", f"{SIGNATURE} is not base64 text") from exc
    manifest = _read_regular(files.pop(MANIFEST))
    artifacts = {name: _read_regular(path) for name, path in sorted(files.items())}
    return BundleBytes(manifest=manifest, signature=signature_text, artifacts=artifacts)
