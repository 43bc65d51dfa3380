"""The exported encoder inside Microsoft Presidio, where hospitals already run de-identification.

``entities`` maps the site's labels onto Presidio entity names (one table, keyed by the label
families of ``shared/label_families.py``); ``engines`` builds an ``AnalyzerEngine`` whose
recognizer is the encoder (no spaCy model needed) and anonymises notes with Presidio's
``AnonymizerEngine``; ``scoring`` runs that pipeline over a test split and scores it with the
project's metrics beside the bare encoder. Presidio is an optional extra
(``pip install -e ".[presidio]"``): nothing here imports it at module top. See
``docs/presidio.md``.
"""
