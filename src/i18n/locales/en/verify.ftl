# cudaenv's English messages for `verify`'s verdicts (the source).

verify-verifying = verifying `{ $name }` …
verify-works = `{ $name }` works: every check passed in { $seconds } s
verify-running-anyway = { $problem }; running the checks anyway (the first library calls may take minutes while the driver compiles)
