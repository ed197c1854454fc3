"""The one safe-text function: a user-supplied string made fit to show anywhere.

Every string the project shows but did not write (a record's names, an agent spec, a file name) goes
through :func:`safe_text`: in the terminal, pictures, animations and the web app's JSON
(docs/agents-and-evaluation.md, Inputs and their limits).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["safe_text"]

# C0 and C1 control characters and DEL; line and paragraph separators; the bidirectional controls
# and other invisible format characters that can make shown text read differently from what it is.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def safe_text(value: Any) -> str:
    r"""``value`` as text that is safe to show: one line, no control codes, encodable as UTF-8.

    Control and invisible format characters are shown escaped (``\x1b``, ``\n``, ``\u202e``); a lone
    surrogate becomes U+FFFD. Ordinary text, accents and emoji included, is unchanged; it never raises.
    ``value``: the string (anything else is shown as ``str(value)``).
    """
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:  # a value whose __str__ fails is shown by its type
        text = f"<{type(value).__name__}>"
    if not text.isascii():
        # a surrogate pair becomes its character, a lone surrogate U+FFFD
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _UNSAFE.sub(_escape, text)
