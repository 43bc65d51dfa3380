"""shared.optimiser.adamw: the fused kernel where torch has one, the same update as the loop."""

from __future__ import annotations

import torch

from shared.optimiser import adamw


def params(seed: int, device: str = "cpu") -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    shapes = [(7, 5), (5,), (3, 4, 2)]
    return [torch.nn.Parameter(torch.randn(s, generator=generator).to(device)) for s in shapes]


def run(optimiser_of, steps: int = 5) -> list[torch.Tensor]:
    weights = params(0)
    optimiser = optimiser_of(
        [{"params": weights[:1], "weight_decay": 0.1}, {"params": weights[1:], "weight_decay": 0.0}]
    )
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        for w in weights:
            w.grad = torch.randn(w.shape, generator=generator)
        optimiser.step()
    return [w.detach().clone() for w in weights]


def test_cpu_parameters_get_the_fused_kernel():
    optimiser = adamw(params(0), lr=1e-3)
    assert optimiser.defaults["fused"] is True


def test_the_fused_update_is_the_loops_update():
    fused = run(lambda groups: adamw(groups, lr=1e-2))
    loop = run(lambda groups: torch.optim.AdamW(groups, lr=1e-2, foreach=False))
    start = params(0)
    for a, b, s in zip(fused, loop, start, strict=True):
        assert not torch.equal(a, s)  # the weights moved
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_parameters_without_a_fused_kernel_get_the_loop():
    on_meta = adamw(params(0, device="meta"), lr=1e-3)
    assert not on_meta.defaults.get("fused")
    complex_weight = torch.nn.Parameter(torch.randn(3, dtype=torch.complex64))
    mixed = adamw([*params(0), complex_weight], lr=1e-3)
    assert not mixed.defaults.get("fused")
    complex_weight.grad = torch.ones_like(complex_weight)
    mixed.step()  # the loop steps what the fused kernel would refuse
