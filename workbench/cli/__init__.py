"""The command line: flags to `RunOptions`, then the app or a headless run."""
