"""One name, one role: the checks made before anything is written under an annotator's name
(`judge`, `serve token`: a person's or an adjudicator's; `import-labels`, `judge-model`,
`judge-llm`: a model judge's or an imported round's), in one place for every command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.judgments.labels import ROLE
from workbench.core.model import Role

if TYPE_CHECKING:
    from workbench.store import JudgmentStore


def check_model_name(store: JudgmentStore, name: str, needs: str, role: str = ROLE) -> None:
    """Refuse a name that an annotator of another role already uses: grades written under it
    would mix into theirs (a model's into a person's, or the reverse)."""
    known = store.annotators().get(name)
    if known is not None and known != role:
        raise InputError(
            [f"--annotator {name}: already an annotator with role {known!r}; {needs} (role "
             f"'{role}')"]
        )  # fmt: skip


def check_role(store, annotator: str, wanted: str) -> None:  # type: ignore[no-untyped-def]
    """One name, one role: an adjudicator's rows under a human's name would replace that
    human's grades in the agreement figures (and the reverse would show up in a queue). Under
    an annotator's own login, the database writes that annotator's rows in its role only:
    anything else is refused here, not at the first grade."""
    own = store.own_login()
    if own is not None and (own.annotator, own.role) != (annotator, wanted):
        how = "--adjudicate" if own.role == Role.ADJUDICATOR else "without --adjudicate"
        raise InputError(
            [
                f"--annotator {annotator}{' --adjudicate' if wanted == Role.ADJUDICATOR else ''}:"
                f" {store.location} is {own.annotator}'s own login ({own.login}), which writes"
                f" {own.annotator}'s {own.role} rows only; run it as --annotator"
                f" {own.annotator} {how}, or connect as {annotator}'s login"
            ]
        )
    roles = {j.role for j in store.judgments(annotator)}
    other = sorted(roles - {wanted})
    if other:
        hint = f"{annotator}-adj" if wanted == Role.ADJUDICATOR else f"{annotator}-2"
        raise InputError(
            [
                f"--annotator {annotator}: this name already holds {'/'.join(other)} judgments"
                f" in {store.location}; use another name for {wanted} work (e.g. {hint})"
            ]
        )
