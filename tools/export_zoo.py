#!/usr/bin/python3
"""Exports hase's model zoo to ONNX (opset 13, dynamic batch dimension).

Uses Debian's python3-torch 1.13 / python3-torchvision 0.14 / python3-onnx 1.12 (apt, no pip;
run with /usr/bin/python3). Nothing is downloaded: torchvision models use weights=None, so their
weights are the seeded random initialisation, and the YOLO models (tools/yolo.py) are written from
their published architecture.

Two modes:
  weight-free (default): models/<name>.onnx. Every initializer larger than --keep-bytes (1 KiB)
    keeps its name, dims and dtype but its bytes are replaced by an ONNX external-data reference
    (data_location=EXTERNAL, location=<name>.onnx.data, offset, length). The .data file is never
    written (it is gitignored); tools/hase_materialize turns such a file into a runnable one.
    Small initializers (Reshape shapes, Clip bounds, Resize scales, ...) stay embedded because
    fusion decisions depend on their values.
  --full-weights --out DIR: DIR/<name>.onnx with every weight embedded (real size, random values),
    e.g. for benchmarks. VGG-16 is ~550 MB.

Export details: models are in eval mode and exported with do_constant_folding=True, so the
exporter folds BatchNormalization into the preceding Conv (only DenseNet's pre-activation BN,
which follows a Concat, stays a BatchNormalization node). Input "input" is [batch, 3, 224, 224]
for classifiers and [batch, 3, 640, 640] for YOLO; only the batch dimension is dynamic.

For every model it prints parameters and multiply-accumulates (Conv + Gemm + MatMul, batch 1)
counted on the exported ONNX graph, next to the published figures.
"""
import argparse
import io
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yolo  # noqa: E402

OPSET = 13
SEED = 0
KEEP_BYTES = 1024
MAX_COMMITTED_BYTES = 2 * 1024 * 1024

tv = torchvision.models
# name -> (constructor, input HxW, published params (M), published MACs (G) at that input, source)
ZOO = {
    "resnet18": (lambda: tv.resnet18(weights=None), 224, 11.69, 1.81, "torchvision docs"),
    "resnet34": (lambda: tv.resnet34(weights=None), 224, 21.80, 3.66, "torchvision docs"),
    "resnet50": (lambda: tv.resnet50(weights=None), 224, 25.56, 4.09, "torchvision docs"),
    "resnet101": (lambda: tv.resnet101(weights=None), 224, 44.55, 7.80, "torchvision docs"),
    "resnet152": (lambda: tv.resnet152(weights=None), 224, 60.19, 11.51, "torchvision docs"),
    "vgg11": (lambda: tv.vgg11(weights=None), 224, 132.86, 7.61, "torchvision docs"),
    "vgg13": (lambda: tv.vgg13(weights=None), 224, 133.05, 11.31, "torchvision docs"),
    "vgg16": (lambda: tv.vgg16(weights=None), 224, 138.36, 15.47, "torchvision docs"),
    "vgg19": (lambda: tv.vgg19(weights=None), 224, 143.67, 19.63, "torchvision docs"),
    "densenet121": (lambda: tv.densenet121(weights=None), 224, 7.98, 2.83, "torchvision docs"),
    "densenet161": (lambda: tv.densenet161(weights=None), 224, 28.68, 7.73, "torchvision docs"),
    "densenet169": (lambda: tv.densenet169(weights=None), 224, 14.15, 3.36, "torchvision docs"),
    "densenet201": (lambda: tv.densenet201(weights=None), 224, 20.01, 4.29, "torchvision docs"),
    "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), 224, 3.50, 0.30, "torchvision docs"),
    "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(weights=None), 224, 2.54, 0.06, "torchvision docs"),
    "mobilenet_v3_large": (lambda: tv.mobilenet_v3_large(weights=None), 224, 5.48, 0.22, "torchvision docs"),
    # ultralytics READMEs list params and "FLOPs (B)" = 2 x MACs at 640; MACs here = FLOPs / 2.
    "yolov5s": (lambda: yolo.yolov5s(640), 640, 7.2, 16.5 / 2, "ultralytics/yolov5 README"),
    "yolov8n": (lambda: yolo.yolov8("n", 640), 640, 3.2, 8.7 / 2, "ultralytics docs"),
    "yolov8s": (lambda: yolo.yolov8("s", 640), 640, 11.2, 28.6 / 2, "ultralytics docs"),
    "yolov8m": (lambda: yolo.yolov8("m", 640), 640, 25.9, 78.9 / 2, "ultralytics docs"),
    # What users export today (issue 12): modern CNNs and vision transformers (LayerNorm, GELU,
    # attention, SiLU, grouped convs), figures from the torchvision 0.14 model docs.
    "convnext_tiny": (lambda: tv.convnext_tiny(weights=None), 224, 28.59, 4.46, "torchvision docs"),
    "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), 224, 5.29, 0.39, "torchvision docs"),
    "regnet_y_400mf": (lambda: tv.regnet_y_400mf(weights=None), 224, 4.34, 0.40, "torchvision docs"),
    "resnext50_32x4d": (lambda: tv.resnext50_32x4d(weights=None), 224, 25.03, 4.23, "torchvision docs"),
    "vit_b_16": (lambda: tv.vit_b_16(weights=None), 224, 86.57, 17.56, "torchvision docs"),
    "swin_t": (lambda: tv.swin_t(weights=None), 224, 28.29, 4.49, "torchvision docs"),
    # The flatten most user code writes, x.view(x.size(0), -1): with a dynamic batch it exports as
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape. Figures counted by hand (ViewFlattenCnn).
    "view_flatten_cnn": (lambda: ViewFlattenCnn(), 224, 1.008618, 0.080482304, "hand count, ViewFlattenCnn"),
}
FIRST = ["resnet50", "resnet18", "vgg11"]
NOT_IN_ZOO_YET = []  # every model above is in models/ (issue 12 brought vit_b_16 and swin_t in)
GRAD_EXPORT = {"vit_b_16"}


class ViewFlattenCnn(torch.nn.Module):
    """A small user-written CNN whose classifier input is flattened with x.view(x.size(0), -1).

    Hand count at 224x224, batch 1 (parameters incl. biases; MACs = Conv + Linear):
      conv1 3->16 3x3 pad 1: 448 params, 224*224*16*27 = 21,676,032 MACs
      conv2 16->32 3x3 pad 1 (after 2x2 max pool): 4,640 params, 112*112*32*144 = 57,802,752 MACs
      fc 32*56*56 -> 10 (after a second 2x2 max pool): 1,003,530 params, 1,003,520 MACs
      total 1,008,618 params, 80,482,304 MACs."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(32 * 56 * 56, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return self.fc(x)


def randomize_statistics(model):
    """Gives BatchNorm statistics/affine terms and biases seeded random values, as in a trained
    model. With their default init (BN 1/0, biases 0) the folded Conv biases would be identical,
    and the exporter would deduplicate them into Identity nodes that real exports do not have."""
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
                mod.weight.copy_(0.5 + torch.rand(mod.weight.shape, generator=g))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=g))
                mod.running_mean.copy_(0.1 * torch.randn(mod.running_mean.shape, generator=g))
                mod.running_var.copy_(0.5 + torch.rand(mod.running_var.shape, generator=g))
            elif isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)) and mod.bias is not None:
                mod.bias.copy_(0.01 * torch.randn(mod.bias.shape, generator=g))
        # Any other parameter initialised to one repeated value (LayerNorm 1/0, ConvNeXt's layer
        # scale 1e-6, ViT's zero class token) would be deduplicated the same way: perturb it.
        # Runs after the loop above, so models without such parameters export as before.
        for p in model.parameters():
            if p.numel() > 1 and bool(p.max() == p.min()):
                p.add_(0.01 * torch.randn(p.shape, generator=g))
    return model


def constants_to_initializers(m):
    """Turns Constant nodes (value attribute) into initializers, as ONNX Runtime does at load, so
    that large ones (YOLO grids) are stripped like weights and small ones stay embedded."""
    keep = []
    for n in m.graph.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            m.graph.initializer.append(t)
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)


def export_onnx(name):
    """Builds `name` (seeded) and returns (onnx ModelProto with embedded weights, torch params)."""
    ctor, hw, *_ = ZOO[name]
    torch.manual_seed(SEED)
    model = randomize_statistics(ctor().eval())
    torch_params = sum(p.numel() for p in model.parameters())
    x = torch.zeros(1, 3, hw, hw)
    out_name = "output0" if name.startswith("yolo") else "output"
    buf = io.BytesIO()
    # nn.MultiheadAttention (ViT) takes torch's fused fast path under no_grad, and that op
    # (aten::_native_multi_head_attention) has no ONNX export: trace it with grad enabled.
    with torch.set_grad_enabled(name in GRAD_EXPORT):
        torch.onnx.export(model, x, buf, opset_version=OPSET, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL,
                          input_names=["input"], output_names=[out_name],
                          dynamic_axes={"input": {0: "batch"}, out_name: {0: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    constants_to_initializers(m)
    # The exporter names dims it cannot infer through Reshape(-1, ...) "Concatoutput0_dim_1":
    # declare the real static sizes of the output (all but the batch dimension).
    with torch.no_grad():
        y = model(x)
    for d, size in zip(m.graph.output[0].type.tensor_type.shape.dim[1:], y.shape[1:]):
        d.dim_value = int(size)
    m.producer_name = "hase tools/export_zoo.py (torch.onnx.export)"
    m.doc_string = f"{name}: torch {torch.__version__}, torchvision {torchvision.__version__}, " \
                   f"opset {OPSET}, seed {SEED}, eval mode (BatchNormalization folded into Conv)"
    return m, torch_params


def tensor_nbytes(t):
    if t.HasField("raw_data") or t.data_location == onnx.TensorProto.EXTERNAL:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            return int({e.key: e.value for e in t.external_data}["length"])
        return len(t.raw_data)
    return numpy_helper.to_array(t).nbytes


def strip_weights(m, name, keep_bytes):
    """Replaces initializer data > keep_bytes by external-data references to a file never written."""
    location = f"{name}.onnx.data"
    offset = 0
    stripped = 0
    for t in m.graph.initializer:
        nbytes = tensor_nbytes(t)
        if nbytes <= keep_bytes:
            continue
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                      "uint64_data", "string_data"):
            t.ClearField(field)
        t.data_location = onnx.TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += (nbytes + 4095) // 4096 * 4096  # page-aligned, as onnx >= 1.13 writes it
        stripped += 1
    return stripped, offset


def count_costs(m):
    """Returns (parameters, MACs at batch 1) of an ONNX model: parameters = elements of the
    initializers consumed by Conv/Gemm/MatMul and of BatchNormalization's scale and bias (not its
    running statistics, as torch counts them),
    MACs = Conv (N*Cout*Hout*Wout * Cin/groups*kh*kw) + Gemm/MatMul (M*N*K)."""
    g = shape_inference.infer_shapes(m, data_prop=True).graph
    dims = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        d = [x.dim_value if x.HasField("dim_value") else 1 for x in vi.type.tensor_type.shape.dim]
        dims[vi.name] = d
    inits = {t.name: list(t.dims) for t in g.initializer}
    dims.update(inits)
    learned = set()
    macs = 0
    for n in g.node:
        if n.op_type in ("Conv", "Gemm", "MatMul"):
            learned.update(i for i in n.input if i in inits)
        elif n.op_type == "BatchNormalization":
            learned.update(i for i in n.input[1:3] if i in inits)
        if n.op_type == "Conv":
            w = dims[n.input[1]]
            out = dims[n.output[0]]
            macs += int(np.prod(out)) * int(np.prod(w[1:]))
        elif n.op_type == "Gemm":
            # K and N from the weight B (the activation's shape may be unknown after a
            # shape-computed Reshape such as x.view(x.size(0), -1)); M from the output, else 1.
            b = dims[n.input[1]]
            trans_b = any(at.name == "transB" and at.i for at in n.attribute)
            k, n_out = (b[1], b[0]) if trans_b else (b[0], b[1])
            out = dims.get(n.output[0], [])
            m_rows = int(np.prod(out)) // n_out if len(out) == 2 else 1
            macs += m_rows * n_out * k
        elif n.op_type == "MatMul":
            a = dims.get(n.input[0], [])
            out = dims.get(n.output[0], [])
            if not a or not out:  # shape computed at run time (ONNX inference cannot tell)
                raise ValueError(f"MatMul {n.name}: unknown shapes; count with `hase kernels`")
            macs += int(np.prod(out)) * a[-1]
    params = sum(int(np.prod(inits[i])) for i in learned)
    return params, macs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    ap.add_argument("--out", default=None,
                    help="output folder (default: models/, or models/full/ with --full-weights)")
    ap.add_argument("--full-weights", action="store_true",
                    help="embed real-size random weights instead of stripping them")
    ap.add_argument("--keep-bytes", type=int, default=KEEP_BYTES,
                    help="weight-free mode: initializers up to this size stay embedded")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--stats", action="store_true",
                    help="only print parameters and MACs of the existing files in --out")
    args = ap.parse_args()
    if args.list:
        print("\n".join(ZOO))
        return 0
    names = args.names or [n for n in ZOO if n not in NOT_IN_ZOO_YET]
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; known: {', '.join(ZOO)}")
    models_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
    # Full-weight files must never replace the committed weight-free ones: default models/full/
    # (gitignored).
    out = args.out or (os.path.join(models_dir, "full") if args.full_weights else models_dir)
    if args.full_weights and not args.stats and os.path.abspath(out) == models_dir:
        ap.error("--full-weights would overwrite the weight-free models/*.onnx: choose another --out")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)

    if args.stats:
        print(f"{'model':20} {'params M':>9} {'pub':>7} {'MACs G':>8} {'pub':>7} {'nodes':>5} {'BN':>3} {'KB':>6}")
        for name in names:
            path = os.path.join(out, f"{name}.onnx")
            m = onnx.load(path, load_external_data=False)
            params, macs = count_costs(m)
            bn = sum(1 for n in m.graph.node if n.op_type == "BatchNormalization")
            _, _, pub_params, pub_macs, _ = ZOO[name]
            print(f"{name:20} {params / 1e6:9.3f} {pub_params:7.2f} {macs / 1e9:8.3f} {pub_macs:7.3f} "
                  f"{len(m.graph.node):5d} {bn:3d} {os.path.getsize(path) / 1024:6.1f}")
        return 0

    print(f"{'model':20} {'params M':>9} {'(torch)':>8} {'pub':>7} {'MACs G':>8} {'pub':>7} "
          f"{'ops':>5} {'BN':>3} {'stripped':>8} {'file KB':>8} {'s':>5}")
    for name in names:
        t0 = time.time()
        m, torch_params = export_onnx(name)
        try:
            params, macs = count_costs(m)
        except ValueError as e:  # shapes only known once dims are bound
            params = macs = float("nan")
            print(f"note: {name}: {e}", file=sys.stderr)
        bn = sum(1 for n in m.graph.node if n.op_type == "BatchNormalization")
        path = os.path.join(out, f"{name}.onnx")
        if args.full_weights:
            stripped = 0
            onnx.save(m, path)
        else:
            onnx.checker.check_model(m)  # before stripping: the checker opens external data
            stripped, _ = strip_weights(m, name, args.keep_bytes)
            onnx.save(m, path)
            size = os.path.getsize(path)
            if size >= MAX_COMMITTED_BYTES:
                print(f"error: {path} is {size} bytes (limit {MAX_COMMITTED_BYTES})", file=sys.stderr)
                return 1
        _, hw, pub_params, pub_macs, _ = ZOO[name]
        print(f"{name:20} {params / 1e6:9.3f} {torch_params / 1e6:8.3f} {pub_params:7.2f} "
              f"{macs / 1e9:8.3f} {pub_macs:7.3f} {len(m.graph.node):5d} {bn:3d} {stripped:8d} "
              f"{os.path.getsize(path) / 1024:8.1f} {time.time() - t0:5.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
