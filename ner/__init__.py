"""NER with a fine-tuned encoder: train a token classifier, label a corpus with it, score it.

The engine both sides use: a site trains its gold machine annotator and labels its synthetic
notes with it; the coordinator trains its per-site, pooled and FedAvg models the same way, so
the models are comparable. ``train.train_annotator`` fine-tunes (``features`` chunks and
tokenises, ``loop`` runs the epochs, ``validate`` and ``scoring`` score each epoch, ``recipe``
and ``sampling`` adapt training to the corpus's PHI density); ``infer.machine_annotate`` labels
a corpus (``decoding`` turns tag scores into tags). ``backbone`` loads the encoder's tokenizer.

It takes model folders or Hugging Face ids, never registry names: resolving a name is the
caller's (``site_agent.models`` on a site). It imports neither ``site_agent`` nor
``coordinator``. ``train``, ``infer``, ``loop`` and ``validate`` import torch; the others
(``recipe`` above all, which the site's pre-flight shows) are light.
"""
