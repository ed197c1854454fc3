"""Alternating A/B timing: every contender runs once per repeat, in turn, and results are medians.

On a shared, noisy machine the load changes from second to second; running the
contenders alternately (A, B, A, B, ...) exposes each of them to the same load,
and a ratio computed within one repeat (a *paired* ratio) cancels most of it.
Each measurement records both wall-clock seconds (:func:`time.perf_counter`)
and the CPU seconds of this process (:func:`time.process_time`: every thread),
so that a reader can tell slowness from waiting for a core.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sample:
    """One timed run: ``work`` units (steps, games) in ``wall_s`` / ``cpu_s`` seconds, plus extras."""

    work: float
    wall_s: float
    cpu_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Units per wall-clock second."""
        return self.work / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def cpu_rate(self) -> float:
        """Units per CPU second of this process."""
        return self.work / self.cpu_s if self.cpu_s > 0 else float("inf")


def timed(work: float, fn: Callable[[], Any]) -> Sample:
    """Run ``fn()`` once and time it; ``work`` is how many units it does.

    If ``fn`` returns a dict, it becomes the sample's ``extra`` (a dict with a
    ``"work"`` entry overrides ``work``: for runs that only know afterwards how
    much they did).
    """
    c0 = time.process_time()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    extra = dict(out) if isinstance(out, Mapping) else {}
    if "work" in extra:
        work = extra.pop("work")
    return Sample(work, wall, cpu, extra)


def merge(samples: list[Sample]) -> Sample:
    """One sample of several runs: work and seconds added up (extras: the last run's)."""
    return Sample(sum(s.work for s in samples), sum(s.wall_s for s in samples), sum(s.cpu_s for s in samples),
                  dict(samples[-1].extra) if samples else {})


def alternate(contenders: Mapping[str, Callable[[int], Sample]], repeats: int, slices: int = 1,
              log: Callable[[str], None] | None = None) -> dict[str, list[Sample]]:
    """Run every contender once per repeat, in turn; return each one's samples (one per repeat).

    With ``slices > 1`` a repeat interleaves ``slices`` calls of every
    contender (A, B, A, B, ...) and merges each one's calls into its sample of
    the repeat: the finer the interleaving, the more alike the load the
    contenders see.  ``fn(i)`` gets a call counter (distinct for every call,
    e.g. for a seed); it does one slice's work.
    """
    out: dict[str, list[Sample]] = {k: [] for k in contenders}
    calls = 0
    for r in range(repeats):
        parts: dict[str, list[Sample]] = {k: [] for k in contenders}
        for _ in range(slices):
            for name, fn in contenders.items():
                parts[name].append(fn(calls))
                calls += 1
        for name in contenders:
            s = merge(parts[name])
            out[name].append(s)
            if log is not None:
                log(f"repeat {r}: {name}: {s.rate:,.1f}/s")
    return out


def median(xs: list[float]) -> float:
    """The median of ``xs`` as a float (NaN if empty)."""
    return float(statistics.median(xs)) if xs else float("nan")


def summary(samples: list[Sample], unit: str) -> dict[str, Any]:
    """Medians of a contender's samples (rate per wall second, per CPU second, seconds per unit)."""
    rates = [s.rate for s in samples]
    cpu_rates = [s.cpu_rate for s in samples]
    return {
        "unit": unit,
        "per_s": median(rates),
        "per_cpu_s": median(cpu_rates),
        "us_per_unit": 1e6 / median(rates) if rates and median(rates) > 0 else None,
        "work": samples[0].work if samples else 0,
        "runs": len(samples),
        "all_per_s": [round(x, 3) for x in rates],
        "all_per_cpu_s": [round(x, 3) for x in cpu_rates],
    }


def paired_ratio(a: list[Sample], b: list[Sample], cpu: bool = False) -> float:
    """Median over repeats of ``rate(a) / rate(b)`` measured in the same repeat."""
    if not a or not b:
        return float("nan")
    if cpu:
        return median([x.cpu_rate / y.cpu_rate for x, y in zip(a, b, strict=True)])
    return median([x.rate / y.rate for x, y in zip(a, b, strict=True)])


def ratio_entry(a: list[Sample], b: list[Sample], a_name: str, b_name: str,
                target: float | None = None) -> dict[str, Any]:
    """A JSON-ready comparison of two contenders: paired ratios (wall and CPU) and the target, if any."""
    wall = paired_ratio(a, b)
    out: dict[str, Any] = {
        "of": a_name, "over": b_name,
        "ratio": wall,
        "ratio_cpu": paired_ratio(a, b, cpu=True),
        "ratio_of_medians": (median([s.rate for s in a]) / median([s.rate for s in b])) if a and b else float("nan"),
        "all": [round(x.rate / y.rate, 3) for x, y in zip(a, b, strict=True)],
    }
    if target is not None:
        out["target"] = target
        out["meets_target"] = bool(wall >= target)
    return out


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None
