"""Pseudonymise the training split before the generator sees it (seed paper 004).

``surrogate`` replaces each gold PII span with a realistic surrogate of the same label,
``filter`` drops the sentences that hold PII, ``none`` passes the corpus through. The
original -> surrogate pairs go to a site-private file that the privacy audit reads.
"""
