"""PyTorch's ONNX export for training, with the module's own BatchNorm statistics in the file.

Exporting with training=TrainingMode.TRAINING traces the module's forward once, which moves its
BatchNorm running statistics before the exporter reads them: a model so exported starts one
update ahead of the module. This puts the old statistics back, in the module and in the file.
"""
import onnx
import torch
from onnx import numpy_helper


def export_training(model, args, path, input_names, output_names=("logits",), opset=14):
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    torch.onnx.export(model, args, path, input_names=list(input_names),
                      output_names=list(output_names), opset_version=opset,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    with torch.no_grad():
        for n, b in model.named_buffers():
            b.copy_(buffers[n])
    graph = onnx.load(path)
    for init in graph.graph.initializer:
        if init.name in buffers:
            init.CopyFrom(numpy_helper.from_array(buffers[init.name].numpy(), init.name))
    onnx.save(graph, path)
