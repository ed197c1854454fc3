"""The project's user-facing error type.

Every error caused by bad input (a malformed record, a bad config, an unknown
agent spec, a wrong checkpoint, an illegal action) derives from
:class:`LamaDiceError`; the ``lama-dice`` command prints its message on one
line and exits non-zero instead of showing a traceback.
"""


class LamaDiceError(Exception):
    """Base class of errors whose message is meant for the user."""


#: The most characters of user input an error message quotes (:func:`clip`).
QUOTE_LIMIT = 60
#: The most characters of a whole error message the command line prints (:func:`bounded`).
MESSAGE_LIMIT = 1000


def clip(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for an error message, at most about ``limit`` characters and one line.

    A longer text keeps its start and says how long it was (``[1, 2, 3, ... (5000000 chars)]``);
    a list or tuple that long is not even turned into text in full.
    """
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        head = list(value)[:limit]
        text = repr(type(value)(head) if not isinstance(value, dict) else head)
        return f"{text[:limit]}... ({len(value)} items)"
    text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text)} chars)"
    return text


def bounded(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` on one line and at most about ``limit`` characters (what the command line prints)."""
    text = " ".join(message.split("\n"))
    if len(text) > limit:
        return f"{text[:limit]}... (message cut: {len(text)} chars)"
    return text
