"""The confidence level every interval of the project is given at, written once: 95%, the
standard normal's quantile for it and the two tail quantiles that bound a sample's central
95%. An interval built another way (a bootstrap's order statistics, a posterior's draws) takes
its ends from here too."""

LEVEL = 0.95
Z = 1.959963984540054
"""The standard normal's 1 - (1 - LEVEL) / 2 quantile (a two-sided 95% interval's half-width in
standard errors)."""
TAILS = ((1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2)
"""The quantiles of a sample (draws, bootstrap replicates) that bound its central LEVEL share."""
