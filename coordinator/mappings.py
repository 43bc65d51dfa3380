"""One shared label mapping from the sites' own mapping files."""

from __future__ import annotations

from protocol import LabelMapping
from shared.errors import ConfigError


def merge_mappings(mappings: list[LabelMapping]) -> LabelMapping:
    """Every site's labels mapped onto one coarse scheme; a label that two sites map to
    different coarse labels, or schemes that disagree, is an error naming both."""
    if not mappings:
        raise ConfigError("no label mapping to merge; fix: give each site a label mapping file")
    name, coarse = mappings[0].name, mappings[0].coarse_labels
    merged: dict[str, str] = {}
    for mapping in mappings:
        if set(mapping.coarse_labels) != set(coarse):
            raise ConfigError(
                f"label mapping {mapping.name!r} maps onto {sorted(mapping.coarse_labels)}, "
                f"{name!r} onto {sorted(coarse)}; fix: map every site onto one coarse scheme"
            )
        for label, target in mapping.mapping.items():
            if merged.setdefault(label, target) != target:
                raise ConfigError(
                    f"label {label!r} is mapped to {merged[label]!r} and to {target!r}; fix: "
                    "give sites that mean different things different label names"
                )
    return LabelMapping(name=name, coarse_labels=tuple(coarse), mapping=merged)
