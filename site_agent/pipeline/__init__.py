"""The stage machinery, generic over the configuration the stages read: what a stage is and its
``stage.json`` record (``stage``), and the one loop that runs stages in order and reuses what is
done (``stage_loop``), with the marker that reports a stage the kernel killed
(``running_marker``).

It imports no stage: the ordered stage list and the adapters live in :mod:`site_agent.stages`.
"""
