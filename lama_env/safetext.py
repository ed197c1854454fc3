"""The one safe-text function for every string shown but not written here (docs/agents-and-evaluation.md)."""

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
    """``value`` as one line, control codes escaped, lone surrogates as U+FFFD (docs: Text shown); never raises."""
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:  # a value whose __str__ fails is shown by its type
        text = f"<{type(value).__name__}>"
    if not text.isascii():
        # a surrogate pair becomes its character, a lone surrogate U+FFFD
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _UNSAFE.sub(_escape, text)
