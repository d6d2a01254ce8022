"""Built-in scenario files for the scripted model."""
