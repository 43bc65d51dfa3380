"""Stage 3, annotator: fine-tune the site's gold machine annotator, and the site's rules for it.

The NER engine (training, machine annotation, decoding, scoring) is the :mod:`ner` package,
which the coordinator uses too. Here is what is the site's: ``settings`` (the ``[annotator]``
table), ``encoder`` (the engine called by model name, resolved through ``site_agent.models``,
with the pipeline's progress display), ``gate`` (the quality gate) and ``diagnosis`` (why an
annotator failed it), and ``stage`` (the registered stage).
"""
