"""Back to the Realm's messages: custom_pb2 (game and feature messages), arena2aisvr_pb2 and
game2arena_pb2 (the frames around them). Generated from the .proto files beside them."""
