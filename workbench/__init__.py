"""workbench: pool, judge, measure coverage, then score retrieval with an audit."""

__version__ = "0.1.0"
