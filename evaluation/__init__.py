"""Evaluation: agents play each other with seats rotating; win rates with Wilson intervals,
points per round, ranks; OpenSkill leagues; a scalar and a compiled backend."""
