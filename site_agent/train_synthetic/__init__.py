"""Stage 8, train-synthetic: what is the audited synthetic corpus worth at this site?

``stage`` trains a fresh encoder on the synthetic corpus and scores it and the gold annotator
on the held-out test split; ``report`` is the site report it writes (may be exported).
"""
