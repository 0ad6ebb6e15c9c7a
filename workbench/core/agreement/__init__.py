"""People judging the same items: agreement statistics (kappa, Krippendorff's alpha), the
adjudication worklist, the overlap assignment, and who judged what, how fast.

Pure: plain data in, typed results out."""
