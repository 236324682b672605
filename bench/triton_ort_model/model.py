"""The ONNX Runtime peer inside Triton (bench/triton_serving.py): Triton's
Python backend running an onnxruntime session of model.onnx beside this
file's version directory. A batch of requests is stacked into one run and
split back, as the brt backend does.

Tensors cross through DLPack: the wheel's stub is built against NumPy 1's C
API, whose arrays this NumPy 2 would misread (as_numpy() and Tensor(name,
array) give empty data). Inputs come in by np.from_dlpack; outputs leave as
torch's DLPack capsules, which the stub consumes cleanly (NumPy 2's own
capsule makes it print a ValueError on every response)."""
import json
import os

import numpy as np
import onnxruntime as ort
import torch
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        threads = int(config["parameters"]["threads"]["string_value"])
        self.inputs = [i["name"] for i in config["input"]]
        self.output = config["output"][0]["name"]
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def execute(self, requests):
        arrays = [[np.from_dlpack(pb_utils.get_input_tensor_by_name(r, name)) for name in self.inputs]
                  for r in requests]
        feeds = {name: np.concatenate([a[i] for a in arrays]) for i, name in enumerate(self.inputs)}
        out = torch.from_numpy(self.session.run([self.output], feeds)[0])
        responses, first = [], 0
        for a in arrays:
            rows = a[0].shape[0]
            tensor = pb_utils.Tensor.from_dlpack(self.output, torch.utils.dlpack.to_dlpack(out[first:first + rows]))
            responses.append(pb_utils.InferenceResponse([tensor]))
            first += rows
        return responses
