"""Turn pydantic validation errors into '[file:line] loc -> message' lines."""

from __future__ import annotations

from pydantic import ValidationError


def validation_lines(error: ValidationError) -> list[str]:
    """One line per problem; rules that report several problems at once are split."""
    lines: list[str] = []
    for item in error.errors():
        message = str(item["msg"]).removeprefix("Value error, ")
        loc = " -> ".join(str(part) for part in item["loc"])
        for part in message.split("\n"):
            lines.append(f"{loc} -> {part}" if loc else part)
    return lines
