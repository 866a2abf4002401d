"""The up-sampling extra models, written as small torch.nn modules of the real layer
structure (torchvision is not a dependency; gen_extra_models exports, checks and
caches them):

- ``unet``: three encoder levels (conv-BN-ReLU twice, 2x2 max pool), a bottleneck, a
  decoder that up-samples with ``ConvTranspose2d(k=2, s=2)`` and concatenates the skip,
  a 1x1 head; a non-square input (56 x 72) whose bottom level is odd (7 x 9);
- ``deeplab``: a MobileNetV3-like backbone (inverted residuals, hardswish, squeeze-and-
  excitation with hardsigmoid, output stride 8), an ASPP head (1x1, two dilated 3x3
  branches and a global-pooling branch brought back by bilinear ``F.interpolate``), the
  logits interpolated bilinearly (align_corners=False) to the input's size: 12 -> 90, a
  non-integer scale (7.5);
- ``yolo``: a YOLOv8-style detector (conv-BN-SiLU, C2f blocks, SPPF with 5x5 max
  pools), an FPN/PAN neck with ``nn.Upsample(scale_factor=2, mode="nearest")`` and
  concatenations, a box and a class branch per scale (strides 8, 16, 32), the three
  scales' predictions concatenated into [1, 4 * 16 + classes, anchors].

Sizes are small so that compiling and testing stay fast.
"""

def _conv_bn(c, m, k=3, stride=1, dilation=1, groups=1, act=None):
    """Conv2d (no bias) + BatchNorm2d + ``act`` (a module class, or None)."""
    from torch import nn

    layers = [nn.Conv2d(c, m, k, stride, dilation * (k // 2), dilation, groups, bias=False), nn.BatchNorm2d(m)]
    return nn.Sequential(*layers, *([act()] if act else []))


def unet():
    import torch
    from torch import nn

    def double(c, m):
        return nn.Sequential(_conv_bn(c, m, act=nn.ReLU), _conv_bn(m, m, act=nn.ReLU))

    class UNet(nn.Module):
        def __init__(self, widths=(8, 16, 32), bottom=64, classes=3):
            super().__init__()
            ins = (3,) + widths[:-1]
            self.down = nn.ModuleList(double(c, m) for c, m in zip(ins, widths))
            self.pool = nn.MaxPool2d(2)
            self.bottom = double(widths[-1], bottom)
            outs = (bottom,) + tuple(reversed(widths[1:]))
            self.up = nn.ModuleList(nn.ConvTranspose2d(c, m, 2, 2) for c, m in zip(outs, reversed(widths)))
            self.decode = nn.ModuleList(double(2 * m, m) for m in reversed(widths))
            self.head = nn.Conv2d(widths[0], classes, 1)

        def forward(self, x):
            skips = []
            for down in self.down:
                x = down(x)
                skips.append(x)
                x = self.pool(x)
            x = self.bottom(x)
            for up, decode, skip in zip(self.up, self.decode, reversed(skips)):
                x = decode(torch.cat([up(x), skip], 1))
            return self.head(x)

    return UNet()


def deeplab():
    import torch
    from torch import nn
    from torch.nn import functional as F

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.reduce, self.expand = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            scale = F.adaptive_avg_pool2d(x, 1)
            return x * F.hardsigmoid(self.expand(F.relu(self.reduce(scale))))

    class InvertedResidual(nn.Module):
        def __init__(self, c, hidden, m, k, stride, se, act, dilation=1):
            super().__init__()
            self.body = nn.Sequential(
                _conv_bn(c, hidden, 1, act=act), _conv_bn(hidden, hidden, k, stride, dilation, hidden, act=act),
                SqueezeExcite(hidden) if se else nn.Identity(), _conv_bn(hidden, m, 1))
            self.residual = stride == 1 and c == m

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class Aspp(nn.Module):
        def __init__(self, c, m, rates=(2, 3)):
            super().__init__()
            self.branches = nn.ModuleList(
                [_conv_bn(c, m, 1, act=nn.ReLU)] + [_conv_bn(c, m, 3, dilation=r, act=nn.ReLU) for r in rates])
            self.pooling = _conv_bn(c, m, 1, act=nn.ReLU)
            self.project = _conv_bn(m * (len(rates) + 2), m, 1, act=nn.ReLU)

        def forward(self, x):
            pooled = self.pooling(F.adaptive_avg_pool2d(x, 1))
            pooled = F.interpolate(pooled, size=x.shape[-2:], mode="bilinear", align_corners=False)
            return self.project(torch.cat([b(x) for b in self.branches] + [pooled], 1))

    class DeepLab(nn.Module):
        def __init__(self, classes=6):
            super().__init__()
            hs, relu = nn.Hardswish, nn.ReLU
            self.backbone = nn.Sequential(
                _conv_bn(3, 16, 3, 2, act=hs),
                InvertedResidual(16, 16, 16, 3, 1, False, relu),
                InvertedResidual(16, 64, 24, 3, 2, False, relu),
                InvertedResidual(24, 72, 24, 3, 1, False, relu),
                InvertedResidual(24, 72, 40, 5, 2, True, relu),
                InvertedResidual(40, 120, 40, 5, 1, True, hs),
                InvertedResidual(40, 120, 48, 3, 1, True, hs, dilation=2),
                InvertedResidual(48, 144, 48, 3, 1, True, hs, dilation=2))
            self.aspp = Aspp(48, 32)
            self.classifier = nn.Conv2d(32, classes, 1)

        def forward(self, x):
            logits = self.classifier(self.aspp(self.backbone(x)))
            return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)

    return DeepLab()


def yolo():
    import torch
    from torch import nn

    def conv(c, m, k=1, stride=1):
        return _conv_bn(c, m, k, stride, act=nn.SiLU)

    class Bottleneck(nn.Module):
        def __init__(self, c, shortcut):
            super().__init__()
            self.body, self.shortcut = nn.Sequential(conv(c, c, 3), conv(c, c, 3)), shortcut

        def forward(self, x):
            return x + self.body(x) if self.shortcut else self.body(x)

    class C2f(nn.Module):
        def __init__(self, c, m, n=1, shortcut=True):
            super().__init__()
            self.hidden = m // 2
            self.cv1, self.cv2 = conv(c, 2 * self.hidden), conv((2 + n) * self.hidden, m)
            self.blocks = nn.ModuleList(Bottleneck(self.hidden, shortcut) for _ in range(n))

        def forward(self, x):
            parts = list(self.cv1(x).chunk(2, 1))
            for block in self.blocks:
                parts.append(block(parts[-1]))
            return self.cv2(torch.cat(parts, 1))

    class Sppf(nn.Module):
        def __init__(self, c, m):
            super().__init__()
            self.cv1, self.cv2 = conv(c, c // 2), conv(c // 2 * 4, m)
            self.pool = nn.MaxPool2d(5, 1, 2)

        def forward(self, x):
            pooled = [self.cv1(x)]
            for _ in range(3):
                pooled.append(self.pool(pooled[-1]))
            return self.cv2(torch.cat(pooled, 1))

    class Head(nn.Module):
        def __init__(self, c, boxes, classes):
            super().__init__()
            self.box = nn.Sequential(conv(c, boxes, 3), conv(boxes, boxes, 3), nn.Conv2d(boxes, boxes, 1))
            self.cls = nn.Sequential(conv(c, 32, 3), conv(32, 32, 3), nn.Conv2d(32, classes, 1))

        def forward(self, x):
            out = torch.cat([self.box(x), self.cls(x).sigmoid()], 1)
            return out.flatten(2)

    class Yolo(nn.Module):
        def __init__(self, w=(16, 32, 64, 128), classes=8, reg_max=16):
            super().__init__()
            self.stem = nn.Sequential(conv(3, w[0], 3, 2), conv(w[0], w[1], 3, 2), C2f(w[1], w[1]))
            self.p3 = nn.Sequential(conv(w[1], w[2], 3, 2), C2f(w[2], w[2], 2))
            self.p4 = nn.Sequential(conv(w[2], w[3], 3, 2), C2f(w[3], w[3], 2))
            self.p5 = nn.Sequential(conv(w[3], w[3], 3, 2), C2f(w[3], w[3]), Sppf(w[3], w[3]))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.top_down4 = C2f(2 * w[3], w[3], shortcut=False)
            self.top_down3 = C2f(w[3] + w[2], w[2], shortcut=False)
            self.down3, self.bottom_up4 = conv(w[2], w[2], 3, 2), C2f(w[2] + w[3], w[3], shortcut=False)
            self.down4, self.bottom_up5 = conv(w[3], w[3], 3, 2), C2f(2 * w[3], w[3], shortcut=False)
            self.heads = nn.ModuleList(Head(c, 4 * reg_max, classes) for c in (w[2], w[3], w[3]))

        def forward(self, x):
            p3 = self.p3(self.stem(x))
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            t4 = self.top_down4(torch.cat([self.up(p5), p4], 1))
            n3 = self.top_down3(torch.cat([self.up(t4), p3], 1))
            n4 = self.bottom_up4(torch.cat([self.down3(n3), t4], 1))
            n5 = self.bottom_up5(torch.cat([self.down4(n4), p5], 1))
            return torch.cat([head(f) for head, f in zip(self.heads, (n3, n4, n5))], 2)

    return Yolo()


# name -> (the torch module's builder, its input [N, C, H, W]); random init, which
# gen_extra_models calibrates. torch is imported by the builders only.
UPSAMPLING = {"unet": (unet, (1, 3, 56, 72)), "deeplab": (deeplab, (1, 3, 90, 90)), "yolo": (yolo, (1, 3, 96, 128))}
