"""Stage 6, annotate: the gold annotator labels the PII in the synthetic notes.

The NER engine (training and machine annotation) is :mod:`ner`.
"""
