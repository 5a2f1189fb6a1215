"""The platform's compiled wire messages, under the platform's module names."""
