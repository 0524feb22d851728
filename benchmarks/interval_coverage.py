"""How often a bootstrap interval of a mean excludes 0 where nothing differs: the plain
percentile interval against the expanded one ``evaluate`` uses (contrastcat.evaluation.stats).

    python benchmarks/interval_coverage.py [--trials 1000]

For each kind of values (normal; skewed: exponential − 1; both of mean 0), level and number of
inputs, ``trials`` samples are drawn (seeded) and each one's interval (1,000 resamples) is
asked whether it holds 0. A faithful interval at 95% excludes 0 in about 5% of them.
"""

from __future__ import annotations

import argparse

import numpy as np

from contrastcat.evaluation.stats import BootstrapSettings, bootstrap_means, expanded_level, percentile_interval

CASES = (("normal", 0.95, (6, 8, 10, 20, 50)), ("normal", 0.99, (8, 12, 30)), ("skewed", 0.95, (6, 10, 20, 50)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1000)
    trials = parser.parse_args().trials
    rng = np.random.default_rng(1)
    draws = {"normal": lambda n: rng.standard_normal(n), "skewed": lambda n: rng.exponential(size=n) - 1.0}
    print(f"share of {trials} trials whose interval excludes 0 (no true difference), 1,000 resamples")
    print(f"  {'values':8} {'level':>5} {'inputs':>6} {'plain':>7} {'expanded':>9}")
    for kind, level, counts in CASES:
        settings = BootstrapSettings(1000, level, 0)
        for count in counts:
            plain = expanded = 0
            for _ in range(trials):
                means = bootstrap_means(draws[kind](count), settings)
                plain += not percentile_interval(means, level)[0].contains(0.0)
                expanded += not percentile_interval(means, expanded_level(level, count))[0].contains(0.0)
            print(f"  {kind:8} {level:>5.0%} {count:>6} {plain / trials:>7.3f} {expanded / trials:>9.3f}")


if __name__ == "__main__":
    main()
