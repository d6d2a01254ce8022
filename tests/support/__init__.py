"""Test support shared across test tiers (the scriptable chat-completions server)."""
