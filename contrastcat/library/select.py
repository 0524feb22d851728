"""Which training rows become references (docs/spec.md §2). Pure: probabilities in, rows out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np



@dataclass(frozen=True)
class SelectionSettings:
    gamma: float = 1e-3
    k: int = 30  # references Contrast-CAT uses; the library is filled up to this many
    keep: int = 50  # references stored per class when enough pass gamma
    min_tokens: int = 10  # special tokens included, as in the reference code




@dataclass(frozen=True)
class ClassSelection:
    """References for one target class, lowest f_c first."""

    target: int
    rows: np.ndarray  # indices into the scanned pool
    f_c: np.ndarray
    below_gamma: np.ndarray
    candidates: int  # correctly classified rows of other classes, long enough

    @property
    def passing(self) -> int:
        return int(self.below_gamma.sum())


@dataclass
class Selection:
    classes: list[ClassSelection]
    warnings: list[str] = field(default_factory=list)


def select_references(
    probs: np.ndarray,
    labels: np.ndarray,
    lengths: np.ndarray,
    settings: SelectionSettings,
    label_names: tuple[str, ...] | None = None,
    multi_label: bool = False,
) -> Selection:
    """Pick up to ``keep`` rows per class with f_c < gamma, ascending f_c over the whole pool.

    A row qualifies for target c when the model classifies it correctly as a
    class other than c and it has at least ``min_tokens`` tokens. For a
    multi-label classifier (``probs``: a sigmoid per label) a row may carry
    several labels and its data one of them at most: any row of ``min_tokens``
    qualifies, and f_c < gamma (the model says it lacks label c) decides. When
    fewer than ``k`` rows pass gamma, the next-lowest candidates fill the class
    up to ``k`` and a warning says so.
    """
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels)
    lengths = np.asarray(lengths)
    num_classes = probs.shape[1]
    names = label_names or tuple(str(c) for c in range(num_classes))
    long_enough = lengths >= settings.min_tokens
    usable = long_enough if multi_label else (probs.argmax(axis=1) == labels) & long_enough
    selection = Selection(classes=[])
    for target in range(num_classes):
        pool = np.flatnonzero(usable if multi_label else usable & (labels != target))
        pool = pool[np.argsort(probs[pool, target], kind="stable")]
        f_c = probs[pool, target]
        passing = int((f_c < settings.gamma).sum())
        count = min(settings.keep, passing) if passing >= settings.k else min(settings.k, len(pool))
        chosen = pool[:count]
        selection.classes.append(
            ClassSelection(
                target=target,
                rows=chosen,
                f_c=f_c[:count],
                below_gamma=f_c[:count] < settings.gamma,
                candidates=len(pool),
            )
        )
        if passing < settings.k and count:
            selection.warnings.append(
                f"class {names[target]!r}: only {passing} reference(s) pass f_c < {settings.gamma:g}; "
                f"filled up to {count} with the next-lowest (largest f_c used: {f_c[count - 1]:.3g})"
            )
    return selection


def select_same_class(
    probs: np.ndarray, labels: np.ndarray, lengths: np.ndarray, settings: SelectionSettings,
    multi_label: bool = False,
) -> list[ClassSelection]:
    """The ``same`` ablation pool (paper Table 3): per class c, correctly classified rows OF class c,
    the most confident (highest f_c) first, up to ``keep``. For a multi-label classifier, the rows
    the model says carry label c (its sigmoid above 0.5), whatever label their data names."""
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels)
    long_enough = np.asarray(lengths) >= settings.min_tokens
    usable = long_enough if multi_label else (probs.argmax(axis=1) == labels) & long_enough
    result = []
    for target in range(probs.shape[1]):
        carrying = probs[:, target] > 0.5 if multi_label else labels == target
        pool = np.flatnonzero(usable & carrying)
        candidates = len(pool)
        pool = pool[np.argsort(-probs[pool, target], kind="stable")][: settings.keep]
        f_c = probs[pool, target]
        result.append(
            ClassSelection(target=target, rows=pool, f_c=f_c, below_gamma=f_c < settings.gamma, candidates=candidates)
        )
    return result


def select_random(
    probs: np.ndarray, labels: np.ndarray, lengths: np.ndarray, settings: SelectionSettings, seed: int
) -> ClassSelection:
    """The ``random`` ablation pool (paper Table 3): ``keep`` rows drawn uniformly (seeded) from
    every row with at least ``min_tokens`` tokens, whatever its class or prediction.

    ``f_c`` holds each row's probability of its own label; ``target`` is -1 (any class).
    """
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels)
    eligible = np.flatnonzero(np.asarray(lengths) >= settings.min_tokens)
    rows = np.sort(np.random.default_rng(seed).permutation(eligible)[: settings.keep])
    f_c = probs[rows, labels[rows]] if len(rows) else np.zeros(0)
    return ClassSelection(target=-1, rows=rows, f_c=f_c, below_gamma=np.zeros(len(rows), dtype=bool), candidates=len(eligible))
