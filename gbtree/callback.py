"""Training callbacks (``callbacks=[...]``), defined in ``gbtree.boosting.callback``:
hooks the boosting loop calls before and after each round."""
from .boosting.callback import (Callback, EarlyStopping, LearningRateScheduler,
                                LogEvaluation, Progress, RecordEvaluation, TrainingState)

__all__ = ["Callback", "EarlyStopping", "LearningRateScheduler", "LogEvaluation",
           "Progress", "RecordEvaluation", "TrainingState"]
