"""Attribution methods: each one a class behind the registry (``registry.METHODS``), and
each one's options apart from it (``options.METHOD_OPTIONS``).

Each name is imported from its module on first use (``contrastcat.lazy``): the command line's
flags, completions and option checks read the options without importing torch."""

from ..lazy import lazy_names

LAZY = {
    "METHODS": "registry",
    "build_method": "registry",
    "build_methods": "registry",
    "list_methods": "registry",
    "method_class": "registry",
    "register": "registry",
    "unregister": "registry",
    "recorded_refinement": "registry", "recorded_method": "registry",
    "ALL": "options",
    "IG_BASELINES": "options",
    "REFERENCE_SELECTIONS": "options",
    "RHO_CHOICES": "options",
    "METHOD_OPTIONS": "options",
    "MethodOptions": "options",
    "OptionSpec": "options",
    "check_options": "options",
    "method_names": "options",
    "method_options": "options",
    "option": "options",
    "option_specs": "options",
    "parse_method_list": "options",
    "check_method_name": "options",
    "AttentionGradients": "attention",
    "AttentionTimesGradients": "attention",
    "GenericAttention": "attention",
    "GradSAM": "attention",
    "RawAttention": "attention",
    "Rollout": "attention",
    "AttributionMethod": "base",
    "Candidates": "base",
    "ReferenceSource": "base",
    "input_seed": "base",
    "CAT": "cat",
    "AttCAT": "cat",
    "ContrastCAT": "cat",
    "contrast_maps": "cat",
    "ContrastLRP": "contrast_lrp",
    "ContrastCATPlus": "contrast_plus",
    "InputXGradient": "gradients",
    "IntegratedGradients": "gradients",
    "AttnLRP": "lrp",
    "FullLRP": "lrp",
    "PartialLRP": "lrp",
    "TransAtt": "lrp",
    "RandomScores": "random",
    "TIS": "tis",
    "minmax": "..scaling",
}
__all__ = list(LAZY)
__getattr__, __dir__ = lazy_names(__name__, LAZY)
