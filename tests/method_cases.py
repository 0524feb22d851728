"""One table of (method, options) for the tests every method must pass: batching,
devices, hook removal (as Captum's tests do). It is built from the registry, so a
method registered later is in it with its defaults; VARIANTS add the options that
take another code path."""

from __future__ import annotations

from contrastcat.methods import METHODS

# Inputs of very different lengths (1 to 15 words): batching them pads a lot.
TEXTS = [
    "good",
    "the film was great and the music was lovely too and the actor was superb",
    "a boring night",
    "we saw the city at night and it was a long road home with a friend",
    "the dog was awful",
    "it is a new story about an old man",
]

# Cheaper than the defaults, same code paths.
CHEAP = {"ig_steps": 8, "clusters": 8, "refs_used": 10, "candidates": 10}
VARIANTS: dict[str, list[dict]] = {
    "contrastcat": [{"refine": False}, {"attention": False}, {"layers": "1"}, {"rho": "mean"}],
    "contrastcat-plus": [{"refine_score": "morf", "top_maps": 3}, {"magnitude": True, "pool": "contrast"}],
    "cat": [{"layers": "1"}],
    "integrated-gradients": [{"ig_baseline": "pad"}],
}


def method_cases() -> list[tuple[str, dict]]:
    cases = []
    for name, cls in METHODS.items():
        base = {key: value for key, value in CHEAP.items() if key in cls.Options.names()}
        cases.append((name, base))
        cases += [(name, {**base, **variant}) for variant in VARIANTS.get(name, [])]
    return cases


def case_id(case: tuple[str, dict]) -> str:
    name, options = case
    extra = [f"{key}={value}" for key, value in options.items() if key not in CHEAP]
    return " ".join([name, *extra])


CASES = method_cases()
IDS = [case_id(case) for case in CASES]
