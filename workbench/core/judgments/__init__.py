"""The judged set: one grade per (query, doc) from several annotators, a non-human judge's labels,
and which version of a judge gave each.

Pure: plain data in, typed results out."""
