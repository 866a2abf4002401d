"""dnnf-run --profile --profile-svg: the measured kernels drawn on the fusion plan."""

import json
from xml.etree import ElementTree

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.fusion.plan_graph import FUSION_PLAN
from dnnf_mlir.kernel_profile.picture import heat, plan_of, profile_svg
from dnnf_mlir.kernel_profile.report import ProfileError, profile_runs
from dnnf_mlir.roofline import Roofline
from dnnf_mlir.tools import run as run_tool
from dnnf_mlir.tools.common import ToolError

ROOFLINE = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0)
SVG = "{http://www.w3.org/2000/svg}"


# conv 3x3 + relu, a 1x1 conv added to it (a residual), relu, global average pool,
# flatten, matmul, softmax: with --fusion dnnf fused blocks and unfused ops.
NODES = [("Conv", ["x", "w1"], "c", {"pads": [1, 1, 1, 1]}), ("Relu", ["c"], "r", {}), ("Conv", ["r", "w2"], "a", {}),
         ("Add", ["a", "r"], "s", {}), ("Relu", ["s"], "t", {}), ("GlobalAveragePool", ["t"], "g", {}),
         ("Flatten", ["g"], "f", {}), ("MatMul", ["f", "m"], "l", {}), ("Softmax", ["l"], "y", {})]
WEIGHTS = {"w1": (16, 8, 3, 3), "w2": (16, 16, 1, 1), "m": (16, 10)}


def _model(path):
    rng = np.random.default_rng(0)
    model = helper.make_model(helper.make_graph(
        [helper.make_node(op, inputs, [output], **attributes) for op, inputs, output, attributes in NODES],
        "pictured",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array((0.1 * rng.standard_normal(shape)).astype(np.float32), name)
         for name, shape in WEIGHTS.items()],
    ), opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pictured")
    compile_model(_model(directory / "pictured.onnx"), directory / "out", profile_kernels=True)
    return Artifact(directory / "out")


def _boxes(svg: bytes) -> dict:
    """launch id -> (the texts of its box, its fill), from the SVG's elements."""
    boxes = {}
    for group in ElementTree.fromstring(svg).iter(f"{SVG}g"):
        name = group.attrib.get("id", "")
        if name.startswith("launch_"):
            shape = next(e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path"))
            texts = " | ".join(text.text for text in group.iter(f"{SVG}text"))
            boxes[int(name.removeprefix("launch_"))] = (texts, shape.attrib["fill"])
    return boxes


def test_plan_kept_and_matched_to_the_launches(profiled):
    graph = plan_of(profiled)
    launches = profiled.manifest["kernel_launches"]
    assert len(graph.boxes) == len(launches) == profiled.manifest["kernels"]
    assert [graph.box_ops(i) for i in range(len(launches))] == [launch["ops"] for launch in launches]
    assert any(box.mapping for box in graph.boxes)  # fused blocks, as clusters


def test_each_box_shows_its_rows_numbers(profiled):
    session = profiled.session()
    _, profile = profile_runs(session, [np.ones((1, 8, 32, 32), np.float32)], repeat=3)
    rows = profile.rows(ROOFLINE)
    boxes = _boxes(profile_svg(plan_of(profiled), "pictured", profile, ROOFLINE))
    assert sorted(boxes) == sorted(row.launch for row in rows) == list(range(len(rows)))
    largest = max(row.share for row in rows)
    for row in rows:
        texts, fill = boxes[row.launch]
        limit = "peak" if row.bound == "compute" else "BW"
        assert f"{1e3 * row.seconds:.3f} ms, {100 * row.share:.1f}%" in texts, (row, texts)
        assert f"{100 * row.roofline_fraction:.0f}% of {limit}" in texts
        assert f"#{row.launch} " in texts
        assert fill == heat(row.share / largest)
    assert boxes[rows[0].launch][1] == "#de2d26"  # the longest kernel is the hottest


def test_dnnf_run_writes_the_picture(profiled, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(run_tool, "machine_roofline", lambda cpu=None: ROOFLINE)
    picture = tmp_path / "plan.svg"
    assert run_tool.main([str(profiled.path), "--profile", "--repeat", "2", "--profile-svg", str(picture)]) == 0
    assert f"fusion plan with the kernel times: {picture}" in capsys.readouterr().out
    assert len(_boxes(picture.read_bytes())) == profiled.manifest["kernels"]


def test_plan_that_is_not_the_librarys_is_refused(profiled, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("manifest.json", FUSION_PLAN):
        (copy / name).write_bytes((profiled.path / name).read_bytes())
    plan = json.loads((copy / FUSION_PLAN).read_text())
    plan["labels"][plan["boxes"][0]["nodes"][0]] = "sigmoid"
    (copy / FUSION_PLAN).write_text(json.dumps(plan))
    with pytest.raises(ProfileError, match="launch 0 .* runs conv.*the plan's kernel #0 sigmoid"):
        plan_of(Artifact(copy))
    (copy / FUSION_PLAN).unlink()
    with pytest.raises(ProfileError, match="has no fusion plan"):
        plan_of(Artifact(copy))


def test_unprofiled_artifact_is_refused(tmp_path):
    compile_model(_model(tmp_path / "plain.onnx"), tmp_path / "plain")
    assert not (tmp_path / "plain" / FUSION_PLAN).exists()
    refusal = "compiled without kernel timers: compile it with dnnf-compile --profile-kernels"
    with pytest.raises(ToolError, match=refusal):
        run_tool.main([str(tmp_path / "plain"), "--profile-svg", str(tmp_path / "plan.svg")])
    assert not (tmp_path / "plan.svg").exists()
