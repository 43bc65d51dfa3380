"""generate_corpus: ids, counts, provenance; resuming after a kill loses and repeats nothing."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shared.corpus_io import read_corpus
from shared.errors import ConfigError, CorpusFormatError
from site_agent.generate import backend as backend_registry
from site_agent.generate.plan import GenerationPlan, slots
from site_agent.generate.resumable import generate_corpus, run_history
from site_agent.generate.settings import GenerationSettings
from site_agent.generate.store import load_done
from tests.site_agent.generate import fake_backend
from tests.site_agent.generate.fake_backend import FakeBackend

PLAN = GenerationPlan(
    prompts=("Paciente de 70", "Mujer de 45", "Ingresa en"), samples=(3, 2, 2), max_new_tokens=50
)
FAKE = GenerationSettings(backend="fake", batch_size=2, seed=11)


class Killed(Exception):
    pass


@pytest.fixture(autouse=True)
def fake_registered() -> Iterator[None]:
    backend_registry.register_backend("fake", lambda: FakeBackend)
    fake_backend.OPENED.clear()
    yield
    backend_registry.BACKENDS.remove("fake")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _kill_after(notes: int) -> Callable[[int, int], None]:
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == notes:
            raise Killed

    return progress


def test_all_planned_documents_with_deterministic_ids(tmp_path: Path) -> None:
    corpus = generate_corpus(PLAN, tmp_path, None, FAKE, tmp_path / "syn.jsonl")
    # round-robin over the three prompts (3, 2 and 2 samples)
    expected = ["syn-0-0", "syn-1-0", "syn-2-0", "syn-0-1", "syn-1-1", "syn-2-1", "syn-0-2"]
    assert [d.id for d in corpus.documents] == expected
    for doc in corpus.documents:
        prompt = PLAN.prompts[doc.meta["prompt_index"]]  # type: ignore[index]
        assert doc.text.startswith(prompt + " continuation")
    assert len({d.text for d in corpus.documents}) == len(expected)  # distinct samples
    reread = read_corpus(tmp_path / "syn.jsonl")
    assert reread.documents == corpus.documents
    assert reread.provenance.notes["backend"] == "fake"


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    reference = generate_corpus(PLAN, "org/tiny", None, FAKE, tmp_path / "ref.jsonl")
    out = tmp_path / "syn.jsonl"
    with pytest.raises(Killed):
        generate_corpus(PLAN, "org/tiny", None, FAKE, out, progress=_kill_after(4))
    assert len(_lines(out)) == 4  # every note is saved as it ends
    first = run_history(out)
    assert first is not None and first.invocations == 1 and first.seconds > 0
    seen: list[tuple[int, int]] = []
    corpus = generate_corpus(
        PLAN, "org/tiny", None, FAKE, out, progress=lambda done, total: seen.append((done, total))
    )
    assert seen[0] == (4, PLAN.total) and seen[-1] == (PLAN.total, PLAN.total)  # starts at 4
    history = run_history(out)  # both invocations saved notes; their time adds up
    assert history is not None and history.invocations == 2 and history.seconds > first.seconds
    generate_corpus(PLAN, "org/tiny", None, FAKE, out)  # complete: nothing saved, nothing added
    assert run_history(out) == history
    ids = [str(row["id"]) for row in _lines(out)]
    assert Counter(ids).most_common(1)[0][1] == 1
    assert sorted(ids) == sorted(d.id for d in reference.documents)
    assert corpus.documents == reference.documents  # same seeds: same documents


def test_torn_last_line_is_dropped_and_regenerated(tmp_path: Path) -> None:
    out = tmp_path / "syn.jsonl"
    with pytest.raises(Killed):
        generate_corpus(PLAN, "org/tiny", None, FAKE, out, progress=_kill_after(2))
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "syn-2-0", "text": "Ingresa en half-writ')
    assert set(load_done(out)) == {"syn-0-0", "syn-1-0"}  # the first two notes, round-robin
    assert out.read_text(encoding="utf-8").endswith("}\n")
    corpus = generate_corpus(PLAN, "org/tiny", None, FAKE, out)
    assert len(corpus) == PLAN.total
    assert len(_lines(out)) == PLAN.total


def test_a_note_does_not_depend_on_the_batch_it_was_written_in(tmp_path: Path) -> None:
    """Each note has its own seed: batch size and a resumed run change no note."""
    one = generate_corpus(PLAN, "org/tiny", None, FAKE, tmp_path / "two.jsonl")
    wider = FAKE.model_copy(update={"batch_size": 3})
    other = generate_corpus(PLAN, "org/tiny", None, wider, tmp_path / "three.jsonl")
    assert [d.text for d in one.documents] == [d.text for d in other.documents]
    assert len({d.text for d in one.documents}) == PLAN.total


def test_complete_run_does_not_load_the_model_again(tmp_path: Path) -> None:
    generate_corpus(PLAN, "org/tiny", None, FAKE, tmp_path / "syn.jsonl")
    generate_corpus(PLAN, "org/tiny", None, FAKE, tmp_path / "syn.jsonl")
    assert fake_backend.OPENED == ["org/tiny"]


def test_corruption_inside_the_file_names_the_line(tmp_path: Path) -> None:
    out = tmp_path / "syn.jsonl"
    generate_corpus(PLAN, "org/tiny", None, FAKE, out)
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "not json\n"
    out.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"syn\.jsonl:3"):
        load_done(out)


def test_other_run_in_the_same_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "syn.jsonl"
    generate_corpus(PLAN, "org/tiny", None, FAKE, out)
    with pytest.raises(ConfigError, match="another generation run"):
        generate_corpus(PLAN, "org/tiny", None, FAKE.model_copy(update={"seed": 12}), out)


def test_a_deleted_output_file_may_be_started_afresh(tmp_path: Path) -> None:
    out = tmp_path / "syn.jsonl"
    generate_corpus(PLAN, "org/tiny", None, FAKE, out)
    out.unlink()
    other = FAKE.model_copy(update={"seed": 12})
    assert len(generate_corpus(PLAN, "org/tiny", None, other, out)) == PLAN.total


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_models import tiny_causal_lm

    return tiny_causal_lm(tmp_path_factory.mktemp("lm") / "llama", list(PLAN.prompts))


def test_hf_backend_generates_the_planned_corpus_and_resumes(
    tiny_llama: Path, tmp_path: Path
) -> None:
    settings = GenerationSettings(backend="hf", batch_size=3, seed=5, min_new_tokens=2)
    plan = PLAN.model_copy(update={"max_new_tokens": 6})
    out = tmp_path / "syn.jsonl"
    with pytest.raises(Killed):
        generate_corpus(plan, tiny_llama, None, settings, out, progress=_kill_after(1))
    corpus = generate_corpus(plan, tiny_llama, None, settings, out)
    assert [d.id for d in corpus.documents] == [slot.doc_id for slot in slots(plan)]
    assert sorted(d.id for d in corpus.documents) == sorted(
        f"syn-{p}-{s}" for p, n in enumerate(plan.samples) for s in range(n)
    )
    for doc in corpus.documents:
        assert doc.text.startswith(plan.prompts[doc.meta["prompt_index"]])  # type: ignore[index]
        assert len(doc.text) > len(plan.prompts[doc.meta["prompt_index"]])  # type: ignore[index]
    uninterrupted = generate_corpus(plan, tiny_llama, None, settings, tmp_path / "ref.jsonl")
    assert [d.text for d in corpus.documents] == [d.text for d in uninterrupted.documents]
    assert int(corpus.provenance.notes["tokens_generated"]) > 0


def test_the_stage_adds_earlier_invocations_of_the_same_run_only() -> None:
    from site_agent.generate.resumable import RunHistory, resumed_summary

    after = RunHistory("d", 130.0, 3)
    assert resumed_summary(None, after) == {"generation_runs": 3, "seconds_earlier_runs": 0}
    earlier = RunHistory("d", 100.04, 2)
    assert resumed_summary(earlier, after)["seconds_earlier_runs"] == 100.0
    assert resumed_summary(RunHistory("other", 100.0, 2), after)["seconds_earlier_runs"] == 0
    assert resumed_summary(earlier, None) == {}


def test_a_moved_adapter_resumes_its_store_and_another_one_is_refused(tmp_path: Path) -> None:
    """The store's run key holds the adapter's content, not its folder: a work dir moved
    elsewhere goes on where it stopped; retrained weights at the same path do not."""
    adapter = tmp_path / "work" / "adapter"
    adapter.mkdir(parents=True)
    (adapter / "adapter_model.safetensors").write_bytes(b"weights v1")
    out = tmp_path / "syn.jsonl"
    with pytest.raises(Killed):
        generate_corpus(PLAN, "org/tiny", adapter, FAKE, out, progress=_kill_after(2))
    moved = tmp_path / "moved" / "adapter"
    moved.parent.mkdir()
    adapter.rename(moved)
    seen: list[int] = []
    corpus = generate_corpus(
        PLAN, "org/tiny", moved, FAKE, out, progress=lambda done, _total: seen.append(done)
    )
    assert seen[0] == 2 and len(corpus) == PLAN.total  # resumed after the first two notes
    (moved / "adapter_model.safetensors").write_bytes(b"weights v2")
    with pytest.raises(ConfigError, match="another generation run"):
        generate_corpus(PLAN, "org/tiny", moved, FAKE, out)
