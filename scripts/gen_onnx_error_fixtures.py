#!/usr/bin/env python3
"""Writes small hand-built ONNX models that shardc must reject with a clear error, into
test/import/Inputs/errors/. Run with /usr/bin/python3 (python3-onnx)."""
import os

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "import",
                   "Inputs", "errors")


def model(nodes, inputs, outputs, opset=13, initializers=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="shardc-tests")
    m.ir_version = 8
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    # An op type shardc has no mapping for.
    onnx.save(model([helper.make_node("Sin", ["x"], ["y"], name="my_sin")],
                    [f32("x", [2, 3])], [f32("y", [2, 3])]), os.path.join(OUT, "unsupported_op.onnx"))
    # An element type shardc does not support (uint8).
    onnx.save(model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                    [helper.make_tensor_value_info("x", TensorProto.UINT8, [4])],
                    [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])]),
              os.path.join(OUT, "uint8_input.onnx"))
    # A Reshape whose target shape is computed from run-time data.
    onnx.save(model([helper.make_node("Reshape", ["x", "s"], ["y"], name="dyn_reshape")],
                    [f32("x", [6]), helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                    [f32("y", [2, 3])]), os.path.join(OUT, "dynamic_reshape.onnx"))
    # A custom-domain op.
    onnx.save(model([helper.make_node("Foo", ["x"], ["y"], name="custom", domain="com.example")],
                    [f32("x", [2])], [f32("y", [2])]), os.path.join(OUT, "custom_domain.onnx"))


if __name__ == "__main__":
    main()
