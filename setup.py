"""Package discovery; everything else about the package is in pyproject.toml.

Every package under contrastcat/ ships, and the CLI's folder cli/ ships as
contrastcat_cli (a generic top-level "cli" package would clash with other
projects'); nothing of tests/, benchmarks/ or examples/ does. A list kept by
hand once left a package out of the wheel: .ci/check-installed builds and
installs the wheel to catch that.
"""

from setuptools import find_packages, setup

product = find_packages(include=["contrastcat", "contrastcat.*"])
cli = ["contrastcat_cli" + name.removeprefix("cli") for name in find_packages(include=["cli", "cli.*"])]

setup(packages=product + cli, package_dir={"contrastcat_cli": "cli"})
