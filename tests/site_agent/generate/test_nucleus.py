"""Exact top-p without a full sort: same kept set and same sampled distribution as the
reference full-sort sampler (transformers' TopPLogitsWarper), on rows where the fast path
decides and on rows that fall back."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import chisquare
from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from site_agent.generate import nucleus
from site_agent.generate.nucleus import NucleusWarper, nucleus_mask


def _table(seed: int, rows: int, vocab: int, kind: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, vocab, generator=g)
    if kind == "peaked":  # a few tokens hold most of the mass: the top-k path decides
        return base * 15.0
    if kind == "flat":  # mass spread thin: the nucleus is wider than FIRST_K * GROWTH
        return base * 0.05
    ranks = torch.arange(1, vocab + 1, dtype=torch.float32)  # Zipf-like, shuffled
    zipf = -1.1 * ranks.log() + 0.01 * base
    return zipf[:, torch.randperm(vocab, generator=g)]


def _exact_keep(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """The nucleus by definition, in float64 with a full sort: tokens whose higher-ranked
    probability mass is below ``top_p``."""
    probs = torch.softmax(scores.double(), dim=-1)
    ordered, order = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = (ordered.cumsum(-1) - ordered) < top_p
    return torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)


def _reference(scores: torch.Tensor, top_p: float, temperature: float, top_k: int) -> torch.Tensor:
    out = TemperatureLogitsWarper(temperature)(None, scores) if temperature != 1.0 else scores
    if top_k:
        out = TopKLogitsWarper(top_k)(None, out)
    return TopPLogitsWarper(top_p)(None, out)


CASES = [
    (kind, vocab, top_p, temperature, top_k)
    for kind in ("peaked", "flat", "zipf")
    for vocab in (50, 5000, 70000)
    for top_p, temperature, top_k in ((0.95, 1.0, 0), (0.9, 0.7, 0), (0.95, 1.0, 40))
]


@pytest.mark.parametrize(("kind", "vocab", "top_p", "temperature", "top_k"), CASES)
def test_kept_set_equals_the_full_sort(
    kind: str, vocab: int, top_p: float, temperature: float, top_k: int
) -> None:
    scores = _table(vocab, 6, vocab, kind)
    got = NucleusWarper(top_p, temperature, top_k)(None, scores.clone())  # type: ignore[arg-type]
    warped = scores / temperature
    if top_k:
        warped = TopKLogitsWarper(top_k)(None, warped)
    assert torch.equal(~torch.isinf(got), _exact_keep(warped, top_p))
    library = _reference(scores.clone(), top_p, temperature, top_k)  # float32 full sort
    differing = (torch.isinf(got) != torch.isinf(library)).sum(dim=-1)
    assert int(differing.max()) <= 1  # at most the boundary token, by float32 rounding
    kept = ~torch.isinf(got)
    assert torch.allclose(got[kept], warped[kept])


def test_both_paths_are_exercised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peaked rows finish at FIRST_K; wide rows are bucketed and sort only one bucket."""
    calls: list[str] = []
    real_topk, real_sort = torch.topk, torch.sort
    monkeypatch.setattr(
        nucleus.torch, "topk", lambda *a, **k: calls.append("topk") or real_topk(*a, **k)
    )
    monkeypatch.setattr(
        nucleus.torch, "sort", lambda *a, **k: calls.append("sort") or real_sort(*a, **k)
    )
    nucleus_mask(_table(1, 4, 70000, "peaked"), 0.95)
    assert calls == ["topk"]
    calls.clear()
    nucleus_mask(_table(1, 4, 70000, "flat"), 0.95)
    assert calls == ["topk"] + ["sort"] * 4  # one small sort per wide row (FIRST_K too few)


@pytest.mark.parametrize("kind", ["peaked", "flat", "zipf"])
def test_sampled_tokens_follow_the_reference_distribution(kind: str) -> None:
    """Chi-square goodness of fit of 20,000 draws against the full-sort sampler's exact
    probabilities (bins with expected count < 5 pooled), fixed seeds."""
    scores = _table(7, 1, 2000, kind)
    reference = torch.softmax(_reference(scores.clone(), 0.95, 1.0, 0), dim=-1)[0].double()
    warped = NucleusWarper(0.95)(None, scores.clone())  # type: ignore[arg-type]
    probs = torch.softmax(warped, dim=-1)[0]
    g = torch.Generator().manual_seed(11)
    draws = torch.multinomial(probs, 20000, replacement=True, generator=g).numpy()
    observed = np.bincount(draws, minlength=probs.numel()).astype(float)
    expected = reference.numpy() * draws.size
    assert observed[expected == 0].sum() == 0  # nothing outside the reference nucleus
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 0.001


def test_it_detects_a_wrong_sampler() -> None:
    """The same statistic rejects a sampler that drops the nucleus's tail (a lossy top-k)."""
    scores = _table(7, 1, 2000, "zipf")
    reference = torch.softmax(_reference(scores.clone(), 0.95, 1.0, 0), dim=-1)[0].double()
    lossy = torch.softmax(TopKLogitsWarper(20)(None, scores.clone()), dim=-1)[0]
    g = torch.Generator().manual_seed(11)
    draws = torch.multinomial(lossy, 20000, replacement=True, generator=g).numpy()
    observed = np.bincount(draws, minlength=lossy.numel()).astype(float)
    expected = reference.numpy() * draws.size
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue < 1e-6


def test_generate_decodes_greedily_over_the_samplers_draw() -> None:
    from site_agent.generate.nucleus import NucleusSampler, generation_kwargs

    kwargs = generation_kwargs(0.95, 0.8, 0)
    assert kwargs["do_sample"] is False
    assert kwargs["top_p"] is None and kwargs["temperature"] is None and kwargs["top_k"] is None
    (sampler,) = kwargs["logits_processor"]
    assert isinstance(sampler, NucleusSampler) and sampler.temperature == 0.8
    scores = _table(3, 4, 5000, "zipf")
    rows = sampler(None, scores.clone())  # type: ignore[arg-type]
    assert (torch.isfinite(rows).sum(dim=-1) == 1).all()  # one finite score: the draw
    picked = rows.argmax(dim=-1, keepdim=True)
    warped = scores / 0.8
    assert _exact_keep(warped, 0.95).gather(1, picked).all()  # drawn from the nucleus


@pytest.mark.parametrize("kind", ["peaked", "flat", "zipf"])
def test_drawn_tokens_follow_the_reference_distribution(kind: str) -> None:
    """``sample_nucleus`` on 20,000 copies of one row (both paths: top-k and bucketed),
    chi-square against the full-sort sampler's probabilities."""
    from site_agent.generate.nucleus import sample_nucleus

    scores = _table(7, 1, 2000, kind)
    reference = torch.softmax(_reference(scores.clone(), 0.95, 1.0, 0), dim=-1)[0].double()
    torch.manual_seed(3)
    draws = sample_nucleus(scores.repeat(20000, 1), 0.95).numpy()
    observed = np.bincount(draws, minlength=scores.shape[1]).astype(float)
    expected = reference.numpy() * draws.size
    assert observed[expected == 0].sum() == 0
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 0.001
