"""back_to_the_realm_v2's observation messages as protobuf classes: `RelativeDirection`,
`RelativeDistance` (the enums the official dqn and target_dqn agents import), `Position`,
`RelativePosition`, `Talent`, `RealmHero`, `RealmOrgan`, `FrameState`, `MapInfo`, `ScoreInfo`,
`GameInfo`, `Observation`, `ExtraInfo`.

The v2 guide is not public: the message and field names, their order and the enum values are
those of the published transcription of the v2 observation (see docs/games/back_to_the_realm_v2.md), the field
types follow the simulator's wire (ints for positions, ids, status and counts, floats for
scores), and the field numbers are the fields' order. The v2 env serves dicts with these names
(realm/back_to_the_realm_v2/protocol.py); the packages use the enums. The descriptor is built here, in code, into
the default pool under `back_to_the_realm_v2/custom.proto`.
"""
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal import enum_type_wrapper

try:
    from google.protobuf.message_factory import GetMessageClass as _message_class
except ImportError:  # protobuf < 4.21
    from google.protobuf.message_factory import MessageFactory

    _message_class = MessageFactory().GetPrototype

PACKAGE = "arena.back_to_the_realm_v2"
FILE_NAME = "back_to_the_realm_v2/custom.proto"

ENUMS = {
    "RelativeDirection": ["RELATIVE_DIRECTION_NONE", "East", "NorthEast", "North", "NorthWest", "West", "SouthWest",
                          "South", "SouthEast"],
    "RelativeDistance": ["RELATIVE_DISTANCE_NONE", "VerySmall", "Small", "Medium", "Large", "VeryLarge"],
}

_F = descriptor_pb2.FieldDescriptorProto
INT, FLOAT, STRING = _F.TYPE_INT32, _F.TYPE_FLOAT, _F.TYPE_STRING
REPEATED = "repeated"

#: message -> [(field, type: INT | FLOAT | STRING | a message or enum name, "repeated" or "")]
MESSAGES = {
    "Position": [("x", INT, ""), ("z", INT, "")],
    "RelativePosition": [("direction", "RelativeDirection", ""), ("l2_distance", "RelativeDistance", "")],
    "Talent": [("talent_type", INT, ""), ("status", INT, ""), ("cooldown", INT, "")],
    "RealmHero": [("hero_id", INT, ""), ("pos", "Position", ""), ("speed_up", INT, ""), ("talent", "Talent", ""),
                  ("buff_remain_time", INT, "")],
    "RealmOrgan": [("sub_type", INT, ""), ("config_id", INT, ""), ("status", INT, ""), ("pos", "Position", ""),
                   ("cooldown", INT, ""), ("relative_pos", "RelativePosition", "")],
    "FrameState": [("step_no", INT, ""), ("heroes", "RealmHero", REPEATED), ("organs", "RealmOrgan", REPEATED)],
    "MapInfo": [("values", INT, REPEATED)],
    "ScoreInfo": [("score", FLOAT, ""), ("total_score", FLOAT, ""), ("step_no", INT, ""),
                  ("treasure_collected_count", INT, ""), ("treasure_score", FLOAT, ""), ("buff_count", INT, ""),
                  ("talent_count", INT, "")],
    "GameInfo": [("score", FLOAT, ""), ("total_score", FLOAT, ""), ("step_no", INT, ""), ("pos", "Position", ""),
                 ("start_pos", "Position", ""), ("end_pos", "Position", ""), ("treasure_collected_count", INT, ""),
                 ("treasure_score", FLOAT, ""), ("treasure_count", INT, ""), ("buff_count", INT, ""),
                 ("talent_count", INT, ""), ("buff_remain_time", INT, ""), ("buff_duration", INT, ""),
                 ("map_info", "MapInfo", REPEATED), ("obstacle_id", INT, REPEATED)],
    "Observation": [("frame_state", "FrameState", ""), ("score_info", "ScoreInfo", ""),
                    ("map_info", "MapInfo", REPEATED), ("legal_act", INT, REPEATED)],
    "ExtraInfo": [("result_code", INT, ""), ("result_message", STRING, ""), ("frame_state", "FrameState", ""),
                  ("game_info", "GameInfo", "")],
}


def _file_proto() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=FILE_NAME, package=PACKAGE, syntax="proto3")
    for name, values in ENUMS.items():
        enum = proto.enum_type.add(name=name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)
    for name, fields in MESSAGES.items():
        message = proto.message_type.add(name=name)
        for number, (field, kind, label) in enumerate(fields, start=1):
            f = message.field.add(name=field, number=number, json_name=field)
            f.label = _F.LABEL_REPEATED if label == REPEATED else _F.LABEL_OPTIONAL
            if isinstance(kind, int):
                f.type = kind
            else:
                f.type = _F.TYPE_ENUM if kind in ENUMS else _F.TYPE_MESSAGE
                f.type_name = f".{PACKAGE}.{kind}"
    return proto


_pool = descriptor_pool.Default()
try:
    DESCRIPTOR = _pool.FindFileByName(FILE_NAME)
except KeyError:
    DESCRIPTOR = _pool.Add(_file_proto())
    DESCRIPTOR = _pool.FindFileByName(FILE_NAME)

RelativeDirection = enum_type_wrapper.EnumTypeWrapper(DESCRIPTOR.enum_types_by_name["RelativeDirection"])
RelativeDistance = enum_type_wrapper.EnumTypeWrapper(DESCRIPTOR.enum_types_by_name["RelativeDistance"])
for _enum in (RelativeDirection, RelativeDistance):  # the enum values at module level, as protoc writes them
    for _name, _number in _enum.items():
        globals()[_name] = _number

Position = _message_class(DESCRIPTOR.message_types_by_name["Position"])
RelativePosition = _message_class(DESCRIPTOR.message_types_by_name["RelativePosition"])
Talent = _message_class(DESCRIPTOR.message_types_by_name["Talent"])
RealmHero = _message_class(DESCRIPTOR.message_types_by_name["RealmHero"])
RealmOrgan = _message_class(DESCRIPTOR.message_types_by_name["RealmOrgan"])
FrameState = _message_class(DESCRIPTOR.message_types_by_name["FrameState"])
MapInfo = _message_class(DESCRIPTOR.message_types_by_name["MapInfo"])
ScoreInfo = _message_class(DESCRIPTOR.message_types_by_name["ScoreInfo"])
GameInfo = _message_class(DESCRIPTOR.message_types_by_name["GameInfo"])
Observation = _message_class(DESCRIPTOR.message_types_by_name["Observation"])
ExtraInfo = _message_class(DESCRIPTOR.message_types_by_name["ExtraInfo"])
