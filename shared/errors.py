"""Exceptions that carry the process exit code the CLI should end with.

Messages say what was found, what is allowed, and how to fix it.
"""

from __future__ import annotations


class ToolkitError(Exception):
    """Base of every error the toolkit raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.problems = problems or []

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        listed = "\n".join(f"  - {p}" for p in self.problems)
        return f"{self.message}\n{listed}"


class UsageError(ToolkitError):
    """The command line or a path given to it is wrong."""

    exit_code = 2


class CorpusFormatError(ToolkitError):
    """A corpus file cannot be read or breaks the corpus contract (names file and line)."""

    exit_code = 65

    def __init__(
        self, message: str, *, path: object = None, line: int | None = None, **kw: object
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message, **kw)  # type: ignore[arg-type]
        self.path = path
        self.line = line


class ConfigError(ToolkitError):
    """A configuration file or value is invalid."""

    exit_code = 78


class QualityGateError(ToolkitError):
    """A model or corpus is too weak or too risky to go on with (annotator gate, audit gate)."""

    exit_code = 3


class ExportRefusedError(ToolkitError):
    """The export stage refuses to let an artifact leave the site."""

    exit_code = 4


class VerificationError(ToolkitError):
    """A signature, hash or manifest does not verify."""

    exit_code = 5


class ModelUnavailableError(ToolkitError):
    """A model cannot be found locally and cannot be fetched."""

    exit_code = 6
