"""How records are shown, one set of defaults for every view. Without numpy: the command line's
options read it before any model library loads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class View:
    """How records are shown, the same wherever they are (``render``, ``contrastcat.render``, a
    notebook's display, ``render --html``): ``words`` (None: tokens where shaded, words where
    listed as top words), ``rescale`` (min–max over the tokens shown: a special token never sets
    the scale), ``signed`` (a signed map in two colours, red for the target and blue against it;
    an unsigned map always in one, grey: no sign to read into it)."""

    words: bool | None = None
    rescale: bool = True
    signed: bool = True

    def shown_words(self, listed: bool = False) -> bool:
        """Whether words are shown: as asked, or unasked, where the strongest are ``listed`` (a
        list of pieces would name "ted" for "tedious"), not where the text is shaded in place."""
        return listed if self.words is None else self.words


VIEW = View()  # the defaults, every view's
