"""contrastcat: Contrast-CAT token attributions for transformer text classifiers.

The data flow is the package layout: ``models`` (resolve and load) ->
``capture`` (one forward and backward) -> ``methods`` (pure functions of the
captured tensors) -> ``refine`` (deletion test) -> ``records`` (JSONL) ;
``library`` builds and reads the reference activations; ``evaluate``
measures faithfulness; ``render`` turns records into coloured text.
"""

__version__ = "0.2.0"
