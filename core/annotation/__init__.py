"""Annotation of atomic facts: tasks of items, labels with history, resume points, agreement
(Cohen's kappa, Krippendorff's alpha) and import/export. See docs/annotation.md."""

from core.annotation.model import (ADJUDICATED, DEFAULT_LIMITS, LABELS, Adjudication, AnnotationError, ImportBatch,
                                   ImportReport, Item, Label, Limits, Passage, TaskInfo, check_annotator)
from core.annotation.store import VIEWS, AnnotationStore

__all__ = [
    "ADJUDICATED", "DEFAULT_LIMITS", "LABELS", "VIEWS", "Adjudication", "AnnotationError", "AnnotationStore", "ImportBatch",
    "ImportReport", "Item", "Label", "Limits", "Passage", "TaskInfo", "check_annotator",
]
