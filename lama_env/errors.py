"""The project's user-facing error type.

Every error caused by bad input (a malformed record, a bad config, an unknown
agent spec, a wrong checkpoint, an illegal action) derives from
:class:`LamaDiceError`; the ``lama-dice`` command prints its message on one
line and exits non-zero instead of showing a traceback.
"""


class LamaDiceError(Exception):
    """Base class of errors whose message is meant for the user."""
