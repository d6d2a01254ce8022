"""The command line: flags to `RunOptions`, then the app or a headless run, and the
subcommands (`commands`: replay, rerun, export, sessions, diff; `proxy`; `project`:
init, run)."""
