"""The picture of the house in ARCHITECTURE.md, drawn from the code: the registered stages in
order, what each reads, and which apply the run plan. ``python -m site_agent.stages.picture``
prints it; a test keeps ARCHITECTURE.md's copy equal."""

from __future__ import annotations

from site_agent.stages.pipeline import PLAN_READERS
from site_agent.stages.registry import STAGES


def picture() -> str:
    """The pipeline as plain lines (one stage a line, its inputs and adapter)."""
    lines = [
        "site.toml + gold corpus + this machine",
        "  → run-plan.json (site_agent/plan/: recipe, budget, estimate; computed once per run)",
    ]
    for index, stage in enumerate(STAGES, 1):
        module = f"site_agent/stages/{stage.name.replace('-', '_')}.py"
        reads = ", ".join(stage.inputs) or "the gold corpus"
        plan = " + run-plan.json" if stage.name in PLAN_READERS else ""
        lines.append(f"{index:02d} {stage.name:<16} {module:<38} ← {reads}{plan}")
    lines.append("   outbox/<bundle-id>/ ─── Flower ───▶ coordinator: roll call → collect + verify")
    lines.append("   → aggregate (+ FedAvg) → cross-site → report")
    return "\n".join(lines)


if __name__ == "__main__":
    print(picture())
