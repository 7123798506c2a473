"""The result cache: each top-level op's result kept under a key that covers
everything that can change it (docs/cache.md).

`keys.run_keys` is the one function that computes a run's keys, for the full
run (`passflow.sliced.run`) and passflow-opt's warm path alike, and
`placement` moves a stored result to where its op stands now; `sources`
hashes the code they cover by content; `code` says what a pass manager's
pipeline adds to them (or why it cannot be cached); `store` is the SQLite
store, the user's alone. Importing this package loads none of them.
"""
