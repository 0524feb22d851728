"""Records made visible: coloured spans, the terminal, the HTML page, plots."""
