"""LaTeX to MathML, on the server, with loud failures.

Topic prose writes equations in LaTeX; browsers render MathML natively, so the
explorer converts every formula once when a topic loads and the page needs no
math JavaScript. ``math_core`` is strict: a malformed or unsupported formula
raises, and we turn that into :class:`MathError` naming the formula, so a broken
equation fails the tests instead of reaching a reader as raw ``$...$`` text.
"""

from __future__ import annotations

from html import escape

import math_core


class MathError(ValueError):
    """A LaTeX formula that could not be converted to MathML."""


_converter = math_core.LatexToMathML(fancy_error=False)


def latex_to_mathml(latex: str, *, display: bool, where: str = "") -> str:
    """Convert one formula; ``where`` (e.g. ``"fft/en.md line 12"``) goes into errors.

    The LaTeX source is kept in the ``alttext`` attribute, which assistive
    technology can read when it does not speak MathML.
    """
    source = latex.strip()
    if not source:
        raise MathError(f"{where}: empty formula")
    try:
        mathml = _converter.convert_with_local_state(source, displaystyle=display)
    except math_core.LatexError as error:
        raise MathError(f"{where}: cannot convert ${source}$: {error}") from None
    return mathml.replace("<math", f'<math alttext="{escape(source, quote=True)}"', 1)
