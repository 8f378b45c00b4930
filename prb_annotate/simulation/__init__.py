"""Simulated annotators: seeded answers with known behaviours, submitted through the real
assignment queue and submit functions (the demo's finished campaign, tests and benches)."""
