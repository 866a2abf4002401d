"""Two convolution families outside the judged models, written as small torch.nn
modules of the real layer structure (torchvision is not a dependency;
gen_extra_models exports, checks and caches them):

- ``speech_conv1d``: a speech encoder of 1-D convolutions over 80 mel channels and 500
  frames, Whisper's front end (kernel 3, 80 -> 384 then 384 -> 384 with stride 2, GELU)
  followed by Jasper-style residual blocks (conv1d-BN-ReLU twice, a depthwise 1-D
  convolution of kernel 11 in the second), a per-frame 1x1 classifier;
- ``resnext``: a ResNeXt of two stages of bottlenecks whose 3x3 convolutions have 32
  groups of 4 or 8 channels (the 32x4d cardinality of ResNeXt-50), a 7x7/2 stem and a 3x3/2
  max pool, global average pooling and a classifier with softmax.

A network like the first, and a ResNeXt, were 3.8x and 2.5x slower than onnxruntime when
issue 29 was filed: the schedules tuned for the judged models did not carry to them.
"""


def speech_conv1d():
    import torch
    from torch import nn

    def conv_bn(c, m, k, groups=1):
        return nn.Sequential(nn.Conv1d(c, m, k, padding=k // 2, groups=groups, bias=False), nn.BatchNorm1d(m))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.body = nn.Sequential(conv_bn(c, c, 3), nn.ReLU(), conv_bn(c, c, 11, groups=c), conv_bn(c, c, 1))

        def forward(self, x):
            return torch.relu(x + self.body(x))

    class SpeechEncoder(nn.Module):
        def __init__(self, mels=80, width=384, blocks=2, classes=32):
            super().__init__()
            self.front = nn.Sequential(nn.Conv1d(mels, width, 3, padding=1), nn.GELU(),
                                       nn.Conv1d(width, width, 3, stride=2, padding=1), nn.GELU())
            self.blocks = nn.Sequential(*(Block(width) for _ in range(blocks)))
            self.head = nn.Conv1d(width, classes, 1)

        def forward(self, x):
            return self.head(self.blocks(self.front(x)))

    return SpeechEncoder()


def resnext():
    import torch
    from torch import nn

    def conv_bn(c, m, k=1, stride=1, groups=1):
        return nn.Sequential(nn.Conv2d(c, m, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(m))

    class Bottleneck(nn.Module):
        def __init__(self, c, width, m, stride, cardinality=32):
            super().__init__()
            self.body = nn.Sequential(conv_bn(c, width), nn.ReLU(),
                                      conv_bn(width, width, 3, stride, groups=cardinality), nn.ReLU(),
                                      conv_bn(width, m))
            self.shortcut = conv_bn(c, m, 1, stride) if stride != 1 or c != m else nn.Identity()

        def forward(self, x):
            return torch.relu(self.shortcut(x) + self.body(x))

    class ResNeXt(nn.Module):
        def __init__(self, classes=100):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            self.stages = nn.Sequential(Bottleneck(64, 128, 256, 1), Bottleneck(256, 128, 256, 1),
                                        Bottleneck(256, 256, 512, 2), Bottleneck(512, 256, 512, 1))
            self.head = nn.Linear(512, classes)

        def forward(self, x):
            pooled = self.stages(self.stem(x)).mean((2, 3))
            return self.head(pooled).softmax(-1)

    return ResNeXt()


# name -> (the torch module's builder, its input [N, C, *spatial]); random init, which
# gen_extra_models calibrates. torch is imported by the builders only.
CONV_FAMILIES = {"speech_conv1d": (speech_conv1d, (1, 80, 500)), "resnext": (resnext, (1, 3, 112, 112))}
