"""compare's report as people read it: the table and the recommendation, from the report's JSON
document (nothing is computed here)."""

from __future__ import annotations

from ..evaluation.fitted import LEGEND, SIGNS


def markdown_report(document: dict) -> str:
    """The table (the leader's values; every other method's paired difference from it, **bold**
    where the interval excludes 0; ᶠ/ᵖ on fitted cells; columns not judged by in italics) and
    the recommendation."""
    columns = document["columns"]
    checked = document.get("sanity_inputs") is not None
    head = ["method", "s/input"] + (["ρ, model destroyed"] if checked else []) + [c["heading"] + (" ↑" if c["higher_is_better"] else " ↓") if c["judged"]
                                    else f"*{c['heading']}*" for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for entry in document["methods"]:
        row = [entry["method"], f"{entry['seconds_per_input']:.3g}"]
        if checked:
            found = entry.get("sanity") or {}
            rho = found.get("rho_randomised")
            row.append("n/a" if rho is None else f"{rho:.2f}" + ("" if found.get("passes") else " ✗"))
        for column in columns:
            cell = entry["columns"].get(column["name"])
            if cell is None or cell["mean"] is None:
                row.append("n/a")
                continue
            sign = SIGNS.get(cell["fitted"], "")
            against = cell.get("against_leader")
            if entry["method"] == document["leader"] or against is None or against["interval"] is None:
                row.append(f"{cell['mean']:.3f}{sign}")
                continue
            low, high = against["interval"]["low"], against["interval"]["high"]
            text = f"{against['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"
            row.append((f"**{text}**" if against["excludes_zero"] else text) + sign)
        lines.append("| " + " | ".join(row) + " |")
    legend = [
        f"{document['inputs']} inputs; {document['hardware']}. The leader's values, then every other method's "
        f"paired difference from {document['leader']} with its {document['bootstrap']['ci']:.0%} bootstrap interval "
        f"({document['bootstrap']['resamples']} resamples), bold where it excludes 0. Columns in italics were "
        "fitted by a method's own selection and are not judged by."
        + (f" ρ, model destroyed: the Spearman correlation of a method's maps of {document['sanity_inputs']} inputs "
           "with its maps on the fully randomised model (✗: not below 0.5, the maps barely depend on the model)."
           if checked else ""),
        *(LEGEND[kind] for kind in LEGEND if any(
            cell.get("fitted") == kind for entry in document["methods"] for cell in entry["columns"].values())),
    ]
    return "\n".join(lines + [""] + legend + ["", document["recommendation"]["paragraph"]])
