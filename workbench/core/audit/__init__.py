"""What a metric table does not say: the denominator audit, recall under the estimated |Rel| and
its gate, stage 1 vs stage 2, what a coverage summary says of the judged set in use, one wording
per figure, and an estimate against a deeper truth.

Pure: plain data in, typed results out."""
