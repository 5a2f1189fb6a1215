"""back_to_the_realm_v2's messages: custom_pb2 (the observation's messages and the two enums)."""
