"""The composition root of the site agent: the ordered stage list (``registry``), one adapter
per stage (what it reads from ``site.toml`` and which artifacts it takes: ``split``,
``pseudonymise``, ..., ``export``), the knobs several stages share, resolved once (``knobs``:
the generation mode, the tokenizer reference, the identifying n-gram index), and the site
pipeline that runs them (``pipeline``).

Stage packages (``site_agent/split``, ``site_agent/adapt``, ...) are libraries: they never
import this package, the generic machinery (:mod:`site_agent.pipeline`) or the site config.
Import the submodules; this file stays light so that importing one adapter loads no other.
"""
