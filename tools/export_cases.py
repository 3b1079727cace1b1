#!/usr/bin/python3
"""Exports torchvision models users export that are not in hase's zoo (issue 24), as a new user
would: torch.onnx.export, eval mode, dynamic batch, at a chosen opset, into a folder of your choice
(never models/: these files are not committed).

Uses Debian's python3-torch 1.13 / python3-torchvision 0.14 / python3-onnx 1.12 (run with
/usr/bin/python3); weights=None everywhere, so nothing is downloaded and weights are seeded random
values (tools/export_zoo.py's randomize_statistics).

  tools/export_cases.py --out DIR [--opset 13|17] [--weight-free] NAME...   (default: all)
  tools/export_cases.py --list

Names: the torchvision constructor (deeplabv3_mobilenet_v3_large, vit_b_32, maxvit_t, ...) or
NAME_fp16: the float model converted to float16 (every float initializer, Constant, graph input
and output and Cast-to-float becomes float16), as onnxconverter-common's convert_float_to_float16
does with keep_io_types=False. Output: DIR/NAME.opsetN.onnx; with --weight-free, initializers over
1 KiB become references to DIR/NAME.opsetN.onnx.data, which is not written (hase_materialize makes
a runnable copy), else weights are embedded.
Prints one line per model: name, opset, nodes, file size, seconds.
"""
import argparse
import io
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo  # noqa: E402  (randomize_statistics, constants_to_initializers, strip_weights)

tv = torchvision.models
det = torchvision.models.detection
seg = torchvision.models.segmentation

# name -> (constructor, input H, W). Detection models take a list of images; a [N,3,H,W] tensor is
# iterated the same way. Sizes: each model's own default transform size where it has a fixed one.
CASES = {
    # segmentation
    "deeplabv3_mobilenet_v3_large": (lambda: seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None), 520, 520),
    "lraspp_mobilenet_v3_large": (lambda: seg.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None), 520, 520),
    "deeplabv3_resnet50": (lambda: seg.deeplabv3_resnet50(weights=None, weights_backbone=None), 520, 520),
    "fcn_resnet50": (lambda: seg.fcn_resnet50(weights=None, weights_backbone=None), 520, 520),
    # detection
    "ssdlite320_mobilenet_v3_large": (lambda: det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None), 320, 320),
    "ssd300_vgg16": (lambda: det.ssd300_vgg16(weights=None, weights_backbone=None), 300, 300),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (lambda: det.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None), 320, 320),
    "fasterrcnn_resnet50_fpn": (lambda: det.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None), 800, 800),
    "maskrcnn_resnet50_fpn": (lambda: det.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None), 800, 800),
    "keypointrcnn_resnet50_fpn": (lambda: det.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None), 800, 800),
    "retinanet_resnet50_fpn": (lambda: det.retinanet_resnet50_fpn(weights=None, weights_backbone=None), 800, 800),
    "fcos_resnet50_fpn": (lambda: det.fcos_resnet50_fpn(weights=None, weights_backbone=None), 800, 800),
    # transformers and modern CNNs
    "vit_b_32": (lambda: tv.vit_b_32(weights=None), 224, 224),
    "vit_b_16": (lambda: tv.vit_b_16(weights=None), 224, 224),
    "swin_t": (lambda: tv.swin_t(weights=None), 224, 224),
    "convnext_tiny": (lambda: tv.convnext_tiny(weights=None), 224, 224),
    "maxvit_t": (lambda: tv.maxvit_t(weights=None), 224, 224),
    # float16
    "mobilenet_v3_large_fp16": (lambda: tv.mobilenet_v3_large(weights=None), 224, 224),
    "mobilenet_v3_small_fp16": (lambda: tv.mobilenet_v3_small(weights=None), 224, 224),
}
# nn.MultiheadAttention's fused fast path (aten::_native_multi_head_attention) has no ONNX
# export: trace these with grad enabled (as tools/export_zoo.py does for vit_b_16).
GRAD_EXPORT = {"vit_b_32", "vit_b_16"}
SEED = 0


def to_float16(m):
    """Float model -> float16 model: initializers, Constant values, graph inputs/outputs and
    value_info of type float become float16; Cast(to=float) becomes Cast(to=float16)."""
    F, H = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16

    def conv_tensor(t):
        if t.data_type != F:
            return
        a = numpy_helper.to_array(t).astype(np.float16)
        t.CopyFrom(numpy_helper.from_array(a, t.name))

    for t in m.graph.initializer:
        conv_tensor(t)
    for n in m.graph.node:
        for a in n.attribute:
            if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                conv_tensor(a.t)
            if n.op_type == "Cast" and a.name == "to" and a.i == F:
                a.i = H
    for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if vi.type.tensor_type.elem_type == F:
            vi.type.tensor_type.elem_type = H


def export(name, opset):
    ctor, h, w = CASES[name]
    torch.manual_seed(SEED)
    model = export_zoo.randomize_statistics(ctor().eval())
    x = torch.rand(1, 3, h, w)
    buf = io.BytesIO()
    with torch.set_grad_enabled(name in GRAD_EXPORT):
        torch.onnx.export(model, x, buf, opset_version=opset, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL,
                          input_names=["input"], dynamic_axes={"input": {0: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    export_zoo.constants_to_initializers(m)
    if name.endswith("_fp16"):
        to_float16(m)
    m.producer_name = "hase tools/export_cases.py (torch.onnx.export)"
    m.doc_string = f"{name}: torch {torch.__version__}, torchvision {torchvision.__version__}, " \
                   f"opset {opset}, seed {SEED}, eval mode"
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    ap.add_argument("--out", help="output folder (not models/)")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--weight-free", action="store_true",
                    help="initializers over 1 KiB become external-data references (file not written)")
    ap.add_argument("--list", action="store_true", help="print the names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    names = args.names or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; known: {', '.join(CASES)}")
    models_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
    if os.path.abspath(args.out) == models_dir:
        ap.error("these models are not committed: choose another --out than models/")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in names:
        t0 = time.time()
        m = export(name, args.opset)
        stem = f"{name}.opset{args.opset}"
        path = os.path.join(args.out, stem + ".onnx")
        if args.weight_free:
            export_zoo.strip_weights(m, stem, export_zoo.KEEP_BYTES)
        onnx.save(m, path)
        print(f"{name:40} opset {args.opset} {len(m.graph.node):5d} nodes "
              f"{os.path.getsize(path) / 1024:10.1f} KB {time.time() - t0:6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
