"""Stage 5, generate: sample notes from the adapted generator (vLLM on GPU, transformers on CPU).

``plan`` decides what to generate, ``run`` generates it resumably through a registered
backend, ``modes`` (annotate | tagged | template) decide how notes look to the generator and
read the generated notes into the synthetic corpus, ``stage`` is the pipeline stage.
"""
