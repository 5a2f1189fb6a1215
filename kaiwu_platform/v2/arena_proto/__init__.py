"""The platform's wire messages of back_to_the_realm_v2, under the platform's module names."""
