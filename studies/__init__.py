"""The research harness, outside the product: the seed papers' tables as sweeps over the
site pipeline (``deid-studies``).

An experiment file (``spec``) names a site.toml and studies; each study's conditions (regime,
data shares, synthetic amount, generator, generation mode ...) run ``repeats`` times. Every run
goes through the pipeline's stages re-wired for the experiment (``stages``) and the pipeline's
own skip/run loop, whose results a content-addressed store shares between runs (``store``);
its training set is built per regime (``training_sets``); finished runs are recorded and not
run again (``experiment``); the report gives mean ± SD and bootstrap CIs beside each run's privacy
figures (``results``, ``report``). ``specs`` holds the shipped experiment files,
``meddocan_sites`` the MEDDOCAN multi-site study.
"""
