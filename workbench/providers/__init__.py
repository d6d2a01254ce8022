"""Providers: stream functions that speak the contract's AssistantMessageEvent protocol."""
