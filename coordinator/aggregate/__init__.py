"""Phase 3, aggregate: NER models built at the coordinator from the verified bundles.

``phase.aggregate_models`` runs it: per-site and pooled models (``pooled``), the sites'
exported encoders (``exported``) and FedAvg across the sites (``fedavg``), all in one shared
label space. ``trainer`` trains with the :mod:`ner` engine the sites use.
"""
