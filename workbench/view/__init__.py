"""The view model: one pure fold from bus events to what the screen shows (no Textual)."""
