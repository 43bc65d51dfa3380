"""Heatmaps of the models x sites matrices, as PNG bytes (matplotlib, no display)."""

from __future__ import annotations

import io

from coordinator.report.tables import METRICS, model_names, site_ids, value
from protocol.rounds import FederationReport


def heatmap_png(report: FederationReport, metric: str) -> bytes:
    """One heatmap: rows are models (and the site baselines), columns are sites."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models, sites = model_names(report), site_ids(report)
    rows = [*models, "site baseline"]
    grid = np.full((len(rows), len(sites)), np.nan)
    for i, model in enumerate(models):
        for j, site in enumerate(sites):
            v = value(report.cell(model, site), metric)
            grid[i, j] = np.nan if v is None else v
    for j, site in enumerate(sites):
        v = value(report.baseline(site), metric)
        grid[-1, j] = np.nan if v is None else v
    cmap = "Reds" if metric == "document_leakage" else "Greens"
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * max(len(sites), 1), 1.0 + 0.5 * len(rows)))
    image = ax.imshow(np.ma.masked_invalid(grid), vmin=0.0, vmax=1.0, cmap=cmap, aspect="auto")
    # site names are as long as a cell is wide: slanted, they do not run into each other
    ax.set_xticks(range(len(sites)), sites, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for (i, j), v in np.ndenumerate(grid):
        colour = "white" if not np.isnan(v) and v > 0.6 else "black"
        label = "n/a" if np.isnan(v) else f"{v:.2f}"
        ax.text(j, i, label, ha="center", va="center", fontsize=9, color=colour)
    ax.set_title(METRICS[metric], fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()
