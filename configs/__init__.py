"""The shipped training configs (``*.yaml``, package data): ``lama-dice train NAME`` finds them here."""

from __future__ import annotations

from pathlib import Path


def shipped() -> dict[str, Path]:
    """The configs that ship with the package, by name (light: ``lama-dice train --help`` lists them)."""
    return {p.stem: p for p in sorted(Path(__file__).resolve().parent.glob("*.yaml"))}
