"""Core engine: errors, the shared event-driven clock, statistics and the component registry."""
