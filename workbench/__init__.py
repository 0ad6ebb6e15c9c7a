"""workbench: pool, judge, measure coverage, then score retrieval with an audit."""

__version__ = "0.1.0"


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """`workbench.evaluate` and `workbench.assert_eval` (workbench.api), imported when first
    used so that `import workbench` stays light."""
    if name in ("evaluate", "assert_eval"):
        import importlib  # by name: the package itself (whose __version__ every layer reads)
        # must not depend on the commands the API uses

        return getattr(importlib.import_module("workbench.api"), name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
