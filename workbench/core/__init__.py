"""The pure core: plain data in, typed results out. No files, no database, no terminal, no
model: metrics, the audit, pooling, sampling, the judging queue, coverage, agreement,
calibration, resolution of several annotators' grades."""
