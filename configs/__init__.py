"""The shipped training configs (``*.yaml``, package data): ``lama-dice train NAME`` finds them here."""
