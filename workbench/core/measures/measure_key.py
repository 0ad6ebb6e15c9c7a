"""The measure grammar, written once: `NAME` or `NAME@K` ('nDCG@10', 'R', 'MRR'), read into a
hashable `MeasureKey` (as ir_measures makes a measure a value) and written back as the key rows,
means and JSON carry. Every reader of a measure (the registry's `metrics.read_measure`, the
study's `--target M@K:W`, compare's text measures) and every key taken apart ('R@10' -> R, 10)
goes through here; what a name means (which measures exist, which take a cutoff) is the
registries' to say."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MeasureKey", "cutoff_text_problem", "parse_key", "split_key"]


@dataclass(frozen=True, slots=True, order=True)
class MeasureKey:
    """A measure with its cutoff (None: it takes none), as a value: equal keys are one measure,
    so it keys a dict or a set. `str` gives the key as the reports write it."""

    name: str
    cutoff: int | None = None

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    @classmethod
    def at(cls, name: str, cutoff: int | None) -> str:
        """The key text of `name` at `cutoff` ('P@5'; 'MRR' without one): `str(MeasureKey(...))`
        without making the value (a registry's `key(k)`)."""
        return name if cutoff is None else f"{name}@{cutoff}"


def split_key(text: str) -> tuple[str, str | None]:
    """The name and the cutoff's text as written ('nDCG@010' -> ('nDCG', '010'); 'MRR' ->
    ('MRR', None)), surrounding blanks dropped; nothing checked."""
    name, at, cutoff = text.strip().partition("@")
    return name, (cutoff if at else None)


def cutoff_text_problem(text: str) -> str | None:
    """Why the cutoff's text is not one (a whole number >= 1 in ASCII digits), or None."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        return f"the cutoff {text!r} must be an integer >= 1"
    return None


def parse_key(text: str) -> MeasureKey:
    """`NAME[@K]` as a `MeasureKey` (the name as written); ValueError when the cutoff is not a
    whole number >= 1. The inverse of `str(MeasureKey)` for the keys the reports write."""
    name, cutoff = split_key(text)
    if cutoff is None:
        return MeasureKey(name)
    problem = cutoff_text_problem(cutoff)
    if problem is not None:
        raise ValueError(problem)
    return MeasureKey(name, int(cutoff))
