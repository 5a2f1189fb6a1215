"""The learner's metrics writer: TensorBoard's event file holds what was written, without
TensorFlow's import (TensorBoard's no-TensorFlow mode)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import glob, json, sys
    from workflow.metrics import MetricsWriter

    run = sys.argv[1]
    writer = MetricsWriter(run + "/metrics.csv", run + "/tb")
    for step in (1, 2, 3):
        writer.write("learner", step, step * 100, {"episode/score": 10.0 * step, "not a number": "x"})
    writer.close()
    tensorflow = "tensorflow" in sys.modules
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    scalars = []
    for path in glob.glob(run + "/tb/events.out.tfevents.*"):
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                scalars.append([value.tag, event.step, round(float(value.tensor.float_val[0] if value.HasField("tensor")
                                                                    else value.simple_value), 3)])
    print(json.dumps({"tensorflow": tensorflow, "scalars": sorted(scalars)}))
""")


def test_the_event_file_holds_the_scalars_by_env_steps_without_tensorflow(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["tensorflow"] is False
    assert [s for s in out["scalars"] if s[0] == "episode/score"] == [["episode/score", 100, 10.0],
                                                                      ["episode/score", 200, 20.0],
                                                                      ["episode/score", 300, 30.0]]
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    assert rows[0] == "wall_time,role,train_step,env_steps,key,value" and len(rows) == 4
