"""Faithfulness: deletion curves and Kendall, bootstrap statistics, reports, comparisons and gates."""
