"""TPR-RNN (Schlag & Schmidhuber, "Learning to Reason with Third-Order Tensor Products",
NeurIPS 2018) as the AID paper runs it on (sys-)bAbI, with a switch between its own
decomposition and AID.

Follows the official ``bAbItask/AID_with_TPRRNN/models/AID.py`` (class ``TprRnn``) for
``decomposition="aid"``, and the TPR-RNN it modifies for ``decomposition="linear"``. A story is
a sequence of sentences (B, S, W) of word ids, the question one sentence (B, W):

    word vectors   x_w = E[word] * p_w        (p: learned position weights, init 1 / W)
    sentence       s = sum of its non-PAD word vectors
    components     story:  e1, e2, r1, r2, r3 (entities, relations) per sentence, through tanh
                   query:  e1, r1, r2, r3
      linear  TPR-RNN's own: one two-layer tanh MLP of s per component (hidden 40)
      aid     AID slots: initial slots W_b s (5 slots) / W_r q (4 slots) refined by attention
              over the sentence's word vectors, then one linear map per slot (tanh for the story)
    update (per sentence; F: (ent, role, ent) third-order TPR)
              w = F.(e1, r1);  m = F.(e1, r2);  b = F.(e2, r3)
              F += e1 x (r1 x (e2 - w) + r2 x (w - m)) + e2 x r3 x (e1 - b)   (write, move, backlink)
    inference i1 = LN(F.(e1, r1)), i2 = LN(F.(i1, r2)), i3 = LN(F.(i2, r3)); logits = Z (i1+i2+i3)

Defaults are the official ``train.py`` model config (entity 90, role 20, hidden 40, init limit
0.1, LayerNorm with eps 1e-12) and the AID settings of ``TprRnn.__init__`` (slot 64, MLP 128, 2 iterations).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .aid import AIDDecomposition

DECOMPOSITIONS = ("linear", "aid")
STORY, QUERY = 5, 4  # components: e1, e2, r1, r2, r3 per sentence; e1, r1, r2, r3 per question
# LayerNorm of the inference steps: eps 1e-12 in both official codes, class ``LayerNorm`` of
# taewonpark/AID @ 1ca659e6 ``bAbItask/AID_with_TPRRNN/models/utils.py`` (AID) and of
# APodolskiy/TPR-RNN-Torch @ 81cfdca6 ``tpr_rnn/model/utils.py`` (the TPR-RNN port AID builds on)
LN_EPS = 1e-12


class TanhMLP(nn.Sequential):
    """TPR-RNN's component network: tanh(W2 tanh(W1 x + b1) + b2)."""

    def __init__(self, d_in: int, hidden: int, d_out: int):
        super().__init__(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out), nn.Tanh())


def tpr_update(tpr, e1, e2, r1, r2, r3, clamp: bool = False):
    """One sentence's write, move and backlink on the TPR. tpr: (B, ent, role, ent);
    e1, e2: (B, ent); r1, r2, r3: (B, role). The official AID code clamps the update to
    [-1, 1] (``clamp``); the TPR-RNN code does not."""
    w = torch.einsum("be,br,berf->bf", e1, r1, tpr)  # what e1 is bound to under r1
    m = torch.einsum("be,br,berf->bf", e1, r2, tpr)
    b = torch.einsum("be,br,berf->bf", e2, r3, tpr)
    write = r1[:, :, None] * (e2 - w)[:, None, :]  # (B, role, ent)
    move = r2[:, :, None] * (w - m)[:, None, :]
    backlink = r3[:, :, None] * (e1 - b)[:, None, :]
    delta = (
        e1[:, :, None, None] * (write + move)[:, None] + e2[:, :, None, None] * backlink[:, None]
    )
    return tpr + (delta.clamp(-1.0, 1.0) if clamp else delta)


class TPRRNN(nn.Module):
    """TPR-RNN with ``decomposition="linear"`` (its own MLP decomposition, the baseline) or
    ``"aid"``. ``symbol_size`` defaults to the vocabulary size, as the official config sets it."""

    def __init__(
        self,
        vocab_size: int,
        max_words: int,
        decomposition: str = "aid",
        symbol_size: int | None = None,
        entity_size: int = 90,
        role_size: int = 20,
        hidden_size: int = 40,
        slot_size: int = 64,
        mlp_hidden: int = 128,
        iterations: int = 2,
        init_limit: float = 0.1,
    ):
        super().__init__()
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(
                f"decomposition must be one of {DECOMPOSITIONS}, got {decomposition!r}"
            )
        self.decomposition_name = decomposition
        d = symbol_size or vocab_size
        self.embedding = nn.Embedding(vocab_size, d)
        nn.init.uniform_(self.embedding.weight, -init_limit, init_limit)  # official init_limit
        self.position = nn.Parameter(torch.full((max_words, d), 1.0 / max_words))
        sizes_story = (entity_size, entity_size, role_size, role_size, role_size)
        sizes_query = (entity_size, role_size, role_size, role_size)
        if decomposition == "linear":
            self.story_nets = nn.ModuleList(TanhMLP(d, hidden_size, n) for n in sizes_story)
            self.query_nets = nn.ModuleList(TanhMLP(d, hidden_size, n) for n in sizes_query)
        else:
            # official Decomposition: eps 1e-6; binding 5 and reasoning 4 slots share attention
            self.aid = AIDDecomposition(
                d, 1, (STORY, QUERY), slot_size, iterations, mlp_hidden, eps=1e-6
            )
            self.story_nets = nn.ModuleList(nn.Linear(slot_size, n) for n in sizes_story)
            self.query_nets = nn.ModuleList(nn.Linear(slot_size, n) for n in sizes_query)
            self.reconstruction = nn.Linear(d, vocab_size)  # AID's auxiliary word reconstruction
        # the official LayerNorm has eps 1e-12 (torch's default is 1e-5, which dominates the
        # small variance of the TPR's read-outs: the logits then differ by ~0.9)
        self.norms = nn.ModuleList(nn.LayerNorm(entity_size, eps=LN_EPS) for _ in range(3))
        self.output = nn.Linear(entity_size, vocab_size)
        self.clamp = decomposition == "aid"  # the official AID update clamps; TPR-RNN's does not
        self.entity_size, self.role_size = entity_size, role_size

    def embed(self, words: torch.Tensor):
        """words: (..., W) ids -> word vectors (..., W, d), mask (..., W), sentence (..., d)."""
        x = self.embedding(words) * self.position[: words.shape[-1]]
        mask = words != 0
        return x, mask, (x * mask[..., None]).sum(-2)

    def components(self, story: torch.Tensor, query: torch.Tensor):
        """story: (B, S, W), query: (B, W) ids -> the story's [e1, e2, r1, r2, r3] (B, S, .)
        and the query's [e1, r1, r2, r3] (B, .)."""
        xs, ms, s = self.embed(story)
        xq, mq, q = self.embed(query)
        if self.decomposition_name == "linear":
            return [f(s) for f in self.story_nets], [f(q) for f in self.query_nets]
        init = self.aid.initial
        slots_s, _ = self.aid.refine(xs, init.group(s[..., None, :], 0), ms)  # (B, S, 5, D)
        slots_q, _ = self.aid.refine(xq, init.group(q[..., None, :], 1), mq)  # (B, 4, D)
        # official: component i reads slot i (mixed with 1e-6 of the others; we take it as is)
        story_parts = [torch.tanh(f(slots_s[..., i, :])) for i, f in enumerate(self.story_nets)]
        query_parts = [f(slots_q[..., i, :]) for i, f in enumerate(self.query_nets)]
        return story_parts, query_parts

    def forward(self, story: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """story: (B, S, W), query: (B, W) word ids (0 = PAD) -> answer logits (B, vocab)."""
        (e1, e2, r1, r2, r3), (qe, qr1, qr2, qr3) = self.components(story, query)
        B, S = story.shape[:2]
        tpr = e1.new_zeros(B, self.entity_size, self.role_size, self.entity_size)
        for t in range(S):  # padded sentences write too, as in both official codes
            tpr = tpr_update(tpr, e1[:, t], e2[:, t], r1[:, t], r2[:, t], r3[:, t], self.clamp)
        read = qe
        total = 0
        for norm, r in zip(self.norms, (qr1, qr2, qr3)):
            read = norm(torch.einsum("be,br,berf->bf", read, r, tpr))
            total = total + read
        return self.output(total)

    def auxiliary_loss(self, story: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """AID's word-reconstruction loss (official ``train.py``: weight 1e-2, every word
        position including PAD); zero for the linear TPR-RNN, which has none."""
        if self.decomposition_name == "linear":
            return story.new_zeros((), dtype=torch.float32)
        words = torch.cat((story, query[:, None]), dim=1)  # (B, S + 1, W)
        logits = self.reconstruction(self.embed(words)[0])
        return F.cross_entropy(logits.flatten(0, -2), words.flatten())
