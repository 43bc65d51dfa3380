"""The text-statistics engine the privacy audit, the template filler and the modes share.

Words and the generator's sub-word tokens as hashed streams (``tokens``, ``subword``),
n-gram tables and identifying n-grams (``grams``, ``identifying``), MinHash/LSH
(``minhash``), BM25 retrieval (``bm25``), ROUGE-N recall (``rouge``), whole-word search of
known strings (``surfaces``, Aho-Corasick), corpus content digests (``digest``) and the slow,
obviously correct references the fast paths are tested against (``reference``).

It decides nothing: the audit (``site_agent.audit``) measures and judges with it. Importers
use the submodules; importing this package loads nothing heavy.
"""
