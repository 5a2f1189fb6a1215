"""dm-reverb's core without TensorFlow's Python (workflow.transport.reverb_core): the training
system's calls on a real server, read back by reverb's own Client in the same process."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("workflow.transport.reverb_core")

SCRIPT = textwrap.dedent("""
    import json, sys, tempfile, time
    import numpy as np
    from workflow.transport import reverb_core as core

    out = {"tensorflow_after_core": "tensorflow" in sys.modules}
    table = core.Table("t", core.selectors.Prioritized(priority_exponent=1.0), core.selectors.Fifo(), max_size=10,
                       rate_limiter=core.rate_limiters.MinSize(2), max_times_sampled=0)
    server = core.Server([table], port=None, checkpointer=core.checkpointers.DefaultCheckpointer(tempfile.mkdtemp()))
    client = core.Client(f"127.0.0.1:{server.port}")
    writer = client.trajectory_writer(num_keep_alive_refs=1)
    for i in range(3):
        writer.append({"x": np.full(4, i, np.float32), "n": np.int64(i)})
        writer.create_item("t", priority=float(i + 1), trajectory=[writer.history["n"][-1], writer.history["x"][-1]])
    writer.flush()
    writer.close()
    client.insert([np.int64(7), np.zeros(4, np.float32)], {"t": 4.0})
    samples = list(client.sample("t", 200))  # each item at least 0.1 likely: all four drawn but once in 10^9
    out["sampled_n"] = sorted({int(s.data[0]) for s in samples})
    out["probabilities"] = sorted({round(s.info.probability, 4) for s in samples})
    out["table_size"] = {s.info.table_size for s in samples} == {4}
    key = samples[0].info.key
    client.mutate_priorities("t", updates={key: 0.0})  # priority 0: never drawn again
    out["zeroed_drawn"] = key in {s.info.key for s in client.sample("t", 100)}

    mine = client.server_info(timeout=5)["t"]
    import reverb  # reverb's own Python, in the same process, on the same native module
    theirs = reverb.Client(f"127.0.0.1:{server.port}").server_info(timeout=5)["t"]
    fields = ("name", "current_size", "max_size", "max_times_sampled")
    out["same_info"] = [getattr(mine, f) for f in fields] == [getattr(theirs, f) for f in fields]
    out["same_limiter"] = (mine.rate_limiter_info.SerializeToString(deterministic=True)
                           == theirs.rate_limiter_info.SerializeToString(deterministic=True))
    out["current_size"] = mine.current_size
    out["inserts"] = int(mine.rate_limiter_info.insert_stats.completed)
    out["min_size"] = mine.rate_limiter_info.min_size_to_sample
    server.stop()
    for _ in range(5):  # a query that meets the server still closing is answered "Socket closed" or "GOAWAY received": ask again
        try:
            core.Client(f"127.0.0.1:{server.port}").server_info(timeout=1)
            out["deadline"] = "no error"
        except core.errors.DeadlineExceededError as e:
            out["deadline"] = "DeadlineExceededError"
        except RuntimeError as e:
            out["deadline"] = str(e)
            if "Socket closed" in str(e) or "GOAWAY" in str(e):
                time.sleep(0.2)
                continue
        break
    print(json.dumps(out))
""")


def test_the_core_loads_without_tensorflow_and_serves_what_reverbs_own_client_reads():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert out["tensorflow_after_core"] is False
    assert out["sampled_n"] == [0, 1, 2, 7]
    assert out["probabilities"] == [0.1, 0.2, 0.3, 0.4]  # priority / 10, as Prioritized(1.0) draws them
    assert out["table_size"]
    assert out["zeroed_drawn"] is False
    assert out["same_info"] and out["same_limiter"]
    assert (out["current_size"], out["inserts"], out["min_size"]) == (4, 4, 2)
    assert out["deadline"] == "DeadlineExceededError"


def test_a_bad_table_is_refused_as_reverb_refuses_it():
    from workflow.transport import reverb_core as core

    with pytest.raises(ValueError, match="max_size"):
        core.Table("t", core.selectors.Fifo(), core.selectors.Fifo(), max_size=0,
                   rate_limiter=core.rate_limiters.MinSize(1))
    table = core.Table("t", core.selectors.Fifo(), core.selectors.Fifo(), max_size=1,
                       rate_limiter=core.rate_limiters.MinSize(1))
    with pytest.raises(ValueError, match="same name: t"):
        core.Server([table, table])
