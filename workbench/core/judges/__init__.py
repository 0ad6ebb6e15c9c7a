"""Non-human judges: a scoring model's calibration and report, an LLM judge's prompt and answer,
position bias, and the human sample a judge's figures are corrected by (the design, its estimate,
prediction-powered means).

Pure: plain data in, typed results out."""
