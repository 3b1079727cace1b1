"""YOLOv5 and YOLOv8 detection models written from their published architecture.

Sources (read, not copied; no ultralytics code or weights are used):
  - ultralytics/yolov5 v7.0: models/yolov5s.yaml, models/common.py (Conv, Bottleneck, C3, SPPF),
    models/yolo.py (Detect).
  - ultralytics/ultralytics 8.x: cfg/models/v8/yolov8.yaml, nn/modules/{conv,block,head}.py
    (Conv, Bottleneck, C2f, SPPF, DFL, Detect).

Both models are built for a fixed input size (default 640x640) so that the Detect head's decode
(grids, anchors, strides) is made of constants; only the batch dimension is dynamic in the export.

Detect head as exported here (what `yolov5 export.py --include onnx` / `yolo export format=onnx`
produce, minus NMS):
  - YOLOv5: per level 1x1 Conv -> Reshape [-1,3,85,ny,nx] -> Transpose -> Sigmoid -> Split
    (xy, wh, conf) -> xy*2+grid, (wh*2)^2*anchor_grid -> Concat -> Reshape [-1, 3*ny*nx, 85];
    Concat over levels -> output0 [N, 25200, 85] at 640.
  - YOLOv8: per level Concat(box branch, cls branch) -> Reshape [-1, 144, ny*nx]; Concat over
    levels -> Split(64, 80) -> DFL (Reshape, Transpose, Softmax, 1x1 Conv with fixed weights
    0..15) -> dist2bbox (Split, Sub, Add, Div, Concat) * strides; Sigmoid(cls); Concat ->
    output0 [N, 84, 8400] at 640.
"""
import math

import torch
from torch import nn


def make_divisible(x, divisor=8):
    return int(math.ceil(x / divisor) * divisor)


class Conv(nn.Module):
    """Conv2d (no bias) + BatchNorm2d + SiLU; 'same' padding k//2."""

    def __init__(self, c1, c2, k=1, s=1, p=None, g=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, groups=g, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    """cv1 (k[0]) -> cv2 (k[1]) with optional residual add when c1 == c2."""

    def __init__(self, c1, c2, shortcut=True, k=(1, 3), e=0.5):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, k[0], 1)
        self.cv2 = Conv(c_, c2, k[1], 1)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    """YOLOv5 CSP bottleneck with 3 convolutions."""

    def __init__(self, c1, c2, n=1, shortcut=True, e=0.5):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c1, c_, 1, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut, k=(1, 3), e=1.0) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class C2f(nn.Module):
    """YOLOv8 CSP bottleneck with 2 convolutions (export form: Split instead of chunk)."""

    def __init__(self, c1, c2, n=1, shortcut=False, e=0.5):
        super().__init__()
        self.c = int(c2 * e)
        self.cv1 = Conv(c1, 2 * self.c, 1, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, self.c, shortcut, k=(3, 3), e=1.0) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Spatial pyramid pooling, fast: three chained 5x5 max-pools."""

    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c_ * 4, c2, 1, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class DetectV5(nn.Module):
    """YOLOv5 anchor-based head (3 anchors per level, 80 classes)."""

    ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))

    def __init__(self, ch, strides, imgsz, nc=80):
        super().__init__()
        self.nc, self.no, self.na = nc, nc + 5, 3
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        self.shapes = [(imgsz // s, imgsz // s) for s in strides]
        for i, ((ny, nx), s) in enumerate(zip(self.shapes, strides)):
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((xv, yv), 2).expand(1, self.na, ny, nx, 2).float() - 0.5
            anchors = torch.tensor(self.ANCHORS[i], dtype=torch.float32).view(1, self.na, 1, 1, 2)
            anchor_grid = anchors.expand(1, self.na, ny, nx, 2).contiguous()
            self.register_buffer(f"grid{i}", grid.contiguous(), persistent=False)
            self.register_buffer(f"anchor_grid{i}", anchor_grid, persistent=False)
        self.strides = strides

    def forward(self, xs):
        z = []
        for i, x in enumerate(xs):
            ny, nx = self.shapes[i]
            x = self.m[i](x).view(-1, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
            xy, wh, conf = x.sigmoid().split((2, 2, self.nc + 1), 4)
            xy = (xy * 2 + getattr(self, f"grid{i}")) * self.strides[i]
            wh = (wh * 2) ** 2 * getattr(self, f"anchor_grid{i}")
            z.append(torch.cat((xy, wh, conf), 4).view(-1, self.na * ny * nx, self.no))
        return torch.cat(z, 1)


class DFL(nn.Module):
    """Distribution focal loss integral: softmax over 16 bins then a fixed 1x1 conv (0..15)."""

    def __init__(self, c1=16):
        super().__init__()
        self.conv = nn.Conv2d(c1, 1, 1, bias=False).requires_grad_(False)
        self.conv.weight.data[:] = torch.arange(c1, dtype=torch.float).view(1, c1, 1, 1)
        self.c1 = c1

    def forward(self, x, a):
        return self.conv(x.view(-1, 4, self.c1, a).transpose(2, 1).softmax(1)).view(-1, 4, a)


class DetectV8(nn.Module):
    """YOLOv8 anchor-free decoupled head (reg_max 16, 80 classes)."""

    def __init__(self, ch, strides, imgsz, nc=80):
        super().__init__()
        self.nc, self.reg_max = nc, 16
        self.no = nc + 4 * self.reg_max
        c2 = max(16, ch[0] // 4, self.reg_max * 4)
        c3 = max(ch[0], min(nc, 100))
        self.cv2 = nn.ModuleList(
            nn.Sequential(Conv(x, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 4 * self.reg_max, 1)) for x in ch)
        self.cv3 = nn.ModuleList(
            nn.Sequential(Conv(x, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, nc, 1)) for x in ch)
        self.dfl = DFL(self.reg_max)
        self.shapes = [(imgsz // s, imgsz // s) for s in strides]
        anchors, stride_t = [], []
        for (ny, nx), s in zip(self.shapes, strides):
            sy, sx = torch.meshgrid(torch.arange(ny) + 0.5, torch.arange(nx) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), -1).view(-1, 2))
            stride_t.append(torch.full((ny * nx, 1), float(s)))
        self.register_buffer("anchors", torch.cat(anchors).transpose(0, 1).unsqueeze(0).contiguous(),
                             persistent=False)
        self.register_buffer("stride_t", torch.cat(stride_t).transpose(0, 1).contiguous(), persistent=False)

    def forward(self, xs):
        a = sum(ny * nx for ny, nx in self.shapes)
        x_cat = torch.cat([torch.cat((self.cv2[i](x), self.cv3[i](x)), 1).view(-1, self.no, ny * nx)
                           for i, (x, (ny, nx)) in enumerate(zip(xs, self.shapes))], 2)
        box, cls = x_cat.split((self.reg_max * 4, self.nc), 1)
        lt, rb = self.dfl(box, a).split((2, 2), 1)  # chunk would export Shape/Gather/Slice
        x1y1 = self.anchors - lt
        x2y2 = self.anchors + rb
        dbox = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.stride_t
        return torch.cat((dbox, cls.sigmoid()), 1)


class YOLOv5(nn.Module):
    """yolov5{n,s,m,l,x}.yaml (v6.0+ backbone with SPPF), depth/width multiples gd/gw."""

    def __init__(self, gd, gw, imgsz=640, nc=80):
        super().__init__()
        n = lambda k: max(round(k * gd), 1) if k > 1 else k  # noqa: E731
        c = lambda k: make_divisible(k * gw, 8)  # noqa: E731
        self.b0 = Conv(3, c(64), 6, 2, 2)
        self.b1 = Conv(c(64), c(128), 3, 2)
        self.b2 = C3(c(128), c(128), n(3))
        self.b3 = Conv(c(128), c(256), 3, 2)
        self.b4 = C3(c(256), c(256), n(6))
        self.b5 = Conv(c(256), c(512), 3, 2)
        self.b6 = C3(c(512), c(512), n(9))
        self.b7 = Conv(c(512), c(1024), 3, 2)
        self.b8 = C3(c(1024), c(1024), n(3))
        self.b9 = SPPF(c(1024), c(1024), 5)
        self.h10 = Conv(c(1024), c(512), 1, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h13 = C3(c(512) * 2, c(512), n(3), False)
        self.h14 = Conv(c(512), c(256), 1, 1)
        self.h17 = C3(c(256) * 2, c(256), n(3), False)
        self.h18 = Conv(c(256), c(256), 3, 2)
        self.h20 = C3(c(256) * 2, c(512), n(3), False)
        self.h21 = Conv(c(512), c(512), 3, 2)
        self.h23 = C3(c(512) * 2, c(1024), n(3), False)
        self.detect = DetectV5((c(256), c(512), c(1024)), (8, 16, 32), imgsz, nc)

    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.b6(self.b5(p3))
        x = self.b9(self.b8(self.b7(p4)))
        h10 = self.h10(x)
        x = self.h13(torch.cat((self.up(h10), p4), 1))
        h14 = self.h14(x)
        o3 = self.h17(torch.cat((self.up(h14), p3), 1))
        o4 = self.h20(torch.cat((self.h18(o3), h14), 1))
        o5 = self.h23(torch.cat((self.h21(o4), h10), 1))
        return self.detect([o3, o4, o5])


class YOLOv8(nn.Module):
    """yolov8.yaml with scale [depth, width, max_channels]."""

    def __init__(self, gd, gw, max_ch, imgsz=640, nc=80):
        super().__init__()
        n = lambda k: max(round(k * gd), 1) if k > 1 else k  # noqa: E731
        c = lambda k: make_divisible(min(k, max_ch) * gw, 8)  # noqa: E731
        self.b0 = Conv(3, c(64), 3, 2)
        self.b1 = Conv(c(64), c(128), 3, 2)
        self.b2 = C2f(c(128), c(128), n(3), True)
        self.b3 = Conv(c(128), c(256), 3, 2)
        self.b4 = C2f(c(256), c(256), n(6), True)
        self.b5 = Conv(c(256), c(512), 3, 2)
        self.b6 = C2f(c(512), c(512), n(6), True)
        self.b7 = Conv(c(512), c(1024), 3, 2)
        self.b8 = C2f(c(1024), c(1024), n(3), True)
        self.b9 = SPPF(c(1024), c(1024), 5)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h12 = C2f(c(1024) + c(512), c(512), n(3))
        self.h15 = C2f(c(512) + c(256), c(256), n(3))
        self.h16 = Conv(c(256), c(256), 3, 2)
        self.h18 = C2f(c(256) + c(512), c(512), n(3))
        self.h19 = Conv(c(512), c(512), 3, 2)
        self.h21 = C2f(c(512) + c(1024), c(1024), n(3))
        self.detect = DetectV8((c(256), c(512), c(1024)), (8, 16, 32), imgsz, nc)

    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.b6(self.b5(p3))
        p5 = self.b9(self.b8(self.b7(p4)))
        h12 = self.h12(torch.cat((self.up(p5), p4), 1))
        o3 = self.h15(torch.cat((self.up(h12), p3), 1))
        o4 = self.h18(torch.cat((self.h16(o3), h12), 1))
        o5 = self.h21(torch.cat((self.h19(o4), p5), 1))
        return self.detect([o3, o4, o5])


def yolov5s(imgsz=640):
    return YOLOv5(0.33, 0.50, imgsz)


def yolov8(scale, imgsz=640):
    gd, gw, mc = {"n": (0.33, 0.25, 1024), "s": (0.33, 0.50, 1024), "m": (0.67, 0.75, 768)}[scale]
    return YOLOv8(gd, gw, mc, imgsz)
