"""The transformers backend: continuous batching over the model's cache (``refill``), or
batched ``generate`` with left padding; CPU or GPU.

The adapter is merged into the base weights once at load time, which makes sampling as fast
as the plain model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shared.threads import ThreadBudget
from site_agent.generate.backend import NoteJob, PromptJob, in_batches, per_job, sample_rows
from site_agent.generate.settings import GenerationSettings


def hf_generation_kwargs(settings: GenerationSettings, max_new_tokens: int) -> dict[str, Any]:
    """Nucleus sampling as in the seed study; ``top_k=0`` switches top-k filtering off.

    ``nucleus = "partial"`` samples with :class:`~site_agent.generate.nucleus.NucleusWarper`
    (same distribution, no full-vocabulary sort); ``"sort"`` with transformers' own warpers.
    """
    lengths = {"min_new_tokens": settings.min_new_tokens, "max_new_tokens": max_new_tokens}
    if settings.nucleus == "partial":
        from site_agent.generate.nucleus import generation_kwargs

        return {
            **generation_kwargs(settings.top_p, settings.temperature, settings.top_k),
            **lengths,
        }
    return {
        "do_sample": True,
        "top_p": settings.top_p,
        "temperature": settings.temperature,
        "top_k": settings.top_k,
        **lengths,
    }


def _dtype(cuda: bool) -> Any:
    import torch

    from shared.cpu_features import cpu_bf16_supported

    return torch.bfloat16 if cuda or cpu_bf16_supported() else torch.float32


def _restricted_ids(model: Any, adapter: Path | None) -> Any:
    """The row space of a restricted output layer (``vocabulary.json``), or None."""
    from site_agent.adapt.output_vocabulary import read_vocabulary

    vocabulary = read_vocabulary(adapter)
    if vocabulary is None:
        return None
    from site_agent.generate.restricted_ids import RestrictedIds

    return RestrictedIds(model, vocabulary)


def contiguous_head_input(model: Any) -> Any:
    """Make the output layer's input contiguous before the layer runs; returns the hook handle.

    ``generate`` scores only the last position: the model hands its output layer the slice
    ``hidden[:, -1:, :]``, whose batch stride still spans the whole prompt. When the layer's
    weight does not require grad (a merged adapter freezes it), ``torch.matmul`` will not
    fold such a 3-D input into one matrix product and runs a batched product instead, with
    the weight copied once per row: on the prompt step of Gemma 3 at batch 16 that is 16
    copies of the 262,144 x 640 layer, 5 GB and about half of a 128-token batch's time. A
    contiguous ``batch x 1 x hidden`` input (a few kilobytes) folds."""

    def hook(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return (args[0].contiguous(), *args[1:])

    return model.get_output_embeddings().register_forward_pre_hook(hook)


def _as_ids(ids: int | Sequence[int] | None) -> list[int]:
    if ids is None:
        return []
    return [ids] if isinstance(ids, int) else [int(i) for i in ids]


def _cache_splices(model: Any) -> bool:
    """Whether the refill loop can splice this model's cache (``refill.supports_refill``)."""
    from transformers import DynamicCache

    from site_agent.generate.refill import supports_refill

    return supports_refill(DynamicCache(config=model.config))


class HFBackend:
    name = "hf"

    def __init__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        import torch

        from site_agent.adapt.quantization import apply_cpu_threads
        from site_agent.generate.merge import load_adapted

        cuda = torch.cuda.is_available()
        apply_cpu_threads(settings.cpu_threads, "cuda" if cuda else "cpu")
        self.tokenizer, loaded = load_adapted(model, adapter, dtype=_dtype(cuda))
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = loaded.to("cuda" if cuda else "cpu").eval()
        self.kwargs = hf_generation_kwargs(settings, max_new_tokens)
        self.kwargs["pad_token_id"] = self.tokenizer.pad_token_id
        self.restricted = _restricted_ids(self.model, adapter)
        self.head_hook = contiguous_head_input(self.model)
        if self.restricted is not None:  # generate works in rows of the restricted layer
            eos = self.restricted.kept_rows(self.model.generation_config.eos_token_id)
            self.kwargs["eos_token_id"] = eos or None
            self.kwargs["pad_token_id"] = self.restricted.kept_rows(self.tokenizer.pad_token_id)[0]
        self.tokens_generated = 0
        self.budget = ThreadBudget() if not cuda and settings.cpu_threads is None else None
        self.threads_used: list[int] = []
        self.settings, self.max_new_tokens = settings, max_new_tokens
        # a recurrent or quantised cache cannot be spliced: static batches instead
        self.static = (
            None if _cache_splices(self.model) else in_batches(self.generate, settings.batch_size)
        )

    def _threads(self) -> None:
        import torch

        if self.budget is not None:  # the cores other jobs left idle
            self.threads_used.append(self.budget.threads())
            torch.set_num_threads(self.threads_used[-1])

    def notes(self, jobs: Sequence[NoteJob]) -> Iterator[tuple[int, str]]:
        """Continuous batching (``refill``): ``[generation] batch_size`` notes in flight, a
        finished note's row refilled at once; each note sampled with its own seed."""
        from site_agent.generate.nucleus import RowNucleusSampler
        from site_agent.generate.refill import NoteRequest, refill_generate

        if self.static is not None:
            yield from self.static(jobs)
            return
        self._threads()
        requests = (
            NoteRequest(job.key, self._prompt_ids(job.prompt), job.seed, job.max_new_tokens)
            for job in jobs
        )
        sampler = RowNucleusSampler(
            self.settings.top_p, self.settings.temperature, self.settings.top_k
        )
        eos = self.kwargs.get("eos_token_id", self.model.generation_config.eos_token_id)
        for key, tokens in refill_generate(
            self.model,
            requests,
            rows=self.settings.batch_size,
            max_new_tokens=self.max_new_tokens,
            min_new_tokens=self.settings.min_new_tokens,
            eos=_as_ids(eos),
            pad_id=int(self.kwargs["pad_token_id"]),
            sample=sampler,
        ):
            self.tokens_generated += len(tokens)
            yield key, self._decode(tokens)

    def _prompt_ids(self, prompt: str) -> list[int]:
        import torch

        ids = self.tokenizer(prompt)["input_ids"]
        if self.restricted is None:
            return list(ids)
        return list(self.restricted.encode(torch.tensor([ids]))[0].tolist())

    def _decode(self, tokens: list[int]) -> str:
        import torch

        if self.restricted is not None:
            tokens = self.restricted.decode(torch.tensor(tokens, dtype=torch.long)).tolist()
        return str(self.tokenizer.decode(tokens, skip_special_tokens=True))

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        import torch

        rows = sample_rows(jobs)
        self._threads()
        torch.manual_seed(jobs[0].seed)
        encoded = self.tokenizer(rows, return_tensors="pt", padding=True).to(self.model.device)
        if self.restricted is not None:
            encoded["input_ids"] = self.restricted.encode(encoded["input_ids"])
        with torch.inference_mode():
            output = self.model.generate(**encoded, **self.kwargs)
        new_tokens = output[:, encoded["input_ids"].shape[1] :]
        if self.restricted is not None:
            new_tokens = self.restricted.decode(new_tokens)
        self.tokens_generated += int((new_tokens != self.tokenizer.pad_token_id).sum())
        return per_job(jobs, self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True))

    def close(self) -> None:
        del self.model
