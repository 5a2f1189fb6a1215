"""Replay transport: items into reverb (adder), the server and its tables (replay), batches and telemetry out (sampler), HMAC signing, the model pool, and `Stopped` (stopped)."""
