"""The ``contrastcat`` command line (installed as the ``contrastcat_cli`` package)."""
