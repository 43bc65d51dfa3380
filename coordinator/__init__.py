"""The coordinator: collects, verifies and aggregates site exports; writes the report."""
