"""dm-reverb without TensorFlow's Python: the replay server's C++ core and reverb's own TF-free
Python (selectors, rate limiters, checkpointers, the trajectory writer), loaded in about 0.1 CPU-s
where `import reverb` costs about 3 (it imports TensorFlow). The fork server, and so every learner,
aisrv and evaluator, loads it once per run; on two cores TensorFlow's import was minutes of the
test suite and seconds of every run's start.

reverb's own `Client`, `Server`, `Table` and `TableInfo` import TensorFlow only for table
signatures, which the training system does not use. This module gives the calls the training
system makes (Client: insert, sample, mutate_priorities, server_info, trajectory_writer; Server
with Tables, a port and a checkpointer) over the same native objects, as reverb's Python does.
A process that imports `reverb` itself afterwards gets the same native module.
"""
from __future__ import annotations

import ast
import collections
import ctypes
import importlib
import importlib.util
import os
import re
import sys
import types
from typing import Any, Iterator, NamedTuple

import numpy as np  # noqa: F401  (the native module converts to numpy arrays: numpy's C API comes first)
import portpicker
import tree

#: reverb's Python modules that import neither TensorFlow nor reverb's TF-bound ones.
_TF_FREE_MODULES = ("errors", "item_selectors", "rate_limiters", "trajectory_writer", "platform.checkpointers_lib")


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)  # finds without importing
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{name} is not installed in this Python ({sys.executable}); see requirements.txt")
    return list(spec.submodule_search_locations)[0]


def _load() -> tuple[types.ModuleType, dict[str, types.ModuleType]]:
    """reverb's native module and its TF-free Python modules, without running reverb/__init__.py."""
    real = sys.modules.get("reverb")
    if real is not None and hasattr(real, "Client"):  # reverb itself already imported here
        return real.pybind, {name: importlib.import_module(f"reverb.{name}") for name in _TF_FREE_MODULES}
    reverb_dir = _package_dir("reverb")
    native = sys.modules.get("reverb.libpybind")
    if native is None:
        # The native module links against TensorFlow's C++ framework library, not its Python.
        ctypes.CDLL(os.path.join(_package_dir("tensorflow"), "libtensorflow_framework.so.2"), mode=ctypes.RTLD_GLOBAL)
        spec = importlib.util.spec_from_file_location("reverb.libpybind", os.path.join(reverb_dir, "libpybind.so"))
        native = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(native)
        sys.modules["reverb.libpybind"] = native  # reverb/pybind.py finds it here if reverb is imported later
    # reverb's modules say `from reverb import pybind`: a bare package stands in for reverb while
    # they load, then leaves, so that a later `import reverb` runs reverb's own __init__.
    stand_in = types.ModuleType("reverb")
    stand_in.__path__ = [reverb_dir]
    stand_in.pybind = native
    sys.modules["reverb"], sys.modules["reverb.pybind"] = stand_in, native
    try:
        modules = {name: importlib.import_module(f"reverb.{name}") for name in _TF_FREE_MODULES}
    finally:
        for name in [n for n in sys.modules if n == "reverb" or n.startswith("reverb.")]:
            if name != "reverb.libpybind":
                del sys.modules[name]
    return native, modules


_native, _modules = _load()
errors = _modules["errors"]
selectors = _modules["item_selectors"]
rate_limiters = _modules["rate_limiters"]
checkpointers = _modules["platform.checkpointers_lib"]
TrajectoryWriter = _modules["trajectory_writer"].TrajectoryWriter


def _table_info_class() -> type:
    """reverb's TableInfo message from reverb's own schema, less the fields whose types are
    TensorFlow's (the table signature): parsing it then needs protobuf only."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

    source = open(os.path.join(_package_dir("reverb"), "cc", "schema_pb2.py"), encoding="utf-8").read()
    found = re.search(r"AddSerializedFile\((b'.*?')\)\n", source, re.S)
    if found is None:
        raise ImportError("reverb/cc/schema_pb2.py has no serialized schema; is dm-reverb 0.14 installed?")
    schema = descriptor_pb2.FileDescriptorProto.FromString(ast.literal_eval(found.group(1)))
    del schema.dependency[:]
    schema.dependency.append("google/protobuf/timestamp.proto")
    messages = list(schema.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        keep = [f for f in message.field if not f.type_name.startswith(".tensorflow.")]
        del message.field[:]
        message.field.extend(keep)
    pool = descriptor_pool.DescriptorPool()
    timestamp = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(timestamp)
    pool.Add(timestamp)
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("deepmind.reverb.TableInfo"))


TableInfo = _table_info_class()


class SampleInfo(NamedTuple):
    key: int
    probability: float
    table_size: int
    priority: float
    times_sampled: int


class ReplaySample(NamedTuple):
    info: SampleInfo
    data: list  # the item's flat columns, each a numpy array


class Client:
    """A client of one replay server (reverb.Client's calls, each item sampled whole)."""

    def __init__(self, server_address: str):
        self._server_address = server_address
        self._client = _native.Client(server_address)

    def __repr__(self) -> str:
        return f"Client, server_address={self._server_address}"

    @property
    def server_address(self) -> str:
        return self._server_address

    def insert(self, data: Any, priorities: dict[str, float]) -> None:
        """One item of one step, `data` stored once, in each table of `priorities`."""
        if not priorities:
            raise ValueError("priorities must contain at least one item")
        writer = self._client.NewWriter(1, 1, False, 25)  # chunk length, sequence length, delta, in flight
        writer.Append(tree.flatten(data))
        for table, priority in priorities.items():
            writer.CreateItem(table, 1, priority)
        writer.Flush()
        writer.Close(True)

    def sample(self, table: str, num_samples: int = 1) -> Iterator[ReplaySample]:
        """`num_samples` items, each whole (reverb's emit_timesteps=False); waits on the table's
        rate limiter as reverb does."""
        sampler = self._client.NewSampler(table, num_samples, 1)
        for _ in range(num_samples):
            sample = sampler.GetNextTrajectory()
            info = SampleInfo(key=int(sample[0]), probability=float(sample[1]), table_size=int(sample[2]),
                              priority=float(sample[3]), times_sampled=int(sample[4]))
            yield ReplaySample(info, list(sample[len(info):]))

    def mutate_priorities(self, table: str, updates: dict[int, float] | None = None,
                          deletes: list[int] | None = None) -> None:
        self._client.MutatePriorities(table, list((updates or {}).items()), list(deletes or []))

    def server_info(self, timeout: float | None = None) -> dict[str, Any]:
        """Each table's TableInfo (current_size, max_times_sampled, rate_limiter_info, ...)."""
        try:
            serialized = self._client.ServerInfo(timeout or 0)
        except RuntimeError as e:
            if "Deadline Exceeded" in str(e) and timeout is not None:
                raise errors.DeadlineExceededError(
                    f"ServerInfo call did not complete within provided timeout of {timeout}s") from e
            raise
        infos = [TableInfo.FromString(s) for s in serialized]
        return {info.name: info for info in infos}

    def trajectory_writer(self, num_keep_alive_refs: int, *, validate_items: bool = True):
        if num_keep_alive_refs < 1:
            raise ValueError(f"num_keep_alive_refs ({num_keep_alive_refs}) must be a positive integer")
        options = _native.AutoTunedChunkerOptions(num_keep_alive_refs, 1.0)
        return TrajectoryWriter(self._client.NewTrajectoryWriter(options, validate_items))


class Table:
    """One table of a replay server (reverb.Table without a signature)."""

    def __init__(self, name: str, sampler, remover, max_size: int, rate_limiter, max_times_sampled: int = 0):
        if not name:
            raise ValueError("name must be nonempty")
        if max_size <= 0:
            raise ValueError(f"max_size ({max_size}) must be a positive integer")
        self.name = name
        self.internal_table = _native.Table(
            name=name, sampler=sampler, remover=remover, max_size=max_size, max_times_sampled=max_times_sampled,
            rate_limiter=rate_limiter.internal_limiter, extensions=[], signature=None)

    def __repr__(self) -> str:
        return repr(self.internal_table)


class Server:
    """A replay server on `port` (None: a free one) serving `tables`, as reverb.Server."""

    def __init__(self, tables: list[Table], port: int | None = None, checkpointer=None):
        self._server = None
        if not tables:
            raise ValueError("At least one table must be provided")
        repeated = [name for name, n in collections.Counter(t.name for t in tables).items() if n > 1]
        if repeated:
            raise ValueError(f"Multiple items in tables have the same name: {', '.join(repeated)}")
        self._port = portpicker.pick_unused_port() if port is None else port
        checkpointer = checkpointer if checkpointer is not None else checkpointers.TempDirCheckpointer()
        self._server = _native.Server([t.internal_table for t in tables], self._port,
                                      checkpointer.internal_checkpointer())

    @property
    def port(self) -> int:
        return self._port

    def stop(self) -> None:
        if self._server is not None:
            self._server.Stop()
            self._server = None

    def __del__(self):
        self.stop()
