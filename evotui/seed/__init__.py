"""Seeds derived from a task's reference model (no seed file, no language model)."""

from evotui.seed.derive import DerivedSeed, derive_seed

__all__ = ["DerivedSeed", "derive_seed"]
