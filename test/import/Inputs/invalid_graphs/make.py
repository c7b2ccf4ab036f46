#!/usr/bin/python3
"""Writes OUT/{opset99,two_writers,dup_attr}.onnx: a one-node Relu model importing opset 99,
a graph where two nodes write the same value, and a node with an attribute given twice.

Usage: make.py OUT
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])


def save(name, nodes, opset=13):
    g = helper.make_graph(nodes, name, [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


save("opset99", [helper.make_node("Relu", ["x"], ["y"])], opset=99)
save("two_writers", [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])])
node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)
node.attribute.extend([helper.make_attribute("alpha", 0.2)])
save("dup_attr", [node])
