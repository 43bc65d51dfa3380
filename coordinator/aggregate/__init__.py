"""Phase 3, aggregate: NER models built at the coordinator from the verified bundles.

``phase.aggregate_models`` runs it: per-site and pooled models (``pooled``), the sites'
exported encoders (``exported``) and FedAvg across the sites (``fedavg``), all in one shared
label space. ``trainer`` is the one module that reuses the site's annotator trainer.
"""
