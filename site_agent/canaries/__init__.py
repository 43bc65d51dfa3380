"""Canaries planted in the generator's adaptation text to test the privacy audit.

``identifiers``: unique fake identifiers in place of gold PII spans of the training copy;
``membership``: short notes with random secrets, half planted and half kept out; both with
their site-private record (``canaries.json``, ``membership_canaries.private.json``).
``settings``: ``[audit.canaries]``. What the synthetic corpus reproduces of them is measured
by the audit (``site_agent.audit.canary_exposure``, ``site_agent.audit.membership``).
"""
