"""Sort-of-CLEVR (Santoro et al., 2017) with a linear-attention Transformer, with and without
AID on its keys and values: the AID paper's visual relational-reasoning experiment.

Follows the official ``Sort-of-CLEVR`` folder of github.com/taewonpark/AID
(``sort_of_clevr_generator.py``, ``model.py``, ``main.py``, ``train.sh``, which calls the
``run.sh`` of Mittal et al.'s compositional-attention code: ``--model AID``, 4 iterations,
dim 256, 4 heads, 100 epochs, binary relation type, lr 1e-4, batch 64, 10 seeds).

**Data.** A 75 x 75 image holds 6 objects, one per colour, each a square or a disc of
radius 5 at a random non-overlapping centre. Each image carries 10 questions of each of three
kinds, an 18-d vector (2 x 6 colour one-hots, 3 question types, 3 subtypes) and one of 10
answers (yes, no, rectangle, circle, or a count 1-6):

- unary (non-relational): the shape of the object of colour c; is it on the left; on top;
- binary: the shape of the object closest to c; furthest from c; how many objects share c's shape;
- ternary (two colours A, B): how many objects lie in the box spanned by A and B; is any object
  within 12 pixels (vertically) of the line through A and B; for how many objects C is ABC
  obtuse.

:func:`generate` draws exactly the official generator's random stream (Python ``random`` and
numpy's legacy ``RandomState``, the same calls in the same order), so a seed gives the official
pickle's questions and answers; the images are drawn with numpy (cv2 rasterises the discs'
rims slightly differently).

**Model** (official ``Model``): 15 x 15 patches of the image (a stride-15 convolution: 25
patch vectors of size dim/2) plus a fixed sinusoid, a learned CLS vector in front, the
question embedding (dim/2) concatenated to every one of the 26 vectors, a linear map to dim,
then *one* pre-LN linear-attention layer applied ``iterations`` times (shared weights), and a
10-way classifier on the CLS vector. The layer, with phi = ELU + 1:

    h = LN(x);  q, k, v = W_q h, W_k h, W_v h                 (n_head heads of d = dim / n_head)
    AID:  [k; v] (2 n_head slots of d per position) are refined by 3 iterations of AID over
          2 n_head input features W_in h (official ``competitive_attention``)
    out_i = sum_j phi(q_i / sqrt(d)).phi(k_j) v_j / (sum_j phi(q_i / sqrt(d)).phi(k_j) + 1e-5)
    x = x + W_o out;   x = x + FF(LN(x))                     (FF: dim -> 2 dim -> dim, ReLU)

The attention is not causal: every position reads every other one.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr24_common import progress

from .aid import AIDDecomposition, elu_plus_one
from .train import model_device, optimizer_steps

IMG_SIZE, OBJ_SIZE, N_QUESTIONS, QUESTION_SIZE = 75, 5, 10, 18
N_COLORS, N_ANSWERS = 6, 10
KINDS = ("unary", "binary", "ternary")
ANSWERS = ("yes", "no", "rectangle", "circle", "1", "2", "3", "4", "5", "6")
# the official colour tuples (cv2 draws them as BGR; here they are just the 3 channel values)
COLORS = ((0, 0, 255), (0, 255, 0), (255, 0, 0), (0, 156, 255), (128, 128, 128), (0, 255, 255))
_TYPE, _SUBTYPE = 12, 15  # offsets of the question-type and subtype one-hots


# ---------------------------------------------------------------------------- data
@dataclass
class Split:
    """One split: images (n, 3, 75, 75) uint8 in 0..255 and, per question kind, questions
    (n, 10, 18) and answers (n, 10)."""

    images: np.ndarray
    questions: dict[str, np.ndarray]
    answers: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.images)


def _center(objects, nr: np.random.RandomState) -> np.ndarray:
    """A centre at least 2 * OBJ_SIZE from every placed object (official rejection loop)."""
    while True:
        c = nr.randint(OBJ_SIZE, IMG_SIZE - OBJ_SIZE, 2)
        if all(((c - o) ** 2).sum() >= (2 * OBJ_SIZE) ** 2 for _, o, _ in objects):
            return c


def _draw(img: np.ndarray, center: np.ndarray, shape: str, color) -> None:
    """A filled square (side 2 OBJ_SIZE + 1) or disc (radius OBJ_SIZE); center = (x, y)."""
    x, y = int(center[0]), int(center[1])
    ys, xs = np.ogrid[:IMG_SIZE, :IMG_SIZE]
    if shape == "r":
        inside = (abs(xs - x) <= OBJ_SIZE) & (abs(ys - y) <= OBJ_SIZE)
    else:
        inside = (xs - x) ** 2 + (ys - y) ** 2 <= OBJ_SIZE**2
    img[inside] = color


def _question(colors: tuple[int, ...], kind: int, subtype: int) -> np.ndarray:
    q = np.zeros(QUESTION_SIZE, np.float32)
    for slot, c in enumerate(colors):
        q[6 * slot + c] = 1
    q[_TYPE + kind] = 1
    q[_SUBTYPE + subtype] = 1
    return q


def _shape_answer(shape: str) -> int:
    return 2 if shape == "r" else 3


def _scene(r: random.Random, nr: np.random.RandomState):
    """One image and its 3 x 10 questions, drawing the random numbers in the official order."""
    objects = []
    img = np.full((IMG_SIZE, IMG_SIZE, 3), 255, np.uint8)  # (y, x, channel)
    for color_id, color in enumerate(COLORS):
        center = _center(objects, nr)
        shape = "r" if r.random() < 0.5 else "c"
        _draw(img, center, shape, color)
        objects.append((color_id, center, shape))
    centers = np.array([o[1] for o in objects])
    shapes = [o[2] for o in objects]
    qs = {k: [] for k in KINDS}
    ans = {k: [] for k in KINDS}
    for _ in range(N_QUESTIONS):  # unary
        color, subtype = r.randint(0, 5), r.randint(0, 2)
        qs["unary"].append(_question((color,), 0, subtype))
        if subtype == 0:  # shape of the object
            a = _shape_answer(shapes[color])
        else:  # 1: left half (x < 37.5) -> yes; 2: top half (y < 37.5) -> yes
            a = 0 if centers[color][subtype - 1] < IMG_SIZE / 2 else 1
        ans["unary"].append(a)
    for _ in range(N_QUESTIONS):  # binary
        color, subtype = r.randint(0, 5), r.randint(0, 2)
        qs["binary"].append(_question((color,), 1, subtype))
        d = ((centers - centers[color]) ** 2).sum(1)
        if subtype == 0:  # shape of the closest other object
            d = d.copy()
            d[color] = 999  # official: the first zero distance (the object itself) -> 999
            a = _shape_answer(shapes[int(np.argmin(d))])
        elif subtype == 1:  # shape of the furthest object
            a = _shape_answer(shapes[int(np.argmax(d))])
        else:  # count of objects with the same shape (itself included): answer 4 = "1"
            a = 4 + sum(s == shapes[color] for s in shapes) - 1
        ans["binary"].append(a)
    for _ in range(N_QUESTIONS):  # ternary (official: colours drawn from the first 5 only)
        c1, c2 = (int(c) for c in nr.permutation(np.arange(5))[:2])
        subtype = r.randint(0, 2)
        qs["ternary"].append(_question((c1, c2), 2, subtype))
        A, B = centers[c1], centers[c2]
        others = [centers[i] for i in range(N_COLORS) if i not in (c1, c2)]
        if subtype == 0:  # objects inside the box spanned by A and B
            lo, hi = np.minimum(A, B), np.maximum(A, B)
            a = 4 + sum(bool(np.all((lo <= o) & (o <= hi))) for o in others)
        elif subtype == 1:  # any object within 12 px (in y) of the line through A and B
            m = (B[1] - A[1]) / ((B[0] - A[0]) + 1e-10)
            c = A[1] - m * A[0]
            a = 0 if any((m * o[0] + c) - 12 <= o[1] <= (m * o[0] + c) + 12 for o in others) else 1
        else:  # obtuse triangles ABC
            a = 4 + sum(_obtuse(A, B, o) for o in others)
        ans["ternary"].append(a)
    # official main.py: np.swapaxes(img, 0, 2) on (y, x, channel) -> (channel, x, y)
    return img.transpose(2, 1, 0), qs, ans


def _obtuse(A, B, C) -> bool:
    """max angle of ABC in [90, 180) degrees, by the law of cosines (official; a degenerate
    triangle gives NaN angles, which count as not obtuse)."""
    a, b, c = (np.linalg.norm(u - v) for u, v in ((B, C), (C, A), (A, B)))
    with np.errstate(divide="ignore", invalid="ignore"):
        angles = [
            np.degrees(np.arccos((x**2 + y**2 - z**2) / (2 * x * y)))
            for x, y, z in ((b, c, a), (a, c, b), (a, b, c))
        ]
    top = max(angles)  # python max: a NaN first stays NaN, as in the official code
    return bool(90 <= top < 180)


def generate(n_train: int, n_val: int, n_test: int, seed: int = 1) -> dict[str, Split]:
    """The three splits, generated in the official order (test, val, train) from one seed
    (official ``--seed`` 1; sizes 9800 / 200 / 200)."""
    r, nr = random.Random(seed), np.random.RandomState(seed)
    out = {}
    for name, n in (("test", n_test), ("val", n_val), ("train", n_train)):
        scenes = [_scene(r, nr) for _ in range(n)]
        out[name] = Split(
            images=np.stack([s[0] for s in scenes]) if n else np.zeros((0, 3, 75, 75), np.uint8),
            questions={k: np.array([s[1][k] for s in scenes], np.float32) for k in KINDS},
            answers={k: np.array([s[2][k] for s in scenes], np.int64) for k in KINDS},
        )
    return out


# ---------------------------------------------------------------------------- model
def positional(n: int, dim: int) -> torch.Tensor:
    """The official ``get_positional`` (exponent 2 i / dim on the sine at even i and
    2 (i + 1) / dim on the cosine, scaled by sigmoid(1))."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(0, dim, 2, dtype=torch.float64)
    pe = torch.zeros(n, dim, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (2 * i / dim))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (2 * (i + 1) / dim))
    return (pe / (1 + math.exp(-1))).float()


class RelationalLayer(nn.Module):
    """The official ``Linear_Attention`` (``aid=False``) or ``AID`` layer (docstring above)."""

    def __init__(self, dim: int, n_head: int = 4, aid: bool = False, iterations: int = 3):
        super().__init__()
        if dim % n_head:
            raise ValueError(f"dim {dim} must be a multiple of n_head {n_head}")
        self.n_head, self.d = n_head, dim // n_head
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.ff = nn.Sequential(
            nn.Linear(dim, 2 * dim), nn.Dropout(0.1), nn.ReLU(), nn.Linear(2 * dim, dim),
            nn.Dropout(0.1),
        )  # fmt: skip
        self.aid = None
        if aid:  # official: 3 iterations, eps 1e-6, slot = MLP/2 = d, dropout 0.5 on S0
            self.inputs = nn.Linear(dim, 2 * n_head * self.d)  # official input_proj_linear
            self.aid = AIDDecomposition(self.d, None, 2 * n_head, self.d, iterations=iterations,
                                        mlp_hidden=2 * self.d, eps=1e-6)  # fmt: skip

    def forward(self, x: torch.Tensor, return_attention: bool = False):
        """x: (B, n, dim) -> (B, n, dim) (and AID's attention (B, n, 2H inputs, 2H slots))."""
        B, n, _ = x.shape
        h = self.norm1(x)
        q, k, v = (f(h).view(B, n, self.n_head, self.d) for f in (self.q, self.k, self.v))
        attn = None
        if self.aid is not None:
            feats = self.inputs(h).view(B, n, 2 * self.n_head, self.d)
            kv, attn = self.aid.refine(feats, torch.cat((k, v), dim=2))
            k, v = kv.split(self.n_head, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, n, d)
        score = elu_plus_one(q / math.sqrt(self.d)) @ elu_plus_one(k).transpose(-1, -2)
        score = score / (score.sum(-1, keepdim=True) + 1e-5)
        x = x + self.o((score @ v).transpose(1, 2).reshape(B, n, -1))
        x = x + self.ff(self.norm2(x))
        return (x, attn) if return_attention else x


class SortOfClevrModel(nn.Module):
    """The official ``Model``: patch encoder + question, one shared layer applied
    ``iterations`` times, a classifier on the CLS vector. ``decomposition``: linear (the
    linear Transformer) or aid. Defaults are the official run (dim 256, 4 heads, 4 iterations)."""

    def __init__(self, decomposition: str = "aid", dim: int = 256, n_head: int = 4,
                 iterations: int = 4, patch: int = 15):  # fmt: skip
        super().__init__()
        if decomposition not in ("linear", "aid"):
            raise ValueError(f"decomposition must be linear or aid, got {decomposition!r}")
        if dim % 2:
            raise ValueError(f"dim must be even, got {dim}")
        half, n_patch = dim // 2, (IMG_SIZE // patch) ** 2
        self.decomposition_name, self.iterations = decomposition, iterations
        self.patches = nn.Conv2d(3, half, patch, stride=patch)
        self.register_buffer("pe", positional(n_patch, half), persistent=False)
        self.cls = nn.Parameter(torch.randn(1, 1, half))
        self.question = nn.Linear(QUESTION_SIZE, half)
        self.mapping = nn.Linear(dim, dim)
        self.layer = RelationalLayer(dim, n_head, aid=decomposition == "aid")
        self.head = nn.Linear(dim, N_ANSWERS)

    def embed(self, images: torch.Tensor, questions: torch.Tensor) -> torch.Tensor:
        """images (B, 3, 75, 75) in [0, 1], questions (B, 18) -> (B, 26, dim)."""
        x = self.patches(images).flatten(2).transpose(1, 2) + self.pe  # (B, 25, dim/2)
        x = torch.cat((self.cls.expand(len(x), -1, -1), x), dim=1)
        qv = self.question(questions)[:, None].expand(-1, x.shape[1], -1)
        return self.mapping(torch.cat((x, qv), dim=-1))

    def forward(self, images: torch.Tensor, questions: torch.Tensor) -> torch.Tensor:
        """Answer logits (B, 10)."""
        x = self.embed(images, questions)
        for _ in range(self.iterations):
            x = self.layer(x)
        return self.head(x[:, 0])

    @torch.no_grad()
    def attention_maps(self, images: torch.Tensor, questions: torch.Tensor) -> list[torch.Tensor]:
        """AID's attention (B, 26 positions, 2H input features, 2H slots) at every iteration of
        the shared layer (the paper's attention-map analysis); empty for ``linear``."""
        if self.layer.aid is None:
            return []
        x, maps = self.embed(images, questions), []
        for _ in range(self.iterations):
            x, attn = self.layer(x, return_attention=True)
            maps.append(attn)
        return maps


# ---------------------------------------------------------------------------- training
@dataclass(frozen=True)
class ClevrTrain:
    """Optimisation; defaults are the official ``main.py`` / ``run.sh``."""

    epochs: int = 100
    """Epochs (official 100); one epoch steps through every training question of each kind."""
    batch_size: int = 64
    """Questions per batch, all of one kind (official 64)."""
    lr: float = 1e-4
    """Adam learning rate (official 1e-4, torch defaults otherwise)."""
    max_batches: int = 0
    """Cap on batch indices per epoch (0: the full epoch, len(train) * 10 / batch_size)."""


def _tensors(split: Split, kind: str, idx: np.ndarray, device="cpu"):
    img_idx, q_idx = np.divmod(idx, N_QUESTIONS)
    images = torch.from_numpy(split.images[img_idx]).to(device).float() / 255.0
    return (images, torch.from_numpy(split.questions[kind][img_idx, q_idx]).to(device),
            torch.from_numpy(split.answers[kind][img_idx, q_idx]).to(device))  # fmt: skip


@torch.no_grad()
def clevr_correct(model: SortOfClevrModel, split: Split, batch_size: int = 500) -> dict:
    """Per question kind, whether each question of ``split`` is answered right: (images x 10,)
    uint8, image-major (eval mode). The per-item scores of a shared test set."""
    was = model.training
    model.eval()
    out, device = {}, model_device(model)
    for kind in KINDS:
        n, right = len(split) * N_QUESTIONS, []
        for s in range(0, n, batch_size):
            idx = np.arange(s, min(s + batch_size, n))
            images, questions, answers = _tensors(split, kind, idx, device)
            right.append((model(images, questions).argmax(-1) == answers).cpu().numpy())
        out[kind] = np.concatenate(right).astype(np.uint8) if right else np.zeros(0, np.uint8)
    model.train(was)
    return out


def clevr_accuracy(model: SortOfClevrModel, split: Split, batch_size: int = 500) -> dict:
    """Accuracy per question kind over every question of ``split`` (eval mode)."""
    return {k: int(c.sum()) / max(len(c), 1)
            for k, c in clevr_correct(model, split, batch_size).items()}  # fmt: skip


def train_clevr(model: SortOfClevrModel, data: dict[str, Split], config: ClevrTrain, seed: int,
                desc: str = ""):  # fmt: skip
    """The official loop: each batch index takes one Adam step on a batch of ternary, one of
    binary and one of unary questions (each kind shuffled per epoch); after every epoch the
    validation and test accuracies are measured and, per kind, the test accuracy at the epoch
    best on validation is kept (official ``opt_*``). Returns the model at the epoch best on the
    mean validation accuracy, and the history (with Adam's step count and the test questions'
    per-item scores after each epoch)."""
    rng = np.random.default_rng([seed, 21])
    device = model_device(model)  # the run's --device: the model is there, batches follow it
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    train = data["train"]
    n = len(train) * N_QUESTIONS
    batches = n // config.batch_size
    if config.max_batches:
        batches = min(batches, config.max_batches)
    history = {"epoch": [], "optimizer_steps": [],
               **{f"{s}/{k}": [] for s in ("val", "test", "test_correct") for k in KINDS}}  # fmt: skip
    best, best_state = -1.0, None
    for epoch in progress(range(1, config.epochs + 1), desc=desc, total=config.epochs):
        model.train()
        orders = {k: rng.permutation(n) for k in ("ternary", "binary", "unary")}
        for b in range(batches):
            for kind in ("ternary", "binary", "unary"):  # official order
                idx = orders[kind][b * config.batch_size : (b + 1) * config.batch_size]
                images, questions, answers = _tensors(train, kind, idx, device)
                loss = F.cross_entropy(model(images, questions), answers)
                opt.zero_grad()
                loss.backward()
                opt.step()
        val, right = clevr_accuracy(model, data["val"]), clevr_correct(model, data["test"])
        history["epoch"].append(epoch)
        history["optimizer_steps"].append(optimizer_steps(opt))  # Adam's own count, cumulative
        for kind in KINDS:
            history[f"val/{kind}"].append(val[kind])
            history[f"test/{kind}"].append(int(right[kind].sum()) / max(len(right[kind]), 1))
            history[f"test_correct/{kind}"].append(right[kind])  # per question, for items=
        if np.mean(list(val.values())) > best:
            best, best_state = float(np.mean(list(val.values()))), copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    return model, history


def best_on_validation(history: dict, key: str = "test") -> dict:
    """Per kind, the test accuracy at the epoch best on that kind's validation accuracy (the
    official ``opt_ternary`` / ``opt_rel`` / ``opt_norel``; the first best epoch on ties).
    ``key="test_correct"``: the test questions' per-item scores at that epoch instead."""
    out = {}
    for kind in KINDS:
        e = int(np.argmax(history[f"val/{kind}"]))
        value = history[f"{key}/{kind}"][e]
        out[kind] = float(value) if key == "test" else value
    return out
