"""Detection metrics: ROC-AUC, average precision and Recall@k, overall and by anomaly type;
the AUC's per-anomaly items for a graph every seed shares."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from .data import ANOMALY_TYPES


def recall_at_k(label: np.ndarray, score: np.ndarray, k: int | None = None) -> float:
    """Share of the anomalies among the k top-scored nodes; k defaults to the number of
    anomalies (as the official run.py)."""
    label = np.asarray(label)
    k = int(label.sum()) if k is None else k
    top = np.argsort(-np.asarray(score), kind="stable")[:k]
    return float(label[top].sum() / max(label.sum(), 1))


def detection_metrics(label, score, anomaly_type=None) -> dict[str, float]:
    """auc, ap, recall@k; with ``anomaly_type``, also auc_<type> (that type vs the normal nodes)."""
    label, score = np.asarray(label), np.asarray(score, dtype=float)
    out = {
        "auc": float(roc_auc_score(label, score)),
        "ap": float(average_precision_score(label, score)),
        "recall@k": recall_at_k(label, score),
    }
    if anomaly_type is not None:
        t = np.asarray(anomaly_type)
        for code, name in ANOMALY_TYPES.items():
            keep = (t == 0) | (t == code)
            if (t == code).any():
                out[f"auc_{name}"] = float(roc_auc_score(t[keep] == code, score[keep]))
    return out


def auc_items(label, score) -> np.ndarray:
    """Each anomaly's placement: the share of normal nodes it outscores (a tie counts half).
    Their mean is the ROC-AUC (Mann-Whitney), so they are the AUC's test items where every seed
    scores the same graph and labels. -> (n_anomalies,)"""
    label, score = np.asarray(label).astype(bool), np.asarray(score, dtype=float)
    normal = np.sort(score[~label])
    below = np.searchsorted(normal, score[label], side="left")
    ties = np.searchsorted(normal, score[label], side="right") - below
    return (below + 0.5 * ties) / len(normal)


def flags_changed(full, part, contamination: float) -> float:
    """The share of the nodes ``full`` flags (above its ``1 - contamination`` quantile, as
    ``GADAM.label_``) that ``part`` ranks below its own cut: how far adding a stage moves the
    decisions. Nodes tied at ``part``'s cut count as flagged by it (isolated nodes all score 0
    in the local stage: breaking their tie is not a change of the local stage's decision)."""
    full, part = np.asarray(full, dtype=float), np.asarray(part, dtype=float)
    flagged = full > np.quantile(full, 1 - contamination)
    kept = part >= np.quantile(part, 1 - contamination)
    return float((flagged & ~kept).sum() / max(flagged.sum(), 1))
