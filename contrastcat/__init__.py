"""contrastcat: Contrast-CAT token attributions for transformer text classifiers.

The data flow is the package layout: ``resolve`` (a name -> a classifier,
through ``aliases``, ``zoo`` for the embedded models and ``models`` for any
checkpoint; ``models`` also holds each family's row and every forward pass) ->
``capture`` (one forward and backward) -> ``methods`` (pure functions of the
captured tensors) -> ``refine`` (deletion test) -> ``records`` (JSONL) ;
``library`` builds and reads the reference activations; ``evaluate``
measures faithfulness; ``render`` turns records into coloured text.
"""

__version__ = "0.3.0"
