"""Stage 5, generate: sample notes from the adapted generator (vLLM on GPU, transformers on CPU).

``plan`` decides what to generate, ``resumable`` generates it resumably through a backend
the one engine rule picks (``engine_rule``), ``modes`` (annotate | tagged | template) decide
how notes look to the generator and read the generated notes into the synthetic corpus,
``notes`` is the stage's plain function.
"""
