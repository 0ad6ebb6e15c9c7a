"""What `eval` and `compare` compute: eval's report and its JSON, floors on the means, runs
compared with a baseline, and what `eval --chunks` adds.

Pure: plain data in, typed results out."""
